/*
 * profile_read.c — calibrated profiles and calibration measurements (see
 * profile_read.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "profile_read.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_read.h"
#include "options.h"
#include "plan.h"
#include "ydoc.h"

static const char *const profile_keys[] = { "vramplan-profile", "key",
	"created", "vramplan", "constants", "fitted", "residuals",
	"error_bars", "probe", "points" };
static const char *const key_keys[] = { "device", "gpu", "catalog_id",
	"driver", "cuda", "framework" };
static const char *const const_keys[] = { "context_bytes",
	"cublas_workspace_bytes", "nccl_bytes_per_group", "alloc_fixed_bytes",
	"frag_share", "temp_scale", "mfu", "activation_scale", "usable_bytes" };
static const char *const err_keys[] = { "allocated", "reserved", "device" };
static const char *const devices[] = { "cuda", "cpu" };

/* A required mapping under key. */
static const struct ynode *
map_at(const struct ynode *map, const char *file, const char *key,
    struct vp_diags *d)
{
	const struct ynode *n = ynode_get(map, key);

	if (n == NULL) {
		vp_diag_add(d, file, map->pos, VP_ERROR, "profile has no "
		    "'%s'; it is incomplete (calibrate again)", key);
		return NULL;
	}
	if (ynode_want(n, YN_MAP, file, key, d) != 0)
		return NULL;
	return n;
}

static int
u64_at(const struct ynode *map, const char *file, const char *key,
    uint64_t max, uint64_t *out, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(map, key);

	if (n == NULL) {
		vp_diag_add(d, file, map->pos, VP_ERROR, "constants have no "
		    "'%s'", key);
		return -1;
	}
	return ynode_u64(n, file, key, 0, max, out, d);
}

static int
dbl_at(const struct ynode *map, const char *file, const char *map_name,
    const char *key, double min, double max, double *out, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(map, key);

	if (n == NULL) {
		vp_diag_add(d, file, map->pos, VP_ERROR, "%s has no '%s'",
		    map_name, key);
		return -1;
	}
	return ynode_double(n, file, key, min, max, out, d);
}

static int
read_constants(const struct ynode *c, const char *file, struct vp_profile *p,
    struct vp_diags *d)
{
	const struct ynode *act;
	int rc = 0;
	size_t i;

	if (ynode_check_keys(c, file, "constants", const_keys,
	    VP_NELEM(const_keys), d) != 0)
		return -1;
	rc |= u64_at(c, file, "context_bytes", 1ULL << 40, &p->context_bytes,
	    d);
	rc |= u64_at(c, file, "cublas_workspace_bytes", 1ULL << 40,
	    &p->cublas_workspace_bytes, d);
	rc |= u64_at(c, file, "nccl_bytes_per_group", 1ULL << 40,
	    &p->nccl_bytes_per_group, d);
	rc |= u64_at(c, file, "alloc_fixed_bytes", 1ULL << 40,
	    &p->alloc_fixed_bytes, d);
	/* Optional: older profiles and cpu ones have no measured capacity. */
	if ((act = ynode_get(c, "usable_bytes")) != NULL && !ynode_is_null(act))
		rc |= ynode_u64(act, file, "usable_bytes", 1ULL << 20,
		    1ULL << 50, &p->usable_bytes, d);
	rc |= dbl_at(c, file, "constants", "frag_share", 0, 1, &p->frag_share, d);
	rc |= dbl_at(c, file, "constants", "temp_scale", 0, 100, &p->temp_scale, d);
	rc |= dbl_at(c, file, "constants", "mfu", 0.001, 1, &p->mfu, d);
	if ((act = map_at(c, file, "activation_scale", d)) == NULL)
		return -1;
	if (ynode_check_keys(act, file, "activation_scale",
	    vp_lowering_names, VP_LOWERINGS, d) != 0)
		return -1;
	for (i = 0; i < VP_LOWERINGS; i++) {
		const struct ynode *n = ynode_get(act, vp_lowering_names[i]);

		if (n != NULL)
			rc |= ynode_double(n, file, vp_lowering_names[i], 0,
			    100, &p->act_scale[i], d);
	}
	return rc ? -1 : 0;
}

static int
read_error_bars(const struct ynode *e, const char *file, struct vp_profile *p,
    struct vp_diags *d)
{
	double *dst[] = { &p->err_allocated, &p->err_reserved,
	    &p->err_device };
	size_t i;
	int rc = 0;

	if (ynode_check_keys(e, file, "error_bars", err_keys,
	    VP_NELEM(err_keys), d) != 0)
		return -1;
	for (i = 0; i < VP_NELEM(err_keys); i++) {
		const struct ynode *n = ynode_get(e, err_keys[i]);

		*dst[i] = 0;
		if (n != NULL && !ynode_is_null(n))
			rc |= ynode_double(n, file, err_keys[i], 0, 10,
			    dst[i], d);
	}
	return rc ? -1 : 0;
}

static int
read_key(const struct ynode *k, const char *file, struct vp_profile_key *key,
    struct vp_diags *d)
{
	const struct ynode *dev = ynode_get(k, "device");
	int rc = 0, i;

	if (ynode_check_keys(k, file, "key", key_keys, VP_NELEM(key_keys),
	    d) != 0)
		return -1;
	if (dev == NULL) {
		vp_diag_add(d, file, k->pos, VP_ERROR, "profile key has no "
		    "'device' (cuda or cpu)");
		return -1;
	}
	if (ynode_enum(dev, file, "device", devices, 2, &i, d) != 0)
		return -1;
	key->device = xstrdup(devices[i]);
	rc |= ynode_opt_string(k, file, "gpu", &key->gpu, d);
	rc |= ynode_opt_string(k, file, "catalog_id", &key->catalog_id, d);
	rc |= ynode_opt_string(k, file, "driver", &key->driver, d);
	rc |= ynode_opt_string(k, file, "cuda", &key->cuda, d);
	rc |= ynode_opt_string(k, file, "framework", &key->framework, d);
	return rc ? -1 : 0;
}

static int
profile_from_doc(const struct ydoc *doc, struct vp_profile *p,
    struct vp_profile_key *key, struct vp_diags *d)
{
	const struct ynode *root = ydoc_root(doc), *v, *n;
	const char *file = ydoc_name(doc);
	uint64_t version;

	if (root == NULL || root->kind != YN_MAP ||
	    (v = ynode_get(root, "vramplan-profile")) == NULL) {
		vp_diag_add(d, file, root ? root->pos : (struct vp_srcpos){ 1,
		    1 }, VP_ERROR, "not a vramplan profile (no "
		    "'vramplan-profile' key; profiles are written by "
		    "'vramplan calibrate')");
		return -1;
	}
	if (ynode_u64(v, file, "vramplan-profile", 0, UINT32_MAX, &version,
	    d) != 0)
		return -1;
	if (version != VP_PROFILE_VERSION) {
		vp_diag_add(d, file, v->pos, VP_ERROR, "profile format version "
		    "%llu is not one this vramplan reads (version %d); "
		    "calibrate again with this version",
		    (unsigned long long)version, VP_PROFILE_VERSION);
		return -1;
	}
	if (ynode_check_keys(root, file, "a profile", profile_keys,
	    VP_NELEM(profile_keys), d) != 0)
		return -1;
	if ((n = map_at(root, file, "key", d)) == NULL ||
	    read_key(n, file, key, d) != 0)
		return -1;
	if (ynode_opt_string(root, file, "created", &key->created, d) != 0 ||
	    ynode_opt_string(root, file, "vramplan", &key->vramplan, d) != 0)
		return -1;
	if ((n = map_at(root, file, "constants", d)) == NULL ||
	    read_constants(n, file, p, d) != 0)
		return -1;
	if ((n = map_at(root, file, "error_bars", d)) == NULL ||
	    read_error_bars(n, file, p, d) != 0)
		return -1;
	p->calibrated = true;
	p->name = "calibrated";
	return 0;
}

int
vp_profile_load(const char *path, const struct vp_gpu *gpu,
    struct vp_profile *out, struct vp_profile_key *key, struct vp_diags *d)
{
	struct ydoc *doc;
	int rc;

	memset(key, 0, sizeof *key);
	vp_profile_default(gpu, out);
	if ((doc = ydoc_load_as(path, "profile", d)) == NULL)
		return -1;
	rc = vp_profile_from_doc(doc, gpu, out, key, d);
	ydoc_free(doc);
	return rc;
}

int
vp_profile_from_doc(const struct ydoc *doc, const struct vp_gpu *gpu,
    struct vp_profile *out, struct vp_profile_key *key, struct vp_diags *d)
{
	int rc;

	memset(key, 0, sizeof *key);
	vp_profile_default(gpu, out);
	rc = profile_from_doc(doc, out, key, d);
	if (rc != 0) {
		vp_profile_key_free(key);
		vp_profile_default(gpu, out);
	}
	return rc;
}

/* ---- measurements ---------------------------------------------------- */

static const char *const meas_keys[] = { "vramplan-measurements", "device",
	"torch", "cuda", "gpu", "driver", "harness_version", "points" };
static const char *const point_keys[] = { "id", "kind", "model",
	"precision", "optimizer", "micro_batch", "seq", "recompute",
	"attention", "dropout", "world", "allocated_peak_bytes",
	"reserved_peak_bytes", "device_peak_bytes", "step_seconds" };

/* A measured number: NAN when null or absent. */
static int
measured(const struct ynode *map, const char *file, const char *key,
    double *out, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(map, key);

	*out = NAN;
	if (n == NULL || ynode_is_null(n))
		return 0;
	return ynode_double(n, file, key, 0, 1e18, out, d);
}

/* The index of the model at path in m, loading it the first time. */
static int
model_index(struct vp_measurements *m, const char *path, const char *base,
    const char *file, const struct ynode *at, struct vp_diags *d)
{
	struct vp_buf b;
	size_t i;

	for (i = 0; i < m->nmodels; i++)
		if (strcmp(m->model_paths[i], path) == 0)
			return (int)i;
	vp_buf_init(&b);
	if (path[0] != '/' && access(path, R_OK) != 0 && base != NULL)
		vp_buf_printf(&b, "%s/%s", base, path);
	else
		vp_buf_add(&b, path);
	if (access(b.s, R_OK) != 0) {
		vp_diag_add(d, file, at->pos, VP_ERROR, "cannot read the "
		    "model '%s' of this point", path);
		vp_buf_free(&b);
		return -1;
	}
	m->models = xreallocarray(m->models, m->nmodels + 1,
	    sizeof *m->models);
	m->model_paths = xreallocarray(m->model_paths, m->nmodels + 1,
	    sizeof *m->model_paths);
	if (vp_model_load(b.s, &m->models[m->nmodels], d) != 0) {
		vp_model_free(&m->models[m->nmodels]);
		vp_buf_free(&b);
		return -1;
	}
	m->model_paths[m->nmodels] = xstrdup(path);
	vp_buf_free(&b);
	return (int)m->nmodels++;
}

static int
plan_enum(const struct ynode *pt, const char *file, const char *key,
    const char *const *names, int n, int *out, struct vp_diags *d)
{
	const struct ynode *v = ynode_get(pt, key);

	if (v == NULL) {
		vp_diag_add(d, file, pt->pos, VP_ERROR, "point has no '%s'",
		    key);
		return -1;
	}
	return ynode_enum(v, file, key, names, n, out, d);
}

static int
plan_u64(const struct ynode *pt, const char *file, const char *key,
    uint64_t max, uint64_t *out, struct vp_diags *d)
{
	const struct ynode *v = ynode_get(pt, key);

	if (v == NULL) {
		vp_diag_add(d, file, pt->pos, VP_ERROR, "point has no '%s'",
		    key);
		return -1;
	}
	return ynode_u64(v, file, key, 1, max, out, d);
}

static int
read_point(struct vp_measurements *m, const struct ynode *pt, const char *file,
    const char *base, enum vp_device dev, struct vp_calib_point *q,
    size_t *model, struct vp_diags *d)
{
	const struct ynode *v;
	const char *s;
	int mi, e, rc = 0;
	uint64_t u;

	if (ynode_want(pt, YN_MAP, file, "point", d) != 0 ||
	    ynode_check_keys(pt, file, "a point", point_keys,
	    VP_NELEM(point_keys), d) != 0)
		return -1;
	if ((v = ynode_get(pt, "model")) == NULL) {
		vp_diag_add(d, file, pt->pos, VP_ERROR, "point has no 'model'");
		return -1;
	}
	if (ynode_string(v, file, "model", &s, d) != 0 ||
	    (mi = model_index(m, s, base, file, v, d)) < 0)
		return -1;
	/* The array may move as models are added: pointers come last. */
	*model = (size_t)mi;
	q->model = &m->models[mi];
	vp_plan_defaults(&q->plan, q->model);
	q->plan.device = dev;
	q->id = NULL;
	if ((v = ynode_get(pt, "id")) != NULL &&
	    ynode_string(v, file, "id", &s, d) == 0)
		q->id = xstrdup(s);
	if (plan_enum(pt, file, "kind", vp_point_kind_names,
	    VP_POINT_KIND_COUNT, &e, d) != 0)
		return -1;
	q->kind = (enum vp_point_kind)e;
	rc |= plan_enum(pt, file, "precision", vp_prec_names, VP_PREC_COUNT,
	    &e, d);
	q->plan.precision = (enum vp_precision)e;
	rc |= plan_enum(pt, file, "optimizer", vp_opt_names, VP_OPT_COUNT, &e,
	    d);
	q->plan.optimizer = (enum vp_optimizer)e;
	rc |= plan_enum(pt, file, "recompute", vp_recomp_names,
	    VP_RECOMP_COUNT, &e, d);
	q->plan.recompute = (enum vp_recompute)e;
	rc |= plan_enum(pt, file, "attention", vp_attn_names, VP_ATTN_COUNT,
	    &e, d);
	q->plan.attention = (enum vp_attention)e;
	rc |= plan_u64(pt, file, "micro_batch", 1u << 20, &q->plan.micro_batch,
	    d);
	rc |= plan_u64(pt, file, "seq", 1u << 27, &q->plan.seq, d);
	if ((v = ynode_get(pt, "dropout")) != NULL && !ynode_is_null(v))
		rc |= ynode_double(v, file, "dropout", 0, 0.99,
		    &q->plan.dropout, d);
	q->world = 1;
	if ((v = ynode_get(pt, "world")) != NULL && !ynode_is_null(v)) {
		rc |= ynode_u64(v, file, "world", 1, 65536, &u, d);
		q->world = (unsigned)u;
	}
	q->plan.dp = q->world;
	q->plan.gpus_per_node = q->world;
	rc |= measured(pt, file, "allocated_peak_bytes", &q->m_allocated, d);
	rc |= measured(pt, file, "reserved_peak_bytes", &q->m_reserved, d);
	rc |= measured(pt, file, "device_peak_bytes", &q->m_device, d);
	rc |= measured(pt, file, "step_seconds", &q->m_seconds, d);
	if (rc == 0 && !(q->m_allocated > 0)) {
		vp_diag_add(d, file, pt->pos, VP_ERROR, "point '%s' has no "
		    "allocated_peak_bytes", q->id ? q->id : "?");
		return -1;
	}
	return rc ? -1 : 0;
}

int
vp_measurements_load(const char *path, const char *base_dir,
    struct vp_measurements *out, struct vp_diags *d)
{
	struct ydoc *doc;
	int rc;

	memset(out, 0, sizeof *out);
	if ((doc = ydoc_load_as(path, "measurements file", d)) ==
	    NULL)
		return -1;
	rc = vp_measurements_from_doc(doc, base_dir, out, d);
	ydoc_free(doc);
	return rc;
}

int
vp_measurements_from_doc(const struct ydoc *doc, const char *base_dir,
    struct vp_measurements *out, struct vp_diags *d)
{
	const struct ynode *root, *v, *pts;
	const char *file;
	uint64_t version;
	size_t i, *mi = NULL;
	int dev = 0, rc = -1;

	memset(out, 0, sizeof *out);
	root = ydoc_root(doc);
	file = ydoc_name(doc);
	if (root == NULL || root->kind != YN_MAP ||
	    (v = ynode_get(root, "vramplan-measurements")) == NULL) {
		vp_diag_add(d, file, root ? root->pos : (struct vp_srcpos){ 1,
		    1 }, VP_ERROR, "not a vramplan measurements file (no "
		    "'vramplan-measurements' key; calib/calibrate.py writes "
		    "them)");
		goto out;
	}
	if (ynode_u64(v, file, "vramplan-measurements", 1, 1, &version, d) ||
	    ynode_check_keys(root, file, "measurements", meas_keys,
	    VP_NELEM(meas_keys), d))
		goto out;
	/* A missing key was a failure with no message (found by
	 * tests/fuzz/fuzz_profile). */
	if ((v = ynode_get(root, "device")) == NULL) {
		vp_diag_add(d, file, root->pos, VP_ERROR, "missing key "
		    "'device' in the measurements (cuda or cpu)");
		goto out;
	}
	if (ynode_enum(v, file, "device", devices, 2, &dev, d) != 0)
		goto out;
	out->device = xstrdup(devices[dev]);
	if (ynode_opt_string(root, file, "torch", &out->torch, d) ||
	    ynode_opt_string(root, file, "cuda", &out->cuda, d) ||
	    ynode_opt_string(root, file, "gpu", &out->gpu, d) ||
	    ynode_opt_string(root, file, "driver", &out->driver, d))
		goto out;
	if ((pts = ynode_get(root, "points")) == NULL) {
		vp_diag_add(d, file, root->pos, VP_ERROR, "missing key "
		    "'points' in the measurements (the list of measured "
		    "steps calib/calibrate.py writes)");
		goto out;
	}
	if (ynode_want(pts, YN_SEQ, file, "points", d) != 0)
		goto out;
	out->pts = xcalloc(pts->nkids ? pts->nkids : 1, sizeof *out->pts);
	mi = xcalloc(pts->nkids ? pts->nkids : 1, sizeof *mi);
	for (i = 0; i < pts->nkids; i++) {
		if (read_point(out, pts->kids[i], file, base_dir,
		    dev == 0 ? VP_DEVICE_CUDA : VP_DEVICE_CPU,
		    &out->pts[out->n++], &mi[i], d) != 0)
			goto out;
	}
	for (i = 0; i < out->n; i++) {
		unsigned ver;

		out->pts[i].model = &out->models[mi[i]];
		/* Each point is estimated on the stack it was measured on. */
		if (out->torch != NULL && vp_parse_version(out->torch,
		    &ver) == 0)
			out->pts[i].plan.torch_version = ver;
		if (out->cuda != NULL && vp_parse_version(out->cuda, &ver) == 0)
			out->pts[i].plan.cuda_version = ver;
		/* calib/calibrate.py zeroes with set_to_none=True. */
		out->pts[i].plan.zero_grad = VP_ZEROGRAD_NONE;
		/* calib/harness.py's modules clone transformers 4.40's
		 * modelling code, whatever transformers is installed. */
		out->pts[i].plan.transformers_version = 440;
	}
	rc = 0;
out:
	free(mi);
	if (rc != 0)
		vp_measurements_free(out);
	return rc;
}

void
vp_measurements_free(struct vp_measurements *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->pts[i].id);
	for (i = 0; i < m->nmodels; i++) {
		vp_model_free(&m->models[i]);
		free(m->model_paths[i]);
	}
	free(m->pts);
	free(m->models);
	free(m->model_paths);
	free(m->device);
	free(m->torch);
	free(m->cuda);
	free(m->gpu);
	free(m->driver);
	memset(m, 0, sizeof *m);
}

/* ---- the probe's record -------------------------------------------------- */

/* An optional byte count under map (null counts as absent). */
static int
opt_bytes(const struct ynode *map, const char *file, const char *key,
    uint64_t *out, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(map, key);

	if (n == NULL || ynode_is_null(n))
		return 0;
	return ynode_u64(n, file, key, 0, UINT64_MAX, out, d);
}

/*
 * The card's capacity as PyTorch will see it: NVML's free memory before
 * any context, else the free memory after the probe's context plus that
 * context.
 */
static int
probe_capacity(const struct ynode *root, const char *path,
    struct vp_probe_record *r, struct vp_diags *d)
{
	const struct ynode *nv = ynode_get(root, "nvml_before");
	uint64_t after = 0, ctx = 0;
	int rc = 0;

	if (nv != NULL && nv->kind == YN_MAP) {
		rc |= opt_bytes(nv, path, "free_bytes", &r->capacity, d);
		if (r->capacity > 0)
			return rc;
	}
	rc |= opt_bytes(root, path, "free_after_context_bytes", &after, d);
	rc |= opt_bytes(root, path, "context_bytes", &ctx, d);
	r->capacity = after ? after + ctx : 0;
	return rc;
}

void
vp_probe_record_free(struct vp_probe_record *r)
{
	if (r == NULL)
		return;
	free(r->name);
	free(r->driver);
	free(r->cuda);
	free(r->text);
	memset(r, 0, sizeof *r);
}

int
vp_probe_load(const char *path, struct vp_probe_record *r, struct vp_diags *d)
{
	const struct ynode *root, *g, *v;
	struct ydoc *doc;
	uint64_t version;
	char *text;
	size_t len;
	int rc = 0;

	memset(r, 0, sizeof *r);
	/* Read once: the text the profile keeps is the text parsed (a
	 * /dev/stdin cannot be read twice). */
	if ((text = ydoc_read_input(path, "probe record", &len, d)) == NULL)
		return -1;
	doc = ydoc_parse_as(path, "probe record", text, len, d);
	if (doc == NULL) {
		free(text);
		return -1;
	}
	root = ydoc_root(doc);
	if (root == NULL || root->kind != YN_MAP) {
		vp_diag_add(d, path, root ? root->pos : (struct vp_srcpos){ 1, 1 },
		    VP_ERROR, "not a vramplan-probe record: expected a mapping "
		    "with 'vramplan-probe: 1'");
		ydoc_free(doc);
		return -1;
	}
	if ((v = ynode_get(root, "vramplan-probe")) == NULL) {
		vp_diag_add(d, path, root->pos, VP_ERROR, "not a vramplan-probe "
		    "record: no 'vramplan-probe' key (the probe writes "
		    "'vramplan-probe: 1')");
		rc = -1;
	} else if (ynode_u64(v, path, "vramplan-probe", 1, 1, &version,
	    d) != 0) {
		rc = -1;
	}
	if ((g = ynode_get(root, "gpu")) != NULL && g->kind == YN_MAP) {
		rc |= ynode_opt_string(g, path, "name", &r->name, d);
		rc |= opt_bytes(g, path, "memory_total_bytes",
		    &r->memory_total, d);
	}
	rc |= ynode_opt_string(root, path, "driver", &r->driver, d);
	rc |= ynode_opt_string(root, path, "cuda_driver_version", &r->cuda, d);
	rc |= opt_bytes(root, path, "cublas_workspace_bytes",
	    &r->cublas_workspace, d);
	rc |= probe_capacity(root, path, r, d);
	ydoc_free(doc);
	r->text = text;
	if (rc != 0)
		vp_probe_record_free(r);
	return rc != 0 ? -1 : 0;
}
