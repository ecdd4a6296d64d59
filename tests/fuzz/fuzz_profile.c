/*
 * fuzz_profile.c — a calibrated profile (vramplan calibrate's output,
 * --profile FILE) and a measurements file (calib/calibrate.py's output,
 * calibrate --measurements FILE) from memory.  The same bytes go to both
 * readers; a profile that reads drives an estimate of a small model on
 * one H100 and a CPU, rendered three ways.
 */
#include <string.h>

#include "fuzz.h"
#include "profile_read.h"
#include "ydoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vp_diags d = { 0 };
	struct vp_measurements meas;
	struct vp_profile prof;
	struct vp_profile_key key;
	const struct vp_gpu *h100;
	struct ydoc *doc;

	doc = ydoc_parse_as("profile.yaml", "profile", (const char *)data,
	    size, &d);
	if (doc == NULL) {
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
		vp_diags_clear(&d);
		return 0;
	}
	h100 = vp_catalog_find(fuzz_catalog(), "H100");
	fuzz_check(h100 != NULL);
	if (vp_profile_from_doc(doc, h100, &prof, &key, &d) == 0) {
		fuzz_estimate_text(fuzz_small_model(), "vramplan-plan: 1\n"
		    "gpus: 1xH100\nseq: 512\n", false, &prof);
		fuzz_estimate_text(fuzz_small_model(), "vramplan-plan: 1\n"
		    "device: cpu\nseq: 64\n", false, &prof);
		vp_profile_key_free(&key);
	} else {
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
	}
	vp_diags_clear(&d);
	/* The points name models relative to the source tree. */
	if (vp_measurements_from_doc(doc, VP_SRCDIR, &meas, &d) == 0)
		vp_measurements_free(&meas);
	else
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
	ydoc_free(doc);
	vp_diags_clear(&d);
	return 0;
}
