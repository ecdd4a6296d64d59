/*
 * ydoc.c — libyaml events → struct ynode tree (see ydoc.h).
 *
 * The only file that includes <yaml.h>.  libyaml returns 1 on success and
 * 0 on failure; that convention stops here.
 */
#define _POSIX_C_SOURCE 200809L
#include "ydoc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

struct anchor {
	char *name;
	struct ynode *node;
};

struct ydoc {
	char *name;
	struct ynode *root;
	void **owned;		/* every allocation, freed together */
	size_t nowned, capowned;
	size_t nnodes;
	struct anchor *anchors;
	size_t nanchors, capanchors;
	size_t *slots;		/* hash of anchor names: index + 1, 0 = empty */
	size_t nslots;
};

static size_t
hash_name(const char *s)
{
	size_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* The slot holding name, or the empty slot where it would go. */
static size_t *
slot_of(const struct ydoc *doc, const char *name)
{
	size_t i = hash_name(name) & (doc->nslots - 1);

	while (doc->slots[i] != 0 &&
	    strcmp(doc->anchors[doc->slots[i] - 1].name, name) != 0)
		i = (i + 1) & (doc->nslots - 1);
	return &doc->slots[i];
}

static void *
own(struct ydoc *doc, void *p)
{
	if (doc->nowned == doc->capowned) {
		doc->capowned = doc->capowned ? doc->capowned * 2 : 64;
		doc->owned = xreallocarray(doc->owned, doc->capowned,
		    sizeof *doc->owned);
	}
	doc->owned[doc->nowned++] = p;
	return p;
}

static struct ynode *
new_node(struct ydoc *doc, enum ynode_kind kind, yaml_mark_t mark)
{
	struct ynode *n = own(doc, xcalloc(1, sizeof *n));

	n->kind = kind;
	n->pos.line = (int)mark.line + 1;
	n->pos.col = (int)mark.column + 1;
	n->str = "";
	doc->nnodes++;
	return n;
}

static void
add_kid(struct ynode *parent, struct ynode *kid, size_t *cap)
{
	if (parent->nkids == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		parent->kids = xreallocarray(parent->kids, *cap,
		    sizeof *parent->kids);
	}
	parent->kids[parent->nkids++] = kid;
}

static void
add_anchor(struct ydoc *doc, const unsigned char *name, struct ynode *n)
{
	size_t i;

	if (name == NULL)
		return;
	if (doc->nanchors == doc->capanchors) {
		doc->capanchors = doc->capanchors ? doc->capanchors * 2 : 8;
		doc->anchors = xreallocarray(doc->anchors, doc->capanchors,
		    sizeof *doc->anchors);
	}
	if (2 * (doc->nanchors + 1) > doc->nslots) {
		free(doc->slots);
		doc->nslots = doc->nslots ? doc->nslots * 2 : 16;
		doc->slots = xcalloc(doc->nslots, sizeof *doc->slots);
		for (i = 0; i < doc->nanchors; i++)
			*slot_of(doc, doc->anchors[i].name) = i + 1;
	}
	doc->anchors[doc->nanchors].name = xstrdup((const char *)name);
	doc->anchors[doc->nanchors].node = n;
	doc->nanchors++;
	/* The latest definition wins, as YAML specifies. */
	*slot_of(doc, (const char *)name) = doc->nanchors;
}

static struct ynode *
find_anchor(const struct ydoc *doc, const unsigned char *name)
{
	size_t *sl;

	if (doc->nslots == 0)
		return NULL;
	sl = slot_of(doc, (const char *)name);
	return *sl ? doc->anchors[*sl - 1].node : NULL;
}

struct frame {
	struct ynode *node;
	size_t cap;
	const unsigned char *anchor;	/* owned by a copied event */
	char *anchor_copy;
};

/* Line and column (1-based) of a byte offset in text. */
static struct vp_srcpos
pos_of_offset(const char *text, size_t len, size_t off)
{
	struct vp_srcpos pos = { 1, 1 };
	size_t i;

	for (i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			pos.line++;
			pos.col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			pos.col++;	/* count characters, not UTF-8 bytes */
		}
	}
	return pos;
}

/*
 * The first byte offset where text stops being well-formed UTF-8 (RFC 3629:
 * no overlong forms, no surrogates, nothing past U+10FFFF), or len when it
 * is well-formed.  *seq gets the length of the bad sequence as far as it
 * goes (1 to 4 bytes), *cut whether the file ends inside it: libyaml
 * reports a bad trailing byte at that byte, and the sequence starts
 * before it.
 */
static size_t
utf8_bad(const unsigned char *t, size_t len, size_t *seq, bool *cut)
{
	size_t i = 0, k, n;

	*cut = false;
	while (i < len) {
		unsigned c = t[i];
		unsigned lo = 0x80, hi = 0xbf;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 2;
		else if (c >= 0xe0 && c <= 0xef)
			n = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 4;
		else {
			*seq = 1;
			return i;
		}
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
		else if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
		for (k = 1; k < n; k++) {
			unsigned b = i + k < len ? t[i + k] : 0;

			if (k > 1) {
				lo = 0x80;
				hi = 0xbf;
			}
			if (i + k >= len) {
				*seq = k;
				*cut = true;
				return i;
			}
			if (b < lo || b > hi) {
				*seq = k + 1;
				return i;
			}
		}
		i += n;
	}
	*seq = 0;
	return len;
}

/*
 * libyaml's problem strings are terse; the common ones get a message that
 * says what is wrong in the file's terms and what would be right.  what
 * names the kind of file ("model file", "plan file", "GPU catalog").
 */
static void
parser_error(const yaml_parser_t *p, const char *name, const char *what_file,
    const char *text, size_t len, struct vp_diags *d)
{
	struct vp_srcpos pos = { (int)p->problem_mark.line + 1,
	    (int)p->problem_mark.column + 1 };
	struct vp_srcpos cpos = { (int)p->context_mark.line + 1,
	    (int)p->context_mark.column + 1 };
	const char *what = p->problem ? p->problem : "unknown error";
	const char *ctx = p->context ? p->context : "";
	size_t off = p->problem_mark.index;

	if (p->error == YAML_READER_ERROR) {
		bool cut;
		size_t seq, bad = utf8_bad((const unsigned char *)text, len,
		    &seq, &cut);
		unsigned char c;

		if (bad < len && (strstr(what, "UTF-8") != NULL ||
		    strstr(what, "Unicode") != NULL)) {
			/* At the sequence's first byte, not libyaml's. */
			struct vp_buf b;
			size_t k;

			vp_buf_init(&b);
			for (k = 0; k < seq && bad + k < len; k++)
				vp_buf_printf(&b, "%s0x%02x", k ? " " : "",
				    (unsigned char)text[bad + k]);
			vp_diag_add(d, name, pos_of_offset(text, len, bad),
			    VP_ERROR, "not a text file: invalid UTF-8 %s %s%s; "
			    "a %s is UTF-8 YAML or JSON", seq > 1 ?
			    "sequence" : "byte", b.s, cut ?
			    " cut off by the end of the file" : "", what_file);
			vp_buf_free(&b);
			return;
		}
		c = p->problem_offset < len ?
		    (unsigned char)text[p->problem_offset] : 0;
		pos = pos_of_offset(text, len, p->problem_offset);
		vp_diag_add(d, name, pos, VP_ERROR, "not a text file: "
		    "control character 0x%02x; a %s is UTF-8 YAML or JSON",
		    c, what_file);
		return;
	}
	if (off < len && text[off] == '\t' &&
	    strstr(what, "cannot start any token") != NULL) {
		vp_diag_add(d, name, pos, VP_ERROR,
		    "tab character in indentation; indent with spaces");
		return;
	}
	if (strstr(ctx, "quoted scalar") != NULL) {
		vp_diag_add(d, name, cpos, VP_ERROR,
		    "unterminated quoted string; close it with the same quote");
		return;
	}
	if (p->context != NULL)
		vp_diag_add(d, name, pos, VP_ERROR,
		    "invalid YAML: %s (%s that starts at %d:%d)", what, ctx,
		    cpos.line, cpos.col);
	else
		vp_diag_add(d, name, pos, VP_ERROR, "invalid YAML: %s", what);
}

struct ydoc *
ydoc_parse(const char *name, const char *text, size_t len,
    struct vp_diags *d)
{
	return ydoc_parse_as(name, "model file", text, len, d);
}

struct ydoc *
ydoc_parse_as(const char *name, const char *what, const char *text,
    size_t len, struct vp_diags *d)
{
	const unsigned char *ut = (const unsigned char *)text;
	yaml_parser_t parser;
	yaml_event_t ev;
	struct ydoc *doc;
	struct frame stack[VP_YDOC_MAX_DEPTH + 1];
	int depth = 0, ndocs = 0, ok = 1, done = 0;
	size_t i;

	doc = xcalloc(1, sizeof *doc);
	doc->name = xstrdup(name);
	if (!yaml_parser_initialize(&parser)) {
		vp_diag_add(d, name, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "cannot initialise the YAML parser");
		ydoc_free(doc);
		return NULL;
	}
	/*
	 * libyaml reads UTF-16 when a byte-order mark says so; the files
	 * this program reads are UTF-8 (a UTF-8 mark is fine), and a UTF-16
	 * one is usually a Windows editor's "Unicode" save.
	 */
	if (len >= 2 && ((ut[0] == 0xff && ut[1] == 0xfe) ||
	    (ut[0] == 0xfe && ut[1] == 0xff))) {
		vp_diag_add(d, name, (struct vp_srcpos){ 1, 1 }, VP_ERROR,
		    "UTF-16 text (byte-order mark 0x%02x 0x%02x); a %s is "
		    "UTF-8: save it as UTF-8", ut[0], ut[1], what);
		yaml_parser_delete(&parser);
		ydoc_free(doc);
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text,
	    len);

	while (ok && !done) {
		struct ynode *n = NULL;
		const unsigned char *anchor = NULL;

		if (!yaml_parser_parse(&parser, &ev)) {
			parser_error(&parser, name, what, text, len, d);
			ok = 0;
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++ndocs > 1) {
				vp_diag_add(d, name, (struct vp_srcpos){
				    (int)ev.start_mark.line + 1,
				    (int)ev.start_mark.column + 1 }, VP_ERROR,
				    "more than one YAML document; a %s "
				    "holds exactly one", what);
				ok = 0;
			}
			break;
		case YAML_SCALAR_EVENT:
			n = new_node(doc, YN_SCALAR, ev.start_mark);
			{
				char *str = own(doc,
				    xmalloc(ev.data.scalar.length + 1));
				memcpy(str, ev.data.scalar.value,
				    ev.data.scalar.length);
				str[ev.data.scalar.length] = '\0';
				n->str = str;
			}
			if (strlen(n->str) != ev.data.scalar.length) {
				vp_diag_add(d, name, n->pos, VP_ERROR,
				    "scalar contains a NUL character");
				ok = 0;
			}
			n->plain = ev.data.scalar.style ==
			    YAML_PLAIN_SCALAR_STYLE;
			anchor = ev.data.scalar.anchor;
			break;
		case YAML_ALIAS_EVENT:
			n = find_anchor(doc, ev.data.alias.anchor);
			if (n == NULL) {
				vp_diag_add(d, name, (struct vp_srcpos){
				    (int)ev.start_mark.line + 1,
				    (int)ev.start_mark.column + 1 }, VP_ERROR,
				    "alias '*%s' refers to an undefined anchor "
				    "(or to the node that contains it)",
				    (const char *)ev.data.alias.anchor);
				ok = 0;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth >= VP_YDOC_MAX_DEPTH) {
				vp_diag_add(d, name, (struct vp_srcpos){
				    (int)ev.start_mark.line + 1,
				    (int)ev.start_mark.column + 1 }, VP_ERROR,
				    "nesting deeper than %d levels",
				    VP_YDOC_MAX_DEPTH);
				ok = 0;
				break;
			}
			n = new_node(doc, ev.type == YAML_MAPPING_START_EVENT ?
			    YN_MAP : YN_SEQ, ev.start_mark);
			stack[depth].node = n;
			stack[depth].cap = 0;
			stack[depth].anchor_copy = NULL;
			if (ev.type == YAML_MAPPING_START_EVENT &&
			    ev.data.mapping_start.anchor)
				stack[depth].anchor_copy = xstrdup((const char *)
				    ev.data.mapping_start.anchor);
			if (ev.type == YAML_SEQUENCE_START_EVENT &&
			    ev.data.sequence_start.anchor)
				stack[depth].anchor_copy = xstrdup((const char *)
				    ev.data.sequence_start.anchor);
			depth++;
			n = NULL;	/* attached at its end event */
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			n = stack[depth].node;
			if (n->kids != NULL)
				own(doc, n->kids);
			/* Anchor registered only now: no alias cycles. */
			if (stack[depth].anchor_copy != NULL) {
				add_anchor(doc, (const unsigned char *)
				    stack[depth].anchor_copy, n);
				free(stack[depth].anchor_copy);
			}
			break;
		default:
			break;
		}
		if (ok && n != NULL) {
			if (anchor != NULL)
				add_anchor(doc, anchor, n);
			if (depth == 0) {
				if (doc->root == NULL)
					doc->root = n;
			} else {
				add_kid(stack[depth - 1].node, n,
				    &stack[depth - 1].cap);
			}
		}
		if (ok && doc->nnodes > VP_YDOC_MAX_NODES) {
			vp_diag_add(d, name, (struct vp_srcpos){ 0, 0 },
			    VP_ERROR, "document has more than %d nodes",
			    VP_YDOC_MAX_NODES);
			ok = 0;
		}
		yaml_event_delete(&ev);
	}
	for (i = 0; i < (size_t)depth; i++) {
		free(stack[i].anchor_copy);
		free(stack[i].node->kids);
	}
	yaml_parser_delete(&parser);
	if (!ok) {
		ydoc_free(doc);
		return NULL;
	}
	return doc;
}

/*
 * Is path one the user named as standard input or an open descriptor
 * ("/dev/stdin", "/dev/fd/N": a pipe, a terminal, a process
 * substitution)?  Only such a path may be something other than a regular
 * file: a FIFO, a device or a socket found anywhere else (a library
 * *.yaml, the user catalog, a stored profile, a mistyped path) is refused
 * rather than read, so that no input can block the program or have a
 * device's side effects.
 */
static bool
asked_for_stream(const char *path)
{
	const char *p;

	if (strcmp(path, "/dev/stdin") == 0)
		return true;
	if (strncmp(path, "/dev/fd/", 8) != 0 || path[8] == '\0')
		return false;
	for (p = path + 8; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static const char *
file_type(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO (named pipe)" :
	    S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
	    S_ISSOCK(m) ? "a socket" : "not a regular file";
}

char *
ydoc_read_input(const char *path, const char *what, size_t *lenp,
    struct vp_diags *d)
{
	struct stat st;
	char *text;
	size_t len = 0;
	int fd, fl;

	/*
	 * O_NONBLOCK: opening a FIFO without a writer (or a device that
	 * waits for a carrier) would block forever; the type is known only
	 * after the open, from fstat of what was opened (no race with a
	 * rename between a stat and the open).
	 */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) && (S_ISDIR(st.st_mode) ||
	    !asked_for_stream(path))) {
		vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "'%s' is %s, not a %s; give a regular file (or "
		    "/dev/stdin to read standard input)", path,
		    file_type(st.st_mode), what);
		close(fd);
		return NULL;
	}
	if (S_ISREG(st.st_mode) && st.st_size > (off_t)VP_YDOC_MAX_BYTES) {
		vp_diag_add(d, path, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "file is larger than %u MiB; not a %s",
		    VP_YDOC_MAX_BYTES >> 20, what);
		close(fd);
		return NULL;
	}
	/* Standard input was asked for: wait for it as cat(1) would. */
	if ((fl = fcntl(fd, F_GETFL)) != -1)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	text = xmalloc(VP_YDOC_MAX_BYTES + 2);
	while (len <= VP_YDOC_MAX_BYTES) {
		ssize_t n = read(fd, text + len, VP_YDOC_MAX_BYTES + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			vp_diag_add(d, NULL, (struct vp_srcpos){ 0, 0 },
			    VP_ERROR, "cannot read '%s': %s", path,
			    strerror(errno));
			close(fd);
			free(text);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len > VP_YDOC_MAX_BYTES) {
		vp_diag_add(d, path, (struct vp_srcpos){ 0, 0 }, VP_ERROR,
		    "file is larger than %u MiB; not a %s",
		    VP_YDOC_MAX_BYTES >> 20, what);
		free(text);
		return NULL;
	}
	text[len] = '\0';
	*lenp = len;
	return text;
}

struct ydoc *
ydoc_load_as(const char *path, const char *what, struct vp_diags *d)
{
	struct ydoc *doc;
	char *text;
	size_t len;

	if ((text = ydoc_read_input(path, what, &len, d)) == NULL)
		return NULL;
	doc = ydoc_parse_as(path, what, text, len, d);
	free(text);
	return doc;
}

struct ydoc *
ydoc_load(const char *path, struct vp_diags *d)
{
	return ydoc_load_as(path, "model file", d);
}

void
ydoc_free(struct ydoc *doc)
{
	size_t i;

	if (doc == NULL)
		return;
	for (i = 0; i < doc->nowned; i++)
		free(doc->owned[i]);
	for (i = 0; i < doc->nanchors; i++)
		free(doc->anchors[i].name);
	free(doc->anchors);
	free(doc->slots);
	free(doc->owned);
	free(doc->name);
	free(doc);
}

const struct ynode *
ydoc_root(const struct ydoc *doc)
{
	return doc->root;
}

const char *
ydoc_name(const struct ydoc *doc)
{
	return doc->name;
}

const struct ynode *
ynode_get(const struct ynode *map, const char *key)
{
	size_t i;

	if (map == NULL || map->kind != YN_MAP)
		return NULL;
	for (i = 0; i + 1 < map->nkids; i += 2)
		if (map->kids[i]->kind == YN_SCALAR &&
		    strcmp(map->kids[i]->str, key) == 0)
			return map->kids[i + 1];
	return NULL;
}

bool
ynode_is_null(const struct ynode *n)
{
	return n == NULL || (n->kind == YN_SCALAR && n->plain &&
	    (n->str[0] == '\0' || strcmp(n->str, "~") == 0 ||
	    strcmp(n->str, "null") == 0 || strcmp(n->str, "Null") == 0 ||
	    strcmp(n->str, "NULL") == 0));
}

const char *
ynode_kind_name(const struct ynode *n)
{
	if (n->kind == YN_MAP)
		return "a mapping";
	if (n->kind == YN_SEQ)
		return "a list";
	if (ynode_is_null(n))
		return "null";
	return "a scalar";
}

/* Show a scalar in a message, shortened so garbage cannot flood stderr. */
static const char *
shown(const struct ynode *n, char *buf, size_t len)
{
	size_t i;

	if (n->kind != YN_SCALAR)
		return ynode_kind_name(n);
	for (i = 0; i + 1 < len && n->str[i]; i++)
		buf[i] = (n->str[i] >= 0x20 && n->str[i] < 0x7f) ?
		    n->str[i] : '?';
	buf[i] = '\0';
	if (n->str[i] != '\0' && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

int
ynode_want(const struct ynode *n, enum ynode_kind kind, const char *file,
    const char *key, struct vp_diags *d)
{
	static const char *const want[] = { "a scalar", "a mapping",
	    "a list" };
	char buf[48];

	if (n->kind == kind)
		return 0;
	if (n->kind == YN_SCALAR)
		vp_diag_add(d, file, n->pos, VP_ERROR,
		    "'%s' must be %s, not '%s'", key, want[kind],
		    shown(n, buf, sizeof buf));
	else
		vp_diag_add(d, file, n->pos, VP_ERROR, "'%s' must be %s, not %s",
		    key, want[kind], ynode_kind_name(n));
	return -1;
}

/* "not a list" for collections, "not 'x'" for scalars. */
static void
not_what(const struct ynode *n, char *buf, size_t len, char *out, size_t olen)
{
	if (n->kind != YN_SCALAR)
		snprintf(out, olen, "not %s", ynode_kind_name(n));
	else if (ynode_is_null(n))
		snprintf(out, olen, "not null");
	else if (!n->plain)
		snprintf(out, olen, "not the string '%s'", shown(n, buf, len));
	else
		snprintf(out, olen, "not '%s'", shown(n, buf, len));
}

int
ynode_u64(const struct ynode *n, const char *file, const char *key,
    uint64_t min, uint64_t max, uint64_t *out, struct vp_diags *d)
{
	const char *err;
	char buf[48], nw[80];

	/* Quoted scalars are strings in YAML and JSON, never numbers. */
	if (n->kind == YN_SCALAR && n->plain && !ynode_is_null(n) &&
	    vp_parse_u64(n->str, min, max, out, &err) == 0)
		return 0;
	not_what(n, buf, sizeof buf, nw, sizeof nw);
	vp_diag_add(d, file, n->pos, VP_ERROR,
	    "'%s' must be a whole number from %llu to %llu, %s", key,
	    (unsigned long long)min, (unsigned long long)max, nw);
	return -1;
}

int
ynode_double(const struct ynode *n, const char *file, const char *key,
    double min, double max, double *out, struct vp_diags *d)
{
	const char *err;
	char buf[48], nw[80];

	if (n->kind == YN_SCALAR && n->plain && !ynode_is_null(n) &&
	    vp_parse_double(n->str, min, max, out, &err) == 0)
		return 0;
	not_what(n, buf, sizeof buf, nw, sizeof nw);
	vp_diag_add(d, file, n->pos, VP_ERROR,
	    "'%s' must be a number from %g to %g, %s", key, min, max, nw);
	return -1;
}

int
ynode_bool(const struct ynode *n, const char *file, const char *key,
    bool *out, struct vp_diags *d)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes",
	    "Yes", "on" };
	static const char *const no[] = { "false", "False", "FALSE", "no",
	    "No", "off" };
	char buf[48];
	size_t i;

	if (n->kind == YN_SCALAR && n->plain) {
		for (i = 0; i < VP_NELEM(yes); i++)
			if (strcmp(n->str, yes[i]) == 0) {
				*out = true;
				return 0;
			}
		for (i = 0; i < VP_NELEM(no); i++)
			if (strcmp(n->str, no[i]) == 0) {
				*out = false;
				return 0;
			}
	}
	{
		char nw[80];

		not_what(n, buf, sizeof buf, nw, sizeof nw);
		vp_diag_add(d, file, n->pos, VP_ERROR,
		    "'%s' must be true or false, %s", key, nw);
	}
	return -1;
}

int
ynode_string(const struct ynode *n, const char *file, const char *key,
    const char **out, struct vp_diags *d)
{
	if (n->kind != YN_SCALAR || ynode_is_null(n)) {
		vp_diag_add(d, file, n->pos, VP_ERROR,
		    "'%s' must be a string, not %s", key, ynode_kind_name(n));
		return -1;
	}
	*out = n->str;
	return 0;
}

int
ynode_enum(const struct ynode *n, const char *file, const char *key,
    const char *const *names, int nnames, int *out, struct vp_diags *d)
{
	struct vp_buf list;
	const char *near;
	char buf[48];
	int i;

	if (n->kind == YN_SCALAR)
		for (i = 0; i < nnames; i++)
			if (strcmp(n->str, names[i]) == 0) {
				*out = i;
				return 0;
			}
	vp_buf_init(&list);
	for (i = 0; i < nnames; i++)
		vp_buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
	near = n->kind == YN_SCALAR ?
	    vp_closest(n->str, names, (size_t)nnames) : NULL;
	if (near != NULL)
		vp_diag_add(d, file, n->pos, VP_ERROR,
		    "unknown %s '%s'; did you mean '%s'? (one of: %s)", key,
		    shown(n, buf, sizeof buf), near, list.s);
	else if (n->kind != YN_SCALAR)
		vp_diag_add(d, file, n->pos, VP_ERROR,
		    "'%s' must be one of %s, not %s", key, list.s,
		    ynode_kind_name(n));
	else
		vp_diag_add(d, file, n->pos, VP_ERROR,
		    "unknown %s '%s' (one of: %s)", key,
		    shown(n, buf, sizeof buf), list.s);
	vp_buf_free(&list);
	return -1;
}

int
ynode_check_keys(const struct ynode *map, const char *file, const char *what,
    const char *const *keys, size_t nkeys, struct vp_diags *d)
{
	size_t i, k;
	int bad = 0;

	for (i = 0; i + 1 < map->nkids; i += 2) {
		const struct ynode *kn = map->kids[i];
		const char *near;

		for (k = 0; k < nkeys; k++)
			if (kn->kind == YN_SCALAR && !strcmp(kn->str, keys[k]))
				break;
		if (k < nkeys)
			continue;
		bad = -1;
		if (kn->kind != YN_SCALAR) {
			vp_diag_add(d, file, kn->pos, VP_ERROR,
			    "key must be a plain name in %s", what);
			continue;
		}
		near = vp_closest(kn->str, keys, nkeys);
		if (near)
			vp_diag_add(d, file, kn->pos, VP_ERROR,
			    "unknown key '%.64s' in %s; did you mean '%s'?",
			    kn->str, what, near);
		else
			vp_diag_add(d, file, kn->pos, VP_ERROR,
			    "unknown key '%.64s' in %s", kn->str, what);
	}
	return bad;
}

int
ynode_opt_string(const struct ynode *map, const char *file, const char *key,
    char **out, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(map, key);
	const char *s;

	*out = NULL;
	if (n == NULL || ynode_is_null(n))
		return 0;
	if (ynode_string(n, file, key, &s, d) != 0)
		return -1;
	*out = xstrdup(s);
	return 0;
}
