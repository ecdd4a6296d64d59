/*
 * tui.c — vramplan tui MODEL [options]: the ncurses shell around the
 * pure TUI.
 *
 * Everything the screen shows is computed by tui_knobs.c (what a key
 * does, the estimate) and tui_layout.c (where things go, the cells).
 * This file sets the job up the way the estimate does (vp_cli_setup),
 * turns terminal keys into events, copies the cell grid to the terminal
 * and does the I/O the pure side asks for: saving a plan, loading another
 * model, picking a card's profile.
 *
 * The terminal: the whole grid is drawn into stdscr after erase() and put
 * out with one refresh(), so curses sends only the cells that changed (no
 * flicker); KEY_RESIZE redraws at the new size; NO_COLOR or a terminal
 * without colours gets bold, reverse and distinct bar characters instead;
 * a locale that is not UTF-8 gets ASCII.  While the screen is up, what is
 * written to stderr goes to a temporary file (a message would tear the
 * screen); it is written out after the terminal is restored, and its
 * last line is shown in the status line when a save or a load fails.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_calib.h"
#include "model_read.h"
#include "planfile.h"
#include "tui_knobs.h"
#include "tui_layout.h"

struct shell {
	struct vp_cli_job job;
	struct vp_tui t;
	struct vp_screen scr;
	char **names;			/* the model library */
	size_t nnames;
	FILE *errs;			/* stderr while the screen is up */
	int saved_err;			/* the real stderr */
	long errs_seen;			/* bytes of errs already shown */
	bool curses;
	bool text_only;			/* the model is --text-only's (plan
					 * files do not keep the option) */
	chtype attrs[VP_A_COUNT];
};

static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
	got_signal = sig;
}

static void
tui_help(void)
{
	fputs(
"usage: vramplan tui MODEL [--gpus NxCARD] [--plan FILE] [options]\n"
"\n"
"Explore a training plan interactively: change a knob and the memory,\n"
"the timeline of the step, the time and the cost follow at once.  MODEL\n"
"and the options are the estimate's (vramplan --help), except --json,\n"
"--csv, --explain, --max-seq and --min-gpus.\n"
"\n"
"  Up Down  k j      choose a knob        Left Right  h l  + -   change it\n"
"  PgUp PgDn         big steps            g  pick a GPU (type to search)\n"
"  m  switch the model   a  run the planner and apply its best plan\n"
"  u  give a pinned knob back to the planner\n"
"  s  save the plan (vramplan MODEL --plan FILE reloads it)\n"
"  c  the equivalent command line   ?  help   q  quit\n"
"\n"
"NO_COLOR turns colours off.  Exit status: 0 after q, 2 usage error\n"
"(or no terminal), 3 bad input, 4 system error.  See vramplan(1).\n",
	    stdout);
}

/* ---- stderr while the screen is up ---------------------------------- */

static int
capture_stderr(struct shell *sh)
{
	fflush(stderr);
	if ((sh->errs = tmpfile()) == NULL ||
	    (sh->saved_err = dup(STDERR_FILENO)) < 0 ||
	    dup2(fileno(sh->errs), STDERR_FILENO) < 0) {
		fprintf(stderr, "vramplan: tui: cannot set stderr aside: %s\n",
		    strerror(errno));
		if (sh->errs != NULL)
			fclose(sh->errs);
		sh->errs = NULL;
		return -1;
	}
	return 0;
}

/* Put stderr back and write out what was said meanwhile. */
static void
release_stderr(struct shell *sh)
{
	char buf[4096];
	size_t n;

	if (sh->errs == NULL)
		return;
	fflush(stderr);
	dup2(sh->saved_err, STDERR_FILENO);
	close(sh->saved_err);
	rewind(sh->errs);
	while ((n = fread(buf, 1, sizeof buf, sh->errs)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(sh->errs);
	sh->errs = NULL;
}

/* The last line written to stderr since the previous call, or "". */
static void
last_error(struct shell *sh, char *out, size_t n)
{
	char buf[1024], *nl;
	long end;
	size_t got;

	out[0] = '\0';
	fflush(stderr);
	if (sh->errs == NULL || fseek(sh->errs, 0, SEEK_END) != 0 ||
	    (end = ftell(sh->errs)) <= sh->errs_seen)
		return;
	if (end - sh->errs_seen > (long)sizeof buf - 1)
		sh->errs_seen = end - (long)sizeof buf + 1;
	fseek(sh->errs, sh->errs_seen, SEEK_SET);
	got = fread(buf, 1, (size_t)(end - sh->errs_seen), sh->errs);
	buf[got] = '\0';
	sh->errs_seen = end;
	while (got > 0 && buf[got - 1] == '\n')
		buf[--got] = '\0';
	nl = strrchr(buf, '\n');
	nl = nl ? nl + 1 : buf;
	got = strlen(nl) < n ? strlen(nl) : n - 1;
	memcpy(out, nl, got);
	out[got] = '\0';
	/* "vramplan: " says nothing inside vramplan. */
	if (strncmp(out, "vramplan: ", 10) == 0)
		memmove(out, out + 10, strlen(out + 10) + 1);
}

/* ---- the terminal ---------------------------------------------------- */

/* Colour pairs, or what a monochrome terminal shows instead. */
static void
set_attrs(struct shell *sh)
{
	static const struct {
		enum vp_attr a;
		short fg, bg;
		chtype extra;		/* with colour */
		chtype mono;		/* without */
	} map[] = {
		{ VP_A_NORMAL, -1, -1, A_NORMAL, A_NORMAL },
		{ VP_A_HEADER, COLOR_WHITE, COLOR_BLUE, A_BOLD,
		    A_REVERSE | A_BOLD },
		{ VP_A_TITLE, COLOR_CYAN, -1, A_BOLD, A_BOLD | A_UNDERLINE },
		{ VP_A_SELECT, -1, -1, A_REVERSE, A_REVERSE },
		{ VP_A_DIM, -1, -1, A_DIM, A_DIM },
		{ VP_A_BOLD, -1, -1, A_BOLD, A_BOLD },
		{ VP_A_GOOD, COLOR_GREEN, -1, A_BOLD, A_BOLD },
		{ VP_A_WARN, COLOR_YELLOW, -1, A_BOLD, A_BOLD | A_UNDERLINE },
		{ VP_A_BAD, COLOR_RED, -1, A_BOLD, A_BOLD | A_REVERSE },
		{ VP_A_CAP, COLOR_RED, -1, A_BOLD, A_BOLD },
		{ VP_A_FWD, COLOR_CYAN, -1, 0, A_NORMAL },
		{ VP_A_LOSS, COLOR_BLUE, -1, 0, A_NORMAL },
		{ VP_A_BWD, COLOR_MAGENTA, -1, 0, A_NORMAL },
		{ VP_A_OPT, COLOR_YELLOW, -1, 0, A_NORMAL },
		{ VP_A_PEAK, COLOR_RED, -1, A_BOLD, A_BOLD },
		{ VP_A_TERM0, COLOR_BLUE, -1, 0, A_NORMAL },
		{ VP_A_TERM1, COLOR_GREEN, -1, 0, A_NORMAL },
		{ VP_A_TERM2, COLOR_YELLOW, -1, 0, A_NORMAL },
		{ VP_A_TERM3, COLOR_MAGENTA, -1, 0, A_NORMAL },
		{ VP_A_TERM4, COLOR_CYAN, -1, 0, A_NORMAL },
		{ VP_A_TERM5, COLOR_RED, -1, 0, A_NORMAL },
		{ VP_A_TERM6, COLOR_WHITE, -1, A_BOLD, A_NORMAL },
		{ VP_A_TERM7, COLOR_GREEN, -1, A_BOLD, A_NORMAL },
	};
	size_t i;

	sh->t.color = has_colors() && getenv("NO_COLOR") == NULL;
	if (sh->t.color) {
		start_color();
		use_default_colors();
	}
	for (i = 0; i < VP_NELEM(map); i++) {
		if (!sh->t.color) {
			sh->attrs[map[i].a] = map[i].mono;
			continue;
		}
		init_pair((short)(i + 1), map[i].fg, map[i].bg);
		sh->attrs[map[i].a] = COLOR_PAIR((short)(i + 1)) |
		    map[i].extra;
	}
}

static int
start_curses(struct shell *sh)
{
	const char *term = getenv("TERM");

	if (newterm(NULL, stdout, stdin) == NULL) {
		release_stderr(sh);
		char e1[VP_ESC_LEN];

		fprintf(stderr, "vramplan: tui: cannot use the terminal '%s'\n",
		    term ? vp_esc(term, e1, sizeof e1) : "(TERM not set)");
		return -1;
	}
	sh->curses = true;
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	mouseinterval(0);
	mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	set_attrs(sh);
	return 0;
}

static void
stop_curses(struct shell *sh)
{
	if (sh->curses && !isendwin())
		endwin();
	sh->curses = false;
}

/* The cell grid into stdscr, runs of one attribute at a time. */
static void
paint(struct shell *sh)
{
	const struct vp_screen *s = &sh->scr;
	char run[8192];
	int x, y;

	erase();
	for (y = 0; y < s->h; y++)
		for (x = 0; x < s->w; ) {
			const struct vp_cell *c = vp_screen_at(s, x, y);
			int x0 = x, a = c->attr;
			size_t len = 0;

			while (x < s->w && (c = vp_screen_at(s, x, y))->attr ==
			    a && len + sizeof c->ch < sizeof run) {
				size_t n = strlen(c->ch);

				memcpy(run + len, c->ch, n);
				len += n;
				x++;
			}
			run[len] = '\0';
			attrset(sh->attrs[a]);
			/* The last cell of the screen may "fail" (the cursor
			 * cannot move past it); it is drawn all the same. */
			mvaddstr(y, x0, run);
		}
	attrset(A_NORMAL);
	refresh();
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static bool
decode(int ch, struct vp_tui_event *ev)
{
	MEVENT me;

	memset(ev, 0, sizeof *ev);
	ev->knob = ev->pick = -1;
	switch (ch) {
	case KEY_UP: ev->kind = VP_EV_UP; return true;
	case KEY_DOWN: ev->kind = VP_EV_DOWN; return true;
	case KEY_LEFT: ev->kind = VP_EV_LEFT; return true;
	case KEY_RIGHT: ev->kind = VP_EV_RIGHT; return true;
	case KEY_PPAGE: ev->kind = VP_EV_PGUP; return true;
	case KEY_NPAGE: ev->kind = VP_EV_PGDN; return true;
	case KEY_HOME: ev->kind = VP_EV_HOME; return true;
	case KEY_END: ev->kind = VP_EV_END; return true;
	case KEY_ENTER: case '\r': case '\n': ev->kind = VP_EV_ENTER;
		return true;
	case 27: ev->kind = VP_EV_ESC; return true;
	case KEY_BACKSPACE: case 127: case 8: ev->kind = VP_EV_BACKSPACE;
		return true;
	case 'U' - '@': ev->kind = VP_EV_KILL; return true;
	case KEY_RESIZE: ev->kind = VP_EV_RESIZE; return true;
	case KEY_MOUSE:
		if (getmouse(&me) != OK)
			return false;
		ev->x = me.x;
		ev->y = me.y;
		if (me.bstate & BUTTON1_PRESSED)
			ev->kind = VP_EV_CLICK;
		else if (me.bstate & BUTTON4_PRESSED)
			ev->kind = VP_EV_WHEEL_UP;
		else if (me.bstate & BUTTON5_PRESSED)
			ev->kind = VP_EV_WHEEL_DOWN;
		else
			return false;
		return true;
	default:
		if (ch < 0 || ch > 0xff)
			return false;
		ev->kind = VP_EV_CHAR;
		ev->ch = ch;
		return true;
	}
}

/* ---- requests from the pure side ------------------------------------ */

static void
save(struct shell *sh)
{
	struct vp_planfile f;
	struct vp_buf b;
	char why[VP_TUI_MSG];

	vp_buf_init(&b);
	vp_tui_planfile(&sh->t, &f);
	vp_planfile_write(&f, &b);
	if (vp_cli_write_atomic(sh->t.input, b.s) == 0) {
		vp_tui_message(&sh->t, VP_LEVEL_GOOD, "saved the plan to '%s' "
		    "(vramplan %s --plan %s%s)", sh->t.input, sh->t.model_arg,
		    sh->t.input, sh->text_only ? " --text-only" : "");
	} else {
		last_error(sh, why, sizeof why);
		vp_tui_message(&sh->t, VP_LEVEL_BAD, "%s", why[0] ? why :
		    "cannot write the plan");
	}
	vp_buf_free(&b);
}

static void
load_model(struct shell *sh)
{
	const char *name = sh->names[sh->t.pick_model];
	struct vp_diags d = { 0 };
	struct vp_model m;
	char *path;

	if ((path = vp_cli_resolve_model(name)) == NULL) {
		char why[VP_TUI_MSG];

		last_error(sh, why, sizeof why);
		vp_tui_message(&sh->t, VP_LEVEL_BAD, "%s", why);
		return;
	}
	if (vp_model_load(path, &m, &d) != 0) {
		const struct vp_diag *e = d.n ? &d.v[0] : NULL;

		vp_tui_message(&sh->t, VP_LEVEL_BAD, "cannot load '%s': %s",
		    name, e ? e->msg : "bad model file");
		vp_cli_print_diags(&d);	/* escaped, cleared */
		vp_model_free(&m);
		free(path);
		return;
	}
	vp_diags_clear(&d);
	free(path);
	vp_model_free(&sh->job.model);
	sh->job.model = m;
	sh->text_only = false;
	vp_tui_model_changed(&sh->t, name);
}

/* The profile hook: the calibrated or built-in profile of the card. */
static int
pick_profile(void *ctx, struct vp_session *s, struct vp_buf *msg)
{
	struct shell *sh = ctx;
	struct vp_buf label;
	int rc;

	rc = vp_cli_profile(sh->job.profile, s->gpus->gpu, s->plan.device,
	    &s->profile, &label);
	if (rc < 0) {
		char why[VP_TUI_MSG];

		last_error(sh, why, sizeof why);
		vp_buf_printf(msg, "%s; using the built-in defaults", why);
		vp_profile_default(s->gpus->gpu, &s->profile);
		vp_buf_free(&label);
		return -1;
	}
	vp_buf_free(&sh->job.prof_label);
	sh->job.prof_label = label;
	s->profile_label = label.s;
	return 0;
}

/* ---- the loop -------------------------------------------------------- */

static void
draw(struct shell *sh)
{
	vp_screen_resize(&sh->scr, COLS, LINES);
	vp_tui_draw(&sh->t, &sh->scr);
	paint(sh);
}

static int
loop(struct shell *sh)
{
	struct vp_tui_event ev;
	enum vp_tui_req req;
	double t0;
	int ch;

	draw(sh);
	for (;;) {
		errno = 0;
		ch = getch();
		if (got_signal)
			return 128 + got_signal;
		if (ch == ERR && errno != EINTR) {
			/* Not a key: the terminal is gone (a blocking read
			 * returns only keys or errors). */
			fprintf(stderr, "vramplan: tui: cannot read the "
			    "terminal\n");
			return VP_EXIT_SYSTEM;
		}
		if (ch == ERR || !decode(ch, &ev))
			continue;
		t0 = now_ms();
		if (ev.kind == VP_EV_CLICK || ev.kind == VP_EV_WHEEL_UP ||
		    ev.kind == VP_EV_WHEEL_DOWN)
			vp_tui_locate(&sh->t, &ev);
		req = vp_tui_key(&sh->t, &ev);
		if (req == VP_REQ_QUIT)
			return VP_EXIT_OK;
		if (req == VP_REQ_SAVE)
			save(sh);
		else if (req == VP_REQ_MODEL)
			load_model(sh);
		else if (req == VP_REQ_REDRAW)
			clearok(curscr, TRUE);
		vp_screen_resize(&sh->scr, COLS, LINES);
		vp_tui_draw(&sh->t, &sh->scr);
		sh->t.key_ms = now_ms() - t0;
		/* Once more, with the time in the header. */
		vp_tui_draw(&sh->t, &sh->scr);
		paint(sh);
	}
}

/* The TUI draws on a terminal.  (Options of the estimate's report are
 * refused by the option table: they are not the TUI's.) */
static int
check_options(const struct vp_cli_job *job)
{
	(void)job;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fputs("vramplan: tui needs a terminal on stdin and stdout; for "
		    "a report use 'vramplan MODEL [options]'\n", stderr);
		return VP_EXIT_USAGE;
	}
	return VP_EXIT_OK;
}

static void
shell_free(struct shell *sh)
{
	stop_curses(sh);
	release_stderr(sh);
	vp_screen_free(&sh->scr);
	vp_cli_names_free(sh->names, sh->nnames);
	vp_cli_job_free(&sh->job);
}

static void
setup_tui(struct shell *sh)
{
	struct vp_tui *t = &sh->t;
	const char *cs;

	memset(t, 0, sizeof *t);
	t->ses = &sh->job.ses;
	t->gs = &sh->job.gs;
	t->cat = &sh->job.cat;
	t->model_arg = sh->job.model_arg;
	sh->text_only = sh->job.opts.has[VP_O_TEXT_ONLY];
	t->models = sh->names;
	t->nmodels = sh->nnames;
	t->profile = pick_profile;
	t->profile_ctx = sh;
	t->version = PACKAGE_VERSION;
	t->node_layout = sh->job.node_layout;
	cs = nl_langinfo(CODESET);
	t->unicode = cs != NULL && (strcmp(cs, "UTF-8") == 0 ||
	    strcmp(cs, "utf8") == 0);
	vp_tui_init(t);
}

int
vp_cmd_tui(int argc, char **argv)
{
	static struct shell sh;
	struct sigaction sa;
	int i, rc;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			tui_help();
			return fflush(stdout) == 0 ? VP_EXIT_OK :
			    VP_EXIT_SYSTEM;
		}
	memset(&sh, 0, sizeof sh);
	vp_screen_init(&sh.scr);
	rc = vp_cli_setup(argc, argv, VP_CMD_TUI, &sh.job);
	if (rc == VP_EXIT_OK && !sh.job.done)
		rc = check_options(&sh.job);
	if (rc == VP_EXIT_OK && !sh.job.done && sh.job.cat.n == 0 &&
	    vp_cli_load_catalog(sh.job.catalog, &sh.job.cat) != 0)
		rc = VP_EXIT_INPUT;
	if (rc != VP_EXIT_OK || sh.job.done) {
		vp_cli_job_free(&sh.job);
		return rc;
	}
	sh.nnames = vp_cli_library(&sh.names);
	setlocale(LC_ALL, "");
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: getch returns and the loop ends cleanly. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (capture_stderr(&sh) != 0) {
		shell_free(&sh);
		return VP_EXIT_SYSTEM;
	}
	setup_tui(&sh);
	if (start_curses(&sh) != 0) {
		shell_free(&sh);
		return VP_EXIT_SYSTEM;
	}
	rc = loop(&sh);
	shell_free(&sh);
	return rc;
}
