/*
 * calib.c — fit a profile to measurements, and write it (see calib.h).
 */
#include "calib.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_search.h"

const char *const vp_point_kind_names[VP_POINT_KIND_COUNT] = {
	"weights", "states", "step",
};

/* At most every lowering's activation scale, the temporaries' scale and
 * the fixed bytes. */
#define NCOL (VP_LOWERINGS + 2)

double
vp_calib_point_allocated(const struct vp_calib_point *p,
    const struct vp_mem *m)
{
	switch (p->kind) {
	case VP_POINT_WEIGHTS:
		return (double)m->weights_bytes;
	case VP_POINT_STATES:
		return (double)m->weights_bytes + (double)m->master_bytes +
		    (double)m->grads_bytes + (double)m->optim_bytes;
	default:
		return (double)m->allocated_peak;
	}
}

/*
 * Solve a x = b (n x n, row-major) by Gaussian elimination with partial
 * pivoting; -1 when singular.
 */
static int
solve(double *a, double *b, double *x, int n)
{
	int i, j, k, piv;

	for (k = 0; k < n; k++) {
		piv = k;
		for (i = k + 1; i < n; i++)
			if (fabs(a[i * n + k]) > fabs(a[piv * n + k]))
				piv = i;
		if (fabs(a[piv * n + k]) < 1e-300)
			return -1;
		if (piv != k) {
			for (j = 0; j < n; j++) {
				double t = a[k * n + j];

				a[k * n + j] = a[piv * n + j];
				a[piv * n + j] = t;
			}
			{
				double t = b[k];

				b[k] = b[piv];
				b[piv] = t;
			}
		}
		for (i = k + 1; i < n; i++) {
			double f = a[i * n + k] / a[k * n + k];

			for (j = k; j < n; j++)
				a[i * n + j] -= f * a[k * n + j];
			b[i] -= f * b[k];
		}
	}
	for (i = n - 1; i >= 0; i--) {
		double s = b[i];

		for (j = i + 1; j < n; j++)
			s -= a[i * n + j] * x[j];
		x[i] = s / a[i * n + i];
	}
	return 0;
}

static bool
is_step(const struct vp_calib_point *p)
{
	return p->kind == VP_POINT_STEP && p->m_allocated > 0;
}

/* One row of the allocated regression (see fit_allocated). */
static void
alloc_row(const struct vp_calib_point *q, double scale, double row[NCOL])
{
	const uint64_t *t = q->est.term;

	memset(row, 0, NCOL * sizeof *row);
	row[vp_lowering(q->model)] = (double)t[VP_CAT_ACT] +
	    (double)t[VP_CAT_LOGITS];
	row[VP_LOWERINGS] = (double)t[VP_CAT_TRANSIENT];
	row[VP_LOWERINGS + 1] = scale;
}

/* A fold of the cross-validation: a point, or all points of a model. */
struct fold {
	size_t point;			/* SIZE_MAX: none */
	const struct vp_model *model;	/* NULL: none */
};

static bool
held_out(const struct vp_calib_point *pts, size_t p, const struct fold *f)
{
	return p == f->point || (f->model != NULL && pts[p].model == f->model);
}

/*
 * Solve the regression over the step points not held out by f.
 * x[c] is the change of column c from its built-in value, 0 for a column
 * no point exercises (used[c] false).  -1 when singular.
 */
static int
alloc_solve(const struct vp_calib_point *pts, size_t n, const struct fold *f,
    double scale, double x[NCOL], bool used[NCOL])
{
	double ata[NCOL * NCOL], atb[NCOL], a[NCOL * NCOL], b[NCOL], y[NCOL];
	int col[NCOL], ncol = 0, i, j;
	size_t p;

	memset(ata, 0, sizeof ata);
	memset(atb, 0, sizeof atb);
	for (p = 0; p < n; p++) {
		const struct vp_calib_point *q = &pts[p];
		double row[NCOL], w, r;

		if (!is_step(q) || held_out(pts, p, f))
			continue;
		alloc_row(q, scale, row);
		w = 1.0 / (q->m_allocated * q->m_allocated);
		r = q->m_allocated - (double)q->est.allocated_peak;
		for (i = 0; i < NCOL; i++) {
			atb[i] += w * row[i] * r;
			for (j = 0; j < NCOL; j++)
				ata[i * NCOL + j] += w * row[i] * row[j];
		}
	}
	for (i = 0; i < NCOL; i++) {
		x[i] = 0;
		used[i] = ata[i * NCOL + i] > 1e-12;
		if (used[i])
			col[ncol++] = i;
	}
	for (i = 0; i < ncol; i++) {
		b[i] = atb[col[i]];
		for (j = 0; j < ncol; j++)
			a[i * ncol + j] = ata[col[i] * NCOL + col[j]];
		a[i * ncol + i] *= 1.0 + 1e-3;
	}
	if (ncol == 0 || solve(a, b, y, ncol) != 0)
		return -1;
	for (i = 0; i < ncol; i++)
		x[col[i]] = y[i];
	return 0;
}

/*
 * Allocated: the regression M - E = sum_l (k_l - 1) A_l + (k_t - 1) T + c,
 * rows weighted by 1 / M so that it minimises relative error, with a ridge
 * of 1e-3 of each column's own weight pulling towards the built-in values.
 *
 * A fit can chase noise, or the quirks of the one model it saw: the
 * corrections are kept only when they predict points they were not
 * fitted on better than the built-in model does.  With two or more
 * models in the grid a fold is a whole model (does what was learnt on
 * the others carry over?); with one, a fold is a point.  With fewer than
 * four step points there is nothing to hold out and the fit is kept.
 */
static void
fit_allocated(const struct vp_calib_point *pts, size_t n,
    struct vp_calib_fit *out)
{
	static const struct fold all = { SIZE_MAX, NULL };
	double x[NCOL], xl[NCOL], row[NCOL], scale = 0, e0 = 0, e1 = 0;
	const struct vp_model *first = NULL;
	bool used[NCOL], ul[NCOL], by_model = false;
	size_t p, nstep = 0;
	int i;

	for (p = 0; p < n; p++)
		if (is_step(&pts[p])) {
			scale += pts[p].m_allocated;
			nstep++;
			if (first == NULL)
				first = pts[p].model;
			else if (pts[p].model != first)
				by_model = true;
		}
	scale /= (double)nstep;
	if (alloc_solve(pts, n, &all, scale, x, used) != 0)
		return;
	for (p = 0; nstep >= 4 && p < n; p++) {
		const struct vp_calib_point *q = &pts[p];
		struct fold f = { SIZE_MAX, NULL };
		double pred, m = q->m_allocated;

		if (!is_step(q))
			continue;
		if (by_model)
			f.model = q->model;
		else
			f.point = p;
		if (alloc_solve(pts, n, &f, scale, xl, ul) != 0)
			memset(xl, 0, sizeof xl);
		alloc_row(q, scale, row);
		pred = (double)q->est.allocated_peak;
		for (i = 0; i < NCOL; i++)
			pred += row[i] * xl[i];
		e1 += (pred - m) * (pred - m) / (m * m);
		out->loo_worst = fmax(out->loo_worst, fabs(pred - m) / m);
		e0 += ((double)q->est.allocated_peak - m) *
		    ((double)q->est.allocated_peak - m) / (m * m);
	}
	if (nstep >= 4) {
		out->loo_before = sqrt(e0 / nstep);
		out->loo_after = sqrt(e1 / nstep);
		out->loo_checked = true;
		out->loo_by_model = by_model;
		if (!(e1 < e0)) {
			out->declined = true;
			return;
		}
	}
	for (i = 0; i < VP_LOWERINGS; i++)
		if (used[i]) {
			out->prof.act_scale[i] = fmax(0.0, 1.0 + x[i]);
			out->fitted_act[i] = true;
		}
	if (used[VP_LOWERINGS])
		out->prof.temp_scale = fmax(0.0, 1.0 + x[VP_LOWERINGS]);
	if (used[VP_LOWERINGS + 1])
		out->prof.alloc_fixed_bytes = (uint64_t)fmax(0.0,
		    x[VP_LOWERINGS + 1] * scale);
}

/* The share whose rounded reserved level is nearest the measured ones
 * (relative squared error), scanned in steps of 0.05% up to 50%: the
 * rounding must not be counted twice, as a plain ratio would. */
static double
fit_frag(const struct vp_calib_point *pts, size_t n,
    const struct vp_profile *prof)
{
	double best = 0, best_e = INFINITY, f, e, r;
	size_t p;

	for (f = 0; f <= 0.5; f += 0.0005) {
		e = 0;
		for (p = 0; p < n; p++) {
			const struct vp_calib_point *q = &pts[p];

			if (!is_step(q) || !(q->m_reserved > 0))
				continue;
			r = (double)vp_mem_reserved((uint64_t)q->m_allocated,
			    f, prof);
			e += (r - q->m_reserved) * (r - q->m_reserved) /
			    (q->m_reserved * q->m_reserved);
		}
		if (e < best_e) {
			best_e = e;
			best = f;
		}
	}
	return best;
}

/* Reserved over allocated, and the device overhead, from the measured
 * levels alone (the allocated fit does not enter them). */
static void
fit_levels(const struct vp_calib_point *pts, size_t n,
    struct vp_calib_fit *out)
{
	double over = 0, nccl = 0;
	unsigned nf = 0, no = 0, nn = 0;
	size_t p;

	for (p = 0; p < n; p++) {
		const struct vp_calib_point *q = &pts[p];

		if (!is_step(q) || !(q->m_reserved > 0))
			continue;
		nf++;
		if (q->m_device > q->m_reserved && q->world <= 1) {
			over += q->m_device - q->m_reserved;
			no++;
		}
	}
	if (nf > 0) {
		out->prof.frag_share = fit_frag(pts, n, &out->prof);
		out->fitted_reserved = true;
	}
	if (no > 0) {
		over /= no;
		/* What the overhead leaves after the cuBLAS workspace is the
		 * context (with the kernels it loaded). */
		out->prof.context_bytes = (uint64_t)fmax(0.0, over -
		    (double)out->prof.cublas_workspace_bytes);
		out->fitted_device = true;
	}
	for (p = 0; no > 0 && p < n; p++) {
		const struct vp_calib_point *q = &pts[p];
		unsigned g;

		if (!is_step(q) || q->world <= 1 || !(q->m_device > 0))
			continue;
		g = vp_plan_groups(&q->plan, q->world);
		if (g == 0)
			continue;
		nccl += (q->m_device - q->m_reserved - over) / g;
		nn++;
	}
	if (nn > 0 && nccl > 0) {
		out->prof.nccl_bytes_per_group = (uint64_t)(nccl / nn);
		out->fitted_nccl = true;
	}
}

/*
 * t = s / r through the origin, s the time model's step: r = sum s^2 /
 * sum s t.  The time model divides a calibrated profile's step by its mfu
 * over the built-in one (plan_search.c), so the profile keeps the
 * built-in mfu times r.
 */
static void
fit_mfu(const struct vp_calib_point *pts, size_t n, const struct vp_gpu *gpu,
    struct vp_calib_fit *out)
{
	struct vp_profile builtin;
	double ss = 0, st = 0;
	size_t p;

	for (p = 0; p < n; p++) {
		const struct vp_calib_point *q = &pts[p];

		if (!is_step(q) || !(q->m_seconds > 0) ||
		    !(q->est_seconds_mfu1 > 0))
			continue;
		ss += q->est_seconds_mfu1 * q->est_seconds_mfu1;
		st += q->est_seconds_mfu1 * q->m_seconds;
	}
	if (st > 0) {
		vp_profile_default(gpu, &builtin);
		out->prof.mfu = fmin(1.0, fmax(0.001, builtin.mfu * ss / st));
		out->fitted_mfu = true;
	}
}

static void
residual_add(struct vp_residual *r, double est, double meas)
{
	double e;

	if (!(meas > 0) || isnan(est))
		return;
	e = fabs(est - meas) / meas;
	if (r->n == 0 || e > r->max)
		r->max = e;
	r->rms += e * e;
	r->n++;
}

static void
residual_end(struct vp_residual *r)
{
	if (r->n == 0)
		r->max = r->rms = NAN;
	else
		r->rms = sqrt(r->rms / r->n);
}

static void
estimate(struct vp_calib_point *q, const struct vp_profile *prof,
    struct vp_mem *out)
{
	struct vp_mem_opts mo;

	memset(&mo, 0, sizeof mo);
	mo.profile = prof;
	mo.world = q->world;
	vp_mem_estimate(q->model, &q->plan, &mo, out);
}

/* The time model's step under prof; NAN without a card. */
static double
seconds(const struct vp_calib_point *q, const struct vp_profile *prof,
    const struct vp_gpu *gpu)
{
	struct vp_cand c;

	if (gpu == NULL || q->kind != VP_POINT_STEP)
		return NAN;
	memset(&c, 0, sizeof c);
	c.plan = q->plan;
	vp_plan_time(q->model, gpu, prof, q->world, &c);
	return c.step_seconds;
}

int
vp_calib_fit(struct vp_calib_point *pts, size_t n,
    const struct vp_profile *base, const struct vp_gpu *gpu,
    struct vp_calib_fit *out)
{
	struct vp_profile unit = *base;
	size_t p, nstep = 0;

	memset(out, 0, sizeof *out);
	out->prof = *base;
	unit.mfu = 1.0;
	unit.calibrated = false;	/* the model's own step */
	for (p = 0; p < n; p++) {
		struct vp_calib_point *q = &pts[p];

		/* Points are read with vp_plan_defaults' degrees and a world
		 * of at least 1 (profile_read.c). */
		assert(q->world >= 1 && vp_plan_degrees_ok(&q->plan));
		estimate(q, base, &q->est);
		q->est_seconds_mfu1 = seconds(q, &unit, gpu);
		if (is_step(q))
			nstep++;
		if (q->kind != VP_POINT_STEP)
			continue;
		residual_add(&out->allocated0, (double)q->est.allocated_peak,
		    q->m_allocated);
		residual_add(&out->reserved0, (double)q->est.reserved_peak,
		    q->m_reserved);
		residual_add(&out->device0, (double)q->est.device_peak,
		    q->m_device);
	}
	residual_end(&out->allocated0);
	residual_end(&out->reserved0);
	residual_end(&out->device0);
	if (nstep < 2)
		return -1;
	fit_allocated(pts, n, out);
	fit_levels(pts, n, out);
	fit_mfu(pts, n, gpu, out);
	out->prof.calibrated = true;
	out->prof.name = "calibrated";
	/* The residuals are those of the real estimate path, refitted. */
	for (p = 0; p < n; p++) {
		struct vp_calib_point *q = &pts[p];
		struct vp_mem m;

		estimate(q, &out->prof, &m);
		q->f_seconds = seconds(q, &out->prof, gpu);
		q->f_allocated = vp_calib_point_allocated(q, &m);
		q->f_reserved = (double)m.reserved_peak;
		q->f_device = (double)m.device_peak;
		if (q->kind != VP_POINT_STEP)
			continue;
		residual_add(&out->allocated, q->f_allocated, q->m_allocated);
		residual_add(&out->reserved, q->f_reserved, q->m_reserved);
		residual_add(&out->device, q->f_device, q->m_device);
		if (out->fitted_mfu)
			residual_add(&out->seconds, q->f_seconds, q->m_seconds);
	}
	residual_end(&out->allocated);
	residual_end(&out->reserved);
	residual_end(&out->device);
	residual_end(&out->seconds);
	/* The error bar is the worse of the fit's own residual and, when
	 * the fit was cross-validated, its error on what it did not see. */
	out->prof.err_allocated = out->allocated.max;
	if (out->loo_checked && !out->declined)
		out->prof.err_allocated = fmax(out->prof.err_allocated,
		    out->loo_worst);
	/* Reserved carries the allocated error; device dilutes it in the
	 * fixed overhead, so its own residual stands. */
	out->prof.err_reserved = out->fitted_reserved ?
	    fmax(out->reserved.max, out->prof.err_allocated) :
	    out->prof.err_allocated;
	out->prof.err_device = out->fitted_device ? out->device.max :
	    out->prof.err_reserved;
	return 0;
}

void
vp_profile_key_free(struct vp_profile_key *k)
{
	free(k->device);
	free(k->gpu);
	free(k->catalog_id);
	free(k->driver);
	free(k->cuda);
	free(k->framework);
	free(k->created);
	free(k->vramplan);
	free(k->probe);
	memset(k, 0, sizeof *k);
}

/* A YAML double-quoted scalar, or null. */
static void
qstr(struct vp_buf *o, const char *s)
{
	if (s == NULL) {
		vp_buf_add(o, "null");
		return;
	}
	vp_buf_add(o, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			vp_buf_printf(o, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			vp_buf_printf(o, "\\x%02x", c);
		else
			vp_buf_printf(o, "%c", c);
	}
	vp_buf_add(o, "\"");
}

static void
num(struct vp_buf *o, double v)
{
	if (isnan(v))
		vp_buf_add(o, "null");
	else
		vp_buf_printf(o, "%.6g", v);
}

static void
residual_yaml(struct vp_buf *o, const char *name, const struct vp_residual *r,
    const struct vp_residual *before)
{
	vp_buf_printf(o, "  %s: {points: %u, max: ", name, r->n);
	num(o, r->n ? r->max : NAN);
	vp_buf_add(o, ", rms: ");
	num(o, r->n ? r->rms : NAN);
	if (before != NULL) {
		vp_buf_add(o, ", max_before: ");
		num(o, before->n ? before->max : NAN);
	}
	vp_buf_add(o, "}\n");
}

static void
point_yaml(struct vp_buf *o, const struct vp_calib_point *q)
{
	vp_buf_add(o, "  - id: ");
	qstr(o, q->id);
	vp_buf_printf(o, "\n    kind: %s\n    allocated: {measured: ",
	    vp_point_kind_names[q->kind]);
	num(o, q->m_allocated);
	vp_buf_add(o, ", estimated: ");
	num(o, vp_calib_point_allocated(q, &q->est));
	vp_buf_add(o, ", calibrated: ");
	num(o, q->f_allocated);
	vp_buf_add(o, "}\n");
	if (q->kind != VP_POINT_STEP)
		return;
	vp_buf_add(o, "    reserved: {measured: ");
	num(o, q->m_reserved);
	vp_buf_add(o, ", calibrated: ");
	num(o, q->f_reserved);
	vp_buf_add(o, "}\n    device: {measured: ");
	num(o, q->m_device);
	vp_buf_add(o, ", calibrated: ");
	num(o, q->f_device);
	vp_buf_add(o, "}\n    seconds: {measured: ");
	num(o, q->m_seconds);
	vp_buf_add(o, ", calibrated: ");
	num(o, q->f_seconds);
	vp_buf_add(o, "}\n");
}

void
vp_profile_format(const struct vp_profile_key *k,
    const struct vp_calib_fit *fit, const struct vp_calib_point *pts,
    size_t n, struct vp_buf *o)
{
	const struct vp_profile *p = &fit->prof;
	size_t i;

	vp_buf_add(o, "# A vramplan profile measured by 'vramplan calibrate' "
	    "(see vramplan(1)).\n# Estimates for this device use it; copy "
	    "it to another machine's profile\n# directory, or give it with "
	    "--profile FILE.\n");
	vp_buf_printf(o, "vramplan-profile: %d\nkey:\n  device: ",
	    VP_PROFILE_VERSION);
	qstr(o, k->device);
	vp_buf_add(o, "\n  gpu: ");
	qstr(o, k->gpu);
	vp_buf_add(o, "\n  catalog_id: ");
	qstr(o, k->catalog_id);
	vp_buf_add(o, "\n  driver: ");
	qstr(o, k->driver);
	vp_buf_add(o, "\n  cuda: ");
	qstr(o, k->cuda);
	vp_buf_add(o, "\n  framework: ");
	qstr(o, k->framework);
	vp_buf_add(o, "\ncreated: ");
	qstr(o, k->created);
	vp_buf_add(o, "\nvramplan: ");
	qstr(o, k->vramplan);
	vp_buf_printf(o, "\nconstants:\n"
	    "  context_bytes: %llu\n"
	    "  cublas_workspace_bytes: %llu\n"
	    "  nccl_bytes_per_group: %llu\n"
	    "  alloc_fixed_bytes: %llu\n"
	    "  frag_share: ",
	    (unsigned long long)p->context_bytes,
	    (unsigned long long)p->cublas_workspace_bytes,
	    (unsigned long long)p->nccl_bytes_per_group,
	    (unsigned long long)p->alloc_fixed_bytes);
	num(o, p->frag_share);
	if (p->usable_bytes)
		vp_buf_printf(o, "\n  usable_bytes: %llu",
		    (unsigned long long)p->usable_bytes);
	vp_buf_add(o, "\n  temp_scale: ");
	num(o, p->temp_scale);
	vp_buf_add(o, "\n  mfu: ");
	num(o, p->mfu);
	vp_buf_add(o, "\n  activation_scale:\n");
	for (i = 0; i < VP_LOWERINGS; i++) {
		vp_buf_printf(o, "    %s: ", vp_lowering_names[i]);
		num(o, p->act_scale[i]);
		vp_buf_add(o, "\n");
	}
	vp_buf_printf(o, "fitted: {activations: [");
	{
		bool first = true;

		for (i = 0; i < VP_LOWERINGS; i++)
			if (fit->fitted_act[i]) {
				vp_buf_printf(o, "%s%s", first ? "" : ", ",
				    vp_lowering_names[i]);
				first = false;
			}
	}
	vp_buf_printf(o, "], reserved: %s, device: %s, nccl: %s, mfu: %s}\n",
	    fit->fitted_reserved ? "true" : "false",
	    fit->fitted_device ? "true" : "false",
	    fit->fitted_nccl ? "true" : "false",
	    fit->fitted_mfu ? "true" : "false");
	vp_buf_add(o, "residuals:\n");
	residual_yaml(o, "allocated", &fit->allocated, &fit->allocated0);
	residual_yaml(o, "reserved", &fit->reserved, &fit->reserved0);
	residual_yaml(o, "device", &fit->device, &fit->device0);
	residual_yaml(o, "seconds", &fit->seconds, NULL);
	if (fit->loo_checked) {
		vp_buf_add(o, "  allocated_held_out: {rms: ");
		num(o, fit->loo_after);
		vp_buf_add(o, ", max: ");
		num(o, fit->loo_worst);
		vp_buf_add(o, ", rms_built_in: ");
		num(o, fit->loo_before);
		vp_buf_printf(o, ", folds: %s, kept: %s}\n", fit->loo_by_model ?
		    "models" : "points", fit->declined ? "false" : "true");
	}
	vp_buf_add(o, "error_bars: {allocated: ");
	num(o, p->err_allocated);
	vp_buf_add(o, ", reserved: ");
	num(o, p->err_reserved);
	vp_buf_add(o, ", device: ");
	num(o, p->err_device);
	vp_buf_add(o, "}\n");
	if (k->probe != NULL) {
		const char *s = k->probe, *e;

		/* The probe's record, indented under its key. */
		vp_buf_add(o, "probe:\n");
		while (*s) {
			e = strchr(s, '\n');
			if (e == NULL)
				e = s + strlen(s);
			if (e > s && *s != '#')
				vp_buf_printf(o, "  %.*s\n", (int)(e - s), s);
			s = *e ? e + 1 : e;
		}
	}
	vp_buf_add(o, "points:\n");
	for (i = 0; i < n; i++)
		point_yaml(o, &pts[i]);
}

void
vp_profile_file_name(const struct vp_profile_key *k, struct vp_buf *out)
{
	struct vp_buf raw;
	size_t i;

	vp_buf_init(&raw);
	vp_buf_printf(&raw, "%s--drv%s--cuda%s--%s",
	    k->catalog_id ? k->catalog_id : k->device,
	    k->driver ? k->driver : "none", k->cuda ? k->cuda : "none",
	    k->framework ? k->framework : "unknown");
	for (i = 0; i < raw.len; i++) {
		char c = raw.s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		    c == '_'))
			raw.s[i] = '_';
	}
	vp_buf_printf(out, "%s.yaml", raw.s);
	vp_buf_free(&raw);
}
