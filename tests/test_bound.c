/*
 * test_bound.c — issue 17, findings 2 and 3: the fewest-GPU search
 * answers the same whatever count it starts from, in a bounded number of
 * planner passes (counted, not timed), its answer fits and the count
 * before it on the search's grid does not; the planner's pass on the
 * largest job the options allow stays small; the floor that skips counts
 * is below the replayed peak.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpu_read.h"
#include "model_read.h"
#include "plan_search.h"

static struct vp_catalog cat;

static void
load(const char *name, struct vp_model *m)
{
	const char *dir = getenv("VRAMPLAN_DATA");
	struct vp_diags d = { 0 };
	char path[4096];

	snprintf(path, sizeof path, "%s/%s.yaml", dir ? dir : "models", name);
	assert_int_equal(vp_model_load(path, m, &d), 0);
	vp_diags_clear(&d);
}

static int
setup(void **state)
{
	const char *dir = getenv("VRAMPLAN_DATA");
	struct vp_diags d = { 0 };
	char path[4096];

	(void)state;
	snprintf(path, sizeof path, "%s/gpus.yaml", dir ? dir : "models");
	if (vp_catalog_load(path, &cat, &d) != 0)
		return -1;
	vp_diags_clear(&d);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	vp_catalog_free(&cat);
	return 0;
}

/* The search as the estimate sets it up from --gpus NxCARD. */
static void
search_for(struct vp_search *s, const struct vp_model *m, const char *card,
    struct vp_profile *prof, unsigned world)
{
	memset(s, 0, sizeof *s);
	s->model = m;
	s->gpu = vp_catalog_find(&cat, card);
	assert_non_null(s->gpu);
	vp_profile_default(s->gpu, prof);
	s->profile = prof;
	s->world = world;
	s->gpus_per_node = world < 8 ? world : 8;
	s->capacity = s->gpu->usable_bytes;
	s->open.tp = s->open.pp = s->open.cp = s->open.sp = true;
	s->open.ep = m->has_moe;
	s->open.shard = s->open.recompute = s->open.grad_accum = true;
}

static bool
fits_at(const struct vp_search *s0, const struct vp_plan *base, unsigned n)
{
	struct vp_search s = *s0;
	struct vp_plan b = *base;
	struct vp_search_result r;

	s.world = n;
	s.gpus_per_node = n < 8 ? n : 8;
	b.dp = 0;
	b.gpus_per_node = s.gpus_per_node;
	vp_search_run(&s, &b, &r);
	return r.nbest > 0;
}

struct mcase {
	const char *model, *card;
	uint64_t seq;			/* 0: the model's default */
	enum vp_optimizer opt;		/* VP_OPT_COUNT: the default */
	unsigned want;			/* the answer; 0: none up to 4096 */
	unsigned max_passes;
};

/*
 * The cases of finding 2 and 3: 405B on H100 (the merge base's search:
 * 144 from 1x, 128 from 2x and 8x; the issue, on an older model, 96 and
 * 88) and on an RTX 3060 (none from 1x, 3200 from 8x; 407 passes),
 * Llama-3-8B at a 128M-token sequence (none, 519 passes).
 * want is the answer this search gives (checked to fit below, and the
 * count before it not to), max_passes its bound: the floor, then at most
 * log2(4096) doublings and as many bisection steps.
 */
static const struct mcase mcases[] = {
	{ "llama-3.1-405b", "H100", 0, VP_OPT_COUNT, 128, 24 },
	{ "llama-3.1-405b", "RTX3060", 0, VP_OPT_COUNT, 3200, 24 },
	{ "llama-3-8b", "H100", 134217728, VP_OPT_COUNT, 0, 24 },
	/* Paged states in 64 GiB of host RAM per node: the host check of
	 * every count is the estimate's, in nodes of 8. */
	{ "llama-2-7b", "RTX4090", 0, VP_OPT_PAGED_ADAMW, 4, 24 },
};

static void
test_min_gpus_start_independent(void **state)
{
	static const unsigned starts[] = { 1, 3, 8, 64 };
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof mcases / sizeof mcases[0]; i++) {
		const struct mcase *c = &mcases[i];
		struct vp_model m;
		struct vp_plan base;
		struct vp_profile prof;
		unsigned first = 0, passes;

		load(c->model, &m);
		vp_plan_defaults(&base, &m);
		if (c->seq)
			base.seq = c->seq;
		if (c->opt != VP_OPT_COUNT) {
			base.optimizer = c->opt;
			base.host_mem_bytes = 64ULL << 30;
		}
		for (k = 0; k < sizeof starts / sizeof starts[0]; k++) {
			struct vp_search s;
			struct vp_search_result r;
			struct vp_plan b = base;
			unsigned n;

			search_for(&s, &m, c->card, &prof, starts[k]);
			b.gpus_per_node = s.gpus_per_node;
			n = vp_min_gpus_in(&s, &b, 0, 4096, &r, &passes);
			if (k == 0)
				first = n;
			/* The same answer from every start. */
			assert_int_equal(n, first);
			assert_true(passes <= c->max_passes);
			assert_true(n == 0 || r.nbest > 0);
			if (n)
				assert_int_equal(vp_plan_world(&r.best[0].plan),
				    n);
		}
		printf("%s on %s: %u GPUs in %u passes\n", c->model, c->card,
		    first, passes);
		assert_int_equal(first, c->want);
		if (first) {
			struct vp_search s;
			unsigned before = first <= 8 ? first - 1 : first - 8;

			search_for(&s, &m, c->card, &prof, 1);
			assert_true(fits_at(&s, &base, first));
			assert_true(before == 0 || !fits_at(&s, &base, before));
		}
		vp_model_free(&m);
	}
}

/* A pass over 65536 GPUs (2^16: 17 divisors) stays small. */
static void
test_largest_world_pass(void **state)
{
	struct vp_model m;
	struct vp_plan base;
	struct vp_profile prof;
	struct vp_search s;
	struct vp_search_result r;

	(void)state;
	load("llama-3.1-405b", &m);
	vp_plan_defaults(&base, &m);
	search_for(&s, &m, "H100", &prof, 65536);
	base.dp = 0;
	base.gpus_per_node = 8;
	vp_search_run(&s, &base, &r);
	assert_true(r.candidates > 0);
	assert_true(r.candidates <= 2000);
	vp_model_free(&m);
}

/* The floor is below the replay's peak of every plan the planner tries,
 * so no count that fits is skipped. */
static void
test_floor_below_peak(void **state)
{
	static const char *const models[] = { "llama-3-8b", "mixtral-8x7b",
	    "deepseek-v2-lite", "gpt2-xl" };
	static const enum vp_offload offs[] = { VP_OFFLOAD_NONE,
	    VP_OFFLOAD_OPTIMIZER };
	size_t i, k, j;

	(void)state;
	for (i = 0; i < sizeof models / sizeof models[0]; i++)
		for (k = 0; k < sizeof offs / sizeof offs[0]; k++) {
			struct vp_model m;
			struct vp_plan base;
			struct vp_profile prof;
			struct vp_search s;
			struct vp_search_result r;

			load(models[i], &m);
			vp_plan_defaults(&base, &m);
			base.offload = offs[k];
			if (offs[k] != VP_OFFLOAD_NONE)
				base.framework = VP_FW_DEEPSPEED;
			search_for(&s, &m, "H100", &prof, 16);
			s.capacity = UINT64_MAX;	/* keep every plan */
			base.dp = 0;
			base.gpus_per_node = 8;
			vp_search_run(&s, &base, &r);
			assert_true(r.nbest > 0);
			for (j = 0; j < r.nbest; j++)
				assert_true(vp_plan_floor_bytes(&m, &base,
				    16) <= r.best[j].device_peak);
			vp_model_free(&m);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_min_gpus_start_independent),
		cmocka_unit_test(test_largest_world_pass),
		cmocka_unit_test(test_floor_below_peak),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
