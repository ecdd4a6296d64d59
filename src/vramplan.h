/*
 * vramplan.h — the public C library of vramplan (libvramplan; see
 * vramplan(3)).
 *
 * One handle holds one estimate's inputs: a MODEL (a library name such as
 * "llama-3-8b", a vramplan YAML file or a Hugging Face config.json) and
 * options set by the command line's names and value syntax ("gpus",
 * "2xA100"; "recompute", "full"; a flag with value NULL).
 * vramplan_estimate runs what `vramplan MODEL --option value ...` runs,
 * planner included (with "gpus" and knobs left open); vramplan_search
 * asks for the planner and refuses when it cannot run.  The report comes
 * back as the document `--json` prints (and the text and CSV ones),
 * with typed accessors for the headline numbers, and every message the
 * command line would print on stderr comes back as a diagnostic.
 *
 * Statuses are vramplan(1)'s exit statuses: VRAMPLAN_OK (0: fits, or no
 * "gpus"), VRAMPLAN_NOFIT (1), VRAMPLAN_USAGE (2: a bad option or
 * value), VRAMPLAN_INPUT (3: a bad or missing model, plan or catalog
 * file), VRAMPLAN_SYSTEM (4).
 *
 * Ownership: strings passed in are copied; strings returned are owned by
 * the handle and stay valid until the next call on it that changes its
 * inputs or results (vramplan_set*, vramplan_unset, vramplan_reset,
 * vramplan_estimate, vramplan_search, vramplan_free); reading calls
 * (the report, plan values, diagnostics) never invalidate each other.
 *
 * Threads: the library keeps no global state beyond read-only tables.
 * Handles are independent: different threads may use different handles
 * at the same time; one handle must not be used by two threads at once.
 * The library never prints and never exits; it aborts only when memory
 * runs out.  It reads the environment (VRAMPLAN_DATA, XDG_CONFIG_HOME,
 * XDG_DATA_HOME, HOME) as the program does: do not change it while an
 * estimate runs.
 *
 * ABI: the soname is libvramplan.so.N; N changes only when a function is
 * removed or its meaning changes.  New functions and options may be
 * added within one N.  The JSON document's members follow the
 * program's --json output (vramplan(1)); numbers differ between releases
 * as the model improves.
 */
#ifndef VRAMPLAN_H
#define VRAMPLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This header's version of the API: grows when functions are added. */
#define VRAMPLAN_API_VERSION 1

typedef struct vramplan vramplan;

enum vramplan_status {
	VRAMPLAN_OK = 0,
	VRAMPLAN_NOFIT = 1,
	VRAMPLAN_USAGE = 2,
	VRAMPLAN_INPUT = 3,
	VRAMPLAN_SYSTEM = 4,
};

enum vramplan_severity {
	VRAMPLAN_ERROR = 0,
	VRAMPLAN_WARNING = 1,
	VRAMPLAN_NOTE = 2,
};

enum vramplan_format {
	VRAMPLAN_JSON = 0,	/* what --json prints */
	VRAMPLAN_TEXT = 1,	/* the text report (no colour) */
	VRAMPLAN_CSV = 2,	/* what --csv prints */
};

/* The library's version, "0.1.0" (the program's). */
const char *vramplan_version(void);

/* A new handle with no model and no options; NULL when out of memory
 * is impossible (the library aborts instead). */
vramplan *vramplan_new(void);
/* Release h and everything it returned; NULL is a no-op. */
void vramplan_free(vramplan *h);

/*
 * Where the model library (NAME.yaml) and the GPU catalog (gpus.yaml)
 * are: dir, or with NULL (the default) the environment variable
 * VRAMPLAN_DATA when set and not empty, else relative to the library's
 * own file as the program looks relative to itself (LIBDIR/../share/
 * vramplan/models, or ../../share for a multiarch libdir and the build
 * tree), else the configured $(pkgdatadir)/models.  Always VRAMPLAN_OK.
 */
int vramplan_set_data_dir(vramplan *h, const char *dir);

/* MODEL: a library name, a YAML file or a config.json (read when the
 * estimate runs).  VRAMPLAN_OK, or VRAMPLAN_USAGE for NULL or "". */
int vramplan_set_model(vramplan *h, const char *model);

/*
 * An option of the estimate by its long name without "--" ("gpus",
 * "micro-batch") and its value as the command line spells it ("2xA100",
 * "4"); a flag ("sp", "no-search") takes NULL.  Checked at once against
 * the option's own range: VRAMPLAN_OK, or VRAMPLAN_USAGE with the
 * message as a diagnostic ("--seq '0' is too small ...").  Setting an
 * option again replaces its value.  "json", "csv", "help", "version"
 * and "svg" are not options here (vramplan_report chooses the format;
 * the library writes no files).
 */
int vramplan_set(vramplan *h, const char *option, const char *value);
/* Forget an option (VRAMPLAN_OK, or VRAMPLAN_USAGE for an unknown name). */
int vramplan_unset(vramplan *h, const char *option);
/* Forget every option (the model and data directory stay). */
void vramplan_reset(vramplan *h);

/*
 * Run the estimate on the model and options set: the status
 * vramplan(1) would exit with.  The report is there after VRAMPLAN_OK
 * and VRAMPLAN_NOFIT; the diagnostics always.
 */
int vramplan_estimate(vramplan *h);
/*
 * The same, for the planner's answer: refused (VRAMPLAN_USAGE) unless
 * "gpus" is set and the planner may run ("no-search" and "dp" unset).
 * The report's "plan" is the chosen plan and "search" its alternatives.
 */
int vramplan_search(vramplan *h);

/* The status of the last call that returned one. */
int vramplan_status(const vramplan *h);

/* The last estimate's report in a format, or NULL when there is none. */
const char *vramplan_report(vramplan *h, enum vramplan_format format);
/* vramplan_report(h, VRAMPLAN_JSON). */
const char *vramplan_json(vramplan *h);

/*
 * Headline numbers of the last estimate (per GPU, in bytes, of the worst
 * pipeline stage; 0 when there is no report): the peaks of the three
 * levels (allocated tensors, the caching allocator's reserve, the
 * device's use with the context) and the card's usable capacity (0
 * without "gpus").
 */
uint64_t vramplan_allocated_peak_bytes(const vramplan *h);
uint64_t vramplan_reserved_peak_bytes(const vramplan *h);
uint64_t vramplan_device_peak_bytes(const vramplan *h);
uint64_t vramplan_capacity_bytes(const vramplan *h);
/* 1 fits, 0 does not fit (GPU or host memory), -1 no "gpus" or no
 * report. */
int vramplan_fits(const vramplan *h);
/* The verdict as --json spells it: "fits" (the estimate's whole
 * uncertainty band is within the card), "tight" (the band crosses the
 * card's capacity) or "does_not_fit"; NULL without "gpus" or a report. */
const char *vramplan_verdict(const vramplan *h);
/*
 * A knob of the plan the estimate ran (after the planner's choice), as a
 * plan file spells it: vramplan_plan_value(h, "tp") is "2",
 * (h, "recompute") "full".  NULL when there is no report or the option
 * is not a knob of the plan.
 */
const char *vramplan_plan_value(vramplan *h, const char *option);

/*
 * The diagnostics of the last call, in order: what the program prints
 * on stderr, one entry per message.  Severity (enum vramplan_severity),
 * the file it is about (NULL when none), its line and column (1-based;
 * 0 unknown), the message alone.  Out-of-range i: -1, NULL or 0.
 */
size_t vramplan_diag_count(const vramplan *h);
int vramplan_diag_severity(const vramplan *h, size_t i);
const char *vramplan_diag_file(const vramplan *h, size_t i);
int vramplan_diag_line(const vramplan *h, size_t i);
int vramplan_diag_column(const vramplan *h, size_t i);
const char *vramplan_diag_message(const vramplan *h, size_t i);
/* Every diagnostic as the program prints it ("vramplan: FILE:LINE:COL:
 * error: ...\n" lines); "" when none. */
const char *vramplan_diag_text(vramplan *h);

#ifdef __cplusplus
}
#endif

#endif
