/*
 * ydoc.h — a YAML document as a small read-only tree with positions.
 *
 * ydoc.c is the only file that includes <yaml.h>: it translates libyaml's
 * event stream (and its 1/0 status convention) into this tree once, so the
 * model reader and the GPU catalog reader walk plain C structures.  JSON is
 * YAML flow syntax, so Hugging Face config.json files load the same way.
 *
 * Safety limits, so that no input crashes or hangs the program: files over
 * VP_YDOC_MAX_BYTES, nesting deeper than VP_YDOC_MAX_DEPTH and documents of
 * more than VP_YDOC_MAX_NODES nodes are rejected.  An alias points at the
 * anchored node (the tree is a DAG, never a copy), so "billion laughs"
 * alias bombs cost nothing; readers walk only the keys their schema knows.
 *
 * Ownership: ydoc_load returns a document the caller frees with
 * ydoc_free; every node and string belongs to the document.
 */
#ifndef VP_YDOC_H
#define VP_YDOC_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"

#define VP_YDOC_MAX_BYTES (16u << 20)
#define VP_YDOC_MAX_DEPTH 64
#define VP_YDOC_MAX_NODES 1000000

enum ynode_kind { YN_SCALAR, YN_MAP, YN_SEQ };

struct ynode {
	enum ynode_kind kind;
	struct vp_srcpos pos;
	const char *str;	/* scalar text (never NULL for scalars) */
	bool plain;		/* unquoted scalar: may be a number/bool/null */
	struct ynode **kids;	/* map: key, value, key, value...; seq: items */
	size_t nkids;		/* map: 2 * pairs */
};

struct ydoc;

/* Load path; on failure add a diagnostic and return NULL. */
struct ydoc *ydoc_load(const char *path, struct vp_diags *d);
/* Parse text held in memory (tests, fuzzing); name is used in messages. */
struct ydoc *ydoc_parse(const char *name, const char *text, size_t len,
    struct vp_diags *d);
void ydoc_free(struct ydoc *doc);
const struct ynode *ydoc_root(const struct ydoc *doc);
const char *ydoc_name(const struct ydoc *doc);

/* Map lookup: the value node of key, or NULL. */
const struct ynode *ynode_get(const struct ynode *map, const char *key);
bool ynode_is_null(const struct ynode *n);
const char *ynode_kind_name(const struct ynode *n);

/*
 * Typed scalar reads used by the schema readers.  Each returns 0 and sets
 * *out, or returns -1 after adding an error at the node's position that
 * names the key ("'heads' must be an integer from 1 to 65536, not 'x'").
 */
int ynode_u64(const struct ynode *n, const char *file, const char *key,
    uint64_t min, uint64_t max, uint64_t *out, struct vp_diags *d);
int ynode_double(const struct ynode *n, const char *file, const char *key,
    double min, double max, double *out, struct vp_diags *d);
int ynode_bool(const struct ynode *n, const char *file, const char *key,
    bool *out, struct vp_diags *d);
int ynode_string(const struct ynode *n, const char *file, const char *key,
    const char **out, struct vp_diags *d);
/* One of names[0..n); the error lists the choices and a near miss. */
int ynode_enum(const struct ynode *n, const char *file, const char *key,
    const char *const *names, int nnames, int *out, struct vp_diags *d);
/* Error unless n is a mapping ("'training' must be a mapping, not ..."). */
int ynode_want(const struct ynode *n, enum ynode_kind kind, const char *file,
    const char *key, struct vp_diags *d);

/* An optional string under key, copied (the caller frees): NULL when
 * absent or null.  0, or -1 after an error. */
int ynode_opt_string(const struct ynode *map, const char *file,
    const char *key, char **out, struct vp_diags *d);
/* Every key of map must be one of keys; unknown ones are errors with a
 * "did you mean" ("unknown key 'x' in WHAT").  0 or -1. */
int ynode_check_keys(const struct ynode *map, const char *file,
    const char *what, const char *const *keys, size_t nkeys,
    struct vp_diags *d);

#endif
