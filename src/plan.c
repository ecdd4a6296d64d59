/* plan.c — option tables and plan defaults (see plan.h). */
#include "plan.h"

#include "lgraph.h"

#include "util.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define X(e, s) s,
const char *const vp_prec_names[VP_PREC_COUNT] = { VP_PREC_LIST(X) };
const char *const vp_opt_names[VP_OPT_COUNT] = { VP_OPT_LIST(X) };
const char *const vp_recomp_names[VP_RECOMP_COUNT] = { VP_RECOMP_LIST(X) };
const char *const vp_attn_names[VP_ATTN_COUNT] = { VP_ATTN_LIST(X) };
const char *const vp_device_names[VP_DEVICE_COUNT] = { VP_DEVICE_LIST(X) };
const char *const vp_fsdp_names[VP_FSDP_COUNT] = { VP_FSDP_LIST(X) };
const char *const vp_quant_names[VP_QUANT_COUNT] = { VP_QUANT_LIST(X) };
const char *const vp_kbit_names[VP_KBIT_COUNT] = { VP_KBIT_LIST(X) };
const char *const vp_quant_lib_names[VP_QLIB_COUNT] = {
	VP_QUANT_LIB_LIST(X) };
const char *const vp_load_names[VP_LOAD_COUNT] = { VP_LOAD_LIST(X) };
const char *const vp_offload_names[VP_OFFLOAD_COUNT] = { VP_OFFLOAD_LIST(X) };
const char *const vp_loss_names[VP_LOSS_COUNT] = { VP_LOSS_LIST(X) };
const char *const vp_float8_names[VP_FLOAT8_COUNT] = { VP_FLOAT8_LIST(X) };
const char *const vp_trainer_names[VP_TRAINER_COUNT] = {
	VP_TRAINER_LIST(X) };
const char *const vp_lora_target_names[VP_LORA_TARGET_COUNT] = {
	VP_LORA_TARGET_LIST(X) };
const char *const vp_framework_names[VP_FW_COUNT] = { VP_FRAMEWORK_LIST(X) };
const char *const vp_optimpl_names[VP_OPTIMPL_COUNT] = { VP_OPTIMPL_LIST(X) };
const char *const vp_fsdp_prefetch_names[VP_FSDP_PREFETCH_COUNT] = {
	VP_FSDP_PREFETCH_LIST(X) };
const char *const vp_yesno_names[VP_YESNO_COUNT] = { VP_YESNO_LIST(X) };
const char *const vp_lora_wrap_names[VP_LORAWRAP_COUNT] = {
	VP_LORAWRAP_LIST(X) };
const char *const vp_fsdp_units_names[VP_FSDP_UNITS_COUNT] = {
	VP_FSDP_UNITS_LIST(X) };
const char *const vp_zerograd_names[VP_ZEROGRAD_COUNT] = {
	VP_ZEROGRAD_LIST(X) };
#undef X

#define X(e, s, b) b,
const unsigned vp_dtype_bytes[VP_DTYPE_COUNT] = { VP_DTYPE_LIST(X) };
#undef X
#define X(e, s, b) s,
const char *const vp_dtype_names[VP_DTYPE_COUNT] = { VP_DTYPE_LIST(X) };
#undef X

/*                         weight    grad     compute  autocast master state */
const struct vp_prec_info vp_prec_info[VP_PREC_COUNT] = {
	[VP_PREC_FP32]        = { VP_FP32, VP_FP32, VP_FP32, false, false, VP_FP32 },
	[VP_PREC_FP16_MIXED]  = { VP_FP32, VP_FP32, VP_FP16, true,  false, VP_FP32 },
	[VP_PREC_BF16_MIXED]  = { VP_FP32, VP_FP32, VP_BF16, true,  false, VP_FP32 },
	[VP_PREC_FP16]        = { VP_FP16, VP_FP16, VP_FP16, false, false, VP_FP16 },
	[VP_PREC_BF16]        = { VP_BF16, VP_BF16, VP_BF16, false, false, VP_BF16 },
	[VP_PREC_FP16_MASTER] = { VP_FP16, VP_FP16, VP_FP16, false, true,  VP_FP32 },
	[VP_PREC_BF16_MASTER] = { VP_BF16, VP_BF16, VP_BF16, false, true,  VP_FP32 },
	/* Transformer Engine fp8: bf16 weights with fp32 masters, fp8
	 * copies of the linear weights (graph.c adds them). */
	[VP_PREC_FP8]         = { VP_BF16, VP_BF16, VP_BF16, false, true,  VP_FP32 },
};

/*
 * Optimizer state bytes per parameter at fp32 (torch.optim and
 * bitsandbytes): SGD none; momentum one buffer; Adam/AdamW exp_avg and
 * exp_avg_sq; 8-bit AdamW two 1-byte states (their block constants are
 * small: one fp32 absmax per 2048 values); Lion one momentum.  Adafactor
 * keeps factored row and column second moments for matrices: about 0
 * bytes per parameter of a large matrix; we count the momentum-free
 * default as 0 plus the factors (negligible at this resolution).
 */
const struct vp_opt_info vp_opt_info[VP_OPT_COUNT] = {
	/*                      bytes n  foreach loop   paged */
	[VP_OPT_SGD]          = { 0, 0, false, false, false, "no state" },
	[VP_OPT_SGD_MOMENTUM] = { 4, 1, false, false, false, "momentum buffer" },
	[VP_OPT_ADAM]         = { 8, 2, true,  true,  false,
	    "exp_avg + exp_avg_sq" },
	[VP_OPT_ADAMW]        = { 8, 2, true,  true,  false,
	    "exp_avg + exp_avg_sq" },
	/* bitsandbytes' 8-bit and Adafactor steps: no temporaries we count. */
	[VP_OPT_ADAMW_8BIT]   = { 2, 2, false, false, false,
	    "8-bit exp_avg + exp_avg_sq" },
	[VP_OPT_ADAFACTOR]    = { 0, 0, false, false, false,
	    "factored second moments" },
	[VP_OPT_LION]         = { 4, 1, true,  false, false, "momentum" },
	/* bitsandbytes paged optimizers: states in unified memory that the
	 * driver evicts to host RAM under pressure (mem.c). */
	[VP_OPT_PAGED_ADAMW]  = { 8, 2, false, false, true,
	    "paged exp_avg + exp_avg_sq" },
	[VP_OPT_PAGED_ADAMW_8BIT] = { 2, 2, false, false, true,
	    "paged 8-bit exp_avg + exp_avg_sq" },
};

/*                                fused  fsdp   main_grad */
const struct vp_fw_info vp_fw_info[VP_FW_COUNT] = {
	[VP_FW_TORCH]     = { false, false, false },
	[VP_FW_DEEPSPEED] = { true,  false, false },
	[VP_FW_FSDP1]     = { false, true,  false },
	[VP_FW_FSDP2]     = { false, true,  false },
	[VP_FW_MEGATRON]  = { true,  false, true },
};

void
vp_plan_defaults(struct vp_plan *p, const struct vp_model *m)
{
	memset(p, 0, sizeof *p);
	p->torch_version = VP_TORCH_CURRENT;
	p->cuda_version = VP_CUDA_CURRENT;
	p->transformers_version = VP_TRANSFORMERS_CURRENT;
	p->precision = VP_PREC_BF16_MIXED;
	p->optimizer = VP_OPT_ADAMW;
	p->micro_batch = 1;
	p->seq = 2048;
	if (m->max_seq && m->max_seq < p->seq)
		p->seq = m->max_seq;
	p->grad_accum = 1;
	p->recompute = VP_RECOMP_NONE;
	p->recompute_stride = 1;
	/* transformers falls back to eager attention for a class without
	 * SDPA (Gemma-2's soft-capped scores: _supports_sdpa False). */
	p->attention = m->attn_softcap || vp_model_traits(m).sinks ?
	    VP_ATTN_EAGER : VP_ATTN_SDPA;
	/* T5 (5.24) does have an sdpa path, which passes the learned
	 * position bias as a float attn_mask that requires grad
	 * (integrations/sdpa_attention.py, create_position_bias_mask); what
	 * PyTorch's kernels save and compute for that mask's gradient is not
	 * modelled, so a T5 plan is for attn_implementation="eager", and
	 * says so (rules.c refuses sdpa and flash for it). */
	if (vp_model_family(m) == VP_FAMILY_T5)
		p->attention = VP_ATTN_EAGER;
	/* Whisper's decoder takes at most max_target_positions tokens (its
	 * forward raises for longer labels): its default length. */
	if (vp_model_family(m) == VP_FAMILY_WHISPER)
		p->target_seq = m->dec_max_seq;
	/* DeBERTa-v2 (5.24) has no attention interface but its own eager
	 * DisentangledSelfAttention (_supports_sdpa unset). */
	if (vp_model_family(m) == VP_FAMILY_DEBERTA_V2)
		p->attention = VP_ATTN_EAGER;
	p->dropout = -1;
	p->tp = p->pp = 1;
	p->dp = 0;
	p->vpp = p->cp = p->ep = 1;
	p->gpus_per_node = VP_DEFAULT_GPUS_PER_NODE;
	p->lora_targets = (1u << VP_LORA_Q) | (1u << VP_LORA_V);
	p->lora_dtype = VP_FP32;
	p->fsdp = VP_FSDP_NONE;
	p->framework = VP_FW_TORCH;
	p->device = VP_DEVICE_CUDA;
	p->ds.reduce_bucket = VP_DS_REDUCE_BUCKET;
	p->ds.prefetch_bucket = VP_DS_PREFETCH_BUCKET;
	p->ds.persist_threshold = VP_DS_PERSIST_THRESHOLD;
	p->ds.max_live = VP_DS_MAX_LIVE;
	p->ds.max_reuse = VP_DS_MAX_REUSE;
	p->ds.contiguous_grads = true;
	p->ds.overlap_comm = -1;
	if (m->train.micro_batch)
		p->micro_batch = m->train.micro_batch;
	if (m->train.seq)
		p->seq = m->train.seq;
	if (m->train.precision >= 0)
		p->precision = (enum vp_precision)m->train.precision;
	if (m->train.optimizer >= 0)
		p->optimizer = (enum vp_optimizer)m->train.optimizer;
	/* A layer graph's resolution: --image is 0 for every other model. */
	if (m->lg != NULL)
		p->image = m->lg->image;
	/* A vision transformer's too (its position table's); its
	 * sequence follows from it (vp_vision_seq, after the options). */
	if (m->family == VP_FAMILY_VIT) {
		p->image = m->vis.image;
		p->seq = vp_vision_seq(m, p->image);
	}
	/* LLaVA: its images (the sequence is the language model's). */
	if (m->vis.llava)
		p->image = m->vis.image;
	/* CLIP: its images, and its text tower's whole context. */
	if (m->family == VP_FAMILY_CLIP) {
		p->image = m->vis.image;
		if (!m->train.seq)
			p->seq = m->max_seq;
	}
}

void
vp_plan_normalize(struct vp_plan *p)
{
	unsigned *deg[] = { &p->tp, &p->pp, &p->cp, &p->ep, &p->vpp,
	    &p->recompute_stride };
	size_t i;

	for (i = 0; i < VP_NELEM(deg); i++)
		if (*deg[i] == 0)
			*deg[i] = 1;
	if (p->gpus_per_node == 0)
		p->gpus_per_node = VP_DEFAULT_GPUS_PER_NODE;
}

bool
vp_plan_block_checkpointed(const struct vp_plan *p, uint64_t l)
{
	unsigned n = p->recompute_stride ? p->recompute_stride : 1;

	return p->recompute != VP_RECOMP_NONE && l >= 1 && l % n == 0;
}

/*
 * Whether block l (1-based) is a checkpoint inside a compiled region:
 * torchtitan compiles the checkpoint-wrapped block (apply_ac, then
 * apply_compile), --compile-wraps-checkpoint; its op-level policy
 * (--recompute op) is only modelled that way.  Otherwise the
 * checkpoint wraps the compiled block, as torchtune's recipes do.
 */
bool
vp_plan_compiled_checkpoint(const struct vp_plan *p, uint64_t l)
{
	return p->compile && (p->compile_wraps_ckpt ||
	    p->recompute == VP_RECOMP_OP) && vp_plan_block_checkpointed(p, l);
}

uint64_t
vp_plan_checkpointed_blocks(const struct vp_plan *p, uint64_t blocks)
{
	unsigned n = p->recompute_stride ? p->recompute_stride : 1;

	return p->recompute == VP_RECOMP_NONE ? 0 : blocks / n;
}

bool
vp_plan_degrees_ok(const struct vp_plan *p)
{
	return p->tp >= 1 && p->pp >= 1 && p->cp >= 1 && p->ep >= 1 &&
	    p->vpp >= 1;
}

unsigned
vp_plan_world(const struct vp_plan *p)
{
	const unsigned f[] = { p->dp ? p->dp : 1, p->tp ? p->tp : 1,
	    p->pp ? p->pp : 1, p->cp ? p->cp : 1 };
	uint64_t w = 1;
	size_t i;

	/* Each factor is below 2^32 and w stays at most UINT_MAX, so the
	 * 64-bit product cannot wrap before the test. */
	for (i = 0; i < VP_NELEM(f); i++) {
		w *= f[i];
		if (w > UINT_MAX)
			return 0;
	}
	return (unsigned)w;
}

double
vp_plan_dropout(const struct vp_plan *p, const struct vp_model *m)
{
	return p->dropout >= 0 ? p->dropout : m->dropout;
}

uint64_t
vp_plan_target_seq(const struct vp_plan *p)
{
	return p->target_seq ? p->target_seq : p->seq;
}

unsigned
vp_plan_dp(const struct vp_plan *p, unsigned world)
{
	uint64_t mp = (uint64_t)p->tp * p->pp * p->cp;

	assert(vp_plan_degrees_ok(p));
	if (world % mp != 0)
		return 0;
	return (unsigned)(world / mp);
}

bool
vp_plan_lora(const struct vp_plan *p)
{
	return p->lora_rank > 0;
}

int
vp_lora_parse_targets(const char *s, unsigned *out, const char **bad)
{
	static _Thread_local char word[32];	/* *bad may point here */
	const char *p = s;
	unsigned set = 0;
	int i;

	if (strcmp(s, "all-linear") == 0 || strcmp(s, "all") == 0) {
		*out = VP_LORA_ALL_LINEAR;
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == 0 || n >= sizeof word) {
			*bad = n ? "(too long)" : "(empty)";
			return -1;
		}
		memcpy(word, p, n);
		word[n] = '\0';
		for (i = 0; i < VP_LORA_TARGET_COUNT; i++)
			if (strcmp(word, vp_lora_target_names[i]) == 0)
				break;
		if (i == VP_LORA_TARGET_COUNT) {
			*bad = word;
			return -1;
		}
		set |= 1u << i;
		p += n;
		if (*p == ',')
			p++;
	}
	if (set == 0) {
		*bad = "(empty)";
		return -1;
	}
	*out = set;
	return 0;
}

const char *
vp_version_name(unsigned v, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u", v / 100, v % 100);
	return buf;
}

enum vp_optimpl
vp_plan_optimizer_impl(const struct vp_plan *p)
{
	/* Under DeepSpeed an implementation given is the client
	 * optimizer's (a torch.optim one the Trainer or the user built,
	 * zero_allow_untested_optimizer), which DeepSpeed steps as it is
	 * on its flat partitions; Megatron always fuses. */
	if (p->optimizer_impl != VP_OPTIMPL_DEFAULT &&
	    vp_plan_framework(p) == VP_FW_DEEPSPEED)
		return p->optimizer_impl;
	if (vp_fw_info[vp_plan_framework(p)].fused_optimizer)
		return VP_OPTIMPL_FUSED;
	if (p->optimizer_impl != VP_OPTIMPL_DEFAULT)
		return p->optimizer_impl;
	/* torch.optim's _default_to_fused_or_foreach: foreach when every
	 * parameter is on a CUDA device (native tensors), else the loop. */
	return p->device == VP_DEVICE_CPU ? VP_OPTIMPL_FOR_LOOP :
	    VP_OPTIMPL_FOREACH;
}

enum vp_zerograd
vp_plan_zero_grad(const struct vp_plan *p)
{
	if (p->zero_grad != VP_ZEROGRAD_DEFAULT)
		return p->zero_grad;
	/* Optimizer.zero_grad and Module.zero_grad: set_to_none defaults
	 * to True from PyTorch 2.0 (False before). */
	return p->torch_version >= 200 ? VP_ZEROGRAD_NONE :
	    VP_ZEROGRAD_ZEROS;
}

bool
vp_plan_grads_kept(const struct vp_plan *p)
{
	return p->zero == 0 && p->fsdp == VP_FSDP_NONE &&
	    !vp_fw_info[vp_plan_framework(p)].main_grad &&
	    vp_plan_zero_grad(p) == VP_ZEROGRAD_ZEROS;
}

enum vp_framework
vp_plan_framework(const struct vp_plan *p)
{
	if (p->framework != VP_FW_TORCH)
		return p->framework;
	if (p->fsdp != VP_FSDP_NONE)
		return VP_FW_FSDP1;
	if (p->zero > 0)
		return VP_FW_DEEPSPEED;
	return VP_FW_TORCH;
}

unsigned
vp_plan_groups(const struct vp_plan *p, unsigned world)
{
	unsigned n = 0;

	if (world <= 1)
		return 0;
	if ((p->dp ? p->dp : 1) > 1)
		n++;
	if (p->tp > 1)
		n++;
	if (p->pp > 1)
		n += 2;		/* send to the next, receive from the previous */
	if (p->cp > 1)
		n++;
	if (p->ep > 1)
		n++;
	return n ? n : 1;
}

bool
vp_plan_ds_overlap(const struct vp_plan *p)
{
	if (p->ds.overlap_comm >= 0)
		return p->ds.overlap_comm != 0;
	return p->zero >= 3;	/* DeepSpeedZeroConfig.overlap_comm_valid */
}
