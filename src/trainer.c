/* trainer.c — --trainer's defaults, one row each (see trainer.h). */
#include "trainer.h"

#include <stdlib.h>
#include <string.h>

/* What a row's value may depend on: the options given so far. */
struct tctx {
	const struct vp_optset *o;	/* as the rows have filled it */
	const struct vp_model *m;
	bool user[VP_O_COUNT];		/* given before the rows ran */
	unsigned world;		/* GPUs in the job, as far as given */
	bool sharded;		/* FSDP full/hybrid or ZeRO-3 */
	unsigned transformers, torch;
};

/* A row: the value for ctx, or NULL when the default does not apply
 * (the option means nothing here, or depends on one the user chose). */
typedef const char *(*value_fn)(const struct tctx *c);

struct row {
	enum vp_trainer t;
	enum vp_optid id;
	const char *fixed;	/* the value, or NULL: fn says */
	value_fn fn;
	const char *why;
};

/* Whether id has a value (the user's or an earlier row's), and which. */
static bool
given(const struct tctx *c, enum vp_optid id)
{
	return c->o->has[id];
}

static bool
given_enum(const struct tctx *c, enum vp_optid id, int v)
{
	return c->o->has[id] && c->o->val[id].i == v;
}

/*
 * The Trainer's default optim (transformers/training_args.py): adamw_hf,
 * transformers' own AdamW stepping one parameter at a time, until 4.31;
 * adamw_torch (torch.optim.AdamW with PyTorch's default kernels) from
 * 4.32 (PR 25109); adamw_torch_fused from 4.54 when PyTorch is 2.8 or
 * later (PR 37358).  Only when the optimizer is AdamW.
 */
static const char *
hf_optim_impl(const struct tctx *c)
{
	if (given(c, VP_O_OPTIMIZER) &&
	    !given_enum(c, VP_O_OPTIMIZER, VP_OPT_ADAMW))
		return NULL;
	if (c->transformers < 432)
		return "for-loop";
	if (c->transformers >= 454 && c->torch >= 208)
		return "fused";
	return "default";
}

/* PEFT's get_peft_model(autocast_adapter_dtype=True) makes 16-bit
 * adapters fp32 (peft 0.12 on). */
static const char *
with_lora_fp32(const struct tctx *c)
{
	return given(c, VP_O_LORA) ? "fp32" : NULL;
}

/* prepare_model_for_kbit_training upcasts what bitsandbytes did not
 * quantize, on one GPU; sharded QLoRA (FSDP, ZeRO-3) loads Params4bit on
 * the CPU or meta device and keeps the load dtype (the recipes skip it). */
static const char *
hf_kbit(const struct tctx *c)
{
	if (!given(c, VP_O_QUANT))
		return NULL;
	return c->sharded ? "keep" : "upcast";
}

/* accelerate's FSDP plugin is FSDP1 unless fsdp_version: 2. */
static const char *
hf_fsdp_framework(const struct tctx *c)
{
	if (!given(c, VP_O_FSDP) || given_enum(c, VP_O_FSDP, VP_FSDP_NONE))
		return NULL;
	return "fsdp1";
}

static const char *
with_quant_keep(const struct tctx *c)
{
	return given(c, VP_O_QUANT) ? "keep" : NULL;
}

static const char *
with_quant_torchao(const struct tctx *c)
{
	return given(c, VP_O_QUANT) ? "torchao" : NULL;
}

/* torchtune's adapters are made in the model's dtype. */
static const char *
tt_lora_dtype(const struct tctx *c)
{
	if (!given(c, VP_O_LORA))
		return NULL;
	if (!given(c, VP_O_PRECISION) ||
	    given_enum(c, VP_O_PRECISION, VP_PREC_BF16))
		return "bf16";
	if (given_enum(c, VP_O_PRECISION, VP_PREC_FP32))
		return "fp32";
	return NULL;
}

/* The configs' CEWithChunkedOutputLoss, where vramplan models it
 * (rules.c, chunked_output_loss): a decoder's lm_head in the model's
 * dtype; otherwise the notes say it was not set. */
static const char *
tt_loss(const struct tctx *c)
{
	if (vp_model_traits(c->m).head != VP_HEAD_LM)
		return NULL;
	if (given(c, VP_O_PRECISION) &&
	    !given_enum(c, VP_O_PRECISION, VP_PREC_BF16) &&
	    !given_enum(c, VP_O_PRECISION, VP_PREC_FP32) &&
	    !given_enum(c, VP_O_PRECISION, VP_PREC_FP16))
		return NULL;
	if (given(c, VP_O_TP) && c->o->val[VP_O_TP].u > 1)
		return NULL;
	return "chunked-output";
}

static const char *
multi_gpu(const struct tctx *c, const char *v)
{
	return c->world > 1 ? v : NULL;
}

static const char *
fsdp_full_multi(const struct tctx *c)
{
	return multi_gpu(c, "full");
}

static const char *
fsdp2_multi(const struct tctx *c)
{
	return multi_gpu(c, "fsdp2");
}

/* apply_fsdp's units (--fsdp-units split) where FSDP2 shards: not with
 * tied embeddings, which its llama3 does not tie (rules.c refuses them). */
static const char *
titan_units(const struct tctx *c)
{
	if (c->m != NULL && c->m->tie_embeddings)
		return NULL;
	if (!given_enum(c, VP_O_FRAMEWORK, VP_FW_FSDP2))
		return NULL;
	return "split";
}

/* Only where the recompute is the library's own too. */
static const char *
titan_stride(const struct tctx *c)
{
	return c->user[VP_O_RECOMPUTE] ? NULL : "2";
}

/* apply_ac, then apply_compile: the compiled block is the checkpoint
 * wrapper (only said where both are on). */
static const char *
titan_compile_ac(const struct tctx *c)
{
	return given(c, VP_O_COMPILE) ? "on" : NULL;
}

static const char *
titan_impl(const struct tctx *c)
{
	if (given(c, VP_O_OPTIMIZER) &&
	    !given_enum(c, VP_O_OPTIMIZER, VP_OPT_ADAMW))
		return NULL;
	return "fused";
}

static const struct row rows[] = {
	/* Hugging Face Trainer + accelerate + PEFT. */
	{ VP_TRAINER_HF, VP_O_OPTIMIZER, "adamw", NULL,
	    "the Trainer's default optim is an AdamW" },
	{ VP_TRAINER_HF, VP_O_OPTIMIZER_IMPL, NULL, hf_optim_impl,
	    "optim adamw_hf before transformers 4.32, adamw_torch from 4.32, "
	    "adamw_torch_fused from 4.54 with PyTorch 2.8" },
	{ VP_TRAINER_HF, VP_O_LORA_DTYPE, NULL, with_lora_fp32,
	    "PEFT 0.12+ get_peft_model(autocast_adapter_dtype=True); earlier "
	    "PEFT made them in the base's dtype" },
	{ VP_TRAINER_HF, VP_O_KBIT_PREP, NULL, hf_kbit,
	    "prepare_model_for_kbit_training on one GPU; sharded QLoRA "
	    "keeps the load dtype" },
	{ VP_TRAINER_HF, VP_O_FRAMEWORK, NULL, hf_fsdp_framework,
	    "accelerate's FSDP plugin (fsdp_version 1)" },
	/* torchtune 0.4 to 0.6 recipes. */
	{ VP_TRAINER_TORCHTUNE, VP_O_PRECISION, "bf16", NULL,
	    "the recipes' dtype: bf16 (the model cast, no autocast)" },
	{ VP_TRAINER_TORCHTUNE, VP_O_LORA_DTYPE, NULL, tt_lora_dtype,
	    "LoRALinear's adapters in the model's dtype" },
	{ VP_TRAINER_TORCHTUNE, VP_O_KBIT_PREP, NULL, with_quant_keep,
	    "torchao's NF4Tensor; nothing upcast" },
	{ VP_TRAINER_TORCHTUNE, VP_O_QUANT_LIB, NULL, with_quant_torchao,
	    "QLoRA's base is torchao's NF4Tensor (linear_nf4)" },
	{ VP_TRAINER_TORCHTUNE, VP_O_TRANSFORMERS, "4.40", NULL,
	    "its own Llama modules repeat k and v like transformers 4.40's" },
	{ VP_TRAINER_TORCHTUNE, VP_O_LOSS, NULL, tt_loss,
	    "the configs' loss: CEWithChunkedOutputLoss" },
	{ VP_TRAINER_TORCHTUNE, VP_O_FSDP, NULL, fsdp_full_multi,
	    "the distributed recipes shard with fully_shard" },
	{ VP_TRAINER_TORCHTUNE, VP_O_FRAMEWORK, NULL, fsdp2_multi,
	    "FSDP2 (fully_shard)" },
	/* torchtitan's JobConfig defaults. */
	{ VP_TRAINER_TORCHTITAN, VP_O_FSDP, NULL, fsdp_full_multi,
	    "data_parallel_shard_degree -1: every GPU shards" },
	{ VP_TRAINER_TORCHTITAN, VP_O_FRAMEWORK, NULL, fsdp2_multi,
	    "FSDP2 (fully_shard)" },
	{ VP_TRAINER_TORCHTITAN, VP_O_PRECISION, "bf16-mixed", NULL,
	    "mixed_precision_param bf16, mixed_precision_reduce fp32, fp32 "
	    "parameters (the nearest precision, see below)" },
	{ VP_TRAINER_TORCHTITAN, VP_O_OPTIMIZER, "adamw", NULL,
	    "optimizer.name AdamW" },
	{ VP_TRAINER_TORCHTITAN, VP_O_OPTIMIZER_IMPL, NULL, titan_impl,
	    "optimizer.implementation fused" },
	{ VP_TRAINER_TORCHTITAN, VP_O_RECOMPUTE, "full", NULL,
	    "activation_checkpoint.mode selective, selective_ac_option 2: "
	    "every 2nd block fully checkpointed" },
	{ VP_TRAINER_TORCHTITAN, VP_O_RECOMPUTE_STRIDE, NULL, titan_stride,
	    "selective_ac_option 2" },
	{ VP_TRAINER_TORCHTITAN, VP_O_COMPILE_WRAPS_CKPT, NULL,
	    titan_compile_ac, "parallelize_llama: apply_ac, then "
	    "apply_compile (each checkpoint-wrapped block compiled)" },
	{ VP_TRAINER_TORCHTITAN, VP_O_FSDP_UNITS, NULL, titan_units,
	    "apply_fsdp: tok_embeddings and [norm, output] units of their "
	    "own" },
};

/* What each library is, and what it does that vramplan cannot say. */
static const struct {
	const char *what;
	const char *lack[VP_TRAINER_MAXLACK];
} libs[VP_TRAINER_COUNT] = {
	[VP_TRAINER_PLAIN] = { "plain PyTorch (vramplan's defaults)", { 0 } },
	[VP_TRAINER_HF] = { "Hugging Face Trainer + accelerate + PEFT", {
	    "not modelled: gradient_checkpointing_enable's "
	    "enable_input_require_grads (the embeddings' output requires grad "
	    "under LoRA)" } },
	[VP_TRAINER_TORCHTUNE] = { "torchtune recipes (0.4 to 0.6)", {
	    "left to the options: the optimizer, optimizer_in_bwd, activation "
	    "checkpointing and offloading, which differ per config",
	    "not modelled: fp16 adapters (--lora-dtype is fp32 or bf16)" } },
	[VP_TRAINER_TORCHTITAN] = { "torchtitan (JobConfig defaults)", {
	    "not modelled: FSDP2's MixedPrecisionPolicy runs every op in "
	    "bf16; --precision bf16-mixed has the same fp32 parameters, "
	    "gradients and states but follows autocast for the activations "
	    "(fp32 norms and residual stream), which it overstates",
	    "not modelled: torchtitan's own Llama code (no transformers "
	    "release): --transformers stays at its default" } },
};

/* GPUs in the job as far as the options say: --gpus NxCARD, else the
 * data-parallel degree. */
static unsigned
job_gpus(const struct vp_optset *o)
{
	if (o->has[VP_O_GPUS] && o->val[VP_O_GPUS].s != NULL) {
		unsigned long n = strtoul(o->val[VP_O_GPUS].s, NULL, 10);

		return n > 0 && n < 1u << 30 ? (unsigned)n : 1;
	}
	if (o->has[VP_O_DP] && o->val[VP_O_DP].u > 1)
		return (unsigned)(o->val[VP_O_DP].u > 1u << 30 ? 1u << 30 :
		    o->val[VP_O_DP].u);
	return 1;
}

int
vp_trainer_apply(struct vp_optset *o, const struct vp_model *m,
    struct vp_trainer_applied *a, struct vp_buf *err)
{
	struct tctx c = { 0 };
	size_t i;
	unsigned k;

	memset(a, 0, sizeof *a);
	a->trainer = o->has[VP_O_TRAINER] ?
	    (enum vp_trainer)o->val[VP_O_TRAINER].i : VP_TRAINER_PLAIN;
	a->what = libs[a->trainer].what;
	for (k = 0; k < VP_TRAINER_MAXLACK && libs[a->trainer].lack[k]; k++)
		a->lack[a->nlack++] = libs[a->trainer].lack[k];
	c.o = o;
	c.m = m;
	memcpy(c.user, o->has, sizeof c.user);
	c.world = job_gpus(o);
	c.sharded = (o->has[VP_O_FSDP] &&
	    (o->val[VP_O_FSDP].i == VP_FSDP_FULL ||
	    o->val[VP_O_FSDP].i == VP_FSDP_HYBRID)) ||
	    (o->has[VP_O_ZERO] && o->val[VP_O_ZERO].u >= 3);
	c.transformers = o->has[VP_O_TRANSFORMERS] ?
	    (unsigned)o->val[VP_O_TRANSFORMERS].u : VP_TRANSFORMERS_CURRENT;
	c.torch = o->has[VP_O_TORCH] ? (unsigned)o->val[VP_O_TORCH].u :
	    VP_TORCH_CURRENT;
	for (i = 0; i < VP_NELEM(rows); i++) {
		const struct row *r = &rows[i];
		const char *v;
		union vp_optval val;

		if (r->t != a->trainer)
			continue;
		v = r->fixed != NULL ? r->fixed : r->fn(&c);
		if (v == NULL) {
			if (r->id == VP_O_LOSS && !o->has[VP_O_LOSS] &&
			    a->nlack < VP_TRAINER_MAXLACK)
				a->lack[a->nlack++] = "not set: --loss "
				    "chunked-output (CEWithChunkedOutputLoss), "
				    "modelled for a decoder's lm_head without "
				    "autocast or --tp";
			continue;
		}
		if (o->has[r->id]) {
			if (a->ngiven < VP_TRAINER_MAXROWS) {
				a->given[a->ngiven].id = r->id;
				a->given[a->ngiven].value = v;
				a->given[a->ngiven++].why = r->why;
			}
			continue;
		}
		if (vp_option_parse(r->id, v, &val, err) != 0)
			return -1;
		vp_optset_set(o, r->id, &val);
		if (a->nset < VP_TRAINER_MAXROWS) {
			a->set[a->nset].id = r->id;
			a->set[a->nset].value = v;
			a->set[a->nset++].why = r->why;
		}
	}
	return 0;
}
