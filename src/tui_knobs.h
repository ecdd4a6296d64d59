/*
 * tui_knobs.h — the TUI's state and what a key does to it: the knob
 * table (each knob's label, how its value is spelt, how a step changes
 * the plan or the GPU set), the overlays (help, GPU and model lists, the
 * command line, the save prompt), and re-running the session after a
 * change, the planner when asked.
 *
 * Pure, like tui_layout.h: no curses, no files, no clock.  What needs the
 * world (writing the plan, reading another model, the profile of a card)
 * is a request the key returns or a hook the shell fills in; the shell
 * (tui.c) turns terminal keys into struct vp_tui_event.
 *
 * Ownership: struct vp_tui borrows the session, the GPU set, the catalog
 * and the model names from the shell; it owns nothing else.
 */
#ifndef VP_TUI_KNOBS_H
#define VP_TUI_KNOBS_H

#include <stdbool.h>
#include <stddef.h>

#include "mem.h"
#include "options.h"
#include "planfile.h"
#include "session.h"

#define VP_KNOB_LIST(X) \
	X(PRECISION, "precision") X(OPTIMIZER, "optimizer") \
	X(MICRO_BATCH, "micro-batch") X(SEQ, "seq") \
	X(GRAD_ACCUM, "grad-accum") X(RECOMPUTE, "recompute") \
	X(ATTENTION, "attention") X(SHARDING, "ZeRO/FSDP") X(TP, "TP") \
	X(SP, "SP") X(PP, "PP") X(CP, "CP") X(EP, "EP") \
	X(LORA, "LoRA rank") X(QUANT, "quant") X(OFFLOAD, "offload") \
	X(GPU, "GPU") X(GPUS, "GPUs") X(TOKENS, "tokens")
#define X(e, s) VP_KNOB_##e,
enum vp_knob { VP_KNOB_LIST(X) VP_KNOB_COUNT };
#undef X

struct vp_tui;

/*
 * A knob is an option of the option table (opt: its values, its range
 * and the planner knob it pins come from the row, and show and step are
 * the generic ones when NULL), or a knob of the TUI's own (opt -1: the
 * GPU, the job's size, ZeRO and FSDP as one knob, ...).
 */
struct vp_knob_info {
	const char *label;
	int opt;		/* enum vp_optid, or -1 */
	enum vp_optopen open;	/* opt -1: the planner knob it is */
	/* The value as the panel shows it. */
	void (*show)(const struct vp_tui *t, struct vp_buf *out);
	/* One step up (dir 1) or down (-1), big or small: 0 when the
	 * value changed, -1 at the end of its range (nothing changed). */
	int (*step)(struct vp_tui *t, int dir, bool big);
};
extern const struct vp_knob_info vp_knobs[VP_KNOB_COUNT];
/* A knob's value, a step of it, and the planner flag it is (NULL: the
 * planner does not choose it). */
void vp_knob_show(const struct vp_tui *t, enum vp_knob k, struct vp_buf *out);
int vp_knob_step(struct vp_tui *t, enum vp_knob k, int dir, bool big);
bool *vp_knob_open(struct vp_open *open, enum vp_knob k);

/* Which overlay is up. */
enum vp_tui_mode {
	VP_MODE_MAIN, VP_MODE_HELP, VP_MODE_GPU, VP_MODE_MODEL,
	VP_MODE_COMMAND, VP_MODE_SAVE
};

/* Keys, as the shell decodes them; letters and digits are VP_EV_CHAR. */
enum vp_ev {
	VP_EV_CHAR, VP_EV_UP, VP_EV_DOWN, VP_EV_LEFT, VP_EV_RIGHT,
	VP_EV_PGUP, VP_EV_PGDN, VP_EV_HOME, VP_EV_END, VP_EV_ENTER,
	VP_EV_ESC, VP_EV_BACKSPACE, VP_EV_KILL, VP_EV_CLICK, VP_EV_WHEEL_UP,
	VP_EV_WHEEL_DOWN, VP_EV_RESIZE
};
struct vp_tui_event {
	enum vp_ev kind;
	int ch;			/* VP_EV_CHAR: the character */
	int x, y;		/* mouse events: the cell */
	/* Mouse events: the knob and the list line under the cell, -1 for
	 * none.  The layout knows where things are: the shell fills these
	 * with vp_tui_locate (tui_layout.h) before vp_tui_key. */
	int knob, pick;
};

/* What the shell must do after a key. */
enum vp_tui_req {
	VP_REQ_NONE,
	VP_REQ_QUIT,
	VP_REQ_SAVE,		/* write the plan to t->input */
	VP_REQ_MODEL,		/* load t->models[t->pick_model] */
	VP_REQ_REDRAW,		/* repaint the whole terminal */
};

/* Status line levels. */
enum vp_tui_level { VP_LEVEL_INFO, VP_LEVEL_GOOD, VP_LEVEL_WARN,
	VP_LEVEL_BAD };

/* Picks the profile of the session's card (gpu changed); 0, or -1 with a
 * message (the defaults then apply).  NULL: the built-in defaults. */
typedef int (*vp_tui_profile_fn)(void *ctx, struct vp_session *s,
    struct vp_buf *msg);

#define VP_TUI_INPUT 256
#define VP_TUI_MSG 320

struct vp_tui {
	/* The job (borrowed). */
	struct vp_session *ses;
	struct vp_gpuset *gs;		/* what ses->gpus points to */
	const struct vp_catalog *cat;
	const char *model_arg;		/* MODEL as given, for plans */
	char *const *models;		/* the library, for m */
	size_t nmodels;
	vp_tui_profile_fn profile;
	void *profile_ctx;
	const char *version;
	bool node_layout;		/* keep the node size the user gave */

	/* What the planner may change when a is pressed. */
	struct vp_open open;
	double tokens;			/* to train, for the cost panel */

	/* The last estimate. */
	bool valid;			/* the plan checked and ran */
	char error[VP_TUI_MSG];		/* why not, when !valid */
	struct vp_timeline tl;

	/* The view. */
	enum vp_tui_mode mode;
	int sel, top;			/* the knob chosen, the first shown */
	char input[VP_TUI_INPUT];	/* search text or the save path */
	int pick, pick_top;		/* the line chosen in a list */
	size_t pick_model;		/* VP_REQ_MODEL: which one */
	char msg[VP_TUI_MSG];		/* until the next key */
	enum vp_tui_level msg_level;
	bool unicode;			/* block and box characters */
	bool color;			/* colours are shown (the shell's) */
	int w, h;			/* the size last drawn (mouse) */
	double key_ms;			/* the last key took, 0: unknown */
};

/*
 * Set the TUI up on a session the shell prepared (vp_cli_setup) and run
 * it as the estimate would (the planner on the knobs left open).  Returns
 * 0, or -1 when the plan is not valid (t->error says why; the TUI opens
 * anyway so that it can be fixed).
 */
int vp_tui_init(struct vp_tui *t);
/* Re-estimate after a change; with plan, the planner first (needs a
 * card).  0, or -1 with t->error. */
int vp_tui_run(struct vp_tui *t, bool plan);
/* After the shell swapped the model: fit the plan to it and re-plan. */
int vp_tui_model_changed(struct vp_tui *t, const char *model_arg);
/* One key; returns what the shell must do. */
enum vp_tui_req vp_tui_key(struct vp_tui *t, const struct vp_tui_event *ev);
void vp_tui_message(struct vp_tui *t, enum vp_tui_level level,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The plan as a plan file or a command line describes it. */
void vp_tui_planfile(const struct vp_tui *t, struct vp_planfile *f);

/* The GPUs in the job for the current knobs. */
unsigned vp_tui_world(const struct vp_tui *t);
/* Entries of the GPU list (or the model list) matching t->input:
 * indexes into idx, up to max; returns how many. */
size_t vp_tui_gpu_matches(const struct vp_tui *t, size_t *idx, size_t max);
size_t vp_tui_model_matches(const struct vp_tui *t, size_t *idx,
    size_t max);
/* The cheapest dated price of a card (NAN: none) and its entry. */
double vp_tui_price(const struct vp_gpu *g, const struct vp_price **which);

#endif
