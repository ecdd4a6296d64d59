/* plan_read.c — the plan file reader (see plan_read.h). */
#include "plan_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every key the file may hold, the version key last, for "did you mean". */
#define X(e, s) s,
static const char *const key_names[] = { VP_PK_LIST(X)
    VP_PLANFILE_VERSION_KEY };
#undef X

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
read_gpus(const struct ynode *n, const char *file, struct vp_plan_knobs *k,
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
	k->gpus = xstrdup(s);
	return 0;
}

static int
read_targets(const struct ynode *n, const char *file, unsigned *out,
    struct vp_diags *d)
{
	const char *s, *bad = NULL;

	if (ynode_string(n, file, "lora-targets", &s, d) != 0)
		return -1;
	if (strcmp(s, "none") == 0) {
		*out = 0;
		return 0;
	}
	if (vp_lora_parse_targets(s, out, &bad) != 0) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "unknown 'lora-targets' "
		    "'%s' (a comma list of q, k, v, o, gate, up, down, or "
		    "all-linear)", bad);
		return -1;
	}
	return 0;
}

/* One value into k->plan through the key table. */
static int
read_value(const struct ynode *n, const char *file, enum vp_pk key,
    struct vp_plan_knobs *k, struct vp_diags *d)
{
	const struct vp_pk_info *ki = &vp_pk_info[key];
	char *field = (char *)&k->plan + ki->off;
	uint64_t u;
	unsigned w;
	double x;
	bool b;
	int e;

	switch (ki->kind) {
	case VP_PKK_ENUM:
		if (ynode_enum(n, file, ki->name, ki->names, ki->nnames, &e,
		    d) != 0)
			return -1;
		vp_pk_set_enum(&k->plan, key, e);
		return 0;
	case VP_PKK_DTYPE:
		if (ynode_enum(n, file, ki->name, ki->names, ki->nnames, &e,
		    d) != 0)
			return -1;
		k->plan.lora_dtype = e ? VP_BF16 : VP_FP32;
		return 0;
	case VP_PKK_U64:
		if (ynode_u64(n, file, ki->name, (uint64_t)ki->min,
		    (uint64_t)ki->max, &u, d) != 0)
			return -1;
		memcpy(field, &u, sizeof u);
		return 0;
	case VP_PKK_UINT:
		if (ynode_u64(n, file, ki->name, (uint64_t)ki->min,
		    (uint64_t)ki->max, &u, d) != 0)
			return -1;
		w = (unsigned)u;
		memcpy(field, &w, sizeof w);
		return 0;
	case VP_PKK_DOUBLE:
		if (ynode_double(n, file, ki->name, ki->min, ki->max, &x,
		    d) != 0)
			return -1;
		if (key == VP_PK_CAPACITY && x > 0 && x < 1) {
			vp_diag_add(d, file, n->pos, VP_ERROR, "'%s' must be "
			    "0 (dropless) or a number from 1 to 16, not %g",
			    ki->name, x);
			return -1;
		}
		memcpy(field, &x, sizeof x);
		return 0;
	case VP_PKK_BOOL:
		if (ynode_bool(n, file, ki->name, &b, d) != 0)
			return -1;
		memcpy(field, &b, sizeof b);
		return 0;
	case VP_PKK_GPUS:
		return read_gpus(n, file, k, d);
	case VP_PKK_TARGETS:
		return read_targets(n, file, &k->plan.lora_targets, d);
	case VP_PKK_GIB:
		if (ynode_double(n, file, ki->name, ki->min, ki->max, &x,
		    d) != 0)
			return -1;
		k->plan.host_mem_bytes = (uint64_t)(x * VP_GIB);
		return 0;
	}
	return -1;
}

static int
find_key(const char *s)
{
	int k;

	for (k = 0; k < VP_PK_COUNT; k++)
		if (strcmp(s, vp_pk_names[k]) == 0)
			return k;
	return -1;
}

static void
unknown_key(const struct ynode *kn, const char *file, struct vp_diags *d)
{
	const char *near = vp_closest(kn->str, key_names,
	    VP_NELEM(key_names));

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
    struct vp_plan_knobs *k, struct vp_diags *d)
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
		if (read_value(vn, file, (enum vp_pk)key, k, d) != 0)
			bad = -1;
	}
	return bad;
}

int
vp_plan_from_doc(const struct ydoc *doc, struct vp_plan_knobs *k,
    struct vp_diags *d)
{
	const struct ynode *root = ydoc_root(doc);
	const char *file = ydoc_name(doc);

	vp_plan_knobs_init(k);
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
vp_plan_load(const char *path, struct vp_plan_knobs *k, struct vp_diags *d)
{
	struct ydoc *doc = ydoc_load(path, d);
	int rc;

	if (doc == NULL) {
		vp_plan_knobs_init(k);
		return -1;
	}
	rc = vp_plan_from_doc(doc, k, d);
	ydoc_free(doc);
	return rc;
}
