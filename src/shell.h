/*
 * shell.h — what the commands of the shell share: exit statuses, where
 * the model library and catalog live, reading MODEL and the catalog (the
 * user's own merged in), printing diagnostics, sorted listings of YAML
 * files, writing a file atomically, flushing stdout.
 *
 * Shell side: these print and touch files; every command module (cli.c,
 * cli_calib.c, tui.c) depends on this one and this one on none of them.
 * Only the shell prints (the core formats into buffers); exit statuses
 * are documented in vramplan(1).
 */
#ifndef VP_SHELL_H
#define VP_SHELL_H

#include <stddef.h>

#include "diag.h"
#include "gpu.h"
#include "log.h"

enum vp_exit {
	VP_EXIT_OK = 0,		/* fits, or no --gpus given */
	VP_EXIT_NOFIT = 1,	/* does not fit */
	VP_EXIT_USAGE = 2,	/* bad command line */
	VP_EXIT_INPUT = 3,	/* bad or missing input file */
	VP_EXIT_SYSTEM = 4,	/* write error and other system failures */
	VP_EXIT_NODEVICE = 5,	/* calibrate: no usable GPU or driver */
};

/* Where the model library and GPU catalog live (paths.h says how it is
 * found); the text stays valid until the next call. */
const char *vp_data_dir(void);

/* MODEL: a path, a directory holding config.json, a library name (with
 * or without .yaml), or a Hugging Face repository id in the local cache:
 * a malloc'd path, or NULL after printing why (with the nearest library
 * name). */
char *vp_cli_resolve_model(const char *arg);
/* The same with a revision for a model from the Hugging Face cache
 * (hfcache.h; NULL: main); the order MODEL is looked up in is vramplan(1)'s
 * (shell.c).  A revision with any other kind of MODEL is an error. */
char *vp_cli_resolve_model_at(const char *arg, const char *revision);
/* The same in the library directory dir (NULL: vp_data_dir()), why
 * into log (NULL: printed); what the set-up (setup.c) and the library
 * call. */
char *vp_resolve_model(const char *dir, const char *arg, const char *revision,
    struct vp_log *log);
/* The catalog at path, or the shipped one with the user's merged in
 * ($XDG_CONFIG_HOME/vramplan/gpus.yaml); 0, or -1 after the diagnostics. */
int vp_cli_load_catalog(const char *path, struct vp_catalog *c);
/* The same with the shipped catalog in dir (NULL: vp_data_dir()), the
 * diagnostics into log (NULL: printed). */
int vp_load_catalog(const char *dir, const char *path, struct vp_catalog *c,
    struct vp_log *log);
/* Print and clear diagnostics (stderr). */
void vp_cli_print_diags(struct vp_diags *d);

/* The *.yaml file names of dir, sorted (byte order); 0 when none or the
 * directory cannot be read.  vp_cli_names_free releases them. */
size_t vp_cli_yaml_files(const char *dir, char ***names);
void vp_cli_names_free(char **names, size_t n);
/* The model library's names (file stems), sorted; 0 when none
 * (vp_cli_names_free releases them). */
size_t vp_cli_library(char ***names);
/* The same for the library directory dir. */
size_t vp_library_in(const char *dir, char ***names);

/* Temporary file beside path, fsync, rename: never half-written.  Only
 * a regular file is replaced (or a new one made): a symbolic link is
 * followed and its target written; a directory, FIFO, device or socket is
 * refused.  0, or -1 after printing why. */
int vp_cli_write_atomic(const char *path, const char *text);
/* Flush stdout: VP_EXIT_OK, or VP_EXIT_SYSTEM after printing why. */
int vp_cli_flush(void);

#endif
