/*
 * setup.c — the estimate's set-up, shared by the command line (cli.c,
 * tui.c) and the library (api.c); see setup.h.
 *
 * Moved whole from cli.c; what it refuses or notes goes through a struct
 * vp_log (log.h), which the command line leaves NULL (stderr, as
 * before) and the library keeps.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include "setup.h"

#include <stdlib.h>
#include <string.h>

#include "cli_calib.h"
#include "ds_read.h"
#include "finetune.h"
#include "model_read.h"
#include "plan.h"
#include "plan_read.h"
#include "shell.h"

/* The most GPUs a job may have (vramplan(1)). */
#define VP_MAX_GPUS 65536u

/*
 * The GPU set (--gpus, or the plan file's gpus), the job's size and the
 * node size; or, without one, the world the degrees make.
 */
static int
setup_gpus(struct vp_cli_job *job, const struct vp_optset *o,
    unsigned *world, struct vp_log *log)
{
	struct vp_plan *p = &job->ses.plan;
	unsigned nodes = o->has[VP_O_NODES] ? (unsigned)o->val[VP_O_NODES].u : 0;
	unsigned gpn = o->has[VP_O_GPUS_PER_NODE] ?
	    (unsigned)o->val[VP_O_GPUS_PER_NODE].u : 0;
	const char *gpus = o->has[VP_O_GPUS] ? o->val[VP_O_GPUS].s : NULL;
	struct vp_buf msg;

	if (gpus == NULL) {
		unsigned w;

		if (p->dp == 0)
			p->dp = 1;
		w = vp_plan_world(p);	/* 0: past UINT_MAX */
		if (w == 0 || w > VP_MAX_GPUS) {
			vp_logf(log, "vramplan: the parallel degrees make "
			    "more than %u GPUs (--dp %u x --tp %u x --pp %u x "
			    "--cp %u)\n", VP_MAX_GPUS, p->dp, p->tp, p->pp,
			    p->cp);
			return VP_EXIT_USAGE;
		}
		*world = (unsigned)w;
		return VP_EXIT_OK;
	}
	if (vp_load_catalog(job->data_dir, job->catalog, &job->cat, log) != 0)
		return VP_EXIT_INPUT;
	vp_buf_init(&msg);
	if (vp_gpuset_parse(&job->cat, gpus, &job->gs, &msg) != 0) {
		if (job->file.has[VP_O_GPUS] && o->val[VP_O_GPUS].s ==
		    job->file.val[VP_O_GPUS].s) {
			struct vp_diags d = { 0 };

			vp_diag_add(&d, job->file.file, o->pos[VP_O_GPUS],
			    VP_ERROR,
			    "gpus: %s", msg.s);
			vp_log_diags(log, &d);
			vp_buf_free(&msg);
			return VP_EXIT_INPUT;
		}
		vp_logf(log, "vramplan: --gpus: %s\n", msg.s);
		vp_buf_free(&msg);
		return VP_EXIT_USAGE;
	}
	vp_buf_free(&msg);
	/*
	 * --gpus NxCARD is the whole job; --nodes M splits it into M
	 * nodes (or, with --gpus-per-node K, makes M x K GPUs).
	 */
	*world = job->gs.count;
	if (nodes > 0 && gpn > 0 && !job->gs.counted) {
		if ((uint64_t)nodes * gpn > VP_MAX_GPUS) {
			vp_logf(log, "vramplan: --nodes %u x --gpus-per-node "
			    "%u is %llu GPUs; at most %u\n", nodes, gpn,
			    (unsigned long long)nodes * gpn, VP_MAX_GPUS);
			return VP_EXIT_USAGE;
		}
		*world = job->gs.count = nodes * gpn;
	}
	if (gpn > 0)
		p->gpus_per_node = gpn;
	else if (nodes > 0)
		p->gpus_per_node = *world / nodes;
	else
		p->gpus_per_node = *world < VP_DEFAULT_GPUS_PER_NODE ? *world :
		    VP_DEFAULT_GPUS_PER_NODE;
	if (nodes > 0 && (*world % nodes != 0 ||
	    p->gpus_per_node * nodes != *world)) {
		unsigned lo = nodes, hi = lo;

		while (lo > 1 && *world % lo)
			lo--;
		while (hi < *world && *world % hi)
			hi++;
		/* Past the GPU count only the count itself splits. */
		if (hi > *world)
			hi = lo = *world;
		if (lo == hi)
			vp_logf(log, "vramplan: --nodes %u does not split %u "
			    "GPU%s into equal nodes; nearest valid: %u\n",
			    nodes, *world, *world == 1 ? "" : "s", lo);
		else
			vp_logf(log, "vramplan: --nodes %u does not split %u "
			    "GPUs into equal nodes; nearest valid: %u or %u\n",
			    nodes, *world, lo, hi);
		return VP_EXIT_USAGE;
	}
	if (p->dp == 0)
		p->dp = vp_plan_dp(p, *world);
	return VP_EXIT_OK;
}

/*
 * Options that only mean something with a GPU set, and pairs that
 * exclude each other: usage errors that say why.
 */
static int
check_combinations(const struct vp_optset *o, struct vp_log *log)
{
	static const enum vp_optid need_gpus[] = {
		VP_O_MAX_SEQ, VP_O_MIN_GPUS, VP_O_MAX_MB, VP_O_NODES,
	};
	size_t i;

	if (o->has[VP_O_JSON] && o->has[VP_O_CSV]) {
		vp_logf(log, "vramplan: --json and --csv exclude each other\n");
		return VP_EXIT_USAGE;
	}
	if (o->has[VP_O_GPUS])
		return VP_EXIT_OK;
	for (i = 0; i < VP_NELEM(need_gpus); i++)
		if (o->has[need_gpus[i]]) {
			vp_logf(log, "vramplan: --%s needs --gpus NxCARD "
			    "(it asks what fits on a card)\n",
			    vp_options[need_gpus[i]].name);
			return VP_EXIT_USAGE;
		}
	return VP_EXIT_OK;
}

/*
 * Read MODEL and the plan file, and make the plan: the built-in defaults,
 * the model's training block, the plan file's keys, then the command
 * line (which wins).  "all-linear" means the linears this model has.
 */
/*
 * A layer-graph model (lgraph.h) takes images: the sequence, attention
 * and dropout options have nothing to act on (its dropout layers carry
 * their own p).  Notes, like vp_optset_inert's.
 */
static void
lgraph_inert(const bool given[VP_O_COUNT], struct vp_buf *notes)
{
	static const struct {
		enum vp_optid opt;
		const char *why;
	} rows[] = {
		{ VP_O_SEQ, "its input is images: --image" },
		{ VP_O_ATTENTION, "it has no attention" },
		{ VP_O_DROPOUT, "its dropout layers carry their own p" },
	};
	size_t i;

	for (i = 0; i < VP_NELEM(rows); i++)
		if (given[rows[i].opt])
			vp_buf_printf(notes, "--%s has no effect on a layer-graph "
			    "model (%s)\n", vp_options[rows[i].opt].name,
			    rows[i].why);
}

/*
 * A vision transformer (family vit) takes images: its sequence is the
 * patches of --image plus the CLS token, set here once the options are
 * applied; a --seq the user gave is a note.  0, or the exit status.
 */
static int
vision_seq(const bool given[VP_O_COUNT], const struct vp_model *m,
    struct vp_plan *p, struct vp_buf *notes, struct vp_log *log)
{
	if (m->family != VP_FAMILY_VIT)
		return VP_EXIT_OK;
	if (given[VP_O_MAX_SEQ]) {
		vp_logf(log, "vramplan: --max-seq needs a sequence; a "
		    "vision transformer takes images (try "
		    "--max-micro-batch)\n");
		return VP_EXIT_INPUT;
	}
	if (given[VP_O_SEQ])
		vp_buf_printf(notes, "--seq has no effect on a vision "
		    "transformer: its sequence is the patches of --image "
		    "plus the CLS token (%llu at %llux%llu)\n",
		    (unsigned long long)vp_vision_seq(m, p->image),
		    (unsigned long long)p->image,
		    (unsigned long long)p->image);
	p->seq = vp_vision_seq(m, p->image);
	return VP_EXIT_OK;
}

int
vp_load_model_plan(const char *dir, const char *model_arg,
    struct vp_optset *o, struct vp_optset *file, struct vp_model *m,
    struct vp_plan *p, struct vp_trainer_applied *ta, struct vp_log *log)
{
	struct vp_diags d = { 0 };
	struct vp_dsconfig ds;
	bool has_ds = o->has[VP_O_DS_CONFIG];
	bool cli[VP_O_COUNT];	/* given on the command line */
	struct vp_buf notes;
	char *path, *line, *nl;
	int rc;

	memcpy(cli, o->has, sizeof cli);

	/* The DeepSpeed config before the plan file, so that the notes of
	 * what the command line overrides see the command line alone. */
	if (has_ds) {
		rc = vp_ds_load(o->val[VP_O_DS_CONFIG].s, &ds, &d);
		if (rc == 0)
			vp_ds_merge(&ds, o, &d);
		vp_log_diags(log, &d);
		if (rc != 0) {
			vp_ds_free(&ds);
			return VP_EXIT_INPUT;
		}
	}
	if (o->has[VP_O_PLAN]) {
		rc = vp_plan_load(o->val[VP_O_PLAN].s, file, &d);
		vp_log_diags(log, &d);
		if (rc != 0) {
			if (has_ds)
				vp_ds_free(&ds);
			return VP_EXIT_INPUT;
		}
		/* The file's gpus-per-node goes with its gpus, and only
		 * when the command line says nothing of the nodes. */
		if (o->has[VP_O_GPUS] || o->has[VP_O_NODES])
			file->has[VP_O_GPUS_PER_NODE] = false;
		vp_optset_merge(o, file);
	}
	path = vp_resolve_model(dir, model_arg, o->has[VP_O_REVISION] ?
	    o->val[VP_O_REVISION].s : NULL, log);
	rc = path == NULL ? -1 : vp_model_load_ex(path,
	    o->has[VP_O_TEXT_ONLY] ? VP_READ_TEXT_ONLY : 0, m, &d);
	free(path);
	vp_log_diags(log, &d);
	if (rc != 0) {
		if (has_ds)
			vp_ds_free(&ds);
		return VP_EXIT_INPUT;
	}
	/* --trainer's defaults fill what the command line, the plan file
	 * and the DeepSpeed config left unset (some depend on the model). */
	{
		struct vp_buf err;

		vp_buf_init(&err);
		rc = vp_trainer_apply(o, m, ta, &err);
		if (rc != 0)
			vp_logf(log, "vramplan: --trainer: %s\n", err.s);
		vp_buf_free(&err);
		if (rc != 0) {
			if (has_ds)
				vp_ds_free(&ds);
			return VP_EXIT_USAGE;
		}
	}
	vp_plan_defaults(p, m);
	vp_optset_apply(o, p);
	if (has_ds) {
		/* "auto" needs the model's hidden size. */
		vp_ds_apply(&ds, m, p, &d);
		vp_log_diags(log, &d);
		vp_ds_free(&ds);
	}
	if (p->lora_targets == VP_LORA_ALL_LINEAR)
		p->lora_targets &= vp_lora_available(m);
	/* Options the user gave that refine one the plan has off. */
	vp_buf_init(&notes);
	vp_optset_inert(cli, p, &notes);
	if (m->lg != NULL && cli[VP_O_MAX_SEQ]) {
		vp_logf(log, "vramplan: --max-seq needs a sequence; a "
		    "layer-graph model takes images (try --max-micro-batch)\n");
		vp_buf_free(&notes);
		return VP_EXIT_INPUT;
	}
	/* Whisper's encoder takes one length (rules.c, s2s_lengths). */
	if (vp_model_family(m) == VP_FAMILY_WHISPER && cli[VP_O_MAX_SEQ]) {
		vp_logf(log, "vramplan: --max-seq has nothing to search for "
		    "Whisper: its encoder takes exactly max_source_positions "
		    "(%llu) positions (try --max-micro-batch)\n",
		    (unsigned long long)m->max_seq);
		vp_buf_free(&notes);
		return VP_EXIT_INPUT;
	}
	if (m->lg != NULL)
		lgraph_inert(cli, &notes);
	if ((rc = vision_seq(cli, m, p, &notes, log)) != VP_EXIT_OK) {
		vp_buf_free(&notes);
		return rc;
	}
	for (line = notes.s; line != NULL && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		vp_logf(log, "vramplan: note: %.*s\n", (int)(nl - line),
		    line);
	}
	vp_buf_free(&notes);
	return VP_EXIT_OK;
}


int
vp_setup(struct vp_cli_job *job, struct vp_log *log)
{
	struct vp_optset *o = &job->opts;
	struct vp_session *ses = &job->ses;
	unsigned world = 1;
	int rc;

	job->json = o->has[VP_O_JSON];
	job->csv = o->has[VP_O_CSV];
	job->explain = o->has[VP_O_EXPLAIN];
	job->catalog = o->has[VP_O_CATALOG] ? o->val[VP_O_CATALOG].s : NULL;
	job->profile = o->has[VP_O_PROFILE] ? o->val[VP_O_PROFILE].s : NULL;
	if ((rc = vp_load_model_plan(job->data_dir, job->model_arg, o,
	    &job->file, &job->model, &ses->plan, &job->trainer, log)) != VP_EXIT_OK)
		return rc;
	ses->trainer = o->has[VP_O_TRAINER] ? &job->trainer : NULL;
	ses->ds_config = o->has[VP_O_DS_CONFIG] ? o->val[VP_O_DS_CONFIG].s :
	    NULL;
	if ((rc = check_combinations(o, log)) != VP_EXIT_OK)
		return rc;
	if ((rc = setup_gpus(job, o, &world, log)) != VP_EXIT_OK)
		return rc;
	job->node_layout = o->has[VP_O_NODES] || o->has[VP_O_GPUS_PER_NODE];
	if (job->node_layout)
		ses->min_gpus_node = ses->plan.gpus_per_node;
	ses->model = &job->model;
	ses->gpus = &job->gs;
	ses->world = world;
	/*
	 * The planner runs when there is a GPU set and the user left knobs
	 * open; the knobs given (on the command line or in the plan file)
	 * stay fixed, and --dp fixes the layout.
	 */
	ses->search = !o->has[VP_O_NO_SEARCH] && !o->has[VP_O_DP];
	vp_optset_open(o, job->model.has_moe, &ses->open);
	ses->precision_given = o->has[VP_O_PRECISION];
	ses->min_gpus = o->has[VP_O_MIN_GPUS];
	ses->max_seq = o->has[VP_O_MAX_SEQ];
	ses->explain = job->explain;
	ses->nplans = o->has[VP_O_PLANS] ? (int)o->val[VP_O_PLANS].u : 4;
	ses->version = PACKAGE_VERSION;
	if (vp_find_profile(job->profile, job->gs.gpu, ses->plan.device,
	    &ses->profile, &job->prof_label, log) < 0)
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
	vp_optset_free(&job->file);
	vp_optset_free(&job->opts);
	vp_session_free(&job->ses);
	vp_gpuset_free(&job->gs);
	vp_catalog_free(&job->cat);
	vp_model_free(&job->model);
}
