/*
 * test_calib.c — the calibration fit recovers known constants, keeps the
 * defaults of what the grid does not measure, and the profile it writes
 * reads back to the same numbers.
 *
 * The "measurements" here are vramplan's own estimates under a profile
 * with chosen constants (activations x 1.08, temporaries x 0.9, 3 MiB of
 * unmodelled allocations, 4% fragmentation, 700 MiB of context): a fit
 * from the built-in profile must find them again, and its residuals must
 * then be near zero.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "gpu.h"
#include "mem.h"
#include "model.h"
#include "plan.h"
#include "profile_read.h"
#include "util.h"

static void
make_model(struct vp_model *m, enum vp_impl impl)
{
	struct vp_diags d = { 0 };

	vp_model_init(m);
	m->layers = 4;
	m->hidden = 256;
	m->heads = 4;
	m->ffn = 1024;
	m->vocab = 8000;
	m->act = VP_ACT_GELU;
	m->norm = VP_NORM_LAYERNORM;
	m->bias = true;
	m->pos = VP_POS_LEARNED;
	m->max_seq = 1024;
	m->dropout = 0;
	m->impl = impl;
	assert_int_equal(vp_model_validate(m, &d), 0);
	vp_diags_clear(&d);
}

/* The truth the synthetic measurements come from. */
static void
truth(struct vp_profile *t)
{
	vp_profile_default(NULL, t);
	t->calibrated = true;
	t->act_scale[0] = 1.08;	/* hf-decoder */
	t->temp_scale = 0.9;
	t->alloc_fixed_bytes = 3ULL << 20;
	t->frag_share = 0.04;
	t->context_bytes = 700ULL << 20;
}

/* A grid like calibrate.py's: two micro-batches x two sequences,
 * recompute on and off, two optimizers. */
static size_t
grid(const struct vp_model *m, const struct vp_profile *t,
    struct vp_calib_point *pts, bool cuda)
{
	static const uint64_t mb[] = { 1, 2, 4 }, seq[] = { 128, 256 };
	size_t n = 0, i, j, k;

	for (i = 0; i < 3; i++)
		for (j = 0; j < 2; j++)
			for (k = 0; k < 3; k++) {
				struct vp_calib_point *q = &pts[n++];
				struct vp_mem_opts mo = { t, 1, 0 };
				struct vp_mem e;

				memset(q, 0, sizeof *q);
				q->kind = VP_POINT_STEP;
				q->model = m;
				q->world = 1;
				vp_plan_defaults(&q->plan, m);
				/* As vp_measurements_load: the harness's
				 * modules clone transformers 4.40. */
				q->plan.transformers_version = 440;
				q->plan.device = cuda ? VP_DEVICE_CUDA :
				    VP_DEVICE_CPU;
				q->plan.dp = 1;
				q->plan.micro_batch = mb[i];
				q->plan.seq = seq[j];
				q->plan.recompute = k == 1 ? VP_RECOMP_FULL :
				    VP_RECOMP_NONE;
				q->plan.optimizer = k == 2 ? VP_OPT_SGD :
				    VP_OPT_ADAMW;
				vp_mem_estimate(m, &q->plan, &mo, &e);
				q->m_allocated = (double)e.allocated_peak;
				/* The allocator keeps whole 2 MiB
				 * segments. */
				q->m_reserved = cuda ? ceil(q->m_allocated *
				    (1 + t->frag_share) / (2 << 20)) *
				    (2 << 20) : NAN;
				q->m_device = cuda ? q->m_reserved +
				    (double)(t->context_bytes +
				    t->cublas_workspace_bytes) : NAN;
				q->m_seconds = NAN;
			}
	return n;
}

/* Fit the grid measured under the truth, from the built-in profile. */
static void
fit_truth(struct vp_model *m, bool cuda, struct vp_profile *base,
    struct vp_calib_fit *fit)
{
	struct vp_profile t;
	struct vp_calib_point pts[32];
	size_t n;

	make_model(m, VP_IMPL_HF);
	truth(&t);
	n = grid(m, &t, pts, cuda);
	vp_profile_default(NULL, base);
	assert_int_equal(vp_calib_fit(pts, n, base, NULL, fit), 0);
}

static void
test_recovers_constants(void **state)
{
	struct vp_model m;
	struct vp_profile base;
	struct vp_calib_fit fit;

	(void)state;
	fit_truth(&m, true, &base, &fit);
	assert_true(fit.fitted_act[0]);
	assert_true(fabs(fit.prof.act_scale[0] - 1.08) < 0.01);
	assert_true(fabs(fit.prof.temp_scale - 0.9) < 0.1);
	assert_true(fabs((double)fit.prof.alloc_fixed_bytes -
	    (double)(3 << 20)) < (double)(1 << 20));
	assert_true(fabs(fit.prof.frag_share - 0.04) < 0.001);
	assert_true(fit.reserved.max < 0.005);
	assert_true(fit.fitted_device);
	assert_int_equal(fit.prof.context_bytes, 700ULL << 20);
	/* Before the fit the built-in profile misses; after it, not. */
	assert_true(fit.allocated0.max > 0.02);
	assert_true(fit.allocated.max < 0.005);
	assert_true(fit.loo_checked && !fit.declined);
	assert_true(fit.loo_after < fit.loo_before);
	assert_true(fit.device.max < 0.01);
	assert_true(fit.prof.calibrated);
	/* The error bar: the worse of the in-sample and held-out error. */
	assert_true(fabs(fit.prof.err_allocated - fmax(fit.allocated.max,
	    fit.loo_worst)) < 1e-12);
	/* What the grid did not hold keeps its default. */
	assert_false(fit.fitted_act[1]);
	assert_true(fit.prof.act_scale[1] == 1.0);
	assert_false(fit.fitted_mfu);
	assert_true(fit.prof.mfu == base.mfu);
	vp_model_free(&m);
}

static void
test_cpu_has_no_levels(void **state)
{
	struct vp_model m;
	struct vp_profile base;
	struct vp_calib_fit fit;

	(void)state;
	fit_truth(&m, false, &base, &fit);
	assert_false(fit.fitted_reserved);
	assert_false(fit.fitted_device);
	assert_true(fit.prof.frag_share == base.frag_share);
	assert_true(fabs(fit.prof.act_scale[0] - 1.08) < 0.01);
	assert_int_equal(fit.reserved.n, 0);
	vp_model_free(&m);
}

/* Measurements that are the built-in estimate plus +-1% noise: nothing
 * to correct, and the leave-one-out check must say so. */
static void
test_declines_noise(void **state)
{
	struct vp_model m;
	struct vp_profile base;
	struct vp_calib_point pts[32];
	struct vp_calib_fit fit;
	size_t n, i;

	(void)state;
	make_model(&m, VP_IMPL_HF);
	vp_profile_default(NULL, &base);
	n = grid(&m, &base, pts, true);
	for (i = 0; i < n; i++)
		pts[i].m_allocated *= i % 2 ? 1.01 : 0.99;
	assert_int_equal(vp_calib_fit(pts, n, &base, NULL, &fit), 0);
	assert_true(fit.loo_checked);
	assert_true(fit.declined);
	assert_true(fit.prof.act_scale[0] == 1.0);
	assert_true(fit.prof.temp_scale == 1.0);
	assert_int_equal(fit.prof.alloc_fixed_bytes, 0);
	/* The error bar is then the built-in model's residual. */
	assert_true(fabs(fit.prof.err_allocated - 0.01) < 0.002);
	vp_model_free(&m);
}

static void
test_too_few_points(void **state)
{
	struct vp_model m;
	struct vp_profile t, base;
	struct vp_calib_point pts[32];
	struct vp_calib_fit fit;

	(void)state;
	make_model(&m, VP_IMPL_HF);
	truth(&t);
	grid(&m, &t, pts, true);
	vp_profile_default(NULL, &base);
	assert_int_equal(vp_calib_fit(pts, 1, &base, NULL, &fit), -1);
	vp_model_free(&m);
}

/* Write the profile, read it back: the same constants. */
static void
test_round_trip(void **state)
{
	struct vp_model m;
	struct vp_profile t, base, back;
	struct vp_calib_point pts[32];
	struct vp_calib_fit fit;
	struct vp_profile_key k, kb;
	struct vp_diags d = { 0 };
	struct vp_buf text, name;
	char path[] = "/tmp/vp-test-calib-XXXXXX";
	FILE *f;
	size_t n;
	int fd;

	(void)state;
	make_model(&m, VP_IMPL_HF);
	truth(&t);
	n = grid(&m, &t, pts, true);
	vp_profile_default(NULL, &base);
	assert_int_equal(vp_calib_fit(pts, n, &base, NULL, &fit), 0);
	memset(&k, 0, sizeof k);
	k.device = xstrdup("cuda");
	k.gpu = xstrdup("NVIDIA \"Test\" GPU");
	k.catalog_id = xstrdup("H100-80G-SXM");
	k.driver = xstrdup("575.51.03");
	k.cuda = xstrdup("12.8");
	k.framework = xstrdup("torch 2.7.0");
	k.created = xstrdup("2026-11-29T17:00:00Z");
	k.vramplan = xstrdup("test");
	vp_buf_init(&text);
	vp_profile_format(&k, &fit, pts, n, &text);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text.s, f);
	fclose(f);
	assert_int_equal(vp_profile_load(path, NULL, &back, &kb, &d), 0);
	assert_string_equal(kb.device, "cuda");
	assert_string_equal(kb.gpu, "NVIDIA \"Test\" GPU");
	assert_string_equal(kb.catalog_id, "H100-80G-SXM");
	assert_int_equal(back.context_bytes, fit.prof.context_bytes);
	assert_int_equal(back.alloc_fixed_bytes, fit.prof.alloc_fixed_bytes);
	assert_true(fabs(back.act_scale[0] - fit.prof.act_scale[0]) < 1e-5);
	assert_true(fabs(back.frag_share - fit.prof.frag_share) < 1e-5);
	assert_true(fabs(back.err_device - fit.prof.err_device) < 1e-5);
	assert_true(back.calibrated);
	vp_buf_init(&name);
	vp_profile_file_name(&k, &name);
	assert_string_equal(name.s,
	    "H100-80G-SXM--drv575.51.03--cuda12.8--torch_2.7.0.yaml");
	vp_buf_free(&name);
	vp_profile_key_free(&kb);
	vp_profile_key_free(&k);
	vp_diags_clear(&d);
	vp_buf_free(&text);
	remove(path);
	vp_model_free(&m);
}

/* A calibrated profile moves the estimate by exactly its corrections. */
static void
test_correction_applied(void **state)
{
	struct vp_model m;
	struct vp_profile base, cal;
	struct vp_plan p;
	struct vp_mem a, b;
	struct vp_mem_opts mo = { NULL, 1, 0 };

	(void)state;
	make_model(&m, VP_IMPL_HF);
	vp_plan_defaults(&p, &m);
	p.dp = 1;
	vp_profile_default(NULL, &base);
	cal = base;
	cal.calibrated = true;
	cal.act_scale[0] = 1.5;
	cal.temp_scale = 1.0;
	cal.alloc_fixed_bytes = 1 << 20;
	mo.profile = &base;
	vp_mem_estimate(&m, &p, &mo, &a);
	mo.profile = &cal;
	vp_mem_estimate(&m, &p, &mo, &b);
	assert_int_equal(b.term[VP_CAT_ACT], vp_scale(a.term[VP_CAT_ACT], 1.5));
	assert_true(llabs((long long)b.allocated_peak -
	    (long long)(a.allocated_peak + (b.term[VP_CAT_ACT] -
	    a.term[VP_CAT_ACT]) + (b.term[VP_CAT_LOGITS] -
	    a.term[VP_CAT_LOGITS]) + (1 << 20))) <= 2);
	assert_true(b.device_peak > a.device_peak);
	vp_model_free(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recovers_constants),
		cmocka_unit_test(test_cpu_has_no_levels),
		cmocka_unit_test(test_declines_noise),
		cmocka_unit_test(test_too_few_points),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_correction_applied),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
