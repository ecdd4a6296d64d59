/*
 * mem.c — replay of a training step over the lowered graph (see mem.h).
 *
 * The replay keeps a reference count per tensor exactly as Python and the
 * autograd graph hold them: one reference per forward consumer, one per op
 * that saves it for backward.  A tensor is freed when its count reaches
 * zero.  Backward visits ops in reverse order (the order autograd's
 * sequence numbers give for these graphs), creating the gradient of each
 * input that requires one (or accumulating into it, which costs a
 * transient copy), creating or accumulating parameter gradients, and
 * releasing the op's saved tensors and its output gradient.
 *
 * Recompute: a run of ops flagged `recompute` is a checkpoint segment.
 * Its forward keeps nothing for backward but its inputs; when backward
 * reaches the segment, the segment's forward runs again, saving, and then
 * its backward runs.  Full recompute = one segment per block; selective =
 * the attention core.
 */
#include "mem.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define X(e, s) s,
const char *const vp_phase_names[VP_PHASE_COUNT] = { VP_PHASE_LIST(X) };
#undef X

struct seg {
	size_t first, end;	/* ops [first, end) */
};

struct sim {
	const struct vp_graph *g;
	const struct vp_plan *p;
	bool cuda;
	uint32_t *refs;
	uint8_t *alive;
	uint8_t *galive;
	uint32_t *hold;		/* segment input holds */
	struct seg *segs;
	size_t nsegs;
	int32_t *seg_of;	/* op → segment index or -1 */
	int32_t *made_seg;	/* tensor → segment of the op that makes it,
				 * or -1 */
	uint64_t live;
	uint64_t cat[VP_CAT_COUNT];
	uint64_t peak;
	uint64_t peak_cat[VP_CAT_COUNT];
	enum vp_phase phase;
	enum vp_phase peak_phase;
	uint32_t peak_layer;
	const char *peak_op;
	uint64_t phase_peak[VP_PHASE_COUNT];
	uint32_t cur_layer;
	const char *cur_op;
	bool first_mb;		/* gradients not yet allocated */
	unsigned gshard;	/* gradients kept per rank: 1/gshard */
	uint64_t shard_tmp;	/* gathered parameters during fwd/bwd */
	uint64_t unit_grad;	/* a unit's full gradient before reduction */
	bool grads_prealloc;	/* gradients go into a preallocated buffer */
	bool grads_offload;	/* gradients leave for host RAM when made */
	uint64_t wgrad_waiting;	/* weight gradients held by autograd until
				 * another use's is added (tied weights) */
	uint8_t *away;		/* tensor offloaded to host (not counted) */
	uint64_t *away_bytes;	/* per block */
	uint64_t host_act, host_act_peak;
	/* Explain: stop when the event counter reaches stop_at. */
	uint64_t events, peak_event, stop_at;
	bool stopped;
	uint64_t stop_extra;
	struct vp_mem *out;
	struct vp_timeline *tl;	/* NULL: no timeline */
};

/* CUDA caching allocator: every block is a multiple of 512 bytes. */
static uint64_t
rb(const struct sim *s, uint64_t b)
{
	if (s->cuda && b <= UINT64_MAX - 511)
		b = (b + 511) / 512 * 512;
	return b;
}

static uint64_t
tb(const struct sim *s, int32_t t)
{
	return rb(s, s->g->t[t].bytes);
}

static void
add(struct sim *s, enum vp_cat c, uint64_t b)
{
	s->live += b;
	s->cat[c] += b;
}

static void
sub(struct sim *s, enum vp_cat c, uint64_t b)
{
	s->live -= b;
	s->cat[c] -= b;
}

/*
 * One event into the timeline.  When the points run out, neighbours are
 * merged (the larger value and its phase stay) and every point covers
 * twice as many events from then on, so the whole step always fits.
 */
static void
tl_record(struct vp_timeline *tl, uint64_t v, enum vp_phase ph)
{
	size_t i;

	tl->events++;
	if (tl->n > 0 && tl->fill < tl->per_point) {
		tl->fill++;
		if (v > tl->live[tl->n - 1]) {
			tl->live[tl->n - 1] = v;
			tl->phase[tl->n - 1] = (uint8_t)ph;
		}
		return;
	}
	if (tl->n == VP_TIMELINE_MAX) {
		for (i = 0; i < VP_TIMELINE_MAX / 2; i++) {
			size_t k = 2 * i + (tl->live[2 * i + 1] >
			    tl->live[2 * i]);

			tl->live[i] = tl->live[k];
			tl->phase[i] = tl->phase[k];
		}
		tl->n = VP_TIMELINE_MAX / 2;
		tl->per_point *= 2;
	}
	tl->live[tl->n] = v;
	tl->phase[tl->n] = (uint8_t)ph;
	tl->n++;
	tl->fill = 1;
}

/* Record a possible peak: current live bytes plus transient extra. */
static void
check(struct sim *s, uint64_t extra, enum vp_cat extra_cat)
{
	uint64_t v;

	/* Sharded parameters are gathered while forward and backward run. */
	if (s->phase != VP_PHASE_OPTIMIZER)
		extra += s->shard_tmp;
	if (s->phase == VP_PHASE_BACKWARD)
		extra += s->unit_grad;
	v = s->live + extra;
	s->events++;
	if (s->tl != NULL)
		tl_record(s->tl, v, s->phase);
	if (s->stop_at && s->events == s->stop_at && !s->stopped) {
		s->stopped = true;
		s->stop_extra = extra;
	}
	if (v > s->phase_peak[s->phase])
		s->phase_peak[s->phase] = v;
	if (v > s->peak) {
		s->peak = v;
		memcpy(s->peak_cat, s->cat, sizeof s->cat);
		s->peak_cat[extra_cat] += extra;
		s->peak_phase = s->phase;
		s->peak_layer = s->cur_layer;
		s->peak_op = s->cur_op;
		s->peak_event = s->events;
	}
}

static void
t_alloc(struct sim *s, int32_t t)
{
	if (s->alive[t])
		return;
	s->alive[t] = 1;
	add(s, (enum vp_cat)s->g->t[t].cat, tb(s, t));
}

static void
t_unref(struct sim *s, int32_t t)
{
	if (s->refs[t] > 0 && --s->refs[t] == 0 && s->alive[t] &&
	    !s->stopped) {
		s->alive[t] = 0;
		if (s->away[t]) {
			/* Freed while on the host: nothing on the GPU. */
			s->away[t] = 0;
			s->host_act -= tb(s, t);
			if (s->away_bytes[s->g->t[t].layer] >= tb(s, t))
				s->away_bytes[s->g->t[t].layer] -= tb(s, t);
			return;
		}
		sub(s, (enum vp_cat)s->g->t[t].cat, tb(s, t));
	}
}

/* The gradient of tensor t: one piece of it when experts run one at a
 * time (struct vp_tensor, pieces). */
static uint64_t
gb(const struct sim *s, int32_t t)
{
	unsigned n = s->g->t[t].pieces;

	return n > 1 ? rb(s, s->g->t[t].bytes / n) : tb(s, t);
}

static void
g_alloc(struct sim *s, int32_t t)
{
	s->galive[t] = 1;
	add(s, VP_CAT_TRANSIENT, gb(s, t));
}

static void
g_free(struct sim *s, int32_t t)
{
	if (s->galive[t] && !s->stopped) {
		s->galive[t] = 0;
		sub(s, VP_CAT_TRANSIENT, gb(s, t));
	}
}

/*
 * Activation offload (e.g. torch.autograd.graph.save_on_cpu or
 * Megatron's CPU offloading): when a block's forward ends, the tensors it
 * saved move to host RAM; they come back just before its backward.  The
 * block's output stays, as the next block reads it.
 */
static void
offload_block(struct sim *s, uint32_t layer, int32_t keep)
{
	const struct vp_graph *g = s->g;
	uint64_t moved = 0;
	size_t t;

	for (t = 0; t < g->nt; t++)
		if (g->t[t].layer == layer && s->alive[t] && s->refs[t] > 0 &&
		    (int32_t)t != keep && g->t[t].cat == VP_CAT_ACT &&
		    !s->away[t]) {
			s->away[t] = 1;
			moved += tb(s, (int32_t)t);
		}
	sub(s, VP_CAT_ACT, moved);
	s->away_bytes[layer] = moved;
	s->host_act += moved;
	if (s->host_act > s->host_act_peak)
		s->host_act_peak = s->host_act;
}

static void
restore_block(struct sim *s, uint32_t layer)
{
	const struct vp_graph *g = s->g;
	size_t t;

	if (s->away_bytes[layer] == 0)
		return;
	for (t = 0; t < g->nt; t++)
		if (g->t[t].layer == layer)
			s->away[t] = 0;
	add(s, VP_CAT_ACT, s->away_bytes[layer]);
	s->host_act -= s->away_bytes[layer];
	s->away_bytes[layer] = 0;
}

/* Forward of ops [a, b); saving = whether saved tensors are kept. */
static void
forward(struct sim *s, size_t a, size_t b, bool segment_rerun)
{
	const struct vp_graph *g = s->g;
	size_t i;
	int k;

	for (i = a; i < b && !s->stopped; i++) {
		const struct vp_op *o = &g->op[i];

		s->cur_layer = o->layer;
		s->cur_op = o->name;
		if (o->layer == 0 && i >= g->layer_first_op[g->layers + 1])
			s->phase = VP_PHASE_LOSS;
		for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++)
			t_alloc(s, o->out[k]);
		check(s, o->fwd_tmp, VP_CAT_TRANSIENT);
		for (k = 0; k < VP_OP_MAXIO && o->in[k] >= 0; k++)
			t_unref(s, o->in[k]);
		for (k = 0; k < VP_OP_MAXKEEP; k++)
			if (o->keep[k] >= 0)
				t_unref(s, o->keep[k]);
		/* Leaving autocast drops its weight cache. */
		if (i == g->autocast_end_op && !segment_rerun) {
			size_t t;
			for (t = 0; t < g->nt; t++)
				if (g->t[t].cat == VP_CAT_CAST)
					t_unref(s, (int32_t)t);
		}
		/* Outputs nobody consumes or saves die at once. */
		for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++)
			if (s->refs[o->out[k]] == 0 && s->alive[o->out[k]] &&
			    !s->stopped) {
				s->alive[o->out[k]] = 0;
				sub(s, (enum vp_cat)g->t[o->out[k]].cat,
				    tb(s, o->out[k]));
			}
		if (s->p->activation_offload && !segment_rerun &&
		    o->layer > 0 && i + 1 == g->layer_first_op[o->layer + 1])
			offload_block(s, o->layer, o->out[0]);
	}
}

/* Reference counts for the first forward of a micro-batch. */
static void
count_refs(struct sim *s)
{
	const struct vp_graph *g = s->g;
	size_t i, j;
	int k;

	memset(s->refs, 0, g->nt * sizeof *s->refs);
	memset(s->hold, 0, g->nt * sizeof *s->hold);
	for (i = 0; i < g->nop; i++) {
		const struct vp_op *o = &g->op[i];

		for (k = 0; k < VP_OP_MAXIO && o->in[k] >= 0; k++)
			s->refs[o->in[k]]++;
		for (k = 0; k < VP_OP_MAXKEEP; k++)
			if (o->keep[k] >= 0)
				s->refs[o->keep[k]]++;
		if (s->seg_of[i] < 0)
			for (k = 0; k < VP_OP_MAXIO && o->saved[k] >= 0; k++)
				s->refs[o->saved[k]]++;
	}
	/* The autocast cache holds every weight copy until autocast ends. */
	if (g->autocast_end_op != SIZE_MAX)
		for (i = 0; i < g->nt; i++)
			if (g->t[i].cat == VP_CAT_CAST)
				s->refs[i]++;
	/* A segment holds its inputs (tensors made before it) until its
	 * backward is done. */
	for (j = 0; j < s->nsegs; j++) {
		const struct seg *sg = &s->segs[j];

		for (i = sg->first; i < sg->end; i++)
			for (k = 0; k < VP_OP_MAXIO && g->op[i].in[k] >= 0; k++) {
				int32_t t = g->op[i].in[k];
				bool outside = s->made_seg[t] != (int32_t)j;
				if (outside && s->hold[t] == 0) {
					s->hold[t] = 1;
					s->refs[t]++;
				}
			}
	}
}

/* Whether a weight gradient made now is a transient rather than the
 * persistent gradient: it goes into a preallocated buffer, to the host,
 * into a gradient held already (a later micro-batch), or is
 * reduce-scattered to 1/gshard. */
static bool
wgrad_is_transient(const struct sim *s)
{
	return !s->first_mb || s->grads_prealloc || s->grads_offload ||
	    s->gshard > 1;
}

/* Backward of one op. */
static void
backward_op(struct sim *s, const struct vp_op *o)
{
	const struct vp_graph *g = s->g;
	uint64_t tmp = o->bwd_tmp + o->wgrad_tmp;
	bool has_g = false;
	int k;

	s->cur_layer = o->layer;
	s->cur_op = o->name;
	for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++)
		if (s->galive[o->out[k]])
			has_g = true;
	if (has_g) {
		for (k = 0; k < VP_OP_MAXIO && o->in[k] >= 0; k++) {
			int32_t t = o->in[k];

			if (!g->t[t].requires_grad)
				continue;
			if (!s->galive[t])
				g_alloc(s, t);
			else
				tmp += gb(s, t);	/* grad + new part */
		}
		if (o->wgrad_bytes) {
			/* A gradient computed into a preallocated buffer or
			 * accumulated is a transient; otherwise it stays,
			 * 1/gshard of it once reduce-scattered. */
			if (s->first_mb && !s->grads_prealloc &&
			    !s->grads_offload)
				add(s, VP_CAT_GRADS, o->wgrad_bytes / s->gshard);
			/* One that waits for another use of its weight
			 * (graph.c, tie_embeddings) lives until then. */
			if (wgrad_is_transient(s) && o->wgrad_waits) {
				add(s, VP_CAT_TRANSIENT, o->wgrad_bytes);
				s->wgrad_waiting += o->wgrad_bytes;
			} else if (wgrad_is_transient(s)) {
				tmp += o->wgrad_bytes;
			}
		}
		/* Adding to the waiting gradient out of place (InputBuffer::
		 * accumulate) makes the sum while both addends live. */
		if (o->wgrad_adds_to)
			tmp += o->wgrad_sum;
		check(s, tmp, VP_CAT_TRANSIENT);
		if (o->wgrad_adds_to && wgrad_is_transient(s)) {
			uint64_t w = g->op[o->wgrad_adds_to - 1].wgrad_bytes;

			sub(s, VP_CAT_TRANSIENT, w);
			s->wgrad_waiting -= w;
		}
		for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++)
			g_free(s, o->out[k]);
	}
	for (k = 0; k < VP_OP_MAXIO && o->saved[k] >= 0; k++)
		t_unref(s, o->saved[k]);
}

/* Re-run a segment's forward, saving, before its backward. */
static void
rerun_segment(struct sim *s, const struct seg *sg)
{
	const struct vp_graph *g = s->g;
	size_t i;
	int k;

	for (i = sg->first; i < sg->end; i++) {
		const struct vp_op *o = &g->op[i];
		for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++)
			s->refs[o->out[k]] = 0;
	}
	for (i = sg->first; i < sg->end; i++) {
		const struct vp_op *o = &g->op[i];
		for (k = 0; k < VP_OP_MAXIO && o->in[k] >= 0; k++)
			s->refs[o->in[k]]++;
		for (k = 0; k < VP_OP_MAXIO && o->saved[k] >= 0; k++)
			s->refs[o->saved[k]]++;
	}
	forward(s, sg->first, sg->end, true);
}

static void
backward(struct sim *s)
{
	const struct vp_graph *g = s->g;
	size_t i;

	s->phase = VP_PHASE_BACKWARD;
	for (i = g->nop; i > 0 && !s->stopped; i--) {
		int32_t si = s->seg_of[i - 1];

		if (g->op[i - 1].layer > 0)
			restore_block(s, g->op[i - 1].layer);

		if (si >= 0 && s->segs[si].end == i) {
			size_t j;
			int k;

			rerun_segment(s, &s->segs[si]);
			s->phase = VP_PHASE_BACKWARD;
			/* Release the segment's holds once it is done. */
			for (j = s->segs[si].end; j > s->segs[si].first &&
			    !s->stopped; j--)
				backward_op(s, &g->op[j - 1]);
			for (j = s->segs[si].first; j < s->segs[si].end; j++)
				for (k = 0; k < VP_OP_MAXIO &&
				    g->op[j].in[k] >= 0; k++) {
					int32_t t = g->op[j].in[k];
					if (s->hold[t] == 1) {
						s->hold[t] = 2;
						t_unref(s, t);
					}
				}
			i = s->segs[si].first + 1;
			continue;
		}
		backward_op(s, &g->op[i - 1]);
	}
}

/*
 * Optimizer-step temporaries, per implementation (vp_plan_optimizer_impl;
 * torch/optim/adam.py, _single_tensor_adam and _multi_tensor_adam):
 * - for-loop (PyTorch's default on CPU): Adam/AdamW compute denom =
 *   (exp_avg_sq.sqrt() / bc2).add_(eps) one parameter at a time, two
 *   temporaries the size of the largest parameter; SGD works in place.
 * - foreach (the default on CUDA): _foreach_sqrt(exp_avg_sqs) makes one
 *   temporary per parameter, all at once: one copy of the states' size.
 * - fused kernels (fused=True, DeepSpeed's and Megatron's Adam): none.
 */
static uint64_t
optim_tmp(const struct vp_graph *g, const struct vp_plan *p)
{
	const struct vp_opt_info *oi = &vp_opt_info[p->optimizer];
	unsigned state_b = vp_dtype_bytes[vp_prec_info[p->precision].state];

	switch (vp_plan_optimizer_impl(p)) {
	case VP_OPTIMPL_FUSED:
		return 0;
	case VP_OPTIMPL_FOR_LOOP:
		return oi->loop_tmp ? 2 * g->largest_param_bytes /
		    vp_dtype_bytes[vp_prec_info[p->precision].weight] *
		    state_b : 0;
	default:		/* foreach (default is resolved by then) */
		break;
	}
	/* PyTorch 1.x's _multi_tensor_adam makes denom = _foreach_add(
	 * exp_avg_sq_sqrt, eps) anew, beside exp_avg_sq_sqrt: two copies
	 * (measured on 1.13); 2.0 adds eps in place. */
	if (oi->loop_tmp && p->torch_version < 200)
		return oi->foreach_tmp ? vp_mul_sat(2 * g->trainable,
		    state_b) : 0;
	return oi->foreach_tmp ? vp_mul_sat(g->trainable, state_b) : 0;
}

/*
 * How the data-parallel group shards the persistent state (DeepSpeed ZeRO,
 * FSDP, Megatron's distributed optimizer) and which buffers that costs.
 */
struct sharding {
	unsigned states;	/* divisor of optimizer states and master */
	unsigned grads;		/* divisor of gradients */
	unsigned weights;	/* divisor of weights */
	bool grads_prealloc;	/* a gradient buffer exists from the start */
	uint64_t grad_buffer;	/* extra persistent gradient-sized buffers */
	uint64_t gather;	/* transient: gathered parameters (fwd+bwd) */
	uint64_t unit_grad;	/* transient: a unit's unsharded gradient */
	const char *what;
};

static void
sharding(const struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, struct sharding *sh)
{
	/* Context-parallel ranks hold the same parameters: the sharding
	 * group is dp x cp, as in Megatron. */
	unsigned dp = (p->dp ? p->dp : 1) * p->cp;
	unsigned node = p->gpus_per_node;
	unsigned tp = p->tp;
	enum vp_dtype cd = vp_prec_info[p->precision].compute;
	/* One transformer block on this rank: the FSDP unit. */
	uint64_t block = g->block_params;
	unsigned shard = dp;

	memset(sh, 0, sizeof *sh);
	sh->states = sh->grads = sh->weights = 1;
	sh->what = "none";
	(void)tp;
	(void)m;
	if (p->fsdp != VP_FSDP_NONE) {
		/* HYBRID_SHARD shards inside a node, replicates across. */
		if (p->fsdp == VP_FSDP_HYBRID)
			shard = dp < node ? dp : node;
		sh->states = sh->grads = shard;
		if (p->fsdp != VP_FSDP_GRAD_OP) {
			sh->weights = shard;
			/* FSDP1 all-gathers the current unit and prefetches
			 * the next (forward and backward prefetch). */
			sh->gather = 2 * block * vp_dtype_bytes[cd];
		}
		/* The unit's unsharded gradient before reduce-scatter. */
		sh->unit_grad = block * vp_dtype_bytes[cd];
		sh->what = "fsdp";
		return;
	}
	if (vp_fw_info[p->framework].main_grad) {
		/* Megatron: a contiguous fp32 main_grad buffer for all
		 * parameters; --zero 1 = the distributed optimizer. */
		sh->grads_prealloc = true;
		if (p->zero >= 1)
			sh->states = dp;
		sh->what = "megatron";
		return;
	}
	if (p->zero >= 1) {
		sh->states = dp;
		/*
		 * DeepSpeed's gradient reduce bucket (reduce_bucket_size,
		 * 5e8 elements by default, contiguous_gradients on) is one
		 * buffer in the gradient dtype, in every stage.
		 */
		sh->grad_buffer = vp_mul_sat(g->params < 500000000ULL ?
		    g->params : 500000000ULL, vp_dtype_bytes[
		    vp_prec_info[p->precision].grad]);
	}
	if (p->zero >= 2)
		sh->grads = dp;
	if (p->zero >= 3) {
		uint64_t live = 2 * block;

		sh->weights = dp;
		/* stage3_max_live_parameters (1e9) caps what is gathered. */
		if (live > 1000000000ULL)
			live = 1000000000ULL;
		sh->gather = live * vp_dtype_bytes[cd];
	}
	/* A zero_grad() that keeps the gradients (set_to_none=False, the
	 * default before PyTorch 2.0): from the second step they exist
	 * before forward, and backward adds each new one into them. */
	if (p->zero == 0 && vp_plan_zero_grad(p) == VP_ZEROGRAD_ZEROS)
		sh->grads_prealloc = true;
	if (p->zero == 0 && dp > 1) {
		/* torch DDP (gradient_as_bucket_view=False): its buckets
		 * hold a second copy of every gradient. */
		sh->grad_buffer = g->grad_bytes;
		sh->what = "ddp";
		return;
	}
	sh->what = p->zero ? "zero" : "none";
}

static void
simulate(struct sim *s, const struct vp_model *m)
{
	const struct vp_graph *g = s->g;
	const struct vp_plan *p = s->p;
	struct sharding sh;
	uint64_t states = g->optim_state_bytes, weights = g->weight_bytes;
	uint64_t master = g->master_bytes, grads_total = 0, mb;
	uint64_t end_fwd_live = 0, base, host = 0, adapters;
	bool paged = vp_opt_info[p->optimizer].paged;
	size_t i;

	sharding(g, m, p, &sh);
	states /= sh.states;
	master /= sh.states;
	weights /= sh.weights;
	adapters = g->adapter_bytes / sh.weights;
	s->gshard = sh.grads;
	s->shard_tmp = sh.gather;
	s->unit_grad = sh.unit_grad;
	s->grads_prealloc = sh.grads_prealloc;
	/*
	 * Off the GPU: paged optimizers keep their states in unified memory
	 * that the driver evicts to host RAM under pressure, so they never
	 * cause an OOM; ZeRO-Offload / FSDP CPU offload keep states and the
	 * fp32 master (and with params the weights) in pinned host RAM,
	 * or on NVMe with ZeRO-Infinity (host keeps the pinned buffers).
	 */
	if (paged || p->offload == VP_OFFLOAD_OPTIMIZER ||
	    p->offload == VP_OFFLOAD_ALL) {
		host += states + master;
		states = master = 0;
	}
	/* ZeRO-Offload also moves the gradient partitions to the host as
	 * they are reduced: on the GPU they are transients. */
	if (p->offload == VP_OFFLOAD_OPTIMIZER || p->offload == VP_OFFLOAD_ALL) {
		s->grads_offload = true;
		host += g->grad_bytes / sh.grads;
	}
	if (p->offload == VP_OFFLOAD_PARAMS || p->offload == VP_OFFLOAD_ALL) {
		host += weights;
		weights = adapters = 0;
		/* The current and prefetched units come back to the GPU. */
		if (s->shard_tmp == 0)
			s->shard_tmp = 2 * g->block_params *
			    vp_dtype_bytes[vp_prec_info[p->precision].compute];
	}
	if (p->offload_nvme && p->offload != VP_OFFLOAD_NONE) {
		/* Infinity: pinned swap buffers on the host, the rest on
		 * NVMe (4 buffers of one unit each). */
		uint64_t pinned = 4 * g->block_params * 4;

		s->out->nvme_bytes = host > pinned ? host - pinned : 0;
		host = host < pinned ? host : pinned;
	}
	s->out->host_bytes = host;
	s->out->trainable = g->trainable;
	s->out->weights_bytes = weights;
	s->out->master_bytes = master;
	s->out->optim_bytes = states;
	s->out->params = g->params;

	add(s, VP_CAT_WEIGHTS, weights - adapters);
	add(s, VP_CAT_ADAPTER, adapters);
	add(s, VP_CAT_FP8, g->fp8_bytes / sh.weights);
	add(s, VP_CAT_MASTER, master);
	add(s, VP_CAT_OPTIM, states);
	add(s, VP_CAT_INPUT, g->input_bytes);	/* labels */
	if (sh.grad_buffer)
		add(s, VP_CAT_TRANSIENT, sh.grad_buffer);
	if (sh.grads_prealloc)
		add(s, VP_CAT_GRADS, g->grad_bytes / sh.grads);
	s->first_mb = true;
	for (mb = 0; mb < (p->grad_accum > 1 ? 2 : 1) && !s->stopped; mb++) {
		count_refs(s);
		memset(s->alive, 0, g->nt);
		memset(s->galive, 0, g->nt);
		s->phase = VP_PHASE_FORWARD;
		base = s->live;
		forward(s, 0, g->nop, false);
		if (mb == 0)
			end_fwd_live = s->live - base;
		/* The loss is the root: its gradient is a scalar. */
		if (!s->stopped) {
			int32_t loss = (int32_t)g->nt - 1;
			g_alloc(s, loss);
		}
		backward(s);
		/* What is left of the graph dies with the loss. */
		for (i = 0; i < g->nt && !s->stopped; i++) {
			if (s->alive[i]) {
				s->alive[i] = 0;
				sub(s, (enum vp_cat)g->t[i].cat, tb(s, (int32_t)i));
			}
			g_free(s, (int32_t)i);
		}
		if (s->first_mb)
			grads_total = s->cat[VP_CAT_GRADS];
		s->first_mb = false;
	}
	s->out->saved_per_microbatch = end_fwd_live;
	s->out->grads_bytes = grads_total;
	s->out->host_bytes += s->host_act_peak;
	s->out->shard_gather_bytes = sh.gather;
	s->out->grad_buffer_bytes = sh.grad_buffer;
	if (!s->stopped) {
		s->phase = VP_PHASE_OPTIMIZER;
		s->cur_layer = 0;
		s->cur_op = "optimizer step";
		check(s, host ? 0 : optim_tmp(g, p) / sh.states,
		    VP_CAT_TRANSIENT);
	}
}

static void
sim_init(struct sim *s, const struct vp_graph *g, const struct vp_plan *p)
{
	size_t i, start = SIZE_MAX;

	memset(s, 0, sizeof *s);
	s->g = g;
	s->p = p;
	s->cuda = p->device == VP_DEVICE_CUDA;
	s->refs = xcalloc(g->nt ? g->nt : 1, sizeof *s->refs);
	s->hold = xcalloc(g->nt ? g->nt : 1, sizeof *s->hold);
	s->alive = xcalloc(g->nt ? g->nt : 1, 1);
	s->galive = xcalloc(g->nt ? g->nt : 1, 1);
	s->away = xcalloc(g->nt ? g->nt : 1, 1);
	s->away_bytes = xcalloc(g->layers + 2, sizeof *s->away_bytes);
	s->seg_of = xcalloc(g->nop ? g->nop : 1, sizeof *s->seg_of);
	s->segs = xcalloc(g->nop ? g->nop : 1, sizeof *s->segs);
	/* Segments: maximal runs of recompute ops within one block. */
	for (i = 0; i <= g->nop; i++) {
		bool rc = i < g->nop && g->op[i].recompute;

		if (rc && (start == SIZE_MAX ||
		    g->op[i].layer != g->op[start].layer)) {
			if (start != SIZE_MAX) {
				s->segs[s->nsegs].first = start;
				s->segs[s->nsegs++].end = i;
			}
			start = i;
		} else if (!rc && start != SIZE_MAX) {
			s->segs[s->nsegs].first = start;
			s->segs[s->nsegs++].end = i;
			start = SIZE_MAX;
		}
		if (i < g->nop)
			s->seg_of[i] = rc ? (int32_t)s->nsegs : -1;
	}
	/*
	 * Every tensor is made by one op (graph.c creates each output
	 * fresh), so "made inside segment j" is one lookup; count_refs asks
	 * it for every input of every segment op, which was quadratic in
	 * the segment's length when done by scanning the segment.
	 */
	s->made_seg = xcalloc(g->nt ? g->nt : 1, sizeof *s->made_seg);
	for (i = 0; i < g->nt; i++)
		s->made_seg[i] = -1;
	for (i = 0; i < g->nop; i++) {
		int k;

		for (k = 0; k < VP_OP_MAXIO && g->op[i].out[k] >= 0; k++)
			s->made_seg[g->op[i].out[k]] = s->seg_of[i];
	}
}

static void
sim_free(struct sim *s)
{
	free(s->refs);
	free(s->hold);
	free(s->alive);
	free(s->galive);
	free(s->away);
	free(s->away_bytes);
	free(s->seg_of);
	free(s->made_seg);
	free(s->segs);
}

static int
cmp_live(const void *a, const void *b)
{
	const struct vp_live *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* Group what is live at the stop point by name and term. */
static void
collect_top(struct sim *s, struct vp_mem *out)
{
	const struct vp_graph *g = s->g;
	struct vp_live *v = xcalloc(g->nt + 8, sizeof *v);
	size_t nv = 0, i, j;
	static const enum vp_cat pers[] = { VP_CAT_WEIGHTS, VP_CAT_MASTER,
	    VP_CAT_OPTIM, VP_CAT_GRADS };

	for (i = 0; i < VP_NELEM(pers); i++) {
		uint64_t b = s->cat[pers[i]];
		if (b) {
			v[nv].name = vp_cat_names[pers[i]];
			v[nv].cat = (uint8_t)pers[i];
			v[nv].bytes = b;
			v[nv++].count = 1;
		}
	}
	if (s->stop_extra) {
		v[nv].name = "op workspace / gradient accumulation";
		v[nv].cat = VP_CAT_TRANSIENT;
		v[nv].bytes = s->stop_extra;
		v[nv++].count = 1;
	}
	if (s->wgrad_waiting) {
		v[nv].name = "weight gradient waiting for its tied use";
		v[nv].cat = VP_CAT_TRANSIENT;
		v[nv].bytes = s->wgrad_waiting;
		v[nv++].count = 1;
	}
	for (i = 0; i < g->nt; i++) {
		int pass;

		for (pass = 0; pass < 2; pass++) {
			const char *name;
			uint8_t cat;

			if (pass == 0 && !s->alive[i])
				continue;
			if (pass == 1 && !s->galive[i])
				continue;
			name = pass ? "activation gradient" : g->t[i].name;
			cat = pass ? VP_CAT_TRANSIENT : g->t[i].cat;
			for (j = 0; j < nv; j++)
				if (v[j].name == name && v[j].cat == cat)
					break;
			if (j == nv) {
				v[nv].name = name;
				v[nv].cat = cat;
				v[nv].layer = g->t[i].layer;
				nv++;
			}
			v[j].bytes += pass ? gb(s, (int32_t)i) :
			    tb(s, (int32_t)i);
			v[j].count++;
		}
	}
	qsort(v, nv, sizeof *v, cmp_live);
	out->ntop = (int)(nv < VP_MEM_TOP ? nv : VP_MEM_TOP);
	memcpy(out->top, v, (size_t)out->ntop * sizeof *v);
	free(v);
}

/* Whether any byte count could wrap a 64-bit sum in the replay. */
static bool
graph_too_big(const struct vp_graph *g)
{
	const uint64_t lim = 1ULL << 60;
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < g->nt; i++) {
		if (g->t[i].bytes >= lim)
			return true;
		sum = vp_add_sat(sum, g->t[i].bytes);
	}
	sum = vp_add_sat(sum, vp_add_sat(g->weight_bytes, g->master_bytes));
	sum = vp_add_sat(sum, vp_mul_sat(4, g->grad_bytes));
	return sum >= lim;
}

/*
 * Pipeline 1F1B: stage i holds the saved activations of up to pp - i
 * micro-batches before its first backward; the interleaved schedule (vpp
 * chunks) holds (1 + (pp-1)/(pp*vpp)) times the first stage's share
 * (Korthikanti et al., §4.2.3).  Returns the extra micro-batches held.
 */
static double
inflight_extra(const struct vp_plan *p)
{
	unsigned pp = p->pp;
	double k;

	if (pp <= 1)
		return 0;
	k = (double)(pp - p->stage);
	if (k > (double)p->grad_accum)
		k = (double)p->grad_accum;
	if (p->vpp > 1 && p->stage == 0)
		k *= 1.0 + (double)(pp - 1) / ((double)pp * p->vpp);
	return k > 1 ? k - 1 : 0;
}

/*
 * A calibrated profile corrects the terms the fit measured: activations
 * and logits by the lowering's scale, transient buffers and optimizer
 * temporaries by another, plus allocations the model does not see (a
 * cuBLAS workspace held by the caching allocator).  The peak moves by the
 * change of the terms it is made of.
 */
static void
calibrate(struct vp_mem *out, const struct vp_model *m,
    const struct vp_profile *pr)
{
	double k, before, after, delta;
	int c;

	if (pr == NULL || !pr->calibrated)
		return;
	k = pr->act_scale[vp_lowering(m)];
	before = (double)out->term[VP_CAT_ACT] + (double)out->term[VP_CAT_LOGITS] +
	    (double)out->term[VP_CAT_TRANSIENT];
	out->term[VP_CAT_ACT] = vp_scale(out->term[VP_CAT_ACT], k);
	out->term[VP_CAT_LOGITS] = vp_scale(out->term[VP_CAT_LOGITS], k);
	out->term[VP_CAT_TRANSIENT] = vp_add_sat(vp_scale(
	    out->term[VP_CAT_TRANSIENT], pr->temp_scale), pr->alloc_fixed_bytes);
	after = (double)out->term[VP_CAT_ACT] + (double)out->term[VP_CAT_LOGITS] +
	    (double)out->term[VP_CAT_TRANSIENT];
	delta = after - before;
	out->allocated_peak = (uint64_t)fmax(0.0,
	    (double)out->allocated_peak + delta);
	for (c = 0; c < VP_PHASE_COUNT; c++)
		out->phase_peak[c] = (uint64_t)fmax(0.0,
		    (double)out->phase_peak[c] + (c == (int)out->peak_phase ?
		    delta : (double)pr->alloc_fixed_bytes));
}

/* Reserved from allocated: the fragmentation share, then whole segments
 * of the caching allocator's large size class (2 MiB). */
uint64_t
vp_mem_reserved(uint64_t allocated, double share, const struct vp_profile *p)
{
	uint64_t r = vp_scale(allocated, 1.0 + share);

	return (r + p->large_segment_bytes - 1) / p->large_segment_bytes *
	    p->large_segment_bytes;
}

/* Reserved and device levels from the allocated peak. */
static void
levels(struct vp_mem *out, const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o)
{
	const struct vp_profile *pr = o->profile;
	uint64_t r;

	if (out->allocated_peak == UINT64_MAX) {
		out->reserved_peak = out->device_peak = UINT64_MAX;
		return;
	}
	calibrate(out, m, pr);
	if (p->device == VP_DEVICE_CPU) {
		/* No caching allocator and no context to account for. */
		out->reserved_peak = out->device_peak = out->allocated_peak;
		return;
	}
	r = vp_mem_reserved(out->allocated_peak, pr->frag_share, pr);
	out->reserved_peak = r;
	out->frag_bytes = r - out->allocated_peak;
	vp_stack_consts(pr, p->torch_version, p->cuda_version,
	    &out->context_bytes, &out->workspace_bytes);
	/* One NCCL communicator per process group this rank is in. */
	out->nccl_bytes = vp_mul_sat(vp_plan_groups(p, o->world),
	    pr->nccl_bytes_per_group);
	out->device_peak = vp_add_sat(r, out->context_bytes +
	    out->workspace_bytes + out->nccl_bytes);
	out->overhead_bytes = out->device_peak - out->allocated_peak;
}

/* The in-flight share on every point, and where the top is. */
static void
tl_finish(struct vp_timeline *tl, uint64_t inflight)
{
	size_t i;

	tl->peak = 0;
	for (i = 0; i < tl->n; i++) {
		tl->live[i] = vp_add_sat(tl->live[i], inflight);
		if (tl->live[i] > tl->live[tl->peak])
			tl->peak = i;
	}
}

/* Every entry point runs on a finished plan (vp_plan_normalize): no
 * degree is 0 and the node size is known. */
static void
plan_normalized(const struct vp_plan *p)
{
	(void)p;
	assert(vp_plan_degrees_ok(p) && p->gpus_per_node >= 1);
}

/* The replay alone: allocated peak, its breakdown, phase peaks. */
static void
replay(const struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, const struct vp_mem_opts *o, struct vp_mem *out,
    struct vp_timeline *tl)
{
	struct sim s;
	uint64_t inflight;
	int c;

	plan_normalized(p);

	memset(out, 0, sizeof *out);
	if (graph_too_big(g)) {
		/* Past 2^60 bytes nothing fits anywhere; say so without
		 * letting byte sums wrap. */
		for (c = 0; c < VP_CAT_COUNT; c++)
			out->term[c] = UINT64_MAX;
		out->allocated_peak = UINT64_MAX;
		out->weights_bytes = g->weight_bytes;
		out->params = g->params;
		return;
	}
	sim_init(&s, g, p);
	s.out = out;
	if (tl != NULL) {
		memset(tl, 0, sizeof *tl);
		tl->per_point = 1;
		s.tl = tl;
	}
	simulate(&s, m);
	inflight = vp_scale(out->saved_per_microbatch, inflight_extra(p));
	out->allocated_peak = s.peak + inflight;
	if (tl != NULL)
		tl_finish(tl, inflight);
	for (c = 0; c < VP_CAT_COUNT; c++)
		out->term[c] = s.peak_cat[c];
	out->term[VP_CAT_ACT] += inflight;
	out->peak_phase = s.peak_phase;
	out->peak_layer = s.peak_layer;
	out->peak_op = s.peak_op;
	memcpy(out->phase_peak, s.phase_peak, sizeof s.phase_peak);
	if (o->explain) {
		struct sim e;
		struct vp_mem tmp;

		sim_init(&e, g, p);
		memset(&tmp, 0, sizeof tmp);
		e.out = &tmp;
		e.stop_at = s.peak_event;
		simulate(&e, m);
		collect_top(&e, out);
		sim_free(&e);
	}
	sim_free(&s);
}

void
vp_mem_run(const struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, const struct vp_mem_opts *o, struct vp_mem *out)
{
	replay(g, m, p, o, out, NULL);
	levels(out, m, p, o);
}

/* a + k (b - a) in double, clamped at 0 and saturated. */
static uint64_t
extrapolate(uint64_t a, uint64_t b, double k)
{
	double v = (double)b + k * ((double)b - (double)a);

	if (!(v > 0))
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)v;
}

/*
 * Whether replays of na and nb blocks peak at the same place: the same
 * phase and op, in the same block counted from the first or from the
 * last (or both outside the blocks).  Only then is the line through them
 * the line the peak follows.
 */
static bool
same_place(const struct vp_mem *a, uint32_t na, const struct vp_mem *b,
    uint32_t nb)
{
	if (a->peak_phase != b->peak_phase || a->peak_op == NULL ||
	    b->peak_op == NULL || strcmp(a->peak_op, b->peak_op) != 0)
		return false;
	if (a->peak_layer == 0 || b->peak_layer == 0)
		return a->peak_layer == b->peak_layer;
	return a->peak_layer == b->peak_layer ||
	    na - a->peak_layer == nb - b->peak_layer;
}

/* A replay of the stage lowered with `blocks` blocks, without the
 * pipeline's in-flight share. */
static void
replay_blocks(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *q, uint64_t blocks, struct vp_mem *out)
{
	struct vp_graph g;

	vp_graph_build_blocks(m, p, blocks, &g);
	replay(&g, m, p, q, out, NULL);
	vp_graph_free(&g);
}

/*
 * Blocks are identical, so every phase's peak is affine in the number of
 * blocks (each block adds its saved tensors, its gradients, its states):
 * replay two and three blocks and extend the line.  Exact for the
 * per-phase peaks the replay reports (tested against the full replay)
 * while the peak stays at one place; when the two-block replay peaks
 * elsewhere than the three-block one (a first stage whose lone second
 * block leaves the peak at the embedding's backward), three and four
 * blocks give the line.
 */
int
vp_mem_estimate_fast(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out)
{
	struct vp_mem a, b;
	struct vp_mem_opts q = *o;
	uint64_t blocks, inflight;
	struct vp_plan one = *p;
	double k;
	int c, best = 0;

	plan_normalized(p);
	blocks = vp_stage_blocks(m->layers, p->pp, p->stage);
	/* Identical blocks only: DeepSeek's dense first blocks differ. */
	if (blocks <= 4 || o->explain || (m->has_moe && m->moe.first_dense))
		return vp_mem_estimate(m, p, o, out);
	k = (double)blocks - 3.0;
	q.explain = 0;
	/* Replay without the pipeline's in-flight share; add it after. */
	one.stage = p->stage;
	replay_blocks(m, &one, &q, 2, &a);
	replay_blocks(m, &one, &q, 3, &b);
	if (a.allocated_peak != UINT64_MAX && b.allocated_peak != UINT64_MAX &&
	    !same_place(&a, 2, &b, 3)) {
		a = b;
		replay_blocks(m, &one, &q, 4, &b);
		k = (double)blocks - 4.0;
	}
	if (a.allocated_peak == UINT64_MAX || b.allocated_peak == UINT64_MAX) {
		*out = b;
		levels(out, m, p, o);
		return 0;
	}
	*out = b;
	out->saved_per_microbatch = extrapolate(a.saved_per_microbatch,
	    b.saved_per_microbatch, k);
	inflight = vp_scale(out->saved_per_microbatch, inflight_extra(p));
	for (c = 0; c < VP_PHASE_COUNT; c++) {
		out->phase_peak[c] = extrapolate(a.phase_peak[c],
		    b.phase_peak[c], k);
		if (out->phase_peak[c] > out->phase_peak[best])
			best = c;
	}
	out->peak_phase = (enum vp_phase)best;
	out->grads_bytes = extrapolate(a.grads_bytes, b.grads_bytes, k);
	/* Phase peaks leave out the pipeline's in-flight share. */
	out->allocated_peak = vp_add_sat(out->phase_peak[best], inflight);
	if (a.peak_phase == b.peak_phase && (int)b.peak_phase == best)
		for (c = 0; c < VP_CAT_COUNT; c++)
			out->term[c] = extrapolate(a.term[c], b.term[c], k);
	levels(out, m, p, o);
	return 0;
}

int
vp_mem_estimate(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out)
{
	struct vp_graph g;

	if (vp_graph_build(m, p, &g) != 0)
		return -1;
	vp_mem_run(&g, m, p, o, out);
	vp_graph_free(&g);
	return 0;
}

int
vp_mem_estimate_timeline(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out, struct vp_timeline *tl)
{
	struct vp_graph g;

	memset(tl, 0, sizeof *tl);
	if (vp_graph_build(m, p, &g) != 0)
		return -1;
	replay(&g, m, p, o, out, tl);
	levels(out, m, p, o);
	vp_graph_free(&g);
	return 0;
}
