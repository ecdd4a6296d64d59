/*
 * bench_estimate.c — time of one whole estimate (read, validate, lower,
 * replay, and the largest-micro-batch search), per model.  Run on demand
 * (`make bench`), never from the test suite.  It prints medians of many
 * repetitions and ratios between models, since absolute times on a shared
 * machine are noise.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu.h"
#include "gpu_read.h"
#include "mem.h"
#include "model_read.h"
#include "plan_search.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define REPS 31

struct times {
	double read, estimate, search;
};

static int
bench_model(const char *dir, const char *name, uint64_t capacity,
    struct times *out)
{
	double t_read[REPS], t_est[REPS], t_search[REPS];
	char path[4096];
	int i;

	snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
	for (i = 0; i < REPS; i++) {
		struct vp_diags d = { 0 };
		struct vp_model m;
		struct vp_plan p;
		struct vp_profile prof;
		struct vp_mem_opts o = { 0 };
		struct vp_mem r;
		double t0, t1, t2, t3;

		t0 = now();
		if (vp_model_load(path, &m, &d) != 0) {
			fprintf(stderr, "bench: cannot load %s\n", path);
			vp_diags_clear(&d);
			return -1;
		}
		t1 = now();
		vp_plan_defaults(&p, &m);
		vp_profile_default(NULL, &prof);
		o.profile = &prof;
		o.world = 1;
		o.explain = 0;
		vp_mem_estimate(&m, &p, &o, &r);
		t2 = now();
		vp_max_micro_batch(&m, &p, &o, capacity, 1u << 16);
		t3 = now();
		t_read[i] = t1 - t0;
		t_est[i] = t2 - t1;
		t_search[i] = t3 - t2;
		vp_model_free(&m);
		vp_diags_clear(&d);
	}
	qsort(t_read, REPS, sizeof *t_read, cmpd);
	qsort(t_est, REPS, sizeof *t_est, cmpd);
	qsort(t_search, REPS, sizeof *t_search, cmpd);
	out->read = t_read[REPS / 2];
	out->estimate = t_est[REPS / 2];
	out->search = t_search[REPS / 2];
	return 0;
}

int
main(int argc, char **argv)
{
	static const char *const models[] = { "gpt2", "llama-3-8b",
	    "llama-3.1-70b", "llama-3.1-405b" };
	const char *dir = argc > 1 ? argv[1] : "models";
	struct times t[4];
	size_t i;

	printf("%-16s %12s %14s %16s %12s\n", "model", "read (us)",
	    "estimate (us)", "mb search (us)", "vs gpt2");
	for (i = 0; i < 4; i++) {
		/* Capacity of an 80 GiB card: the search walks ~20 estimates. */
		if (bench_model(dir, models[i], 80ULL << 30, &t[i]) != 0)
			return 1;
		printf("%-16s %12.1f %14.1f %16.1f %11.1fx\n", models[i],
		    t[i].read * 1e6, t[i].estimate * 1e6, t[i].search * 1e6,
		    t[i].estimate / t[0].estimate);
	}
	printf("one whole estimate of llama-3.1-405b (read + estimate): %.3f ms\n",
	    (t[3].read + t[3].estimate) * 1e3);
	return 0;
}
