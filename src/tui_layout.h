/*
 * tui_layout.h — the TUI's screen as a pure function: where each panel
 * goes for a terminal of w x h cells, and the view model, every panel
 * drawn into a grid of attributed cells.
 *
 * The memory panel places the rows vp_report_rows gives, with the byte
 * counts vp_fmt_bytes spells and the bars vp_report_bar draws; the
 * verdict, the peak, the time and the parallel layout come from the
 * text report's own functions (report.h).  So the golden tests of the
 * text report also cover the numbers the TUI shows, and tui.c only
 * copies cells to the terminal.
 *
 * Layout: a header line at the top and the status line at the bottom;
 * between them, from 64 columns and 10 lines on, the knob panel on the
 * left and the memory panel, the timeline and the time-and-cost panel
 * stacked on the right; below that, one column of whatever fits, the
 * memory panel first, then the knobs, the cost and the timeline.  The
 * status line is always there; panels never overlap and never leave
 * the screen (tests/test_tui_layout.c checks every size from 40 x 12 to
 * 300 x 100).
 *
 * Pure.  struct vp_screen owns its cells; vp_screen_free releases them.
 */
#ifndef VP_TUI_LAYOUT_H
#define VP_TUI_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "tui_knobs.h"

struct vp_rect {
	int x, y, w, h;		/* w or h 0: the panel is not shown */
};

#define VP_PANEL_LIST(X) \
	X(HEADER, "header") X(KNOBS, "knobs") X(MEMORY, "memory") \
	X(TIMELINE, "timeline") X(COST, "cost") X(STATUS, "status")
#define X(e, s) VP_PANEL_##e,
enum vp_panel { VP_PANEL_LIST(X) VP_PANEL_COUNT };
#undef X
extern const char *const vp_panel_names[VP_PANEL_COUNT];

struct vp_layout {
	struct vp_rect p[VP_PANEL_COUNT];
	bool columns;		/* knobs beside the rest */
};
void vp_tui_layout(int w, int h, struct vp_layout *out);
/* The rectangle of an overlay (help, lists, the command line) that
 * would like want lines: centred over the panels, never off screen. */
struct vp_rect vp_tui_overlay_rect(const struct vp_layout *l, int w, int h,
    int want);

/* Cell attributes; tui.c maps them to colours or to bold/reverse. */
#define VP_ATTR_LIST(X) \
	X(NORMAL) X(HEADER) X(TITLE) X(SELECT) X(DIM) X(BOLD) X(GOOD) \
	X(WARN) X(BAD) X(CAP) X(FWD) X(LOSS) X(BWD) X(OPT) X(PEAK) \
	X(TERM0) X(TERM1) X(TERM2) X(TERM3) X(TERM4) X(TERM5) X(TERM6) \
	X(TERM7)
#define X(e) VP_A_##e,
enum vp_attr { VP_ATTR_LIST(X) VP_A_COUNT };
#undef X
#define VP_TERM_ATTRS 8

struct vp_cell {
	char ch[5];		/* one character, UTF-8, NUL-terminated */
	uint8_t attr;		/* enum vp_attr */
};

struct vp_screen {
	int w, h;
	struct vp_cell *cell;	/* h rows of w cells */
};
void vp_screen_init(struct vp_screen *s);
/* Size the grid (cells blank). */
void vp_screen_resize(struct vp_screen *s, int w, int h);
void vp_screen_free(struct vp_screen *s);
const struct vp_cell *vp_screen_at(const struct vp_screen *s, int x, int y);

/*
 * Draw the whole view for a screen of s->w x s->h: the layout, every
 * panel and the overlay.  Updates the knob panel's scroll position and
 * t->w, t->h (the mouse needs them).
 */
void vp_tui_draw(struct vp_tui *t, struct vp_screen *s);
/* The knob at a cell, or -1 (the mouse). */
int vp_tui_knob_at(const struct vp_tui *t, int x, int y);
/* The list line at a cell in a list overlay, or -1. */
int vp_tui_pick_at(const struct vp_tui *t, int x, int y);
/* A mouse event's knob and pick, from its cell as last drawn. */
void vp_tui_locate(const struct vp_tui *t, struct vp_tui_event *ev);

#endif
