/*
 * paths.c — finding the installed data and programs (see paths.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include "paths.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/vramplan"
#endif
#ifndef PKGLIBEXECDIR
#define PKGLIBEXECDIR "/usr/local/libexec/vramplan"
#endif

/* One row per kind.  rel is from the program's directory and assumes the
 * GNU layout ($prefix/bin, $prefix/share, $prefix/libexec); a package
 * configured otherwise still finds its files through installed. */
static const struct {
	const char *env;	/* taken as given when set */
	const char *rel;	/* from the directory of /proc/self/exe */
	const char *installed;	/* as configured */
	const char *marker;	/* must be readable inside; NULL: the path */
} paths[] = {
	[VP_PATH_MODELS] = { "VRAMPLAN_DATA", "../share/" PACKAGE "/models",
	    PKGDATADIR "/models", "gpus.yaml" },
	[VP_PATH_CALIB] = { "VRAMPLAN_CALIB_DIR", "../share/" PACKAGE "/calib",
	    PKGDATADIR "/calib", "calibrate.py" },
	[VP_PATH_PROBE] = { "VRAMPLAN_PROBE",
	    "../libexec/" PACKAGE "/vramplan-probe",
	    PKGLIBEXECDIR "/vramplan-probe", NULL },
};

/* The directory of the running program, with a final '/'; false where
 * /proc/self/exe cannot be read (no /proc), and then step 2 is skipped. */
static bool
exe_dir(struct vp_buf *out)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
	char *slash;

	if (n <= 0 || (size_t)n >= sizeof buf)
		return false;
	buf[n] = '\0';
	if ((slash = strrchr(buf, '/')) == NULL)
		return false;
	vp_buf_addn(out, buf, (size_t)(slash - buf) + 1);
	return true;
}

static bool
readable(const char *path, const char *marker)
{
	struct vp_buf p;
	bool ok;

	if (marker == NULL)
		return access(path, R_OK) == 0;
	vp_buf_init(&p);
	vp_buf_printf(&p, "%s/%s", path, marker);
	ok = access(p.s, R_OK) == 0;
	vp_buf_free(&p);
	return ok;
}

bool
vp_path_find(enum vp_path_kind kind, struct vp_buf *out)
{
	const char *env = getenv(paths[kind].env);
	struct vp_buf rel;
	bool found;

	if (env != NULL && *env) {
		vp_buf_add(out, env);
		return true;
	}
	vp_buf_init(&rel);
	if (exe_dir(&rel)) {
		vp_buf_add(&rel, paths[kind].rel);
		if (readable(rel.s, paths[kind].marker)) {
			vp_buf_add(out, rel.s);
			vp_buf_free(&rel);
			return true;
		}
	}
	vp_buf_free(&rel);
	found = readable(paths[kind].installed, paths[kind].marker);
	vp_buf_add(out, paths[kind].installed);
	return found;
}
