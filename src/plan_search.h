/*
 * plan_search.h — inverse queries over the memory model: the largest
 * micro-batch that fits a capacity.  Pure.
 */
#ifndef VP_PLAN_SEARCH_H
#define VP_PLAN_SEARCH_H

#include "mem.h"

/*
 * Largest micro-batch (up to limit) whose device peak is at most
 * capacity_bytes; 0 when not even 1 fits.
 */
uint64_t vp_max_micro_batch(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, uint64_t capacity_bytes, uint64_t limit);

#endif
