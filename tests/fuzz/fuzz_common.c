/*
 * fuzz_common.c — what the fuzz targets share (fuzz.h): the shipped
 * catalog, a small model, and one estimate rendered three ways.
 */
#include "fuzz.h"

#include <string.h>

#include "diag.h"
#include "finetune.h"
#include "gpu_read.h"
#include "model_read.h"
#include "options.h"
#include "plan.h"
#include "plan_read.h"
#include "report.h"
#include "session.h"
#include "util.h"
#include "ydoc.h"

/* The command line's limit on a job (cli.c). */
#define FUZZ_MAX_GPUS 65536u

const struct vp_catalog *
fuzz_catalog(void)
{
	static struct vp_catalog cat;
	static int loaded;
	struct vp_diags d = { 0 };
	struct vp_buf path, msg;
	const char *dir = getenv("VRAMPLAN_DATA");

	if (loaded)
		return &cat;
	vp_buf_init(&path);
	vp_buf_printf(&path, "%s/gpus.yaml", dir != NULL && *dir ? dir :
	    VP_SRCDIR "/models");
	if (vp_catalog_load(path.s, &cat, &d) != 0) {
		vp_buf_init(&msg);
		vp_diags_format(&d, &msg);
		fprintf(stderr, "fuzz: cannot load the catalog '%s':\n%s",
		    path.s, msg.s);
		abort();
	}
	vp_diags_clear(&d);
	vp_buf_free(&path);
	loaded = 1;
	return &cat;
}

const struct vp_model *
fuzz_small_model(void)
{
	static const char text[] =
	    "name: fuzz-small\nlayers: 2\nhidden: 256\nheads: 4\n"
	    "kv_heads: 2\nffn: 704\nvocab: 1000\nnorm: rmsnorm\n"
	    "activation: swiglu\nposition: rope\nmax_seq: 4096\n"
	    "implementation: hf\n";
	static struct vp_model m;
	static int loaded;
	struct vp_diags d = { 0 };
	struct ydoc *doc;

	if (loaded)
		return &m;
	doc = ydoc_parse_as("small.yaml", "model file", text, strlen(text),
	    &d);
	fuzz_check(doc != NULL);
	fuzz_check(vp_model_from_doc(doc, &m, &d) == 0);
	ydoc_free(doc);
	vp_diags_clear(&d);
	loaded = 1;
	return &m;
}

/*
 * A strict JSON (RFC 8259) checker: the value at *p, whitespace around.
 * Returns false at the first byte that breaks the grammar: a NaN or an
 * infinity printed as a number, a raw control character or a bad escape
 * in a string, a missing comma.  Depth is bounded by the writer's.
 */
static void
ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

static bool json_value(const char **p, int depth);

static bool
json_string(const char **p)
{
	int i;

	if (*(*p)++ != '"')
		return false;
	for (;;) {
		unsigned char c = (unsigned char)*(*p)++;

		if (c == '"')
			return true;
		if (c < 0x20)
			return false;	/* raw control character or the end */
		if (c != '\\')
			continue;
		c = (unsigned char)*(*p)++;
		if (c == 'u') {
			for (i = 0; i < 4; i++, (*p)++)
				if (!((**p >= '0' && **p <= '9') ||
				    (**p >= 'a' && **p <= 'f') ||
				    (**p >= 'A' && **p <= 'F')))
					return false;
		} else if (strchr("\"\\/bfnrt", c) == NULL || c == 0) {
			return false;
		}
	}
}

static bool
json_number(const char **p)
{
	const char *s = *p;

	if (**p == '-')
		(*p)++;
	if (**p == '0')
		(*p)++;
	else if (**p >= '1' && **p <= '9')
		while (**p >= '0' && **p <= '9')
			(*p)++;
	else
		return false;
	if (**p == '.') {
		(*p)++;
		if (!(**p >= '0' && **p <= '9'))
			return false;
		while (**p >= '0' && **p <= '9')
			(*p)++;
	}
	if (**p == 'e' || **p == 'E') {
		(*p)++;
		if (**p == '+' || **p == '-')
			(*p)++;
		if (!(**p >= '0' && **p <= '9'))
			return false;
		while (**p >= '0' && **p <= '9')
			(*p)++;
	}
	return *p > s;
}

static bool
json_value(const char **p, int depth)
{
	char close;

	ws(p);
	if (depth > 64)
		return false;
	if (**p == '"')
		return json_string(p);
	if (strncmp(*p, "true", 4) == 0 || strncmp(*p, "null", 4) == 0) {
		*p += 4;
		return true;
	}
	if (strncmp(*p, "false", 5) == 0) {
		*p += 5;
		return true;
	}
	if (**p != '{' && **p != '[')
		return json_number(p);
	close = **p == '{' ? '}' : ']';
	(*p)++;
	ws(p);
	if (**p == close) {
		(*p)++;
		return true;
	}
	for (;;) {
		if (close == '}') {
			ws(p);
			if (!json_string(p))
				return false;
			ws(p);
			if (*(*p)++ != ':')
				return false;
		}
		if (!json_value(p, depth + 1))
			return false;
		ws(p);
		if (**p == close) {
			(*p)++;
			return true;
		}
		if (*(*p)++ != ',')
			return false;
	}
}

static bool
json_ok(const char *s)
{
	if (!json_value(&s, 0))
		return false;
	ws(&s);
	return *s == '\0';
}

/* The three renderers; the JSON must be JSON. */
static void
render(const struct vp_report *rep)
{
	struct vp_buf out;

	vp_buf_init(&out);
	vp_report_text(rep, &out);
	fuzz_check(out.s != NULL && out.len > 0);
	vp_buf_free(&out);
	vp_buf_init(&out);
	vp_report_csv(rep, &out);
	fuzz_check(out.s != NULL && out.len > 0);
	vp_buf_free(&out);
	vp_buf_init(&out);
	vp_report_json(rep, &out);
	fuzz_check(out.s != NULL && out.len > 0);
	if (!json_ok(out.s)) {
		fprintf(stderr, "fuzz: the JSON report is not JSON:\n%s\n",
		    out.s);
		abort();
	}
	vp_buf_free(&out);
}

void
fuzz_estimate(const struct vp_model *m, const struct vp_optset *o,
    const struct vp_catalog *cat, const struct vp_profile *prof,
    bool search)
{
	struct vp_diags d = { 0 };
	struct vp_session s;
	struct vp_gpuset gs;
	struct vp_buf msg;
	unsigned world;

	memset(&s, 0, sizeof s);
	memset(&gs, 0, sizeof gs);
	vp_plan_defaults(&s.plan, m);
	vp_optset_apply(o, &s.plan);
	if (s.plan.lora_targets == VP_LORA_ALL_LINEAR)
		s.plan.lora_targets &= vp_lora_available(m);
	if (o->has[VP_O_GPUS]) {
		int rc;

		vp_buf_init(&msg);
		rc = vp_gpuset_parse(cat, o->val[VP_O_GPUS].s, &gs, &msg);
		vp_buf_free(&msg);
		if (rc != 0)
			goto out;
		world = gs.count;
		s.plan.gpus_per_node = world < VP_DEFAULT_GPUS_PER_NODE ?
		    world : VP_DEFAULT_GPUS_PER_NODE;
		if (s.plan.dp == 0)
			s.plan.dp = vp_plan_dp(&s.plan, world);
	} else {
		if (s.plan.dp == 0)
			s.plan.dp = 1;
		world = vp_plan_world(&s.plan);
	}
	if (world == 0 || world > FUZZ_MAX_GPUS)
		goto out;
	s.model = m;
	s.gpus = o->has[VP_O_GPUS] ? &gs : NULL;
	s.world = world;
	/* The planner and the fewest-GPU search answer within a second
	 * at any count (issue 17, finding 3): a slower input is a finding
	 * (-timeout in run.sh). */
	s.search = search;
	vp_optset_open(o, m->has_moe, &s.open);
	s.nplans = 2;
	s.version = "fuzz";
	if (prof != NULL)
		s.profile = *prof;
	else
		vp_profile_default(gs.gpu, &s.profile);
	s.profile_label = "fuzz";
	if (vp_session_run(&s, &d) == 0)
		render(&s.rep);
	else
		fuzz_check(vp_diags_count(&d, VP_ERROR) > 0);
out:
	vp_session_free(&s);
	vp_gpuset_free(&gs);
	vp_diags_clear(&d);
}

void
fuzz_estimate_text(const struct vp_model *m, const char *plan_text,
    bool search, const struct vp_profile *prof)
{
	struct vp_diags d = { 0 };
	struct vp_optset o;
	struct ydoc *doc;

	doc = ydoc_parse_as("plan.yaml", "plan file", plan_text,
	    strlen(plan_text), &d);
	fuzz_check(doc != NULL);
	fuzz_check(vp_plan_from_doc(doc, &o, &d) == 0);
	fuzz_estimate(m, &o, fuzz_catalog(), prof, search);
	vp_optset_free(&o);
	ydoc_free(doc);
	vp_diags_clear(&d);
}
