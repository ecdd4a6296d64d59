/*
 * bench_search.c — the planner's speed: a complete search for
 * Llama-3.1-405B on 64 to 1024 H100s (TP x PP x CP x sharding x
 * recompute), reporting plans evaluated per second and the time of each
 * search.  Run on demand (`make bench`), never from the test suite.
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

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "models";
	static const unsigned worlds[] = { 64, 256, 1024 };
	struct vp_diags d = { 0 };
	struct vp_catalog cat;
	struct vp_model m;
	struct vp_plan base;
	struct vp_profile prof;
	char path[4096];
	size_t i;

	snprintf(path, sizeof path, "%s/llama-3.1-405b.yaml", dir);
	if (vp_model_load(path, &m, &d) != 0)
		return 1;
	snprintf(path, sizeof path, "%s/gpus.yaml", dir);
	if (vp_catalog_load(path, &cat, &d) != 0)
		return 1;
	vp_plan_defaults(&base, &m);
	vp_profile_default(vp_catalog_find(&cat, "H100"), &prof);
	printf("%-8s %10s %8s %12s %12s\n", "GPUs", "evaluated", "fit",
	    "seconds", "plans/s");
	for (i = 0; i < sizeof worlds / sizeof worlds[0]; i++) {
		struct vp_search s;
		struct vp_search_result r;
		double t0, t;

		memset(&s, 0, sizeof s);
		s.model = &m;
		s.gpu = vp_catalog_find(&cat, "H100");
		s.profile = &prof;
		s.world = worlds[i];
		s.gpus_per_node = 8;
		s.capacity = s.gpu->usable_bytes;
		s.open.tp = s.open.pp = s.open.cp = s.open.sp = true;
		s.open.shard = s.open.recompute = s.open.grad_accum = true;
		t0 = now();
		vp_search_run(&s, &base, &r);
		t = now() - t0;
		printf("%-8u %10llu %8llu %12.3f %12.0f\n", worlds[i],
		    (unsigned long long)r.evaluated,
		    (unsigned long long)r.fitting, t, (double)r.evaluated / t);
	}
	vp_catalog_free(&cat);
	vp_model_free(&m);
	return 0;
}
