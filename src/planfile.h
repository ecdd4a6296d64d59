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
 * The key table (vp_pk_info) is the one place that ties an option name to
 * a field of struct vp_plan, its kind and its range, for the writer, the
 * reader and the command line alike.
 *
 * Pure: formats into a caller-owned struct vp_buf.  struct vp_plan_knobs
 * owns its gpus string; vp_plan_knobs_free releases it.
 */
#ifndef VP_PLANFILE_H
#define VP_PLANFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "gpu.h"
#include "model.h"
#include "plan.h"

#define VP_PLANFILE_VERSION 1
#define VP_PLANFILE_VERSION_KEY "vramplan-plan"

/* The keys, in the order the writer puts them. */
#define VP_PK_LIST(X) \
	X(GPUS, "gpus") X(GPUS_PER_NODE, "gpus-per-node") \
	X(PRECISION, "precision") X(OPTIMIZER, "optimizer") \
	X(MICRO_BATCH, "micro-batch") X(SEQ, "seq") \
	X(GRAD_ACCUM, "grad-accum") X(RECOMPUTE, "recompute") \
	X(ATTENTION, "attention") X(DROPOUT, "dropout") \
	X(FRAMEWORK, "framework") X(ZERO, "zero") X(FSDP, "fsdp") \
	X(TP, "tp") X(SP, "sp") X(PP, "pp") X(VPP, "vpp") X(CP, "cp") \
	X(EP, "ep") X(CAPACITY, "capacity-factor") X(DEVICE, "device") \
	X(FUSED, "fused-optimizer") X(LORA, "lora") \
	X(LORA_TARGETS, "lora-targets") X(LORA_DROPOUT, "lora-dropout") \
	X(LORA_DTYPE, "lora-dtype") X(QUANT, "quant") X(OFFLOAD, "offload") \
	X(OFFLOAD_NVME, "offload-nvme") X(HOST_MEM, "host-mem") \
	X(ACT_OFFLOAD, "activation-offload") X(LOSS, "loss")
#define X(e, s) VP_PK_##e,
enum vp_pk { VP_PK_LIST(X) VP_PK_COUNT };
#undef X

/* How a key's value is spelt and which field it sets. */
enum vp_pk_kind {
	VP_PKK_ENUM,		/* one of names[] into an enum field */
	VP_PKK_U64,		/* a whole number into a uint64_t field */
	VP_PKK_UINT,		/* a whole number into an unsigned field */
	VP_PKK_DOUBLE,		/* a number into a double field */
	VP_PKK_BOOL,		/* true or false into a bool field */
	VP_PKK_GPUS,		/* NxCARD: the GPU set, not a plan field */
	VP_PKK_TARGETS,		/* "q,v": the LoRA target bit set */
	VP_PKK_DTYPE,		/* fp32 or bf16: the adapters' dtype */
	VP_PKK_GIB,		/* GiB into a byte count (0: no limit) */
};

struct vp_pk_info {
	const char *name;		/* the option without "--" */
	enum vp_pk_kind kind;
	size_t off;			/* the field in struct vp_plan */
	const char *const *names;	/* VP_PKK_ENUM: the values */
	int nnames;
	double min, max;		/* the range of a number */
};
extern const struct vp_pk_info vp_pk_info[VP_PK_COUNT];
extern const char *const vp_pk_names[VP_PK_COUNT];
/* The two spellings of --lora-dtype, fp32 then bf16. */
extern const char *const vp_lora_dtype_names[2];

/* The knobs a plan file gives: has[k] for each key present. */
struct vp_plan_knobs {
	bool has[VP_PK_COUNT];
	struct vp_srcpos pos[VP_PK_COUNT];	/* where each value was */
	struct vp_plan plan;		/* the values of the keys present */
	char *gpus;			/* the gpus value (owned), or NULL */
	char *file;			/* its file name (owned) */
};
void vp_plan_knobs_init(struct vp_plan_knobs *k);
void vp_plan_knobs_free(struct vp_plan_knobs *k);

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
void vp_planfile_value(const struct vp_planfile *f, enum vp_pk k,
    struct vp_buf *out);

/* Enum fields read and written through the table (all are int-sized). */
int vp_pk_get_enum(const struct vp_plan *p, enum vp_pk k);
void vp_pk_set_enum(struct vp_plan *p, enum vp_pk k, int v);

#endif
