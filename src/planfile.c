/* planfile.c — a plan as YAML and as a command line (see planfile.h). */
#include "planfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
vp_planfile_value(const struct vp_planfile *f, enum vp_optid k,
    struct vp_buf *out)
{
	if (k == VP_O_GPUS) {
		if (f->gpu != NULL)
			vp_buf_printf(out, "%ux%s", f->count, f->gpu->id);
		return;
	}
	vp_option_value(k, f->plan, out);
}

/* Characters a YAML plain scalar and a shell word may hold unquoted. */
static bool
plain_word(const char *s)
{
	if (*s == '\0' || *s == '-' || *s == '.')
		return false;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		    ('0' <= *s && *s <= '9') || strchr("._+-,/", *s)))
			return false;
	return true;
}

/* Keys that do not apply: no GPU set, the model's own dropout. */
static bool
key_absent(const struct vp_planfile *f, enum vp_optid k)
{
	if (!vp_options[k].planfile)
		return true;
	if (k == VP_O_GPUS || k == VP_O_GPUS_PER_NODE)
		return f->gpu == NULL;
	if (k == VP_O_DROPOUT)
		return f->plan->dropout < 0;
	if (k == VP_O_ALLOC_CONF)
		return f->plan->alloc_conf[0] == '\0';
	return false;
}

void
vp_planfile_write(const struct vp_planfile *f, struct vp_buf *out)
{
	struct vp_buf v;
	int k;

	vp_buf_printf(out, "# vramplan plan for %s (%s)\n", f->model->name,
	    f->model_arg);
	vp_buf_printf(out, "# written by vramplan %s; reload with: vramplan "
	    "MODEL --plan FILE\n", f->version);
	vp_buf_printf(out, "%s: %d\n", VP_PLANFILE_VERSION_KEY,
	    VP_PLANFILE_VERSION);
	vp_buf_init(&v);
	for (k = 0; k < VP_O_COUNT; k++) {
		if (key_absent(f, (enum vp_optid)k))
			continue;
		v.len = 0;
		v.s[0] = '\0';
		vp_planfile_value(f, (enum vp_optid)k, &v);
		if (plain_word(v.s))
			vp_buf_printf(out, "%s: %s\n", vp_options[k].name, v.s);
		else {
			vp_buf_printf(out, "%s: ", vp_options[k].name);
			vp_buf_json_str(out, v.s);
			vp_buf_add(out, "\n");
		}
	}
	vp_buf_free(&v);
}

/* A word for a POSIX shell: as is, or in single quotes. */
static void
shell_word(struct vp_buf *out, const char *s)
{
	if (plain_word(s) || (*s == '.' && plain_word(s + 1))) {
		vp_buf_add(out, s);
		return;
	}
	vp_buf_add(out, "'");
	for (; *s; s++)
		if (*s == '\'')
			vp_buf_add(out, "'\\''");
		else
			vp_buf_addn(out, s, 1);
	vp_buf_add(out, "'");
}

void
vp_planfile_cmdline(const struct vp_planfile *f, struct vp_buf *out)
{
	struct vp_plan def = { 0 };
	struct vp_planfile d = *f;
	struct vp_buf a, b;
	int k;

	/* What the estimate takes when an option is not given. */
	vp_plan_defaults(&def, f->model);
	def.gpus_per_node = f->count < VP_DEFAULT_GPUS_PER_NODE ? f->count :
	    VP_DEFAULT_GPUS_PER_NODE;
	d.plan = &def;
	vp_buf_add(out, "vramplan ");
	shell_word(out, f->model_arg);
	vp_buf_init(&a);
	vp_buf_init(&b);
	for (k = 0; k < VP_O_COUNT; k++) {
		const struct vp_optdef *ki = &vp_options[k];

		if (key_absent(f, (enum vp_optid)k))
			continue;
		a.len = b.len = 0;
		a.s[0] = b.s[0] = '\0';
		vp_planfile_value(f, (enum vp_optid)k, &a);
		if (k != VP_O_GPUS) {
			vp_planfile_value(&d, (enum vp_optid)k, &b);
			if (strcmp(a.s, b.s) == 0)
				continue;
		}
		if (ki->kind == VP_OK_FLAG) {
			/* A flag only turns a knob on. */
			if (strcmp(a.s, "true") == 0)
				vp_buf_printf(out, " --%s", ki->name);
			continue;
		}
		vp_buf_printf(out, " --%s ", ki->name);
		shell_word(out, a.s);
	}
	vp_buf_free(&a);
	vp_buf_free(&b);
	if (f->gpu != NULL)
		vp_buf_add(out, " --no-search");
}
