/*
 * gpu_read.h — load the GPU catalog (models/gpus.yaml) into a struct
 * vp_catalog.  Shell side (reads a file); errors carry file:line:col.
 */
#ifndef VP_GPU_READ_H
#define VP_GPU_READ_H

#include "gpu.h"
#include "ydoc.h"

int vp_catalog_load(const char *path, struct vp_catalog *c,
    struct vp_diags *d);
int vp_catalog_from_doc(const struct ydoc *doc, struct vp_catalog *c,
    struct vp_diags *d);

#endif
