/*
 * diag.h — diagnostics with a source position.
 *
 * Every module that can reject input adds to a caller-owned struct
 * vp_diags instead of printing; only the CLI prints them, as
 * "vramplan: FILE:LINE:COL: error: message".  Messages follow git's
 * wording: lowercase, no final full stop, what is wrong first, the subject
 * quoted.  Pure.  The list owns copies of the strings it is given.
 */
#ifndef VP_DIAG_H
#define VP_DIAG_H

#include <stddef.h>

#include "util.h"

enum vp_level { VP_ERROR, VP_WARNING, VP_NOTE };

/* A position in an input file; line and col are 1-based, 0 = unknown. */
struct vp_srcpos {
	int line;
	int col;
};

struct vp_diag {
	char *file;		/* NULL when the message is not about a file */
	int line, col;
	enum vp_level level;
	char *msg;
};

struct vp_diags {
	struct vp_diag *v;
	size_t n, cap;
};

void vp_diag_add(struct vp_diags *d, const char *file, struct vp_srcpos pos,
    enum vp_level level, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
size_t vp_diags_count(const struct vp_diags *d, enum vp_level level);
void vp_diags_clear(struct vp_diags *d);
/* One line per diagnostic, "vramplan: file:line:col: error: msg\n". */
void vp_diags_format(const struct vp_diags *d, struct vp_buf *out);

#endif
