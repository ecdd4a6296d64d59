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
#include "setup.h"
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

/* Most values one repeatable option (--price) may have. */
#define VP_CLI_MAXREPEAT 64
/* Options of cmd (VP_CMD_ESTIMATE or VP_CMD_TUI) and MODEL into a job
 * ready for vp_session_run: argv parsed here, the rest is vp_setup
 * (setup.h), its messages on stderr; an exit status (job->done: --help
 * or --version said it).  vp_cli_job_free releases the job in every
 * case (it is zeroed first thing). */
int vp_cli_setup(int argc, char **argv, unsigned cmd,
    struct vp_cli_job *job);
/* Its first half: argv parsed into job->opts and job->model_arg (--help
 * and --version said, job->done), nothing read; vp_setup(job, NULL) is
 * the rest.  (export checks the format's families in between.) */
int vp_cli_parse(int argc, char **argv, unsigned cmd,
    struct vp_cli_job *job);


int vp_cmd_tui(int argc, char **argv);

void vp_usage(void);

#endif
