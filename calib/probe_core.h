/*
 * probe_core.h — the calibration probe's record and the arithmetic around
 * it: the YAML writer, CUDA version decoding, allocation granularity
 * inferred from free-memory steps, medians, GB/s and TFLOP/s.
 *
 * Pure: no CUDA headers, no I/O except into a struct vp_buf, no clock.
 * calib/probe.c (the shell that talks to the driver) fills the record;
 * tests/test_probe.c checks every helper without a GPU.
 * Ownership: struct vp_probe holds only fixed arrays and borrowed pointers
 * to string constants; nothing in it needs freeing.
 */
#ifndef VP_PROBE_CORE_H
#define VP_PROBE_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Record format version, the value of the leading "vramplan-probe:" key. */
#define VP_PROBE_FORMAT 1

/* A byte count that was not measured: written as null. */
#define VP_PROBE_UNKNOWN UINT64_MAX

/* The GEMM kinds, in output order: enum and names from one list. */
#define VP_GEMM_LIST(X) \
	X(FP32, "fp32") \
	X(TF32, "tf32") \
	X(FP16, "fp16") \
	X(BF16, "bf16") \
	X(FP8, "fp8")

enum vp_gemm {
#define X(id, name) VP_GEMM_##id,
	VP_GEMM_LIST(X)
#undef X
	VP_GEMM_N
};
extern const char *const vp_gemm_names[VP_GEMM_N];

/* The probe allocations of step 4: how far free memory dropped. */
#define VP_PROBE_MAX_ALLOCS 8
struct vp_probe_alloc {
	uint64_t size_bytes;		/* what cuMemAlloc was asked for */
	int64_t free_drop_bytes;	/* free before - free after; other
					   processes can make it negative */
};

struct vp_probe {
	/* The device (cuDeviceGet*). */
	char name[256];
	int index;			/* CUDA ordinal as given to --device */
	char uuid[48];			/* "GPU-…"; "" when unknown */
	uint64_t memory_total_bytes;
	int cc_major, cc_minor;		/* compute capability */
	int multiprocessors;

	/* Software. */
	char driver[96];	/* NVML's driver version; "" without NVML */
	int cuda_driver_version; /* cuDriverGetVersion: 1000 major + 10 minor */
	char cublas_version[32]; /* "13.0.2"; "" without cuBLAS */

	/* NVML's view before this process had a context (all VP_PROBE_UNKNOWN
	 * without NVML). */
	uint64_t nvml_free_before_bytes;
	uint64_t nvml_used_before_bytes;
	uint64_t nvml_total_bytes;

	/* Context: free memory once the primary context exists. */
	uint64_t free_after_context_bytes;
	uint64_t context_bytes;
	const char *context_basis;	/* how context_bytes was derived */

	/* Allocation granularity: what the VMM API reports (UNKNOWN when the
	 * driver lacks cuMemGetAllocationGranularity) and what cuMemAlloc
	 * was seen to take. */
	uint64_t gran_min_bytes;
	uint64_t gran_recommended_bytes;
	struct vp_probe_alloc allocs[VP_PROBE_MAX_ALLOCS];
	size_t nallocs;

	/* cuBLAS (UNKNOWN when it could not be loaded). */
	uint64_t cublas_handle_bytes;
	uint64_t cublas_workspace_bytes;

	uint64_t usable_bytes;		/* the most cuMemAlloc still gave */

	/* Copy bandwidth, counted as bytes read plus bytes written; < 0 when
	 * not measured. */
	uint64_t d2d_copy_bytes;	/* one copy's size */
	double d2d_bandwidth_gbs;

	/* GEMM throughput at M = N = K = gemm_n; < 0 when not measured, and
	 * gemm_note then says why (a string constant, or NULL). */
	int gemm_n;
	double gemm_tflops[VP_GEMM_N];
	const char *gemm_note[VP_GEMM_N];
};

/* A record with every measurement unknown. */
void vp_probe_init(struct vp_probe *p);

/* Append the record as block-style YAML (one key per line). */
void vp_probe_yaml(const struct vp_probe *p, struct vp_buf *out);

/* Append s as a double-quoted YAML scalar. */
void vp_probe_yaml_str(struct vp_buf *out, const char *s);

/* "12.4" from cuDriverGetVersion's 12040 into buf; "" when v <= 0. */
const char *vp_probe_cuda_version(int v, char *buf, size_t n);

/* The smallest positive free-memory drop among the allocations: the
 * allocator's step.  0 when no allocation moved free memory. */
uint64_t vp_probe_granularity(const struct vp_probe_alloc *a, size_t n);

/* before - after, or 0 when free memory went up in between. */
uint64_t vp_probe_drop(uint64_t before, uint64_t after);

/* The median of v[0..n) (mean of the middle two when n is even); v is not
 * changed.  -1 when n is 0. */
double vp_probe_median(const double *v, size_t n);

/* bytes / seconds in GB/s (10^9); -1 unless seconds > 0. */
double vp_probe_gbs(uint64_t bytes, double seconds);

/* An M x N x K GEMM's 2 M N K floating-point operations per seconds in
 * TFLOP/s (10^12); -1 unless seconds > 0. */
double vp_probe_tflops(uint64_t m, uint64_t n, uint64_t k, double seconds);

#endif
