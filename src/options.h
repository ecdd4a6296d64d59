/*
 * options.h — every command-line option of vramplan, in one table.
 *
 * A row says everything the program knows about an option apart from its
 * meaning: its name, how its value is spelt and checked (kind, allowed
 * names or range, the message's wording), which field of struct vp_plan
 * it sets, which commands take it, whether it is a key of plan files,
 * which planner knob giving it pins, and its line in --help.  The CLI's
 * getopt table, the value parser and its error messages, the plan file's
 * reader and writer, the equivalent command line, the TUI's enum and
 * count knobs, `compare` and `--help` are all driven by the rows, so a new
 * option is one row plus its semantics (HACKING.md, "Add an option").
 *
 * The rows are in the order --help lists them; plan files write their
 * keys in the same order.
 *
 * Pure: parsing reports into a caller-owned struct vp_buf.  struct
 * vp_optset owns the strings it was given by vp_optset_own (a plan file's
 * values) and nothing else; vp_optset_free releases them.
 */
#ifndef VP_OPTIONS_H
#define VP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "plan.h"
#include "plan_search.h"
#include "util.h"

#define VP_OPTION_LIST(X) \
	X(GPUS, "gpus") X(NODES, "nodes") X(GPUS_PER_NODE, "gpus-per-node") \
	X(PRECISION, "precision") X(OPTIMIZER, "optimizer") \
	X(MICRO_BATCH, "micro-batch") X(SEQ, "seq") \
	X(TARGET_SEQ, "target-seq") \
	X(GRAD_ACCUM, "grad-accum") X(RECOMPUTE, "recompute") \
	X(RECOMPUTE_STRIDE, "recompute-stride") \
	X(ATTENTION, "attention") X(DROPOUT, "dropout") \
	X(FRAMEWORK, "framework") X(ZERO, "zero") X(FSDP, "fsdp") \
	X(FSDP_PREFETCH, "fsdp-prefetch") \
	X(FSDP_ORIG_PARAMS, "fsdp-orig-params") \
	X(RESHARD_AFTER_FORWARD, "reshard-after-forward") \
	X(FSDP_LORA_WRAP, "fsdp-lora-wrap") \
	X(FSDP_UNITS, "fsdp-units") \
	X(TP, "tp") X(SP, "sp") X(ASYNC_TP, "async-tp") X(PP, "pp") X(VPP, "vpp") X(CP, "cp") \
	X(EP, "ep") X(DP, "dp") X(CAPACITY, "capacity-factor") \
	X(DEVICE, "device") X(OPTIMIZER_IMPL, "optimizer-impl") \
	X(ZERO_GRAD, "zero-grad") X(OPTIM_IN_BWD, "optimizer-in-backward") \
	X(COMPILE, "compile") X(COMPILE_LOSS, "compile-loss") \
	X(COMPILE_WRAPS_CKPT, "compile-wraps-checkpoint") \
	X(FUSED, "fused-optimizer") X(LORA, "lora") \
	X(LORA_TARGETS, "lora-targets") X(LORA_DROPOUT, "lora-dropout") \
	X(LORA_DTYPE, "lora-dtype") X(QUANT, "quant") X(KBIT_PREP, "kbit-prep") \
	X(QUANT_LIB, "quant-lib") \
	X(LOAD, "load") X(OFFLOAD, "offload") \
	X(OFFLOAD_NVME, "offload-nvme") X(HOST_MEM, "host-mem") \
	X(ACT_OFFLOAD, "activation-offload") X(LOSS, "loss") \
	X(FLOAT8, "float8") X(FLOAT8_ALL_GATHER, "float8-all-gather") \
	X(TRAINER, "trainer") \
	X(TORCH, "torch") X(CUDA, "cuda") X(TRANSFORMERS, "transformers") \
	X(ALLOC_CONF, "alloc-conf") \
	X(TOKENS, "tokens") X(STEPS, "steps") X(GLOBAL_BATCH, "global-batch") \
	X(SORT, "sort") X(MAX_GPUS, "max-gpus") X(PRICE, "price") \
	X(VENDOR, "vendor") X(SEGMENT, "segment") X(MIN_MEM, "min-mem") \
	X(SVG, "svg") X(NO_SEARCH, "no-search") X(PLANS, "plans") \
	X(MAX_MB, "max-micro-batch") X(MAX_SEQ, "max-seq") \
	X(MIN_GPUS, "min-gpus") X(EXPLAIN, "explain") X(JSON, "json") \
	X(CSV, "csv") X(CATALOG, "catalog") X(PLAN, "plan") \
	X(DS_CONFIG, "deepspeed-config") X(TEXT_ONLY, "text-only") \
	X(PROFILE, "profile") X(HELP, "help") X(VERSION, "version") \
	X(IMAGE, "image") \
	X(DEADLINE, "deadline") X(BUDGET, "budget") \
	X(UNDATED_PRICES, "undated-prices") \
	X(REVISION, "revision") X(NAMES, "names") X(IDS, "ids") \
	X(CACHED, "cached") \
	X(OUTPUT, "output") X(DS_FILE, "deepspeed-file") X(EMIT, "emit")
#define X(e, s) VP_O_##e,
enum vp_optid { VP_OPTION_LIST(X) VP_O_COUNT };
#undef X

/* How a value is spelt, and the member of union vp_optval it fills. */
enum vp_optkind {
	VP_OK_FLAG,		/* no value on the command line; a file says
				 * true or false (.b) */
	VP_OK_ENUM,		/* one of names[] (.i, the index) */
	VP_OK_U64,		/* a whole number (.u) */
	VP_OK_DOUBLE,		/* a number (.x) */
	VP_OK_GIB,		/* a number of GiB (.x); the field is bytes */
	VP_OK_TARGETS,		/* "q,v" or all-linear (.u, the bit set) */
	VP_OK_VERSION,		/* "2.13" or "2.13.1" (.u, major*100+minor;
				 * min and max in the same encoding) */
	VP_OK_STRING,		/* any text (.s) */
};

/* The C type of the struct vp_plan field an option sets. */
enum vp_optfield {
	VP_OF_NONE,		/* no plan field: the shell reads .val */
	VP_OF_INT,		/* an int-sized enum */
	VP_OF_U64,
	VP_OF_UNSIGNED,
	VP_OF_DOUBLE,
	VP_OF_BOOL,
	VP_OF_DTYPE,		/* enum vp_dtype from names[] via dtypes[] */
	VP_OF_ALLOC_CONF,	/* char[128]: a PYTORCH_CUDA_ALLOC_CONF that
				 * vp_alloc_conf_parse accepts */
};

/* Commands that take an option. */
#define VP_CMD_ESTIMATE	0x1u
#define VP_CMD_TUI	0x2u
#define VP_CMD_COMPARE	0x4u
#define VP_CMD_GPUS	0x8u
#define VP_CMD_MODELS	0x10u
#define VP_CMD_EXPORT	0x20u	/* vramplan export: the estimate's rows
				 * and its own */
#define VP_CMD_PLANS	(VP_CMD_ESTIMATE | VP_CMD_TUI | VP_CMD_COMPARE)

/* The planner knob that giving an option pins (struct vp_open). */
enum vp_optopen {
	VP_OPEN_NONE, VP_OPEN_TP, VP_OPEN_PP, VP_OPEN_CP, VP_OPEN_EP,
	VP_OPEN_SP, VP_OPEN_SHARD, VP_OPEN_RECOMPUTE, VP_OPEN_GRAD_ACCUM,
};

struct vp_optdef {
	const char *name;		/* without "--" */
	enum vp_optkind kind;
	enum vp_optfield field;
	size_t off;			/* in struct vp_plan */
	const char *const *names;	/* VP_OK_ENUM: the values */
	int nnames;
	const enum vp_dtype *dtypes;	/* VP_OF_DTYPE: names[i]'s dtype */
	double min, max;		/* a number's range */
	bool zero_off;			/* 0 also allowed: the knob is off */
	const char *expect;		/* the range message's wording, or NULL
					 * for "a whole number from MIN to MAX" */
	unsigned cmds;			/* VP_CMD_* */
	bool planfile;			/* a key of plan files */
	bool repeat;			/* may be given more than once */
	enum vp_optopen open;
	const char *metavar;		/* --help: the value's placeholder */
	const char *help;		/* --help: what it does */
	/* A flag that is another option's value (--fused-optimizer is
	 * --optimizer-impl fused): that option + 1 (0: none), and the value.
	 * Plan files read it, and write the option it stands for. */
	int alias_of;
	const char *alias_value;
};
extern const struct vp_optdef vp_options[VP_O_COUNT];

union vp_optval {
	bool b;
	int i;
	uint64_t u;
	double x;
	const char *s;
};

/* Options given, and their values: the command line's or a plan file's. */
struct vp_optset {
	bool has[VP_O_COUNT];
	union vp_optval val[VP_O_COUNT];
	struct vp_srcpos pos[VP_O_COUNT];	/* a plan file: where */
	char *owned[VP_O_COUNT];		/* strings it owns */
	char *file;				/* the plan file's name */
};
void vp_optset_init(struct vp_optset *o);
void vp_optset_free(struct vp_optset *o);
/* Set a string value the set keeps a copy of. */
void vp_optset_own(struct vp_optset *o, enum vp_optid id, const char *s);

/* Record id's value v in o; a set alias flag records the option it
 * stands for too. */
void vp_optset_set(struct vp_optset *o, enum vp_optid id,
    const union vp_optval *v);

/* The option of a name (no "--"), or -1. */
int vp_option_find(const char *name);
/*
 * Parse text as id's value.  0, or -1 with the message (without the
 * "vramplan: " prefix) in err: "--seq '0' is too small (expected a whole
 * number from 1 to 134217728)", "unknown --precision 'x'; did you mean
 * ...".  A flag takes no text.
 */
int vp_option_parse(enum vp_optid id, const char *text, union vp_optval *v,
    struct vp_buf *err);
/* A version as "X.Y" (a third part is ignored): major * 100 + minor, or
 * -1 when text is not one. */
int vp_parse_version(const char *text, unsigned *out);
/* The LoRA targets' list, as the messages spell it: "q, k, ..., down, or
 * all-linear". */
void vp_lora_targets_expect(struct vp_buf *out);
/* A number against its row's range, with the same wording. */
int vp_option_check_number(enum vp_optid id, double x, struct vp_buf *err);

/* The plan field of every option the set has, over what p holds. */
void vp_optset_apply(const struct vp_optset *o, struct vp_plan *p);
/* Options of from that into does not have, copied (the command line
 * wins over a plan file).  Strings stay from's: keep from alive. */
void vp_optset_merge(struct vp_optset *into, const struct vp_optset *from);
/* One line per option in given (the command line's) that has no effect
 * on plan p because the option it refines is off ("--kbit-prep has no
 * effect without --quant"). */
void vp_optset_inert(const bool given[VP_O_COUNT], const struct vp_plan *p,
    struct vp_buf *out);
/* The planner knobs the set leaves open: those no given option pins
 * (EP only for a MoE model). */
void vp_optset_open(const struct vp_optset *o, bool moe,
    struct vp_open *open);

/* The flag of struct vp_open a planner knob kind is, or NULL (none). */
bool *vp_open_flag(struct vp_open *open, enum vp_optopen k);

/* An option's plan field as text, the way a plan file spells it. */
void vp_option_value(enum vp_optid id, const struct vp_plan *p,
    struct vp_buf *out);

/* --help's option lines for the commands in cmds, less those that the
 * commands in skip take too. */
void vp_options_help(unsigned cmds, unsigned skip, struct vp_buf *out);

#endif
