/* plan_read.c — the plan file reader (see plan_read.h). */
#include "plan_read.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
read_version(const struct ynode *root, const char *file, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(root, VP_PLANFILE_VERSION_KEY);
	uint64_t v;

	if (n == NULL) {
		vp_diag_add(d, file, root->pos, VP_ERROR, "not a vramplan plan "
		    "file: no '%s' key (this vramplan writes '%s: %d')",
		    VP_PLANFILE_VERSION_KEY, VP_PLANFILE_VERSION_KEY,
		    VP_PLANFILE_VERSION);
		return -1;
	}
	if (ynode_u64(n, file, VP_PLANFILE_VERSION_KEY, 1, 1000000, &v,
	    d) != 0)
		return -1;
	if (v != VP_PLANFILE_VERSION) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "unsupported plan file "
		    "version %llu (this vramplan reads version %d)",
		    (unsigned long long)v, VP_PLANFILE_VERSION);
		return -1;
	}
	return 0;
}

/* The GPU set's form: N x NAME or NAME; the catalog is the caller's. */
static int
read_gpus(const struct ynode *n, const char *file, struct vp_optset *k,
    struct vp_diags *d)
{
	const char *s;

	if (ynode_string(n, file, "gpus", &s, d) != 0)
		return -1;
	if (*s == '\0') {
		vp_diag_add(d, file, n->pos, VP_ERROR, "'gpus' is empty "
		    "(expected NxCARD, e.g. 2xA100)");
		return -1;
	}
	vp_optset_own(k, VP_O_GPUS, s);
	return 0;
}

/* --alloc-conf: checked by the option's own parser. */
static int
read_alloc_conf(const struct ynode *n, const char *file,
    struct vp_optset *k, struct vp_diags *d)
{
	struct vp_buf err;
	union vp_optval v;
	const char *s;
	int rc = 0;

	if (ynode_string(n, file, "alloc-conf", &s, d) != 0)
		return -1;
	vp_buf_init(&err);
	if (vp_option_parse(VP_O_ALLOC_CONF, s, &v, &err) != 0) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "%s", err.s);
		rc = -1;
	} else {
		vp_optset_own(k, VP_O_ALLOC_CONF, s);
	}
	vp_buf_free(&err);
	return rc;
}

static int
read_targets(const struct ynode *n, const char *file, uint64_t *out,
    struct vp_diags *d)
{
	const char *s, *bad = NULL;
	unsigned bits;

	if (ynode_string(n, file, "lora-targets", &s, d) != 0)
		return -1;
	if (strcmp(s, "none") == 0) {
		*out = 0;
		return 0;
	}
	if (vp_lora_parse_targets(s, &bits, &bad) != 0) {
		struct vp_buf list;

		vp_buf_init(&list);
		vp_lora_targets_expect(&list);
		vp_diag_add(d, file, n->pos, VP_ERROR, "unknown 'lora-targets' "
		    "'%s' (a comma list of %s)", bad, list.s);
		vp_buf_free(&list);
		return -1;
	}
	*out = bits;
	return 0;
}

/* A version ("2.13"; YAML may read it as a number, so the scalar's text
 * is what counts) in the row's range. */
static int
read_version_value(const struct ynode *n, const char *file,
    const struct vp_optdef *od, uint64_t *out, struct vp_diags *d)
{
	unsigned v;

	if (n->kind != YN_SCALAR || vp_parse_version(n->str, &v) != 0 ||
	    v < od->min || v > od->max) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "'%s' must be %s, not "
		    "'%.32s'", od->name, od->expect, n->kind == YN_SCALAR ?
		    n->str : ynode_kind_name(n));
		return -1;
	}
	*out = v;
	return 0;
}

/* A number of a row that also takes 0 (off): nothing between. */
static int
check_zero_off(const struct ynode *n, const char *file,
    const struct vp_optdef *od, double x, struct vp_diags *d)
{
	if (!od->zero_off || x == 0 || x >= od->min)
		return 0;
	vp_diag_add(d, file, n->pos, VP_ERROR, "'%s' must be 0 (off) or a "
	    "number from %g to %g, not %g", od->name, od->min, od->max, x);
	return -1;
}

/* One value into k->val through the option table. */
static int
read_value(const struct ynode *n, const char *file, enum vp_optid key,
    struct vp_optset *k, struct vp_diags *d)
{
	const struct vp_optdef *od = &vp_options[key];
	union vp_optval *v = &k->val[key];
	double lo = od->zero_off ? 0 : od->min;

	switch (od->kind) {
	case VP_OK_ENUM:
		return ynode_enum(n, file, od->name, od->names, od->nnames,
		    &v->i, d);
	case VP_OK_U64:
		if (ynode_u64(n, file, od->name, (uint64_t)lo,
		    (uint64_t)od->max, &v->u, d) != 0)
			return -1;
		return check_zero_off(n, file, od, (double)v->u, d);
	case VP_OK_DOUBLE:
	case VP_OK_GIB:
		if (ynode_double(n, file, od->name, lo, od->max, &v->x, d) != 0)
			return -1;
		return check_zero_off(n, file, od, v->x, d);
	case VP_OK_FLAG:
		return ynode_bool(n, file, od->name, &v->b, d);
	case VP_OK_TARGETS:
		return read_targets(n, file, &v->u, d);
	case VP_OK_STRING:
		if (key == VP_O_ALLOC_CONF)
			return read_alloc_conf(n, file, k, d);
		assert(key == VP_O_GPUS);
		return read_gpus(n, file, k, d);
	case VP_OK_VERSION:
		return read_version_value(n, file, od, &v->u, d);
	}
	return -1;
}

/* The key of a name: a plan-file row of the option table (or an alias
 * of one, as older files wrote it), or -1. */
static int
find_key(const char *s)
{
	int k = vp_option_find(s);

	return k >= 0 && (vp_options[k].planfile ||
	    vp_options[k].alias_of != 0) ? k : -1;
}

static void
unknown_key(const struct ynode *kn, const char *file, struct vp_diags *d)
{
	const char *names[VP_O_COUNT + 1], *near;
	size_t n = 0;
	int k;

	for (k = 0; k < VP_O_COUNT; k++)
		if (vp_options[k].planfile)
			names[n++] = vp_options[k].name;
	names[n++] = VP_PLANFILE_VERSION_KEY;
	near = vp_closest(kn->str, names, n);

	if (near)
		vp_diag_add(d, file, kn->pos, VP_ERROR, "unknown key '%.64s' in "
		    "the plan; did you mean '%s'?", kn->str, near);
	else
		vp_diag_add(d, file, kn->pos, VP_ERROR, "unknown key '%.64s' in "
		    "the plan (the keys are the options of vramplan(1), e.g. "
		    "'precision')", kn->str);
}

/* Every key but the version: known, once, with a good value. */
static int
read_keys(const struct ynode *root, const char *file,
    struct vp_optset *k, struct vp_diags *d)
{
	size_t i;
	int bad = 0, key;

	for (i = 0; i + 1 < root->nkids; i += 2) {
		const struct ynode *kn = root->kids[i], *vn = root->kids[i + 1];

		if (kn->kind != YN_SCALAR) {
			vp_diag_add(d, file, kn->pos, VP_ERROR, "key must be a "
			    "plain name, not %s", ynode_kind_name(kn));
			bad = -1;
			continue;
		}
		if (strcmp(kn->str, VP_PLANFILE_VERSION_KEY) == 0)
			continue;
		if ((key = find_key(kn->str)) < 0) {
			unknown_key(kn, file, d);
			bad = -1;
			continue;
		}
		if (k->has[key]) {
			vp_diag_add(d, file, kn->pos, VP_ERROR, "duplicate key "
			    "'%s' in the plan (first at line %d)", kn->str,
			    k->pos[key].line);
			bad = -1;
			continue;
		}
		k->has[key] = true;
		k->pos[key] = vn->pos;
		if (read_value(vn, file, (enum vp_optid)key, k, d) != 0)
			bad = -1;
		else
			vp_optset_set(k, (enum vp_optid)key, &k->val[key]);
	}
	return bad;
}

int
vp_plan_from_doc(const struct ydoc *doc, struct vp_optset *k,
    struct vp_diags *d)
{
	const struct ynode *root = ydoc_root(doc);
	const char *file = ydoc_name(doc);

	vp_optset_init(k);
	k->file = xstrdup(file);
	if (root == NULL || ynode_is_null(root)) {
		vp_diag_add(d, file, (struct vp_srcpos){ 1, 1 }, VP_ERROR,
		    "empty plan file; expected a mapping with '%s: %d' and "
		    "the plan's options", VP_PLANFILE_VERSION_KEY,
		    VP_PLANFILE_VERSION);
		return -1;
	}
	if (root->kind != YN_MAP) {
		vp_diag_add(d, file, root->pos, VP_ERROR, "a plan file must be "
		    "a mapping of keys, not %s", ynode_kind_name(root));
		return -1;
	}
	/* The version first: a future format's keys would only confuse. */
	if (read_version(root, file, d) != 0)
		return -1;
	return read_keys(root, file, k, d);
}

int
vp_plan_load(const char *path, struct vp_optset *k, struct vp_diags *d)
{
	struct ydoc *doc = ydoc_load_as(path, "plan file", d);
	int rc;

	if (doc == NULL) {
		vp_optset_init(k);
		return -1;
	}
	rc = vp_plan_from_doc(doc, k, d);
	ydoc_free(doc);
	return rc;
}
