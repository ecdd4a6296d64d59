/*
 * bench_alloc.c — events per second of the caching allocator simulation
 * (src/alloc.c) on a synthetic training trace: weights and gradients that
 * live for the whole run, then per step a forward pass that keeps
 * activations of several sizes per layer and frees temporaries at once,
 * a backward pass that frees them in reverse while allocating gradients,
 * gradient buckets handed to a communication stream (record_stream, then
 * that stream synchronises), and an optimizer step.  Sizes vary a little
 * from step to step, as with variable sequence lengths.  Run for the
 * default options, max_split_size_mb and expandable segments; prints the
 * rate and the peaks.  Run on demand, never by make check.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "alloc.h"

#define MiB (1ULL << 20)
#define LAYERS 48
#define PER_LAYER 10

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint32_t rng = 1;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static unsigned long long events;

static vp_alloc_handle
al(struct vp_alloc *a, uint64_t bytes, uint32_t stream)
{
	vp_alloc_handle h = 0;

	events++;
	if (vp_alloc_allocate(a, bytes, stream, &h) != VP_ALLOC_OK) {
		fprintf(stderr, "bench_alloc: unexpected OOM\n");
		exit(1);
	}
	return h;
}

static void
fr(struct vp_alloc *a, vp_alloc_handle h)
{
	events++;
	vp_alloc_deallocate(a, h);
}

static void
run(const char *conf_s, int steps)
{
	static vp_alloc_handle weights[LAYERS], grads[LAYERS];
	static vp_alloc_handle act[LAYERS][PER_LAYER];
	static const uint64_t act_bytes[PER_LAYER] = { 4096, 64 * 1024,
	    MiB / 2, 3 * MiB, 8 * MiB, 12 * MiB, 16 * MiB, 24 * MiB,
	    48 * MiB, 96 * MiB };
	struct vp_alloc_conf c;
	struct vp_buf err, fmt;
	struct vp_alloc *a;
	const struct vp_alloc_stats *st;
	double t0, t;
	int s, l, k;

	vp_buf_init(&err);
	vp_buf_init(&fmt);
	if (vp_alloc_conf_parse(&c, conf_s, &err) != 0) {
		fprintf(stderr, "bench_alloc: %s\n", err.s);
		exit(2);
	}
	vp_alloc_conf_format(&c, &fmt);
	a = vp_alloc_new(&c, 140ULL << 30);
	st = vp_alloc_stats(a);
	events = 0;
	rng = 1;
	t0 = now_s();
	for (l = 0; l < LAYERS; l++)
		weights[l] = al(a, 200 * MiB + 4096 * (uint64_t)l, 0);
	for (s = 0; s < steps; s++) {
		uint64_t scale = 90 + rnd() % 21;	/* 90 .. 110 % */

		for (l = 0; l < LAYERS; l++) {
			for (k = 0; k < PER_LAYER; k++) {
				vp_alloc_handle tmp = al(a,
				    act_bytes[k] * scale / 100 + 256, 0);

				act[l][k] = al(a, act_bytes[k] * scale / 100,
				    0);
				fr(a, tmp);
			}
		}
		for (l = LAYERS - 1; l >= 0; l--) {
			vp_alloc_handle g = al(a, 200 * MiB, 0);

			for (k = PER_LAYER - 1; k >= 0; k--)
				fr(a, act[l][k]);
			if (s == 0) {
				grads[l] = g;
			} else {
				/* accumulate, then send a bucket over the
				 * communication stream */
				vp_alloc_handle b = al(a, 25 * MiB, 0);

				vp_alloc_record_stream(a, b, 1);
				fr(a, b);
				fr(a, g);
				if (l % 4 == 0)
					vp_alloc_sync_stream(a, 1);
			}
		}
		/* optimizer: a temporary per layer (foreach-like) */
		for (l = 0; l < LAYERS; l++)
			fr(a, al(a, 200 * MiB, 0));
		vp_alloc_sync_stream(a, 1);
	}
	for (l = 0; l < LAYERS; l++) {
		fr(a, weights[l]);
		fr(a, grads[l]);
	}
	t = now_s() - t0;
	printf("%-48s %9llu events %7.3f s %6.2f M events/s  "
	    "peak allocated %6.2f GiB reserved %6.2f GiB  cudaMalloc %llu\n",
	    fmt.s, events, t, (double)events / t / 1e6,
	    (double)st->allocated_bytes.peak / VP_GIB,
	    (double)st->reserved_bytes.peak / VP_GIB,
	    (unsigned long long)st->device_allocs);
	vp_alloc_free(a);
	vp_buf_free(&err);
	vp_buf_free(&fmt);
}

int
main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 60;

	run("", steps);
	run("max_split_size_mb:128", steps);
	run("roundup_power2_divisions:4", steps);
	run("expandable_segments:True", steps);
	return 0;
}
