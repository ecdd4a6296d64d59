/*
 * alloc.c — the CUDA caching allocator simulation (see alloc.h).
 *
 * Layout.  Blocks live in one growable array and are named by index
 * (-1 = none); a segment is a doubly linked list of blocks by address
 * (prev, next), as in the source.  Free mapped blocks of each pool are
 * kept in the best fit's order, (stream, size, address) (BlockPool::
 * blocks), as buckets: one per (stream, size) that has free blocks, in a
 * sorted array, each a binary min-heap on the address.  A training step
 * frees and reuses thousands of blocks of a few dozen sizes (Llama-3.1-405B:
 * up to 3,700 free blocks, at most 26 sizes), so a best fit is a search
 * among a few dozen keys and a look at a heap's top, and an insertion or
 * removal touches one small contiguous heap; a tree over every block was
 * four times slower.  Unmapped parts of expandable segments sit in a treap
 * per pool ordered by (stream, address) (BlockPool::unmapped).  Every
 * operation is O(log n), except the whole-cache sweeps the source does too
 * (release, garbage collection), which sort what they collect.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define NONE (-1)

/* ---- configuration ---------------------------------------------------- */

void
vp_alloc_conf_init(struct vp_alloc_conf *c)
{
	memset(c, 0, sizeof *c);
	c->max_split_size_bytes = UINT64_MAX;
	c->max_non_split_rounding_bytes = VP_ALLOC_LARGE_BUFFER;
}

static int
is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static unsigned
log2_floor(uint64_t v)
{
	unsigned n = 0;

	while (v >>= 1)
		n++;
	return n;
}

/* Tokens as AllocatorConfig::lexArgs makes them: ',' ':' '[' ']' alone,
 * other runs of characters as words, spaces dropped everywhere. */
struct toks {
	char **v;
	size_t n, cap;
};

static void
tok_push(struct toks *t, const char *s, size_t n)
{
	char *w = xmalloc(n + 1);

	memcpy(w, s, n);
	w[n] = '\0';
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->v = xreallocarray(t->v, t->cap, sizeof *t->v);
	}
	t->v[t->n++] = w;
}

static void
lex(const char *s, struct toks *t)
{
	char *buf = xmalloc(strlen(s) + 1);
	size_t n = 0;

	for (; *s; s++) {
		if (strchr(",:[]", *s)) {
			if (n)
				tok_push(t, buf, n);
			n = 0;
			tok_push(t, s, 1);
		} else if (*s != ' ') {
			buf[n++] = *s;
		}
	}
	if (n)
		tok_push(t, buf, n);
	free(buf);
}

static const char *const conf_keys[] = {
	"max_split_size_mb", "max_non_split_rounding_mb",
	"garbage_collection_threshold", "roundup_power2_divisions",
	"expandable_segments", "backend", "release_lock_on_cudamalloc",
	"pinned_use_cuda_host_register", "pinned_num_register_threads",
	"pinned_use_background_threads",
};

struct parser {
	struct toks t;
	size_t i;		/* the current token */
	struct vp_buf *err;
};

static const char *
tok(const struct parser *p, size_t i)
{
	return i < p->t.n ? p->t.v[i] : NULL;
}

static int
tok_is(const struct parser *p, size_t i, const char *s)
{
	return tok(p, i) != NULL && strcmp(tok(p, i), s) == 0;
}

static int
fail(struct parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err != NULL) {
		va_start(ap, fmt);
		vp_buf_vprintf(p->err, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* "KEY:" then a word: the word, or NULL after an error. */
static const char *
value_of(struct parser *p, const char *key, const char *allowed)
{
	const char *v;

	if (!tok_is(p, p->i + 1, ":")) {
		fail(p, "'%s' needs a value after ':'; allowed: %s", key,
		    allowed);
		return NULL;
	}
	v = tok(p, p->i + 2);
	if (v == NULL || strchr(",:[]", v[0])) {
		fail(p, "'%s' needs a value after ':'; allowed: %s", key,
		    allowed);
		return NULL;
	}
	p->i += 2;
	return v;
}

static int
parse_mb(struct parser *p, const char *key, uint64_t *out)
{
	static const char allowed[] = "a whole number of MiB, at least 20";
	const char *v = value_of(p, key, allowed), *es;
	uint64_t mb;

	if (v == NULL)
		return -1;
	if (vp_parse_u64(v, VP_ALLOC_LARGE_BUFFER >> 20, UINT64_MAX >> 20,
	    &mb, &es) != 0)
		return fail(p, "'%s' value '%s' is %s; allowed: %s", key, v,
		    strcmp(es, "invalid") == 0 ? "not a number" : es, allowed);
	*out = mb << 20;
	return 0;
}

static int
parse_bool(struct parser *p, const char *key, int *out)
{
	const char *v = value_of(p, key, "True, False");

	if (v == NULL)
		return -1;
	if (strcmp(v, "True") != 0 && strcmp(v, "False") != 0)
		return fail(p, "'%s' value '%s' is not allowed; allowed: True, "
		    "False", key, v);
	*out = strcmp(v, "True") == 0;
	return 0;
}

static int
parse_divisions(struct parser *p, struct vp_alloc_conf *c)
{
	static const char key[] = "roundup_power2_divisions";
	static const char allowed[] = "a power of 2, or a list "
	    "[MiB:N,...,>:N] of power-of-2 sizes in MiB and divisions that "
	    "are 0 or a power of 2";
	const char *v, *es;
	uint64_t n, mb;
	size_t k, idx, last = 0;
	int first = 1;

	if (!tok_is(p, p->i + 1, ":") || tok(p, p->i + 2) == NULL)
		return fail(p, "'%s' needs a value after ':'; allowed: %s",
		    key, allowed);
	p->i += 2;
	v = tok(p, p->i);
	if (strcmp(v, "[") != 0) {
		/* The old form: one number for every band. */
		if (vp_parse_u64(v, 1, 1ULL << 31, &n, &es) != 0 || !is_pow2(n))
			return fail(p, "'%s' value '%s' is not a power of 2; "
			    "allowed: %s", key, v, allowed);
		for (k = 0; k < VP_ALLOC_BANDS; k++)
			c->roundup_power2_divisions[k] = (uint32_t)n;
		return 0;
	}
	for (;;) {
		v = tok(p, ++p->i);
		if (v == NULL)
			return fail(p, "'%s' list has no closing ']'", key);
		if (strcmp(v, "]") == 0)
			return 0;
		if (!tok_is(p, p->i + 1, ":") || tok(p, p->i + 2) == NULL)
			return fail(p, "'%s' list entry '%s' needs ':N'; "
			    "allowed: %s", key, v, allowed);
		if (vp_parse_u64(tok(p, p->i + 2), 0, 1ULL << 31, &n, &es) != 0
		    || (n != 0 && !is_pow2(n)))
			return fail(p, "'%s' divisions '%s' is not 0 or a "
			    "power of 2; allowed: %s", key, tok(p, p->i + 2),
			    allowed);
		if (strcmp(v, ">") == 0) {
			/* The source fills from the last interval named,
			 * that interval included. */
			for (k = last; k < VP_ALLOC_BANDS; k++)
				c->roundup_power2_divisions[k] = (uint32_t)n;
		} else {
			if (vp_parse_u64(v, 1, UINT64_MAX, &mb, &es) != 0 ||
			    !is_pow2(mb))
				return fail(p, "'%s' interval '%s' is not a "
				    "power of 2; allowed: %s", key, v, allowed);
			idx = log2_floor(mb);
			if (idx > VP_ALLOC_BANDS - 1)
				idx = VP_ALLOC_BANDS - 1;
			/* The first entry also covers every band below it. */
			if (first)
				for (k = 0; k < idx; k++)
					c->roundup_power2_divisions[k] =
					    (uint32_t)n;
			first = 0;
			c->roundup_power2_divisions[idx] = (uint32_t)n;
			last = idx;
		}
		p->i += 2;
		if (tok(p, p->i + 1) == NULL)
			return fail(p, "'%s' list has no closing ']'", key);
		if (tok_is(p, p->i + 1, "]"))
			continue;
		if (!tok_is(p, p->i + 1, ","))
			return fail(p, "'%s' list: expected ',' or ']' after "
			    "'%s'", key, tok(p, p->i));
		p->i++;
	}
}

static int
parse_key(struct parser *p, struct vp_alloc_conf *c)
{
	const char *key = tok(p, p->i), *v, *es, *near;
	double d;
	uint64_t n;
	int dummy;

	if (strcmp(key, "max_split_size_mb") == 0)
		return parse_mb(p, key, &c->max_split_size_bytes);
	if (strcmp(key, "max_non_split_rounding_mb") == 0)
		return parse_mb(p, key, &c->max_non_split_rounding_bytes);
	if (strcmp(key, "garbage_collection_threshold") == 0) {
		if ((v = value_of(p, key, "a number strictly between 0 and 1"))
		    == NULL)
			return -1;
		if (vp_parse_double(v, 0, 1, &d, &es) != 0 || d <= 0 || d >= 1)
			return fail(p, "'%s' value '%s' is not allowed; "
			    "allowed: a number strictly between 0 and 1", key,
			    v);
		c->garbage_collection_threshold = d;
		return 0;
	}
	if (strcmp(key, "roundup_power2_divisions") == 0)
		return parse_divisions(p, c);
	if (strcmp(key, "expandable_segments") == 0)
		return parse_bool(p, key, &c->expandable_segments);
	if (strcmp(key, "backend") == 0) {
		if ((v = value_of(p, key, "native, cudaMallocAsync")) == NULL)
			return -1;
		if (strcmp(v, "native") != 0 &&
		    strcmp(v, "cudaMallocAsync") != 0)
			return fail(p, "'%s' value '%s' is not allowed; "
			    "allowed: native, cudaMallocAsync", key, v);
		c->async_backend = strcmp(v, "cudaMallocAsync") == 0;
		return 0;
	}
	if (strcmp(key, "release_lock_on_cudamalloc") == 0 ||
	    strcmp(key, "release_lock_on_hipmalloc") == 0 ||
	    strcmp(key, "pinned_use_cuda_host_register") == 0 ||
	    strcmp(key, "pinned_use_hip_host_register") == 0 ||
	    strcmp(key, "pinned_use_background_threads") == 0)
		return parse_bool(p, key, &dummy);
	if (strcmp(key, "pinned_num_register_threads") == 0) {
		if ((v = value_of(p, key, "a power of 2")) == NULL)
			return -1;
		if (vp_parse_u64(v, 1, 1024, &n, &es) != 0 || !is_pow2(n))
			return fail(p, "'%s' value '%s' is not allowed; "
			    "allowed: a power of 2, at most 1024", key, v);
		return 0;
	}
	near = vp_closest(key, conf_keys, VP_NELEM(conf_keys));
	if (near != NULL)
		return fail(p, "unknown option '%s'; did you mean '%s'?", key,
		    near);
	return fail(p, "unknown option '%s'; allowed: max_split_size_mb, "
	    "roundup_power2_divisions, garbage_collection_threshold, "
	    "expandable_segments, max_non_split_rounding_mb, backend", key);
}

int
vp_alloc_conf_parse(struct vp_alloc_conf *c, const char *s,
    struct vp_buf *err)
{
	struct parser p = { { NULL, 0, 0 }, 0, err };
	struct vp_alloc_conf out;
	size_t k;
	int rc = 0;

	vp_alloc_conf_init(&out);
	/* What vp_alloc_conf_format writes for the defaults reads back. */
	if (s != NULL && strcmp(s, "defaults") == 0) {
		*c = out;
		return 0;
	}
	if (s != NULL)
		lex(s, &p.t);
	for (p.i = 0; p.i < p.t.n; p.i++) {
		if (strchr(",:[]", tok(&p, p.i)[0])) {
			rc = fail(&p, "expected an option name, not '%s'",
			    tok(&p, p.i));
			break;
		}
		if ((rc = parse_key(&p, &out)) != 0)
			break;
		if (p.i + 1 < p.t.n && !tok_is(&p, ++p.i, ",")) {
			rc = fail(&p, "expected ',' after '%s', not '%s'",
			    tok(&p, p.i - 1), tok(&p, p.i));
			break;
		}
	}
	for (k = 0; k < p.t.n; k++)
		free(p.t.v[k]);
	free(p.t.v);
	if (rc == 0)
		*c = out;
	return rc;
}

void
vp_alloc_conf_format(const struct vp_alloc_conf *c, struct vp_buf *out)
{
	struct vp_alloc_conf d;
	const char *sep = "";
	size_t k, start = out->len;
	int same = 1;

	vp_alloc_conf_init(&d);
	if (c->async_backend) {
		vp_buf_add(out, "backend:cudaMallocAsync (not simulated)");
		sep = ",";
	}
	if (c->max_split_size_bytes != d.max_split_size_bytes) {
		vp_buf_printf(out, "%smax_split_size_mb:%llu", sep,
		    (unsigned long long)(c->max_split_size_bytes >> 20));
		sep = ",";
	}
	if (c->max_non_split_rounding_bytes != d.max_non_split_rounding_bytes) {
		vp_buf_printf(out, "%smax_non_split_rounding_mb:%llu", sep,
		    (unsigned long long)(c->max_non_split_rounding_bytes >> 20));
		sep = ",";
	}
	for (k = 1; k < VP_ALLOC_BANDS; k++)
		same &= c->roundup_power2_divisions[k] ==
		    c->roundup_power2_divisions[0];
	if (same && c->roundup_power2_divisions[0] != 0) {
		vp_buf_printf(out, "%sroundup_power2_divisions:%u", sep,
		    c->roundup_power2_divisions[0]);
		sep = ",";
	} else if (!same) {
		/* The first entry names band 0 (so it fills nothing below);
		 * the others are set one by one, as the parser reads them. */
		vp_buf_printf(out, "%sroundup_power2_divisions:[1:%u", sep,
		    c->roundup_power2_divisions[0]);
		for (k = 1; k < VP_ALLOC_BANDS; k++)
			if (c->roundup_power2_divisions[k] != 0)
				vp_buf_printf(out, ",%llu:%u",
				    1ULL << k, c->roundup_power2_divisions[k]);
		vp_buf_add(out, "]");
		sep = ",";
	}
	if (c->garbage_collection_threshold > 0) {
		vp_buf_printf(out, "%sgarbage_collection_threshold:%g", sep,
		    c->garbage_collection_threshold);
		sep = ",";
	}
	if (c->expandable_segments)
		vp_buf_printf(out, "%sexpandable_segments:True", sep);
	if (out->len == start)
		vp_buf_add(out, "defaults");
}

/* ---- the rules on their own -------------------------------------------- */

uint64_t
vp_alloc_roundup_power2_next_division(uint64_t size, uint32_t divisions)
{
	uint64_t floor2, step, lo;

	if (is_pow2(size))
		return size;
	assert(divisions >= 2);
	/* Split [2^k, 2^(k+1)) into `divisions` equal steps. */
	floor2 = 1ULL << log2_floor(size);
	step = floor2 >> log2_floor(divisions);
	if (step == 0)
		return floor2 << 1;
	lo = size & ~(step - 1);
	return lo == size ? size : lo + step;
}

static uint32_t
divisions_for(const struct vp_alloc_conf *c, uint64_t size)
{
	int idx = (int)log2_floor(size) - 20;	/* bands start at 1 MiB */

	if (idx < 0)
		idx = 0;
	if (idx > VP_ALLOC_BANDS - 1)
		idx = VP_ALLOC_BANDS - 1;
	return c->roundup_power2_divisions[idx];
}

uint64_t
vp_alloc_round_size(const struct vp_alloc_conf *c, uint64_t size)
{
	uint32_t div;

	if (size < VP_ALLOC_MIN_BLOCK)
		return VP_ALLOC_MIN_BLOCK;
	div = divisions_for(c, size);
	/* round_size: divisions act only above 512 B × divisions. */
	if (div > 1 && size > VP_ALLOC_MIN_BLOCK * div)
		return vp_alloc_roundup_power2_next_division(size, div);
	return VP_ALLOC_MIN_BLOCK *
	    ((size + VP_ALLOC_MIN_BLOCK - 1) / VP_ALLOC_MIN_BLOCK);
}

uint64_t
vp_alloc_segment_size(uint64_t size)
{
	if (size <= VP_ALLOC_SMALL_SIZE)
		return VP_ALLOC_SMALL_BUFFER;
	if (size < VP_ALLOC_MIN_LARGE_ALLOC)
		return VP_ALLOC_LARGE_BUFFER;
	return VP_ALLOC_ROUND_LARGE *
	    ((size + VP_ALLOC_ROUND_LARGE - 1) / VP_ALLOC_ROUND_LARGE);
}

int
vp_alloc_should_split(const struct vp_alloc_conf *c, int small_pool,
    uint64_t block_bytes, uint64_t size)
{
	uint64_t rest = block_bytes - size;

	if (small_pool || c->expandable_segments)
		return rest >= VP_ALLOC_MIN_BLOCK;
	return size < c->max_split_size_bytes && rest > VP_ALLOC_SMALL_SIZE;
}

/* ---- the allocator's state ---------------------------------------------- */

struct blk {
	uint64_t addr, size, requested;
	uint64_t gc_base;	/* the pool's get_free_block count at insert */
	int32_t prev, next;	/* neighbours in the segment */
	int32_t left, right, up;	/* treap links (unmapped set) */
	uint32_t prio;		/* treap priority */
	uint32_t bucket;	/* that bucket, while free and mapped */
	uint32_t stream;
	int32_t es;		/* expandable segment, or NONE */
	uint32_t gen;		/* handle generation, bumped per allocation
				 * and per free: a dead handle never matches */
	uint32_t *uses;		/* recorded streams, while allocated */
	uint32_t nuses, capuses;
	int events;		/* outstanding stream events */
	uint8_t small, allocated, mapped, live;
};

/* An expandable segment: its virtual range and which pages are mapped. */
struct eseg {
	uint64_t base, page, npages;
	uint8_t *mapped;	/* npages flags */
	int live;
};

/* Blocks waiting for one stream's events (cuda_events[stream]). */
struct pending {
	uint32_t stream;
	int32_t *v;
	size_t n, cap;
};

/* A free block in its bucket's heap: the address is copied here so that
 * sifting reads one contiguous array. */
struct hent {
	uint64_t addr;
	int32_t b;
};

/* The free blocks of one (stream, size), a min-heap on the address; an
 * unused bucket keeps its heap and links the next unused in n. */
struct fbucket {
	uint64_t size;
	uint32_t stream;
	uint32_t n, cap;
	uint32_t hnext;		/* the next in its hash chain */
	uint8_t small;
	struct hent *h;
};

struct vp_alloc {
	struct vp_alloc_conf conf;
	uint64_t capacity;	/* 0 = unlimited */
	int set_fraction;
	uint64_t allowed;	/* allowed_memory_maximum */
	uint64_t space;		/* an expandable segment's virtual bytes */
	int round512;		/* no divisions: round_size is 512 B steps */
	struct blk *b;
	size_t nb, capb;
	uint32_t *hpos;		/* per block: its place in its bucket's heap
				 * (apart from b[]: sifting writes it) */
	int32_t freelist;	/* dead block slots, linked through next */
	struct fbucket *fb;	/* buckets, by a stable number */
	uint32_t nfb, capfb, fb_free;	/* fb_free: a number to reuse */
	uint32_t *ord[2];	/* [small]: the non-empty buckets, sorted */
	uint32_t nord[2], capord[2];
	uint32_t *htab;		/* (pool, stream, size) -> bucket chains */
	uint32_t nhtab;		/* a power of two, at least 2 * nfb */
	int32_t unmapped_root[2];	/* [small] */
	uint64_t gc_calls[2];	/* get_free_blocks_call_count, per pool */
	struct eseg *es;
	size_t nes;
	struct pending *pend;
	size_t npend;
	uint64_t next_addr;
	uint32_t rng;
	struct vp_alloc_stats st;
	int32_t *tmp;		/* scratch for sweeps */
	size_t ntmp, captmp;
};

static void
stat_add(struct vp_alloc_stat *s, uint64_t n)
{
	s->current += n;
	if (s->current > s->peak)
		s->peak = s->current;
}

static void
stat_sub(struct vp_alloc_stat *s, uint64_t n)
{
	assert(s->current >= n);
	s->current -= n;
}

static uint32_t
rnd(struct vp_alloc *a)
{
	uint32_t x = a->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return a->rng = x;
}

static int32_t
blk_new(struct vp_alloc *a)
{
	int32_t i;
	struct blk *x;

	if (a->freelist != NONE) {
		i = a->freelist;
		a->freelist = a->b[i].next;
	} else {
		if (a->nb == a->capb) {
			a->capb = a->capb ? 2 * a->capb : 256;
			assert(a->capb < INT32_MAX);
			a->b = xreallocarray(a->b, a->capb, sizeof *a->b);
			a->hpos = xreallocarray(a->hpos, a->capb,
			    sizeof *a->hpos);
		}
		i = (int32_t)a->nb++;
		a->b[i].gen = 0;
	}
	x = &a->b[i];
	x->addr = x->size = x->requested = x->gc_base = 0;
	x->prev = x->next = x->left = x->right = x->up = NONE;
	x->prio = rnd(a);
	x->stream = 0;
	x->es = NONE;
	x->uses = NULL;
	x->nuses = x->capuses = 0;
	x->events = 0;
	x->small = x->allocated = 0;
	x->mapped = x->live = 1;
	return i;
}

static void
blk_delete(struct vp_alloc *a, int32_t i)
{
	free(a->b[i].uses);
	a->b[i].uses = NULL;
	a->b[i].live = 0;
	a->b[i].next = a->freelist;
	a->freelist = i;
}

/* ---- treaps ------------------------------------------------------------ */

enum { BY_SIZE, BY_ADDR };	/* (stream, size, addr) or (stream, addr) */

struct key {
	uint32_t stream;
	uint64_t size, addr;
};

static int
keycmp(int kind, const struct key *k, const struct blk *x)
{
	if (k->stream != x->stream)
		return k->stream < x->stream ? -1 : 1;
	if (kind == BY_SIZE && k->size != x->size)
		return k->size < x->size ? -1 : 1;
	if (k->addr != x->addr)
		return k->addr < x->addr ? -1 : 1;
	return 0;
}

static struct key
key_of(const struct blk *x)
{
	struct key k = { x->stream, x->size, x->addr };

	return k;
}

/*
 * Insertion and removal rotate, with parent links, instead of splitting
 * and merging: an insertion compares down one path and rotates up by
 * priority, a removal rotates the node down to a leaf (fewer than two
 * rotations expected) without searching.  The shape depends on the
 * priorities, the order only on the keys, so no result depends on the
 * shape.
 */
static void
rot_up(struct blk *B, int32_t *root, int32_t x)
{
	int32_t p = B[x].up, g = B[p].up, c;

	if (B[p].left == x) {
		c = B[x].right;
		B[p].left = c;
		B[x].right = p;
	} else {
		c = B[x].left;
		B[p].right = c;
		B[x].left = p;
	}
	if (c != NONE)
		B[c].up = p;
	B[p].up = x;
	B[x].up = g;
	if (g == NONE)
		*root = x;
	else if (B[g].left == p)
		B[g].left = x;
	else
		B[g].right = x;
}

static void
tinsert(struct vp_alloc *a, int32_t *root, int kind, int32_t i)
{
	struct blk *B = a->b;
	struct key k = key_of(&B[i]);
	int32_t t = *root;

	B[i].left = B[i].right = B[i].up = NONE;
	if (t == NONE) {
		*root = i;
		return;
	}
	for (;;) {
		int32_t *link = keycmp(kind, &k, &B[t]) < 0 ? &B[t].left :
		    &B[t].right;

		if (*link == NONE) {
			*link = i;
			B[i].up = t;
			break;
		}
		t = *link;
	}
	/* A max-heap on the priorities. */
	while (B[i].up != NONE && B[B[i].up].prio < B[i].prio)
		rot_up(B, root, i);
}

static void
terase(struct vp_alloc *a, int32_t *root, int kind, int32_t i)
{
	struct blk *B = a->b;
	int32_t l, r, p, t;

	(void)kind;
	/* i is in this tree. */
	for (t = i; B[t].up != NONE; t = B[t].up)
		;
	assert(t == *root);
	for (;;) {
		l = B[i].left;
		r = B[i].right;
		if (l == NONE && r == NONE)
			break;
		rot_up(B, root, r == NONE || (l != NONE && B[l].prio >
		    B[r].prio) ? l : r);
	}
	p = B[i].up;
	if (p == NONE)
		*root = NONE;
	else if (B[p].left == i)
		B[p].left = NONE;
	else
		B[p].right = NONE;
	B[i].up = NONE;
}

/* The first node at or after k (after k when strict), or NONE. */
static int32_t
tlower(const struct blk *B, int kind, int32_t t, const struct key *k,
    int strict)
{
	int32_t best = NONE;
	int c;

	while (t != NONE) {
		c = keycmp(kind, k, &B[t]);
		if (c < 0 || (!strict && c == 0)) {
			best = t;
			t = B[t].left;
		} else {
			t = B[t].right;
		}
	}
	return best;
}

/* The node after i (which is in the tree) in the tree's order. */
static int32_t
tnext(const struct vp_alloc *a, int32_t i)
{
	const struct blk *B = a->b;
	int32_t t = B[i].right;

	if (t != NONE) {
		while (B[t].left != NONE)
			t = B[t].left;
		return t;
	}
	while (B[i].up != NONE && B[B[i].up].right == i)
		i = B[i].up;
	return B[i].up;
}

/* ---- the free set: buckets of heaps ------------------------------------ */

/* The position in the pool's sorted list of the first bucket at or after
 * (stream, size). */
static uint32_t
bk_lower(const struct vp_alloc *a, int small, uint32_t stream, uint64_t size)
{
	const uint32_t *v = a->ord[small];
	uint32_t lo = 0, hi = a->nord[small], mid;

	while (lo < hi) {
		const struct fbucket *k;

		mid = lo + (hi - lo) / 2;
		k = &a->fb[v[mid]];
		if (k->stream < stream || (k->stream == stream &&
		    k->size < size))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
heap_set(struct vp_alloc *a, struct fbucket *k, uint32_t pos,
    struct hent e)
{
	k->h[pos] = e;
	a->hpos[e.b] = pos;
}

static void
heap_up(struct vp_alloc *a, struct fbucket *k, uint32_t pos)
{
	struct hent e = k->h[pos];

	while (pos > 0 && k->h[(pos - 1) / 2].addr > e.addr) {
		heap_set(a, k, pos, k->h[(pos - 1) / 2]);
		pos = (pos - 1) / 2;
	}
	heap_set(a, k, pos, e);
}

static void
heap_down(struct vp_alloc *a, struct fbucket *k, uint32_t pos)
{
	struct hent e = k->h[pos];
	uint32_t c;

	for (;;) {
		c = 2 * pos + 1;
		if (c >= k->n)
			break;
		if (c + 1 < k->n && k->h[c + 1].addr < k->h[c].addr)
			c++;
		if (k->h[c].addr >= e.addr)
			break;
		heap_set(a, k, pos, k->h[c]);
		pos = c;
	}
	heap_set(a, k, pos, e);
}

/* The non-empty buckets are also hashed by (pool, stream, size): a
 * request or a freed block usually finds its exact size there. */
static uint32_t
bk_hash(const struct vp_alloc *a, int small, uint32_t stream, uint64_t size)
{
	uint64_t h = (size >> 9) * 0x9e3779b97f4a7c15ULL ^
	    ((uint64_t)stream << 1 | (uint64_t)small) * 0xff51afd7ed558ccdULL;

	return (uint32_t)(h >> 32) & (a->nhtab - 1);
}

static uint32_t
bk_find(const struct vp_alloc *a, int small, uint32_t stream, uint64_t size)
{
	uint32_t id;

	if (a->nhtab == 0)
		return UINT32_MAX;
	for (id = a->htab[bk_hash(a, small, stream, size)]; id != UINT32_MAX;
	    id = a->fb[id].hnext)
		if (a->fb[id].size == size && a->fb[id].stream == stream &&
		    a->fb[id].small == small)
			return id;
	return UINT32_MAX;
}

static void
bk_hash_add(struct vp_alloc *a, uint32_t id)
{
	uint32_t *slot;

	if (2 * a->nfb > a->nhtab) {
		uint32_t j;

		a->nhtab = a->nhtab ? 2 * a->nhtab : 64;
		while (2 * a->nfb > a->nhtab)
			a->nhtab *= 2;
		a->htab = xreallocarray(a->htab, a->nhtab, sizeof *a->htab);
		for (j = 0; j < a->nhtab; j++)
			a->htab[j] = UINT32_MAX;
		for (j = 0; j < a->nfb; j++)
			if (j != id && a->fb[j].n > 0) {
				slot = &a->htab[bk_hash(a, a->fb[j].small,
				    a->fb[j].stream, a->fb[j].size)];
				a->fb[j].hnext = *slot;
				*slot = j;
			}
	}
	slot = &a->htab[bk_hash(a, a->fb[id].small, a->fb[id].stream,
	    a->fb[id].size)];
	a->fb[id].hnext = *slot;
	*slot = id;
}

static void
bk_hash_del(struct vp_alloc *a, uint32_t id)
{
	uint32_t *slot = &a->htab[bk_hash(a, a->fb[id].small,
	    a->fb[id].stream, a->fb[id].size)];

	while (*slot != id)
		slot = &a->fb[*slot].hnext;
	*slot = a->fb[id].hnext;
}

/* BlockPool::insert_into_blocks: remember the pool's call count. */
static void
insert_free(struct vp_alloc *a, int32_t i)
{
	struct blk *x = &a->b[i];
	int s = x->small;
	uint32_t at, id = bk_find(a, s, x->stream, x->size);
	struct fbucket *k;

	x->gc_base = a->gc_calls[s];
	if (id == UINT32_MAX) {
		/* A new bucket: an unused one (with its heap) or more. */
		if (a->fb_free != UINT32_MAX) {
			id = a->fb_free;
			a->fb_free = a->fb[id].n;
		} else {
			if (a->nfb == a->capfb) {
				a->capfb = a->capfb ? 2 * a->capfb : 16;
				a->fb = xreallocarray(a->fb, a->capfb,
				    sizeof *a->fb);
			}
			id = a->nfb++;
			a->fb[id].h = NULL;
			a->fb[id].cap = 0;
		}
		a->fb[id].size = x->size;
		a->fb[id].stream = x->stream;
		a->fb[id].small = (uint8_t)s;
		a->fb[id].n = 0;
		at = bk_lower(a, s, x->stream, x->size);
		if (a->nord[s] == a->capord[s]) {
			a->capord[s] = a->capord[s] ? 2 * a->capord[s] : 16;
			a->ord[s] = xreallocarray(a->ord[s], a->capord[s],
			    sizeof *a->ord[s]);
		}
		memmove(&a->ord[s][at + 1], &a->ord[s][at],
		    (a->nord[s] - at) * sizeof *a->ord[s]);
		a->ord[s][at] = id;
		a->nord[s]++;
		bk_hash_add(a, id);
	}
	k = &a->fb[id];
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 8;
		k->h = xreallocarray(k->h, k->cap, sizeof *k->h);
	}
	x->bucket = id;
	k->h[k->n] = (struct hent){ x->addr, i };
	heap_up(a, k, k->n++);
}

static void
erase_free(struct vp_alloc *a, int32_t i)
{
	struct blk *x = &a->b[i];
	int s = x->small;
	uint32_t id = x->bucket, pos = a->hpos[i], at;
	struct fbucket *k = &a->fb[id];

	assert(id < a->nfb && k->size == x->size && pos < k->n &&
	    k->h[pos].b == i);
	k->n--;
	if (pos < k->n) {
		heap_set(a, k, pos, k->h[k->n]);
		if (pos > 0 && k->h[(pos - 1) / 2].addr > k->h[pos].addr)
			heap_up(a, k, pos);
		else
			heap_down(a, k, pos);
	}
	if (k->n == 0) {
		at = bk_lower(a, s, k->stream, k->size);
		assert(at < a->nord[s] && a->ord[s][at] == id);
		memmove(&a->ord[s][at], &a->ord[s][at + 1],
		    (a->nord[s] - at - 1) * sizeof *a->ord[s]);
		a->nord[s]--;
		bk_hash_del(a, id);
		k->n = a->fb_free;
		a->fb_free = id;
	}
}

/* The best fit's candidate: the free block of the pool first in (stream,
 * size, address) order at or after (stream, size), or NONE. */
static int32_t
free_lower(const struct vp_alloc *a, int small, uint32_t stream,
    uint64_t size)
{
	uint32_t at, id = bk_find(a, small, stream, size);

	/* An exact size is the best fit when there is one. */
	if (id != UINT32_MAX)
		return a->fb[id].h[0].b;
	at = bk_lower(a, small, stream, size);
	return at < a->nord[small] ? a->fb[a->ord[small][at]].h[0].b : NONE;
}

/* The free block after i (which is free) in that order, or NONE: the
 * lowest address above i's in its bucket, else the next bucket's first.
 * A scan of one bucket: only the expandable-segment search asks. */
static int32_t
free_next(const struct vp_alloc *a, int32_t i)
{
	const struct blk *x = &a->b[i];
	int s = x->small;
	uint32_t at = bk_lower(a, s, x->stream, x->size), j;
	const struct fbucket *k = &a->fb[x->bucket];
	int32_t best = NONE;

	for (j = 0; j < k->n; j++)
		if (k->h[j].addr > x->addr && (best == NONE ||
		    k->h[j].addr < a->b[best].addr))
			best = k->h[j].b;
	if (best != NONE || at + 1 == a->nord[s])
		return best;
	return a->fb[a->ord[s][at + 1]].h[0].b;
}

static int
cmp_hent(const void *x, const void *y)
{
	const struct hent *p = x, *q = y;

	return p->addr < q->addr ? -1 : p->addr > q->addr;
}

/* Every free block of a pool, in (stream, size, address) order, into
 * a->tmp[0, ntmp), for the sweeps. */
static void
free_collect(struct vp_alloc *a, int small)
{
	struct hent *v;
	uint32_t at, j;
	size_t n = 0;

	for (at = 0; at < a->nord[small]; at++)
		n += a->fb[a->ord[small][at]].n;
	if (n > a->captmp) {
		a->captmp = n;
		a->tmp = xreallocarray(a->tmp, a->captmp, sizeof *a->tmp);
	}
	a->ntmp = 0;
	for (at = 0; at < a->nord[small]; at++) {
		const struct fbucket *k = &a->fb[a->ord[small][at]];

		v = xreallocarray(NULL, k->n, sizeof *v);
		memcpy(v, k->h, k->n * sizeof *v);
		qsort(v, k->n, sizeof *v, cmp_hent);
		for (j = 0; j < k->n; j++)
			a->tmp[a->ntmp++] = v[j].b;
		free(v);
	}
}

/* ---- creation ----------------------------------------------------------- */

struct vp_alloc *
vp_alloc_new(const struct vp_alloc_conf *c, uint64_t capacity_bytes)
{
	struct vp_alloc *a = xcalloc(1, sizeof *a);
	size_t k;

	a->conf = *c;
	a->capacity = capacity_bytes;
	a->freelist = NONE;
	a->fb_free = UINT32_MAX;
	a->round512 = 1;
	for (k = 0; k < VP_ALLOC_BANDS; k++)
		if (c->roundup_power2_divisions[k] > 1)
			a->round512 = 0;
	a->unmapped_root[0] = a->unmapped_root[1] = NONE;
	a->rng = 2463534242u;
	/* ExpandableSegment: 1 1/8 of the device's memory of address space;
	 * without a size known, 1 TiB. */
	a->space = capacity_bytes ? capacity_bytes + capacity_bytes / 8 :
	    1ULL << 40;
	return a;
}

void
vp_alloc_free(struct vp_alloc *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nb; i++)
		if (a->b[i].live)
			free(a->b[i].uses);
	for (i = 0; i < a->nes; i++)
		free(a->es[i].mapped);
	for (i = 0; i < a->npend; i++)
		free(a->pend[i].v);
	for (i = 0; i < a->nfb; i++)
		free(a->fb[i].h);
	free(a->fb);
	free(a->ord[0]);
	free(a->ord[1]);
	free(a->htab);
	free(a->b);
	free(a->hpos);
	free(a->es);
	free(a->pend);
	free(a->tmp);
	free(a);
}

void
vp_alloc_set_fraction(struct vp_alloc *a, double fraction,
    uint64_t total_bytes)
{
	a->set_fraction = 1;
	a->allowed = (uint64_t)(fraction * (double)total_bytes);
	a->space = total_bytes + total_bytes / 8;
}

static int
gc_on(const struct vp_alloc *a)
{
	return a->set_fraction && a->conf.garbage_collection_threshold > 0;
}

/* ---- freeing and merging ------------------------------------------------ */

static int
free_and_idle(const struct vp_alloc *a, int32_t i)
{
	return i != NONE && !a->b[i].allocated && a->b[i].events == 0 &&
	    a->b[i].nuses == 0;
}

/* try_merge_blocks: dst absorbs its free neighbour src; src's bytes. */
static uint64_t
try_merge(struct vp_alloc *a, int32_t dst, int32_t src)
{
	struct blk *d = &a->b[dst], *s;
	uint64_t n;

	if (!free_and_idle(a, src) || a->b[src].mapped != d->mapped)
		return 0;
	s = &a->b[src];
	if (s->mapped)
		erase_free(a, src);
	else
		terase(a, &a->unmapped_root[s->small], BY_ADDR, src);
	if (d->prev == src) {
		d->addr = s->addr;
		d->prev = s->prev;
		if (d->prev != NONE)
			a->b[d->prev].next = dst;
	} else {
		d->next = s->next;
		if (d->next != NONE)
			a->b[d->next].prev = dst;
	}
	n = s->size;
	d->size += n;
	blk_delete(a, src);
	return n;
}

/* free_block: back into the cache, merged with free neighbours. */
static void
free_block(struct vp_alloc *a, int32_t i)
{
	uint64_t size = a->b[i].size, req = a->b[i].requested;

	try_merge(a, i, a->b[i].prev);
	try_merge(a, i, a->b[i].next);
	insert_free(a, i);
	stat_sub(&a->st.active_bytes, size);
	stat_sub(&a->st.requested_bytes, req);
}

static struct pending *
pending_for(struct vp_alloc *a, uint32_t stream, int add)
{
	size_t i;

	for (i = 0; i < a->npend; i++)
		if (a->pend[i].stream == stream)
			return &a->pend[i];
	if (!add)
		return NULL;
	a->pend = xreallocarray(a->pend, a->npend + 1, sizeof *a->pend);
	memset(&a->pend[a->npend], 0, sizeof *a->pend);
	a->pend[a->npend].stream = stream;
	return &a->pend[a->npend++];
}

/* insert_events: one event per recorded stream. */
static void
insert_events(struct vp_alloc *a, int32_t i)
{
	struct pending *p;
	uint32_t k;

	for (k = 0; k < a->b[i].nuses; k++) {
		p = pending_for(a, a->b[i].uses[k], 1);
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 16;
			p->v = xreallocarray(p->v, p->cap, sizeof *p->v);
		}
		p->v[p->n++] = i;
		a->b[i].events++;
	}
	free(a->b[i].uses);
	a->b[i].uses = NULL;
	a->b[i].nuses = a->b[i].capuses = 0;
}

static void
complete_events(struct vp_alloc *a, struct pending *p)
{
	size_t k;
	int32_t i;

	for (k = 0; k < p->n; k++) {
		i = p->v[k];
		if (--a->b[i].events == 0)
			free_block(a, i);
	}
	p->n = 0;
}

void
vp_alloc_sync_stream(struct vp_alloc *a, uint32_t stream)
{
	struct pending *p = pending_for(a, stream, 0);

	if (p != NULL)
		complete_events(a, p);
}

/* synchronize_and_free_events */
static void
sync_all(struct vp_alloc *a)
{
	size_t k;

	a->st.sync_all_streams++;
	for (k = 0; k < a->npend; k++)
		complete_events(a, &a->pend[k]);
}

/* ---- segments ------------------------------------------------------------ */

/* release_block: cudaFree an unsplit free segment. */
static void
release_block(struct vp_alloc *a, int32_t i)
{
	assert(a->b[i].es == NONE && a->b[i].prev == NONE &&
	    a->b[i].next == NONE);
	a->st.device_frees++;
	erase_free(a, i);
	stat_sub(&a->st.reserved_bytes, a->b[i].size);
	stat_sub(&a->st.segments, 1);
	blk_delete(a, i);
}

static void
splice(struct vp_alloc *a, int32_t x, int32_t before, int32_t after)
{
	if (before != NONE)
		a->b[before].next = x;
	a->b[x].prev = before;
	if (after != NONE)
		a->b[after].prev = x;
	a->b[x].next = after;
}

/* ExpandableSegment::map: map the pages under [addr, addr + size); the
 * bytes mapped, 0 when the driver is out of memory. */
static uint64_t
es_map(struct vp_alloc *a, struct eseg *e, uint64_t addr, uint64_t size)
{
	uint64_t lo = (addr - e->base) / e->page;
	uint64_t hi = (addr + size - e->base + e->page - 1) / e->page;
	uint64_t k, bytes = (hi - lo) * e->page;

	assert((addr - e->base) % e->page == 0 && hi <= e->npages);
	if (a->capacity != 0 &&
	    a->st.reserved_bytes.current + bytes > a->capacity)
		return 0;
	for (k = lo; k < hi; k++) {
		assert(!e->mapped[k]);
		e->mapped[k] = 1;
	}
	return bytes;
}

/* map_block: map size bytes at the front of an unmapped block. */
static int
map_block(struct vp_alloc *a, int32_t i, uint64_t size)
{
	struct eseg *e = &a->es[a->b[i].es];
	uint64_t got = es_map(a, e, a->b[i].addr, size);
	int32_t r;

	if (got == 0)
		return 0;
	terase(a, &a->unmapped_root[a->b[i].small], BY_ADDR, i);
	a->b[i].mapped = 1;
	if (got < a->b[i].size) {
		r = blk_new(a);
		a->b[r].addr = a->b[i].addr + got;
		a->b[r].size = a->b[i].size - got;
		a->b[r].stream = a->b[i].stream;
		a->b[r].small = a->b[i].small;
		a->b[r].es = a->b[i].es;
		a->b[r].mapped = 0;
		splice(a, r, i, a->b[i].next);
		tinsert(a, &a->unmapped_root[a->b[r].small], BY_ADDR, r);
		a->b[i].size = got;
	}
	try_merge(a, i, a->b[i].prev);
	try_merge(a, i, a->b[i].next);
	insert_free(a, i);
	stat_add(&a->st.reserved_bytes, got);
	a->st.device_allocs++;
	return 1;
}

/* Free, idle and (mapped or not) at least size bytes from i onwards. */
static int
has_space(const struct vp_alloc *a, int32_t i, uint64_t size)
{
	uint64_t n = 0;

	while (n < size && free_and_idle(a, i)) {
		n += a->b[i].size;
		i = a->b[i].next;
	}
	return n >= size;
}

/* find_expandable_block: the lowest address on this stream's segments of
 * the pool with room for size, else a new segment. */
static int32_t
find_expandable(struct vp_alloc *a, int small, uint32_t stream,
    uint64_t size)
{
	struct key k = { stream, 0, 0 };
	int32_t root = a->unmapped_root[small];
	int32_t it = tlower(a->b, BY_ADDR, root, &k, 0), c;
	struct eseg *e;

	for (; it != NONE && a->b[it].stream == stream;
	    it = tnext(a, it)) {
		c = it;
		if (free_and_idle(a, a->b[c].prev))
			c = a->b[c].prev;
		if (has_space(a, c, size))
			return c;
	}
	a->es = xreallocarray(a->es, a->nes + 1, sizeof *a->es);
	e = &a->es[a->nes];
	e->page = small ? VP_ALLOC_SMALL_BUFFER : VP_ALLOC_LARGE_BUFFER;
	e->npages = (a->space + e->page - 1) / e->page;
	e->base = a->next_addr;
	e->mapped = xcalloc(e->npages, 1);
	e->live = 1;
	a->next_addr += e->npages * e->page;
	a->st.expandable_segments++;
	c = blk_new(a);
	a->b[c].addr = e->base;
	a->b[c].size = e->npages * e->page;
	a->b[c].stream = stream;
	a->b[c].small = (uint8_t)small;
	a->b[c].es = (int32_t)a->nes++;
	a->b[c].mapped = 0;
	tinsert(a, &a->unmapped_root[small], BY_ADDR, c);
	return c;
}

/* try_allocate_expandable_block */
static int32_t
alloc_expandable(struct vp_alloc *a, int small, uint32_t stream,
    uint64_t size)
{
	int32_t c = find_expandable(a, small, stream, size), n;
	uint64_t want;

	if (!a->b[c].mapped &&
	    !map_block(a, c, a->b[c].size < size ? a->b[c].size : size))
		return NONE;
	while (a->b[c].size < size) {
		/* c is free and mapped, its next unmapped: map the rest,
		 * which merges c into it. */
		n = a->b[c].next;
		want = size - a->b[c].size;
		if (!map_block(a, n, a->b[n].size < want ? a->b[n].size : want))
			return NONE;
		c = n;
	}
	erase_free(a, c);
	return c;
}

/* unmap_block: give back the whole pages inside a free block. */
static void
unmap_block(struct vp_alloc *a, int32_t i)
{
	struct eseg *e = &a->es[a->b[i].es];
	uint64_t addr = a->b[i].addr, size = a->b[i].size;
	uint64_t lo = (addr - e->base + e->page - 1) / e->page;
	uint64_t hi = (addr + size - e->base) / e->page;
	uint64_t k, uaddr, usize, before, after;
	int32_t x;

	if (lo >= hi)
		return;
	for (k = lo; k < hi; k++)
		e->mapped[k] = 0;
	uaddr = e->base + lo * e->page;
	usize = (hi - lo) * e->page;
	erase_free(a, i);
	before = uaddr - addr;
	after = size - before - usize;
	if (before > 0) {
		x = blk_new(a);
		a->b[x].addr = addr;
		a->b[x].size = before;
		a->b[x].stream = a->b[i].stream;
		a->b[x].small = a->b[i].small;
		a->b[x].es = a->b[i].es;
		splice(a, x, a->b[i].prev, i);
		insert_free(a, x);
	}
	if (after > 0) {
		x = blk_new(a);
		a->b[x].addr = uaddr + usize;
		a->b[x].size = after;
		a->b[x].stream = a->b[i].stream;
		a->b[x].small = a->b[i].small;
		a->b[x].es = a->b[i].es;
		splice(a, x, i, a->b[i].next);
		insert_free(a, x);
	}
	a->b[i].addr = uaddr;
	a->b[i].size = usize;
	a->b[i].mapped = 0;
	try_merge(a, i, a->b[i].prev);
	try_merge(a, i, a->b[i].next);
	tinsert(a, &a->unmapped_root[a->b[i].small], BY_ADDR, i);
	stat_sub(&a->st.reserved_bytes, usize);
	a->st.device_frees++;
}

/* release_blocks: every unsplit free segment of a pool, all streams, and
 * every free page of its expandable segments. */
static void
release_blocks(struct vp_alloc *a, int small)
{
	size_t k, n;
	int32_t i;

	free_collect(a, small);
	n = 0;
	for (k = 0; k < a->ntmp; k++) {
		i = a->tmp[k];
		if (a->b[i].es != NONE)
			a->tmp[n++] = i;	/* unmapped after the sweep */
		else if (a->b[i].prev == NONE && a->b[i].next == NONE)
			release_block(a, i);
	}
	for (k = 0; k < n; k++) {
		i = a->tmp[k];
		unmap_block(a, i);
		if (a->b[i].prev == NONE && a->b[i].next == NONE) {
			/* release_expandable_segment */
			struct eseg *e = &a->es[a->b[i].es];

			terase(a, &a->unmapped_root[small], BY_ADDR, i);
			free(e->mapped);
			e->mapped = NULL;
			e->live = 0;
			a->st.expandable_segments--;
			blk_delete(a, i);
		}
	}
}

/* release_cached_blocks */
static void
release_cached(struct vp_alloc *a)
{
	sync_all(a);
	release_blocks(a, 0);
	release_blocks(a, 1);
}

void
vp_alloc_empty_cache(struct vp_alloc *a)
{
	release_cached(a);
}

/* release_available_cached_blocks: with max_split_size set, free oversize
 * segments of this pool and stream, the smallest one big enough or, when
 * none is, the largest ones until enough bytes are free.  The source would
 * cudaFree a split or expandable block too (it cannot normally meet one
 * here); we stop at one instead. */
static int
release_available(struct vp_alloc *a, int small, uint32_t stream,
    uint64_t size)
{
	uint64_t mss = a->conf.max_split_size_bytes, total = 0;
	uint64_t want = size < mss ? mss : size;
	size_t j;
	int32_t it, cur;

	if (mss == UINT64_MAX)
		return 0;
	/* j: the first free block at or after (stream, want). */
	free_collect(a, small);
	for (j = 0; j < a->ntmp; j++) {
		it = a->tmp[j];
		if (a->b[it].stream > stream || (a->b[it].stream == stream &&
		    a->b[it].size >= want))
			break;
	}
	it = j < a->ntmp ? a->tmp[j] : NONE;
	if (it != NONE && a->b[it].stream == stream) {
		if (a->b[it].es != NONE || a->b[it].prev != NONE ||
		    a->b[it].next != NONE)
			return 0;
		release_block(a, it);
		return 1;
	}
	/* Else the largest ones below it, downwards. */
	while (j > 0 && total < want) {
		cur = a->tmp[j - 1];
		if (a->b[cur].size < mss || a->b[cur].stream != stream ||
		    a->b[cur].es != NONE || a->b[cur].prev != NONE ||
		    a->b[cur].next != NONE)
			break;
		total += a->b[cur].size;
		release_block(a, cur);
		j--;
	}
	return total >= want;
}

/* garbage_collect_cached_blocks: free unsplit large segments that have
 * waited at least the average number of get_free_block calls, round after
 * round, until reserved is back under threshold × allowed. */
static void
garbage_collect(struct vp_alloc *a)
{
	uint64_t thr = (uint64_t)(a->conf.garbage_collection_threshold *
	    (double)a->allowed);
	uint64_t reserved = a->st.reserved_bytes.current, target, got = 0;
	uint64_t total_age = 0, age;
	size_t k, count = 0;
	int freed = 1;
	int32_t i;

	if (reserved <= thr)
		return;
	target = reserved - thr;
	free_collect(a, 0);
	for (k = 0; k < a->ntmp; k++) {
		i = a->tmp[k];
		if (a->b[i].es == NONE && a->b[i].prev == NONE &&
		    a->b[i].next == NONE) {
			total_age += a->gc_calls[0] - a->b[i].gc_base;
			count++;
		}
	}
	while (got < target && freed && count > 0) {
		double avg = (double)total_age / (double)count;

		freed = 0;
		free_collect(a, 0);
		for (k = 0; k < a->ntmp; k++) {
			i = a->tmp[k];
			age = a->gc_calls[0] - a->b[i].gc_base;
			if (a->b[i].es != NONE || a->b[i].prev != NONE ||
			    a->b[i].next != NONE || (double)age < avg)
				continue;
			freed = 1;
			got += a->b[i].size;
			total_age -= age;
			count--;
			release_block(a, i);
		}
	}
}

/* ---- malloc and free ---------------------------------------------------- */

static uint64_t
exp_size(const struct vp_alloc *a, int32_t i)
{
	int32_t n = a->b[i].next;

	return a->b[i].size + (n != NONE && !a->b[n].mapped ? a->b[n].size : 0);
}

/* get_free_block: best fit on the same stream, within the oversize
 * rules. */
static int32_t
get_free_block(struct vp_alloc *a, int small, uint32_t stream, uint64_t size)
{
	uint64_t mss = a->conf.max_split_size_bytes;
	int32_t it, nx;

	if (gc_on(a))
		a->gc_calls[small]++;
	it = free_lower(a, small, stream, size);
	if (it == NONE || a->b[it].stream != stream)
		return NONE;
	if (a->b[it].es != NONE && a->conf.expandable_segments) {
		/* A block followed by unmapped space counts as the size it
		 * can grow to. */
		nx = free_next(a, it);
		while (a->b[it].es != NONE && nx != NONE &&
		    a->b[nx].stream == stream &&
		    exp_size(a, nx) < exp_size(a, it)) {
			it = nx;
			nx = free_next(a, nx);
		}
	}
	/* No oversize block for a request under max_split_size, and an
	 * oversize block only within max_non_split_rounding. */
	if (size < mss && a->b[it].size >= mss)
		return NONE;
	if (size >= mss && a->b[it].size >=
	    vp_add_sat(size, a->conf.max_non_split_rounding_bytes))
		return NONE;
	erase_free(a, it);
	return it;
}

/* alloc_block: a new segment (or mapped pages), or NONE. */
static int32_t
alloc_block(struct vp_alloc *a, int small, uint32_t stream, uint64_t size,
    uint64_t alloc_size, int retry)
{
	uint64_t reserved = a->st.reserved_bytes.current;
	int32_t i;

	if (retry)
		a->st.alloc_retries++;
	if (a->set_fraction && reserved + alloc_size > a->allowed)
		return NONE;
	if (a->conf.expandable_segments)
		return alloc_expandable(a, small, stream, size);
	if (a->capacity != 0 && reserved + alloc_size > a->capacity)
		return NONE;
	i = blk_new(a);
	a->b[i].addr = a->next_addr;
	a->b[i].size = alloc_size;
	a->b[i].stream = stream;
	a->b[i].small = (uint8_t)small;
	a->next_addr += alloc_size;
	stat_add(&a->st.segments, 1);
	stat_add(&a->st.reserved_bytes, alloc_size);
	a->st.device_allocs++;
	return i;
}

static vp_alloc_handle
handle_of(const struct vp_alloc *a, int32_t i)
{
	return (uint64_t)a->b[i].gen << 32 | (uint32_t)i;
}

static int32_t
block_of(const struct vp_alloc *a, vp_alloc_handle h)
{
	uint64_t i = h & 0xffffffffu;

	if (h == 0 || i >= a->nb || !a->b[i].live || !a->b[i].allocated ||
	    a->b[i].gen != (uint32_t)(h >> 32))
		return NONE;
	return (int32_t)i;
}

int
vp_alloc_allocate(struct vp_alloc *a, uint64_t bytes, uint32_t stream,
    vp_alloc_handle *h)
{
	uint64_t size, alloc_size;
	int32_t i, r;
	int small;

	*h = 0;
	if (bytes == 0)
		return VP_ALLOC_OK;	/* torch hands out a null pointer */
	if (bytes >= 1ULL << 60) {	/* "more than 1EB" */
		a->st.ooms++;
		a->st.last_oom_bytes = bytes;
		return VP_ALLOC_OOM;
	}
	size = a->round512 ? (bytes < VP_ALLOC_MIN_BLOCK ? VP_ALLOC_MIN_BLOCK :
	    (bytes + VP_ALLOC_MIN_BLOCK - 1) & ~(VP_ALLOC_MIN_BLOCK - 1)) :
	    vp_alloc_round_size(&a->conf, bytes);
	small = size <= VP_ALLOC_SMALL_SIZE;
	alloc_size = vp_alloc_segment_size(size);
	i = get_free_block(a, small, stream, size);
	if (i == NONE) {
		if (gc_on(a))
			garbage_collect(a);
		i = alloc_block(a, small, stream, size, alloc_size, 0);
		if (i == NONE && release_available(a, small, stream, size))
			i = alloc_block(a, small, stream, size, alloc_size, 0);
		if (i == NONE) {
			release_cached(a);
			i = alloc_block(a, small, stream, size, alloc_size, 1);
		}
	}
	if (i == NONE) {
		a->st.ooms++;
		a->st.last_oom_bytes = alloc_size;
		return VP_ALLOC_OOM;
	}
	/* alloc_found_block: split off the rest when should_split says so;
	 * the original block becomes the remainder. */
	if (vp_alloc_should_split(&a->conf, small, a->b[i].size, size)) {
		r = i;
		i = blk_new(a);
		a->b[i].addr = a->b[r].addr;
		a->b[i].size = size;
		a->b[i].stream = stream;
		a->b[i].small = (uint8_t)small;
		a->b[i].es = a->b[r].es;
		splice(a, i, a->b[r].prev, r);
		a->b[r].addr += size;
		a->b[r].size -= size;
		insert_free(a, r);
	}
	a->b[i].allocated = 1;
	a->b[i].gen++;		/* a new handle */
	a->b[i].requested = bytes;
	stat_add(&a->st.allocations, 1);
	stat_add(&a->st.allocated_bytes, a->b[i].size);
	stat_add(&a->st.active_bytes, a->b[i].size);
	stat_add(&a->st.requested_bytes, bytes);
	*h = handle_of(a, i);
	return VP_ALLOC_OK;
}

int
vp_alloc_record_stream(struct vp_alloc *a, vp_alloc_handle h,
    uint32_t stream)
{
	int32_t i = block_of(a, h);
	struct blk *x;
	uint32_t k;

	if (i == NONE)
		return VP_ALLOC_BAD_HANDLE;
	x = &a->b[i];
	if (stream == x->stream)
		return VP_ALLOC_OK;
	for (k = 0; k < x->nuses; k++)
		if (x->uses[k] == stream)
			return VP_ALLOC_OK;
	if (x->nuses == x->capuses) {
		x->capuses = x->capuses ? 2 * x->capuses : 2;
		x->uses = xreallocarray(x->uses, x->capuses, sizeof *x->uses);
	}
	x->uses[x->nuses++] = stream;
	return VP_ALLOC_OK;
}

int
vp_alloc_deallocate(struct vp_alloc *a, vp_alloc_handle h)
{
	int32_t i;

	if (h == 0)
		return VP_ALLOC_OK;
	if ((i = block_of(a, h)) == NONE)
		return VP_ALLOC_BAD_HANDLE;
	a->b[i].allocated = 0;
	a->b[i].gen++;		/* the handle dies */
	stat_sub(&a->st.allocations, 1);
	stat_sub(&a->st.allocated_bytes, a->b[i].size);
	if (a->b[i].nuses > 0)
		insert_events(a, i);
	else
		free_block(a, i);
	return VP_ALLOC_OK;
}

/* ---- queries --------------------------------------------------------------- */

void
vp_alloc_reset_peaks(struct vp_alloc *a)
{
	struct vp_alloc_stat *s[] = { &a->st.allocated_bytes,
	    &a->st.requested_bytes, &a->st.active_bytes,
	    &a->st.reserved_bytes, &a->st.allocations, &a->st.segments };
	size_t k;

	for (k = 0; k < VP_NELEM(s); k++)
		s[k]->peak = s[k]->current;
}

const struct vp_alloc_stats *
vp_alloc_stats(const struct vp_alloc *a)
{
	return &a->st;
}

int
vp_alloc_block_info(const struct vp_alloc *a, vp_alloc_handle h,
    struct vp_alloc_block *out)
{
	int32_t i = block_of(a, h);

	if (i == NONE)
		return VP_ALLOC_BAD_HANDLE;
	out->addr = a->b[i].addr;
	out->bytes = a->b[i].size;
	out->requested_bytes = a->b[i].requested;
	out->stream = a->b[i].stream;
	out->small_pool = a->b[i].small;
	return VP_ALLOC_OK;
}

static int
cmp_addr(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;

	return p < q ? -1 : p > q;
}

void
vp_alloc_snapshot(const struct vp_alloc *a, struct vp_buf *out)
{
	/* Heads of mapped ranges, as (addr, index) pairs sorted by addr. */
	uint64_t *h = xreallocarray(NULL, 2 * a->nb + 2, sizeof *h);
	size_t n = 0, k;
	int32_t i;

	for (k = 0; k < a->nb; k++) {
		const struct blk *x = &a->b[k];

		if (x->live && x->mapped &&
		    (x->prev == NONE || !a->b[x->prev].mapped)) {
			h[2 * n] = x->addr;
			h[2 * n + 1] = k;
			n++;
		}
	}
	qsort(h, n, 2 * sizeof *h, cmp_addr);
	for (k = 0; k < n; k++) {
		uint64_t total = 0;

		i = (int32_t)h[2 * k + 1];
		for (int32_t j = i; j != NONE && a->b[j].mapped;
		    j = a->b[j].next)
			total += a->b[j].size;
		vp_buf_printf(out, "%s s%u 0x%llx %llu:",
		    a->b[i].small ? "small" : "large", a->b[i].stream,
		    (unsigned long long)a->b[i].addr,
		    (unsigned long long)total);
		for (; i != NONE && a->b[i].mapped; i = a->b[i].next)
			vp_buf_printf(out, " %c%llu", a->b[i].allocated ? 'A' :
			    a->b[i].events > 0 ? 'P' : 'F',
			    (unsigned long long)a->b[i].size);
		vp_buf_add(out, "\n");
	}
	free(h);
}
