/*
 * cli_calib.h — calibrated profiles on the shell side: the profile an
 * estimate uses, and the `vramplan calibrate` command.
 *
 * Shell side (reads files, runs the probe and the harness).  Depends on
 * shell.h only; the estimate (cli.c) and the TUI (tui.c) call
 * vp_cli_profile.
 */
#ifndef VP_CLI_CALIB_H
#define VP_CLI_CALIB_H

#include <getopt.h>

#include "calib.h"
#include "gpu.h"
#include "log.h"
#include "util.h"

/*
 * The profile an estimate uses: --profile FILE, else the calibrated
 * profile stored for this card (or for cpu), else the built-in defaults.
 * Initialises label (the report's "profile:" line; the caller frees it).
 * 1: a calibrated profile, 0: the built-in defaults, -1 after printing
 * why a profile file is rejected.
 */
int vp_cli_profile(const char *path, const struct vp_gpu *gpu, int device,
    struct vp_profile *out, struct vp_buf *label);
/* The same, why a profile is rejected or ignored into log (NULL:
 * printed); what the set-up (setup.c) calls. */
int vp_find_profile(const char *path, const struct vp_gpu *gpu, int device,
    struct vp_profile *out, struct vp_buf *label, struct vp_log *log);
/* calibrate's options, getopt_long's table ending in a NULL name. */
extern const struct option vp_calib_options[];
/* vramplan calibrate [options]: an exit status (vramplan(1)). */
int vp_cmd_calibrate(int argc, char **argv);

#endif
