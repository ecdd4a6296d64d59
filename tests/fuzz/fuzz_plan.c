/*
 * fuzz_plan.c — a plan file (vramplan MODEL --plan FILE) from memory →
 * its options → the estimate of a small model under them → the three
 * reports.  A plan file that reads must give a plan the rules either run
 * or refuse with a reason.
 */
#include "fuzz.h"
#include "plan_read.h"
#include "ydoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vp_diags d = { 0 };
	struct vp_optset o;
	struct ydoc *doc;

	doc = ydoc_parse_as("plan.yaml", "plan file", (const char *)data,
	    size, &d);
	if (doc == NULL) {
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
		vp_diags_clear(&d);
		return 0;
	}
	if (vp_plan_from_doc(doc, &o, &d) == 0) {
		fuzz_estimate(fuzz_small_model(), &o, fuzz_catalog(), NULL,
		    !o.has[VP_O_NO_SEARCH]);
	} else {
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
	}
	vp_optset_free(&o);
	ydoc_free(doc);
	vp_diags_clear(&d);
	return 0;
}
