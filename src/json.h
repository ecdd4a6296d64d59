/*
 * json.h — a streaming JSON writer into a struct vp_buf: objects and
 * arrays opened and closed in order, members and items written as they
 * come, commas and line breaks placed by the writer.  report.c and
 * report_compare.c write their JSON with it.
 *
 * Every value call takes the member's key: a name inside an object, NULL
 * inside an array (an assert checks which).  Strings are escaped by
 * vp_buf_json_str.  Numbers that are not finite are written as null, as
 * JSON has no NaN or infinity.  When the outermost container closes, the
 * document ends with a newline.
 *
 * Pure.  The caller owns the buffer; struct vp_json lives on the caller's
 * stack and holds no memory of its own.
 */
#ifndef VP_JSON_H
#define VP_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Where a container breaks its lines. */
enum vp_json_style {
	VP_JSON_INLINE,	/* {"a": 1, "b": 2}, unless vp_json_break says */
	VP_JSON_BLOCK,	/* [\n  1,\n  2\n]: brackets on lines of their own,
			 * one item a line indented by two */
};

#define VP_JSON_MAXDEPTH 8

struct vp_json {
	struct vp_buf *out;
	int depth;			/* containers open */
	struct vp_json_level {
		bool object;
		enum vp_json_style style;
		unsigned n;		/* members or items written so far */
		bool brk;		/* the next one starts a line */
	} lv[VP_JSON_MAXDEPTH];
};

void vp_json_init(struct vp_json *j, struct vp_buf *out);
void vp_json_object(struct vp_json *j, const char *key,
    enum vp_json_style style);
void vp_json_array(struct vp_json *j, const char *key,
    enum vp_json_style style);
void vp_json_end(struct vp_json *j);	/* closes the innermost */
/* The next member or item of the innermost container starts a new line,
 * indented by the depth (one space at the top level, which lines it up
 * under the first member).  Before the first it does nothing: the first
 * stays on the opening line. */
void vp_json_break(struct vp_json *j);

/* s NULL: null. */
void vp_json_str(struct vp_json *j, const char *key, const char *s);
void vp_json_u64(struct vp_json *j, const char *key, uint64_t v);
void vp_json_bool(struct vp_json *j, const char *key, bool v);
void vp_json_null(struct vp_json *j, const char *key);
/* %g: six significant digits ("0.37", "1.10593", "254867"). */
void vp_json_num(struct vp_json *j, const char *key, double v);
/* %.*f: a fixed number of decimal places ("7903.2" with 1). */
void vp_json_fixed(struct vp_json *j, const char *key, double v,
    int places);

#endif
