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
	s.gpus_per_node = n < vp_gpu_node(gpu) ? n : vp_gpu_node(gpu);
	s.capacity = gpu->usable_bytes;
	s.open = c->open;
	s.global_batch = c->global_batch;
	s.first_only = true;	/* only best[0] is used: fewer replays */
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
	pt->price = vp_gpu_job_price(gpu, n, vp_gpu_node(gpu),
	    c->undated_equal, &pt->usd_per_hour, &pt->gpus_paid);
	pt->cost_usd = pt->hours * pt->usd_per_hour;
}

/* The counts compare tries: one by one to a node, then whole nodes to
 * eight nodes, then doubling. */
static unsigned
next_count(unsigned n)
{
	return n < VP_DEFAULT_GPUS_PER_NODE ? n + 1 :
	    n < 8 * VP_DEFAULT_GPUS_PER_NODE ? n + VP_DEFAULT_GPUS_PER_NODE :
	    n * 2;
}


/*
 * --deadline and --budget: from the fewest GPUs that fit (out->at[0]),
 * the fewest GPUs that finish by the deadline, or the fastest count whose
 * cost is within the budget (more GPUs cost at least as much, as the
 * time model never scales better than linearly: the walk stops at the
 * first count over it), or, with both, the fewest in time if that is
 * within the budget.  A deadline jumps to the count the fewest GPUs'
 * time, scaled linearly, would need, less one step.  false, with the
 * reason in out->why, when no count answers.
 */
static bool
choose(const struct vp_compare *c, const struct vp_gpu *gpu,
    const struct vp_profile *prof, struct vp_card_result *out)
{
	bool dl = !isnan(c->deadline_hours), bud = !isnan(c->budget_usd);
	struct vp_card_point pt = out->at[0], best;
	bool have = false, found = true;
	unsigned n = pt.gpus, want;
	char b1[32], b2[32];

	if (isnan(pt.hours)) {
		snprintf(out->why, sizeof out->why, "%s", "no time for this "
		    "card, so no deadline or budget check");
		return false;
	}
	if (bud && gpu->nprices == 0) {
		snprintf(out->why, sizeof out->why, "no price for this card, "
		    "so no budget check (--price CARD=USD gives one)");
		return false;
	}
	if (dl && pt.hours > c->deadline_hours) {
		want = (unsigned)fmin(c->max_gpus, ceil((double)n * pt.hours /
		    c->deadline_hours));
		while (next_count(n) <= c->max_gpus &&
		    next_count(next_count(n)) <= want)
			n = next_count(n);
		if (n != pt.gpus)
			point(c, gpu, prof, n, &pt, &found);
	}
	for (;;) {
		if (found && !isnan(pt.hours)) {
			double cost = pt.cost_usd;
			bool in_time = !dl || pt.hours <= c->deadline_hours;
			bool in_budget = !bud || cost <= c->budget_usd;

			if (in_time && in_budget && (!have || pt.hours <
			    best.hours)) {
				best = pt;
				have = true;
			}
			if ((dl && in_time) || (bud && !in_budget))
				break;
		}
		if ((n = next_count(n)) > c->max_gpus)
			break;
		point(c, gpu, prof, n, &pt, &found);
	}
	if (have) {
		out->at[0] = best;
		return true;
	}
	if (dl && pt.hours <= c->deadline_hours)
		snprintf(out->why, sizeof out->why, "finishing in %s takes %u "
		    "GPUs at %s, over the budget", vp_fmt_hours(b1, sizeof b1,
		    pt.hours), pt.gpus, vp_fmt_usd(b2, sizeof b2,
		    pt.cost_usd));
	else if (dl)
		snprintf(out->why, sizeof out->why, "cannot finish in %s on up "
		    "to %u GPUs of this card%s", vp_fmt_hours(b1,
		    sizeof b1, c->deadline_hours), c->max_gpus,
		    gpu->scale_out ? " (--max-gpus)" : ", one node: the card "
		    "is sold for one");
	else
		snprintf(out->why, sizeof out->why, "the fewest GPUs that fit "
		    "(%u) cost %s, over the budget", out->at[0].gpus,
		    vp_fmt_usd(b2, sizeof b2, out->at[0].cost_usd));
	return false;
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
	out->undated_last = !c->undated_equal;
	out->usd_per_billion_tokens = NAN;
	out->purchase_usd = NAN;
	if (calibrated != NULL)
		prof = *calibrated;
	else
		vp_profile_default(gpu, &prof);
	/* fp8 matmuls on a card without fp8 tensor cores. */
	if (vp_plan_card_check(&c->base, gpu, NULL) != 0) {
		snprintf(out->why, sizeof out->why, "no fp8 tensor cores for "
		    "--float8 or --precision fp8");
		return;
	}
	/* A card sold for one node (consumer and workstation cards, unless
	 * the catalog says their nodes are networked: network.scale_out)
	 * plans no more GPUs than a node holds. */
	if (!gpu->scale_out && job.max_gpus > vp_gpu_node(gpu))
		job.max_gpus = vp_gpu_node(gpu);
	/* Fewest GPUs: one by one to a node, then whole nodes, then
	 * doubling; counts whose sharded floor cannot fit are skipped. */
	for (n = 1; n <= c->max_gpus; n = next_count(n)) {
		if (vp_plan_floor_bytes(c->model, &c->base, n) >
		    gpu->usable_bytes)
			continue;
		point(c, gpu, &prof, n, &out->at[0], &found);
		if (found)
			break;
	}
	if (!found) {
		if (gpu->scale_out)
			snprintf(out->why, sizeof out->why, "no plan fits up "
			    "to --max-gpus of this card");
		else
			snprintf(out->why, sizeof out->why, "no plan fits on "
			    "one node (%u GPUs): the card is sold for one node "
			    "(a user catalog's network.scale_out: true plans "
			    "across nodes)", vp_gpu_node(gpu));
		return;
	}
	out->fits = true;
	out->gpus_needed = out->at[0].gpus;
	out->meets = true;
	if ((!isnan(c->deadline_hours) || !isnan(c->budget_usd)) &&
	    !choose(c, gpu, &prof, out))
		out->meets = false;
	out->nat = 1;
	/* A few larger counts: more GPUs finish sooner, at some cost. */
	for (k = 2; out->meets && k <= 4 && out->nat < VP_COST_SCALES;
	    k *= 2) {
		bool ok;

		if (out->at[0].gpus * k > c->max_gpus)
			break;
		point(c, gpu, &prof, out->at[0].gpus * k, &out->at[out->nat],
		    &ok);
		if (ok)
			out->nat++;
	}
	out->price = out->at[0].price;
	if (out->price != NULL)
		out->usd_per_hour = out->price->usd_per_gpu_hour;
	if (out->meets && isnan(out->at[0].hours)) {
		char w[sizeof out->why];
		const char *t = vp_plan_time_why(&out->at[0].cand.plan, gpu,
		    w, sizeof w);

		snprintf(out->why, sizeof out->why, "%s", t ? t :
		    "no time model for this plan");
	}
	out->usd_per_billion_tokens = out->at[0].cost_usd / (c->tokens / 1e9);
	if (!isnan(gpu->launch_price_usd))
		out->purchase_usd = gpu->launch_price_usd * out->at[0].gpus;
	{
		struct vp_mem_opts o = { &prof, out->at[0].gpus, 0,
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
	if (x->meets != y->meets)
		return x->meets ? -1 : 1;
	if (!x->fits || !x->meets)
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
		/* Dated prices first, unless --undated-prices. */
		if (x->undated_last && x->price != NULL && y->price != NULL &&
		    x->price->dated != y->price->dated)
			return x->price->dated ? -1 : 1;
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
