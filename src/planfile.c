/* planfile.c — a plan as YAML and as a command line (see planfile.h). */
#include "planfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define X(e, s) s,
const char *const vp_pk_names[VP_PK_COUNT] = { VP_PK_LIST(X) };
#undef X

const char *const vp_lora_dtype_names[2] = { "fp32", "bf16" };

/* Every enum of struct vp_plan is read and written as an int. */
_Static_assert(sizeof(enum vp_precision) == sizeof(int) &&
    sizeof(enum vp_optimizer) == sizeof(int) &&
    sizeof(enum vp_recompute) == sizeof(int) &&
    sizeof(enum vp_attention) == sizeof(int) &&
    sizeof(enum vp_framework) == sizeof(int) &&
    sizeof(enum vp_fsdp) == sizeof(int) &&
    sizeof(enum vp_device) == sizeof(int) &&
    sizeof(enum vp_quant) == sizeof(int) &&
    sizeof(enum vp_offload) == sizeof(int) &&
    sizeof(enum vp_loss) == sizeof(int), "plan enums are int-sized");

#define F(field) offsetof(struct vp_plan, field)
#define E(tab, n) tab, n

/* Ranges are the command line's (cli.c), except that the file may say 0
 * for LoRA (full fine-tuning) and the capacity factor (dropless). */
const struct vp_pk_info vp_pk_info[VP_PK_COUNT] = {
	[VP_PK_GPUS] = { "gpus", VP_PKK_GPUS, 0, NULL, 0, 0, 0 },
	[VP_PK_GPUS_PER_NODE] = { "gpus-per-node", VP_PKK_UINT,
	    F(gpus_per_node), NULL, 0, 1, 1024 },
	[VP_PK_PRECISION] = { "precision", VP_PKK_ENUM, F(precision),
	    E(vp_prec_names, VP_PREC_COUNT), 0, 0 },
	[VP_PK_OPTIMIZER] = { "optimizer", VP_PKK_ENUM, F(optimizer),
	    E(vp_opt_names, VP_OPT_COUNT), 0, 0 },
	[VP_PK_MICRO_BATCH] = { "micro-batch", VP_PKK_U64, F(micro_batch),
	    NULL, 0, 1, 1u << 20 },
	[VP_PK_SEQ] = { "seq", VP_PKK_U64, F(seq), NULL, 0, 1, 1u << 27 },
	[VP_PK_GRAD_ACCUM] = { "grad-accum", VP_PKK_U64, F(grad_accum), NULL,
	    0, 1, 1u << 20 },
	[VP_PK_RECOMPUTE] = { "recompute", VP_PKK_ENUM, F(recompute),
	    E(vp_recomp_names, VP_RECOMP_COUNT), 0, 0 },
	[VP_PK_ATTENTION] = { "attention", VP_PKK_ENUM, F(attention),
	    E(vp_attn_names, VP_ATTN_COUNT), 0, 0 },
	[VP_PK_DROPOUT] = { "dropout", VP_PKK_DOUBLE, F(dropout), NULL, 0,
	    0, 0.99 },
	[VP_PK_FRAMEWORK] = { "framework", VP_PKK_ENUM, F(framework),
	    E(vp_framework_names, VP_FW_COUNT), 0, 0 },
	[VP_PK_ZERO] = { "zero", VP_PKK_UINT, F(zero), NULL, 0, 0, 3 },
	[VP_PK_FSDP] = { "fsdp", VP_PKK_ENUM, F(fsdp),
	    E(vp_fsdp_names, VP_FSDP_COUNT), 0, 0 },
	[VP_PK_TP] = { "tp", VP_PKK_UINT, F(tp), NULL, 0, 1, 1024 },
	[VP_PK_SP] = { "sp", VP_PKK_BOOL, F(sp), NULL, 0, 0, 0 },
	[VP_PK_PP] = { "pp", VP_PKK_UINT, F(pp), NULL, 0, 1, 1024 },
	[VP_PK_VPP] = { "vpp", VP_PKK_UINT, F(vpp), NULL, 0, 1, 1024 },
	[VP_PK_CP] = { "cp", VP_PKK_UINT, F(cp), NULL, 0, 1, 1024 },
	[VP_PK_EP] = { "ep", VP_PKK_UINT, F(ep), NULL, 0, 1, 1024 },
	[VP_PK_CAPACITY] = { "capacity-factor", VP_PKK_DOUBLE,
	    F(capacity_factor), NULL, 0, 0, 16 },
	[VP_PK_DEVICE] = { "device", VP_PKK_ENUM, F(device),
	    E(vp_device_names, VP_DEVICE_COUNT), 0, 0 },
	[VP_PK_FUSED] = { "fused-optimizer", VP_PKK_BOOL, F(fused_optimizer),
	    NULL, 0, 0, 0 },
	[VP_PK_LORA] = { "lora", VP_PKK_UINT, F(lora_rank), NULL, 0, 0,
	    65536 },
	[VP_PK_LORA_TARGETS] = { "lora-targets", VP_PKK_TARGETS,
	    F(lora_targets), NULL, 0, 0, 0 },
	[VP_PK_LORA_DROPOUT] = { "lora-dropout", VP_PKK_DOUBLE,
	    F(lora_dropout), NULL, 0, 0, 0.99 },
	[VP_PK_LORA_DTYPE] = { "lora-dtype", VP_PKK_DTYPE, F(lora_dtype),
	    E(vp_lora_dtype_names, 2), 0, 0 },
	[VP_PK_QUANT] = { "quant", VP_PKK_ENUM, F(quant),
	    E(vp_quant_names, VP_QUANT_COUNT), 0, 0 },
	[VP_PK_OFFLOAD] = { "offload", VP_PKK_ENUM, F(offload),
	    E(vp_offload_names, VP_OFFLOAD_COUNT), 0, 0 },
	[VP_PK_OFFLOAD_NVME] = { "offload-nvme", VP_PKK_BOOL,
	    F(offload_nvme), NULL, 0, 0, 0 },
	[VP_PK_HOST_MEM] = { "host-mem", VP_PKK_GIB, F(host_mem_bytes), NULL,
	    0, 0, 1e6 },
	[VP_PK_ACT_OFFLOAD] = { "activation-offload", VP_PKK_BOOL,
	    F(activation_offload), NULL, 0, 0, 0 },
	[VP_PK_LOSS] = { "loss", VP_PKK_ENUM, F(loss),
	    E(vp_loss_names, VP_LOSS_COUNT), 0, 0 },
};
#undef F
#undef E

void
vp_plan_knobs_init(struct vp_plan_knobs *k)
{
	memset(k, 0, sizeof *k);
}

void
vp_plan_knobs_free(struct vp_plan_knobs *k)
{
	if (k == NULL)
		return;
	free(k->gpus);
	free(k->file);
	k->gpus = k->file = NULL;
}

int
vp_pk_get_enum(const struct vp_plan *p, enum vp_pk k)
{
	int v;

	memcpy(&v, (const char *)p + vp_pk_info[k].off, sizeof v);
	return v;
}

void
vp_pk_set_enum(struct vp_plan *p, enum vp_pk k, int v)
{
	memcpy((char *)p + vp_pk_info[k].off, &v, sizeof v);
}

/* The shortest decimal that reads back as the same double. */
static void
add_double(struct vp_buf *out, double v)
{
	char b[40];
	int prec;

	for (prec = 1; prec < 17; prec++) {
		snprintf(b, sizeof b, "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	snprintf(b, sizeof b, "%.*g", prec, v);
	vp_buf_add(out, b);
}

static void
add_targets(struct vp_buf *out, unsigned bits)
{
	int i, n = 0;

	for (i = 0; i < VP_LORA_TARGET_COUNT; i++)
		if (bits & (1u << i))
			vp_buf_printf(out, "%s%s", n++ ? "," : "",
			    vp_lora_target_names[i]);
	if (n == 0)
		vp_buf_add(out, "none");
}

void
vp_planfile_value(const struct vp_planfile *f, enum vp_pk k,
    struct vp_buf *out)
{
	const struct vp_pk_info *ki = &vp_pk_info[k];
	const char *field = (const char *)f->plan + ki->off;
	uint64_t u;
	unsigned w;
	double x;
	bool b;

	switch (ki->kind) {
	case VP_PKK_ENUM:
		vp_buf_add(out, ki->names[vp_pk_get_enum(f->plan, k)]);
		break;
	case VP_PKK_U64:
		memcpy(&u, field, sizeof u);
		vp_buf_printf(out, "%llu", (unsigned long long)u);
		break;
	case VP_PKK_UINT:
		memcpy(&w, field, sizeof w);
		vp_buf_printf(out, "%u", w);
		break;
	case VP_PKK_DOUBLE:
		memcpy(&x, field, sizeof x);
		add_double(out, x);
		break;
	case VP_PKK_BOOL:
		memcpy(&b, field, sizeof b);
		vp_buf_add(out, b ? "true" : "false");
		break;
	case VP_PKK_GPUS:
		if (f->gpu != NULL)
			vp_buf_printf(out, "%ux%s", f->count, f->gpu->id);
		break;
	case VP_PKK_TARGETS:
		add_targets(out, f->plan->lora_targets);
		break;
	case VP_PKK_DTYPE:
		vp_buf_add(out, vp_lora_dtype_names[f->plan->lora_dtype ==
		    VP_BF16]);
		break;
	case VP_PKK_GIB:
		/* Bytes / 2^30 is exact below 2^53 bytes. */
		add_double(out, (double)f->plan->host_mem_bytes / VP_GIB);
		break;
	}
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
key_absent(const struct vp_planfile *f, enum vp_pk k)
{
	if (k == VP_PK_GPUS || k == VP_PK_GPUS_PER_NODE)
		return f->gpu == NULL;
	if (k == VP_PK_DROPOUT)
		return f->plan->dropout < 0;
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
	for (k = 0; k < VP_PK_COUNT; k++) {
		if (key_absent(f, (enum vp_pk)k))
			continue;
		v.len = 0;
		v.s[0] = '\0';
		vp_planfile_value(f, (enum vp_pk)k, &v);
		if (plain_word(v.s))
			vp_buf_printf(out, "%s: %s\n", vp_pk_names[k], v.s);
		else {
			vp_buf_printf(out, "%s: ", vp_pk_names[k]);
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
	def.gpus_per_node = f->count < 8 ? f->count : 8;
	d.plan = &def;
	vp_buf_add(out, "vramplan ");
	shell_word(out, f->model_arg);
	vp_buf_init(&a);
	vp_buf_init(&b);
	for (k = 0; k < VP_PK_COUNT; k++) {
		const struct vp_pk_info *ki = &vp_pk_info[k];

		if (key_absent(f, (enum vp_pk)k))
			continue;
		a.len = b.len = 0;
		a.s[0] = b.s[0] = '\0';
		vp_planfile_value(f, (enum vp_pk)k, &a);
		if (k != VP_PK_GPUS) {
			vp_planfile_value(&d, (enum vp_pk)k, &b);
			if (strcmp(a.s, b.s) == 0)
				continue;
		}
		if (ki->kind == VP_PKK_BOOL) {
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
