/* tui_layout.c — the TUI's layout and view model (see tui_layout.h). */
#include "tui_layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define X(e, s) s,
const char *const vp_panel_names[VP_PANEL_COUNT] = { VP_PANEL_LIST(X) };
#undef X

/* ---- layout ---------------------------------------------------------- */

/* Two columns from this size on (the knob panel needs 28 columns and
 * the memory panel about 36). */
#define WIDE_W 64
#define WIDE_BODY_H 10

/* A panel in a stack: its heights and the order it gets them in. */
struct want {
	enum vp_panel p;
	int min, pref, max;
	int prio;		/* 0 first */
};

/*
 * Heights for a column of panels: in priority order each gets its
 * minimum while that fits (one that does not is left out), then more up
 * to its preferred height, then up to its maximum.  Panels are placed top
 * down in array order; what is left stays blank at the bottom.
 */
/* What the card holds as the last estimate saw it (a calibrated profile
 * may have measured it), else the catalog's. */
static uint64_t
capacity(const struct vp_tui *t)
{
	if (t->ses->gpus != NULL && t->ses->gpus->gpu != NULL)
		return t->ses->gpus->gpu->usable_bytes;
	return t->gs->gpu->usable_bytes;
}

static void
stack(const struct want *w, int n, struct vp_rect area, struct vp_layout *out)
{
	int h[8] = { 0 }, order[8], left = area.h, i, j, pass, y = area.y;

	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && w[order[j]].prio < w[order[j - 1]].prio;
		    j--) {
			int k = order[j];

			order[j] = order[j - 1];
			order[j - 1] = k;
		}
	for (i = 0; i < n; i++)
		if (w[order[i]].min <= left) {
			h[order[i]] = w[order[i]].min;
			left -= h[order[i]];
		}
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n && left > 0; i++) {
			int k = order[i], to = pass ? w[k].max : w[k].pref;

			if (h[k] == 0 || h[k] >= to)
				continue;
			if (to - h[k] > left)
				to = h[k] + left;
			left -= to - h[k];
			h[k] = to;
		}
	for (i = 0; i < n; i++) {
		struct vp_rect *r = &out->p[w[i].p];

		if (h[i] == 0)
			continue;
		*r = (struct vp_rect){ area.x, y, area.w, h[i] };
		y += h[i];
	}
}

void
vp_tui_layout(int w, int h, struct vp_layout *out)
{
	struct vp_rect body;
	int top;

	memset(out, 0, sizeof *out);
	if (w < 1 || h < 1)
		return;
	out->p[VP_PANEL_STATUS] = (struct vp_rect){ 0, h - 1, w, 1 };
	top = h >= 3;
	if (top)
		out->p[VP_PANEL_HEADER] = (struct vp_rect){ 0, 0, w, 1 };
	body = (struct vp_rect){ 0, top, w, h - 1 - top };
	if (body.h <= 0)
		return;
	if (w >= WIDE_W && body.h >= WIDE_BODY_H) {
		static const struct want right[] = {
			{ VP_PANEL_MEMORY, 4, 12, 22, 0 },
			{ VP_PANEL_TIMELINE, 4, 5, 24, 2 },
			{ VP_PANEL_COST, 3, 5, 6, 1 },
		};
		int kw = w * 3 / 10;

		kw = kw < 28 ? 28 : kw > 34 ? 34 : kw;
		out->columns = true;
		out->p[VP_PANEL_KNOBS] = (struct vp_rect){ 0, body.y, kw,
		    body.h < VP_KNOB_COUNT + 1 ? body.h : VP_KNOB_COUNT + 1 };
		stack(right, 3, (struct vp_rect){ kw + 1, body.y, w - kw - 1,
		    body.h }, out);
	} else {
		static const struct want one[] = {
			{ VP_PANEL_MEMORY, 3, 8, 28, 0 },
			{ VP_PANEL_KNOBS, 3, 8, VP_KNOB_COUNT + 1, 1 },
			{ VP_PANEL_COST, 3, 5, 6, 2 },
			{ VP_PANEL_TIMELINE, 4, 6, 24, 3 },
		};

		stack(one, 4, body, out);
	}
}

struct vp_rect
vp_tui_overlay_rect(const struct vp_layout *l, int w, int h, int want)
{
	int top = l->p[VP_PANEL_HEADER].h, bh = h - 1 - top;
	int ow = w - 4 < 76 ? w - 4 : 76, oh = bh - 2 < want ? bh - 2 : want;

	/* Small screens: the whole width, at least five lines if there. */
	if (ow < 20)
		ow = w;
	if (oh < 5)
		oh = bh < 5 ? bh : 5;
	if (oh < 0)
		oh = 0;
	return (struct vp_rect){ (w - ow) / 2, top + (bh - oh) / 2, ow, oh };
}

/* ---- the cell grid --------------------------------------------------- */

void
vp_screen_init(struct vp_screen *s)
{
	memset(s, 0, sizeof *s);
}

void
vp_screen_free(struct vp_screen *s)
{
	free(s->cell);
	s->cell = NULL;
	s->w = s->h = 0;
}

void
vp_screen_resize(struct vp_screen *s, int w, int h)
{
	size_t n, i;

	if (w < 0)
		w = 0;
	if (h < 0)
		h = 0;
	n = (size_t)w * (size_t)h;
	if (w != s->w || h != s->h || s->cell == NULL) {
		free(s->cell);
		s->cell = xcalloc(n ? n : 1, sizeof *s->cell);
		s->w = w;
		s->h = h;
	}
	for (i = 0; i < n; i++) {
		s->cell[i].ch[0] = ' ';
		s->cell[i].ch[1] = '\0';
		s->cell[i].attr = VP_A_NORMAL;
	}
}

const struct vp_cell *
vp_screen_at(const struct vp_screen *s, int x, int y)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h)
		return NULL;
	return &s->cell[(size_t)y * (size_t)s->w + (size_t)x];
}

static struct vp_cell *
cell(struct vp_screen *s, const struct vp_rect *r, int col, int row)
{
	int x = r->x + col, y = r->y + row;

	if (col < 0 || row < 0 || col >= r->w || row >= r->h ||
	    x < 0 || y < 0 || x >= s->w || y >= s->h)
		return NULL;
	return &s->cell[(size_t)y * (size_t)s->w + (size_t)x];
}

/*
 * One character of UTF-8 text into out; returns the bytes it took.
 * Control characters and broken sequences show as '?'.  Every character
 * is taken as one cell wide: ours are, and names in model files are ASCII.
 */
static int
u8_char(const char *s, char out[5])
{
	uint32_t cp;
	size_t n = vp_utf8_len((const unsigned char *)s, &cp);

	/* Control characters (C0, DEL and C1, as in vp_esc) and bytes that
	 * are not UTF-8 (an overlong form, a surrogate) never reach the
	 * terminal: one '?' cell each, so the layout's widths hold. */
	if (n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
		out[0] = '?';
		out[1] = '\0';
		return n > 0 ? (int)n : 1;
	}
	memcpy(out, s, (size_t)n);
	out[n] = '\0';
	return n;
}

/* Text at (col, row) of r, clipped to r; returns the column after it. */
static int
put(struct vp_screen *s, const struct vp_rect *r, int col, int row,
    enum vp_attr a, const char *text)
{
	char ch[5];
	struct vp_cell *c;

	while (*text && col < r->w) {
		text += u8_char(text, ch);
		if ((c = cell(s, r, col, row)) != NULL) {
			memcpy(c->ch, ch, sizeof ch);
			c->attr = (uint8_t)a;
		}
		col++;
	}
	return col;
}

/* n cells of one character. */
static void
fill(struct vp_screen *s, const struct vp_rect *r, int col, int row, int n,
    enum vp_attr a, const char *ch)
{
	struct vp_cell *c;
	int i;

	for (i = 0; i < n; i++)
		if ((c = cell(s, r, col + i, row)) != NULL) {
			snprintf(c->ch, sizeof c->ch, "%s", ch);
			c->attr = (uint8_t)a;
		}
}

/* A whole row of r in one attribute (the selection, the header). */
static void
paint_row(struct vp_screen *s, const struct vp_rect *r, int row,
    enum vp_attr a)
{
	struct vp_cell *c;
	int i;

	for (i = 0; i < r->w; i++)
		if ((c = cell(s, r, i, row)) != NULL)
			c->attr = (uint8_t)a;
}

/* Right-aligned in a field of width cells ending at col + width. */
static void
put_right(struct vp_screen *s, const struct vp_rect *r, int col, int row,
    int width, enum vp_attr a, const char *text)
{
	int n = (int)strlen(text);

	put(s, r, col + (n < width ? width - n : 0), row, a, text);
}

/*
 * Cut text into lines of at most width cells at spaces (a word longer
 * than a line is cut where it must be): up to max lines, their starts
 * and lengths.  Returns the number of lines.
 */
static int
wrap(const char *text, int width, const char **start, int *len, int max)
{
	int n = 0;

	if (width < 1)
		return 0;
	while (*text && n < max) {
		int k = 0, cut = -1;

		while (text[k] && k < width) {
			if (text[k] == ' ')
				cut = k;
			k++;
		}
		if (text[k] && text[k] != ' ' && cut > 0)
			k = cut;
		start[n] = text;
		len[n++] = k;
		text += k;
		while (*text == ' ')
			text++;
	}
	return n;
}

/* Words wrapped into rows [row, row + nrows) of r; returns rows used. */
static int
put_wrapped(struct vp_screen *s, const struct vp_rect *r, int col, int row,
    int nrows, enum vp_attr a, const char *text)
{
	const char *start[64];
	int len[64], n, i;
	char line[512];

	n = wrap(text, r->w - col, start, len, nrows < 64 ? nrows : 64);
	for (i = 0; i < n; i++) {
		int k = len[i] < (int)sizeof line - 1 ? len[i] :
		    (int)sizeof line - 1;

		memcpy(line, start[i], (size_t)k);
		line[k] = '\0';
		put(s, r, col, row + i, a, line);
	}
	return n;
}

static void
title(struct vp_screen *s, const struct vp_rect *r, const char *text,
    const char *extra)
{
	int col = put(s, r, 0, 0, VP_A_TITLE, text);

	if (extra != NULL && *extra)
		put(s, r, col + 2, 0, VP_A_DIM, extra);
}

static void
buf_reset(struct vp_buf *b)
{
	b->len = 0;
	b->s[0] = '\0';
}

/* ---- header and status ---------------------------------------------- */

static void
draw_header(struct vp_tui *t, struct vp_screen *s, const struct vp_rect *r)
{
	const struct vp_session *ses = t->ses;
	const char *sep = t->unicode ? " · " : " | ";
	struct vp_param_count pc;
	struct vp_buf b;
	char c1[32], c2[32];
	int col;

	vp_model_params(ses->model, &pc);
	vp_buf_init(&b);
	vp_buf_printf(&b, " vramplan%s%s%s%s params", sep, ses->model->name,
	    sep, vp_fmt_count(c1, sizeof c1, pc.total));
	if (t->gs->gpu != NULL)
		vp_buf_printf(&b, "%s%u x %s (%s usable)", sep, t->gs->count,
		    t->gs->gpu->id, vp_fmt_bytes(c2, sizeof c2,
		    capacity(t)));
	else
		vp_buf_printf(&b, "%sno GPU set (g)", sep);
	if (t->valid) {
		vp_buf_add(&b, sep);
		vp_report_layout(&b, &ses->plan);
	}
	fill(s, r, 0, 0, r->w, VP_A_HEADER, " ");
	col = put(s, r, 0, 0, VP_A_HEADER, b.s);
	if (t->key_ms > 0) {
		buf_reset(&b);
		vp_buf_printf(&b, "key %.1f ms ", t->key_ms);
		if (col + 2 + (int)b.len <= r->w)
			put_right(s, r, 0, 0, r->w, VP_A_HEADER, b.s);
	}
	vp_buf_free(&b);
}

static const enum vp_attr level_attr[] = {
	[VP_LEVEL_INFO] = VP_A_NORMAL, [VP_LEVEL_GOOD] = VP_A_GOOD,
	[VP_LEVEL_WARN] = VP_A_WARN, [VP_LEVEL_BAD] = VP_A_BAD,
};

static void
draw_status(struct vp_tui *t, struct vp_screen *s, const struct vp_rect *r)
{
	struct vp_buf b;
	int col;

	vp_buf_init(&b);
	if (t->mode == VP_MODE_SAVE) {
		size_t len = strlen(t->input), room;

		col = put(s, r, 0, 0, VP_A_BOLD, "save plan to: ");
		/* The end of a long path, where the typing is. */
		room = r->w > col + 2 ? (size_t)(r->w - col - 2) : 0;
		col = put(s, r, col, 0, VP_A_NORMAL, t->input +
		    (len > room ? len - room : 0));
		put(s, r, col, 0, VP_A_SELECT, " ");
	} else if (t->msg[0] != '\0') {
		put(s, r, 0, 0, level_attr[t->msg_level], t->msg);
	} else if (!t->valid) {
		vp_buf_printf(&b, "not valid: %s", t->error);
		put(s, r, 0, 0, VP_A_BAD, b.s);
	} else {
		put(s, r, 0, 0, VP_A_DIM, t->unicode ?
		    "←→ change  ↑↓ knob  g GPU  m model  a plan  s save  "
		    "c command  ? help  q quit" :
		    "h/l change  j/k knob  g GPU  m model  a plan  s save  "
		    "c command  ? help  q quit");
	}
	vp_buf_free(&b);
}

/* ---- knobs ----------------------------------------------------------- */

#define LABEL_W 12

/* The planner chooses knob k now ("auto"). */
static bool
knob_open(const struct vp_tui *t, int k)
{
	struct vp_open o = t->open;
	bool *f = vp_knob_open(&o, (enum vp_knob)k);

	return f != NULL && *f;
}

static void
draw_knobs(struct vp_tui *t, struct vp_screen *s, const struct vp_rect *r)
{
	int rows = r->h - 1, i;
	struct vp_buf b;

	title(s, r, "Knobs", r->w >= 24 ? "auto: the planner's" : NULL);
	if (rows <= 0)
		return;
	if (t->sel < t->top)
		t->top = t->sel;
	if (t->sel >= t->top + rows)
		t->top = t->sel - rows + 1;
	if (t->top > VP_KNOB_COUNT - rows)
		t->top = VP_KNOB_COUNT - rows > 0 ? VP_KNOB_COUNT - rows : 0;
	vp_buf_init(&b);
	for (i = 0; i < rows && t->top + i < VP_KNOB_COUNT; i++) {
		int k = t->top + i, col;
		bool sel = k == t->sel;
		enum vp_attr a = VP_A_NORMAL;

		if (k == VP_KNOB_GPUS && t->gs->gpu == NULL)
			a = VP_A_DIM;
		buf_reset(&b);
		vp_knob_show(t, (enum vp_knob)k, &b);
		put(s, r, 0, 1 + i, a, sel ? (t->unicode ? "▸" : ">") : " ");
		put(s, r, 1, 1 + i, a, vp_knobs[k].label);
		col = put(s, r, 1 + LABEL_W, 1 + i, VP_A_BOLD, b.s);
		if (knob_open(t, k))
			put(s, r, col + 1, 1 + i, VP_A_DIM, "auto");
		if (sel)
			paint_row(s, r, 1 + i, VP_A_SELECT);
	}
	vp_buf_free(&b);
}

/* ---- memory ---------------------------------------------------------- */

/* The characters of the stacked bar's terms: colour tells them apart
 * where there is colour, the character where there is not. */
static const char *const seg_u8[] = { "█", "▓", "▒", "░" };
static const char *const seg_ascii[] = { "#", "%", "=", "+", "*", "o",
	":", "~" };

struct seg {
	const char *ch;
	enum vp_attr a;
};

/* The style of row i (a term, or what lies between the levels). */
static struct seg
row_seg(const struct vp_tui *t, const struct vp_row *rows, int i)
{
	int k, term = 0;
	bool after = false;

	for (k = 0; k < i; k++) {
		if (rows[k].total)
			after = true;
		else
			term++;
	}
	if (after)
		return (struct seg){ t->unicode ? "░" : ".", VP_A_DIM };
	return (struct seg){ t->unicode ? seg_u8[t->color ? 0 : term % 4] :
	    seg_ascii[term % 8], (enum vp_attr)(VP_A_TERM0 + term %
	    VP_TERM_ATTRS) };
}

enum mline { ML_BAR, ML_VERDICT, ML_ROW, ML_PEAK, ML_MAXMB };

struct mcand {
	enum mline kind;
	int row;		/* ML_ROW: the report row; ML_VERDICT: the
				 * line of the verdict */
	int prio;		/* higher is kept first */
	bool keep;
};

/*
 * Which lines the memory panel shows when it is short of room: the
 * verdict, the bar and the three levels first, then the terms by size,
 * the peak's place, what lies between the levels, the largest micro-
 * batch, and terms of zero bytes last.
 */
static int
memory_lines(const struct vp_tui *t, const struct vp_row *rows, int nrows,
    int room, int nverdict, struct mcand *c)
{
	bool card = t->gs->gpu != NULL;
	int n = 0, i, j, kept = 0, after = 0;

	c[n++] = (struct mcand){ ML_BAR, 0, 950, false };
	for (i = 0; i < nverdict; i++)
		c[n++] = (struct mcand){ ML_VERDICT, i, 1000 - 70 * i, false };
	for (i = 0; i < nrows; i++) {
		int p;

		if (rows[i].total)
			p = 900 - 10 * (2 - after++);
		else if (rows[i].bytes == 0)
			p = 100;
		else
			p = after ? 300 : 500;
		/* Larger rows first within a class. */
		for (j = 0; j < nrows; j++)
			if (!rows[j].total && rows[j].bytes < rows[i].bytes)
				p++;
		c[n++] = (struct mcand){ ML_ROW, i, p, false };
	}
	c[n++] = (struct mcand){ ML_PEAK, 0, 400, false };
	if (card)
		c[n++] = (struct mcand){ ML_MAXMB, 0, 200, false };
	while (kept < room) {
		int best = -1;

		for (i = 0; i < n; i++)
			if (!c[i].keep && (best < 0 ||
			    c[i].prio > c[best].prio))
				best = i;
		if (best < 0)
			break;
		c[best].keep = true;
		kept++;
	}
	return n;
}

static void
draw_bar(const struct vp_tui *t, struct vp_screen *s, const struct vp_rect *r,
    int row, const struct vp_row *rows, int nrows, int level)
{
	const struct vp_report *rep = &t->ses->rep;
	uint64_t scale = vp_report_scale(rep), cum = 0;
	int bw = r->w - 7, i, at;
	char pct[16];

	if (bw < 4 || scale == 0)
		return;
	put(s, r, 0, row, VP_A_DIM, t->unicode ? "▕" : "[");
	for (i = 0; i < nrows; i++) {
		struct seg g = row_seg(t, rows, i);
		int a, b;

		if (rows[i].total)
			continue;
		a = (int)lround((double)cum / (double)scale * bw);
		cum += rows[i].bytes;
		b = (int)lround((double)cum / (double)scale * bw);
		fill(s, r, 1 + a, row, b - a, g.a, g.ch);
	}
	if (t->gs->gpu != NULL) {
		/* The card's capacity: the right edge, or inside the bar
		 * when the plan needs more. */
		at = (int)lround((double)capacity(t) / (double)scale * bw);
		fill(s, r, 1 + (at < bw ? at : bw), row, 1, VP_A_CAP,
		    t->unicode ? "│" : "|");
		snprintf(pct, sizeof pct, "%.0f%%", 100.0 *
		    (double)rep->mem->device_peak / (double)capacity(t));
		put_right(s, r, bw + 2, row, 5, level == 2 ? VP_A_BAD :
		    level == 1 ? VP_A_WARN : VP_A_GOOD, pct);
	} else {
		fill(s, r, 1 + bw, row, 1, VP_A_DIM, t->unicode ? "▏" : "]");
	}
}

static void
draw_row(const struct vp_tui *t, struct vp_screen *s, const struct vp_rect *r,
    int line, const struct vp_row *rows, int i, int lw)
{
	const struct vp_report *rep = &t->ses->rep;
	uint64_t scale = vp_report_scale(rep);
	int bw = r->w - (4 + lw + 1 + 11 + 1);
	char b[32];
	struct vp_buf bar;
	struct seg g;

	vp_fmt_bytes(b, sizeof b, rows[i].bytes);
	if (rows[i].total) {
		put(s, r, 1, line, VP_A_BOLD, rows[i].label);
		put_right(s, r, 4 + lw, line, 12, VP_A_BOLD, b);
		/* A calibrated profile's error bar, as the text report. */
		if (rows[i].err_bytes && r->w >= 4 + lw + 12 + 14) {
			char e[40];

			vp_fmt_bytes(b, sizeof b, rows[i].err_bytes);
			snprintf(e, sizeof e, "%s %s", t->unicode ? "±" :
			    "+/-", b);
			put(s, r, 4 + lw + 13, line, VP_A_DIM, e);
		} else if (rows[i].band != NULL && r->w >= 4 + lw + 12 + 15) {
			struct vp_buf e;

			/* The band of the published runs, as the report. */
			vp_buf_init(&e);
			vp_report_band(rows[i].band, &e);
			put(s, r, 4 + lw + 12, line, VP_A_DIM, e.s);
			vp_buf_free(&e);
		}
		return;
	}
	g = row_seg(t, rows, i);
	put(s, r, 2, line, g.a, g.ch);
	put(s, r, 4, line, VP_A_NORMAL, rows[i].label);
	/* A label cut short ends in '~' so the cut shows. */
	if ((int)strlen(rows[i].label) > lw)
		fill(s, r, 4 + lw - 1, line, 1, VP_A_DIM, "~");
	fill(s, r, 4 + lw, line, r->w, VP_A_NORMAL, " ");
	put_right(s, r, 4 + lw, line, 12, VP_A_NORMAL, b);
	if (bw >= 4) {
		vp_buf_init(&bar);
		vp_report_bar(&bar, scale ? (double)rows[i].bytes /
		    (double)scale : 0, bw, t->unicode);
		put(s, r, 4 + lw + 13, line, g.a, bar.s);
		vp_buf_free(&bar);
	}
}

static void
draw_invalid(const struct vp_tui *t, struct vp_screen *s,
    const struct vp_rect *r)
{
	put(s, r, 0, 1, VP_A_BAD, "no estimate: the plan is not valid");
	put_wrapped(s, r, 0, 2, r->h - 2, VP_A_NORMAL, t->error);
}

static void
draw_memory(struct vp_tui *t, struct vp_screen *s, const struct vp_rect *r)
{
	const struct vp_report *rep = &t->ses->rep;
	struct vp_row rows[VP_REPORT_MAXROWS];
	struct mcand c[VP_REPORT_MAXROWS + 6];
	const char *vstart[3];
	int vlen[3], nv = 1;
	struct vp_buf b;
	int nrows, n, i, line = 1, lw = 0, level = 0, hidden = 0;
	char extra[64];

	if (!t->valid) {
		title(s, r, "Memory per GPU", NULL);
		draw_invalid(t, s, r);
		return;
	}
	nrows = vp_report_rows(rep, rows);
	vp_buf_init(&b);
	if (t->gs->gpu != NULL)
		level = vp_report_verdict(rep, &b);
	/* A verdict wider than the panel takes up to three lines. */
	if (t->gs->gpu != NULL)
		nv = wrap(b.s, r->w, vstart, vlen, 3);
	n = memory_lines(t, rows, nrows, r->h - 1, nv, c);
	for (i = 0; i < n; i++) {
		int len;

		if (c[i].kind != ML_ROW)
			continue;
		if (!c[i].keep) {
			hidden++;
			continue;
		}
		len = (int)strlen(rows[c[i].row].label);
		lw = len > lw ? len : lw;
	}
	/* Labels give way to bars down to 12 cells, then bars go. */
	if (lw > r->w - 4 - 13 - 12)
		lw = r->w - 4 - 13 - 12;
	if (lw < 14)
		lw = r->w - 4 - 13 > 14 ? 14 : r->w - 4 - 13;
	snprintf(extra, sizeof extra, hidden ? "(%d rows hidden)" :
	    t->gs->gpu ? "bars: share of the usable memory" :
	    "bars: share of the device peak", hidden);
	title(s, r, "Memory per GPU", r->w > 40 ? extra : NULL);
	for (i = 0; i < n && line < r->h; i++) {
		if (!c[i].keep)
			continue;
		switch (c[i].kind) {
		case ML_BAR:
			draw_bar(t, s, r, line, rows, nrows, level);
			break;
		case ML_VERDICT:
			if (t->gs->gpu != NULL) {
				char v[256];
				int k = vlen[c[i].row] < (int)sizeof v - 1 ?
				    vlen[c[i].row] : (int)sizeof v - 1;

				memcpy(v, vstart[c[i].row], (size_t)k);
				v[k] = '\0';
				put(s, r, 0, line, level == 2 ? VP_A_BAD :
				    level == 1 ? VP_A_WARN : VP_A_GOOD, v);
			} else {
				put(s, r, 0, line, VP_A_DIM, "no card: no "
				    "verdict (g picks one)");
			}
			break;
		case ML_ROW:
			draw_row(t, s, r, line, rows, c[i].row, lw);
			break;
		case ML_PEAK:
			buf_reset(&b);
			vp_report_peak(&b, rep->mem);
			put(s, r, 1, line, VP_A_DIM, b.s);
			break;
		case ML_MAXMB:
			buf_reset(&b);
			vp_report_max_mb(rep, &b);
			put(s, r, 1, line, VP_A_DIM, b.s);
			break;
		}
		line++;
	}
	vp_buf_free(&b);
}

/* ---- timeline -------------------------------------------------------- */

static const enum vp_attr phase_attr[VP_PHASE_COUNT] = {
	[VP_PHASE_FORWARD] = VP_A_FWD, [VP_PHASE_LOSS] = VP_A_LOSS,
	[VP_PHASE_BACKWARD] = VP_A_BWD, [VP_PHASE_OPTIMIZER] = VP_A_OPT,
};
static const char *const phase_short[VP_PHASE_COUNT] = {
	[VP_PHASE_FORWARD] = "fwd", [VP_PHASE_LOSS] = "loss",
	[VP_PHASE_BACKWARD] = "bwd", [VP_PHASE_OPTIMIZER] = "opt",
};

/* The points behind column c of w: the largest, its phase, the peak. */
static uint64_t
column(const struct vp_timeline *tl, int c, int w, int *phase, bool *peak)
{
	size_t a = (size_t)c * tl->n / (size_t)w, b = (size_t)(c + 1) *
	    tl->n / (size_t)w, i;
	uint64_t v = 0;

	if (b <= a)
		b = a + 1;
	*phase = tl->phase[a];
	*peak = false;
	for (i = a; i < b && i < tl->n; i++) {
		if (tl->live[i] >= v) {
			v = tl->live[i];
			*phase = tl->phase[i];
		}
		*peak |= i == tl->peak;
	}
	return v;
}

static void
draw_timeline(struct vp_tui *t, struct vp_screen *s, const struct vp_rect *r)
{
	static const char *const eighth[] = { " ", "▁", "▂", "▃", "▄", "▅",
	    "▆", "▇", "█" };
	const struct vp_timeline *tl = &t->tl;
	int rows = r->h - 2, c, run = 0, last = -1;
	uint64_t top, lo;
	size_t i;
	char b[32], b2[32], head[128];

	if (!t->valid || tl->n == 0) {
		title(s, r, "Timeline", "no estimate");
		return;
	}
	/*
	 * The chart spans the step's lowest to highest point: the weights
	 * and states held throughout would flatten it otherwise.  The title
	 * says where it starts.
	 */
	top = tl->live[tl->peak];
	for (i = 0, lo = top; i < tl->n; i++)
		lo = tl->live[i] < lo ? tl->live[i] : lo;
	snprintf(head, sizeof head, "%s to %s, peak in %s", vp_fmt_bytes(b2,
	    sizeof b2, lo), vp_fmt_bytes(b, sizeof b,
	    t->ses->mem.allocated_peak),
	    vp_phase_names[t->ses->mem.peak_phase]);
	title(s, r, "Timeline", head);
	if (rows < 1 || top == 0)
		return;
	for (c = 0; c < r->w; c++) {
		int ph, eighths, k;
		bool peak;
		uint64_t v = column(tl, c, r->w, &ph, &peak);

		/* At least an eighth, so the lowest point still shows. */
		eighths = 1 + (int)lround((double)(v - lo) /
		    (double)(top > lo ? top - lo : 1) * (rows * 8 - 1));
		for (k = 0; k < rows; k++) {
			int e = eighths - 8 * k;
			enum vp_attr a = peak ? VP_A_PEAK : phase_attr[ph];

			if (e <= 0)
				break;
			if (!t->unicode)
				fill(s, r, c, r->h - 2 - k, 1, a, e >= 8 ? "#" :
				    e >= 4 ? "+" : ".");
			else
				fill(s, r, c, r->h - 2 - k, 1, a,
				    eighth[e > 8 ? 8 : e]);
		}
		/* The axis: the phase runs, named where there is room, and
		 * the peak's column. */
		if (ph != last) {
			int len = 0, cc, p2;
			bool pk;

			for (cc = c; cc < r->w; cc++, len++) {
				column(tl, cc, r->w, &p2, &pk);
				if (p2 != ph)
					break;
			}
			run = len > (int)strlen(phase_short[ph]) + 1 ? 1 : 0;
			if (run)
				put(s, r, c, r->h - 1, phase_attr[ph],
				    phase_short[ph]);
			last = ph;
		}
		if (cell(s, r, c, r->h - 1) != NULL &&
		    strcmp(cell(s, r, c, r->h - 1)->ch, " ") == 0)
			fill(s, r, c, r->h - 1, 1, phase_attr[ph], t->unicode ?
			    "─" : "-");
		if (peak)
			fill(s, r, c, r->h - 1, 1, VP_A_PEAK, t->unicode ?
			    "▲" : "^");
	}
}

/* ---- time and cost --------------------------------------------------- */

static const char *
usd(char *b, size_t n, double v)
{
	if (!isnan(v) && v < 100)
		snprintf(b, n, "$%.2f", v);
	else
		vp_report_usd(b, n, v);
	return b;
}

/* A price's date when it is one (2026-09-25), not a note. */
static bool
dated(const struct vp_price *pr)
{
	return pr->date != NULL && strlen(pr->date) <= 10;
}

static void
draw_cost(struct vp_tui *t, struct vp_screen *s, const struct vp_rect *r)
{
	const struct vp_cand *c = t->ses->rep.chosen;
	const struct vp_gpu *g = t->gs->gpu;
	const struct vp_price *pr;
	unsigned world = vp_tui_world(t);
	double per = vp_tui_price(g, &pr), hours;
	char b1[32], b2[32], b3[32];
	struct vp_buf b;
	int line = 1;

	title(s, r, "Time and cost", NULL);
	if (!t->valid)
		return;
	if (g == NULL) {
		put(s, r, 0, line, VP_A_DIM, "no card, no time model (g picks "
		    "one)");
		return;
	}
	if (c == NULL || isnan(c->tokens_per_second)) {
		put_wrapped(s, r, 0, line, r->h - 1, VP_A_DIM, "no time model: "
		    "the catalog has no dense throughput for this precision "
		    "on this card");
		return;
	}
	vp_buf_init(&b);
	vp_report_time(&b, c);
	if (c->bandwidth_bound)
		vp_buf_add(&b, " (bandwidth-bound)");
	put(s, r, 0, line++, VP_A_NORMAL, b.s);
	hours = t->tokens / c->tokens_per_second / 3600.0;
	buf_reset(&b);
	if (isnan(per))
		vp_buf_printf(&b, "no price for %s in the catalog", g->id);
	else
		vp_buf_printf(&b, "%s/GPU-h, %s/h for %u GPU%s (%s%s%s)",
		    usd(b1, sizeof b1, per), usd(b2, sizeof b2, per * world),
		    world, world == 1 ? "" : "s", pr->provider ?
		    pr->provider : "catalog", dated(pr) ? ", " : "",
		    dated(pr) ? pr->date : "");
	put(s, r, 0, line++, VP_A_NORMAL, b.s);
	if (!isnan(per)) {
		buf_reset(&b);
		vp_buf_printf(&b, "%s per billion tokens", usd(b1, sizeof b1,
		    per * world / (c->tokens_per_second * 3600.0) * 1e9));
		put(s, r, 0, line++, VP_A_NORMAL, b.s);
	}
	buf_reset(&b);
	vp_buf_printf(&b, "%s tokens: %s on %u GPU%s", vp_fmt_count(b1,
	    sizeof b1, (uint64_t)t->tokens), vp_report_hours(b2, sizeof b2,
	    hours), world, world == 1 ? "" : "s");
	if (!isnan(per))
		vp_buf_printf(&b, ", %s", usd(b3, sizeof b3, hours * world *
		    per));
	put(s, r, 0, line++, VP_A_BOLD, b.s);
	vp_buf_free(&b);
}

/* ---- overlays -------------------------------------------------------- */

/* A framed box; returns the rectangle inside the frame. */
static struct vp_rect
frame(const struct vp_tui *t, struct vp_screen *s, struct vp_rect r,
    const char *name)
{
	const char *h = t->unicode ? "─" : "-", *v = t->unicode ? "│" : "|";
	int i;

	for (i = 0; i < r.h; i++)
		fill(s, &r, 0, i, r.w, VP_A_NORMAL, " ");
	fill(s, &r, 0, 0, r.w, VP_A_BOLD, h);
	fill(s, &r, 0, r.h - 1, r.w, VP_A_BOLD, h);
	for (i = 0; i < r.h; i++) {
		fill(s, &r, 0, i, 1, VP_A_BOLD, v);
		fill(s, &r, r.w - 1, i, 1, VP_A_BOLD, v);
	}
	fill(s, &r, 0, 0, 1, VP_A_BOLD, t->unicode ? "┌" : "+");
	fill(s, &r, r.w - 1, 0, 1, VP_A_BOLD, t->unicode ? "┐" : "+");
	fill(s, &r, 0, r.h - 1, 1, VP_A_BOLD, t->unicode ? "└" : "+");
	fill(s, &r, r.w - 1, r.h - 1, 1, VP_A_BOLD, t->unicode ? "┘" : "+");
	put(s, &r, 2, 0, VP_A_TITLE, name);
	return (struct vp_rect){ r.x + 2, r.y + 1, r.w - 4 > 0 ? r.w - 4 : 0,
	    r.h - 2 > 0 ? r.h - 2 : 0 };
}

static const char *const help_lines[] = {
	"Up Down, k j     choose a knob",
	"Left Right, h l  change it (+ and - too)",
	"PgUp PgDn        change it in big steps",
	"g                pick a GPU: type to search, Enter picks",
	"m                switch the model (the library)",
	"a                run the planner, apply its best plan",
	"u                let the planner choose this knob again",
	"s                save the plan (vramplan MODEL --plan FILE)",
	"c                the equivalent command line",
	"Ctrl-L           redraw        ?  this help     q  quit",
	"",
	"Changing a planner knob (TP, SP, PP, CP, EP, ZeRO/FSDP,",
	"recompute, grad-accum) pins it; 'auto' ones are the planner's.",
	"The mouse: click a knob to select it, again to step it up;",
	"the wheel steps the knob under it.",
};

static void
draw_help(const struct vp_tui *t, struct vp_screen *s, struct vp_rect r)
{
	struct vp_rect in = frame(t, s, r, " Keys ");
	size_t i;

	for (i = 0; i < VP_NELEM(help_lines); i++)
		put(s, &in, 0, (int)i, VP_A_NORMAL, help_lines[i]);
}

static void
draw_command(const struct vp_tui *t, struct vp_screen *s,
    const struct vp_layout *l)
{
	struct vp_rect r, in;
	struct vp_planfile f;
	struct vp_buf b;
	const char *start[64];
	int len[64], used;

	vp_buf_init(&b);
	vp_tui_planfile(t, &f);
	vp_planfile_cmdline(&f, &b);
	/* As high as the wrapped command needs. */
	r = vp_tui_overlay_rect(l, s->w, s->h, 1);
	used = wrap(b.s, r.w - 4, start, len, 64);
	r = vp_tui_overlay_rect(l, s->w, s->h, used + 4);
	in = frame(t, s, r, " Command line ");
	used = put_wrapped(s, &in, 0, 0, in.h - 1, VP_A_BOLD, b.s);
	put(s, &in, 0, used + 1, VP_A_DIM, "any key closes this");
	vp_buf_free(&b);
}

/* The height of the list overlays. */
#define LIST_H 22

/* Where a list's lines go inside the overlay: first row, how many. */
static void
list_geometry(const struct vp_tui *t, struct vp_rect *lines)
{
	struct vp_layout l;
	struct vp_rect r;

	vp_tui_layout(t->w, t->h, &l);
	r = vp_tui_overlay_rect(&l, t->w, t->h, LIST_H);
	/* Inside the frame: the search line, then the list. */
	*lines = (struct vp_rect){ r.x + 2, r.y + 2, r.w - 4 > 0 ? r.w - 4 :
	    0, r.h - 3 > 0 ? r.h - 3 : 0 };
}

static void
draw_list(struct vp_tui *t, struct vp_screen *s, struct vp_rect r)
{
	size_t idx[1024], n, i;
	struct vp_rect in, lines;
	struct vp_buf b;
	int rows;

	in = frame(t, s, r, t->mode == VP_MODE_GPU ? " Pick a GPU " :
	    " Switch the model ");
	list_geometry(t, &lines);
	put(s, &in, 0, 0, VP_A_BOLD, "search: ");
	put(s, &in, put(s, &in, 8, 0, VP_A_NORMAL, t->input), 0, VP_A_SELECT,
	    " ");
	n = t->mode == VP_MODE_GPU ? vp_tui_gpu_matches(t, idx,
	    VP_NELEM(idx)) : vp_tui_model_matches(t, idx, VP_NELEM(idx));
	rows = lines.h;
	if (t->pick >= (int)n)
		t->pick = n ? (int)n - 1 : 0;
	if (t->pick < t->pick_top)
		t->pick_top = t->pick;
	if (rows > 0 && t->pick >= t->pick_top + rows)
		t->pick_top = t->pick - rows + 1;
	if (n == 0)
		put(s, &lines, 0, 0, VP_A_DIM, "nothing matches");
	vp_buf_init(&b);
	for (i = 0; (int)i < rows && (size_t)t->pick_top + i < n; i++) {
		size_t k = idx[(size_t)t->pick_top + i];

		buf_reset(&b);
		if (t->mode == VP_MODE_GPU) {
			const struct vp_gpu *g = &t->cat->v[k];
			const struct vp_price *pr;
			double per = vp_tui_price(g, &pr);
			char c1[32], c2[32];

			vp_buf_printf(&b, "%-18s %-30.30s %10s  %s", g->id,
			    g->name ? g->name : "", vp_fmt_bytes(c1, sizeof c1,
			    g->usable_bytes), isnan(per) ? "no price" :
			    (snprintf(c2, sizeof c2, "$%.2f/h", per), c2));
		} else {
			vp_buf_add(&b, t->models[k]);
		}
		put(s, &lines, 0, (int)i, VP_A_NORMAL, b.s);
		if ((int)((size_t)t->pick_top + i) == t->pick)
			paint_row(s, &lines, (int)i, VP_A_SELECT);
	}
	vp_buf_free(&b);
}

/* ---- the whole view -------------------------------------------------- */

void
vp_tui_draw(struct vp_tui *t, struct vp_screen *s)
{
	struct vp_layout l;
	const struct vp_rect *p = l.p;

	vp_screen_resize(s, s->w, s->h);
	t->w = s->w;
	t->h = s->h;
	vp_tui_layout(s->w, s->h, &l);
	if (p[VP_PANEL_HEADER].h)
		draw_header(t, s, &p[VP_PANEL_HEADER]);
	if (p[VP_PANEL_KNOBS].h)
		draw_knobs(t, s, &p[VP_PANEL_KNOBS]);
	if (p[VP_PANEL_MEMORY].h)
		draw_memory(t, s, &p[VP_PANEL_MEMORY]);
	if (p[VP_PANEL_TIMELINE].h)
		draw_timeline(t, s, &p[VP_PANEL_TIMELINE]);
	if (p[VP_PANEL_COST].h)
		draw_cost(t, s, &p[VP_PANEL_COST]);
	if (p[VP_PANEL_STATUS].h)
		draw_status(t, s, &p[VP_PANEL_STATUS]);
	switch (t->mode) {
	case VP_MODE_HELP:
		draw_help(t, s, vp_tui_overlay_rect(&l, s->w, s->h,
		    (int)VP_NELEM(help_lines) + 2));
		break;
	case VP_MODE_COMMAND:
		draw_command(t, s, &l);
		break;
	case VP_MODE_GPU:
	case VP_MODE_MODEL:
		draw_list(t, s, vp_tui_overlay_rect(&l, s->w, s->h, LIST_H));
		break;
	default:
		break;
	}
}

int
vp_tui_knob_at(const struct vp_tui *t, int x, int y)
{
	struct vp_layout l;
	const struct vp_rect *r;
	int row;

	vp_tui_layout(t->w, t->h, &l);
	r = &l.p[VP_PANEL_KNOBS];
	if (r->h == 0 || x < r->x || x >= r->x + r->w || y <= r->y ||
	    y >= r->y + r->h)
		return -1;
	row = t->top + (y - r->y - 1);
	return row < VP_KNOB_COUNT ? row : -1;
}

int
vp_tui_pick_at(const struct vp_tui *t, int x, int y)
{
	struct vp_rect lines;

	list_geometry(t, &lines);
	if (x < lines.x || x >= lines.x + lines.w || y < lines.y ||
	    y >= lines.y + lines.h)
		return -1;
	return t->pick_top + (y - lines.y);
}

void
vp_tui_locate(const struct vp_tui *t, struct vp_tui_event *ev)
{
	ev->knob = vp_tui_knob_at(t, ev->x, ev->y);
	ev->pick = vp_tui_pick_at(t, ev->x, ev->y);
}
