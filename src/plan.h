/*
 * plan.h — a training plan: precision, optimizer, batch shape, recompute,
 * attention kernel, sharding and parallel degrees, target device kind.
 *
 * The option names here are the CLI's and the model file's; the tables are
 * the single place each name is spelt.  Pure.
 */
#ifndef VP_PLAN_H
#define VP_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * Precisions.  *-mixed = torch.autocast: fp32 weights, gradients and
 * optimizer states, low-precision copies for the ops on autocast's list.
 * fp16 / bf16 = the whole model cast to 16 bit (states in 16 bit too).
 * *-master = Megatron/DeepSpeed style: 16-bit weights and gradients, an
 * fp32 master copy of the weights and fp32 gradient accumulation.
 */
#define VP_PREC_LIST(X) \
	X(FP32, "fp32") X(FP16_MIXED, "fp16-mixed") X(BF16_MIXED, "bf16-mixed") \
	X(FP16, "fp16") X(BF16, "bf16") X(FP16_MASTER, "fp16-master") \
	X(BF16_MASTER, "bf16-master") X(FP8, "fp8")
#define VP_OPT_LIST(X) \
	X(SGD, "sgd") X(SGD_MOMENTUM, "sgd-momentum") X(ADAM, "adam") \
	X(ADAMW, "adamw") X(ADAMW_8BIT, "adamw-8bit") X(ADAFACTOR, "adafactor") \
	X(LION, "lion") X(PAGED_ADAMW, "paged-adamw") \
	X(PAGED_ADAMW_8BIT, "paged-adamw-8bit")
/*
 * Recompute policies.  op is torchtitan's op-level selective activation
 * checkpointing (torchtitan v0.2.2, _apply_op_sac): each block is one
 * checkpoint whose policy saves the outputs of aten.mm (every second one
 * recomputed), of the fused SDPA kernels and of reduce_scatter_tensor;
 * graph.c marks them, mem.c keeps them from forward to the recompute.
 */
#define VP_RECOMP_LIST(X) X(NONE, "none") X(SELECTIVE, "selective") \
	X(FULL, "full") X(OP, "op")
#define VP_ATTN_LIST(X) X(EAGER, "eager") X(SDPA, "sdpa") X(FLASH, "flash")
#define VP_DEVICE_LIST(X) X(CUDA, "cuda") X(CPU, "cpu")
/* Quantized frozen base weights (bitsandbytes). */
#define VP_QUANT_LIST(X) X(NONE, "none") X(NF4, "nf4") X(FP4, "fp4") X(INT8, "int8")
/*
 * How a quantized base is prepared for training: UPCAST is PEFT's
 * prepare_model_for_kbit_training (Hugging Face Trainer and TRL recipes),
 * which casts every parameter it did not quantize to fp32; KEEP leaves
 * them in the load dtype (torchtune, Unsloth, fms-acceleration's
 * accelerated-peft plugin).
 */
#define VP_KBIT_LIST(X) X(UPCAST, "upcast") X(KEEP, "keep")
/*
 * Which library's quantized linear runs the base (--quant-lib):
 * bitsandbytes' Linear4bit/Linear8bitLt (Hugging Face, PEFT), or
 * torchao's NF4Tensor through linear_nf4 (torchtune's QLoRA; graph.c,
 * linear_w).
 */
#define VP_QUANT_LIB_LIST(X) X(BITSANDBYTES, "bitsandbytes") \
	X(TORCHAO, "torchao")
/*
 * What the peak read includes of building the model (load.c): NONE, the
 * step only (Hugging Face's Trainer resets the peak after from_pretrained;
 * torchtune's distributed recipes empty the cache before training);
 * TORCHTUNE_0_1, torchtune 0.1's single-device recipes, which build the
 * model on the GPU (with torchao 0.1's NF4) and keep what that reserved.
 */
#define VP_LOAD_LIST(X) X(NONE, "none") X(TORCHTUNE_0_1, "torchtune-0.1")
/* What moves off the GPU (ZeRO-Offload / FSDP CPU offload / Infinity). */
#define VP_OFFLOAD_LIST(X) X(NONE, "none") X(OPTIMIZER, "optimizer") \
	X(PARAMS, "params") X(ALL, "optimizer+params")
/* The training-loop library whose defaults --trainer applies (trainer.h). */
#define VP_TRAINER_LIST(X) X(PLAIN, "plain") X(HF, "hf") \
	X(TORCHTUNE, "torchtune") X(TORCHTITAN, "torchtitan")
#define VP_LOSS_LIST(X) X(FULL, "full") X(CHUNKED, "chunked") \
	X(CHUNKED_OUTPUT, "chunked-output")
/*
 * torchao float8 training of the block linears (torchtitan's float8
 * converter): dynamic scaling per tensor or per row (Float8LinearConfig
 * recipes "tensorwise" and "rowwise", torchao v0.18.0).
 */
#define VP_FLOAT8_LIST(X) X(NONE, "none") X(TENSORWISE, "tensorwise") \
	X(ROWWISE, "rowwise")
/* LoRA target names: the projections of a transformer block, then the
 * LM head (PEFT's target_modules=["lm_head"], torchtune's
 * apply_lora_to_output).  HEAD stays last: all-linear is every target
 * before it, as PEFT's all-linear leaves the output layer out. */
#define VP_LORA_TARGET_LIST(X) X(Q, "q") X(K, "k") X(V, "v") X(O, "o") \
	X(GATE, "gate") X(UP, "up") X(DOWN, "down") X(HEAD, "head")
/* FSDP strategies; NONE = not FSDP (DDP or DeepSpeed ZeRO by --zero). */
#define VP_FSDP_LIST(X) X(NONE, "none") X(FULL, "full") X(GRAD_OP, "grad-op") \
	X(HYBRID, "hybrid")
/*
 * Whose semantics the training loop follows: plain PyTorch (DDP,
 * torch.optim's foreach kernels; --zero then means DeepSpeed), DeepSpeed
 * ZeRO (16-bit gradients, fp32 partitions, fused Adam), FSDP1 (flat
 * parameters, one unit per block), FSDP2 (per-parameter sharding),
 * Megatron (fp32 main_grad buffer, distributed optimizer for --zero 1,
 * fused Adam).
 */
#define VP_FRAMEWORK_LIST(X) X(TORCH, "torch") X(DEEPSPEED, "deepspeed") \
	X(FSDP1, "fsdp1") X(FSDP2, "fsdp2") X(MEGATRON, "megatron")
/*
 * How torch.optim steps (its foreach= and fused= arguments): one kernel
 * per parameter (the for-loop, PyTorch's default on CPU), the _foreach_
 * kernels over all parameters at once (the default on CUDA), or one fused
 * kernel.  default: what PyTorch picks for the device.
 */
#define VP_OPTIMPL_LIST(X) X(DEFAULT, "default") X(FOR_LOOP, "for-loop") \
	X(FOREACH, "foreach") X(FUSED, "fused")
/*
 * What zero_grad() does with the gradients between steps: `none` frees
 * them (set_to_none=True, PyTorch's default since 2.0), `zeros` keeps them
 * allocated and zeroed (the default before 2.0), so from the second step
 * they exist through forward and backward, and each new gradient is added
 * into them in place.  default: PyTorch's default for --torch.
 */
#define VP_ZEROGRAD_LIST(X) X(DEFAULT, "default") X(NONE, "none") \
	X(ZEROS, "zeros")
/*
 * FSDP1's backward_prefetch (torch/distributed/fsdp/api.py BackwardPrefetch):
 * `pre` all-gathers the next unit in the current unit's pre-backward hook
 * (two units gathered while a unit's gradient is computed), `post` in its
 * post-backward hook, `none` not at all.  FSDP2 prefetches implicitly.
 */
#define VP_FSDP_PREFETCH_LIST(X) X(PRE, "pre") X(POST, "post") X(NONE, "none")
/* A yes/no plan knob given by name (--fsdp-orig-params,
 * --reshard-after-forward). */
#define VP_YESNO_LIST(X) X(YES, "yes") X(NO, "no")
/*
 * Where FSDP1 puts LoRA adapters: `peft`, each adapter Linear its own unit
 * (peft.utils.other.fsdp_auto_wrap_policy, which the Hugging Face Trainer
 * installs for a PeftModel under FSDP), so a block's flat parameter is all
 * frozen; `block`, in its block's unit (transformer_auto_wrap_policy alone,
 * as a plain FSDP1 script wraps).
 */
#define VP_LORAWRAP_LIST(X) X(PEFT, "peft") X(BLOCK, "block")
/*
 * FSDP2's units outside the blocks: `root`, the embeddings, final norm and
 * head in the root unit (fully_shard on each block, then on the model);
 * `split`, torchtitan's apply_fsdp: fully_shard on tok_embeddings, on each
 * block, on [norm, output] (not resharded after forward), then on the
 * model, whose forward returns the logits (the loss after it).
 */
#define VP_FSDP_UNITS_LIST(X) X(ROOT, "root") X(SPLIT, "split")

#define X(e, s) VP_PREC_##e,
enum vp_precision { VP_PREC_LIST(X) VP_PREC_COUNT };
#undef X
#define X(e, s) VP_OPT_##e,
enum vp_optimizer { VP_OPT_LIST(X) VP_OPT_COUNT };
#undef X
#define X(e, s) VP_RECOMP_##e,
enum vp_recompute { VP_RECOMP_LIST(X) VP_RECOMP_COUNT };
#undef X
#define X(e, s) VP_ATTN_##e,
enum vp_attention { VP_ATTN_LIST(X) VP_ATTN_COUNT };
#undef X
#define X(e, s) VP_DEVICE_##e,
enum vp_device { VP_DEVICE_LIST(X) VP_DEVICE_COUNT };
#undef X
#define X(e, s) VP_FSDP_##e,
enum vp_fsdp { VP_FSDP_LIST(X) VP_FSDP_COUNT };
#undef X
#define X(e, s) VP_QUANT_##e,
enum vp_quant { VP_QUANT_LIST(X) VP_QUANT_COUNT };
#undef X
#define X(e, s) VP_KBIT_##e,
enum vp_kbit { VP_KBIT_LIST(X) VP_KBIT_COUNT };
#undef X
#define X(e, s) VP_QLIB_##e,
enum vp_quant_lib { VP_QUANT_LIB_LIST(X) VP_QLIB_COUNT };
#undef X
#define X(e, s) VP_LOAD_##e,
enum vp_load { VP_LOAD_LIST(X) VP_LOAD_COUNT };
#undef X
#define X(e, s) VP_OFFLOAD_##e,
enum vp_offload { VP_OFFLOAD_LIST(X) VP_OFFLOAD_COUNT };
#undef X
#define X(e, s) VP_TRAINER_##e,
enum vp_trainer { VP_TRAINER_LIST(X) VP_TRAINER_COUNT };
#undef X
#define X(e, s) VP_LOSS_##e,
enum vp_loss { VP_LOSS_LIST(X) VP_LOSS_COUNT };
#undef X
#define X(e, s) VP_FLOAT8_##e,
enum vp_float8 { VP_FLOAT8_LIST(X) VP_FLOAT8_COUNT };
#undef X
#define X(e, s) VP_LORA_##e,
enum vp_lora_target { VP_LORA_TARGET_LIST(X) VP_LORA_TARGET_COUNT };
#undef X
/* --lora-targets all-linear: every block projection, not the head. */
#define VP_LORA_ALL_LINEAR ((1u << VP_LORA_HEAD) - 1)
#define X(e, s) VP_FW_##e,
enum vp_framework { VP_FRAMEWORK_LIST(X) VP_FW_COUNT };
#undef X
#define X(e, s) VP_FSDP_PREFETCH_##e,
enum vp_fsdp_prefetch { VP_FSDP_PREFETCH_LIST(X) VP_FSDP_PREFETCH_COUNT };
#undef X
#define X(e, s) VP_##e,
enum vp_yesno { VP_YESNO_LIST(X) VP_YESNO_COUNT };
#undef X
#define X(e, s) VP_LORAWRAP_##e,
enum vp_lora_wrap { VP_LORAWRAP_LIST(X) VP_LORAWRAP_COUNT };
#undef X
#define X(e, s) VP_FSDP_UNITS_##e,
enum vp_fsdp_units { VP_FSDP_UNITS_LIST(X) VP_FSDP_UNITS_COUNT };
#undef X
#define X(e, s) VP_OPTIMPL_##e,
enum vp_optimpl { VP_OPTIMPL_LIST(X) VP_OPTIMPL_COUNT };
#undef X
#define X(e, s) VP_ZEROGRAD_##e,
enum vp_zerograd { VP_ZEROGRAD_LIST(X) VP_ZEROGRAD_COUNT };
#undef X

extern const char *const vp_prec_names[VP_PREC_COUNT];
extern const char *const vp_opt_names[VP_OPT_COUNT];
extern const char *const vp_recomp_names[VP_RECOMP_COUNT];
extern const char *const vp_attn_names[VP_ATTN_COUNT];
extern const char *const vp_device_names[VP_DEVICE_COUNT];
extern const char *const vp_fsdp_names[VP_FSDP_COUNT];
extern const char *const vp_quant_names[VP_QUANT_COUNT];
extern const char *const vp_kbit_names[VP_KBIT_COUNT];
extern const char *const vp_quant_lib_names[VP_QLIB_COUNT];
extern const char *const vp_load_names[VP_LOAD_COUNT];
extern const char *const vp_offload_names[VP_OFFLOAD_COUNT];
extern const char *const vp_loss_names[VP_LOSS_COUNT];
extern const char *const vp_float8_names[VP_FLOAT8_COUNT];
extern const char *const vp_trainer_names[VP_TRAINER_COUNT];
extern const char *const vp_lora_target_names[VP_LORA_TARGET_COUNT];
extern const char *const vp_framework_names[VP_FW_COUNT];
extern const char *const vp_fsdp_prefetch_names[VP_FSDP_PREFETCH_COUNT];
extern const char *const vp_yesno_names[VP_YESNO_COUNT];
extern const char *const vp_lora_wrap_names[VP_LORAWRAP_COUNT];
extern const char *const vp_fsdp_units_names[VP_FSDP_UNITS_COUNT];
extern const char *const vp_optimpl_names[VP_OPTIMPL_COUNT];
extern const char *const vp_zerograd_names[VP_ZEROGRAD_COUNT];

/* Element types and their sizes in bytes. */
#define VP_DTYPE_LIST(X) X(FP32, "fp32", 4) X(BF16, "bf16", 2) \
	X(FP16, "fp16", 2) X(INT64, "int64", 8) X(BOOL, "bool", 1)
#define X(e, s, b) VP_##e,
enum vp_dtype { VP_DTYPE_LIST(X) VP_DTYPE_COUNT };
#undef X
extern const unsigned vp_dtype_bytes[VP_DTYPE_COUNT];
extern const char *const vp_dtype_names[VP_DTYPE_COUNT];

struct vp_prec_info {
	enum vp_dtype weight;	/* storage dtype of the weights */
	enum vp_dtype grad;	/* dtype of .grad */
	enum vp_dtype compute;	/* dtype of the matmul inputs/outputs */
	bool autocast;		/* torch.autocast semantics */
	bool master;		/* separate fp32 master weights */
	enum vp_dtype state;	/* optimizer state dtype */
};
extern const struct vp_prec_info vp_prec_info[VP_PREC_COUNT];

/*
 * What an optimizer implies.  The step's temporaries (mem.c) depend on
 * the implementation: torch.optim's CUDA foreach kernels make one
 * states-size temporary (_foreach_sqrt of exp_avg_sq for Adam, the
 * update direction for Lion and momentum SGD); its CPU for-loop makes
 * two the size of the largest parameter for Adam's denominator.
 */
struct vp_opt_info {
	unsigned state_bytes_per_param;	/* at the state dtype of fp32 */
	unsigned nstates;		/* full-size state tensors */
	bool foreach_tmp;	/* foreach step: one states-size temporary */
	bool loop_tmp;		/* for-loop step: two largest-parameter
				 * temporaries */
	bool paged;		/* bitsandbytes paged: states in unified memory */
	const char *what;
};
extern const struct vp_opt_info vp_opt_info[VP_OPT_COUNT];

/*
 * What a framework's training loop implies (vp_plan_framework picks the
 * row).  fused_optimizer: steps with fused Adam kernels, no foreach
 * temporaries (DeepSpeed, Megatron).  fsdp_sharding: --zero's place is
 * taken by FSDP strategies (the planner searches those).  main_grad: a
 * contiguous fp32 gradient buffer allocated before the step, --zero 1 the
 * distributed optimizer (Megatron).
 */
struct vp_fw_info {
	bool fused_optimizer;
	bool fsdp_sharding;
	bool main_grad;
};
extern const struct vp_fw_info vp_fw_info[VP_FW_COUNT];

struct vp_plan {
	enum vp_precision precision;
	enum vp_optimizer optimizer;
	uint64_t micro_batch;
	uint64_t seq;
	uint64_t target_seq;	/* encoder-decoder: the decoder's length;
				 * 0 = seq (vp_plan_target_seq) */
	uint64_t grad_accum;
	enum vp_recompute recompute;
	/* Every recompute_stride-th block of a rank (counted from 1 at its
	 * first block) is checkpointed with `recompute`, the others keep
	 * everything: torchtitan's selective_ac_option "N".  >= 1. */
	unsigned recompute_stride;
	enum vp_attention attention;
	double dropout;		/* < 0: the model's */
	unsigned zero;		/* ZeRO stage 0..3 (or the FSDP equivalent) */
	enum vp_fsdp fsdp;	/* FSDP sharding strategy, or none */
	enum vp_framework framework;
	/* FSDP1: backward_prefetch and use_orig_params (accelerate's
	 * default: yes); FSDP2: reshard_after_forward of the blocks. */
	enum vp_fsdp_prefetch fsdp_prefetch;
	enum vp_yesno fsdp_orig_params;
	enum vp_yesno reshard_after_forward;
	enum vp_lora_wrap fsdp_lora_wrap;	/* FSDP1: adapters' unit */
	enum vp_fsdp_units fsdp_units;	/* FSDP2: the units outside blocks */
	unsigned tp, pp, dp;	/* parallel degrees; 0 = derive */
	unsigned vpp;		/* virtual pipeline chunks per stage (>= 1) */
	unsigned cp;		/* context parallel degree */
	unsigned ep;		/* expert parallel degree */
	bool sp;		/* Megatron sequence parallelism (with TP) */
	bool async_tp;		/* torchtitan's async TP (symmetric memory) */
	double capacity_factor;	/* MoE token padding; 0 = dropless */
	unsigned stage;		/* pipeline stage to lower (0 = first) */
	unsigned gpus_per_node;	/* for hybrid sharding and placement */
	enum vp_device device;
	enum vp_optimpl optimizer_impl;	/* torch.optim's kernels */
	enum vp_zerograd zero_grad;	/* what zero_grad() leaves */
	bool optim_in_bwd;	/* the step runs in each parameter's
				 * post-accumulate-grad hook (torchtune) */
	bool compile;		/* torch.compile of each block, */
	bool compile_loss;	/* ... of the loss (graph.c, region_begin) */
	bool compile_wraps_ckpt; /* torchtitan's order: the checkpoint is
				 * inside the compiled block
				 * (vp_plan_compiled_checkpoint) */
	/* Fine-tuning. */
	unsigned lora_rank;	/* 0 = full fine-tuning */
	unsigned lora_targets;	/* bit set of enum vp_lora_target */
	double lora_dropout;
	enum vp_dtype lora_dtype;	/* adapter weights (fp32 or bf16) */
	enum vp_quant quant;	/* frozen base storage */
	enum vp_kbit kbit_prep;	/* the rest of a quantized base */
	enum vp_quant_lib quant_lib;	/* whose quantized linear */
	enum vp_load load;	/* building the model, in the peak read */
	enum vp_offload offload;
	bool offload_nvme;	/* ZeRO-Infinity: offload target is NVMe */
	bool activation_offload;	/* saved activations to host memory */
	uint64_t host_mem_bytes;	/* per node; 0 = unlimited */
	enum vp_loss loss;
	enum vp_float8 float8;	/* torchao float8 linears (graph.c) */
	bool float8_all_gather;	/* FSDP2 gathers their weights in fp8
				 * (enable_fsdp_float8_all_gather) */
	/* The software stack (--torch, --cuda, --transformers): major * 100
	 * + minor. */
	unsigned torch_version;
	unsigned cuda_version;
	unsigned transformers_version;	/* whose modelling code a Hugging
					 * Face model runs (vp_model_traits) */
	/* PYTORCH_CUDA_ALLOC_CONF of the job ("" = PyTorch's defaults);
	 * the option parser checks it with vp_alloc_conf_parse. */
	char alloc_conf[128];
	/* DeepSpeed ZeRO's knobs (deepspeed/runtime/zero/config.py,
	 * DeepSpeedZeroConfig), in elements; --deepspeed-config sets them,
	 * vp_plan_defaults gives DeepSpeed's defaults (VP_DS_*). */
	struct vp_ds_knobs {
		uint64_t reduce_bucket;		/* reduce_bucket_size */
		uint64_t prefetch_bucket;	/* stage3_prefetch_bucket_size */
		uint64_t persist_threshold;	/* stage3_param_persistence_
						 * threshold: smaller params
						 * stay whole on every rank */
		uint64_t max_live;		/* stage3_max_live_parameters */
		uint64_t max_reuse;		/* stage3_max_reuse_distance */
		bool contiguous_grads;		/* contiguous_gradients */
		int overlap_comm;		/* overlap_comm; -1 unset */
	} ds;
	/* A layer-graph model's input resolution (--image: N x N images);
	 * 0 = the model's (vp_lgraph_image, graph.h). */
	uint64_t image;
};

/*
 * DeepSpeed's defaults, DeepSpeedZeroConfig of deepspeedai/DeepSpeed at
 * edaa7221 (v0.16 series): reduce_bucket_size 5e8,
 * stage3_prefetch_bucket_size 5e7, stage3_param_persistence_threshold
 * 1e5, stage3_max_live_parameters 1e9, stage3_max_reuse_distance 1e9,
 * contiguous_gradients true, overlap_comm false (true for stage 3).
 */
#define VP_DS_REDUCE_BUCKET 500000000ULL
#define VP_DS_PREFETCH_BUCKET 50000000ULL
#define VP_DS_PERSIST_THRESHOLD 100000ULL
#define VP_DS_MAX_LIVE 1000000000ULL
#define VP_DS_MAX_REUSE 1000000000ULL
/* sub_group_size (not an option: a config that sets it gets a warning):
 * ZeRO-3 steps the optimizer one sub-group of this many elements at a
 * time. */
#define VP_DS_SUB_GROUP 1000000000ULL
/* overlap_comm as DeepSpeed resolves an unset value: on for stage 3. */
bool vp_plan_ds_overlap(const struct vp_plan *p);

/*
 * The stack an estimate assumes unless --torch, --cuda and --transformers
 * say otherwise: a current one.  Versions are major * 100 + minor (2.13 is
 * 213, CUDA 13.0 is 1300, transformers 5.24 is 524); vp_version_name
 * spells them back.
 */
#define VP_TORCH_CURRENT 213u
#define VP_CUDA_CURRENT 1300u
#define VP_TRANSFORMERS_CURRENT 524u
const char *vp_version_name(unsigned v, char *buf, size_t len);

/*
 * GPUs per node when nothing says otherwise: the 8-GPU server (DGX/HGX,
 * and every cloud's 8-GPU instance) that NVLink domains are built of.
 */
#define VP_DEFAULT_GPUS_PER_NODE 8u

/* Defaults, then the model file's training block; CLI flags go on top. */
void vp_plan_defaults(struct vp_plan *p, const struct vp_model *m);
/*
 * Degrees of 0 ("derive" or "not given") become 1: tp, pp, cp, ep, vpp
 * and the recompute stride; dp stays 0 (derived from the world),
 * gpus_per_node 0 becomes VP_DEFAULT_GPUS_PER_NODE.  Called once where a
 * plan is finalised (vp_session_run); the core's entry points then
 * assert the degrees are at least 1 instead of repeating `x ? x : 1`.
 */
void vp_plan_normalize(struct vp_plan *p);
/* True when tp, pp, cp, ep and vpp are all at least 1, as vp_plan_normalize
 * leaves them: the core's entry points assert(vp_plan_degrees_ok(p)). */
bool vp_plan_degrees_ok(const struct vp_plan *p);
/*
 * Whether the l-th block of a rank (l from 1, in forward order) is
 * checkpointed: recompute is not none and l is a multiple of the stride
 * (0 counts as 1).  torchtitan's _apply_layer_sac counts the blocks it
 * wraps from 1 (`_layer_sac_count += 1` before the test) and wraps those
 * where count % ac_freq == 0: with "2", the 2nd, 4th, ... block.  Each
 * process wraps only its own stage's blocks, so the count is per rank.
 */
bool vp_plan_block_checkpointed(const struct vp_plan *p, uint64_t l);
bool vp_plan_compiled_checkpoint(const struct vp_plan *p, uint64_t l);
/* How many of a rank's `blocks` blocks are checkpointed. */
uint64_t vp_plan_checkpointed_blocks(const struct vp_plan *p,
    uint64_t blocks);
/*
 * GPUs the degrees make: dp x tp x pp x cp (dp 0 counts as 1).  EP does
 * not multiply: as in Megatron, the expert-parallel group is carved out
 * of the data-parallel one (vp_plan_dp ignores ep the same way).  The
 * product is taken in 64 bits; 0 when it exceeds UINT_MAX (a refusal,
 * never a wrapped count).
 */
unsigned vp_plan_world(const struct vp_plan *p);
double vp_plan_dropout(const struct vp_plan *p, const struct vp_model *m);
/* An encoder-decoder's decoder length: --target-seq, else --seq. */
uint64_t vp_plan_target_seq(const struct vp_plan *p);
/* Data-parallel degree for a world size; 0 when the degrees do not divide. */
unsigned vp_plan_dp(const struct vp_plan *p, unsigned world);
/* Whether the base is frozen (LoRA) and trainable parameters. */
bool vp_plan_lora(const struct vp_plan *p);
/* Parse "q,v" / "all-linear" into a target bit set; -1 and the bad name. */
int vp_lora_parse_targets(const char *s, unsigned *out, const char **bad);
/* The framework whose semantics apply: --zero under plain PyTorch means
 * DeepSpeed, --fsdp means FSDP1. */
enum vp_framework vp_plan_framework(const struct vp_plan *p);
/* The optimizer kernels that step: fused under a framework that fuses
 * (DeepSpeed, Megatron), else the plan's, default resolved by device. */
enum vp_optimpl vp_plan_optimizer_impl(const struct vp_plan *p);
/* What zero_grad() leaves between steps, default resolved by --torch
 * (never VP_ZEROGRAD_DEFAULT). */
enum vp_zerograd vp_plan_zero_grad(const struct vp_plan *p);
/* Whether the gradients outlive the step: zero_grad() keeps them and the
 * loop owns them (no ZeRO, FSDP or Megatron buffer replaces them). */
bool vp_plan_grads_kept(const struct vp_plan *p);
/* NCCL process groups a rank belongs to (DP, TP, PP pair, CP, EP). */
unsigned vp_plan_groups(const struct vp_plan *p, unsigned world);
/* The plan's checks against the model are the rule book, rules.h. */
#endif
