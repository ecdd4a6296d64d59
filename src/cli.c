/*
 * cli.c — the estimate command and the listing commands (see cli.h).
 *
 * Options are parsed into an override set first; the model is read next
 * (its training block gives defaults); the overrides go on top; then the
 * pure core computes and a renderer formats into a buffer, written here.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include "cli.h"
#include "ds_read.h"
#include "cli_calib.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_read.h"
#include "mem.h"
#include "model_read.h"
#include "plan.h"
#include "plan_read.h"
#include "plan_search.h"
#include "report.h"
#include "report_compare.h"
#include "report_svg.h"
#include "session.h"
#include "cost.h"
#include "finetune.h"
#include "paths.h"
#include "hfcache.h"

void
vp_usage(void)
{
	fputs("usage: vramplan MODEL [--gpus NxCARD] [options]  "
	    "(see vramplan(1), or --help)\n", stderr);
}

/*
 * The getopt table of a command, made from the option table: every row
 * the command takes, the value VP_O_* + 256.  opts has VP_O_COUNT + 1
 * rows.
 */
static void
getopt_table(unsigned cmd, struct option *opts)
{
	int i, n = 0;

	for (i = 0; i < VP_O_COUNT; i++) {
		if (!(vp_options[i].cmds & cmd))
			continue;
		opts[n].name = vp_options[i].name;
		opts[n].has_arg = vp_options[i].kind == VP_OK_FLAG ?
		    no_argument : required_argument;
		opts[n].flag = NULL;
		opts[n].val = 256 + i;
		n++;
	}
	memset(&opts[n], 0, sizeof opts[n]);
}

/* The command's name in messages: "" for the estimate, "compare: ". */
static const char *
cmd_prefix(unsigned cmd)
{
	return cmd == VP_CMD_COMPARE ? "compare: " : cmd == VP_CMD_TUI ?
	    "tui: " : cmd == VP_CMD_GPUS ? "gpus: " : cmd == VP_CMD_MODELS ?
	    "models: " : "";
}

/*
 * An option the getopt table of cmd does not hold.  When another command
 * takes it, say which; else it is unknown, with the nearest name.
 */
static void
say_not_taken(unsigned cmd, const char *arg)
{
	const char *names[VP_O_COUNT], *near, *eq;
	char name[64];
	size_t n = 0, len;
	int i, id;

	if (arg[0] == '-' && arg[1] != '-') {
		/* A short option: -h is the only one. */
		fprintf(stderr, "vramplan: %sunknown option '-%c' (options are "
		    "long, --name; -h is --help)\n", cmd_prefix(cmd),
		    optopt > 0 && optopt < 256 ? optopt : arg[1]);
		return;
	}
	arg += strspn(arg, "-");
	len = (eq = strchr(arg, '=')) ? (size_t)(eq - arg) : strlen(arg);
	snprintf(name, sizeof name, "%.*s", (int)len, arg);
	id = vp_option_find(name);
	if (id >= 0 && cmd == VP_CMD_TUI &&
	    (vp_options[id].cmds & VP_CMD_ESTIMATE)) {
		fprintf(stderr, "vramplan: tui: --%s is for the estimate's "
		    "report (vramplan MODEL --%s); the TUI shows its own\n",
		    name, name);
		return;
	}
	if (id >= 0) {
		fprintf(stderr, "vramplan: %s--%s belongs to '%s', not to "
		    "this command (see --help)\n", cmd_prefix(cmd), name,
		    vp_options[id].cmds & VP_CMD_ESTIMATE ? "vramplan MODEL" :
		    vp_options[id].cmds & VP_CMD_COMPARE ?
		    "vramplan compare" : "vramplan gpus");
		return;
	}
	for (i = 0; i < VP_O_COUNT; i++)
		if ((vp_options[i].cmds & cmd) &&
		    strncmp(vp_options[i].name, name, len) == 0)
			names[n++] = vp_options[i].name;
	if (n > 1 && len > 0) {
		/* getopt_long takes a prefix of one option only. */
		struct vp_buf b;

		vp_buf_init(&b);
		vp_buf_alternatives(&b, "--", names, n);
		fprintf(stderr, "vramplan: %sambiguous option: --%s could be "
		    "%s\n", cmd_prefix(cmd), name, b.s);
		vp_buf_free(&b);
		return;
	}
	for (n = 0, i = 0; i < VP_O_COUNT; i++)
		if (vp_options[i].cmds & cmd)
			names[n++] = vp_options[i].name;
	near = vp_closest(name, names, n);
	fprintf(stderr, "vramplan: %sunknown option '--%s'", cmd_prefix(cmd),
	    name);
	if (near)
		fprintf(stderr, "; did you mean '--%s'?", near);
	fputc('\n', stderr);
}

/* The options of cmd in argv into o; the operands start at *first. */
static int
parse_options(int argc, char **argv, unsigned cmd, struct vp_optset *o,
    const char **prices, size_t *nprices, int *first)
{
	struct option opts[VP_O_COUNT + 1];
	struct vp_buf err;
	int c;

	getopt_table(cmd, opts);
	vp_buf_init(&err);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, (cmd & VP_CMD_EXPORT) ? "ho:" :
	    "h", opts, NULL)) != -1) {
		enum vp_optid id;

		if (c == 'h')
			c = 256 + VP_O_HELP;
		if (c == 'o' && (cmd & VP_CMD_EXPORT))
			c = 256 + VP_O_OUTPUT;	/* export's -o FILE */
		if (c < 256 || c >= 256 + VP_O_COUNT) {
			if (optopt >= 256 && strchr(argv[optind - 1], '='))
				fprintf(stderr, "vramplan: %soption '%s' takes "
				    "no value\n", cmd_prefix(cmd),
				    argv[optind - 1]);
			else if (optopt >= 256)
				fprintf(stderr, "vramplan: %soption '%s' needs a "
				    "value\n", cmd_prefix(cmd), argv[optind - 1]);
			else
				say_not_taken(cmd, argv[optind - 1]);
			if (cmd & (VP_CMD_ESTIMATE | VP_CMD_TUI))
				vp_usage();
			vp_buf_free(&err);
			return VP_EXIT_USAGE;
		}
		union vp_optval v = { 0 };

		id = (enum vp_optid)(c - 256);
		if (vp_options[id].repeat) {
			if (*nprices == VP_CLI_MAXREPEAT) {
				fprintf(stderr, "vramplan: too many --%s "
				    "options\n", vp_options[id].name);
				vp_buf_free(&err);
				return VP_EXIT_USAGE;
			}
			prices[(*nprices)++] = optarg;
		} else if (vp_option_parse(id, optarg, &v, &err) != 0) {
			fprintf(stderr, "vramplan: %s\n", err.s);
			vp_buf_free(&err);
			return VP_EXIT_USAGE;
		}
		vp_optset_set(o, id, &v);
	}
	vp_buf_free(&err);
	*first = optind;
	return VP_EXIT_OK;
}

/* --help of the estimate and the TUI, from the option table. */
static void
help(void)
{
	struct vp_buf b;

	vp_buf_init(&b);
	vp_buf_add(&b,
"usage: vramplan MODEL [--gpus NxCARD] [options]\n"
"       vramplan compare MODEL --tokens N [--sort cost|time|gpus] [--svg FILE]\n"
"       vramplan tui MODEL [options]      (interactive what-if explorer)\n"
"       vramplan calibrate [--device cuda|cpu] [--model M]... | --show\n"
"       vramplan models [--names] [--cached] | gpus [--ids]\n"
"       vramplan completions bash|zsh|fish\n"
"       vramplan export FORMAT MODEL [options] [-o FILE]  (FORMAT: deepspeed,\n"
"                accelerate, torchtitan, torchtune, megatron or hf)\n"
"\n"
"Estimate the GPU memory of one training step and whether it fits; with\n"
"--gpus, a planner chooses the parallel, sharding and recompute options\n"
"left out (those given stay fixed).  MODEL is a vramplan YAML file, a\n"
"Hugging Face config.json or its directory, a library name ('vramplan\n"
"models'), or ORG/NAME from the local Hugging Face cache (offline).\n"
"compare: for every card, the fewest GPUs that fit, time and cost of N tokens.\n"
"\n");
	vp_options_help(VP_CMD_ESTIMATE, 0, &b);
	vp_buf_add(&b, "\ncompare also takes:\n");
	vp_options_help(VP_CMD_COMPARE, VP_CMD_ESTIMATE, &b);
	vp_buf_add(&b, "\nexport also takes:\n");
	vp_options_help(VP_CMD_EXPORT, VP_CMD_ESTIMATE, &b);
	vp_buf_add(&b, "\nmodels and gpus also take:\n");
	vp_options_help(VP_CMD_MODELS | VP_CMD_GPUS, VP_CMD_ESTIMATE |
	    VP_CMD_COMPARE, &b);
	vp_buf_add(&b,
"\n"
"Exit status: 0 fits (or no --gpus), 1 does not fit, 2 usage error,\n"
"3 bad input, 4 system error, 5 calibrate found no GPU,\n"
"6 export: the plan cannot be written in that format.\n"
"Manuals: vramplan(1), vramplan-model(5).\n");
	fputs(b.s, stdout);
	vp_buf_free(&b);
}

/* The estimate's model and plan (setup.c), its messages on stderr. */
static int
load_model_plan(const char *model_arg, struct vp_optset *o,
    struct vp_optset *file, struct vp_model *m, struct vp_plan *p,
    struct vp_trainer_applied *ta)
{
	return vp_load_model_plan(NULL, model_arg, o, file, m, p, ta, NULL);
}

int
vp_cli_parse(int argc, char **argv, unsigned cmd, struct vp_cli_job *job)
{
	struct vp_optset *o = &job->opts;
	const char *prices[1];
	size_t nprices = 0;
	int rc, first;

	memset(job, 0, sizeof *job);
	vp_optset_init(o);
	vp_optset_init(&job->file);
	if ((rc = parse_options(argc, argv, cmd, o, prices, &nprices,
	    &first)) != VP_EXIT_OK)
		return rc;
	if (o->has[VP_O_HELP]) {
		help();
		job->done = true;
		return vp_cli_flush();
	}
	if (o->has[VP_O_VERSION]) {
		printf("vramplan %s\n", PACKAGE_VERSION);
		job->done = true;
		return vp_cli_flush();
	}
	if (first >= argc) {
		fprintf(stderr, "vramplan: %sno model given\n",
		    cmd_prefix(cmd));
		vp_usage();
		return VP_EXIT_USAGE;
	}
	if (first + 1 < argc) {
		fprintf(stderr, "vramplan: unexpected argument '%s' after the "
		    "model\n", argv[first + 1]);
		vp_usage();
		return VP_EXIT_USAGE;
	}
	job->model_arg = argv[first];
	return VP_EXIT_OK;
}

int
vp_cli_setup(int argc, char **argv, unsigned cmd, struct vp_cli_job *job)
{
	int rc = vp_cli_parse(argc, argv, cmd, job);

	if (rc != VP_EXIT_OK || job->done)
		return rc;
	return vp_setup(job, NULL);
}


int
vp_cmd_estimate(int argc, char **argv)
{
	struct vp_cli_job job;
	struct vp_diags d = { 0 };
	struct vp_buf out;
	struct vp_timeline *tl = NULL;
	bool nofit;
	int rc, e;

	rc = vp_cli_setup(argc, argv, VP_CMD_ESTIMATE, &job);
	if (rc != VP_EXIT_OK || job.done) {
		vp_cli_job_free(&job);
		return rc;
	}
	/* --svg: the exact replay keeps the worst stage's timeline. */
	if (job.opts.has[VP_O_SVG])
		job.ses.timeline = tl = xcalloc(1, sizeof *tl);
	rc = vp_session_run(&job.ses, &d);
	vp_cli_print_diags(&d);
	if (rc != 0) {
		free(tl);
		vp_cli_job_free(&job);
		return VP_EXIT_INPUT;
	}
	job.ses.rep.color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
	vp_buf_init(&out);
	/* The picture first, as compare's: when it cannot be written,
	 * nothing is printed (exit 4). */
	if (tl != NULL) {
		vp_report_svg(&job.ses.rep, tl, &out);
		free(tl);
		if (vp_cli_write_atomic(job.opts.val[VP_O_SVG].s, out.s) != 0) {
			vp_buf_free(&out);
			vp_cli_job_free(&job);
			return VP_EXIT_SYSTEM;
		}
		out.len = 0;
		out.s[0] = '\0';
	}
	if (job.json)
		vp_report_json(&job.ses.rep, &out);
	else if (job.csv)
		vp_report_csv(&job.ses.rep, &out);
	else
		vp_report_text(&job.ses.rep, &out);
	fputs(out.s, stdout);
	vp_buf_free(&out);
	e = vp_cli_flush();
	nofit = job.ses.rep.fits == 0 || job.ses.host_short;
	vp_cli_job_free(&job);
	if (e != VP_EXIT_OK)
		return e;
	return nofit ? VP_EXIT_NOFIT : VP_EXIT_OK;
}

int
vp_cmd_models(int argc, char **argv)
{
	char **names;
	size_t n, i;
	int bad = 0, rc, first;
	struct vp_optset o;
	const char *prices[1];
	size_t nprices = 0;

	vp_optset_init(&o);
	if ((rc = parse_options(argc, argv, VP_CMD_MODELS, &o, prices,
	    &nprices, &first)) != VP_EXIT_OK) {
		fputs("usage: vramplan models [--names] [--cached]\n", stderr);
		return rc;
	}
	if (o.has[VP_O_HELP]) {		/* -h */
		puts("usage: vramplan models [--names] [--cached]");
		return vp_cli_flush();
	}
	if (first < argc) {
		fprintf(stderr, "vramplan: models takes no arguments, not "
		    "'%s'\n", argv[first]);
		return VP_EXIT_USAGE;
	}
	if (o.has[VP_O_NAMES] || o.has[VP_O_CACHED]) {
		/* For shell completion (completion.c): names alone; the
		 * library's, then the cache's. */
		n = o.has[VP_O_NAMES] ? vp_cli_library(&names) : 0;
		for (i = 0; i < n; i++)
			puts(names[i]);
		if (o.has[VP_O_NAMES])
			vp_cli_names_free(names, n);
		n = o.has[VP_O_CACHED] ? vp_hfcache_list(&names) : 0;
		for (i = 0; i < n; i++)
			puts(names[i]);
		if (o.has[VP_O_CACHED])
			vp_hfcache_list_free(names, n);
		return vp_cli_flush();
	}
	n = vp_cli_library(&names);
	if (n == 0) {
		fprintf(stderr, "vramplan: no models found in '%s'\n",
		    vp_data_dir());
		return VP_EXIT_INPUT;
	}
	printf("%-18s %-24s %10s %7s %7s %6s %s\n", "NAME", "MODEL", "PARAMS",
	    "LAYERS", "HIDDEN", "HEADS", "NOTES");
	for (i = 0; i < n; i++) {
		struct vp_diags d = { 0 };
		struct vp_model m;
		struct vp_param_count pc;
		struct vp_buf p;
		char cnt[32], e1[VP_ESC_LEN], e2[VP_ESC_LEN];

		vp_buf_init(&p);
		vp_buf_printf(&p, "%s/%s.yaml", vp_data_dir(), names[i]);
		if (vp_model_load(p.s, &m, &d) != 0) {
			vp_cli_print_diags(&d);
			bad = 1;
		} else if (m.lg != NULL) {
			/* A layer graph has no transformer sizes. */
			vp_model_params(&m, &pc);
			printf("%-18s %-24s %10s %7s %7s %6s layer graph\n",
			    vp_esc(names[i], e1, sizeof e1), vp_esc(m.name,
			    e2, sizeof e2), vp_fmt_count(cnt, sizeof cnt,
			    pc.total), "-", "-", "-");
			vp_diags_clear(&d);
		} else {
			vp_model_params(&m, &pc);
			printf("%-18s %-24s %10s %7llu %7llu %3llu/%-2llu %s%s%s\n",
			    vp_esc(names[i], e1, sizeof e1), vp_esc(m.name,
			    e2, sizeof e2), vp_fmt_count(cnt, sizeof cnt,
			    pc.total), (unsigned long long)m.layers,
			    (unsigned long long)m.hidden,
			    (unsigned long long)m.heads,
			    (unsigned long long)m.kv_heads,
			    m.has_moe ? "MoE " : "",
			    /* layers: the encoder's, as many in the decoder
			     * for the library's T5s */
			    m.arch == VP_ARCH_ENCDEC ? "encoder-decoder " : "",
			    vp_act_names[m.act]);
			vp_diags_clear(&d);
		}
		vp_model_free(&m);
		vp_buf_free(&p);
	}
	vp_cli_names_free(names, n);
	if (vp_cli_flush() != VP_EXIT_OK)
		return VP_EXIT_SYSTEM;
	return bad ? VP_EXIT_INPUT : VP_EXIT_OK;
}

/* Card filters shared by compare and gpus. */
struct card_filter {
	const char *vendor, *segment;
	double min_mem_gib;
};

/* --vendor, --segment and --min-mem, as given. */
static void
card_filter_from(const struct vp_optset *o, struct card_filter *f)
{
	f->vendor = o->has[VP_O_VENDOR] ? o->val[VP_O_VENDOR].s : NULL;
	f->segment = o->has[VP_O_SEGMENT] ? o->val[VP_O_SEGMENT].s : NULL;
	f->min_mem_gib = o->has[VP_O_MIN_MEM] ? o->val[VP_O_MIN_MEM].x : 0;
}

static bool
card_selected(const struct vp_gpu *g, const struct card_filter *f)
{
	if (f->vendor && (g->vendor == NULL ||
	    strstr(g->vendor, f->vendor) == NULL))
		return false;
	if (f->segment && (g->segment == NULL ||
	    strstr(g->segment, f->segment) == NULL))
		return false;
	return (double)g->usable_bytes >= f->min_mem_gib * VP_GIB;
}

int
vp_cmd_gpus(int argc, char **argv)
{
	struct card_filter filt;
	struct vp_catalog cat;
	struct vp_optset o;
	const char *prices[1];
	size_t nprices = 0, i;
	int rc;

	vp_optset_init(&o);
	if ((rc = parse_options(argc, argv, VP_CMD_GPUS, &o, prices, &nprices,
	    &optind)) != VP_EXIT_OK) {
		fputs("usage: vramplan gpus [--vendor V] [--segment S] "
		    "[--min-mem GIB]\n", stderr);
		return rc;
	}
	card_filter_from(&o, &filt);
	if (optind < argc) {
		fprintf(stderr, "vramplan: gpus takes no arguments, not '%s'\n",
		    argv[optind]);
		return VP_EXIT_USAGE;
	}
	if (vp_cli_load_catalog(NULL, &cat) != 0)
		return VP_EXIT_INPUT;
	if (o.has[VP_O_IDS]) {
		/* For shell completion (completion.c): ids alone. */
		for (i = 0; i < cat.n; i++)
			if (card_selected(&cat.v[i], &filt))
				puts(cat.v[i].id);
		vp_catalog_free(&cat);
		return vp_cli_flush();
	}
	printf("%-17s %-34s %7s %10s %9s %9s %9s\n", "ID", "NAME", "MEMORY",
	    "USABLE", "BF16 TF", "BW GB/s", "$/GPU-h");
	for (i = 0; i < cat.n; i++) {
		const struct vp_gpu *g = &cat.v[i];
		const struct vp_price *cheapest = vp_gpu_cheapest_price(g);
		double best = cheapest ? cheapest->usd_per_gpu_hour : NAN;
		char b[32], tf[16], pr[16], e1[VP_ESC_LEN], e2[VP_ESC_LEN];

		if (!card_selected(g, &filt))
			continue;
		if (isnan(g->bf16_tflops))
			snprintf(tf, sizeof tf, "-");
		else
			snprintf(tf, sizeof tf, "%.0f", g->bf16_tflops);
		if (isnan(best))
			snprintf(pr, sizeof pr, "no price");
		else
			snprintf(pr, sizeof pr, "%.2f", best);
		printf("%-17s %-34.34s %5.0fGB %10s %9s %9.0f %9s\n",
		    vp_esc(g->id, e1, sizeof e1), vp_esc(g->name ? g->name :
		    "", e2, sizeof e2), g->memory_gb,
		    vp_fmt_bytes(b, sizeof b, g->usable_bytes), tf,
		    g->bandwidth_gbs, pr);
	}
	vp_catalog_free(&cat);
	return vp_cli_flush();
}

/* --price CARD=USD: the user's price replaces the catalog's. */
static int
apply_prices(struct vp_catalog *cat, const char *const *prices, size_t n)
{
	const char *err;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *eq = strchr(prices[i], '=');
		char name[64];
		const struct vp_gpu *g;
		double usd;

		if (eq == NULL || eq == prices[i] ||
		    (size_t)(eq - prices[i]) >= sizeof name ||
		    vp_parse_double(eq + 1, 0, 1e4, &usd, &err) != 0) {
			fprintf(stderr, "vramplan: --price '%s' must be "
			    "CARD=USD_PER_GPU_HOUR, e.g. H100=2.49\n", prices[i]);
			return VP_EXIT_USAGE;
		}
		memcpy(name, prices[i], (size_t)(eq - prices[i]));
		name[eq - prices[i]] = '\0';
		if ((g = vp_catalog_find(cat, name)) == NULL) {
			fprintf(stderr, "vramplan: --price: unknown GPU '%s' "
			    "(see 'vramplan gpus')\n", name);
			return VP_EXIT_USAGE;
		}
		vp_catalog_set_price(&cat->v[g - cat->v], usd);
	}
	return VP_EXIT_OK;
}

/* compare's own checks: the size of the job, one output format. */
static int
compare_checks(const struct vp_optset *o, int first, int argc)
{
	if (o->has[VP_O_HELP]) {
		struct vp_buf b;

		vp_buf_init(&b);
		vp_buf_add(&b, "usage: vramplan compare MODEL --tokens N "
		    "[options]\n\n");
		vp_options_help(VP_CMD_COMPARE, 0, &b);
		vp_buf_add(&b, "\nSee vramplan(1).\n");
		fputs(b.s, stdout);
		vp_buf_free(&b);
		return -1;
	}
	if (first >= argc) {
		fputs("vramplan: compare: no model given\nusage: vramplan "
		    "compare MODEL --tokens N  (see vramplan(1))\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (!o->has[VP_O_TOKENS] && !o->has[VP_O_STEPS]) {
		fputs("vramplan: compare needs the size of the job: --tokens N "
		    "(or --steps N with --global-batch SEQUENCES)\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (o->has[VP_O_GLOBAL_BATCH] && o->has[VP_O_GRAD_ACCUM]) {
		fputs("vramplan: compare: --global-batch sets the gradient "
		    "accumulation of each plan (global batch / (micro-batch x "
		    "data-parallel ranks)); leave --grad-accum out\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (o->has[VP_O_STEPS] && !o->has[VP_O_GLOBAL_BATCH]) {
		fputs("vramplan: --steps needs --global-batch (sequences per "
		    "step)\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (o->has[VP_O_JSON] && o->has[VP_O_CSV]) {
		fputs("vramplan: --json and --csv exclude each other\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (o->has[VP_O_PROFILE] && strcmp(o->val[VP_O_PROFILE].s,
	    "none") != 0) {
		fputs("vramplan: compare: --profile takes only 'none' here: "
		    "each card uses the profile stored for it (vramplan "
		    "calibrate --show)\n", stderr);
		return VP_EXIT_USAGE;
	}
	return VP_EXIT_OK;
}

/*
 * One card of compare, under its calibrated profile when one is stored
 * for it (unless --profile none), as the estimate would take it.
 */
static void
compare_card(const struct vp_optset *o, const struct vp_compare *job,
    const struct vp_gpu *g, struct vp_card_result *out)
{
	struct vp_profile prof;
	struct vp_buf label;
	int rc;

	rc = vp_cli_profile(o->has[VP_O_PROFILE] ? o->val[VP_O_PROFILE].s :
	    NULL, g, VP_DEVICE_CUDA, &prof, &label);
	vp_buf_free(&label);
	vp_compare_card(job, g, rc > 0 ? &prof : NULL, out);
	out->calibrated = rc > 0;
}

/*
 * The job compare prices on every card: the plan the options make, the
 * planner's knobs (every layout knob the options leave open; compare
 * keeps context and expert parallelism at what they say), the tokens.
 */
static int
compare_job(const struct vp_optset *o, const struct vp_model *m,
    struct vp_compare *job)
{
	struct vp_diags d = { 0 };

	job->model = m;
	job->precision_given = o->has[VP_O_PRECISION];
	job->undated_equal = o->has[VP_O_UNDATED_PRICES];
	job->max_gpus = o->has[VP_O_MAX_GPUS] ?
	    (unsigned)o->val[VP_O_MAX_GPUS].u : 1024;
	vp_optset_open(o, false, &job->open);
	job->open.cp = false;
	job->deadline_hours = job->budget_usd = NAN;
	if (o->has[VP_O_DEADLINE]) {
		const char *why;

		(void)vp_parse_hours(o->val[VP_O_DEADLINE].s,
		    &job->deadline_hours, &why);
	}
	if (o->has[VP_O_BUDGET])
		job->budget_usd = o->val[VP_O_BUDGET].x;
	job->global_batch = o->has[VP_O_GLOBAL_BATCH] ?
	    o->val[VP_O_GLOBAL_BATCH].u : 0;
	if (job->global_batch && job->global_batch %
	    job->base.micro_batch) {
		fprintf(stderr, "vramplan: compare: --global-batch %llu is not "
		    "a multiple of the micro-batch (%llu): every data-parallel "
		    "rank runs whole micro-batches\n",
		    (unsigned long long)job->global_batch,
		    (unsigned long long)job->base.micro_batch);
		return VP_EXIT_USAGE;
	}
	job->tokens = o->has[VP_O_TOKENS] ? o->val[VP_O_TOKENS].x :
	    (double)o->val[VP_O_STEPS].u *
	    (double)o->val[VP_O_GLOBAL_BATCH].u * (double)job->base.seq;
	if (vp_plan_check(&job->base, m, 0, &d) != 0) {
		vp_cli_print_diags(&d);
		return VP_EXIT_INPUT;
	}
	return VP_EXIT_OK;
}

/* The report in the format asked for; the SVG first, to its file. */
static int
compare_output(const struct vp_optset *o, struct vp_compare_report *rep)
{
	struct vp_buf out;
	int e = VP_EXIT_OK;

	vp_buf_init(&out);
	if (o->has[VP_O_SVG]) {
		vp_compare_svg(rep, &out);
		e = vp_cli_write_atomic(o->val[VP_O_SVG].s, out.s) != 0 ?
		    VP_EXIT_SYSTEM : VP_EXIT_OK;
		out.len = 0;
		out.s[0] = '\0';
	}
	if (e == VP_EXIT_OK) {
		if (o->has[VP_O_JSON])
			vp_compare_json(rep, &out);
		else if (o->has[VP_O_CSV])
			vp_compare_csv(rep, &out);
		else
			vp_compare_text(rep, &out);
		if (o->has[VP_O_EXPLAIN] && !o->has[VP_O_JSON] &&
		    !o->has[VP_O_CSV])
			vp_buf_printf(&out, "\n%s", vp_time_assumptions);
		fputs(out.s, stdout);
		e = vp_cli_flush();
	}
	vp_buf_free(&out);
	return e;
}

int
vp_cmd_compare(int argc, char **argv)
{
	struct vp_optset o, file;
	struct vp_catalog cat = { 0 };
	struct vp_model model = { 0 };
	struct vp_compare job;
	struct vp_compare_report rep;
	struct vp_trainer_applied trainer;
	struct vp_card_result *cards = NULL;
	struct card_filter filt;
	const char *prices[VP_CLI_MAXREPEAT];
	size_t nprices = 0, i, n = 0;
	enum vp_sort sort;
	int rc, first, anyfit = 0;

	memset(&job, 0, sizeof job);
	vp_optset_init(&o);
	vp_optset_init(&file);
	rc = parse_options(argc, argv, VP_CMD_COMPARE, &o, prices, &nprices,
	    &first);
	if (rc == VP_EXIT_OK && (rc = compare_checks(&o, first, argc)) < 0) {
		rc = vp_cli_flush();	/* --help */
		goto out;
	}
	if (rc == VP_EXIT_OK)
		rc = load_model_plan(argv[first], &o, &file, &model, &job.base,
		    &trainer);
	if (rc == VP_EXIT_OK && vp_cli_load_catalog(o.has[VP_O_CATALOG] ?
	    o.val[VP_O_CATALOG].s : NULL, &cat) != 0)
		rc = VP_EXIT_INPUT;
	if (rc == VP_EXIT_OK)
		rc = apply_prices(&cat, prices, nprices);
	if (rc == VP_EXIT_OK)
		rc = compare_job(&o, &model, &job);
	if (rc == VP_EXIT_OK) {
		card_filter_from(&o, &filt);
		cards = xcalloc(cat.n ? cat.n : 1, sizeof *cards);
		for (i = 0; i < cat.n; i++) {
			if (!card_selected(&cat.v[i], &filt))
				continue;
			compare_card(&o, &job, &cat.v[i], &cards[n]);
			anyfit |= cards[n].fits && cards[n].meets;
			n++;
		}
		sort = o.has[VP_O_SORT] ? (enum vp_sort)o.val[VP_O_SORT].i :
		    o.has[VP_O_BUDGET] && !o.has[VP_O_DEADLINE] ?
		    VP_SORT_TIME : VP_SORT_COST;
		vp_compare_sort(cards, n, sort);
		rep.model = &model;
		rep.job = &job;
		rep.cards = cards;
		rep.n = n;
		rep.sort = vp_sort_names[sort];
		rep.color = false;
		rc = compare_output(&o, &rep);
		if (rc == VP_EXIT_OK && !anyfit)
			rc = VP_EXIT_NOFIT;
	}
out:
	free(cards);
	vp_catalog_free(&cat);
	vp_model_free(&model);
	vp_optset_free(&file);
	vp_optset_free(&o);
	return rc;
}

#ifndef HAVE_TUI
/* Built without ncursesw: the command says so (tui.c is not compiled). */
int
vp_cmd_tui(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("vramplan: tui: this vramplan was built without the TUI "
	    "(ncursesw); rebuild with libncurses-dev installed\n", stderr);
	return VP_EXIT_USAGE;
}
#endif

