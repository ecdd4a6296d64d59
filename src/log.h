/*
 * log.h — the messages a set-up writes, kept or printed.
 *
 * The estimate's set-up (setup.c) and the readers' helpers it calls
 * (shell.c, cli_calib.c) report what they refuse and what they note
 * through a struct vp_log.  The command line passes NULL: every message
 * goes to stderr at once, as it always did ("vramplan: ..." lines, and
 * diagnostics as "vramplan: FILE:LINE:COL: error: msg", escaped).  The
 * library (api.c) passes a log: the same lines are kept, in order, with
 * their level and position, for the caller to read; nothing is printed.
 *
 * Shell side (vp_logf with NULL writes to stderr).  A log owns its
 * entries; vp_log_free releases them.
 */
#ifndef VP_LOG_H
#define VP_LOG_H

#include <stddef.h>

#include "diag.h"
#include "util.h"

struct vp_log_entry {
	enum vp_level level;
	char *file;		/* NULL when the message is not about a file */
	int line, col;		/* 1-based; 0 unknown */
	char *msg;		/* the message alone: no "vramplan: ", no
				 * level, no position, no newline */
	char *text;		/* the line(s) the command line prints,
				 * "vramplan: ...\n", escaped as it escapes */
};

struct vp_log {
	struct vp_log_entry *v;
	size_t n, cap;
};

/*
 * One message, formatted as the command line prints it: fmt starts with
 * "vramplan: " and ends with a newline.  A "vramplan: note: " or
 * "vramplan: warning: " prefix sets the level (else it is an error).
 * log NULL: written to stderr.
 */
void vp_logf(struct vp_log *log, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The diagnostics of d, moved into log (log NULL: printed to stderr as
 * vp_cli_print_diags prints them); d is cleared. */
void vp_log_diags(struct vp_log *log, struct vp_diags *d);
/* Every entry's text, in order: what the command line would print. */
void vp_log_format(const struct vp_log *log, struct vp_buf *out);
/* The number of entries of a level. */
size_t vp_log_count(const struct vp_log *log, enum vp_level level);
void vp_log_free(struct vp_log *log);

#endif
