/* report.c — text, JSON and CSV renderings of an estimate (see report.h). */
#include "report.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "json.h"
#include "lgraph.h"
#include "options.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_GREEN "\033[32m"
#define C_RED "\033[31m"
#define C_YELLOW "\033[33m"
#define C_DIM "\033[2m"
/* User text in the text report goes through this (util.h: vp_esc). */
#define ESC(s, buf) vp_esc((s), (buf), sizeof(buf))

/*
 * The job's caching-allocator settings (--alloc-conf) and whether the
 * reserved level is their simulation: it is unless the backend is
 * cudaMallocAsync, which is not simulated.  Nothing without the option:
 * the reserved level is then the profile's fragmentation share.
 */
static void
alloc_conf_line(const struct vp_report *r, struct vp_buf *out)
{
	struct vp_alloc_conf c;
	struct vp_buf err;

	vp_alloc_conf_init(&c);
	vp_buf_init(&err);
	(void)vp_alloc_conf_parse(&c, r->plan->alloc_conf, &err);
	vp_buf_free(&err);
	vp_alloc_conf_format(&c, out);
	if (r->mem != NULL && r->mem->alloc_simulated)
		vp_buf_add(out, ", simulated");
	else
		vp_buf_add(out, "; reserved by the profile's share");
}

static const char *
col(const struct vp_report *r, const char *c)
{
	return r->color ? c : "";
}

static int
add_row(struct vp_row *rows, int n, const char *label, uint64_t bytes,
    bool total, uint64_t err_bytes)
{
	rows[n].label = label;
	rows[n].bytes = bytes;
	rows[n].total = total;
	rows[n].err_bytes = err_bytes;
	rows[n].band = NULL;
	return n + 1;
}

/* A level's row: the calibrated error bar, or the built-in band. */
static int
add_level(struct vp_row *rows, int n, const struct vp_report *r,
    const char *label, uint64_t bytes, double err, enum vp_lvl lvl)
{
	n = add_row(rows, n, label, bytes, true, vp_scale(bytes, err));
	if (err == 0)
		rows[n - 1].band = &r->band[lvl];
	return n;
}

/* A term's row, labelled with its name in vp_cat_names. */
static int
add_term(struct vp_row *rows, int n, const struct vp_mem *m, enum vp_cat cat)
{
	return add_row(rows, n, vp_cat_names[cat], m->term[cat], false, 0);
}

int
vp_report_rows(const struct vp_report *r, struct vp_row *rows)
{
	const struct vp_mem *m = r->mem;
	int n = 0;

	if (r->plan->lora_rank) {
		n = add_row(rows, n, r->plan->quant ? "frozen base (quantized)" :
		    "frozen base weights", m->term[VP_CAT_WEIGHTS], false, 0);
		n = add_term(rows, n, m, VP_CAT_ADAPTER);
	} else {
		n = add_term(rows, n, m, VP_CAT_WEIGHTS);
	}
	/* The fp8 copies are Transformer Engine's: the label says so. */
	if (r->plan->precision == VP_PREC_FP8)
		n = add_row(rows, n, "fp8 weight copies (TE)",
		    m->term[VP_CAT_FP8], false, 0);
	n = add_term(rows, n, m, VP_CAT_MASTER);
	n = add_term(rows, n, m, VP_CAT_GRADS);
	n = add_term(rows, n, m, VP_CAT_OPTIM);
	n = add_term(rows, n, m, VP_CAT_CAST);
	/* The inputs (token ids, labels) are counted with the activations. */
	n = add_row(rows, n, vp_cat_names[VP_CAT_ACT], m->term[VP_CAT_ACT] +
	    m->term[VP_CAT_INPUT], false, 0);
	n = add_term(rows, n, m, VP_CAT_LOGITS);
	n = add_term(rows, n, m, VP_CAT_TRANSIENT);
	n = add_level(rows, n, r, "allocated peak", m->allocated_peak,
	    r->err_allocated, VP_LVL_ALLOCATED);
	if (r->plan->device == VP_DEVICE_CUDA) {
		n = add_row(rows, n, m->load_sets_reserved ?
		    "kept from building the model" :
		    "allocator rounding + fragmentation", m->frag_bytes,
		    false, 0);
		n = add_level(rows, n, r, "reserved peak", m->reserved_peak,
		    r->err_reserved, VP_LVL_RESERVED);
		n = add_row(rows, n, "CUDA context + kernels",
		    m->context_bytes, false, 0);
		n = add_row(rows, n, "cuBLAS workspaces",
		    m->workspace_bytes, false, 0);
		if (m->nccl_bytes)
			n = add_row(rows, n, "NCCL buffers",
			    m->nccl_bytes, false, 0);
		if (m->symm_bytes)
			n = add_row(rows, n, "symmetric memory (async TP)",
			    m->symm_bytes, false, 0);
		n = add_level(rows, n, r, "device peak", m->device_peak,
		    r->err_device, VP_LVL_DEVICE);
	}
	return n;
}

void
vp_report_bar(struct vp_buf *out, double frac, int width, bool unicode)
{
	static const char *const part[] = { "", "▏", "▎", "▍", "▌", "▋", "▊",
	    "▉" };
	double cells;
	int full, eighths, i, used;

	if (!(frac > 0))
		frac = 0;
	if (frac > 1)
		frac = 1;
	cells = frac * width;
	full = (int)floor(cells);
	eighths = (int)floor((cells - full) * 8);
	if (!unicode) {
		for (i = 0; i < width; i++)
			vp_buf_add(out, i < (int)lround(cells) ? "#" : ".");
		return;
	}
	for (i = 0; i < full; i++)
		vp_buf_add(out, "█");
	used = full;
	if (eighths > 0 && used < width) {
		vp_buf_add(out, part[eighths]);
		used++;
	}
	for (; used < width; used++)
		vp_buf_add(out, " ");
}

void
vp_report_layout(struct vp_buf *o, const struct vp_plan *p)
{
	assert(vp_plan_degrees_ok(p));
	vp_buf_printf(o, "TP %u, PP %u", p->tp, p->pp);
	if (p->vpp > 1)
		vp_buf_printf(o, " (x%u virtual)", p->vpp);
	if (p->cp > 1)
		vp_buf_printf(o, ", CP %u", p->cp);
	if (p->ep > 1)
		vp_buf_printf(o, ", EP %u", p->ep);
	vp_buf_printf(o, ", DP %u", p->dp ? p->dp : 1);
	if (p->sp)
		vp_buf_add(o, ", SP");
	if (p->fsdp != VP_FSDP_NONE)
		vp_buf_printf(o, ", FSDP %s", vp_fsdp_names[p->fsdp]);
	else if (p->zero)
		vp_buf_printf(o, ", ZeRO %u", p->zero);
}

void
vp_report_time(struct vp_buf *o, const struct vp_cand *c)
{
	/* A layer graph's samples are images (c->plan.image). */
	vp_buf_printf(o, "%.0f %s/s for the job, %.2f s per step",
	    c->tokens_per_second, c->plan.image ? "images" : "tokens",
	    c->step_seconds);
}

void
vp_report_peak(struct vp_buf *o, const struct vp_mem *mem)
{
	vp_buf_printf(o, "peak during the %s phase",
	    vp_phase_names[mem->peak_phase]);
	if (mem->peak_layer)
		vp_buf_printf(o, ", block %u", mem->peak_layer);
	if (mem->peak_op)
		vp_buf_printf(o, ", at '%s'", mem->peak_op);
	if (mem->load_sets_reserved)
		vp_buf_printf(o, "; the reserved peak is the load phase's "
		    "(building the model)");
}

void
vp_report_band(const struct vp_band *b, struct vp_buf *o)
{
	vp_buf_printf(o, "  -%.1f%% +%.1f%%", 100 * b->below, 100 * b->above);
}

/* "<lead>needs 119.66 GiB of host RAM per node for its offloaded or
 * paged state, more than --host-mem's 64.00 GiB" */
static void
host_verdict(const struct vp_report *r, struct vp_buf *o, const char *lead)
{
	char b1[32], b2[32];

	vp_buf_printf(o, "%sneeds %s of host RAM per node for its offloaded "
	    "or paged state, more than --host-mem's %s", lead,
	    vp_fmt_bytes(b1, sizeof b1, r->host_per_node),
	    vp_fmt_bytes(b2, sizeof b2, r->plan->host_mem_bytes));
}

int
vp_report_verdict(const struct vp_report *r, struct vp_buf *o)
{
	const struct vp_mem *mem = r->mem;
	const struct vp_band *b = &r->band[VP_LVL_DEVICE];
	uint64_t cap = r->gpus->gpu->usable_bytes;
	uint64_t hi = vp_band_high(mem->device_peak, b);
	uint64_t lo = vp_band_low(mem->device_peak, b);
	char b1[32], b2[32], b3[32];

	if (r->fits && r->host_over) {
		vp_buf_printf(o, "%s%sDOES NOT FIT%s in host RAM: ",
		    col(r, C_BOLD), col(r, C_RED), col(r, C_RESET));
		host_verdict(r, o, "the job ");
		vp_buf_printf(o, "; the GPUs would have %s headroom "
		    "by the estimate",
		    vp_fmt_bytes(b1, sizeof b1, cap - mem->device_peak));
		return 2;
	}
	if (r->verdict == VP_VERDICT_TIGHT) {
		vp_buf_printf(o, "%s%sTIGHT%s: ", col(r, C_BOLD),
		    col(r, C_YELLOW), col(r, C_RESET));
		if (r->fits)
			vp_buf_printf(o, "fits by the estimate with %s "
			    "headroom, ", vp_fmt_bytes(b1, sizeof b1,
			    cap - mem->device_peak));
		else
			vp_buf_printf(o, "the estimate is %s over, ",
			    vp_fmt_bytes(b1, sizeof b1,
			    mem->device_peak - cap));
		vp_buf_printf(o, "but the device peak is known only to "
		    "within %s to %s (-%.1f%% +%.1f%%, from %s) and the card "
		    "has %s; "
		    "calibrate on the card (vramplan calibrate) or leave more "
		    "room", vp_fmt_bytes(b1, sizeof b1, lo),
		    vp_fmt_bytes(b2, sizeof b2, hi), 100 * b->below,
		    100 * b->above, b->source, vp_fmt_bytes(b3, sizeof b3,
		    cap));
		if (r->host_over)
			host_verdict(r, o, "; and it ");
		return r->host_over ? 2 : 1;
	}
	if (r->fits) {
		uint64_t head = cap - mem->device_peak;
		double share = (double)head / (double)cap;

		vp_buf_printf(o, "%s%sFITS%s with %s headroom (%.1f%% of the "
		    "card)", col(r, C_BOLD), col(r, share < 0.05 ? C_YELLOW :
		    C_GREEN), col(r, C_RESET), vp_fmt_bytes(b1, sizeof b1,
		    head), 100.0 * share);
		return share < 0.05 ? 1 : 0;
	}
	vp_buf_printf(o, "%s%sDOES NOT FIT%s: needs %s per GPU, %s more than "
	    "the card's %s", col(r, C_BOLD), col(r, C_RED), col(r, C_RESET),
	    vp_fmt_bytes(b1, sizeof b1, mem->device_peak),
	    vp_fmt_bytes(b2, sizeof b2, mem->device_peak - cap),
	    vp_fmt_bytes(b3, sizeof b3, cap));
	if (r->host_over)
		host_verdict(r, o, "; and it ");
	return 2;
}

void
vp_report_max_mb(const struct vp_report *r, struct vp_buf *o)
{
	if (r->plan->image)	/* a layer graph */
		vp_buf_printf(o, "Largest micro-batch that fits: %llu (at %llux"
		    "%llu)", (unsigned long long)r->max_micro_batch,
		    (unsigned long long)r->plan->image,
		    (unsigned long long)r->plan->image);
	else if (r->max_micro_batch == 0)
		vp_buf_printf(o, "Largest micro-batch that fits: none (not even "
		    "1 at seq %llu)", (unsigned long long)r->plan->seq);
	else
		vp_buf_printf(o, "Largest micro-batch that fits: %llu (at seq "
		    "%llu)", (unsigned long long)r->max_micro_batch,
		    (unsigned long long)r->plan->seq);
}

uint64_t
vp_report_scale(const struct vp_report *r)
{
	uint64_t scale = r->gpus ? r->gpus->gpu->usable_bytes :
	    r->mem->device_peak;

	return r->mem->device_peak > scale ? r->mem->device_peak : scale;
}

const char *
vp_report_hours(char *b, size_t n, double h)
{
	return vp_fmt_hours(b, n, h);
}

const char *
vp_report_usd(char *b, size_t n, double v)
{
	return vp_fmt_usd(b, n, v);
}

/*
 * "full", or "full (stride 2)" when only every 2nd block recomputes;
 * short: "full/2", for the alternatives' narrow layout column.
 */
static const char *
recomp_text(char *buf, size_t n, const struct vp_plan *p, bool short_form)
{
	if (p->recompute == VP_RECOMP_NONE || p->recompute_stride <= 1)
		return vp_recomp_names[p->recompute];
	snprintf(buf, n, short_form ? "%s/%u" : "%s (stride %u)",
	    vp_recomp_names[p->recompute], p->recompute_stride);
	return buf;
}

/* The file part of a path: the report names a DeepSpeed config by it. */
static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

/*
 * The settings of the training library and the kernels that change the
 * estimate and are not on the Plan's first lines, each only when not at
 * its default, comma-separated ("" when all are at their defaults).
 */
static void
plan_knobs(const struct vp_report *r, struct vp_buf *k)
{
	const struct vp_plan *p = r->plan;
	const char *sep = "";
	char e1[VP_ESC_LEN];

#define KNOB(...) do { vp_buf_add(k, sep); vp_buf_printf(k, __VA_ARGS__); \
	sep = ", "; } while (0)
	if (r->trainer != NULL)
		KNOB("trainer %s", vp_trainer_names[r->trainer->trainer]);
	if (r->ds_config != NULL)
		KNOB("DeepSpeed config %s", ESC(base_name(r->ds_config),
		    e1));
	if (p->float8 != VP_FLOAT8_NONE)
		KNOB("float8 %s%s", vp_float8_names[p->float8],
		    p->float8_all_gather ? " (fp8 all-gather)" : "");
	if (p->async_tp)
		KNOB("async TP");
	if (p->fsdp_prefetch != VP_FSDP_PREFETCH_PRE)
		KNOB("FSDP prefetch %s", vp_fsdp_prefetch_names[
		    p->fsdp_prefetch]);
	if (p->fsdp_orig_params != VP_YES)
		KNOB("use_orig_params %s", vp_yesno_names[p->fsdp_orig_params]);
	if (p->reshard_after_forward != VP_YES)
		KNOB("reshard_after_forward %s",
		    vp_yesno_names[p->reshard_after_forward]);
	if (p->fsdp_lora_wrap != VP_LORAWRAP_PEFT)
		KNOB("LoRA wrap %s", vp_lora_wrap_names[p->fsdp_lora_wrap]);
	if (p->fsdp_units != VP_FSDP_UNITS_ROOT)
		KNOB("FSDP units %s", vp_fsdp_units_names[p->fsdp_units]);
#undef KNOB
}

static void
plan_line(const struct vp_report *r, struct vp_buf *o)
{
	struct vp_buf k;
	const struct vp_plan *p = r->plan;
	char v1[16], v2[16], rc[48], smp[64], tg[40] = "";

	/* An encoder-decoder's decoder length. */
	if (r->model->arch == VP_ARCH_ENCDEC)
		snprintf(tg, sizeof tg, " (target %llu)",
		    (unsigned long long)vp_plan_target_seq(p));
	/* A layer graph's samples are images of p->image x p->image. */
	if (r->model->lg != NULL)
		snprintf(smp, sizeof smp, "%llux%llu images",
		    (unsigned long long)vp_lgraph_image(r->model, p),
		    (unsigned long long)vp_lgraph_image(r->model, p));
	else
		snprintf(smp, sizeof smp, "seq %llu",
		    (unsigned long long)p->seq);
	/* The optimizer's kernels when the user chose them. */
	vp_buf_printf(o, "%s, %s%s%s%s%s, micro-batch %llu x %s%s, "
	    "grad-accum %llu, recompute %s, attention %s, dropout %.2g%s%s\n",
	    vp_prec_names[p->precision], vp_opt_names[p->optimizer],
	    p->optimizer_impl ? " (" : "",
	    p->optimizer_impl ? vp_optimpl_names[vp_plan_optimizer_impl(p)] :
	    "", p->optimizer_impl ? ")" : "",
	    p->optim_in_bwd ? " in backward" : "",
	    (unsigned long long)p->micro_batch, smp, tg,
	    (unsigned long long)p->grad_accum,
	    recomp_text(rc, sizeof rc, p, false),
	    vp_attn_names[p->attention], vp_plan_dropout(p, r->model),
	    p->compile && p->compile_loss ? ", compiled blocks and loss" :
	    p->compile ? ", compiled blocks" :
	    p->compile_loss ? ", compiled loss" : "",
	    vp_plan_compiled_checkpoint(p, p->recompute_stride ?
	    p->recompute_stride : 1) ? " (checkpoint inside)" : "");
	vp_buf_printf(o, "%-11s", "");
	vp_report_layout(o, p);
	vp_buf_printf(o, ", %s semantics, device %s, PyTorch %s",
	    vp_framework_names[vp_plan_framework(p)],
	    vp_device_names[p->device],
	    vp_version_name(p->torch_version, v1, sizeof v1));
	if (p->device == VP_DEVICE_CUDA)
		vp_buf_printf(o, " + CUDA %s", vp_version_name(p->cuda_version,
		    v2, sizeof v2));
	/* Only a Hugging Face model runs transformers' code. */
	if (vp_model_runs_hf(r->model))
		vp_buf_printf(o, ", transformers %s", vp_version_name(
		    p->transformers_version, v2, sizeof v2));
	if (vp_plan_grads_kept(p))
		vp_buf_add(o, ", zero_grad keeps the gradients");
	if (p->load != VP_LOAD_NONE)
		vp_buf_printf(o, ", load %s", vp_load_names[p->load]);
	vp_buf_add(o, "\n");
	if (p->lora_rank || p->quant || p->offload || p->loss ||
	    p->activation_offload) {
		vp_buf_printf(o, "%-11s", "");
		if (p->lora_rank)
			vp_buf_printf(o, "LoRA rank %u (%s adapters, dropout "
			    "%.2g), ", p->lora_rank, vp_dtype_names[p->lora_dtype],
			    p->lora_dropout);
		vp_buf_printf(o, "base %s%s%s, offload %s%s%s, loss %s\n",
		    vp_quant_names[p->quant], p->quant != VP_QUANT_NONE &&
		    p->quant_lib == VP_QLIB_TORCHAO ? " by torchao" : "",
		    p->quant == VP_QUANT_NONE ? "" :
		    p->kbit_prep == VP_KBIT_UPCAST ? " (the rest upcast to fp32)"
		    : " (the rest kept)", vp_offload_names[p->offload],
		    p->offload_nvme ? " to NVMe" : "", p->activation_offload ?
		    " + activations" : "", vp_loss_names[p->loss]);
	}
	vp_buf_init(&k);
	plan_knobs(r, &k);
	if (k.s != NULL && k.s[0])
		vp_buf_printf(o, "%-11s%s\n", "", k.s);
	vp_buf_free(&k);
	if (r->search != NULL)
		vp_buf_printf(o, "%-11schosen by the planner: %llu plan%s "
		    "evaluated, %llu fit\n", "",
		    (unsigned long long)r->search->evaluated,
		    r->search->evaluated == 1 ? "" : "s",
		    (unsigned long long)r->search->fitting);
	if (r->precision_note != NULL)
		vp_buf_printf(o, "%-11s%s\n", "", r->precision_note);
}

/*
 * --trainer: the library, each default it set with its source, the
 * defaults the user's own options replaced, and what it does that is
 * not modelled.
 */
static void
trainer_lines(const struct vp_report *r, struct vp_buf *o)
{
	const struct vp_trainer_applied *t = r->trainer;
	unsigned i;

	vp_buf_printf(o, "%sTrainer%s    %s: %s\n", col(r, C_BOLD),
	    col(r, C_RESET), vp_trainer_names[t->trainer], t->what);
	for (i = 0; i < t->nset; i++)
		vp_buf_printf(o, "%-11sset --%s %s (%s)\n", "",
		    vp_options[t->set[i].id].name, t->set[i].value,
		    t->set[i].why);
	for (i = 0; i < t->ngiven; i++)
		vp_buf_printf(o, "%-11skept --%s as given (its default: %s)\n",
		    "", vp_options[t->given[i].id].name, t->given[i].value);
	for (i = 0; i < t->nlack; i++)
		vp_buf_printf(o, "%-11s%s\n", "", t->lack[i]);
}

static void
json_trainer(struct vp_json *j, const struct vp_report *r)
{
	const struct vp_trainer_applied *t = r->trainer;
	unsigned i;

	vp_json_break(j);
	vp_json_object(j, "trainer", VP_JSON_INLINE);
	vp_json_str(j, "name", vp_trainer_names[t->trainer]);
	vp_json_array(j, "set", VP_JSON_INLINE);
	for (i = 0; i < t->nset; i++) {
		vp_json_object(j, NULL, VP_JSON_INLINE);
		vp_json_str(j, "option", vp_options[t->set[i].id].name);
		vp_json_str(j, "value", t->set[i].value);
		vp_json_str(j, "source", t->set[i].why);
		vp_json_end(j);
	}
	vp_json_end(j);
	vp_json_array(j, "given", VP_JSON_INLINE);
	for (i = 0; i < t->ngiven; i++) {
		vp_json_object(j, NULL, VP_JSON_INLINE);
		vp_json_str(j, "option", vp_options[t->given[i].id].name);
		vp_json_str(j, "default", t->given[i].value);
		vp_json_end(j);
	}
	vp_json_end(j);
	vp_json_array(j, "notes", VP_JSON_INLINE);
	for (i = 0; i < t->nlack; i++)
		vp_json_str(j, NULL, t->lack[i]);
	vp_json_end(j);
	vp_json_end(j);
}

static void
cand_line(struct vp_buf *o, const struct vp_cand *c, uint64_t cap)
{
	char b1[32], b2[32], rc[48];
	struct vp_buf lay;

	vp_buf_init(&lay);
	vp_report_layout(&lay, &c->plan);
	vp_buf_printf(&lay, ", recompute %s", recomp_text(rc, sizeof rc,
	    &c->plan, true));
	vp_buf_printf(o, "  %-56s %11s  %11s", lay.s,
	    vp_fmt_bytes(b1, sizeof b1, c->device_peak),
	    c->fits ? vp_fmt_bytes(b2, sizeof b2, cap - c->device_peak) : "-");
	if (isnan(c->tokens_per_second))
		vp_buf_add(o, "  no time model\n");
	else
		vp_buf_printf(o, "  %10.0f%s\n", c->tokens_per_second,
		    c->bandwidth_bound ? " (bandwidth-bound)" : "");
	vp_buf_free(&lay);
}

/* The planner's alternatives, per-stage memory, savings, inverse
 * queries: the sections after the breakdown. */
static void
planner_text(const struct vp_report *r, struct vp_buf *o)
{
	char e1[VP_ESC_LEN];
	uint64_t cap = r->gpus ? r->gpus->gpu->usable_bytes : 0;
	char b1[32], b2[32];
	unsigned i;
	int k;

	if (r->chosen != NULL && !isnan(r->chosen->tokens_per_second)) {
		vp_buf_printf(o, "\n%sTime%s       ", col(r, C_BOLD),
		    col(r, C_RESET));
		vp_report_time(o, r->chosen);
		vp_buf_printf(o, " (" VP_TIME_SUMMARY "%s)\n",
		    r->chosen->bandwidth_bound ?
		    "; bandwidth-bound" : "");
	} else if (r->time_why != NULL) {
		vp_buf_printf(o, "\n%sTime%s       none: %s\n", col(r, C_BOLD),
		    col(r, C_RESET), r->time_why);
	}
	if (r->nstages > 1) {
		vp_buf_printf(o, "\n%sPipeline stages%s (per GPU; the worst is "
		    "stage %u)\n", col(r, C_BOLD), col(r, C_RESET),
		    r->worst_stage);
		vp_buf_printf(o, "  %-6s %7s %14s %14s %14s\n", "stage",
		    "blocks", "activations", "allocated", "device peak");
		for (i = 0; i < r->nstages; i++)
			vp_buf_printf(o, "  %-6u %7llu %14s %14s %14s%s\n", i,
			    (unsigned long long)vp_stage_blocks(
			    r->model->layers, r->plan->pp, i),
			    vp_fmt_bytes(b1, sizeof b1,
			    r->stages[i].saved_per_microbatch),
			    vp_fmt_bytes(b2, sizeof b2,
			    r->stages[i].allocated_peak),
			    vp_fmt_bytes((char[32]){ 0 }, 32,
			    r->stages[i].device_peak),
			    i == r->worst_stage ? "  <- worst" : "");
	}
	if (r->search != NULL && r->search->nbest > 1 && r->nplans > 0) {
		vp_buf_printf(o, "\n%sAlternatives that fit%s  %-34s %11s  "
		    "%11s  %10s\n", col(r, C_BOLD), col(r, C_RESET), "",
		    "device peak", "headroom", "tokens/s");
		for (k = 1; k < (int)r->search->nbest && k <= r->nplans; k++)
			cand_line(o, &r->search->best[k], cap);
	}
	if (r->nsavings > 0) {
		vp_buf_printf(o, "\n%sWhat the plan's knobs save%s (per GPU, "
		    "against leaving each at its default)\n", col(r, C_BOLD),
		    col(r, C_RESET));
		for (k = 0; k < r->nsavings; k++)
			vp_buf_printf(o, "  %-28s %12s\n", r->savings[k].knob,
			    vp_fmt_bytes(b1, sizeof b1,
			    r->savings[k].saved_bytes));
	}
	if (r->search != NULL && r->search->nbest == 0 &&
	    r->search->evaluated > 0) {
		vp_buf_printf(o, "\n%sNo plan fits%s on %u x %s among %llu "
		    "evaluated.  Nearest miss:\n", col(r, C_BOLD),
		    col(r, C_RESET), r->gpus->count, ESC(r->gpus->gpu->id,
		    e1), (unsigned long long)r->search->evaluated);
		cand_line(o, &r->search->nearest, cap);
		if (r->search->nearest.device_peak > cap)
			vp_buf_printf(o, "  it is %s over the card\n",
			    vp_fmt_bytes(b1, sizeof b1,
			    r->search->nearest.device_peak - cap));
		else
			vp_buf_add(o, "  it fits the card, but its offloaded "
			    "or paged state exceeds --host-mem\n");
	}
	if (r->ask_max_seq) {
		if (r->max_seq)
			vp_buf_printf(o, "Longest sequence that fits: %llu "
			    "(micro-batch %llu, this plan)\n",
			    (unsigned long long)r->max_seq,
			    (unsigned long long)r->plan->micro_batch);
		else
			vp_buf_add(o, "Longest sequence that fits: none (not "
			    "even 128 tokens with this plan)\n");
	}
	if (r->ask_min_gpus) {
		if (r->min_gpus && r->min_gpus_plan) {
			struct vp_buf lay;
			char rc[48];

			vp_buf_init(&lay);
			vp_report_layout(&lay, &r->min_gpus_plan->plan);
			vp_buf_printf(o, "Fewest %s that fit: %u (%s, recompute "
			    "%s)\n", ESC(r->gpus->gpu->id, e1), r->min_gpus,
			    lay.s,
			    recomp_text(rc, sizeof rc,
			    &r->min_gpus_plan->plan, false));
			vp_buf_free(&lay);
		} else {
			vp_buf_printf(o, "Fewest %s that fit: none up to the "
			    "search limit\n", ESC(r->gpus->gpu->id, e1));
		}
	}
}

void
vp_report_text(const struct vp_report *r, struct vp_buf *o)
{
	const struct vp_model *m = r->model;
	const struct vp_mem *mem = r->mem;
	struct vp_param_count pc;
	struct vp_row rows[VP_REPORT_MAXROWS];
	char b1[32], b2[32], b3[32], e1[VP_ESC_LEN], e2[VP_ESC_LEN];
	uint64_t scale;
	int n, i;

	vp_model_params(m, &pc);
	if (m->lg != NULL)	/* a layer graph: what it is made of */
		vp_buf_printf(o, "%sModel%s      %s (layer graph, %llu conv2d, "
		    "%llu linear, %llu residual blocks, %llu-channel input",
		    col(r, C_BOLD), col(r, C_RESET), ESC(m->name, e1),
		    (unsigned long long)vp_lgraph_count(m->lg, VP_L_CONV2D),
		    (unsigned long long)vp_lgraph_count(m->lg, VP_L_LINEAR),
		    (unsigned long long)vp_lgraph_count(m->lg, VP_L_RESIDUAL),
		    (unsigned long long)m->lg->channels);
	else
		vp_buf_printf(o, "%sModel%s      %s (%s, %llu layers, hidden "
		    "%llu, %llu heads", col(r, C_BOLD), col(r, C_RESET),
		    ESC(m->name, e1), vp_arch_names[m->arch],
		    (unsigned long long)m->layers,
		    (unsigned long long)m->hidden,
		    (unsigned long long)m->heads);
	if (m->arch == VP_ARCH_ENCDEC)
		vp_buf_printf(o, ", %llu decoder layers",
		    (unsigned long long)m->dec_layers);
	if (m->kv_heads != m->heads)
		vp_buf_printf(o, " / %llu kv", (unsigned long long)m->kv_heads);
	if (m->has_moe)
		vp_buf_printf(o, ", %u experts top-%u", m->moe.experts,
		    m->moe.top_k);
	vp_buf_add(o, ")\n");
	vp_buf_printf(o, "%sParameters%s %s total (%llu), %s trainable",
	    col(r, C_BOLD), col(r, C_RESET),
	    vp_fmt_count(b1, sizeof b1, pc.total),
	    (unsigned long long)pc.total, vp_fmt_count(b2, sizeof b2,
	    r->trainable ? r->trainable : pc.total));
	if (r->plan->lora_rank)
		vp_buf_printf(o, " (LoRA rank %u on %s%s)", r->plan->lora_rank,
		    r->lora_targets, r->plan->quant ? ", base quantized" : "");
	if (m->has_moe)
		vp_buf_printf(o, ", %s active per token",
		    vp_fmt_count(b1, sizeof b1, pc.active));
	vp_buf_add(o, "\n");
	vp_buf_printf(o, "%sPlan%s       ", col(r, C_BOLD), col(r, C_RESET));
	plan_line(r, o);
	if (r->trainer != NULL)
		trainer_lines(r, o);
	if (r->gpus != NULL) {
		const struct vp_gpu *g = r->gpus->gpu;

		char e3[VP_ESC_LEN];

		vp_buf_printf(o, "%sGPUs%s       %u x %s (%s, %.0f GB %s)",
		    col(r, C_BOLD), col(r, C_RESET), r->gpus->count,
		    ESC(g->id, e1), ESC(g->name ? g->name : g->id, e2),
		    g->memory_gb, ESC(g->memory_type ? g->memory_type : "",
		    e3));
		if (r->gpus->via_alias)
			vp_buf_printf(o, "; '%s' taken as %s",
			    ESC(r->gpus->typed, e2), ESC(g->id, e1));
		vp_buf_add(o, "\n");
	}
	vp_buf_printf(o, "%sProfile%s    %s", col(r, C_BOLD),
	    col(r, C_RESET), ESC(r->profile, e1));
	if (r->plan->device == VP_DEVICE_CUDA && r->plan->alloc_conf[0]) {
		/* The caching allocator's settings (--alloc-conf). */
		struct vp_buf ac;

		vp_buf_init(&ac);
		alloc_conf_line(r, &ac);
		vp_buf_printf(o, "; allocator %s", ac.s);
		vp_buf_free(&ac);
	}
	vp_buf_add(o, "\n\n");

	n = vp_report_rows(r, rows);
	scale = vp_report_scale(r);
	vp_buf_printf(o, "%sPer GPU%s%s\n", col(r, C_BOLD), col(r, C_RESET),
	    r->gpus && scale == r->gpus->gpu->usable_bytes ?
	    "  (bars: share of the card's usable memory)" :
	    "  (bars: share of the device peak)");
	for (i = 0; i < n; i++) {
		if (rows[i].total) {
			vp_buf_printf(o, "  %s%-36s %12s%s", col(r, C_BOLD),
			    rows[i].label, vp_fmt_bytes(b1, sizeof b1,
			    rows[i].bytes), col(r, C_RESET));
			if (rows[i].err_bytes)
				vp_buf_printf(o, "  %s %s", r->unicode ?
				    "±" : "+/-", vp_fmt_bytes(b1,
				    sizeof b1, rows[i].err_bytes));
			else if (rows[i].band != NULL)
				vp_report_band(rows[i].band, o);
			vp_buf_add(o, "\n");
			continue;
		}
		vp_buf_printf(o, "    %-34s %12s  ", rows[i].label,
		    vp_fmt_bytes(b1, sizeof b1, rows[i].bytes));
		vp_report_bar(o, scale ? (double)rows[i].bytes / (double)scale :
		    0, 24, r->unicode);
		vp_buf_add(o, "\n");
	}
	vp_buf_add(o, "  ");
	vp_report_peak(o, mem);
	vp_buf_add(o, "\n");

	if (mem->host_bytes || mem->nvme_bytes) {
		vp_buf_printf(o, "  host RAM (offload / paged states)     %12s "
		    "per GPU, %s per node", vp_fmt_bytes(b1, sizeof b1,
		    mem->host_bytes), vp_fmt_bytes(b2, sizeof b2,
		    r->host_per_node));
		if (mem->nvme_bytes)
			vp_buf_printf(o, "; NVMe %s per GPU", vp_fmt_bytes(b3,
			    sizeof b3, mem->nvme_bytes));
		vp_buf_add(o, "\n");
		if (r->host_note)
			vp_buf_printf(o, "  %s%s%s\n", col(r, C_YELLOW),
			    r->host_note, col(r, C_RESET));
	}
	if (r->explain) {
		vp_buf_printf(o, "\n%sLargest live tensors at the peak%s\n",
		    col(r, C_BOLD), col(r, C_RESET));
		for (i = 0; i < mem->ntop; i++) {
			vp_buf_printf(o, "  %12s  %-36s", vp_fmt_bytes(b1,
			    sizeof b1, mem->top[i].bytes), mem->top[i].name);
			if (mem->top[i].count > 1)
				vp_buf_printf(o, " x%u", mem->top[i].count);
			vp_buf_printf(o, "  (%s)\n",
			    vp_cat_names[mem->top[i].cat]);
		}
		if (mem->nfw > 0 || mem->nccl_bytes > 0)
			vp_buf_printf(o, "  %sThe framework's buffers at the "
			    "peak%s\n", col(r, C_BOLD), col(r, C_RESET));
		for (i = 0; i < mem->nfw; i++)
			vp_buf_printf(o, "  %12s  %s\n", vp_fmt_bytes(b1,
			    sizeof b1, mem->fw[i].bytes), mem->fw[i].name);
		if (mem->nccl_bytes > 0)
			vp_buf_printf(o, "  %12s  NCCL buffers (outside the "
			    "allocator)\n", vp_fmt_bytes(b1, sizeof b1,
			    mem->nccl_bytes));
		vp_buf_add(o, "  Peak by phase:");
		for (i = 0; i < VP_PHASE_COUNT; i++)
			vp_buf_printf(o, "%s %s %s", i ? "," : "",
			    vp_phase_names[i], vp_fmt_bytes(b1, sizeof b1,
			    mem->phase_peak[i]));
		vp_buf_add(o, "\n");
	}

	if (r->gpus != NULL) {
		uint64_t cap = r->gpus->gpu->usable_bytes;

		vp_buf_printf(o, "\n  %-36s %12s  (%s)\n", "capacity (usable)",
		    vp_fmt_bytes(b1, sizeof b1, cap),
		    r->measured_capacity ? "measured by vramplan-probe, "
		    "calibrated profile" : r->gpus->gpu->usable_basis ?
		    ESC(r->gpus->gpu->usable_basis, e1) : "catalog");
		vp_buf_add(o, "  ");
		vp_report_bar(o, (double)mem->device_peak / (double)cap, 50,
		    r->unicode);
		vp_buf_printf(o, " %.0f%%\n",
		    100.0 * (double)mem->device_peak / (double)cap);
		vp_buf_add(o, "\n");
		vp_report_verdict(r, o);
		vp_buf_add(o, "\n");
		vp_report_max_mb(r, o);
		vp_buf_add(o, "\n");
	}
	planner_text(r, o);
}

/* The JSON report is one object, a section a line; each section is
 * written by one of the json_* functions below, in order, and starts
 * with its line break. */

static void
json_model(struct vp_json *j, const struct vp_report *r)
{
	const struct vp_model *m = r->model;
	struct vp_param_count pc;

	vp_model_params(m, &pc);
	vp_json_break(j);
	vp_json_object(j, "model", VP_JSON_INLINE);
	vp_json_str(j, "name", m->name);
	vp_json_str(j, "architecture", vp_arch_names[m->arch]);
	vp_json_u64(j, "layers", m->layers);
	if (m->arch == VP_ARCH_ENCDEC)
		vp_json_u64(j, "decoder_layers", m->dec_layers);
	vp_json_u64(j, "hidden", m->hidden);
	vp_json_u64(j, "params", pc.total);
	vp_json_u64(j, "trainable_params", r->trainable ? r->trainable :
	    pc.total);
	vp_json_u64(j, "active_params", pc.active);
	vp_json_end(j);
}

static void
json_plan(struct vp_json *j, const struct vp_report *r)
{
	const struct vp_plan *p = r->plan;
	char v[16];

	vp_json_break(j);
	vp_json_object(j, "plan", VP_JSON_INLINE);
	vp_json_str(j, "precision", vp_prec_names[p->precision]);
	/* Only on a fallback, so that other plans read as before. */
	if (r->precision_note != NULL)
		vp_json_str(j, "precision_note", r->precision_note);
	vp_json_str(j, "optimizer", vp_opt_names[p->optimizer]);
	vp_json_str(j, "optimizer_impl",
	    vp_optimpl_names[vp_plan_optimizer_impl(p)]);
	vp_json_str(j, "zero_grad", vp_zerograd_names[vp_plan_zero_grad(p)]);
	vp_json_bool(j, "optimizer_in_backward", p->optim_in_bwd);
	/* Only when set, so that plans without it read as before. */
	if (p->compile)
		vp_json_bool(j, "compile", true);
	if (p->compile_loss)
		vp_json_bool(j, "compile_loss", true);
	if (vp_plan_compiled_checkpoint(p, p->recompute_stride ?
	    p->recompute_stride : 1))
		vp_json_bool(j, "compile_wraps_checkpoint", true);
	if (r->trainer != NULL)
		vp_json_str(j, "trainer", vp_trainer_names[r->trainer->trainer]);
	if (r->ds_config != NULL)
		vp_json_str(j, "deepspeed_config", base_name(r->ds_config));
	if (p->float8 != VP_FLOAT8_NONE)
		vp_json_str(j, "float8", vp_float8_names[p->float8]);
	if (p->float8_all_gather)
		vp_json_bool(j, "float8_all_gather", true);
	if (p->async_tp)
		vp_json_bool(j, "async_tp", true);
	if (p->fsdp_prefetch != VP_FSDP_PREFETCH_PRE)
		vp_json_str(j, "fsdp_prefetch",
		    vp_fsdp_prefetch_names[p->fsdp_prefetch]);
	if (p->fsdp_orig_params != VP_YES)
		vp_json_str(j, "fsdp_orig_params",
		    vp_yesno_names[p->fsdp_orig_params]);
	if (p->reshard_after_forward != VP_YES)
		vp_json_str(j, "reshard_after_forward",
		    vp_yesno_names[p->reshard_after_forward]);
	if (p->fsdp_lora_wrap != VP_LORAWRAP_PEFT)
		vp_json_str(j, "fsdp_lora_wrap",
		    vp_lora_wrap_names[p->fsdp_lora_wrap]);
	if (p->fsdp_units != VP_FSDP_UNITS_ROOT)
		vp_json_str(j, "fsdp_units",
		    vp_fsdp_units_names[p->fsdp_units]);
	if (p->load != VP_LOAD_NONE)
		vp_json_str(j, "load", vp_load_names[p->load]);
	vp_json_u64(j, "micro_batch", p->micro_batch);
	vp_json_u64(j, "seq", p->seq);
	if (r->model->lg != NULL)	/* a layer graph: its resolution */
		vp_json_u64(j, "image", vp_lgraph_image(r->model, p));
	/* An encoder-decoder's decoder length (--target-seq). */
	if (r->model->arch == VP_ARCH_ENCDEC)
		vp_json_u64(j, "target_seq", vp_plan_target_seq(p));
	vp_json_u64(j, "grad_accum", p->grad_accum);
	vp_json_str(j, "recompute", vp_recomp_names[p->recompute]);
	vp_json_u64(j, "recompute_stride", p->recompute_stride);
	vp_json_str(j, "attention", vp_attn_names[p->attention]);
	vp_json_num(j, "dropout", vp_plan_dropout(p, r->model));
	vp_json_u64(j, "zero", p->zero);
	/* The session normalised the degrees; dp 0 (derive) shows as 1. */
	assert(vp_plan_degrees_ok(p));
	vp_json_u64(j, "tp", p->tp);
	vp_json_u64(j, "pp", p->pp);
	vp_json_u64(j, "dp", p->dp ? p->dp : 1);
	vp_json_u64(j, "cp", p->cp);
	vp_json_u64(j, "ep", p->ep);
	vp_json_u64(j, "vpp", p->vpp);
	vp_json_bool(j, "sp", p->sp);
	vp_json_str(j, "fsdp", vp_fsdp_names[p->fsdp]);
	vp_json_str(j, "framework", vp_framework_names[vp_plan_framework(p)]);
	vp_json_u64(j, "gpus_per_node", p->gpus_per_node);
	vp_json_u64(j, "lora_rank", p->lora_rank);
	vp_json_str(j, "quant", vp_quant_names[p->quant]);
	vp_json_str(j, "kbit_prep", p->quant != VP_QUANT_NONE ?
	    vp_kbit_names[p->kbit_prep] : NULL);
	/* Present with --quant only (a key added after the others). */
	if (p->quant != VP_QUANT_NONE)
		vp_json_str(j, "quant_lib", vp_quant_lib_names[p->quant_lib]);
	vp_json_str(j, "offload", vp_offload_names[p->offload]);
	vp_json_bool(j, "offload_nvme", p->offload_nvme);
	vp_json_bool(j, "activation_offload", p->activation_offload);
	vp_json_str(j, "loss", vp_loss_names[p->loss]);
	vp_json_str(j, "device", vp_device_names[p->device]);
	vp_json_str(j, "torch", vp_version_name(p->torch_version, v,
	    sizeof v));
	vp_json_str(j, "cuda", p->device == VP_DEVICE_CUDA ?
	    vp_version_name(p->cuda_version, v, sizeof v) : NULL);
	vp_json_str(j, "transformers", vp_model_runs_hf(r->model) ?
	    vp_version_name(p->transformers_version, v, sizeof v) : NULL);
	if (p->device == VP_DEVICE_CUDA && p->alloc_conf[0]) {
		struct vp_buf ac;

		vp_buf_init(&ac);
		alloc_conf_line(r, &ac);
		vp_json_str(j, "alloc_conf", ac.s);
		vp_buf_free(&ac);
	} else {
		vp_json_str(j, "alloc_conf", NULL);
	}
	vp_json_end(j);
}

static void
json_gpus(struct vp_json *j, const struct vp_report *r)
{
	vp_json_break(j);
	if (r->gpus == NULL) {
		vp_json_null(j, "gpus");
		return;
	}
	vp_json_object(j, "gpus", VP_JSON_INLINE);
	vp_json_str(j, "id", r->gpus->gpu->id);
	vp_json_u64(j, "count", r->gpus->count);
	vp_json_str(j, "typed", r->gpus->typed);
	vp_json_end(j);
}

/* The breakdown of the worst stage's peak, by term and level.  The
 * names are the JSON's own (stable for scripts), not the text rows'. */
/* Each level's band: its ends in bytes, its sides, where it comes from
 * (on the CPU only the allocated level exists). */
static void
json_uncertainty(struct vp_json *j, const struct vp_report *r)
{
	const struct vp_mem *mem = r->mem;
	const uint64_t at[VP_LVL_COUNT] = { mem->allocated_peak,
	    mem->reserved_peak, mem->device_peak };
	int l;

	vp_json_object(j, "uncertainty", VP_JSON_INLINE);
	for (l = 0; l < VP_LVL_COUNT; l++) {
		const struct vp_band *b = &r->band[l];

		if (r->plan->device == VP_DEVICE_CPU && l != VP_LVL_ALLOCATED)
			continue;
		vp_json_object(j, vp_lvl_names[l], VP_JSON_INLINE);
		vp_json_u64(j, "low_bytes", vp_band_low(at[l], b));
		vp_json_u64(j, "high_bytes", vp_band_high(at[l], b));
		vp_json_num(j, "below", b->below);
		vp_json_num(j, "above", b->above);
		vp_json_str(j, "source", b->source);
		vp_json_end(j);
	}
	vp_json_end(j);
}

static void
json_per_gpu(struct vp_json *j, const struct vp_report *r)
{
	const struct vp_mem *mem = r->mem;
	int i;

	vp_json_break(j);
	vp_json_object(j, "per_gpu", VP_JSON_INLINE);
	vp_json_u64(j, "weights_bytes", mem->term[VP_CAT_WEIGHTS]);
	vp_json_u64(j, "master_weights_bytes", mem->term[VP_CAT_MASTER]);
	vp_json_u64(j, "gradients_bytes", mem->term[VP_CAT_GRADS]);
	vp_json_u64(j, "optimizer_bytes", mem->term[VP_CAT_OPTIM]);
	vp_json_u64(j, "autocast_cache_bytes", mem->term[VP_CAT_CAST]);
	vp_json_u64(j, "activations_bytes", mem->term[VP_CAT_ACT] +
	    mem->term[VP_CAT_INPUT]);
	vp_json_u64(j, "logits_bytes", mem->term[VP_CAT_LOGITS]);
	vp_json_u64(j, "buffers_bytes", mem->term[VP_CAT_TRANSIENT] +
	    mem->term[VP_CAT_CAST]);
	vp_json_u64(j, "transient_bytes", mem->term[VP_CAT_TRANSIENT]);
	vp_json_u64(j, "overhead_bytes", mem->overhead_bytes);
	vp_json_u64(j, "fragmentation_bytes", mem->frag_bytes);
	vp_json_u64(j, "context_bytes", mem->context_bytes);
	vp_json_u64(j, "workspace_bytes", mem->workspace_bytes);
	vp_json_u64(j, "nccl_bytes", mem->nccl_bytes);
	if (mem->symm_bytes)
		vp_json_u64(j, "symm_mem_bytes", mem->symm_bytes);
	vp_json_u64(j, "adapter_bytes", mem->term[VP_CAT_ADAPTER]);
	vp_json_u64(j, "fp8_copies_bytes", mem->term[VP_CAT_FP8]);
	vp_json_u64(j, "host_bytes", mem->host_bytes);
	vp_json_u64(j, "host_bytes_per_node", r->host_per_node);
	vp_json_u64(j, "nvme_bytes", mem->nvme_bytes);
	vp_json_u64(j, "allocated_peak_bytes", mem->allocated_peak);
	vp_json_u64(j, "reserved_peak_bytes", mem->reserved_peak);
	vp_json_u64(j, "device_peak_bytes", mem->device_peak);
	if (r->plan->load != VP_LOAD_NONE) {
		/* Building the model (--load, load.c). */
		vp_json_object(j, "load", VP_JSON_INLINE);
		vp_json_str(j, "mode", vp_load_names[r->plan->load]);
		vp_json_u64(j, "allocated_peak_bytes",
		    mem->load_allocated_peak);
		vp_json_u64(j, "reserved_bytes", mem->load_reserved_bytes);
		vp_json_bool(j, "sets_reserved_peak", mem->load_sets_reserved);
		vp_json_end(j);
	}
	if (r->err_allocated > 0) {
		vp_json_u64(j, "allocated_err_bytes",
		    vp_scale(mem->allocated_peak, r->err_allocated));
		vp_json_u64(j, "reserved_err_bytes",
		    vp_scale(mem->reserved_peak, r->err_reserved));
		vp_json_u64(j, "device_err_bytes",
		    vp_scale(mem->device_peak, r->err_device));
	}
	json_uncertainty(j, r);
	vp_json_str(j, "peak_phase", vp_phase_names[mem->peak_phase]);
	vp_json_str(j, "peak_op", mem->peak_op ? mem->peak_op : "");
	vp_json_u64(j, "peak_layer", mem->peak_layer);
	vp_json_object(j, "phase_peak_bytes", VP_JSON_INLINE);
	for (i = 0; i < VP_PHASE_COUNT; i++)
		vp_json_u64(j, vp_phase_names[i], mem->phase_peak[i]);
	vp_json_end(j);
	if (r->gpus)
		vp_json_u64(j, "capacity_bytes", r->gpus->gpu->usable_bytes);
	else
		vp_json_null(j, "capacity_bytes");
	vp_json_end(j);
}

static void
json_stages(struct vp_json *j, const struct vp_report *r)
{
	unsigned i;

	vp_json_break(j);
	vp_json_u64(j, "worst_stage", r->worst_stage);
	vp_json_array(j, "stages", VP_JSON_INLINE);
	for (i = 0; i < r->nstages; i++) {
		vp_json_object(j, NULL, VP_JSON_INLINE);
		vp_json_u64(j, "stage", i);
		vp_json_u64(j, "blocks", vp_stage_blocks(r->model->layers,
		    r->plan->pp, i));
		vp_json_u64(j, "activations_bytes",
		    r->stages[i].saved_per_microbatch);
		vp_json_u64(j, "allocated_peak_bytes",
		    r->stages[i].allocated_peak);
		vp_json_u64(j, "device_peak_bytes", r->stages[i].device_peak);
		vp_json_end(j);
	}
	vp_json_end(j);
}

void
vp_report_json_layout(struct vp_json *j, const struct vp_plan *p)
{
	vp_json_u64(j, "tp", p->tp);
	vp_json_u64(j, "pp", p->pp);
	vp_json_u64(j, "cp", p->cp);
	vp_json_u64(j, "ep", p->ep);
	vp_json_u64(j, "dp", p->dp);
	vp_json_u64(j, "zero", p->zero);
	vp_json_str(j, "fsdp", vp_fsdp_names[p->fsdp]);
	vp_json_bool(j, "sp", p->sp);
	vp_json_str(j, "recompute", vp_recomp_names[p->recompute]);
	vp_json_u64(j, "recompute_stride", p->recompute_stride);
}

/* The time model of the plan shown. */
static void
json_time(struct vp_json *j, const struct vp_cand *c, const char *why)
{
	vp_json_break(j);
	vp_json_object(j, "time", VP_JSON_INLINE);
	vp_json_fixed(j, "tokens_per_second", c->tokens_per_second, 1);
	vp_json_fixed(j, "step_seconds", c->step_seconds, 4);
	vp_json_bool(j, "bandwidth_bound", c->bandwidth_bound);
	if (why != NULL)
		vp_json_str(j, "why", why);
	vp_json_end(j);
}

/* The planner's count and its alternatives (best[0] is the plan shown). */
static void
json_search(struct vp_json *j, const struct vp_search_result *s)
{
	size_t k;

	vp_json_break(j);
	vp_json_object(j, "search", VP_JSON_INLINE);
	vp_json_u64(j, "evaluated", s->evaluated);
	vp_json_u64(j, "fitting", s->fitting);
	vp_json_array(j, "alternatives", VP_JSON_INLINE);
	for (k = 1; k < s->nbest; k++) {
		const struct vp_cand *c = &s->best[k];

		vp_json_object(j, NULL, VP_JSON_INLINE);
		vp_report_json_layout(j, &c->plan);
		vp_json_u64(j, "device_peak_bytes", c->device_peak);
		if (!isnan(c->tokens_per_second))
			vp_json_fixed(j, "tokens_per_second",
			    c->tokens_per_second, 1);
		vp_json_end(j);
	}
	vp_json_end(j);
	vp_json_end(j);
}

static void
json_savings(struct vp_json *j, const struct vp_report *r)
{
	int k;

	vp_json_break(j);
	vp_json_array(j, "savings", VP_JSON_INLINE);
	for (k = 0; k < r->nsavings; k++) {
		vp_json_object(j, NULL, VP_JSON_INLINE);
		vp_json_str(j, "knob", r->savings[k].knob);
		vp_json_u64(j, "saved_bytes", r->savings[k].saved_bytes);
		vp_json_end(j);
	}
	vp_json_end(j);
}

static void
json_top_live(struct vp_json *j, const struct vp_mem *mem)
{
	int i;

	vp_json_break(j);
	vp_json_array(j, "top_live", VP_JSON_INLINE);
	for (i = 0; i < mem->ntop; i++) {
		vp_json_object(j, NULL, VP_JSON_INLINE);
		vp_json_str(j, "name", mem->top[i].name);
		vp_json_str(j, "term", vp_cat_names[mem->top[i].cat]);
		vp_json_u64(j, "count", mem->top[i].count);
		vp_json_u64(j, "bytes", mem->top[i].bytes);
		vp_json_end(j);
	}
	vp_json_end(j);
	if (mem->nfw == 0)
		return;
	vp_json_break(j);
	vp_json_array(j, "framework_buffers", VP_JSON_INLINE);
	for (i = 0; i < mem->nfw; i++) {
		vp_json_object(j, NULL, VP_JSON_INLINE);
		vp_json_str(j, "name", mem->fw[i].name);
		vp_json_str(j, "term", vp_cat_names[mem->fw[i].cat]);
		vp_json_u64(j, "bytes", mem->fw[i].bytes);
		vp_json_end(j);
	}
	vp_json_end(j);
}

void
vp_report_json(const struct vp_report *r, struct vp_buf *o)
{
	struct vp_json j;

	vp_json_init(&j, o);
	vp_json_object(&j, NULL, VP_JSON_INLINE);
	vp_json_str(&j, "schema_version", VP_ESTIMATE_SCHEMA_VERSION);
	json_model(&j, r);
	json_plan(&j, r);
	if (r->trainer != NULL)
		json_trainer(&j, r);
	json_gpus(&j, r);
	json_per_gpu(&j, r);
	if (r->nstages > 1)
		json_stages(&j, r);
	if (r->chosen != NULL && (!isnan(r->chosen->tokens_per_second) ||
	    r->time_why != NULL))
		json_time(&j, r->chosen, r->time_why);
	if (r->search != NULL)
		json_search(&j, r->search);
	if (r->ask_max_seq) {
		vp_json_break(&j);
		vp_json_u64(&j, "max_seq", r->max_seq);
	}
	if (r->ask_min_gpus) {
		vp_json_break(&j);
		vp_json_u64(&j, "min_gpus", r->min_gpus);
	}
	if (r->nsavings > 0)
		json_savings(&j, r);
	if (r->explain)
		json_top_live(&j, r->mem);
	/* The verdict, on the last line (null without --gpus). */
	vp_json_break(&j);
	if (r->gpus) {
		/* The job fits when the GPUs and the host RAM both do. */
		vp_json_bool(&j, "fits", r->fits && !r->host_over);
		vp_json_bool(&j, "host_fits", !r->host_over);
		vp_json_str(&j, "verdict", vp_verdict_names[r->host_over ?
		    VP_VERDICT_NOFIT : r->verdict]);
		vp_json_u64(&j, "max_micro_batch", r->max_micro_batch);
	} else {
		vp_json_null(&j, "fits");
		vp_json_bool(&j, "host_fits", !r->host_over);
		vp_json_null(&j, "verdict");
		vp_json_null(&j, "max_micro_batch");
	}
	vp_json_end(&j);
}

void
vp_report_csv(const struct vp_report *r, struct vp_buf *o)
{
	struct vp_row rows[VP_REPORT_MAXROWS];
	int n = vp_report_rows(r, rows), i;

	vp_buf_add(o, "term,bytes,gib\n");
	for (i = 0; i < n; i++)
		vp_buf_printf(o, "%s,%llu,%.3f\n", rows[i].label,
		    (unsigned long long)rows[i].bytes,
		    (double)rows[i].bytes / VP_GIB);
	if (r->gpus) {
		vp_buf_printf(o, "capacity,%llu,%.3f\n",
		    (unsigned long long)r->gpus->gpu->usable_bytes,
		    (double)r->gpus->gpu->usable_bytes / VP_GIB);
		vp_buf_printf(o, "fits,%d,\n", r->fits && !r->host_over);
		vp_buf_printf(o, "max_micro_batch,%llu,\n",
		    (unsigned long long)r->max_micro_batch);
	}
	vp_buf_printf(o, "host_fits,%d,\n", !r->host_over);
}
