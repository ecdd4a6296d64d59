/* export.c — the chosen plan as launch files, one writer per format (see
 * export.h). */
#include "export.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define X(e, s) s,
const char *const vp_export_names[VP_EXPORT_COUNT] = { VP_EXPORT_LIST(X) };
#undef X

static void note(struct vp_buf *notes, const char *fmt, ...);

/* What a format implies; the user's options win. */
static const char *const pins_ds[] = { "--framework", "deepspeed", "--tp",
    "1", "--pp", "1", "--cp", "1", "--ep", "1", "--precision", "bf16-master",
    NULL };
static const char *const pins_acc[] = { "--tp", "1", "--pp", "1", "--cp",
    "1", "--ep", "1", NULL };
static const char *const pins_titan[] = { "--trainer", "torchtitan", NULL };
static const char *const pins_tune[] = { "--trainer", "torchtune", "--tp",
    "1", "--pp", "1", "--cp", "1", "--ep", "1", NULL };
static const char *const pins_mega[] = { "--framework", "megatron",
    "--precision", "bf16-master", NULL };
static const char *const pins_hf[] = { "--trainer", "hf", "--tp", "1",
    "--pp", "1", "--cp", "1", "--ep", "1", NULL };

const char *const *
vp_export_pins(enum vp_export_fmt f)
{
	static const char *const *const pins[VP_EXPORT_COUNT] = {
		[VP_EXPORT_DEEPSPEED] = pins_ds,
		[VP_EXPORT_ACCELERATE] = pins_acc,
		[VP_EXPORT_TORCHTITAN] = pins_titan,
		[VP_EXPORT_TORCHTUNE] = pins_tune,
		[VP_EXPORT_MEGATRON] = pins_mega,
		[VP_EXPORT_HF] = pins_hf,
	};
	return pins[f];
}

void
vp_export_skips(enum vp_export_fmt f, const struct vp_plan *p,
    unsigned world, struct vp_open *open, struct vp_buf *notes)
{
	/* Whole blocks or nothing: DeepSpeed (the model's gradient
	 * checkpointing), accelerate, the Trainer, torchtune. */
	const unsigned blocks = 1u << VP_RECOMP_SELECTIVE | 1u << VP_RECOMP_OP;
	const unsigned ds_stages = 1u << 1 | 1u << 2 | 1u << 3;
	bool mixed = p->precision == VP_PREC_BF16_MIXED ||
	    p->precision == VP_PREC_FP16_MIXED;
	bool master = p->precision == VP_PREC_BF16_MASTER ||
	    p->precision == VP_PREC_FP16_MASTER;

	open->skip_recompute = open->skip_fsdp = open->skip_zero = 0;
	switch (f) {
	case VP_EXPORT_TORCHTITAN:
		open->skip_recompute = 1u << VP_RECOMP_SELECTIVE;
		break;
	case VP_EXPORT_MEGATRON:
		open->skip_recompute = 1u << VP_RECOMP_OP;
		/* The distributed optimizer is ZeRO-1. */
		open->skip_zero = 1u << 2 | 1u << 3;
		break;
	case VP_EXPORT_TORCHTUNE:
		open->skip_recompute = blocks;
		open->skip_fsdp = 1u << VP_FSDP_HYBRID;
		break;
	case VP_EXPORT_ACCELERATE:
	case VP_EXPORT_HF:
		open->skip_recompute = blocks;
		if (p->framework == VP_FW_FSDP2)
			open->skip_fsdp = 1u << VP_FSDP_HYBRID;
		if (p->framework != VP_FW_TORCH)
			break;
		/* --zero N under plain PyTorch is DeepSpeed, whose bf16 and
		 * fp16 are the -master precisions; autocast is DDP's. */
		if (mixed) {
			open->skip_zero = ds_stages;
			if (open->shard && world > 1)
				note(notes, "DeepSpeed plans not tried: under "
				    "DeepSpeed, %s's bf16/fp16 is DeepSpeed's "
				    "own (--precision bf16-master or "
				    "fp16-master); FSDP with --framework fsdp1 "
				    "or fsdp2", f == VP_EXPORT_HF ? "the Trainer"
				    : "accelerate");
		} else if (master)
			open->skip_zero = 1u << 0;
		break;
	default:
		open->skip_recompute = blocks;
		break;
	}
	/* DeepSpeed offloads parameters at stage 3 only. */
	if ((f == VP_EXPORT_DEEPSPEED || ((f == VP_EXPORT_ACCELERATE ||
	    f == VP_EXPORT_HF) && (p->framework == VP_FW_DEEPSPEED ||
	    (p->framework == VP_FW_TORCH && master)))) &&
	    (p->offload == VP_OFFLOAD_PARAMS || p->offload == VP_OFFLOAD_ALL))
		open->skip_zero |= 1u << 0 | 1u << 1 | 1u << 2;
}

/* A refusal: the reason into err, -1. */
static int
refuse(struct vp_buf *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vp_buf_vprintf(err, fmt, ap);
	va_end(ap);
	return -1;
}

static void
note(struct vp_buf *notes, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vp_buf_vprintf(notes, fmt, ap);
	va_end(ap);
	vp_buf_add(notes, "\n");
}

static double
gib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0 * 1024.0);
}

/* The provenance as comment lines ("# " or "// "). */
static void
header(const struct vp_export_in *in, const char *c, struct vp_buf *out)
{
	const struct vp_plan *p = in->plan;

	vp_buf_printf(out, "%s written by vramplan %s (vramplan export)\n", c,
	    in->version);
	vp_buf_printf(out, "%s estimate: %s\n", c, in->command);
	vp_buf_printf(out, "%s device peak %.2f GiB per GPU%s%s%s\n", c,
	    gib(in->device_peak), in->card ? " on " : "",
	    in->card ? in->card : "", in->fits == 0 ? " (DOES NOT FIT)" :
	    in->fits == 1 ? " (fits)" : "");
	if (p->alloc_conf[0])
		vp_buf_printf(out, "%s environment: PYTORCH_CUDA_ALLOC_CONF=%s\n",
		    c, p->alloc_conf);
	else
		vp_buf_printf(out, "%s environment: PYTORCH_CUDA_ALLOC_CONF "
		    "unset (PyTorch's allocator defaults, as estimated)\n", c);
}

static unsigned
dp_of(const struct vp_export_in *in)
{
	return in->plan->dp ? in->plan->dp : 1;
}

/* The recompute as a "whole block or nothing" flag; -1 refused. */
static int
recompute_full(const struct vp_export_in *in, const char *target,
    struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;

	if (p->recompute == VP_RECOMP_NONE)
		return 0;
	if (p->recompute != VP_RECOMP_FULL)
		return refuse(err, "--recompute %s cannot be expressed in %s "
		    "(it checkpoints whole blocks only); give --recompute full "
		    "or none", vp_recomp_names[p->recompute], target);
	if (p->recompute_stride > 1)
		return refuse(err, "--recompute-stride %u cannot be expressed "
		    "in %s (it checkpoints every block); give "
		    "--recompute-stride 1", p->recompute_stride, target);
	return 1;
}

/* What no format here can say. */
static int
common_checks(const struct vp_export_in *in, const char *target,
    struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;

	if (p->device != VP_DEVICE_CUDA)
		return refuse(err, "%s launches on GPUs; the plan is --device "
		    "%s", target, vp_device_names[p->device]);
	if (p->load != VP_LOAD_NONE)
		return refuse(err, "--load %s is torchtune 0.1's single-device "
		    "build, which %s does not launch", vp_load_names[p->load],
		    target);
	return 0;
}

static int
no_parallel(const struct vp_export_in *in, const char *target,
    struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;

	if (p->tp > 1 || p->pp > 1 || p->cp > 1 || p->ep > 1)
		return refuse(err, "the plan has TP %u, PP %u, CP %u, EP %u; %s "
		    "launches data parallelism only (give --tp 1 --pp 1 --cp 1"
		    " and, for a MoE model, --ep 1)", p->tp, p->pp, p->cp, p->ep,
		    target);
	return 0;
}

static int
no_compile_float8(const struct vp_export_in *in, const char *target,
    struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;

	if (p->compile || p->compile_loss)
		return refuse(err, "--compile is torch.compile of each block "
		    "(torchtune, torchtitan); %s compiles the whole model, "
		    "which vramplan does not model", target);
	if (p->float8 != VP_FLOAT8_NONE)
		return refuse(err, "--float8 is torchao's Float8Linear as "
		    "torchtitan converts it; %s cannot say it", target);
	if (p->activation_offload)
		return refuse(err, "--activation-offload is torchtune's "
		    "OffloadActivations; %s cannot say it", target);
	if (p->optim_in_bwd)
		return refuse(err, "--optimizer-in-backward is torchtune's; %s "
		    "cannot say it", target);
	if (p->loss != VP_LOSS_FULL)
		return refuse(err, "--loss %s is torchtune's; %s computes the "
		    "whole loss", vp_loss_names[p->loss], target);
	return 0;
}

/* DeepSpeed ------------------------------------------------------------ */

static const char *
ds_optimizer(enum vp_optimizer o)
{
	switch (o) {
	case VP_OPT_ADAM: return "Adam";
	case VP_OPT_ADAMW: return "AdamW";
	case VP_OPT_LION: return "Lion";
	default: return NULL;
	}
}

/* Whether the estimate's optimizer is a client one: a torch.optim
 * optimizer the script (or the Trainer's optim) builds and hands to
 * deepspeed.initialize, which --optimizer-impl given under DeepSpeed
 * means (vp_plan_optimizer_impl); else DeepSpeed builds its own from the
 * config's optimizer section. */
static bool
ds_client_optimizer(const struct vp_plan *p)
{
	return p->optimizer_impl != VP_OPTIMPL_DEFAULT;
}

/* The ZeRO part of a DeepSpeed config: checks shared with accelerate and
 * TrainingArguments, which name the file. */
static int
ds_checks(const struct vp_export_in *in, struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;

	if (vp_plan_framework(p) != VP_FW_DEEPSPEED)
		return refuse(err, "the plan follows %s semantics, not "
		    "DeepSpeed's; give --framework deepspeed (or --zero N)",
		    vp_framework_names[vp_plan_framework(p)]);
	if (no_parallel(in, "a DeepSpeed config", err) != 0 ||
	    no_compile_float8(in, "a DeepSpeed config", err) != 0)
		return -1;
	if (p->precision != VP_PREC_BF16_MASTER &&
	    p->precision != VP_PREC_FP16_MASTER && p->precision != VP_PREC_FP32)
		return refuse(err, "--precision %s cannot be expressed in a "
		    "DeepSpeed config (bf16 and fp16 are bf16-master and "
		    "fp16-master: 16-bit weights, fp32 partitions; neither is "
		    "fp32)", vp_prec_names[p->precision]);
	if (!ds_client_optimizer(p) && ds_optimizer(p->optimizer) == NULL)
		return refuse(err, "--optimizer %s is not one DeepSpeed builds "
		    "(Adam, AdamW, Lion) as vramplan models it",
		    vp_opt_names[p->optimizer]);
	if ((p->offload == VP_OFFLOAD_PARAMS || p->offload == VP_OFFLOAD_ALL) &&
	    p->zero != 3)
		return refuse(err, "--offload %s with ZeRO-%u: DeepSpeed offloads "
		    "parameters (offload_param) at stage 3 only; give --zero 3",
		    vp_offload_names[p->offload], p->zero);
	if (p->offload_nvme)
		return refuse(err, "--offload-nvme needs nvme_path, a directory "
		    "on the nodes that vramplan does not know; export with CPU "
		    "offload and set device \"nvme\" and nvme_path by hand");
	return 0;
}

static void
ds_body(const struct vp_export_in *in, struct vp_buf *o, bool provenance)
{
	const struct vp_plan *p = in->plan;
	const char *dev_opt = p->offload == VP_OFFLOAD_OPTIMIZER ||
	    p->offload == VP_OFFLOAD_ALL ? "cpu" : "none";
	const char *dev_par = p->offload == VP_OFFLOAD_PARAMS ||
	    p->offload == VP_OFFLOAD_ALL ? "cpu" : "none";

	vp_buf_add(o, "{\n");
	if (provenance) {
		vp_buf_add(o, "  \"_vramplan\": {\n    \"version\": ");
		vp_buf_json_str(o, in->version);
		vp_buf_add(o, ",\n    \"estimate\": ");
		vp_buf_json_str(o, in->command);
		vp_buf_printf(o, ",\n    \"device_peak_gib\": %.2f,\n",
		    gib(in->device_peak));
		vp_buf_add(o, "    \"environment\": ");
		if (p->alloc_conf[0]) {
			struct vp_buf e;

			vp_buf_init(&e);
			vp_buf_printf(&e, "PYTORCH_CUDA_ALLOC_CONF=%s",
			    p->alloc_conf);
			vp_buf_json_str(o, e.s);
			vp_buf_free(&e);
		} else
			vp_buf_json_str(o, "PYTORCH_CUDA_ALLOC_CONF unset");
		if (in->roundtrip) {
			vp_buf_add(o, ",\n    \"read_back\": ");
			vp_buf_json_str(o, in->roundtrip);
		}
		vp_buf_add(o, "\n  },\n");
	}
	vp_buf_printf(o, "  \"train_micro_batch_size_per_gpu\": %llu,\n",
	    (unsigned long long)p->micro_batch);
	vp_buf_printf(o, "  \"gradient_accumulation_steps\": %llu,\n",
	    (unsigned long long)p->grad_accum);
	vp_buf_printf(o, "  \"train_batch_size\": %llu,\n",
	    (unsigned long long)(p->micro_batch * p->grad_accum * dp_of(in)));
	vp_buf_printf(o, "  \"bf16\": { \"enabled\": %s },\n",
	    p->precision == VP_PREC_BF16_MASTER ? "true" : "false");
	vp_buf_printf(o, "  \"fp16\": { \"enabled\": %s },\n",
	    p->precision == VP_PREC_FP16_MASTER ? "true" : "false");
	if (ds_client_optimizer(p))
		vp_buf_add(o, "  \"zero_allow_untested_optimizer\": true,\n");
	else
		vp_buf_printf(o, "  \"optimizer\": { \"type\": \"%s\" },\n",
		    ds_optimizer(p->optimizer));
	vp_buf_add(o, "  \"zero_optimization\": {\n");
	vp_buf_printf(o, "    \"stage\": %u,\n", p->zero);
	vp_buf_printf(o, "    \"offload_optimizer\": { \"device\": \"%s\" },\n",
	    dev_opt);
	vp_buf_printf(o, "    \"offload_param\": { \"device\": \"%s\" },\n",
	    dev_par);
	vp_buf_printf(o, "    \"contiguous_gradients\": %s,\n",
	    p->ds.contiguous_grads ? "true" : "false");
	vp_buf_printf(o, "    \"overlap_comm\": %s,\n",
	    vp_plan_ds_overlap(p) ? "true" : "false");
	vp_buf_printf(o, "    \"reduce_bucket_size\": %llu,\n",
	    (unsigned long long)p->ds.reduce_bucket);
	vp_buf_printf(o, "    \"stage3_prefetch_bucket_size\": %llu,\n",
	    (unsigned long long)p->ds.prefetch_bucket);
	vp_buf_printf(o, "    \"stage3_param_persistence_threshold\": %llu,\n",
	    (unsigned long long)p->ds.persist_threshold);
	vp_buf_printf(o, "    \"stage3_max_live_parameters\": %llu,\n",
	    (unsigned long long)p->ds.max_live);
	vp_buf_printf(o, "    \"stage3_max_reuse_distance\": %llu\n",
	    (unsigned long long)p->ds.max_reuse);
	vp_buf_add(o, "  }\n}\n");
}

/* Where the training script must do what a config cannot say. */
static void
script_notes(const struct vp_export_in *in, const char *target,
    struct vp_buf *notes)
{
	const struct vp_plan *p = in->plan;

	if (p->lora_rank > 0) {
		char t[96] = "";
		size_t n = 0;
		int i;

		for (i = 0; i < VP_LORA_TARGET_COUNT; i++)
			if (p->lora_targets & (1u << i))
				n += (size_t)snprintf(t + n, n < sizeof t ?
				    sizeof t - n : 0, "%s%s", n ? "," : "",
				    vp_lora_target_names[i]);
		note(notes, "LoRA is the training script's (PEFT LoraConfig), "
		    "not %s's: rank %u on %s, dropout %g, adapters in %s", target,
		    p->lora_rank, t, p->lora_dropout,
		    vp_dtype_names[p->lora_dtype]);
	}
	if (p->quant != VP_QUANT_NONE)
		note(notes, "the %s base is the training script's (%s), not "
		    "%s's; %s", vp_quant_names[p->quant],
		    p->quant_lib == VP_QLIB_TORCHAO ? "torchao" :
		    "BitsAndBytesConfig", target, p->kbit_prep == VP_KBIT_UPCAST ?
		    "prepare_model_for_kbit_training (the rest upcast to fp32)" :
		    "the rest kept in the load dtype (no "
		    "prepare_model_for_kbit_training)");
	note(notes, "the sequence length %llu is the data's: pad or pack to "
	    "it", (unsigned long long)p->seq);
}

static int
export_deepspeed(const struct vp_export_in *in, struct vp_buf *out,
    struct vp_buf *notes, struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;

	if (ds_checks(in, err) != 0)
		return -1;
	ds_body(in, out, true);
	if (ds_client_optimizer(p))
		note(notes, "the optimizer is the client's: torch.optim's %s "
		    "with %s kernels, built by the script (the Trainer's optim) "
		    "and handed to deepspeed.initialize", vp_opt_names[p->optimizer],
		    vp_optimpl_names[p->optimizer_impl]);
	if (p->recompute == VP_RECOMP_FULL && p->recompute_stride <= 1)
		note(notes, "recompute full is the model's, not DeepSpeed's: "
		    "model.gradient_checkpointing_enable() (the Trainer's "
		    "--gradient_checkpointing); the config's "
		    "activation_checkpointing section only configures "
		    "deepspeed.checkpointing");
	else if (p->recompute != VP_RECOMP_NONE)
		note(notes, "recompute %s (stride %u) is the training script's; "
		    "a DeepSpeed config cannot hold it",
		    vp_recomp_names[p->recompute], p->recompute_stride);
	script_notes(in, "a DeepSpeed config", notes);
	return 0;
}

/* accelerate ------------------------------------------------------------ */

/* The Hugging Face decoder-layer class of a family whose rows name one
 * transformers class (each found in transformers 5.24); NULL where the
 * family stands for several (llama: Llama, Mistral, Qwen2, ...; bert:
 * BERT, RoBERTa), where accelerate's default, the model's
 * _no_split_modules, is that class. */
static const char *
layer_class(const struct vp_model *m)
{
	switch (vp_model_family(m)) {
	case VP_FAMILY_QWEN3:
		return m->has_moe ? "Qwen3MoeDecoderLayer" :
		    "Qwen3DecoderLayer";
	case VP_FAMILY_LLAMA4: return "Llama4TextDecoderLayer";
	case VP_FAMILY_GEMMA3: return "Gemma3DecoderLayer";
	case VP_FAMILY_GPT_OSS: return "GptOssDecoderLayer";
	case VP_FAMILY_DEEPSEEK_V2: return "DeepseekV2DecoderLayer";
	case VP_FAMILY_DEEPSEEK_V3: return "DeepseekV3DecoderLayer";
	case VP_FAMILY_GPT_NEOX: return "GPTNeoXLayer";
	case VP_FAMILY_OPT: return "OPTDecoderLayer";
	case VP_FAMILY_GPTJ: return "GPTJBlock";
	case VP_FAMILY_FALCON: return "FalconDecoderLayer";
	case VP_FAMILY_COHERE: return "CohereDecoderLayer";
	case VP_FAMILY_PHI: return "PhiDecoderLayer";
	case VP_FAMILY_GPT2: return "GPT2Block";
	default: return NULL;
	}
}

/* The mixed precision accelerate and the Trainer call it; NULL refused. */
static const char *
acc_precision(const struct vp_plan *p, bool ds)
{
	if (ds)
		return p->precision == VP_PREC_BF16_MASTER ? "bf16" :
		    p->precision == VP_PREC_FP16_MASTER ? "fp16" :
		    p->precision == VP_PREC_FP32 ? "no" : NULL;
	return p->precision == VP_PREC_BF16_MASTER ? NULL :
	    p->precision == VP_PREC_BF16_MIXED ? "bf16" :
	    p->precision == VP_PREC_FP16_MIXED ? "fp16" :
	    p->precision == VP_PREC_FP32 ? "no" : NULL;
}

/* DeepSpeed under accelerate or the Trainer: their bf16/fp16 switch on
 * DeepSpeed's own (bf16-master, fp16-master), never autocast. */
static int
ds_under(const struct vp_export_in *in, const char *target,
    struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;

	if (p->precision == VP_PREC_BF16_MIXED ||
	    p->precision == VP_PREC_FP16_MIXED)
		return refuse(err, "the plan is DeepSpeed ZeRO-%u with "
		    "--precision %s, but under DeepSpeed %s's %s is DeepSpeed's "
		    "own (%s-master: 16-bit weights, fp32 partitions); give "
		    "--precision %s-master to plan DeepSpeed, or --framework "
		    "fsdp1|fsdp2 (FSDP) or --zero 0 (DDP)", p->zero,
		    vp_prec_names[p->precision], target,
		    p->precision == VP_PREC_BF16_MIXED ? "bf16" : "fp16",
		    p->precision == VP_PREC_BF16_MIXED ? "bf16" : "fp16",
		    p->precision == VP_PREC_BF16_MIXED ? "bf16" : "fp16");
	return ds_checks(in, err);
}

/* FSDP through accelerate and the Trainer: checks shared. */
static int
fsdp_checks(const struct vp_export_in *in, const char *target,
    struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;

	if (p->offload != VP_OFFLOAD_NONE && p->offload != VP_OFFLOAD_ALL)
		return refuse(err, "--offload %s: FSDP's CPUOffload moves the "
		    "parameters, gradients and optimizer step together; %s can "
		    "say optimizer+params or none", vp_offload_names[p->offload],
		    target);
	if (p->fsdp == VP_FSDP_HYBRID && p->framework == VP_FW_FSDP2)
		return refuse(err, "--fsdp hybrid with FSDP2 is a 2-D device "
		    "mesh that %s cannot say", target);
	return 0;
}

static int
export_accelerate(const struct vp_export_in *in, struct vp_buf *out,
    struct vp_buf *notes, struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;
	enum vp_framework fw = vp_plan_framework(p);
	const char *mp, *cls = layer_class(in->model);
	int rc;

	if (common_checks(in, "accelerate", err) != 0 ||
	    no_parallel(in, "accelerate", err) != 0 ||
	    no_compile_float8(in, "an accelerate config", err) != 0)
		return -1;
	if (fw == VP_FW_MEGATRON)
		return refuse(err, "the plan follows Megatron semantics; export "
		    "megatron instead");
	if (fw == VP_FW_DEEPSPEED && ds_under(in, "accelerate", err) != 0)
		return -1;
	if ((fw == VP_FW_FSDP1 || fw == VP_FW_FSDP2) &&
	    fsdp_checks(in, "accelerate", err) != 0)
		return -1;
	if ((mp = acc_precision(p, fw == VP_FW_DEEPSPEED)) == NULL)
		return refuse(err, "--precision %s cannot be expressed in an "
		    "accelerate config (its mixed_precision is autocast: "
		    "bf16-mixed, fp16-mixed or fp32; under DeepSpeed "
		    "bf16-master or fp16-master)", vp_prec_names[p->precision]);
	if ((rc = recompute_full(in, "accelerate", err)) < 0)
		return -1;
	header(in, "#", out);
	vp_buf_add(out, "compute_environment: LOCAL_MACHINE\n");
	vp_buf_printf(out, "distributed_type: %s\n", fw == VP_FW_DEEPSPEED ?
	    "DEEPSPEED" : fw == VP_FW_TORCH ? (in->world > 1 ? "MULTI_GPU" :
	    "'NO'") : "FSDP");
	vp_buf_printf(out, "mixed_precision: '%s'\n", mp);
	vp_buf_printf(out, "num_processes: %u\n", in->world);
	vp_buf_printf(out, "num_machines: %u\n", in->nodes);
	vp_buf_add(out, "machine_rank: 0\nmain_training_function: main\n"
	    "rdzv_backend: static\nsame_network: true\nuse_cpu: false\n"
	    "downcast_bf16: 'no'\n");
	if (fw == VP_FW_DEEPSPEED) {
		vp_buf_add(out, "deepspeed_config:\n  deepspeed_config_file: ");
		vp_buf_json_str(out, in->ds_file);
		vp_buf_add(out, "\n  zero3_init_flag: ");
		vp_buf_add(out, p->zero == 3 ? "true\n" : "false\n");
		note(notes, "accelerate reads DeepSpeed's settings from %s, "
		    "written with this file from the same plan", in->ds_file);
	}
	if (fw == VP_FW_FSDP1 || fw == VP_FW_FSDP2) {
		bool v2 = fw == VP_FW_FSDP2;

		vp_buf_add(out, "fsdp_config:\n");
		vp_buf_printf(out, "  fsdp_version: %d\n", v2 ? 2 : 1);
		vp_buf_add(out, "  fsdp_auto_wrap_policy: "
		    "TRANSFORMER_BASED_WRAP\n");
		if (cls)
			vp_buf_printf(out, "  fsdp_transformer_layer_cls_to_wrap: "
			    "%s\n", cls);
		else
			note(notes, "fsdp_transformer_layer_cls_to_wrap left "
			    "out: accelerate wraps the model's _no_split_modules "
			    "(its decoder layer class)");
		if (v2)
			vp_buf_printf(out, "  fsdp_reshard_after_forward: %s\n",
			    p->fsdp == VP_FSDP_GRAD_OP || p->reshard_after_forward
			    == VP_NO ? "false" : "true");
		else {
			vp_buf_printf(out, "  fsdp_sharding_strategy: %s\n",
			    p->fsdp == VP_FSDP_GRAD_OP ? "SHARD_GRAD_OP" :
			    p->fsdp == VP_FSDP_HYBRID ? "HYBRID_SHARD" :
			    "FULL_SHARD");
			vp_buf_printf(out, "  fsdp_backward_prefetch: %s\n",
			    p->fsdp_prefetch == VP_FSDP_PREFETCH_PRE ?
			    "BACKWARD_PRE" : p->fsdp_prefetch ==
			    VP_FSDP_PREFETCH_POST ? "BACKWARD_POST" :
			    "NO_PREFETCH");
			vp_buf_add(out, "  fsdp_forward_prefetch: false\n");
			vp_buf_printf(out, "  fsdp_use_orig_params: %s\n",
			    p->fsdp_orig_params == VP_YES ? "true" : "false");
		}
		vp_buf_printf(out, "  fsdp_offload_params: %s\n",
		    p->offload == VP_OFFLOAD_ALL ? "true" : "false");
		/* Not FSDP's own wrapper: the model's checkpointing, as
		 * tests/validate_fsdp.py measured it (below). */
		vp_buf_add(out, "  fsdp_activation_checkpointing: false\n");
	}
	if (rc)
		note(notes, "recompute full: model.gradient_checkpointing_enable"
		    "(gradient_checkpointing_kwargs={\"use_reentrant\": False}) "
		    "in the training script%s", fw == VP_FW_FSDP1 || fw ==
		    VP_FW_FSDP2 ? " (each block checkpointed outside its FSDP "
		    "unit, as vramplan measured it; not "
		    "fsdp_activation_checkpointing)" : "");
	if (in->nodes > 1)
		note(notes, "num_machines %u: set machine_rank, "
		    "main_process_ip and main_process_port on each machine",
		    in->nodes);
	if (fw != VP_FW_DEEPSPEED)
		note(notes, "the optimizer is the training script's: %s with "
		    "%s kernels", vp_opt_names[p->optimizer],
		    vp_optimpl_names[vp_plan_optimizer_impl(p)]);
	note(notes, "micro-batch %llu per GPU and grad-accum %llu are the "
	    "training script's (DataLoader batch_size, Accelerator("
	    "gradient_accumulation_steps=))", (unsigned long long)p->micro_batch,
	    (unsigned long long)p->grad_accum);
	script_notes(in, "an accelerate config", notes);
	return 0;
}

/* Hugging Face TrainingArguments --------------------------------------- */

static const char *
hf_optim(const struct vp_plan *p)
{
	enum vp_optimpl impl = vp_plan_optimizer_impl(p);

	switch (p->optimizer) {
	case VP_OPT_ADAMW:
		return impl == VP_OPTIMPL_FUSED ? "adamw_torch_fused" :
		    impl == VP_OPTIMPL_FOREACH ? "adamw_torch" : NULL;
	case VP_OPT_ADAMW_8BIT: return "adamw_bnb_8bit";
	case VP_OPT_PAGED_ADAMW: return "paged_adamw_32bit";
	case VP_OPT_PAGED_ADAMW_8BIT: return "paged_adamw_8bit";
	case VP_OPT_ADAFACTOR: return "adafactor";
	case VP_OPT_SGD: return "sgd";
	default: return NULL;
	}
}

static int
export_hf(const struct vp_export_in *in, struct vp_buf *out,
    struct vp_buf *notes, struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;
	enum vp_framework fw = vp_plan_framework(p);
	const char *mp, *opt, *cls = layer_class(in->model);
	bool ac = p->transformers_version >= 524;
	bool fsdp = fw == VP_FW_FSDP1 || fw == VP_FW_FSDP2;
	int rc;

	if (common_checks(in, "the Hugging Face Trainer", err) != 0 ||
	    no_parallel(in, "the Hugging Face Trainer", err) != 0 ||
	    no_compile_float8(in, "TrainingArguments", err) != 0)
		return -1;
	if (fw == VP_FW_MEGATRON)
		return refuse(err, "the plan follows Megatron semantics, which "
		    "the Hugging Face Trainer does not launch");
	if (fw == VP_FW_DEEPSPEED && ds_under(in, "the Trainer", err) != 0)
		return -1;
	if (fsdp && fsdp_checks(in, "TrainingArguments", err) != 0)
		return -1;
	if (fsdp && !ac)
		return refuse(err, "TrainingArguments' FSDP settings are written "
		    "as transformers 5.24 reads them (fsdp_config); the plan is "
		    "for transformers %u.%02u (give --transformers 5.24)",
		    p->transformers_version / 100, p->transformers_version % 100);
	if ((mp = acc_precision(p, fw == VP_FW_DEEPSPEED)) == NULL)
		return refuse(err, "--precision %s cannot be expressed in "
		    "TrainingArguments (bf16/fp16 are autocast: bf16-mixed or "
		    "fp16-mixed; under DeepSpeed bf16-master or fp16-master)",
		    vp_prec_names[p->precision]);
	/* Under DeepSpeed the Trainer's optim is the client optimizer, or
	 * none: the config's optimizer section (ds_client_optimizer). */
	opt = NULL;
	if ((fw != VP_FW_DEEPSPEED || ds_client_optimizer(p)) &&
	    (opt = hf_optim(p)) == NULL)
		return refuse(err, "--optimizer %s with %s kernels is not one of "
		    "the Trainer's optim names", vp_opt_names[p->optimizer],
		    vp_optimpl_names[vp_plan_optimizer_impl(p)]);
	if ((rc = recompute_full(in, "TrainingArguments", err)) < 0)
		return -1;
	vp_buf_add(out, "{\n");
	vp_buf_printf(out, "  \"per_device_train_batch_size\": %llu,\n",
	    (unsigned long long)p->micro_batch);
	vp_buf_printf(out, "  \"gradient_accumulation_steps\": %llu,\n",
	    (unsigned long long)p->grad_accum);
	vp_buf_printf(out, "  \"bf16\": %s,\n  \"fp16\": %s,\n",
	    strcmp(mp, "bf16") == 0 ? "true" : "false",
	    strcmp(mp, "fp16") == 0 ? "true" : "false");
	/* transformers 5.24 renamed gradient_checkpointing(_kwargs) to
	 * activation_checkpointing(_kwargs) (the old names are deprecated
	 * aliases there); earlier releases know the old names only. */
	/* The model's checkpointing, under FSDP too: each block checkpointed
	 * outside its FSDP unit, as tests/validate_fsdp.py measured it (not
	 * fsdp_config's activation_checkpointing, FSDP's own wrapper inside
	 * the unit, which vramplan has not measured). */
	vp_buf_printf(out, "  \"%s_checkpointing\": %s,\n", ac ?
	    "activation" : "gradient", rc ? "true" : "false");
	if (rc)
		vp_buf_printf(out, "  \"%s_checkpointing_kwargs\": "
		    "{ \"use_reentrant\": false },\n", ac ? "activation" :
		    "gradient");
	if (opt)
		vp_buf_printf(out, "  \"optim\": \"%s\",\n", opt);
	if (fw == VP_FW_DEEPSPEED) {
		vp_buf_add(out, "  \"deepspeed\": ");
		vp_buf_json_str(out, in->ds_file);
		vp_buf_add(out, ",\n");
		note(notes, "the Trainer reads DeepSpeed's settings from %s, "
		    "written with this file from the same plan", in->ds_file);
	}
	if (fsdp) {
		/* transformers 5.24 (_process_fsdp_args): fsdp true and every
		 * setting in fsdp_config (the string form is deprecated);
		 * FSDP1's reshard_after_forward is the strategy's name. */
		vp_buf_add(out, "  \"fsdp\": true,\n");
		vp_buf_printf(out, "  \"fsdp_config\": {\n    \"version\": %d,\n",
		    fw == VP_FW_FSDP2 ? 2 : 1);
		if (fw == VP_FW_FSDP2)
			vp_buf_printf(out, "    \"reshard_after_forward\": %s,\n",
			    p->fsdp == VP_FSDP_GRAD_OP || p->reshard_after_forward
			    == VP_NO ? "false" : "true");
		else
			vp_buf_printf(out, "    \"reshard_after_forward\": "
			    "\"%s\",\n", p->fsdp == VP_FSDP_GRAD_OP ?
			    "shard_grad_op" : p->fsdp == VP_FSDP_HYBRID ?
			    "hybrid_shard" : "full_shard");
		vp_buf_printf(out, "    \"cpu_offload\": %s,\n",
		    p->offload == VP_OFFLOAD_ALL ? "true" : "false");
		vp_buf_add(out, "    \"auto_wrap_policy\": "
		    "\"TRANSFORMER_BASED_WRAP\",\n");
		if (cls)
			vp_buf_printf(out, "    \"transformer_layer_cls_to_wrap\":"
			    " [\"%s\"],\n", cls);
		if (fw == VP_FW_FSDP1)
			vp_buf_printf(out, "    \"backward_prefetch\": \"%s\",\n"
			    "    \"forward_prefetch\": false,\n"
			    "    \"use_orig_params\": %s,\n",
			    p->fsdp_prefetch == VP_FSDP_PREFETCH_PRE ?
			    "BACKWARD_PRE" : p->fsdp_prefetch ==
			    VP_FSDP_PREFETCH_POST ? "BACKWARD_POST" :
			    "NO_PREFETCH", p->fsdp_orig_params == VP_YES ?
			    "true" : "false");
		vp_buf_add(out, "    \"activation_checkpointing\": false\n");
		vp_buf_add(out, "  },\n");
	}
	vp_buf_add(out, "  \"torch_compile\": false\n}\n");
	note(notes, "written by vramplan %s; estimate: %s; device peak %.2f "
	    "GiB per GPU (TrainingArguments takes no comment or extra key)",
	    in->version, in->command, gib(in->device_peak));
	note(notes, "launch %u processes on %u machine(s) (torchrun or "
	    "accelerate launch); environment: %s%s", in->world, in->nodes,
	    p->alloc_conf[0] ? "PYTORCH_CUDA_ALLOC_CONF=" :
	    "PYTORCH_CUDA_ALLOC_CONF unset", p->alloc_conf);
	script_notes(in, "TrainingArguments", notes);
	return 0;
}

/* torchtitan ------------------------------------------------------------ */

/* torchtitan v0.2.2's model whose flavors can have m's shape (its
 * torchtitan/models: llama3, llama4, deepseek_v3 with DeepSeek-V2's 236B
 * flavor, qwen3, gpt_oss), or NULL. */
static const char *
titan_model(const struct vp_model *m)
{
	switch (vp_model_family(m)) {
	case VP_FAMILY_LLAMA:
		return m->arch == VP_ARCH_DECODER && !m->has_moe &&
		    m->vis.patch == 0 && !m->vis.llava &&
		    m->act == VP_ACT_SWIGLU && m->norm == VP_NORM_RMSNORM &&
		    m->pos == VP_POS_ROPE && !m->bias && m->qkv_bias <= 0 &&
		    m->window == 0 ? "llama3" : NULL;
	case VP_FAMILY_LLAMA4: return "llama4";
	case VP_FAMILY_DEEPSEEK_V2:
	case VP_FAMILY_DEEPSEEK_V3: return "deepseek_v3";
	case VP_FAMILY_QWEN3: return "qwen3";
	case VP_FAMILY_GPT_OSS: return "gpt_oss";
	default: return NULL;
	}
}

static int
export_torchtitan(const struct vp_export_in *in, struct vp_buf *out,
    struct vp_buf *notes, struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;
	enum vp_framework fw = vp_plan_framework(p);
	unsigned dp = dp_of(in), shard = 1, rep = 1;
	const char *mode = "none", *opt = NULL, *model;
	char sac[32] = "";

	if (vp_export_model(VP_EXPORT_TORCHTITAN, in->model, err) != 0 ||
	    common_checks(in, "torchtitan", err) != 0)
		return -1;
	model = titan_model(in->model);
	if (fw != VP_FW_FSDP2 && !(fw == VP_FW_TORCH && p->zero == 0))
		return refuse(err, "the plan follows %s semantics; torchtitan "
		    "shards with FSDP2 (give --framework fsdp2)",
		    vp_framework_names[fw]);
	if (p->lora_rank > 0 || p->quant != VP_QUANT_NONE)
		return refuse(err, "torchtitan pre-trains: it has no LoRA or "
		    "quantized base");
	if (p->precision != VP_PREC_BF16_MIXED && p->precision != VP_PREC_FP32)
		return refuse(err, "--precision %s: torchtitan keeps fp32 "
		    "parameters with mixed_precision_param bfloat16 (vramplan's "
		    "bf16-mixed) or float32", vp_prec_names[p->precision]);
	if (p->optimizer == VP_OPT_ADAMW)
		opt = "AdamW";
	else if (p->optimizer == VP_OPT_ADAM)
		opt = "Adam";
	else
		return refuse(err, "--optimizer %s is not one of torchtitan's "
		    "(Adam, AdamW)", vp_opt_names[p->optimizer]);
	if (p->offload != VP_OFFLOAD_NONE && p->offload != VP_OFFLOAD_ALL)
		return refuse(err, "--offload %s: torchtitan's "
		    "training.enable_cpu_offload is FSDP2's CPUOffloadPolicy "
		    "(optimizer+params)", vp_offload_names[p->offload]);
	if (p->activation_offload || p->optim_in_bwd || p->loss !=
	    VP_LOSS_FULL)
		return refuse(err, "the plan uses torchtune's %s, which "
		    "torchtitan does not have", p->activation_offload ?
		    "activation offloading" : p->optim_in_bwd ?
		    "optimizer in backward" : "chunked loss");
	if (p->compile && p->recompute == VP_RECOMP_FULL &&
	    !p->compile_wraps_ckpt)
		return refuse(err, "torchtitan compiles each checkpoint-wrapped "
		    "block (apply_ac, then apply_compile); the plan compiles "
		    "inside the checkpoint (give --compile-wraps-checkpoint)");
	if (p->compile_loss && !p->compile)
		return refuse(err, "--compile-loss without --compile: "
		    "torchtitan's compile.components name the model too");
	if (p->vpp > 1)
		return refuse(err, "--vpp %u: the interleaved schedule's "
		    "stages per rank are not written (give --vpp 1)", p->vpp);
	if (p->recompute == VP_RECOMP_FULL && p->recompute_stride <= 1)
		mode = "full";
	else if (p->recompute == VP_RECOMP_FULL) {
		mode = "selective";
		snprintf(sac, sizeof sac, "%u", p->recompute_stride);
	} else if (p->recompute == VP_RECOMP_OP) {
		if (p->recompute_stride > 1)
			return refuse(err, "--recompute op with a stride is not "
			    "a torchtitan mode");
		mode = "selective";
		snprintf(sac, sizeof sac, "op");
	} else if (p->recompute == VP_RECOMP_SELECTIVE)
		return refuse(err, "--recompute selective (the attention core) "
		    "is Megatron's; torchtitan's modes are full, op and every "
		    "N-th block");
	if (p->fsdp == VP_FSDP_HYBRID) {
		shard = p->gpus_per_node < dp ? p->gpus_per_node : dp;
		rep = dp / (shard ? shard : 1);
	} else if (p->fsdp != VP_FSDP_NONE)
		shard = dp;
	else
		rep = dp;
	header(in, "#", out);
	vp_buf_printf(out, "# launch: NGPU=%u on %u machine(s)\n\n", in->world,
	    in->nodes);
	vp_buf_printf(out, "[model]\nname = \"%s\"\n", model);
	if (p->float8 != VP_FLOAT8_NONE)
		/* torchtitan v0.2.2: the converter registered as
		 * "quantize.linear.float8", its knobs in that section. */
		vp_buf_add(out, "converters = [\"quantize.linear.float8\"]\n");
	vp_buf_add(out, "\n[training]\n");
	vp_buf_printf(out, "local_batch_size = %llu\n",
	    (unsigned long long)p->micro_batch);
	vp_buf_printf(out, "global_batch_size = %llu\n",
	    (unsigned long long)(p->micro_batch * p->grad_accum * dp));
	vp_buf_printf(out, "seq_len = %llu\n", (unsigned long long)p->seq);
	vp_buf_printf(out, "mixed_precision_param = \"%s\"\n",
	    p->precision == VP_PREC_FP32 ? "float32" : "bfloat16");
	vp_buf_add(out, "mixed_precision_reduce = \"float32\"\n");
	vp_buf_printf(out, "enable_cpu_offload = %s\n\n",
	    p->offload == VP_OFFLOAD_ALL ? "true" : "false");
	vp_buf_add(out, "[parallelism]\n");
	vp_buf_printf(out, "data_parallel_replicate_degree = %u\n", rep);
	vp_buf_printf(out, "data_parallel_shard_degree = %u\n", shard);
	vp_buf_printf(out, "fsdp_reshard_after_forward = \"%s\"\n",
	    p->fsdp == VP_FSDP_GRAD_OP || p->reshard_after_forward == VP_NO ?
	    "never" : "always");
	vp_buf_printf(out, "tensor_parallel_degree = %u\n", p->tp);
	vp_buf_printf(out, "enable_async_tensor_parallel = %s\n",
	    p->async_tp ? "true" : "false");
	vp_buf_printf(out, "pipeline_parallel_degree = %u\n", p->pp);
	if (p->pp > 1)
		vp_buf_add(out, "pipeline_parallel_schedule = \"1F1B\"\n");
	vp_buf_printf(out, "context_parallel_degree = %u\n", p->cp);
	vp_buf_printf(out, "expert_parallel_degree = %u\n\n", p->ep);
	vp_buf_add(out, "[activation_checkpoint]\n");
	vp_buf_printf(out, "mode = \"%s\"\n", mode);
	if (sac[0])
		vp_buf_printf(out, "selective_ac_option = \"%s\"\n", sac);
	vp_buf_add(out, "\n[compile]\n");
	vp_buf_printf(out, "enable = %s\n", p->compile ? "true" : "false");
	vp_buf_printf(out, "components = [%s]\n\n", !p->compile ? "" :
	    p->compile_loss ? "\"model\", \"loss\"" : "\"model\"");
	vp_buf_add(out, "[optimizer]\n");
	vp_buf_printf(out, "name = \"%s\"\n", opt);
	vp_buf_printf(out, "implementation = \"%s\"\n",
	    vp_optimpl_names[vp_plan_optimizer_impl(p)]);
	if (p->float8 != VP_FLOAT8_NONE) {
		vp_buf_add(out, "\n[quantize.linear.float8]\n");
		vp_buf_printf(out, "recipe_name = \"%s\"\n",
		    vp_float8_names[p->float8]);
		vp_buf_printf(out, "enable_fsdp_float8_all_gather = %s\n",
		    p->float8_all_gather ? "true" : "false");
	}
	if (p->fsdp != VP_FSDP_NONE && p->fsdp_units != VP_FSDP_UNITS_SPLIT) {
		struct vp_param_count pc;

		/* torchtitan v0.2.2 parallelize.py apply_fsdp: fully_shard
		 * of tok_embeddings, of each block, of [norm, output], then
		 * of the model, which --fsdp-units split models (--trainer
		 * torchtitan sets it); a plan with the root layout (given,
		 * or tied embeddings) keeps them in the root unit. */
		vp_model_params(in->model, &pc);
		vp_buf_printf(out, "\n# not as estimated: torchtitan shards "
		    "tok_embeddings and [norm, output] as units of their own;\n"
		    "# the estimate holds them in the root unit, gathered "
		    "through the step, which\n# overstates the device peak by "
		    "up to %.2f GiB\n", gib((pc.embedding + pc.head) * 2 /
		    p->tp));
		note(notes, "torchtitan shards tok_embeddings and [norm, output] "
		    "as units of their own; this plan's --fsdp-units root "
		    "keeps them in the root unit: the estimate overstates "
		    "by up to %.2f GiB", gib((pc.embedding + pc.head) * 2 /
		    p->tp));
	}
	note(notes, "the model is torchtitan's own %s: pick the [model] "
	    "flavor with the shape vramplan read (%llu layers, hidden %llu)",
	    model, (unsigned long long)in->model->layers,
	    (unsigned long long)in->model->hidden);
	return 0;
}

/* torchtune ------------------------------------------------------------- */

static const char *
tune_optimizer(enum vp_optimizer o)
{
	switch (o) {
	case VP_OPT_ADAMW: return "torch.optim.AdamW";
	case VP_OPT_ADAM: return "torch.optim.Adam";
	case VP_OPT_SGD: return "torch.optim.SGD";
	case VP_OPT_ADAMW_8BIT: return "bitsandbytes.optim.AdamW8bit";
	case VP_OPT_PAGED_ADAMW: return "bitsandbytes.optim.PagedAdamW";
	case VP_OPT_PAGED_ADAMW_8BIT: return "bitsandbytes.optim.PagedAdamW8bit";
	default: return NULL;
	}
}

static int
export_torchtune(const struct vp_export_in *in, struct vp_buf *out,
    struct vp_buf *notes, struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;
	enum vp_framework fw = vp_plan_framework(p);
	const char *opt = tune_optimizer(p->optimizer);
	static const char *const attn[] = { "q_proj", "k_proj", "v_proj",
	    "output_proj" };
	unsigned mlp = (1u << VP_LORA_GATE) | (1u << VP_LORA_UP) |
	    (1u << VP_LORA_DOWN);
	int rc, i, n;

	if (vp_export_model(VP_EXPORT_TORCHTUNE, in->model, err) != 0 ||
	    common_checks(in, "torchtune", err) != 0 ||
	    no_parallel(in, "torchtune's recipes", err) != 0)
		return -1;
	if (in->world > 1 && !(fw == VP_FW_FSDP2 && p->fsdp != VP_FSDP_NONE &&
	    p->fsdp != VP_FSDP_HYBRID))
		return refuse(err, "torchtune's distributed recipes shard with "
		    "FSDP2 (fully_shard); the plan is %s%s%s",
		    vp_framework_names[fw], p->fsdp != VP_FSDP_NONE ? " fsdp " :
		    "", p->fsdp != VP_FSDP_NONE ? vp_fsdp_names[p->fsdp] : "");
	if (p->precision != VP_PREC_BF16 && p->precision != VP_PREC_FP32)
		return refuse(err, "--precision %s: torchtune's dtype casts the "
		    "model (bf16 or fp32)", vp_prec_names[p->precision]);
	if (opt == NULL)
		return refuse(err, "--optimizer %s is not written for torchtune",
		    vp_opt_names[p->optimizer]);
	if (p->quant != VP_QUANT_NONE)
		return refuse(err, "QLoRA is a model builder of its own in "
		    "torchtune (qlora_*): use its QLoRA config; the overrides "
		    "cannot switch the builder");
	if (p->loss == VP_LOSS_CHUNKED)
		return refuse(err, "--loss chunked is not torchtune's loss");
	if (p->compile != p->compile_loss)
		return refuse(err, "torchtune's compile=True compiles the model's "
		    "layers and the loss together; give both --compile and "
		    "--compile-loss, or neither");
	if (p->compile && p->recompute == VP_RECOMP_FULL &&
	    p->compile_wraps_ckpt)
		return refuse(err, "torchtune compiles each block inside its "
		    "checkpoint; --compile-wraps-checkpoint is torchtitan's "
		    "order");
	if (p->optim_in_bwd && p->lora_rank > 0)
		return refuse(err, "--optimizer-in-backward: torchtune's LoRA "
		    "recipes do not read optimizer_in_bwd");
	if (p->offload != VP_OFFLOAD_NONE && p->offload != VP_OFFLOAD_ALL)
		return refuse(err, "--offload %s: torchtune's fsdp_cpu_offload "
		    "is optimizer+params", vp_offload_names[p->offload]);
	if (p->float8 != VP_FLOAT8_NONE)
		return refuse(err, "--float8 is torchtitan's converter");
	if (p->lora_rank > 0 && (p->lora_targets & mlp) != 0 &&
	    (p->lora_targets & mlp) != mlp)
		return refuse(err, "torchtune's apply_lora_to_mlp adapts gate, "
		    "up and down together; give all three or none");
	if ((rc = recompute_full(in, "torchtune", err)) < 0)
		return -1;
	header(in, "#", out);
	vp_buf_printf(out, "# tune run --nproc_per_node %u %s --config "
	    "CONFIG $(grep -v '^#' THIS_FILE)\n", in->world / in->nodes,
	    p->lora_rank ? (in->world > 1 ? "lora_finetune_distributed" :
	    "lora_finetune_single_device") : (in->world > 1 ?
	    "full_finetune_distributed" : "full_finetune_single_device"));
	vp_buf_printf(out, "batch_size=%llu\n",
	    (unsigned long long)p->micro_batch);
	vp_buf_printf(out, "gradient_accumulation_steps=%llu\n",
	    (unsigned long long)p->grad_accum);
	vp_buf_printf(out, "tokenizer.max_seq_len=%llu\n",
	    (unsigned long long)p->seq);
	vp_buf_printf(out, "dtype=%s\n", vp_prec_names[p->precision]);
	vp_buf_printf(out, "enable_activation_checkpointing=%s\n",
	    rc ? "True" : "False");
	vp_buf_printf(out, "enable_activation_offloading=%s\n",
	    p->activation_offload ? "True" : "False");
	vp_buf_printf(out, "compile=%s\n", p->compile ? "True" : "False");
	vp_buf_printf(out, "optimizer._component_=%s\n", opt);
	if (strncmp(opt, "torch.", 6) == 0)
		vp_buf_printf(out, "optimizer.fused=%s\n",
		    vp_plan_optimizer_impl(p) == VP_OPTIMPL_FUSED ? "True" :
		    "False");
	if (p->lora_rank == 0)	/* the LoRA recipes do not read it */
		vp_buf_printf(out, "optimizer_in_bwd=%s\n",
		    p->optim_in_bwd ? "True" : "False");
	vp_buf_printf(out, "loss._component_=%s\n",
	    p->loss == VP_LOSS_CHUNKED_OUTPUT ?
	    "torchtune.modules.loss.CEWithChunkedOutputLoss" :
	    "torch.nn.CrossEntropyLoss");
	if (in->world > 1) {
		vp_buf_printf(out, "fsdp_cpu_offload=%s\n",
		    p->offload == VP_OFFLOAD_ALL ? "True" : "False");
		vp_buf_printf(out, "fsdp_reshard_after_forward=%s\n",
		    p->fsdp == VP_FSDP_GRAD_OP || p->reshard_after_forward ==
		    VP_NO ? "False" : "True");
		/* The configs shard tok_embeddings and output as units of
		 * their own; the estimate keeps them in the root unit
		 * (fully_shard of the model), as the recipes do without. */
		vp_buf_add(out, "custom_sharded_layers=[]\n");
	}
	if (p->lora_rank > 0) {
		vp_buf_printf(out, "model.lora_rank=%u\n", p->lora_rank);
		vp_buf_add(out, "model.lora_attn_modules=[");
		for (i = 0, n = 0; i < 4; i++)
			if (p->lora_targets & (1u << i))
				vp_buf_printf(out, "%s%s", n++ ? "," : "",
				    attn[i]);
		vp_buf_add(out, "]\n");
		vp_buf_printf(out, "model.apply_lora_to_mlp=%s\n",
		    (p->lora_targets & mlp) ? "True" : "False");
		vp_buf_printf(out, "model.apply_lora_to_output=%s\n",
		    (p->lora_targets & (1u << VP_LORA_HEAD)) ? "True" :
		    "False");
		vp_buf_printf(out, "model.lora_dropout=%g\n", p->lora_dropout);
	}
	note(notes, "CONFIG is the recipe's config for this model (its "
	    "model._component_ builds the shape vramplan read)");
	return 0;
}

/* Megatron-LM ----------------------------------------------------------- */

/*
 * Mixtral's experts as Megatron-LM core_v0.15.0's MoE layer in every
 * block (megatron_gap says which models): the experts each rank holds
 * (--expert-model-parallel-size) whole, as the estimate holds them (its
 * experts are not split by TP: --expert-tensor-parallel-size 1, which
 * otherwise defaults to the TP size); one batched GEMM over them
 * (--moe-grouped-gemm) unless the plan runs them one at a time
 * (transformers 4.x's loop, Megatron's SequentialMLP); the routed rows
 * permuted locally and exchanged all-to-all (the alltoall dispatcher,
 * whose send and receive buffers the estimate counts with EP); the rows
 * padded to the capacity factor where the plan has one; and no balancing
 * loss, which the estimate does not count.
 */
static void
megatron_moe(const struct vp_export_in *in, struct vp_buf *out,
    struct vp_buf *notes)
{
	const struct vp_plan *p = in->plan;
	const struct vp_model *m = in->model;
	bool looped = vp_model_runs_hf(m) && p->transformers_version < 500;

	vp_buf_printf(out, "  --num-experts %u\n", m->moe.experts);
	vp_buf_printf(out, "  --moe-router-topk %u\n", m->moe.top_k);
	vp_buf_printf(out, "  --moe-ffn-hidden-size %llu\n",
	    (unsigned long long)(m->moe.ffn ? m->moe.ffn : m->ffn));
	vp_buf_printf(out, "  --expert-model-parallel-size %u\n",
	    p->ep ? p->ep : 1);
	vp_buf_add(out, "  --expert-tensor-parallel-size 1\n");
	if (!looped)
		vp_buf_add(out, "  --moe-grouped-gemm\n");
	vp_buf_add(out, "  --moe-token-dispatcher-type alltoall\n");
	if (p->capacity_factor > 0)
		vp_buf_printf(out, "  --moe-expert-capacity-factor %g\n"
		    "  --moe-pad-expert-input-to-capacity\n",
		    p->capacity_factor);
	vp_buf_add(out, "  --moe-router-load-balancing-type none\n");
	note(notes, "no load-balancing loss, as estimated (its tensors are "
	    "not counted); for Mixtral's aux loss give "
	    "--moe-router-load-balancing-type aux_loss and "
	    "--moe-aux-loss-coeff (router_aux_loss_coef)");
}

static int
export_megatron(const struct vp_export_in *in, struct vp_buf *out,
    struct vp_buf *notes, struct vp_buf *err)
{
	const struct vp_plan *p = in->plan;
	const struct vp_model *m = in->model;
	unsigned dp = dp_of(in);

	if (vp_export_model(VP_EXPORT_MEGATRON, m, err) != 0 ||
	    common_checks(in, "Megatron-LM", err) != 0)
		return -1;
	if (vp_plan_framework(p) != VP_FW_MEGATRON)
		return refuse(err, "the plan follows %s semantics; give "
		    "--framework megatron",
		    vp_framework_names[vp_plan_framework(p)]);
	if (p->precision != VP_PREC_BF16_MASTER &&
	    p->precision != VP_PREC_FP16_MASTER && p->precision != VP_PREC_FP32)
		return refuse(err, "--precision %s: Megatron's --bf16 and "
		    "--fp16 are bf16-master and fp16-master",
		    vp_prec_names[p->precision]);
	if (p->optimizer != VP_OPT_ADAM && p->optimizer != VP_OPT_ADAMW)
		return refuse(err, "--optimizer %s is not Megatron's Adam",
		    vp_opt_names[p->optimizer]);
	if (p->zero > 1)
		return refuse(err, "--zero %u: Megatron's distributed optimizer "
		    "is ZeRO-1", p->zero);
	if (p->offload != VP_OFFLOAD_NONE || p->lora_rank > 0 ||
	    p->quant != VP_QUANT_NONE || p->compile || p->float8 !=
	    VP_FLOAT8_NONE || p->activation_offload || p->loss !=
	    VP_LOSS_FULL || p->optim_in_bwd)
		return refuse(err, "the plan uses offload, LoRA, a quantized "
		    "base, compile, float8 or a torchtune feature, which "
		    "Megatron-LM's arguments do not say as vramplan models it");
	if (m->has_moe && p->ep > 1 && p->tp > 1 && !p->sp)
		return refuse(err, "--ep %u with --tp %u needs --sequence-"
		    "parallel in Megatron-LM (TransformerConfig refuses expert "
		    "and tensor parallelism without it)", p->ep, p->tp);
	if (p->recompute == VP_RECOMP_OP || (p->recompute != VP_RECOMP_NONE &&
	    p->recompute_stride > 1))
		return refuse(err, "--recompute %s (stride %u) is not a "
		    "Megatron recompute", vp_recomp_names[p->recompute],
		    p->recompute_stride);
	header(in, "#", out);
	vp_buf_printf(out, "# launch: torchrun --nproc_per_node %u --nnodes %u "
	    "pretrain_gpt.py \"${MEGATRON_ARGS[@]}\"\n", in->world / in->nodes,
	    in->nodes);
	if (p->alloc_conf[0])
		vp_buf_printf(out, "export PYTORCH_CUDA_ALLOC_CONF=%s\n",
		    p->alloc_conf);
	vp_buf_add(out, "MEGATRON_ARGS=(\n");
	vp_buf_printf(out, "  --tensor-model-parallel-size %u\n", p->tp);
	vp_buf_printf(out, "  --pipeline-model-parallel-size %u\n", p->pp);
	if (p->vpp > 1)
		vp_buf_printf(out, "  --num-layers-per-virtual-pipeline-stage "
		    "%llu\n", (unsigned long long)(m->layers / p->pp / p->vpp));
	vp_buf_printf(out, "  --context-parallel-size %u\n", p->cp);
	if (p->sp)
		vp_buf_add(out, "  --sequence-parallel\n");
	vp_buf_printf(out, "  --micro-batch-size %llu\n",
	    (unsigned long long)p->micro_batch);
	vp_buf_printf(out, "  --global-batch-size %llu\n",
	    (unsigned long long)(p->micro_batch * p->grad_accum * dp));
	vp_buf_printf(out, "  --seq-length %llu\n", (unsigned long long)p->seq);
	vp_buf_printf(out, "  --max-position-embeddings %llu\n",
	    (unsigned long long)(m->max_seq ? m->max_seq : p->seq));
	vp_buf_printf(out, "  --num-layers %llu\n",
	    (unsigned long long)m->layers);
	vp_buf_printf(out, "  --hidden-size %llu\n",
	    (unsigned long long)m->hidden);
	vp_buf_printf(out, "  --ffn-hidden-size %llu\n",
	    (unsigned long long)m->ffn);
	vp_buf_printf(out, "  --num-attention-heads %llu\n",
	    (unsigned long long)m->heads);
	if (m->kv_heads && m->kv_heads != m->heads)
		vp_buf_printf(out, "  --group-query-attention\n"
		    "  --num-query-groups %llu\n",
		    (unsigned long long)m->kv_heads);
	if (m->head_dim && m->head_dim * m->heads != m->hidden)
		vp_buf_printf(out, "  --kv-channels %llu\n",
		    (unsigned long long)m->head_dim);
	vp_buf_add(out, "  --swiglu\n  --normalization RMSNorm\n"
	    "  --position-embedding-type rope\n  --disable-bias-linear\n");
	if (m->qkv_bias > 0)	/* Qwen2's q, k, v biases */
		vp_buf_add(out, "  --add-qkv-bias\n");
	if (vp_model_traits(m).qk_norm)	/* Qwen3's per-head RMSNorms */
		vp_buf_add(out, "  --qk-layernorm\n");
	if (m->has_moe)
		megatron_moe(in, out, notes);
	if (!m->tie_embeddings)
		vp_buf_add(out, "  --untie-embeddings-and-output-weights\n");
	if (p->recompute == VP_RECOMP_FULL)
		vp_buf_add(out, "  --recompute-granularity full\n"
		    "  --recompute-method uniform\n"
		    "  --recompute-num-layers 1\n");
	else if (p->recompute == VP_RECOMP_SELECTIVE)
		vp_buf_add(out, "  --recompute-granularity selective\n");
	if (p->zero == 1)
		vp_buf_add(out, "  --use-distributed-optimizer\n");
	if (p->precision == VP_PREC_BF16_MASTER)
		vp_buf_add(out, "  --bf16\n");
	else if (p->precision == VP_PREC_FP16_MASTER)
		vp_buf_add(out, "  --fp16\n");
	vp_buf_add(out, "  --optimizer adam\n");
	if (p->attention == VP_ATTN_FLASH)
		vp_buf_add(out, "  --attention-backend flash\n");
	else if (p->attention == VP_ATTN_EAGER)
		vp_buf_add(out, "  --attention-backend local\n");
	vp_buf_add(out, ")\n");
	note(notes, "the tokenizer, data and learning-rate arguments are the "
	    "job's; vocabulary %llu comes from the tokenizer",
	    (unsigned long long)m->vocab);
	return 0;
}

/* The model as a refusal names it: its family, and what sets it apart
 * from the family's usual shape. */
static void
model_words(const struct vp_model *m, struct vp_buf *b)
{
	const char *what = m->vis.llava || m->vis.patch ? ", a vision model" :
	    m->arch == VP_ARCH_ENCDEC ? ", an encoder-decoder" :
	    m->arch != VP_ARCH_DECODER ? ", an encoder" :
	    m->has_moe ? ", a mixture of experts" : "";

	if (m->lg != NULL) {	/* no family: a torch.nn layer graph */
		vp_buf_printf(b, "%s (a layer-graph model)", m->name ?
		    m->name : "the model");
		return;
	}
	vp_buf_printf(b, "family %s (%s%s)",
	    vp_family_names[vp_model_family(m)], m->name ? m->name : "the model",
	    what);
}

/*
 * What Megatron-LM core_v0.15.0's GPT model, as its arguments
 * (megatron/training/arguments.py) build it, cannot be for m; NULL when
 * it can: a Llama-shaped decoder (SwiGLU, RMSNorm, RoPE, no bias but
 * Qwen2's q, k, v biases, no sliding window), Qwen3's per-head q/k norms
 * (--qk-layernorm), and experts in every block routed as Mixtral routes
 * them (softmax, top-k renormalized: Megatron's default top-k then
 * softmax; --num-experts, --moe-router-topk, --moe-ffn-hidden-size).
 */
static const char *
megatron_gap(const struct vp_model *m)
{
	enum vp_family fam = vp_model_family(m);

	if (fam == VP_FAMILY_DEEPSEEK_V2 || fam == VP_FAMILY_DEEPSEEK_V3)
		return "its MLA has Megatron's arguments (--multi-latent-"
		    "attention, --q-lora-rank, --kv-lora-rank, --qk-head-dim, "
		    "--qk-pos-emb-head-dim, --v-head-dim), but its router's "
		    "norm_topk_prob and routed_scaling_factor, which "
		    "--moe-router-pre-softmax and --moe-router-topk-scaling-"
		    "factor must match, are not read by vramplan";
	if ((fam != VP_FAMILY_LLAMA && fam != VP_FAMILY_QWEN3) ||
	    m->lg != NULL || m->arch != VP_ARCH_DECODER ||
	    m->vis.patch != 0 || m->vis.llava || m->act != VP_ACT_SWIGLU ||
	    m->norm != VP_NORM_RMSNORM || m->pos != VP_POS_ROPE || m->bias ||
	    m->o_bias > 0 || m->window > 0)
		return "vramplan writes them for Llama-shaped decoders "
		    "(SwiGLU, RMSNorm, RoPE, no bias but q, k, v biases, no "
		    "sliding window; Qwen3's q/k norms; Mixtral's experts)";
	if (!m->has_moe)
		return NULL;
	if (m->moe.shared_gate)
		return "the shared expert's sigmoid gate (Qwen-MoE) has no "
		    "argument in Megatron-LM core_v0.15.0";
	if (m->moe.shared_experts > 0 || m->moe.first_dense > 0 ||
	    m->moe.sparse_step > 1 || m->moe.n_mlp_only > 0 ||
	    m->moe.groups > 1 || fam != VP_FAMILY_LLAMA)
		return "its router's top-k normalization (norm_topk_prob), "
		    "which --moe-router-pre-softmax must match, is not read "
		    "by vramplan; only Mixtral's routing (softmax, top-k "
		    "renormalized, experts in every block) is written";
	return NULL;
}

int
vp_export_model(enum vp_export_fmt f, const struct vp_model *m,
    struct vp_buf *err)
{
	struct vp_buf w;
	const char *gap;
	int rc = 0;

	vp_buf_init(&w);
	model_words(m, &w);
	switch (f) {
	case VP_EXPORT_TORCHTUNE:
		/* torchtune v0.6.1's torchtune/models: code_llama2, gemma,
		 * gemma2, llama2, llama3*, mistral, phi3, phi4, qwen2,
		 * qwen2_5 (and clip, llama3_2_vision, t5 and flux, which
		 * vramplan does not plan): dense decoders of the llama
		 * family's shapes. */
		if (vp_model_family(m) != VP_FAMILY_LLAMA || m->lg != NULL ||
		    m->arch != VP_ARCH_DECODER || m->has_moe ||
		    m->vis.patch != 0 || m->vis.llava)
			rc = refuse(err, "torchtune 0.6 has no builder for %s; "
			    "it builds the dense Llama 2/3, Mistral, Gemma, "
			    "Gemma 2, Phi-3/4 and Qwen2/2.5 decoders", w.s);
		break;
	case VP_EXPORT_TORCHTITAN:
		if (titan_model(m) == NULL)
			rc = refuse(err, "torchtitan 0.2.2 has no model for %s; "
			    "it trains its own llama3, llama4, deepseek_v3 "
			    "(DeepSeek-V2 and V3), qwen3 and gpt_oss", w.s);
		break;
	case VP_EXPORT_MEGATRON:
		if ((gap = megatron_gap(m)) != NULL)
			rc = refuse(err, "Megatron-LM's arguments are not "
			    "written for %s: %s", w.s, gap);
		break;
	default:	/* DeepSpeed, accelerate, the Trainer: any model */
		break;
	}
	vp_buf_free(&w);
	return rc;
}

bool
vp_export_needs_ds_file(enum vp_export_fmt f, const struct vp_plan *p)
{
	return (f == VP_EXPORT_ACCELERATE || f == VP_EXPORT_HF) &&
	    vp_plan_framework(p) == VP_FW_DEEPSPEED;
}

int
vp_export(enum vp_export_fmt f, const struct vp_export_in *in,
    struct vp_buf *out, struct vp_buf *notes, struct vp_buf *err)
{
	static int (*const writers[VP_EXPORT_COUNT])(
	    const struct vp_export_in *, struct vp_buf *, struct vp_buf *,
	    struct vp_buf *) = {
		[VP_EXPORT_DEEPSPEED] = export_deepspeed,
		[VP_EXPORT_ACCELERATE] = export_accelerate,
		[VP_EXPORT_TORCHTITAN] = export_torchtitan,
		[VP_EXPORT_TORCHTUNE] = export_torchtune,
		[VP_EXPORT_MEGATRON] = export_megatron,
		[VP_EXPORT_HF] = export_hf,
	};

	if (f == VP_EXPORT_DEEPSPEED && common_checks(in, "DeepSpeed", err))
		return -1;
	return writers[f](in, out, notes, err);
}
