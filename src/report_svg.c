/* report_svg.c — the estimate's picture (see report_svg.h). */
#include "report_svg.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "svg.h"

/* The picture's frame: width, margins, the timeline's plot box. */
#define W 960.0
#define L 70.0			/* left of the plots */
#define R 250.0			/* right margin: the level labels */
#define TOP 122.0		/* top of the timeline's plot */
#define PH 300.0		/* height of the timeline's plot */
#define PW (W - L - R)

/* The terms, bottom to top (inputs are drawn with the activations). */
static const enum vp_cat order[] = { VP_CAT_WEIGHTS, VP_CAT_ADAPTER,
	VP_CAT_FP8, VP_CAT_MASTER, VP_CAT_GRADS, VP_CAT_OPTIM, VP_CAT_CAST,
	VP_CAT_ACT, VP_CAT_LOGITS, VP_CAT_TRANSIENT };

static const char *const phase_fill[VP_PHASE_COUNT] = {
	"#eef3fb", "#fbeeee", "#eefbf0", "#fbf5e6",
};

static const char *const LEVEL_FRAG = "#c8c8c8";
static const char *const LEVEL_OUTSIDE = "#707070";

static uint64_t
term_at(const uint64_t *term, enum vp_cat c)
{
	if (c == VP_CAT_ACT)
		return term[VP_CAT_ACT] + term[VP_CAT_INPUT];
	return term[c];
}

static double
gib(uint64_t b)
{
	return (double)b / VP_GIB;
}

/* A tick step of 1, 2 or 5 times a power of ten giving 4 to 10 ticks. */
static double
tick_step(double top)
{
	double p = pow(10, floor(log10(top > 0 ? top : 1))), s[] = { 0.1, 0.2,
	    0.5, 1, 2, 5 };
	size_t i;

	for (i = 0; i < VP_NELEM(s); i++)
		if (top / (s[i] * p) <= 10)
			return s[i] * p;
	return 10 * p;
}

struct frame {
	double top_gib;		/* the y axis' top */
	size_t n;		/* timeline points */
	/* Where point i starts (x[n]: the plot's right end).  A phase that
	 * is only a few events long (the optimizer step, the loss) would be
	 * a hair wide in proportion: each run of one phase is at least
	 * MINRUN wide, the others share the rest in proportion. */
	double x[VP_TIMELINE_MAX + 1];
	bool widened;		/* some run was */
};
#define MINRUN 70.0

static void
frame_x(struct frame *f, const struct vp_timeline *tl)
{
	size_t a, b, i, small = 0, big_pts = 0;
	double rest;

	f->widened = false;
	for (a = 0; a < tl->n; a = b) {
		for (b = a; b < tl->n && tl->phase[b] == tl->phase[a]; b++)
			;
		if ((double)(b - a) / (double)tl->n * PW < MINRUN)
			small++;
		else
			big_pts += b - a;
	}
	rest = PW - MINRUN * (double)small;
	if (small == 0 || big_pts == 0 || rest < PW / 2) {
		for (i = 0; i <= tl->n; i++)
			f->x[i] = L + (double)i / (double)tl->n * PW;
		return;
	}
	f->widened = true;
	f->x[0] = L;
	for (a = 0; a < tl->n; a = b) {
		double w;

		for (b = a; b < tl->n && tl->phase[b] == tl->phase[a]; b++)
			;
		w = (double)(b - a) / (double)tl->n * PW < MINRUN ? MINRUN :
		    (double)(b - a) / (double)big_pts * rest;
		for (i = a; i < b; i++)
			f->x[i + 1] = f->x[a] + w * (double)(i + 1 - a) /
			    (double)(b - a);
	}
	f->x[tl->n] = L + PW;
}

static double
ypos(const struct frame *f, uint64_t b)
{
	return TOP + PH - gib(b) / f->top_gib * PH;
}

static double
xpos(const struct frame *f, size_t i)
{
	return f->x[i];
}

/* A horizontal level across the plot with its label on the right. */
static void
level(struct vp_buf *o, const struct frame *f, uint64_t b, const char *color,
    bool dashed, const char *label, double dy)
{
	char t[160];
	double y = ypos(f, b);

	vp_buf_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	    "stroke=\"%s\" stroke-width=\"1.5\"%s/>\n", L, y, L + PW, y, color,
	    dashed ? " stroke-dasharray=\"6 3\"" : "");
	snprintf(t, sizeof t, "%s %.1f GiB", label, gib(b));
	vp_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">", L + PW + 6,
	    y + 4 + dy, color);
	vp_svg_text(o, t);
	vp_buf_add(o, "</text>\n");
}

static void
title(const struct vp_report *r, struct vp_buf *o)
{
	const struct vp_plan *p = r->plan;
	char t[512], e[VP_ESC_LEN];
	struct vp_buf lay;

	if (r->gpus != NULL)
		snprintf(t, sizeof t, "Memory of one training step: %s on "
		    "%u x %s", vp_esc(r->model->name, e, sizeof e),
		    r->gpus->count, r->gpus->gpu->id);
	else
		snprintf(t, sizeof t, "Memory of one training step: %s",
		    vp_esc(r->model->name, e, sizeof e));
	vp_svg_label(o, 20, 28, NULL, 16, t);
	vp_buf_init(&lay);
	vp_report_layout(&lay, p);
	vp_buf_printf(&lay, ", recompute %s, micro-batch %llu x %llu tokens, "
	    "grad-accum %llu, %s, %s", vp_recomp_names[p->recompute],
	    (unsigned long long)p->micro_batch, (unsigned long long)p->seq,
	    (unsigned long long)p->grad_accum, vp_prec_names[p->precision],
	    vp_opt_names[p->optimizer]);
	if (p->lora_rank)
		vp_buf_printf(&lay, ", LoRA rank %u", p->lora_rank);
	if (p->quant != VP_QUANT_NONE)
		vp_buf_printf(&lay, ", %s base", vp_quant_names[p->quant]);
	if (p->offload != VP_OFFLOAD_NONE)
		vp_buf_printf(&lay, ", offload %s", vp_offload_names[p->offload]);
	vp_svg_label(o, 20, 48, NULL, 0, lay.s);
	vp_buf_free(&lay);
	if (r->nstages > 1)
		snprintf(t, sizeof t, "Allocated bytes per GPU through the step "
		    "of pipeline stage %u of %u (the worst), by term",
		    r->worst_stage, r->nstages);
	else
		snprintf(t, sizeof t, "Allocated bytes %s through the step, by "
		    "term", p->device == VP_DEVICE_CUDA ? "per GPU" :
		    "on the CPU");
	vp_svg_label(o, 20, 72, NULL, 13, t);
}

/* The phases: a shaded column per run of points of one phase, named
 * when there is room. */
static void
phases(struct vp_buf *o, const struct frame *f, const struct vp_timeline *tl)
{
	size_t a = 0, b;

	while (a < tl->n) {
		double x0, x1;

		for (b = a; b < tl->n && tl->phase[b] == tl->phase[a]; b++)
			;
		x0 = xpos(f, a);
		x1 = xpos(f, b);
		vp_svg_rect(o, x0, TOP, x1 - x0, PH, phase_fill[tl->phase[a]]);
		if (x1 - x0 >= 6.5 * (double)strlen(vp_phase_names[
		    tl->phase[a]]) + 6)
			vp_svg_label(o, (x0 + x1) / 2, TOP + 14, "middle", 0,
			    vp_phase_names[tl->phase[a]]);
		a = b;
	}
}

/* The stacked areas, one polygon per term that is ever non-zero. */
static void
areas(struct vp_buf *o, const struct frame *f, const struct vp_timeline *tl)
{
	uint64_t base[VP_TIMELINE_MAX] = { 0 };
	size_t c, i;

	for (c = 0; c < VP_NELEM(order); c++) {
		bool any = false;

		for (i = 0; i < tl->n && !any; i++)
			any = term_at(tl->term[i], order[c]) > 0;
		if (!any)
			continue;
		vp_buf_printf(o, "<path fill=\"%s\" d=\"M%.1f %.1f",
		    vp_svg_term_color(order[c]), xpos(f, 0), ypos(f, base[0]));
		/* The top edge, left to right, a step per point... */
		for (i = 0; i < tl->n; i++)
			vp_buf_printf(o, "V%.1fH%.1f", ypos(f, base[i] +
			    term_at(tl->term[i], order[c])), xpos(f, i + 1));
		/* ... and back along the bottom. */
		for (i = tl->n; i-- > 0;) {
			vp_buf_printf(o, "V%.1fH%.1f", ypos(f, base[i]),
			    xpos(f, i));
			base[i] += term_at(tl->term[i], order[c]);
		}
		vp_buf_add(o, " Z\"/>\n");
	}
}

static void
axes(struct vp_buf *o, const struct frame *f, const struct vp_timeline *tl)
{
	double step = tick_step(f->top_gib), v;
	char t[192];

	vp_svg_line(o, L, TOP + PH, L + PW, TOP + PH, "black");
	vp_svg_line(o, L, TOP, L, TOP + PH, "black");
	for (v = 0; v <= f->top_gib + 1e-9; v += step) {
		double y = TOP + PH - v / f->top_gib * PH;

		vp_svg_line(o, L - 4, y, L, y, "black");
		snprintf(t, sizeof t, "%g", v);
		vp_svg_label(o, L - 7, y + 4, "end", 0, t);
	}
	vp_buf_printf(o, "<text x=\"18\" y=\"%.1f\" transform=\"rotate(-90 18 "
	    "%.1f)\" text-anchor=\"middle\">GiB</text>\n", TOP + PH / 2,
	    TOP + PH / 2);
	snprintf(t, sizeof t, "the step, event by event (%llu replay events, "
	    "the largest of %llu a column%s)", (unsigned long long)tl->events,
	    (unsigned long long)tl->per_point, f->widened ? "; short phases "
	    "widened" : "");
	vp_svg_label(o, L + PW / 2, TOP + PH + 18, "middle", 0, t);
}

/* The allocated peak: its point marked, its band across the plot; its
 * value, where and how well it is known above the plot. */
static void
peak(const struct vp_report *r, struct vp_buf *o, const struct frame *f,
    const struct vp_timeline *tl)
{
	const struct vp_mem *m = r->mem;
	const struct vp_band *b = &r->band[VP_LVL_ALLOCATED];
	uint64_t lo = vp_band_low(m->allocated_peak, b),
	    hi = vp_band_high(m->allocated_peak, b);
	double x = (xpos(f, tl->peak) + xpos(f, tl->peak + 1)) / 2,
	    y = ypos(f, tl->live[tl->peak]);
	char t[256];

	vp_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
	    "height=\"%.1f\" fill=\"#d0462a\" fill-opacity=\"0.18\"/>\n", L,
	    ypos(f, hi), PW, ypos(f, lo) - ypos(f, hi));
	vp_buf_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	    "stroke=\"#d0462a\" stroke-dasharray=\"3 3\"/>\n", x, TOP, x,
	    TOP + PH);
	vp_buf_printf(o, "<path d=\"M%.1f %.1f l-6 -10 l12 0 Z\" "
	    "fill=\"#d0462a\"/>\n", x, y - 2);
	/* Named at the top of its line, under the phase's name. */
	vp_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
	    "fill=\"#d0462a\">peak</text>\n", x > L + PW / 2 ? x - 4 : x + 4,
	    TOP + 30, x > L + PW / 2 ? "end" : "start");
	snprintf(t, sizeof t, "Allocated peak %.2f GiB (%s) in the %s phase%s%s",
	    gib(m->allocated_peak), r->plan->device == VP_DEVICE_CUDA ?
	    "torch.cuda.max_memory_allocated" : "live tensor bytes",
	    vp_phase_names[m->peak_phase], m->peak_op != NULL &&
	    m->peak_op[0] ? ", at " : "", m->peak_op != NULL ? m->peak_op : "");
	vp_svg_label(o, 20, 92, NULL, 0, t);
	snprintf(t, sizeof t, "known to within %.2f to %.2f GiB (-%.1f%% / "
	    "+%.1f%%, %s): the shaded band", gib(lo), gib(hi), 100 * b->below,
	    100 * b->above, b->source != NULL ? b->source : "");
	vp_svg_label(o, 20, 108, NULL, 0, t);
}

/* The levels beside the timeline: reserved and device peaks, the card. */
static void
levels(const struct vp_report *r, struct vp_buf *o, const struct frame *f)
{
	const struct vp_mem *m = r->mem;
	double ycap = r->gpus ? ypos(f, r->gpus->gpu->usable_bytes) : -100,
	    yres = ypos(f, m->reserved_peak), ydev = ypos(f, m->device_peak);

	if (r->plan->device == VP_DEVICE_CUDA) {
		/* Labels 14 px apart at least, the lower one moved down. */
		double dres = 0, ddev = 0;

		if (fabs(ydev - yres) < 14)
			dres = 14 - (yres - ydev);
		if (fabs(ycap - ydev) < 14)
			ddev = ycap <= ydev ? 14 - (ydev - ycap) : 0;
		level(o, f, m->reserved_peak, "#555555", true,
		    "reserved peak", dres + ddev);
		level(o, f, m->device_peak, "#222222", true,
		    "device peak (nvidia-smi)", ddev);
		{
			const struct vp_band *b = &r->band[VP_LVL_DEVICE];
			double x = L + PW - 10,
			    y0 = ypos(f, vp_band_high(m->device_peak, b)),
			    y1 = ypos(f, vp_band_low(m->device_peak, b));

			/* The device level's band as an error bar. */
			vp_svg_line(o, x, y0, x, y1, "#222222");
			vp_svg_line(o, x - 4, y0, x + 4, y0, "#222222");
			vp_svg_line(o, x - 4, y1, x + 4, y1, "#222222");
		}
	}
	if (r->gpus != NULL) {
		char t[160];

		snprintf(t, sizeof t, "%s usable", r->gpus->gpu->id);
		level(o, f, r->gpus->gpu->usable_bytes, "#d00000", false, t, 0);
	}
}

/* One stacked bar of a stage's peak: the terms, then what the
 * allocator keeps, then what lies outside it. */
static void
bar(struct vp_buf *o, const struct vp_mem *m, double y, double x0, double bw,
    double scale)
{
	double x = x0;
	size_t c;
	uint64_t frag = m->reserved_peak > m->allocated_peak ?
	    m->reserved_peak - m->allocated_peak : 0;
	uint64_t out = m->device_peak > m->reserved_peak ?
	    m->device_peak - m->reserved_peak : 0;
	char t[64];

	for (c = 0; c < VP_NELEM(order); c++) {
		double w = gib(term_at(m->term, order[c])) / scale * bw;

		if (w <= 0)
			continue;
		vp_svg_rect(o, x, y, w, 16, vp_svg_term_color(order[c]));
		x += w;
	}
	if (frag > 0) {
		vp_svg_rect(o, x, y, gib(frag) / scale * bw, 16, LEVEL_FRAG);
		x += gib(frag) / scale * bw;
	}
	if (out > 0) {
		vp_svg_rect(o, x, y, gib(out) / scale * bw, 16, LEVEL_OUTSIDE);
		x += gib(out) / scale * bw;
	}
	snprintf(t, sizeof t, "%.2f GiB", gib(m->device_peak));
	vp_svg_label(o, x + 6, y + 12, NULL, 0, t);
}

static double
breakdown(const struct vp_report *r, struct vp_buf *o, double y,
    const enum vp_cat *used, size_t nused)
{
	unsigned n = r->nstages > 1 ? r->nstages : 1, i;
	double scale = 0, bw = W - 160 - 130, x0 = 160;
	double lx;
	char t[128];

	for (i = 0; i < n; i++) {
		const struct vp_mem *m = r->nstages > 1 ? &r->stages[i] : r->mem;

		scale = fmax(scale, gib(m->device_peak));
	}
	if (r->gpus != NULL)
		scale = fmax(scale, gib(r->gpus->gpu->usable_bytes));
	if (!(scale > 0))
		scale = 1;
	vp_svg_label(o, 20, y, NULL, 14, r->nstages > 1 ? "Per GPU at each "
	    "stage's peak, by term (one bar per pipeline stage)" :
	    r->plan->device == VP_DEVICE_CUDA ? "Per GPU at the peak, by "
	    "term, then the reserved and device levels" : "At the peak, by "
	    "term");
	y += 14;
	lx = vp_svg_legend(o, 20, y, used, nused);
	if (r->plan->device == VP_DEVICE_CUDA) {
		if (lx > W - 480) {
			y += 16;
			lx = 20;
		}
		vp_buf_printf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
		    "height=\"10\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">"
		    "allocator rounding + fragmentation</text>\n", lx, y,
		    LEVEL_FRAG, lx + 13, y + 9);
		lx += 14 + 6.2 * 34 + 12;
		vp_buf_printf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
		    "height=\"10\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">"
		    "context, cuBLAS, NCCL</text>\n", lx, y, LEVEL_OUTSIDE,
		    lx + 13, y + 9);
	}
	y += 24;
	for (i = 0; i < n; i++) {
		const struct vp_mem *m = r->nstages > 1 ? &r->stages[i] : r->mem;

		if (r->nstages > 1)
			snprintf(t, sizeof t, "stage %u%s", i, i ==
			    r->worst_stage ? " (worst)" : "");
		else
			snprintf(t, sizeof t, "%s", r->plan->device ==
			    VP_DEVICE_CUDA ? "each GPU" : "the CPU");
		vp_svg_label(o, 20, y + 12, NULL, 0, t);
		bar(o, m, y, x0, bw, scale);
		y += 24;
	}
	if (r->gpus != NULL) {
		double xc = x0 + gib(r->gpus->gpu->usable_bytes) / scale * bw;

		vp_svg_line(o, xc, y - 24.0 * n - 4, xc, y - 4, "red");
		snprintf(t, sizeof t, "%s usable %.1f GiB", r->gpus->gpu->id,
		    gib(r->gpus->gpu->usable_bytes));
		vp_svg_label(o, xc, y + 10, xc > W - 200 ? "end" : "middle", 0,
		    t);
		y += 16;
	}
	return y;
}

void
vp_report_svg(const struct vp_report *r, const struct vp_timeline *tl,
    struct vp_buf *o)
{
	const struct vp_mem *m = r->mem;
	struct frame f = { 0 };
	double top = gib(vp_band_high(m->allocated_peak,
	    &r->band[VP_LVL_ALLOCATED]));
	unsigned nbars = r->nstages > 1 ? r->nstages : 1;
	double h = TOP + PH + 40 + 96 + 24.0 * nbars + 30;
	enum vp_cat used[VP_NELEM(order)];
	size_t i, c, nused = 0;

	assert(tl->n <= VP_TIMELINE_MAX);
	for (i = 0; i < tl->n; i++)
		top = fmax(top, gib(tl->live[i]));
	if (r->plan->device == VP_DEVICE_CUDA)
		top = fmax(top, gib(vp_band_high(m->device_peak,
		    &r->band[VP_LVL_DEVICE])));
	if (r->gpus != NULL)
		top = fmax(top, gib(r->gpus->gpu->usable_bytes));
	if (!(top > 0))
		top = 1;
	f.n = tl->n;
	if (tl->n > 0)
		frame_x(&f, tl);
	f.top_gib = ceil(top * 1.06 / tick_step(top * 1.06)) *
	    tick_step(top * 1.06);
	vp_svg_open(o, W, h);
	title(r, o);
	if (tl->n > 0) {
		phases(o, &f, tl);
		areas(o, &f, tl);
		peak(r, o, &f, tl);
		levels(r, o, &f);
		axes(o, &f, tl);
	} else {
		/* The replay did not run: a step past 2^60 bytes (mem.c). */
		vp_svg_label(o, L + PW / 2, TOP + PH / 2, "middle", 14, "No "
		    "timeline: the step needs more than an exabyte, which "
		    "the replay does not run");
	}
	/* The legend names the terms that are anywhere in the picture. */
	for (c = 0; c < VP_NELEM(order); c++) {
		bool any = false;
		unsigned st;

		for (i = 0; i < tl->n && !any; i++)
			any = term_at(tl->term[i], order[c]) > 0;
		for (st = 0; st < nbars && !any; st++)
			any = term_at(r->nstages > 1 ? r->stages[st].term :
			    m->term, order[c]) > 0;
		if (any)
			used[nused++] = order[c];
	}
	breakdown(r, o, TOP + PH + 52, used, nused);
	vp_svg_close(o);
}
