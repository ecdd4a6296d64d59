/*
 * planfile.h — a plan as a file and as a command line.
 *
 * The keys are the estimate's option names (`precision: bf16-mixed`,
 * `micro-batch: 2`, `gpus: 2xA100-80G-SXM`); the file opens with a
 * comment naming the model and the version that wrote it, and a
 * `vramplan-plan: 1` key for the format's version.  `vramplan MODEL --plan
 * FILE` reads it back (plan_read.c) and applies each key as if its option
 * had been given, so the planner keeps those knobs; the TUI's `s` writes
 * one and its `c` shows the same knobs as a command line.
 *
 * The keys are the rows of the option table (options.h) marked
 * `planfile`, in its order: the table ties each name to its field of
 * struct vp_plan, its kind and its range, for the writer, the reader
 * (plan_read.c) and the command line alike.
 *
 * Pure: formats into a caller-owned struct vp_buf.
 */
#ifndef VP_PLANFILE_H
#define VP_PLANFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "gpu.h"
#include "model.h"
#include "options.h"
#include "plan.h"

#define VP_PLANFILE_VERSION 1
#define VP_PLANFILE_VERSION_KEY "vramplan-plan"

/* One plan to write: the model, the knobs, the GPU set. */
struct vp_planfile {
	const struct vp_model *model;
	const char *model_arg;		/* MODEL as given */
	const struct vp_plan *plan;
	const struct vp_gpu *gpu;	/* NULL: no GPU set */
	unsigned count;			/* GPUs in the set */
	const char *version;		/* of vramplan */
};

/* The whole plan as YAML (every key, dropout only when overridden). */
void vp_planfile_write(const struct vp_planfile *f, struct vp_buf *out);
/*
 * The command line that gives the same estimate: the options of the
 * knobs that differ from what the estimate would take for this model on
 * its own, then --no-search with a GPU set (every knob is spelt out).
 */
void vp_planfile_cmdline(const struct vp_planfile *f, struct vp_buf *out);
/* One key's value as the file and the command line spell it. */
void vp_planfile_value(const struct vp_planfile *f, enum vp_optid k,
    struct vp_buf *out);

#endif
