/* diag.c — see diag.h. */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>

static const char *const level_names[] = { "error", "warning", "note" };

void
vp_diag_add(struct vp_diags *d, const char *file, struct vp_srcpos pos,
    enum vp_level level, const char *fmt, ...)
{
	struct vp_diag *g;
	struct vp_buf b;
	va_list ap;

	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 8;
		d->v = xreallocarray(d->v, d->cap, sizeof *d->v);
	}
	g = &d->v[d->n++];
	g->file = file ? xstrdup(file) : NULL;
	g->line = pos.line;
	g->col = pos.col;
	g->level = level;
	vp_buf_init(&b);
	va_start(ap, fmt);
	vp_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	g->msg = b.s;
}

size_t
vp_diags_count(const struct vp_diags *d, enum vp_level level)
{
	size_t i, n = 0;

	for (i = 0; i < d->n; i++)
		if (d->v[i].level == level)
			n++;
	return n;
}

void
vp_diags_clear(struct vp_diags *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

void
vp_diags_format(const struct vp_diags *d, struct vp_buf *out)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct vp_diag *g = &d->v[i];

		vp_buf_add(out, "vramplan: ");
		if (g->file != NULL) {
			vp_buf_add(out, g->file);
			if (g->line > 0)
				vp_buf_printf(out, ":%d:%d", g->line, g->col);
			vp_buf_add(out, ": ");
		}
		vp_buf_printf(out, "%s: %s\n", level_names[g->level], g->msg);
	}
}
