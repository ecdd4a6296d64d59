/*
 * cli.h — the command line: subcommands and option parsing.
 *
 * Shell side: the estimate, compare, models and gpus commands and the
 * set-up the TUI shares (vp_cli_setup).  What every command needs (exit
 * statuses, reading inputs, printing diagnostics) is shell.h's; the
 * profile and calibrate are cli_calib.h's.
 */
#ifndef VP_CLI_H
#define VP_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu.h"
#include "model.h"
#include "options.h"
#include "session.h"
#include "shell.h"
#include "util.h"

struct vp_cmd {
	const char *name;
	const char *usage;
	int (*exec)(int argc, char **argv);
};

int vp_cmd_estimate(int argc, char **argv);
int vp_cmd_models(int argc, char **argv);
int vp_cmd_gpus(int argc, char **argv);
int vp_cmd_compare(int argc, char **argv);

/*
 * The estimate's set-up, shared by the estimate and the TUI: options
 * (and --plan FILE) into an override set, MODEL read, the plan built, the
 * GPU set and the job's size, the open knobs and the profile; the session
 * is ready to run.  Returns VP_EXIT_OK, or the exit status after printing
 * why; job->done when --help or --version was answered.  vp_cli_job_free
 * releases the job in every case (it is zeroed first thing).
 */
struct vp_cli_job {
	struct vp_model model;
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
/* Most values one repeatable option (--price) may have. */
#define VP_CLI_MAXREPEAT 64
/* Options of cmd (VP_CMD_ESTIMATE or VP_CMD_TUI) and MODEL into a job
 * ready for vp_session_run; an exit status (job->done: --help said it). */
int vp_cli_setup(int argc, char **argv, unsigned cmd,
    struct vp_cli_job *job);
void vp_cli_job_free(struct vp_cli_job *job);


int vp_cmd_tui(int argc, char **argv);

void vp_usage(void);

#endif
