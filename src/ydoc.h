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

/*
 * Load path; on failure add a diagnostic and return NULL.  what names the
 * kind of file in messages ("model file", "plan file", "GPU catalog"):
 * "'x' is a FIFO (named pipe), not a plan file".  ydoc_load is
 * ydoc_load_as(path, "model file", d).
 *
 * Inputs open without blocking and must be regular files; the one
 * exception is a path the user names as a stream, /dev/stdin or /dev/fd/N
 * (a pipe, a terminal, a process substitution), read to its end.  A
 * FIFO, device, socket or directory anywhere else is an error, never a
 * hang.  UTF-8 only: a UTF-16 byte-order mark or an invalid UTF-8
 * sequence is an error at the sequence's first byte.
 */
struct ydoc *ydoc_load(const char *path, struct vp_diags *d);
struct ydoc *ydoc_load_as(const char *path, const char *what,
    struct vp_diags *d);
/* Parse text held in memory (tests, fuzzing); name is used in messages.
 * ydoc_parse is ydoc_parse_as(name, "model file", ...). */
struct ydoc *ydoc_parse(const char *name, const char *text, size_t len,
    struct vp_diags *d);
struct ydoc *ydoc_parse_as(const char *name, const char *what,
    const char *text, size_t len, struct vp_diags *d);
/* The whole text of an input file under the rules of ydoc_load_as (NUL-
 * terminated, at most VP_YDOC_MAX_BYTES; the caller frees), or NULL after
 * a diagnostic. */
char *ydoc_read_input(const char *path, const char *what, size_t *len,
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
