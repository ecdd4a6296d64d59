/*
 * api.c — the public library (vramplan.h) over the estimate's set-up
 * (setup.c), the session (session.c) and the report (report.c).
 *
 * A handle keeps the options set by name in a struct vp_optset, parsed
 * by the option table's own parser (options.c) as the command line's
 * getopt loop parses them; vramplan_estimate copies them into a job and
 * runs vp_setup and vp_session_run as vp_cmd_estimate does, with a log
 * (log.h) instead of stderr.  Nothing here prints or exits.
 */
#define _GNU_SOURCE	/* dladdr */
#include "config.h"

#include "vramplan.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "band.h"
#include "diag.h"
#include "log.h"
#include "options.h"
#include "report.h"
#include "session.h"
#include "setup.h"
#include "util.h"

#define NFORMATS 3

struct vramplan {
	char *model;
	char *data_dir;			/* vramplan_set_data_dir, or NULL */
	struct vp_buf dir;		/* the directory the estimate used */
	struct vp_optset opts;		/* the options set (strings owned) */
	struct vp_log log;
	struct vp_buf text;		/* vramplan_diag_text */
	bool have_text;
	int status;
	bool have_job;			/* job holds a set-up to free */
	bool have_report;		/* and a report */
	struct vp_cli_job job;
	struct vp_buf out[NFORMATS];
	bool have_out[NFORMATS];
	char *value[VP_O_COUNT];	/* vramplan_plan_value, per option */
};

/* Options the library takes by another road, or not at all. */
static const struct {
	enum vp_optid id;
	const char *why;
} not_here[] = {
	{ VP_O_JSON, "vramplan_report chooses the format" },
	{ VP_O_CSV, "vramplan_report chooses the format" },
	{ VP_O_HELP, "see vramplan(3)" },
	{ VP_O_VERSION, "vramplan_version gives it" },
	/* The library writes no files: the report comes back as text. */
	{ VP_O_SVG, "the library writes no files" },
	{ VP_O_EMIT, "the library writes no files" },
};

const char *
vramplan_version(void)
{
	return PACKAGE_VERSION;
}

vramplan *
vramplan_new(void)
{
	vramplan *h = xcalloc(1, sizeof *h);
	int i;

	vp_optset_init(&h->opts);
	vp_buf_init(&h->dir);
	vp_buf_init(&h->text);
	for (i = 0; i < NFORMATS; i++)
		vp_buf_init(&h->out[i]);
	return h;
}

/* Forget the last estimate (its job borrows the handle's strings). */
static void
clear_results(vramplan *h)
{
	int i;

	if (h->have_job)
		vp_cli_job_free(&h->job);
	h->have_job = h->have_report = false;
	for (i = 0; i < NFORMATS; i++)
		h->have_out[i] = false;
	for (i = 0; i < VP_O_COUNT; i++) {
		free(h->value[i]);
		h->value[i] = NULL;
	}
}

/* A new call: its own diagnostics. */
static void
begin(vramplan *h)
{
	vp_log_free(&h->log);
	h->have_text = false;
	h->status = VRAMPLAN_OK;
}

static int
finish(vramplan *h, int status)
{
	h->status = status;
	return status;
}

void
vramplan_free(vramplan *h)
{
	int i;

	if (h == NULL)
		return;
	clear_results(h);
	vp_log_free(&h->log);
	vp_optset_free(&h->opts);
	free(h->model);
	free(h->data_dir);
	vp_buf_free(&h->dir);
	vp_buf_free(&h->text);
	for (i = 0; i < NFORMATS; i++)
		vp_buf_free(&h->out[i]);
	free(h);
}

int
vramplan_set_data_dir(vramplan *h, const char *dir)
{
	begin(h);
	clear_results(h);
	free(h->data_dir);
	h->data_dir = dir != NULL ? xstrdup(dir) : NULL;
	return finish(h, VRAMPLAN_OK);
}

int
vramplan_set_model(vramplan *h, const char *model)
{
	begin(h);
	clear_results(h);
	if (model == NULL || *model == '\0') {
		vp_logf(&h->log, "vramplan: no model given\n");
		return finish(h, VRAMPLAN_USAGE);
	}
	free(h->model);
	h->model = xstrdup(model);
	return finish(h, VRAMPLAN_OK);
}

/* The estimate's option called name, or -1 after saying why not. */
static int
find_option(vramplan *h, const char *name)
{
	const char *names[VP_O_COUNT], *near;
	size_t n = 0, i;
	int id;

	if (name == NULL)
		name = "";
	id = vp_option_find(name);
	if (id >= 0 && !(vp_options[id].cmds & VP_CMD_ESTIMATE)) {
		vp_logf(&h->log, "vramplan: --%s belongs to '%s', not to the "
		    "estimate\n", name, vp_options[id].cmds & VP_CMD_COMPARE ?
		    "vramplan compare" : vp_options[id].cmds & VP_CMD_MODELS ?
		    "vramplan models" : "vramplan gpus");
		return -1;
	}
	for (i = 0; id >= 0 && i < VP_NELEM(not_here); i++)
		if (not_here[i].id == (enum vp_optid)id) {
			vp_logf(&h->log, "vramplan: --%s is not an option of "
			    "the library (%s)\n", name, not_here[i].why);
			return -1;
		}
	if (id >= 0)
		return id;
	for (id = 0; id < VP_O_COUNT; id++)
		if (vp_options[id].cmds & VP_CMD_ESTIMATE)
			names[n++] = vp_options[id].name;
	near = vp_closest(name, names, n);
	if (near)
		vp_logf(&h->log, "vramplan: unknown option '--%s'; did you "
		    "mean '--%s'?\n", name, near);
	else
		vp_logf(&h->log, "vramplan: unknown option '--%s'\n", name);
	return -1;
}

/* Forget option id (and what an alias flag set with it). */
static void
drop(vramplan *h, enum vp_optid id)
{
	const struct vp_optdef *od = &vp_options[id];

	free(h->opts.owned[id]);
	h->opts.owned[id] = NULL;
	h->opts.has[id] = false;
	memset(&h->opts.val[id], 0, sizeof h->opts.val[id]);
	if (od->alias_of > 0)
		drop(h, (enum vp_optid)(od->alias_of - 1));
}

int
vramplan_set(vramplan *h, const char *option, const char *value)
{
	const struct vp_optdef *od;
	union vp_optval v = { 0 };
	struct vp_buf err;
	int id;

	begin(h);
	clear_results(h);
	if ((id = find_option(h, option)) < 0)
		return finish(h, VRAMPLAN_USAGE);
	od = &vp_options[id];
	if (od->kind == VP_OK_FLAG) {
		if (value != NULL) {
			vp_logf(&h->log, "vramplan: option '--%s' takes no "
			    "value\n", od->name);
			return finish(h, VRAMPLAN_USAGE);
		}
		v.b = true;
	} else {
		if (value == NULL) {
			vp_logf(&h->log, "vramplan: option '--%s' needs a "
			    "value\n", od->name);
			return finish(h, VRAMPLAN_USAGE);
		}
		vp_buf_init(&err);
		if (vp_option_parse((enum vp_optid)id, value, &v, &err) != 0) {
			vp_logf(&h->log, "vramplan: %s\n", err.s);
			vp_buf_free(&err);
			return finish(h, VRAMPLAN_USAGE);
		}
		vp_buf_free(&err);
	}
	drop(h, (enum vp_optid)id);
	vp_optset_set(&h->opts, (enum vp_optid)id, &v);
	if (od->kind == VP_OK_STRING)
		vp_optset_own(&h->opts, (enum vp_optid)id, value);
	return finish(h, VRAMPLAN_OK);
}

int
vramplan_unset(vramplan *h, const char *option)
{
	int id;

	begin(h);
	clear_results(h);
	if ((id = find_option(h, option)) < 0)
		return finish(h, VRAMPLAN_USAGE);
	drop(h, (enum vp_optid)id);
	return finish(h, VRAMPLAN_OK);
}

void
vramplan_reset(vramplan *h)
{
	begin(h);
	clear_results(h);
	vp_optset_free(&h->opts);
}

/*
 * The model library relative to this library's file, as the program looks
 * relative to itself (paths.h): LIBDIR/../share/vramplan/models (libdir
 * is PREFIX/lib), LIBDIR/../../share/vramplan/models (a multiarch
 * PREFIX/lib/TRIPLET, and the build tree's src/.libs next to the
 * share/vramplan links `make` makes); the first that holds gpus.yaml.
 * Linked statically, the file is the program's: BINDIR/../share.
 */
static bool
beside_library(struct vp_buf *out)
{
	static const char *const rel[] = {
		"/../share/" PACKAGE "/models",
		"/../../share/" PACKAGE "/models",
	};
	Dl_info info;
	const char *slash;
	size_t i;

	if (dladdr((void *)vramplan_new, &info) == 0 ||
	    info.dli_fname == NULL ||
	    (slash = strrchr(info.dli_fname, '/')) == NULL)
		return false;
	for (i = 0; i < VP_NELEM(rel); i++) {
		struct vp_buf marker;
		bool found;

		out->len = 0;
		out->s[0] = '\0';
		vp_buf_addn(out, info.dli_fname,
		    (size_t)(slash - info.dli_fname));
		vp_buf_add(out, rel[i]);
		vp_buf_init(&marker);
		vp_buf_printf(&marker, "%s/gpus.yaml", out->s);
		found = access(marker.s, R_OK) == 0;
		vp_buf_free(&marker);
		if (found)
			return true;
	}
	return false;
}

/* The model library's directory (vramplan.h, vramplan_set_data_dir). */
static void
find_data_dir(vramplan *h)
{
	const char *env = getenv("VRAMPLAN_DATA");

	h->dir.len = 0;
	h->dir.s[0] = '\0';
	if (h->data_dir != NULL)
		vp_buf_add(&h->dir, h->data_dir);
	else if (env != NULL && *env)
		vp_buf_add(&h->dir, env);
	else if (!beside_library(&h->dir)) {
		h->dir.len = 0;
		h->dir.s[0] = '\0';
		vp_buf_add(&h->dir, PKGDATADIR "/models");
	}
}

static int
run(vramplan *h, bool search)
{
	struct vp_cli_job *job = &h->job;
	struct vp_diags d = { 0 };
	int rc, i;

	begin(h);
	clear_results(h);
	if (h->model == NULL) {
		vp_logf(&h->log, "vramplan: no model given\n");
		return finish(h, VRAMPLAN_USAGE);
	}
	if (search && !h->opts.has[VP_O_GPUS]) {
		vp_logf(&h->log, "vramplan: the planner needs --gpus NxCARD "
		    "(it chooses a plan for a GPU set)\n");
		return finish(h, VRAMPLAN_USAGE);
	}
	if (search && (h->opts.has[VP_O_NO_SEARCH] || h->opts.has[VP_O_DP])) {
		vp_logf(&h->log, "vramplan: the planner does not run with "
		    "--%s (it fixes the plan)\n", h->opts.has[VP_O_DP] ? "dp" :
		    "no-search");
		return finish(h, VRAMPLAN_USAGE);
	}
	find_data_dir(h);
	/* The job as vp_cli_setup leaves it after parsing: the options
	 * borrowed from the handle (kept until the next call). */
	memset(job, 0, sizeof *job);
	vp_optset_init(&job->opts);
	vp_optset_init(&job->file);
	for (i = 0; i < VP_O_COUNT; i++) {
		job->opts.has[i] = h->opts.has[i];
		job->opts.val[i] = h->opts.val[i];
	}
	job->model_arg = h->model;
	job->data_dir = h->dir.s;
	h->have_job = true;
	if ((rc = vp_setup(job, &h->log)) != VRAMPLAN_OK)
		return finish(h, rc);
	rc = vp_session_run(&job->ses, &d);
	vp_log_diags(&h->log, &d);
	if (rc != 0)
		return finish(h, VRAMPLAN_INPUT);
	job->ses.rep.color = false;
	h->have_report = true;
	return finish(h, job->ses.rep.fits == 0 || job->ses.host_short ?
	    VRAMPLAN_NOFIT : VRAMPLAN_OK);
}

int
vramplan_estimate(vramplan *h)
{
	return run(h, false);
}

int
vramplan_search(vramplan *h)
{
	return run(h, true);
}

int
vramplan_status(const vramplan *h)
{
	return h->status;
}

const char *
vramplan_report(vramplan *h, enum vramplan_format format)
{
	struct vp_buf *b;
	int f = (int)format;

	if (!h->have_report || f < 0 || f >= NFORMATS)
		return NULL;
	b = &h->out[f];
	if (!h->have_out[f]) {
		b->len = 0;
		b->s[0] = '\0';
		if (format == VRAMPLAN_JSON)
			vp_report_json(&h->job.ses.rep, b);
		else if (format == VRAMPLAN_CSV)
			vp_report_csv(&h->job.ses.rep, b);
		else
			vp_report_text(&h->job.ses.rep, b);
		h->have_out[f] = true;
	}
	return b->s;
}

const char *
vramplan_json(vramplan *h)
{
	return vramplan_report(h, VRAMPLAN_JSON);
}

uint64_t
vramplan_allocated_peak_bytes(const vramplan *h)
{
	return h->have_report ? h->job.ses.mem.allocated_peak : 0;
}

uint64_t
vramplan_reserved_peak_bytes(const vramplan *h)
{
	return h->have_report ? h->job.ses.mem.reserved_peak : 0;
}

uint64_t
vramplan_device_peak_bytes(const vramplan *h)
{
	return h->have_report ? h->job.ses.mem.device_peak : 0;
}

uint64_t
vramplan_capacity_bytes(const vramplan *h)
{
	const struct vp_report *r = &h->job.ses.rep;

	if (!h->have_report || r->gpus == NULL || r->gpus->gpu == NULL)
		return 0;
	return r->gpus->gpu->usable_bytes;
}

int
vramplan_fits(const vramplan *h)
{
	const struct vp_report *r = &h->job.ses.rep;

	if (!h->have_report || r->fits < 0)
		return -1;
	return r->fits == 1 && !r->host_over && !h->job.ses.host_short;
}

const char *
vramplan_verdict(const vramplan *h)
{
	const struct vp_report *r = &h->job.ses.rep;

	if (!h->have_report || r->gpus == NULL)
		return NULL;
	/* As report.c's JSON: host RAM short is does_not_fit. */
	return vp_verdict_names[r->host_over ? VP_VERDICT_NOFIT : r->verdict];
}

const char *
vramplan_plan_value(vramplan *h, const char *option)
{
	int id;

	if (!h->have_report || option == NULL ||
	    (id = vp_option_find(option)) < 0 ||
	    vp_options[id].field == VP_OF_NONE)
		return NULL;
	if (h->value[id] == NULL) {
		struct vp_buf b;

		vp_buf_init(&b);
		vp_option_value((enum vp_optid)id, &h->job.ses.plan, &b);
		h->value[id] = b.s;	/* the buffer's text, kept */
	}
	return h->value[id];
}

size_t
vramplan_diag_count(const vramplan *h)
{
	return h->log.n;
}

int
vramplan_diag_severity(const vramplan *h, size_t i)
{
	if (i >= h->log.n)
		return -1;
	return h->log.v[i].level == VP_ERROR ? VRAMPLAN_ERROR :
	    h->log.v[i].level == VP_WARNING ? VRAMPLAN_WARNING : VRAMPLAN_NOTE;
}

const char *
vramplan_diag_file(const vramplan *h, size_t i)
{
	return i < h->log.n ? h->log.v[i].file : NULL;
}

int
vramplan_diag_line(const vramplan *h, size_t i)
{
	return i < h->log.n ? h->log.v[i].line : 0;
}

int
vramplan_diag_column(const vramplan *h, size_t i)
{
	return i < h->log.n ? h->log.v[i].col : 0;
}

const char *
vramplan_diag_message(const vramplan *h, size_t i)
{
	return i < h->log.n ? h->log.v[i].msg : NULL;
}

const char *
vramplan_diag_text(vramplan *h)
{
	if (!h->have_text) {
		h->text.len = 0;
		h->text.s[0] = '\0';
		vp_log_format(&h->log, &h->text);
		h->have_text = true;
	}
	return h->text.s;
}
