/*
 * cli.h — the command line: subcommands, option parsing, exit statuses.
 *
 * Shell side.  Only this layer prints and turns statuses into exit codes
 * (documented in vramplan(1)).
 */
#ifndef VP_CLI_H
#define VP_CLI_H

enum vp_exit {
	VP_EXIT_OK = 0,		/* fits, or no --gpus given */
	VP_EXIT_NOFIT = 1,	/* does not fit */
	VP_EXIT_USAGE = 2,	/* bad command line */
	VP_EXIT_INPUT = 3,	/* bad or missing input file */
	VP_EXIT_SYSTEM = 4,	/* write error and other system failures */
};

struct vp_cmd {
	const char *name;
	const char *usage;
	int (*exec)(int argc, char **argv);
};

int vp_cmd_estimate(int argc, char **argv);
int vp_cmd_models(int argc, char **argv);
int vp_cmd_gpus(int argc, char **argv);
int vp_cmd_missing(int argc, char **argv);
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

/* Where the model library and GPU catalog live. */
const char *vp_data_dir(void);
void vp_usage(void);

#endif
