/* log.c — see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct vp_log_entry *
add(struct vp_log *log)
{
	struct vp_log_entry *e;

	if (log->n == log->cap) {
		log->cap = log->cap ? log->cap * 2 : 8;
		log->v = xreallocarray(log->v, log->cap, sizeof *log->v);
	}
	e = &log->v[log->n++];
	memset(e, 0, sizeof *e);
	return e;
}

void
vp_logf(struct vp_log *log, const char *fmt, ...)
{
	static const struct {
		const char *prefix;
		enum vp_level level;
	} levels[] = {
		{ "vramplan: note: ", VP_NOTE },
		{ "vramplan: warning: ", VP_WARNING },
		{ "vramplan: ", VP_ERROR },
	};
	struct vp_log_entry *e;
	struct vp_buf b;
	const char *m;
	size_t i, len;
	va_list ap;

	vp_buf_init(&b);
	va_start(ap, fmt);
	vp_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (log == NULL) {
		fputs(b.s, stderr);
		vp_buf_free(&b);
		return;
	}
	e = add(log);
	e->level = VP_ERROR;
	m = b.s;
	for (i = 0; i < VP_NELEM(levels); i++)
		if (strncmp(b.s, levels[i].prefix,
		    strlen(levels[i].prefix)) == 0) {
			e->level = levels[i].level;
			m = b.s + strlen(levels[i].prefix);
			break;
		}
	len = strlen(m);
	while (len > 0 && m[len - 1] == '\n')
		len--;
	e->msg = xstrdup(m);
	e->msg[len] = '\0';
	e->text = b.s;
}

void
vp_log_diags(struct vp_log *log, struct vp_diags *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		struct vp_diags one = { &d->v[i], 1, 1 };
		struct vp_buf b, t;

		vp_buf_init(&b);
		vp_buf_init(&t);
		vp_diags_format(&one, &b);
		/* File names and the values they quote are the user's
		 * text: control characters escaped (util.h: vp_esc),
		 * newlines kept, as vp_cli_print_diags does. */
		vp_buf_add_esc(&t, b.s, 1);
		vp_buf_free(&b);
		if (log == NULL) {
			fputs(t.s, stderr);
			vp_buf_free(&t);
			continue;
		}
		{
			struct vp_log_entry *e = add(log);
			const struct vp_diag *g = &d->v[i];

			e->level = g->level;
			e->file = g->file ? xstrdup(g->file) : NULL;
			e->line = g->line;
			e->col = g->col;
			e->msg = xstrdup(g->msg);
			e->text = t.s;
		}
	}
	vp_diags_clear(d);
}

void
vp_log_format(const struct vp_log *log, struct vp_buf *out)
{
	size_t i;

	for (i = 0; i < log->n; i++)
		vp_buf_add(out, log->v[i].text);
}

size_t
vp_log_count(const struct vp_log *log, enum vp_level level)
{
	size_t i, n = 0;

	for (i = 0; i < log->n; i++)
		if (log->v[i].level == level)
			n++;
	return n;
}

void
vp_log_free(struct vp_log *log)
{
	size_t i;

	if (log == NULL)
		return;
	for (i = 0; i < log->n; i++) {
		free(log->v[i].file);
		free(log->v[i].msg);
		free(log->v[i].text);
	}
	free(log->v);
	log->v = NULL;
	log->n = log->cap = 0;
}
