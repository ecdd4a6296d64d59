/*
 * plan_read.h — read a plan file (planfile.h) into the knobs it gives.
 *
 * Shell side: reads a file through ydoc.  Every problem is a diagnostic
 * with file:line:col, nothing is printed here: an unknown key (with a
 * "did you mean"), a value out of range or not among the allowed ones
 * (they are listed), a duplicate key, a missing or unsupported
 * `vramplan-plan` version.  The keys and their ranges are the option
 * table's (options.h), so a key reads as its option would.  The GPU set
 * is only checked for its form; the caller looks it up in the catalog
 * (its position is in k->pos).
 */
#ifndef VP_PLAN_READ_H
#define VP_PLAN_READ_H

#include "planfile.h"
#include "ydoc.h"

/* 0 on success; -1 with diagnostics.  k is initialised here and owns
 * the file name and the string values (vp_optset_free). */
int vp_plan_load(const char *path, struct vp_optset *k, struct vp_diags *d);
/* The same from an already parsed document (tests). */
int vp_plan_from_doc(const struct ydoc *doc, struct vp_optset *k,
    struct vp_diags *d);

#endif
