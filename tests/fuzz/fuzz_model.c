/*
 * fuzz_model.c — a model file (vramplan's own YAML or a Hugging Face
 * config.json) from memory → read and validate → the estimate under a few
 * plans (no GPU, one card, a planner run, LoRA and ZeRO-3 over two cards)
 * → the text, JSON and CSV reports.  The JSON report must parse back.
 */
#include <string.h>

#include "fuzz.h"
#include "model_read.h"
#include "ydoc.h"

/* Plans as plan files hold them; search says whether the planner runs. */
static const struct {
	const char *text;
	bool search;
} plans[] = {
	{ "vramplan-plan: 1\nseq: 256\n", false },
	{ "vramplan-plan: 1\ngpus: 1xA100\nseq: 512\nmicro-batch: 2\n"
	  "recompute: full\nprecision: bf16-mixed\n", false },
	{ "vramplan-plan: 1\ngpus: 2xH100\nseq: 1024\n", true },
	{ "vramplan-plan: 1\ngpus: 2xA100\nseq: 128\nlora: 8\nzero: 3\n"
	  "optimizer: adamw-8bit\n", false },
	{ "vramplan-plan: 1\ngpus: 1xRTX4090\nseq: 64\nprecision: fp16-mixed\n"
	  "quant: nf4\nlora: 4\n", false },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct ydoc *doc;
	size_t i;

	doc = ydoc_parse_as("model.yaml", "model file", (const char *)data,
	    size, &d);
	if (doc == NULL) {
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
		vp_diags_clear(&d);
		return 0;
	}
	if (vp_model_from_doc(doc, &m, &d) == 0) {
		fuzz_check(vp_diags_count(&d, VP_ERROR) == 0);
		for (i = 0; i < VP_NELEM(plans); i++)
			fuzz_estimate_text(&m, plans[i].text, plans[i].search,
			    NULL);
	} else {
		/* A refused model says why. */
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
	}
	vp_model_free(&m);
	ydoc_free(doc);
	vp_diags_clear(&d);
	return 0;
}
