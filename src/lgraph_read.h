/*
 * lgraph_read.h — read a layer-graph model file's `input`, `loss` and
 * `layers` keys (vramplan-model(5), LAYER GRAPHS).  Shell side; the
 * model reader (model_read.c) calls it when `layers` is a list.
 */
#ifndef VP_LGRAPH_READ_H
#define VP_LGRAPH_READ_H

#include "lgraph.h"
#include "ydoc.h"

/* Fills *out (allocated here, also on failure: the caller frees it with
 * vp_lgraph_free) and checks it at the model's resolution.  0 or -1. */
int vp_lgraph_read(const struct ynode *root, const char *file,
    struct vp_lgraph **out, struct vp_diags *d);

#endif
