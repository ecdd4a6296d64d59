/*
 * cli.h — the command line: subcommands, option parsing, exit statuses.
 *
 * Shell side.  Only this layer prints and turns statuses into exit codes
 * (documented in vramplan(1)).
 */
#ifndef VP_CLI_H
#define VP_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu.h"
#include "model.h"
#include "options.h"
#include "session.h"
#include "util.h"

enum vp_exit {
	VP_EXIT_OK = 0,		/* fits, or no --gpus given */
	VP_EXIT_NOFIT = 1,	/* does not fit */
	VP_EXIT_USAGE = 2,	/* bad command line */
	VP_EXIT_INPUT = 3,	/* bad or missing input file */
	VP_EXIT_SYSTEM = 4,	/* write error and other system failures */
	VP_EXIT_NODEVICE = 5,	/* calibrate: no usable GPU or driver */
};

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
 * The profile an estimate uses: --profile FILE, else the calibrated
 * profile stored for this card (or for cpu), else the built-in defaults.
 * Initialises label (the report's "profile:" line; the caller frees it).
 * -1 after printing why a profile file is rejected.
 */
struct vp_buf;
struct vp_gpu;
struct vp_profile;
int vp_cli_profile(const char *path, const struct vp_gpu *gpu, int device,
    struct vp_profile *out, struct vp_buf *label);
int vp_cmd_calibrate(int argc, char **argv);

/* Shell helpers shared by the commands (cli.c). */
struct vp_catalog;
struct vp_diags;
char *vp_cli_resolve_model(const char *arg);	/* NULL after a message */
int vp_cli_load_catalog(const char *path, struct vp_catalog *c);
/* Temporary file beside path, fsync, rename: never half-written. */
int vp_cli_write_atomic(const char *path, const char *text);
void vp_cli_print_diags(struct vp_diags *d);

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
};
/* Most values one repeatable option (--price) may have. */
#define VP_CLI_MAXREPEAT 64
/* Options of cmd (VP_CMD_ESTIMATE or VP_CMD_TUI) and MODEL into a job
 * ready for vp_session_run; an exit status (job->done: --help said it). */
int vp_cli_setup(int argc, char **argv, unsigned cmd,
    struct vp_cli_job *job);
void vp_cli_job_free(struct vp_cli_job *job);

/* The model library's names (file stems), sorted; 0 when none. */
size_t vp_cli_library(char ***names);
void vp_cli_library_free(char **names, size_t n);

int vp_cmd_tui(int argc, char **argv);

/* Where the model library and GPU catalog live. */
const char *vp_data_dir(void);
void vp_usage(void);

#endif
