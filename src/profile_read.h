/*
 * profile_read.h — read a calibrated profile, and the measurements that
 * calib/calibrate.py writes for vramplan calibrate to fit.
 *
 * Shell side: reads files; every problem is a diagnostic with
 * file:line:col.  A file that is not a profile, a profile of another
 * format version, or one with a value out of range is rejected whole:
 * half a profile would silently mix measured and built-in numbers.
 */
#ifndef VP_PROFILE_READ_H
#define VP_PROFILE_READ_H

#include "calib.h"
#include "diag.h"
#include "gpu.h"
#include "model.h"

struct ydoc;

/* 0, or -1 with diagnostics.  out starts from the built-in profile of
 * gpu (NULL: generic) and takes the file's constants. */
int vp_profile_load(const char *path, const struct vp_gpu *gpu,
    struct vp_profile *out, struct vp_profile_key *key, struct vp_diags *d);
/* The same from a parsed document (tests, fuzzing: text in memory). */
int vp_profile_from_doc(const struct ydoc *doc, const struct vp_gpu *gpu,
    struct vp_profile *out, struct vp_profile_key *key, struct vp_diags *d);

struct vp_measurements {
	char *device, *torch, *cuda, *gpu, *driver;
	struct vp_calib_point *pts;
	size_t n;
	struct vp_model *models;	/* the models the points name */
	char **model_paths;
	size_t nmodels;
};

/*
 * Read a measurements file; model paths that are relative and not found
 * from the working directory are tried under base_dir.  0, or -1 with
 * diagnostics.
 */
int vp_measurements_load(const char *path, const char *base_dir,
    struct vp_measurements *out, struct vp_diags *d);
int vp_measurements_from_doc(const struct ydoc *doc, const char *base_dir,
    struct vp_measurements *out, struct vp_diags *d);
void vp_measurements_free(struct vp_measurements *m);

/*
 * What calib/vramplan-probe measured that the fit and the profile's key
 * use.  Fields the record lacks stay 0 or NULL; a field that is there
 * but malformed, a record that is not a mapping, or one of another format
 * version is a diagnostic and -1 (with r released).  text is the record
 * as read, which the profile stores.  vp_probe_record_free releases it.
 */
struct vp_probe_record {
	char *name, *driver, *cuda;
	uint64_t memory_total, cublas_workspace;
	uint64_t capacity;	/* free on the idle device, before a context */
	char *text;
};
int vp_probe_load(const char *path, struct vp_probe_record *r,
    struct vp_diags *d);
void vp_probe_record_free(struct vp_probe_record *r);

#endif
