/*
 * report_svg.h — the estimate as an SVG picture (--svg FILE): above, the
 * allocated bytes of one GPU through the step of the worst pipeline
 * stage (the exact replay's timeline, mem.h), stacked by term, with the
 * phases shaded and named, the allocated peak marked with its band
 * (band.h), the reserved and device peaks, and the card's usable memory;
 * below, the per-GPU breakdown at the peak, one stacked bar per pipeline
 * stage, against the same capacity.
 *
 * Pure: formats into a caller-owned buffer (svg.h's pieces, as compare's
 * picture); the shell writes it atomically.
 */
#ifndef VP_REPORT_SVG_H
#define VP_REPORT_SVG_H

#include "mem.h"
#include "report.h"
#include "util.h"

/* tl: the timeline of the worst stage (struct vp_session's timeline),
 * at least one point. */
void vp_report_svg(const struct vp_report *r, const struct vp_timeline *tl,
    struct vp_buf *o);

#endif
