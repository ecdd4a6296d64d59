/* plan_search.c — inverse queries (see plan_search.h). */
#include "plan_search.h"

static int
fits(const struct vp_model *m, const struct vp_plan *base, uint64_t mb,
    const struct vp_mem_opts *o, uint64_t cap)
{
	struct vp_plan p = *base;
	struct vp_mem r;

	p.micro_batch = mb;
	if (vp_mem_estimate(m, &p, o, &r) != 0)
		return 0;
	return r.device_peak <= cap;
}

uint64_t
vp_max_micro_batch(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, uint64_t cap, uint64_t limit)
{
	uint64_t lo = 0, hi = 1;

	/* Memory grows monotonically with the micro-batch: double, then
	 * bisect between the last size that fits and the first that not. */
	while (hi <= limit && fits(m, p, hi, o, cap)) {
		lo = hi;
		hi *= 2;
	}
	if (hi > limit)
		hi = limit + 1;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (fits(m, p, mid, o, cap))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
