/* cost.c — card comparison (see cost.h). */
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

#define X(e, s) s,
const char *const vp_sort_names[VP_SORT_COUNT] = { VP_SORT_LIST(X) };
#undef X

/*
 * The least bytes per GPU any plan can reach: weights, gradients and
 * optimizer states fully sharded over n GPUs.  Below this n the search is
 * skipped — it cannot fit.
 */
static uint64_t
floor_bytes(const struct vp_model *m, const struct vp_plan *p, unsigned n)
{
	struct vp_param_count pc;
	const struct vp_prec_info *pi = &vp_prec_info[p->precision];
	double per = vp_dtype_bytes[pi->weight];

	vp_model_params(m, &pc);
	if (p->lora_rank > 0)
		per = p->quant != VP_QUANT_NONE ? 0.5 : 2.0;
	else
		per += vp_dtype_bytes[pi->grad] + (pi->master ? 4 : 0) +
		    vp_opt_info[p->optimizer].nstates *
		    vp_dtype_bytes[pi->state];
	return (uint64_t)(per * (double)pc.total / (double)n);
}

static void
point(const struct vp_compare *c, const struct vp_gpu *gpu,
    const struct vp_profile *prof, unsigned n, struct vp_card_point *pt,
    bool *found)
{
	struct vp_search s;
	struct vp_search_result r;
	struct vp_plan b = c->base;

	memset(&s, 0, sizeof s);
	s.model = c->model;
	s.gpu = gpu;
	s.profile = prof;
	s.world = n;
	s.gpus_per_node = n < VP_DEFAULT_GPUS_PER_NODE ? n :
	    VP_DEFAULT_GPUS_PER_NODE;
	s.capacity = gpu->usable_bytes;
	s.open = c->open;
	b.dp = 0;
	b.gpus_per_node = s.gpus_per_node;
	vp_search_run(&s, &b, &r);
	*found = r.nbest > 0;
	if (!*found)
		return;
	pt->gpus = n;
	pt->cand = r.best[0];
	pt->hours = isnan(pt->cand.tokens_per_second) ||
	    pt->cand.tokens_per_second <= 0 ? NAN :
	    c->tokens / pt->cand.tokens_per_second / 3600.0;
}

void
vp_compare_card(const struct vp_compare *c, const struct vp_gpu *gpu,
    const struct vp_profile *calibrated, struct vp_card_result *out)
{
	struct vp_compare job = *c;
	struct vp_profile prof;
	unsigned n, k;
	bool found = false;

	c = &job;
	memset(out, 0, sizeof *out);
	out->gpu = gpu;
	if (!c->precision_given)
		out->fp16_fallback = vp_plan_card_precision(&job.base, gpu);
	out->usd_per_hour = NAN;
	out->usd_per_billion_tokens = NAN;
	out->purchase_usd = NAN;
	if (calibrated != NULL)
		prof = *calibrated;
	else
		vp_profile_default(gpu, &prof);
	out->price = vp_gpu_cheapest_price(gpu);
	if (out->price != NULL)
		out->usd_per_hour = out->price->usd_per_gpu_hour;
	/* fp8 matmuls on a card without fp8 tensor cores. */
	if (vp_plan_card_check(&c->base, gpu, NULL) != 0) {
		snprintf(out->why, sizeof out->why, "no fp8 tensor cores for "
		    "--float8 or --precision fp8");
		return;
	}
	/* Fewest GPUs: one by one to a node, then whole nodes, then
	 * doubling; counts whose sharded floor cannot fit are skipped. */
	for (n = 1; n <= c->max_gpus; n = n < VP_DEFAULT_GPUS_PER_NODE ? n + 1 :
	    n < 8 * VP_DEFAULT_GPUS_PER_NODE ? n + VP_DEFAULT_GPUS_PER_NODE :
	    n * 2) {
		if (floor_bytes(c->model, &c->base, n) > gpu->usable_bytes)
			continue;
		point(c, gpu, &prof, n, &out->at[0], &found);
		if (found)
			break;
	}
	if (!found) {
		snprintf(out->why, sizeof out->why, "no plan fits up to "
		    "--max-gpus of this card");
		return;
	}
	out->fits = true;
	out->gpus_needed = out->at[0].gpus;
	out->nat = 1;
	/* A few larger counts: more GPUs finish sooner, at some cost. */
	for (k = 2; k <= 4 && out->nat < VP_COST_SCALES; k *= 2) {
		bool ok;

		if (out->gpus_needed * k > c->max_gpus)
			break;
		point(c, gpu, &prof, out->gpus_needed * k, &out->at[out->nat],
		    &ok);
		if (ok)
			out->nat++;
	}
	for (k = 0; k < out->nat; k++)
		out->at[k].cost_usd = isnan(out->usd_per_hour) ? NAN :
		    out->at[k].hours * out->at[k].gpus * out->usd_per_hour;
	if (isnan(out->at[0].hours)) {
		char w[sizeof out->why];
		const char *t = vp_plan_time_why(&out->at[0].cand.plan, gpu,
		    w, sizeof w);

		snprintf(out->why, sizeof out->why, "%s", t ? t :
		    "no time model for this plan");
	}
	out->usd_per_billion_tokens = out->at[0].cost_usd / (c->tokens / 1e9);
	if (!isnan(gpu->launch_price_usd))
		out->purchase_usd = gpu->launch_price_usd * out->gpus_needed;
	{
		struct vp_mem_opts o = { &prof, out->gpus_needed, 0,
		    gpu->usable_bytes };
		struct vp_plan p = out->at[0].cand.plan;

		p.stage = out->at[0].cand.worst_stage;
		vp_mem_estimate(c->model, &p, &o, &out->mem);
	}
}

/*
 * Order: fitting cards first; by cost, cards with a price before those
 * without, which follow by time; by time or GPUs directly.  Ties by id.
 */
static int
cmp_double(double x, double y)
{
	return x < y ? -1 : x > y ? 1 : 0;
}

static double
hours_of(const struct vp_card_result *c)
{
	return isnan(c->at[0].hours) ? INFINITY : c->at[0].hours;
}

static int
cmp_cards(const struct vp_card_result *x, const struct vp_card_result *y,
    enum vp_sort key)
{
	int c;

	if (x->fits != y->fits)
		return x->fits ? -1 : 1;
	if (!x->fits)
		return strcmp(x->gpu->id, y->gpu->id);
	switch (key) {
	case VP_SORT_TIME:
		c = cmp_double(hours_of(x), hours_of(y));
		break;
	case VP_SORT_GPUS:
		c = cmp_double(x->gpus_needed, y->gpus_needed);
		break;
	default:
		if (isnan(x->at[0].cost_usd) != isnan(y->at[0].cost_usd))
			return isnan(x->at[0].cost_usd) ? 1 : -1;
		c = isnan(x->at[0].cost_usd) ?
		    cmp_double(hours_of(x), hours_of(y)) :
		    cmp_double(x->at[0].cost_usd, y->at[0].cost_usd);
	}
	return c ? c : strcmp(x->gpu->id, y->gpu->id);
}

/* qsort has no context argument: one comparator per key. */
static int
by_cost(const void *a, const void *b)
{
	return cmp_cards(a, b, VP_SORT_COST);
}

static int
by_time(const void *a, const void *b)
{
	return cmp_cards(a, b, VP_SORT_TIME);
}

static int
by_gpus(const void *a, const void *b)
{
	return cmp_cards(a, b, VP_SORT_GPUS);
}

void
vp_compare_sort(struct vp_card_result *r, size_t n, enum vp_sort key)
{
	qsort(r, n, sizeof *r, key == VP_SORT_TIME ? by_time :
	    key == VP_SORT_GPUS ? by_gpus : by_cost);
}
