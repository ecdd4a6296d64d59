/* ds_read.c — the DeepSpeed config reader (see ds_read.h). */
#include "ds_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* How a key is handled. */
enum dskind {
	K_IGNORE,		/* no effect on memory: accepted */
	K_UNMODELLED,		/* changes memory, not modelled: a warning
				 * unless it has DeepSpeed's default */
	K_MAP_IGNORE,		/* a section without effect on memory */
	K_MAP_UNMODELLED,	/* a section vramplan does not model */
	K_ZERO,			/* zero_optimization */
	K_OFFLOAD,		/* offload_optimizer (arg 0), offload_param (1) */
	K_DEVICE,		/* their device */
	K_CPU_OFFLOAD,		/* the old booleans: optimizer (0), param (1) */
	K_PREC,			/* bf16 (arg 0), fp16 (1) */
	K_ENABLED,
	K_OPTIMIZER,
	K_OPT_TYPE,
	K_STAGE,
	K_KNOB,			/* arg: enum vp_dsk */
	K_MICRO,
	K_GA,
};

struct dskey {
	const char *name;
	enum dskind kind;
	int arg;
	const char *dflt;	/* K_UNMODELLED: DeepSpeed's default */
};

/* Offload devices: none, cpu, nvme (DeepSpeed's OffloadDeviceEnum). */
static const char *const dev_names[] = { "none", "cpu", "nvme" };

/* What a file says, while reading. */
struct ctx {
	const char *file;
	struct vp_dsconfig *c;
	struct vp_diags *d;
	int dev[2];		/* offload device per kind; -1 not given */
	struct vp_srcpos dev_pos[2];
	int prec;		/* which section is being read: 0 bf16, 1 fp16 */
	int off;		/* which offload section */
	int bad;
};

static const struct dskey top_keys[] = {
	{ "zero_optimization", K_ZERO, 0, NULL },
	{ "bf16", K_PREC, 0, NULL }, { "bfloat16", K_PREC, 0, NULL },
	{ "fp16", K_PREC, 1, NULL },
	{ "optimizer", K_OPTIMIZER, 0, NULL },
	{ "train_micro_batch_size_per_gpu", K_MICRO, 0, NULL },
	{ "gradient_accumulation_steps", K_GA, 0, NULL },
	{ "train_batch_size", K_IGNORE, 0, NULL },
	{ "gradient_clipping", K_IGNORE, 0, NULL },
	{ "scheduler", K_MAP_IGNORE, 0, NULL },
	{ "steps_per_print", K_IGNORE, 0, NULL },
	{ "wall_clock_breakdown", K_IGNORE, 0, NULL },
	{ "memory_breakdown", K_IGNORE, 0, NULL },
	{ "dump_state", K_IGNORE, 0, NULL },
	{ "prescale_gradients", K_IGNORE, 0, NULL },
	{ "gradient_predivide_factor", K_IGNORE, 0, NULL },
	{ "sparse_gradients", K_IGNORE, 0, NULL },
	{ "zero_allow_untested_optimizer", K_IGNORE, 0, NULL },
	{ "zero_force_ds_cpu_optimizer", K_IGNORE, 0, NULL },
	{ "disable_allgather", K_IGNORE, 0, NULL },
	{ "seed", K_IGNORE, 0, NULL },
	{ "tensorboard", K_MAP_IGNORE, 0, NULL },
	{ "wandb", K_MAP_IGNORE, 0, NULL },
	{ "csv_monitor", K_MAP_IGNORE, 0, NULL },
	{ "comet", K_MAP_IGNORE, 0, NULL },
	{ "flops_profiler", K_MAP_IGNORE, 0, NULL },
	{ "comms_logger", K_MAP_IGNORE, 0, NULL },
	{ "checkpoint", K_MAP_IGNORE, 0, NULL },
	{ "elasticity", K_MAP_IGNORE, 0, NULL },
	{ "autotuning", K_MAP_IGNORE, 0, NULL },
	{ "aio", K_MAP_IGNORE, 0, NULL },
	{ "nebula", K_MAP_IGNORE, 0, NULL },
	{ "data_efficiency", K_MAP_IGNORE, 0, NULL },
	{ "activation_checkpointing", K_MAP_UNMODELLED, 0, NULL },
	{ "amp", K_MAP_UNMODELLED, 0, NULL },
	{ "data_types", K_MAP_UNMODELLED, 0, NULL },
	{ "communication_data_type", K_UNMODELLED, 0, "null" },
	{ "sparse_attention", K_MAP_UNMODELLED, 0, NULL },
	{ "pipeline", K_MAP_UNMODELLED, 0, NULL },
	{ "compression_training", K_MAP_UNMODELLED, 0, NULL },
	{ "torch_autocast", K_MAP_UNMODELLED, 0, NULL },
	/* vramplan export's provenance (DeepSpeed ignores unknown keys). */
	{ "_vramplan", K_MAP_IGNORE, 0, NULL },
};

static const struct dskey zero_keys[] = {
	{ "stage", K_STAGE, 0, NULL },
	{ "offload_optimizer", K_OFFLOAD, 0, NULL },
	{ "offload_param", K_OFFLOAD, 1, NULL },
	{ "cpu_offload", K_CPU_OFFLOAD, 0, NULL },
	{ "cpu_offload_param", K_CPU_OFFLOAD, 1, NULL },
	{ "reduce_bucket_size", K_KNOB, VP_DSK_REDUCE_BUCKET, NULL },
	{ "stage3_prefetch_bucket_size", K_KNOB, VP_DSK_PREFETCH_BUCKET, NULL },
	{ "stage3_param_persistence_threshold", K_KNOB, VP_DSK_PERSIST, NULL },
	{ "stage3_max_live_parameters", K_KNOB, VP_DSK_MAX_LIVE, NULL },
	{ "stage3_max_reuse_distance", K_KNOB, VP_DSK_MAX_REUSE, NULL },
	{ "contiguous_gradients", K_KNOB, VP_DSK_CONTIGUOUS, NULL },
	{ "overlap_comm", K_KNOB, VP_DSK_OVERLAP, NULL },
	{ "allgather_partitions", K_IGNORE, 0, NULL },
	{ "reduce_scatter", K_IGNORE, 0, NULL },
	{ "load_from_fp32_weights", K_IGNORE, 0, NULL },
	{ "elastic_checkpoint", K_IGNORE, 0, NULL },
	{ "ignore_unused_parameters", K_IGNORE, 0, NULL },
	{ "round_robin_gradients", K_IGNORE, 0, NULL },
	{ "legacy_stage1", K_IGNORE, 0, NULL },
	{ "stage3_gather_16bit_weights_on_model_save", K_IGNORE, 0, NULL },
	{ "stage3_gather_fp16_weights_on_model_save", K_IGNORE, 0, NULL },
	{ "gather_16bit_weights_on_model_save", K_IGNORE, 0, NULL },
	{ "use_multi_rank_bucket_allreduce", K_IGNORE, 0, NULL },
	{ "mics_hierarchical_params_gather", K_IGNORE, 0, NULL },
	{ "pipeline_loading_checkpoint", K_IGNORE, 0, NULL },
	{ "override_module_apply", K_IGNORE, 0, NULL },
	{ "log_trace_cache_warnings", K_IGNORE, 0, NULL },
	{ "use_all_reduce_for_fetch_params", K_IGNORE, 0, NULL },
	{ "allgather_bucket_size", K_UNMODELLED, 0, "5e8" },
	{ "sub_group_size", K_UNMODELLED, 0, "1e9" },
	{ "stage3_model_persistence_threshold", K_UNMODELLED, 0, NULL },
	{ "zero_hpz_partition_size", K_UNMODELLED, 0, "1" },
	{ "zero_quantized_weights", K_UNMODELLED, 0, "false" },
	{ "zero_quantized_nontrainable_weights", K_UNMODELLED, 0, "false" },
	{ "zero_quantized_gradients", K_UNMODELLED, 0, "false" },
	{ "mics_shard_size", K_UNMODELLED, 0, "-1" },
	{ "memory_efficient_linear", K_UNMODELLED, 0, "true" },
	{ "module_granularity_threshold", K_UNMODELLED, 0, "0" },
};

static const struct dskey offload_keys[] = {
	{ "device", K_DEVICE, 0, NULL },
	{ "nvme_path", K_IGNORE, 0, NULL },
	{ "pin_memory", K_IGNORE, 0, NULL },
	{ "buffer_count", K_IGNORE, 0, NULL },
	{ "buffer_size", K_IGNORE, 0, NULL },
	{ "max_in_cpu", K_IGNORE, 0, NULL },
	{ "fast_init", K_IGNORE, 0, NULL },
	{ "pipeline", K_IGNORE, 0, NULL },
	{ "pipeline_read", K_IGNORE, 0, NULL },
	{ "pipeline_write", K_IGNORE, 0, NULL },
	{ "ratio", K_UNMODELLED, 0, "1" },
};

static const struct dskey prec_keys[] = {
	{ "enabled", K_ENABLED, 0, NULL },
	{ "loss_scale", K_IGNORE, 0, NULL },
	{ "initial_scale_power", K_IGNORE, 0, NULL },
	{ "loss_scale_window", K_IGNORE, 0, NULL },
	{ "hysteresis", K_IGNORE, 0, NULL },
	{ "consecutive_hysteresis", K_IGNORE, 0, NULL },
	{ "min_loss_scale", K_IGNORE, 0, NULL },
	{ "auto_cast", K_IGNORE, 0, NULL },
	{ "immediate_grad_update", K_IGNORE, 0, NULL },
	{ "check_grad_overflow", K_IGNORE, 0, NULL },
	{ "fp16_master_weights_and_grads", K_UNMODELLED, 0, "false" },
	{ "bf16_master_weights_and_grads", K_UNMODELLED, 0, "false" },
	{ "bf16_optimizer_states", K_UNMODELLED, 0, "false" },
};

static const struct dskey opt_keys[] = {
	{ "type", K_OPT_TYPE, 0, NULL },
	{ "params", K_MAP_IGNORE, 0, NULL },
};

static int read_map(struct ctx *x, const struct ynode *map,
    const char *where, const struct dskey *keys, size_t nkeys);

/* "zero_optimization.stage" for the messages. */
static const char *
qualify(char *buf, size_t len, const char *where, const char *key)
{
	if (where == NULL)
		snprintf(buf, len, "%s", key);
	else
		snprintf(buf, len, "%s.%s", where, key);
	return buf;
}

static bool
is_auto(const struct ynode *n)
{
	return n->kind == YN_SCALAR && strcmp(n->str, "auto") == 0;
}

static void
no_auto(struct ctx *x, const struct ynode *n, const char *q)
{
	vp_diag_add(x->d, x->file, n->pos, VP_ERROR, "'%s' cannot be \"auto\" "
	    "(transformers fills \"auto\" only in the batch sizes, "
	    "gradient_accumulation_steps, bf16/fp16.enabled, "
	    "reduce_bucket_size, stage3_prefetch_bucket_size and "
	    "stage3_param_persistence_threshold); give a number", q);
	x->bad = -1;
}

/* A whole number, or "auto" where allowed. */
static int
read_count(struct ctx *x, const struct ynode *n, const char *q, bool auto_ok,
    uint64_t min, struct vp_dsval *v)
{
	v->pos = n->pos;
	if (is_auto(n)) {
		if (!auto_ok) {
			no_auto(x, n, q);
			return -1;
		}
		v->has = v->is_auto = true;
		return 0;
	}
	if (ynode_u64(n, x->file, q, min, 1000000000000000ULL, &v->v,
	    x->d) != 0) {
		x->bad = -1;
		return -1;
	}
	v->has = true;
	return 0;
}

static int
read_flag(struct ctx *x, const struct ynode *n, const char *q, bool auto_ok,
    struct vp_dsval *v)
{
	bool b;

	v->pos = n->pos;
	if (is_auto(n)) {
		if (!auto_ok) {
			no_auto(x, n, q);
			return -1;
		}
		v->has = v->is_auto = true;
		return 0;
	}
	if (ynode_bool(n, x->file, q, &b, x->d) != 0) {
		x->bad = -1;
		return -1;
	}
	v->has = true;
	v->v = b;
	return 0;
}

/* An option of the table, as the file gives it. */
static void
set_opt(struct ctx *x, enum vp_optid id, union vp_optval v,
    struct vp_srcpos pos)
{
	x->c->opts.has[id] = true;
	x->c->opts.val[id] = v;
	x->c->opts.pos[id] = pos;
}

/* A key vramplan knows to change memory but does not model: a warning,
 * unless the value is DeepSpeed's default (or "auto"). */
static void
unmodelled(struct ctx *x, const struct ynode *n, const struct dskey *k,
    const char *q)
{
	if (n->kind == YN_SCALAR && (is_auto(n) || (k->dflt != NULL &&
	    (strcasecmp(n->str, k->dflt) == 0 || (strtod(n->str, NULL) ==
	    strtod(k->dflt, NULL) && strtod(k->dflt, NULL) != 0)))))
		return;
	vp_diag_add(x->d, x->file, n->pos, VP_WARNING, "'%s' changes memory "
	    "but vramplan does not model it; estimated as if it were "
	    "absent", q);
}

static void
read_opt_type(struct ctx *x, const struct ynode *n, const char *q)
{
	static const struct { const char *ds; enum vp_optimizer opt; } map[] = {
		{ "adam", VP_OPT_ADAM }, { "adamw", VP_OPT_ADAMW },
		{ "fusedadam", VP_OPT_ADAM }, { "cpuadam", VP_OPT_ADAM },
		{ "lion", VP_OPT_LION }, { "fusedlion", VP_OPT_LION },
		{ "cpulion", VP_OPT_LION },
	};
	const char *s;
	size_t i;

	if (ynode_string(n, x->file, q, &s, x->d) != 0) {
		x->bad = -1;
		return;
	}
	for (i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcasecmp(s, map[i].ds) == 0) {
			set_opt(x, VP_O_OPTIMIZER, (union vp_optval){
			    .i = (int)map[i].opt }, n->pos);
			return;
		}
	vp_diag_add(x->d, x->file, n->pos, VP_WARNING, "optimizer '%s' is not "
	    "modelled (vramplan knows Adam, AdamW and Lion); the plan's "
	    "--optimizer is used", s);
}

static int
read_key(struct ctx *x, const struct ynode *kn, const struct ynode *vn,
    const struct dskey *k, const char *q)
{
	struct vp_dsconfig *c = x->c;
	int i;

	switch (k->kind) {
	case K_IGNORE:
	case K_MAP_IGNORE:
		return 0;
	case K_UNMODELLED:
		unmodelled(x, vn, k, q);
		return 0;
	case K_MAP_UNMODELLED:
		vp_diag_add(x->d, x->file, kn->pos, VP_WARNING, "'%s' changes "
		    "memory but vramplan does not model it; estimated as if it "
		    "were absent%s", q, strcmp(q, "activation_checkpointing")
		    == 0 ? " (say --recompute full)" : "");
		return 0;
	case K_ZERO:
		return read_map(x, vn, q, zero_keys,
		    sizeof zero_keys / sizeof zero_keys[0]);
	case K_OFFLOAD:
		x->off = k->arg;
		if (ynode_is_null(vn))
			return 0;
		return read_map(x, vn, q, offload_keys,
		    sizeof offload_keys / sizeof offload_keys[0]);
	case K_DEVICE:
		if (ynode_enum(vn, x->file, q, dev_names, 3, &i, x->d) != 0)
			return x->bad = -1;
		x->dev[x->off] = i;
		x->dev_pos[x->off] = vn->pos;
		return 0;
	case K_CPU_OFFLOAD: {
		bool b;

		if (ynode_bool(vn, x->file, q, &b, x->d) != 0)
			return x->bad = -1;
		if (b && x->dev[k->arg] < 0) {
			x->dev[k->arg] = 1;
			x->dev_pos[k->arg] = vn->pos;
		}
		return 0;
	}
	case K_PREC:
		x->prec = k->arg;
		return read_map(x, vn, q, prec_keys,
		    sizeof prec_keys / sizeof prec_keys[0]);
	case K_ENABLED:
		return read_flag(x, vn, q, true, x->prec ? &c->fp16 : &c->bf16);
	case K_OPTIMIZER:
		return read_map(x, vn, q, opt_keys,
		    sizeof opt_keys / sizeof opt_keys[0]);
	case K_OPT_TYPE:
		read_opt_type(x, vn, q);
		return 0;
	case K_STAGE: {
		uint64_t s;

		if (is_auto(vn)) {
			no_auto(x, vn, q);
			return -1;
		}
		if (ynode_u64(vn, x->file, q, 0, 3, &s, x->d) != 0)
			return x->bad = -1;
		set_opt(x, VP_O_ZERO, (union vp_optval){ .u = s }, vn->pos);
		return 0;
	}
	case K_KNOB:
		if (k->arg == VP_DSK_CONTIGUOUS || k->arg == VP_DSK_OVERLAP)
			return read_flag(x, vn, q, false, &c->knob[k->arg]);
		return read_count(x, vn, q, k->arg == VP_DSK_REDUCE_BUCKET ||
		    k->arg == VP_DSK_PREFETCH_BUCKET || k->arg ==
		    VP_DSK_PERSIST, 0, &c->knob[k->arg]);
	case K_MICRO:
		return read_count(x, vn, q, true, 1, &c->micro_batch);
	case K_GA:
		return read_count(x, vn, q, true, 1, &c->grad_accum);
	}
	return 0;
}

static int
read_map(struct ctx *x, const struct ynode *map, const char *where,
    const struct dskey *keys, size_t nkeys)
{
	const char *names[64];
	char q[160];
	size_t i, j;

	if (ynode_want(map, YN_MAP, x->file, where ? where : "the config",
	    x->d) != 0)
		return x->bad = -1;
	for (j = 0; j < nkeys && j < 64; j++)
		names[j] = keys[j].name;
	for (i = 0; i + 1 < map->nkids; i += 2) {
		const struct ynode *kn = map->kids[i], *vn = map->kids[i + 1];
		const char *near;

		if (kn->kind != YN_SCALAR) {
			vp_diag_add(x->d, x->file, kn->pos, VP_ERROR, "key must "
			    "be a plain name, not %s", ynode_kind_name(kn));
			x->bad = -1;
			continue;
		}
		for (j = 0; j < nkeys; j++)
			if (strcmp(kn->str, keys[j].name) == 0)
				break;
		if (j < nkeys) {
			read_key(x, kn, vn, &keys[j],
			    qualify(q, sizeof q, where, kn->str));
			continue;
		}
		near = vp_closest(kn->str, names, nkeys < 64 ? nkeys : 64);
		if (near)
			vp_diag_add(x->d, x->file, kn->pos, VP_ERROR, "unknown "
			    "DeepSpeed key '%.64s' in %s; did you mean '%s'?",
			    kn->str, where ? where : "the config", near);
		else
			vp_diag_add(x->d, x->file, kn->pos, VP_ERROR, "unknown "
			    "DeepSpeed key '%.64s' in %s (vramplan(1), "
			    "--deepspeed-config, lists the keys it knows)",
			    kn->str, where ? where : "the config");
		x->bad = -1;
	}
	return x->bad;
}

/* Offload devices and precision into options. */
static int
finish(struct ctx *x)
{
	struct vp_dsconfig *c = x->c;
	bool opt = x->dev[0] > 0, par = x->dev[1] > 0;
	struct vp_srcpos pos = par ? x->dev_pos[1] : x->dev_pos[0];

	if (x->dev[0] >= 0 || x->dev[1] >= 0) {
		enum vp_offload w = opt && par ? VP_OFFLOAD_ALL : opt ?
		    VP_OFFLOAD_OPTIMIZER : par ? VP_OFFLOAD_PARAMS :
		    VP_OFFLOAD_NONE;

		set_opt(x, VP_O_OFFLOAD, (union vp_optval){ .i = (int)w },
		    pos);
		set_opt(x, VP_O_OFFLOAD_NVME, (union vp_optval){ .b =
		    x->dev[0] == 2 || x->dev[1] == 2 }, pos);
	}
	if (c->bf16.has && c->fp16.has && !c->bf16.is_auto &&
	    !c->fp16.is_auto && c->bf16.v && c->fp16.v) {
		vp_diag_add(x->d, x->file, c->fp16.pos, VP_ERROR, "'bf16' and "
		    "'fp16' are both enabled (DeepSpeed allows one); set "
		    "'enabled' false in one of them");
		return -1;
	}
	/* DeepSpeed's bf16 and fp16 modes keep 16-bit weights and fp32
	 * master partitions in the optimizer; neither is fp32 training. */
	if (c->bf16.has && !c->bf16.is_auto && c->bf16.v)
		set_opt(x, VP_O_PRECISION, (union vp_optval){ .i =
		    VP_PREC_BF16_MASTER }, c->bf16.pos);
	else if (c->fp16.has && !c->fp16.is_auto && c->fp16.v)
		set_opt(x, VP_O_PRECISION, (union vp_optval){ .i =
		    VP_PREC_FP16_MASTER }, c->fp16.pos);
	else if (!(c->bf16.has && c->bf16.is_auto) &&
	    !(c->fp16.has && c->fp16.is_auto))
		set_opt(x, VP_O_PRECISION, (union vp_optval){ .i =
		    VP_PREC_FP32 }, c->bf16.has ? c->bf16.pos : c->fp16.pos);
	/* ZeRO is data parallelism: a DeepSpeed config of the Trainer or of
	 * deepspeed.initialize has no tensor, pipeline or context
	 * parallelism (those need Megatron-DeepSpeed's own launcher), so it
	 * pins their degrees to 1 (at no position: no note). */
	set_opt(x, VP_O_TP, (union vp_optval){ .u = 1 }, (struct vp_srcpos){ 0 });
	set_opt(x, VP_O_PP, (union vp_optval){ .u = 1 }, (struct vp_srcpos){ 0 });
	set_opt(x, VP_O_CP, (union vp_optval){ .u = 1 }, (struct vp_srcpos){ 0 });
	if (c->micro_batch.has && !c->micro_batch.is_auto)
		set_opt(x, VP_O_MICRO_BATCH, (union vp_optval){ .u =
		    c->micro_batch.v }, c->micro_batch.pos);
	if (c->grad_accum.has && !c->grad_accum.is_auto)
		set_opt(x, VP_O_GRAD_ACCUM, (union vp_optval){ .u =
		    c->grad_accum.v }, c->grad_accum.pos);
	return 0;
}

int
vp_ds_from_doc(const struct ydoc *doc, struct vp_dsconfig *c,
    struct vp_diags *d)
{
	const struct ynode *root = ydoc_root(doc);
	struct ctx x = { 0 };

	memset(c, 0, sizeof *c);
	vp_optset_init(&c->opts);
	c->file = xstrdup(ydoc_name(doc));
	x.file = c->file;
	x.c = c;
	x.d = d;
	x.dev[0] = x.dev[1] = -1;
	if (root == NULL || ynode_is_null(root)) {
		vp_diag_add(d, c->file, (struct vp_srcpos){ 1, 1 }, VP_ERROR,
		    "empty DeepSpeed config; expected a JSON object such as "
		    "{\"zero_optimization\": {\"stage\": 3}}");
		return -1;
	}
	if (read_map(&x, root, NULL, top_keys,
	    sizeof top_keys / sizeof top_keys[0]) != 0)
		return -1;
	return finish(&x);
}

int
vp_ds_load(const char *path, struct vp_dsconfig *c, struct vp_diags *d)
{
	struct ydoc *doc = ydoc_load_as(path, "DeepSpeed config", d);
	int rc;

	if (doc == NULL) {
		memset(c, 0, sizeof *c);
		vp_optset_init(&c->opts);
		return -1;
	}
	rc = vp_ds_from_doc(doc, c, d);
	ydoc_free(doc);
	return rc;
}

void
vp_ds_free(struct vp_dsconfig *c)
{
	if (c == NULL)
		return;
	free(c->file);
	c->file = NULL;
	vp_optset_free(&c->opts);
}

void
vp_ds_merge(struct vp_dsconfig *c, struct vp_optset *o, struct vp_diags *d)
{
	struct vp_plan tmp;
	struct vp_buf v;
	int i;

	vp_buf_init(&v);
	memset(&tmp, 0, sizeof tmp);
	for (i = 0; i < VP_O_COUNT; i++) {
		if (!c->opts.has[i] || !o->has[i] || c->opts.pos[i].line == 0)
			continue;
		/* The file's value, spelt as the option spells it. */
		{
			struct vp_optset one;

			vp_optset_init(&one);
			one.has[i] = true;
			one.val[i] = c->opts.val[i];
			vp_optset_apply(&one, &tmp);
		}
		v.len = 0;
		if (v.s)
			v.s[0] = '\0';
		vp_option_value((enum vp_optid)i, &tmp, &v);
		{
			struct vp_optset cl;
			struct vp_buf w;

			vp_optset_init(&cl);
			cl.has[i] = true;
			cl.val[i] = o->val[i];
			vp_optset_apply(&cl, &tmp);
			vp_buf_init(&w);
			vp_option_value((enum vp_optid)i, &tmp, &w);
			vp_diag_add(d, c->file, c->opts.pos[i], VP_NOTE, "the "
			    "config's %s %s is overridden by --%s %s given on "
			    "the command line", vp_options[i].name, v.s,
			    vp_options[i].name, w.s);
			vp_buf_free(&w);
		}
	}
	if (((c->bf16.has && c->bf16.is_auto) || (c->fp16.has &&
	    c->fp16.is_auto)) && !c->opts.has[VP_O_PRECISION] &&
	    !o->has[VP_O_PRECISION]) {
		/* The Trainer's --bf16 is what HF users set with "auto". */
		c->opts.has[VP_O_PRECISION] = true;
		c->opts.val[VP_O_PRECISION].i = VP_PREC_BF16_MASTER;
		vp_diag_add(d, c->file, c->bf16.has ? c->bf16.pos : c->fp16.pos,
		    VP_NOTE, "\"auto\" precision is the Trainer's --bf16/--fp16; "
		    "assumed bf16 (precision bf16-master), give --precision to "
		    "say otherwise");
	}
	if (c->micro_batch.is_auto && !o->has[VP_O_MICRO_BATCH])
		vp_diag_add(d, c->file, c->micro_batch.pos, VP_NOTE, "\"auto\" "
		    "train_micro_batch_size_per_gpu is the Trainer's "
		    "per_device_train_batch_size; give --micro-batch (the "
		    "plan's is used)");
	if (c->grad_accum.is_auto && !o->has[VP_O_GRAD_ACCUM])
		vp_diag_add(d, c->file, c->grad_accum.pos, VP_NOTE, "\"auto\" "
		    "gradient_accumulation_steps is the Trainer's; give "
		    "--grad-accum (the plan's is used)");
	vp_optset_merge(o, &c->opts);
	vp_buf_free(&v);
}

void
vp_ds_apply(const struct vp_dsconfig *c, const struct vp_model *m,
    struct vp_plan *p, struct vp_diags *d)
{
	/* transformers' HfTrainerDeepSpeedConfig.trainer_config_finalize. */
	static const struct { int k; const char *key, *formula;
	    double factor; int power; } autos[] = {
		{ VP_DSK_REDUCE_BUCKET, "reduce_bucket_size", "hidden^2", 1, 2 },
		{ VP_DSK_PREFETCH_BUCKET, "stage3_prefetch_bucket_size",
		    "0.9 x hidden^2", 0.9, 2 },
		{ VP_DSK_PERSIST, "stage3_param_persistence_threshold",
		    "10 x hidden", 10, 1 },
	};
	uint64_t *field[VP_DSK_COUNT] = {
		[VP_DSK_REDUCE_BUCKET] = &p->ds.reduce_bucket,
		[VP_DSK_PREFETCH_BUCKET] = &p->ds.prefetch_bucket,
		[VP_DSK_PERSIST] = &p->ds.persist_threshold,
		[VP_DSK_MAX_LIVE] = &p->ds.max_live,
		[VP_DSK_MAX_REUSE] = &p->ds.max_reuse,
	};
	double h = (double)m->hidden;
	size_t i;
	int k;

	for (k = 0; k < VP_DSK_COUNT; k++) {
		const struct vp_dsval *v = &c->knob[k];

		if (!v->has)
			continue;
		if (k == VP_DSK_CONTIGUOUS) {
			p->ds.contiguous_grads = v->v != 0;
			continue;
		}
		if (k == VP_DSK_OVERLAP) {
			p->ds.overlap_comm = v->v != 0;
			continue;
		}
		if (!v->is_auto) {
			*field[k] = v->v;
			continue;
		}
		for (i = 0; i < sizeof autos / sizeof autos[0]; i++) {
			double x;

			if (autos[i].k != k)
				continue;
			x = autos[i].factor * (autos[i].power == 2 ? h * h : h);
			*field[k] = (uint64_t)x;
			vp_diag_add(d, c->file, v->pos, VP_NOTE, "\"auto\" %s "
			    "resolved as transformers does: %s = %llu "
			    "(hidden %llu)", autos[i].key, autos[i].formula,
			    (unsigned long long)*field[k],
			    (unsigned long long)m->hidden);
		}
	}
}
