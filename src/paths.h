/*
 * paths.h — where vramplan's installed files are: the model library
 * (with the GPU catalog, gpus.yaml), the calibration scripts and the
 * calibration probe.
 *
 * Shell side: reads the environment and /proc/self/exe.  No path of the
 * source or build tree is compiled in.  Each kind is looked for in three
 * places, and the first that holds its marker file wins:
 *
 *   1. its environment variable (VRAMPLAN_DATA, VRAMPLAN_CALIB_DIR,
 *      VRAMPLAN_PROBE), taken as given when set and not empty;
 *   2. relative to the directory of the running program, in the GNU
 *      layout (bin/vramplan next to share/vramplan/ and
 *      libexec/vramplan/), so a whole installed tree can be moved; `make`
 *      builds the same layout in the build directory (share/vramplan/ and
 *      libexec/vramplan/, links to models/, calib/ and the probe), so an
 *      uninstalled src/vramplan finds them the same way;
 *   3. the directories configure was given (PKGDATADIR, PKGLIBEXECDIR).
 */
#ifndef VP_PATHS_H
#define VP_PATHS_H

#include <stdbool.h>

#include "util.h"

enum vp_path_kind {
	VP_PATH_MODELS,	/* the library directory; marker gpus.yaml */
	VP_PATH_CALIB,	/* the directory of calibrate.py and harness.py */
	VP_PATH_PROBE,	/* the vramplan-probe program itself */
};

/* Append to out where kind is.  True when its environment variable is set
 * or a candidate's marker is readable; false when none is, and out then
 * holds the installed path (3.), for messages. */
bool vp_path_find(enum vp_path_kind kind, struct vp_buf *out);

#endif
