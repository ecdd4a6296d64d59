/*
 * rules.h — the rule book: when a plan is valid for a model on a number
 * of GPUs.  One table of rules (rules.c), each a predicate that, when
 * refusing, says why in the words the user sees (the flag first).  The
 * plan check before the planner, the planner's candidate filter and the
 * check of the chosen plan all read this one table.
 *
 * It sits above plan.c and finetune.c (the LoRA rules need the model's
 * matrices), so plan.c depends on neither.  Pure; d may be NULL (the
 * planner's filter: no messages, stop at the first refusal).
 */
#ifndef VP_RULES_H
#define VP_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "model.h"
#include "plan.h"

/*
 * The plan fields a rule reads, beyond those the planner never changes:
 * the planner fixes them loop by loop and refuses a whole branch as soon
 * as the rules over the knobs fixed so far refuse it.
 */
enum {
	VP_RK_TP = 1u << 0,	/* tp, sp */
	VP_RK_PP = 1u << 1,	/* pp, vpp */
	VP_RK_CP = 1u << 2,	/* cp */
	VP_RK_DP = 1u << 3,	/* dp and the world */
	VP_RK_EP = 1u << 4,	/* ep */
	VP_RK_SHARD = 1u << 5,	/* zero, fsdp */
	VP_RK_ALL = (1u << 6) - 1
};

/*
 * Every rule whose fields are all in known (VP_RK_ALL: a finished plan).
 * 0 when none refuses, -1 otherwise (with d, one error per refusal).
 * world 0: the GPU count is not known and the rules on it are skipped.
 */
int vp_plan_rules(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, unsigned known, struct vp_diags *d);
/*
 * The check before the planner runs: every rule but those on knobs the
 * planner settles (offload needs sharding), open knobs at their
 * defaults.  Errors name the flag.  The chosen plan is then held to
 * vp_plan_rules(..., VP_RK_ALL, ...).
 */
/* Whether the plan can run on card g at all (fp8 matmuls need fp8
 * tensor cores); 0 when g is NULL. */
struct vp_gpu;
int vp_plan_card_check(const struct vp_plan *p, const struct vp_gpu *g,
    struct vp_diags *d);
/*
 * A card without bf16 tensor cores (the catalog lists no bf16 rate: V100,
 * T4) trains in fp16 with a loss scaler: a bf16 plan becomes its fp16
 * twin (bf16-mixed fp16-mixed, bf16-master fp16-master, bf16 fp16).
 * Returns whether it changed p; the caller says so.  Called only when
 * the precision was not given (--precision keeps bf16, untimed).
 */
bool vp_plan_card_precision(struct vp_plan *p, const struct vp_gpu *g);
/*
 * Why the time model has no figure for p on g (NULL when it has one):
 * the CPU, no card, or a card without a rate for the compute dtype.
 * The text names the card and what would give a time.
 */
const char *vp_plan_time_why(const struct vp_plan *p, const struct vp_gpu *g,
    char *buf, size_t len);

int vp_plan_check(const struct vp_plan *p, const struct vp_model *m,
    unsigned world, struct vp_diags *d);

#endif
