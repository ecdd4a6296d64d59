/*
 * lgraph_read.c — the `layers:` list of a layer-graph model file
 * (vramplan-model(5), LAYER GRAPHS) into a struct vp_lgraph.
 *
 * Shell side (reads the YAML tree).  Strict like the own schema: an
 * unknown layer or key is an error with a "did you mean", every number
 * has a range, and the defaults are torch.nn's.
 */
#include "lgraph_read.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_CHANNELS (1u << 20)
#define MAX_KERNEL 1024
#define MAX_REPEAT 4096
#define MAX_IMAGE 65536

/* The keys each layer kind takes (NULL-terminated). */
static const char *const *const layer_keys[VP_L_COUNT] = {
	[VP_L_CONV2D] = (const char *const[]){ "out", "kernel", "stride",
	    "padding", "dilation", "groups", "bias", NULL },
	[VP_L_BATCHNORM2D] = (const char *const[]){ "affine", NULL },
	[VP_L_LAYERNORM] = (const char *const[]){ "affine", NULL },
	[VP_L_GROUPNORM] = (const char *const[]){ "groups", "affine", NULL },
	[VP_L_LINEAR] = (const char *const[]){ "out", "bias", NULL },
	[VP_L_RELU] = (const char *const[]){ "inplace", NULL },
	[VP_L_GELU] = (const char *const[]){ NULL },
	[VP_L_SILU] = (const char *const[]){ NULL },
	[VP_L_TANH] = (const char *const[]){ NULL },
	[VP_L_SIGMOID] = (const char *const[]){ NULL },
	[VP_L_MAXPOOL2D] = (const char *const[]){ "kernel", "stride",
	    "padding", NULL },
	[VP_L_AVGPOOL2D] = (const char *const[]){ "kernel", "stride",
	    "padding", NULL },
	[VP_L_ADAPTIVE_AVGPOOL2D] = (const char *const[]){ "out", NULL },
	[VP_L_FLATTEN] = (const char *const[]){ NULL },
	[VP_L_DROPOUT] = (const char *const[]){ "p", NULL },
	[VP_L_RESIDUAL] = (const char *const[]){ "repeat", "layers",
	    "shortcut", "after", NULL },
};

static size_t
nkeys(const char *const *k)
{
	size_t n = 0;

	while (k[n] != NULL)
		n++;
	return n;
}

static int read_seq(const struct ynode *n, const char *file,
    const char *what, struct vp_lseq *s, unsigned depth, struct vp_diags *d);

/* A whole number under key, if present. */
static int
opt_u32(const struct ynode *map, const char *file, const char *key,
    uint64_t min, uint64_t max, uint32_t *out, struct vp_diags *d)
{
	const struct ynode *v = map ? ynode_get(map, key) : NULL;
	uint64_t u;

	if (v == NULL)
		return 0;
	if (ynode_u64(v, file, key, min, max, &u, d) != 0)
		return -1;
	*out = (uint32_t)u;
	return 0;
}

static int
opt_bool(const struct ynode *map, const char *file, const char *key,
    bool *out, struct vp_diags *d)
{
	const struct ynode *v = map ? ynode_get(map, key) : NULL;

	return v == NULL ? 0 : ynode_bool(v, file, key, out, d);
}

static int
need(const struct ynode *map, const char *file, struct vp_srcpos pos,
    const char *type, const char *key, const char *hint, struct vp_diags *d)
{
	if (map != NULL && ynode_get(map, key) != NULL)
		return 0;
	vp_diag_add(d, file, pos, VP_ERROR, "%s needs '%s' (%s)", type, key,
	    hint);
	return -1;
}

/* One item: `NAME` or `NAME: {key: value, ...}`. */
static int
read_layer(const struct ynode *item, const char *file, struct vp_layer *l,
    unsigned depth, struct vp_diags *d)
{
	const struct ynode *tn, *args = NULL;
	const char *tname;
	int t, rc = 0;
	uint32_t out32 = 0;

	memset(l, 0, sizeof *l);
	l->pos = item->pos;
	if (item->kind == YN_MAP && item->nkids == 2) {
		tn = item->kids[0];
		args = item->kids[1];
		if (ynode_is_null(args))
			args = NULL;
		else if (ynode_want(args, YN_MAP, file, tn->kind == YN_SCALAR ?
		    tn->str : "layer", d) != 0)
			return -1;
	} else if (item->kind == YN_SCALAR) {
		tn = item;
	} else {
		vp_diag_add(d, file, item->pos, VP_ERROR, "a layer is a name "
		    "(relu) or a name with its settings (conv2d: {out: 64, "
		    "kernel: 3}), not %s", item->kind == YN_MAP ?
		    "a mapping of several keys" : ynode_kind_name(item));
		return -1;
	}
	if (ynode_enum(tn, file, "layer", vp_ltype_names, VP_L_COUNT, &t, d))
		return -1;
	l->type = (enum vp_ltype)t;
	tname = vp_ltype_names[t];
	if (args != NULL && ynode_check_keys(args, file, tname, layer_keys[t],
	    nkeys(layer_keys[t]), d) != 0)
		return -1;
	/* torch.nn's defaults. */
	l->stride = l->dilation = l->groups = 1;
	l->bias = l->affine = true;
	l->repeat = 1;
	switch (l->type) {
	case VP_L_CONV2D:
		rc |= need(args, file, l->pos, tname, "out",
		    "the output channels, e.g. 64", d);
		rc |= need(args, file, l->pos, tname, "kernel",
		    "the kernel side, e.g. 3", d);
		rc |= opt_u32(args, file, "out", 1, MAX_CHANNELS, &out32, d);
		rc |= opt_u32(args, file, "kernel", 1, MAX_KERNEL, &l->kernel, d);
		rc |= opt_u32(args, file, "stride", 1, MAX_KERNEL, &l->stride, d);
		rc |= opt_u32(args, file, "padding", 0, MAX_KERNEL, &l->padding,
		    d);
		rc |= opt_u32(args, file, "dilation", 1, MAX_KERNEL,
		    &l->dilation, d);
		rc |= opt_u32(args, file, "groups", 1, MAX_CHANNELS, &l->groups,
		    d);
		rc |= opt_bool(args, file, "bias", &l->bias, d);
		break;
	case VP_L_LINEAR:
		rc |= need(args, file, l->pos, tname, "out",
		    "the output features, e.g. 1000", d);
		rc |= opt_u32(args, file, "out", 1, MAX_CHANNELS, &out32, d);
		rc |= opt_bool(args, file, "bias", &l->bias, d);
		break;
	case VP_L_BATCHNORM2D:
	case VP_L_LAYERNORM:
		rc |= opt_bool(args, file, "affine", &l->affine, d);
		break;
	case VP_L_GROUPNORM:
		rc |= need(args, file, l->pos, tname, "groups",
		    "the channel groups, e.g. 32", d);
		rc |= opt_u32(args, file, "groups", 1, MAX_CHANNELS,
		    &l->ngroups, d);
		rc |= opt_bool(args, file, "affine", &l->affine, d);
		break;
	case VP_L_RELU:
		rc |= opt_bool(args, file, "inplace", &l->inplace, d);
		break;
	case VP_L_MAXPOOL2D:
	case VP_L_AVGPOOL2D:
		rc |= need(args, file, l->pos, tname, "kernel",
		    "the window side, e.g. 3", d);
		rc |= opt_u32(args, file, "kernel", 1, MAX_KERNEL, &l->kernel, d);
		l->stride = l->kernel;
		rc |= opt_u32(args, file, "stride", 1, MAX_KERNEL, &l->stride, d);
		rc |= opt_u32(args, file, "padding", 0, MAX_KERNEL, &l->padding,
		    d);
		break;
	case VP_L_ADAPTIVE_AVGPOOL2D:
		out32 = 1;
		rc |= opt_u32(args, file, "out", 1, MAX_IMAGE, &out32, d);
		break;
	case VP_L_DROPOUT:
		l->p = 0.5;
		if (args != NULL && ynode_get(args, "p") != NULL)
			rc |= ynode_double(ynode_get(args, "p"), file, "p", 0.0,
			    0.99, &l->p, d);
		break;
	case VP_L_RESIDUAL:
		rc |= need(args, file, l->pos, tname, "layers",
		    "the block's layers, a list", d);
		rc |= opt_u32(args, file, "repeat", 1, MAX_REPEAT, &l->repeat,
		    d);
		if (rc)
			break;
		rc |= read_seq(ynode_get(args, "layers"), file,
		    "residual 'layers'", &l->body, depth + 1, d);
		if (ynode_get(args, "shortcut") != NULL &&
		    !ynode_is_null(ynode_get(args, "shortcut")))
			rc |= read_seq(ynode_get(args, "shortcut"), file,
			    "residual 'shortcut'", &l->shortcut, depth + 1, d);
		if (ynode_get(args, "after") != NULL &&
		    !ynode_is_null(ynode_get(args, "after")))
			rc |= read_seq(ynode_get(args, "after"), file,
			    "residual 'after'", &l->after, depth + 1, d);
		break;
	default:
		break;
	}
	l->out = out32;
	return rc ? -1 : 0;
}

static int
read_seq(const struct ynode *n, const char *file, const char *what,
    struct vp_lseq *s, unsigned depth, struct vp_diags *d)
{
	size_t i;
	int rc = 0;

	if (ynode_want(n, YN_SEQ, file, what, d) != 0)
		return -1;
	if (n->nkids == 0) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "%s is empty; list at "
		    "least one layer", what);
		return -1;
	}
	if (depth > 8) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "residual groups nest "
		    "deeper than 8");
		return -1;
	}
	s->v = xcalloc(n->nkids, sizeof *s->v);
	s->n = n->nkids;
	for (i = 0; i < n->nkids; i++)
		if (read_layer(n->kids[i], file, &s->v[i], depth, d) != 0)
			rc = -1;
	return rc;
}

static const char *const input_keys[] = { "channels", "image" };

int
vp_lgraph_read(const struct ynode *root, const char *file,
    struct vp_lgraph **out, struct vp_diags *d)
{
	struct vp_lgraph *lg = xcalloc(1, sizeof *lg);
	const struct ynode *in = ynode_get(root, "input"),
	    *loss = ynode_get(root, "loss");
	int rc = 0, e;

	*out = lg;
	lg->channels = 3;
	lg->image = 224;
	lg->loss = VP_LLOSS_CROSS_ENTROPY;
	if (in != NULL) {
		if (ynode_want(in, YN_MAP, file, "input", d) != 0 ||
		    ynode_check_keys(in, file, "'input'", input_keys,
		    VP_NELEM(input_keys), d) != 0)
			return -1;
		if (ynode_get(in, "channels") != NULL)
			rc |= ynode_u64(ynode_get(in, "channels"), file,
			    "channels", 1, MAX_CHANNELS, &lg->channels, d);
		if (ynode_get(in, "image") != NULL)
			rc |= ynode_u64(ynode_get(in, "image"), file, "image", 1,
			    MAX_IMAGE, &lg->image, d);
	}
	if (loss != NULL) {
		if (ynode_enum(loss, file, "loss", vp_lloss_names,
		    VP_LLOSS_COUNT, &e, d) != 0)
			rc = -1;
		else
			lg->loss = (enum vp_lloss)e;
	}
	if (read_seq(ynode_get(root, "layers"), file, "'layers'", &lg->layers,
	    0, d) != 0)
		rc = -1;
	if (rc == 0)
		rc = vp_lgraph_check(lg, lg->image, file, d);
	return rc;
}
