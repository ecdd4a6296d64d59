/*
 * cli_calib.c — calibrated profiles on the shell side: which profile an
 * estimate uses (vp_cli_profile), and `vramplan calibrate`.
 *
 * calibrate runs two programs and fits what they measured:
 *   1. calib/vramplan-probe (CUDA only): the context, cuBLAS workspace,
 *      allocation granularity, usable memory, bandwidth and GEMM rates;
 *   2. calib/calibrate.py with the PyTorch harness: a grid of real
 *      training steps (allocated, reserved and device peaks, step times);
 * then estimates every grid point, fits the profile (calib.c), and stores
 * it under $XDG_DATA_HOME/vramplan/profiles/ (written atomically) keyed
 * by the card, driver, CUDA and framework versions.  Later estimates on
 * that card (or on cpu) find it there.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700	/* realpath */
#include "config.h"

#include "cli_calib.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "calib.h"
#include "gpu.h"
#include "gpu_read.h"
#include "paths.h"
#include "plan.h"
#include "profile_read.h"
#include "shell.h"
#include "util.h"
#include "ydoc.h"

#ifndef VP_TORCH_PYTHON
#define VP_TORCH_PYTHON "python3"
#endif

/* $XDG_DATA_HOME/vramplan/profiles (or ~/.local/share/...); "" if
 * neither variable is set. */
static void
profile_dir(struct vp_buf *out)
{
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	if (xdg != NULL && *xdg)
		vp_buf_printf(out, "%s/vramplan/profiles", xdg);
	else if (home != NULL && *home)
		vp_buf_printf(out, "%s/.local/share/vramplan/profiles", home);
}

/* The newest file in dir whose name starts with prefix ("" if none); of
 * equal times, the last in name order. */
static void
newest_profile(const char *dir, const char *prefix, struct vp_buf *out)
{
	char **names;
	size_t n = vp_cli_yaml_files(dir, &names), i;
	time_t best = 0;

	for (i = 0; i < n; i++) {
		struct vp_buf p;
		struct stat st;

		if (strncmp(names[i], prefix, strlen(prefix)) != 0)
			continue;
		vp_buf_init(&p);
		vp_buf_printf(&p, "%s/%s", dir, names[i]);
		if (stat(p.s, &st) == 0 && S_ISREG(st.st_mode) &&
		    (out->len == 0 || st.st_mtime >= best)) {
			out->len = 0;
			vp_buf_add(out, p.s);
			best = st.st_mtime;
		}
		vp_buf_free(&p);
	}
	vp_cli_names_free(names, n);
}

static void
label_calibrated(struct vp_buf *label, const struct vp_profile_key *k,
    const struct vp_profile *p, const char *path)
{
	vp_buf_printf(label, "calibrated on %s", k->gpu ? k->gpu : k->device);
	if (k->catalog_id)
		vp_buf_printf(label, " (%s)", k->catalog_id);
	if (k->driver)
		vp_buf_printf(label, ", driver %s", k->driver);
	if (k->cuda)
		vp_buf_printf(label, ", CUDA %s", k->cuda);
	if (k->framework)
		vp_buf_printf(label, ", %s", k->framework);
	if (k->created)
		vp_buf_printf(label, ", %.10s", k->created);
	vp_buf_printf(label, "; error bars from the fit: allocated %.1f%%",
	    100 * p->err_allocated);
	if (strcmp(k->device, "cuda") == 0)
		vp_buf_printf(label, ", reserved %.1f%%, device %.1f%%",
		    100 * p->err_reserved, 100 * p->err_device);
	vp_buf_printf(label, " (%s)", path);
}

/*
 * A profile is foreign to an estimate when it was measured on the other
 * kind of device, or on another card than the one asked for.
 */
static int
check_foreign(const char *path, const struct vp_profile_key *k,
    const struct vp_gpu *gpu, int device, struct vp_log *log)
{
	const char *want = device == VP_DEVICE_CPU ? "cpu" : "cuda";

	if (strcmp(k->device, want) != 0) {
		vp_logf(log, "vramplan: profile '%s' was measured on %s, but "
		    "this estimate is for %s (--device); calibrate with "
		    "--device %s or leave out --profile\n", path, k->device,
		    want, want);
		return -1;
	}
	if (gpu != NULL && k->catalog_id != NULL &&
	    !vp_strcaseeq(k->catalog_id, gpu->id)) {
		vp_logf(log, "vramplan: profile '%s' was measured on %s "
		    "(%s), not on %s; calibrate that card, or leave out "
		    "--profile\n", path, k->gpu ? k->gpu : k->catalog_id,
		    k->catalog_id, gpu->id);
		return -1;
	}
	return 0;
}

int
vp_cli_profile(const char *path, const struct vp_gpu *gpu, int device,
    struct vp_profile *out, struct vp_buf *label)
{
	return vp_find_profile(path, gpu, device, out, label, NULL);
}

int
vp_find_profile(const char *path, const struct vp_gpu *gpu, int device,
    struct vp_profile *out, struct vp_buf *label, struct vp_log *log)
{
	struct vp_diags d = { 0 };
	struct vp_profile_key key;
	struct vp_buf found;
	const char *builtin = device == VP_DEVICE_CPU ?
	    "cpu (no caching allocator, no CUDA context)" :
	    gpu != NULL && !vp_gpu_stack_measured(gpu) ?
	    "built-in defaults (not calibrated; nothing measured on this "
	    "card's software stack: CUDA's context, BLAS workspace and "
	    "collective buffers stand in)" :
	    "built-in defaults (not calibrated)";
	int rc = 0;

	vp_buf_init(label);
	vp_profile_default(gpu, out);
	if (path != NULL && strcmp(path, "none") == 0) {
		vp_buf_add(label, builtin);
		return 0;
	}
	vp_buf_init(&found);
	if (path == NULL) {
		struct vp_buf dir, prefix;

		vp_buf_init(&dir);
		vp_buf_init(&prefix);
		profile_dir(&dir);
		if (device == VP_DEVICE_CPU)
			vp_buf_add(&prefix, "cpu--");
		else if (gpu != NULL)
			vp_buf_printf(&prefix, "%s--", gpu->id);
		if (dir.len && prefix.len)
			newest_profile(dir.s, prefix.s, &found);
		vp_buf_free(&dir);
		vp_buf_free(&prefix);
		if (found.len == 0) {
			vp_buf_add(label, builtin);
			vp_buf_free(&found);
			return 0;
		}
	} else {
		vp_buf_add(&found, path);
	}
	if (vp_profile_load(found.s, gpu, out, &key, &d) != 0 ||
	    check_foreign(found.s, &key, gpu, device, log) != 0) {
		vp_log_diags(log, &d);
		vp_profile_default(gpu, out);
		if (path != NULL) {
			rc = -1;
		} else {
			/* A stored profile that went bad must not stop
			 * every estimate: say so and go on without it. */
			vp_logf(log, "vramplan: note: ignoring the profile "
			    "'%s'; using the built-in defaults\n", found.s);
			vp_buf_add(label, builtin);
		}
	} else {
		label_calibrated(label, &key, out, found.s);
		rc = 1;
	}
	vp_profile_key_free(&key);
	vp_diags_clear(&d);
	vp_buf_free(&found);
	return rc;
}

/* ---- running the probe and the harness ------------------------------- */

/* Run argv; its stderr and stdout go to ours.  The exit status, or -1
 * when it could not run (errno-style message printed). */
static int
run(char *const *argv)
{
	pid_t pid;
	int st;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "vramplan: cannot start '%s': %s\n", argv[0],
		    strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "vramplan: cannot run '%s': %s\n", argv[0],
		    strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st) == 127 ? -1 : WEXITSTATUS(st);
	fprintf(stderr, "vramplan: '%s' was killed by signal %d\n", argv[0],
	    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return -1;
}

/* An argument vector of owned copies (execvp wants char *const *). */
struct args {
	char *v[32];
	size_t n;
};

static void
arg(struct args *a, const char *s)
{
	if (a->n + 1 < VP_NELEM(a->v))
		a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

static void
args_free(struct args *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
}

static int
tmp_path(struct vp_buf *out, const char *what)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	vp_buf_printf(out, "%s/vramplan-%s-XXXXXX", dir && *dir ? dir :
	    "/tmp", what);
	if ((fd = mkstemp(out->s)) < 0) {
		fprintf(stderr, "vramplan: cannot create a temporary file: "
		    "%s\n", strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}


/* ---- calibrate ------------------------------------------------------- */

struct calib_opts {
	int device;			/* VP_DEVICE_CUDA or VP_DEVICE_CPU */
	const char *models[8];
	size_t nmodels;
	const char *measurements;	/* fit this file, run nothing */
	const char *probe;		/* with it: the probe's record */
	const char *out;		/* another copy of the profile */
	const char *profile;		/* --show this one */
	const char *python;
	bool show, quick;
};

static void
calib_usage(FILE *f)
{
	fputs("usage: vramplan calibrate [--device cuda|cpu] [--model M]... "
	    "[--quick] [--out FILE]\n"
	    "       vramplan calibrate --measurements FILE [--probe FILE] "
	    "[--out FILE]\n"
	    "       vramplan calibrate --show [--profile FILE]\n"
	    "Measures training steps on this machine's GPU (or CPU), fits the "
	    "profile\nand stores it where later estimates find it.  See "
	    "vramplan(1).\n", f);
}

/*
 * What was wrong with arg, which getopt_long refused: a value missing, a
 * prefix of several options (getopt_long takes a prefix of one only), or
 * an option calibrate does not have.
 */
static void
calib_bad_option(const struct option *opts, const char *arg)
{
	const char *names[16], *eq = NULL;
	struct vp_buf b;
	size_t n = 0, len;
	int has_arg = 0;

	if (arg[0] == '-' && arg[1] == '-') {
		arg += 2;
		len = (eq = strchr(arg, '=')) ? (size_t)(eq - arg) :
		    strlen(arg);
		for (; opts->name != NULL && n < VP_NELEM(names); opts++)
			if (len > 0 && strncmp(opts->name, arg, len) == 0) {
				names[n++] = opts->name;
				has_arg = opts->has_arg;
			}
		if (n == 1) {
			fprintf(stderr, "vramplan: calibrate: option %s: "
			    "'%s'\n", has_arg == no_argument && eq != NULL ?
			    "takes no value" : "needs a value", arg - 2);
			return;
		}
		if (n > 1) {
			vp_buf_init(&b);
			vp_buf_alternatives(&b, "--", names, n);
			fprintf(stderr, "vramplan: calibrate: ambiguous option: "
			    "--%.*s could be %s\n", (int)len, arg, b.s);
			vp_buf_free(&b);
			return;
		}
		arg -= 2;
	}
	fprintf(stderr, "vramplan: calibrate: unknown option '%s'\n", arg);
}

/* calibrate's options (getopt_long's table; completion.c lists them). */
const struct option vp_calib_options[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "model", required_argument, NULL, 'm' },
	{ "measurements", required_argument, NULL, 'M' },
	{ "probe", required_argument, NULL, 'R' },
	{ "out", required_argument, NULL, 'o' },
	{ "profile", required_argument, NULL, 'p' },
	{ "python", required_argument, NULL, 'P' },
	{ "show", no_argument, NULL, 's' },
	{ "quick", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
calib_args(int argc, char **argv, struct calib_opts *o)
{
	const struct option *opts = vp_calib_options;
	int c;

	memset(o, 0, sizeof *o);
	o->device = VP_DEVICE_CUDA;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (strcmp(optarg, "cuda") == 0)
				o->device = VP_DEVICE_CUDA;
			else if (strcmp(optarg, "cpu") == 0)
				o->device = VP_DEVICE_CPU;
			else {
				fprintf(stderr, "vramplan: calibrate: unknown "
				    "--device '%s' (one of: cuda cpu)\n",
				    optarg);
				return VP_EXIT_USAGE;
			}
			break;
		case 'm':
			if (o->nmodels == VP_NELEM(o->models)) {
				fputs("vramplan: calibrate: at most 8 --model "
				    "options\n", stderr);
				return VP_EXIT_USAGE;
			}
			o->models[o->nmodels++] = optarg;
			break;
		case 'M': o->measurements = optarg; break;
		case 'R': o->probe = optarg; break;
		case 'o': o->out = optarg; break;
		case 'p': o->profile = optarg; break;
		case 'P': o->python = optarg; break;
		case 's': o->show = true; break;
		case 'q': o->quick = true; break;
		case 'h':
			calib_usage(stdout);
			return -1;
		default:
			calib_bad_option(opts, argv[optind - 1]);
			calib_usage(stderr);
			return VP_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vramplan: calibrate takes no arguments, not "
		    "'%s' (a model is --model M)\n", argv[optind]);
		return VP_EXIT_USAGE;
	}
	if (o->profile && !o->show) {
		fputs("vramplan: calibrate: --profile goes with --show (to "
		    "use a profile, give it to the estimate)\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (o->probe && !o->measurements) {
		fputs("vramplan: calibrate: --probe FILE goes with "
		    "--measurements (a run measures its own)\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (o->measurements && o->nmodels) {
		fputs("vramplan: calibrate: --measurements and --model exclude "
		    "each other (the file names its models)\n", stderr);
		return VP_EXIT_USAGE;
	}
	return VP_EXIT_OK;
}

/* ---- --show ------------------------------------------------------------ */

static int
show_one(const char *path)
{
	struct vp_diags d = { 0 };
	struct vp_profile p;
	struct vp_profile_key k;
	size_t i;
	char b[32];

	if (vp_profile_load(path, NULL, &p, &k, &d) != 0) {
		vp_cli_print_diags(&d);
		printf("%s\n  rejected (see the message above)\n\n", path);
		return -1;
	}
	printf("%s\n", path);
	printf("  device      %s%s%s\n", k.device, k.gpu ? " " : "",
	    k.gpu ? k.gpu : "");
	if (k.catalog_id)
		printf("  card        %s\n", k.catalog_id);
	printf("  versions    driver %s, CUDA %s, %s\n",
	    k.driver ? k.driver : "-", k.cuda ? k.cuda : "-",
	    k.framework ? k.framework : "-");
	printf("  created     %s by vramplan %s\n", k.created ? k.created : "-",
	    k.vramplan ? k.vramplan : "-");
	printf("  context     %s (+ cuBLAS %s", vp_fmt_bytes(b, sizeof b,
	    p.context_bytes), vp_fmt_bytes(b, sizeof b,
	    p.cublas_workspace_bytes));
	printf(", NCCL %s per group)\n", vp_fmt_bytes(b, sizeof b,
	    p.nccl_bytes_per_group));
	printf("  allocated   fixed %s, temporaries x %.3f, activations",
	    vp_fmt_bytes(b, sizeof b, p.alloc_fixed_bytes), p.temp_scale);
	for (i = 0; i < VP_LOWERINGS; i++)
		if (p.act_scale[i] != 1.0)
			printf(" %s x %.3f", vp_lowering_names[i],
			    p.act_scale[i]);
	printf("\n  reserved    fragmentation %.1f%%\n", 100 * p.frag_share);
	printf("  time        MFU %.3f\n", p.mfu);
	if (p.usable_bytes)
		printf("  capacity    %s (measured)\n", vp_fmt_bytes(b,
		    sizeof b, p.usable_bytes));
	printf("  error bars  allocated %.2f%%, reserved %.2f%%, device "
	    "%.2f%%\n\n", 100 * p.err_allocated, 100 * p.err_reserved,
	    100 * p.err_device);
	vp_profile_key_free(&k);
	vp_diags_clear(&d);
	return 0;
}

static int
show(const struct calib_opts *o)
{
	struct vp_buf dir;
	struct stat st;
	char **names;
	size_t n, i;
	int bad = 0;

	if (o->profile != NULL)
		return show_one(o->profile) ? VP_EXIT_INPUT : VP_EXIT_OK;
	vp_buf_init(&dir);
	profile_dir(&dir);
	if (dir.len == 0 || stat(dir.s, &st) != 0 || !S_ISDIR(st.st_mode)) {
		printf("no calibrated profiles (%s does not exist); run "
		    "'vramplan calibrate'\n", dir.len ? dir.s :
		    "neither XDG_DATA_HOME nor HOME is set, so no directory");
		vp_buf_free(&dir);
		return VP_EXIT_OK;
	}
	n = vp_cli_yaml_files(dir.s, &names);
	if (n == 0)
		printf("no calibrated profiles in %s; run 'vramplan "
		    "calibrate'\n", dir.s);
	for (i = 0; i < n; i++) {
		struct vp_buf p;

		vp_buf_init(&p);
		vp_buf_printf(&p, "%s/%s", dir.s, names[i]);
		bad |= show_one(p.s);
		vp_buf_free(&p);
	}
	vp_cli_names_free(names, n);
	vp_buf_free(&dir);
	if (vp_cli_flush() != VP_EXIT_OK)
		return VP_EXIT_SYSTEM;
	return bad ? VP_EXIT_INPUT : VP_EXIT_OK;
}

/* ---- measure, fit, store ------------------------------------------------ */

/* The directory that holds calibrate.py (paths.h says where it is looked
 * for), with symbolic links resolved: the build tree's share/vramplan/calib
 * is a link to the source tree's calib/, and calibrate.py takes its own
 * directory's parent as the repository root (where the default grid's
 * models are). */
static bool
calib_dir(struct vp_buf *out)
{
	struct vp_buf dir;
	char *real;
	bool found;

	vp_buf_init(&dir);
	if ((found = vp_path_find(VP_PATH_CALIB, &dir))) {
		real = realpath(dir.s, NULL);
		vp_buf_add(out, real != NULL ? real : dir.s);
		free(real);
	}
	vp_buf_free(&dir);
	return found;
}

/* Run the probe into path.  An exit status of vramplan's. */
static int
run_probe(const char *path)
{
	struct vp_buf probe;
	struct args a = { .n = 0 };
	int st;

	vp_buf_init(&probe);
	if (!vp_path_find(VP_PATH_PROBE, &probe) ||
	    access(probe.s, R_OK) != 0) {
		fprintf(stderr, "vramplan: calibrate --device cuda needs the "
		    "probe 'vramplan-probe'%s%s, which is built when configure "
		    "finds the CUDA toolkit (--with-cuda); or calibrate with "
		    "--device cpu\n", probe.len ? " at " : "",
		    probe.len ? probe.s : "");
		vp_buf_free(&probe);
		return VP_EXIT_NODEVICE;
	}
	arg(&a, probe.s);
	arg(&a, "-o");
	arg(&a, path);
	st = run(a.v);
	args_free(&a);
	vp_buf_free(&probe);
	if (st == 5) {
		fputs("vramplan: calibrate: no usable GPU (the probe says why, "
		    "above)\n", stderr);
		return VP_EXIT_NODEVICE;
	}
	if (st != 0) {
		fprintf(stderr, "vramplan: calibrate: the probe failed (exit "
		    "status %d)\n", st);
		return VP_EXIT_SYSTEM;
	}
	return VP_EXIT_OK;
}

/* Run calibrate.py into path.  An exit status of vramplan's. */
static int
run_grid(const struct calib_opts *o, const char *dir, const char *path)
{
	const char *py = o->python ? o->python : getenv("VRAMPLAN_PYTHON");
	struct args a = { .n = 0 };
	struct vp_buf script;
	struct stat sb;
	char *m;
	size_t i;
	int st, rc = VP_EXIT_OK;

	if (py == NULL || *py == '\0')
		py = VP_TORCH_PYTHON;
	vp_buf_init(&script);
	vp_buf_printf(&script, "%s/calibrate.py", dir);
	arg(&a, py);
	arg(&a, script.s);
	arg(&a, "--device");
	arg(&a, o->device == VP_DEVICE_CPU ? "cpu" : "cuda");
	arg(&a, "--out");
	arg(&a, path);
	if (o->quick)
		arg(&a, "--quick");
	for (i = 0; i < o->nmodels; i++) {
		if ((m = vp_cli_resolve_model(o->models[i])) == NULL) {
			rc = VP_EXIT_INPUT;
			goto out;
		}
		arg(&a, "--model");
		arg(&a, m);
		free(m);
	}
	st = run(a.v);
	if (st == 1 && stat(path, &sb) == 0 && sb.st_size > 0) {
		/* Some points failed (calibrate.py named them); the rest
		 * are in the file and the fit says if they are enough. */
		fputs("vramplan: calibrate: note: some grid points failed "
		    "(above); fitting the others\n", stderr);
	} else if (st == 5) {
		fputs("vramplan: calibrate: PyTorch sees no CUDA device\n",
		    stderr);
		rc = VP_EXIT_NODEVICE;
	} else if (st != 0) {
		fprintf(stderr, "vramplan: calibrate: the measurements failed "
		    "(%s %s: %s); set VRAMPLAN_PYTHON to a Python that imports "
		    "torch and yaml\n", py, script.s, st < 0 ? "could not run" :
		    "exit status above");
		rc = st == 2 || st < 0 ? VP_EXIT_SYSTEM : VP_EXIT_INPUT;
	}
out:
	args_free(&a);
	vp_buf_free(&script);
	return rc;
}

static void
print_fit(const struct vp_measurements *m, const struct vp_calib_fit *f,
    bool cuda)
{
	size_t i;
	char b1[32], b2[32], b3[32];

	printf("%-44s %11s %11s %11s %7s\n", "point (allocated)", "measured",
	    "estimated", "calibrated", "error");
	for (i = 0; i < m->n; i++) {
		const struct vp_calib_point *q = &m->pts[i];
		double est = vp_calib_point_allocated(q, &q->est);

		printf("%-44.44s %11s %11s %11s %+6.2f%%\n",
		    q->id ? q->id : "?",
		    vp_fmt_bytes(b1, sizeof b1, (uint64_t)q->m_allocated),
		    vp_fmt_bytes(b2, sizeof b2, (uint64_t)est),
		    vp_fmt_bytes(b3, sizeof b3, (uint64_t)q->f_allocated),
		    100 * (q->f_allocated - q->m_allocated) / q->m_allocated);
	}
	printf("\nallocated  worst %.2f%%, rms %.2f%% over %u steps (before "
	    "the fit: worst %.2f%%)\n", 100 * f->allocated.max,
	    100 * f->allocated.rms, f->allocated.n, 100 * f->allocated0.max);
	if (f->loo_checked)
		printf("held out   leave-one-%s-out rms %.2f%% (worst %.2f%%) "
		    "with the fit, %.2f%% built-in: corrections %s\n",
		    f->loo_by_model ? "model" : "point", 100 * f->loo_after,
		    100 * f->loo_worst, 100 * f->loo_before,
		    f->declined ? "declined (they do not predict what they "
		    "were not fitted on better)" : "kept");
	if (cuda && f->reserved.n)
		printf("reserved   worst %.2f%%, rms %.2f%% (before: %.2f%%)\n",
		    100 * f->reserved.max, 100 * f->reserved.rms,
		    100 * f->reserved0.max);
	if (cuda && f->device.n)
		printf("device     worst %.2f%%, rms %.2f%% (before: %.2f%%)\n",
		    100 * f->device.max, 100 * f->device.rms,
		    100 * f->device0.max);
	printf("error bar  allocated %.2f%%", 100 * f->prof.err_allocated);
	if (cuda)
		printf(", reserved %.2f%%, device %.2f%%",
		    100 * f->prof.err_reserved, 100 * f->prof.err_device);
	printf(" (printed with every later estimate)\n");
	if (f->fitted_mfu)
		printf("step time  worst %.1f%%, rms %.1f%% at MFU %.3f\n",
		    100 * f->seconds.max, 100 * f->seconds.rms, f->prof.mfu);
	printf("fitted     activations");
	for (i = 0; i < VP_LOWERINGS; i++)
		if (f->fitted_act[i])
			printf(" %s x %.4f", vp_lowering_names[i],
			    f->prof.act_scale[i]);
	printf(", temporaries x %.4f, fixed %s", f->prof.temp_scale,
	    vp_fmt_bytes(b1, sizeof b1, f->prof.alloc_fixed_bytes));
	if (f->fitted_reserved)
		printf(", fragmentation %.2f%%", 100 * f->prof.frag_share);
	if (f->fitted_device)
		printf(", context %s", vp_fmt_bytes(b1, sizeof b1,
		    f->prof.context_bytes));
	if (!cuda)
		printf("\n           (cpu: no reserved or device level, no MFU: "
		    "the catalog has no cpu peak)");
	printf("\n");
}

/* Now, as ISO 8601 UTC. */
static void
now_iso(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, n, "unknown");
}

static int
mkdirs(const char *path)
{
	char *p = xstrdup(path), *s;
	int rc = 0;

	for (s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0777) != 0 && errno != EEXIST)
				rc = -1;
			*s = '/';
		}
	if (mkdir(p, 0777) != 0 && errno != EEXIST)
		rc = -1;
	if (rc != 0)
		fprintf(stderr, "vramplan: cannot create '%s': %s\n", path,
		    strerror(errno));
	free(p);
	return rc;
}

/* Fit the measurements in mpath (and the probe's record, if any); store. */
static int
fit_and_store(const struct calib_opts *o, const char *mpath,
    const char *ppath, const char *base)
{
	struct vp_diags d = { 0 };
	struct vp_measurements m;
	struct vp_catalog cat = { 0 };
	struct vp_probe_record pi;
	struct vp_profile base_prof;
	struct vp_calib_fit fit;
	struct vp_profile_key key;
	struct vp_buf text, dir, name;
	const struct vp_gpu *card = NULL;
	char created[32];
	int rc = VP_EXIT_OK;
	bool cuda;

	memset(&pi, 0, sizeof pi);
	memset(&key, 0, sizeof key);
	if (vp_measurements_load(mpath, base, &m, &d) != 0) {
		vp_cli_print_diags(&d);
		return VP_EXIT_INPUT;
	}
	vp_diags_clear(&d);
	cuda = strcmp(m.device, "cuda") == 0;
	if (ppath != NULL && vp_probe_load(ppath, &pi, &d) != 0) {
		vp_cli_print_diags(&d);
		vp_measurements_free(&m);
		return VP_EXIT_INPUT;
	}
	if (cuda && vp_cli_load_catalog(NULL, &cat) == 0)
		card = vp_catalog_match_device(&cat, m.gpu ? m.gpu : pi.name,
		    pi.memory_total);
	vp_profile_default(card, &base_prof);
	if (pi.cublas_workspace)
		base_prof.cublas_workspace_bytes = pi.cublas_workspace;
	if (vp_calib_fit(m.pts, m.n, &base_prof, card, &fit) != 0) {
		fprintf(stderr, "vramplan: calibrate: '%s' has fewer than two "
		    "training-step points; nothing to fit\n", mpath);
		rc = VP_EXIT_INPUT;
		goto out;
	}
	print_fit(&m, &fit, cuda);
	/*
	 * The measured capacity replaces the catalog's, unless another
	 * process held memory while the probe ran (then it would understate
	 * the card for good).
	 */
	if (card != NULL && pi.capacity) {
		char b1[32], b2[32];

		if ((double)pi.capacity >= 0.9 * (double)card->usable_bytes) {
			fit.prof.usable_bytes = pi.capacity;
			printf("capacity   %s measured free before a context "
			    "(catalog: %s)\n", vp_fmt_bytes(b1, sizeof b1,
			    pi.capacity), vp_fmt_bytes(b2, sizeof b2,
			    card->usable_bytes));
		} else {
			fprintf(stderr, "vramplan: note: only %s was free on "
			    "the card (the catalog says %s usable): another "
			    "process held memory, so the profile keeps the "
			    "catalog's figure\n", vp_fmt_bytes(b1, sizeof b1,
			    pi.capacity), vp_fmt_bytes(b2, sizeof b2,
			    card->usable_bytes));
		}
	}

	key.device = xstrdup(m.device);
	key.gpu = m.gpu ? xstrdup(m.gpu) : pi.name ? xstrdup(pi.name) : NULL;
	key.catalog_id = card ? xstrdup(card->id) : NULL;
	key.driver = m.driver ? xstrdup(m.driver) : pi.driver ?
	    xstrdup(pi.driver) : NULL;
	key.cuda = m.cuda ? xstrdup(m.cuda) : pi.cuda ? xstrdup(pi.cuda) :
	    NULL;
	vp_buf_init(&text);
	vp_buf_printf(&text, "torch %s", m.torch ? m.torch : "unknown");
	key.framework = text.s;
	now_iso(created, sizeof created);
	key.created = xstrdup(created);
	key.vramplan = xstrdup(PACKAGE_VERSION);
	key.probe = pi.text;
	pi.text = NULL;
	if (cuda && card == NULL)
		fprintf(stderr, "vramplan: note: '%s' is not in the GPU catalog; "
		    "the profile is used only with --profile FILE\n",
		    key.gpu ? key.gpu : "this GPU");

	vp_buf_init(&text);
	vp_buf_init(&dir);
	vp_buf_init(&name);
	vp_profile_format(&key, &fit, m.pts, m.n, &text);
	profile_dir(&dir);
	vp_profile_file_name(&key, &name);
	if (dir.len == 0) {
		fputs("vramplan: calibrate: neither XDG_DATA_HOME nor HOME is "
		    "set; no place to store the profile\n", stderr);
		rc = VP_EXIT_SYSTEM;
	} else if (mkdirs(dir.s) != 0) {
		rc = VP_EXIT_SYSTEM;
	} else {
		vp_buf_printf(&dir, "/%s", name.s);
		if (vp_cli_write_atomic(dir.s, text.s) != 0)
			rc = VP_EXIT_SYSTEM;
		else
			printf("profile    %s\n", dir.s);
	}
	if (rc == VP_EXIT_OK && o->out != NULL) {
		if (vp_cli_write_atomic(o->out, text.s) != 0)
			rc = VP_EXIT_SYSTEM;
		else
			printf("copy       %s\n", o->out);
	}
	vp_buf_free(&text);
	vp_buf_free(&dir);
	vp_buf_free(&name);
out:
	vp_profile_key_free(&key);
	vp_probe_record_free(&pi);
	vp_catalog_free(&cat);
	vp_measurements_free(&m);
	if (rc == VP_EXIT_OK && fflush(stdout) != 0)
		rc = VP_EXIT_SYSTEM;
	return rc;
}

int
vp_cmd_calibrate(int argc, char **argv)
{
	struct calib_opts o;
	struct vp_buf dir, base, meas, probe;
	int rc;

	if ((rc = calib_args(argc, argv, &o)) != VP_EXIT_OK)
		return rc < 0 ? VP_EXIT_OK : rc;
	if (o.show)
		return show(&o);
	vp_buf_init(&dir);
	vp_buf_init(&base);
	vp_buf_init(&meas);
	vp_buf_init(&probe);
	if (calib_dir(&dir)) {
		const char *slash = strrchr(dir.s, '/');

		vp_buf_addn(&base, dir.s, slash ? (size_t)(slash - dir.s) : 0);
	}
	if (o.measurements != NULL) {
		rc = fit_and_store(&o, o.measurements, o.probe, base.len ?
		    base.s : NULL);
		goto out;
	}
	if (dir.len == 0) {
		fputs("vramplan: calibrate: cannot find calib/calibrate.py "
		    "(set VRAMPLAN_CALIB_DIR to the calib directory)\n", stderr);
		rc = VP_EXIT_SYSTEM;
		goto out;
	}
	if (o.device == VP_DEVICE_CUDA) {
		if (tmp_path(&probe, "probe") != 0) {
			rc = VP_EXIT_SYSTEM;
			goto out;
		}
		if ((rc = run_probe(probe.s)) != VP_EXIT_OK)
			goto out;
	}
	if (tmp_path(&meas, "measurements") != 0) {
		rc = VP_EXIT_SYSTEM;
		goto out;
	}
	if ((rc = run_grid(&o, dir.s, meas.s)) != VP_EXIT_OK)
		goto out;
	rc = fit_and_store(&o, meas.s, probe.len ? probe.s : NULL, base.s);
out:
	if (meas.len)
		unlink(meas.s);
	if (probe.len)
		unlink(probe.s);
	vp_buf_free(&dir);
	vp_buf_free(&base);
	vp_buf_free(&meas);
	vp_buf_free(&probe);
	return rc;
}
