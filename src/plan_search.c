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
#define INTER_NODE_GBS 25	/* per GPU between nodes (200 Gb/s) */
#define MEM_EFF_PCT 80		/* of the memory bandwidth streaming gets */
#define STR_(x) #x
#define STR(x) STR_(x)

const char *const vp_time_assumptions =
    "Time model assumptions (a step is " VP_TIME_SUMMARY "):\n"
    "  - FLOPs per token: 6 P (4 P with LoRA) + 6 L s h for causal attention; "
    "full recompute adds 2 P + 2 L s h, selective recompute with eager "
    "attention 2 L s h, op recompute P (every second matmul) plus 2 L s h "
    "unless attention is sdpa (with --recompute-stride N, times the share "
    "of blocks recomputed)\n"
    "  - compute at the profile's MFU of the card's dense peak for the compute "
    "dtype (fp8 and --float8: its fp8 peak), over all GPUs; the 1F1B bubble multiplies it "
    "by 1 + (pp-1)/(m vpp) for m micro-batches per step\n"
    "  - collectives move 16-bit data at " STR(LINK_EFF_PCT) " % of the link: "
    "the card's GPU-to-GPU figure (" STR(NO_LINK_GBS) " GB/s without one); "
    "DP, EP and pipeline traffic at most " STR(INTER_NODE_GBS) " GB/s per GPU "
    "when the job spans nodes; TP all-reduces (4 per block, 6 per fully "
    "recomputed block), expert all-to-alls (4 per block) and pipeline sends "
    "exposed; "
    "DP reduction 80 % overlapped (70 % and 1.5x the volume with ZeRO-3 or "
    "FSDP full/hybrid); CP ring exchanges half hidden\n"
    "  - memory-bound work at " STR(MEM_EFF_PCT) " % of the card's bandwidth: "
    "28 B per local parameter for the optimizer step (the shard under ZeRO or "
    "FSDP, none with LoRA), saved activations (34 s b h bytes per layer / "
    "(tp cp)) written and read once per micro-batch\n"
    "  - a plan is bandwidth-bound when communication plus memory-bound time "
    "exceeds compute; no time without the card's TFLOP/s for the compute "
    "dtype, nor on the CPU\n"
    "  - cost = hours x GPUs x the cheapest price the catalog lists for the "
    "card (or --price)\n";

/* A step's time, term by term; vp_time_assumptions above says what each
 * term assumes. */
void
vp_plan_time(const struct vp_model *m, const struct vp_gpu *gpu,
    const struct vp_profile *prof, unsigned world, struct vp_cand *c)
{
	const struct vp_plan *p = &c->plan;
	struct vp_param_count pc;
	unsigned tp = p->tp, pp = p->pp, cp = p->cp, ep = p->ep;
	unsigned dp = p->dp ? p->dp : 1, node = p->gpus_per_node;
	double L = (double)m->layers, h = (double)m->hidden;
	double s = (double)p->seq, mb = (double)p->micro_batch;
	double ga = (double)p->grad_accum, peak, flops, tokens, compute;
	double link, dp_bw, bytes, comm = 0, t, rank_params, memory = 0;
	double rc_share;	/* of the blocks, those recomputed */
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
	flops = (p->lora_rank ? 4.0 : 6.0) * (double)pc.active + 6.0 * L * s * h;
	/* A layer graph: a sample is an image, whose forward is its
	 * convolutions' and linears' multiply-adds (2 FLOPs each), backward
	 * twice that; no sequence, no attention (h is 0). */
	if (m->lg != NULL) {
		flops = 6.0 * vp_lgraph_macs(m->lg, vp_lgraph_image(m, p));
		s = 1.0;
	}
	/* With a stride only some blocks recompute: the first stage's
	 * share of them stands for the whole model's. */
	sb = vp_stage_blocks(m->layers, pp, 0);
	rc_share = sb ? (double)vp_plan_checkpointed_blocks(p, sb) /
	    (double)sb : 0.0;
	if (p->recompute == VP_RECOMP_FULL)
		flops += rc_share * (2.0 * (double)pc.active + 2.0 * L * s * h);
	else if (p->recompute == VP_RECOMP_SELECTIVE &&
	    p->attention == VP_ATTN_EAGER)
		flops += rc_share * 2.0 * L * s * h;
	else if (p->recompute == VP_RECOMP_OP)
		/* Every second matmul again, and attention unless the CUDA
		 * SDPA kernel's output is kept (graph.c, op_policy). */
		flops += rc_share * ((double)pc.active + (p->attention ==
		    VP_ATTN_SDPA ? 0.0 : 2.0 * L * s * h));
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
		double att = h * (L * s * s + Ld * tg * (tg + s));

		flops = (6.0 * (penc * s + pdec * tg) + 6.0 * att) / s;
		if (p->recompute == VP_RECOMP_FULL)
			flops += (2.0 * (penc * s + pdec * tg) + 2.0 * att) /
			    s;
	}
	tokens = mb * s * ga * dp;
	compute = flops * tokens / ((double)world * peak * 1e12 * prof->mfu);
	if (pp > 1)
		compute *= 1.0 + (double)(pp - 1) / (ga * p->vpp);

	link = isnan(gpu->link_gbs) ? NO_LINK_GBS : gpu->link_gbs;
	if (tp > 1) {
		bytes = mb * s / cp * h * 2;
		t = 2.0 * (tp - 1) / tp * bytes / (link * 1e9 * LINK_EFF);
		comm += ga * (L / pp) * (p->recompute == VP_RECOMP_FULL ?
		    4 + 2 * rc_share : 4) * t;
	}
	if (dp > 1) {
		/* DP ranks sit tp*cp apart: inside a node only if the whole
		 * job does. */
		dp_bw = world > node ? fmin(link, INTER_NODE_GBS) : link;
		rank_params = (double)pc.total / tp / pp;
		bytes = rank_params * 2 * 2.0 * (dp - 1) / dp;
		t = bytes / (dp_bw * 1e9 * LINK_EFF);
		if (p->zero >= 3 || p->fsdp == VP_FSDP_FULL ||
		    p->fsdp == VP_FSDP_HYBRID)
			comm += 1.5 * t * 0.3;
		else
			comm += t * 0.2;
	}
	if (ep > 1 && m->has_moe) {
		bytes = mb * s / cp * m->moe.top_k * h * 2 * (ep - 1) / ep;
		comm += ga * (L / pp) * 4 * bytes / (fmin(link,
		    world > node ? INTER_NODE_GBS : link) * 1e9 * LINK_EFF);
	}
	if (cp > 1) {
		bytes = mb * s / cp * (double)m->kv_heads * m->head_dim * 2 * 2 /
		    tp;
		comm += 0.5 * ga * (L / pp) * 3 * (cp - 1) * bytes /
		    (link * 1e9 * LINK_EFF);
	}
	if (pp > 1)
		comm += 2 * ga * mb * s / cp * h * 2 / (fmin(link,
		    world > node ? INTER_NODE_GBS : link) * 1e9 * LINK_EFF);
	/*
	 * Memory-bound work at 80 % of the card's bandwidth: the optimizer
	 * step reads and writes about 28 bytes per local parameter (fp32
	 * weight, gradient and two moments read, three written), and each
	 * micro-batch moves its saved activations about twice (written in
	 * forward, read in backward; Korthikanti's 34 s b h bytes per layer
	 * as the size).  Norms, activations and the like overlap nothing.
	 */
	if (!isnan(gpu->bandwidth_gbs) && gpu->bandwidth_gbs > 0) {
		double local = (double)pc.total / tp / pp /
		    (p->zero >= 1 || p->fsdp != VP_FSDP_NONE ? dp : 1);
		double act = 34.0 * s / cp * mb * h * (L / pp) / tp * 2 * ga;

		if (p->lora_rank)
			local = 0;
		memory = (28.0 * local + act) / (gpu->bandwidth_gbs * 1e9 *
		    (MEM_EFF_PCT / 100.0));
	}
	c->step_seconds = compute + comm + memory;
	c->tokens_per_second = tokens / c->step_seconds;
	c->bandwidth_bound = comm + memory > compute;
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

/*
 * The search space is every split of the world into tp x pp x cp x dp
 * (ep inside dp), the open knobs over their ranges (CP up to 16) and the
 * fixed ones at the base plan's value; what is valid in it is the rule
 * book's to say (rules.c).  The rules over the knobs fixed so far prune
 * each loop level, and the finished candidate is held to all of them.
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
	size_t nlist = 0, cap = 0;

	assert(node >= 1);
	assert(vp_plan_degrees_ok(base));
	memset(out, 0, sizeof *out);
	q.gpus_per_node = node;
	q.dp = 0;
	if (vp_plan_rules(&q, m, s->world, 0, NULL) != 0)
		return;
	for (tp = 1; tp <= s->world; tp++) {
		if (s->world % tp || (!s->open.tp && tp != base->tp))
			continue;
		q.tp = tp;
		q.sp = s->open.sp ? tp > 1 : base->sp;
		if (vp_plan_rules(&q, m, s->world, VP_RK_TP, NULL) != 0)
			continue;
		for (pp = 1; pp <= s->world / tp; pp++) {
			if ((s->world / tp) % pp || (!s->open.pp &&
			    pp != base->pp))
				continue;
			q.pp = pp;
			if (vp_plan_rules(&q, m, s->world, VP_RK_TP | VP_RK_PP,
			    NULL) != 0)
				continue;
			for (cp = 1; cp <= s->world / tp / pp; cp++) {
				unsigned dp, rest = s->world / tp / pp;

				if (rest % cp || (s->open.cp ? cp > 16 :
				    cp != base->cp))
					continue;
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
				for (ep = 1; ep <= dp; ep++) {
					if (dp % ep || (!(m->has_moe &&
					    s->open.ep) && ep != base->ep))
						continue;
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

unsigned
vp_min_gpus(const struct vp_search *s, const struct vp_plan *base,
    unsigned limit, struct vp_search_result *at)
{
	struct vp_search t = *s;
	unsigned n;

	/* One by one to a node, then whole nodes. */
	for (n = 1; n <= limit; n = n < VP_DEFAULT_GPUS_PER_NODE ? n + 1 :
	    n + VP_DEFAULT_GPUS_PER_NODE) {
		struct vp_plan b = *base;

		t.world = n;
		b.dp = 0;
		vp_search_run(&t, &b, at);
		if (at->nbest > 0)
			return n;
	}
	return 0;
}
