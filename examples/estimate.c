/*
 * estimate.c — libvramplan's example (vramplan(3)): one estimate, its
 * headline numbers and the chosen plan.
 *
 *     estimate MODEL [OPTION=VALUE | FLAG]...
 *     estimate llama-3-8b gpus=2xA100 recompute=full
 *
 * Options are the command line's long names without "--".  Prints one
 * "name value" line per number; the diagnostics go to stderr; the exit
 * status is the estimate's (vramplan(1)).  Build against an installed
 * library with
 *
 *     cc estimate.c $(pkg-config --cflags --libs vramplan)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramplan.h>

int
main(int argc, char **argv)
{
	static const char *const knobs[] = {
		"precision", "micro-batch", "seq", "grad-accum", "recompute",
		"tp", "pp", "cp", "ep", "dp", "zero", "fsdp", "sp",
	};
	vramplan *h;
	size_t i;
	int rc = 0, a;

	if (argc < 2) {
		fputs("usage: estimate MODEL [OPTION=VALUE | FLAG]...\n",
		    stderr);
		return 2;
	}
	h = vramplan_new();
	rc = vramplan_set_model(h, argv[1]);
	for (a = 2; rc == 0 && a < argc; a++) {
		char *eq = strchr(argv[a], '=');

		if (eq != NULL) {
			*eq = '\0';
			rc = vramplan_set(h, argv[a], eq + 1);
		} else {
			rc = vramplan_set(h, argv[a], NULL);
		}
	}
	if (rc == 0)
		rc = vramplan_estimate(h);
	fputs(vramplan_diag_text(h), stderr);
	if (rc == VRAMPLAN_OK || rc == VRAMPLAN_NOFIT) {
		printf("allocated_peak_bytes %" PRIu64 "\n",
		    vramplan_allocated_peak_bytes(h));
		printf("reserved_peak_bytes %" PRIu64 "\n",
		    vramplan_reserved_peak_bytes(h));
		printf("device_peak_bytes %" PRIu64 "\n",
		    vramplan_device_peak_bytes(h));
		printf("capacity_bytes %" PRIu64 "\n",
		    vramplan_capacity_bytes(h));
		printf("fits %d\n", vramplan_fits(h));
		printf("verdict %s\n", vramplan_verdict(h) ?
		    vramplan_verdict(h) : "null");
		for (i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
			const char *v = vramplan_plan_value(h, knobs[i]);

			if (v != NULL)
				printf("%s %s\n", knobs[i], v);
		}
	}
	printf("status %d\n", rc);
	vramplan_free(h);
	return rc;
}
