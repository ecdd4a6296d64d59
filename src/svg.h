/*
 * svg.h — the pieces both SVG pictures are drawn with (compare's cost
 * against time and memory bars, report_compare.c; the estimate's memory
 * timeline and per-GPU breakdown, report_svg.c): the document's frame,
 * escaped text, lines and boxes, and one colour per term of the
 * breakdown with its legend, so the two pictures read alike.
 *
 * Pure: everything is appended to a caller-owned struct vp_buf.
 */
#ifndef VP_SVG_H
#define VP_SVG_H

#include <stddef.h>

#include "graph.h"
#include "util.h"

/* <svg ...> of W x H with a white background, sans-serif 11 px. */
void vp_svg_open(struct vp_buf *o, double w, double h);
void vp_svg_close(struct vp_buf *o);
/* Text content: control characters escaped as in the text report
 * (vp_buf_add_esc: XML 1.0 cannot write most of them), then <, >, &. */
void vp_svg_text(struct vp_buf *o, const char *s);
/* A <text> element at (x, y); anchor NULL (start), "middle" or "end";
 * size 0: the document's.  The text is escaped. */
void vp_svg_label(struct vp_buf *o, double x, double y, const char *anchor,
    double size, const char *text);
void vp_svg_line(struct vp_buf *o, double x1, double y1, double x2,
    double y2, const char *stroke);
void vp_svg_rect(struct vp_buf *o, double x, double y, double w, double h,
    const char *fill);

/* The fill of a term's area or bar (inputs share the activations'). */
const char *vp_svg_term_color(enum vp_cat c);
/* One swatch and name per term, left to right from (x, y) (the top of
 * the swatches); returns the x after the last. */
double vp_svg_legend(struct vp_buf *o, double x, double y,
    const enum vp_cat *cats, size_t n);

#endif
