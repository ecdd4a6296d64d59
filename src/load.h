/*
 * load.h — the model-loading phase: what building the model leaves in
 * the caching allocator, for the recipes whose peak reading includes it
 * (--load, enum vp_load).
 *
 * torchtune 0.1's single-device recipes (April 2024) build the model on
 * the GPU, log the memory after init (which resets the peaks, so the
 * allocated level the step reaches is the step's own) and never empty the
 * cache: max_memory_reserved over the run is at least what construction
 * reserved.  With an NF4 base, construction is where that is large:
 * torchao 0.1's to_nf4 finds each weight's nearest NF4 level through a
 * (numel x 16) difference tensor, 32 bytes per weight element, twice
 * (subtraction and abs), and torchtune's TransformerDecoder deep-copies
 * one built block per layer, each copy dequantizing and quantizing
 * again.  The other recipes' readings exclude loading (VP_LOAD_NONE):
 * tests/published_gpu.py says why for each.
 *
 * Pure.  The allocator is alloc.c's, with PyTorch's default settings.
 */
#ifndef VP_LOAD_H
#define VP_LOAD_H

#include <stdint.h>

#include "model.h"
#include "plan.h"

struct vp_load_peak {
	uint64_t allocated_peak;	/* max_memory_allocated while building */
	uint64_t reserved_bytes;	/* what building left reserved (its
					 * peak: nothing is released) */
	uint64_t allocated_end;		/* the built model at rest */
};

/*
 * Replays building the model of plan p (p->load) through the simulated
 * allocator.  Returns 0, or -1 with *out zeroed when p->load is
 * VP_LOAD_NONE or the model is not one the path builds (rules.c refuses
 * those plans first).
 */
int vp_load_estimate(const struct vp_model *m, const struct vp_plan *p,
    struct vp_load_peak *out);

/* NULL when --load's path can build this model and plan, else why not
 * (rules.c's load_path prints it; it also refuses more than one GPU). */
const char *vp_load_unsupported(const struct vp_model *m,
    const struct vp_plan *p);

#endif
