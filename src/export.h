/*
 * export.h — the estimate's chosen plan as the files people launch with
 * (`vramplan export FORMAT MODEL [options]`): a DeepSpeed config JSON, an
 * accelerate config YAML, torchtitan's TOML job config, torchtune
 * overrides for `tune run`, Megatron-LM arguments, Hugging Face
 * TrainingArguments as JSON.
 *
 * Pure (VP_CORE): each format is one function over the session's plan
 * that writes into a caller-owned buffer.  Every knob that matters for
 * memory is written as the estimate assumed it; a plan the target cannot
 * express is refused (-1, the reason in err), never written differently.
 *
 * A format implies options of its own (vp_export_pins): a DeepSpeed
 * config has no tensor, pipeline or context parallelism, torchtitan is
 * FSDP2, and so on.  The shell gives them before the user's options (the
 * user's win), so the planner chooses among the plans the target can
 * launch, and the estimate is the one `vramplan MODEL` with those options
 * reports.
 */
#ifndef VP_EXPORT_H
#define VP_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "plan.h"
#include "plan_search.h"
#include "util.h"

#define VP_EXPORT_LIST(X) X(DEEPSPEED, "deepspeed") \
	X(ACCELERATE, "accelerate") X(TORCHTITAN, "torchtitan") \
	X(TORCHTUNE, "torchtune") X(MEGATRON, "megatron") X(HF, "hf")
#define X(e, s) VP_EXPORT_##e,
enum vp_export_fmt { VP_EXPORT_LIST(X) VP_EXPORT_COUNT };
#undef X
extern const char *const vp_export_names[VP_EXPORT_COUNT];

/* The exit status of a plan the format cannot express (vramplan(1)). */
#define VP_EXIT_EXPORT 6

/*
 * The options a format implies, as command-line words ("--tp", "1", ...;
 * NULL-terminated pairs): given before the user's, which win.
 */
const char *const *vp_export_pins(enum vp_export_fmt f);

/*
 * The values of the planner's open knobs a format cannot launch (struct
 * vp_open's skip_recompute, skip_fsdp, skip_zero), for the plan as set up
 * (its framework and precision) on world GPUs: the planner does not try
 * them.  A note for notes when that leaves out what another option would
 * allow.
 */
void vp_export_skips(enum vp_export_fmt f, const struct vp_plan *p,
    unsigned world, struct vp_open *open, struct vp_buf *notes);

struct vp_export_in {
	const struct vp_model *model;
	const struct vp_plan *plan;	/* the estimate's (chosen) plan */
	unsigned world;			/* GPUs in the job */
	unsigned nodes;			/* machines (>= 1) */
	const char *version;		/* vramplan's */
	const char *command;		/* the estimate, as a command line */
	const char *roundtrip;		/* deepspeed: the command that reads
					 * the file back, or NULL */
	uint64_t device_peak;		/* bytes per GPU, the worst stage */
	const char *card;		/* the card's id, or NULL */
	int fits;			/* 1, 0, -1 without --gpus */
	const char *ds_file;		/* the DeepSpeed JSON that accelerate
					 * and TrainingArguments name */
};

/*
 * Whether format f can launch model m at all (torchtune's builders,
 * torchtitan's models, the Megatron GPT model's shapes; DeepSpeed,
 * accelerate and the Trainer take any model): 0, or -1 with the reason
 * in err.  Checked first, before the format's options are applied and
 * the estimate runs, so that a model the format has no builder for is
 * refused for that (exit 6) and not for a plan option it implies.
 */
int vp_export_model(enum vp_export_fmt f, const struct vp_model *m,
    struct vp_buf *err);

/* Whether a plan written as f needs the DeepSpeed config beside it
 * (accelerate and the Trainer under DeepSpeed): the shell writes it, from
 * the same plan, to in->ds_file. */
bool vp_export_needs_ds_file(enum vp_export_fmt f, const struct vp_plan *p);

/*
 * The plan as format f into out (a whole file); what the file leaves to
 * the training script or the launch goes into notes (lines, for stderr).
 * 0, or -1 with the reason in err (one sentence, no "vramplan: ").
 */
int vp_export(enum vp_export_fmt f, const struct vp_export_in *in,
    struct vp_buf *out, struct vp_buf *notes, struct vp_buf *err);

#endif
