/*
 * rules.c — the rule book (see rules.h).  Each rule is one function over
 * (plan, model, world); the table below lists them in the order their
 * messages appear.  A rule returns 0 to accept and -1 to refuse, adding
 * its message only when d is not NULL.
 */
#include "rules.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "finetune.h"
#include "gpu.h"
#include "graph.h"
#include "lgraph.h"
#include "load.h"
#include "util.h"

struct rule {
	int (*fn)(const struct vp_plan *, const struct vp_model *, unsigned,
	    struct vp_diags *);
	unsigned reads;		/* VP_RK_*: the planner's knobs it reads */
	bool after_search;	/* on a knob the planner settles: checked on
				 * the finished plan, not before the search */
};

static int refuse(struct vp_diags *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Add one error (when d is given) and refuse. */
static int
refuse(struct vp_diags *d, const char *fmt, ...)
{
	struct vp_buf b;
	va_list ap;

	if (d == NULL)
		return -1;
	vp_buf_init(&b);
	va_start(ap, fmt);
	vp_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR, "%s", b.s);
	vp_buf_free(&b);
	return -1;
}

/* "--tp 5 does not divide the attention heads (12); nearest valid: ..." */
static int
bad_divisor(struct vp_diags *d, const char *flag, uint64_t v,
    const char *what, uint64_t n)
{
	uint64_t lo, hi;

	if (d == NULL)
		return -1;
	vp_nearest_divisors(n, v, &lo, &hi);
	if (hi && hi != lo)
		return refuse(d, "%s %llu does not divide %s (%llu); nearest "
		    "valid: %llu or %llu", flag, (unsigned long long)v, what,
		    (unsigned long long)n, (unsigned long long)lo,
		    (unsigned long long)hi);
	return refuse(d, "%s %llu does not divide %s (%llu); nearest valid: "
	    "%llu", flag, (unsigned long long)v, what, (unsigned long long)n,
	    (unsigned long long)lo);
}

/* Megatron splits heads, MLP columns and kv heads (or replicates kv heads
 * below tp) across the tensor-parallel group. */
static int
tp_heads(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)world;
	if (m->heads % p->tp != 0)
		return bad_divisor(d, "--tp", p->tp, "the attention heads",
		    m->heads);
	if (m->kv_heads % p->tp != 0 && p->tp % m->kv_heads != 0)
		return bad_divisor(d, "--tp", p->tp, "the key/value heads",
		    m->kv_heads);
	return 0;
}

static int
tp_ffn(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)world;
	if (m->ffn % p->tp != 0)
		return bad_divisor(d, "--tp", p->tp, "the MLP size", m->ffn);
	return 0;
}

static int
pp_layers(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)world;
	if (p->pp > m->layers)
		return refuse(d, "--pp %u is deeper than the model's %llu "
		    "layers; at most %llu", p->pp,
		    (unsigned long long)m->layers,
		    (unsigned long long)m->layers);
	return 0;
}

/* torchtitan checkpoints the blocks whose count is a multiple of the
 * stride: one longer than the model would checkpoint none. */
static int
recompute_stride(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (p->recompute_stride > m->layers)
		return refuse(d, "--recompute-stride %u is longer than the "
		    "model's %llu layers; at most %llu", p->recompute_stride,
		    (unsigned long long)m->layers,
		    (unsigned long long)m->layers);
	return 0;
}

static int
seq_learned(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (m->pos == VP_POS_LEARNED && m->max_seq && p->seq > m->max_seq)
		return refuse(d, "--seq %llu is longer than the %llu positions "
		    "the model has learned", (unsigned long long)p->seq,
		    (unsigned long long)m->max_seq);
	return 0;
}

static int
seq_causal(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)world;
	if (p->seq < 2 && m->arch == VP_ARCH_DECODER)
		return refuse(d, "--seq must be at least 2 for a causal "
		    "language model (the loss shifts by one token)");
	return 0;
}

/* Gemma-2's soft-capped scores: transformers 5's Gemma2ForCausalLM
 * refuses attn_implementation="sdpa" (SDPA has no soft-capping); eager
 * attention (the default for such a model, vp_plan_defaults) and
 * flash-attn (its softcap argument) have it. */
static int
softcap_attention(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (m->attn_softcap && p->attention == VP_ATTN_SDPA)
		return refuse(d, "%s soft-caps its attention scores, which "
		    "--attention sdpa cannot (transformers refuses sdpa for "
		    "Gemma-2); use --attention eager, or flash (flash-attn's "
		    "softcap)", m->name);
	return 0;
}

/* Load-balanced ring attention (Megatron's CP) gives each rank two
 * chunks of seq / (2 cp) tokens. */
static int
cp_attention(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->cp <= 1)
		return 0;
	if (p->attention == VP_ATTN_EAGER)
		return refuse(d, "--cp %u needs an attention that splits the "
		    "sequence (--attention sdpa or flash); eager attention "
		    "materialises the whole score matrix", p->cp);
	if (p->seq % (2 * (uint64_t)p->cp) != 0)
		return refuse(d, "--seq %llu must be a multiple of 2 x --cp "
		    "(%llu) for load-balanced context parallelism",
		    (unsigned long long)p->seq, 2 * (unsigned long long)p->cp);
	return 0;
}

static int
ep_experts(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)world;
	if (p->ep <= 1)
		return 0;
	if (!m->has_moe)
		return refuse(d, "--ep %u needs a mixture-of-experts model; "
		    "'%s' has no experts", p->ep, m->name);
	if (m->moe.experts % p->ep != 0)
		return bad_divisor(d, "--ep", p->ep, "the experts",
		    m->moe.experts);
	return 0;
}

/* Megatron's interleaved schedule: layers / (pp vpp) blocks per chunk. */
static int
vpp_chunks(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)world;
	if (p->vpp <= 1)
		return 0;
	if (p->pp == 1)
		return refuse(d, "--vpp %u needs pipeline parallelism (--pp 2 "
		    "or more)", p->vpp);
	if (m->layers % ((uint64_t)p->pp * p->vpp) != 0)
		return bad_divisor(d, "--pp x --vpp", (uint64_t)p->pp * p->vpp,
		    "the layers", m->layers);
	return 0;
}

static int
sp_needs_tp(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->sp && p->tp == 1)
		return refuse(d, "--sp shards along the tensor-parallel group; "
		    "it needs --tp 2 or more");
	return 0;
}

static int
zero_or_fsdp(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->zero > 0 && p->fsdp != VP_FSDP_NONE)
		return refuse(d, "--zero and --fsdp are two ways to shard; give "
		    "one");
	return 0;
}

/*
 * FSDP1 flattens a unit's parameters into one FlatParameter; without
 * use_orig_params it must have one requires_grad (_flat_param.py,
 * _init_flat_param_and_metadata: "Must flatten tensors with uniform
 * requires_grad when use_orig_params=False"), so LoRA adapters cannot
 * share their block's unit.
 */
static int
fsdp1_lora_unit(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->fsdp != VP_FSDP_NONE && p->lora_rank > 0 &&
	    vp_plan_framework(p) == VP_FW_FSDP1 &&
	    p->fsdp_orig_params == VP_NO &&
	    p->fsdp_lora_wrap == VP_LORAWRAP_BLOCK)
		return refuse(d, "FSDP1 without use_orig_params cannot put "
		    "frozen weights and trainable LoRA adapters in one unit; "
		    "give --fsdp-orig-params yes or --fsdp-lora-wrap peft");
	return 0;
}

/* TP all-reduces every block twice each way: NVLink only. */
static int
tp_in_node(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->gpus_per_node && p->tp > p->gpus_per_node)
		return refuse(d, "--tp %u spans nodes of %u GPUs; tensor "
		    "parallelism stays inside a node", p->tp, p->gpus_per_node);
	return 0;
}

static int
lora_targets(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	unsigned avail, bad, i, j;
	int rc = 0;

	(void)world;
	if (p->lora_rank == 0)
		return 0;
	avail = vp_lora_available(m);
	bad = p->lora_targets & ~avail;
	for (i = 0; i < VP_LORA_TARGET_COUNT; i++) {
		struct vp_buf names;

		if (!(bad & (1u << i)))
			continue;
		if (d == NULL)
			return -1;
		vp_buf_init(&names);
		for (j = 0; j < VP_LORA_TARGET_COUNT; j++)
			if (avail & (1u << j))
				vp_buf_printf(&names, "%s%s", names.len ?
				    ", " : "", vp_lora_target_names[j]);
		rc = refuse(d, "--lora-targets: '%s' has no '%s' projection; "
		    "its targets are: %s", m->name, vp_lora_target_names[i],
		    names.s);
		vp_buf_free(&names);
	}
	return rc;
}

/* A rank past the smaller side of a matrix (on this rank: TP splits it)
 * adds nothing. */
static int
lora_rank(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	struct vp_matrix mx[VP_MAX_MATRICES];
	size_t n, k;
	int rc = 0;

	(void)world;
	if (p->lora_rank == 0)
		return 0;
	n = vp_model_matrices(m, p, 1, mx);
	for (k = 0; k < n; k++) {
		uint64_t side = mx[k].rows < mx[k].cols ? mx[k].rows :
		    mx[k].cols;

		if (!(mx[k].lora_bits & p->lora_targets) ||
		    p->lora_rank <= side)
			continue;
		if (d == NULL)
			return -1;
		rc = refuse(d, "--lora %u is larger than the '%s' matrix "
		    "(%llu x %llu); at most %llu", p->lora_rank, mx[k].name,
		    (unsigned long long)mx[k].rows,
		    (unsigned long long)mx[k].cols, (unsigned long long)side);
	}
	return rc;
}

/*
 * --quant-lib torchao is torchtune's QLoRA: torchao's NF4Tensor (to_nf4,
 * run by linear_nf4; graph.c, linear_w), on the CPU as on CUDA.  It has
 * NF4 only; to_nf4 asserts that a matrix splits into 64-element blocks
 * whose scalers split into groups of 256 (NF4Tensor.from_tensor and
 * double_quantize_scalers, torchao 0.18.0); torchtune's builders replace
 * Llama-style projections only (lora_llama2/3, FrozenNF4Linear), and it
 * was measured on those.
 */
static int
quant_torchao(const struct vp_plan *p, const struct vp_model *m,
    struct vp_diags *d)
{
	struct vp_matrix mx[VP_MAX_MATRICES];
	size_t n, k;
	int rc = 0;

	if (p->quant != VP_QUANT_NF4)
		return refuse(d, "--quant-lib torchao has NF4 only (its "
		    "NF4Tensor), not --quant %s", vp_quant_names[p->quant]);
	if (vp_model_family(m) != VP_FAMILY_LLAMA ||
	    m->norm != VP_NORM_RMSNORM || m->post_norms || m->has_moe)
		return refuse(d, "--quant-lib torchao is modelled for "
		    "Llama-style models (torchtune's lora_llama builders), the "
		    "ones measured; %s is not one", m->name);
	if (p->precision != VP_PREC_FP32 && p->precision != VP_PREC_BF16 &&
	    p->precision != VP_PREC_FP16)
		return refuse(d, "--quant-lib torchao is modelled for a model "
		    "trained in its dtype (torchtune: fp32, bf16 or fp16), not "
		    "--precision %s", vp_prec_names[p->precision]);
	n = vp_model_matrices(m, p, 1, mx);
	for (k = 0; k < n; k++) {
		if (!mx[k].quantizable ||
		    mx[k].rows * mx[k].cols % (64 * 256) == 0)
			continue;
		if (d == NULL)
			return -1;
		rc = refuse(d, "torchao's to_nf4 cannot quantize the '%s' "
		    "matrix (%llu x %llu): its elements must be a multiple of "
		    "64 x 256 (blocks of 64, scalers in groups of 256)",
		    mx[k].name, (unsigned long long)mx[k].rows,
		    (unsigned long long)mx[k].cols);
	}
	return rc;
}

static int
quant(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	int rc = 0;

	(void)world;
	if (p->quant == VP_QUANT_NONE)
		return 0;
	if (p->lora_rank == 0)
		rc = refuse(d, "--quant %s freezes the base weights; train "
		    "adapters with --lora RANK (QLoRA)",
		    vp_quant_names[p->quant]);
	if (rc && d == NULL)
		return rc;
	if (p->quant_lib == VP_QLIB_TORCHAO)
		return rc ? rc : quant_torchao(p, m, d);
	if (p->device != VP_DEVICE_CUDA)
		rc = refuse(d, "--quant %s needs CUDA: bitsandbytes has no CPU "
		    "kernels for training", vp_quant_names[p->quant]);
	if (rc && d == NULL)
		return rc;
	if (m->impl == VP_IMPL_TORCH_NN)
		rc = refuse(d, "--quant cannot quantize a "
		    "torch.nn.MultiheadAttention model: its packed in_proj is "
		    "not an nn.Linear that bitsandbytes replaces");
	return rc;
}

/* Liger's fused loss reads the head's weight itself (graph.c,
 * fused_linear_ce): an adapter on the head would never run. */
static int
lora_head_loss(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->lora_rank == 0 || !(p->lora_targets & (1u << VP_LORA_HEAD)) ||
	    p->loss != VP_LOSS_CHUNKED)
		return 0;
	return refuse(d, "--lora-targets head and --loss chunked do not "
	    "combine: the fused loss multiplies by the head's weight itself, "
	    "so no adapter on the head runs; drop one of them");
}

/*
 * torchtune's chunked output (graph.c, chunked_output_ce) is modelled as
 * torchtune runs it: a decoder's lm_head in the model's own dtype (no
 * autocast: torchtune casts the model), whole on each rank.
 */
static int
chunked_output_loss(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	int rc = 0;

	(void)world;
	if (p->loss != VP_LOSS_CHUNKED_OUTPUT)
		return 0;
	if (vp_model_traits(m).head != VP_HEAD_LM)
		rc = refuse(d, "--loss chunked-output is torchtune's loss for "
		    "a decoder's lm_head; this model's head is not one");
	if (p->precision != VP_PREC_FP32 && p->precision != VP_PREC_BF16 &&
	    p->precision != VP_PREC_FP16)
		rc = refuse(d, "--loss chunked-output with --precision %s is "
		    "not modelled: torchtune trains in the model's dtype (fp32, "
		    "bf16 or fp16), without autocast or master weights",
		    vp_prec_names[p->precision]);
	if (p->tp > 1)
		rc = refuse(d, "--loss chunked-output with --tp %u is not "
		    "modelled: the loss gathers each chunk's vocabulary-sharded "
		    "logits (DTensor.full_tensor)", p->tp);
	if (p->lora_rank > 0 && (p->lora_targets & (1u << VP_LORA_HEAD)))
		rc = refuse(d, "--loss chunked-output with an adapter on the "
		    "head (--lora-targets head) is not modelled");
	return rc;
}

static int
fp8_quant(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->precision == VP_PREC_FP8 && p->quant != VP_QUANT_NONE)
		return refuse(d, "--precision fp8 and --quant %s do not "
		    "combine: Transformer Engine does not run bitsandbytes "
		    "layers", vp_quant_names[p->quant]);
	return 0;
}

static int
fp8_cuda(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->precision == VP_PREC_FP8 && p->device != VP_DEVICE_CUDA)
		return refuse(d, "--precision fp8 needs CUDA (Transformer "
		    "Engine)");
	return 0;
}

/*
 * DeepSpeed's PipelineEngine refuses ZeRO stages 2 and 3
 * (deepspeed/runtime/pipe/engine.py, PipelineEngine.__init__: "ZeRO-2 and
 * ZeRO-3 are incompatible with pipeline parallelism"): the pipeline
 * schedules its own gradient all-reduces, which partitioned gradients
 * cannot join.
 */
static int
zero_pp(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->pp > 1 && p->zero >= 2 &&
	    vp_plan_framework(p) == VP_FW_DEEPSPEED)
		return refuse(d, "--zero %u does not combine with --pp %u: "
		    "DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3 "
		    "(it reduces the gradients itself); use --zero 1 or no "
		    "pipeline", p->zero, p->pp);
	return 0;
}

/*
 * QLoRA's 4- and 8-bit base weights are bitsandbytes Params4bit/Int8Params
 * packed whole per layer; no training stack shards them along a tensor-
 * parallel split (Megatron has no bitsandbytes layers, transformers'
 * tp_plan and torchtune's TP do not take quantized weights).
 */
static int
quant_tp(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->quant != VP_QUANT_NONE && p->tp > 1)
		return refuse(d, "--quant %s does not combine with --tp %u: "
		    "bitsandbytes' packed base weights cannot be split by "
		    "tensor parallelism; shard them with --fsdp instead",
		    vp_quant_names[p->quant], p->tp);
	return 0;
}

/*
 * --recompute op counts aten.mm calls (graph.c, op_policy).  Experts are
 * a loop of per-expert matmuls over a data-dependent routing (transformers
 * 4.x) or grouped_mm (5.x, torchtitan's MoE), whose count and save list
 * torchtitan's llama3 policy does not describe, and bitsandbytes'
 * matmuls are not aten.mm on the weight: neither is modelled.
 */
static int
recompute_op(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (p->recompute != VP_RECOMP_OP)
		return 0;
	if (m->has_moe)
		return refuse(d, "--recompute op is not modelled for a "
		    "mixture-of-experts model: the experts' matmuls are not "
		    "the dense aten.mm calls torchtitan's op policy counts; "
		    "use --recompute full or selective");
	/* Qwen3's q/k norms sit between the projections and RoPE, where
	 * the op policy's saved set was measured without them. */
	if (vp_model_traits(m).qk_norm)
		return refuse(d, "--recompute op is not modelled for a model "
		    "with q/k norms (family %s): not measured; use "
		    "--recompute full or selective",
		    vp_family_names[vp_model_family(m)]);
	if (p->quant != VP_QUANT_NONE)
		return refuse(d, "--recompute op is not modelled with --quant "
		    "%s: bitsandbytes' matmuls are not the aten.mm calls "
		    "torchtitan's op policy counts; use --recompute full",
		    vp_quant_names[p->quant]);
	return 0;
}

/*
 * --float8: torchao's float8 linears as torchtitan converts them.  What
 * is modelled is full training of the block linears on CUDA without
 * tensor parallelism; the rest is refused with its reason.
 */
static int
float8(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->float8_all_gather && p->float8 != VP_FLOAT8_TENSORWISE)
		return refuse(d, "--float8-all-gather needs --float8 "
		    "tensorwise: torchao casts the weights for FSDP's "
		    "all-gather with one scale per tensor");
	if (p->float8 == VP_FLOAT8_NONE)
		return 0;
	if (p->precision == VP_PREC_FP8)
		return refuse(d, "--float8 %s and --precision fp8 do not "
		    "combine: torchao's float8 linears and Transformer "
		    "Engine's are two ways to the same matmuls; choose one",
		    vp_float8_names[p->float8]);
	if (p->device != VP_DEVICE_CUDA)
		return refuse(d, "--float8 %s is modelled on CUDA only: the "
		    "CPU's _scaled_mm keeps fp32 intermediates CUDA's does "
		    "not", vp_float8_names[p->float8]);
	if (p->lora_rank > 0 || p->quant != VP_QUANT_NONE)
		return refuse(d, "--float8 %s is not modelled with --lora or "
		    "--quant: torchtitan's float8 converter trains the full "
		    "weights", vp_float8_names[p->float8]);
	return 0;
}

/* torchao's float8 tensor-parallel styles (Float8ColwiseParallel ...)
 * all-gather fp8 activations: not modelled. */
static int
float8_tp(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->float8 != VP_FLOAT8_NONE && p->tp > 1)
		return refuse(d, "--float8 %s is not modelled with --tp %u: "
		    "torchao's float8 tensor-parallel styles all-gather fp8 "
		    "inputs", vp_float8_names[p->float8], p->tp);
	return 0;
}

/*
 * torchtitan's async TP (enable_async_tensor_parallel) fuses SP's
 * all-gathers and reduce-scatters with the matmuls next to them, so it
 * needs TP with sequence parallelism.  torchtitan v0.2.2 also refuses it
 * without torch.compile (tensor_parallel.py, maybe_enable_async_tp:
 * "Async TP requires 'model' in --compile.components"): the fusion is
 * Inductor's micro-pipeline TP pass, so eager has nothing to fuse.
 */
static int
async_tp(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->async_tp && (p->tp < 2 || !p->sp))
		return refuse(d, "--async-tp needs --tp 2 or more with --sp: "
		    "it overlaps sequence parallelism's all-gathers and "
		    "reduce-scatters with the matmuls");
	if (p->async_tp && !p->compile)
		return refuse(d, "--async-tp needs --compile: torchtitan "
		    "refuses async TP without torch.compile of the model "
		    "(the fusion is Inductor's micro-pipeline TP pass)");
	return 0;
}

/* FSDP2's fp8 all-gather needs FSDP sharding the weights. */
static int
float8_fsdp(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->float8_all_gather && (vp_plan_framework(p) != VP_FW_FSDP2 ||
	    !(p->fsdp == VP_FSDP_FULL || p->fsdp == VP_FSDP_HYBRID)))
		return refuse(d, "--float8-all-gather needs --framework fsdp2 "
		    "with --fsdp full or hybrid: only FSDP2 all-gathers "
		    "torchao's float8 weights");
	return 0;
}

static int
nvme_needs_offload(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->offload_nvme && p->offload == VP_OFFLOAD_NONE)
		return refuse(d, "--offload-nvme says where to offload; choose "
		    "what with --offload optimizer|params|optimizer+params");
	return 0;
}

/*
 * --activation-offload is torchtune's OffloadActivations under
 * --recompute full or op (mem.c, ckin_pack): the checkpoints' inputs go
 * to the host.  What it does beyond that is not modelled: blocks outside
 * the checkpoints have every save packed (the stash keeps the last five
 * on the GPU, each save comes back as its own copy, per autograd node),
 * and torchtune has no pipeline schedule.  Without checkpointing the
 * block-at-a-time model (offload_block) was measured against both
 * libraries that offload every save (calib/harness.py, PyTorch 2.13 CPU,
 * llama-8l-deep fp32 SGD b4 s256): OffloadActivations 21,017,096 B,
 * save_on_cpu 19,431,944 B, the block model 26,173,440 B (+24.5% and
 * +34.7%): refused until the per-save timeline is modelled.  With a
 * stride, no library's configuration exists: torchtune's recipes raise
 * "enable_activation_offloading should only be True when
 * enable_activation_checkpointing is True", and apply their every-N-th
 * layer checkpointing (ac_mode selective, ac_option N) only when
 * enable_activation_checkpointing is False.
 */
static int
act_offload(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (!p->activation_offload || (p->recompute != VP_RECOMP_FULL &&
	    p->recompute != VP_RECOMP_OP))
		return 0;
	if (p->pp > 1)
		return refuse(d, "--activation-offload under --recompute full "
		    "or op (torchtune's OffloadActivations) is not modelled "
		    "with a pipeline (--pp > 1): the micro-batches in flight "
		    "share its stash");
	if (p->recompute_stride > 1)
		return refuse(d, "--activation-offload with --recompute-stride "
		    "is not modelled: no library runs it (torchtune's recipes "
		    "offload only under enable_activation_checkpointing, and "
		    "checkpoint every N-th layer only without it), and "
		    "OffloadActivations would pack every save of the blocks "
		    "outside the checkpoints");
	if (vp_plan_compiled_checkpoint(p, 1))
		return refuse(d, "--activation-offload with the checkpoint "
		    "inside the compiled block (--compile with --recompute "
		    "op, or --compile-wraps-checkpoint) is not modelled: "
		    "torchtune compiles inside its checkpoints, and with the "
		    "checkpoint traced into the graph OffloadActivations would "
		    "pack the compiled function's saves");
	return 0;
}

/* The recompute half of act_offload: the planner settles --recompute,
 * so this waits for a whole plan (session.c lets the search pick a
 * checkpointing one). */
static int
act_offload_ckpt(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (!p->activation_offload || p->recompute == VP_RECOMP_FULL ||
	    p->recompute == VP_RECOMP_OP)
		return 0;
	return refuse(d, "--activation-offload without --recompute full or "
	    "op is not modelled: without checkpointing every saved tensor is "
	    "packed and each comes back on its own, per autograd node "
	    "(torchtune's OffloadActivations, torch.autograd.graph."
	    "save_on_cpu), which moving whole blocks overstates by 25-35%% "
	    "(measured); torchtune's recipes refuse offloading without "
	    "activation checkpointing");
}

/* GPUs per replica (tp x pp x cp), in 64 bits: degrees of a few
 * thousand each would wrap 32. */
static uint64_t
replica_gpus(const struct vp_plan *p)
{
	return (uint64_t)p->tp * p->pp * p->cp;
}

static int
world_split(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	uint64_t mp = replica_gpus(p);

	(void)m;
	if (world == 0)
		return 0;
	if (world % mp != 0)
		return refuse(d, "%u GPUs cannot be split into --tp %u x --pp "
		    "%u x --cp %u (%llu GPUs per replica)", world, p->tp, p->pp,
		    p->cp, (unsigned long long)mp);
	/* The job's size may come from --gpus, a plan file's gpus or the
	 * TUI: the message names none of them. */
	if (p->dp && (uint64_t)p->dp * mp != world)
		return refuse(d, "--dp %u x --tp %u x --pp %u x --cp %u is %llu "
		    "GPUs, but the job has %u", p->dp, p->tp, p->pp, p->cp,
		    (unsigned long long)((uint64_t)p->dp * mp), world);
	return 0;
}

/* Megatron carves the expert-parallel group out of the data-parallel
 * one.  Only once world_split accepts (it speaks first otherwise). */
static int
ep_in_dp(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	uint64_t mp = replica_gpus(p);

	(void)m;
	if (world == 0 || p->ep <= 1 || world % mp != 0 ||
	    (p->dp && (uint64_t)p->dp * mp != world))
		return 0;
	if ((world / mp) % p->ep != 0)
		return refuse(d, "--ep %u must divide the data-parallel group "
		    "(%llu GPUs)", p->ep, (unsigned long long)(world / mp));
	return 0;
}

/* ZeRO-Offload and FSDP's CPU offload move the shards a rank owns. */
static int
offload_needs_sharding(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)m;
	(void)world;
	if (p->offload != VP_OFFLOAD_NONE && p->zero == 0 &&
	    p->fsdp == VP_FSDP_NONE)
		return refuse(d, "--offload needs sharding: --zero 1, 2 or 3 "
		    "(ZeRO-Offload) or --fsdp (FSDP CPU offload)");
	return 0;
}

/*
 * --optimizer-in-backward steps each parameter in its post-accumulate-grad
 * hook (torchtune's register_optim_in_bwd_hooks), so the gradient of a
 * step must be complete when its first piece arrives.  torchtune's
 * recipes refuse gradient accumulation with it; the hooks need PyTorch
 * 2.1 (Tensor.register_post_accumulate_grad_hook); FSDP2 calls them on
 * the sharded parameter after its reduce-scatter (foreach_reduce) and
 * FSDP1 runs its in-backward optimizers there too
 * (_post_backward_use_sharded_grad_views), so sharding with FSDP works.
 * What never calls them after the reduction is refused: DeepSpeed's ZeRO
 * optimizer and Megatron's step whole gradient buffers after backward,
 * DDP's reducer all-reduces buckets after the hooks have fired, and a
 * pipeline's micro-batches accumulate.
 */
static int
optim_in_bwd(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	uint64_t dp = p->dp ? p->dp : 1;

	(void)m;
	if (!p->optim_in_bwd)
		return 0;
	if (world != 0 && world % replica_gpus(p) == 0)
		dp = world / replica_gpus(p);
	if (p->grad_accum > 1)
		return refuse(d, "--optimizer-in-backward steps as each "
		    "gradient arrives, so --grad-accum %llu cannot add "
		    "micro-batches first (torchtune refuses it); use "
		    "--grad-accum 1", (unsigned long long)p->grad_accum);
	if (p->torch_version < 201)
		return refuse(d, "--optimizer-in-backward needs PyTorch 2.1 "
		    "(register_post_accumulate_grad_hook); --torch is %u.%u",
		    p->torch_version / 100, p->torch_version % 100);
	if (p->zero_grad == VP_ZEROGRAD_ZEROS)
		return refuse(d, "--optimizer-in-backward frees each gradient "
		    "in its hook (zero_grad with set_to_none); --zero-grad "
		    "zeros does not combine with it");
	if (vp_fw_info[vp_plan_framework(p)].main_grad)
		return refuse(d, "--optimizer-in-backward does not run under "
		    "Megatron, whose optimizer steps its gradient buffer "
		    "after backward");
	if (p->fsdp == VP_FSDP_NONE && p->zero >= 1)
		return refuse(d, "--optimizer-in-backward does not run under "
		    "DeepSpeed ZeRO, whose optimizer steps its partitions "
		    "after backward; shard with --fsdp instead");
	if (p->pp > 1)
		return refuse(d, "--optimizer-in-backward does not combine "
		    "with --pp %u: the pipeline's micro-batches accumulate "
		    "gradients", p->pp);
	if (p->fsdp == VP_FSDP_NONE && dp > 1)
		return refuse(d, "--optimizer-in-backward with %llu data-"
		    "parallel ranks needs --fsdp: DDP all-reduces after the "
		    "hooks have stepped (torchtune shards with FSDP2)",
		    (unsigned long long)dp);
	return 0;
}

/*
 * --load replays how one recipe builds the model (load.c); it refuses
 * what that recipe cannot build.  torchtune-0.1 is the single-device
 * recipes: the distributed ones empty the cache before training, so
 * their readings hold no load (tests/published_gpu.py, MISS_NOTES).
 */
static int
load_path(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	const char *why = vp_load_unsupported(m, p);

	if (why != NULL)
		return refuse(d, "%s", why);
	if (p->load != VP_LOAD_NONE && (world > 1 || p->dp > 1 || p->tp > 1 ||
	    p->pp > 1 || p->cp > 1))
		return refuse(d, "--load %s is torchtune's single-device "
		    "recipes: it needs one GPU (the distributed recipes empty "
		    "the cache before training)", vp_load_names[p->load]);
	return 0;
}

/*
 * --compile and --compile-loss (graph.c, region_begin) rewrite the eager
 * lowering of a block or of the loss by the partitioner's rule, which was checked against PyTorch 2.13's
 * saved graphs for Llama-style blocks with fused attention and no dropout
 * (tests/validate_cpu.py --grid torch2).  What the rule has not been
 * measured on is refused rather than guessed: eager attention (the
 * partitioner may recompute its softmax), dropout (Inductor draws its own
 * random numbers and saves its seeds, not the masks), other block kinds
 * and MoE, bitsandbytes/torchao quantized linears, a compiled loss other
 * than the plain cross-entropy of the logits or torchtune's per-chunk one
 * (--loss chunked-output), and Transformer Engine's
 * fp8, whose kernels Dynamo does not trace as aten ops.
 */
static int
compile_plan(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	const char *opt = p->compile ? "--compile" : "--compile-loss";

	(void)world;
	if (!p->compile && !p->compile_loss)
		return 0;
	if (p->torch_version < 200)
		return refuse(d, "%s needs PyTorch 2.0 (torch.compile); "
		    "--torch is %u.%u", opt, p->torch_version / 100,
		    p->torch_version % 100);
	if (vp_model_family(m) != VP_FAMILY_LLAMA ||
	    m->norm != VP_NORM_RMSNORM || m->post_norms || m->has_moe)
		return refuse(d, "%s is modelled for Llama-style models "
		    "(RMSNorm before attention and MLP, no MoE), the ones "
		    "measured; %s is not one", opt, m->name);
	if (p->compile_loss && p->loss != VP_LOSS_FULL &&
	    p->loss != VP_LOSS_CHUNKED_OUTPUT)
		return refuse(d, "--compile-loss is modelled for --loss full "
		    "(the cross-entropy of the logits) and chunked-output "
		    "(torchtune's per-chunk cross-entropy) only, not --loss %s",
		    vp_loss_names[p->loss]);
	if (!p->compile)
		return 0;
	if (p->attention == VP_ATTN_EAGER)
		return refuse(d, "--compile is modelled with fused attention "
		    "only; use --attention sdpa or flash");
	if (p->recompute == VP_RECOMP_SELECTIVE)
		return refuse(d, "--compile with --recompute selective: "
		    "selective recompute is eager attention's core, which "
		    "--compile's fused attention does not have (nothing would "
		    "be recomputed); torchtitan's selective modes are "
		    "--recompute op and --recompute full --recompute-stride N");
	if (vp_plan_dropout(p, m) > 0)
		return refuse(d, "--compile with dropout is not modelled "
		    "(Inductor draws its own random numbers); use --dropout 0");
	if (p->lora_rank > 0 && p->lora_dropout > 0)
		return refuse(d, "--compile with --lora-dropout is not modelled "
		    "(Inductor draws its own random numbers); use "
		    "--lora-dropout 0");
	if (p->quant != VP_QUANT_NONE && p->quant_lib != VP_QLIB_TORCHAO)
		return refuse(d, "--compile with --quant %s is modelled for "
		    "torchao's NF4 (--quant-lib torchao, torchtune's QLoRA) "
		    "only: bitsandbytes' kernels are not traced",
		    vp_quant_names[p->quant]);
	if (p->precision == VP_PREC_FP8)
		return refuse(d, "--compile with --precision fp8 is not "
		    "modelled: Transformer Engine's layers are not traced");
	return 0;
}

/*
 * Llama 4 (family llama4) is modelled as transformers 5.24 runs it
 * (graph.c, llama4_block), measured on the CPU in tests/validate_hf.py:
 * every expert on every token in two bmm calls over 3D parameters.
 * Llama4PreTrainedModel has no FlashAttention path (_supports_flash_attn
 * is False), PEFT's LoRA and bitsandbytes wrap nn.Linear layers, not the
 * 3D experts, and the split of that code by tensor, context or expert
 * parallelism is not what the lowering describes.
 */
static int
llama4_plan(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (vp_model_family(m) != VP_FAMILY_LLAMA4)
		return 0;
	if (m->impl != VP_IMPL_HF)
		return refuse(d, "family llama4 is modelled as transformers' "
		    "Llama4ForCausalLM only (implementation: hf), not %s",
		    vp_impl_names[m->impl]);
	if (p->attention == VP_ATTN_FLASH)
		return refuse(d, "%s: transformers has no FlashAttention path "
		    "for Llama 4 (_supports_flash_attn is False); use "
		    "--attention sdpa or eager", m->name);
	if (p->tp > 1 || p->cp > 1 || p->ep > 1)
		return refuse(d, "%s: tensor, context and expert parallelism "
		    "are not modelled for Llama 4 (transformers runs every "
		    "expert on every token); use --tp 1 --cp 1 --ep 1 with "
		    "data parallelism and ZeRO or FSDP", m->name);
	if (p->lora_rank > 0 || p->quant != VP_QUANT_NONE)
		return refuse(d, "%s: LoRA and QLoRA are not modelled for "
		    "Llama 4 (PEFT and bitsandbytes wrap nn.Linear layers, "
		    "not its 3D expert parameters; not measured)", m->name);
	if (p->float8 != VP_FLOAT8_NONE || p->precision == VP_PREC_FP8)
		return refuse(d, "%s: float8 training is not modelled for "
		    "Llama 4", m->name);
	if (p->transformers_version < 500)
		return refuse(d, "%s: Llama 4 is modelled as transformers 5's "
		    "class runs it (measured with 5.24), not with "
		    "--transformers %u.%u", m->name,
		    p->transformers_version / 100,
		    p->transformers_version % 100);
	if (p->recompute == VP_RECOMP_SELECTIVE || p->activation_offload)
		return refuse(d, "%s: --recompute selective and activation "
		    "offloading are not modelled for Llama 4 (not measured); "
		    "use --recompute none or full", m->name);
	return 0;
}

/*
 * Models with local (sliding-window) layers, Gemma-3: measured with the
 * real class on the CPU (tests/validate_hf.py) in full training, eager
 * and sdpa, without and with --recompute full.  What was not measured is
 * refused: LoRA and quantized bases (the (1 + weight) norms and the
 * masks were not measured frozen), context parallelism (ring attention's
 * chunks against a window), selective recompute (the attention core with
 * its mask), fp8, and activation offloading.
 */
static int
local_attention(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	const char *what = NULL;

	(void)world;
	if (vp_model_family(m) != VP_FAMILY_GEMMA3 &&
	    vp_model_family(m) != VP_FAMILY_GPT_OSS && m->window == 0)
		return 0;
	/* Llama 4's chunks are local layers too; llama4_plan says what
	 * was measured for it. */
	if (vp_model_family(m) == VP_FAMILY_LLAMA4)
		return 0;
	/* ModernBERT's: modernbert_plan. */
	if (vp_model_family(m) == VP_FAMILY_MODERNBERT)
		return 0;
	/* Measured with transformers 5.24; the 4.x classes (Gemma-3 from
	 * 4.50, gpt-oss from 4.55, whose experts were a Python loop) are
	 * not modelled. */
	if (vp_model_runs_hf(m) && p->transformers_version < 500)
		return refuse(d, "%s (family %s) is modelled as transformers "
		    "5's classes run it (measured with 5.24), not with "
		    "--transformers %u.%u", m->name,
		    vp_family_names[vp_model_family(m)],
		    p->transformers_version / 100,
		    p->transformers_version % 100);
	if (p->lora_rank > 0)
		what = "LoRA (--lora)";
	else if (p->quant != VP_QUANT_NONE)
		what = "a quantized base (--quant)";
	else if (p->cp > 1)
		what = "context parallelism (--cp)";
	else if (p->recompute == VP_RECOMP_SELECTIVE)
		what = "--recompute selective";
	else if (p->precision == VP_PREC_FP8 || p->float8 != VP_FLOAT8_NONE)
		what = "fp8 linears";
	else if (p->activation_offload)
		what = "activation offloading";
	if (what == NULL)
		return 0;
	return refuse(d, "%s with %s is not modelled: a model with "
	    "sliding-window layers (family %s) was measured in full training "
	    "only, without it", what, m->name,
	    vp_family_names[vp_model_family(m)]);
}

/*
 * gpt-oss's sinks: transformers 5.24's GptOssForCausalLM has no sdpa
 * (_supports_sdpa False: sdpa cannot add a sink column), and its flash
 * path is a kernels-hub kernel with sinks (not flash-attn's), not
 * modelled; eager attention is what it runs and what was measured.
 */
static int
sink_attention(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (!vp_model_traits(m).sinks || p->attention == VP_ATTN_EAGER)
		return 0;
	return refuse(d, "%s adds a sink logit to every attention row, which "
	    "--attention %s cannot (transformers refuses sdpa for gpt-oss; "
	    "its flash kernel with sinks is not modelled); use --attention "
	    "eager", m->name, p->attention == VP_ATTN_SDPA ? "sdpa" : "flash");
}

/*
 * A layer-graph model (lgraph.h) is lowered for data parallelism only, in
 * eager PyTorch, fully trained: what its layers do under the other
 * parallelisms, fine-tuning methods, checkpointing and compilation is not
 * modelled, so those plans are refused rather than approximated.  Its
 * resolution must suit its layers.
 */
static int
lgraph_plan(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	const char *what = NULL;

	(void)world;
	if (m->lg == NULL) {
		if (p->image && !m->vis.patch)
			return refuse(d, "--image %llu needs a layer-graph model "
			    "(a model file whose 'layers' is a list of layers); "
			    "'%s' is a transformer", (unsigned long long)p->image,
			    m->name);
		return 0;
	}
	if (p->tp > 1 || p->sp || p->async_tp)
		what = "tensor parallelism (--tp, --sp, --async-tp)";
	else if (p->pp > 1)
		what = "pipeline parallelism (--pp)";
	else if (p->cp > 1)
		what = "context parallelism (--cp)";
	else if (p->ep > 1)
		what = "expert parallelism (--ep)";
	else if (p->lora_rank > 0 || p->quant != VP_QUANT_NONE)
		what = "LoRA and quantized bases (--lora, --quant)";
	else if (p->recompute != VP_RECOMP_NONE)
		what = "activation recomputation (--recompute)";
	else if (p->compile || p->compile_loss)
		what = "torch.compile (--compile, --compile-loss)";
	else if (p->float8 != VP_FLOAT8_NONE || p->precision == VP_PREC_FP8)
		what = "fp8 training (--float8, --precision fp8)";
	else if (p->fsdp != VP_FSDP_NONE || p->zero >= 3)
		what = "parameter sharding (--fsdp, --zero 3; --zero 1 and 2 "
		    "shard states and gradients)";
	else if (p->framework == VP_FW_MEGATRON)
		what = "Megatron (--framework megatron)";
	else if (p->optimizer == VP_OPT_ADAMW_8BIT ||
	    p->optimizer == VP_OPT_PAGED_ADAMW_8BIT ||
	    p->optimizer == VP_OPT_ADAFACTOR)
		what = "shape-aware optimizer states (8-bit Adam, Adafactor)";
	else if (p->offload != VP_OFFLOAD_NONE || p->activation_offload)
		what = "offloading (--offload, --activation-offload)";
	else if (p->optim_in_bwd)
		what = "--optimizer-in-backward";
	else if (p->loss != VP_LOSS_FULL)
		what = "a chunked loss (--loss)";
	else if (p->load != VP_LOAD_NONE)
		what = "the load phase (--load)";
	if (what != NULL)
		return refuse(d, "%s is not modelled for a layer-graph model "
		    "('%s'); it plans data-parallel, fully trained, eager steps",
		    what, m->name);
	if (d == NULL) {
		struct vp_diags q = { NULL, 0, 0 };
		int rc = vp_lgraph_check(m->lg, vp_lgraph_image(m, p), NULL,
		    &q);

		vp_diags_clear(&q);
		return rc;
	}
	return vp_lgraph_check(m->lg, vp_lgraph_image(m, p), NULL, d);
}

/*
 * The families whose rows are transformers 5.24's code (the parallel
 * attention + MLP blocks: Phi, GPT-NeoX, GPT-J, Falcon; and OPT): what was measured
 * against the transformers classes on PyTorch 2.13's CPU
 * (tests/validate_hf.py) is full training through that code, eager or
 * sdpa attention, recompute none or full, the full loss.  Everything
 * else the lowering could say for them was not measured and is refused.
 */
static int
parallel_block(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	const char *fam = vp_family_names[vp_model_family(m)], *what = NULL;

	(void)world;
	if (vp_model_traits(m).block != VP_BLOCK_PARALLEL &&
	    vp_model_family(m) != VP_FAMILY_OPT)
		return 0;
	if (m->impl != VP_IMPL_HF)
		what = "an implementation other than hf";
	else if (p->transformers_version < VP_TRANSFORMERS_CURRENT)
		what = "--transformers before 5.24 (the family's row is "
		    "5.24's code)";
	else if (p->tp > 1)
		what = "--tp";
	else if (p->cp > 1)
		what = "--cp";
	else if (p->attention == VP_ATTN_FLASH)
		what = "--attention flash";
	else if (p->recompute == VP_RECOMP_OP)
		what = "--recompute op";
	else if (p->recompute == VP_RECOMP_SELECTIVE)
		what = "--recompute selective";
	else if (p->compile || p->compile_loss)
		what = "--compile";
	else if (p->lora_rank > 0)
		what = "--lora";
	else if (p->quant != VP_QUANT_NONE)
		what = "--quant";
	else if (p->float8 != VP_FLOAT8_NONE)
		what = "--float8";
	else if (p->precision == VP_PREC_FP8)
		what = "--precision fp8";
	else if (p->loss != VP_LOSS_FULL)
		what = "a --loss other than full";
	else if (p->load != VP_LOAD_NONE)
		what = "--load";
	else if (p->framework == VP_FW_MEGATRON)
		what = "--framework megatron";
	if (what == NULL)
		return 0;
	return refuse(d, "%s is not modelled for family %s (not measured); "
	    "it is modelled for full training through transformers 5.24's "
	    "code with --recompute none or full, --attention eager or sdpa "
	    "and --loss full", what, fam);
}

/*
 * Falcon: what the parallel block rule allows, measured without dropout
 * (its configs have none): dropout_add's mask on the branch sum (and the
 * alibi path's attention dropout) is not lowered.
 */
static int
falcon_plan(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (vp_model_family(m) != VP_FAMILY_FALCON ||
	    vp_plan_dropout(p, m) <= 0)
		return 0;
	return refuse(d, "dropout is not modelled for family falcon "
	    "(hidden_dropout's dropout_add was not measured); use "
	    "--dropout 0");
}

/*
 * Mamba-2 (family mamba2): graph.c's mamba2_block lowers transformers
 * 5.24's torch_forward path (the chunked scan in PyTorch, which runs
 * without the mamba_ssm and causal_conv1d kernels, as on the CPU), as
 * measured on the CPU (tests/validate_hf.py: fp32, bf16, bf16-mixed,
 * recompute none and full).  Nothing split across ranks (the SSM has no
 * TP/CP split here, no pipeline or parameter sharding was measured), no
 * adapters (in_proj and out_proj are no LoRA target), quantization,
 * fp8, compilation, selective or op recompute, activation offload, or
 * other loss, framework or implementation.  On CUDA the plan is
 * accepted with a note: with mamba_ssm installed transformers runs
 * mamba_split_conv1d_scan_combined instead, which keeps far less.
 */
#define SSM_GPU_NOTE "Mamba-2 blocks are lowered as transformers' " \
	"torch_forward path (the chunked scan in PyTorch), what runs when " \
	"mamba_ssm and causal_conv1d are not installed; with them, " \
	"mamba_split_conv1d_scan_combined runs instead and keeps only " \
	"in_proj's output, the scan's output and the norm's rstd per block " \
	"(mamba_ssm/ops/triton/ssd_combined.py, save_for_backward), which " \
	"is not modelled: this estimate is then an upper bound"

/*
 * Jamba's Mamba-1 mixers are lowered as mamba_selective_scan's recurrent
 * loop (graph.c, mamba1_mixer): where mamba_ssm is installed (CUDA),
 * transformers calls its selective_scan_fn instead, whose
 * SelectiveScanFn saves the scan's inputs (u, delta, A, B, C, D, z,
 * delta_bias), the states of its chunks (x: b x inner x chunks x 2
 * state) and its output (mamba_ssm/ops/selective_scan_interface.py),
 * not a b x inner x state state per token nor the b x inner x seq x
 * state discretized A, B and their product: far less.
 */
#define JAMBA_GPU_NOTE "Jamba's Mamba-1 mixers are lowered as " \
	"transformers' mamba_selective_scan recurrent loop in PyTorch, what " \
	"runs when mamba_ssm is not installed (a state of batch x inner x " \
	"state kept per token, the discretized A, B and B x of batch x inner " \
	"x seq x state in fp32); with it, its selective_scan_fn keeps only " \
	"the scan's inputs, the states of its chunks and its output " \
	"(mamba_ssm/ops/selective_scan_interface.py, save_for_backward), " \
	"which is not modelled: this estimate is then an upper bound"

/* Mamba's MambaMixer, where mamba_ssm is installed, runs the whole
 * mixer as its mamba_inner_fn (MambaInnerFn: in_proj's output, the
 * conv's, x_proj's, dt and the scan's chunk states are what it saves). */
#define MAMBA1_GPU_NOTE "The Mamba-1 mixers are lowered as " \
	"transformers' mamba_selective_scan recurrent loop in PyTorch, what " \
	"runs when mamba_ssm is not installed (a state of batch x inner x " \
	"state kept per token, the discretized A, B and B x of batch x inner " \
	"x seq x state in fp32); with it, training runs its fused " \
	"mamba_inner_fn, which keeps only in_proj's, the conv's and " \
	"x_proj's outputs, dt, B, C, the states of the scan's chunks and " \
	"its output " \
	"(mamba_ssm/ops/selective_scan_interface.py, MambaInnerFn), which " \
	"is not modelled: this estimate is then an upper bound"

/* Zamba's mixer calls the same mamba_selective_scan per mamba head. */
#define ZAMBA_GPU_NOTE "Zamba's Mamba-1 mixers are lowered as " \
	"transformers' mamba_selective_scan recurrent loop in PyTorch (one " \
	"per mamba head), what runs when mamba_ssm is not installed (a state " \
	"of batch x head width x state kept per token, the discretized A, B " \
	"and B x of batch x head width x seq x state in fp32); with it, its " \
	"selective_scan_fn keeps only the scan's inputs, the states of its " \
	"chunks and its output " \
	"(mamba_ssm/ops/selective_scan_interface.py, save_for_backward), " \
	"which is not modelled: this estimate is then an upper bound"

static int
ssm_plan(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	const char *what = NULL, *note;
	bool zamba = vp_model_family(m) == VP_FAMILY_ZAMBA;
	size_t i;

	(void)world;
	if (vp_model_traits(m).block != VP_BLOCK_MAMBA2 &&
	    vp_model_traits(m).block != VP_BLOCK_HYBRID &&
	    vp_model_traits(m).block != VP_BLOCK_NEMOTRON_H &&
	    vp_model_traits(m).block != VP_BLOCK_ZAMBA2 &&
	    vp_model_traits(m).block != VP_BLOCK_JAMBA &&
	    vp_model_traits(m).block != VP_BLOCK_MAMBA1)
		return 0;
	if (m->impl != VP_IMPL_HF)
		what = "an implementation other than hf";
	else if (p->transformers_version < VP_TRANSFORMERS_CURRENT)
		what = "--transformers before 5.24 (the family's row is "
		    "5.24's code)";
	else if (p->tp > 1)
		what = "--tp";
	else if (p->pp > 1)
		what = "--pp";
	else if (p->cp > 1)
		what = "--cp";
	else if (p->ep > 1)
		what = "--ep";
	else if (p->zero >= 3 || p->fsdp != VP_FSDP_NONE)
		what = "ZeRO-3 or FSDP";
	else if (p->recompute == VP_RECOMP_OP)
		what = "--recompute op";
	else if (p->recompute == VP_RECOMP_SELECTIVE)
		what = "--recompute selective";
	else if (p->recompute_stride > 1)
		what = "--recompute-stride";
	else if (p->compile || p->compile_loss)
		what = "--compile";
	else if (p->lora_rank > 0)
		what = "--lora";
	else if (p->quant != VP_QUANT_NONE)
		what = "--quant";
	else if (p->float8 != VP_FLOAT8_NONE)
		what = "--float8";
	else if (p->precision == VP_PREC_FP8)
		what = "--precision fp8";
	else if (p->loss != VP_LOSS_FULL)
		what = "a --loss other than full";
	else if (p->activation_offload)
		what = "--activation-offload";
	else if (p->load != VP_LOAD_NONE)
		what = "--load";
	else if (p->framework != VP_FW_TORCH)
		what = "a --framework other than torch";
	else if (p->attention == VP_ATTN_FLASH)
		what = "--attention flash";
	if (what != NULL)
		return refuse(d, "%s is not modelled for family %s (not "
		    "measured); it is modelled for full training through "
		    "transformers 5.24's %s on one rank (data "
		    "parallel with ZeRO 0-2 at most), --recompute none or "
		    "full, --loss full", what,
		    vp_family_names[vp_model_family(m)],
		    vp_model_traits(m).block == VP_BLOCK_JAMBA ||
		    vp_model_traits(m).block == VP_BLOCK_MAMBA1 || zamba ?
		    "PyTorch path without mamba_ssm (mamba_selective_scan's "
		    "loop)" : "torch_forward path");
	if (d == NULL || p->device == VP_DEVICE_CPU)
		return 0;
	note = zamba ? ZAMBA_GPU_NOTE :
	    vp_model_traits(m).block == VP_BLOCK_JAMBA ? JAMBA_GPU_NOTE :
	    vp_model_traits(m).block == VP_BLOCK_MAMBA1 ? MAMBA1_GPU_NOTE :
	    SSM_GPU_NOTE;
	for (i = 0; i < d->n; i++)
		if (strcmp(d->v[i].msg, note) == 0)
			return 0;
	vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_NOTE, "%s",
	    note);
	return 0;
}

/*
 * Zamba2's shared transformer blocks: one weight serves several calls,
 * whose gradients meet in the AccumulateGrad buffer from the last call's
 * backward to the first's (graph.c, zamba2_share), measured on one rank
 * with gradients freed between steps (calib/hf_models.py's zamba2 and
 * zamba2-grad).  What holds or hooks gradients otherwise is not: a .grad
 * that already exists (grad accumulation, zero_grad to zeros: the
 * buffer then lives beside it through the calls), a step per gradient
 * (optimizer in backward), ZeRO's gradient hooks and partitions, and
 * (ssm_plan) TP, PP, FSDP and ZeRO-3.
 */
static int
zamba2_plan(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	const char *what = NULL;

	(void)world;
	if (vp_model_traits(m).block != VP_BLOCK_ZAMBA2)
		return 0;
	if (p->grad_accum > 1)
		what = "--grad-accum above 1";
	else if (vp_plan_zero_grad(p) == VP_ZEROGRAD_ZEROS)
		what = "--zero-grad zeros";
	else if (p->optim_in_bwd)
		what = "--optimizer-in-backward";
	else if (p->zero >= 1)
		what = "--zero";
	if (what != NULL)
		return refuse(d, "%s is not modelled for family %s (not "
		    "measured): its shared transformer blocks' weights get "
		    "one gradient from several calls, measured with the "
		    "gradients made anew each step, one micro-batch, no "
		    "ZeRO", what, vp_family_names[vp_model_family(m)]);
	return 0;
}

/* --target-seq is the decoder length of an encoder-decoder. */
static int
target_seq_encdec(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (p->target_seq && m->arch != VP_ARCH_ENCDEC)
		return refuse(d, "--target-seq is the decoder length of an "
		    "encoder-decoder; %s is a%s %s model: give its length "
		    "with --seq", m->name ? m->name : "this model",
		    m->arch == VP_ARCH_ENCODER ? "n" : "",
		    vp_arch_names[m->arch]);
	return 0;
}

/*
 * What graph.c's lower_encdec lowers, as measured on the CPU
 * (tests/validate_hf.py, T5 v1.0 and v1.1, BART and Whisper under
 * transformers 5.24): eager attention (T5), eager or sdpa (BART, Whisper),
 * fp32 and bf16 precisions (BART, Whisper), recompute none or full, one
 * rank holding the whole model, no adapters, quantization, compilation
 * or fp8.  Anything else is refused rather than lowered as a decoder.
 */
static int
encdec_plan(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	const char *what = NULL, *name = vp_family_names[vp_model_family(m)];

	(void)world;
	if (m->arch != VP_ARCH_ENCDEC)
		return 0;
	/* BART and Whisper: their sdpa path (no mask, or causal) was
	 * measured; flash-attn was not. */
	if (vp_model_family(m) != VP_FAMILY_T5 &&
	    p->attention == VP_ATTN_FLASH)
		return refuse(d, "--attention flash is not modelled for %s "
		    "(flash_attention_2 was not measured); use --attention "
		    "sdpa or eager", name);
	if (vp_model_family(m) != VP_FAMILY_T5 &&
	    (p->precision == VP_PREC_FP16_MIXED ||
	    p->precision == VP_PREC_FP16 ||
	    p->precision == VP_PREC_FP16_MASTER))
		return refuse(d, "--precision %s is not modelled for %s: its "
		    "blocks clamp fp16 hidden states (torch.isfinite, "
		    "torch.clamp), which was not measured; use bf16-mixed, "
		    "bf16 or fp32", vp_prec_names[p->precision], name);
	if (vp_model_family(m) == VP_FAMILY_T5 &&
	    p->attention != VP_ATTN_EAGER)
		return refuse(d, "--attention %s is not modelled for %s: its "
		    "sdpa path passes the learned position bias as a float "
		    "attn_mask that requires grad, which the kernels' saved "
		    "sets were not measured with (and it has no flash "
		    "path); use --attention eager (attn_implementation="
		    "\"eager\")", vp_attn_names[p->attention], name);
	if (p->recompute == VP_RECOMP_SELECTIVE || p->recompute == VP_RECOMP_OP)
		return refuse(d, "--recompute %s is not modelled for %s "
		    "(transformers checkpoints whole blocks); use "
		    "--recompute full or none", vp_recomp_names[p->recompute],
		    name);
	if (p->recompute == VP_RECOMP_FULL && p->recompute_stride != 1)
		what = "--recompute-stride (transformers checkpoints every "
		    "block)";
	else if (p->lora_rank > 0)
		what = "--lora (the adapters of its self- and cross-attention "
		    "and MLP are not lowered)";
	else if (p->quant != VP_QUANT_NONE)
		what = "--quant";
	else if (p->compile || p->compile_loss)
		what = "--compile and --compile-loss";
	else if (p->loss != VP_LOSS_FULL)
		what = "a chunked --loss";
	else if (p->float8 != VP_FLOAT8_NONE || p->precision == VP_PREC_FP8)
		what = "fp8 (--float8, --precision fp8)";
	else if (p->grad_accum > 1)
		what = "--grad-accum above 1 (the shared embedding's three "
		    "gradients were measured on one micro-batch)";
	else if (p->optim_in_bwd)
		what = "--optimizer-in-backward";
	else if (p->activation_offload)
		what = "--activation-offload";
	else if (p->offload != VP_OFFLOAD_NONE)
		what = "--offload";
	else if (p->framework == VP_FW_MEGATRON)
		what = "--framework megatron";
	else if (p->optimizer == VP_OPT_ADAMW_8BIT ||
	    p->optimizer == VP_OPT_PAGED_ADAMW_8BIT ||
	    p->optimizer == VP_OPT_ADAFACTOR)
		what = "an optimizer whose states follow the matrices' shapes";
	else if (p->torch_version < 200 || p->transformers_version < 500)
		what = "PyTorch before 2.0 or transformers before 5.0 (the "
		    "code read is transformers 5.24's: 4.x unties Flan-T5's "
		    "head and upcasts the softmax)";
	if (what != NULL)
		return refuse(d, "%s is not modelled for an encoder-decoder "
		    "(%s)", what, name);
	return 0;
}

/*
 * The lengths BART's and Whisper's classes take: BART's position tables
 * have max_position_embeddings rows (+ 2 never indexed by the offset
 * ids); WhisperEncoder raises unless the features have 2 x
 * max_source_positions frames (--seq is the positions after conv2, and
 * must be max_source_positions), and WhisperForConditionalGeneration
 * raises for labels longer than max_target_positions.
 */
static int
s2s_lengths(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	uint64_t t = vp_plan_target_seq(p);

	(void)world;
	if (m->arch != VP_ARCH_ENCDEC)
		return 0;
	if (vp_model_family(m) == VP_FAMILY_WHISPER) {
		if (p->seq != m->max_seq)
			return refuse(d, "--seq %llu: Whisper's encoder takes "
			    "exactly %llu positions (max_source_positions; "
			    "input features of %llu mel frames, 30 s of "
			    "audio, which conv2 halves); use --seq %llu",
			    (unsigned long long)p->seq,
			    (unsigned long long)m->max_seq,
			    (unsigned long long)(2 * m->max_seq),
			    (unsigned long long)m->max_seq);
		if (t > m->dec_max_seq)
			return refuse(d, "--target-seq %llu: Whisper's decoder "
			    "takes at most %llu tokens (max_target_positions)",
			    (unsigned long long)t,
			    (unsigned long long)m->dec_max_seq);
	}
	if (vp_model_family(m) == VP_FAMILY_BART &&
	    (p->seq > m->max_seq || t > m->max_seq))
		return refuse(d, "--seq %llu and --target-seq %llu: BART's "
		    "position tables have %llu positions "
		    "(max_position_embeddings)", (unsigned long long)p->seq,
		    (unsigned long long)t, (unsigned long long)m->max_seq);
	return 0;
}

/* The parallel layouts lower_encdec has: data parallelism only. */
static int
encdec_parallel(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (m->arch != VP_ARCH_ENCDEC)
		return 0;
	if (p->tp > 1 || p->pp > 1 || p->cp > 1 || p->ep > 1 || p->sp)
		return refuse(d, "tensor, pipeline, context, expert and "
		    "sequence parallelism are not modelled for an "
		    "encoder-decoder (%s); use data parallelism (--tp 1 --pp "
		    "1 --cp 1)", vp_family_names[vp_model_family(m)]);
	if (p->zero > 0 || p->fsdp != VP_FSDP_NONE)
		return refuse(d, "ZeRO and FSDP are not modelled for an "
		    "encoder-decoder (%s): its units (two stacks, a shared "
		    "embedding) were not measured; use --zero 0 --fsdp none",
		    vp_family_names[vp_model_family(m)]);
	return 0;
}

#define TPPPCPDP (VP_RK_TP | VP_RK_PP | VP_RK_CP | VP_RK_DP)

/*
 * DeepSeek's MLA families (deepseek-v2, deepseek-v3): what was measured
 * against transformers 5.24's classes on PyTorch 2.13 (tests/validate_hf.py)
 * is full training, sdpa or eager attention, without or with full
 * recompute, no tensor, sequence or context parallelism.  The rest is not
 * the lowering's code path, or was not measured: refused with the reason.
 */
static int
mla_plan(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	const char *fam = vp_family_names[vp_model_family(m)];

	(void)world;
	if (!vp_model_traits(m).mla)
		return 0;
	if (m->impl != VP_IMPL_HF)
		return refuse(d, "family %s is modelled as transformers runs it "
		    "(implementation: hf), not %s", fam,
		    vp_impl_names[m->impl]);
	if (p->transformers_version < 500)
		return refuse(d, "family %s is modelled on transformers 5 "
		    "(DeepSeek's MLA and grouped-mm experts as 5.24 writes "
		    "them); --transformers %u.%u is not modelled", fam,
		    p->transformers_version / 100,
		    p->transformers_version % 100);
	if (p->tp > 1 || p->sp || p->cp > 1)
		return refuse(d, "MLA (family %s) is not modelled with tensor, "
		    "sequence or context parallelism: how q_a_proj, "
		    "kv_a_proj_with_mqa and the latent would be split is not "
		    "lowered; "
		    "use data parallelism with ZeRO/FSDP and --ep", fam);
	if (p->attention == VP_ATTN_FLASH)
		return refuse(d, "--attention flash is not modelled for MLA "
		    "(family %s): transformers pads v to q's head dim for "
		    "flash-attn and crops the output, not measured; use sdpa "
		    "or eager", fam);
	if (p->recompute == VP_RECOMP_SELECTIVE || p->recompute == VP_RECOMP_OP)
		return refuse(d, "--recompute %s is not modelled for MLA "
		    "(family %s): only none and full were measured",
		    vp_recomp_names[p->recompute], fam);
	if (p->lora_rank > 0 || p->quant != VP_QUANT_NONE)
		return refuse(d, "--lora and --quant are not modelled for MLA "
		    "(family %s): which of q_a_proj, q_b_proj, "
		    "kv_a_proj_with_mqa and kv_b_proj PEFT and bitsandbytes "
		    "take was not measured", fam);
	if (p->precision == VP_PREC_FP8 || p->float8 != VP_FLOAT8_NONE)
		return refuse(d, "fp8 training (--precision fp8, --float8) is "
		    "not modelled for MLA (family %s)", fam);
	return 0;
}

/*
 * What neither encoder family of its own (ModernBERT, DeBERTa) was
 * measured with: the first of these the plan asks for, or NULL.
 */
static const char *
encoder_unmeasured(const struct vp_plan *p)
{
	if (p->quant != VP_QUANT_NONE)
		return "--quant";
	if (p->compile || p->compile_loss)
		return "--compile and --compile-loss";
	if (p->float8 != VP_FLOAT8_NONE || p->precision == VP_PREC_FP8)
		return "fp8 (--float8, --precision fp8)";
	if (p->loss != VP_LOSS_FULL)
		return "a chunked --loss";
	if (p->load != VP_LOAD_NONE)
		return "--load";
	if (p->activation_offload)
		return "--activation-offload";
	if (p->offload != VP_OFFLOAD_NONE)
		return "--offload";
	if (p->optim_in_bwd)
		return "--optimizer-in-backward";
	if (p->framework == VP_FW_MEGATRON)
		return "--framework megatron";
	return NULL;
}

/*
 * ModernBERT (family modernbert): measured against transformers 5.24's
 * ModernBertForMaskedLM on PyTorch 2.13's CPU (tests/validate_hf.py) in
 * full training on one rank, eager or sdpa attention, recompute none or
 * full (every block), fp32, bf16 and bf16-mixed, no dropout.  The rest is
 * refused: the parallel layouts and the sharded units were not measured,
 * nor flash-attn's unpadded window, adapters, quantization, compilation,
 * fp8 or the chunked losses; the 4.x classes (4.48 to 4.57) unpadded the
 * batch, which is not lowered.
 */
static int
modernbert_plan(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	const char *what = NULL;

	(void)world;
	if (m->lg != NULL || vp_model_family(m) != VP_FAMILY_MODERNBERT)
		return 0;
	if (m->impl != VP_IMPL_HF)
		what = "an implementation other than hf";
	else if (p->transformers_version < VP_TRANSFORMERS_CURRENT)
		what = "--transformers before 5.24 (4.x unpads the batch; the "
		    "family's row is 5.24's code)";
	else if (p->torch_version < 200)
		what = "--torch before 2.0";
	else if (p->tp > 1 || p->pp > 1 || p->cp > 1 || p->ep > 1 || p->sp)
		what = "tensor, pipeline, context, expert or sequence "
		    "parallelism";
	else if (p->zero > 0 || p->fsdp != VP_FSDP_NONE)
		what = "ZeRO or FSDP sharding";
	else if (p->attention == VP_ATTN_FLASH)
		what = "--attention flash (flash-attn's unpadded window)";
	else if (p->recompute == VP_RECOMP_SELECTIVE ||
	    p->recompute == VP_RECOMP_OP)
		what = "--recompute selective or op";
	else if (p->recompute == VP_RECOMP_FULL && p->recompute_stride != 1)
		what = "--recompute-stride (transformers checkpoints every "
		    "block)";
	else if (p->lora_rank > 0)
		what = "--lora (Wqkv, Wi and Wo as PEFT targets)";
	else
		what = encoder_unmeasured(p);
	if (what == NULL && vp_plan_dropout(p, m) > 0)
		what = "dropout (attention_dropout, mlp_dropout, "
		    "embedding_dropout: 0 in every released config; --dropout 0 "
		    "plans without)";
	if (what == NULL)
		return 0;
	return refuse(d, "%s is not modelled for family modernbert (%s; not "
	    "measured): it is modelled for full training on one rank (or "
	    "data-parallel replicas) through transformers 5.24's code, "
	    "--attention eager or sdpa, --recompute none or full, no dropout",
	    what, m->name ? m->name : "this model");
}

/*
 * DeBERTa-v2/v3 (family deberta-v2): measured against transformers
 * 5.24's DebertaV2ForMaskedLM on PyTorch 2.13's CPU (tests/validate_hf.py)
 * in full training on one rank, eager attention (its only path), recompute
 * none or full, fp32, bf16 and bf16-mixed, with and without the released
 * configs' dropout.  The rest is refused, as for ModernBERT.
 */
static int
deberta_plan(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	const char *what = NULL;

	(void)world;
	if (m->lg != NULL || vp_model_family(m) != VP_FAMILY_DEBERTA_V2)
		return 0;
	if (p->attention != VP_ATTN_EAGER)
		return refuse(d, "--attention %s is not modelled for family "
		    "deberta-v2: DisentangledSelfAttention has only its own "
		    "eager path (bmm, the relative terms, softmax); use "
		    "--attention eager", vp_attn_names[p->attention]);
	if (m->impl != VP_IMPL_HF)
		what = "an implementation other than hf";
	else if (p->transformers_version < VP_TRANSFORMERS_CURRENT)
		what = "--transformers before 5.24 (the family's row is "
		    "5.24's code)";
	else if (p->torch_version < 200)
		what = "--torch before 2.0";
	else if (p->tp > 1 || p->pp > 1 || p->cp > 1 || p->ep > 1 || p->sp)
		what = "tensor, pipeline, context, expert or sequence "
		    "parallelism";
	else if (p->zero > 0 || p->fsdp != VP_FSDP_NONE)
		what = "ZeRO or FSDP sharding";
	else if (p->recompute == VP_RECOMP_SELECTIVE ||
	    p->recompute == VP_RECOMP_OP)
		what = "--recompute selective or op";
	else if (p->recompute == VP_RECOMP_FULL && p->recompute_stride != 1)
		what = "--recompute-stride (transformers checkpoints every "
		    "layer)";
	else if (p->lora_rank > 0)
		what = "--lora (query_proj and key_proj also project the "
		    "relative embeddings)";
	else
		what = encoder_unmeasured(p);
	if (what == NULL)
		return 0;
	return refuse(d, "%s is not modelled for family deberta-v2 (%s; not "
	    "measured): it is modelled for full training on one rank (or "
	    "data-parallel replicas) through transformers 5.24's code, "
	    "--attention eager, --recompute none or full", what,
	    m->name ? m->name : "this model");
}

/*
 * Vision models (ViT, CLIP, LLaVA with its tower frozen): what was
 * measured against transformers 5.24's classes on PyTorch 2.13's CPU
 * (tests/validate_hf.py) is eager or sdpa attention, recompute none or
 * full, on one rank (data parallelism and ZeRO 1 and 2, which only shard
 * states and gradients, are the model-independent mechanisms), at the
 * resolution of the position table.  The rest is refused by name.
 */
static int
vit_plan(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    struct vp_diags *d)
{
	const char *what = NULL;

	(void)world;
	if (m->family != VP_FAMILY_VIT && m->family != VP_FAMILY_CLIP &&
	    !m->vis.llava)
		return 0;
	/* ViT: another resolution interpolates the position table
	 * (interpolate_pos_encoding=True), in whole patches. */
	if (m->family == VP_FAMILY_VIT && p->image != m->vis.image &&
	    (p->image % m->vis.patch != 0 || p->image < m->vis.patch))
		return refuse(d, "--image %llu is not a whole number of "
		    "%llu-pixel patches, which '%s' cuts its images into; use "
		    "a multiple of %llu", (unsigned long long)p->image,
		    (unsigned long long)m->vis.patch, m->name,
		    (unsigned long long)m->vis.patch);
	if (m->family != VP_FAMILY_VIT && p->image != m->vis.image)
		return refuse(d, "--image %llu is not modelled for '%s': its "
		    "position table is for %llux%llu images, and the "
		    "interpolation another resolution needs "
		    "(interpolate_pos_encoding) was not measured; use --image "
		    "%llu", (unsigned long long)p->image, m->name,
		    (unsigned long long)m->vis.image,
		    (unsigned long long)m->vis.image,
		    (unsigned long long)m->vis.image);
	/* LLaVA: the image tokens are part of the language model's
	 * sequence. */
	if (m->vis.llava && p->seq <= vp_llava_image_tokens(m))
		return refuse(d, "--seq %llu is the language model's whole "
		    "sequence, the %llu image tokens of '%s' included; give "
		    "more than %llu", (unsigned long long)p->seq,
		    (unsigned long long)vp_llava_image_tokens(m), m->name,
		    (unsigned long long)vp_llava_image_tokens(m));
	if (p->tp > 1 || p->sp || p->async_tp)
		what = "tensor parallelism (--tp, --sp, --async-tp)";
	else if (p->pp > 1)
		what = "pipeline parallelism (--pp)";
	else if (p->cp > 1)
		what = "context parallelism (--cp)";
	else if (p->ep > 1)
		what = "expert parallelism (--ep)";
	else if (p->fsdp != VP_FSDP_NONE || p->zero >= 3)
		what = "parameter sharding (--fsdp, --zero 3)";
	else if (p->transformers_version < VP_TRANSFORMERS_CURRENT)
		what = "--transformers before 5.24 (the family's row is "
		    "5.24's code)";
	else if (p->attention == VP_ATTN_FLASH)
		what = "--attention flash";
	else if (p->recompute == VP_RECOMP_SELECTIVE ||
	    p->recompute == VP_RECOMP_OP)
		what = "--recompute selective and op";
	else if (p->recompute == VP_RECOMP_FULL && p->recompute_stride != 1)
		what = "--recompute-stride (transformers checkpoints every "
		    "ViTLayer)";
	else if (p->lora_rank > 0 || p->quant != VP_QUANT_NONE)
		what = "LoRA and quantized bases (--lora, --quant)";
	else if (p->compile || p->compile_loss)
		what = "torch.compile (--compile, --compile-loss)";
	else if (p->float8 != VP_FLOAT8_NONE || p->precision == VP_PREC_FP8)
		what = "fp8 training (--float8, --precision fp8)";
	else if (p->loss != VP_LOSS_FULL)
		what = "a chunked --loss";
	else if (p->framework == VP_FW_MEGATRON)
		what = "--framework megatron";
	else if (p->optimizer == VP_OPT_ADAMW_8BIT ||
	    p->optimizer == VP_OPT_PAGED_ADAMW_8BIT ||
	    p->optimizer == VP_OPT_ADAFACTOR)
		what = "shape-aware optimizer states (8-bit Adam, Adafactor)";
	else if (p->offload != VP_OFFLOAD_NONE || p->activation_offload)
		what = "offloading (--offload, --activation-offload)";
	else if (p->optim_in_bwd)
		what = "--optimizer-in-backward";
	else if (p->load != VP_LOAD_NONE)
		what = "the load phase (--load)";
	if (what == NULL)
		return 0;
	return refuse(d, "%s is not modelled for '%s' (a vision model; not "
	    "measured): vision models are planned data-parallel (ZeRO 1 and "
	    "2 included) through transformers 5.24's code, with eager or "
	    "sdpa attention and --recompute none or full", what, m->name);
}

/*
 * --fsdp-units split is FSDP2's (fully_shard on a list of modules), and
 * torchtitan's layout, measured with untied embeddings (a tied weight
 * would be in the embeddings' unit and the head's at once) and its full
 * cross-entropy after the model's forward (mem.c, fsdp_split_now).
 */
static int
fsdp_units(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	(void)world;
	if (p->fsdp_units != VP_FSDP_UNITS_SPLIT ||
	    (p->fsdp != VP_FSDP_FULL && p->fsdp != VP_FSDP_HYBRID))
		return 0;
	if (vp_plan_framework(p) != VP_FW_FSDP2)
		return refuse(d, "--fsdp-units split is FSDP2's layout "
		    "(fully_shard on the embeddings and on [norm, head]); "
		    "give --framework fsdp2 or --fsdp-units root");
	if (p->loss != VP_LOSS_FULL)
		return refuse(d, "--fsdp-units split is modelled with --loss "
		    "full (torchtitan's cross-entropy after the model's "
		    "forward), not --loss %s", vp_loss_names[p->loss]);
	if (m->tie_embeddings)
		return refuse(d, "--fsdp-units split is not modelled for '%s', "
		    "whose head is tied to its embeddings (not measured: the "
		    "weight would be in two units); give --fsdp-units root",
		    m->name);
	return 0;
}

static const struct rule rules[] = {
	{ lgraph_plan, 0, false },
	{ tp_heads, VP_RK_TP, false },
	{ tp_ffn, VP_RK_TP, false },
	{ pp_layers, VP_RK_PP, false },
	{ recompute_stride, 0, false },
	{ seq_learned, 0, false },
	{ seq_causal, 0, false },
	{ softcap_attention, 0, false },
	{ llama4_plan, VP_RK_TP | VP_RK_CP | VP_RK_EP, false },
	{ cp_attention, VP_RK_CP, false },
	{ ep_experts, VP_RK_EP, false },
	{ vpp_chunks, VP_RK_PP, false },
	{ sp_needs_tp, VP_RK_TP, false },
	{ zero_or_fsdp, VP_RK_SHARD, false },
	{ fsdp1_lora_unit, VP_RK_SHARD, false },
	{ tp_in_node, VP_RK_TP, false },
	{ lora_targets, 0, false },
	{ lora_rank, VP_RK_TP, false },
	{ quant, 0, false },
	{ lora_head_loss, 0, false },
	{ chunked_output_loss, VP_RK_TP, false },
	{ fp8_quant, 0, false },
	{ fp8_cuda, 0, false },
	{ zero_pp, VP_RK_PP | VP_RK_SHARD, false },
	{ quant_tp, VP_RK_TP, false },
	{ recompute_op, 0, false },
	{ float8, 0, false },
	{ float8_tp, VP_RK_TP, false },
	{ async_tp, VP_RK_TP, false },
	{ float8_fsdp, VP_RK_SHARD, true },
	{ compile_plan, 0, false },
	{ mla_plan, VP_RK_TP | VP_RK_CP, false },
	{ nvme_needs_offload, 0, false },
	{ act_offload, VP_RK_PP, false },
	{ act_offload_ckpt, VP_RK_ALL, true },
	{ world_split, TPPPCPDP, false },
	{ ep_in_dp, TPPPCPDP | VP_RK_EP, false },
	{ offload_needs_sharding, VP_RK_SHARD, true },
	{ optim_in_bwd, TPPPCPDP | VP_RK_SHARD, true },
	{ load_path, TPPPCPDP, true },
	{ target_seq_encdec, 0, false },
	{ encdec_plan, 0, false },
	{ s2s_lengths, 0, false },
	{ encdec_parallel, TPPPCPDP | VP_RK_EP | VP_RK_SHARD, false },
	{ local_attention, VP_RK_CP, false },
	{ sink_attention, 0, false },
	{ parallel_block, VP_RK_TP | VP_RK_CP, false },
	{ modernbert_plan, TPPPCPDP | VP_RK_EP | VP_RK_SHARD, false },
	{ deberta_plan, TPPPCPDP | VP_RK_EP | VP_RK_SHARD, false },
	{ vit_plan, TPPPCPDP | VP_RK_EP | VP_RK_SHARD, false },
	{ falcon_plan, 0, false },
	{ ssm_plan, TPPPCPDP | VP_RK_EP | VP_RK_SHARD, false },
	{ zamba2_plan, VP_RK_SHARD, false },
	{ fsdp_units, VP_RK_SHARD, false },
};

static int
run_rules(const struct vp_plan *p, const struct vp_model *m, unsigned world,
    unsigned known, bool finished, struct vp_diags *d)
{
	size_t i;
	int rc = 0;

	/* vp_plan_normalize has run: no degree is 0 here. */
	assert(p->tp >= 1 && p->pp >= 1 && p->cp >= 1 && p->ep >= 1 &&
	    p->vpp >= 1);
	for (i = 0; i < VP_NELEM(rules); i++) {
		if ((rules[i].reads & ~known) != 0 ||
		    (rules[i].after_search && !finished))
			continue;
		if (rules[i].fn(p, m, world, d) != 0) {
			rc = -1;
			if (d == NULL)
				break;
		}
	}
	return rc;
}

int
vp_plan_rules(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, unsigned known, struct vp_diags *d)
{
	return run_rules(p, m, world, known, true, d);
}

int
vp_plan_check(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	return run_rules(p, m, world, VP_RK_ALL, false, d);
}

/*
 * fp8 matmuls need fp8 tensor cores (Ada, Hopper, Blackwell; not Ampere
 * or older): the catalog's fp8_tflops_dense is null for a card without
 * them.
 */
int
vp_plan_card_check(const struct vp_plan *p, const struct vp_gpu *g,
    struct vp_diags *d)
{
	const char *what = p->float8 != VP_FLOAT8_NONE ? "--float8" :
	    p->precision == VP_PREC_FP8 ? "--precision fp8" : NULL;

	if (what == NULL || g == NULL || !isnan(g->fp8_tflops))
		return 0;
	return refuse(d, "%s needs fp8 tensor cores, which %s (%s) does not "
	    "have (the catalog lists no fp8 rate); use a Hopper, Ada or "
	    "Blackwell card", what, g->id, g->name);
}

bool
vp_plan_card_precision(struct vp_plan *p, const struct vp_gpu *g)
{
	static const enum vp_precision twin[VP_PREC_COUNT] = {
		[VP_PREC_BF16_MIXED] = VP_PREC_FP16_MIXED,
		[VP_PREC_BF16_MASTER] = VP_PREC_FP16_MASTER,
		[VP_PREC_BF16] = VP_PREC_FP16,
	};

	if (g == NULL || p->device != VP_DEVICE_CUDA ||
	    p->precision == VP_PREC_FP8 || p->float8 != VP_FLOAT8_NONE ||
	    vp_prec_info[p->precision].compute != VP_BF16 ||
	    !isnan(g->bf16_tflops) || isnan(g->fp16_tflops))
		return false;
	p->precision = twin[p->precision];
	return true;
}

const char *
vp_plan_time_why(const struct vp_plan *p, const struct vp_gpu *g, char *buf,
    size_t len)
{
	enum vp_dtype dt = vp_prec_info[p->precision].compute;
	bool f8 = p->precision == VP_PREC_FP8 || p->float8 != VP_FLOAT8_NONE;
	double rate;

	if (p->device == VP_DEVICE_CPU)
		return "the time model covers GPUs only (--device cpu)";
	if (g == NULL)
		return "no card (--gpus) to time the plan on";
	rate = f8 ? g->fp8_tflops : dt == VP_BF16 ? g->bf16_tflops :
	    dt == VP_FP16 ? g->fp16_tflops : g->fp32_tflops;
	if (!isnan(rate))
		return NULL;
	snprintf(buf, len, "the catalog has no %s rate for %s (%s)%s", f8 ?
	    "fp8" : vp_dtype_names[dt], g->id, g->name, dt == VP_BF16 &&
	    !f8 && !isnan(g->fp16_tflops) ? ": it has no bf16 tensor cores; "
	    "--precision fp16-mixed times it" : "");
	return buf;
}
