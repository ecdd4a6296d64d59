/*
 * report.h — render an estimate as text (with bars), JSON or CSV into a
 * buffer.  The text rows come from vp_report_rows, which the TUI draws
 * too, so golden tests of the text report cover what the TUI shows.
 *
 * Pure: formats into a caller-owned struct vp_buf; the shell writes it.
 */
#ifndef VP_REPORT_H
#define VP_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "band.h"
#include "gpu.h"
#include "mem.h"
#include "model.h"
#include "plan.h"
#include "plan_search.h"
#include "trainer.h"

/*
 * The estimate's JSON document (vp_report_json) names its form as its
 * first key, "schema_version": "MAJOR.MINOR", described by
 * schema/vramplan-estimate.schema.json.  MINOR goes up when the form
 * grows (a key or an enum value added); MAJOR when a script could
 * misread it (a key removed or renamed, a type, unit or meaning changed,
 * an enum value removed), MINOR then back to 0.  tests/json_schema.sh
 * fails on any change the schema file does not describe.
 */
#define VP_ESTIMATE_SCHEMA_VERSION "1.0"

/* What one knob of the chosen plan saves (its default instead). */
struct vp_saving {
	const char *knob;	/* e.g. "recompute full" */
	uint64_t saved_bytes;	/* device peak without it minus with it */
};
#define VP_REPORT_MAXSAVINGS 8

struct vp_report {
	const struct vp_model *model;
	const struct vp_plan *plan;
	const struct vp_gpuset *gpus;	/* NULL: no --gpus, no verdict */
	const struct vp_mem *mem;
	const char *profile;		/* profile name */
	unsigned world;			/* GPUs in the job */
	int fits;			/* 1, 0, or -1 without --gpus */
	uint64_t max_micro_batch;	/* largest that fits (with --gpus) */
	bool explain;
	/* The planner's answer, when it ran. */
	const struct vp_search_result *search;
	int nplans;			/* alternatives to show */
	const struct vp_cand *chosen;	/* time model of the plan shown */
	const struct vp_mem *stages;	/* per pipeline stage (pp > 1) */
	unsigned nstages;
	unsigned worst_stage;
	const struct vp_saving *savings;
	int nsavings;
	/* Inverse queries: 0 = not asked (or, for min_gpus, none found). */
	bool ask_max_seq, ask_min_gpus;
	uint64_t max_seq;
	unsigned min_gpus;
	const struct vp_cand *min_gpus_plan;
	uint64_t trainable;		/* parameters that train (0: all) */
	const char *lora_targets;	/* "q,v" */
	uint64_t host_per_node;		/* host RAM the job needs per node */
	const char *host_note;		/* a warning about host RAM, or NULL */
	/* The offloaded or paged state of a node exceeds --host-mem: the
	 * job does not fit, whatever the GPUs say (JSON host_fits false,
	 * fits false, verdict does_not_fit; exit status 1). */
	bool host_over;
	const char *precision_note;	/* the card's fp16 fallback, or NULL */
	const char *time_why;		/* why no time, or NULL */
	bool color;			/* ANSI colour (tty and no NO_COLOR) */
	bool unicode;			/* block characters for bars */
	const char *version;
	/* What --trainer set, or NULL when it was not given. */
	const struct vp_trainer_applied *trainer;
	/* --deepspeed-config's file name, or NULL when it was not given. */
	const char *ds_config;
	/* A calibrated profile's worst relative residual per level: the
	 * report prints each level with its +/- (0: no error bar). */
	double err_allocated, err_reserved, err_device;
	bool measured_capacity;		/* the card's capacity is the probe's */
	/* How well each level is known: the calibrated profile's error bar
	 * or, without one, the band of the published runs (band.h); the
	 * verdict against the card (with --gpus). */
	struct vp_band band[VP_LVL_COUNT];
	enum vp_verdict verdict;
};

/* One row of the per-GPU breakdown. */
struct vp_row {
	const char *label;
	uint64_t bytes;
	bool total;		/* a level line, not a term */
	uint64_t err_bytes;	/* +/- of a level from calibration, or 0 */
	const struct vp_band *band;	/* a level's band without one, or NULL */
};
#define VP_REPORT_MAXROWS 20
int vp_report_rows(const struct vp_report *r, struct vp_row *rows);

void vp_report_text(const struct vp_report *r, struct vp_buf *out);
void vp_report_json(const struct vp_report *r, struct vp_buf *out);
void vp_report_csv(const struct vp_report *r, struct vp_buf *out);
/* The parallel layout of a plan as JSON members, as the planner's
 * alternatives and compare's plans write it: tp, pp, cp, ep, dp, zero,
 * fsdp, sp, recompute. */
struct vp_json;
void vp_report_json_layout(struct vp_json *j, const struct vp_plan *p);
/* A horizontal bar of width cells for frac in [0, 1]. */
void vp_report_bar(struct vp_buf *out, double frac, int width, bool unicode);
/* "TP 8, PP 2, DP 4, ZeRO 1, recompute full" — the parallel layout. */
void vp_report_layout(struct vp_buf *out, const struct vp_plan *p);

/*
 * Pieces of the text report, for the TUI to place the same words and
 * numbers (no newline at the end of any):
 *   vp_report_time     "1650 tokens/s for the job, 4.96 s per step"
 *   vp_report_peak     "peak during the backward phase, block 1, at 'x'"
 *   vp_report_verdict  "FITS with 3.42 GiB headroom (4.3% of the card)"
 *                      or "DOES NOT FIT: needs ..." (or "DOES NOT FIT
 *                      in host RAM: ..." when r->host_over); needs
 *                      r->gpus; returns 0 fits, 1 fits with under 5 %
 *                      headroom, 2 does not fit
 *   vp_report_max_mb   "Largest micro-batch that fits: 4 (at seq 8192)"
 *   vp_report_scale    what the bars are a share of: the card's usable
 *                      bytes, or the device peak when larger or no card
 *   vp_report_hours    "7.0 h", "12.3 d" (as compare prints them)
 *   vp_report_usd      "$217", "$12k", "$1.20M", "no price" (the same)
 */
void vp_report_time(struct vp_buf *o, const struct vp_cand *c);
void vp_report_peak(struct vp_buf *o, const struct vp_mem *mem);
int vp_report_verdict(const struct vp_report *r, struct vp_buf *o);
/* A level's band as the text report and the TUI show it: "-4.6% +18.3%". */
void vp_report_band(const struct vp_band *b, struct vp_buf *o);
void vp_report_max_mb(const struct vp_report *r, struct vp_buf *o);
uint64_t vp_report_scale(const struct vp_report *r);
const char *vp_report_hours(char *b, size_t n, double h);
const char *vp_report_usd(char *b, size_t n, double v);

#endif
