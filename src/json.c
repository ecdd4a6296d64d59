/* json.c — the streaming JSON writer (see json.h). */
#include "json.h"

#include <assert.h>
#include <math.h>

void
vp_json_init(struct vp_json *j, struct vp_buf *out)
{
	j->out = out;
	j->depth = 0;
}

/* What each style writes after an opening bracket, before the first
 * and every later value, and before the closing bracket. */
static const struct {
	const char *open, *first, *next, *close;
} styles[] = {
	[VP_JSON_INLINE] = { "", "", ", ", "" },
	[VP_JSON_BLOCK] = { "\n", "  ", ",\n  ", "\n" },
};

/* What goes before every value: the container's separator, then the key
 * inside an object.  At the top level there is neither. */
static void
member(struct vp_json *j, const char *key)
{
	struct vp_json_level *lv;

	if (j->depth == 0) {
		assert(key == NULL);
		return;
	}
	lv = &j->lv[j->depth - 1];
	assert((key != NULL) == lv->object);
	if (lv->n > 0 && lv->brk)
		vp_buf_printf(j->out, ",\n%*s", j->depth, "");
	else
		vp_buf_add(j->out, lv->n > 0 ? styles[lv->style].next :
		    styles[lv->style].first);
	lv->n++;
	lv->brk = false;
	if (key != NULL) {
		vp_buf_json_str(j->out, key);
		vp_buf_add(j->out, ": ");
	}
}

static void
begin(struct vp_json *j, const char *key, bool object,
    enum vp_json_style style)
{
	assert(j->depth < VP_JSON_MAXDEPTH);
	member(j, key);
	vp_buf_add(j->out, object ? "{" : "[");
	vp_buf_add(j->out, styles[style].open);
	j->lv[j->depth].object = object;
	j->lv[j->depth].style = style;
	j->lv[j->depth].n = 0;
	j->lv[j->depth].brk = false;
	j->depth++;
}

void
vp_json_object(struct vp_json *j, const char *key, enum vp_json_style style)
{
	begin(j, key, true, style);
}

void
vp_json_array(struct vp_json *j, const char *key, enum vp_json_style style)
{
	begin(j, key, false, style);
}

void
vp_json_end(struct vp_json *j)
{
	assert(j->depth > 0);
	j->depth--;
	vp_buf_add(j->out, styles[j->lv[j->depth].style].close);
	vp_buf_add(j->out, j->lv[j->depth].object ? "}" : "]");
	if (j->depth == 0)
		vp_buf_add(j->out, "\n");
}

void
vp_json_break(struct vp_json *j)
{
	assert(j->depth > 0);
	j->lv[j->depth - 1].brk = true;
}

void
vp_json_str(struct vp_json *j, const char *key, const char *s)
{
	member(j, key);
	if (s != NULL)
		vp_buf_json_str(j->out, s);
	else
		vp_buf_add(j->out, "null");
}

void
vp_json_u64(struct vp_json *j, const char *key, uint64_t v)
{
	member(j, key);
	vp_buf_printf(j->out, "%llu", (unsigned long long)v);
}

void
vp_json_bool(struct vp_json *j, const char *key, bool v)
{
	member(j, key);
	vp_buf_add(j->out, v ? "true" : "false");
}

void
vp_json_null(struct vp_json *j, const char *key)
{
	member(j, key);
	vp_buf_add(j->out, "null");
}

void
vp_json_num(struct vp_json *j, const char *key, double v)
{
	member(j, key);
	if (isfinite(v))
		vp_buf_printf(j->out, "%g", v);
	else
		vp_buf_add(j->out, "null");
}

void
vp_json_fixed(struct vp_json *j, const char *key, double v, int places)
{
	member(j, key);
	if (isfinite(v))
		vp_buf_printf(j->out, "%.*f", places, v);
	else
		vp_buf_add(j->out, "null");
}
