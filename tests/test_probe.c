/*
 * test_probe.c — unit tests of calib/probe_core.c, the pure half of
 * vramplan-probe: CUDA version decoding, granularity inference, medians,
 * GB/s and TFLOP/s, YAML quoting and the whole record, which must read
 * back through libyaml (ydoc_parse) with the values it was written from.
 *
 * Every expected value is worked out in the comment next to it.  No GPU
 * is needed; tests/probe_nogpu.sh runs the program itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe_core.h"
#include "ydoc.h"

#define MIB (1024ull * 1024)

static void
cuda_version(void **state)
{
	char b[16];

	(void)state;
	/* 1000 major + 10 minor: 12040 = 12.4, 13000 = 13.0, 11080 = 11.8. */
	assert_string_equal(vp_probe_cuda_version(12040, b, sizeof(b)), "12.4");
	assert_string_equal(vp_probe_cuda_version(13000, b, sizeof(b)), "13.0");
	assert_string_equal(vp_probe_cuda_version(11080, b, sizeof(b)), "11.8");
	assert_string_equal(vp_probe_cuda_version(12090, b, sizeof(b)), "12.9");
	/* The units digit is not part of the version: 12045 is still 12.4. */
	assert_string_equal(vp_probe_cuda_version(12045, b, sizeof(b)), "12.4");
	/* Nothing known: the empty string, written as null. */
	assert_string_equal(vp_probe_cuda_version(0, b, sizeof(b)), "");
	assert_string_equal(vp_probe_cuda_version(-1, b, sizeof(b)), "");
}

static void
granularity(void **state)
{
	/* A typical driver: 1 byte maps a fresh 2 MiB page, 1 MiB + 1 fits
	 * in what is left of it, 2 MiB + 1 needs two pages: step 2 MiB. */
	const struct vp_probe_alloc typical[] = {
		{ 1, 2 * MIB }, { MIB + 1, 0 }, { 2 * MIB + 1, 4 * MIB },
	};
	/* The smallest step may come last. */
	const struct vp_probe_alloc late[] = {
		{ 1, 4 * MIB }, { MIB + 1, 2 * MIB },
	};
	/* Free memory rose (another process freed some): ignored. */
	const struct vp_probe_alloc noisy[] = {
		{ 1, -64 * (int64_t)MIB }, { MIB + 1, 2 * MIB },
	};
	const struct vp_probe_alloc still[] = { { 1, 0 }, { MIB + 1, 0 } };

	(void)state;
	assert_true(vp_probe_granularity(typical, 3) == 2 * MIB);
	assert_true(vp_probe_granularity(late, 2) == 2 * MIB);
	assert_true(vp_probe_granularity(noisy, 2) == 2 * MIB);
	/* No drop at all, or no allocations: unknown (0). */
	assert_true(vp_probe_granularity(still, 2) == 0);
	assert_true(vp_probe_granularity(typical, 0) == 0);
}

static void
drop(void **state)
{
	(void)state;
	/* 10 - 3 = 7; free memory that went up gives 0, never a wrap. */
	assert_true(vp_probe_drop(10, 3) == 7);
	assert_true(vp_probe_drop(3, 10) == 0);
	assert_true(vp_probe_drop(UINT64_MAX, 0) == UINT64_MAX);
}

static void
median(void **state)
{
	double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };
	double slow[] = { 1.0, 1.1, 0.9, 9.0, 1.0 };

	(void)state;
	/* Sorted 1 2 3: 2.  Sorted 1 2 3 4: (2 + 3) / 2 = 2.5. */
	assert_true(vp_probe_median(odd, 3) == 2);
	assert_true(vp_probe_median(even, 4) == 2.5);
	/* One slow repetition does not move it: sorted 0.9 1 1 1.1 9 -> 1. */
	assert_true(vp_probe_median(slow, 5) == 1.0);
	assert_true(vp_probe_median(odd, 1) == 3);
	assert_true(vp_probe_median(odd, 0) == -1);
	/* The input is left as it was. */
	assert_true(odd[0] == 3 && odd[1] == 1 && odd[2] == 2);
}

static void
rates(void **state)
{
	(void)state;
	/* A 1 GiB copy reads and writes 2^31 bytes; in 1 ms that is
	 * 2147483648 / 0.001 / 1e9 = 2147.483648 GB/s. */
	assert_true(fabs(vp_probe_gbs(2ull << 30, 0.001) - 2147.483648) < 1e-9);
	/* 8192^3 GEMM: 2 * 8192^3 = 1099511627776 flops; in 20 ms that is
	 * 1099511627776 / 0.02 / 1e12 = 54.9755813888 TFLOP/s. */
	assert_true(fabs(vp_probe_tflops(8192, 8192, 8192, 0.02) -
	    54.9755813888) < 1e-9);
	/* Non-square: 2 * 2 * 3 * 4 = 48 flops in 1 s = 4.8e-11 TFLOP/s. */
	assert_true(fabs(vp_probe_tflops(2, 3, 4, 1) - 4.8e-11) < 1e-20);
	/* No time, negative time or NaN: not a rate. */
	assert_true(vp_probe_gbs(1, 0) == -1);
	assert_true(vp_probe_tflops(1, 1, 1, -1) == -1);
	assert_true(vp_probe_gbs(1, NAN) == -1);
}

static void
yaml_str(void **state)
{
	struct vp_buf b;

	(void)state;
	vp_buf_init(&b);
	vp_probe_yaml_str(&b, "NVIDIA H200");
	assert_string_equal(b.s, "\"NVIDIA H200\"");
	b.len = 0;
	/* Quote and backslash escaped; newline and tab by name; other
	 * control characters as \xNN; bytes above 0x7f as '?'. */
	vp_probe_yaml_str(&b, "a\"b\\c\nd\te\001f\xc3\xa9");
	assert_string_equal(b.s, "\"a\\\"b\\\\c\\nd\\te\\x01f??\"");
	b.len = 0;
	/* Strings that would read as other types stay strings. */
	vp_probe_yaml_str(&b, "null");
	assert_string_equal(b.s, "\"null\"");
	b.len = 0;
	vp_probe_yaml_str(&b, "");
	assert_string_equal(b.s, "\"\"");
	vp_buf_free(&b);
}

/* A record as an H200 run might fill it. */
static void
sample(struct vp_probe *p)
{
	vp_probe_init(p);
	strcpy(p->name, "NVIDIA H200");
	p->index = 0;
	strcpy(p->uuid, "GPU-01234567-89ab-cdef-0123-456789abcdef");
	p->memory_total_bytes = 150754820096ull;
	p->cc_major = 9;
	p->cc_minor = 0;
	p->multiprocessors = 132;
	strcpy(p->driver, "580.65.06");
	p->cuda_driver_version = 13000;
	strcpy(p->cublas_version, "13.0.2");
	p->nvml_free_before_bytes = 150129868800ull;
	p->nvml_used_before_bytes = 624951296ull;
	p->nvml_total_bytes = 150754820096ull;
	p->free_after_context_bytes = 149592997888ull;
	p->context_bytes = 536870912;
	p->context_basis = "nvml free before - cuMemGetInfo free after";
	p->gran_min_bytes = 2 * MIB;
	p->gran_recommended_bytes = 2 * MIB;
	p->allocs[0] = (struct vp_probe_alloc){ 1, 2 * MIB };
	p->allocs[1] = (struct vp_probe_alloc){ MIB + 1, 0 };
	p->allocs[2] = (struct vp_probe_alloc){ 2 * MIB + 1, 4 * MIB };
	p->nallocs = 3;
	p->cublas_handle_bytes = 0;
	p->cublas_workspace_bytes = 35651584;
	p->usable_bytes = 149457862656ull;
	p->d2d_copy_bytes = 1024 * MIB;
	p->d2d_bandwidth_gbs = 3912.456;
	p->gemm_n = 8192;
	p->gemm_tflops[VP_GEMM_FP32] = 51.234;
	p->gemm_tflops[VP_GEMM_TF32] = 378.5;
	p->gemm_tflops[VP_GEMM_FP16] = 702.125;
	p->gemm_tflops[VP_GEMM_BF16] = 689.0;
	p->gemm_note[VP_GEMM_FP8] = "not measured: FP8 needs cublasLt";
}

static const char sample_yaml[] =
"vramplan-probe: 1\n"
"device: cuda\n"
"gpu:\n"
"  name: \"NVIDIA H200\"\n"
"  index: 0\n"
"  uuid: \"GPU-01234567-89ab-cdef-0123-456789abcdef\"\n"
"  memory_total_bytes: 150754820096\n"
"  compute_capability: \"9.0\"\n"
"  multiprocessors: 132\n"
"driver: \"580.65.06\"\n"
"cuda_driver_version: \"13.0\"\n"
"cublas_version: \"13.0.2\"\n"
"nvml_before:\n"
"  free_bytes: 150129868800\n"
"  used_bytes: 624951296\n"
"  total_bytes: 150754820096\n"
"free_after_context_bytes: 149592997888\n"
"context_bytes: 536870912\n"
"context_basis: \"nvml free before - cuMemGetInfo free after\"\n"
"alloc_granularity_bytes: 2097152\n"
"alloc_granularity_recommended_bytes: 2097152\n"
"alloc_observed_granularity_bytes: 2097152\n"
"alloc_steps:\n"
"  - size_bytes: 1\n"
"    free_drop_bytes: 2097152\n"
"  - size_bytes: 1048577\n"
"    free_drop_bytes: 0\n"
"  - size_bytes: 2097153\n"
"    free_drop_bytes: 4194304\n"
"cublas_handle_bytes: 0\n"
"cublas_workspace_bytes: 35651584\n"
"usable_bytes: 149457862656\n"
"d2d_copy_bytes: 1073741824\n"
"d2d_bandwidth_gbs: 3912.46  # bytes read plus bytes written, per second\n"
"gemm_n: 8192\n"
"gemm_tflops:\n"
"  fp32: 51.23\n"
"  tf32: 378.50\n"
"  fp16: 702.12\n"
"  bf16: 689.00\n"
"  fp8: null  # not measured: FP8 needs cublasLt\n";

static struct ydoc *
parse(const char *text)
{
	struct vp_diags d;
	struct ydoc *doc;

	memset(&d, 0, sizeof(d));
	doc = ydoc_parse("probe.yaml", text, strlen(text), &d);
	assert_non_null(doc);
	assert_true(vp_diags_count(&d, VP_ERROR) == 0);
	vp_diags_clear(&d);
	return doc;
}

static const char *
scalar(const struct ynode *map, const char *k)
{
	const struct ynode *n = ynode_get(map, k);

	assert_non_null(n);
	assert_int_equal(n->kind, YN_SCALAR);
	return n->str;
}

static void
yaml_record(void **state)
{
	const struct ynode *root, *gpu, *steps, *gemm;
	struct vp_probe p;
	struct vp_buf b;
	struct ydoc *doc;

	(void)state;
	sample(&p);
	vp_buf_init(&b);
	vp_probe_yaml(&p, &b);
	/* 702.125 prints as 702.12: printf rounds the binary value, which is
	 * exactly 702.125, to even. */
	assert_string_equal(b.s, sample_yaml);

	/* libyaml reads it back with the same values and types. */
	doc = parse(b.s);
	root = ydoc_root(doc);
	assert_int_equal(root->kind, YN_MAP);
	assert_string_equal(scalar(root, "vramplan-probe"), "1");
	gpu = ynode_get(root, "gpu");
	assert_non_null(gpu);
	assert_string_equal(scalar(gpu, "name"), "NVIDIA H200");
	assert_false(ynode_get(gpu, "compute_capability")->plain);
	assert_string_equal(scalar(gpu, "compute_capability"), "9.0");
	assert_string_equal(scalar(root, "usable_bytes"), "149457862656");
	steps = ynode_get(root, "alloc_steps");
	assert_non_null(steps);
	assert_int_equal(steps->kind, YN_SEQ);
	assert_int_equal(steps->nkids, 3);
	assert_string_equal(scalar(steps->kids[2], "free_drop_bytes"),
	    "4194304");
	gemm = ynode_get(root, "gemm_tflops");
	assert_non_null(gemm);
	assert_string_equal(scalar(gemm, "bf16"), "689.00");
	assert_true(ynode_is_null(ynode_get(gemm, "fp8")));
	ydoc_free(doc);
	vp_buf_free(&b);
}

/* A record with nothing measured (what vp_probe_init gives) is still
 * valid YAML, every unknown a null with its reason. */
static void
yaml_unknowns(void **state)
{
	const struct ynode *root, *gemm;
	struct vp_probe p;
	struct vp_buf b;
	struct ydoc *doc;
	size_t i;

	(void)state;
	vp_probe_init(&p);
	vp_buf_init(&b);
	vp_probe_yaml(&p, &b);
	assert_non_null(strstr(b.s, "\ndriver: null  # NVML not available\n"));
	assert_non_null(strstr(b.s, "\nalloc_steps: []\n"));
	assert_non_null(strstr(b.s, "\ngemm_n: null  # no GEMM ran\n"));
	assert_non_null(strstr(b.s, "\n  fp32: null  # not measured\n"));
	doc = parse(b.s);
	root = ydoc_root(doc);
	assert_true(ynode_is_null(ynode_get(root, "nvml_before")));
	assert_true(ynode_is_null(ynode_get(root, "cublas_handle_bytes")));
	assert_true(ynode_is_null(ynode_get(root, "d2d_bandwidth_gbs")));
	assert_int_equal(ynode_get(root, "alloc_steps")->kind, YN_SEQ);
	gemm = ynode_get(root, "gemm_tflops");
	for (i = 0; i < VP_GEMM_N; i++)
		assert_true(ynode_is_null(ynode_get(gemm, vp_gemm_names[i])));
	ydoc_free(doc);
	vp_buf_free(&b);
}

/* A device name with YAML's special characters stays one string. */
static void
yaml_odd_name(void **state)
{
	struct vp_probe p;
	struct vp_buf b;
	struct ydoc *doc;

	(void)state;
	vp_probe_init(&p);
	strcpy(p.name, "GPU: #1 \"x\" {a, b} - [c]\\");
	vp_buf_init(&b);
	vp_probe_yaml(&p, &b);
	doc = parse(b.s);
	assert_string_equal(scalar(ynode_get(ydoc_root(doc), "gpu"), "name"),
	    "GPU: #1 \"x\" {a, b} - [c]\\");
	ydoc_free(doc);
	vp_buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cuda_version),
		cmocka_unit_test(granularity),
		cmocka_unit_test(drop),
		cmocka_unit_test(median),
		cmocka_unit_test(rates),
		cmocka_unit_test(yaml_str),
		cmocka_unit_test(yaml_record),
		cmocka_unit_test(yaml_unknowns),
		cmocka_unit_test(yaml_odd_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
