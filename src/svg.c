/* svg.c — shared SVG pieces (see svg.h). */
#include "svg.h"

#include <string.h>

void
vp_svg_open(struct vp_buf *o, double w, double h)
{
	vp_buf_printf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
	    "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"white\"/>\n", w, h);
}

void
vp_svg_close(struct vp_buf *o)
{
	vp_buf_add(o, "</svg>\n");
}

void
vp_svg_text(struct vp_buf *o, const char *s)
{
	struct vp_buf e;
	const char *p;

	vp_buf_init(&e);
	vp_buf_add_esc(&e, s, 0);
	for (p = e.s; *p; p++) {
		if (*p == '<') vp_buf_add(o, "&lt;");
		else if (*p == '>') vp_buf_add(o, "&gt;");
		else if (*p == '&') vp_buf_add(o, "&amp;");
		else vp_buf_addn(o, p, 1);
	}
	vp_buf_free(&e);
}

void
vp_svg_label(struct vp_buf *o, double x, double y, const char *anchor,
    double size, const char *text)
{
	vp_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\"", x, y);
	if (anchor != NULL)
		vp_buf_printf(o, " text-anchor=\"%s\"", anchor);
	if (size > 0)
		vp_buf_printf(o, " font-size=\"%g\"", size);
	vp_buf_add(o, ">");
	vp_svg_text(o, text);
	vp_buf_add(o, "</text>\n");
}

void
vp_svg_line(struct vp_buf *o, double x1, double y1, double x2, double y2,
    const char *stroke)
{
	vp_buf_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
	    "y2=\"%.1f\" stroke=\"%s\"/>\n", x1, y1, x2, y2, stroke);
}

void
vp_svg_rect(struct vp_buf *o, double x, double y, double w, double h,
    const char *fill)
{
	vp_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
	    "height=\"%.1f\" fill=\"%s\"/>\n", x, y, w, h, fill);
}

const char *
vp_svg_term_color(enum vp_cat c)
{
	static const char *const color[VP_CAT_COUNT] = {
		[VP_CAT_WEIGHTS] = "#4a7bd0", [VP_CAT_MASTER] = "#c07820",
		[VP_CAT_GRADS] = "#8fb3e8", [VP_CAT_OPTIM] = "#e0a030",
		[VP_CAT_CAST] = "#d0d0a0", [VP_CAT_ACT] = "#2a9d3a",
		[VP_CAT_LOGITS] = "#90c870", [VP_CAT_TRANSIENT] = "#b0b0b0",
		[VP_CAT_INPUT] = "#2a9d3a", [VP_CAT_ADAPTER] = "#9a5cc6",
		[VP_CAT_FP8] = "#5fb8b0",
	};

	return c < VP_CAT_COUNT && color[c] != NULL ? color[c] : "#808080";
}

double
vp_svg_legend(struct vp_buf *o, double x, double y, const enum vp_cat *cats,
    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		vp_buf_printf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
		    "height=\"10\" fill=\"%s\"/><text x=\"%.0f\" "
		    "y=\"%.0f\">%s</text>\n", x, y, vp_svg_term_color(cats[i]),
		    x + 13, y + 9, vp_cat_names[cats[i]]);
		x += 14 + 6.2 * (double)strlen(vp_cat_names[cats[i]]) + 12;
	}
	return x;
}
