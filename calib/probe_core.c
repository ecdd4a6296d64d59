/*
 * probe_core.c — the probe record, its YAML form and the arithmetic the
 * probe needs.  Pure; see probe_core.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_core.h"

const char *const vp_gemm_names[VP_GEMM_N] = {
#define X(id, name) name,
	VP_GEMM_LIST(X)
#undef X
};

void
vp_probe_init(struct vp_probe *p)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	p->nvml_free_before_bytes = VP_PROBE_UNKNOWN;
	p->nvml_used_before_bytes = VP_PROBE_UNKNOWN;
	p->nvml_total_bytes = VP_PROBE_UNKNOWN;
	p->free_after_context_bytes = VP_PROBE_UNKNOWN;
	p->context_bytes = VP_PROBE_UNKNOWN;
	p->gran_min_bytes = VP_PROBE_UNKNOWN;
	p->gran_recommended_bytes = VP_PROBE_UNKNOWN;
	p->cublas_handle_bytes = VP_PROBE_UNKNOWN;
	p->cublas_workspace_bytes = VP_PROBE_UNKNOWN;
	p->usable_bytes = VP_PROBE_UNKNOWN;
	p->d2d_copy_bytes = VP_PROBE_UNKNOWN;
	p->d2d_bandwidth_gbs = -1;
	for (i = 0; i < VP_GEMM_N; i++)
		p->gemm_tflops[i] = -1;
}

/*
 * Double-quoted, so that no name can turn into a number, a boolean or a
 * flow collection.  Control characters become \xNN.  Bytes above 0x7f
 * become '?': the driver's strings are ASCII, and libyaml rejects a file
 * with invalid UTF-8, so we do not pass through what we cannot check.
 */
void
vp_probe_yaml_str(struct vp_buf *out, const char *s)
{
	const unsigned char *c;

	vp_buf_add(out, "\"");
	for (c = (const unsigned char *)s; *c != '\0'; c++) {
		if (*c == '"' || *c == '\\')
			vp_buf_printf(out, "\\%c", *c);
		else if (*c == '\n')
			vp_buf_add(out, "\\n");
		else if (*c == '\t')
			vp_buf_add(out, "\\t");
		else if (*c < 0x20 || *c == 0x7f)
			vp_buf_printf(out, "\\x%02x", *c);
		else if (*c > 0x7f)
			vp_buf_add(out, "?");
		else
			vp_buf_addn(out, (const char *)c, 1);
	}
	vp_buf_add(out, "\"");
}

/* "key:" at an indent of two spaces per level; what follows starts with
 * a space, unless it is a nested block (a newline: no trailing blank). */
static void
key(struct vp_buf *out, int level, const char *k)
{
	vp_buf_printf(out, "%*s%s:", 2 * level, "", k);
}

/* A null with the reason as a comment, then the end of the line. */
static void
null_because(struct vp_buf *out, const char *why)
{
	if (why != NULL)
		vp_buf_printf(out, " null  # %s\n", why);
	else
		vp_buf_add(out, " null\n");
}

static void
put_u64(struct vp_buf *out, int level, const char *k, uint64_t v,
    const char *why)
{
	key(out, level, k);
	if (v == VP_PROBE_UNKNOWN)
		null_because(out, why);
	else
		vp_buf_printf(out, " %llu\n", (unsigned long long)v);
}

/* A string; "" is written as null. */
static void
put_str(struct vp_buf *out, int level, const char *k, const char *s,
    const char *why)
{
	key(out, level, k);
	if (s == NULL || *s == '\0') {
		null_because(out, why);
		return;
	}
	vp_buf_add(out, " ");
	vp_probe_yaml_str(out, s);
	vp_buf_add(out, "\n");
}

/* A rate; negative or not finite is "not measured". */
static void
put_rate(struct vp_buf *out, int level, const char *k, double v,
    const char *why)
{
	key(out, level, k);
	if (!(v >= 0) || isinf(v))
		null_because(out, why);
	else
		vp_buf_printf(out, " %.2f\n", v);
}

void
vp_probe_yaml(const struct vp_probe *p, struct vp_buf *out)
{
	char ver[32], cc[32];
	uint64_t g;
	size_t i;

	vp_buf_printf(out, "vramplan-probe: %d\n", VP_PROBE_FORMAT);
	vp_buf_add(out, "device: cuda\n");

	vp_buf_add(out, "gpu:\n");
	put_str(out, 1, "name", p->name, NULL);
	key(out, 1, "index");
	vp_buf_printf(out, " %d\n", p->index);
	put_str(out, 1, "uuid", p->uuid, NULL);
	put_u64(out, 1, "memory_total_bytes", p->memory_total_bytes, NULL);
	snprintf(cc, sizeof(cc), "%d.%d", p->cc_major, p->cc_minor);
	put_str(out, 1, "compute_capability", cc, NULL);
	key(out, 1, "multiprocessors");
	vp_buf_printf(out, " %d\n", p->multiprocessors);

	put_str(out, 0, "driver", p->driver, "NVML not available");
	put_str(out, 0, "cuda_driver_version",
	    vp_probe_cuda_version(p->cuda_driver_version, ver, sizeof(ver)),
	    NULL);
	put_str(out, 0, "cublas_version", p->cublas_version,
	    "cuBLAS not available");

	key(out, 0, "nvml_before");
	if (p->nvml_free_before_bytes == VP_PROBE_UNKNOWN) {
		null_because(out, "no NVML, or NVML does not know the UUID");
	} else {
		vp_buf_add(out, "\n");
		put_u64(out, 1, "free_bytes", p->nvml_free_before_bytes, NULL);
		put_u64(out, 1, "used_bytes", p->nvml_used_before_bytes, NULL);
		put_u64(out, 1, "total_bytes", p->nvml_total_bytes, NULL);
	}
	put_u64(out, 0, "free_after_context_bytes",
	    p->free_after_context_bytes, NULL);
	put_u64(out, 0, "context_bytes", p->context_bytes, NULL);
	put_str(out, 0, "context_basis", p->context_basis, NULL);

	put_u64(out, 0, "alloc_granularity_bytes", p->gran_min_bytes,
	    "no cuMemGetAllocationGranularity");
	put_u64(out, 0, "alloc_granularity_recommended_bytes",
	    p->gran_recommended_bytes, "no cuMemGetAllocationGranularity");
	g = vp_probe_granularity(p->allocs, p->nallocs);
	put_u64(out, 0, "alloc_observed_granularity_bytes",
	    g == 0 ? VP_PROBE_UNKNOWN : g, "free memory never moved");
	key(out, 0, "alloc_steps");
	vp_buf_add(out, p->nallocs == 0 ? " []\n" : "\n");
	for (i = 0; i < p->nallocs; i++) {
		vp_buf_printf(out, "  - size_bytes: %llu\n",
		    (unsigned long long)p->allocs[i].size_bytes);
		vp_buf_printf(out, "    free_drop_bytes: %lld\n",
		    (long long)p->allocs[i].free_drop_bytes);
	}

	put_u64(out, 0, "cublas_handle_bytes", p->cublas_handle_bytes,
	    "cuBLAS not available");
	put_u64(out, 0, "cublas_workspace_bytes", p->cublas_workspace_bytes,
	    "cuBLAS not available");
	put_u64(out, 0, "usable_bytes", p->usable_bytes, NULL);

	put_u64(out, 0, "d2d_copy_bytes", p->d2d_copy_bytes, NULL);
	key(out, 0, "d2d_bandwidth_gbs");
	if (!(p->d2d_bandwidth_gbs >= 0) || isinf(p->d2d_bandwidth_gbs))
		null_because(out, "not measured");
	else
		vp_buf_printf(out, " %.2f  # bytes read plus bytes written, "
		    "per second\n", p->d2d_bandwidth_gbs);

	key(out, 0, "gemm_n");
	if (p->gemm_n > 0)
		vp_buf_printf(out, " %d\n", p->gemm_n);
	else
		null_because(out, "no GEMM ran");
	vp_buf_add(out, "gemm_tflops:\n");
	for (i = 0; i < VP_GEMM_N; i++)
		put_rate(out, 1, vp_gemm_names[i], p->gemm_tflops[i],
		    p->gemm_note[i] != NULL ? p->gemm_note[i] : "not measured");
}

/* CUDA_VERSION and cuDriverGetVersion encode 1000 * major + 10 * minor. */
const char *
vp_probe_cuda_version(int v, char *buf, size_t n)
{
	if (v <= 0)
		snprintf(buf, n, "%s", "");
	else
		snprintf(buf, n, "%d.%d", v / 1000, v % 1000 / 10);
	return buf;
}

/*
 * The driver maps device memory in whole pages, so each allocation that
 * needs a fresh page lowers free memory by a multiple of the page; one
 * that fits in a page already mapped lowers it by nothing.  The smallest
 * positive drop is therefore the page, as long as at least one allocation
 * took exactly one.  A drop at or below zero is either such a fit or
 * another process freeing memory meanwhile, and says nothing.
 */
uint64_t
vp_probe_granularity(const struct vp_probe_alloc *a, size_t n)
{
	uint64_t best = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (a[i].free_drop_bytes <= 0)
			continue;
		if (best == 0 || (uint64_t)a[i].free_drop_bytes < best)
			best = (uint64_t)a[i].free_drop_bytes;
	}
	return best;
}

uint64_t
vp_probe_drop(uint64_t before, uint64_t after)
{
	return before > after ? before - after : 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median rather than the mean: one repetition slowed down by a clock
 * change or another process should not move the result. */
double
vp_probe_median(const double *v, size_t n)
{
	double *s, m;

	if (n == 0)
		return -1;
	s = xreallocarray(NULL, n, sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

double
vp_probe_gbs(uint64_t bytes, double seconds)
{
	if (!(seconds > 0))
		return -1;
	return (double)bytes / seconds / 1e9;
}

/* One multiply and one add per term of each of the M x N dot products of
 * length K: 2 M N K operations (the beta = 0 epilogue is not counted). */
double
vp_probe_tflops(uint64_t m, uint64_t n, uint64_t k, double seconds)
{
	if (!(seconds > 0))
		return -1;
	return 2.0 * (double)m * (double)n * (double)k / seconds / 1e12;
}
