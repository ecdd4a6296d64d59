/*
 * cost.h — which card to rent or buy: for one training job, the fewest
 * GPUs of each card that fit (through the planner), the best plan there
 * and at larger counts, tokens per second from the time model, the time
 * to train N tokens, its cloud cost at each dated price, dollars per
 * billion tokens and the purchase price of the cards.
 *
 * Pure.  Results borrow the catalog's cards and prices.
 */
#ifndef VP_COST_H
#define VP_COST_H

#include <stdbool.h>

#include "gpu.h"
#include "plan_search.h"

#define VP_COST_SCALES 3	/* needed, 2x, 4x */

struct vp_card_point {
	unsigned gpus;
	struct vp_cand cand;
	double hours;
	const struct vp_price *price;	/* the one charged (vp_gpu_job_price);
					 * NULL: none rents this count */
	unsigned gpus_paid;	/* whole units of sale */
	double usd_per_hour;	/* the job's, all GPUs paid for */
	double cost_usd;	/* hours x usd_per_hour; NAN without a price */
};

struct vp_card_result {
	const struct vp_gpu *gpu;
	bool fits;			/* some count up to max_gpus fits */
	char why[192];			/* when it does not, or has no time
					 * ("": nothing to say); an array, so
					 * that sorting the results moves it */
	unsigned gpus_needed;
	struct vp_card_point at[VP_COST_SCALES];
	unsigned nat;
	const struct vp_price *price;	/* at[0]'s price, or NULL */
	double usd_per_hour;		/* per GPU of that price (NAN: none) */
	double usd_per_billion_tokens;	/* at the needed count */
	double purchase_usd;		/* launch price x GPUs; NAN: unknown */
	struct vp_mem mem;		/* exact replay of the needed plan */
	bool calibrated;		/* under a calibrated profile */
	bool fp16_fallback;		/* no bf16 on the card: planned in
					 * the plan's fp16 twin */
	bool undated_last;		/* rank an undated price after dated
					 * ones (no --undated-prices) */
	bool meets;			/* fits, and answers --deadline and
					 * --budget (at[0] is the count that
					 * does); else why says why not */
};

struct vp_compare {
	const struct vp_model *model;
	struct vp_plan base;		/* the fixed knobs */
	struct vp_open open;
	double tokens;			/* to train */
	unsigned max_gpus;
	bool precision_given;		/* --precision: no fp16 fallback */
	double deadline_hours;		/* --deadline; NAN: none */
	double budget_usd;		/* --budget; NAN: none */
	bool undated_equal;		/* --undated-prices: no ranking of
					 * undated prices after dated ones */
	uint64_t global_batch;		/* --global-batch; 0: none */
};

/* One card: prof is its calibrated profile, NULL for the built-in one. */
void vp_compare_card(const struct vp_compare *c, const struct vp_gpu *gpu,
    const struct vp_profile *prof, struct vp_card_result *out);

/* compare's orders (--sort): cheapest, fastest, fewest GPUs first. */
#define VP_SORT_LIST(X) X(COST, "cost") X(TIME, "time") X(GPUS, "gpus")
#define X(e, s) VP_SORT_##e,
enum vp_sort { VP_SORT_LIST(X) VP_SORT_COUNT };
#undef X
extern const char *const vp_sort_names[VP_SORT_COUNT];
void vp_compare_sort(struct vp_card_result *r, size_t n, enum vp_sort key);

#endif
