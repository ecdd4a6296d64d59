/*
 * cli_calib.c — calibrated profiles on the shell side: which profile an
 * estimate uses, and the calibrate command.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include "cli.h"

#include <stdio.h>

#include "gpu.h"
#include "plan.h"
#include "util.h"

int
vp_cli_profile(const char *path, const struct vp_gpu *gpu, int device,
    struct vp_profile *out, struct vp_buf *label)
{
	vp_buf_init(label);
	vp_profile_default(gpu, out);
	if (path != NULL) {
		fprintf(stderr, "vramplan: --profile '%s': calibrated profiles "
		    "are not available in this version yet\n", path);
		return -1;
	}
	vp_buf_add(label, device == VP_DEVICE_CPU ?
	    "cpu (no caching allocator, no CUDA context)" :
	    "built-in defaults (not calibrated)");
	return 0;
}
