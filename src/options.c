/* options.c — the option table and what it drives (see options.h). */
#include "options.h"
#include "export.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cost.h"

static const char *const lora_dtype_names[] = { "fp32", "bf16" };
static const enum vp_dtype lora_dtypes[] = { VP_FP32, VP_BF16 };

#define F(field) offsetof(struct vp_plan, field)
#define E(tab) tab, (int)VP_NELEM(tab)
#define NOF VP_OF_NONE, 0
#define EST (VP_CMD_ESTIMATE | VP_CMD_TUI)
#define CMP VP_CMD_COMPARE
#define ALL VP_CMD_PLANS

/*
 * The rows.  Ranges are the documented ones (vramplan(1)); a plan file
 * takes the same ranges.  Columns: name, kind, field type and offset,
 * names, dtypes, min, max, zero_off, expect, commands, plan file, repeat,
 * the planner knob it pins, metavar, help.
 */
const struct vp_optdef vp_options[VP_O_COUNT] = {
[VP_O_GPUS] = { "gpus", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, EST, true, false, VP_OPEN_NONE, "NxCARD",
    "the whole job, e.g. 2xA100, 8xH100-SXM, 1xRTX4090" },
[VP_O_NODES] = { "nodes", VP_OK_U64, NOF, NULL, 0, NULL, 1, 65536, false,
    NULL, EST, false, false, VP_OPEN_NONE, "N",
    "nodes the job spans (default: 8 GPUs per node)" },
[VP_O_GPUS_PER_NODE] = { "gpus-per-node", VP_OK_U64, VP_OF_UNSIGNED,
    F(gpus_per_node), NULL, 0, NULL, 1, 1024, false, NULL, EST, true,
    false, VP_OPEN_NONE, "N", "GPUs in one node" },
[VP_O_PRECISION] = { "precision", VP_OK_ENUM, VP_OF_INT, F(precision),
    E(vp_prec_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "P", "training precision (fp8: Transformer Engine)" },
[VP_O_OPTIMIZER] = { "optimizer", VP_OK_ENUM, VP_OF_INT, F(optimizer),
    E(vp_opt_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "O", "the optimizer" },
[VP_O_MICRO_BATCH] = { "micro-batch", VP_OK_U64, VP_OF_U64, F(micro_batch),
    NULL, 0, NULL, 1, 1u << 20, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "N", "sequences per micro-batch and GPU" },
[VP_O_SEQ] = { "seq", VP_OK_U64, VP_OF_U64, F(seq), NULL, 0, NULL, 1,
    1u << 27, false, NULL, ALL, true, false, VP_OPEN_NONE, "N",
    "sequence length in tokens" },
[VP_O_TARGET_SEQ] = { "target-seq", VP_OK_U64, VP_OF_U64, F(target_seq), NULL,
    0, NULL, 1, 1u << 27, true, NULL, ALL, true, false, VP_OPEN_NONE, "N",
    "an encoder-decoder's decoder length (0, the default: --seq)" },
[VP_O_GRAD_ACCUM] = { "grad-accum", VP_OK_U64, VP_OF_U64, F(grad_accum),
    NULL, 0, NULL, 1, 1u << 20, false, NULL, ALL, true, false,
    VP_OPEN_GRAD_ACCUM, "N", "micro-batches per optimizer step" },
[VP_O_RECOMPUTE] = { "recompute", VP_OK_ENUM, VP_OF_INT, F(recompute),
    E(vp_recomp_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_RECOMPUTE, "R", "activation recomputation" },
[VP_O_RECOMPUTE_STRIDE] = { "recompute-stride", VP_OK_U64, VP_OF_UNSIGNED,
    F(recompute_stride), NULL, 0, NULL, 1, 65536, false, NULL, ALL, true,
    false, VP_OPEN_NONE, "N",
    "recompute only every N-th block of a stage (default 1)" },
[VP_O_ATTENTION] = { "attention", VP_OK_ENUM, VP_OF_INT, F(attention),
    E(vp_attn_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "A", "attention kernel" },
[VP_O_DROPOUT] = { "dropout", VP_OK_DOUBLE, VP_OF_DOUBLE, F(dropout), NULL,
    0, NULL, 0, 0.99, false, "a probability from 0 to 0.99", ALL, true,
    false, VP_OPEN_NONE, "P", "override the model's dropout" },
[VP_O_FRAMEWORK] = { "framework", VP_OK_ENUM, VP_OF_INT, F(framework),
    E(vp_framework_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "F", "whose semantics the training loop follows" },
[VP_O_ZERO] = { "zero", VP_OK_U64, VP_OF_UNSIGNED, F(zero), NULL, 0, NULL,
    0, 3, false, NULL, ALL, true, false, VP_OPEN_SHARD, "S",
    "ZeRO stage 0-3 (Megatron: distributed optimizer)" },
[VP_O_FSDP] = { "fsdp", VP_OK_ENUM, VP_OF_INT, F(fsdp), E(vp_fsdp_names),
    NULL, 0, 0, false, NULL, ALL, true, false, VP_OPEN_SHARD, "S",
    "FSDP sharding strategy" },
[VP_O_FSDP_PREFETCH] = { "fsdp-prefetch", VP_OK_ENUM, VP_OF_INT,
    F(fsdp_prefetch), E(vp_fsdp_prefetch_names), NULL, 0, 0, false, NULL,
    ALL, true, false, VP_OPEN_NONE, "W",
    "FSDP1's backward_prefetch (default pre)" },
[VP_O_FSDP_ORIG_PARAMS] = { "fsdp-orig-params", VP_OK_ENUM, VP_OF_INT,
    F(fsdp_orig_params), E(vp_yesno_names), NULL, 0, 0, false, NULL, ALL,
    true, false, VP_OPEN_NONE, "B",
    "FSDP1's use_orig_params (default yes, as accelerate)" },
[VP_O_RESHARD_AFTER_FORWARD] = { "reshard-after-forward", VP_OK_ENUM,
    VP_OF_INT, F(reshard_after_forward), E(vp_yesno_names), NULL, 0, 0,
    false, NULL, ALL, true, false, VP_OPEN_NONE, "B",
    "FSDP2's reshard_after_forward of the blocks (default yes)" },
[VP_O_FSDP_LORA_WRAP] = { "fsdp-lora-wrap", VP_OK_ENUM, VP_OF_INT,
    F(fsdp_lora_wrap), E(vp_lora_wrap_names), NULL, 0, 0, false, NULL, ALL,
    true, false, VP_OPEN_NONE, "U",
    "FSDP1's unit for LoRA adapters: their own (PEFT's policy, "
    "default) or their block's" },
[VP_O_FSDP_UNITS] = { "fsdp-units", VP_OK_ENUM, VP_OF_INT, F(fsdp_units),
    E(vp_fsdp_units_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "L",
    "FSDP2's units outside the blocks: the root's (default) or split as "
    "torchtitan's (embeddings; norm and head)" },
[VP_O_TP] = { "tp", VP_OK_U64, VP_OF_UNSIGNED, F(tp), NULL, 0, NULL, 1,
    1024, false, NULL, ALL, true, false, VP_OPEN_TP, "N",
    "tensor parallel degree" },
[VP_O_SP] = { "sp", VP_OK_FLAG, VP_OF_BOOL, F(sp), NULL, 0, NULL, 0, 0,
    false, NULL, ALL, true, false, VP_OPEN_SP, NULL,
    "sequence parallelism (with --tp)" },
[VP_O_ASYNC_TP] = { "async-tp", VP_OK_FLAG, VP_OF_BOOL, F(async_tp), NULL, 0,
    NULL, 0, 0, false, NULL, ALL, true, false, VP_OPEN_NONE, NULL,
    "async tensor parallelism (torchtitan; symmetric-memory workspace)" },
[VP_O_PP] = { "pp", VP_OK_U64, VP_OF_UNSIGNED, F(pp), NULL, 0, NULL, 1,
    1024, false, NULL, ALL, true, false, VP_OPEN_PP, "N",
    "pipeline parallel degree" },
[VP_O_VPP] = { "vpp", VP_OK_U64, VP_OF_UNSIGNED, F(vpp), NULL, 0, NULL, 1,
    1024, false, NULL, ALL, true, false, VP_OPEN_NONE, "N",
    "virtual pipeline chunks per stage" },
[VP_O_CP] = { "cp", VP_OK_U64, VP_OF_UNSIGNED, F(cp), NULL, 0, NULL, 1,
    1024, false, NULL, ALL, true, false, VP_OPEN_CP, "N",
    "context parallel degree" },
[VP_O_EP] = { "ep", VP_OK_U64, VP_OF_UNSIGNED, F(ep), NULL, 0, NULL, 1,
    1024, false, NULL, ALL, true, false, VP_OPEN_EP, "N",
    "expert parallel degree (MoE)" },
[VP_O_DP] = { "dp", VP_OK_U64, VP_OF_UNSIGNED, F(dp), NULL, 0, NULL, 1,
    65536, false, NULL, EST, false, false, VP_OPEN_NONE, "N",
    "data parallel degree (no planner)" },
[VP_O_CAPACITY] = { "capacity-factor", VP_OK_DOUBLE, VP_OF_DOUBLE,
    F(capacity_factor), NULL, 0, NULL, 1, 16, true, NULL, ALL, true, false,
    VP_OPEN_NONE, "X", "MoE token padding (default 0: dropless)" },
[VP_O_DEVICE] = { "device", VP_OK_ENUM, VP_OF_INT, F(device),
    E(vp_device_names), NULL, 0, 0, false, NULL, EST, true, false,
    VP_OPEN_NONE, "D", "the device kind" },
[VP_O_OPTIMIZER_IMPL] = { "optimizer-impl", VP_OK_ENUM, VP_OF_INT,
    F(optimizer_impl), E(vp_optimpl_names), NULL, 0, 0, false, NULL, ALL,
    true, false, VP_OPEN_NONE, "I", "torch.optim's kernels (default: foreach "
    "on cuda, for-loop on cpu; DeepSpeed and Megatron fuse)" },
[VP_O_ZERO_GRAD] = { "zero-grad", VP_OK_ENUM, VP_OF_INT, F(zero_grad),
    E(vp_zerograd_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "Z", "what zero_grad() leaves between steps: none or "
    "zeros (default: PyTorch's, none from 2.0)" },
[VP_O_OPTIM_IN_BWD] = { "optimizer-in-backward", VP_OK_FLAG, VP_OF_BOOL,
    F(optim_in_bwd), NULL, 0, NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, NULL, "each parameter steps in its gradient hook and "
    "drops its gradient (torchtune's optimizer_in_bwd)" },
[VP_O_COMPILE] = { "compile", VP_OK_FLAG, VP_OF_BOOL, F(compile), NULL, 0,
    NULL, 0, 0, false, NULL, ALL, true, false, VP_OPEN_NONE, NULL,
    "torch.compile (Inductor) of each block, as torchtune and torchtitan "
    "apply it" },
[VP_O_COMPILE_LOSS] = { "compile-loss", VP_OK_FLAG, VP_OF_BOOL,
    F(compile_loss), NULL, 0, NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, NULL, "torch.compile of the cross-entropy too "
    "(torchtitan's loss component)" },
[VP_O_COMPILE_WRAPS_CKPT] = { "compile-wraps-checkpoint", VP_OK_FLAG,
    VP_OF_BOOL, F(compile_wraps_ckpt), NULL, 0, NULL, 0, 0, false, NULL, ALL,
    true, false, VP_OPEN_NONE, NULL, "torch.compile of the checkpoint-"
    "wrapped block, as torchtitan applies it (default with --recompute op; "
    "otherwise the checkpoint wraps the compiled block, as torchtune)" },
[VP_O_FUSED] = { .name = "fused-optimizer", .kind = VP_OK_FLAG,
    .field = VP_OF_NONE, .cmds = ALL, .open = VP_OPEN_NONE,
    .help = "the same as --optimizer-impl fused",
    .alias_of = VP_O_OPTIMIZER_IMPL + 1, .alias_value = "fused" },
[VP_O_LORA] = { "lora", VP_OK_U64, VP_OF_UNSIGNED, F(lora_rank), NULL, 0,
    NULL, 1, 65536, true, NULL, ALL, true, false, VP_OPEN_NONE, "RANK",
    "LoRA adapters on a frozen base (PEFT); 0: full fine-tuning" },
[VP_O_LORA_TARGETS] = { "lora-targets", VP_OK_TARGETS, VP_OF_UNSIGNED,
    F(lora_targets), NULL, 0, NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "LIST", "q,k,v,o,gate,up,down,head or all-linear (default q,v)" },
[VP_O_LORA_DROPOUT] = { "lora-dropout", VP_OK_DOUBLE, VP_OF_DOUBLE,
    F(lora_dropout), NULL, 0, NULL, 0, 0.99, false,
    "a probability from 0 to 0.99", ALL, true, false, VP_OPEN_NONE, "P",
    "dropout on the adapters' input (default 0)" },
[VP_O_LORA_DTYPE] = { "lora-dtype", VP_OK_ENUM, VP_OF_DTYPE, F(lora_dtype),
    E(lora_dtype_names), lora_dtypes, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "T", "the adapters' dtype (default fp32)" },
[VP_O_QUANT] = { "quant", VP_OK_ENUM, VP_OF_INT, F(quant),
    E(vp_quant_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "Q", "bitsandbytes base (needs --lora)" },
[VP_O_KBIT_PREP] = { "kbit-prep", VP_OK_ENUM, VP_OF_INT, F(kbit_prep),
    E(vp_kbit_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "P", "the parameters --quant leaves: upcast to fp32 "
    "(PEFT's prepare_model_for_kbit_training, the default) or keep" },
[VP_O_QUANT_LIB] = { "quant-lib", VP_OK_ENUM, VP_OF_INT, F(quant_lib),
    E(vp_quant_lib_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "L", "whose quantized linear: bitsandbytes (the default) "
    "or torchao (NF4Tensor, torchtune's QLoRA)" },
[VP_O_LOAD] = { "load", VP_OK_ENUM, VP_OF_INT, F(load),
    E(vp_load_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "L", "what the peak holds of building the model "
    "(default none)" },
[VP_O_OFFLOAD] = { "offload", VP_OK_ENUM, VP_OF_INT, F(offload),
    E(vp_offload_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "W", "what moves to host RAM (needs ZeRO or FSDP)" },
[VP_O_OFFLOAD_NVME] = { "offload-nvme", VP_OK_FLAG, VP_OF_BOOL,
    F(offload_nvme), NULL, 0, NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, NULL, "offload to NVMe (ZeRO-Infinity)" },
[VP_O_HOST_MEM] = { "host-mem", VP_OK_GIB, VP_OF_U64, F(host_mem_bytes),
    NULL, 0, NULL, 1, 1e6, true,
    "0 (no limit) or GiB per node, from 1 to 1000000", ALL,
    true, false, VP_OPEN_NONE, "GiB",
    "host RAM per node; more offloaded state does not fit" },
[VP_O_ACT_OFFLOAD] = { "activation-offload", VP_OK_FLAG, VP_OF_BOOL,
    F(activation_offload), NULL, 0, NULL, 0, 0, false, NULL, ALL, true,
    false, VP_OPEN_NONE, NULL, "each block's saved activations wait in "
    "host RAM" },
[VP_O_LOSS] = { "loss", VP_OK_ENUM, VP_OF_INT, F(loss), E(vp_loss_names),
    NULL, 0, 0, false, NULL, ALL, true, false, VP_OPEN_NONE, "L",
    "the loss (chunked: Liger's fused linear cross-entropy; chunked-output: "
    "torchtune's CEWithChunkedOutputLoss)" },
[VP_O_FLOAT8] = { "float8", VP_OK_ENUM, VP_OF_INT, F(float8),
    E(vp_float8_names), NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "S", "torchao float8 block linears (torchtitan's converter)" },
[VP_O_FLOAT8_ALL_GATHER] = { "float8-all-gather", VP_OK_FLAG, VP_OF_BOOL,
    F(float8_all_gather), NULL, 0, NULL, 0, 0, false, NULL, ALL, true,
    false, VP_OPEN_NONE, NULL,
    "FSDP2 all-gathers the float8 linears' weights in fp8" },
[VP_O_TRAINER] = { "trainer", VP_OK_ENUM, NOF, E(vp_trainer_names), NULL,
    0, 0, false, NULL, ALL, false, false, VP_OPEN_NONE, "T",
    "the training library (hf, torchtune, torchtitan): its defaults for "
    "the options not given" },
[VP_O_TORCH] = { "torch", VP_OK_VERSION, VP_OF_UNSIGNED, F(torch_version),
    NULL, 0, NULL, 100, 399, false, "a version from 1.0 to 3.99, e.g. 2.13",
    ALL, true, false, VP_OPEN_NONE, "VERSION",
    "the PyTorch the job runs (default 2.13): which saved-tensor and "
    "optimizer rules apply, lazy or eager CUDA module loading" },
[VP_O_CUDA] = { "cuda", VP_OK_VERSION, VP_OF_UNSIGNED, F(cuda_version),
    NULL, 0, NULL, 900, 1499, false, "a version from 9.0 to 14.99, e.g. 12.4",
    ALL, true, false, VP_OPEN_NONE, "VERSION",
    "the CUDA runtime PyTorch was built with (default 13.0): before 11.7 "
    "every kernel loads with the context" },
[VP_O_TRANSFORMERS] = { "transformers", VP_OK_VERSION, VP_OF_UNSIGNED,
    F(transformers_version), NULL, 0, NULL, 400, 999, false,
    "a version from 4.0 to 9.99, e.g. 5.24", ALL, true, false,
    VP_OPEN_NONE, "VERSION",
    "the Hugging Face transformers a Hugging Face model runs (default "
    "5.24): the loss's shift and upcast, sdpa's GQA, the attention masks" },
[VP_O_ALLOC_CONF] = { "alloc-conf", VP_OK_STRING, VP_OF_ALLOC_CONF,
    F(alloc_conf), NULL, 0, NULL, 0, 0, false, NULL, ALL, true, false,
    VP_OPEN_NONE, "STRING", "reserved by simulating the caching allocator "
    "under this PYTORCH_CUDA_ALLOC_CONF ('defaults': PyTorch's), not by "
    "the profile's share" },
[VP_O_TOKENS] = { "tokens", VP_OK_DOUBLE, NOF, NULL, 0, NULL, 1, 1e18,
    false, "a count such as 2e9", CMP, false, false, VP_OPEN_NONE, "N",
    "tokens to train" },
[VP_O_STEPS] = { "steps", VP_OK_U64, NOF, NULL, 0, NULL, 1, 1000000000,
    false, NULL, CMP, false, false, VP_OPEN_NONE, "N",
    "optimizer steps (with --global-batch), instead of --tokens" },
[VP_O_GLOBAL_BATCH] = { "global-batch", VP_OK_U64, NOF, NULL, 0, NULL, 1,
    1u << 27, false, NULL, CMP, false, false, VP_OPEN_NONE, "N",
    "sequences per optimizer step" },
[VP_O_SORT] = { "sort", VP_OK_ENUM, NOF, vp_sort_names, VP_SORT_COUNT, NULL,
    0, 0, false,
    NULL, CMP, false, false, VP_OPEN_NONE, "K", "the order of the cards" },
[VP_O_MAX_GPUS] = { "max-gpus", VP_OK_U64, NOF, NULL, 0, NULL, 1, 65536,
    false, NULL, CMP, false, false, VP_OPEN_NONE, "N",
    "the most GPUs to try per card (default 1024)" },
[VP_O_PRICE] = { "price", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, CMP, false, true, VP_OPEN_NONE, "CARD=USD",
    "your price per GPU-hour (repeatable)" },
[VP_O_VENDOR] = { "vendor", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, CMP | VP_CMD_GPUS, false, false, VP_OPEN_NONE, "V", "only this vendor's cards" },
[VP_O_SEGMENT] = { "segment", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, CMP | VP_CMD_GPUS, false, false, VP_OPEN_NONE, "S",
    "only this segment (datacenter, workstation, consumer)" },
[VP_O_MIN_MEM] = { "min-mem", VP_OK_DOUBLE, NOF, NULL, 0, NULL, 0, 1e6,
    false, "GiB, from 0 to 1000000", CMP | VP_CMD_GPUS, false, false, VP_OPEN_NONE,
    "GiB", "only cards with at least this memory" },
[VP_O_SVG] = { "svg", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0, false, NULL,
    VP_CMD_ESTIMATE | CMP, false, false, VP_OPEN_NONE, "FILE",
    "also draw a picture into FILE (the estimate: memory through the step "
    "and per GPU; compare: cost against time)" },
[VP_O_NO_SEARCH] = { "no-search", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0,
    false, NULL, EST, false, false, VP_OPEN_NONE, NULL,
    "no planner: open options take their defaults" },
[VP_O_PLANS] = { "plans", VP_OK_U64, NOF, NULL, 0, NULL, 1, 8, false, NULL,
    VP_CMD_ESTIMATE, false, false, VP_OPEN_NONE, "N",
    "alternatives to show (default 4)" },
[VP_O_MAX_MB] = { "max-micro-batch", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0,
    false, NULL, VP_CMD_ESTIMATE, false, false, VP_OPEN_NONE, NULL,
    "the largest micro-batch that fits (needs --gpus)" },
[VP_O_MAX_SEQ] = { "max-seq", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, VP_CMD_ESTIMATE, false, false, VP_OPEN_NONE, NULL,
    "the longest sequence that fits (needs --gpus)" },
[VP_O_MIN_GPUS] = { "min-gpus", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, VP_CMD_ESTIMATE, false, false, VP_OPEN_NONE, NULL,
    "the fewest GPUs of the card that fit (needs --gpus)" },
[VP_O_EXPLAIN] = { "explain", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, VP_CMD_ESTIMATE | CMP, false, false, VP_OPEN_NONE, NULL,
    "largest live tensors at the peak (compare: the time model)" },
[VP_O_JSON] = { "json", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false, NULL,
    VP_CMD_ESTIMATE | CMP, false, false, VP_OPEN_NONE, NULL,
    "machine-readable output (JSON)" },
[VP_O_CSV] = { "csv", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false, NULL,
    VP_CMD_ESTIMATE | CMP, false, false, VP_OPEN_NONE, NULL,
    "machine-readable output (CSV)" },
[VP_O_CATALOG] = { "catalog", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, ALL, false, false, VP_OPEN_NONE, "FILE",
    "GPU catalog instead of the bundled one" },
[VP_O_PLAN] = { "plan", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0, false, NULL,
    ALL, false, false, VP_OPEN_NONE, "FILE",
    "a plan saved by the TUI (options given here win)" },
[VP_O_DS_CONFIG] = { "deepspeed-config", VP_OK_STRING, NOF, NULL, 0, NULL, 0,
    0, false, NULL, VP_CMD_PLANS, false, false, VP_OPEN_NONE, "FILE",
    "a DeepSpeed JSON config: ZeRO stage, offload, buckets, precision, "
    "batch (options given here win)" },
[VP_O_TEXT_ONLY] = { "text-only", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0,
    false, NULL, ALL, false, false, VP_OPEN_NONE, NULL,
    "a multimodal config.json: plan its language model alone" },
[VP_O_PROFILE] = { "profile", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, ALL, false, false, VP_OPEN_NONE, "FILE|none",
    "calibrated profile (default: the stored one for the card, or for "
    "cpu; none: the built-in defaults)" },
[VP_O_HELP] = { "help", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false, NULL,
    ALL, false, false, VP_OPEN_NONE, NULL, "this text" },
[VP_O_VERSION] = { "version", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, VP_CMD_ESTIMATE, false, false, VP_OPEN_NONE, NULL,
    "the version" },
[VP_O_IMAGE] = { "image", VP_OK_U64, VP_OF_U64, F(image), NULL, 0, NULL, 1,
    65536, true, NULL, ALL, true, false, VP_OPEN_NONE, "N",
    "input resolution of a layer-graph model or a vision transformer: "
    "N x N images (0, the default: the model's)" },
[VP_O_DEADLINE] = { "deadline", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0,
    false, NULL, CMP, false, false, VP_OPEN_NONE, "T",
    "finish within T: hours, or with a unit (36h, 30d, 2w); each card "
    "gets the fewest GPUs that do" },
[VP_O_BUDGET] = { "budget", VP_OK_DOUBLE, NOF, NULL, 0, NULL, 0.01, 1e12,
    false, NULL, CMP, false, false, VP_OPEN_NONE, "USD",
    "spend at most USD: each card gets its fastest plan within it" },
[VP_O_UNDATED_PRICES] = { "undated-prices", VP_OK_FLAG, NOF, NULL, 0, NULL,
    0, 0, false, NULL, CMP, false, false, VP_OPEN_NONE, NULL,
    "rank cards priced from undated listings with the dated ones (by "
    "default after them)" },
[VP_O_OUTPUT] = { "output", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, VP_CMD_EXPORT, false, false, VP_OPEN_NONE, "FILE",
    "export, --emit: write the file here (atomically; -o FILE), not to "
    "stdout" },
[VP_O_DS_FILE] = { "deepspeed-file", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0,
    false, NULL, VP_CMD_EXPORT, false, false, VP_OPEN_NONE, "FILE",
    "export accelerate|hf of a DeepSpeed plan: write its DeepSpeed "
    "config here (the file names it)" },
[VP_O_EMIT] = { "emit", VP_OK_ENUM, NOF, E(vp_export_names), NULL,
    0, 0, false, NULL, VP_CMD_ESTIMATE, false, false, VP_OPEN_NONE, "FORMAT",
    "also write the plan as FORMAT's launch file to -o FILE (what "
    "'vramplan export FORMAT' writes; the report is of that plan)" },
[VP_O_REVISION] = { "revision", VP_OK_STRING, NOF, NULL, 0, NULL, 0, 0,
    false, NULL, ALL, false, false, VP_OPEN_NONE, "REV",
    "with ORG/NAME from the Hugging Face cache: the snapshot of this "
    "branch, tag or commit (default main)" },
[VP_O_NAMES] = { "names", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false, NULL,
    VP_CMD_MODELS, false, false, VP_OPEN_NONE, NULL,
    "models: the library's names alone, one a line" },
[VP_O_IDS] = { "ids", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false, NULL,
    VP_CMD_GPUS, false, false, VP_OPEN_NONE, NULL,
    "gpus: the catalog's card ids alone, one a line" },
[VP_O_CACHED] = { "cached", VP_OK_FLAG, NOF, NULL, 0, NULL, 0, 0, false,
    NULL, VP_CMD_MODELS, false, false, VP_OPEN_NONE, NULL,
    "models: the repositories of the local Hugging Face cache that hold a "
    "config.json (ORG/NAME), one a line" },
};
#undef F
#undef E
#undef NOF
#undef EST
#undef CMP
#undef ALL

/* Every enum of struct vp_plan an ENUM row sets is read as an int. */
_Static_assert(sizeof(enum vp_precision) == sizeof(int) &&
    sizeof(enum vp_optimizer) == sizeof(int) &&
    sizeof(enum vp_recompute) == sizeof(int) &&
    sizeof(enum vp_attention) == sizeof(int) &&
    sizeof(enum vp_framework) == sizeof(int) &&
    sizeof(enum vp_fsdp) == sizeof(int) &&
    sizeof(enum vp_fsdp_prefetch) == sizeof(int) &&
    sizeof(enum vp_yesno) == sizeof(int) &&
    sizeof(enum vp_lora_wrap) == sizeof(int) &&
    sizeof(enum vp_fsdp_units) == sizeof(int) &&
    sizeof(enum vp_device) == sizeof(int) &&
    sizeof(enum vp_quant) == sizeof(int) &&
    sizeof(enum vp_kbit) == sizeof(int) &&
    sizeof(enum vp_quant_lib) == sizeof(int) &&
    sizeof(enum vp_load) == sizeof(int) &&
    sizeof(enum vp_zerograd) == sizeof(int) &&
    sizeof(enum vp_offload) == sizeof(int) &&
    sizeof(enum vp_dtype) == sizeof(int) &&
    sizeof(enum vp_loss) == sizeof(int) &&
    sizeof(enum vp_float8) == sizeof(int), "plan enums are int-sized");

void
vp_optset_init(struct vp_optset *o)
{
	memset(o, 0, sizeof *o);
}

void
vp_optset_free(struct vp_optset *o)
{
	int i;

	if (o == NULL)
		return;
	for (i = 0; i < VP_O_COUNT; i++)
		free(o->owned[i]);
	free(o->file);
	vp_optset_init(o);
}

void
vp_optset_own(struct vp_optset *o, enum vp_optid id, const char *s)
{
	free(o->owned[id]);
	o->owned[id] = xstrdup(s);
	o->val[id].s = o->owned[id];
	o->has[id] = true;
}

void
vp_optset_set(struct vp_optset *o, enum vp_optid id, const union vp_optval *v)
{
	const struct vp_optdef *od = &vp_options[id];
	struct vp_buf err;
	int rc;

	o->has[id] = true;
	o->val[id] = *v;
	if (od->alias_of == 0 || !v->b)
		return;
	vp_buf_init(&err);
	rc = vp_option_parse((enum vp_optid)(od->alias_of - 1),
	    od->alias_value, &o->val[od->alias_of - 1], &err);
	assert(rc == 0);	/* the table's own value */
	(void)rc;
	vp_buf_free(&err);
	o->has[od->alias_of - 1] = true;
	o->pos[od->alias_of - 1] = o->pos[id];
}

int
vp_option_find(const char *name)
{
	int i;

	for (i = 0; i < VP_O_COUNT; i++)
		if (strcmp(name, vp_options[i].name) == 0)
			return i;
	return -1;
}

/* "(expected ...)" of a number row. */
static void
add_expect(const struct vp_optdef *od, struct vp_buf *err)
{
	vp_buf_add(err, " (expected ");
	if (od->expect != NULL)
		vp_buf_add(err, od->expect);
	else {
		if (od->zero_off)
			vp_buf_add(err, "0 (off) or ");
		vp_buf_printf(err, "%s from %.15g to %.15g",
		    od->kind == VP_OK_U64 ? "a whole number" : "a number",
		    od->min, od->max);
	}
	vp_buf_add(err, ")");
}

void
vp_lora_targets_expect(struct vp_buf *out)
{
	int i;

	for (i = 0; i < VP_LORA_TARGET_COUNT; i++)
		vp_buf_printf(out, "%s, ", vp_lora_target_names[i]);
	vp_buf_add(out, "or all-linear");
}

int
vp_parse_version(const char *text, unsigned *out)
{
	unsigned major = 0, minor = 0, nd = 0;
	const char *s = text;

	for (; *s >= '0' && *s <= '9' && nd < 4; s++, nd++)
		major = major * 10 + (unsigned)(*s - '0');
	if (nd == 0)
		return -1;
	if (*s == '.') {
		for (s++, nd = 0; *s >= '0' && *s <= '9' && nd < 2; s++, nd++)
			minor = minor * 10 + (unsigned)(*s - '0');
		if (nd == 0)
			return -1;
		if (*s == '.')	/* the patch level: the rules do not vary */
			for (s++; *s >= '0' && *s <= '9'; s++)
				;
	}
	/* A local version label ("2.13.0+cpu", "1.13.0a0") is the build's. */
	if (*s != '\0' && *s != '+' && *s != 'a' && *s != 'r')
		return -1;
	*out = major * 100 + minor;
	return 0;
}

int
vp_option_check_number(enum vp_optid id, double x, struct vp_buf *err)
{
	const struct vp_optdef *od = &vp_options[id];

	if ((od->zero_off && x == 0) || (x >= od->min && x <= od->max))
		return 0;
	vp_buf_printf(err, "--%s '%.15g' is too %s", od->name, x,
	    x < od->min ? "small" : "large");
	add_expect(od, err);
	return -1;
}

static int
parse_enum(const struct vp_optdef *od, const char *text, int *out,
    struct vp_buf *err)
{
	const char *near;
	int i;

	for (i = 0; i < od->nnames; i++)
		if (strcmp(text, od->names[i]) == 0) {
			*out = i;
			return 0;
		}
	near = vp_closest(text, od->names, (size_t)od->nnames);
	vp_buf_printf(err, "unknown --%s '%s'", od->name, text);
	if (near)
		vp_buf_printf(err, "; did you mean '%s'?", near);
	vp_buf_add(err, " (one of:");
	for (i = 0; i < od->nnames; i++)
		vp_buf_printf(err, " %s", od->names[i]);
	vp_buf_add(err, ")");
	return -1;
}

int
vp_option_parse(enum vp_optid id, const char *text, union vp_optval *v,
    struct vp_buf *err)
{
	const struct vp_optdef *od = &vp_options[id];
	const char *why = "invalid", *bad = NULL;
	uint64_t lo = (uint64_t)od->min;
	unsigned bits;

	switch (od->kind) {
	case VP_OK_FLAG:
		v->b = true;
		return 0;
	case VP_OK_ENUM:
		return parse_enum(od, text, &v->i, err);
	case VP_OK_U64:
		if (od->zero_off && strcmp(text, "0") == 0) {
			v->u = 0;
			return 0;
		}
		if (vp_parse_u64(text, lo, (uint64_t)od->max, &v->u,
		    &why) == 0)
			return 0;
		break;
	case VP_OK_DOUBLE:
	case VP_OK_GIB:
		if (vp_parse_double(text, od->zero_off ? 0 : od->min, od->max,
		    &v->x, &why) == 0) {
			if (vp_option_check_number(id, v->x, err) != 0)
				return -1;
			return 0;
		}
		break;
	case VP_OK_TARGETS:
		if (vp_lora_parse_targets(text, &bits, &bad) == 0) {
			v->u = bits;
			return 0;
		}
		vp_buf_printf(err, "unknown --%s '%s' (a comma list of ",
		    od->name, bad);
		vp_lora_targets_expect(err);
		vp_buf_add(err, ")");
		return -1;
	case VP_OK_STRING:
		if (id == VP_O_DEADLINE) {
			double h;

			if (vp_parse_hours(text, &h, &why) != 0) {
				vp_buf_printf(err, "--deadline '%s' is %s: "
				    "hours, or a number with a unit h, d or w "
				    "(72, 36h, 30d, 2w), at most a year", text,
				    why);
				return -1;
			}
		}
		if (od->field == VP_OF_ALLOC_CONF) {
			struct vp_alloc_conf c;

			if (strlen(text) >= sizeof ((struct vp_plan *)0)->
			    alloc_conf) {
				vp_buf_printf(err, "--%s is longer than %zu "
				    "characters", od->name, sizeof
				    ((struct vp_plan *)0)->alloc_conf - 1);
				return -1;
			}
			vp_buf_printf(err, "--%s '%s': ", od->name, text);
			if (vp_alloc_conf_parse(&c, text, err) != 0)
				return -1;
			err->len = 0;
			err->s[0] = '\0';
		}
		v->s = text;
		return 0;
	case VP_OK_VERSION:
		if (vp_parse_version(text, &bits) == 0 && bits >= od->min &&
		    bits <= od->max) {
			v->u = bits;
			return 0;
		}
		why = "not a supported version";
		break;
	}
	vp_buf_printf(err, "--%s '%s' is %s", od->name, text, why);
	add_expect(od, err);
	return -1;
}

void
vp_optset_apply(const struct vp_optset *o, struct vp_plan *p)
{
	int i;

	for (i = 0; i < VP_O_COUNT; i++) {
		const struct vp_optdef *od = &vp_options[i];
		const union vp_optval *v = &o->val[i];
		char *field = (char *)p + od->off;
		unsigned w;
		uint64_t u;

		if (!o->has[i] || od->field == VP_OF_NONE)
			continue;
		switch (od->field) {
		case VP_OF_NONE:
			break;
		case VP_OF_INT:
			memcpy(field, &v->i, sizeof v->i);
			break;
		case VP_OF_U64:
			u = od->kind == VP_OK_GIB ? (uint64_t)(v->x * VP_GIB) :
			    v->u;
			memcpy(field, &u, sizeof u);
			break;
		case VP_OF_UNSIGNED:
			assert(v->u <= UINT32_MAX);
			w = (unsigned)v->u;
			memcpy(field, &w, sizeof w);
			break;
		case VP_OF_DOUBLE:
			memcpy(field, &v->x, sizeof v->x);
			break;
		case VP_OF_BOOL:
			memcpy(field, &v->b, sizeof v->b);
			break;
		case VP_OF_DTYPE:
			assert(v->i >= 0 && v->i < od->nnames);
			memcpy(field, &od->dtypes[v->i], sizeof(enum vp_dtype));
			break;
		case VP_OF_ALLOC_CONF:
			snprintf(field, sizeof p->alloc_conf, "%s", v->s);
			break;
		}
	}
}

void
vp_optset_merge(struct vp_optset *into, const struct vp_optset *from)
{
	int i;

	for (i = 0; i < VP_O_COUNT; i++)
		if (from->has[i] && !into->has[i]) {
			into->has[i] = true;
			into->val[i] = from->val[i];
			into->pos[i] = from->pos[i];
		}
}

/*
 * Options that only refine another one: given while the plan has that
 * one off, they change nothing.  A note, not an error (a script may pass
 * them always).  Rules refuse the pairs that cannot run at all (--vpp
 * without a pipeline, --sp without --tp, --offload-nvme alone).
 */
static bool no_quant(const struct vp_plan *p) { return p->quant == VP_QUANT_NONE; }
static bool no_lora(const struct vp_plan *p) { return p->lora_rank == 0; }
static bool no_recompute(const struct vp_plan *p)
{
	return p->recompute == VP_RECOMP_NONE;
}
static bool on_cpu(const struct vp_plan *p) { return p->device == VP_DEVICE_CPU; }
static bool no_compiled_ckpt(const struct vp_plan *p)
{
	return !p->compile || (p->recompute != VP_RECOMP_FULL &&
	    p->recompute != VP_RECOMP_OP);
}

static const struct {
	enum vp_optid opt;
	bool (*off)(const struct vp_plan *);
	const char *without;
} inert[] = {
	{ VP_O_KBIT_PREP, no_quant, "without --quant" },
	{ VP_O_QUANT_LIB, no_quant, "without --quant" },
	{ VP_O_LORA_TARGETS, no_lora, "without --lora" },
	{ VP_O_LORA_DROPOUT, no_lora, "without --lora" },
	{ VP_O_LORA_DTYPE, no_lora, "without --lora" },
	{ VP_O_RECOMPUTE_STRIDE, no_recompute, "without --recompute" },
	{ VP_O_ALLOC_CONF, on_cpu, "with --device cpu" },
	{ VP_O_COMPILE_WRAPS_CKPT, no_compiled_ckpt, "without --compile and "
	    "--recompute full or op" },
};

void
vp_optset_inert(const bool given[VP_O_COUNT], const struct vp_plan *p,
    struct vp_buf *out)
{
	size_t i;

	for (i = 0; i < VP_NELEM(inert); i++)
		if (given[inert[i].opt] && inert[i].off(p))
			vp_buf_printf(out, "--%s has no effect %s\n",
			    vp_options[inert[i].opt].name, inert[i].without);
}

void
vp_optset_open(const struct vp_optset *o, bool moe, struct vp_open *open)
{
	int i;

	memset(open, 0, sizeof *open);
	open->tp = open->pp = open->cp = open->sp = open->shard = true;
	open->recompute = open->grad_accum = true;
	open->ep = moe;
	for (i = 0; i < VP_O_COUNT; i++) {
		bool *f = vp_open_flag(open, vp_options[i].open);

		if (o->has[i] && f != NULL)
			*f = false;
	}
}

bool *
vp_open_flag(struct vp_open *open, enum vp_optopen k)
{
	switch (k) {
	case VP_OPEN_NONE: return NULL;
	case VP_OPEN_TP: return &open->tp;
	case VP_OPEN_PP: return &open->pp;
	case VP_OPEN_CP: return &open->cp;
	case VP_OPEN_EP: return &open->ep;
	case VP_OPEN_SP: return &open->sp;
	case VP_OPEN_SHARD: return &open->shard;
	case VP_OPEN_RECOMPUTE: return &open->recompute;
	case VP_OPEN_GRAD_ACCUM: return &open->grad_accum;
	}
	return NULL;
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
vp_option_value(enum vp_optid id, const struct vp_plan *p,
    struct vp_buf *out)
{
	const struct vp_optdef *od = &vp_options[id];
	const char *field = (const char *)p + od->off;
	enum vp_dtype dt;
	uint64_t u;
	unsigned w;
	double x;
	bool b;
	int e, i;

	switch (od->field) {
	case VP_OF_NONE:
		break;
	case VP_OF_INT:
		memcpy(&e, field, sizeof e);
		assert(e >= 0 && e < od->nnames);
		vp_buf_add(out, od->names[e]);
		break;
	case VP_OF_U64:
		memcpy(&u, field, sizeof u);
		if (od->kind == VP_OK_GIB)
			/* Bytes / 2^30 is exact below 2^53 bytes. */
			add_double(out, (double)u / VP_GIB);
		else
			vp_buf_printf(out, "%llu", (unsigned long long)u);
		break;
	case VP_OF_UNSIGNED:
		memcpy(&w, field, sizeof w);
		if (od->kind == VP_OK_TARGETS)
			add_targets(out, w);
		else if (od->kind == VP_OK_VERSION)
			vp_buf_printf(out, "%u.%u", w / 100, w % 100);
		else
			vp_buf_printf(out, "%u", w);
		break;
	case VP_OF_DOUBLE:
		memcpy(&x, field, sizeof x);
		add_double(out, x);
		break;
	case VP_OF_BOOL:
		memcpy(&b, field, sizeof b);
		vp_buf_add(out, b ? "true" : "false");
		break;
	case VP_OF_DTYPE:
		memcpy(&dt, field, sizeof dt);
		for (i = 0; i < od->nnames; i++)
			if (od->dtypes[i] == dt)
				vp_buf_add(out, od->names[i]);
		break;
	case VP_OF_ALLOC_CONF:
		vp_buf_add(out, field);
		break;
	}
}

/* Words of text into out, wrapped at 79 columns, indented by col. */
static void
add_wrapped(struct vp_buf *out, const char *text, size_t at, size_t col)
{
	const char *w = text;

	while (*w) {
		size_t n = strcspn(w, " ");

		if (at > col && at + 1 + n > 79) {
			vp_buf_printf(out, "\n%*s", (int)col, "");
			at = col;
		} else if (at > col) {
			vp_buf_add(out, " ");
			at++;
		}
		vp_buf_addn(out, w, n);
		at += n;
		w += n;
		while (*w == ' ')
			w++;
	}
}

void
vp_options_help(unsigned cmds, unsigned skip, struct vp_buf *out)
{
	const size_t col = 23;
	struct vp_buf line, text;
	int i, k;

	vp_buf_init(&line);
	vp_buf_init(&text);
	for (i = 0; i < VP_O_COUNT; i++) {
		const struct vp_optdef *od = &vp_options[i];

		if (!(od->cmds & cmds) || (od->cmds & skip))
			continue;
		line.len = text.len = 0;
		line.s[0] = text.s[0] = '\0';
		vp_buf_printf(&line, "  --%s", od->name);
		if (od->kind != VP_OK_FLAG)
			vp_buf_printf(&line, " %s", od->metavar);
		vp_buf_add(&text, od->help);
		if (od->kind == VP_OK_ENUM) {
			vp_buf_add(&text, ":");
			for (k = 0; k < od->nnames; k++)
				vp_buf_printf(&text, " %s", od->names[k]);
		}
		vp_buf_add(out, line.s);
		if (line.len + 1 >= col) {
			vp_buf_printf(out, "\n%*s", (int)col, "");
		} else {
			vp_buf_printf(out, "%*s", (int)(col - line.len), "");
		}
		add_wrapped(out, text.s, col, col);
		vp_buf_add(out, "\n");
	}
	vp_buf_free(&line);
	vp_buf_free(&text);
}
