/*
 * bench_bound.c — issue 17, finding 3: the answers that used to take
 * seconds to minutes.  For each worst case it times the fewest-GPU
 * search (vp_min_gpus_in: the floor, doubling, bisection) against the
 * walk it replaced (one planner pass per count: 1 to 8, then every
 * whole node to 4096, the same planner), and one planner pass on the
 * largest job the options allow (65,536 GPUs), whose loops now run over
 * divisors.  Prints planner passes, seconds and the ratio.  Run on
 * demand (`make bench`), never from the test suite.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gpu.h"
#include "gpu_read.h"
#include "model_read.h"
#include "plan_search.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The walk vp_min_gpus made before: every count to the limit. */
static unsigned
linear_walk(const struct vp_search *s, const struct vp_plan *base,
    unsigned limit, unsigned *passes)
{
	struct vp_search t = *s;
	struct vp_search_result r;
	unsigned n;

	*passes = 0;
	for (n = 1; n <= limit; n = n < 8 ? n + 1 : n + 8) {
		struct vp_plan b = *base;

		t.world = n;
		t.gpus_per_node = n < 8 ? n : 8;
		b.dp = 0;
		b.gpus_per_node = t.gpus_per_node;
		(*passes)++;
		vp_search_run(&t, &b, &r);
		if (r.nbest > 0)
			return n;
	}
	return 0;
}

struct bcase {
	const char *model, *card;
	unsigned long long seq;		/* 0: the model's default */
};

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "models";
	static const struct bcase cases[] = {
		{ "llama-3.1-405b", "RTX3060", 0 },
		{ "llama-3-8b", "H100", 134217728ULL },
		{ "llama-3.1-405b", "H100", 0 },
	};
	struct vp_diags d = { 0 };
	struct vp_catalog cat;
	char path[4096];
	size_t i;

	snprintf(path, sizeof path, "%s/gpus.yaml", dir);
	if (vp_catalog_load(path, &cat, &d) != 0)
		return 1;
	printf("fewest GPUs (limit 4096)        %9s %7s %9s | %9s %7s %9s %7s\n",
	    "walk GPUs", "passes", "seconds", "new GPUs", "passes", "seconds",
	    "ratio");
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct vp_model m;
		struct vp_plan base;
		struct vp_profile prof;
		struct vp_search s;
		struct vp_search_result r;
		unsigned n0, n1, p0, p1;
		double t0, t1;

		snprintf(path, sizeof path, "%s/%s.yaml", dir, cases[i].model);
		if (vp_model_load(path, &m, &d) != 0)
			return 1;
		vp_plan_defaults(&base, &m);
		if (cases[i].seq)
			base.seq = cases[i].seq;
		memset(&s, 0, sizeof s);
		s.model = &m;
		s.gpu = vp_catalog_find(&cat, cases[i].card);
		vp_profile_default(s.gpu, &prof);
		s.profile = &prof;
		s.world = 1;
		s.gpus_per_node = 1;
		s.capacity = s.gpu->usable_bytes;
		s.open.tp = s.open.pp = s.open.cp = s.open.sp = true;
		s.open.ep = m.has_moe;
		s.open.shard = s.open.recompute = s.open.grad_accum = true;
		t0 = now();
		n0 = linear_walk(&s, &base, 4096, &p0);
		t0 = now() - t0;
		t1 = now();
		n1 = vp_min_gpus_in(&s, &base, 8, 4096, &r, &p1);
		t1 = now() - t1;
		printf("%-14s %-8s seq %-6s %9u %7u %9.3f | %9u %7u %9.3f %6.0fx\n",
		    cases[i].model, cases[i].card, cases[i].seq ? "128M" : "dflt",
		    n0, p0, t0, n1, p1, t1, t0 / t1);
		if (i == 0 || i == 2) {
			/* One pass on the largest job. */
			s.world = 65536;
			s.gpus_per_node = 8;
			base.dp = 0;
			base.gpus_per_node = 8;
			t0 = now();
			vp_search_run(&s, &base, &r);
			t0 = now() - t0;
			printf("  one planner pass, 65536 x %s: %llu candidates, "
			    "%.3f s\n", cases[i].card,
			    (unsigned long long)r.candidates, t0);
		}
		vp_model_free(&m);
	}
	vp_catalog_free(&cat);
	return 0;
}
