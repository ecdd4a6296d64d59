/*
 * graph.h — lowering: a model and a plan become the list of tensor
 * operations one training micro-batch runs, in forward order, each knowing
 * the tensors it creates, the tensors it consumes, the tensors autograd
 * saves for its backward, and the parameter gradients it produces.
 *
 * The lowering follows what the real implementations do (Hugging Face
 * transformers' Llama/GPT-2/BERT modules, torch.nn.TransformerEncoderLayer,
 * torch.autocast's casts and weight cache), op by op, so that mem.c can
 * replay the step like the autograd engine and the caching allocator see
 * it.  Differences between implementations are lowering variants chosen by
 * the traits of the model's family as the plan's transformers release runs
 * it (vp_model_traits_at, model.h): which block and head builder, fused
 * q/k/v, dropouts, fp32 casts, the loss's shift, sdpa's GQA.  Never fudge
 * factors, and never a family guessed from the position kind.
 *
 * Pure.  Ownership: vp_graph_build fills a caller-owned struct vp_graph;
 * vp_graph_free releases its arrays.
 */
#ifndef VP_GRAPH_H
#define VP_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "plan.h"

/* What a tensor is, for the breakdown by term. */
#define VP_CAT_LIST(X) \
	X(WEIGHTS, "weights") X(MASTER, "master weights") X(GRADS, "gradients") \
	X(OPTIM, "optimizer states") X(CAST, "autocast weight cache") \
	X(ACT, "activations") X(LOGITS, "logits and loss") \
	X(TRANSIENT, "transient buffers") X(INPUT, "inputs") \
	X(ADAPTER, "LoRA adapters") X(FP8, "fp8 weight copies")
#define X(e, s) VP_CAT_##e,
enum vp_cat { VP_CAT_LIST(X) VP_CAT_COUNT };
#undef X
extern const char *const vp_cat_names[VP_CAT_COUNT];

/* Tensors one op may consume, create or save (each list); the op
 * builders assert they never need more. */
#define VP_OP_MAXIO 6
/* Tensors Python still references until an op has run (the loss: the
 * logits the model holds, the loss function's upcast, the shifted copy). */
#define VP_OP_MAXKEEP 3

struct vp_tensor {
	uint64_t bytes;
	const char *name;	/* static string */
	uint32_t layer;		/* 0 = outside the blocks, 1..L blocks */
	uint8_t cat;		/* enum vp_cat */
	uint8_t dtype;		/* enum vp_dtype */
	bool requires_grad;
	/* Experts run one at a time (graph.c, moe): the tensor stands for
	 * `pieces` per-expert tensors, so its gradient in backward exists
	 * one piece at a time (0 and 1: whole). */
	uint16_t pieces;
};

struct vp_op {
	const char *name;	/* static string, e.g. "q_proj" */
	uint32_t layer;		/* 0 = outside the blocks */
	/*
	 * The tensors wgrad_bytes is made of, for the caching allocator
	 * (the replay only sums): wgrad_count equal weight gradients (the
	 * experts of a MoE linear; 0 means 1) and as many biases, which
	 * take wgrad_bias_bytes of the total.  (Placed beside the fields of
	 * their size: the op stays 152 bytes, which the replay's speed
	 * notices.)
	 */
	uint32_t wgrad_count;
	int32_t in[VP_OP_MAXIO];	/* consumed tensors, -1 = none */
	int32_t out[VP_OP_MAXIO];	/* created tensors, -1 = none */
	int32_t saved[VP_OP_MAXIO];	/* kept for backward */
	int32_t keep[VP_OP_MAXKEEP];	/* only referenced (by Python)
					 * until this op, -1 = none */
	uint64_t fwd_tmp;	/* workspace while the op runs forward */
	uint64_t bwd_tmp;	/* workspace while its backward runs */
	uint64_t wgrad_bytes;	/* parameter gradient it creates (persistent) */
	uint64_t wgrad_tmp;	/* low-precision weight grad before the cast */
	uint64_t wgrad_bias_bytes;
	/*
	 * A weight used by two ops (tied embeddings).  Both uses' gradients
	 * go to the weight's one AccumulateGrad node, whose input buffer
	 * keeps the first to arrive (from the op with `wgrad_waits`) until
	 * the other op's backward (`wgrad_adds_to` = 1 + its index, 0 =
	 * none) adds to it, making a new `wgrad_sum` bytes when the waiting
	 * one cannot be reused (0 when it is added in place).  Without
	 * `wgrad_adds_to`, a `wgrad_sum` is an out-of-place sum into the
	 * buffer made once the op's output gradients are freed (a weight
	 * used more than twice: graph.c, chunked_output_ce).
	 */
	uint64_t wgrad_sum;
	uint32_t wgrad_adds_to;
	bool wgrad_waits;
	bool recompute;		/* selective recompute: saved are re-made */
	/*
	 * --recompute op (torchtitan's op-level policy): the outputs (bits
	 * of out[]) the checkpoint's SAC cache keeps from the forward until
	 * the block is recomputed in backward, where they are used instead
	 * of being made again.  sac_mm: the op is an aten.mm, counted by the
	 * policy (only every other one keeps its output); the lowering sets
	 * both, lower_ops leaves sac set only where the policy saves.
	 */
	uint8_t sac;
	bool sac_mm;
};

struct vp_graph {
	struct vp_tensor *t;
	size_t nt, capt;
	struct vp_op *op;
	size_t nop, capop;
	uint32_t layers;
	/* Index of each block's first op and the block input tensor. */
	size_t *layer_first_op;	/* [layers + 2]: block l is ops [f[l], f[l+1]) */
	int32_t *layer_input;	/* [layers + 1] */
	/* Persistent bytes by category, outside the op list. */
	uint64_t weight_bytes;		/* parameters as stored */
	uint64_t master_bytes;		/* fp32 master copy */
	uint64_t grad_bytes;		/* all parameter gradients */
	uint64_t optim_bytes;		/* optimizer states */
	uint64_t optim_step_tmp;	/* optimizer step temporaries */
	uint64_t input_bytes;		/* token ids, labels, masks */
	uint64_t largest_param_bytes;	/* biggest single parameter tensor */
	uint64_t params;		/* parameters on this rank */
	uint64_t trainable;		/* of which take gradients */
	uint64_t adapter_bytes;		/* LoRA adapters (within weight_bytes) */
	uint64_t fp8_bytes;		/* Transformer Engine fp8 weight copies */
	uint64_t optim_state_bytes;	/* optimizer states, unsharded */
	uint64_t block_params;		/* one block's parameters on this rank */
	uint64_t expert_params;		/* of params, the routed experts'
					 * (already split by expert parallelism) */
	uint64_t stage_block_params;	/* all of this stage's blocks (with
					 * MoE, dense blocks counted dense) */
	/*
	 * torch.autocast caches the low-precision copy of each weight until
	 * the outermost autocast region exits: after this op (the loss), or
	 * SIZE_MAX when there is no autocast.  Matters under recompute, where
	 * the linears do not keep the copies themselves.
	 */
	size_t autocast_end_op;
};

/* Lower pipeline stage p->stage of the plan. */
int vp_graph_build(const struct vp_model *m, const struct vp_plan *p,
    struct vp_graph *g);
/* The same with `blocks` transformer blocks (the fast path lowers two and
 * three and extrapolates); persistent terms are the real stage's. */
int vp_graph_build_blocks(const struct vp_model *m, const struct vp_plan *p,
    uint64_t blocks, struct vp_graph *g);
uint64_t vp_stage_blocks(uint64_t layers, unsigned pp, unsigned stage);
/* The resolution a plan runs a layer-graph model (m->lg) at: --image, or
 * the model's. */
uint64_t vp_lgraph_image(const struct vp_model *m, const struct vp_plan *p);
void vp_graph_free(struct vp_graph *g);

#endif
