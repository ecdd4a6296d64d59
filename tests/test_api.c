/*
 * test_api.c — libvramplan's contract beyond the example (vramplan(3)):
 * a handle estimates again with the same answer, options are replaced,
 * unset and reset, reports come in three formats and not before an
 * estimate, diagnostics carry file:line:col and severity, a bad data
 * directory is an input error, and four threads with a handle each give
 * the single-threaded answers (thread-compatible, no hidden state), and
 * without VRAMPLAN_DATA the model library is found beside the library.
 * Public API only; prints "ok"/"FAIL" lines; exit 0 or 1.
 * Env: VRAMPLAN_DATA, TOP_SRCDIR.
 */
#define _POSIX_C_SOURCE 200809L	/* unsetenv */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramplan.h"

static int failed, passed;

static void
check(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok" : "FAIL", what);
	if (cond)
		passed++;
	else
		failed++;
}

struct job {
	const char *model, *gpus, *recompute;
	uint64_t peak;
	char tp[16];
};

static void
run_job(struct job *j)
{
	vramplan *h = vramplan_new();
	const char *tp;

	vramplan_set_model(h, j->model);
	vramplan_set(h, "gpus", j->gpus);
	if (j->recompute)
		vramplan_set(h, "recompute", j->recompute);
	j->peak = vramplan_estimate(h) <= VRAMPLAN_NOFIT ?
	    vramplan_device_peak_bytes(h) : 0;
	tp = vramplan_plan_value(h, "tp");
	snprintf(j->tp, sizeof j->tp, "%s", tp ? tp : "?");
	vramplan_free(h);
}

static void *
thread_main(void *arg)
{
	struct job *v = arg;
	int i;

	for (i = 0; i < 3; i++)
		run_job(&v[i]);
	return NULL;
}

int
main(void)
{
	static const struct job jobs[3] = {
		{ "llama-3-8b", "8xH100", NULL, 0, "" },
		{ "mixtral-8x7b", "8xH100", "full", 0, "" },
		{ "gpt2", "1xA100", NULL, 0, "" },
	};
	struct job want[3], got[4][3];
	pthread_t th[4];
	vramplan *h = vramplan_new();
	const char *top = getenv("TOP_SRCDIR");
	char path[4096];
	uint64_t first;
	int rc, i, t, same;

	check(vramplan_report(h, VRAMPLAN_JSON) == NULL,
	    "no report before an estimate");
	check(vramplan_estimate(h) == VRAMPLAN_USAGE &&
	    vramplan_diag_count(h) == 1 &&
	    vramplan_diag_severity(h, 0) == VRAMPLAN_ERROR,
	    "no model: a usage error");
	vramplan_set_model(h, "llama-3-8b");
	vramplan_set(h, "gpus", "2xA100");
	vramplan_set(h, "recompute", "bogus");
	check(vramplan_status(h) == VRAMPLAN_USAGE &&
	    strstr(vramplan_diag_message(h, 0), "--recompute") != NULL,
	    "a bad value: the option's message");
	vramplan_set(h, "recompute", "full");
	rc = vramplan_estimate(h);
	first = vramplan_device_peak_bytes(h);
	check(rc == VRAMPLAN_OK && first > 0 &&
	    strcmp(vramplan_plan_value(h, "recompute"), "full") == 0,
	    "estimate: recompute full");
	check(vramplan_estimate(h) == rc &&
	    vramplan_device_peak_bytes(h) == first,
	    "a second estimate on the handle: the same peak");
	{
		const char *tp = vramplan_plan_value(h, "tp");
		const char *pp = vramplan_plan_value(h, "pp");

		check(tp != NULL && pp != NULL && tp != pp &&
		    tp == vramplan_plan_value(h, "tp") &&
		    vramplan_plan_value(h, "json") == NULL,
		    "plan values stay valid side by side; --json is no knob");
	}
	check(vramplan_report(h, VRAMPLAN_TEXT) != NULL &&
	    strstr(vramplan_report(h, VRAMPLAN_TEXT), "Llama-3-8B") != NULL &&
	    vramplan_report(h, VRAMPLAN_CSV) != NULL &&
	    vramplan_json(h)[0] == '{', "text, CSV and JSON reports");
	vramplan_set(h, "micro-batch", "4");
	check(vramplan_report(h, VRAMPLAN_JSON) == NULL,
	    "setting an option forgets the report");
	vramplan_estimate(h);
	check(vramplan_device_peak_bytes(h) > first,
	    "micro-batch 4 needs more than 1");
	vramplan_unset(h, "micro-batch");
	vramplan_estimate(h);
	check(vramplan_device_peak_bytes(h) == first,
	    "unset: back to the first answer");
	vramplan_reset(h);
	vramplan_estimate(h);
	check(vramplan_fits(h) == -1 && vramplan_capacity_bytes(h) == 0,
	    "reset: no gpus, no verdict");
	check(vramplan_set(h, "json", NULL) == VRAMPLAN_USAGE &&
	    vramplan_set(h, "sort", "cost") == VRAMPLAN_USAGE &&
	    vramplan_set(h, "svg", "x.svg") == VRAMPLAN_USAGE &&
	    vramplan_set(h, "no-search", "1") == VRAMPLAN_USAGE &&
	    vramplan_unset(h, "frob") == VRAMPLAN_USAGE,
	    "refused: --json, compare's --sort, --svg, a flag's value, unknown");
	snprintf(path, sizeof path, "%s/tests/bad/07-unknown-key-near-miss.yaml",
	    top ? top : ".");
	vramplan_set_model(h, path);
	check(vramplan_estimate(h) == VRAMPLAN_INPUT &&
	    vramplan_diag_line(h, 0) == 6 && vramplan_diag_column(h, 0) == 1 &&
	    strcmp(vramplan_diag_file(h, 0), path) == 0 &&
	    vramplan_diag_line(h, 99) == 0 &&
	    vramplan_diag_message(h, 99) == NULL,
	    "a bad model file: file:6:1, out of range 0/NULL");
	vramplan_set_model(h, "gpt2");
	vramplan_set_data_dir(h, "/nonexistent");
	check(vramplan_estimate(h) == VRAMPLAN_INPUT,
	    "a data directory without the model: an input error");
	vramplan_free(h);
	vramplan_free(NULL);

	for (i = 0; i < 3; i++) {
		want[i] = jobs[i];
		run_job(&want[i]);
	}
	for (t = 0; t < 4; t++) {
		memcpy(got[t], jobs, sizeof jobs);
		pthread_create(&th[t], NULL, thread_main, got[t]);
	}
	for (t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	same = 1;
	for (t = 0; t < 4; t++)
		for (i = 0; i < 3; i++)
			same &= got[t][i].peak == want[i].peak &&
			    want[i].peak > 0 &&
			    strcmp(got[t][i].tp, want[i].tp) == 0;
	check(same, "4 threads x 3 models (planner on): the same answers");
	/* No directory given and no VRAMPLAN_DATA: beside the library (the
	 * build tree's share/vramplan/models, which make links). */
	unsetenv("VRAMPLAN_DATA");
	run_job(&got[0][2]);
	check(got[0][2].peak == want[2].peak,
	    "without VRAMPLAN_DATA: the library beside libvramplan");
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
