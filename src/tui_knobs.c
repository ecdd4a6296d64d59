/* tui_knobs.c — the TUI's knobs, keys and re-estimates (see tui_knobs.h). */
#include "tui_knobs.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "finetune.h"
#include "report.h"

void
vp_tui_message(struct vp_tui *t, enum vp_tui_level level, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof t->msg, fmt, ap);
	va_end(ap);
	t->msg_level = level;
}

unsigned
vp_tui_world(const struct vp_tui *t)
{
	const struct vp_plan *p = &t->ses->plan;

	if (t->gs->gpu != NULL)
		return t->gs->count;
	/* No card: the degrees make the job, as the estimate has it
	 * (dp x tp x pp x cp; 0 past UINT_MAX). */
	return vp_plan_world(p);
}

double
vp_tui_price(const struct vp_gpu *g, const struct vp_price **which)
{
	/* The cheapest dated price, as compare takes it (cost.c). */
	*which = vp_gpu_cheapest_price(g);
	return *which != NULL ? (*which)->usd_per_gpu_hour : NAN;
}

/* ---- values and steps ------------------------------------------------ */

/* An enum field one step along its name table, stopping at the ends. */
static int
step_enum(int *v, int n, int dir, bool big)
{
	int to = big ? (dir > 0 ? n - 1 : 0) : *v + dir;

	if (to < 0 || to >= n || to == *v)
		return -1;
	*v = to;
	return 0;
}

/* A count: +-1 small, x2 or /2 big, within [lo, hi]. */
static int
step_count(uint64_t *v, int dir, bool big, uint64_t lo, uint64_t hi)
{
	uint64_t to;

	if (dir > 0)
		to = big ? *v * 2 : *v + 1;
	else
		to = big ? *v / 2 : *v - 1;
	if (to < lo)
		to = lo;
	if (to > hi)
		to = hi;
	if (to == *v)
		return -1;
	*v = to;
	return 0;
}

/* The next power of two up, or down, from v (v itself excluded). */
static uint64_t
pow2_step(uint64_t v, int dir)
{
	uint64_t p = 1;

	while (p <= v && p < (1ULL << 62))
		p *= 2;
	/* p is now the smallest power of two above v. */
	if (dir > 0)
		return p;
	p /= 2;
	return p < v ? p : p / 2;
}

static void
show_u64(struct vp_buf *o, uint64_t v)
{
	vp_buf_printf(o, "%llu", (unsigned long long)v);
}

/* An option's value, as the plan file spells it. */
static void
show_option(const struct vp_tui *t, enum vp_optid id, struct vp_buf *o)
{
	vp_option_value(id, &t->ses->plan, o);
}

/*
 * One step of an option: an enum along its names, a whole number +-1
 * (big: x2 or /2) within its row's range.  Other kinds have knobs of
 * their own.
 */
static int
step_option(struct vp_tui *t, enum vp_optid id, int dir, bool big)
{
	const struct vp_optdef *od = &vp_options[id];
	char *field = (char *)&t->ses->plan + od->off;
	uint64_t u;
	int v;

	switch (od->field) {
	case VP_OF_INT:
		memcpy(&v, field, sizeof v);
		if (step_enum(&v, od->nnames, dir, big) != 0)
			return -1;
		memcpy(field, &v, sizeof v);
		return 0;
	case VP_OF_U64:
		assert(od->kind == VP_OK_U64);
		memcpy(&u, field, sizeof u);
		if (step_count(&u, dir, big, (uint64_t)od->min,
		    (uint64_t)od->max) != 0)
			return -1;
		memcpy(field, &u, sizeof u);
		return 0;
	default:
		assert(!"an option knob of a kind without a generic step");
		return -1;
	}
}

static void
show_seq(const struct vp_tui *t, struct vp_buf *o)
{
	show_u64(o, t->ses->plan.seq);
}

/* Powers of two (x8 big) from 128, to what learned positions allow. */
static int
step_seq(struct vp_tui *t, int dir, bool big)
{
	const struct vp_model *m = t->ses->model;
	uint64_t v = t->ses->plan.seq, hi = 1u << 27, to;

	if (m->pos == VP_POS_LEARNED && m->max_seq)
		hi = m->max_seq;
	to = pow2_step(v, dir);
	if (big)
		to = dir > 0 ? to * 4 : to / 4;
	if (to < 128)
		to = 128;
	if (to > hi)
		to = hi;
	if (to == v || (dir > 0) != (to > v))
		return -1;
	t->ses->plan.seq = to;
	return 0;
}

/*
 * ZeRO and FSDP as one knob: no sharding, ZeRO 1-3, then the FSDP
 * strategies from the least to the most sharded.
 */
static const struct {
	unsigned zero;
	enum vp_fsdp fsdp;
} shardings[] = {
	{ 0, VP_FSDP_NONE }, { 1, VP_FSDP_NONE }, { 2, VP_FSDP_NONE },
	{ 3, VP_FSDP_NONE }, { 0, VP_FSDP_GRAD_OP }, { 0, VP_FSDP_HYBRID },
	{ 0, VP_FSDP_FULL },
};

static int
sharding_index(const struct vp_plan *p)
{
	int i;

	for (i = 0; i < (int)VP_NELEM(shardings); i++)
		if (p->fsdp == shardings[i].fsdp && (p->fsdp != VP_FSDP_NONE ||
		    p->zero == shardings[i].zero))
			return i;
	return 0;
}

static void
show_sharding(const struct vp_tui *t, struct vp_buf *o)
{
	const struct vp_plan *p = &t->ses->plan;

	if (p->fsdp != VP_FSDP_NONE)
		vp_buf_printf(o, "FSDP %s", vp_fsdp_names[p->fsdp]);
	else if (p->zero)
		vp_buf_printf(o, "ZeRO %u", p->zero);
	else
		vp_buf_add(o, "none");
}

static int
step_sharding(struct vp_tui *t, int dir, bool big)
{
	int i = sharding_index(&t->ses->plan);

	if (step_enum(&i, (int)VP_NELEM(shardings), dir, big) != 0)
		return -1;
	t->ses->plan.zero = shardings[i].zero;
	t->ses->plan.fsdp = shardings[i].fsdp;
	return 0;
}

/*
 * A parallel degree: with a card, the next divisor of the job's GPUs
 * (big: straight to 1 or to the whole job); without one, doubling up to
 * 1024.  What the model allows is the plan check's to say.
 */
static int
step_degree(struct vp_tui *t, unsigned *deg, int dir, bool big)
{
	unsigned v = *deg, hi = 1024, to = v;

	assert(v >= 1);		/* kept so below; the plan starts at 1 */
	if (t->gs->gpu != NULL) {
		hi = t->gs->count;
		if (big)
			to = dir > 0 ? hi : 1;
		else
			do
				to = dir > 0 ? to + 1 : to - 1;
			while (to > 1 && to < hi && hi % to != 0);
	} else if (big) {
		to = dir > 0 ? hi : 1;
	} else {
		to = dir > 0 ? v * 2 : v / 2;
	}
	if (to < 1)
		to = 1;
	if (to > hi)
		to = hi;
	if (to == v)
		return -1;
	*deg = to;
	return 0;
}

#define DEGREE_KNOB(fn, field)						\
static void								\
show_##fn(const struct vp_tui *t, struct vp_buf *o)			\
{									\
	vp_buf_printf(o, "%u", t->ses->plan.field);			\
}									\
static int								\
step_##fn(struct vp_tui *t, int dir, bool big)				\
{									\
	return step_degree(t, &t->ses->plan.field, dir, big);		\
}
DEGREE_KNOB(pp, pp)
DEGREE_KNOB(cp, cp)
DEGREE_KNOB(ep, ep)
#undef DEGREE_KNOB

static void
show_tp(const struct vp_tui *t, struct vp_buf *o)
{
	vp_buf_printf(o, "%u", t->ses->plan.tp);
}

/* Sequence parallelism follows TP unless the user pinned it. */
static int
step_tp(struct vp_tui *t, int dir, bool big)
{
	struct vp_plan *p = &t->ses->plan;

	if (step_degree(t, &p->tp, dir, big) != 0)
		return -1;
	if (p->tp <= 1)
		p->sp = false;
	else if (t->open.sp)
		p->sp = true;
	return 0;
}

static void
show_sp(const struct vp_tui *t, struct vp_buf *o)
{
	vp_buf_add(o, t->ses->plan.sp ? "on" : "off");
}

static int
step_sp(struct vp_tui *t, int dir, bool big)
{
	bool to = dir > 0;

	(void)big;
	if (t->ses->plan.sp == to)
		return -1;
	t->ses->plan.sp = to;
	return 0;
}

static void
show_lora(const struct vp_tui *t, struct vp_buf *o)
{
	if (t->ses->plan.lora_rank)
		vp_buf_printf(o, "%u", t->ses->plan.lora_rank);
	else
		vp_buf_add(o, "off");
}

/* Off, then powers of two from 1 to 65536 (big: x16). */
static int
step_lora(struct vp_tui *t, int dir, bool big)
{
	unsigned v = t->ses->plan.lora_rank, to;

	if (dir > 0)
		to = v == 0 ? 1 : (unsigned)pow2_step(v, 1) * (big ? 8 : 1);
	else
		to = v <= 1 ? 0 : big ? 0 : (unsigned)pow2_step(v, -1);
	if (to > 65536)
		to = 65536;
	if (to == v)
		return -1;
	t->ses->plan.lora_rank = to;
	return 0;
}

static void
show_gpu(const struct vp_tui *t, struct vp_buf *o)
{
	vp_buf_add(o, t->gs->gpu != NULL ? t->gs->gpu->id : "none");
}

/* A card of the catalog (g gives the searchable list). */
static void
set_gpu(struct vp_tui *t, const struct vp_gpu *g)
{
	if (t->gs->gpu == NULL && g != NULL) {
		t->gs->count = vp_tui_world(t);
		t->gs->counted = true;
	}
	t->gs->gpu = g;
	t->gs->via_alias = false;
	if (g == NULL)
		t->ses->plan.dp = 1;
}

static int
step_gpu(struct vp_tui *t, int dir, bool big)
{
	long i = t->gs->gpu ? (long)(t->gs->gpu - t->cat->v) : -1, to;

	to = i + (big ? 8 : 1) * dir;
	if (to < 0)
		to = 0;
	if (to >= (long)t->cat->n)
		to = (long)t->cat->n - 1;
	if (to == i || to < 0)
		return -1;
	set_gpu(t, &t->cat->v[to]);
	return 0;
}

static void
show_gpus(const struct vp_tui *t, struct vp_buf *o)
{
	vp_buf_printf(o, "%u", vp_tui_world(t));
}

static int
step_gpus(struct vp_tui *t, int dir, bool big)
{
	uint64_t v = t->gs->count;

	if (t->gs->gpu == NULL) {
		vp_tui_message(t, VP_LEVEL_WARN, "pick a card first (g); "
		    "without one the degrees make the job");
		return -1;
	}
	if (step_count(&v, dir, big, 1, 65536) != 0)
		return -1;
	t->gs->count = (unsigned)v;
	return 0;
}

static void
show_tokens(const struct vp_tui *t, struct vp_buf *o)
{
	char b[32];

	vp_buf_add(o, vp_fmt_count(b, sizeof b, (uint64_t)t->tokens));
}

/* 1, 2, 5 steps (big: x10) from a million to a quadrillion. */
static int
step_tokens(struct vp_tui *t, int dir, bool big)
{
	double v = t->tokens, e = pow(10, floor(log10(v) + 1e-9)), m = v / e;
	double to;

	if (big)
		to = dir > 0 ? v * 10 : v / 10;
	else if (dir > 0)
		to = m < 1.5 ? 2 * e : m < 3.5 ? 5 * e : 10 * e;
	else
		to = m > 5.5 ? 5 * e : m > 2.5 ? 2 * e : m > 1.5 ? e : e / 2;
	if (to < 1e6)
		to = 1e6;
	if (to > 1e15)
		to = 1e15;
	if (to == v)
		return -1;
	t->tokens = to;
	return 0;
}

#define OPT(id) VP_O_##id, VP_OPEN_NONE, NULL, NULL
const struct vp_knob_info vp_knobs[VP_KNOB_COUNT] = {
	[VP_KNOB_PRECISION] = { "precision", OPT(PRECISION) },
	[VP_KNOB_OPTIMIZER] = { "optimizer", OPT(OPTIMIZER) },
	[VP_KNOB_MICRO_BATCH] = { "micro-batch", OPT(MICRO_BATCH) },
	[VP_KNOB_SEQ] = { "seq", -1, VP_OPEN_NONE, show_seq, step_seq },
	[VP_KNOB_GRAD_ACCUM] = { "grad-accum", OPT(GRAD_ACCUM) },
	[VP_KNOB_RECOMPUTE] = { "recompute", OPT(RECOMPUTE) },
	[VP_KNOB_ATTENTION] = { "attention", OPT(ATTENTION) },
	[VP_KNOB_SHARDING] = { "ZeRO/FSDP", -1, VP_OPEN_SHARD, show_sharding,
	    step_sharding },
	[VP_KNOB_TP] = { "TP", -1, VP_OPEN_TP, show_tp, step_tp },
	[VP_KNOB_SP] = { "SP", -1, VP_OPEN_SP, show_sp, step_sp },
	[VP_KNOB_PP] = { "PP", -1, VP_OPEN_PP, show_pp, step_pp },
	[VP_KNOB_CP] = { "CP", -1, VP_OPEN_CP, show_cp, step_cp },
	[VP_KNOB_EP] = { "EP", -1, VP_OPEN_EP, show_ep, step_ep },
	[VP_KNOB_LORA] = { "LoRA rank", -1, VP_OPEN_NONE, show_lora,
	    step_lora },
	[VP_KNOB_QUANT] = { "quant", OPT(QUANT) },
	[VP_KNOB_OFFLOAD] = { "offload", OPT(OFFLOAD) },
	[VP_KNOB_GPU] = { "GPU", -1, VP_OPEN_NONE, show_gpu, step_gpu },
	[VP_KNOB_GPUS] = { "GPUs", -1, VP_OPEN_NONE, show_gpus, step_gpus },
	[VP_KNOB_TOKENS] = { "tokens", -1, VP_OPEN_NONE, show_tokens,
	    step_tokens },
};
#undef OPT

void
vp_knob_show(const struct vp_tui *t, enum vp_knob k, struct vp_buf *out)
{
	if (vp_knobs[k].show != NULL)
		vp_knobs[k].show(t, out);
	else
		show_option(t, (enum vp_optid)vp_knobs[k].opt, out);
}

int
vp_knob_step(struct vp_tui *t, enum vp_knob k, int dir, bool big)
{
	if (vp_knobs[k].step != NULL)
		return vp_knobs[k].step(t, dir, big);
	return step_option(t, (enum vp_optid)vp_knobs[k].opt, dir, big);
}

bool *
vp_knob_open(struct vp_open *open, enum vp_knob k)
{
	const struct vp_knob_info *ki = &vp_knobs[k];

	return vp_open_flag(open, ki->opt >= 0 ? vp_options[ki->opt].open :
	    ki->open);
}

/* ---- running the estimate ------------------------------------------- */

int
vp_tui_run(struct vp_tui *t, bool plan)
{
	struct vp_session *s = t->ses;
	struct vp_diags d = { 0 };
	unsigned world;
	int rc;

	/* Degrees come from vp_cli_setup (defaults, ranges from 1) and
	 * step_degree, so the plan is normalised before every run. */
	assert(vp_plan_degrees_ok(&s->plan));
	world = vp_tui_world(t);
	s->world = world;
	s->gpus = t->gs;
	if (t->gs->gpu != NULL) {
		if (!t->node_layout)
			s->plan.gpus_per_node =
			    world < VP_DEFAULT_GPUS_PER_NODE ? world :
			    VP_DEFAULT_GPUS_PER_NODE;
		s->plan.dp = vp_plan_dp(&s->plan, world);
	} else if (s->plan.dp == 0) {
		s->plan.dp = 1;
	}
	s->search = plan && t->gs->gpu != NULL;
	s->open = t->open;
	s->timeline = &t->tl;
	/* The inverse queries of the command line are not shown here. */
	s->min_gpus = s->max_seq = s->explain = false;
	s->no_auto_min_gpus = true;
	s->best_only = true;
	rc = vp_session_run(s, &d);
	s->search = false;
	t->valid = rc == 0;
	t->error[0] = '\0';
	if (rc != 0) {
		size_t i;

		for (i = 0; i < d.n && d.v[i].level != VP_ERROR; i++)
			;
		snprintf(t->error, sizeof t->error, "%s", i < d.n ?
		    d.v[i].msg : "the plan is not valid");
	}
	vp_diags_clear(&d);
	return rc;
}

/* The planner's answer, in the status line. */
static void
planned(struct vp_tui *t)
{
	const struct vp_search_result *r = &t->ses->sres;
	struct vp_buf lay;

	if (!t->valid || t->ses->rep.search == NULL) {
		if (t->valid)
			vp_tui_message(t, VP_LEVEL_INFO, "every knob the "
			    "planner could change is pinned (u frees one)");
		return;
	}
	vp_buf_init(&lay);
	vp_report_layout(&lay, &t->ses->plan);
	if (r->nbest > 0)
		vp_tui_message(t, VP_LEVEL_GOOD, "planner: best of %llu "
		    "plans (%llu replayed, fastest first): %s, recompute %s",
		    (unsigned long long)r->candidates,
		    (unsigned long long)r->evaluated, lay.s,
		    vp_recomp_names[t->ses->plan.recompute]);
	else
		vp_tui_message(t, VP_LEVEL_BAD, "planner: none of %llu plans "
		    "fits; showing the nearest miss: %s",
		    (unsigned long long)r->evaluated, lay.s);
	vp_buf_free(&lay);
}

int
vp_tui_init(struct vp_tui *t)
{
	t->mode = VP_MODE_MAIN;
	t->sel = t->top = 0;
	t->msg[0] = t->input[0] = '\0';
	if (t->tokens <= 0)
		t->tokens = 1e9;
	t->open = t->ses->open;
	/* As the estimate would: the planner when it would run there. */
	return vp_tui_run(t, t->ses->search);
}

int
vp_tui_model_changed(struct vp_tui *t, const char *model_arg)
{
	const struct vp_model *m = t->ses->model;
	struct vp_plan *p = &t->ses->plan;
	int rc;

	t->model_arg = model_arg;
	/* Keep the knobs; fit what the new model cannot take. */
	if (m->pos == VP_POS_LEARNED && m->max_seq && p->seq > m->max_seq)
		p->seq = m->max_seq;
	if (!m->has_moe) {
		p->ep = 1;
		t->open.ep = false;
	} else {
		t->open.ep = true;
	}
	p->lora_targets &= vp_lora_available(m);
	if (p->lora_targets == 0)
		p->lora_targets = vp_lora_available(m);
	rc = vp_tui_run(t, true);
	planned(t);
	if (rc == 0) {
		char said[VP_TUI_MSG];

		memcpy(said, t->msg, sizeof said);
		vp_tui_message(t, VP_LEVEL_INFO, "model %s (%s)%s%s", m->name,
		    model_arg, said[0] ? "; " : "", said);
	}
	return rc;
}

void
vp_tui_planfile(const struct vp_tui *t, struct vp_planfile *f)
{
	memset(f, 0, sizeof *f);
	f->model = t->ses->model;
	f->model_arg = t->model_arg;
	f->plan = &t->ses->plan;
	f->gpu = t->gs->gpu;
	f->count = vp_tui_world(t);
	f->version = t->version;
}

/* ---- lists ----------------------------------------------------------- */

static bool
contains(const char *hay, const char *needle)
{
	size_t n = strlen(needle), i, j;

	if (hay == NULL)
		return false;
	for (i = 0; hay[i]; i++) {
		for (j = 0; j < n && hay[i + j]; j++) {
			char a = hay[i + j], b = needle[j];

			if (a >= 'A' && a <= 'Z')
				a = (char)(a - 'A' + 'a');
			if (b >= 'A' && b <= 'Z')
				b = (char)(b - 'A' + 'a');
			if (a != b)
				break;
		}
		if (j == n)
			return true;
	}
	return n == 0;
}

size_t
vp_tui_gpu_matches(const struct vp_tui *t, size_t *idx, size_t max)
{
	size_t i, j, n = 0;

	for (i = 0; i < t->cat->n && n < max; i++) {
		const struct vp_gpu *g = &t->cat->v[i];
		bool hit = contains(g->id, t->input) ||
		    contains(g->name, t->input) ||
		    contains(g->vendor, t->input);

		for (j = 0; !hit && j < g->naliases; j++)
			hit = contains(g->aliases[j], t->input);
		if (hit)
			idx[n++] = i;
	}
	return n;
}

size_t
vp_tui_model_matches(const struct vp_tui *t, size_t *idx, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < t->nmodels && n < max; i++)
		if (contains(t->models[i], t->input))
			idx[n++] = i;
	return n;
}

/* ---- keys ------------------------------------------------------------ */

static void change_done(struct vp_tui *t, int knob);

/* Apply one step of the selected knob and re-estimate. */
static void
change(struct vp_tui *t, int knob, int dir, bool big)
{
	const struct vp_knob_info *k = &vp_knobs[knob];
	bool *open = vp_knob_open(&t->open, (enum vp_knob)knob);

	if (vp_knob_step(t, (enum vp_knob)knob, dir, big) != 0) {
		if (t->msg[0] == '\0')
			vp_tui_message(t, VP_LEVEL_INFO, "%s: at the %s of its "
			    "range", k->label, dir > 0 ? "end" : "start");
		return;
	}
	/* Choosing a planner knob pins it, as giving its option does. */
	if (open != NULL)
		*open = false;
	change_done(t, knob);
}

/* After a knob changed: a new card's profile, then re-estimate. */
static void
change_done(struct vp_tui *t, int knob)
{
	if (knob == VP_KNOB_GPU) {
		struct vp_buf msg;

		vp_buf_init(&msg);
		if (t->profile == NULL)
			vp_profile_default(t->gs->gpu, &t->ses->profile);
		else if (t->profile(t->profile_ctx, t->ses, &msg) != 0)
			vp_tui_message(t, VP_LEVEL_WARN, "%s", msg.s);
		vp_buf_free(&msg);
	}
	if (knob != VP_KNOB_TOKENS)
		vp_tui_run(t, false);
}

static void
auto_plan(struct vp_tui *t)
{
	if (t->gs->gpu == NULL) {
		vp_tui_message(t, VP_LEVEL_WARN, "the planner needs a card: "
		    "press g to pick one");
		return;
	}
	if (t->ses->plan.device == VP_DEVICE_CPU) {
		vp_tui_message(t, VP_LEVEL_WARN, "the planner plans CUDA jobs "
		    "(this plan runs on the CPU)");
		return;
	}
	vp_tui_run(t, true);
	planned(t);
}

static void
unpin(struct vp_tui *t)
{
	bool *open = vp_knob_open(&t->open, (enum vp_knob)t->sel);

	if (open == NULL) {
		vp_tui_message(t, VP_LEVEL_INFO, "%s is not the planner's to "
		    "choose; only TP, SP, PP, CP, EP, ZeRO/FSDP, recompute "
		    "and grad-accum are", vp_knobs[t->sel].label);
		return;
	}
	if (t->sel == VP_KNOB_EP && !t->ses->model->has_moe) {
		vp_tui_message(t, VP_LEVEL_INFO, "EP needs a MoE model");
		return;
	}
	*open = true;
	vp_tui_message(t, VP_LEVEL_INFO, "%s: the planner may change it "
	    "now (a)", vp_knobs[t->sel].label);
}

static void
open_list(struct vp_tui *t, enum vp_tui_mode mode)
{
	size_t idx[1024], n, i;

	t->mode = mode;
	t->input[0] = '\0';
	t->pick = t->pick_top = 0;
	/* Start on the current card or model. */
	if (mode == VP_MODE_GPU && t->gs->gpu != NULL) {
		n = vp_tui_gpu_matches(t, idx, VP_NELEM(idx));
		for (i = 0; i < n; i++)
			if (&t->cat->v[idx[i]] == t->gs->gpu)
				t->pick = (int)i;
	} else if (mode == VP_MODE_MODEL) {
		n = vp_tui_model_matches(t, idx, VP_NELEM(idx));
		for (i = 0; i < n; i++)
			if (strcmp(t->models[idx[i]], t->model_arg) == 0)
				t->pick = (int)i;
	}
}

/* The default file name for s: the model's name, .plan.yaml. */
static void
default_path(struct vp_tui *t)
{
	static const char *const ext[] = { ".yaml", ".yml", ".json" };
	const char *base = strrchr(t->model_arg, '/');
	size_t n, i;

	base = base ? base + 1 : t->model_arg;
	n = strlen(base);
	for (i = 0; i < VP_NELEM(ext); i++)
		if (n > strlen(ext[i]) &&
		    strcmp(base + n - strlen(ext[i]), ext[i]) == 0)
			n -= strlen(ext[i]);
	if (n > 64)
		n = 64;
	snprintf(t->input, sizeof t->input, "%.*s.plan.yaml", (int)n, base);
}

/* Text typed into the search field or the save prompt. */
static bool
edit_input(struct vp_tui *t, const struct vp_tui_event *ev)
{
	size_t n = strlen(t->input);

	switch (ev->kind) {
	case VP_EV_CHAR:
		if (ev->ch < 0x20 || ev->ch > 0x7e || n + 1 >= sizeof t->input)
			return false;
		t->input[n] = (char)ev->ch;
		t->input[n + 1] = '\0';
		return true;
	case VP_EV_BACKSPACE:
		if (n > 0)
			t->input[n - 1] = '\0';
		return true;
	case VP_EV_KILL:
		t->input[0] = '\0';
		return true;
	default:
		return false;
	}
}

static enum vp_tui_req
list_key(struct vp_tui *t, const struct vp_tui_event *ev)
{
	size_t idx[1024], n;
	int at;

	n = t->mode == VP_MODE_GPU ? vp_tui_gpu_matches(t, idx,
	    VP_NELEM(idx)) : vp_tui_model_matches(t, idx, VP_NELEM(idx));
	switch (ev->kind) {
	case VP_EV_ESC:
		t->mode = VP_MODE_MAIN;
		return VP_REQ_NONE;
	case VP_EV_UP: case VP_EV_WHEEL_UP:
		t->pick -= t->pick > 0;
		return VP_REQ_NONE;
	case VP_EV_DOWN: case VP_EV_WHEEL_DOWN:
		t->pick += t->pick + 1 < (int)n;
		return VP_REQ_NONE;
	case VP_EV_PGUP:
		t->pick = t->pick > 10 ? t->pick - 10 : 0;
		return VP_REQ_NONE;
	case VP_EV_PGDN:
		t->pick = t->pick + 10 < (int)n ? t->pick + 10 :
		    (int)n - (n > 0);
		return VP_REQ_NONE;
	case VP_EV_CLICK:
		if ((at = ev->pick) < 0 ||
		    at >= (int)n)
			return VP_REQ_NONE;
		if (at != t->pick) {
			t->pick = at;
			return VP_REQ_NONE;
		}
		break;		/* a second click chooses it */
	case VP_EV_ENTER:
		break;
	default:
		if (edit_input(t, ev))
			t->pick = 0;
		return VP_REQ_NONE;
	}
	if (n == 0) {
		vp_tui_message(t, VP_LEVEL_WARN, "nothing matches '%s'",
		    t->input);
		return VP_REQ_NONE;
	}
	if (t->pick >= (int)n)
		t->pick = (int)n - 1;
	if (t->mode == VP_MODE_MODEL) {
		t->mode = VP_MODE_MAIN;
		t->pick_model = idx[t->pick];
		return VP_REQ_MODEL;
	}
	t->mode = VP_MODE_MAIN;
	if (&t->cat->v[idx[t->pick]] != t->gs->gpu) {
		set_gpu(t, &t->cat->v[idx[t->pick]]);
		change_done(t, VP_KNOB_GPU);
	}
	return VP_REQ_NONE;
}

static enum vp_tui_req
overlay_key(struct vp_tui *t, const struct vp_tui_event *ev)
{
	switch (t->mode) {
	case VP_MODE_GPU:
	case VP_MODE_MODEL:
		return list_key(t, ev);
	case VP_MODE_SAVE:
		if (ev->kind == VP_EV_ESC) {
			t->mode = VP_MODE_MAIN;
			vp_tui_message(t, VP_LEVEL_INFO, "not saved");
		} else if (ev->kind == VP_EV_ENTER) {
			t->mode = VP_MODE_MAIN;
			if (t->input[0] != '\0')
				return VP_REQ_SAVE;
			vp_tui_message(t, VP_LEVEL_WARN, "not saved: no file "
			    "name");
		} else {
			edit_input(t, ev);
		}
		return VP_REQ_NONE;
	default:
		/* Help and the command line: any key closes them. */
		t->mode = VP_MODE_MAIN;
		return VP_REQ_NONE;
	}
}

static void
move(struct vp_tui *t, int by)
{
	t->sel += by;
	if (t->sel < 0)
		t->sel = 0;
	if (t->sel >= VP_KNOB_COUNT)
		t->sel = VP_KNOB_COUNT - 1;
}

/* The letter commands of the main view. */
static enum vp_tui_req
command(struct vp_tui *t, int ch)
{
	switch (ch) {
	case 'k': move(t, -1); break;
	case 'j': move(t, 1); break;
	case 'h': case '-': case '_': change(t, t->sel, -1, false); break;
	case 'l': case '+': case '=': change(t, t->sel, 1, false); break;
	case 'g': open_list(t, VP_MODE_GPU); break;
	case 'm': open_list(t, VP_MODE_MODEL); break;
	case 'a': auto_plan(t); break;
	case 'u': unpin(t); break;
	case 's':
		t->mode = VP_MODE_SAVE;
		default_path(t);
		break;
	case 'c': t->mode = VP_MODE_COMMAND; break;
	case '?': t->mode = VP_MODE_HELP; break;
	case 'q': return VP_REQ_QUIT;
	case 'L' - '@': return VP_REQ_REDRAW;
	default:
		if (ch >= 0x20 && ch < 0x7f)
			vp_tui_message(t, VP_LEVEL_INFO, "no command on '%c' "
			    "(? shows the keys)", ch);
	}
	return VP_REQ_NONE;
}

enum vp_tui_req
vp_tui_key(struct vp_tui *t, const struct vp_tui_event *ev)
{
	int k;

	if (ev->kind == VP_EV_RESIZE)
		return VP_REQ_NONE;
	t->msg[0] = '\0';
	if (t->mode != VP_MODE_MAIN)
		return overlay_key(t, ev);
	switch (ev->kind) {
	case VP_EV_CHAR: return command(t, ev->ch);
	case VP_EV_UP: move(t, -1); break;
	case VP_EV_DOWN: move(t, 1); break;
	case VP_EV_HOME: t->sel = 0; break;
	case VP_EV_END: t->sel = VP_KNOB_COUNT - 1; break;
	case VP_EV_LEFT: change(t, t->sel, -1, false); break;
	case VP_EV_RIGHT: change(t, t->sel, 1, false); break;
	case VP_EV_PGUP: change(t, t->sel, 1, true); break;
	case VP_EV_PGDN: change(t, t->sel, -1, true); break;
	case VP_EV_CLICK:
		/* A click selects a knob; a click on the selected one steps
		 * it up. */
		if ((k = ev->knob) < 0)
			break;
		if (k == t->sel)
			change(t, k, 1, false);
		t->sel = k;
		break;
	case VP_EV_WHEEL_UP: case VP_EV_WHEEL_DOWN:
		if ((k = ev->knob) >= 0) {
			t->sel = k;
			change(t, k, ev->kind == VP_EV_WHEEL_UP ? 1 : -1,
			    false);
		}
		break;
	default:
		break;
	}
	return VP_REQ_NONE;
}
