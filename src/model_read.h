/*
 * model_read.h — read a model description (vramplan YAML or a Hugging
 * Face config.json) into struct vp_model.
 *
 * Shell side: reads files.  Every problem becomes a diagnostic with
 * file:line:col; nothing is printed here.  Validation (vp_model_validate)
 * runs as the last step, so a model that loads is a model that is sane.
 */
#ifndef VP_MODEL_READ_H
#define VP_MODEL_READ_H

#include "model.h"
#include "ydoc.h"

/* 0 on success; -1 with diagnostics.  m is initialised here. */
int vp_model_load(const char *path, struct vp_model *m, struct vp_diags *d);
/* The same from an already parsed document (tests, fuzzing). */
int vp_model_from_doc(const struct ydoc *doc, struct vp_model *m,
    struct vp_diags *d);

/*
 * Reading flags.  VP_READ_TEXT_ONLY (--text-only): a Hugging Face config
 * with a vision or audio tower is read as its language model alone, with
 * a note; without it such a config is an error, since the towers are not
 * modelled.
 */
#define VP_READ_TEXT_ONLY 1u
int vp_model_load_ex(const char *path, unsigned flags, struct vp_model *m,
    struct vp_diags *d);
int vp_model_from_doc_ex(const struct ydoc *doc, unsigned flags,
    struct vp_model *m, struct vp_diags *d);

#endif
