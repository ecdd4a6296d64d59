/*
 * completion.h — shell completions for bash, zsh and fish, generated
 * from the option table.
 *
 * `vramplan completions bash|zsh|fish` prints the script; make install
 * installs the three (Makefile.am).  Each script completes the
 * subcommands (main.c's table), each command's options (vp_options rows
 * by their commands; calibrate's from vp_calib_options), enum values from
 * the rows' names, files for FILE values, and asks the program for the
 * dynamic lists: `vramplan gpus --ids` for --gpus NxCARD, `vramplan
 * models --names --cached` for MODEL (library names and the repositories
 * of the local Hugging Face cache, with files and directories beside
 * them).
 *
 * Shell side: prints; only the program links it.  Depends on cli.h (the
 * command table's type) and cli_calib.h.
 */
#ifndef VP_COMPLETION_H
#define VP_COMPLETION_H

#include <stddef.h>

#include "cli.h"
#include "util.h"

/* The script for shell ("bash", "zsh", "fish") into out, the commands
 * cmds[0..n) besides the estimate; -1 when the shell is not one of
 * those. */
int vp_completion_script(const char *shell, const struct vp_cmd *cmds,
    size_t n, struct vp_buf *out);

/* vramplan completions SHELL: an exit status. */
int vp_cmd_completions(int argc, char **argv, const struct vp_cmd *cmds,
    size_t n);

#endif
