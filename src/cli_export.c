/* cli_export.c — the export command (see cli_export.h). */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include "cli_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"
#include "log.h"
#include "model_read.h"
#include "report.h"

/* Options that are the estimate's report, not a plan: refused here. */
static const enum vp_optid report_only[] = { VP_O_JSON, VP_O_CSV,
    VP_O_EXPLAIN, VP_O_MIN_GPUS, VP_O_MAX_SEQ, VP_O_MAX_MB, VP_O_SVG };

/* A word for the argument vector getopt reads (it moves the pointers,
 * never the text). */
static char *
word(const char *s)
{
	union { const char *c; char *m; } u = { s };

	return u.m;
}

/* Whether args (the user's words) give option name ("--tp", "--tp=2"). */
static bool
user_gives(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], name, n) == 0 &&
		    (argv[i][n] == '\0' || argv[i][n] == '='))
			return true;
	}
	return false;
}

/* One word, quoted for a POSIX shell when it needs it. */
static void
add_word(struct vp_buf *b, const char *w)
{
	const char *q;

	vp_buf_add(b, " ");
	if (*w != '\0' && strspn(w, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,:/+@%") == strlen(w)) {
		vp_buf_add(b, w);
		return;
	}
	vp_buf_add(b, "'");
	for (q = w; *q; q++)
		if (*q == '\'')
			vp_buf_add(b, "'\\''");
		else
			vp_buf_addn(b, q, 1);
	vp_buf_add(b, "'");
}

/* Whether word i of argv is export's own (-o FILE, --output, --deepspeed-
 * file) or the report's (--json, --csv, --explain: --emit's) and how many
 * words it takes. */
static int
own_words(int argc, char **argv, int i)
{
	const char *w = argv[i];
	int next = i + 1 < argc ? 2 : 1;

	if (strcmp(w, "-o") == 0 || strcmp(w, "--output") == 0 ||
	    strcmp(w, "--deepspeed-file") == 0)
		return next;
	if (strncmp(w, "-o", 2) == 0 || strncmp(w, "--output=", 9) == 0 ||
	    strncmp(w, "--deepspeed-file=", 17) == 0)
		return 1;
	/* The report's form (--emit takes them), not the plan. */
	if (strcmp(w, "--json") == 0 || strcmp(w, "--csv") == 0 ||
	    strcmp(w, "--explain") == 0)
		return 1;
	return 0;
}

/* "vramplan" and the words, less export's own (and, reading a DeepSpeed
 * file back, less the --deepspeed-config it replaces). */
static void
command_line(struct vp_buf *b, int argc, char **argv, bool no_ds)
{
	int i, k;

	vp_buf_add(b, "vramplan");
	for (i = 0; i < argc; i += k ? k : 1) {
		k = own_words(argc, argv, i);
		if (no_ds && strcmp(argv[i], "--deepspeed-config") == 0)
			k = i + 1 < argc ? 2 : 1;
		else if (no_ds && strncmp(argv[i], "--deepspeed-config=",
		    19) == 0)
			k = 1;
		if (k == 0)
			add_word(b, argv[i]);
	}
}

/* An option and its value at the end of b. */
static void
add_option(struct vp_buf *b, const char *name, const char *value)
{
	add_word(b, name);
	add_word(b, value);
}

/* Whether format f has a builder for the model (vp_export_model): the
 * model read quietly (a model that cannot be read is the set-up's to
 * report), VP_EXIT_OK or VP_EXIT_EXPORT with the reason said. */
static int
model_first(enum vp_export_fmt f, const struct vp_cli_job *job,
    const char *fmt_name)
{
	const struct vp_optset *o = &job->opts;
	struct vp_log log = { 0 };
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_buf err;
	char *path;
	int rc = VP_EXIT_OK;

	vp_model_init(&m);
	path = vp_resolve_model(job->data_dir, job->model_arg,
	    o->has[VP_O_REVISION] ? o->val[VP_O_REVISION].s : NULL, &log);
	if (path != NULL && vp_model_load_ex(path, o->has[VP_O_TEXT_ONLY] ?
	    VP_READ_TEXT_ONLY : 0, &m, &d) == 0) {
		vp_buf_init(&err);
		if (vp_export_model(f, &m, &err) != 0) {
			fprintf(stderr, "vramplan: export %s: %s\n", fmt_name,
			    err.s);
			rc = VP_EXIT_EXPORT;
		}
		vp_buf_free(&err);
	}
	free(path);
	vp_diags_clear(&d);
	vp_log_free(&log);
	vp_model_free(&m);
	return rc;
}

static int export_run(int fmt, const char *fmt_name, int uargc,
    char **uargv, bool emit);

int
vp_cmd_export(int argc, char **argv)
{
	int i, fmt = -1;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		argv[0] = word("vramplan");
		return vp_cmd_estimate(2, argv);
	}
	if (argc < 2) {
		fputs("vramplan: export: no format given (deepspeed, "
		    "accelerate, torchtitan, torchtune, megatron or hf)\n",
		    stderr);
		fputs("usage: vramplan export FORMAT MODEL [options] "
		    "[-o FILE]\n", stderr);
		return VP_EXIT_USAGE;
	}
	for (i = 0; i < VP_EXPORT_COUNT; i++)
		if (strcmp(argv[1], vp_export_names[i]) == 0)
			fmt = i;
	if (fmt < 0) {
		const char *near = vp_closest(argv[1], vp_export_names,
		    VP_EXPORT_COUNT);

		fprintf(stderr, "vramplan: export: unknown format '%s'",
		    argv[1]);
		if (near)
			fprintf(stderr, "; did you mean '%s'?", near);
		fputs(" (deepspeed, accelerate, torchtitan, torchtune, "
		    "megatron or hf)\n", stderr);
		return VP_EXIT_USAGE;
	}
	return export_run(fmt, argv[1], argc - 2, argv + 2, false);
}

/* Where word i of args is --emit's (--emit FORMAT or --emit=FORMAT): its
 * value, and how many words it takes; 0 when it is not. */
static int
emit_words(int argc, char **argv, int i, const char **value)
{
	if (strcmp(argv[i], "--emit") == 0) {
		*value = i + 1 < argc ? argv[i + 1] : NULL;
		return i + 1 < argc ? 2 : 1;
	}
	if (strncmp(argv[i], "--emit=", 7) == 0) {
		*value = argv[i] + 7;
		return 1;
	}
	return 0;
}

bool
vp_emit_given(int argc, char **argv)
{
	const char *v;
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (emit_words(argc, argv, i, &v) > 0)
			return true;
	return false;
}

int
vp_cmd_emit(int argc, char **argv)
{
	char **uargv;
	const char *value = NULL;
	int i, k, uargc = 0, fmt = -1, rc;

	uargv = calloc((size_t)argc + 1, sizeof *uargv);
	if (uargv == NULL) {
		fputs("vramplan: out of memory\n", stderr);
		return VP_EXIT_SYSTEM;
	}
	/* The user's words less --emit's (the rest is the estimate's). */
	for (i = 1; i < argc; i += k ? k : 1) {
		k = strcmp(argv[i], "--") == 0 ? 0 :
		    emit_words(argc, argv, i, &value);
		if (k == 0)
			uargv[uargc++] = argv[i];
	}
	for (i = 0; value != NULL && i < VP_EXPORT_COUNT; i++)
		if (strcmp(value, vp_export_names[i]) == 0)
			fmt = i;
	if (fmt < 0) {
		const char *near = value ? vp_closest(value, vp_export_names,
		    VP_EXPORT_COUNT) : NULL;

		fprintf(stderr, "vramplan: --emit: %s%s%s", value ?
		    "unknown format '" : "no format given", value ? value : "",
		    value ? "'" : "");
		if (near)
			fprintf(stderr, "; did you mean '%s'?", near);
		fputs(" (deepspeed, accelerate, torchtitan, torchtune, "
		    "megatron or hf)\n", stderr);
		free(uargv);
		return VP_EXIT_USAGE;
	}
	rc = export_run(fmt, vp_export_names[fmt], uargc, uargv, true);
	free(uargv);
	return rc;
}

/*
 * The export of format fmt from the user's words (the model and its
 * options): the file to -o FILE or stdout; with emit (the estimate's
 * --emit) the file to -o FILE and the estimate's report on stdout.
 */
static int
export_run(int fmt, const char *fmt_name, int uargc, char **uargv, bool emit)
{
	struct vp_cli_job job;
	struct vp_diags d = { 0 };
	struct vp_buf out, notes, err, cmd, rt, ds_out;
	bool ds_side;
	struct vp_export_in in = { 0 };
	const char *const *pins;
	const char *path, *p;
	char **nargv;
	int nargc = 0, i, rc;
	size_t k;

	/* The format's options first, where the user gave none: the user's
	 * win (getopt keeps the last value). */
	pins = vp_export_pins((enum vp_export_fmt)fmt);
	nargv = calloc((size_t)uargc + 34, sizeof *nargv);
	if (nargv == NULL) {
		fputs("vramplan: out of memory\n", stderr);
		return VP_EXIT_SYSTEM;
	}
	nargv[nargc++] = word("vramplan");
	for (k = 0; pins[k] != NULL; k += 2)
		if (!user_gives(uargc, uargv, pins[k])) {
			nargv[nargc++] = word(pins[k]);
			nargv[nargc++] = word(pins[k + 1]);
		}
	for (i = 0; i < uargc; i++)
		nargv[nargc++] = uargv[i];
	rc = vp_cli_parse(nargc, nargv, VP_CMD_ESTIMATE | VP_CMD_EXPORT, &job);
	if (rc == VP_EXIT_OK && !job.done && !emit &&
	    job.opts.has[VP_O_EMIT]) {
		fputs("vramplan: export: --emit is the estimate's (vramplan "
		    "MODEL --emit FORMAT -o FILE); export takes its format as "
		    "its first word\n", stderr);
		rc = VP_EXIT_USAGE;
	}
	if (rc == VP_EXIT_OK && !job.done && emit &&
	    !job.opts.has[VP_O_OUTPUT]) {
		fprintf(stderr, "vramplan: --emit %s writes the launch file to "
		    "-o FILE (standard output is the estimate's)\n", fmt_name);
		rc = VP_EXIT_USAGE;
	}
	/* The format's own families first: a model it has no builder for
	 * is refused for that, not for an option the format implies. */
	if (rc == VP_EXIT_OK && !job.done && (rc = model_first(
	    (enum vp_export_fmt)fmt, &job, fmt_name)) == VP_EXIT_OK)
		rc = vp_setup(&job, NULL);
	if (rc != VP_EXIT_OK || job.done) {
		vp_cli_job_free(&job);
		free(nargv);
		return rc;
	}
	for (k = 0; k < sizeof report_only / sizeof report_only[0]; k++)
		if (job.opts.has[report_only[k]] && !(emit &&
		    (report_only[k] == VP_O_JSON || report_only[k] == VP_O_CSV ||
		    report_only[k] == VP_O_EXPLAIN))) {
			fprintf(stderr, "vramplan: export: --%s is the estimate's "
			    "report (vramplan MODEL --%s), not a plan\n",
			    vp_options[report_only[k]].name,
			    vp_options[report_only[k]].name);
			vp_cli_job_free(&job);
			free(nargv);
			return VP_EXIT_USAGE;
		}
	vp_buf_init(&notes);
	vp_export_skips((enum vp_export_fmt)fmt, &job.ses.plan,
	    job.ses.world, &job.ses.open, &notes);
	rc = vp_session_run(&job.ses, &d);
	vp_cli_print_diags(&d);
	if (rc != 0) {
		vp_buf_free(&notes);
		vp_cli_job_free(&job);
		free(nargv);
		return VP_EXIT_INPUT;
	}
	path = job.opts.has[VP_O_OUTPUT] ? job.opts.val[VP_O_OUTPUT].s : NULL;
	vp_buf_init(&out);
	vp_buf_init(&ds_out);
	vp_buf_init(&err);
	vp_buf_init(&cmd);
	vp_buf_init(&rt);
	command_line(&cmd, nargc - 1, nargv + 1, false);
	/* The values the planner was kept from, as it chose them: the
	 * estimate with them given reports this plan. */
	if (job.ses.open.recompute && job.ses.open.skip_recompute &&
	    !user_gives(uargc, uargv, "--recompute"))
		add_option(&cmd, "--recompute",
		    vp_recomp_names[job.ses.plan.recompute]);
	if (job.ses.open.shard && job.ses.open.skip_fsdp &&
	    (job.ses.plan.fsdp != VP_FSDP_NONE ||
	    vp_fw_info[job.ses.plan.framework].fsdp_sharding) &&
	    !user_gives(uargc, uargv, "--fsdp"))
		add_option(&cmd, "--fsdp", vp_fsdp_names[job.ses.plan.fsdp]);
	if (job.ses.open.shard && job.ses.open.skip_zero &&
	    !user_gives(uargc, uargv, "--zero")) {
		char z[8];

		snprintf(z, sizeof z, "%u", job.ses.plan.zero);
		add_option(&cmd, "--zero", z);
	}
	in.model = &job.model;
	in.plan = &job.ses.plan;
	in.world = job.ses.rep.world ? job.ses.rep.world : 1;
	{
		unsigned g = job.ses.plan.gpus_per_node ?
		    job.ses.plan.gpus_per_node : 1;

		in.nodes = (in.world + g - 1) / g;
		if (in.nodes == 0)
			in.nodes = 1;
	}
	in.version = PACKAGE_VERSION;
	in.command = cmd.s;
	in.device_peak = job.ses.mem.device_peak;
	in.card = job.ses.rep.gpus && job.ses.rep.gpus->gpu ?
	    job.ses.rep.gpus->gpu->id : NULL;
	in.fits = job.ses.rep.fits;
	in.ds_file = job.opts.has[VP_O_DS_FILE] ?
	    job.opts.val[VP_O_DS_FILE].s : NULL;
	ds_side = vp_export_needs_ds_file((enum vp_export_fmt)fmt,
	    &job.ses.plan);
	if (ds_side && in.ds_file == NULL) {
		/* What cannot be written at all is said first (exit 6). */
		in.ds_file = "FILE";
		if (vp_export((enum vp_export_fmt)fmt, &in, &out, &notes,
		    &err) != 0) {
			fprintf(stderr, "vramplan: export %s: %s\n", fmt_name,
			    err.s);
			rc = VP_EXIT_EXPORT;
		} else {
			fprintf(stderr, "vramplan: export %s: the plan is "
			    "DeepSpeed ZeRO-%u, whose settings %s reads from a "
			    "DeepSpeed config: give --deepspeed-file FILE, and it "
			    "is written there from the same plan\n", fmt_name,
			    job.ses.plan.zero, fmt == VP_EXPORT_HF ?
			    "the Trainer" : "accelerate");
			rc = VP_EXIT_USAGE;
		}
		goto done;
	}
	if (fmt == VP_EXPORT_DEEPSPEED || ds_side) {
		/* The estimate read back: the user's words, the file, and
		 * what a DeepSpeed config does not hold. */
		command_line(&rt, uargc, uargv, true);
		add_option(&rt, "--deepspeed-config", fmt == VP_EXPORT_DEEPSPEED ?
		    (path ? path : "FILE") : in.ds_file);
		if (fmt == VP_EXPORT_HF && !user_gives(uargc, uargv,
		    "--trainer"))
			add_option(&rt, "--trainer", "hf");
		if (!user_gives(uargc, uargv, "--recompute"))
			add_option(&rt, "--recompute",
			    vp_recomp_names[job.ses.plan.recompute]);
		if (job.ses.plan.recompute_stride > 1 &&
		    !user_gives(uargc, uargv, "--recompute-stride")) {
			char s[16];

			snprintf(s, sizeof s, "%u",
			    job.ses.plan.recompute_stride);
			add_option(&rt, "--recompute-stride", s);
		}
		/* The engine is DeepSpeed's even at stage 0, and what each
		 * knob saves is measured against DeepSpeed's defaults (as
		 * the estimate did where it was given --framework
		 * deepspeed; --zero under plain PyTorch measures against
		 * DDP). */
		if (job.ses.plan.framework == VP_FW_DEEPSPEED &&
		    !user_gives(uargc, uargv, "--framework"))
			add_option(&rt, "--framework", "deepspeed");
		if (job.model.has_moe && !user_gives(uargc, uargv, "--ep"))
			add_option(&rt, "--ep", "1");
		in.roundtrip = rt.s;
	}
	rc = VP_EXIT_OK;
	if (vp_export((enum vp_export_fmt)fmt, &in, &out, &notes, &err) != 0 ||
	    (ds_side && vp_export(VP_EXPORT_DEEPSPEED, &in, &ds_out, &notes,
	    &err) != 0)) {
		fprintf(stderr, "vramplan: export %s: %s\n", fmt_name, err.s);
		rc = VP_EXIT_EXPORT;
	} else {
		for (p = notes.s; p && *p;) {
			const char *nl = strchr(p, '\n');
			int n = nl ? (int)(nl - p) : (int)strlen(p);
			const char *q;

			/* Once each: the DeepSpeed file beside another
			 * format says some of the same. */
			for (q = notes.s; q < p; q = strchr(q, '\n') + 1)
				if (strncmp(q, p, (size_t)n + 1) == 0)
					break;
			if (q == p)
				fprintf(stderr, "vramplan: note: %.*s\n", n, p);
			p += n + (nl != NULL);
		}
		if (in.roundtrip)
			fprintf(stderr, "vramplan: note: read back: %s\n",
			    in.roundtrip);
		if (ds_side && vp_cli_write_atomic(in.ds_file, ds_out.s) != 0)
			rc = VP_EXIT_SYSTEM;
		else if (path) {
			if (vp_cli_write_atomic(path, out.s) != 0)
				rc = VP_EXIT_SYSTEM;
		} else {
			fputs(out.s, stdout);
			rc = vp_cli_flush();
		}
		if (rc == VP_EXIT_OK && emit) {
			/* The estimate's report, as vramplan MODEL prints it
			 * with the format's options. */
			out.len = 0;
			out.s[0] = '\0';
			job.ses.rep.color = isatty(STDOUT_FILENO) &&
			    getenv("NO_COLOR") == NULL;
			if (job.json)
				vp_report_json(&job.ses.rep, &out);
			else if (job.csv)
				vp_report_csv(&job.ses.rep, &out);
			else
				vp_report_text(&job.ses.rep, &out);
			fputs(out.s, stdout);
			rc = vp_cli_flush();
			if (rc == VP_EXIT_OK && (job.ses.rep.fits == 0 ||
			    job.ses.host_short))
				rc = VP_EXIT_NOFIT;
		} else if (rc == VP_EXIT_OK && (job.ses.rep.fits == 0 ||
		    job.ses.host_short)) {
			fprintf(stderr, "vramplan: export: the plan does not "
			    "fit (the estimate's verdict; the file is written "
			    "as it was estimated)\n");
			rc = VP_EXIT_NOFIT;
		}
	}
done:
	vp_buf_free(&ds_out);
	vp_buf_free(&rt);
	vp_buf_free(&cmd);
	vp_buf_free(&err);
	vp_buf_free(&notes);
	vp_buf_free(&out);
	vp_cli_job_free(&job);
	free(nargv);
	return rc;
}
