/* plan.c — option tables and plan defaults (see plan.h). */
#include "plan.h"

#include "finetune.h"
#include "util.h"

#include <assert.h>
#include <limits.h>
#include <string.h>

#define X(e, s) s,
const char *const vp_prec_names[VP_PREC_COUNT] = { VP_PREC_LIST(X) };
const char *const vp_opt_names[VP_OPT_COUNT] = { VP_OPT_LIST(X) };
const char *const vp_recomp_names[VP_RECOMP_COUNT] = { VP_RECOMP_LIST(X) };
const char *const vp_attn_names[VP_ATTN_COUNT] = { VP_ATTN_LIST(X) };
const char *const vp_device_names[VP_DEVICE_COUNT] = { VP_DEVICE_LIST(X) };
const char *const vp_fsdp_names[VP_FSDP_COUNT] = { VP_FSDP_LIST(X) };
const char *const vp_quant_names[VP_QUANT_COUNT] = { VP_QUANT_LIST(X) };
const char *const vp_offload_names[VP_OFFLOAD_COUNT] = { VP_OFFLOAD_LIST(X) };
const char *const vp_loss_names[VP_LOSS_COUNT] = { VP_LOSS_LIST(X) };
const char *const vp_lora_target_names[VP_LORA_TARGET_COUNT] = {
	VP_LORA_TARGET_LIST(X) };
const char *const vp_framework_names[VP_FW_COUNT] = { VP_FRAMEWORK_LIST(X) };
#undef X

const unsigned vp_dtype_bytes[VP_DTYPE_COUNT] = { 4, 2, 2, 8, 1 };
const char *const vp_dtype_names[VP_DTYPE_COUNT] = { "fp32", "bf16", "fp16",
	"int64", "bool" };

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
	[VP_OPT_SGD]          = { 0, 0, "no state" },
	[VP_OPT_SGD_MOMENTUM] = { 4, 1, "momentum buffer" },
	[VP_OPT_ADAM]         = { 8, 2, "exp_avg + exp_avg_sq" },
	[VP_OPT_ADAMW]        = { 8, 2, "exp_avg + exp_avg_sq" },
	[VP_OPT_ADAMW_8BIT]   = { 2, 2, "8-bit exp_avg + exp_avg_sq" },
	[VP_OPT_ADAFACTOR]    = { 0, 0, "factored second moments" },
	[VP_OPT_LION]         = { 4, 1, "momentum" },
	/* bitsandbytes paged optimizers: states in unified memory that the
	 * driver evicts to host RAM under pressure (mem.c). */
	[VP_OPT_PAGED_ADAMW]  = { 8, 2, "paged exp_avg + exp_avg_sq" },
	[VP_OPT_PAGED_ADAMW_8BIT] = { 2, 2, "paged 8-bit exp_avg + exp_avg_sq" },
};

void
vp_plan_defaults(struct vp_plan *p, const struct vp_model *m)
{
	memset(p, 0, sizeof *p);
	p->precision = VP_PREC_BF16_MIXED;
	p->optimizer = VP_OPT_ADAMW;
	p->micro_batch = 1;
	p->seq = 2048;
	if (m->max_seq && m->max_seq < p->seq)
		p->seq = m->max_seq;
	p->grad_accum = 1;
	p->recompute = VP_RECOMP_NONE;
	p->attention = VP_ATTN_SDPA;
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
	if (m->train.micro_batch)
		p->micro_batch = m->train.micro_batch;
	if (m->train.seq)
		p->seq = m->train.seq;
	if (m->train.precision >= 0)
		p->precision = (enum vp_precision)m->train.precision;
	if (m->train.optimizer >= 0)
		p->optimizer = (enum vp_optimizer)m->train.optimizer;
}

void
vp_plan_normalize(struct vp_plan *p)
{
	unsigned *deg[] = { &p->tp, &p->pp, &p->cp, &p->ep, &p->vpp };
	size_t i;

	for (i = 0; i < VP_NELEM(deg); i++)
		if (*deg[i] == 0)
			*deg[i] = 1;
	if (p->gpus_per_node == 0)
		p->gpus_per_node = VP_DEFAULT_GPUS_PER_NODE;
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

unsigned
vp_plan_dp(const struct vp_plan *p, unsigned world)
{
	unsigned mp = (p->tp ? p->tp : 1) * (p->pp ? p->pp : 1) *
	    (p->cp ? p->cp : 1);

	if (world % mp != 0)
		return 0;
	return world / mp;
}

bool
vp_plan_lora(const struct vp_plan *p)
{
	return p->lora_rank > 0;
}

int
vp_lora_parse_targets(const char *s, unsigned *out, const char **bad)
{
	static char word[32];
	const char *p = s;
	unsigned set = 0;
	int i;

	if (strcmp(s, "all-linear") == 0 || strcmp(s, "all") == 0) {
		*out = (1u << VP_LORA_TARGET_COUNT) - 1;
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

static void
bad_divisor(struct vp_diags *d, const char *flag, uint64_t v,
    const char *what, uint64_t n)
{
	uint64_t lo, hi;

	vp_nearest_divisors(n, v, &lo, &hi);
	if (hi && hi != lo)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "%s %llu does not divide %s (%llu); nearest valid: %llu or "
		    "%llu", flag, (unsigned long long)v, what,
		    (unsigned long long)n, (unsigned long long)lo,
		    (unsigned long long)hi);
	else
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "%s %llu does not divide %s (%llu); nearest valid: %llu",
		    flag, (unsigned long long)v, what, (unsigned long long)n,
		    (unsigned long long)lo);
}

int
vp_plan_check(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d)
{
	size_t before = vp_diags_count(d, VP_ERROR);
	unsigned tp = p->tp ? p->tp : 1, pp = p->pp ? p->pp : 1;

	if (m->heads % tp != 0)
		bad_divisor(d, "--tp", tp, "the attention heads", m->heads);
	else if (m->kv_heads % tp != 0 && tp % m->kv_heads != 0)
		bad_divisor(d, "--tp", tp, "the key/value heads", m->kv_heads);
	if (m->ffn % tp != 0)
		bad_divisor(d, "--tp", tp, "the MLP size", m->ffn);
	if (pp > m->layers)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "--pp %u is deeper than the model's %llu layers; at most "
		    "%llu", pp, (unsigned long long)m->layers,
		    (unsigned long long)m->layers);
	if (m->pos == VP_POS_LEARNED && m->max_seq && p->seq > m->max_seq)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "--seq %llu is longer than the %llu positions the model "
		    "has learned", (unsigned long long)p->seq,
		    (unsigned long long)m->max_seq);
	if (p->seq < 2 && m->arch == VP_ARCH_DECODER)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "--seq must be at least 2 for a causal language model "
		    "(the loss shifts by one token)");
	if (p->cp > 1) {
		if (p->attention == VP_ATTN_EAGER)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
			    "--cp %u needs an attention that splits the sequence "
			    "(--attention sdpa or flash); eager attention "
			    "materialises the whole score matrix", p->cp);
		else if (p->seq % (2 * p->cp) != 0)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
			    "--seq %llu must be a multiple of 2 x --cp (%u) for "
			    "load-balanced context parallelism",
			    (unsigned long long)p->seq, 2 * p->cp);
	}
	if (p->ep > 1) {
		if (!m->has_moe)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
			    "--ep %u needs a mixture-of-experts model; '%s' has "
			    "no experts", p->ep, m->name);
		else if (m->moe.experts % p->ep != 0)
			bad_divisor(d, "--ep", p->ep, "the experts",
			    m->moe.experts);
	}
	if (p->vpp > 1) {
		if (pp == 1)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
			    "--vpp %u needs pipeline parallelism (--pp 2 or "
			    "more)", p->vpp);
		else if (m->layers % ((uint64_t)pp * p->vpp) != 0)
			bad_divisor(d, "--pp x --vpp", (uint64_t)pp * p->vpp,
			    "the layers", m->layers);
	}
	if (p->sp && tp == 1)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "--sp shards along the tensor-parallel group; it needs "
		    "--tp 2 or more");
	if (p->zero > 0 && p->fsdp != VP_FSDP_NONE)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "--zero and --fsdp are two ways to shard; give one");
	if (p->gpus_per_node && tp > p->gpus_per_node)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "--tp %u spans nodes of %u GPUs; tensor parallelism stays "
		    "inside a node", tp, p->gpus_per_node);
	if (p->lora_rank > 0) {
		unsigned avail = vp_lora_available(m), bad = p->lora_targets &
		    ~avail, i;
		struct vp_matrix mx[VP_MAX_MATRICES];
		size_t n = vp_model_matrices(m, p, 1, mx), k;

		for (i = 0; i < VP_LORA_TARGET_COUNT; i++)
			if (bad & (1u << i)) {
				struct vp_buf names;
				unsigned j;

				vp_buf_init(&names);
				for (j = 0; j < VP_LORA_TARGET_COUNT; j++)
					if (avail & (1u << j))
						vp_buf_printf(&names, "%s%s",
						    names.len ? ", " : "",
						    vp_lora_target_names[j]);
				vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 },
				    VP_ERROR, "--lora-targets: '%s' has no '%s' "
				    "projection; its targets are: %s", m->name,
				    vp_lora_target_names[i], names.s);
				vp_buf_free(&names);
			}
		/* A rank past the smaller side of a matrix adds nothing. */
		for (k = 0; k < n; k++)
			if ((mx[k].lora_bits & p->lora_targets) &&
			    (p->lora_rank > mx[k].rows ||
			    p->lora_rank > mx[k].cols))
				vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 },
				    VP_ERROR, "--lora %u is larger than the '%s' "
				    "matrix (%llu x %llu); at most %llu", p->lora_rank,
				    mx[k].name, (unsigned long long)mx[k].rows,
				    (unsigned long long)mx[k].cols,
				    (unsigned long long)(mx[k].rows < mx[k].cols ?
				    mx[k].rows : mx[k].cols));
	}
	if (p->quant != VP_QUANT_NONE) {
		if (p->lora_rank == 0)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
			    "--quant %s freezes the base weights; train adapters "
			    "with --lora RANK (QLoRA)", vp_quant_names[p->quant]);
		if (p->device != VP_DEVICE_CUDA)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
			    "--quant %s needs CUDA: bitsandbytes has no CPU "
			    "kernels for training", vp_quant_names[p->quant]);
		if (m->impl == VP_IMPL_TORCH_NN)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
			    "--quant cannot quantize a torch.nn.MultiheadAttention "
			    "model: its packed in_proj is not an nn.Linear that "
			    "bitsandbytes replaces");
	}
	if (p->precision == VP_PREC_FP8 && p->quant != VP_QUANT_NONE)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "--precision fp8 and --quant %s do not combine: Transformer "
		    "Engine does not run bitsandbytes layers",
		    vp_quant_names[p->quant]);
	if (p->precision == VP_PREC_FP8 && p->device != VP_DEVICE_CUDA)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "--precision fp8 needs CUDA (Transformer Engine)");
	if (p->offload_nvme && p->offload == VP_OFFLOAD_NONE)
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "--offload-nvme says where to offload; choose what with "
		    "--offload optimizer|params|optimizer+params");
	if (world > 0) {
		unsigned mp = tp * pp * (p->cp ? p->cp : 1);

		if (world % mp != 0)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 },
			    VP_ERROR, "%u GPUs cannot be split into --tp %u x "
			    "--pp %u x --cp %u (%u GPUs per replica)", world,
			    tp, pp, p->cp ? p->cp : 1, mp);
		else if (p->dp && p->dp * mp != world)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 },
			    VP_ERROR, "--dp %u x --tp %u x --pp %u x --cp %u is "
			    "%u GPUs, but --gpus gives %u", p->dp, tp, pp,
			    p->cp ? p->cp : 1, p->dp * mp, world);
		else if (p->ep > 1 && (world / mp) % p->ep != 0)
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 },
			    VP_ERROR, "--ep %u must divide the data-parallel "
			    "group (%u GPUs)", p->ep, world / mp);
	}
	return vp_diags_count(d, VP_ERROR) == before ? 0 : -1;
}
