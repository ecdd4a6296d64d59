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
 * the attention core; op = one segment per block whose selective-
 * checkpoint cache (torch.utils.checkpoint's _CachingTorchDispatchMode)
 * holds the outputs the policy saves (vp_op.sac) from the forward until
 * the re-run, which uses them instead of making them again (t_alloc finds
 * them alive).
 */
#include "mem.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "finetune.h"
#include "load.h"

#define X(e, s) s,
const char *const vp_phase_names[VP_PHASE_COUNT] = { VP_PHASE_LIST(X) };
#undef X

struct seg {
	size_t first, end;	/* ops [first, end) */
};

/*
 * The event stream the caching allocator is fed (CUDA, exact replay):
 * every allocation and free the replay makes, in order, one slot per
 * allocation.  Before EV_BODY: what exists before the step (weights,
 * master weights, labels, framework buffers, the pipeline's in-flight
 * activations); optimizer states, tagged TAG_STATE there, are created at
 * the first optimizer step instead, as torch.optim does.  EV_OPTIM is the
 * optimizer step: its bytes are the step's temporaries, its tag how they
 * are made (TAG_FOREACH, TAG_LOOP); feed() turns it into the
 * per-parameter allocations of that implementation, with the parameters
 * in the sizes of the weight gradients backward made (sim.par).
 */
enum { EV_ALLOC, EV_FREE, EV_BODY, EV_OPTIM };
enum { TAG_NONE, TAG_STATE, TAG_GRAD, TAG_FOREACH, TAG_LOOP };

struct ev {
	uint64_t bytes;
	uint32_t slot;
	uint8_t kind, tag;
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
	uint64_t place_peak[VP_PHASE_COUNT][VP_PLACES];
	uint8_t place;		/* where the current op is (place_of) */
	uint32_t per, rem;	/* the block pattern's period, the blocks
				 * after the last whole one */
	uint32_t cur_layer;
	const char *cur_op;
	bool first_mb;		/* gradients not yet allocated */
	unsigned gshard;	/* gradients kept per rank: 1/gshard */
	uint64_t shard_tmp;	/* gathered parameters during fwd/bwd */
	uint64_t unit_grad;	/* a unit's full gradient before reduction */
	/* DeepSpeed ZeRO-1/2 (stage_1_and_2.py): the IPG bucket(s), made
	 * when backward starts (setup_buckets) and dropped at its end
	 * (_release_ipg_buffers); the flat gradient partition the epilogue
	 * makes beside every gradient, which the optimizer step reads. */
	uint64_t ds_ipg, ds_gpart;
	uint64_t ds_grads;	/* the gradients the epilogue found */
	uint32_t ds_ipg_slot;
	/* DeepSpeed ZeRO-3 over the step (ds3_now): what is gathered. */
	struct ds3_tl {
		bool on;
		uint64_t unit;	/* one block's partitioned parameters */
		uint64_t ahead;	/* prefetched ahead of the module run */
		uint64_t embed, head;	/* the root's, gathered */
		uint32_t kept;	/* the last blocks kept across the turn */
		bool embed_kept, head_kept;
		bool embed_bwd;	/* the embeddings run a backward */
	} d3;
	/* FSDP over the step (fsdp_now): what it holds gathered or
	 * unreduced depends on the phase and the block being run. */
	struct fsdp_tl {
		bool on, v2, raf;
		enum vp_fsdp_prefetch prefetch;
		uint64_t root;	/* the root unit gathered */
		uint64_t unit;	/* one block gathered */
		uint64_t ugrad;	/* one block's unsharded gradients */
		uint64_t rs;	/* FSDP2: the pending reduce-scatter input */
		uint64_t root_rs;	/* the root's reduce-scatter input */
		unsigned cnum, cden;	/* unsharded / weight-gradient bytes */
		/* --fsdp-units split (fsdp_split_now): the embedding unit
		 * and the [norm, head] one, gathered, and the head's
		 * reduce-scatter input (root_rs is the embedding's) */
		bool split;
		uint64_t emb, head, head_rs;
		size_t head_end;	/* the op after the head's last */
	} ft;
	uint64_t ft_rootg;	/* the root's gradients, unsharded part */
	uint64_t ft_unitg;	/* the block's gradients so far, likewise */
	uint32_t ft_last;	/* the last block this phase has run */
	bool ft_loss;		/* --fsdp-units split: an op after the head */
	bool grads_prealloc;	/* gradients go into a preallocated buffer */
	bool grads_offload;	/* gradients leave for host RAM when made */
	bool oib;		/* --optimizer-in-backward: each parameter
				 * steps in its hook, then drops its gradient */
	uint64_t oib_num, oib_den;	/* the step's temporaries per byte
				 * of one parameter's gradient */
	uint64_t wgrad_waiting;	/* weight gradients held by autograd until
				 * another use's is added (tied weights) */
	uint64_t host_act, host_act_peak;
	/* torchtune's OffloadActivations under checkpointing (ckin_*). */
	uint8_t *cko;		/* checkpoint input packed: 1 its host copy
				 * made, the GPU original in the stash; 2 the
				 * GPU original freed (on the host only) */
	int32_t *stash;		/* the forward stash, in pack order */
	uint64_t *stash_id;	/* their pack ids */
	size_t nstash;
	uint64_t pack_id;	/* ids given so far */
	int32_t *bstash;	/* brought back, held until the next unpack */
	size_t nbstash;
	uint64_t tail_packs;	/* offloadable saves from the last block to
				 * the head (the final norm's) */
	size_t head_op;		/* the first op making logits */
	/* Explain: stop when the event counter reaches stop_at. */
	uint64_t events, peak_event, stop_at;
	bool stopped;
	uint64_t stop_extra;
	enum vp_phase stop_phase;
	/* What --explain names the framework's buffers by (fw_buffers). */
	int fwbuf;		/* row of fw_buffers, -1: none */
	uint64_t grad_buffer;	/* persistent, in the transient term */
	uint64_t persist;	/* ZeRO-3 persistent parameters (weights) */
	bool grads_contig;	/* the gradient term is one buffer */
	struct vp_mem *out;
	struct vp_timeline *tl;	/* NULL: no timeline */
	/* The allocator's event stream (rec: being recorded). */
	bool rec;
	struct vp_alloc_conf conf;	/* rounding: one source of truth */
	bool round512;		/* conf rounds every request to 512 B */
	struct ev *ev;
	size_t nev, evcap;
	uint32_t nslots;
	uint32_t *th, *gh;	/* tensor / its gradient → slot */
	uint32_t *tmp;		/* this check's temporaries */
	size_t ntmp, captmp;
	uint32_t gather_slot, unit_grad_slot, wait_slot;
	size_t inflight_ev;	/* the in-flight activations' event */
	/* The trainable parameters, as the weight gradients backward makes
	 * them (backward order, first micro-batch): the optimizer's
	 * per-parameter tensors are cut in these proportions. */
	uint64_t *par;
	size_t npar, parcap;
	unsigned opt_copies;	/* state tensors per parameter */
	unsigned opt_lists;	/* foreach temporary lists */
};

/* A request as the CUDA caching allocator rounds it (round_size: 512 B,
 * or a power-of-two division when the allocator's options say so). */
static inline uint64_t
rb(const struct sim *s, uint64_t b)
{
	if (!s->cuda || b == 0 || b > UINT64_MAX - (8ULL << 30))
		return b;
	if (s->round512)	/* the same as vp_alloc_round_size, inline */
		return b < VP_ALLOC_MIN_BLOCK ? VP_ALLOC_MIN_BLOCK :
		    (b + VP_ALLOC_MIN_BLOCK - 1) / VP_ALLOC_MIN_BLOCK *
		    VP_ALLOC_MIN_BLOCK;
	return vp_alloc_round_size(&s->conf, b);
}

/*
 * A transient's bytes: as a block when the allocator is fed (its
 * max_memory_allocated counts blocks), else as the request, as the
 * replay has always summed them.
 */
static inline uint64_t
rt(const struct sim *s, uint64_t b)
{
	return s->rec ? rb(s, b) : b;
}

static inline uint64_t
tb(const struct sim *s, int32_t t)
{
	return rb(s, s->g->t[t].bytes);
}

static void
ev_push(struct sim *s, int kind, uint64_t bytes, uint32_t slot, int tag)
{
	struct ev *e;

	if (s->nev == s->evcap) {
		s->evcap = s->evcap ? 2 * s->evcap : 4096;
		s->ev = xrealloc(s->ev, s->evcap * sizeof *s->ev);
	}
	e = &s->ev[s->nev++];
	e->bytes = bytes;
	e->slot = slot;
	e->kind = (uint8_t)kind;
	e->tag = (uint8_t)tag;
}

/* An allocation of the event stream: its slot (0: none recorded). */
static uint32_t
ev_alloc(struct sim *s, uint64_t bytes, int tag)
{
	if (!s->rec || bytes == 0)
		return 0;
	ev_push(s, EV_ALLOC, bytes, ++s->nslots, tag);
	return s->nslots;
}

static void
ev_free(struct sim *s, uint32_t *slot)
{
	if (s->rec && *slot)
		ev_push(s, EV_FREE, 0, *slot, TAG_NONE);
	*slot = 0;
}

/* A temporary of the next check: allocated now, freed after it. */
static uint64_t
tmp_rec(struct sim *s, uint64_t bytes)
{
	bytes = rb(s, bytes);
	if (bytes) {
		if (s->ntmp == s->captmp) {
			s->captmp = s->captmp ? 2 * s->captmp : 16;
			s->tmp = xreallocarray(s->tmp, s->captmp,
			    sizeof *s->tmp);
		}
		s->tmp[s->ntmp++] = ev_alloc(s, bytes, TAG_NONE);
	}
	return bytes;
}

/* The replay's hot path: nothing but the bytes when nothing is fed. */
static inline uint64_t
tmp_alloc(struct sim *s, uint64_t bytes)
{
	return s->rec ? tmp_rec(s, bytes) : bytes;
}

static void
tmp_free(struct sim *s)
{
	while (s->ntmp > 0)
		ev_free(s, &s->tmp[--s->ntmp]);
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
 * One event into the timeline.  A point takes up to per_point events of
 * one phase (the largest value, its phase and its terms stay); a new
 * phase starts a new point, so that a short phase (the loss, the
 * optimizer step) keeps a point of its own.  When the points run out,
 * neighbours of one phase are merged and every point covers twice as many
 * events from then on, so the whole step always fits.
 */
static void
tl_set(struct vp_timeline *tl, size_t i, uint64_t v, enum vp_phase ph,
    const uint64_t *cat, uint64_t extra, enum vp_cat extra_cat)
{
	tl->live[i] = v;
	tl->phase[i] = (uint8_t)ph;
	memcpy(tl->term[i], cat, sizeof tl->term[i]);
	tl->term[i][extra_cat] += extra;
}

static void
tl_move(struct vp_timeline *tl, size_t to, size_t from)
{
	tl->live[to] = tl->live[from];
	tl->phase[to] = tl->phase[from];
	memcpy(tl->term[to], tl->term[from], sizeof tl->term[to]);
}

/* Halve the points: pairs of one phase become their larger one; a point
 * between two phases stays.  Should phases alternate at every point,
 * pairs are merged whatever their phases (the larger one's stays). */
static void
tl_compact(struct vp_timeline *tl)
{
	size_t i = 0, j = 0;
	bool any_phase = false;

	for (;;) {
		while (i < tl->n) {
			if (i + 1 < tl->n && (any_phase ||
			    tl->phase[i] == tl->phase[i + 1])) {
				tl_move(tl, j, i + (tl->live[i + 1] >
				    tl->live[i]));
				i += 2;
			} else {
				tl_move(tl, j, i);
				i++;
			}
			j++;
		}
		if (j < tl->n || any_phase)
			break;
		any_phase = true;
		i = j = 0;
	}
	tl->n = j;
	tl->per_point *= 2;
}

static void
tl_record(struct vp_timeline *tl, uint64_t v, enum vp_phase ph,
    const uint64_t *cat, uint64_t extra, enum vp_cat extra_cat)
{
	tl->events++;
	if (tl->n > 0 && tl->fill < tl->per_point &&
	    tl->phase[tl->n - 1] == (uint8_t)ph) {
		tl->fill++;
		if (v > tl->live[tl->n - 1])
			tl_set(tl, tl->n - 1, v, ph, cat, extra, extra_cat);
		return;
	}
	if (tl->n == VP_TIMELINE_MAX)
		tl_compact(tl);
	tl_set(tl, tl->n, v, ph, cat, extra, extra_cat);
	tl->n++;
	tl->fill = 1;
}

/*
 * FSDP full and hybrid sharding, over the step: the bytes FSDP holds
 * beside the replay's tensors at this point (phase, block being run), from
 * torch/distributed/fsdp (FSDP1: _runtime_utils.py, _flat_param.py; FSDP2:
 * _fully_shard/_fsdp_param_group.py, _fsdp_collectives.py), measured per
 * rank on the CPU (tests/validate_fsdp.py).
 * - The root unit (embeddings, final norm, head) is gathered from the
 *   first forward to the end of backward (neither FSDP1 nor FSDP2's
 *   default reshards the root after forward), and its gradients stay
 *   unsharded until its post-backward at the very end (ft_rootg).
 * - Forward: FSDP1 gathers one block into its padded flat parameter;
 *   FSDP2 all-gathers into an output buffer and copies out into the
 *   block's parameters, and keeps the output until the next block's
 *   copy-out (implicit forward prefetch): two blocks' worth.  With
 *   reshard_after_forward off every block stays gathered to its backward.
 * - Backward: the block, its gradients (ugrad), and the next block when
 *   it is prefetched (FSDP1 BACKWARD_PRE, FSDP2 always) from the
 *   pre-backward hook; FSDP2 also keeps the last reduce-scatter input
 *   until the next block's post-backward.
 */
/*
 * FSDP2 with --fsdp-units split, torchtitan's apply_fsdp (v0.2.2,
 * models/llama3/infra/parallelize.py): fully_shard on tok_embeddings, on
 * each block, on [norm, output] with reshard_after_forward False, then on
 * the model (no parameters of its own), whose forward returns the logits
 * (the loss after it).  From torch/distributed/fsdp/_fully_shard, measured
 * per rank on the CPU (tests/validate_fsdp.py, the split cases):
 * - forward: each unit's all-gather output stays until the next unit's
 *   copy-out (wait_for_unshard), so the embeddings hold twice their size,
 *   a block two blocks, the head unit twice its size until the root's
 *   post-forward frees the last output (FSDPState._post_forward), before
 *   the loss; the embeddings are resharded after forward like the blocks,
 *   the head unit is kept to its backward;
 * - backward: the head unit and its gradients, with block n prefetched
 *   from its pre-backward, once the loss's backward has reached the
 *   logits;
 *   its post-backward (when block n's backward begins) frees both and
 *   leaves its reduce-scatter input until block n's post-backward; block 1
 *   prefetches the embeddings, whose gradients stay whole to their
 *   post-backward at the very end (root_rs: their reduce-scatter input).
 * - reshard_after_forward off: the embeddings and every block stay
 *   gathered from their forward to their backward.
 */
static uint64_t
fsdp_split_now(const struct sim *s)
{
	const struct fsdp_tl *f = &s->ft;
	uint32_t l = s->cur_layer, n = s->g->layers;
	uint64_t kept = f->raf ? 0 : f->emb;	/* the embeddings, kept */

	if (s->phase != VP_PHASE_BACKWARD) {
		if (l == 0 && s->ft_last == 0)	/* the embeddings */
			return 2 * f->emb;
		if (!f->raf)
			kept += (uint64_t)(l == 0 ? n : l - 1) * f->unit;
		if (l == 0)		/* after the blocks: norm, head, loss */
			return kept + (s->ft_loss ? 1 : 2) * f->head;
		return kept + 2 * f->unit;
	}
	if (l == 0 && s->ft_last == 0)	/* the loss and head, first */
		return f->head + s->ft_rootg + (f->raf ? (s->ft_loss ? 0 :
		    f->unit) : kept + (uint64_t)n * f->unit);
	if (l == 0)			/* the embeddings, last */
		return f->emb + s->ft_rootg + f->rs;
	return s->ft_unitg + (l < n ? f->rs : f->head_rs) + (f->raf ?
	    f->unit + (l > 1 ? f->unit : f->emb) :
	    kept + (uint64_t)l * f->unit);
}

static uint64_t
fsdp_now(const struct sim *s)
{
	const struct fsdp_tl *f = &s->ft;
	uint32_t l = s->cur_layer, n = s->g->layers;
	uint64_t v = f->root;
	bool ahead = f->v2 || f->prefetch == VP_FSDP_PREFETCH_PRE;

	if (f->split)
		return fsdp_split_now(s);
	if (s->phase != VP_PHASE_BACKWARD) {
		if (l == 0 && s->ft_last == 0)	/* the embeddings */
			return f->v2 ? 2 * f->root : f->root;
		if (l == 0)		/* after the blocks */
			return v + (f->v2 ? f->unit : 0) +
			    (f->v2 && !f->raf ? (uint64_t)n * f->unit : 0);
		v += f->v2 ? 2 * f->unit : f->unit;
		if (f->v2 && !f->raf)
			v += (uint64_t)(l - 1) * f->unit;
		return v;
	}
	v += s->ft_rootg;
	if (l == 0 && s->ft_last == 0) {	/* the head, first */
		if (f->v2 && !f->raf)
			return v + (uint64_t)n * f->unit;
		return v + (ahead ? f->unit : 0);
	}
	if (l == 0)			/* the embeddings, last */
		return v + f->rs;
	v += s->ft_unitg + (l < n ? f->rs : 0);
	if (f->v2 && !f->raf)
		return v + (uint64_t)l * f->unit;
	return v + f->unit + (l > 1 && ahead ? f->unit : 0);
}

/*
 * DeepSpeed ZeRO-3 over the step, from its second on (a complete trace,
 * partitioned_param_coordinator.py): a module's parameters are gathered
 * when it runs, with up to stage3_prefetch_bucket_size elements ahead;
 * when it ends, __params_to_release keeps those met again within
 * stage3_max_reuse_distance elements of the trace, so the last blocks of
 * forward (and the head) stay gathered across the turn into backward, each
 * until its own backward is done (ds3_timeline).
 */
static uint64_t
ds3_now(const struct sim *s)
{
	const struct ds3_tl *d = &s->d3;
	uint32_t l = s->cur_layer, n = s->g->layers;
	uint32_t first = n > d->kept ? n - d->kept + 1 : 1;	/* kept from */
	uint64_t v = d->embed_kept ? d->embed : 0;

	if (s->phase != VP_PHASE_BACKWARD) {
		if (l == 0 && s->ft_last == 0)	/* the embeddings */
			return d->embed + d->ahead;
		if (l == 0)		/* after the blocks: norm, head, loss */
			return v + (uint64_t)d->kept * d->unit + d->head;
		/* kept blocks before this one, this one, the prefetch */
		return v + (uint64_t)(l > first ? l - first : 0) * d->unit +
		    d->unit + d->ahead;
	}
	if (l == 0 && s->ft_last == 0)	/* the head, first */
		return v + (uint64_t)d->kept * d->unit + d->head +
		    (d->kept ? 0 : d->ahead);
	if (l == 0)			/* the embeddings, last */
		return d->embed_bwd ? d->embed : 0;
	/* kept blocks below this one, this one, the next when not kept */
	return v + (uint64_t)(l > first ? l - first : 0) * d->unit +
	    d->unit + (l - 1 >= first ? 0 : d->ahead);
}

/* Record a possible peak: current live bytes plus transient extra. */
/*
 * Where op i is, for the fast replay: before or after the blocks, in the
 * first period of blocks (with --recompute-stride N, N blocks), in the
 * last one with the blocks after it, or in between.  At one op of one
 * period, everything held is affine in the number of periods before and
 * after it (each holds its saved tensors or has made its gradients), so
 * each place's peak is affine in the stage's periods and a period in
 * between never peaks above both ends.
 */
static uint8_t
place_of(const struct sim *s, size_t i)
{
	const struct vp_graph *g = s->g;
	uint32_t l = g->op[i].layer;

	if (l == 0)
		return i < g->layer_first_op[1] ? VP_PLACE_BEFORE :
		    VP_PLACE_AFTER;
	if (l <= s->per)
		return VP_PLACE_FIRST;
	if (l + s->per + s->rem > g->layers)
		return VP_PLACE_LAST;
	return VP_PLACE_INSIDE;
}

static void
check(struct sim *s, uint64_t extra, enum vp_cat extra_cat)
{
	uint64_t v;

	/* Sharded parameters are gathered while forward and backward run. */
	if (s->ft.on) {
		if (s->phase != VP_PHASE_OPTIMIZER)
			extra += fsdp_now(s);
	} else if (s->d3.on) {
		if (s->phase != VP_PHASE_OPTIMIZER)
			extra += ds3_now(s);
		if (s->phase == VP_PHASE_BACKWARD)
			extra += s->unit_grad + s->ds_ipg;
	} else {
		if (s->phase != VP_PHASE_OPTIMIZER)
			extra += s->shard_tmp;
		if (s->phase == VP_PHASE_BACKWARD)
			extra += s->unit_grad + s->ds_ipg;
	}
	v = s->live + extra;
	s->events++;
	if (s->tl != NULL)
		tl_record(s->tl, v, s->phase, s->cat, extra, extra_cat);
	if (s->stop_at && s->events == s->stop_at && !s->stopped) {
		s->stopped = true;
		s->stop_extra = extra;
		s->stop_phase = s->phase;
	}
	if (v > s->phase_peak[s->phase])
		s->phase_peak[s->phase] = v;
	if (v > s->place_peak[s->phase][s->place])
		s->place_peak[s->phase][s->place] = v;
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

static inline void
t_alloc(struct sim *s, int32_t t)
{
	if (s->alive[t])
		return;
	s->alive[t] = 1;
	add(s, (enum vp_cat)s->g->t[t].cat, tb(s, t));
	if (s->rec)
		s->th[t] = ev_alloc(s, tb(s, t), TAG_NONE);
}

static inline void
t_unref(struct sim *s, int32_t t)
{
	if (s->refs[t] > 0 && --s->refs[t] == 0 && s->alive[t] &&
	    !s->stopped) {
		s->alive[t] = 0;
		sub(s, (enum vp_cat)s->g->t[t].cat, tb(s, t));
		if (s->rec)
			ev_free(s, &s->th[t]);
	}
}

/* The gradient of tensor t: one piece of it when experts run one at a
 * time (struct vp_tensor, pieces). */
static inline uint64_t
gb(const struct sim *s, int32_t t)
{
	unsigned n = s->g->t[t].pieces;

	return n > 1 ? rb(s, s->g->t[t].bytes / n) : tb(s, t);
}

static inline void
g_alloc(struct sim *s, int32_t t)
{
	s->galive[t] = 1;
	add(s, VP_CAT_TRANSIENT, gb(s, t));
	if (s->rec)
		s->gh[t] = ev_alloc(s, gb(s, t), TAG_NONE);
}

static inline void
g_free(struct sim *s, int32_t t)
{
	if (s->galive[t] && !s->stopped) {
		s->galive[t] = 0;
		sub(s, VP_CAT_TRANSIENT, gb(s, t));
		if (s->rec)
			ev_free(s, &s->gh[t]);
	}
}

static void bstash_release(struct sim *, size_t);

/*
 * torchtune's OffloadActivations (training/_activation_offloading.py),
 * what --activation-offload is under checkpointing.  It is a
 * saved_tensors_hooks context around the model's forward; inside a
 * checkpoint the checkpoint's own hooks win, so what it packs are the
 * checkpoints' inputs (torch.utils.checkpoint's _NoopSaveInputs saves
 * them outside its hook), the saves of blocks not checkpointed and the
 * final norm's (the output head runs under NoOpManager, the loss outside
 * the context).  rules.c refuses plans with a block not checkpointed
 * (no recompute, selective, a stride): their every save would be packed,
 * a per-save timeline this does not model.  A pack of min_offload_size (1024) bytes or more gets a
 * host copy at once; with streams (the default) the GPU original stays
 * in the forward stash until a later offloadable pack's id is
 * max_fwd_stash_size (5) past its own; the backward's first unpack
 * empties the stash.  An unpack brings the tensor back (or takes the
 * stashed original) and frees the host copy; a tensor brought back stays
 * in bwd_tensor_stash until the hook of the next node that unpacks one.
 * Op-policy caches are kept by the checkpoint itself, never packed.
 */
#define OFFLOAD_STASH	5	/* max_fwd_stash_size */
#define OFFLOAD_MIN	1024	/* min_offload_size, bytes */

/* Whether segment sg is a whole block (full or op policy). */
static bool
seg_is_block(const struct sim *s, const struct seg *sg)
{
	uint32_t l = s->g->op[sg->first].layer;

	return s->p->activation_offload && l > 0 &&
	    sg->first == s->g->layer_first_op[l] &&
	    sg->end == s->g->layer_first_op[l + 1];
}

/* The stash drops the entries with ids up to `upto`: an original only
 * the checkpoint holds leaves the GPU. */
static void
stash_evict(struct sim *s, uint64_t upto)
{
	size_t i, n = 0;

	for (i = 0; i < s->nstash; i++) {
		int32_t t = s->stash[i];

		if (s->stash_id[i] > upto) {
			s->stash[n] = t;
			s->stash_id[n++] = s->stash_id[i];
			continue;
		}
		if (s->cko[t] == 1 && s->alive[t] && s->refs[t] == 1 &&
		    s->hold[t] == 1) {
			s->cko[t] = 2;
			sub(s, (enum vp_cat)s->g->t[t].cat, tb(s, t));
			if (s->rec)
				ev_free(s, &s->th[t]);
		}
	}
	s->nstash = n;
}

/* Pack id n offloadable: older entries leave (pack_tensor). */
static void
stash_advance(struct sim *s, uint64_t n)
{
	s->pack_id += n;
	if (s->pack_id > OFFLOAD_STASH)
		stash_evict(s, s->pack_id - OFFLOAD_STASH);
}

/*
 * The next input of segment j's ops that the segment did not make (its
 * checkpoint's inputs), one per use, in op order; -1 at the end.  *i and
 * *k are the cursor: start at the segment's first op and 0.
 */
static int32_t
seg_next_input(const struct sim *s, int32_t j, size_t *i, int *k)
{
	const struct vp_graph *g = s->g;
	const struct seg *sg = &s->segs[j];

	for (; *i < sg->end; (*i)++, *k = 0)
		while (*k < VP_OP_MAXIO && g->op[*i].in[*k] >= 0) {
			int32_t t = g->op[*i].in[(*k)++];

			if (s->made_seg[t] != j)
				return t;
		}
	return -1;
}

/* A checkpointed block starts: _NoopSaveInputs packs its inputs. */
static void
ckin_pack(struct sim *s, int32_t j)
{
	const struct vp_graph *g = s->g;
	size_t i = s->segs[j].first;
	int k = 0;
	int32_t t;

	while ((t = seg_next_input(s, j, &i, &k)) >= 0) {
		if (!s->hold[t] || s->cko[t] || !s->alive[t] ||
		    g->t[t].cat != VP_CAT_ACT)
			continue;
		/* Every pack takes an id; small ones stay. */
		s->pack_id++;
		if (g->t[t].bytes < OFFLOAD_MIN)
			continue;
		stash_advance(s, 0);
		s->cko[t] = 1;
		s->stash[s->nstash] = t;
		s->stash_id[s->nstash++] = s->pack_id;
		s->host_act += tb(s, t);
		if (s->host_act > s->host_act_peak)
			s->host_act_peak = s->host_act;
	}
}

/* The first n copies brought back (before the current unpack) are
 * freed by its node's hook. */
static void
bstash_release(struct sim *s, size_t n)
{
	size_t i;

	if (n > s->nbstash)
		n = s->nbstash;
	for (i = 0; i < n; i++)
		t_unref(s, s->bstash[i]);
	memmove(s->bstash, s->bstash + n, (s->nbstash - n) *
	    sizeof *s->bstash);
	s->nbstash -= n;
}

/* Before segment j's re-run: its packed inputs come back. */
static void
ckin_unpack(struct sim *s, int32_t j)
{
	size_t i = s->segs[j].first;
	int k = 0;
	int32_t t;

	while ((t = seg_next_input(s, j, &i, &k)) >= 0) {
		if (!s->cko[t])
			continue;
		if (s->cko[t] == 2) {
			add(s, (enum vp_cat)s->g->t[t].cat, tb(s, t));
			if (s->rec)
				s->th[t] = ev_alloc(s, tb(s, t), TAG_NONE);
			/* bwd_tensor_stash holds the copy. */
			s->refs[t]++;
			s->bstash[s->nbstash++] = t;
		}
		s->host_act -= tb(s, t);
		s->cko[t] = 0;
	}
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
		if (o->layer > 0)
			s->ft_last = o->layer;
		s->ft_loss = s->ft.split && i >= s->ft.head_end;
		s->place = place_of(s, i);
		if (o->layer == 0 && i >= g->layer_first_op[g->layers + 1])
			s->phase = VP_PHASE_LOSS;
		if (s->p->activation_offload && !segment_rerun) {
			if (s->seg_of[i] >= 0 &&
			    s->segs[s->seg_of[i]].first == i &&
			    seg_is_block(s, &s->segs[s->seg_of[i]]))
				ckin_pack(s, s->seg_of[i]);
			/* The final norm's packs, before the head. */
			if (i == s->head_op)
				stash_advance(s, s->tail_packs);
		}
		for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++)
			t_alloc(s, o->out[k]);
		check(s, tmp_alloc(s, o->fwd_tmp), VP_CAT_TRANSIENT);
		tmp_free(s);
		for (k = 0; k < VP_OP_MAXIO && o->in[k] >= 0; k++)
			t_unref(s, o->in[k]);
		/* What Python names until this op: released here, in a
		 * re-run too (rerun_segment counts the references again). */
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
				if (s->rec)
					ev_free(s, &s->th[o->out[k]]);
			}
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
		/* An op-policy checkpoint's cache holds what its policy
		 * saves until the recompute takes it (rerun_segment drops
		 * this reference with the others). */
		for (k = 0; o->sac && k < VP_OP_MAXIO && o->out[k] >= 0; k++)
			if (o->sac & (1u << k))
				s->refs[o->out[k]]++;
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
	    s->gshard > 1 || s->oib;
}

/*
 * FSDP2's weight gradient, the first micro-batch's: AccumulateGrad makes
 * the op's output the unsharded parameter's .grad (no copy), held until
 * the unit's post-backward; the replay counts it there whole, its shard
 * as the gradient term and the rest as ft_rootg or ft_unitg, so it is no
 * transient beside them (measured: one dW at the head's backward,
 * tests/validate_fsdp.py).
 */
static bool
fsdp2_wgrad_owned(const struct sim *s)
{
	return s->ft.on && s->ft.v2 && s->ft.cden && s->first_mb &&
	    s->gshard > 1 && !s->grads_prealloc && !s->grads_offload &&
	    !s->oib;
}

/*
 * The tensors a weight gradient (or its shard, total bytes) is made of,
 * for the allocator: wgrad_count weights, then as many biases (graph.h).
 */
static unsigned
wgrad_pieces(const struct vp_op *o)
{
	unsigned c = o->wgrad_count ? o->wgrad_count : 1;

	return o->wgrad_bias_bytes ? 2 * c : c;
}

static uint64_t
wgrad_piece(const struct vp_op *o, uint64_t total, unsigned k)
{
	unsigned c = o->wgrad_count ? o->wgrad_count : 1;
	uint64_t bias = 0;

	if (o->wgrad_bias_bytes && o->wgrad_bytes)
		bias = (uint64_t)((double)total *
		    ((double)o->wgrad_bias_bytes / (double)o->wgrad_bytes));
	return k < c ? (total - bias) / c : bias / c;
}

/*
 * --optimizer-in-backward: the autograd engine runs a parameter's
 * AccumulateGrad as soon as the op's backward made its gradient (the node
 * has the highest sequence number), after the op's own output gradient is
 * gone; its post-accumulate-grad hook steps that parameter's optimizer and
 * zero_grad() frees the gradient (torchtune, register_optim_in_bwd_hooks;
 * FSDP after the reduce-scatter, on the shard).  So a second check per op:
 * what backward holds then, the gradient (its shard) and the step's
 * temporaries for the largest of the op's parameters, one at a time.
 */
static void
oib_step(struct sim *s, const struct vp_op *o)
{
	uint64_t w, big = 0, tmp = 0;
	unsigned k, n;

	/* The first use of a weight used twice or more waits for the last
	 * (graph.c, tie_embeddings, chunked_output_ce): its hook runs on
	 * their sum, when the use that ends the wait has added to it.  That
	 * use has no gradient of its own (wgrad_bytes 0, and wgrad_sum 0
	 * where the sum is made in place): the weight's is the waiting
	 * op's. */
	if (o->wgrad_adds_to)
		o = &s->g->op[o->wgrad_adds_to - 1];
	else if (o->wgrad_bytes == 0 || o->wgrad_waits)
		return;
	w = o->wgrad_bytes;
	n = wgrad_pieces(o);
	for (k = 0; k < n; k++) {
		uint64_t piece = wgrad_piece(o, w, k) / s->gshard;

		tmp += tmp_alloc(s, piece);
		big = piece > big ? piece : big;
	}
	if (s->oib_den)
		tmp += tmp_alloc(s, big / s->oib_den * s->oib_num);
	check(s, tmp, VP_CAT_TRANSIENT);
	tmp_free(s);
}

/* Backward of one op. */
static void
backward_op(struct sim *s, const struct vp_op *o)
{
	const struct vp_graph *g = s->g;
	uint64_t tmp = 0;
	bool has_g = false;
	int k;

	s->cur_layer = o->layer;
	s->cur_op = o->name;
	/* --fsdp-units split: the head unit's post-backward, as block n's
	 * backward begins, has reduced its gradients. */
	if (o->layer > 0 && s->ft_last == 0 && s->ft.split)
		s->ft_rootg = 0;
	s->ft_loss = s->ft.split && (size_t)(o - g->op) >= s->ft.head_end;
	if (o->layer > 0)
		s->ft_last = o->layer;
	s->place = place_of(s, (size_t)(o - g->op));
	for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++)
		if (s->galive[o->out[k]])
			has_g = true;
	if (has_g) {
		tmp += tmp_alloc(s, o->bwd_tmp);
		tmp += tmp_alloc(s, o->wgrad_tmp);
		for (k = 0; k < VP_OP_MAXIO && o->in[k] >= 0; k++) {
			int32_t t = o->in[k];

			if (!g->t[t].requires_grad)
				continue;
			if (!s->galive[t])
				g_alloc(s, t);
			else
				tmp += tmp_alloc(s, gb(s, t)); /* grad + new part */
		}
		if (o->wgrad_bytes && s->rec && s->first_mb)
			for (k = 0; k < (int)wgrad_pieces(o); k++) {
				if (s->npar == s->parcap) {
					s->parcap = s->parcap ? 2 * s->parcap :
					    64;
					s->par = xreallocarray(s->par,
					    s->parcap, sizeof *s->par);
				}
				s->par[s->npar++] = wgrad_piece(o,
				    o->wgrad_bytes, (unsigned)k);
			}
		if (o->wgrad_bytes) {
			/* A gradient computed into a preallocated buffer or
			 * accumulated is a transient; otherwise it stays,
			 * 1/gshard of it once reduce-scattered. */
			if (s->first_mb && !s->grads_prealloc &&
			    !s->grads_offload && !s->oib) {
				add(s, VP_CAT_GRADS, o->wgrad_bytes / s->gshard);
				/* Held to the step's end (zero_grad). */
				for (k = 0; s->rec && k < (int)wgrad_pieces(o);
				    k++)
					(void)ev_alloc(s, wgrad_piece(o,
					    o->wgrad_bytes / s->gshard,
					    (unsigned)k), TAG_GRAD);
			}
			/* One that waits for another use of its weight
			 * (graph.c, tie_embeddings) lives until then. */
			if (wgrad_is_transient(s) && o->wgrad_waits) {
				uint64_t w = rt(s, o->wgrad_bytes);

				add(s, VP_CAT_TRANSIENT, w);
				s->wgrad_waiting += w;
				s->wait_slot = ev_alloc(s, w, TAG_NONE);
			} else if (fsdp2_wgrad_owned(s)) {
				/* counted whole below (ft_rootg, ft_unitg) */
			} else if (wgrad_is_transient(s) && !s->rec) {
				tmp += o->wgrad_bytes;
			} else if (wgrad_is_transient(s)) {
				for (k = 0; k < (int)wgrad_pieces(o); k++)
					tmp += tmp_rec(s, wgrad_piece(o,
					    o->wgrad_bytes, (unsigned)k));
			}
		}
		/* FSDP: the root's gradients stay whole, in the unsharded
		 * parameter's dtype, until its post-backward at the end. */
		if (s->ft.on && o->wgrad_bytes && s->ft.cden) {
			uint64_t w = o->wgrad_bytes / s->ft.cden * s->ft.cnum,
			    sh = o->wgrad_bytes / s->gshard;

			if (o->layer == 0)
				s->ft_rootg += w > sh ? w - sh : 0;
			else	/* reduced at the block's post-backward */
				s->ft_unitg += w > sh ? w - sh : 0;
		}
		/* Adding to the waiting gradient out of place (InputBuffer::
		 * accumulate) makes the sum while both addends live. */
		if (o->wgrad_adds_to)
			tmp += tmp_alloc(s, o->wgrad_sum);
		check(s, tmp, VP_CAT_TRANSIENT);
		tmp_free(s);
		if (o->wgrad_adds_to && wgrad_is_transient(s)) {
			uint64_t w = rt(s,
			    g->op[o->wgrad_adds_to - 1].wgrad_bytes);

			sub(s, VP_CAT_TRANSIENT, w);
			s->wgrad_waiting -= w;
			ev_free(s, &s->wait_slot);
		}
		for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++)
			g_free(s, o->out[k]);
		/* A weight gradient added out of place to the sum its
		 * AccumulateGrad buffer holds (graph.c, chunked_output_ce):
		 * TBackward0 adds after the matmul's backward has returned,
		 * its output gradient gone; both addends and the sum live. */
		if (o->wgrad_sum && !o->wgrad_adds_to) {
			tmp = tmp_alloc(s, o->wgrad_tmp);
			tmp += tmp_alloc(s, o->wgrad_sum);
			check(s, tmp, VP_CAT_TRANSIENT);
			tmp_free(s);
		}
		if (s->oib)
			oib_step(s, o);
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
		/* What Python names until an op of the segment (a
		 * function's locals, graph.c's release) lives as long in the
		 * re-run; forward() drops these references again. */
		for (k = 0; k < VP_OP_MAXKEEP; k++)
			if (o->keep[k] >= 0)
				s->refs[o->keep[k]]++;
	}
	forward(s, sg->first, sg->end, true);
}

/*
 * After op `op`'s backward: when it was the first op of a block, that
 * FSDP unit's backward is over, and its post-backward hook finds the
 * gradients of the unit's parameters and makes the flat gradient from
 * them (SplitWithSizesBackward's cat), so for a moment both exist before
 * the reduce-scatter frees them (FSDP1, either use_orig_params; measured
 * on 2 gloo ranks, tests/validate_fsdp.py).
 */
static void
unit_done(struct sim *s, size_t op)
{
	uint32_t layer = s->g->op[op].layer;

	if (layer == 0 || op != s->g->layer_first_op[layer])
		return;
	/* FSDP2 copies the gradients into its reduce-scatter input (the
	 * block's parameters already resharded, the last input freed) and
	 * frees them. */
	if (s->ft.on && (s->ft.v2 || s->ft.ugrad == 0)) {
		s->ft_unitg = 0;
		return;
	}
	if (s->unit_grad == 0)
		return;
	/* FSDP1's cat: the flat gradient, beside the block's own. */
	check(s, tmp_alloc(s, s->unit_grad), VP_CAT_TRANSIENT);
	tmp_free(s);
	s->ft_unitg = 0;
}

/*
 * DeepSpeed's ZeRO-1/2 optimizer (DeepSpeedZeroOptimizer,
 * stage_1_and_2.py) over torch's weights: flat partitions of its own.
 */
static bool
ds_flat12(const struct vp_plan *p)
{
	return p->zero >= 1 && p->zero <= 2 && p->fsdp == VP_FSDP_NONE &&
	    vp_plan_framework(p) == VP_FW_DEEPSPEED;
}

/*
 * The end of a ZeRO-1/2 backward (independent_gradient_partition_epilogue):
 * ZeRO-1 gathers the rank's gradient partition into one flat tensor
 * (get_flat_partition) beside every gradient, then the parameters'
 * gradients are dropped (_clear_param_grad_only); ZeRO-2 has reduced
 * into its partition buffer as backward ran (grads_in_partition, made
 * whole at the first reduction: the replay counts it as the gradients
 * are made).  From here to the step the rank holds its partition only.
 */
static void
ds_epilogue(struct sim *s)
{
	uint64_t g = s->cat[VP_CAT_GRADS];

	if (s->ds_gpart == 0 || s->stopped)
		return;
	s->cur_layer = 0;
	s->cur_op = "flat gradient partition";
	/* ZeRO-2 reduces into its partition buffer (grads_in_partition)
	 * while backward runs: the gradient term is that buffer already. */
	if (s->p->zero == 1) {
		check(s, tmp_alloc(s, s->ds_gpart), VP_CAT_TRANSIENT);
		tmp_free(s);
	}
	sub(s, VP_CAT_GRADS, g);
	add(s, VP_CAT_GRADS, s->ds_gpart);
	if (s->first_mb)
		s->ds_grads = g;
}

static void
backward(struct sim *s)
{
	const struct vp_graph *g = s->g;
	size_t i;

	s->phase = VP_PHASE_BACKWARD;
	s->ft_last = 0;
	s->ft_rootg = s->ft_unitg = 0;
	/* A unit's unsharded gradient exists while backward runs. */
	s->unit_grad_slot = ev_alloc(s, rb(s, s->ft.on ? s->ft.ugrad +
	    s->ft.rs : s->unit_grad), TAG_NONE);
	s->ds_ipg_slot = ev_alloc(s, rb(s, s->ds_ipg), TAG_NONE);
	/* The first unpack's hook empties the forward stash. */
	stash_evict(s, UINT64_MAX);
	for (i = g->nop; i > 0 && !s->stopped; i--) {
		int32_t si = s->seg_of[i - 1];

		if (si >= 0 && s->segs[si].end == i) {
			size_t j, before = s->nbstash;
			int k;

			if (seg_is_block(s, &s->segs[si]))
				ckin_unpack(s, si);
			rerun_segment(s, &s->segs[si]);
			s->phase = VP_PHASE_BACKWARD;
			/* Release the segment's holds once it is done. */
			for (j = s->segs[si].end; j > s->segs[si].first &&
			    !s->stopped; j--) {
				backward_op(s, &g->op[j - 1]);
				/* The unpacking node's hook. */
				if (j == s->segs[si].end && before > 0)
					bstash_release(s, before);
			}
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
			unit_done(s, i - 1);
			continue;
		}
		backward_op(s, &g->op[i - 1]);
		unit_done(s, i - 1);
	}
	/* The end of backward's callback frees the last copies. */
	if (!s->stopped)
		bstash_release(s, s->nbstash);
	/* The root's post-backward: its reduce-scatter input (FSDP1: the
	 * flat gradient's cat) beside its whole gradients, no block held. */
	if (s->ft.on && !s->stopped) {
		s->cur_layer = 0;
		/* FSDP2 has freed the last block's pending input first. */
		check(s, tmp_alloc(s, s->ft.root_rs > s->ft.rs ?
		    s->ft.root_rs - s->ft.rs : 0), VP_CAT_TRANSIENT);
		tmp_free(s);
	}
	s->ft_rootg = 0;
	ds_epilogue(s);
	ev_free(s, &s->unit_grad_slot);
	ev_free(s, &s->ds_ipg_slot);
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
/* The temporaries per state-dtype element of the parameters stepped at
 * once: 2 for the for-loop's Adam, 1 for foreach (2 before PyTorch 2.0's
 * in-place eps), 0 when fused or for an optimizer without them. */
static unsigned
step_tmp_copies(const struct vp_plan *p)
{
	const struct vp_opt_info *oi = &vp_opt_info[p->optimizer];

	switch (vp_plan_optimizer_impl(p)) {
	case VP_OPTIMPL_FUSED:
		return 0;
	case VP_OPTIMPL_FOR_LOOP:
		return oi->loop_tmp ? 2 : 0;
	default:		/* foreach (default is resolved by then) */
		break;
	}
	/* PyTorch 1.x's _multi_tensor_adam makes denom = _foreach_add(
	 * exp_avg_sq_sqrt, eps) anew, beside exp_avg_sq_sqrt: two copies
	 * (measured on 1.13); 2.0 adds eps in place. */
	if (oi->loop_tmp && p->torch_version < 200)
		return oi->foreach_tmp ? 2 : 0;
	return oi->foreach_tmp ? 1 : 0;
}

static uint64_t
optim_tmp(const struct vp_graph *g, const struct vp_plan *p)
{
	unsigned state_b = vp_dtype_bytes[vp_prec_info[p->precision].state];
	unsigned c = step_tmp_copies(p);

	/* The for-loop steps one parameter at a time: the largest's.
	 * DeepSpeed's ZeRO optimizers hand it one flat fp32 partition per
	 * parameter group (single_partition_of_fp32_groups,
	 * fp32_partitioned_groups_flat): the trainable parameters'. */
	/* ZeRO-3 steps one sub-group at a time (the caller divides by the
	 * sharding group, dp x cp). */
	if (vp_plan_optimizer_impl(p) == VP_OPTIMPL_FOR_LOOP &&
	    p->zero >= 3 && p->fsdp == VP_FSDP_NONE &&
	    vp_plan_framework(p) == VP_FW_DEEPSPEED &&
	    g->trainable / ((p->dp ? p->dp : 1) * p->cp) > VP_DS_SUB_GROUP)
		return vp_mul_sat(c * VP_DS_SUB_GROUP * state_b,
		    (uint64_t)(p->dp ? p->dp : 1) * p->cp);
	if (vp_plan_optimizer_impl(p) == VP_OPTIMPL_FOR_LOOP &&
	    !(p->zero >= 1 && p->fsdp == VP_FSDP_NONE &&
	    vp_plan_framework(p) == VP_FW_DEEPSPEED))
		return c * g->largest_param_bytes /
		    vp_dtype_bytes[vp_prec_info[p->precision].weight] *
		    state_b;
	return vp_mul_sat(c * g->trainable, state_b);
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
	uint64_t ipg;		/* ZeRO-1/2: the IPG bucket(s), in backward */
	uint64_t gather;	/* transient: gathered parameters (fwd+bwd) */
	uint64_t unit_grad;	/* transient: a unit's unsharded gradient */
	struct fsdp_tl ft;	/* FSDP full/hybrid over the step */
	struct ds3_tl d3;	/* ZeRO-3 over the step */
	/* ZeRO-3: bytes of the parameters that stay whole on every rank
	 * (stage3_param_persistence_threshold), base and adapters. */
	uint64_t persist_base, persist_adapter;
	const char *what;
};

/*
 * ZeRO-3's persistent parameters (partition_parameters.py,
 * mark_persistent_parameters): every parameter of at most
 * stage3_param_persistence_threshold elements is never partitioned, frozen
 * or not.  From the shapes the family lays out (vp_model_matrices): the
 * block's vectors (norms, biases: its parameters less its matrices) and
 * the final norm when a hidden-sized vector is under the threshold, the matrices at or
 * under the threshold (a MoE router), and the LoRA A (r x in) and B
 * (out x r) that are.  Bytes in the weights' and the adapters' dtypes.
 */
static void
ds_persistent(const struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, uint64_t *base, uint64_t *adapter)
{
	struct vp_matrix mx[VP_MAX_MATRICES];
	uint64_t blocks = vp_stage_blocks(m->layers, p->pp, p->stage);
	uint64_t thr = p->ds.persist_threshold, mat = 0, small = 0, ad = 0;
	uint64_t vec, inblocks = g->stage_block_params;
	size_t n = vp_model_matrices(m, p, blocks, mx), i;
	unsigned r = p->lora_rank;

	for (i = 0; i < n; i++) {
		uint64_t numel = vp_mul_sat(mx[i].rows, mx[i].cols);

		mat = vp_add_sat(mat, vp_mul_sat(numel, mx[i].count));
		if (numel <= thr)
			small = vp_add_sat(small, vp_mul_sat(numel,
			    mx[i].count));
		if (r == 0 || !(mx[i].lora_bits & p->lora_targets))
			continue;
		if (vp_mul_sat(r, mx[i].cols) <= thr)	/* lora_A */
			ad = vp_add_sat(ad, vp_mul_sat(r * mx[i].cols,
			    mx[i].count));
		if (vp_mul_sat(r, mx[i].rows) <= thr)	/* lora_B */
			ad = vp_add_sat(ad, vp_mul_sat(r * mx[i].rows,
			    mx[i].count));
	}
	/* The vectors are hidden-sized (norms) or a few times that
	 * (biases): counted when a hidden-sized one is under the threshold. */
	vec = inblocks > mat ? inblocks - mat : 0;
	if (m->hidden <= thr)
		vec = vp_add_sat(vec, m->hidden);	/* the final norm */
	else
		vec = 0;
	*base = vp_mul_sat(vp_add_sat(vec, small),
	    vp_dtype_bytes[vp_prec_info[p->precision].weight]);
	*adapter = vp_mul_sat(ad, vp_dtype_bytes[p->lora_dtype]);
	if (*adapter > g->adapter_bytes)
		*adapter = g->adapter_bytes;
	if (vp_add_sat(*base, *adapter) > g->weight_bytes)
		*base = g->weight_bytes - *adapter;
}

/*
 * FSDP full and hybrid sharding over the step (fsdp_now): the sizes.
 * `unit` is one block's base as FSDP gathers it (compute dtype, or the
 * packed quantized storage).  LoRA adapters are gathered with their
 * block.  FSDP1's flat gradient spans the whole unit, frozen parts too
 * (use_orig_params; with use_orig_params off a unit cannot mix frozen and
 * trainable parameters), in the compute dtype (MixedPrecision's
 * param_dtype), reduced in it; FSDP2 makes and reduce-scatters gradients
 * of trainable parameters only (fsdp_params_with_grad), reduced in fp32
 * under bf16-mixed (MixedPrecisionPolicy(param_dtype=bf16,
 * reduce_dtype=fp32), torchtitan's default).
 */
/* --fsdp-units split: the embeddings (on the first stage) and the rest
 * of what is outside the blocks, the final norm and head (fsdp_split_now);
 * the root keeps nothing.  The embeddings' reduce-scatter is the last
 * (root_rs). */
static void
fsdp_split_sizes(const struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, uint64_t root, unsigned cd, unsigned rd,
    struct fsdp_tl *f)
{
	struct vp_param_count pc;
	uint64_t emb = 0;
	size_t i;

	/* The model's forward ends with the head (the logits); the loss
	 * comes after the root's post-forward (rules.c: --loss full). */
	f->head_end = g->nop;
	for (i = g->layer_first_op[g->layers + 1]; i < g->nop; i++)
		if (g->op[i].layer == 0 && g->op[i].name != NULL &&
		    strcmp(g->op[i].name, "lm_head") == 0)
			f->head_end = i + 1;

	vp_model_params(m, &pc);
	if (p->stage == 0)
		emb = pc.embedding / (p->tp ? p->tp : 1);
	if (emb > root)
		emb = root;
	f->split = true;
	f->root = 0;
	f->emb = vp_mul_sat(emb, cd);
	f->head = vp_mul_sat(root - emb, cd);
	f->root_rs = p->lora_rank ? 0 : vp_mul_sat(emb, rd);
	f->head_rs = p->lora_rank ? 0 : vp_mul_sat(root - emb, rd);
}

/* --fsdp-units split: the most gathered at once (fsdp_split_now). */
static uint64_t
fsdp_split_gather(const struct fsdp_tl *f, uint32_t n)
{
	uint64_t kept = f->raf ? 0 : vp_add_sat(f->emb,
	    vp_mul_sat(n > 0 ? n - 1 : 0, f->unit));
	uint64_t v = vp_add_sat(kept, vp_mul_sat(2, f->unit));

	if (!f->raf)
		kept = vp_add_sat(kept, f->unit);
	if (vp_add_sat(kept, vp_mul_sat(2, f->head)) > v)
		v = vp_add_sat(kept, vp_mul_sat(2, f->head));
	return vp_mul_sat(2, f->emb) > v ? vp_mul_sat(2, f->emb) : v;
}

static void
fsdp_timeline(const struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, unsigned shard, uint64_t unit,
    struct fsdp_tl *f)
{
	const struct vp_prec_info *pi = &vp_prec_info[p->precision];
	unsigned cd = vp_dtype_bytes[pi->compute];
	unsigned gd = vp_dtype_bytes[pi->grad];
	unsigned rd = pi->compute != pi->weight ? 4 : cd;
	uint64_t inblocks = g->stage_block_params;
	uint64_t root = g->params > inblocks ? g->params - inblocks : 0;
	uint64_t ad = p->lora_rank ? vp_lora_params(m, p, 1) : 0;
	uint64_t train = p->lora_rank ? ad : g->block_params;
	uint64_t root_train = p->lora_rank ? 0 : root;

	memset(f, 0, sizeof *f);
	f->on = true;
	f->v2 = vp_plan_framework(p) == VP_FW_FSDP2;
	f->raf = p->reshard_after_forward == VP_YES;
	f->prefetch = p->fsdp_prefetch;
	f->root = vp_mul_sat(root, cd);
	f->unit = vp_add_sat(unit, vp_mul_sat(ad, cd));
	f->cnum = cd;
	f->cden = gd;
	/* PEFT's wrap policy gives each adapter Linear a unit of its own:
	 * the block's flat parameter is frozen, never gathered with them,
	 * and takes no gradient. */
	if (!f->v2 && p->lora_rank &&
	    p->fsdp_lora_wrap == VP_LORAWRAP_PEFT) {
		f->unit = unit;
		return;
	}
	if (f->v2) {
		f->ugrad = vp_mul_sat(train, cd);
		f->rs = vp_mul_sat(train, rd);
		f->root_rs = vp_mul_sat(root_train, rd);
		if (p->fsdp_units == VP_FSDP_UNITS_SPLIT)
			fsdp_split_sizes(g, m, p, root, cd, rd, f);
		return;
	}
	/* With use_orig_params the frozen originals' gradients are made
	 * as in full training (graph.c, flat_grads). */
	f->ugrad = f->unit;
	f->root_rs = vp_mul_sat(root_train, cd);
}

/*
 * ZeRO-3's gathered parameters over the step (ds3_now).  A block is its
 * parameters less the persistent ones (whole on every rank, counted with
 * the weights), in the compute dtype (DeepSpeed casts the module).  The
 * trace's reuse distance of a block's parameters: the elements of every
 * module met from its forward to its backward, the blocks after it and
 * the final norm and head, twice (__params_to_release walks the trace
 * from the module just run and stops once stage3_max_reuse_distance
 * elements are behind it).  The head is met again at once; the embeddings
 * after everything.
 */
/* How many of the last blocks stay gathered across the turn: the k-th
 * from the end is met again after twice the elements of the k - 1 after
 * it, the final norm and the head. */
static uint32_t
ds3_kept(const struct vp_model *m, const struct vp_plan *p, uint64_t nb,
    uint64_t blocks)
{
	uint64_t head = m->tie_embeddings ? 0 :
	    vp_mul_sat(m->vocab, m->hidden);
	uint64_t after = vp_add_sat(m->hidden, head);
	uint32_t k;

	for (k = 0; k < blocks; k++)
		if (vp_mul_sat(2, vp_add_sat(after, vp_mul_sat(k, nb))) >=
		    p->ds.max_reuse)
			break;
	return k;
}

static void
ds3_timeline(const struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, uint64_t ahead, struct sharding *sh)
{
	struct ds3_tl *d = &sh->d3;
	unsigned cd = vp_dtype_bytes[vp_prec_info[p->precision].compute];
	uint64_t blocks = vp_stage_blocks(m->layers, p->pp, p->stage);
	uint64_t ad = p->lora_rank ? vp_lora_params(m, p, 1) : 0;
	uint64_t nb = vp_add_sat(g->block_params, ad);
	uint64_t emb = vp_mul_sat(m->vocab, m->hidden);
	uint64_t head = m->tie_embeddings ? 0 : emb;
	uint64_t r = p->ds.max_reuse, after, pblk = 0, turn, fwd;
	uint64_t normb = m->hidden <= p->ds.persist_threshold ?
	    vp_mul_sat(m->hidden,
	    vp_dtype_bytes[vp_prec_info[p->precision].weight]) : 0;

	memset(d, 0, sizeof *d);
	d->on = true;
	if (blocks && sh->persist_base > normb)
		pblk = (sh->persist_base - normb) / blocks;
	if (blocks)
		pblk += sh->persist_adapter / blocks;
	d->unit = vp_mul_sat(nb, cd);
	d->unit = d->unit > pblk ? d->unit - pblk : 0;
	d->ahead = vp_mul_sat(ahead, cd);
	d->embed = vp_mul_sat(emb, cd);
	d->head = vp_mul_sat(head, cd);
	d->head_kept = r > 0;
	after = vp_add_sat(m->hidden, head);	/* final norm and head */
	d->kept = ds3_kept(m, p, nb, blocks);
	d->embed_kept = vp_mul_sat(2, vp_add_sat(after,
	    vp_mul_sat(blocks, nb))) < r;
	/* A frozen embedding (LoRA) has no backward: the trace never meets
	 * it again in the step, so it goes when its forward ends (measured:
	 * freed in forward under LoRA, kept across the turn when trained). */
	d->embed_bwd = p->lora_rank == 0;
	if (!d->embed_bwd)
		d->embed_kept = false;
	/* Tied: the head is the embedding, met again at the head. */
	if (m->tie_embeddings) {
		d->embed_kept = vp_mul_sat(blocks, nb) < r;
		d->head = d->embed_kept ? 0 : d->embed;
	}
	turn = vp_add_sat(vp_add_sat(d->embed_kept ? d->embed : 0,
	    vp_mul_sat(d->kept, d->unit)), d->head);
	fwd = vp_add_sat(vp_add_sat(d->embed_kept ? d->embed : 0,
	    vp_mul_sat(d->kept ? d->kept - 1 : 0, d->unit)),
	    vp_add_sat(d->unit, d->ahead));
	sh->gather = turn > fwd ? turn : fwd;
}

/*
 * bytes (of all the rank's parameters) sharded over div ranks.  With
 * expert parallelism the routed experts are already split ep ways, and
 * what shards them is the expert-data-parallel group, div / ep ranks
 * (DeepSpeed's expert_data_parallel_group in ZeRO 1-3, Megatron's
 * expert data-parallel group for the distributed optimizer), not div:
 * dividing them by div as well counted expert parallelism twice
 * (DeepSeek-V3 on 32 H100s, EP 16, ZeRO 3: 6.75 GiB of weights per GPU,
 * where the experts alone are 38 GiB).
 */
static uint64_t
shard_bytes(const struct vp_graph *g, const struct vp_plan *p,
    uint64_t bytes, unsigned div)
{
	double f, eg;

	if (div <= 1 || p->ep <= 1 || g->expert_params == 0 || g->params == 0)
		return bytes / (div ? div : 1);
	f = (double)g->expert_params / (double)g->params;
	eg = (double)div / (double)p->ep;
	if (eg < 1)
		eg = 1;
	return (uint64_t)((double)bytes * (1 - f) / div + (double)bytes * f /
	    eg);
}

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
	if (p->fsdp != VP_FSDP_NONE) {
		/* A unit's flat parameter: a block in the compute dtype, or
		 * with --quant the quantized projections in their packed
		 * storage (bnb_4bit_quant_storage, which FSDP QLoRA sets to
		 * the compute dtype) and the rest in the compute dtype. */
		uint64_t unit = p->quant != VP_QUANT_NONE ?
		    vp_frozen_base_bytes(m, p, 1, block, cd) :
		    vp_mul_sat(block, vp_dtype_bytes[cd]);

		/* HYBRID_SHARD shards inside a node, replicates across. */
		if (p->fsdp == VP_FSDP_HYBRID)
			shard = dp < node ? dp : node;
		sh->states = sh->grads = shard;
		if (p->fsdp != VP_FSDP_GRAD_OP) {
			sh->weights = shard;
			/* --float8-all-gather (torchao's
			 * WeightWithDynamicFloat8CastTensor under FSDP2):
			 * the float8 linears' weights arrive in fp8, one
			 * byte each. */
			if (p->float8_all_gather) {
				uint64_t lin = vp_block_linear_params(m, p, 1);
				uint64_t less = vp_mul_sat(lin,
				    vp_dtype_bytes[cd] - 1);

				unit = unit > less ? unit - less : 0;
			}
			fsdp_timeline(g, m, p, shard, unit, &sh->ft);
			/* The allocator's feed holds the most at once. */
			sh->gather = vp_add_sat(sh->ft.root, vp_mul_sat(
			    sh->ft.v2 && !sh->ft.raf ? g->layers + 1 : 2,
			    sh->ft.unit));
			if (sh->ft.split)
				sh->gather = fsdp_split_gather(&sh->ft,
				    g->layers);
			sh->unit_grad = sh->ft.ugrad;
			sh->what = "fsdp";
			return;
		}
		/* The unit's unsharded gradient before reduce-scatter: the
		 * size of its flat parameter (with use_orig_params, frozen
		 * parts included). */
		sh->unit_grad = unit;
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
	if (p->zero >= 1 && p->ds.contiguous_grads) {
		/*
		 * DeepSpeed's gradient reduce bucket (the IPG buffer of
		 * reduce_bucket_size elements, contiguous_gradients on) in the
		 * gradient dtype, in every stage; never more than the
		 * parameters it collects.  Stages 1 and 2 with overlap_comm
		 * keep two, so one fills while the other reduces
		 * (stage_1_and_2.py, ipg_buffer); stage 3 keeps one per
		 * communication dtype.
		 */
		uint64_t bucket = vp_mul_sat(p->ds.reduce_bucket,
		    vp_dtype_bytes[vp_prec_info[p->precision].grad]);

		/* torch.empty(reduce_bucket_size): the whole bucket, however
		 * few parameters there are to reduce (measured on the CPU:
		 * 2 GB in fp32 at the default beside a 5M model).  Stages 1
		 * and 2 make it when backward starts and drop it at its end
		 * (setup_buckets, _release_ipg_buffers); stage 3 holds it
		 * from its constructor on. */
		if (p->zero < 3 && vp_plan_ds_overlap(p))
			bucket = vp_mul_sat(2, bucket);
		if (p->zero < 3 && vp_plan_framework(p) == VP_FW_DEEPSPEED)
			sh->ipg = bucket;
		else
			sh->grad_buffer = bucket;
	}
	if (p->zero >= 1)
		sh->states = dp;
	if (p->zero >= 2)
		sh->grads = dp;
	if (p->zero >= 3) {
		/*
		 * The module being computed, gathered, and what the prefetcher
		 * fetches ahead (partitioned_param_coordinator.py): at most
		 * stage3_prefetch_bucket_size elements, and only while fewer
		 * than stage3_max_live_parameters are gathered; never more
		 * than the stage holds.
		 */
		uint64_t ahead = p->ds.prefetch_bucket, live;

		if (ahead > block)
			ahead = block;
		if (p->ds.max_live < block)
			ahead = 0;
		else if (ahead > p->ds.max_live - block)
			ahead = p->ds.max_live - block;
		live = vp_add_sat(block, ahead);
		if (live > g->params)
			live = g->params;
		sh->weights = dp;
		sh->gather = vp_mul_sat(live, vp_dtype_bytes[cd]);
		if (dp > 1)
			ds_persistent(g, m, p, &sh->persist_base,
			    &sh->persist_adapter);
		if (vp_plan_framework(p) == VP_FW_DEEPSPEED) {
			ds3_timeline(g, m, p, ahead, sh);
			/* grad_partitions_flat_buffer: the rank's gradient
			 * partition, made by the constructor (stage3.py),
			 * on the host with offload_optimizer. */
			if (p->offload != VP_OFFLOAD_OPTIMIZER &&
			    p->offload != VP_OFFLOAD_ALL)
				sh->grads_prealloc = true;
		}
	}
	/* A zero_grad() that keeps the gradients (set_to_none=False, the
	 * default before PyTorch 2.0): from the second step they exist
	 * before forward, and backward adds each new one into them. */
	if (vp_plan_grads_kept(p))
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

/*
 * The framework's buffers as --explain names them: the names the
 * frameworks' own code and documentation use, one row per sharding kind,
 * in one table so that every part of vramplan says the same.  NULL: the
 * kind has no such buffer.
 */
enum fwbuf { FWB_FSDP1, FWB_FSDP2, FWB_ZERO, FWB_DDP, FWB_MEGATRON,
    FWB_OFFLOAD };
static const struct {
	const char *gather;	/* sharding's shard_tmp while fwd/bwd run */
	const char *unit_grad;	/* a unit's unsharded gradient (backward) */
	const char *grad_buffer;	/* persistent gradient buffers */
	const char *persist;	/* parameters never partitioned */
	const char *grads;	/* the gradient term, when one buffer */
} fw_buffers[] = {
	[FWB_FSDP1] = { "unsharded flat parameter (all-gather)",
	    "reduce-scatter gradient (unsharded)", NULL, NULL, NULL },
	[FWB_FSDP2] = { "all-gather output (FSDP2 unsharded parameters)",
	    "reduce-scatter input (FSDP2 unsharded gradients)", NULL, NULL,
	    NULL },
	[FWB_ZERO] = { "ZeRO-3 prefetch/gather", NULL, "IPG bucket",
	    "persistent parameters", "contiguous gradient buffer" },
	[FWB_DDP] = { NULL, NULL, "DDP gradient buckets", NULL, NULL },
	[FWB_MEGATRON] = { NULL, NULL, NULL, NULL,
	    "contiguous gradient buffer (main_grad)" },
	[FWB_OFFLOAD] = { "parameters fetched from the host (offload)", NULL,
	    NULL, NULL, NULL },
};

/* Whether name is one of fw_buffers' (the same pointer). */
static bool
fw_named(const char *name)
{
	size_t i;

	for (i = 0; i < VP_NELEM(fw_buffers); i++)
		if (name == fw_buffers[i].gather ||
		    name == fw_buffers[i].unit_grad ||
		    name == fw_buffers[i].grad_buffer ||
		    name == fw_buffers[i].persist ||
		    name == fw_buffers[i].grads)
			return name != NULL;
	return false;
}

/* The row of fw_buffers for a plan's sharding, or -1. */
static int
fw_buffer_row(const struct vp_plan *p, const struct sharding *sh)
{
	if (strcmp(sh->what, "fsdp") == 0)
		return vp_plan_framework(p) == VP_FW_FSDP2 ? FWB_FSDP2 :
		    FWB_FSDP1;
	if (strcmp(sh->what, "megatron") == 0)
		return FWB_MEGATRON;
	if (strcmp(sh->what, "ddp") == 0)
		return FWB_DDP;
	if (p->zero >= 1)
		return FWB_ZERO;
	if (p->offload == VP_OFFLOAD_PARAMS || p->offload == VP_OFFLOAD_ALL)
		return FWB_OFFLOAD;
	return -1;
}

static void
simulate(struct sim *s, const struct vp_model *m)
{
	const struct vp_graph *g = s->g;
	const struct vp_plan *p = s->p;
	struct sharding sh;
	uint64_t states = g->optim_state_bytes, weights = g->weight_bytes;
	uint64_t master = g->master_bytes, grads_total = 0, mb;
	uint64_t end_fwd_live = 0, base, host = 0, adapters, tmp;
	bool paged = vp_opt_info[p->optimizer].paged;
	size_t i;

	sharding(g, m, p, &sh);
	/* DeepSpeed's ZeRO optimizers clone the partition of the weights a
	 * rank updates into the master dtype, fp32 training included
	 * (stage_1_and_2.py, single_partition_of_fp32_groups:
	 * .clone().to(fp32); stage3.py, fp32_partitioned_groups_flat: its
	 * test for sharing compares a torch.device with a device name,
	 * never equal, so it copies too; measured on the CPU). */
	if (p->zero >= 1 && p->fsdp == VP_FSDP_NONE &&
	    vp_plan_framework(p) == VP_FW_DEEPSPEED && master == 0)
		master = vp_mul_sat(g->trainable, 4);
	states = shard_bytes(g, p, states, sh.states);
	master = shard_bytes(g, p, master, sh.states);
	/* ZeRO-3's persistent parameters are whole on every rank. */
	weights = shard_bytes(g, p, weights - sh.persist_base -
	    sh.persist_adapter, sh.weights) + sh.persist_base +
	    sh.persist_adapter;
	adapters = (g->adapter_bytes - sh.persist_adapter) / sh.weights +
	    sh.persist_adapter;
	s->gshard = sh.grads;
	s->fwbuf = fw_buffer_row(p, &sh);
	s->grad_buffer = sh.grad_buffer;
	s->persist = sh.persist_base;
	s->grads_contig = sh.grads_prealloc ||
	    (s->fwbuf == FWB_ZERO && p->zero >= 2 && p->ds.contiguous_grads);
	s->shard_tmp = sh.gather;
	s->unit_grad = sh.unit_grad;
	s->ds_ipg = sh.ipg;
	/* The epilogue's flat partition of the gradients, in their dtype. */
	if (ds_flat12(p))
		s->ds_gpart = shard_bytes(g, p, g->grad_bytes, sh.states);
	s->ft = sh.ft;
	s->d3 = sh.d3;
	s->grads_prealloc = sh.grads_prealloc;
	/*
	 * In the hook one parameter's optimizer steps alone, so whatever its
	 * implementation it holds its temporaries for that parameter only:
	 * copies x the parameter in the states' dtype, from its gradient's
	 * bytes (torch.optim makes the states like the parameter).
	 */
	s->oib = p->optim_in_bwd;
	s->oib_num = (uint64_t)step_tmp_copies(p) *
	    vp_dtype_bytes[vp_prec_info[p->precision].state];
	s->oib_den = vp_dtype_bytes[vp_prec_info[p->precision].grad];
	if (paged || p->offload == VP_OFFLOAD_OPTIMIZER ||
	    p->offload == VP_OFFLOAD_ALL)
		s->oib_num = 0;	/* the step runs where the states are */
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
		host += shard_bytes(g, p, g->grad_bytes, sh.grads);
	}
	if (p->offload == VP_OFFLOAD_PARAMS || p->offload == VP_OFFLOAD_ALL) {
		/* ZeRO-Infinity leaves the persistent ones on the GPU. */
		host += weights - sh.persist_base - sh.persist_adapter;
		weights = sh.persist_base + sh.persist_adapter;
		adapters = sh.persist_adapter;
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
		add(s, VP_CAT_GRADS, shard_bytes(g, p, g->grad_bytes,
		    sh.grads));
	/*
	 * The allocator sees each persistent term as one block (the real
	 * job has one per parameter: the difference is the 2 MiB rounding
	 * of each, which a large segment's split remainder mostly reuses).
	 */
	(void)ev_alloc(s, weights - adapters, TAG_NONE);
	(void)ev_alloc(s, adapters, TAG_NONE);
	(void)ev_alloc(s, g->fp8_bytes / sh.weights, TAG_NONE);
	(void)ev_alloc(s, master, TAG_NONE);
	/* In backward the states are made by the first step's hooks: in the
	 * steady state they exist before the step. */
	(void)ev_alloc(s, states, s->oib ? TAG_NONE : TAG_STATE);
	(void)ev_alloc(s, g->input_bytes, TAG_NONE);
	(void)ev_alloc(s, sh.grad_buffer, TAG_NONE);
	if (sh.grads_prealloc)
		(void)ev_alloc(s, shard_bytes(g, p, g->grad_bytes, sh.grads),
		    TAG_NONE);
	if (s->rec) {
		/* The pipeline's in-flight micro-batches: their size is
		 * known after the forward (replay() fills it in). */
		s->inflight_ev = s->nev;
		ev_push(s, EV_ALLOC, 0, ++s->nslots, TAG_NONE);
		ev_push(s, EV_BODY, 0, 0, TAG_NONE);
	}
	/* Sharded parameters gathered while forward and backward run. */
	s->gather_slot = ev_alloc(s, rb(s, s->shard_tmp), TAG_NONE);
	s->first_mb = true;
	for (mb = 0; mb < (p->grad_accum > 1 ? 2 : 1) && !s->stopped; mb++) {
		count_refs(s);
		memset(s->cko, 0, g->nt);
		s->nstash = s->nbstash = 0;
		s->pack_id = 0;
		memset(s->alive, 0, g->nt);
		memset(s->galive, 0, g->nt);
		s->phase = VP_PHASE_FORWARD;
		s->ft_last = 0;
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
				if (s->rec)
					ev_free(s, &s->th[i]);
			}
			g_free(s, (int32_t)i);
		}
		/* The gradient term: what backward made (ZeRO-1/2: before
		 * the epilogue put the partition in their place). */
		if (s->first_mb)
			grads_total = s->ds_gpart ? s->ds_grads :
			    s->cat[VP_CAT_GRADS];
		s->first_mb = false;
	}
	s->out->saved_per_microbatch = end_fwd_live;
	s->out->grads_bytes = grads_total;
	s->out->host_bytes += s->host_act_peak;
	s->out->shard_gather_bytes = sh.gather;
	s->out->grad_buffer_bytes = sh.grad_buffer;
	ev_free(s, &s->gather_slot);
	/* In backward the hooks have stepped every parameter already. */
	if (!s->stopped && !s->oib) {
		s->phase = VP_PHASE_OPTIMIZER;
		s->cur_layer = 0;
		s->cur_op = "optimizer step";
		s->place = VP_PLACE_AFTER;
		tmp = host ? 0 : rt(s, optim_tmp(g, p) / sh.states);
		/* ZeRO-3 steps one sub-group at a time (sub_group_size, 1e9
		 * elements, DeepSpeed's default) on a flat fp32 copy of its
		 * gradients (stage3.py, _prepare_fp32_grad_for_sub_group:
		 * flatten, .to(fp32)), its buffer kept; ZeRO-1/2 hold the
		 * epilogue's (ds_epilogue). */
		if (!host && p->zero >= 3 && sh.d3.on) {
			uint64_t sub = g->trainable / sh.states;

			if (sub > VP_DS_SUB_GROUP)
				sub = VP_DS_SUB_GROUP;
			tmp += rt(s, vp_mul_sat(sub, 4));
		}
		if (s->rec) {
			const struct vp_opt_info *oi = &vp_opt_info[p->optimizer];
			bool loop = vp_plan_optimizer_impl(p) ==
			    VP_OPTIMPL_FOR_LOOP;

			s->opt_copies = oi->nstates ? oi->nstates : 1;
			/* optim_tmp: PyTorch 1.x's foreach Adam keeps two
			 * lists, sqrt and denom. */
			s->opt_lists = oi->loop_tmp && p->torch_version < 200 ?
			    2 : 1;
			ev_push(s, EV_OPTIM, tmp, 0, loop ? TAG_LOOP :
			    TAG_FOREACH);
		}
		check(s, tmp, VP_CAT_TRANSIENT);
	}
}

/* The job's allocator options: the plan's PYTORCH_CUDA_ALLOC_CONF, or
 * PyTorch's defaults (the option parser already refused a bad one). */
static void
plan_alloc_conf(const struct vp_plan *p, struct vp_alloc_conf *c)
{
	struct vp_buf err;

	vp_alloc_conf_init(c);
	if (p->alloc_conf[0] == '\0')
		return;
	vp_buf_init(&err);
	(void)vp_alloc_conf_parse(c, p->alloc_conf, &err);
	vp_buf_free(&err);
}

static void
sim_init(struct sim *s, const struct vp_graph *g, const struct vp_plan *p,
    bool rec)
{
	size_t i, start = SIZE_MAX;

	memset(s, 0, sizeof *s);
	s->g = g;
	s->p = p;
	s->cuda = p->device == VP_DEVICE_CUDA;
	/* The period of the block pattern, as vp_mem_estimate_fast sees
	 * it. */
	s->per = p->recompute == VP_RECOMP_NONE || p->recompute_stride == 0 ?
	    1 : p->recompute_stride;
	s->rem = g->layers % s->per;
	plan_alloc_conf(p, &s->conf);
	s->round512 = true;
	for (i = 0; i < VP_ALLOC_BANDS; i++)
		if (s->conf.roundup_power2_divisions[i] > 1)
			s->round512 = false;
	/*
	 * The allocator is simulated when the job's PYTORCH_CUDA_ALLOC_CONF
	 * is given (--alloc-conf, "defaults" for PyTorch's), never for
	 * cudaMallocAsync, which is not simulated.
	 */
	s->rec = rec && s->cuda && p->alloc_conf[0] != '\0' &&
	    !s->conf.async_backend;
	if (s->rec) {
		s->th = xcalloc(g->nt ? g->nt : 1, sizeof *s->th);
		s->gh = xcalloc(g->nt ? g->nt : 1, sizeof *s->gh);
	}
	s->refs = xcalloc(g->nt ? g->nt : 1, sizeof *s->refs);
	s->hold = xcalloc(g->nt ? g->nt : 1, sizeof *s->hold);
	s->alive = xcalloc(g->nt ? g->nt : 1, 1);
	s->galive = xcalloc(g->nt ? g->nt : 1, 1);
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
	s->cko = xcalloc(g->nt ? g->nt : 1, 1);
	s->stash = xcalloc(g->nt ? g->nt : 1, sizeof *s->stash);
	s->stash_id = xcalloc(g->nt ? g->nt : 1, sizeof *s->stash_id);
	s->bstash = xcalloc(g->nt ? g->nt : 1, sizeof *s->bstash);
	/* The final norm's offloadable saves, from the last block to the
	 * head (the first op making logits; none on an earlier stage). */
	s->head_op = SIZE_MAX;
	s->tail_packs = 0;
	for (i = g->layer_first_op[g->layers + 1]; i < g->nop; i++) {
		const struct vp_op *o = &g->op[i];
		int k;

		if (o->layer != 0)
			continue;
		if (o->out[0] >= 0 && g->t[o->out[0]].cat == VP_CAT_LOGITS) {
			s->head_op = i;
			break;
		}
		for (k = 0; k < VP_OP_MAXIO && o->saved[k] >= 0; k++)
			if (g->t[o->saved[k]].bytes >= OFFLOAD_MIN)
				s->tail_packs++;
	}
	if (s->head_op == SIZE_MAX)
		s->tail_packs = 0;
}

static void
sim_free(struct sim *s)
{
	free(s->refs);
	free(s->hold);
	free(s->alive);
	free(s->galive);
	free(s->cko);
	free(s->stash);
	free(s->stash_id);
	free(s->bstash);
	free(s->seg_of);
	free(s->made_seg);
	free(s->segs);
	free(s->th);
	free(s->gh);
	free(s->ev);
	free(s->par);
	free(s->tmp);
}

/* Part k of total when cut in the proportions par[0..n) (sum psum); the
 * last part takes what rounding left. */
static uint64_t
part(uint64_t total, const uint64_t *par, size_t n, uint64_t psum, size_t k)
{
	uint64_t done = 0;
	size_t i;

	if (n == 0 || psum == 0)
		return k == 0 ? total : 0;
	if (k + 1 < n)
		return (uint64_t)((double)total * ((double)par[k] /
		    (double)psum));
	/* Not hot: once per step. */
	for (i = 0; i + 1 < n; i++)
		done += (uint64_t)((double)total * ((double)par[i] /
		    (double)psum));
	return total > done ? total - done : 0;
}

/*
 * The optimizer step as the implementation allocates (torch/optim/adam.py;
 * transformers' AdamW is the for-loop): parameters in the order the model
 * registers them (the reverse of backward's), states created on the first
 * step (_init_group: each parameter's state tensors in turn), then
 * - foreach (_multi_tensor_adam): one temporary per parameter, all at
 *   once (_foreach_sqrt; PyTorch 1.x also _foreach_add: two lists), freed
 *   after the update;
 * - for-loop (_single_tensor_adam): per parameter, its states on the
 *   first step, then exp_avg_sq.sqrt() and its quotient, one parameter's
 *   size each, freed before the next parameter;
 * - fused: no temporaries (tmp is 0).
 * The states' sizes are the state total cut like the gradients; the
 * for-loop's two temporaries of the largest parameter are tmp.
 */
static int
feed_optim(const struct sim *s, struct vp_alloc *a, const struct ev *e,
    uint64_t states, bool first, vp_alloc_handle *hs)
{
	size_t n = s->npar ? s->npar : 1, i, k, l, nt;
	uint64_t psum = 0, pmax = 0, tmp = e->bytes, one;
	vp_alloc_handle t1, t2, *ht;
	unsigned c, copies = s->opt_copies, lists = s->opt_lists;
	int rc = VP_ALLOC_OK;

	for (i = 0; i < s->npar; i++) {
		psum += s->par[i];
		pmax = s->par[i] > pmax ? s->par[i] : pmax;
	}
	for (k = n; k-- > 0 && rc == VP_ALLOC_OK;) {
		if (first && states)
			for (c = 0; c < copies && rc == VP_ALLOC_OK; c++)
				rc = vp_alloc_allocate(a, part(states / copies,
				    s->par, s->npar, psum, k), 0,
				    &hs[k * copies + c]);
		if (e->tag != TAG_LOOP || tmp == 0 || rc != VP_ALLOC_OK)
			continue;
		/* This parameter's two temporaries. */
		t1 = t2 = 0;
		one = s->npar ? (uint64_t)((double)(tmp / 2) *
		    ((double)s->par[k] / (double)pmax)) : tmp / 2;
		rc = vp_alloc_allocate(a, one, 0, &t1);
		if (rc == VP_ALLOC_OK)
			rc = vp_alloc_allocate(a, one, 0, &t2);
		(void)vp_alloc_deallocate(a, t1);
		(void)vp_alloc_deallocate(a, t2);
	}
	if (e->tag != TAG_FOREACH || tmp == 0 || rc != VP_ALLOC_OK)
		return rc;
	nt = lists * n;
	ht = xcalloc(nt, sizeof *ht);
	for (l = 0; l < lists; l++)
		for (k = n; k-- > 0 && rc == VP_ALLOC_OK;)
			rc = vp_alloc_allocate(a, part(tmp / lists, s->par,
			    s->npar, psum, k), 0, &ht[l * n + k]);
	for (i = 0; i < nt; i++)
		(void)vp_alloc_deallocate(a, ht[i]);
	free(ht);
	return rc;
}

/*
 * Feed the recorded events to the simulated caching allocator (alloc.h),
 * all on stream 0: the replay has no side streams.  Two steps: the first
 * creates the optimizer states at its optimizer step, and each ends with
 * zero_grad(set_to_none=True), which frees the gradients; the second runs
 * on the cache the first left, the steady state.  capacity 0: unlimited.
 * Returns VP_ALLOC_OK or VP_ALLOC_OOM, with the statistics of the whole
 * run in *st.
 */
static int
feed(const struct sim *s, uint64_t capacity, struct vp_alloc_stats *st)
{
	struct vp_alloc *a = vp_alloc_new(&s->conf, capacity);
	vp_alloc_handle *h = xcalloc((size_t)s->nslots + 1, sizeof *h);
	vp_alloc_handle *hs;
	uint64_t states = 0;
	size_t i, body = s->nev;
	int step, rc = VP_ALLOC_OK;

	hs = xcalloc((s->npar ? s->npar : 1) * (s->opt_copies ?
	    s->opt_copies : 1), sizeof *hs);
	for (i = 0; i < s->nev && rc == VP_ALLOC_OK; i++) {
		const struct ev *e = &s->ev[i];

		if (e->kind == EV_BODY) {
			body = i + 1;
			break;
		}
		if (e->kind == EV_ALLOC && e->tag == TAG_STATE)
			states += e->bytes;
		else if (e->kind == EV_ALLOC)
			rc = vp_alloc_allocate(a, e->bytes, 0, &h[e->slot]);
	}
	for (step = 0; step < 2 && rc == VP_ALLOC_OK; step++) {
		for (i = body; i < s->nev && rc == VP_ALLOC_OK; i++) {
			const struct ev *e = &s->ev[i];

			switch (e->kind) {
			case EV_ALLOC:
				rc = vp_alloc_allocate(a, e->bytes, 0,
				    &h[e->slot]);
				break;
			case EV_FREE:
				(void)vp_alloc_deallocate(a, h[e->slot]);
				h[e->slot] = 0;
				break;
			case EV_OPTIM:
				rc = feed_optim(s, a, e, states, step == 0, hs);
				break;
			default:
				break;
			}
		}
		/* zero_grad: what the step made and still holds goes. */
		for (i = body; i < s->nev; i++)
			if (s->ev[i].kind == EV_ALLOC && h[s->ev[i].slot]) {
				(void)vp_alloc_deallocate(a, h[s->ev[i].slot]);
				h[s->ev[i].slot] = 0;
			}
	}
	*st = *vp_alloc_stats(a);
	free(hs);
	free(h);
	vp_alloc_free(a);
	return rc;
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
	struct vp_live *v = xcalloc(g->nt + 16, sizeof *v);
	size_t nv = 0, i, j;
	static const enum vp_cat pers[] = { VP_CAT_WEIGHTS, VP_CAT_MASTER,
	    VP_CAT_OPTIM, VP_CAT_GRADS };

	uint64_t rest = s->stop_extra, b;

	for (i = 0; i < VP_NELEM(pers); i++) {
		b = s->cat[pers[i]];
		if (pers[i] == VP_CAT_WEIGHTS && s->fwbuf >= 0 &&
		    fw_buffers[s->fwbuf].persist && s->persist &&
		    s->persist <= b) {
			b -= s->persist;
			v[nv].name = fw_buffers[s->fwbuf].persist;
			v[nv].cat = VP_CAT_WEIGHTS;
			v[nv].bytes = s->persist;
			v[nv++].count = 1;
		}
		if (b) {
			v[nv].name = vp_cat_names[pers[i]];
			if (pers[i] == VP_CAT_GRADS && s->grads_contig &&
			    s->fwbuf >= 0 && fw_buffers[s->fwbuf].grads)
				v[nv].name = fw_buffers[s->fwbuf].grads;
			v[nv].cat = (uint8_t)pers[i];
			v[nv].bytes = b;
			v[nv++].count = 1;
		}
	}
	/* The framework's buffers, by their names (fw_buffers); what is
	 * left of the check's extra is the op's own. */
	if (s->fwbuf >= 0) {
		const char *nm[4] = { fw_buffers[s->fwbuf].gather,
		    fw_buffers[s->fwbuf].unit_grad,
		    fw_buffers[s->fwbuf].grad_buffer,
		    fw_buffers[s->fwbuf].grad_buffer };
		uint64_t by[4] = {
		    s->stop_phase == VP_PHASE_OPTIMIZER ? 0 :
		    s->d3.on ? ds3_now(s) : s->shard_tmp,
		    s->stop_phase == VP_PHASE_BACKWARD ? s->unit_grad : 0,
		    s->grad_buffer,
		    s->stop_phase == VP_PHASE_BACKWARD ? s->ds_ipg : 0 };

		for (j = 0; j < 4; j++) {
			if (nm[j] == NULL || by[j] == 0)
				continue;
			if (j != 2) {	/* part of the check's extra */
				if (by[j] > rest)
					by[j] = rest;
				rest -= by[j];
			}
			v[nv].name = nm[j];
			v[nv].cat = VP_CAT_TRANSIENT;
			v[nv].bytes = by[j];
			v[nv++].count = 1;
		}
	}
	for (j = 0; j < nv; j++)
		if (fw_named(v[j].name) && out->nfw < VP_MEM_FW)
			out->fw[out->nfw++] = v[j];
	qsort(out->fw, (size_t)out->nfw, sizeof *out->fw, cmp_live);
	if (rest) {
		v[nv].name = "op workspace / gradient accumulation";
		v[nv].cat = VP_CAT_TRANSIENT;
		v[nv].bytes = rest;
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

/*
 * torchtitan's async TP (--async-tp): inductor's micro-pipelined
 * all-gather-matmul and matmul-reduce-scatter (torch/distributed/
 * _symmetric_memory, PyTorch 2.13) run through one symmetric-memory
 * workspace per TP group (get_symm_mem_workspace), grown to the largest
 * request and kept: an all-gather asks for its shard, a reduce-scatter
 * (_pipelined_produce_and_all2all) for two output chunks, both a
 * sequence shard of hidden-wide rows in the compute dtype, so 2 b (s /
 * cp / tp) h of it.  empty_strided_p2p maps it outside the caching
 * allocator.  The gathered input and the stacked partial outputs are
 * ordinary tensors the size SP's all-gather and reduce-scatter already
 * make.
 */
static uint64_t
symm_bytes(const struct vp_model *m, const struct vp_plan *p)
{
	uint64_t rows;

	if (!p->async_tp || p->tp < 2)
		return 0;
	rows = vp_mul_sat(p->micro_batch, p->seq / p->cp / p->tp);
	return vp_mul_sat(vp_mul_sat(2, rows), vp_mul_sat(m->hidden,
	    vp_dtype_bytes[vp_prec_info[p->precision].compute]));
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
	/*
	 * The simulated allocator: max_memory_allocated counts block sizes,
	 * so the replay's peak grows by the unsplit remainders of blocks
	 * (counted with the transient buffers); a calibration's corrections
	 * apply on top, as they were fitted.
	 */
	if (out->alloc_simulated &&
	    out->alloc_allocated_peak > out->allocated_peak) {
		out->term[VP_CAT_TRANSIENT] +=
		    out->alloc_allocated_peak - out->allocated_peak;
		out->allocated_peak = out->alloc_allocated_peak;
	}
	calibrate(out, m, pr);
	if (p->device == VP_DEVICE_CPU) {
		/* No caching allocator and no context to account for. */
		out->reserved_peak = out->device_peak = out->allocated_peak;
		return;
	}
	if (out->alloc_simulated) {
		/* Asked for (--alloc-conf): the simulated
		 * max_memory_reserved, never under the allocated level a
		 * calibration's corrections may have raised. */
		r = out->alloc_reserved_peak > out->allocated_peak ?
		    out->alloc_reserved_peak : out->allocated_peak;
	} else {
		/*
		 * The profile's fragmentation share.  It is the default
		 * because the simulation, fed a faithful event stream,
		 * reserves less than the published runs did (HACKING,
		 * "Reserved"), and for the planner's fast replay and
		 * cudaMallocAsync.
		 */
		r = vp_mem_reserved(out->allocated_peak, pr->frag_share, pr);
	}
	if (p->load != VP_LOAD_NONE) {
		/* What building the model left reserved (load.c). */
		struct vp_load_peak ld;

		if (vp_load_estimate(m, p, &ld) == 0) {
			out->load_allocated_peak = ld.allocated_peak;
			out->load_reserved_bytes = ld.reserved_bytes;
			if (ld.reserved_bytes > r) {
				r = ld.reserved_bytes;
				out->load_sets_reserved = true;
			}
		}
	}
	out->reserved_peak = r;
	out->frag_bytes = r - out->allocated_peak;
	vp_stack_consts(pr, p->torch_version, p->cuda_version,
	    &out->context_bytes, &out->workspace_bytes);
	/* One NCCL communicator per process group this rank is in. */
	out->nccl_bytes = vp_mul_sat(vp_plan_groups(p, o->world),
	    pr->nccl_bytes_per_group);
	out->symm_bytes = symm_bytes(m, p);
	out->device_peak = vp_add_sat(r, out->context_bytes +
	    out->workspace_bytes + out->nccl_bytes + out->symm_bytes);
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
		tl->term[i][VP_CAT_ACT] = vp_add_sat(tl->term[i][VP_CAT_ACT],
		    inflight);
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

/*
 * The caching allocator over the replay's events.  Its capacity is what
 * the card leaves the allocator (usable minus context, cuBLAS workspace
 * and NCCL buffers).  Fed without a limit first; only a run that reserves
 * more than the capacity is fed again with it, so that PyTorch's
 * free-cached-and-retry can make it fit; when even that fails the job
 * OOMs and the unlimited run's peak says by how much.
 */
static uint64_t
alloc_capacity(const struct vp_model *m, const struct vp_mem_opts *o,
    const struct vp_plan *p)
{
	const struct vp_profile *pr = o->profile;
	uint64_t outside;

	if (!o->usable_bytes || pr == NULL)
		return 0;
	outside = vp_add_sat(vp_add_sat(pr->context_bytes,
	    pr->cublas_workspace_bytes), vp_mul_sat(vp_plan_groups(p,
	    o->world), pr->nccl_bytes_per_group));
	outside = vp_add_sat(outside, symm_bytes(m, p));
	return o->usable_bytes > outside ? o->usable_bytes - outside : 1;
}

static void
simulate_allocator(struct sim *s, const struct vp_model *m,
    const struct vp_mem_opts *o, const struct vp_plan *p, uint64_t inflight,
    struct vp_mem *out)
{
	struct vp_alloc_stats st, cst;
	uint64_t cap = alloc_capacity(m, o, p);

	s->ev[s->inflight_ev].bytes = inflight;
	if (feed(s, 0, &st) != VP_ALLOC_OK)
		return;		/* past 1 EB: the formula says it */
	out->alloc_simulated = true;
	if (cap && st.reserved_bytes.peak > cap) {
		if (feed(s, cap, &cst) == VP_ALLOC_OK)
			st = cst;
		else
			out->alloc_oom = true;
	}
	out->alloc_reserved_peak = st.reserved_bytes.peak;
	out->alloc_allocated_peak = st.allocated_bytes.peak;
	out->alloc_retries = st.alloc_retries;
	out->alloc_segments = st.device_allocs;
}

static void
replay(const struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, const struct vp_mem_opts *o, struct vp_mem *out,
    struct vp_timeline *tl, bool sim_alloc)
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
	sim_init(&s, g, p, sim_alloc && o->profile != NULL);
	s.out = out;
	if (tl != NULL) {
		memset(tl, 0, sizeof *tl);
		tl->per_point = 1;
		s.tl = tl;
	}
	simulate(&s, m);
	inflight = vp_scale(out->saved_per_microbatch, inflight_extra(p));
	out->allocated_peak = s.peak + inflight;
	if (s.rec)
		simulate_allocator(&s, m, o, p, inflight, out);
	if (tl != NULL)
		tl_finish(tl, inflight);
	for (c = 0; c < VP_CAT_COUNT; c++)
		out->term[c] = s.peak_cat[c];
	out->term[VP_CAT_ACT] += inflight;
	out->peak_phase = s.peak_phase;
	out->peak_layer = s.peak_layer;
	out->peak_op = s.peak_op;
	memcpy(out->phase_peak, s.phase_peak, sizeof s.phase_peak);
	memcpy(out->place_peak, s.place_peak, sizeof s.place_peak);
	if (o->explain) {
		struct sim e;
		struct vp_mem tmp;

		sim_init(&e, g, p, false);
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
	replay(g, m, p, o, out, NULL, true);
	levels(out, m, p, o);
}

static int estimate(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out, struct vp_timeline *tl,
    bool sim);

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
	replay(&g, m, p, q, out, NULL, false);
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
 *
 * With --recompute-stride N the blocks repeat with period N (N - 1 that
 * keep everything, then a checkpointed one) and the stage ends with
 * r = blocks mod N uncheckpointed ones.  The unit is then a period: the
 * replays have 2N + r, 3N + r (and 4N + r) blocks, the same pattern as
 * the stage with fewer periods, and the line is extended by whole
 * periods.  N = 1 is the case above.
 */
int
vp_mem_estimate_fast(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out)
{
	struct vp_mem a, b;
	struct vp_mem_opts q = *o;
	uint64_t blocks, inflight, per, r;
	struct vp_plan one = *p;
	double k;
	int c, best = 0;
	uint64_t n0 = 2;

	plan_normalized(p);
	blocks = vp_stage_blocks(m->layers, p->pp, p->stage);
	/* The period of the block pattern: with recompute none every
	 * block is alike whatever the stride. */
	per = p->recompute == VP_RECOMP_NONE || p->recompute_stride == 0 ?
	    1 : p->recompute_stride;
	r = blocks % per;
	/* Under checkpointing the offload's forward stash holds the inputs
	 * of the last OFFLOAD_STASH blocks: the pattern repeats once the
	 * shortest replay has more. */
	if (p->activation_offload && p->recompute != VP_RECOMP_NONE)
		while (n0 * per <= OFFLOAD_STASH)
			n0++;
	/* ZeRO-3 keeps its last blocks gathered across the turn (ds3_now):
	 * the shortest replay must have more than it keeps. */
	if (p->zero >= 3 && p->fsdp == VP_FSDP_NONE &&
	    vp_plan_framework(p) == VP_FW_DEEPSPEED) {
		struct vp_param_count pc;
		uint64_t ex = 0, nb;
		uint32_t kept;

		/* A block on this rank, as graph.c's rank_params. */
		vp_model_params(m, &pc);
		if (m->has_moe)
			ex = vp_mul_sat(m->moe.experts,
			    vp_mlp_params(m, m->moe.ffn));
		nb = (pc.per_layer - ex) / (p->tp ? p->tp : 1) +
		    ex / (p->ep ? p->ep : 1);
		if (p->lora_rank)
			nb = vp_add_sat(nb, vp_lora_params(m, p, 1));
		kept = ds3_kept(m, p, nb, blocks);

		while (n0 * per <= kept)
			n0++;
	}
	/* Identical periods only: DeepSeek's dense first blocks and
	 * Qwen-MoE's dense blocks differ, and so do an encoder-decoder's
	 * two stacks and CLIP's two towers. */
	if (blocks <= (n0 + 2) * per + r || o->explain ||
	    (m->has_moe && vp_moe_dense_blocks(m, 0, m->layers)) ||
	    m->arch == VP_ARCH_ENCDEC || vp_model_family(m) == VP_FAMILY_CLIP ||
	    m->ssm.n_attn > 0 || m->ssm.pattern[0])
		return estimate(m, p, o, out, NULL, false);
	k = (double)(blocks - (n0 + 1) * per - r) / (double)per;
	q.explain = 0;
	/* Replay without the pipeline's in-flight share; add it after. */
	one.stage = p->stage;
	replay_blocks(m, &one, &q, n0 * per + r, &a);
	replay_blocks(m, &one, &q, (n0 + 1) * per + r, &b);
	if (a.allocated_peak != UINT64_MAX && b.allocated_peak != UINT64_MAX &&
	    !same_place(&a, (uint32_t)(n0 * per + r), &b,
	    (uint32_t)((n0 + 1) * per + r))) {
		a = b;
		replay_blocks(m, &one, &q, (n0 + 2) * per + r, &b);
		k = (double)(blocks - (n0 + 2) * per - r) / (double)per;
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
	/* Each place on its own line: where the phase peaks can move
	 * from one place to another as the stage grows (the last block's
	 * backward holding every block's saved tensors, the first block's
	 * holding every gradient). */
	for (c = 0; c < VP_PHASE_COUNT; c++) {
		int w;

		out->phase_peak[c] = 0;
		for (w = 0; w < VP_PLACES; w++) {
			uint64_t v;

			if (w == VP_PLACE_INSIDE)
				continue;	/* below both ends */
			v = extrapolate(a.place_peak[c][w],
			    b.place_peak[c][w], k);
			if (v > out->phase_peak[c])
				out->phase_peak[c] = v;
		}
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

/* The exact replay; sim: with the allocator (not for the planner). */
static int
estimate(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out, struct vp_timeline *tl,
    bool sim)
{
	struct vp_graph g;

	if (tl != NULL)
		memset(tl, 0, sizeof *tl);
	if (vp_graph_build(m, p, &g) != 0)
		return -1;
	replay(&g, m, p, o, out, tl, sim);
	levels(out, m, p, o);
	vp_graph_free(&g);
	return 0;
}

int
vp_mem_estimate(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out)
{
	return estimate(m, p, o, out, NULL, true);
}

int
vp_mem_estimate_timeline(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out, struct vp_timeline *tl)
{
	return estimate(m, p, o, out, tl, true);
}
