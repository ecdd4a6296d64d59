/*
 * plan_search.c — the planner and the inverse queries (see plan_search.h).
 *
 * The search enumerates the open knobs: tensor parallel (inside a node,
 * dividing heads, kv heads and ffn), pipeline parallel (up to the layer
 * count), context parallel (with an attention that can split), expert
 * parallel (dividing the experts and the data-parallel group), the
 * sharding strategy, and recompute.  Each plan's memory is the worst of its
 * first and last pipeline stages (the first holds the most micro-batches
 * in flight and the embeddings, the last the logits), from the fast replay.
 * Plans that fit are ranked by estimated tokens per second, then headroom.
 */
#include "plan_search.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "lgraph.h"
#include "util.h"

/* One pipeline stage's device peak. */
static uint64_t
stage_peak(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, unsigned stage, bool fast)
{
	struct vp_plan q = *p;
	struct vp_mem r;

	q.stage = stage;
	if (fast)
		vp_mem_estimate_fast(m, &q, o, &r);
	else
		vp_mem_estimate(m, &q, o, &r);
	return r.device_peak;
}

/*
 * The worst of the first and the last stage: middle stages hold less
 * than the first (fewer micro-batches in flight, no embeddings) and no
 * logits, when their blocks are alike.  A model whose first blocks are
 * dense and the rest experts (DeepSeek's first_k_dense_replace,
 * Qwen-MoE's mlp_only_layers, Llama 4's interleaving) breaks that: the
 * second stage, all experts, can hold more than the first (measured:
 * DeepSeek-V2-Lite on PP 8, stage 1 4.0 GiB over stage 0), so every
 * stage is replayed.  When the first stage alone is over bound the plan
 * cannot fit and the others are not replayed: *exact is then false and
 * the peak a lower bound.
 */
static uint64_t
worst_peak(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, uint64_t bound, bool fast,
    unsigned *worst_stage, bool *exact)
{
	unsigned pp = p->pp, st;
	uint64_t worst = stage_peak(m, p, o, 0, fast), v;
	bool mixed = m->has_moe && vp_moe_dense_blocks(m, 0, m->layers) > 0;

	*worst_stage = 0;
	*exact = pp == 1 || worst <= bound;
	if (pp == 1 || !*exact)
		return worst;
	for (st = mixed ? 1 : pp - 1; st < pp; st++) {
		v = stage_peak(m, p, o, st, fast);
		if (v > worst) {
			worst = v;
			*worst_stage = st;
		}
	}
	return worst;
}

uint64_t
vp_plan_worst_peak(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, unsigned *worst_stage, bool fast)
{
	bool exact;

	return worst_peak(m, p, o, UINT64_MAX, fast, worst_stage, &exact);
}

uint64_t
vp_plan_host_per_node(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, unsigned world)
{
	struct vp_plan q = *p;
	struct vp_mem r;
	unsigned per_node = p->gpus_per_node && p->gpus_per_node < world ?
	    p->gpus_per_node : world;

	q.stage = 0;
	vp_mem_estimate_fast(m, &q, o, &r);
	return vp_mul_sat(r.host_bytes, per_node);
}

/* Which knob an inverse query grows, in what unit. */
enum grow { GROW_MICRO_BATCH, GROW_SEQ };

static bool
fits_at(const struct vp_model *m, const struct vp_plan *base, enum grow k,
    uint64_t v, const struct vp_mem_opts *o, uint64_t cap)
{
	struct vp_plan p = *base;
	unsigned st;

	if (k == GROW_MICRO_BATCH)
		p.micro_batch = v;
	else
		p.seq = v;
	return vp_plan_worst_peak(m, &p, o, &st, true) <= cap;
}

/*
 * The largest multiple of unit up to limit that fits.  Memory grows
 * monotonically with micro-batch and sequence: double, then bisect
 * between the last value that fits and the first that does not.
 */
static uint64_t
largest_fit(const struct vp_model *m, const struct vp_plan *p, enum grow k,
    uint64_t unit, uint64_t limit, const struct vp_mem_opts *o, uint64_t cap)
{
	uint64_t lo = 0, hi = 1;

	limit /= unit;
	while (hi <= limit && fits_at(m, p, k, hi * unit, o, cap)) {
		lo = hi;
		hi *= 2;
	}
	if (hi > limit)
		hi = limit + 1;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (fits_at(m, p, k, mid * unit, o, cap))
			lo = mid;
		else
			hi = mid;
	}
	return lo * unit;
}

uint64_t
vp_max_micro_batch(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, uint64_t cap, uint64_t limit)
{
	return largest_fit(m, p, GROW_MICRO_BATCH, 1, limit, o, cap);
}

uint64_t
vp_max_seq(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, uint64_t cap, uint64_t limit)
{
	if (m->pos == VP_POS_LEARNED && m->max_seq && m->max_seq < limit)
		limit = m->max_seq;
	/* In units of 128 tokens, times cp so every rank gets whole ones. */
	return largest_fit(m, p, GROW_SEQ, 128 * p->cp, limit,
	    o, cap);
}

static double
peak_tflops(const struct vp_gpu *g, enum vp_precision prec,
    enum vp_float8 f8)
{
	/* Transformer Engine and torchao's float8 linears run the
	 * matmuls at the fp8 rate. */
	if (prec == VP_PREC_FP8 || f8 != VP_FLOAT8_NONE)
		return g->fp8_tflops;
	switch (vp_prec_info[prec].compute) {
	case VP_BF16: return g->bf16_tflops;
	case VP_FP16: return g->fp16_tflops;
	default: return g->fp32_tflops;
	}
}

/*
 * The time model's constants, and what it assumes in words: this text is
 * its one description (compare --explain prints it; the report's "Time"
 * line and vramplan(1)'s "The time model" say the same, shorter and
 * longer).  Change the code, the constants and the text together.
 */
#define LINK_EFF_PCT 70		/* of a link's bandwidth a collective gets */
#define LINK_EFF (LINK_EFF_PCT / 100.0)
#define NO_LINK_GBS 16		/* GPU-to-GPU GB/s of a card without one */
#define INTER_NODE_GBS 25	/* per GPU between nodes, card without NICs */
#define MEM_EFF_PCT 80		/* of the memory bandwidth streaming gets */
/* Matmuls of a card without a measured rate: the median efficiency of
 * the NVIDIA rows of stas00/ml-engineering's Maximum Achievable Matmul
 * FLOPS table (A100 SXM 86.9, GH200 83.8, A100 PCIe 81.1, H100 80.3,
 * B300 78.6, B200 77.6, GB200 72.9 %). */
#define GEMM_EFF_PCT 80
/* Attention through SDPA's flash kernel (FlashAttention-2): 50-73 % of
 * the A100's peak (Dao 2023, arXiv:2307.08691, abstract; the backward,
 * 2.5 of its 3.5 parts, at the low end), 35 % on the H100 (Shah et al.
 * 2024, FlashAttention-3, arXiv:2407.08608, abstract). */
#define ATTN_EFF_PCT 50
#define ATTN_EFF_HOPPER_PCT 35
/* NCCL's ring/Simple latency model, microseconds: a base per collective
 * and one per step by the link it crosses (NVIDIA/nccl
 * src/graph/tuning.cc, baseLat and hwLat). */
#define NCCL_BASE_US 8.4
#define NCCL_NVLINK_US 3.4
#define NCCL_PCI_US 5.7
#define NCCL_NET_US 9.6
/* NCCL's topology model puts 12 GB/s on a 100 Gb/s NIC (src/graph/topo.h,
 * NET_BW): 96 % of the line rate. */
#define NCCL_NET_EFF (12.0 / 12.5)
/*
 * Memory-bound kernels of a block (norms, RoPE, activations, residual
 * adds, casts, their backward), bytes per token: measured on one
 * transformers 5.24 LlamaDecoderLayer in bf16 with PyTorch 2.13 eager
 * (every aten op but matmuls, attention and views, inputs plus outputs,
 * counted under a TorchDispatchMode; ffn 1024 and 2048 at hidden 512):
 * forward and backward 428 h + 28 ffn, the forward alone 125 h + 10 ffn.
 * An ungated MLP (GPT-2's block, GELU-tanh, ffn 4h: 458 h in all) leaves
 * 7.5 per ffn unit.  calib/elementwise_bytes.py repeats the measurements.
 */
#define EW_H 428.0
#define EW_FFN_GATED 28.0
#define EW_FFN_PLAIN 7.5
#define EW_FWD_H 125.0
#define EW_FWD_FFN 10.0
/* The loss over the logits, forward and backward, bytes per token and
 * vocabulary entry, measured the same way (cross_entropy after the head's
 * matmul): 44 with the logits upcast to fp32 first, as CUDA autocast and
 * the families' own `logits.float()` do (16 without). */
#define EW_LOSS 44.0
#define STR_(x) #x
#define STR(x) STR_(x)

const char *const vp_time_assumptions =
    "Time model assumptions (a step is " VP_TIME_SUMMARY "):\n"
    "  - FLOPs per token: 6 P (4 P with LoRA) in matmuls + 3 A in "
    "attention, A = 2 s (q/k width + v width) over the blocks that attend, "
    "halved when causal (2 L s h for a Llama decoder; MLA's head widths; "
    "none for Mamba-2 or MLP blocks); a Mamba-2 block's chunked scan "
    "6 (Q (n + p) + 2 n p) per head (a Mamba-1 block's 30 inner x state), "
    "and a Zamba2 shared block's matmuls "
    "at every call, at the matmul rate; full recompute "
    "adds 2 P + A and the scan, selective recompute with eager attention "
    "A, op recompute P (every second matmul) plus A unless attention is "
    "sdpa (with --recompute-stride N, times the share of blocks "
    "recomputed)\n"
    "  - matmuls at the card's measured matmul rate (the catalog's "
    "achievable gemm_bf16/gemm_fp8: maximum achievable matmul FLOPS), else "
    STR(GEMM_EFF_PCT) " % of its dense peak for the compute dtype (fp8 and "
    "--float8: fp8); a roofline per block matmul (its bytes at the memory "
    "bandwidth) slows small ones\n"
    "  - attention (sdpa, flash) at " STR(ATTN_EFF_PCT) " % of the 16-bit "
    "peak (FlashAttention-2 on the A100), " STR(ATTN_EFF_HOPPER_PCT) " % on "
    "Hopper and Blackwell (FlashAttention-2 on the H100); eager attention's "
    "two matmuls at the matmul rate plus its score matrix (36 bytes per "
    "score: forward and backward) at the memory bandwidth\n"
    "  - memory-bound work at " STR(MEM_EFF_PCT) " % of the card's bandwidth: "
    "the block's elementwise kernels as eager PyTorch runs them (measured on "
    "a Llama block: 428 h + 28 ffn bytes per token and layer forward and "
    "backward, 7.5 per ffn for an ungated MLP, the forward's 125 h + 10 ffn "
    "again when recomputed; / tp, tokens / cp), the loss (44 B per token "
    "and vocabulary entry / tp, fp32 logits), the optimizer step (28 B "
    "per local parameter: the shard under ZeRO or FSDP, none with LoRA), "
    "QLoRA's dequantisation (2.5 B per frozen 4-bit weight, 3 B for int8, per "
    "forward, backward and recompute)\n"
    "  - collectives as NCCL's ring model: a latency of " STR(NCCL_BASE_US)
    " us plus " STR(NCCL_NVLINK_US) " (NVLink), " STR(NCCL_PCI_US) " (PCIe) or "
    STR(NCCL_NET_US) " us (network) per step, and the bytes over the bus "
    "bandwidth (all-reduce 2(n-1)/n of the buffer, all-gather and "
    "reduce-scatter (n-1)/n): inside a node the card's measured bus bandwidth "
    "or " STR(LINK_EFF_PCT) " % of its GPU-to-GPU link (" STR(NO_LINK_GBS)
    " GB/s without one), between nodes 96 % of its NICs' line rate per GPU "
    "(NCCL's 12 GB/s per 100 Gb/s; " STR(LINK_EFF_PCT) " % of "
    STR(INTER_NODE_GBS) " GB/s without NICs in the catalog); ranks in Megatron's order (tp, cp, dp, pp from the inside), "
    "a group crossing nodes when its span exceeds --gpus-per-node\n"
    "  - exposed: TP all-reduces (4 per block, 6 per fully recomputed block), "
    "expert all-to-alls (4 per block), pipeline sends (intra-node rate when "
    "neighbouring stages share a node), half the CP ring exchange; "
    "data-parallel traffic overlaps compute and only what compute cannot "
    "hide is exposed, plus one layer's share: DDP and ZeRO-1 reduce 32-bit "
    "gradients once per step (against the last micro-batch's backward), "
    "ZeRO-2 and FSDP grad-op reduce-scatter per micro-batch, ZeRO-3 and FSDP "
    "full re-gather 16-bit parameters per micro-batch forward and backward "
    "(FSDP reduces in fp32, DeepSpeed in 16 bits), hybrid FSDP inside the "
    "node plus a per-step all-reduce of the shard between nodes\n"
    "  - the 1F1B bubble multiplies the micro-batch work by "
    "1 + (pp-1)/(m vpp) for m micro-batches per step; offloaded optimizer "
    "states cross the host link (16-bit gradients down, parameters up, per "
    "step), offloaded parameters twice per micro-batch (CPU Adam's own time "
    "is not modelled)\n"
    "  - a calibrated profile's fitted factor scales the whole step; a plan "
    "is bandwidth-bound when exposed communication plus memory-bound time "
    "exceeds matmul and attention time; no time without the card's TFLOP/s "
    "for the compute dtype, nor on the CPU\n"
    "  - cost = hours x GPUs x the cheapest price the catalog lists for the "
    "card (or --price)\n";

/* The network a plan's collectives cross (bytes/s, microseconds). */
struct net {
	double intra, inter;	/* bus bandwidth inside / between nodes */
	double hop_us;		/* latency of one step inside a node */
	unsigned node;		/* GPUs per node */
};

/* How many nodes a group of n ranks, stride apart, spans. */
static unsigned
span_nodes(unsigned n, unsigned stride, unsigned node)
{
	uint64_t extent = (uint64_t)n * stride;

	if (extent <= node)
		return 1;
	return stride >= node ? n : (unsigned)((extent + node - 1) / node);
}

/*
 * A ring collective over n ranks spanning nodes nodes, as NCCL's tuning
 * model times it: ar for all-reduce (2(n-1) steps), else all-gather or
 * reduce-scatter (n-1 steps) of a buffer of bytes (the gathered size).
 */
static double
coll_time(const struct net *w, double bytes, unsigned n, unsigned nodes,
    bool ar)
{
	double steps = (ar ? 2.0 : 1.0) * (n - 1);
	double inter = (ar ? 2.0 : 1.0) * (nodes - 1);
	double bw = nodes > 1 ? fmin(w->intra, w->inter) : w->intra;

	if (n <= 1 || bytes <= 0)
		return 0;
	return (NCCL_BASE_US + (steps - inter) * w->hop_us +
	    inter * NCCL_NET_US) * 1e-6 + bytes * steps / n / bw;
}

/* A point-to-point send of bytes, inside a node or not. */
static double
send_time(const struct net *w, double bytes, bool across)
{
	return (NCCL_BASE_US + (across ? NCCL_NET_US : w->hop_us)) * 1e-6 +
	    bytes / (across ? fmin(w->intra, w->inter) : w->intra);
}

static void
plan_net(const struct vp_gpu *gpu, unsigned node, struct net *w)
{
	double link = gpu->link_gbs > 0 ? gpu->link_gbs : NO_LINK_GBS;
	double per_gpu;

	w->node = node;
	w->intra = (gpu->intra_busbw_gbs > 0 ? gpu->intra_busbw_gbs :
	    link * LINK_EFF) * 1e9;
	/* Between nodes: the node's NICs shared by its GPUs, at most the
	 * link inside. */
	if (gpu->nics_per_node > 0 && gpu->nic_gbps > 0 &&
	    gpu->gpus_per_node > 0)
		per_gpu = gpu->nics_per_node * gpu->nic_gbps / 8.0 /
		    gpu->gpus_per_node / (gpu->devices_per_card ?
		    gpu->devices_per_card : 1);	/* per device (MI250X: 2) */
	else
		per_gpu = fmin(link, INTER_NODE_GBS);
	w->inter = per_gpu * (gpu->nics_per_node > 0 && gpu->nic_gbps > 0 &&
	    gpu->gpus_per_node > 0 ? NCCL_NET_EFF : LINK_EFF) * 1e9;
	/* NVLink (or a card's own fabric) when its GPU-to-GPU link is
	 * faster than its host link; PCIe otherwise. */
	w->hop_us = !isnan(gpu->host_gbs) && !(link > gpu->host_gbs) ?
	    NCCL_PCI_US : NCCL_NVLINK_US;
}

/* The matmul rate (FLOP/s) of the compute dtype: measured, else a share
 * of the dense peak. */
static double
gemm_rate(const struct vp_gpu *g, const struct vp_plan *p, double peak)
{
	double r;

	if (p->precision == VP_PREC_FP8 || p->float8 != VP_FLOAT8_NONE)
		r = g->gemm_fp8_tflops;
	else if (vp_prec_info[p->precision].compute == VP_BF16)
		r = g->gemm_bf16_tflops;
	else if (vp_prec_info[p->precision].compute == VP_FP16)
		r = g->gemm_bf16_tflops * g->fp16_tflops / g->bf16_tflops;
	else
		r = NAN;
	if (isnan(r) || !(r > 0))
		r = peak * (GEMM_EFF_PCT / 100.0);
	return r * 1e12;
}

/*
 * The roofline slowdown of a block's matmuls: their time when each is
 * the longer of its FLOPs at rate and its bytes (2-byte operands and
 * result) at the memory bandwidth, over their time at rate alone.
 * M is the tokens of one micro-batch on a rank.
 */
static double
roofline(const struct vp_model *m, unsigned tp, double M, double rate,
    double bw)
{
	double h = (double)m->hidden, hd = (double)m->head_dim;
	double nq = (double)m->heads * hd / tp;
	double nkv = 2.0 * (double)m->kv_heads * hd / tp;
	double f = (double)m->ffn / tp;
	double gk[4][2] = {
		{ nq + nkv, h }, { h, nq },
		{ f * (vp_act_gated(m->act) ? 2 : 1), h }, { h, f },
	};
	double fast = 0, slow = 0;
	size_t i;

	if (!(bw > 0) || m->hidden == 0 || m->heads == 0 || m->ffn == 0)
		return 1.0;
	for (i = 0; i < 4; i++) {
		double N = gk[i][0], K = gk[i][1];
		double t = 2.0 * M * N * K / rate;
		double b = 2.0 * (M * K + K * N + M * N) / bw;

		fast += t;
		slow += fmax(t, b);
	}
	return fast > 0 ? slow / fast : 1.0;
}

/*
 * The sequence mixers' work per token of one forward, summed over the
 * blocks, at s tokens: each attention block's two products over the s
 * keys (q.k over the query width, heads x the q/k head dim, and the
 * scores times v over heads x the v head dim; half of the pairs under a
 * causal mask), and each Mamba-2 block's chunked scan (SSD, chunks of Q
 * tokens: C.B within a chunk over the state n, those times x over the
 * head dim p, the chunk's state and its read-out, 2 n p: per head
 * Q (n + p) + 2 n p multiply-adds a token); a Mamba-1 block (Jamba,
 * Mamba) its recurrent scan, about five multiply-adds per element of
 * the inner width x state a token (discretizing A and B x, the update,
 * the read-out; Zamba's mamba heads together).  A Nemotron-H MLP block
 * mixes nothing; a Zamba2 hybrid block does both (its shared block's
 * attention, then a Mamba-2 block; Zamba's a Mamba-1 one), and *scan
 * also counts the shared blocks' calls beyond their first (the matmuls
 * 2 P leaves out; Zamba's one block, called at every hybrid block).
 * *att_blocks is how many blocks attend.  MLA's q/k
 * head is nope + rope wide and its v head v_dim; other families' both
 * are head_dim, which is hidden / heads in most (not Gemma's or
 * Qwen3's).
 */
/* Whether Zamba2's block l is a hybrid one (a shared block's call). */
static bool
zamba2_hybrid(const struct vp_model *m, uint64_t l)
{
	return vp_family_info[vp_model_family(m)].block == VP_BLOCK_ZAMBA2 &&
	    l < strlen(m->ssm.pattern) && m->ssm.pattern[l] == 'H';
}

static void
mixer_flops(const struct vp_model *m, double s, double *att, double *scan,
    double *att_blocks)
{
	double qk = (double)m->heads * (double)m->head_dim, v = qk;
	double causal = m->arch == VP_ARCH_ENCODER ? 1.0 : 0.5;
	double sh = (double)(m->ssm.heads ? m->ssm.heads : m->heads);
	double sp = (double)(m->ssm.head_dim ? m->ssm.head_dim :
	    m->head_dim), sn = (double)m->ssm.state;
	double q = (double)m->ssm.chunk;
	double inner = (double)m->ssm.expand * (double)m->hidden;
	bool mamba1 = vp_family_info[vp_model_family(m)].block ==
	    VP_BLOCK_JAMBA || vp_family_info[vp_model_family(m)].block ==
	    VP_BLOCK_MAMBA1 || vp_model_family(m) == VP_FAMILY_ZAMBA;
	uint64_t l;

	if (vp_family_info[vp_model_family(m)].mla) {
		qk = (double)m->heads * (double)(m->mla.nope_dim +
		    m->mla.rope_dim);
		v = (double)m->heads * (double)m->mla.v_dim;
	}
	if (q <= 0 || q > s)
		q = s;
	*att = *scan = *att_blocks = 0;
	for (l = 0; l < m->layers; l++) {
		bool ssm = vp_layer_ssm(m, l);

		if (ssm && mamba1)
			*scan += 10.0 * inner * sn;
		else if (ssm)
			*scan += 2.0 * sh * (q * (sn + sp) + 2.0 * sn * sp);
		if ((!ssm && vp_layer_kind(m, l) != '-') || zamba2_hybrid(m, l)) {
			*att += 2.0 * causal * s * (qk + v);
			*att_blocks += 1;
		}
	}
	/* Zamba2's shared blocks run at every hybrid block, but 2 P
	 * counts each of the mem_blocks once: the other calls' matmuls. */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_ZAMBA2) {
		uint64_t calls = vp_zamba2_hybrids_before(m, m->layers);
		uint64_t first = calls < vp_zamba2_mem_blocks(m) ? calls :
		    vp_zamba2_mem_blocks(m);

		*scan += 2.0 * (double)(calls - first) *
		    (double)vp_zamba2_shared_params(m);
	}
}


/* A step's time, term by term; vp_time_assumptions above says what each
 * term assumes. */
void
vp_plan_time(const struct vp_model *m, const struct vp_gpu *gpu,
    const struct vp_profile *prof, unsigned world, struct vp_cand *c)
{
	const struct vp_plan *p = &c->plan;
	struct vp_param_count pc;
	struct net w;
	unsigned tp = p->tp, pp = p->pp, cp = p->cp, ep = p->ep;
	unsigned dp = p->dp ? p->dp : 1, node = p->gpus_per_node;
	unsigned vpp = p->vpp ? p->vpp : 1;
	double L = (double)m->layers, h = (double)m->hidden;
	double s = (double)p->seq, mb = (double)p->micro_batch;
	double ga = (double)p->grad_accum, peak, peak16, tokens;
	double fl_mm, fl_att, rate, att_rate, bw, mm = 0, att = 0, memory = 0;
	double comm = 0, dp_mb = 0, dp_step = 0, t_mb, lstage, scale = 1.0;
	double rank_params, local, step;
	double rc_share;	/* of the blocks, those recomputed */
	double att1, scan1, att_blocks;	/* mixer_flops */
	bool fsdp_full, eager;
	uint64_t sb;

	assert(vp_plan_degrees_ok(p) && node >= 1);
	vp_model_params(m, &pc);
	peak = peak_tflops(gpu, p->precision, p->float8);
	c->step_seconds = c->tokens_per_second = NAN;
	c->bandwidth_bound = false;
	if (isnan(peak) || p->device == VP_DEVICE_CPU)
		return;
	/* LoRA: no weight gradients for the frozen base, so backward costs
	 * one forward (input gradients), not two. */
	fl_mm = (p->lora_rank ? 4.0 : 6.0) * (double)pc.active;
	mixer_flops(m, s, &att1, &scan1, &att_blocks);
	fl_att = 3.0 * att1;
	fl_mm += 3.0 * scan1;
	/* LLaVA: the frozen vision tower runs forward only, once per image
	 * (its patches and the class token), not per token. */
	if (m->vis.llava) {
		double fz = (double)vp_llava_frozen_params(m);

		fl_mm -= (p->lora_rank ? 4.0 : 6.0) * fz;
		fl_mm += 2.0 * fz * (double)(vp_llava_image_tokens(m) + 1) / s;
	}
	/* A layer graph: a sample is an image, whose forward is its
	 * convolutions' and linears' multiply-adds (2 FLOPs each), backward
	 * twice that; no sequence, no attention (h is 0). */
	if (m->lg != NULL) {
		fl_mm = 6.0 * vp_lgraph_macs(m->lg, vp_lgraph_image(m, p));
		fl_att = 0;
		s = 1.0;
	}
	/* With a stride only some blocks recompute: the first stage's
	 * share of them stands for the whole model's. */
	sb = vp_stage_blocks(m->layers, pp, 0);
	rc_share = sb ? (double)vp_plan_checkpointed_blocks(p, sb) /
	    (double)sb : 0.0;
	if (p->recompute == VP_RECOMP_FULL) {
		fl_mm += rc_share * (2.0 * (double)pc.active + scan1);
		fl_att += rc_share * att1;
	} else if (p->recompute == VP_RECOMP_SELECTIVE &&
	    p->attention == VP_ATTN_EAGER)
		fl_att += rc_share * att1;
	else if (p->recompute == VP_RECOMP_OP)
		/* Every second matmul again, and attention unless the CUDA
		 * SDPA kernel's output is kept (graph.c, op_policy). */
		fl_mm += rc_share * (double)pc.active, fl_att += rc_share *
		    (p->attention == VP_ATTN_SDPA ? 0.0 : att1);
	/* An encoder-decoder: the encoder's blocks and the embedding run on
	 * the s source tokens, the decoder's and the head on the t target
	 * ones, whose attention covers t (self) and s (cross) keys; per
	 * source token, as `tokens` counts.  rules.c leaves only none and
	 * full recompute. */
	if (m->arch == VP_ARCH_ENCDEC) {
		double tg = (double)vp_plan_target_seq(p);
		double Ld = (double)m->dec_layers;
		double penc = (double)pc.embedding + (double)(pc.layers -
		    m->dec_layers * pc.per_layer);
		double pdec = (double)pc.total - penc;
		double a = h * (L * s * s + Ld * tg * (tg + s));
		double rc = p->recompute == VP_RECOMP_FULL ? 1.0 : 0.0;

		fl_mm = (6.0 + 2.0 * rc) * (penc * s + pdec * tg) / s;
		fl_att = (6.0 + 2.0 * rc) * a / s;
	}
	/* CLIP: a sample is an image and its caption; each tower's blocks
	 * run on its own tokens (the matmuls, 2 FLOPs a multiply-add, and
	 * attention's two products), backward twice the forward. */
	if (vp_model_family(m) == VP_FAMILY_CLIP) {
		double sv = (double)vp_vision_seq(m, p->image ? p->image :
		    m->vis.image), hv = (double)m->vis.hidden;
		double Lv = (double)m->vis.layers, fv = (double)m->vis.ffn;
		double f = (double)m->ffn, fwd_mm, fwd_att;
		double k = p->recompute == VP_RECOMP_FULL ? 4.0 : 3.0;

		fwd_mm = 2.0 * (L * s * (4.0 * h * h + 2.0 * h * f) +
		    Lv * sv * (4.0 * hv * hv + 2.0 * hv * fv));
		fwd_att = 4.0 * (L * s * s * h + Lv * sv * sv * hv);
		fl_mm = k * fwd_mm;
		fl_att = k * fwd_att;
		s = 1.0;
	}
	tokens = mb * s * ga * dp;
	bw = !isnan(gpu->bandwidth_gbs) && gpu->bandwidth_gbs > 0 ?
	    gpu->bandwidth_gbs * 1e9 * (MEM_EFF_PCT / 100.0) : 0;
	/* Matmuls and attention, per step on one rank. */
	rate = gemm_rate(gpu, p, peak);
	mm = fl_mm * tokens / (double)world / rate;
	/* (CLIP's s is one sample here: its towers' tokens are the text's
	 * seq and the image's patches.) */
	if (m->lg == NULL)
		mm *= roofline(m, tp, mb * (vp_model_family(m) ==
		    VP_FAMILY_CLIP ? (double)p->seq : s) / cp, rate, bw);
	peak16 = peak_tflops(gpu, p->precision == VP_PREC_FP8 ?
	    VP_PREC_BF16_MIXED : p->precision, VP_FLOAT8_NONE);
	if (isnan(peak16))
		peak16 = peak;
	eager = p->attention == VP_ATTN_EAGER;
	att_rate = eager ? rate : peak16 * 1e12 * ((gpu->family ==
	    VP_GPU_FAM_HOPPER || gpu->family == VP_GPU_FAM_BLACKWELL) ?
	    ATTN_EFF_HOPPER_PCT : ATTN_EFF_PCT) / 100.0;
	att = fl_att * tokens / (double)world / att_rate;
	lstage = L / pp;
	if (bw > 0) {
		double ffn = (double)(m->has_moe ? m->moe.ffn * m->moe.top_k :
		    m->ffn);
		double rerun = p->recompute == VP_RECOMP_FULL ||
		    p->recompute == VP_RECOMP_OP ? rc_share : 0;
		double act = s / cp * mb * lstage / tp * ga * (EW_H * h +
		    (vp_act_gated(m->act) ? EW_FFN_GATED : EW_FFN_PLAIN) * ffn +
		    rerun * (EW_FWD_H * h + EW_FWD_FFN * ffn));

		/* The loss: the last stage's, every micro-batch. */
		if (m->lg == NULL && m->vocab > 0)
			act += ga * mb * s / cp * (double)m->vocab / tp *
			    EW_LOSS;
		if (eager && m->lg == NULL && L > 0)
			act += 36.0 * (double)m->heads / tp * (s / cp) * s *
			    mb * lstage * (att_blocks / L) * ga;
		if (p->quant != VP_QUANT_NONE)
			act += (p->quant == VP_QUANT_INT8 ? 3.0 : 2.5) *
			    (double)pc.total / tp / pp * ga * (2.0 +
			    (p->recompute != VP_RECOMP_NONE ? rc_share : 0));
		memory = act / bw;
	}
	/* One micro-batch's work, before the bubble. */
	t_mb = (mm + att + memory) / ga;
	plan_net(gpu, node, &w);
	if (tp > 1)
		comm += ga * lstage * (p->recompute == VP_RECOMP_FULL ?
		    4 + 2 * rc_share : 4) * coll_time(&w, mb * s / cp * h * 2,
		    tp, span_nodes(tp, 1, node), true);
	if (ep > 1 && m->has_moe) {
		double bytes = mb * s / cp * m->moe.top_k * h * 2;

		comm += ga * lstage * 4 * coll_time(&w, bytes, ep,
		    span_nodes(ep, tp * cp, node), false);
	}
	if (cp > 1) {
		double bytes = mb * s / cp * (double)m->kv_heads *
		    m->head_dim * 2 * 2 / tp;

		comm += 0.5 * ga * lstage * 3 * (cp - 1) * send_time(&w,
		    bytes, span_nodes(cp, tp, node) > 1);
	}
	if (pp > 1)
		comm += 2.0 * ga * vpp * send_time(&w, mb * s / cp * h * 2,
		    world / pp >= node && world > node);
	/*
	 * Data parallelism: per micro-batch (dp_mb, hidden behind that
	 * micro-batch's compute) and per step (dp_step, behind the last
	 * backward, about two thirds of a micro-batch).
	 */
	fsdp_full = p->zero >= 3 || p->fsdp == VP_FSDP_FULL;
	rank_params = (double)pc.total / tp / pp;
	if (dp > 1 && !p->lora_rank) {
		unsigned nodes = span_nodes(dp, tp * cp, node);
		double gbytes = vp_fw_info[p->framework].fsdp_sharding ||
		    p->fsdp != VP_FSDP_NONE ? 4.0 : (p->zero >= 2 ? 2.0 : 4.0);

		if (p->fsdp == VP_FSDP_HYBRID) {
			unsigned in = node / (tp * cp) ? node / (tp * cp) : 1;
			unsigned shard = in < dp ? in : dp;
			unsigned rep = dp / shard;

			dp_mb = 2 * coll_time(&w, rank_params * 2, shard, 1,
			    false) + coll_time(&w, rank_params * gbytes, shard,
			    1, false);
			if (rep > 1)
				dp_step = coll_time(&w, rank_params / shard *
				    gbytes, rep, span_nodes(rep, tp * cp * shard,
				    node), true);
		} else if (fsdp_full) {
			dp_mb = 2 * coll_time(&w, rank_params * 2, dp, nodes,
			    false) + coll_time(&w, rank_params * gbytes, dp,
			    nodes, false);
		} else if (p->zero == 2 || p->fsdp == VP_FSDP_GRAD_OP) {
			dp_mb = coll_time(&w, rank_params * gbytes, dp, nodes,
			    false);
			dp_step = coll_time(&w, rank_params * 2, dp, nodes,
			    false);
		} else {
			dp_step = coll_time(&w, rank_params * gbytes, dp, nodes,
			    true);
		}
		comm += ga * fmax(0, dp_mb - t_mb) + fmax(0, dp_step -
		    2.0 / 3.0 * t_mb) + (dp_mb + dp_step) / fmax(1, lstage);
	}
	step = (mm + att + memory) * (pp > 1 ? 1.0 + (double)(pp - 1) /
	    (ga * vpp) : 1.0);
	/* The optimizer step and offload transfers, once per step. */
	local = p->lora_rank ? 0 : rank_params /
	    (p->zero >= 1 || p->fsdp != VP_FSDP_NONE ? dp : 1);
	if (p->offload == VP_OFFLOAD_OPTIMIZER || p->offload ==
	    VP_OFFLOAD_ALL) {
		if (!isnan(gpu->host_gbs) && gpu->host_gbs > 0)
			comm += local * 4.0 / (gpu->host_gbs * 1e9);
	} else if (bw > 0) {
		memory += 28.0 * local / bw;
		step += 28.0 * local / bw;
	}
	if ((p->offload == VP_OFFLOAD_PARAMS || p->offload ==
	    VP_OFFLOAD_ALL) && !isnan(gpu->host_gbs) && gpu->host_gbs > 0)
		comm += ga * 2.0 * rank_params / dp * 4.0 /
		    (gpu->host_gbs * 1e9);
	if (prof->calibrated) {
		struct vp_profile d;

		vp_profile_default(gpu, &d);
		scale = d.mfu / prof->mfu;
	}
	c->step_seconds = (step + comm) * scale;
	c->tokens_per_second = tokens / c->step_seconds;
	/* A vision transformer's samples are images of s tokens. */
	if (m->family == VP_FAMILY_VIT)
		c->tokens_per_second /= s;
	c->bandwidth_bound = comm + memory > mm + att;
}

/* Better first: fits, then throughput, then headroom (lower peak). */
static int
better(const struct vp_cand *a, const struct vp_cand *b)
{
	double ta = isnan(a->tokens_per_second) ? -1 : a->tokens_per_second;
	double tb = isnan(b->tokens_per_second) ? -1 : b->tokens_per_second;

	if (a->fits != b->fits)
		return a->fits;
	if (fabs(ta - tb) > 1e-9 * (ta > tb ? ta : tb))
		return ta > tb;
	return a->device_peak < b->device_peak;
}

static void
keep(struct vp_search_result *r, const struct vp_cand *c)
{
	size_t n = VP_NELEM(r->best), i;

	if (!c->fits && (r->nearest.device_peak == 0 ||
	    c->device_peak < r->nearest.device_peak))
		r->nearest = *c;
	if (!c->fits)
		return;
	r->fitting++;
	for (i = r->nbest; i > 0 && better(c, &r->best[i - 1]); i--)
		if (i < n)
			r->best[i] = r->best[i - 1];
	if (i < n) {
		r->best[i] = *c;
		if (r->nbest < n)
			r->nbest++;
	}
}

/* The plan of one point of the search space. */
static void
make_cand(const struct vp_search *s, const struct vp_plan *base,
    const unsigned deg[5], unsigned sh, enum vp_recompute rc,
    struct vp_cand *c)
{
	unsigned pp = deg[1];

	memset(c, 0, sizeof *c);
	c->plan = *base;
	c->plan.tp = deg[0];
	c->plan.pp = pp;
	c->plan.cp = deg[2];
	c->plan.ep = deg[3];
	c->plan.dp = deg[4];
	c->plan.gpus_per_node = s->gpus_per_node;
	if (s->open.sp)
		c->plan.sp = deg[0] > 1;
	if (s->open.shard) {
		if (base->fsdp != VP_FSDP_NONE ||
		    vp_fw_info[base->framework].fsdp_sharding) {
			static const enum vp_fsdp fs[] = { VP_FSDP_NONE,
			    VP_FSDP_GRAD_OP, VP_FSDP_HYBRID, VP_FSDP_FULL };

			c->plan.fsdp = fs[sh];
			c->plan.zero = 0;
		} else {
			c->plan.zero = sh;
		}
	}
	if (s->open.recompute)
		c->plan.recompute = rc;
	if (s->open.grad_accum && pp > 1 && c->plan.grad_accum < 4 * pp)
		c->plan.grad_accum = 4 * pp;
	if (s->global_batch)
		c->plan.grad_accum = (unsigned)(s->global_batch /
		    ((uint64_t)base->micro_batch * deg[4]));
}

/* A candidate whose peak is known: whether it fits (the host too, for
 * offloaded state), counted and ranked. */
static void
finish(const struct vp_search *s, const struct vp_plan *base,
    const struct vp_mem_opts *o, struct vp_cand *c,
    struct vp_search_result *out)
{
	c->fits = c->device_peak <= s->capacity;
	if (c->fits && base->host_mem_bytes &&
	    (base->offload != VP_OFFLOAD_NONE ||
	    vp_opt_info[base->optimizer].paged))
		c->fits = vp_plan_host_per_node(s->model, &c->plan, o,
		    s->world) <= base->host_mem_bytes;
	out->evaluated++;
	keep(out, c);
}

/* Memory of a candidate (its time is already known): fits or not. */
static void
evaluate(const struct vp_search *s, const struct vp_plan *base,
    const struct vp_mem_opts *o, struct vp_cand *c,
    struct vp_search_result *out)
{
	c->device_peak = vp_plan_worst_peak(s->model, &c->plan, o,
	    &c->worst_stage, true);
	finish(s, base, o, c, out);
}

/* Faster first; equal throughput keeps the enumeration order. */
static int
by_speed(const void *pa, const void *pb)
{
	const struct vp_cand *a = pa, *b = pb;
	double ta = isnan(a->tokens_per_second) ? -1 : a->tokens_per_second;
	double tb = isnan(b->tokens_per_second) ? -1 : b->tokens_per_second;

	if (ta != tb)
		return ta > tb ? -1 : 1;
	return a->worst_stage < b->worst_stage ? -1 :
	    a->worst_stage > b->worst_stage;
}

/*
 * first_only: the time model needs no replay, so time every candidate,
 * then replay them fastest first and stop once one fits and the next is
 * slower: the best plan is the full search's (ties in throughput are
 * all replayed, as the ranking breaks them by headroom).  A candidate
 * whose first stage is already over capacity is set aside unfinished;
 * only when nothing fits are those finished, for the nearest miss.
 */
static void
evaluate_fastest(const struct vp_search *s, const struct vp_plan *base,
    const struct vp_mem_opts *o, struct vp_cand *v, size_t n,
    struct vp_search_result *out)
{
	size_t i, nset = 0, *set = xcalloc(n ? n : 1, sizeof *set);
	bool exact;

	/* worst_stage holds the enumeration index until replayed. */
	for (i = 0; i < n; i++)
		v[i].worst_stage = (unsigned)i;
	if (n > 1)	/* v is NULL when the rules left no candidate */
		qsort(v, n, sizeof *v, by_speed);
	for (i = 0; i < n; i++) {
		double t = v[i].tokens_per_second;

		if (out->nbest > 0 && !isnan(t) && fabs(t -
		    out->best[0].tokens_per_second) > 1e-9 *
		    out->best[0].tokens_per_second)
			break;
		v[i].device_peak = worst_peak(s->model, &v[i].plan, o,
		    s->capacity, true, &v[i].worst_stage, &exact);
		if (!exact) {
			out->evaluated++;
			set[nset++] = i;
			continue;
		}
		finish(s, base, o, &v[i], out);
	}
	/* Nothing fits: finish the set-aside ones (their last stage) for
	 * the nearest miss, as vp_plan_worst_peak would have. */
	for (i = 0; out->nbest == 0 && i < nset; i++) {
		struct vp_cand *c = &v[set[i]];
		unsigned last = c->plan.pp - 1;
		uint64_t peak = stage_peak(s->model, &c->plan, o, last, true);

		if (peak > c->device_peak) {
			c->device_peak = peak;
			c->worst_stage = last;
		}
		c->fits = false;
		keep(out, c);
	}
	free(set);
}

/* The divisors of n, ascending, into d (room for VP_MAX_DIVISORS: no
 * 32-bit number has more than 1344); their count. */
#define VP_MAX_DIVISORS 1344
static size_t
divisors(unsigned n, unsigned *d)
{
	size_t lo = 0, hi = 0, i;
	unsigned big[VP_MAX_DIVISORS / 2 + 1], k;

	for (k = 1; k <= n / k; k++)
		if (n % k == 0) {
			d[lo++] = k;
			if (k != n / k)
				big[hi++] = n / k;
		}
	for (i = 0; i < hi; i++)
		d[lo + i] = big[hi - 1 - i];
	return lo + hi;
}

/*
 * The next degree of one knob after position *i of the world's divisors:
 * one that divides rest and is at most cap (the values past it the rule
 * book refuses), or only the base plan's value when the knob is fixed.
 * 0 when there is none left.
 */
static unsigned
next_degree(const unsigned *div, size_t ndiv, size_t *i, unsigned rest,
    unsigned cap, bool open, unsigned fixed)
{
	for (; *i < ndiv; (*i)++) {
		unsigned v = div[*i];

		if (v > rest || (open && v > cap))
			break;
		if (rest % v || (!open && v != fixed))
			continue;
		(*i)++;
		return v;
	}
	return 0;
}

/*
 * The search space is every split of the world into tp x pp x cp x dp
 * (ep inside dp), the open knobs over their ranges and the fixed ones at
 * the base plan's value; what is valid in it is the rule book's to say
 * (rules.c).  The rules over the knobs fixed so far prune each loop
 * level, and the finished candidate is held to all of them.  Each degree
 * runs over the divisors of what is left of the world only, up to the
 * bounds the rules set anyway (TP inside a node, PP up to the layers, CP
 * up to 16 and half the sequence, EP up to the experts), so a pass costs
 * the divisors of the world, not the world (issue 17, finding 3).
 */
void
vp_search_run(const struct vp_search *s, const struct vp_plan *base,
    struct vp_search_result *out)
{
	const struct vp_model *m = s->model;
	struct vp_mem_opts o = { s->profile, s->world, 0, s->capacity };
	unsigned tp, pp, cp, ep, sh, rc, node = s->gpus_per_node;
	static const enum vp_recompute rcs[] = { VP_RECOMP_NONE,
	    VP_RECOMP_SELECTIVE, VP_RECOMP_OP, VP_RECOMP_FULL };
	struct vp_cand *list = NULL;
	struct vp_plan q = *base;	/* the knobs fixed so far */
	size_t nlist = 0, cap = 0, ndiv, itp, ipp, icp, iep;
	unsigned div[VP_MAX_DIVISORS];
	unsigned pp_cap = m->layers < UINT_MAX ? (unsigned)m->layers :
	    UINT_MAX;
	unsigned cp_cap = base->seq / 2 < 16 ? (unsigned)(base->seq / 2) : 16;
	unsigned ep_cap = m->has_moe && m->moe.experts < UINT_MAX ?
	    (unsigned)m->moe.experts : UINT_MAX;

	assert(node >= 1);
	assert(vp_plan_degrees_ok(base));
	memset(out, 0, sizeof *out);
	q.gpus_per_node = node;
	q.dp = 0;
	if (vp_plan_rules(&q, m, s->world, 0, NULL) != 0)
		return;
	ndiv = divisors(s->world, div);
	if (cp_cap < 1)
		cp_cap = 1;
	for (itp = 0; (tp = next_degree(div, ndiv, &itp, s->world, node,
	    s->open.tp, base->tp)) != 0; ) {
		q.tp = tp;
		q.sp = s->open.sp ? tp > 1 : base->sp;
		if (vp_plan_rules(&q, m, s->world, VP_RK_TP, NULL) != 0)
			continue;
		for (ipp = 0; (pp = next_degree(div, ndiv, &ipp, s->world / tp,
		    pp_cap, s->open.pp, base->pp)) != 0; ) {
			q.pp = pp;
			if (vp_plan_rules(&q, m, s->world, VP_RK_TP | VP_RK_PP,
			    NULL) != 0)
				continue;
			for (icp = 0; (cp = next_degree(div, ndiv, &icp,
			    s->world / tp / pp, cp_cap, s->open.cp,
			    base->cp)) != 0; ) {
				unsigned dp, rest = s->world / tp / pp;

				dp = rest / cp;
				/* A global batch: whole micro-batches on
				 * every data-parallel rank. */
				if (s->global_batch && s->global_batch %
				    ((uint64_t)base->micro_batch * dp))
					continue;
				q.cp = cp;
				q.dp = dp;
				if (vp_plan_rules(&q, m, s->world, VP_RK_TP |
				    VP_RK_PP | VP_RK_CP | VP_RK_DP, NULL) != 0)
					continue;
				for (iep = 0; (ep = next_degree(div, ndiv, &iep,
				    dp, ep_cap, m->has_moe && s->open.ep,
				    base->ep)) != 0; ) {
					q.ep = ep;
					if (vp_plan_rules(&q, m, s->world,
					    VP_RK_ALL & ~VP_RK_SHARD, NULL) != 0)
						continue;
					for (sh = 0; sh < 4; sh++) {
						if (!s->open.shard && sh > 0)
							break;
						/* Nothing to shard over one
						 * replica, unless offload
						 * needs it. */
						if (s->open.shard && dp == 1 && sh > 0 &&
						    base->offload == VP_OFFLOAD_NONE)
							break;
						for (rc = 0; rc < VP_NELEM(rcs);
						    rc++) {
							const unsigned deg[5] = { tp, pp,
							    cp, ep, dp };
							struct vp_cand c;

							if (!s->open.recompute && rc > 0)
								break;
							/* Selective recompute saves
							 * only eager attention's
							 * scores. */
							if (rcs[rc] == VP_RECOMP_SELECTIVE &&
							    base->attention != VP_ATTN_EAGER &&
							    s->open.recompute)
								continue;
							make_cand(s, base, deg, sh,
							    rcs[rc], &c);
							if ((s->open.recompute &&
							    (s->open.skip_recompute >>
							    c.plan.recompute & 1u)) ||
							    (s->open.shard &&
							    ((s->open.skip_fsdp >>
							    c.plan.fsdp & 1u) ||
							    (s->open.skip_zero >>
							    c.plan.zero & 1u))))
								continue;
							if (vp_plan_rules(&c.plan, m,
							    s->world, VP_RK_ALL,
							    NULL) != 0)
								continue;
							vp_plan_time(m, s->gpu,
							    s->profile, s->world, &c);
							out->candidates++;
							if (!s->first_only) {
								evaluate(s, base, &o,
								    &c, out);
								continue;
							}
							if (nlist == cap) {
								cap = cap ? 2 * cap : 64;
								list = xreallocarray(
								    list, cap,
								    sizeof *list);
							}
							list[nlist++] = c;
						}
					}
				}
			}
		}
	}
	if (s->first_only)
		evaluate_fastest(s, base, &o, list, nlist, out);
	free(list);
}

/*
 * The least bytes per GPU any plan of n GPUs can reach: weights,
 * gradients and optimizer states fully sharded over n GPUs, and nothing
 * else (no activations, no buffers).  What may live elsewhere is left
 * out: offloaded parameters (no bound), offloaded optimizer states with
 * the fp32 master copy (16-bit weights alone stay: DeepSpeed's
 * ZeRO-Offload), bitsandbytes' paged states, gradients stepped in the
 * backward; 8-bit states count their own bytes.  An MoE model's routed
 * experts count whole: expert parallelism splits them ep ways and ZeRO
 * shards them over the dp / ep expert-data-parallel ranks, so a rank
 * holds at least experts / dp of them.  So the bound stays below every
 * plan's peak: a count whose floor exceeds the card cannot fit.
 */
uint64_t
vp_plan_floor_bytes(const struct vp_model *m, const struct vp_plan *p,
    unsigned n)
{
	struct vp_param_count pc;
	const struct vp_prec_info *pi = &vp_prec_info[p->precision];
	const struct vp_opt_info *oi = &vp_opt_info[p->optimizer];
	double per = vp_dtype_bytes[pi->weight], params;

	if (p->offload == VP_OFFLOAD_PARAMS || p->offload == VP_OFFLOAD_ALL ||
	    n == 0)
		return 0;
	vp_model_params(m, &pc);
	params = (double)pc.total;
	if (p->lora_rank > 0) {
		per = p->quant != VP_QUANT_NONE ? 0.5 : 2.0;
	} else if (p->offload == VP_OFFLOAD_OPTIMIZER) {
		per = per < 2.0 ? per : 2.0;
	} else {
		if (!p->optim_in_bwd)
			per += vp_dtype_bytes[pi->grad];
		if (!oi->paged)
			per += (pi->master ? 4 : 0) + oi->state_bytes_per_param *
			    vp_dtype_bytes[pi->state] / 4.0;
	}
	return (uint64_t)(per * params / (double)n);
}

/*
 * The counts the fewest-GPU search tries: one by one to a node, then
 * whole nodes.  Index i (from 0) is count i + 1 up to the node, then
 * (i + 2 - node) nodes.
 */
static unsigned
count_at(unsigned i, unsigned node)
{
	return i < node ? i + 1 : (i + 2 - node) * node;
}

/* The index of the smallest count at least n. */
static unsigned
index_of(unsigned n, unsigned node)
{
	return n <= node ? (n ? n - 1 : 0) : (n + node - 1) / node + node - 2;
}

/* Whether a plan of the i-th count fits; the search's result in r. */
static bool
probe(const struct vp_search *s, const struct vp_plan *base, unsigned node,
    unsigned i, struct vp_search_result *r, unsigned *passes)
{
	struct vp_search t = *s;
	struct vp_plan b = *base;
	unsigned n = count_at(i, node);

	t.world = n;
	t.gpus_per_node = n < node ? n : node;
	t.first_only = true;	/* the same best[0], fewer replays */
	b.dp = 0;
	b.gpus_per_node = t.gpus_per_node;
	(*passes)++;
	vp_search_run(&t, &b, r);
	return r->nbest > 0;
}

/*
 * The fewest GPUs of the card that fit, the same whatever count the
 * search starts from (issue 17, finding 2): each count n is planned as
 * `--gpus nxCARD` plans it, in nodes of min(n, node) GPUs (node: the node
 * size given, else VP_DEFAULT_GPUS_PER_NODE), from the base plan's fixed
 * knobs.  The counts below the floor (vp_plan_floor_bytes over the card)
 * are skipped; from the first count above it the search doubles until a
 * count fits, then bisects between the last that did not and the first
 * that did.  A handful of planner passes instead of one per count (519
 * up to 4096 GPUs; finding 3).  Fitting is taken as monotone in the
 * count: a plan that fits at n fits at every multiple of n (more data
 * parallelism shards the state thinner), but a count between two that
 * fit can miss (a prime number of nodes leaves TP x PP x CP fewer
 * splits); the answer is the first fitting count on the bisection, and it
 * always fits.
 */
unsigned
vp_min_gpus_in(const struct vp_search *s, const struct vp_plan *base,
    unsigned node, unsigned limit, struct vp_search_result *at,
    unsigned *passes)
{
	struct vp_search_result r;
	unsigned lo, hi, top, i, n0, dummy = 0;
	bool found = false;

	if (passes == NULL)
		passes = &dummy;
	*passes = 0;
	memset(at, 0, sizeof *at);
	if (node < 1)
		node = VP_DEFAULT_GPUS_PER_NODE;
	if (limit < 1)
		return 0;
	/* The largest count up to the limit, and the floor's first. */
	top = index_of(limit, node);
	if (count_at(top, node) > limit)
		top--;
	/* The first count whose floor fits (the floor falls as the count
	 * grows). */
	lo = 0;
	hi = top + 1;
	while (lo < hi) {
		i = lo + (hi - lo) / 2;
		if (vp_plan_floor_bytes(s->model, base, count_at(i, node)) >
		    s->capacity)
			lo = i + 1;
		else
			hi = i;
	}
	if (lo > top)
		return 0;
	i = lo;
	/* Double (in GPUs) until a count fits or the limit is passed. */
	lo = UINT_MAX;		/* the last index known not to fit */
	for (;;) {
		if (probe(s, base, node, i, &r, passes)) {
			*at = r;
			found = true;
			break;
		}
		lo = i;
		if (i >= top)
			break;
		n0 = count_at(i, node);
		i = n0 > limit / 2 ? top : index_of(2 * n0, node);
		if (i > top)
			i = top;
	}
	if (!found)
		return 0;
	hi = i;
	/* Bisect: lo does not fit, hi does. */
	while (lo != UINT_MAX && hi > lo + 1) {
		i = lo + (hi - lo) / 2;
		if (probe(s, base, node, i, &r, passes)) {
			hi = i;
			*at = r;
		} else {
			lo = i;
		}
	}
	return count_at(hi, node);
}

unsigned
vp_min_gpus(const struct vp_search *s, const struct vp_plan *base,
    unsigned limit, struct vp_search_result *at)
{
	return vp_min_gpus_in(s, base, VP_DEFAULT_GPUS_PER_NODE, limit, at,
	    NULL);
}
