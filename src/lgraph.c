/* lgraph.c — layer-graph models: shapes, parameters, checks (lgraph.h). */
#include "lgraph.h"

#include <stdio.h>
#include <stdlib.h>

#include "util.h"

#define X(e, s) s,
const char *const vp_ltype_names[VP_L_COUNT] = { VP_LTYPE_LIST(X) };
const char *const vp_lloss_names[VP_LLOSS_COUNT] = { VP_LLOSS_LIST(X) };
#undef X

static void
seq_free(struct vp_lseq *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		seq_free(&s->v[i].body);
		seq_free(&s->v[i].shortcut);
		seq_free(&s->v[i].after);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

void
vp_lgraph_free(struct vp_lgraph *lg)
{
	if (lg == NULL)
		return;
	seq_free(&lg->layers);
	free(lg);
}

/*
 * torch.nn's output size of a convolution or pooling window along one
 * side: floor((n + 2 p - d (k - 1) - 1) / s) + 1 (ceil_mode off); 0 when
 * the window does not fit.
 */
static uint64_t
window_out(uint64_t n, uint32_t k, uint32_t s, uint32_t p, uint32_t d)
{
	uint64_t span = (uint64_t)d * (k - 1) + 1, padded = n + 2 * (uint64_t)p;

	if (padded < span || s == 0)
		return 0;
	return (padded - span) / s + 1;
}

int
vp_layer_shape(const struct vp_layer *l, struct vp_lshape in,
    struct vp_lshape *out, char *err, size_t n)
{
	const char *name = vp_ltype_names[l->type];

	*out = in;
	switch (l->type) {
	case VP_L_CONV2D:
	case VP_L_MAXPOOL2D:
	case VP_L_AVGPOOL2D:
		if (in.flat) {
			snprintf(err, n, "%s needs an image (channels x height "
			    "x width), not a flat vector of %llu features",
			    name, (unsigned long long)in.c);
			return -1;
		}
		if (l->type == VP_L_CONV2D) {
			if (in.c % l->groups || l->out % l->groups) {
				snprintf(err, n, "conv2d groups %u must divide "
				    "the input channels (%llu) and the output "
				    "channels (%llu)", l->groups,
				    (unsigned long long)in.c,
				    (unsigned long long)l->out);
				return -1;
			}
			out->c = l->out;
		}
		if (l->type != VP_L_CONV2D && 2 * (uint64_t)l->padding >
		    l->kernel) {
			snprintf(err, n, "%s padding %u is more than half its "
			    "kernel (%u)", name, l->padding, l->kernel);
			return -1;
		}
		out->h = window_out(in.h, l->kernel, l->stride, l->padding,
		    l->dilation);
		out->w = window_out(in.w, l->kernel, l->stride, l->padding,
		    l->dilation);
		if (out->h == 0 || out->w == 0) {
			snprintf(err, n, "%s kernel %u does not fit its %llux%llu "
			    "input (with padding %u); use a larger --image",
			    name, l->kernel, (unsigned long long)in.h,
			    (unsigned long long)in.w, l->padding);
			return -1;
		}
		return 0;
	case VP_L_ADAPTIVE_AVGPOOL2D:
		if (in.flat) {
			snprintf(err, n, "%s needs an image, not a flat vector",
			    name);
			return -1;
		}
		out->h = out->w = l->out;
		return 0;
	case VP_L_BATCHNORM2D:
		if (in.flat) {
			snprintf(err, n, "batchnorm2d needs an image, not a flat "
			    "vector (use layernorm)");
			return -1;
		}
		return 0;
	case VP_L_GROUPNORM:
		if (in.c % l->ngroups) {
			snprintf(err, n, "groupnorm groups %u must divide the "
			    "channels (%llu)", l->ngroups,
			    (unsigned long long)in.c);
			return -1;
		}
		return 0;
	case VP_L_LAYERNORM:
	case VP_L_LINEAR:
		if (!in.flat) {
			snprintf(err, n, "%s works on a flat vector; put a "
			    "flatten (after a pooling to 1x1) before it", name);
			return -1;
		}
		if (l->type == VP_L_LINEAR)
			out->c = l->out;
		return 0;
	case VP_L_FLATTEN:
		out->c = in.flat ? in.c : vp_mul_sat(in.c, vp_mul_sat(in.h,
		    in.w));
		out->h = out->w = 1;
		out->flat = true;
		return 0;
	case VP_L_RELU:
	case VP_L_GELU:
	case VP_L_SILU:
	case VP_L_TANH:
	case VP_L_SIGMOID:
	case VP_L_DROPOUT:
		return 0;
	case VP_L_RESIDUAL:
	case VP_L_COUNT:
		break;
	}
	snprintf(err, n, "internal: no shape rule for %s", name);
	return -1;
}

struct walk {
	const char *file;
	struct vp_diags *d;
	int err;
	double macs;
};

static struct vp_lshape walk_seq(struct walk *w, const struct vp_lseq *s,
    struct vp_lshape in);

static int
lshape_eq(struct vp_lshape a, struct vp_lshape b)
{
	return a.flat == b.flat && a.c == b.c && (a.flat || (a.h == b.h &&
	    a.w == b.w));
}

static void
shape_str(char *b, size_t n, struct vp_lshape s)
{
	if (s.flat)
		snprintf(b, n, "%llu features", (unsigned long long)s.c);
	else
		snprintf(b, n, "%llux%llux%llu", (unsigned long long)s.c,
		    (unsigned long long)s.h, (unsigned long long)s.w);
}

static struct vp_lshape
walk_layer(struct walk *w, const struct vp_layer *l, struct vp_lshape in)
{
	struct vp_lshape out = in, body, sc;
	char msg[200], b1[64], b2[64];

	if (w->err)
		return in;
	if (l->type == VP_L_RESIDUAL) {
		uint32_t r;

		for (r = 0; r < l->repeat && !w->err; r++) {
			body = walk_seq(w, &l->body, out);
			sc = walk_seq(w, &l->shortcut, out);
			if (w->err)
				return in;
			if (!lshape_eq(body, sc)) {
				shape_str(b1, sizeof b1, body);
				shape_str(b2, sizeof b2, sc);
				vp_diag_add(w->d, w->file, l->pos, VP_ERROR,
				    "residual: the layers give %s but the "
				    "shortcut %s%s; add a shortcut that matches "
				    "(e.g. a 1x1 conv2d with the stride)", b1,
				    b2, l->shortcut.n ? "" : " (identity)");
				w->err = 1;
				return in;
			}
			out = walk_seq(w, &l->after, body);
		}
		return out;
	}
	if (vp_layer_shape(l, in, &out, msg, sizeof msg) != 0) {
		vp_diag_add(w->d, w->file, l->pos, VP_ERROR, "%s", msg);
		w->err = 1;
		return in;
	}
	if (l->type == VP_L_CONV2D)
		w->macs += (double)out.c * (double)out.h * (double)out.w *
		    (double)(in.c / l->groups) * l->kernel * l->kernel;
	else if (l->type == VP_L_LINEAR)
		w->macs += (double)in.c * (double)out.c;
	return out;
}

static struct vp_lshape
walk_seq(struct walk *w, const struct vp_lseq *s, struct vp_lshape in)
{
	size_t i;

	for (i = 0; i < s->n && !w->err; i++)
		in = walk_layer(w, &s->v[i], in);
	return in;
}

/* Parameters and buffers of a sequence, with its input channels (or
 * features) in *c, updated as the layers go. */
struct pcount {
	uint64_t params, buf_float, buf_int64;
};

static void
count_all(const struct vp_lgraph *lg, uint64_t image, struct pcount *pc);

int
vp_lgraph_check(const struct vp_lgraph *lg, uint64_t image, const char *file,
    struct vp_diags *d)
{
	struct walk w = { file, d, 0, 0 };
	struct vp_lshape in = { lg->channels, image, image, false }, out;

	out = walk_seq(&w, &lg->layers, in);
	if (w.err)
		return -1;
	if (!out.flat) {
		char b[64];

		shape_str(b, sizeof b, out);
		vp_diag_add(d, file, lg->layers.v[lg->layers.n - 1].pos,
		    VP_ERROR, "the last layer gives %s; %s needs flat logits "
		    "(end with flatten and a linear over the classes)", b,
		    vp_lloss_names[lg->loss]);
		return -1;
	}
	/* A linear after a flatten of a map whose size follows the
	 * resolution would need other weights: PyTorch refuses the input. */
	if (image != lg->image) {
		struct pcount a = { 0, 0, 0 }, b = { 0, 0, 0 };

		count_all(lg, image, &a);
		count_all(lg, lg->image, &b);
		if (a.params != b.params) {
			vp_diag_add(d, file, lg->layers.v[0].pos, VP_ERROR,
			    "at %llux%llu the layers after a flatten get other "
			    "sizes than at the model's %llux%llu (a linear's "
			    "inputs change): its weights cannot take these images",
			    (unsigned long long)image, (unsigned long long)image,
			    (unsigned long long)lg->image,
			    (unsigned long long)lg->image);
			return -1;
		}
	}
	if (out.c < 2) {
		vp_diag_add(d, file, lg->layers.v[lg->layers.n - 1].pos,
		    VP_ERROR, "%s needs at least 2 classes, the last layer "
		    "gives %llu", vp_lloss_names[lg->loss],
		    (unsigned long long)out.c);
		return -1;
	}
	return 0;
}

double
vp_lgraph_macs(const struct vp_lgraph *lg, uint64_t image)
{
	struct vp_diags d = { NULL, 0, 0 };
	struct walk w = { "", &d, 0, 0 };
	struct vp_lshape in = { lg->channels, image, image, false };

	(void)walk_seq(&w, &lg->layers, in);
	vp_diags_clear(&d);
	return w.err ? 0 : w.macs;
}


static void
count_seq(const struct vp_lseq *s, uint64_t *c, struct pcount *pc);

static void
count_layer(const struct vp_layer *l, uint64_t *c, struct pcount *pc)
{
	uint64_t in = *c;
	uint32_t r;

	switch (l->type) {
	case VP_L_CONV2D:
		pc->params += l->out * (in / (l->groups ? l->groups : 1)) *
		    l->kernel * l->kernel + (l->bias ? l->out : 0);
		*c = l->out;
		break;
	case VP_L_LINEAR:
		pc->params += in * l->out + (l->bias ? l->out : 0);
		*c = l->out;
		break;
	case VP_L_BATCHNORM2D:
		pc->params += l->affine ? 2 * in : 0;
		pc->buf_float += 2 * in;	/* running mean and var */
		pc->buf_int64 += 1;		/* num_batches_tracked */
		break;
	case VP_L_LAYERNORM:
	case VP_L_GROUPNORM:
		pc->params += l->affine ? 2 * in : 0;
		break;
	case VP_L_RESIDUAL:
		for (r = 0; r < l->repeat; r++) {
			uint64_t cb = *c, cs = *c;

			count_seq(&l->body, &cb, pc);
			count_seq(&l->shortcut, &cs, pc);
			*c = cb;
			count_seq(&l->after, c, pc);
		}
		break;
	default:
		break;
	}
}

static void
count_seq(const struct vp_lseq *s, uint64_t *c, struct pcount *pc)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		count_layer(&s->v[i], c, pc);
}

/*
 * Counting needs the features a flatten makes (c x h x w); the count
 * walks the shapes at the model's resolution for that, so a linear after
 * a flatten of a 7x7 map counts 49 times the channels.
 */

uint64_t
vp_lgraph_params(const struct vp_lgraph *lg)
{
	struct pcount pc = { 0, 0, 0 };

	count_all(lg, lg->image, &pc);
	return pc.params;
}

void
vp_lgraph_buffers(const struct vp_lgraph *lg, uint64_t *float_elems,
    uint64_t *int64_count)
{
	struct pcount pc = { 0, 0, 0 };

	count_all(lg, lg->image, &pc);
	*float_elems = pc.buf_float;
	*int64_count = pc.buf_int64;
}

/* Shape-aware count: a sequence walked with full shapes, so that the
 * features after flatten are right. */
static void
count_shaped(const struct vp_lseq *s, struct vp_lshape *sh,
    struct pcount *pc)
{
	size_t i;
	char msg[8];

	for (i = 0; i < s->n; i++) {
		const struct vp_layer *l = &s->v[i];
		struct vp_lshape out = *sh;
		uint64_t c = sh->c;
		uint32_t r;

		if (l->type == VP_L_RESIDUAL) {
			for (r = 0; r < l->repeat; r++) {
				struct vp_lshape b = *sh, sc = *sh;

				count_shaped(&l->body, &b, pc);
				count_shaped(&l->shortcut, &sc, pc);
				*sh = b;
				count_shaped(&l->after, sh, pc);
			}
			continue;
		}
		count_layer(l, &c, pc);
		if (vp_layer_shape(l, *sh, &out, msg, sizeof msg) == 0)
			*sh = out;
		else
			sh->c = c;
	}
}

static void
count_all(const struct vp_lgraph *lg, uint64_t image, struct pcount *pc)
{
	struct vp_lshape sh = { lg->channels, image, image, false };

	count_shaped(&lg->layers, &sh, pc);
}

static uint64_t
count_type(const struct vp_lseq *s, enum vp_ltype t)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct vp_layer *l = &s->v[i];

		if (l->type == t)
			n += t == VP_L_RESIDUAL ? l->repeat : 1;
		if (l->type == VP_L_RESIDUAL)
			n += (uint64_t)l->repeat * (count_type(&l->body, t) +
			    count_type(&l->shortcut, t) +
			    count_type(&l->after, t));
	}
	return n;
}

uint64_t
vp_lgraph_count(const struct vp_lgraph *lg, enum vp_ltype t)
{
	return count_type(&lg->layers, t);
}
