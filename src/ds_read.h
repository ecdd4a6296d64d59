/*
 * ds_read.h — read a DeepSpeed JSON config (--deepspeed-config FILE).
 *
 * Shell side: the file goes through ydoc (JSON is YAML), so every problem
 * is a diagnostic with file:line:col.  The keys are DeepSpeed's
 * (deepspeed/runtime/config.py, deepspeed/runtime/zero/config.py at
 * deepspeedai/DeepSpeed edaa7221) in three kinds: read (mapped onto the
 * plan), known without an effect on memory (accepted, listed in
 * vramplan(1)), and known with an effect vramplan does not model (a
 * warning that names the key).  Anything else is an error with a "did you
 * mean".  "auto" is accepted where transformers' HfTrainerDeepSpeedConfig
 * fills it, and resolved as it does (vp_ds_apply).
 *
 * A struct vp_dsconfig owns its file name; vp_ds_free releases it.
 */
#ifndef VP_DS_READ_H
#define VP_DS_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "model.h"
#include "options.h"
#include "plan.h"
#include "ydoc.h"

/* The ZeRO knobs a file can set (struct vp_ds_knobs). */
enum vp_dsk {
	VP_DSK_REDUCE_BUCKET, VP_DSK_PREFETCH_BUCKET, VP_DSK_PERSIST,
	VP_DSK_MAX_LIVE, VP_DSK_MAX_REUSE, VP_DSK_CONTIGUOUS,
	VP_DSK_OVERLAP, VP_DSK_COUNT
};

/* One value of the file: given, "auto", where. */
struct vp_dsval {
	bool has, is_auto;
	uint64_t v;
	struct vp_srcpos pos;
};

struct vp_dsconfig {
	char *file;
	/* What the file says of options of the option table: zero,
	 * offload, offload-nvme, precision, optimizer, micro-batch,
	 * grad-accum.  Values in opts.val, "auto" ones not set but noted. */
	struct vp_optset opts;
	struct vp_dsval knob[VP_DSK_COUNT];
	struct vp_dsval micro_batch, grad_accum;
	/* bf16.enabled / fp16.enabled; "auto" for either leaves the
	 * precision to --precision (vp_ds_merge). */
	struct vp_dsval bf16, fp16;
};

/* 0 on success; -1 with diagnostics (warnings may come either way). */
int vp_ds_load(const char *path, struct vp_dsconfig *c, struct vp_diags *d);
int vp_ds_from_doc(const struct ydoc *doc, struct vp_dsconfig *c,
    struct vp_diags *d);
void vp_ds_free(struct vp_dsconfig *c);

/*
 * The file's options into o where o (the command line) has none; a note
 * for each one the command line overrides and each "auto" left to it.
 * Call before a plan file is merged, so o holds the command line only.
 */
void vp_ds_merge(struct vp_dsconfig *c, struct vp_optset *o,
    struct vp_diags *d);
/*
 * The ZeRO knobs into p->ds, "auto" resolved as transformers does from
 * the model's hidden size h: reduce_bucket_size h*h,
 * stage3_prefetch_bucket_size 0.9*h*h, stage3_param_persistence_threshold
 * 10*h; a note says what each became.
 */
void vp_ds_apply(const struct vp_dsconfig *c, const struct vp_model *m,
    struct vp_plan *p, struct vp_diags *d);

#endif
