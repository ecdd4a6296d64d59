/*
 * session.c — the estimate pipeline after the inputs are read (see
 * session.h): check, plan, replay, and fill the report.
 */
#include "session.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "finetune.h"
#include "rules.h"
#include "util.h"

/*
 * What each knob of the plan saves: the device peak with that knob at its
 * default, minus the plan's.  Knobs at their defaults save nothing and are
 * not listed.
 */
static int
knob_savings(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, uint64_t peak, struct vp_saving *out)
{
	struct vp_plan q;
	unsigned st;
	int n = 0;

#define TRY(cond, label, fix) do {					\
		if ((cond) && n < VP_REPORT_MAXSAVINGS) {			\
			uint64_t w;					\
			q = *p;						\
			fix;						\
			q.stage = 0;					\
			w = vp_plan_worst_peak(m, &q, o, &st, true);	\
			out[n].knob = label;				\
			out[n].saved_bytes = w > peak ? w - peak : 0;	\
			n++;						\
		}							\
	} while (0)
	TRY(p->recompute != VP_RECOMP_NONE, p->recompute == VP_RECOMP_FULL ?
	    "recompute full" : p->recompute == VP_RECOMP_OP ? "recompute op" :
	    "recompute selective", (q.recompute = VP_RECOMP_NONE,
	    q.activation_offload = false));
	TRY(p->compile || p->compile_loss, "torch.compile",
	    (q.compile = false, q.compile_loss = false));
	TRY(p->zero > 0, p->zero == 1 ? "ZeRO 1" : p->zero == 2 ? "ZeRO 2" :
	    "ZeRO 3", q.zero = 0);
	TRY(p->fsdp != VP_FSDP_NONE, "FSDP sharding", q.fsdp = VP_FSDP_NONE);
	TRY(p->tp > 1, "tensor parallel", (q.dp *= q.tp, q.tp = 1,
	    q.sp = false));
	TRY(p->sp, "sequence parallel", q.sp = false);
	TRY(p->pp > 1, "pipeline parallel", (q.dp *= q.pp, q.pp = 1));
	TRY(p->cp > 1, "context parallel", (q.dp *= q.cp, q.cp = 1));
	TRY(p->ep > 1, "expert parallel", q.ep = 1);
#undef TRY
	return n;
}

void
vp_session_open_all(struct vp_session *s)
{
	const struct vp_model *m = s->model;

	memset(&s->open, 0, sizeof s->open);
	s->open.tp = s->open.pp = s->open.cp = s->open.sp = true;
	s->open.ep = m != NULL && m->has_moe;
	s->open.shard = s->open.recompute = s->open.grad_accum = true;
}

static void
search_setup(const struct vp_session *s, struct vp_search *srch)
{
	const struct vp_gpu *g = s->gpus->gpu;

	memset(srch, 0, sizeof *srch);
	srch->model = s->model;
	srch->gpu = g;
	srch->profile = &s->profile;
	srch->world = s->world;
	srch->gpus_per_node = s->plan.gpus_per_node;
	srch->capacity = g->usable_bytes;
	srch->open = s->open;
	srch->first_only = s->best_only;
}

/* The planner: the best plan (or the nearest miss) replaces the plan. */
static void
plan(struct vp_session *s)
{
	const struct vp_open *op = &s->open;
	struct vp_search srch;
	struct vp_plan orig;	/* the fixed knobs, not the planner's choice */

	if (!(op->tp || op->pp || op->cp || op->ep || op->shard ||
	    op->recompute)) {
		s->plan.dp = vp_plan_dp(&s->plan, s->world);
		return;
	}
	search_setup(s, &srch);
	s->plan.dp = 0;
	orig = s->plan;
	vp_search_run(&srch, &s->plan, &s->sres);
	if (s->sres.nbest > 0) {
		assert(vp_plan_rules(&s->sres.best[0].plan, s->model, s->world,
		    VP_RK_ALL, NULL) == 0);
		s->plan = s->sres.best[0].plan;
		s->chosen = s->sres.best[0];
	} else if (s->sres.evaluated > 0) {
		s->plan = s->sres.nearest.plan;
		s->chosen = s->sres.nearest;
	}
	s->rep.search = &s->sres;
	s->rep.chosen = &s->chosen;
	if (s->min_gpus || (s->sres.nbest == 0 && !s->no_auto_min_gpus)) {
		s->rep.ask_min_gpus = true;
		s->rep.min_gpus = vp_min_gpus_in(&srch, &orig,
		    s->min_gpus_node, 4096, &s->mres, NULL);
		if (s->rep.min_gpus)
			s->rep.min_gpus_plan = &s->mres.best[0];
	}
}

/* Exact replay of every pipeline stage; the worst one is the answer. */
static void
replay_stages(struct vp_session *s)
{
	unsigned npp = s->plan.pp, st, worst = 0;

	if (npp != s->nstages) {
		free(s->stages);
		s->stages = xcalloc(npp, sizeof *s->stages);
		s->nstages = npp;
	}
	for (st = 0; st < npp; st++) {
		struct vp_plan q = s->plan;

		q.stage = st;
		if (s->timeline == NULL) {
			vp_mem_estimate(s->model, &q, &s->mo, &s->stages[st]);
		} else {
			/* Keep the timeline of the worst stage so far. */
			struct vp_timeline *tl = xmalloc(sizeof *tl);

			vp_mem_estimate_timeline(s->model, &q, &s->mo,
			    &s->stages[st], tl);
			if (st == 0 || s->stages[st].device_peak >
			    s->stages[worst].device_peak)
				*s->timeline = *tl;
			free(tl);
		}
		if (s->stages[st].device_peak > s->stages[worst].device_peak)
			worst = st;
	}
	s->mem = s->stages[worst];
	if (s->explain && worst != 0) {
		struct vp_plan q = s->plan;

		q.stage = worst;
		vp_mem_estimate(s->model, &q, &s->mo, &s->mem);
	}
	s->plan.stage = worst;
	s->rep.stages = s->stages;
	s->rep.nstages = npp;
	s->rep.worst_stage = worst;
}

static void
fill_lora(struct vp_session *s)
{
	const struct vp_plan *p = &s->plan;
	unsigned i;
	size_t n;

	if (p->lora_rank > 0) {
		struct vp_plan whole = *p;

		/* Trainable parameters of the whole model, not per rank. */
		whole.tp = whole.pp = whole.ep = 1;
		s->rep.trainable = vp_add_sat(vp_lora_params(s->model,
		    &whole, s->model->layers), vp_lora_head_params(s->model,
		    &whole));
	} else if (vp_model_family(s->model) == VP_FAMILY_WHISPER) {
		struct vp_param_count pc;

		/* Whisper's encoder position table takes no gradient. */
		vp_model_params(s->model, &pc);
		s->rep.trainable = pc.total - s->model->max_seq *
		    s->model->hidden;
	}
	/* LLaVA: the vision tower is frozen. */
	if (s->model->vis.llava && p->lora_rank == 0) {
		struct vp_param_count pc;

		vp_model_params(s->model, &pc);
		s->rep.trainable = pc.total - vp_llava_frozen_params(s->model);
	}
	s->lora_targets[0] = '\0';
	for (i = 0; i < VP_LORA_TARGET_COUNT; i++)
		if (p->lora_targets & (1u << i)) {
			n = strlen(s->lora_targets);
			snprintf(s->lora_targets + n, sizeof s->lora_targets - n,
			    "%s%s", n ? "," : "", vp_lora_target_names[i]);
		}
	s->rep.lora_targets = s->lora_targets;
}

static void
fill_host(struct vp_session *s)
{
	const struct vp_plan *p = &s->plan;

	/* Host RAM per node: every GPU of the node offloads its share. */
	s->rep.host_per_node = vp_mul_sat(s->mem.host_bytes,
	    p->gpus_per_node && p->gpus_per_node < s->world ?
	    p->gpus_per_node : s->world);
	s->host_short = false;
	if (p->host_mem_bytes && s->rep.host_per_node > p->host_mem_bytes) {
		s->rep.host_note = "DOES NOT FIT in host RAM: the offloaded "
		    "state exceeds --host-mem";
		s->host_short = true;
		s->rep.host_over = true;
	} else if (!p->host_mem_bytes &&
	    s->rep.host_per_node > (2048ULL << 30)) {
		s->rep.host_note = "warning: more host RAM per node than a "
		    "typical server has (2 TiB); give --host-mem to check";
	}
}

/*
 * A calibrated profile that measured the card's capacity replaces the
 * catalog's figure for this session: the planner, the verdict and the
 * report all see the measured one.
 */
static void
measured_card(struct vp_session *s)
{
	if (s->gpus == NULL || s->gpus->gpu == NULL ||
	    s->profile.usable_bytes == 0)
		return;
	if (s->gpus != &s->gset) {
		s->gset = *s->gpus;
		s->card = *s->gpus->gpu;
	}
	s->card.usable_bytes = s->profile.usable_bytes;
	s->gset.gpu = &s->card;
	s->gpus = &s->gset;
}

int
vp_session_run(struct vp_session *s, struct vp_diags *d)
{
	const struct vp_gpu *gpu;
	struct vp_report *r = &s->rep;
	bool searching;

	measured_card(s);
	gpu = s->gpus ? s->gpus->gpu : NULL;

	memset(r, 0, sizeof *r);
	memset(&s->chosen, 0, sizeof s->chosen);
	/* The plan is final here but for what the planner changes: from
	 * now on every degree is at least 1. */
	vp_plan_normalize(&s->plan);
	if (!s->precision_given && vp_plan_card_precision(&s->plan, gpu)) {
		snprintf(s->precision_note, sizeof s->precision_note,
		    "%s has no bf16 tensor cores (the catalog lists no bf16 "
		    "rate): planned in %s; --precision keeps a bf16 plan, "
		    "untimed", gpu->id, vp_prec_names[s->plan.precision]);
		r->precision_note = s->precision_note;
	}
	if (vp_plan_check(&s->plan, s->model, s->world, d) != 0 ||
	    vp_plan_card_check(&s->plan, gpu, d) != 0)
		return -1;
	s->mo.profile = &s->profile;
	s->mo.world = s->world;
	s->mo.explain = s->explain;
	s->mo.usable_bytes = gpu ? gpu->usable_bytes : 0;

	searching = gpu != NULL && s->search &&
	    s->plan.device == VP_DEVICE_CUDA;
	/* A rule on a knob the planner settles (offload needs sharding,
	 * activation offload needs checkpointing) waits for it only when it
	 * may change that knob. */
	if (!(searching && (s->open.shard || (s->open.recompute &&
	    s->plan.activation_offload))) &&
	    vp_plan_rules(&s->plan, s->model, s->world, VP_RK_ALL, d) != 0)
		return -1;
	if (searching)
		plan(s);
	if (r->chosen == NULL && gpu != NULL) {
		s->chosen.plan = s->plan;
		vp_plan_time(s->model, gpu, &s->profile, s->world, &s->chosen);
		r->chosen = &s->chosen;
	}
	if (r->chosen != NULL && isnan(r->chosen->tokens_per_second))
		r->time_why = vp_plan_time_why(&r->chosen->plan, gpu,
		    s->time_why, sizeof s->time_why);
	if (s->min_gpus && gpu != NULL && !r->ask_min_gpus) {
		struct vp_search srch;

		search_setup(s, &srch);
		r->ask_min_gpus = true;
		r->min_gpus = vp_min_gpus_in(&srch, &s->plan,
		    s->min_gpus_node, 4096, &s->mres, NULL);
		if (r->min_gpus)
			r->min_gpus_plan = &s->mres.best[0];
	}
	/* The plan that is replayed, the planner's choice included, by the
	 * whole rule book: the search only proposes plans it accepts, so
	 * only a plan the planner could not settle is refused here. */
	if (vp_plan_rules(&s->plan, s->model, s->world, VP_RK_ALL, d) != 0)
		return -1;
	replay_stages(s);
	r->nplans = s->nplans;
	if (gpu != NULL)
		r->nsavings = knob_savings(s->model, &s->plan, &s->mo,
		    s->mem.device_peak, s->savings);
	r->savings = s->savings;
	if (s->max_seq && gpu != NULL) {
		r->ask_max_seq = true;
		r->max_seq = vp_max_seq(s->model, &s->plan, &s->mo,
		    gpu->usable_bytes, 1u << 20);
	}
	r->model = s->model;
	r->plan = &s->plan;
	r->mem = &s->mem;
	fill_lora(s);
	fill_host(s);
	r->profile = s->profile_label;
	r->trainer = s->trainer;
	r->ds_config = s->ds_config;
	r->world = s->world;
	r->fits = -1;
	r->explain = s->explain;
	r->version = s->version;
	r->unicode = true;
	if (s->profile.calibrated) {
		r->err_allocated = s->profile.err_allocated;
		r->err_reserved = s->profile.err_reserved;
		r->err_device = s->profile.err_device;
		vp_band_calibrated(r->err_allocated,
		    &r->band[VP_LVL_ALLOCATED]);
		vp_band_calibrated(r->err_reserved, &r->band[VP_LVL_RESERVED]);
		vp_band_calibrated(r->err_device, &r->band[VP_LVL_DEVICE]);
	} else {
		int l;

		for (l = 0; l < VP_LVL_COUNT; l++)
			vp_band_builtin(&s->plan, (enum vp_lvl)l, &r->band[l]);
	}
	if (gpu != NULL) {
		uint64_t cap = gpu->usable_bytes;

		r->gpus = s->gpus;
		r->measured_capacity = s->profile.usable_bytes != 0;
		r->fits = s->mem.device_peak <= cap;
		r->verdict = vp_band_verdict(s->mem.device_peak,
		    &r->band[VP_LVL_DEVICE], cap);
		r->max_micro_batch = vp_max_micro_batch(s->model, &s->plan,
		    &s->mo, cap, 1u << 16);
	}
	return 0;
}

void
vp_session_free(struct vp_session *s)
{
	free(s->stages);
	s->stages = NULL;
	s->nstages = 0;
}
