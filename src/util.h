/*
 * util.h — small helpers shared by every module: allocation that aborts on
 * out-of-memory, saturating byte arithmetic, a growable string buffer,
 * strtonum-style number parsing, and "did you mean" suggestions.
 *
 * Pure: no I/O except abort() on out-of-memory.  Any module may include it.
 * Ownership: x* allocators return memory the caller frees with free();
 * struct vp_buf owns its text until vp_buf_free().
 */
#ifndef VP_UTIL_H
#define VP_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define VP_NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define VP_GIB (1024.0 * 1024.0 * 1024.0)
#define VP_MIB (1024.0 * 1024.0)

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);

/* Saturating arithmetic on byte counts: a sum past UINT64_MAX stays there. */
uint64_t vp_add_sat(uint64_t a, uint64_t b);
uint64_t vp_mul_sat(uint64_t a, uint64_t b);
/* a * b / c for byte counts with fractional factors; rounds to nearest. */
uint64_t vp_scale(uint64_t bytes, double factor);

/* A growable NUL-terminated text buffer. */
struct vp_buf {
	char *s;
	size_t len;
	size_t cap;
};
void vp_buf_init(struct vp_buf *b);
void vp_buf_free(struct vp_buf *b);
void vp_buf_add(struct vp_buf *b, const char *s);
void vp_buf_addn(struct vp_buf *b, const char *s, size_t n);
void vp_buf_printf(struct vp_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vp_buf_vprintf(struct vp_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Append names as alternatives, each after prefix: "--a, --b or --c"
 * (for "ambiguous: --x could be --xa or --xb"). */
void vp_buf_alternatives(struct vp_buf *b, const char *prefix,
    const char *const *names, size_t n);
/* Append s as a JSON string literal, quotes included. */
void vp_buf_json_str(struct vp_buf *b, const char *s);

/*
 * strtonum-style parsing: the whole string must be a number in [min, max].
 * Returns 0 and sets *out, or -1 and sets *errstr to "invalid",
 * "too small" or "too large".  Integers accept an exponent form such as
 * 2e9 when it denotes a whole number.
 */
int vp_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out,
    const char **errstr);
/*
 * A duration in hours: a number of hours, or a number with a unit, h
 * (hours), d (days) or w (weeks): "36", "36h", "30d", "2w".  Positive and
 * finite; *errstr as vp_parse_double's.
 */
int vp_parse_hours(const char *s, double *hours, const char **errstr);
int vp_parse_double(const char *s, double min, double max, double *out,
    const char **errstr);

/* Edit distance (optimal string alignment), case-insensitive. */
size_t vp_edit_distance(const char *a, const char *b);
/* The candidate closest to word, or NULL when none is near enough. */
const char *vp_closest(const char *word, const char *const *cands, size_t n);

int vp_strcaseeq(const char *a, const char *b);

/* The divisors of n nearest to v, below and above (0 when none), for
 * "nearest valid" hints. */
void vp_nearest_divisors(uint64_t n, uint64_t v, uint64_t *lo, uint64_t *hi);

/* Bytes as "12.34 GiB" (binary units, 2 decimals) into buf of size n. */
const char *vp_fmt_bytes(char *buf, size_t n, uint64_t bytes);
/* "7.0 h", "12.3 d" ("-" for NAN); "$217", "$12k", "$1.20M" ("no price"
 * for NAN): as compare prints them. */
const char *vp_fmt_hours(char *buf, size_t n, double hours);
const char *vp_fmt_usd(char *buf, size_t n, double usd);
/* A count as "8.03B", "124.4M", "7.5K". */
const char *vp_fmt_count(char *buf, size_t n, uint64_t count);

/*
 * Text from the user (model names, file names, a catalog's card names) on
 * a terminal: control characters and escape sequences must not reach it.
 * A control character (C0, DEL, or C1 as UTF-8, U+0080 to U+009F) is
 * shown C-style: \t, \n, \r and \e (ESC), every other byte as \xHH; a
 * byte that is not part of valid UTF-8 as \xHH too.  A backslash is kept
 * as it is (the text is for reading, not for parsing back).
 *
 * vp_utf8_len: bytes of the valid UTF-8 sequence at p (1 to 4), 0 when p
 *   starts none (a stray continuation byte, an overlong form, a
 *   surrogate, past U+10FFFF, or cut short); *cp gets the code point.
 * vp_esc: s itself when it needs no escaping, else its escaped form in
 *   buf of size n (cut with "..." when longer), for one printf field.
 * vp_buf_add_esc: append s escaped; keep_newlines keeps '\n' (a
 *   multi-line message).
 */
#define VP_ESC_LEN 256		/* a buffer for vp_esc: names are short */
size_t vp_utf8_len(const unsigned char *p, uint32_t *cp);
const char *vp_esc(const char *s, char *buf, size_t n);
void vp_buf_add_esc(struct vp_buf *b, const char *s, int keep_newlines);

#endif
