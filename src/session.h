/*
 * session.h — one estimate from a plan to a filled report: the planner
 * when knobs are open, the exact replay of every pipeline stage, what each
 * knob saves, the largest micro-batch, host RAM, the time model.
 *
 * The estimate command and the TUI both run this, so the numbers they show
 * are the same numbers.  Pure: the caller loads the model and the catalog,
 * picks the profile, and renders s->rep.
 *
 * Ownership: the caller owns the model, the GPU set and the session;
 * vp_session_run may be called again on the same session (the TUI does,
 * after every key) and vp_session_free releases what it allocated.
 */
#ifndef VP_SESSION_H
#define VP_SESSION_H

#include <stdbool.h>

#include "diag.h"
#include "gpu.h"
#include "mem.h"
#include "model.h"
#include "plan.h"
#include "plan_search.h"
#include "report.h"

struct vp_session {
	/* Inputs. */
	const struct vp_model *model;
	const struct vp_gpuset *gpus;	/* NULL or gpus->gpu NULL: no card */
	unsigned world;			/* GPUs in the job */
	struct vp_plan plan;		/* the knobs; replaced by the planner's
					 * choice when it runs */
	struct vp_open open;		/* knobs the planner may change */
	bool search;			/* run the planner when any is open */
	bool min_gpus, max_seq;		/* the inverse queries */
	unsigned min_gpus_node;		/* the fewest-GPU search's node size:
					 * the one given, 0: the default */
	bool explain;
	int nplans;			/* alternatives to show (1-8) */
	struct vp_profile profile;
	const char *profile_label;	/* the report's "profile:" line */
	const char *version;
	const struct vp_trainer_applied *trainer;	/* NULL: no --trainer */
	const char *ds_config;	/* --deepspeed-config's file, or NULL */
	struct vp_timeline *timeline;	/* NULL, or filled with the worst
					 * stage's exact replay (the TUI) */
	bool no_auto_min_gpus;		/* not the fewest-GPUs search when no
					 * plan fits (it can take a second;
					 * the TUI answers every key at once) */
	bool best_only;			/* the planner stops at the best plan
					 * (no alternatives): the TUI */
	bool precision_given;		/* --precision: no fp16 fallback on a
					 * card without bf16 */

	/* Results (valid after vp_session_run returns 0). */
	struct vp_report rep;
	struct vp_mem mem;		/* the worst stage */
	struct vp_mem *stages;
	unsigned nstages;
	struct vp_search_result sres, mres;
	struct vp_cand chosen;
	struct vp_saving savings[VP_REPORT_MAXSAVINGS];
	bool host_short;		/* offloaded state exceeds --host-mem */
	char lora_targets[64];
	struct vp_mem_opts mo;
	/* The card as this session sees it: the catalog's, with the
	 * profile's measured capacity when it has one. */
	struct vp_gpu card;
	struct vp_gpuset gset;
	char precision_note[192];	/* the fp16 fallback, said */
	char time_why[192];		/* why the plan has no time */
};

/*
 * Run the pipeline from the plan.  0 on success; -1 when the plan is
 * invalid for the model (the reasons are in d).
 */
int vp_session_run(struct vp_session *s, struct vp_diags *d);
/* Every knob open, as when none was given on the command line. */
void vp_session_open_all(struct vp_session *s);
void vp_session_free(struct vp_session *s);

#endif
