/*
 * fuzz.h — what the libFuzzer targets of tests/fuzz/ share (HACKING.md,
 * "Fuzzing").  Each target parses its input from memory, through the same
 * readers the program uses, and then drives what a real run would do with
 * the result; a crash, a leak, undefined behaviour or a broken invariant
 * (fuzz_check) stops the fuzzer with the input saved.
 *
 * Test code, never installed: the shipped catalog is read from
 * $VRAMPLAN_DATA/gpus.yaml, else from the source tree (VP_SRCDIR).
 */
#ifndef VP_FUZZ_H
#define VP_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"
#include "model.h"
#include "options.h"

/* An invariant: false is a finding, reported and saved as a crash. */
#define fuzz_check(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz: invariant failed at %s:%d: %s\n",	\
		    __FILE__, __LINE__, #cond);				\
		abort();						\
	}								\
} while (0)

/* The shipped GPU catalog, loaded once; aborts when it cannot be read
 * (a broken set-up, not a finding). */
const struct vp_catalog *fuzz_catalog(void);
/* A small Llama-like model (2 layers), parsed once. */
const struct vp_model *fuzz_small_model(void);

/*
 * One estimate of m under the options o (as a plan file gives them; the
 * cards from cat), with prof (NULL: the card's built-in profile) and the
 * planner when search: the session the estimate command runs, then the
 * text, CSV and JSON reports.  A plan the rules refuse must say why.
 */
void fuzz_estimate(const struct vp_model *m, const struct vp_optset *o,
    const struct vp_catalog *cat, const struct vp_profile *prof,
    bool search);
/* The same with the options read from a plan file's text. */
void fuzz_estimate_text(const struct vp_model *m, const char *plan_text,
    bool search, const struct vp_profile *prof);

#endif
