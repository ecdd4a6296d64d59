/* util.c — see util.h. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
oom(void)
{
	/* Not an expected failure: the contract says x* allocators abort. */
	fputs("vramplan: out of memory\n", stderr);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		oom();
	return p;
}

void *
xreallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		oom();
	return xrealloc(p, n * size);
}

char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);
	memcpy(p, s, n);
	return p;
}

uint64_t
vp_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t
vp_mul_sat(uint64_t a, uint64_t b)
{
	if (a != 0 && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

uint64_t
vp_scale(uint64_t bytes, double factor)
{
	double v = (double)bytes * factor;
	if (!(v >= 0))
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	/* Round in double: llround's long long would overflow past 2^63. */
	return (uint64_t)floor(v + 0.5);
}

void
vp_buf_init(struct vp_buf *b)
{
	b->cap = 256;
	b->s = xmalloc(b->cap);
	b->s[0] = '\0';
	b->len = 0;
}

void
vp_buf_free(struct vp_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

static void
reserve(struct vp_buf *b, size_t more)
{
	if (b->s == NULL)
		vp_buf_init(b);
	if (b->len + more + 1 <= b->cap)
		return;
	while (b->len + more + 1 > b->cap)
		b->cap *= 2;
	b->s = xrealloc(b->s, b->cap);
}

void
vp_buf_addn(struct vp_buf *b, const char *s, size_t n)
{
	reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void
vp_buf_add(struct vp_buf *b, const char *s)
{
	vp_buf_addn(b, s, strlen(s));
}

void
vp_buf_vprintf(struct vp_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	reserve(b, (size_t)n);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
vp_buf_printf(struct vp_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vp_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void
vp_buf_json_str(struct vp_buf *b, const char *s)
{
	const unsigned char *p;
	uint32_t cp;
	size_t n;

	vp_buf_add(b, "\"");
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': vp_buf_add(b, "\\\""); break;
		case '\\': vp_buf_add(b, "\\\\"); break;
		case '\n': vp_buf_add(b, "\\n"); break;
		case '\t': vp_buf_add(b, "\\t"); break;
		case '\r': vp_buf_add(b, "\\r"); break;
		default:
			/* Control characters as \u00XX: C0 (JSON requires
			 * it), DEL and C1 (so that printing the JSON on a
			 * terminal sends no escape sequence); a byte that is
			 * not UTF-8 as U+FFFD (JSON text is UTF-8). */
			n = vp_utf8_len(p, &cp);
			if (n == 0)
				vp_buf_add(b, "\\ufffd");
			else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 &&
			    cp <= 0x9f))
				vp_buf_printf(b, "\\u%04x", (unsigned)cp);
			else
				vp_buf_addn(b, (const char *)p, n);
			if (n > 1)
				p += n - 1;
		}
	}
	vp_buf_add(b, "\"");
}

size_t
vp_utf8_len(const unsigned char *p, uint32_t *cp)
{
	uint32_t c;
	size_t n, i;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)	/* the NUL included */
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	/* Overlong three- and four-byte forms, surrogates, past U+10FFFF
	 * (two-byte overlong forms are the 0xc0 and 0xc1 leads). */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	*cp = c;
	return n;
}

/* The bytes of one code point or stray byte at p, escaped into b; returns
 * how many bytes of p it took. */
static size_t
esc_one(struct vp_buf *b, const unsigned char *p, int keep_newlines)
{
	uint32_t cp;
	size_t n = vp_utf8_len(p, &cp), i;

	if (n == 0) {
		vp_buf_printf(b, "\\x%02x", p[0]);
		return 1;
	}
	if (cp >= 0x20 && cp != 0x7f && (cp < 0x80 || cp > 0x9f)) {
		vp_buf_addn(b, (const char *)p, n);
		return n;
	}
	switch (cp) {
	case '\n':
		vp_buf_add(b, keep_newlines ? "\n" : "\\n");
		break;
	case '\t': vp_buf_add(b, "\\t"); break;
	case '\r': vp_buf_add(b, "\\r"); break;
	case 0x1b: vp_buf_add(b, "\\e"); break;
	default:
		for (i = 0; i < n; i++)
			vp_buf_printf(b, "\\x%02x", p[i]);
	}
	return n;
}

void
vp_buf_add_esc(struct vp_buf *b, const char *s, int keep_newlines)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p)
		p += esc_one(b, p, keep_newlines);
}

const char *
vp_esc(const char *s, char *buf, size_t n)
{
	const unsigned char *p;
	struct vp_buf b;
	uint32_t cp;
	size_t k, fit = 0;

	if (s == NULL || n == 0)
		return s;
	for (p = (const unsigned char *)s; *p; p += k) {
		k = vp_utf8_len(p, &cp);
		if (k == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 &&
		    cp <= 0x9f))
			break;
	}
	if (*p == '\0')
		return s;
	vp_buf_init(&b);
	vp_buf_add_esc(&b, s, 0);
	if (b.len < n) {
		fit = b.len;
	} else {
		/* Cut after the last whole character (or escape) that leaves
		 * room for "..." and the NUL. */
		b.len = 0;
		for (p = (const unsigned char *)s; *p; ) {
			p += esc_one(&b, p, 0);
			if (b.len + 4 > n)
				break;
			fit = b.len;
		}
		b.len = fit;
		b.s[fit] = '\0';
		if (n >= 4) {
			vp_buf_add(&b, "...");
			fit = b.len;
		}
	}
	memcpy(buf, b.s, fit);
	buf[fit] = '\0';
	vp_buf_free(&b);
	return buf;
}

int
vp_parse_hours(const char *s, double *hours, const char **errstr)
{
	static const struct { char unit; double hours; } units[] = {
		{ 'h', 1 }, { 'd', 24 }, { 'w', 168 },
	};
	char num[64];
	size_t n = s != NULL ? strlen(s) : 0, i;
	double scale = 1;

	*errstr = "invalid";
	if (n == 0 || n >= sizeof num)
		return -1;
	memcpy(num, s, n + 1);
	for (i = 0; i < VP_NELEM(units); i++)
		if (num[n - 1] == units[i].unit) {
			num[n - 1] = '\0';
			scale = units[i].hours;
			break;
		}
	/* A year of GPU time at most: beyond that a deadline means nothing
	 * the catalog's prices could say. */
	if (vp_parse_double(num, 1e-3, 8784 / scale, hours, errstr) != 0)
		return -1;
	*hours *= scale;
	return 0;
}

int
vp_parse_double(const char *s, double min, double max, double *out,
    const char **errstr)
{
	char *end;
	double v;

	*errstr = "invalid";
	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end != '\0' || end == s)
		return -1;
	if (isnan(v))
		return -1;
	/* ERANGE with a tiny result is underflow: v is the nearest double. */
	if (errno == ERANGE && fabs(v) <= DBL_MIN)
		errno = 0;
	if (errno == ERANGE || v > max) {
		*errstr = v < min ? "too small" : "too large";
		return -1;
	}
	if (v < min) {
		*errstr = "too small";
		return -1;
	}
	*errstr = NULL;
	*out = v;
	return 0;
}

int
vp_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out,
    const char **errstr)
{
	const char *p;
	char *end;
	unsigned long long v;
	double d;

	*errstr = "invalid";
	if (s == NULL || *s == '\0')
		return -1;
	for (p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			break;
	if (*p == '\0') {
		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno == ERANGE) {
			*errstr = "too large";
			return -1;
		}
	} else {
		/* Exponent or decimal form (2e9, 1.5e6): must be whole. */
		if (*s == '-') {
			if (vp_parse_double(s, -1e300, 1e300, &d, errstr) == 0)
				*errstr = "too small";
			return -1;
		}
		if (vp_parse_double(s, 0, 1e300, &d, errstr) != 0)
			return -1;
		if (d != floor(d)) {
			*errstr = "invalid";
			return -1;
		}
		if (d >= 18446744073709551615.0) {
			*errstr = "too large";
			return -1;
		}
		v = (unsigned long long)d;
	}
	if (v < min) {
		*errstr = "too small";
		return -1;
	}
	if (v > max) {
		*errstr = "too large";
		return -1;
	}
	*errstr = NULL;
	*out = v;
	return 0;
}

void
vp_nearest_divisors(uint64_t n, uint64_t v, uint64_t *lo, uint64_t *hi)
{
	uint64_t i;

	*lo = *hi = 0;
	for (i = v; i >= 1; i--)
		if (n % i == 0) {
			*lo = i;
			break;
		}
	for (i = v ? v : 1; i <= n; i++)
		if (n % i == 0) {
			*hi = i;
			break;
		}
}

int
vp_strcaseeq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

size_t
vp_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t *prev2, *prev, *cur, *t, r;

	if (la > 64 || lb > 64)
		return la > lb ? la : lb;
	prev2 = xcalloc(lb + 1, sizeof *prev2);
	prev = xcalloc(lb + 1, sizeof *prev);
	cur = xcalloc(lb + 1, sizeof *cur);
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]);
			int cb = tolower((unsigned char)b[j - 1]);
			size_t cost = ca != cb;
			size_t v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (prev[j - 1] + cost < v)
				v = prev[j - 1] + cost;
			if (i > 1 && j > 1 &&
			    ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb &&
			    prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	r = prev[lb];
	free(prev2);
	free(prev);
	free(cur);
	return r;
}

const char *
vp_closest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t bestd = SIZE_MAX, i, limit;

	/* A near miss: at most a third of the word's letters wrong, min 1. */
	limit = strlen(word) / 3;
	if (limit < 1)
		limit = 1;
	for (i = 0; i < n; i++) {
		size_t d = vp_edit_distance(word, cands[i]);
		if (d < bestd) {
			bestd = d;
			best = cands[i];
		}
	}
	return bestd <= limit ? best : NULL;
}

/* Round v to d decimals, as printf would show it. */
static double
shown_value(double v, int d)
{
	double p = pow(10, d);

	return floor(v * p + 0.5) / p;
}

/* The unit is chosen after rounding, so 1 MiB - 1 B shows as 1.0 MiB. */
const char *
vp_fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	static const int decimals[] = { 1, 1, 2, 2 };
	double scaled = (double)bytes / 1024.0;
	int u = 0;

	if (bytes < 1024) {
		snprintf(buf, n, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (u < 3 && shown_value(scaled, decimals[u]) >= 1024.0) {
		scaled /= 1024.0;
		u++;
	}
	snprintf(buf, n, "%.*f %s", decimals[u], scaled, unit[u]);
	return buf;
}

const char *
vp_fmt_count(char *buf, size_t n, uint64_t c)
{
	static const char *const unit[] = { "K", "M", "B", "T" };
	static const int decimals[] = { 1, 1, 2, 2 };
	double scaled = (double)c / 1000.0;
	int u = 0;

	if (c < 1000) {
		snprintf(buf, n, "%llu", (unsigned long long)c);
		return buf;
	}
	while (u < 3 && shown_value(scaled, decimals[u]) >= 1000.0) {
		scaled /= 1000.0;
		u++;
	}
	snprintf(buf, n, "%.*f%s", decimals[u], scaled, unit[u]);
	return buf;
}

void
vp_buf_alternatives(struct vp_buf *b, const char *prefix,
    const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		vp_buf_printf(b, "%s%s%s", i == 0 ? "" : i + 1 == n ? " or " :
		    ", ", prefix, names[i]);
}

const char *
vp_fmt_hours(char *b, size_t n, double h)
{
	if (isnan(h))
		snprintf(b, n, "-");
	else if (h < 48)
		snprintf(b, n, "%.1f h", h);
	else
		snprintf(b, n, "%.1f d", h / 24);
	return b;
}

const char *
vp_fmt_usd(char *b, size_t n, double v)
{
	if (isnan(v))
		snprintf(b, n, "no price");
	else if (v >= 1e6)
		snprintf(b, n, "$%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(b, n, "$%.0fk", v / 1e3);
	else
		snprintf(b, n, "$%.0f", v);
	return b;
}
