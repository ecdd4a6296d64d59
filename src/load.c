/*
 * load.c — the model-loading phase (load.h).
 *
 * VP_LOAD_TORCHTUNE_0_1 replays the allocations of torchtune 0.1's model
 * builders (pytorch/torchtune fef3ed1, April 2024: lora_llama2 and
 * TransformerDecoder; torchao 0.1's NF4Tensor.from_tensor and its
 * deep copy) run under `with torch.device("cuda")`, in order:
 *
 *   one block (the template): q, k, v, output_proj, the rotary cache,
 *     w1, w2, w3, the two RMSNorm scales;
 *   tok_embeddings and the output projection (bf16, made in place);
 *   the final norm;
 *   copy.deepcopy(block) once per layer (_get_clones): sa_norm, q, k, v,
 *     output_proj, the rotary buffers, mlp_norm, w1, w2, w3;
 *   the template freed when the builder returns.
 *
 * A linear that LoRA adapts is a LoRALinear: its weight is made as an
 * nn.Linear in the model dtype (bf16) and, with --quant nf4, converted
 * by to_nf4 (create_steps); a deep copy of an NF4 weight dequantizes it
 * and quantizes it again (clone_steps).  Other weights are one
 * allocation, made or copied.  The two step tables are the allocation
 * stream of those functions, read on the CPU with PyTorch 2.13's
 * profiler (profile_memory) from the real code (torchtune fef3ed1,
 * torchao 0.1) building Llama-2-7B with one layer, and written in terms
 * of the weight's numel n and the adapters' sizes; the same symbolic
 * sequence reproduces both q_proj (4096 x 4096) and w1 (11008 x 4096) to
 * the byte (calib/load_capture.py makes and checks the tables).  The
 * stream fed to alloc.c reproduces the capture's own replay (one layer:
 * max_memory_allocated 3.536 GiB, reserved 4.283 GiB); for the 32-layer
 * Llama-2-7B it reserves 8.506 GiB, and torchtune's QLoRA tutorial
 * (docs/source/tutorials/qlora_finetune.rst at fef3ed1) logged 9.13 GB
 * (8.503 GiB) "peak memory reserved, model init".
 *
 * load_state_dict afterwards allocates nothing on the GPU: torchao 0.1's
 * copy_ quantizes the checkpoint's CPU tensor on the CPU and copies the
 * parts in place.
 */
#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "load.h"
#include "util.h"

/* What a step's size is a multiple of. */
enum { U_ONE, U_N, U_LA, U_LB };

/* 'a': allocate unit x num / den bytes; 'f': free the allocation made by
 * step ref of the same table. */
struct step {
	char op;
	short ref;
	unsigned char unit;
	uint32_t num, den;
};

/* One quantized linear made: nn.Linear in the model dtype, to_nf4, the
 * adapters (capture lines 1-73 and 325-397). */
static const struct step create_steps[] = {
	{ 'a', -1, U_N, 2, 1 },
	{ 'a', -1, U_ONE, 32, 1 },
	{ 'a', -1, U_N, 2, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_N, 1, 8 },
	{ 'f', 2, U_ONE, 0, 1 },
	{ 'f', 4, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'a', -1, U_ONE, 4, 1 },
	{ 'a', -1, U_N, 1, 16 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'f', 10, U_ONE, 0, 1 },
	{ 'f', 9, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_ONE, 4, 1 },
	{ 'f', 14, U_ONE, 0, 1 },
	{ 'f', 13, U_ONE, 0, 1 },
	{ 'f', 8, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 3, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_N, 1, 8192 },
	{ 'a', -1, U_N, 1, 2048 },
	{ 'f', 20, U_ONE, 0, 1 },
	{ 'f', 22, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 26, U_ONE, 0, 1 },
	{ 'f', 25, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 32, U_ONE, 0, 1 },
	{ 'f', 31, U_ONE, 0, 1 },
	{ 'f', 30, U_ONE, 0, 1 },
	{ 'f', 27, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 38, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 39, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 64 },
	{ 'f', 18, U_ONE, 0, 1 },
	{ 'f', 21, U_ONE, 0, 1 },
	{ 'f', 41, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 2, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_N, 1, 8 },
	{ 'f', 47, U_ONE, 0, 1 },
	{ 'f', 49, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 2, 1 },
	{ 'a', -1, U_N, 32, 1 },
	{ 'a', -1, U_N, 32, 1 },
	{ 'f', 53, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 2, 1 },
	{ 'a', -1, U_N, 8, 1 },
	{ 'f', 56, U_ONE, 0, 1 },
	{ 'f', 54, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_N, 4, 1 },
	{ 'f', 60, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 4, 1 },
	{ 'f', 61, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 2 },
	{ 'f', 48, U_ONE, 0, 1 },
	{ 'f', 52, U_ONE, 0, 1 },
	{ 'f', 57, U_ONE, 0, 1 },
	{ 'f', 63, U_ONE, 0, 1 },
	{ 'f', 0, U_ONE, 0, 1 },
	{ 'a', -1, U_LA, 1, 1 },
	{ 'a', -1, U_LB, 1, 1 },
};
/* One quantized linear deep-copied: NF4Tensor dequantized and quantized
 * again, the adapters copied (capture lines 550-676 and 1065-1191). */
static const struct step clone_steps[] = {
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_ONE, 1, 1 },
	{ 'a', -1, U_N, 1, 2 },
	{ 'f', 1, U_ONE, 0, 1 },
	{ 'f', 0, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 4, 1 },
	{ 'f', 2, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_ONE, 1, 1 },
	{ 'a', -1, U_N, 1, 2 },
	{ 'f', 8, U_ONE, 0, 1 },
	{ 'f', 7, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 4, 1 },
	{ 'f', 9, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 1 },
	{ 'a', -1, U_N, 1, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 16, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 17, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 1 },
	{ 'a', -1, U_N, 1, 1 },
	{ 'f', 21, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 1 },
	{ 'a', -1, U_N, 1, 1 },
	{ 'f', 24, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 2, 1 },
	{ 'f', 5, U_ONE, 0, 1 },
	{ 'f', 12, U_ONE, 0, 1 },
	{ 'f', 14, U_ONE, 0, 1 },
	{ 'f', 15, U_ONE, 0, 1 },
	{ 'f', 19, U_ONE, 0, 1 },
	{ 'f', 22, U_ONE, 0, 1 },
	{ 'f', 25, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 32, 1 },
	{ 'a', -1, U_N, 2, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_N, 1, 8 },
	{ 'f', 36, U_ONE, 0, 1 },
	{ 'f', 38, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'a', -1, U_ONE, 4, 1 },
	{ 'a', -1, U_N, 1, 16 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'f', 44, U_ONE, 0, 1 },
	{ 'f', 43, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_ONE, 4, 1 },
	{ 'f', 48, U_ONE, 0, 1 },
	{ 'f', 47, U_ONE, 0, 1 },
	{ 'f', 42, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 37, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_N, 1, 8192 },
	{ 'a', -1, U_N, 1, 2048 },
	{ 'f', 54, U_ONE, 0, 1 },
	{ 'f', 56, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 60, U_ONE, 0, 1 },
	{ 'f', 59, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 66, U_ONE, 0, 1 },
	{ 'f', 65, U_ONE, 0, 1 },
	{ 'f', 64, U_ONE, 0, 1 },
	{ 'f', 61, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 72, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'f', 73, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 64 },
	{ 'f', 52, U_ONE, 0, 1 },
	{ 'f', 55, U_ONE, 0, 1 },
	{ 'f', 75, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 2, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_N, 1, 8 },
	{ 'f', 81, U_ONE, 0, 1 },
	{ 'f', 83, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 2, 1 },
	{ 'a', -1, U_N, 32, 1 },
	{ 'a', -1, U_N, 32, 1 },
	{ 'f', 87, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 2, 1 },
	{ 'a', -1, U_N, 8, 1 },
	{ 'f', 90, U_ONE, 0, 1 },
	{ 'f', 88, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 8, 1 },
	{ 'a', -1, U_N, 4, 1 },
	{ 'f', 94, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 4, 1 },
	{ 'f', 95, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 2 },
	{ 'f', 82, U_ONE, 0, 1 },
	{ 'f', 86, U_ONE, 0, 1 },
	{ 'f', 91, U_ONE, 0, 1 },
	{ 'f', 97, U_ONE, 0, 1 },
	{ 'f', 27, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 64 },
	{ 'a', -1, U_ONE, 1, 1 },
	{ 'f', 106, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 32 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'f', 109, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'f', 112, U_ONE, 0, 1 },
	{ 'a', -1, U_N, 1, 2 },
	{ 'a', -1, U_ONE, 1, 1 },
	{ 'f', 115, U_ONE, 0, 1 },
	{ 'a', -1, U_ONE, 32, 1 },
	{ 'a', -1, U_ONE, 2, 1 },
	{ 'f', 118, U_ONE, 0, 1 },
	{ 'f', 77, U_ONE, 0, 1 },
	{ 'f', 67, U_ONE, 0, 1 },
	{ 'f', 41, U_ONE, 0, 1 },
	{ 'f', 99, U_ONE, 0, 1 },
	{ 'f', 35, U_ONE, 0, 1 },
	{ 'a', -1, U_LA, 1, 1 },
	{ 'a', -1, U_LB, 1, 1 },
};

#define NSTEP(t) (sizeof(t) / sizeof((t)[0]))

/* The replay: the allocator and the handles of what stays alive. */
struct ctx {
	struct vp_alloc *a;
	vp_alloc_handle *keep;	/* the template's, freed at the end */
	size_t nkeep, capkeep;
	bool failed;
};

static vp_alloc_handle
alloc(struct ctx *c, uint64_t bytes)
{
	vp_alloc_handle h = 0;

	if (!c->failed && vp_alloc_allocate(c->a, bytes, 0, &h) != VP_ALLOC_OK)
		c->failed = true;
	return h;
}

static void
keep(struct ctx *c, bool tmpl, vp_alloc_handle h)
{
	if (!tmpl || !h)
		return;		/* a copy's tensors stay for good */
	if (c->nkeep == c->capkeep) {
		c->capkeep = c->capkeep ? 2 * c->capkeep : 64;
		c->keep = xrealloc(c->keep, c->capkeep * sizeof *c->keep);
	}
	c->keep[c->nkeep++] = h;
}

/* One linear: in -> out features; lora/quant as the plan says. */
struct lin {
	uint64_t in, out;
	bool lora, quant;
};

static void
linear(struct ctx *c, const struct lin *l, const struct vp_plan *p,
    bool tmpl)
{
	const struct step *t = tmpl ? create_steps : clone_steps;
	size_t n = tmpl ? NSTEP(create_steps) : NSTEP(clone_steps), i;
	uint64_t numel = l->in * l->out, ab = vp_dtype_bytes[p->lora_dtype];
	vp_alloc_handle h[NSTEP(clone_steps) > NSTEP(create_steps) ?
	    NSTEP(clone_steps) : NSTEP(create_steps)];
	bool dead[sizeof h / sizeof h[0]];

	if (!l->quant) {
		/* nn.Linear's weight, made (in place init) or copied. */
		keep(c, tmpl, alloc(c, numel * 2));
		if (l->lora) {
			keep(c, tmpl, alloc(c, p->lora_rank * l->in * ab));
			keep(c, tmpl, alloc(c, l->out * p->lora_rank * ab));
		}
		return;
	}
	for (i = 0; i < n; i++) {
		uint64_t u;

		dead[i] = true;
		h[i] = 0;
		if (t[i].op == 'f') {
			assert(t[i].ref >= 0 && (size_t)t[i].ref < i);
			(void)vp_alloc_deallocate(c->a, h[t[i].ref]);
			dead[t[i].ref] = true;
			continue;
		}
		switch (t[i].unit) {
		case U_N:
			u = numel;
			break;
		case U_LA:	/* lora_a: rank x in, in the adapters' dtype */
			u = p->lora_rank * l->in * ab;
			break;
		case U_LB:
			u = l->out * p->lora_rank * ab;
			break;
		default:
			u = 1;
			break;
		}
		h[i] = alloc(c, u * t[i].num / t[i].den);
		dead[i] = false;
	}
	for (i = 0; i < n; i++)
		if (!dead[i])
			keep(c, tmpl, h[i]);
}

/*
 * RotaryPositionalEmbeddings(head_dim, max_seq_len): theta (head_dim/2
 * fp32, from an int64 arange), then seq_idx, the outer product, cos, sin
 * and the stacked cache (max_seq_len x head_dim/2 x 2, fp32); a copy
 * holds theta and the cache.
 */
static void
rope(struct ctx *c, uint64_t hd, uint64_t seq, bool tmpl)
{
	uint64_t h2 = hd / 2, sh = seq * h2 * 4;
	vp_alloc_handle t0, t1, t2, t3, t4, t5;

	if (!tmpl) {
		(void)alloc(c, h2 * 4);
		(void)alloc(c, 2 * sh);
		return;
	}
	t0 = alloc(c, h2 * 8);
	t1 = alloc(c, h2 * 4);
	(void)vp_alloc_deallocate(c->a, t0);
	t0 = alloc(c, h2 * 4);
	(void)vp_alloc_deallocate(c->a, t1);
	keep(c, true, alloc(c, h2 * 4));	/* theta */
	(void)vp_alloc_deallocate(c->a, t0);
	t2 = alloc(c, seq * 4);
	t3 = alloc(c, sh);
	t4 = alloc(c, sh);
	t5 = alloc(c, sh);
	keep(c, true, alloc(c, 2 * sh));	/* cache */
	(void)vp_alloc_deallocate(c->a, t5);
	(void)vp_alloc_deallocate(c->a, t4);
	(void)vp_alloc_deallocate(c->a, t2);
	(void)vp_alloc_deallocate(c->a, t3);
}

const char *
vp_load_unsupported(const struct vp_model *m, const struct vp_plan *p)
{
	if (p->load == VP_LOAD_NONE)
		return NULL;
	if (p->device != VP_DEVICE_CUDA)
		return "--load models the CUDA caching allocator: it needs "
		    "--device cuda";
	if (p->precision != VP_PREC_BF16)
		return "--load torchtune-0.1 builds the model in bf16: it "
		    "needs --precision bf16";
	if (m->has_moe || m->pos != VP_POS_ROPE || m->norm != VP_NORM_RMSNORM ||
	    !vp_act_gated(m->act) || m->tie_embeddings || m->bias ||
	    m->post_norms || m->max_seq == 0)
		return "--load torchtune-0.1 builds torchtune's Llama 2 "
		    "decoder (rotary positions, RMSNorm, a gated MLP, untied "
		    "embeddings, no biases, a maximum length)";
	if (p->quant != VP_QUANT_NONE && p->quant != VP_QUANT_NF4)
		return "--load torchtune-0.1 quantizes with torchao's NF4: it "
		    "needs --quant nf4 or none";
	/* torchtune 0.1 quantizes the LoRA linears only (quantize_base);
	 * --quant quantizes every block linear, as bitsandbytes does. */
	if (p->quant == VP_QUANT_NF4 && (p->lora_targets &
	    VP_LORA_ALL_LINEAR) != VP_LORA_ALL_LINEAR)
		return "--load torchtune-0.1 with --quant nf4 needs "
		    "--lora-targets on every block linear (all-linear): "
		    "torchtune 0.1 quantizes only the linears LoRA adapts";
	return NULL;
}

int
vp_load_estimate(const struct vp_model *m, const struct vp_plan *p,
    struct vp_load_peak *out)
{
	struct vp_alloc_conf conf;
	struct ctx c;
	const struct vp_alloc_stats *st;
	uint64_t d = m->hidden, hd = m->head_dim, qd = m->heads * hd,
	    kvd = m->kv_heads * hd, f = m->ffn, v = m->vocab, l;
	/* torchtune's block order: q, k, v, output_proj; w1, w2, w3. */
	struct lin lin[7] = {
		{ d, qd, false, false }, { d, kvd, false, false },
		{ d, kvd, false, false }, { qd, d, false, false },
		{ d, f, false, false }, { f, d, false, false },
		{ d, f, false, false },
	};
	struct lin head = { d, v, false, false };
	static const enum vp_lora_target role[7] = { VP_LORA_Q, VP_LORA_K,
		VP_LORA_V, VP_LORA_O, VP_LORA_GATE, VP_LORA_DOWN, VP_LORA_UP };
	size_t k;
	int i;

	memset(out, 0, sizeof *out);
	if (vp_load_unsupported(m, p) != NULL || p->load == VP_LOAD_NONE)
		return -1;
	for (i = 0; i < 7; i++) {
		lin[i].lora = p->lora_rank &&
		    (p->lora_targets & (1u << role[i]));
		/* quantize_base applies to the LoRA linears only */
		lin[i].quant = lin[i].lora && p->quant == VP_QUANT_NF4;
	}
	vp_alloc_conf_init(&conf);
	memset(&c, 0, sizeof c);
	c.a = vp_alloc_new(&conf, 0);
	/* The template block. */
	for (i = 0; i < 4; i++)
		linear(&c, &lin[i], p, true);
	rope(&c, hd, m->max_seq, true);
	for (i = 4; i < 7; i++)
		linear(&c, &lin[i], p, true);
	keep(&c, true, alloc(&c, d * 2));
	keep(&c, true, alloc(&c, d * 2));
	/* tok_embeddings, output (a LoRALinear with apply_lora_to_output,
	 * never quantized), the final norm. */
	(void)alloc(&c, v * d * 2);
	head.lora = p->lora_rank && (p->lora_targets & (1u << VP_LORA_HEAD));
	linear(&c, &head, p, false);
	(void)alloc(&c, d * 2);
	/* One deep copy per layer. */
	for (l = 0; l < m->layers && !c.failed; l++) {
		(void)alloc(&c, d * 2);
		for (i = 0; i < 4; i++)
			linear(&c, &lin[i], p, false);
		rope(&c, hd, m->max_seq, false);
		(void)alloc(&c, d * 2);
		for (i = 4; i < 7; i++)
			linear(&c, &lin[i], p, false);
	}
	for (k = 0; k < c.nkeep; k++)
		(void)vp_alloc_deallocate(c.a, c.keep[k]);
	st = vp_alloc_stats(c.a);
	if (!c.failed) {
		out->allocated_peak = st->allocated_bytes.peak;
		out->reserved_bytes = st->reserved_bytes.peak;
		out->allocated_end = st->allocated_bytes.current;
	}
	free(c.keep);
	vp_alloc_free(c.a);
	return c.failed ? -1 : 0;
}
