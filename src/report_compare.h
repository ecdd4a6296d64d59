/*
 * report_compare.h — render a card comparison as a text table, JSON, CSV
 * or an SVG picture (cost against time, and a stacked memory bar per
 * card).  Pure: formats into a caller-owned buffer.
 */
#ifndef VP_REPORT_COMPARE_H
#define VP_REPORT_COMPARE_H

#include <stdbool.h>

#include "cost.h"
#include "util.h"

/* compare's JSON names its form first, as the estimate's does (report.h:
 * the same policy), described by schema/vramplan-compare.schema.json. */
#define VP_COMPARE_SCHEMA_VERSION "1.0"

struct vp_compare_report {
	const struct vp_model *model;
	const struct vp_compare *job;
	const struct vp_card_result *cards;	/* sorted */
	size_t n;
	const char *sort;
	bool color;
};

void vp_compare_text(const struct vp_compare_report *r, struct vp_buf *o);
void vp_compare_json(const struct vp_compare_report *r, struct vp_buf *o);
void vp_compare_csv(const struct vp_compare_report *r, struct vp_buf *o);
void vp_compare_svg(const struct vp_compare_report *r, struct vp_buf *o);

#endif
