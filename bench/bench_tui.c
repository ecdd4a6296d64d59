/*
 * bench_tui.c — what one key costs in the TUI, without a terminal: the
 * pure update path (the key applied to the knobs, vp_session_run, the
 * view model drawn at 80 x 24), per key, median and worst of many
 * presses.  The keys alternate direction so every press changes the plan
 * and the state stays put; 'a' runs the planner each time.  The target
 * is 10 ms a key, the planner's included.  Run on demand (`make bench`).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_read.h"
#include "model_read.h"
#include "report.h"
#include "session.h"
#include "tui_knobs.h"
#include "tui_layout.h"

#define PRESSES 41

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A key: the knob it applies to (or -1) and the two presses it
 * alternates between. */
struct key {
	const char *name;
	int knob;
	struct vp_tui_event there, back;
};

static const struct key keys[] = {
	{ "j / k (move)", -1, { VP_EV_CHAR, 'j', 0, 0, -1, -1 },
	    { VP_EV_CHAR, 'k', 0, 0, -1, -1 } },
	{ "precision l / h", VP_KNOB_PRECISION, { VP_EV_CHAR, 'l', 0, 0, -1, -1 },
	    { VP_EV_CHAR, 'h', 0, 0, -1, -1 } },
	{ "micro-batch + / -", VP_KNOB_MICRO_BATCH, { VP_EV_CHAR, '+', 0, 0, -1, -1 },
	    { VP_EV_CHAR, '-', 0, 0, -1, -1 } },
	{ "seq PgUp / PgDn", VP_KNOB_SEQ, { VP_EV_PGDN, 0, 0, 0, -1, -1 },
	    { VP_EV_PGUP, 0, 0, 0, -1, -1 } },
	{ "recompute", VP_KNOB_RECOMPUTE, { VP_EV_LEFT, 0, 0, 0, -1, -1 },
	    { VP_EV_RIGHT, 0, 0, 0, -1, -1 } },
	{ "ZeRO/FSDP", VP_KNOB_SHARDING, { VP_EV_RIGHT, 0, 0, 0, -1, -1 },
	    { VP_EV_LEFT, 0, 0, 0, -1, -1 } },
	{ "TP", VP_KNOB_TP, { VP_EV_RIGHT, 0, 0, 0, -1, -1 },
	    { VP_EV_LEFT, 0, 0, 0, -1, -1 } },
	{ "GPU count", VP_KNOB_GPUS, { VP_EV_PGUP, 0, 0, 0, -1, -1 },
	    { VP_EV_PGDN, 0, 0, 0, -1, -1 } },
	{ "GPU card", VP_KNOB_GPU, { VP_EV_RIGHT, 0, 0, 0, -1, -1 },
	    { VP_EV_LEFT, 0, 0, 0, -1, -1 } },
	{ "a (planner)", -1, { VP_EV_CHAR, 'a', 0, 0, -1, -1 },
	    { VP_EV_CHAR, 'a', 0, 0, -1, -1 } },
};

static int
bench(const char *dir, const char *model, const char *gpus)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_catalog cat;
	struct vp_gpuset gs = { 0 };
	struct vp_session ses;
	struct vp_tui t;
	struct vp_open open0;
	struct vp_screen scr;
	struct vp_buf p;
	double ms[PRESSES];
	size_t k;
	int i;

	vp_buf_init(&p);
	vp_buf_printf(&p, "%s/%s.yaml", dir, model);
	if (vp_model_load(p.s, &m, &d) != 0)
		return -1;
	p.len = 0;
	vp_buf_printf(&p, "%s/gpus.yaml", dir);
	if (vp_catalog_load(p.s, &cat, &d) != 0)
		return -1;
	p.len = 0;
	if (vp_gpuset_parse(&cat, gpus, &gs, &p) != 0)
		return -1;
	vp_buf_free(&p);
	/* As `vramplan tui MODEL --gpus GPUS` sets it up. */
	memset(&ses, 0, sizeof ses);
	vp_plan_defaults(&ses.plan, &m);
	ses.model = &m;
	ses.gpus = &gs;
	ses.world = gs.count;
	ses.plan.gpus_per_node = gs.count < VP_DEFAULT_GPUS_PER_NODE ?
	    gs.count : VP_DEFAULT_GPUS_PER_NODE;
	ses.search = true;
	vp_session_open_all(&ses);
	ses.nplans = 4;
	vp_profile_default(gs.gpu, &ses.profile);
	ses.profile_label = "built-in defaults";
	ses.version = "bench";
	memset(&t, 0, sizeof t);
	t.ses = &ses;
	t.gs = &gs;
	t.cat = &cat;
	t.model_arg = model;
	t.unicode = t.color = true;
	vp_tui_init(&t);
	open0 = t.open;
	vp_screen_init(&scr);
	vp_screen_resize(&scr, 80, 24);
	vp_tui_draw(&t, &scr);
	printf("%s on %s (the plan the TUI opens on: ", m.name, gpus);
	{
		struct vp_buf lay;

		vp_buf_init(&lay);
		vp_report_layout(&lay, &ses.plan);
		printf("%s)\n", lay.s);
		vp_buf_free(&lay);
	}
	printf("  %-20s %10s %10s\n", "key", "median ms", "worst ms");
	for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		const struct key *ky = &keys[k];
		struct vp_plan keep = ses.plan;
		const struct vp_gpu *card = gs.gpu;
		unsigned count = gs.count;

		if (ky->knob >= 0)
			t.sel = ky->knob;
		for (i = 0; i < PRESSES; i++) {
			double t0 = now_ms();

			vp_tui_key(&t, i % 2 ? &ky->back : &ky->there);
			vp_screen_resize(&scr, 80, 24);
			vp_tui_draw(&t, &scr);
			ms[i] = now_ms() - t0;
		}
		qsort(ms, PRESSES, sizeof ms[0], cmp_double);
		printf("  %-20s %10.3f %10.3f\n", ky->name, ms[PRESSES / 2],
		    ms[PRESSES - 1]);
		/* The next key starts from the plan the TUI opened on. */
		ses.plan = keep;
		gs.gpu = card;
		gs.count = count;
		vp_profile_default(gs.gpu, &ses.profile);
		t.open = open0;
		vp_tui_run(&t, false);
	}
	vp_screen_free(&scr);
	vp_session_free(&ses);
	vp_gpuset_free(&gs);
	vp_catalog_free(&cat);
	vp_model_free(&m);
	vp_diags_clear(&d);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "models";

	if (bench(dir, "llama-3-8b", "1xA100") != 0 ||
	    bench(dir, "llama-3.1-70b", "16xH100") != 0 ||
	    bench(dir, "mixtral-8x7b", "16xH100") != 0 ||
	    bench(dir, "llama-3.1-405b", "128xH100") != 0) {
		fprintf(stderr, "bench_tui: cannot load the models or the "
		    "catalog from '%s'\n", dir);
		return 1;
	}
	return 0;
}
