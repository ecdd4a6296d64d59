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

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "gpu_read.h"
#include "mem.h"
#include "model_read.h"
#include "plan.h"
#include "plan_read.h"
#include "plan_search.h"
#include "report.h"
#include "report_compare.h"
#include "session.h"
#include "cost.h"
#include "finetune.h"
#include "paths.h"

void
vp_usage(void)
{
	fputs("usage: vramplan MODEL [--gpus NxCARD] [options]  "
	    "(see vramplan(1), or --help)\n", stderr);
}

static void
help(void)
{
	fputs(
"usage: vramplan MODEL [--gpus NxCARD] [options]\n"
"       vramplan compare MODEL --tokens N [--sort cost|time|gpus] [--svg FILE]\n"
"       vramplan tui MODEL [options]      (interactive what-if explorer)\n"
"       vramplan calibrate [--device cuda|cpu] [--model M]... | --show\n"
"       vramplan models | gpus\n"
"\n"
"Estimate the GPU memory of one training step and whether it fits; with\n"
"--gpus, a planner chooses the parallel, sharding and recompute options\n"
"left out (those given stay fixed).  MODEL is a vramplan YAML file, a\n"
"Hugging Face config.json, or a library name ('vramplan models').\n"
"compare: for every card, the fewest GPUs that fit, time and cost of N tokens.\n"
"\n"
"  --gpus NxCARD        the whole job, e.g. 2xA100, 8xH100-SXM, 1xRTX4090\n"
"  --nodes N  --gpus-per-node N    node layout (default: 8 GPUs per node)\n"
"  --precision P        fp32 fp16-mixed bf16-mixed fp16 bf16 fp16-master\n"
"                       bf16-master fp8 (Transformer Engine)\n"
"  --optimizer O        sgd sgd-momentum adam adamw adamw-8bit adafactor lion\n"
"                       paged-adamw paged-adamw-8bit\n"
"  --micro-batch N      --seq N      --grad-accum N\n"
"  --recompute R        none selective full\n"
"  --attention A        eager sdpa flash\n"
"  --dropout P          override the model's dropout\n"
"  --framework F        torch deepspeed fsdp1 fsdp2 megatron\n"
"  --zero S             ZeRO stage 0-3 (Megatron: distributed optimizer)\n"
"  --fsdp S             none full grad-op hybrid\n"
"  --tp N  --sp  --pp N  --vpp N  --cp N  --ep N  --dp N\n"
"  --capacity-factor X  MoE token padding (default dropless)\n"
"  --device D           cuda (default) or cpu\n"
"  --fused-optimizer    fused optimizer kernels (no foreach temporaries)\n"
"  --lora RANK          LoRA adapters on a frozen base (PEFT)\n"
"  --lora-targets LIST  q,k,v,o,gate,up,down or all-linear (default q,v)\n"
"  --lora-dropout P  --lora-dtype fp32|bf16    (defaults: 0, fp32)\n"
"  --quant Q            none nf4 fp4 int8: bitsandbytes base (needs --lora)\n"
"  --loss L             full (default) or chunked (fused linear cross-entropy)\n"
"  --offload W          none optimizer params optimizer+params (to host RAM)\n"
"  --offload-nvme       offload to NVMe (ZeRO-Infinity)\n"
"  --host-mem GiB       host RAM per node; more offloaded state does not fit\n"
"  --activation-offload each block's saved activations wait in host RAM\n"
"  --no-search          no planner: open options take their defaults\n"
"  --plans N            alternatives to show, 1-8 (default 4)\n"
"  --max-micro-batch  --max-seq  --min-gpus   largest, longest, fewest that fit\n"
"  --explain            largest live tensors at the peak\n"
"  --json | --csv       machine-readable output\n"
"  --catalog FILE       GPU catalog instead of the bundled one\n"
"  --plan FILE          a plan saved by the TUI (options given here win)\n"
"  --profile FILE|none  calibrated profile (default: the stored one for the\n"
"                       card, or for cpu; none: the built-in defaults)\n"
"  --help  --version\n"
"\n"
"Exit status: 0 fits (or no --gpus), 1 does not fit, 2 usage error,\n"
"3 bad input, 4 system error, 5 calibrate found no GPU.\n"
"Manuals: vramplan(1), vramplan-model(5).\n",
	    stdout);
}

/* The model library and catalog directory, where paths.h says; the text
 * stays valid until the next call. */
const char *
vp_data_dir(void)
{
	static char dir[4096];
	struct vp_buf b;

	vp_buf_init(&b);
	vp_path_find(VP_PATH_MODELS, &b);
	snprintf(dir, sizeof dir, "%s", b.s);
	vp_buf_free(&b);
	return dir;
}

static int
flush_out(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "vramplan: cannot write the output: %s\n",
		    strerror(errno));
		return VP_EXIT_SYSTEM;
	}
	return VP_EXIT_OK;
}

void
vp_cli_print_diags(struct vp_diags *d)
{
	struct vp_buf b;

	vp_buf_init(&b);
	vp_diags_format(d, &b);
	fputs(b.s, stderr);
	vp_buf_free(&b);
	vp_diags_clear(d);
}

/* Library model names (file stems), sorted; caller frees. */
static size_t
library(char ***out)
{
	DIR *dir = opendir(vp_data_dir());
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, cap = 0, i, j;

	if (dir == NULL) {
		*out = NULL;
		return 0;
	}
	while ((e = readdir(dir)) != NULL) {
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0 ||
		    strcmp(e->d_name, "gpus.yaml") == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			v = xreallocarray(v, cap, sizeof *v);
		}
		v[n] = xstrdup(e->d_name);
		v[n][len - 5] = '\0';
		n++;
	}
	closedir(dir);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			char *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	*out = v;
	return n;
}

static void
library_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * MODEL: a path, or a library name (with or without .yaml).  Returns a
 * malloc'd path, or NULL after printing why.
 */
char *
vp_cli_resolve_model(const char *arg)
{
	struct vp_buf b;
	char **names;
	size_t n;
	const char *near;

	if (access(arg, F_OK) == 0 || strchr(arg, '/') != NULL)
		return xstrdup(arg);
	vp_buf_init(&b);
	vp_buf_printf(&b, "%s/%s", vp_data_dir(), arg);
	if (strlen(arg) < 5 || strcmp(arg + strlen(arg) - 5, ".yaml") != 0)
		vp_buf_add(&b, ".yaml");
	if (access(b.s, R_OK) == 0)
		return b.s;
	vp_buf_free(&b);
	n = library(&names);
	near = vp_closest(arg, (const char *const *)names, n);
	if (near)
		fprintf(stderr, "vramplan: cannot find model '%s': no such "
		    "file and not in the model library; did you mean '%s'?\n",
		    arg, near);
	else
		fprintf(stderr, "vramplan: cannot find model '%s': no such "
		    "file and not in the model library (see 'vramplan "
		    "models')\n", arg);
	library_free(names, n);
	return NULL;
}

/*
 * The user's own catalog ($XDG_CONFIG_HOME/vramplan/gpus.yaml, or
 * ~/.config/vramplan/gpus.yaml) adds cards or replaces same-id ones.  A
 * malformed one is reported with its position and ignored, so the shipped
 * catalog still works.
 */
static void
merge_user_catalog(struct vp_catalog *c)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	struct vp_diags d = { 0 };
	struct vp_catalog user;
	struct vp_buf b;

	vp_buf_init(&b);
	if (xdg != NULL && *xdg)
		vp_buf_printf(&b, "%s/vramplan/gpus.yaml", xdg);
	else if (home != NULL && *home)
		vp_buf_printf(&b, "%s/.config/vramplan/gpus.yaml", home);
	if (b.len == 0 || access(b.s, F_OK) != 0) {
		vp_buf_free(&b);
		return;
	}
	if (vp_catalog_load(b.s, &user, &d) != 0) {
		vp_cli_print_diags(&d);
		fprintf(stderr, "vramplan: note: ignoring the user catalog '%s'; "
		    "using the shipped one\n", b.s);
	} else {
		vp_catalog_merge(c, &user);
		vp_catalog_free(&user);
	}
	vp_diags_clear(&d);
	vp_buf_free(&b);
}

int
vp_cli_load_catalog(const char *path, struct vp_catalog *c)
{
	struct vp_diags d = { 0 };
	struct vp_buf b;
	int rc;

	vp_buf_init(&b);
	if (path == NULL)
		vp_buf_printf(&b, "%s/gpus.yaml", vp_data_dir());
	else
		vp_buf_add(&b, path);
	rc = vp_catalog_load(b.s, c, &d);
	vp_cli_print_diags(&d);
	vp_buf_free(&b);
	if (rc == 0 && path == NULL)
		merge_user_catalog(c);
	return rc;
}

/* Option values, parsed before the model is known. */
struct overrides {
	int precision, optimizer, recompute, attention, device;
	uint64_t micro_batch, seq, grad_accum;
	double dropout;
	int zero, tp, pp, dp;
	bool fused;
	int fsdp, framework, vpp, cp, ep, sp, nodes, gpn;
	double capacity;
	bool max_mb, max_seq, min_gpus, no_search;
	int nplans;
	int lora, quant, offload, loss, lora_dtype;
	unsigned lora_targets;
	double lora_dropout, host_mem_gib;
	bool offload_nvme, act_offload;
	const char *profile;	/* --profile FILE */
	const char *gpus;	/* --gpus NxCARD */
	const char *plan;	/* --plan FILE */
};

static int
parse_enum(const char *flag, const char *arg, const char *const *names,
    int n, int *out)
{
	const char *near;
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0) {
			*out = i;
			return 0;
		}
	near = vp_closest(arg, names, (size_t)n);
	fprintf(stderr, "vramplan: unknown %s '%s'", flag, arg);
	if (near)
		fprintf(stderr, "; did you mean '%s'?", near);
	fputs(" (one of:", stderr);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %s", names[i]);
	fputs(")\n", stderr);
	return -1;
}

static int
parse_num(const char *flag, const char *arg, uint64_t min, uint64_t max,
    uint64_t *out)
{
	const char *err;

	if (vp_parse_u64(arg, min, max, out, &err) != 0) {
		fprintf(stderr, "vramplan: %s '%s' is %s (expected a whole "
		    "number from %llu to %llu)\n", flag, arg, err,
		    (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	return 0;
}

enum {
	O_GPUS = 256, O_PREC, O_OPT, O_MB, O_SEQ, O_GA, O_RECOMP, O_ATTN,
	O_DROP, O_ZERO, O_TP, O_PP, O_DP, O_DEVICE, O_EXPLAIN, O_JSON, O_CSV,
	O_CATALOG, O_FUSED, O_HELP, O_VERSION, O_FSDP, O_FRAMEWORK, O_VPP, O_CP,
	O_EP, O_SP, O_NODES, O_GPN, O_CAPACITY, O_MAXMB, O_MAXSEQ, O_MINGPUS,
	O_NOSEARCH, O_PLANS, O_LORA, O_LORA_TARGETS, O_LORA_DROPOUT, O_LORA_DTYPE,
	O_QUANT, O_OFFLOAD, O_OFFLOAD_NVME, O_ACT_OFFLOAD, O_HOST_MEM, O_LOSS,
	O_PROFILE, O_PLAN
};

static const struct option longopts[] = {
	{ "gpus", required_argument, NULL, O_GPUS },
	{ "precision", required_argument, NULL, O_PREC },
	{ "optimizer", required_argument, NULL, O_OPT },
	{ "micro-batch", required_argument, NULL, O_MB },
	{ "seq", required_argument, NULL, O_SEQ },
	{ "grad-accum", required_argument, NULL, O_GA },
	{ "recompute", required_argument, NULL, O_RECOMP },
	{ "attention", required_argument, NULL, O_ATTN },
	{ "dropout", required_argument, NULL, O_DROP },
	{ "zero", required_argument, NULL, O_ZERO },
	{ "tp", required_argument, NULL, O_TP },
	{ "pp", required_argument, NULL, O_PP },
	{ "dp", required_argument, NULL, O_DP },
	{ "device", required_argument, NULL, O_DEVICE },
	{ "explain", no_argument, NULL, O_EXPLAIN },
	{ "json", no_argument, NULL, O_JSON },
	{ "csv", no_argument, NULL, O_CSV },
	{ "catalog", required_argument, NULL, O_CATALOG },
	{ "fused-optimizer", no_argument, NULL, O_FUSED },
	{ "fsdp", required_argument, NULL, O_FSDP },
	{ "framework", required_argument, NULL, O_FRAMEWORK },
	{ "vpp", required_argument, NULL, O_VPP },
	{ "cp", required_argument, NULL, O_CP },
	{ "ep", required_argument, NULL, O_EP },
	{ "sp", no_argument, NULL, O_SP },
	{ "nodes", required_argument, NULL, O_NODES },
	{ "gpus-per-node", required_argument, NULL, O_GPN },
	{ "capacity-factor", required_argument, NULL, O_CAPACITY },
	{ "max-micro-batch", no_argument, NULL, O_MAXMB },
	{ "max-seq", no_argument, NULL, O_MAXSEQ },
	{ "min-gpus", no_argument, NULL, O_MINGPUS },
	{ "no-search", no_argument, NULL, O_NOSEARCH },
	{ "plans", required_argument, NULL, O_PLANS },
	{ "lora", required_argument, NULL, O_LORA },
	{ "lora-targets", required_argument, NULL, O_LORA_TARGETS },
	{ "lora-dropout", required_argument, NULL, O_LORA_DROPOUT },
	{ "lora-dtype", required_argument, NULL, O_LORA_DTYPE },
	{ "quant", required_argument, NULL, O_QUANT },
	{ "offload", required_argument, NULL, O_OFFLOAD },
	{ "offload-nvme", no_argument, NULL, O_OFFLOAD_NVME },
	{ "activation-offload", no_argument, NULL, O_ACT_OFFLOAD },
	{ "host-mem", required_argument, NULL, O_HOST_MEM },
	{ "loss", required_argument, NULL, O_LOSS },
	{ "profile", required_argument, NULL, O_PROFILE },
	{ "plan", required_argument, NULL, O_PLAN },
	{ "help", no_argument, NULL, O_HELP },
	{ "version", no_argument, NULL, O_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* Options into the override set and the job's output flags. */
static int
parse_options(int argc, char **argv, struct overrides *ov,
    struct vp_cli_job *job)
{
	const char *err;
	uint64_t u;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_GPUS: ov->gpus = optarg; break;
		case O_PREC:
			if (parse_enum("--precision", optarg, vp_prec_names,
			    VP_PREC_COUNT, &ov->precision))
				return VP_EXIT_USAGE;
			break;
		case O_OPT:
			if (parse_enum("--optimizer", optarg, vp_opt_names,
			    VP_OPT_COUNT, &ov->optimizer))
				return VP_EXIT_USAGE;
			break;
		case O_RECOMP:
			if (parse_enum("--recompute", optarg, vp_recomp_names,
			    VP_RECOMP_COUNT, &ov->recompute))
				return VP_EXIT_USAGE;
			break;
		case O_ATTN:
			if (parse_enum("--attention", optarg, vp_attn_names,
			    VP_ATTN_COUNT, &ov->attention))
				return VP_EXIT_USAGE;
			break;
		case O_DEVICE:
			if (parse_enum("--device", optarg, vp_device_names,
			    VP_DEVICE_COUNT, &ov->device))
				return VP_EXIT_USAGE;
			break;
		case O_MB:
			if (parse_num("--micro-batch", optarg, 1, 1u << 20,
			    &ov->micro_batch))
				return VP_EXIT_USAGE;
			break;
		case O_SEQ:
			if (parse_num("--seq", optarg, 1, 1u << 27, &ov->seq))
				return VP_EXIT_USAGE;
			break;
		case O_GA:
			if (parse_num("--grad-accum", optarg, 1, 1u << 20,
			    &ov->grad_accum))
				return VP_EXIT_USAGE;
			break;
		case O_DROP:
			if (vp_parse_double(optarg, 0, 0.99, &ov->dropout,
			    &err) != 0) {
				fprintf(stderr, "vramplan: --dropout '%s' is %s "
				    "(expected a probability from 0 to 0.99)\n",
				    optarg, err);
				return VP_EXIT_USAGE;
			}
			break;
		case O_ZERO:
			if (parse_num("--zero", optarg, 0, 3, &u))
				return VP_EXIT_USAGE;
			ov->zero = (int)u;
			break;
		case O_TP:
			if (parse_num("--tp", optarg, 1, 1024, &u))
				return VP_EXIT_USAGE;
			ov->tp = (int)u;
			break;
		case O_PP:
			if (parse_num("--pp", optarg, 1, 1024, &u))
				return VP_EXIT_USAGE;
			ov->pp = (int)u;
			break;
		case O_DP:
			if (parse_num("--dp", optarg, 1, 65536, &u))
				return VP_EXIT_USAGE;
			ov->dp = (int)u;
			break;
		case O_EXPLAIN: job->explain = true; break;
		case O_JSON: job->json = true; break;
		case O_CSV: job->csv = true; break;
		case O_CATALOG: job->catalog = optarg; break;
		case O_FUSED: ov->fused = true; break;
		case O_FSDP:
			if (parse_enum("--fsdp", optarg, vp_fsdp_names,
			    VP_FSDP_COUNT, &ov->fsdp))
				return VP_EXIT_USAGE;
			break;
		case O_FRAMEWORK:
			if (parse_enum("--framework", optarg,
			    vp_framework_names, VP_FW_COUNT, &ov->framework))
				return VP_EXIT_USAGE;
			break;
		case O_VPP: case O_CP: case O_EP: case O_NODES: case O_GPN:
		case O_PLANS:
			if (parse_num(argv[optind - 1], optarg, 1,
			    c == O_NODES ? 65536 : c == O_PLANS ? 8 : 1024, &u))
				return VP_EXIT_USAGE;
			if (c == O_VPP) ov->vpp = (int)u;
			else if (c == O_CP) ov->cp = (int)u;
			else if (c == O_EP) ov->ep = (int)u;
			else if (c == O_NODES) ov->nodes = (int)u;
			else if (c == O_GPN) ov->gpn = (int)u;
			else ov->nplans = (int)u;
			break;
		case O_SP: ov->sp = 1; break;
		case O_CAPACITY:
			if (vp_parse_double(optarg, 1.0, 16.0, &ov->capacity,
			    &err) != 0) {
				fprintf(stderr, "vramplan: --capacity-factor "
				    "'%s' is %s (expected a number from 1 to "
				    "16)\n", optarg, err);
				return VP_EXIT_USAGE;
			}
			break;
		case O_MAXMB: ov->max_mb = true; break;
		case O_MAXSEQ: ov->max_seq = true; break;
		case O_MINGPUS: ov->min_gpus = true; break;
		case O_NOSEARCH: ov->no_search = true; break;
		case O_LORA:
			if (parse_num("--lora", optarg, 1, 65536, &u))
				return VP_EXIT_USAGE;
			ov->lora = (int)u;
			break;
		case O_LORA_TARGETS: {
			const char *bad = NULL;

			if (vp_lora_parse_targets(optarg, &ov->lora_targets,
			    &bad) != 0) {
				fprintf(stderr, "vramplan: unknown --lora-targets "
				    "'%s' (a comma list of q, k, v, o, gate, up, "
				    "down, or all-linear)\n", bad);
				return VP_EXIT_USAGE;
			}
			break;
		}
		case O_LORA_DROPOUT:
			if (vp_parse_double(optarg, 0, 0.99, &ov->lora_dropout,
			    &err) != 0) {
				fprintf(stderr, "vramplan: --lora-dropout '%s' is "
				    "%s (expected 0 to 0.99)\n", optarg, err);
				return VP_EXIT_USAGE;
			}
			break;
		case O_LORA_DTYPE: {
			static const char *const ld[] = { "fp32", "bf16" };

			if (parse_enum("--lora-dtype", optarg, ld, 2,
			    &ov->lora_dtype))
				return VP_EXIT_USAGE;
			break;
		}
		case O_QUANT:
			if (parse_enum("--quant", optarg, vp_quant_names,
			    VP_QUANT_COUNT, &ov->quant))
				return VP_EXIT_USAGE;
			break;
		case O_OFFLOAD:
			if (parse_enum("--offload", optarg, vp_offload_names,
			    VP_OFFLOAD_COUNT, &ov->offload))
				return VP_EXIT_USAGE;
			break;
		case O_OFFLOAD_NVME: ov->offload_nvme = true; break;
		case O_ACT_OFFLOAD: ov->act_offload = true; break;
		case O_HOST_MEM:
			if (vp_parse_double(optarg, 1, 1e6, &ov->host_mem_gib,
			    &err) != 0) {
				fprintf(stderr, "vramplan: --host-mem '%s' is %s "
				    "(GiB per node, from 1 to 1000000)\n", optarg,
				    err);
				return VP_EXIT_USAGE;
			}
			break;
		case O_LOSS:
			if (parse_enum("--loss", optarg, vp_loss_names,
			    VP_LOSS_COUNT, &ov->loss))
				return VP_EXIT_USAGE;
			break;
		case O_PROFILE: ov->profile = optarg; break;
		case O_PLAN: ov->plan = optarg; break;
		case O_HELP: case 'h':
			help();
			job->done = true;
			return flush_out();
		case O_VERSION:
			printf("vramplan %s\n", PACKAGE_VERSION);
			job->done = true;
			return flush_out();
		default:
			if (optopt)
				fprintf(stderr, "vramplan: option '%s' needs a "
				    "value\n", argv[optind - 1]);
			else
				fprintf(stderr, "vramplan: unknown option "
				    "'%s'\n", argv[optind - 1]);
			vp_usage();
			return VP_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fputs("vramplan: no model given\n", stderr);
		vp_usage();
		return VP_EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "vramplan: unexpected argument '%s' after the "
		    "model\n", argv[optind + 1]);
		vp_usage();
		return VP_EXIT_USAGE;
	}
	if (job->json && job->csv) {
		fputs("vramplan: --json and --csv exclude each other\n", stderr);
		return VP_EXIT_USAGE;
	}
	job->model_arg = argv[optind];
	return VP_EXIT_OK;
}

/*
 * --plan FILE: every key of the file counts as its option, unless the
 * command line gives that option too (the command line wins).  The file's
 * gpus-per-node goes with its gpus, and only when the command line says
 * nothing about the nodes.
 */
static void
merge_plan_file(struct overrides *o, const struct vp_plan_knobs *k)
{
	const struct vp_plan *p = &k->plan;

#define HAS(key) k->has[VP_PK_##key]
	if (HAS(PRECISION) && o->precision < 0) o->precision = p->precision;
	if (HAS(OPTIMIZER) && o->optimizer < 0) o->optimizer = p->optimizer;
	if (HAS(RECOMPUTE) && o->recompute < 0) o->recompute = p->recompute;
	if (HAS(ATTENTION) && o->attention < 0) o->attention = p->attention;
	if (HAS(DEVICE) && o->device < 0) o->device = p->device;
	if (HAS(MICRO_BATCH) && !o->micro_batch) o->micro_batch = p->micro_batch;
	if (HAS(SEQ) && !o->seq) o->seq = p->seq;
	if (HAS(GRAD_ACCUM) && !o->grad_accum) o->grad_accum = p->grad_accum;
	if (HAS(DROPOUT) && o->dropout < 0) o->dropout = p->dropout;
	if (HAS(ZERO) && o->zero < 0) o->zero = (int)p->zero;
	if (HAS(TP) && o->tp < 0) o->tp = (int)p->tp;
	if (HAS(PP) && o->pp < 0) o->pp = (int)p->pp;
	if (HAS(FUSED)) o->fused |= p->fused_optimizer;
	if (HAS(FSDP) && o->fsdp < 0) o->fsdp = p->fsdp;
	if (HAS(FRAMEWORK) && o->framework < 0) o->framework = p->framework;
	if (HAS(VPP) && o->vpp < 0) o->vpp = (int)p->vpp;
	if (HAS(CP) && o->cp < 0) o->cp = (int)p->cp;
	if (HAS(EP) && o->ep < 0) o->ep = (int)p->ep;
	/* sp: -1 open, 0 or 1 fixed; the flag can only say 1. */
	if (HAS(SP) && o->sp < 0) o->sp = p->sp;
	if (HAS(CAPACITY) && o->capacity < 0) o->capacity = p->capacity_factor;
	if (HAS(LORA) && o->lora < 0) o->lora = (int)p->lora_rank;
	if (HAS(LORA_TARGETS) && !o->lora_targets)
		o->lora_targets = p->lora_targets;
	if (HAS(LORA_DROPOUT) && o->lora_dropout < 0)
		o->lora_dropout = p->lora_dropout;
	if (HAS(LORA_DTYPE) && o->lora_dtype < 0)
		o->lora_dtype = p->lora_dtype == VP_BF16;
	if (HAS(QUANT) && o->quant < 0) o->quant = p->quant;
	if (HAS(OFFLOAD) && o->offload < 0) o->offload = p->offload;
	if (HAS(OFFLOAD_NVME)) o->offload_nvme |= p->offload_nvme;
	if (HAS(ACT_OFFLOAD)) o->act_offload |= p->activation_offload;
	if (HAS(HOST_MEM) && o->host_mem_gib < 0)
		o->host_mem_gib = (double)p->host_mem_bytes / VP_GIB;
	if (HAS(LOSS) && o->loss < 0) o->loss = p->loss;
	if (HAS(GPUS) && o->gpus == NULL) {
		o->gpus = k->gpus;
		if (HAS(GPUS_PER_NODE) && o->gpn < 0 && o->nodes < 0)
			o->gpn = (int)p->gpus_per_node;
	}
#undef HAS
}

/* The plan: built-in defaults, the model's training block, overrides. */
static void
apply_overrides(const struct overrides *o, const struct vp_model *m,
    struct vp_plan *p)
{
	vp_plan_defaults(p, m);
	if (o->precision >= 0) p->precision = (enum vp_precision)o->precision;
	if (o->optimizer >= 0) p->optimizer = (enum vp_optimizer)o->optimizer;
	if (o->recompute >= 0) p->recompute = (enum vp_recompute)o->recompute;
	if (o->attention >= 0) p->attention = (enum vp_attention)o->attention;
	if (o->device >= 0) p->device = (enum vp_device)o->device;
	if (o->micro_batch) p->micro_batch = o->micro_batch;
	if (o->seq) p->seq = o->seq;
	if (o->grad_accum) p->grad_accum = o->grad_accum;
	if (o->dropout >= 0) p->dropout = o->dropout;
	if (o->zero >= 0) p->zero = (unsigned)o->zero;
	if (o->tp > 0) p->tp = (unsigned)o->tp;
	if (o->pp > 0) p->pp = (unsigned)o->pp;
	if (o->dp > 0) p->dp = (unsigned)o->dp;
	p->fused_optimizer = o->fused;
	if (o->fsdp >= 0) p->fsdp = (enum vp_fsdp)o->fsdp;
	if (o->framework >= 0) p->framework = (enum vp_framework)o->framework;
	if (o->vpp > 0) p->vpp = (unsigned)o->vpp;
	if (o->cp > 0) p->cp = (unsigned)o->cp;
	if (o->ep > 0) p->ep = (unsigned)o->ep;
	if (o->sp >= 0) p->sp = o->sp;
	if (o->capacity >= 0) p->capacity_factor = o->capacity;
	if (o->lora >= 0) p->lora_rank = (unsigned)o->lora;
	if (o->lora_targets) p->lora_targets = o->lora_targets;
	/* all-linear means the linears this model has. */
	if (p->lora_targets == (1u << VP_LORA_TARGET_COUNT) - 1)
		p->lora_targets &= vp_lora_available(m);
	if (o->lora_dropout >= 0) p->lora_dropout = o->lora_dropout;
	if (o->lora_dtype >= 0)
		p->lora_dtype = o->lora_dtype ? VP_BF16 : VP_FP32;
	if (o->quant >= 0) p->quant = (enum vp_quant)o->quant;
	if (o->offload >= 0) p->offload = (enum vp_offload)o->offload;
	p->offload_nvme = o->offload_nvme;
	p->activation_offload = o->act_offload;
	if (o->host_mem_gib > 0)
		p->host_mem_bytes = (uint64_t)(o->host_mem_gib * VP_GIB);
	if (o->loss >= 0) p->loss = (enum vp_loss)o->loss;

}

/*
 * The GPU set (--gpus, or the plan file's gpus), the job's size and the
 * node size; or, without one, the world the degrees make.
 */
static int
setup_gpus(struct vp_cli_job *job, const struct overrides *o,
    const struct vp_plan_knobs *pk, unsigned *world)
{
	struct vp_plan *p = &job->ses.plan;
	struct vp_buf msg;

	if (o->gpus == NULL) {
		if (p->dp == 0) {
			p->dp = 1;
			*world = (p->tp ? p->tp : 1) * (p->pp ? p->pp : 1);
		} else {
			*world = p->dp * (p->tp ? p->tp : 1) *
			    (p->pp ? p->pp : 1);
		}
		return VP_EXIT_OK;
	}
	if (vp_cli_load_catalog(job->catalog, &job->cat) != 0)
		return VP_EXIT_INPUT;
	vp_buf_init(&msg);
	if (vp_gpuset_parse(&job->cat, o->gpus, &job->gs, &msg) != 0) {
		if (pk->gpus != NULL && o->gpus == pk->gpus) {
			struct vp_diags d = { 0 };

			vp_diag_add(&d, pk->file, pk->pos[VP_PK_GPUS], VP_ERROR,
			    "gpus: %s", msg.s);
			vp_cli_print_diags(&d);
			vp_buf_free(&msg);
			return VP_EXIT_INPUT;
		}
		fprintf(stderr, "vramplan: --gpus: %s\n", msg.s);
		vp_buf_free(&msg);
		return VP_EXIT_USAGE;
	}
	vp_buf_free(&msg);
	/*
	 * --gpus NxCARD is the whole job; --nodes M splits it into M
	 * nodes (or, with --gpus-per-node K, makes M x K GPUs).
	 */
	*world = job->gs.count;
	if (o->nodes > 0 && o->gpn > 0 && !job->gs.counted)
		*world = job->gs.count = (unsigned)(o->nodes * o->gpn);
	if (o->gpn > 0)
		p->gpus_per_node = (unsigned)o->gpn;
	else if (o->nodes > 0)
		p->gpus_per_node = *world / (unsigned)o->nodes;
	else
		p->gpus_per_node = *world < 8 ? *world : 8;
	if (o->nodes > 0 && (*world % (unsigned)o->nodes != 0 ||
	    p->gpus_per_node * (unsigned)o->nodes != *world)) {
		unsigned lo = (unsigned)o->nodes, hi = lo;

		while (lo > 1 && *world % lo)
			lo--;
		while (hi < *world && *world % hi)
			hi++;
		fprintf(stderr, "vramplan: --nodes %d does not split %u "
		    "GPUs into equal nodes; nearest valid: %u or %u\n",
		    o->nodes, *world, lo, hi);
		return VP_EXIT_USAGE;
	}
	if (p->dp == 0)
		p->dp = vp_plan_dp(p, *world);
	return VP_EXIT_OK;
}

int
vp_cli_setup(int argc, char **argv, struct vp_cli_job *job)
{
	struct overrides ov = {
		.precision = -1, .optimizer = -1, .recompute = -1,
		.attention = -1, .device = -1, .dropout = -1, .zero = -1,
		.tp = -1, .pp = -1, .dp = -1, .fsdp = -1, .framework = -1,
		.vpp = -1, .cp = -1, .ep = -1, .sp = -1, .nodes = -1, .gpn = -1,
		.capacity = -1, .nplans = 4, .lora = -1, .quant = -1,
		.offload = -1, .loss = -1, .lora_dtype = -1,
		.lora_dropout = -1, .host_mem_gib = -1,
	};
	struct vp_diags d = { 0 };
	struct vp_plan_knobs pk;
	struct vp_session *ses = &job->ses;
	char *path;
	unsigned world = 1;
	int rc;

	memset(job, 0, sizeof *job);
	vp_plan_knobs_init(&pk);
	if ((rc = parse_options(argc, argv, &ov, job)) != VP_EXIT_OK ||
	    job->done)
		return rc;
	if (ov.plan != NULL) {
		rc = vp_plan_load(ov.plan, &pk, &d);
		vp_cli_print_diags(&d);
		if (rc != 0) {
			vp_plan_knobs_free(&pk);
			return VP_EXIT_INPUT;
		}
		merge_plan_file(&ov, &pk);
	}
	if ((path = vp_cli_resolve_model(job->model_arg)) == NULL) {
		vp_plan_knobs_free(&pk);
		return VP_EXIT_INPUT;
	}
	rc = vp_model_load(path, &job->model, &d);
	free(path);
	vp_cli_print_diags(&d);
	if (rc != 0) {
		vp_plan_knobs_free(&pk);
		return VP_EXIT_INPUT;
	}
	apply_overrides(&ov, &job->model, &ses->plan);
	rc = setup_gpus(job, &ov, &pk, &world);
	vp_plan_knobs_free(&pk);
	if (rc != VP_EXIT_OK)
		return rc;
	job->node_layout = ov.nodes > 0 || ov.gpn > 0;
	job->profile = ov.profile;
	ses->model = &job->model;
	ses->gpus = &job->gs;
	ses->world = world;
	/*
	 * The planner runs when there is a GPU set and the user left knobs
	 * open; the knobs given on the command line stay fixed.
	 */
	ses->search = !ov.no_search && ov.dp <= 0;
	ses->open.tp = ov.tp < 0;
	ses->open.pp = ov.pp < 0;
	ses->open.cp = ov.cp < 0;
	ses->open.ep = ov.ep < 0 && job->model.has_moe;
	ses->open.sp = ov.sp < 0;
	ses->open.shard = ov.zero < 0 && ov.fsdp < 0;
	ses->open.recompute = ov.recompute < 0;
	ses->open.grad_accum = ov.grad_accum == 0;
	ses->min_gpus = ov.min_gpus;
	ses->max_seq = ov.max_seq;
	ses->explain = job->explain;
	ses->nplans = ov.nplans;
	ses->version = PACKAGE_VERSION;
	if (vp_cli_profile(ov.profile, job->gs.gpu, ses->plan.device,
	    &ses->profile, &job->prof_label) != 0)
		return VP_EXIT_INPUT;
	ses->profile_label = job->prof_label.s;
	return VP_EXIT_OK;
}

void
vp_cli_job_free(struct vp_cli_job *job)
{
	if (job == NULL)
		return;
	vp_buf_free(&job->prof_label);
	vp_session_free(&job->ses);
	vp_gpuset_free(&job->gs);
	vp_catalog_free(&job->cat);
	vp_model_free(&job->model);
}

int
vp_cmd_estimate(int argc, char **argv)
{
	struct vp_cli_job job;
	struct vp_diags d = { 0 };
	struct vp_buf out;
	bool nofit;
	int rc, e;

	rc = vp_cli_setup(argc, argv, &job);
	if (rc != VP_EXIT_OK || job.done) {
		vp_cli_job_free(&job);
		return rc;
	}
	rc = vp_session_run(&job.ses, &d);
	vp_cli_print_diags(&d);
	if (rc != 0) {
		vp_cli_job_free(&job);
		return VP_EXIT_INPUT;
	}
	job.ses.rep.color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
	vp_buf_init(&out);
	if (job.json)
		vp_report_json(&job.ses.rep, &out);
	else if (job.csv)
		vp_report_csv(&job.ses.rep, &out);
	else
		vp_report_text(&job.ses.rep, &out);
	fputs(out.s, stdout);
	vp_buf_free(&out);
	e = flush_out();
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
	size_t n = library(&names), i;
	int bad = 0;

	if (argc > 1) {
		fprintf(stderr, "vramplan: models takes no arguments, not "
		    "'%s'\n", argv[1]);
		library_free(names, n);
		return VP_EXIT_USAGE;
	}
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
		char cnt[32];

		vp_buf_init(&p);
		vp_buf_printf(&p, "%s/%s.yaml", vp_data_dir(), names[i]);
		if (vp_model_load(p.s, &m, &d) != 0) {
			vp_cli_print_diags(&d);
			bad = 1;
		} else {
			vp_model_params(&m, &pc);
			printf("%-18s %-24s %10s %7llu %7llu %3llu/%-2llu %s%s\n",
			    names[i], m.name, vp_fmt_count(cnt, sizeof cnt,
			    pc.total), (unsigned long long)m.layers,
			    (unsigned long long)m.hidden,
			    (unsigned long long)m.heads,
			    (unsigned long long)m.kv_heads,
			    m.has_moe ? "MoE " : "",
			    vp_act_names[m.act]);
			vp_diags_clear(&d);
		}
		vp_model_free(&m);
		vp_buf_free(&p);
	}
	library_free(names, n);
	if (flush_out() != VP_EXIT_OK)
		return VP_EXIT_SYSTEM;
	return bad ? VP_EXIT_INPUT : VP_EXIT_OK;
}

/* Card filters shared by compare and gpus. */
struct card_filter {
	const char *vendor, *segment;
	double min_mem_gib;
};

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
	static const struct option opts[] = {
		{ "vendor", required_argument, NULL, 'v' },
		{ "segment", required_argument, NULL, 's' },
		{ "min-mem", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	struct card_filter filt = { NULL, NULL, 0 };
	struct vp_catalog cat;
	const char *err;
	size_t i, j;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'v')
			filt.vendor = optarg;
		else if (c == 's')
			filt.segment = optarg;
		else if (c == 'm' && vp_parse_double(optarg, 0, 1e6,
		    &filt.min_mem_gib, &err) == 0)
			;
		else {
			fprintf(stderr, "vramplan: gpus: bad option '%s' (gpus "
			    "[--vendor V] [--segment S] [--min-mem GIB])\n",
			    argv[optind - 1]);
			return VP_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vramplan: gpus takes no arguments, not '%s'\n",
		    argv[optind]);
		return VP_EXIT_USAGE;
	}
	if (vp_cli_load_catalog(NULL, &cat) != 0)
		return VP_EXIT_INPUT;
	printf("%-17s %-34s %7s %10s %9s %9s %9s\n", "ID", "NAME", "MEMORY",
	    "USABLE", "BF16 TF", "BW GB/s", "$/GPU-h");
	for (i = 0; i < cat.n; i++) {
		const struct vp_gpu *g = &cat.v[i];
		double best = NAN;
		char b[32], tf[16], pr[16];

		if (!card_selected(g, &filt))
			continue;
		for (j = 0; j < g->nprices; j++)
			if (!isnan(g->prices[j].usd_per_gpu_hour) &&
			    (isnan(best) || g->prices[j].usd_per_gpu_hour < best))
				best = g->prices[j].usd_per_gpu_hour;
		if (isnan(g->bf16_tflops))
			snprintf(tf, sizeof tf, "-");
		else
			snprintf(tf, sizeof tf, "%.0f", g->bf16_tflops);
		if (isnan(best))
			snprintf(pr, sizeof pr, "no price");
		else
			snprintf(pr, sizeof pr, "%.2f", best);
		printf("%-17s %-34.34s %5.0fGB %10s %9s %9.0f %9s\n", g->id,
		    g->name ? g->name : "", g->memory_gb,
		    vp_fmt_bytes(b, sizeof b, g->usable_bytes), tf,
		    g->bandwidth_gbs, pr);
	}
	vp_catalog_free(&cat);
	return flush_out();
}

/* Write text to path atomically: a temporary file beside it, renamed. */
int
vp_cli_write_atomic(const char *path, const char *text)
{
	struct vp_buf tmp;
	FILE *f;
	int fd, rc = 0;

	vp_buf_init(&tmp);
	vp_buf_printf(&tmp, "%s.tmpXXXXXX", path);
	fd = mkstemp(tmp.s);
	if (fd < 0) {
		fprintf(stderr, "vramplan: cannot create '%s': %s\n", tmp.s,
		    strerror(errno));
		vp_buf_free(&tmp);
		return -1;
	}
	{
		/* mkstemp makes 0600; give the file the usual mode. */
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	f = fdopen(fd, "w");
	if (f == NULL || fputs(text, f) == EOF || fflush(f) != 0 ||
	    fsync(fd) != 0 || fclose(f) != 0) {
		fprintf(stderr, "vramplan: cannot write '%s': %s\n", path,
		    strerror(errno));
		unlink(tmp.s);
		rc = -1;
	} else if (rename(tmp.s, path) != 0) {
		fprintf(stderr, "vramplan: cannot write '%s': %s\n", path,
		    strerror(errno));
		unlink(tmp.s);
		rc = -1;
	}
	vp_buf_free(&tmp);
	return rc;
}

enum {
	C_TOKENS = 256, C_STEPS, C_GBATCH, C_SORT, C_MAXGPUS, C_JSON, C_CSV,
	C_SVG, C_PRICE, C_CATALOG, C_PREC, C_OPT, C_MB, C_SEQ, C_RECOMP,
	C_LORA, C_LORA_TARGETS, C_QUANT, C_VENDOR, C_SEGMENT, C_MINMEM, C_HELP,
	C_EXPLAIN
};

static const struct option compare_opts[] = {
	{ "tokens", required_argument, NULL, C_TOKENS },
	{ "steps", required_argument, NULL, C_STEPS },
	{ "global-batch", required_argument, NULL, C_GBATCH },
	{ "sort", required_argument, NULL, C_SORT },
	{ "max-gpus", required_argument, NULL, C_MAXGPUS },
	{ "json", no_argument, NULL, C_JSON },
	{ "csv", no_argument, NULL, C_CSV },
	{ "svg", required_argument, NULL, C_SVG },
	{ "price", required_argument, NULL, C_PRICE },
	{ "catalog", required_argument, NULL, C_CATALOG },
	{ "precision", required_argument, NULL, C_PREC },
	{ "optimizer", required_argument, NULL, C_OPT },
	{ "micro-batch", required_argument, NULL, C_MB },
	{ "seq", required_argument, NULL, C_SEQ },
	{ "recompute", required_argument, NULL, C_RECOMP },
	{ "lora", required_argument, NULL, C_LORA },
	{ "lora-targets", required_argument, NULL, C_LORA_TARGETS },
	{ "quant", required_argument, NULL, C_QUANT },
	{ "vendor", required_argument, NULL, C_VENDOR },
	{ "segment", required_argument, NULL, C_SEGMENT },
	{ "min-mem", required_argument, NULL, C_MINMEM },
	{ "help", no_argument, NULL, C_HELP },
	{ "explain", no_argument, NULL, C_EXPLAIN },
	{ NULL, 0, NULL, 0 },
};


int
vp_cmd_compare(int argc, char **argv)
{
	static const char *const sorts[] = { "cost", "time", "gpus" };
	struct card_filter filt = { NULL, NULL, 0 };
	struct vp_diags d = { 0 };
	struct vp_catalog cat = { 0 };
	struct vp_model model;
	struct vp_compare job;
	struct vp_compare_report rep;
	struct vp_card_result *cards;
	struct vp_buf out;
	const char *catalog = NULL, *svg = NULL, *err;
	const char *prices[64];
	char *path;
	size_t nprices = 0, i, n = 0;
	int c, sort = 0, prec = -1, opt = -1, rc_knob = -1, quant = -1;
	int e, anyfit = 0;
	uint64_t u, mb = 0, seq = 0, steps = 0, gbatch = 0, lora = 0;
	unsigned targets = 0;
	double tokens = 0;
	bool json = false, csv = false, explain = false;

	memset(&job, 0, sizeof job);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", compare_opts, NULL)) != -1) {
		switch (c) {
		case C_TOKENS:
			if (vp_parse_double(optarg, 1, 1e18, &tokens, &err)) {
				fprintf(stderr, "vramplan: --tokens '%s' is %s "
				    "(a count such as 2e9)\n", optarg, err);
				return VP_EXIT_USAGE;
			}
			break;
		case C_STEPS: case C_GBATCH: case C_MAXGPUS: case C_MB:
		case C_SEQ: case C_LORA:
			if (parse_num(argv[optind - 1], optarg, 1,
			    c == C_STEPS ? 1000000000ULL : 1u << 27, &u))
				return VP_EXIT_USAGE;
			if (c == C_STEPS) steps = u;
			else if (c == C_GBATCH) gbatch = u;
			else if (c == C_MAXGPUS) job.max_gpus = (unsigned)u;
			else if (c == C_MB) mb = u;
			else if (c == C_SEQ) seq = u;
			else lora = u;
			break;
		case C_SORT:
			if (parse_enum("--sort", optarg, sorts, 3, &sort))
				return VP_EXIT_USAGE;
			break;
		case C_JSON: json = true; break;
		case C_CSV: csv = true; break;
		case C_SVG: svg = optarg; break;
		case C_CATALOG: catalog = optarg; break;
		case C_PRICE:
			if (nprices == VP_NELEM(prices)) {
				fputs("vramplan: too many --price options\n",
				    stderr);
				return VP_EXIT_USAGE;
			}
			prices[nprices++] = optarg;
			break;
		case C_PREC:
			if (parse_enum("--precision", optarg, vp_prec_names,
			    VP_PREC_COUNT, &prec))
				return VP_EXIT_USAGE;
			break;
		case C_OPT:
			if (parse_enum("--optimizer", optarg, vp_opt_names,
			    VP_OPT_COUNT, &opt))
				return VP_EXIT_USAGE;
			break;
		case C_RECOMP:
			if (parse_enum("--recompute", optarg, vp_recomp_names,
			    VP_RECOMP_COUNT, &rc_knob))
				return VP_EXIT_USAGE;
			break;
		case C_QUANT:
			if (parse_enum("--quant", optarg, vp_quant_names,
			    VP_QUANT_COUNT, &quant))
				return VP_EXIT_USAGE;
			break;
		case C_LORA_TARGETS: {
			const char *bad = NULL;

			if (vp_lora_parse_targets(optarg, &targets, &bad)) {
				fprintf(stderr, "vramplan: unknown --lora-targets "
				    "'%s'\n", bad);
				return VP_EXIT_USAGE;
			}
			break;
		}
		case C_VENDOR: filt.vendor = optarg; break;
		case C_EXPLAIN: explain = true; break;
		case C_SEGMENT: filt.segment = optarg; break;
		case C_MINMEM:
			if (vp_parse_double(optarg, 0, 1e6, &filt.min_mem_gib,
			    &err)) {
				fprintf(stderr, "vramplan: --min-mem '%s' is %s "
				    "(GiB)\n", optarg, err);
				return VP_EXIT_USAGE;
			}
			break;
		case C_HELP: case 'h':
			puts("usage: vramplan compare MODEL --tokens N [--sort "
			    "cost|time|gpus] [--max-gpus N]\n"
			    "       [--json|--csv] [--svg FILE] [--price "
			    "CARD=USD_PER_HOUR]... [plan options]\n"
			    "See vramplan(1).");
			return flush_out();
		default:
			fprintf(stderr, "vramplan: compare: %s '%s'\n", optopt ?
			    "option needs a value:" : "unknown option",
			    argv[optind - 1]);
			return VP_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fputs("vramplan: compare: no model given\nusage: vramplan "
		    "compare MODEL --tokens N  (see vramplan(1))\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (tokens == 0 && steps == 0) {
		fputs("vramplan: compare needs the size of the job: --tokens N "
		    "(or --steps N with --global-batch SEQUENCES)\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (steps && !gbatch) {
		fputs("vramplan: --steps needs --global-batch (sequences per "
		    "step)\n", stderr);
		return VP_EXIT_USAGE;
	}
	if (json + csv > 1) {
		fputs("vramplan: --json and --csv exclude each other\n", stderr);
		return VP_EXIT_USAGE;
	}
	if ((path = vp_cli_resolve_model(argv[optind])) == NULL)
		return VP_EXIT_INPUT;
	e = vp_model_load(path, &model, &d);
	free(path);
	vp_cli_print_diags(&d);
	if (e != 0) {
		vp_model_free(&model);
		return VP_EXIT_INPUT;
	}
	if (vp_cli_load_catalog(catalog, &cat) != 0) {
		vp_model_free(&model);
		return VP_EXIT_INPUT;
	}
	for (i = 0; i < nprices; i++) {
		const char *eq = strchr(prices[i], '=');
		char name[64];
		const struct vp_gpu *g;
		double usd;

		if (eq == NULL || eq == prices[i] ||
		    (size_t)(eq - prices[i]) >= sizeof name ||
		    vp_parse_double(eq + 1, 0, 1e4, &usd, &err) != 0) {
			fprintf(stderr, "vramplan: --price '%s' must be "
			    "CARD=USD_PER_GPU_HOUR, e.g. H100=2.49\n", prices[i]);
			vp_catalog_free(&cat);
			vp_model_free(&model);
			return VP_EXIT_USAGE;
		}
		memcpy(name, prices[i], (size_t)(eq - prices[i]));
		name[eq - prices[i]] = '\0';
		if ((g = vp_catalog_find(&cat, name)) == NULL) {
			fprintf(stderr, "vramplan: --price: unknown GPU '%s' "
			    "(see 'vramplan gpus')\n", name);
			vp_catalog_free(&cat);
			vp_model_free(&model);
			return VP_EXIT_USAGE;
		}
		vp_catalog_set_price(&cat.v[g - cat.v], usd);
	}

	if (job.max_gpus == 0)
		job.max_gpus = 1024;
	job.model = &model;
	vp_plan_defaults(&job.base, &model);
	if (prec >= 0) job.base.precision = (enum vp_precision)prec;
	if (opt >= 0) job.base.optimizer = (enum vp_optimizer)opt;
	if (mb) job.base.micro_batch = mb;
	if (seq) job.base.seq = seq;
	if (rc_knob >= 0) job.base.recompute = (enum vp_recompute)rc_knob;
	if (lora) job.base.lora_rank = (unsigned)lora;
	if (targets) job.base.lora_targets = targets;
	if (job.base.lora_targets == (1u << VP_LORA_TARGET_COUNT) - 1)
		job.base.lora_targets &= vp_lora_available(&model);
	if (quant >= 0) job.base.quant = (enum vp_quant)quant;
	memset(&job.open, 0, sizeof job.open);
	job.open.tp = job.open.pp = job.open.sp = job.open.shard = true;
	job.open.grad_accum = true;
	job.open.recompute = rc_knob < 0;
	job.tokens = tokens ? tokens : (double)steps * (double)gbatch *
	    (double)job.base.seq;
	if (vp_plan_check(&job.base, &model, 0, &d) != 0) {
		vp_cli_print_diags(&d);
		vp_catalog_free(&cat);
		vp_model_free(&model);
		return VP_EXIT_INPUT;
	}
	cards = xcalloc(cat.n ? cat.n : 1, sizeof *cards);
	for (i = 0; i < cat.n; i++) {
		if (!card_selected(&cat.v[i], &filt))
			continue;
		vp_compare_card(&job, &cat.v[i], &cards[n]);
		anyfit |= cards[n].fits;
		n++;
	}
	vp_compare_sort(cards, n, (enum vp_sort)sort);
	rep.model = &model;
	rep.job = &job;
	rep.cards = cards;
	rep.n = n;
	rep.sort = sorts[sort];
	rep.color = false;
	vp_buf_init(&out);
	if (svg != NULL) {
		vp_compare_svg(&rep, &out);
		if (vp_cli_write_atomic(svg, out.s) != 0) {
			vp_buf_free(&out);
			free(cards);
			vp_catalog_free(&cat);
			vp_model_free(&model);
			return VP_EXIT_SYSTEM;
		}
		out.len = 0;
		out.s[0] = '\0';
	}
	if (json)
		vp_compare_json(&rep, &out);
	else if (csv)
		vp_compare_csv(&rep, &out);
	else
		vp_compare_text(&rep, &out);
	if (explain && !json && !csv)
		vp_buf_printf(&out, "\n%s", vp_time_assumptions);
	fputs(out.s, stdout);
	vp_buf_free(&out);
	free(cards);
	vp_catalog_free(&cat);
	vp_model_free(&model);
	e = flush_out();
	if (e != VP_EXIT_OK)
		return e;
	return anyfit ? VP_EXIT_OK : VP_EXIT_NOFIT;
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

size_t
vp_cli_library(char ***names)
{
	return library(names);
}

void
vp_cli_library_free(char **names, size_t n)
{
	library_free(names, n);
}
