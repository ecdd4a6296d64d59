/*
 * test_tui_layout.c — the TUI's pure side: the layout at every size from
 * 40 x 12 to 300 x 100 (no panel overlaps another or leaves the screen,
 * the status line is always there, all panels at 80 x 24), the view drawn
 * from a real estimate (nothing outside the panels, the report's numbers
 * on screen), the knob table's steps and limits, keys, the plan file's
 * writer and reader, and the timeline capture.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_read.h"
#include "model_read.h"
#include "plan_read.h"
#include "planfile.h"
#include "report.h"
#include "session.h"
#include "tui_knobs.h"
#include "tui_layout.h"

/* ---- layout ---------------------------------------------------------- */

static bool
overlap(const struct vp_rect *a, const struct vp_rect *b)
{
	return a->x < b->x + b->w && b->x < a->x + a->w &&
	    a->y < b->y + b->h && b->y < a->y + a->h;
}

static void
check_layout(int w, int h)
{
	struct vp_layout l;
	int i, j;

	vp_tui_layout(w, h, &l);
	for (i = 0; i < VP_PANEL_COUNT; i++) {
		const struct vp_rect *r = &l.p[i];

		/* Shown means both sides, hidden means neither. */
		if (r->w == 0 || r->h == 0) {
			if (r->w != 0 || r->h != 0)
				fail_msg("%dx%d: %s is %dx%d", w, h,
				    vp_panel_names[i], r->w, r->h);
			continue;
		}
		if (r->x < 0 || r->y < 0 || r->x + r->w > w || r->y + r->h > h)
			fail_msg("%dx%d: %s at %d,%d %dx%d leaves the screen",
			    w, h, vp_panel_names[i], r->x, r->y, r->w, r->h);
		for (j = 0; j < i; j++)
			if (l.p[j].w && l.p[j].h && overlap(r, &l.p[j]))
				fail_msg("%dx%d: %s overlaps %s", w, h,
				    vp_panel_names[i], vp_panel_names[j]);
	}
	/* The status line: the last row, the whole width. */
	if (l.p[VP_PANEL_STATUS].y != h - 1 || l.p[VP_PANEL_STATUS].w != w ||
	    l.p[VP_PANEL_STATUS].h != 1)
		fail_msg("%dx%d: no status line at the bottom", w, h);
}

static void
layout_every_size(void **state)
{
	int w, h;

	(void)state;
	for (w = 40; w <= 300; w++)
		for (h = 12; h <= 100; h++)
			check_layout(w, h);
	/* Below the supported size it degrades, but stays on screen. */
	for (w = 1; w < 40; w++)
		for (h = 1; h < 12; h++)
			check_layout(w, h);
}

static void
layout_80x24(void **state)
{
	struct vp_layout l;
	int i;

	(void)state;
	vp_tui_layout(80, 24, &l);
	assert_true(l.columns);
	for (i = 0; i < VP_PANEL_COUNT; i++)
		if (l.p[i].w == 0 || l.p[i].h == 0)
			fail_msg("80x24: no %s panel", vp_panel_names[i]);
	/* Every knob is visible at 80 x 24 (a title and one line each). */
	assert_true(l.p[VP_PANEL_KNOBS].h >= VP_KNOB_COUNT + 1);
	/* 40 x 12: the memory panel, the knobs and the status line. */
	vp_tui_layout(40, 12, &l);
	assert_false(l.columns);
	assert_true(l.p[VP_PANEL_MEMORY].h >= 3);
	assert_true(l.p[VP_PANEL_KNOBS].h >= 3);
	assert_int_equal(l.p[VP_PANEL_STATUS].h, 1);
}

/* ---- a real job ------------------------------------------------------ */

struct job {
	struct vp_model m;
	struct vp_catalog cat;
	struct vp_gpuset gs;
	struct vp_session ses;
	struct vp_tui t;
};

static const char *
data_dir(void)
{
	const char *dir = getenv("VRAMPLAN_DATA");

	return dir != NULL && *dir ? dir : VP_SRCDIR "/models";
}

/* As `vramplan tui MODEL --gpus GPUS` sets it up (cli.c). */
static void
job_open(struct job *j, const char *model, const char *gpus)
{
	struct vp_diags d = { 0 };
	struct vp_buf p, msg;

	memset(j, 0, sizeof *j);
	vp_buf_init(&p);
	vp_buf_printf(&p, "%s/%s.yaml", data_dir(), model);
	assert_int_equal(vp_model_load(p.s, &j->m, &d), 0);
	p.len = 0;
	vp_buf_printf(&p, "%s/gpus.yaml", data_dir());
	assert_int_equal(vp_catalog_load(p.s, &j->cat, &d), 0);
	vp_buf_free(&p);
	vp_buf_init(&msg);
	assert_int_equal(vp_gpuset_parse(&j->cat, gpus, &j->gs, &msg), 0);
	vp_buf_free(&msg);
	vp_diags_clear(&d);
	vp_plan_defaults(&j->ses.plan, &j->m);
	j->ses.model = &j->m;
	j->ses.gpus = &j->gs;
	j->ses.world = j->gs.count;
	j->ses.plan.gpus_per_node = j->gs.count < 8 ? j->gs.count : 8;
	j->ses.plan.dp = vp_plan_dp(&j->ses.plan, j->gs.count);
	j->ses.search = true;
	vp_session_open_all(&j->ses);
	j->ses.nplans = 4;
	vp_profile_default(j->gs.gpu, &j->ses.profile);
	j->ses.profile_label = "built-in defaults";
	j->ses.version = "test";
	j->t.ses = &j->ses;
	j->t.gs = &j->gs;
	j->t.cat = &j->cat;
	j->t.model_arg = model;
	j->t.version = "test";
	j->t.unicode = true;
	j->t.color = true;
}

static void
job_close(struct job *j)
{
	vp_session_free(&j->ses);
	vp_gpuset_free(&j->gs);
	vp_catalog_free(&j->cat);
	vp_model_free(&j->m);
}

static bool
screen_has(const struct vp_screen *s, const char *text)
{
	struct vp_buf row;
	int x, y;
	bool hit = false;

	vp_buf_init(&row);
	for (y = 0; y < s->h && !hit; y++) {
		row.len = 0;
		row.s[0] = '\0';
		for (x = 0; x < s->w; x++)
			vp_buf_add(&row, vp_screen_at(s, x, y)->ch);
		hit = strstr(row.s, text) != NULL;
	}
	vp_buf_free(&row);
	return hit;
}

/*
 * Cells outside every panel stay blank (an overlay is drawn over the
 * panels: then only its own box may be); the status line never is.
 */
static void
check_view(struct job *j, struct vp_screen *s, int w, int h)
{
	struct vp_layout l;
	int x, y, i;
	bool blank = true;

	vp_screen_resize(s, w, h);
	vp_tui_draw(&j->t, s);
	vp_tui_layout(w, h, &l);
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			bool inside = false;

			for (i = 0; i < VP_PANEL_COUNT; i++) {
				const struct vp_rect *r = &l.p[i];

				inside |= x >= r->x && x < r->x + r->w &&
				    y >= r->y && y < r->y + r->h;
			}
			if (j->t.mode == VP_MODE_MAIN && !inside &&
			    strcmp(vp_screen_at(s, x, y)->ch, " "))
				fail_msg("%dx%d: '%s' drawn at %d,%d outside "
				    "the panels", w, h,
				    vp_screen_at(s, x, y)->ch, x, y);
		}
	for (x = 0; x < w; x++)
		blank &= strcmp(vp_screen_at(s, x, h - 1)->ch, " ") == 0;
	if (blank)
		fail_msg("%dx%d: the status line is empty", w, h);
}

static void
view_every_size(void **state)
{
	struct job j;
	struct vp_screen s;
	int w, h;

	(void)state;
	job_open(&j, "llama-3.1-70b", "16xH100");
	assert_int_equal(vp_tui_init(&j.t), 0);
	vp_screen_init(&s);
	for (w = 40; w <= 300; w += 3)
		for (h = 12; h <= 100; h += 4)
			check_view(&j, &s, w, h);
	check_view(&j, &s, 300, 100);
	for (w = 1; w < 40; w += 2)
		for (h = 1; h < 12; h++)
			check_view(&j, &s, w, h);
	/* Every overlay, at small and large sizes. */
	j.t.mode = VP_MODE_HELP;
	check_view(&j, &s, 40, 12);
	check_view(&j, &s, 200, 60);
	j.t.mode = VP_MODE_GPU;
	check_view(&j, &s, 40, 12);
	check_view(&j, &s, 80, 24);
	j.t.mode = VP_MODE_COMMAND;
	check_view(&j, &s, 40, 12);
	check_view(&j, &s, 80, 24);
	vp_screen_free(&s);
	job_close(&j);
}

/* The numbers on screen are the report's. */
static void
view_same_numbers(void **state)
{
	struct job j;
	struct vp_screen s;
	struct vp_row rows[VP_REPORT_MAXROWS];
	char b[32];
	int n, i;

	(void)state;
	job_open(&j, "llama-3-8b", "1xA100");
	assert_int_equal(vp_tui_init(&j.t), 0);
	vp_screen_init(&s);
	vp_screen_resize(&s, 200, 60);
	vp_tui_draw(&j.t, &s);
	n = vp_report_rows(&j.ses.rep, rows);
	for (i = 0; i < n; i++) {
		vp_fmt_bytes(b, sizeof b, rows[i].bytes);
		if (!screen_has(&s, rows[i].label) || !screen_has(&s, b))
			fail_msg("200x60: row '%s' (%s) is not on screen",
			    rows[i].label, b);
	}
	assert_true(screen_has(&s, "DOES NOT FIT"));
	assert_true(screen_has(&s, "A100-80G-SXM"));
	/* At 80 x 24 the three levels are there. */
	vp_screen_resize(&s, 80, 24);
	vp_tui_draw(&j.t, &s);
	assert_true(screen_has(&s, "allocated peak"));
	assert_true(screen_has(&s, "reserved peak"));
	assert_true(screen_has(&s, "device peak"));
	vp_fmt_bytes(b, sizeof b, j.ses.mem.device_peak);
	assert_true(screen_has(&s, b));
	vp_screen_free(&s);
	job_close(&j);
}

/*
 * Issue 17, finding 7: a model name with control characters (ESC, BEL,
 * C1 CSI as UTF-8, a byte that is not UTF-8) reaches no cell: each is one
 * '?' cell, and the text around it is drawn.
 */
static void
view_control_characters(void **state)
{
	struct job j;
	struct vp_screen s;
	int x, y;

	(void)state;
	job_open(&j, "gpt2", "1xA100");
	free(j.m.name);
	j.m.name = xstrdup("Evil\x1b[2J\a\xc2\x9b" "31m\xff!");
	assert_int_equal(vp_tui_init(&j.t), 0);
	vp_screen_init(&s);
	vp_screen_resize(&s, 120, 40);
	vp_tui_draw(&j.t, &s);
	assert_true(screen_has(&s, "Evil?[2J??31m?!"));
	for (y = 0; y < s.h; y++)
		for (x = 0; x < s.w; x++) {
			const unsigned char *c = (const unsigned char *)
			    vp_screen_at(&s, x, y)->ch;

			if (c[0] < 0x20 || c[0] == 0x7f || (c[0] == 0xc2 &&
			    c[1] >= 0x80 && c[1] <= 0x9f) || c[0] == 0xff)
				fail_msg("cell %d,%d holds control byte 0x%02x",
				    x, y, c[0]);
		}
	vp_screen_free(&s);
	job_close(&j);
}

/* ---- knobs ----------------------------------------------------------- */

static int
step(struct job *j, enum vp_knob k, int dir, bool big)
{
	return vp_knob_step(&j->t, k, dir, big);
}

static void
knob_steps(void **state)
{
	struct job j;
	struct vp_plan *p;
	int i;

	(void)state;
	job_open(&j, "llama-3-8b", "8xH100");
	assert_int_equal(vp_tui_init(&j.t), 0);
	p = &j.ses.plan;

	/* Enums stop at their ends. */
	p->precision = VP_PREC_FP32;
	assert_int_equal(step(&j, VP_KNOB_PRECISION, -1, false), -1);
	assert_int_equal(step(&j, VP_KNOB_PRECISION, 1, false), 0);
	assert_int_equal(p->precision, VP_PREC_FP16_MIXED);
	assert_int_equal(step(&j, VP_KNOB_PRECISION, 1, true), 0);
	assert_int_equal(p->precision, VP_PREC_FP8);
	assert_int_equal(step(&j, VP_KNOB_PRECISION, 1, false), -1);

	/* Counts: +-1, x2 big, never below 1. */
	p->micro_batch = 1;
	assert_int_equal(step(&j, VP_KNOB_MICRO_BATCH, -1, false), -1);
	assert_int_equal(step(&j, VP_KNOB_MICRO_BATCH, 1, false), 0);
	assert_int_equal(p->micro_batch, 2);
	assert_int_equal(step(&j, VP_KNOB_MICRO_BATCH, 1, true), 0);
	assert_int_equal(p->micro_batch, 4);
	p->micro_batch = 1u << 20;
	assert_int_equal(step(&j, VP_KNOB_MICRO_BATCH, 1, false), -1);

	/* Sequence: powers of two from 128. */
	p->seq = 8192;
	assert_int_equal(step(&j, VP_KNOB_SEQ, 1, false), 0);
	assert_int_equal(p->seq, 16384);
	p->seq = 3000;
	assert_int_equal(step(&j, VP_KNOB_SEQ, -1, false), 0);
	assert_int_equal(p->seq, 2048);
	p->seq = 128;
	assert_int_equal(step(&j, VP_KNOB_SEQ, -1, false), -1);

	/* TP over 8 GPUs: the divisors 1, 2, 4, 8 and no further. */
	p->tp = 1;
	for (i = 0; i < 3; i++)
		assert_int_equal(step(&j, VP_KNOB_TP, 1, false), 0);
	assert_int_equal(p->tp, 8);
	assert_int_equal(step(&j, VP_KNOB_TP, 1, false), -1);
	assert_int_equal(step(&j, VP_KNOB_TP, -1, true), 0);
	assert_int_equal(p->tp, 1);
	assert_false(p->sp);

	/* ZeRO then FSDP, one knob. */
	p->zero = 0;
	p->fsdp = VP_FSDP_NONE;
	for (i = 0; i < 3; i++)
		assert_int_equal(step(&j, VP_KNOB_SHARDING, 1, false), 0);
	assert_int_equal(p->zero, 3);
	assert_int_equal(step(&j, VP_KNOB_SHARDING, 1, false), 0);
	assert_int_equal(p->zero, 0);
	assert_int_equal(p->fsdp, VP_FSDP_GRAD_OP);
	assert_int_equal(step(&j, VP_KNOB_SHARDING, 1, true), 0);
	assert_int_equal(p->fsdp, VP_FSDP_FULL);
	assert_int_equal(step(&j, VP_KNOB_SHARDING, 1, false), -1);

	/* LoRA: off, 1, 2, 4 ... 65536. */
	p->lora_rank = 0;
	assert_int_equal(step(&j, VP_KNOB_LORA, -1, false), -1);
	assert_int_equal(step(&j, VP_KNOB_LORA, 1, false), 0);
	assert_int_equal(p->lora_rank, 1);
	p->lora_rank = 16;
	assert_int_equal(step(&j, VP_KNOB_LORA, 1, false), 0);
	assert_int_equal(p->lora_rank, 32);
	p->lora_rank = 65536;
	assert_int_equal(step(&j, VP_KNOB_LORA, 1, false), -1);
	p->lora_rank = 0;

	/* GPUs: at least 1; the card stays within the catalog. */
	j.gs.count = 1;
	assert_int_equal(step(&j, VP_KNOB_GPUS, -1, false), -1);
	assert_int_equal(step(&j, VP_KNOB_GPUS, 1, true), 0);
	assert_int_equal(j.gs.count, 2);
	j.gs.gpu = &j.cat.v[0];
	assert_int_equal(step(&j, VP_KNOB_GPU, -1, false), -1);
	j.gs.gpu = &j.cat.v[j.cat.n - 1];
	assert_int_equal(step(&j, VP_KNOB_GPU, 1, false), -1);
	assert_int_equal(step(&j, VP_KNOB_GPU, -1, false), 0);
	assert_ptr_equal(j.gs.gpu, &j.cat.v[j.cat.n - 2]);

	/* Tokens: 1, 2, 5 steps. */
	j.t.tokens = 1e9;
	assert_int_equal(step(&j, VP_KNOB_TOKENS, 1, false), 0);
	assert_float_equal(j.t.tokens, 2e9, 1);
	assert_int_equal(step(&j, VP_KNOB_TOKENS, 1, false), 0);
	assert_float_equal(j.t.tokens, 5e9, 1);
	assert_int_equal(step(&j, VP_KNOB_TOKENS, 1, false), 0);
	assert_float_equal(j.t.tokens, 1e10, 1);
	assert_int_equal(step(&j, VP_KNOB_TOKENS, -1, false), 0);
	assert_float_equal(j.t.tokens, 5e9, 1);
	j.t.tokens = 1e15;
	assert_int_equal(step(&j, VP_KNOB_TOKENS, 1, false), -1);
	job_close(&j);
}

static enum vp_tui_req
key(struct job *j, enum vp_ev kind, int ch)
{
	struct vp_tui_event ev = { kind, ch, 0, 0, -1, -1 };

	return vp_tui_key(&j->t, &ev);
}

/* Without a card the degrees make the job, CP included, as the
 * estimate's vp_plan_world counts it. */
static void
world_without_card(void **state)
{
	struct job j;
	const struct vp_gpu *g;

	(void)state;
	job_open(&j, "llama-3-8b", "8xH100");
	g = j.gs.gpu;
	j.gs.gpu = NULL;
	j.ses.plan.dp = 2;
	j.ses.plan.tp = 2;
	j.ses.plan.pp = 1;
	j.ses.plan.cp = 2;
	assert_int_equal(vp_tui_world(&j.t), 8);
	j.gs.gpu = g;
	assert_int_equal(vp_tui_world(&j.t), 8);
	job_close(&j);
}

static void
keys(void **state)
{
	struct job j;
	const char *s;

	(void)state;
	job_open(&j, "llama-3-8b", "8xH100");
	assert_int_equal(vp_tui_init(&j.t), 0);
	assert_true(j.t.valid);
	/* The planner chose the parallel knobs; they stay open. */
	assert_true(j.t.open.tp);

	/* l changes the selected knob (precision) and re-estimates. */
	assert_int_equal(j.ses.plan.precision, VP_PREC_BF16_MIXED);
	assert_int_equal(key(&j, VP_EV_CHAR, 'l'), VP_REQ_NONE);
	assert_int_equal(j.ses.plan.precision, VP_PREC_FP16);
	assert_true(j.t.valid);

	/* Changing a planner knob pins it; u hands it back. */
	j.t.sel = VP_KNOB_RECOMPUTE;
	j.ses.plan.recompute = VP_RECOMP_FULL;
	key(&j, VP_EV_LEFT, 0);
	assert_int_equal(j.ses.plan.recompute, VP_RECOMP_SELECTIVE);
	assert_false(j.t.open.recompute);
	assert_int_equal(key(&j, VP_EV_CHAR, 'u'), VP_REQ_NONE);
	assert_true(j.t.open.recompute);

	/* a runs the planner and says what it did. */
	assert_int_equal(key(&j, VP_EV_CHAR, 'a'), VP_REQ_NONE);
	assert_non_null(strstr(j.t.msg, "planner:"));

	/* An invalid combination: the plan check's message, no crash. */
	j.t.sel = VP_KNOB_QUANT;
	key(&j, VP_EV_RIGHT, 0);
	assert_false(j.t.valid);
	assert_non_null(strstr(j.t.error, "--quant"));
	key(&j, VP_EV_LEFT, 0);
	assert_true(j.t.valid);

	/* j and k move, and stop at the ends. */
	j.t.sel = 0;
	key(&j, VP_EV_CHAR, 'k');
	assert_int_equal(j.t.sel, 0);
	key(&j, VP_EV_CHAR, 'j');
	assert_int_equal(j.t.sel, 1);
	key(&j, VP_EV_END, 0);
	assert_int_equal(j.t.sel, VP_KNOB_COUNT - 1);

	/* The mouse: a click selects a knob, a second one steps it up. */
	{
		struct vp_tui_event ev = { VP_EV_CLICK, 0, 0, 0, -1, -1 };
		struct vp_screen scr;
		struct vp_layout l;
		uint64_t mb = j.ses.plan.micro_batch;

		vp_screen_init(&scr);
		vp_screen_resize(&scr, 80, 24);
		vp_tui_draw(&j.t, &scr);
		vp_tui_layout(80, 24, &l);
		ev.x = l.p[VP_PANEL_KNOBS].x + 3;
		ev.y = l.p[VP_PANEL_KNOBS].y + 1 + VP_KNOB_MICRO_BATCH -
		    j.t.top;
		vp_tui_locate(&j.t, &ev);
		vp_tui_key(&j.t, &ev);
		assert_int_equal(j.t.sel, VP_KNOB_MICRO_BATCH);
		assert_int_equal(j.ses.plan.micro_batch, mb);
		vp_tui_key(&j.t, &ev);
		assert_int_equal(j.ses.plan.micro_batch, mb + 1);
		ev.y = l.p[VP_PANEL_MEMORY].y + 1;
		ev.x = l.p[VP_PANEL_MEMORY].x + 3;
		vp_tui_locate(&j.t, &ev);
		vp_tui_key(&j.t, &ev);
		assert_int_equal(j.t.sel, VP_KNOB_MICRO_BATCH);
		vp_screen_free(&scr);
	}

	/* g: type to search, Enter picks. */
	assert_int_equal(key(&j, VP_EV_CHAR, 'g'), VP_REQ_NONE);
	assert_int_equal(j.t.mode, VP_MODE_GPU);
	for (s = "4090"; *s; s++)
		key(&j, VP_EV_CHAR, *s);
	assert_int_equal(key(&j, VP_EV_ENTER, 0), VP_REQ_NONE);
	assert_int_equal(j.t.mode, VP_MODE_MAIN);
	assert_non_null(strstr(j.gs.gpu->id, "4090"));
	assert_int_equal(j.gs.count, 8);

	/* s: the prompt starts with a default path; Enter asks to save. */
	assert_int_equal(key(&j, VP_EV_CHAR, 's'), VP_REQ_NONE);
	assert_string_equal(j.t.input, "llama-3-8b.plan.yaml");
	key(&j, VP_EV_KILL, 0);
	for (s = "x.yaml"; *s; s++)
		key(&j, VP_EV_CHAR, *s);
	assert_int_equal(key(&j, VP_EV_ENTER, 0), VP_REQ_SAVE);
	assert_string_equal(j.t.input, "x.yaml");

	/* Overlays close on any key; q quits. */
	key(&j, VP_EV_CHAR, '?');
	assert_int_equal(j.t.mode, VP_MODE_HELP);
	key(&j, VP_EV_CHAR, 'x');
	assert_int_equal(j.t.mode, VP_MODE_MAIN);
	assert_int_equal(key(&j, VP_EV_CHAR, 'q'), VP_REQ_QUIT);
	job_close(&j);
}

/* ---- the plan file --------------------------------------------------- */

static void
plan_round_trip(void **state)
{
	struct job j;
	struct vp_planfile f;
	struct vp_optset k;
	struct vp_plan q;
	struct vp_diags d = { 0 };
	struct vp_buf b;
	struct ydoc *doc;
	struct vp_plan *p;
	int i;

	(void)state;
	job_open(&j, "llama-3-8b", "16xH100");
	p = &j.ses.plan;
	p->precision = VP_PREC_BF16_MASTER;
	p->optimizer = VP_OPT_PAGED_ADAMW_8BIT;
	p->micro_batch = 3;
	p->seq = 4096;
	p->grad_accum = 7;
	p->recompute = VP_RECOMP_SELECTIVE;
	p->attention = VP_ATTN_EAGER;
	p->dropout = 0.05;
	p->framework = VP_FW_FSDP2;
	p->fsdp = VP_FSDP_HYBRID;
	p->tp = 2;
	p->sp = true;
	p->pp = 2;
	p->vpp = 2;
	p->capacity_factor = 1.25;
	p->lora_rank = 16;
	p->lora_targets = 0x7f;
	p->lora_dropout = 0.1;
	p->lora_dtype = VP_BF16;
	p->quant = VP_QUANT_NF4;
	p->offload = VP_OFFLOAD_OPTIMIZER;
	p->offload_nvme = true;
	p->host_mem_bytes = 512ULL << 30;
	p->activation_offload = true;
	p->loss = VP_LOSS_CHUNKED;
	p->gpus_per_node = 4;
	snprintf(p->alloc_conf, sizeof p->alloc_conf,
	    "expandable_segments:True,max_split_size_mb:128");
	memset(&f, 0, sizeof f);
	f.model = &j.m;
	f.model_arg = "llama-3-8b";
	f.plan = p;
	f.gpu = j.gs.gpu;
	f.count = 16;
	f.version = "test";
	vp_buf_init(&b);
	vp_planfile_write(&f, &b);
	doc = ydoc_parse("plan.yaml", b.s, b.len, &d);
	assert_non_null(doc);
	if (vp_plan_from_doc(doc, &k, &d) != 0) {
		struct vp_buf e;

		vp_buf_init(&e);
		vp_diags_format(&d, &e);
		fail_msg("the written plan does not read back:\n%s\n%s", b.s,
		    e.s);
	}
	for (i = 0; i < VP_O_COUNT; i++)
		if (vp_options[i].planfile && !k.has[i])
			fail_msg("key '%s' was not written", vp_options[i].name);
	assert_string_equal(k.val[VP_O_GPUS].s, "16xH100-80G-SXM");
	/* Every field the file holds comes back as it was. */
	memset(&q, 0, sizeof q);
	vp_optset_apply(&k, &q);
	q.dp = p->dp;
	q.stage = p->stage;
	q.optimizer_impl = p->optimizer_impl;
	assert_memory_equal(&q.precision, &p->precision,
	    sizeof p->precision);
	assert_int_equal(q.optimizer, p->optimizer);
	assert_int_equal(q.micro_batch, 3);
	assert_int_equal(q.seq, 4096);
	assert_int_equal(q.grad_accum, 7);
	assert_int_equal(q.recompute, p->recompute);
	assert_int_equal(q.attention, p->attention);
	assert_true(q.dropout == 0.05);
	assert_int_equal(q.framework, p->framework);
	assert_int_equal(q.fsdp, p->fsdp);
	assert_int_equal(q.tp, 2);
	assert_true(q.sp);
	assert_int_equal(q.pp, 2);
	assert_int_equal(q.vpp, 2);
	assert_true(q.capacity_factor == 1.25);
	assert_int_equal(q.lora_rank, 16);
	assert_int_equal(q.lora_targets, 0x7f);
	assert_true(q.lora_dropout == 0.1);
	assert_int_equal(q.lora_dtype, VP_BF16);
	assert_int_equal(q.quant, VP_QUANT_NF4);
	assert_int_equal(q.offload, VP_OFFLOAD_OPTIMIZER);
	assert_true(q.offload_nvme);
	assert_int_equal(q.host_mem_bytes, 512ULL << 30);
	assert_true(q.activation_offload);
	assert_int_equal(q.loss, VP_LOSS_CHUNKED);
	assert_int_equal(q.gpus_per_node, 4);
	vp_optset_free(&k);
	ydoc_free(doc);

	/* The command line spells the knobs that differ, no more. */
	b.len = 0;
	b.s[0] = '\0';
	p->dropout = -1;
	vp_planfile_cmdline(&f, &b);
	assert_non_null(strstr(b.s, "vramplan llama-3-8b --gpus "
	    "16xH100-80G-SXM --gpus-per-node 4 --precision bf16-master"));
	assert_non_null(strstr(b.s, " --sp "));
	assert_non_null(strstr(b.s, " --offload-nvme"));
	assert_null(strstr(b.s, "--dropout"));
	assert_null(strstr(b.s, "--device"));
	assert_non_null(strstr(b.s, "--no-search"));
	vp_buf_free(&b);
	vp_diags_clear(&d);
	job_close(&j);
}

/* Each bad file: the message and its position. */
static void
plan_errors(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "precision: fp16\n", "1:1: error: not a vramplan plan file" },
		{ "vramplan-plan: 2\n", "1:16: error: unsupported plan file "
		    "version 2" },
		{ "vramplan-plan: 1\nprecison: fp16\n", "2:1: error: unknown "
		    "key 'precison' in the plan; did you mean 'precision'?" },
		{ "vramplan-plan: 1\noptimizer: adamv\n", "2:12: error: "
		    "unknown optimizer 'adamv'; did you mean 'adam'?" },
		{ "vramplan-plan: 1\ntp: 0\n", "2:5: error: 'tp' must be a "
		    "whole number from 1 to 1024" },
		{ "vramplan-plan: 1\ntp: 2\ntp: 4\n", "3:1: error: duplicate "
		    "key 'tp' in the plan (first at line 2)" },
		{ "vramplan-plan: 1\ncapacity-factor: 0.5\n", "2:18: error: "
		    "'capacity-factor' must be 0 (off)" },
		{ "vramplan-plan: 1\nlora-targets: q,x\n", "2:15: error: "
		    "unknown 'lora-targets' 'x'" },
		{ "vramplan-plan: 1\nsp: maybe\n", "2:5: error: 'sp'" },
		{ "- a\n", "1:1: error: a plan file must be a mapping" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < VP_NELEM(cases); i++) {
		struct vp_diags d = { 0 };
		struct vp_optset k;
		struct vp_buf e;
		struct ydoc *doc = ydoc_parse("p.yaml", cases[i].text,
		    strlen(cases[i].text), &d);

		assert_non_null(doc);
		assert_int_equal(vp_plan_from_doc(doc, &k, &d), -1);
		vp_buf_init(&e);
		vp_diags_format(&d, &e);
		if (strstr(e.s, cases[i].want) == NULL)
			fail_msg("case %zu: wanted '%s', got:\n%s", i,
			    cases[i].want, e.s);
		vp_buf_free(&e);
		vp_optset_free(&k);
		vp_diags_clear(&d);
		ydoc_free(doc);
	}
}

/* ---- the timeline ---------------------------------------------------- */

static void
timeline_matches_replay(void **state)
{
	static const char *const models[] = { "gpt2", "llama-3-8b",
	    "llama-3.1-70b" };
	size_t i, k;

	(void)state;
	for (i = 0; i < VP_NELEM(models); i++) {
		struct job j;
		struct vp_mem_opts o;
		struct vp_mem a, b;
		struct vp_timeline *tl = malloc(sizeof *tl);
		uint64_t top = 0;

		job_open(&j, models[i], "8xH100");
		memset(&o, 0, sizeof o);
		o.profile = &j.ses.profile;
		o.world = 8;
		j.ses.plan.grad_accum = 2;
		j.ses.plan.recompute = VP_RECOMP_FULL;
		j.ses.plan.pp = 2;
		j.ses.plan.dp = 4;
		assert_int_equal(vp_mem_estimate(&j.m, &j.ses.plan, &o, &a), 0);
		assert_int_equal(vp_mem_estimate_timeline(&j.m, &j.ses.plan,
		    &o, &b, tl), 0);
		/* Capturing changes no number. */
		assert_memory_equal(&a, &b, offsetof(struct vp_mem, top));
		assert_true(tl->n > 0 && tl->n <= VP_TIMELINE_MAX);
		for (k = 0; k < tl->n; k++)
			top = tl->live[k] > top ? tl->live[k] : top;
		assert_int_equal(top, a.allocated_peak);
		assert_int_equal(tl->live[tl->peak], top);
		assert_int_equal(tl->phase[0], VP_PHASE_FORWARD);
		assert_int_equal(tl->phase[tl->n - 1], VP_PHASE_OPTIMIZER);
		/* Each point's terms add up to it (the SVG stacks them), and
		 * the peak's are the report's breakdown. */
		for (k = 0; k < tl->n; k++) {
			uint64_t sum = 0;
			int c;

			for (c = 0; c < VP_CAT_COUNT; c++)
				sum += tl->term[k][c];
			assert_int_equal(sum, tl->live[k]);
		}
		assert_memory_equal(tl->term[tl->peak], a.term, sizeof a.term);
		free(tl);
		job_close(&j);
	}
}

/* Sharded plans: the gathered parameters and buckets, which the replay
 * holds beside the tensors, are in the timeline's terms as in the
 * peak's breakdown. */
static void
timeline_terms_sharded(void **state)
{
	static const struct { enum vp_framework fw; enum vp_fsdp fsdp;
	    unsigned zero; } plans[] = {
		{ VP_FW_FSDP1, VP_FSDP_FULL, 0 },
		{ VP_FW_FSDP2, VP_FSDP_FULL, 0 },
		{ VP_FW_DEEPSPEED, VP_FSDP_NONE, 3 },
		{ VP_FW_TORCH, VP_FSDP_NONE, 0 },
	};
	size_t i, k;

	(void)state;
	for (i = 0; i < VP_NELEM(plans); i++) {
		struct job j;
		struct vp_mem_opts o;
		struct vp_mem a;
		struct vp_timeline *tl = malloc(sizeof *tl);

		job_open(&j, "llama-3-8b", "8xH100");
		memset(&o, 0, sizeof o);
		o.profile = &j.ses.profile;
		o.world = 8;
		j.ses.plan.framework = plans[i].fw;
		j.ses.plan.fsdp = plans[i].fsdp;
		j.ses.plan.zero = plans[i].zero;
		j.ses.plan.recompute = VP_RECOMP_FULL;
		j.ses.plan.dp = 8;
		assert_int_equal(vp_mem_estimate_timeline(&j.m, &j.ses.plan,
		    &o, &a, tl), 0);
		for (k = 0; k < tl->n; k++) {
			uint64_t sum = 0;
			int c;

			for (c = 0; c < VP_CAT_COUNT; c++)
				sum += tl->term[k][c];
			assert_int_equal(sum, tl->live[k]);
		}
		assert_int_equal(tl->live[tl->peak], a.allocated_peak);
		assert_memory_equal(tl->term[tl->peak], a.term, sizeof a.term);
		free(tl);
		job_close(&j);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layout_every_size),
		cmocka_unit_test(layout_80x24),
		cmocka_unit_test(view_every_size),
		cmocka_unit_test(view_same_numbers),
		cmocka_unit_test(view_control_characters),
		cmocka_unit_test(knob_steps),
		cmocka_unit_test(world_without_card),
		cmocka_unit_test(keys),
		cmocka_unit_test(plan_round_trip),
		cmocka_unit_test(plan_errors),
		cmocka_unit_test(timeline_matches_replay),
		cmocka_unit_test(timeline_terms_sharded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
