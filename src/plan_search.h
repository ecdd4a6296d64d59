/*
 * plan_search.h — the planner: search the parallel and memory knobs the
 * user left open for a GPU set, rank the plans that fit, and answer the
 * inverse queries (largest micro-batch / sequence, fewest GPUs).
 *
 * Pure.  The caller owns every struct; nothing is allocated that outlives
 * a call.
 */
#ifndef VP_PLAN_SEARCH_H
#define VP_PLAN_SEARCH_H

#include <stdbool.h>

#include "gpu.h"
#include "mem.h"
#include "rules.h"

/* Which knobs the search may change (the user did not fix them). */
struct vp_open {
	bool tp, pp, cp, ep, sp, vpp, shard, recompute, grad_accum;
	/* Values an open knob is not tried at (vramplan export: what the
	 * target cannot launch): bit sets of enum vp_recompute, enum vp_fsdp
	 * and ZeRO stages; 0 = every value. */
	unsigned skip_recompute, skip_fsdp, skip_zero;
};

struct vp_search {
	const struct vp_model *model;
	const struct vp_gpu *gpu;
	const struct vp_profile *profile;
	unsigned world;			/* GPUs in the set */
	unsigned gpus_per_node;
	struct vp_open open;
	uint64_t capacity;		/* usable bytes per GPU */
	bool first_only;		/* stop at the best plan (the TUI): the
					 * same best[0], fewer replays, no
					 * alternatives */
	uint64_t global_batch;		/* sequences per optimizer step (0:
					 * none): a plan's dp x micro-batch
					 * divides it, and gradient
					 * accumulation makes up the rest */
};

/* One evaluated plan. */
struct vp_cand {
	struct vp_plan plan;
	uint64_t device_peak;		/* worst stage */
	unsigned worst_stage;
	bool fits;
	double step_seconds;
	double tokens_per_second;
	bool bandwidth_bound;		/* communication + memory-bound time
				 * exceed compute */
};

struct vp_search_result {
	struct vp_cand best[8];		/* ranked, fitting first */
	size_t nbest;
	struct vp_cand nearest;		/* smallest overshoot when none fits */
	uint64_t candidates;		/* plans in the search space */
	uint64_t evaluated;		/* plans whose memory was estimated */
	uint64_t fitting;
};

/* Worst device peak over the plan's pipeline stages (fast replay). */
uint64_t vp_plan_worst_peak(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, unsigned *worst_stage, bool fast);
/* Host RAM per node the plan's offload or paged states need (worst
 * stage), for the --host-mem check. */
uint64_t vp_plan_host_per_node(const struct vp_model *m,
    const struct vp_plan *p, const struct vp_mem_opts *o, unsigned world);
/* The time model, for ranking plans: fills step_seconds,
 * tokens_per_second and bandwidth_bound; NAN times where the card has no
 * peak for the compute dtype or the plan runs on the CPU.  What it
 * assumes: vp_time_assumptions. */
void vp_plan_time(const struct vp_model *m, const struct vp_gpu *gpu,
    const struct vp_profile *prof, unsigned world, struct vp_cand *c);

/* What a step's time is made of, for the report's "Time" line; the
 * first line of vp_time_assumptions. */
#define VP_TIME_SUMMARY \
	"matmuls, attention and memory-bound work at the card's rates + " \
	"exposed communication"
/* The time model's assumptions, as printed by compare --explain: the one
 * description of the model (vramplan(1) says the same at length). */
extern const char *const vp_time_assumptions;

/* Search from base (the fixed knobs), ranking by throughput, then
 * headroom. */
void vp_search_run(const struct vp_search *s, const struct vp_plan *base,
    struct vp_search_result *out);

uint64_t vp_max_micro_batch(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, uint64_t capacity_bytes, uint64_t limit);
/* Largest sequence (a multiple of 128 up to limit) that fits; 0: none. */
uint64_t vp_max_seq(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, uint64_t capacity_bytes, uint64_t limit);
/* Fewest GPUs (up to limit) for which the search finds a fitting plan;
 * 0 when none up to limit.  Each count n is planned in nodes of
 * min(n, node) GPUs from base's fixed knobs, whatever s->world and
 * s->gpus_per_node are; passes (NULL: not wanted) counts the planner
 * passes.  vp_min_gpus: nodes of VP_DEFAULT_GPUS_PER_NODE. */
unsigned vp_min_gpus_in(const struct vp_search *s, const struct vp_plan *base,
    unsigned node, unsigned limit, struct vp_search_result *at,
    unsigned *passes);
unsigned vp_min_gpus(const struct vp_search *s, const struct vp_plan *base,
    unsigned limit, struct vp_search_result *at);
/* The least bytes per GPU any plan of n GPUs can reach (the model's
 * state fully sharded, what may live on the host left out): a lower
 * bound of every plan's device peak. */
uint64_t vp_plan_floor_bytes(const struct vp_model *m,
    const struct vp_plan *p, unsigned n);

#endif
