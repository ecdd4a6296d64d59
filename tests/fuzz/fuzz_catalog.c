/*
 * fuzz_catalog.c — a GPU catalog (--catalog FILE, the user catalog)
 * from memory → the cards → `--gpus 2xCARD` of its first and last cards
 * (the planner open) → the estimate of a small model on them, rendered
 * three ways.
 */
#include <string.h>

#include "fuzz.h"
#include "gpu_read.h"
#include "plan_read.h"
#include "util.h"
#include "ydoc.h"

static void
on_card(const struct vp_catalog *cat, const char *id)
{
	struct vp_diags d = { 0 };
	struct vp_optset o;
	struct vp_buf plan, gpus;
	struct ydoc *doc;

	vp_buf_init(&plan);
	vp_buf_init(&gpus);
	vp_buf_printf(&gpus, "2x%s", id);
	/* Quoted, as JSON (YAML's double-quoted style): any id reads. */
	vp_buf_add(&plan, "vramplan-plan: 1\nseq: 256\ngpus: ");
	vp_buf_json_str(&plan, gpus.s);
	vp_buf_add(&plan, "\n");
	vp_buf_free(&gpus);
	doc = ydoc_parse_as("plan.yaml", "plan file", plan.s, plan.len, &d);
	if (doc != NULL && vp_plan_from_doc(doc, &o, &d) == 0) {
		fuzz_estimate(fuzz_small_model(), &o, cat, NULL, true);
		vp_optset_free(&o);
	} else if (doc != NULL) {
		vp_optset_free(&o);
	}
	ydoc_free(doc);
	vp_buf_free(&plan);
	vp_diags_clear(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vp_diags d = { 0 };
	struct vp_catalog cat;
	struct ydoc *doc;

	doc = ydoc_parse_as("gpus.yaml", "GPU catalog", (const char *)data,
	    size, &d);
	if (doc == NULL) {
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
		vp_diags_clear(&d);
		return 0;
	}
	if (vp_catalog_from_doc(doc, &cat, &d) == 0) {
		if (cat.n > 0) {
			on_card(&cat, cat.v[0].id);
			on_card(&cat, cat.v[cat.n - 1].id);
		}
		vp_catalog_free(&cat);
	} else {
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
	}
	vp_diags_clear(&d);
	ydoc_free(doc);
	return 0;
}
