/*
 * setup.h — the estimate's set-up, shared by the command line (the
 * estimate, the TUI and whatever else runs one estimate: vp_cli_setup
 * parses argv into a job, then calls vp_setup) and the public library
 * (api.c: its options come by name, vp_option_parse, into the same
 * job->opts).
 *
 * Library side: it reads files (the model, the plan file, the DeepSpeed
 * config, the catalog, a stored profile) but prints nothing when given a
 * log (log.h); the command line passes NULL and its messages go to
 * stderr as they always did.  It never exits.
 */
#ifndef VP_SETUP_H
#define VP_SETUP_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu.h"
#include "log.h"
#include "model.h"
#include "options.h"
#include "session.h"
#include "trainer.h"
#include "util.h"

/*
 * One estimate's set-up, shared by the estimate, the TUI and the library:
 * options (and --plan FILE) in an override set, MODEL read, the plan
 * built, the GPU set and the job's size, the open knobs and the profile;
 * the session ready to run.  (The name is the command line's, kept so
 * that the commands' code did not change.)
 */
struct vp_cli_job {
	struct vp_model model;
	const char *data_dir;		/* the model library and catalog
					 * directory; NULL: vp_data_dir() */
	struct vp_catalog cat;		/* loaded with a GPU set */
	struct vp_gpuset gs;
	struct vp_session ses;		/* inputs set, not run */
	struct vp_buf prof_label;
	const char *model_arg;		/* MODEL as given (argv) */
	const char *catalog;		/* --catalog FILE, or NULL */
	const char *profile;		/* --profile FILE, or NULL */
	bool json, csv, explain;
	bool node_layout;		/* --nodes or --gpus-per-node given */
	bool done;
	struct vp_optset opts;		/* the options given (and the plan
					 * file's, merged) */
	struct vp_optset file;		/* --plan FILE's keys (owned) */
	struct vp_trainer_applied trainer;	/* what --trainer set */
};
/*
 * From job->opts (the options given; job zeroed by the caller, its opts
 * and file sets vp_optset_init'ed) and job->model_arg: the model read, the
 * plan built, the GPU set, the open knobs and the profile; the session is
 * ready to run.  VP_EXIT_OK or the exit status, with why in log (NULL:
 * printed to stderr).  vp_cli_job_free releases the job in every case.
 */
int vp_setup(struct vp_cli_job *job, struct vp_log *log);

/*
 * Read MODEL (a path or a library name of dir; dir NULL: vp_data_dir()),
 * --deepspeed-config and --plan FILE into o and file, and make the plan:
 * the built-in defaults, the model's training block, the plan file's
 * keys, then the options given (which win).  The exit status, with why
 * in log (NULL: stderr).
 */
int vp_load_model_plan(const char *dir, const char *model_arg,
    struct vp_optset *o, struct vp_optset *file, struct vp_model *m,
    struct vp_plan *p, struct vp_trainer_applied *ta, struct vp_log *log);

void vp_cli_job_free(struct vp_cli_job *job);

#endif
