/*
 * graph.c — lowering a model and plan to the ops of one micro-batch (see
 * graph.h).
 *
 * Notation in comments: b micro-batch, s sequence, h hidden, a heads,
 * kv key/value heads, d head_dim, f ffn, V vocab; sizes are elements
 * unless "bytes" is said.  "saves X" means autograd keeps X alive until the
 * op's backward runs; a tensor saved by several ops is stored once.
 *
 * Sources for what each op saves: the derivatives.yaml of PyTorch
 * (mm/addmm save both operands' counterparts, softmax saves its result,
 * SiLU/GELU their input, native_layer_norm input+mean+rstd, mul saves the
 * other operand when it requires no grad, CUDA native_dropout a bool mask,
 * CPU dropout an input-dtype noise tensor) and the Hugging Face modeling
 * files (Llama, GPT-2, BERT as of v4.40; what later releases changed is
 * hf_changes in model.c, which the traits carry here).
 */
#include "graph.h"

#include "lgraph.h"

#include "finetune.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define X(e, s) s,
const char *const vp_cat_names[VP_CAT_COUNT] = { VP_CAT_LIST(X) };
#undef X

/* Compute-intensive ops one compiled region can hold: a block's seven
 * linears, their LoRA A and B, and attention. */
#define VP_REGION_MAXCI 32

/* Zamba2's distinct shared blocks the lowering tracks (vp_model_validate
 * refuses more). */
#define VP_ZAMBA2_MAX_MEM 8

/* Lowering context: dimensions local to this rank, dtypes, flags. */
struct lctx {
	struct vp_graph *g;
	const struct vp_model *m;
	const struct vp_plan *p;
	uint64_t b, s, h, a, kv, d, f, V;	/* a, kv, f, V per TP rank */
	uint64_t dv;		/* value head dim: MLA's v_head_dim, else d */
	enum vp_dtype w;	/* weight storage dtype */
	enum vp_dtype c;	/* compute (matmul) dtype */
	enum vp_dtype r;	/* residual stream dtype */
	enum vp_dtype gd;	/* gradient dtype */
	bool autocast;
	bool cpu;
	double drop;		/* dropout probability */
	uint32_t layer;		/* current block, 0 = outside */
	bool torch113;		/* PyTorch 1.x saved-tensor rules (--torch) */
	uint64_t wmult;		/* weight matrices per linear call (experts) */
	uint16_t pieces;	/* tensors made now stand for this many
				 * per-expert ones (moe: experts looped) */
	uint64_t tp;		/* tensor-parallel degree */
	bool sp;		/* sequence parallel (Megatron): norm/dropout
				 * regions sharded along the sequence */
	uint64_t s_kv;		/* key length seen by attention (full seq) */
	bool sharded_weights;	/* ZeRO-3 / FSDP full or hybrid */
	bool fsdp_params16;	/* FSDP full/hybrid: units gathered in the
				 * compute dtype (MixedPrecision) */
	uint64_t global_layer;	/* index of the block in the whole model */
	bool fp8;		/* Transformer Engine fp8 linears */
	enum vp_float8 float8;	/* torchao float8 block linears */
	bool frozen;		/* LoRA: base weights take no gradient */
	bool flat_grads;	/* FSDP1 LoRA, use_orig_params: the blocks'
				 * base weights take gradients too */
	int32_t embed_op;	/* the token embedding lookup, -1 = none */
	int32_t wgrad_op;	/* the last op that made a weight gradient */
	bool wgrad_view;	/* ... and hands it over as a view sharing
				 * the storage of another tensor */
	struct vp_family_info fam;	/* what the family's code does */
	/*
	 * A torch.compile region being lowered (--compile: a block;
	 * --compile-loss: the loss): its first op and tensor, and its compute-intensive ops
	 * (matmuls and attention kernels, which Inductor does not fuse and
	 * the partitioner never recomputes), for inductor_region.
	 */
	bool inductor;
	size_t region_op0, region_t0;
	size_t ci_op[VP_REGION_MAXCI];
	bool ci_cast[VP_REGION_MAXCI];	/* reads casts of its inputs */
	unsigned nci;
	int32_t rin[VP_REGION_MAXCI];	/* region inputs it saves */
	unsigned nrin;
	/* The current block's gated product (mlp_block): its op and the
	 * gate's output, -1 = none. */
	int32_t gated_op, gated_gate;
	/* The attention masks of a model with local layers (layer_masks):
	 * the causal and the sliding-window one, -1 = none. */
	int32_t mask_full, mask_local;
	/* ModernBERT's cos and sin tables of its global [0] and local [1]
	 * layers (modernbert_rope_tables), -1 = none. */
	int32_t rope_cs[2];
	/* DeBERTa's relative positions (s, s) and LayerNormed relative
	 * embeddings (deberta_encoder_tensors), -1 = none. */
	int32_t deb_relpos, deb_rel;
	/* An encoder-decoder's decoder output and its scaled copy, which
	 * T5ForConditionalGeneration.forward holds (seq2seq_head). */
	int32_t s2s_held[2];
	/* A vision transformer's pixel values (vit_embeddings), -1 = none. */
	int32_t vis_px;
	/* Falcon's eager attention weights, which the block returns and
	 * the model's `outputs` holds through the next block: this block's
	 * and the one before's, -1 = none. */
	int32_t probs_held, probs_prev;
	/* Zamba2 (zamba2_model_tensors): the clone of the embeddings the
	 * hybrid blocks concatenate, the shared attention's cos and sin,
	 * -1 = none; each shared block's autocast weight copies (q, k, v,
	 * o, gate_up (Zamba's gate), down, Zamba's up), made by its first
	 * call and used by the others. */
	int32_t z_orig, z_cs;
	int32_t z_wc[VP_ZAMBA2_MAX_MEM][7];
};

/*
 * Megatron's split of each linear under tensor parallelism: column-parallel
 * layers shard their output features (their input is the replicated, or
 * with SP the all-gathered, activation); row-parallel layers shard their
 * input features and all-reduce (or with SP reduce-scatter) their output.
 */
enum lin_kind { LIN_LOCAL, LIN_COL, LIN_ROW };
static const enum lin_kind role_split[VP_ROLE_COUNT] = {
	[VP_ROLE_Q] = LIN_COL, [VP_ROLE_K] = LIN_COL, [VP_ROLE_V] = LIN_COL,
	[VP_ROLE_QKV] = LIN_COL, [VP_ROLE_GATE] = LIN_COL,
	[VP_ROLE_UP] = LIN_COL, [VP_ROLE_FC] = LIN_COL,
	[VP_ROLE_O] = LIN_ROW, [VP_ROLE_DOWN] = LIN_ROW,
};

/*
 * A linear layer as the lowering sees it: its module name (the op's name),
 * the LoRA targets it answers to (and so whether bitsandbytes quantizes
 * it) and its tensor-parallel split.  A block's linears come from the
 * family's row (block_lin); the heads', router's and adapters' are below.
 */
struct lin {
	const char *name;
	unsigned lora_bits;
	enum lin_kind kind;
};
static const struct lin LIN_LM_HEAD = { "lm_head", 1u << VP_LORA_HEAD,
    LIN_COL };
static const struct lin LIN_HEAD = { "head", 0, LIN_COL };
static const struct lin LIN_MLM_DECODER = { "mlm decoder", 0, LIN_COL };
static const struct lin LIN_MLM_TRANSFORM = { "mlm transform", 0, LIN_LOCAL };
static const struct lin LIN_ROUTER = { "router", 0, LIN_LOCAL };
static const struct lin LIN_LORA_A = { "lora_A", 0, LIN_LOCAL };
static const struct lin LIN_LORA_B = { "lora_B", 0, LIN_LOCAL };

static uint64_t
B(enum vp_dtype dt)
{
	return vp_dtype_bytes[dt];
}

static int32_t
tnew(struct lctx *x, uint64_t elems, enum vp_dtype dt, enum vp_cat cat,
    const char *name, bool rg)
{
	struct vp_graph *g = x->g;
	struct vp_tensor *t;

	if (g->nt == g->capt) {
		g->capt = g->capt ? g->capt * 2 : 256;
		g->t = xreallocarray(g->t, g->capt, sizeof *g->t);
	}
	t = &g->t[g->nt];
	t->bytes = vp_mul_sat(elems, B(dt));
	t->name = name;
	t->layer = x->layer;
	t->cat = (uint8_t)cat;
	t->dtype = (uint8_t)dt;
	t->requires_grad = rg;
	t->pieces = x->pieces;
	return (int32_t)g->nt++;
}

static struct vp_op *
opnew(struct lctx *x, const char *name)
{
	struct vp_graph *g = x->g;
	struct vp_op *o;
	int i;

	if (g->nop == g->capop) {
		g->capop = g->capop ? g->capop * 2 : 256;
		g->op = xreallocarray(g->op, g->capop, sizeof *g->op);
	}
	o = &g->op[g->nop++];
	memset(o, 0, sizeof *o);
	o->name = name;
	o->layer = x->layer;
	for (i = 0; i < VP_OP_MAXIO; i++)
		o->in[i] = o->out[i] = o->saved[i] = -1;
	for (i = 0; i < VP_OP_MAXKEEP; i++)
		o->keep[i] = -1;
	return o;
}

/*
 * Add tensor t to an op's in/out/saved list, once.  VP_OP_MAXIO is the
 * most any builder needs (sdpa saves q, k, v, lse and its output; a
 * linear creates at most its output, an autocast weight copy and an fp8
 * input): a seventh is a bug in a builder, not something to drop.
 */
static void
add_io(int32_t *v, int32_t t)
{
	int i;

	assert(t >= 0);
	for (i = 0; i < VP_OP_MAXIO; i++)
		if (v[i] < 0 || v[i] == t) {
			v[i] = t;
			return;
		}
	assert(!"more than VP_OP_MAXIO tensors on one op");
}

#define IN(o, t) add_io((o)->in, (t))
#define OUT(o, t) add_io((o)->out, (t))
#define SAVE(o, t) add_io((o)->saved, (t))

/*
 * Tensor t, an output of op o, is what an op on torchtitan's op-level
 * save list returns (--recompute op): the bit of its place in out[]
 * (lower_ops keeps the bits only where the policy saves).
 */
static void
sac_out(struct vp_op *o, int32_t t)
{
	int i;

	for (i = 0; i < VP_OP_MAXIO; i++)
		if (o->out[i] == t) {
			o->sac |= (uint8_t)(1u << i);
			return;
		}
	assert(!"sac_out: not an output of the op");
}

static enum vp_dtype
dt_of(const struct lctx *x, int32_t t)
{
	assert(t >= 0 && (size_t)t < x->g->nt);
	return (enum vp_dtype)x->g->t[t].dtype;
}

static bool
rg_of(const struct lctx *x, int32_t t)
{
	assert(t >= 0 && (size_t)t < x->g->nt);
	return x->g->t[t].requires_grad;
}

static uint64_t
elems_of(const struct lctx *x, int32_t t)
{
	return x->g->t[t].bytes / B(dt_of(x, t));
}

/* Promotion of two floating dtypes (fp32 wins; bf16 vs fp16 → fp32). */
static enum vp_dtype
promote(enum vp_dtype a, enum vp_dtype b)
{
	if (a == b)
		return a;
	return VP_FP32;
}

/* An elementwise op: one new tensor of n elements in dt from inputs. */
static int32_t
ew(struct lctx *x, const char *name, uint64_t n, enum vp_dtype dt,
    int32_t in1, int32_t in2, int32_t save1, int32_t save2, enum vp_cat cat)
{
	struct vp_op *o = opnew(x, name);
	bool rg = (in1 >= 0 && rg_of(x, in1)) || (in2 >= 0 && rg_of(x, in2));
	int32_t t;

	if (in1 >= 0) IN(o, in1);
	if (in2 >= 0) IN(o, in2);
	t = tnew(x, n, dt, cat, name, rg);
	OUT(o, t);
	/*
	 * A binary op on the CPU whose operands' dtypes differ from the
	 * result's (bf16 scores + an fp32 mask, a bf16 branch added to the
	 * fp32 residual): TensorIterator promotes an input by copying it to
	 * the common dtype first (compute_types, "creating temporaries of
	 * the correct dtype"), which lives while the op runs.  CUDA kernels
	 * cast as they load, with no copy.  Measured: a Llama's eager mask
	 * add under CPU autocast holds the scores twice (bf16 and fp32).
	 */
	if (x->cpu && in1 >= 0 && in2 >= 0) {
		const int32_t ins[2] = { in1, in2 };
		int i;

		for (i = 0; i < 2; i++)
			if (dt_of(x, ins[i]) != dt && (dt_of(x, ins[i]) ==
			    VP_FP32 || dt_of(x, ins[i]) == VP_BF16 ||
			    dt_of(x, ins[i]) == VP_FP16))
				o->fwd_tmp = vp_add_sat(o->fwd_tmp,
				    vp_mul_sat(elems_of(x, ins[i]), B(dt)));
	}
	/* Autograd records nothing for an op no gradient flows through. */
	if (rg && save1 >= 0) SAVE(o, save1);
	if (rg && save2 >= 0) SAVE(o, save2);
	return t;
}

/*
 * A product of two tensors (mul, matmul): each operand is saved for the
 * other's gradient, so a is kept only if b requires grad and vice versa
 * (frozen LoRA bases make the difference).
 */
static int32_t
ew2(struct lctx *x, const char *name, uint64_t n, enum vp_dtype dt,
    int32_t a, int32_t b, enum vp_cat cat)
{
	return ew(x, name, n, dt, a, b, rg_of(x, b) ? a : -1,
	    rg_of(x, a) ? b : -1, cat);
}

/* The last op saves its own result (softmax, tanh, rsqrt, ReLU...), when
 * a gradient will flow through it. */
static void
save_result(struct lctx *x, int32_t t)
{
	if (rg_of(x, t))
		x->g->op[x->g->nop - 1].saved[0] = t;
}

/* x.to(dt): a copy when the dtype changes, the same tensor otherwise. */
static int32_t
cast(struct lctx *x, int32_t t, enum vp_dtype dt, enum vp_cat cat)
{
	if (dt_of(x, t) == dt)
		return t;
	/* In a compiled region the graph's common-subexpression pass
	 * (AOTAutograd's fx_graph_cse) makes one cast of t to dt of the
	 * several eager code makes (autocast's q, k and v inputs). */
	if (x->inductor) {
		size_t i;

		for (i = x->region_op0; i < x->g->nop; i++) {
			const struct vp_op *o = &x->g->op[i];

			if (strcmp(o->name, "to") == 0 && o->in[0] == t &&
			    dt_of(x, o->out[0]) == dt)
				return o->out[0];
		}
	}
	return ew(x, "to", elems_of(x, t), dt, t, -1, -1, -1, cat);
}

/* Mark the op just made as compute-intensive inside a compiled region. */
static void
region_ci(struct lctx *x)
{
	if (!x->inductor)
		return;
	assert(x->nci < VP_REGION_MAXCI);
	x->ci_cast[x->nci] = false;
	x->ci_op[x->nci++] = x->g->nop - 1;
}

/*
 * A compute-intensive op whose kernel reads casts of its inputs, not the
 * inputs: torchao's float8 linear, whose _scaled_mm reads the fp8 casts
 * that the block's graph makes from the high-precision input and weight.
 * Its output is banned from recomputation; its input is an ordinary
 * pointwise result the partitioner may recompute (region_end), whose
 * size stays (its gradient is the backward _scaled_mm's output).
 * Measured (TORCH_LOGS=aot_graphs, PyTorch 2.13, torchao 0.18.0,
 * tensorwise, a Llama block compiled after torchtitan's converter): the
 * normed inputs of q, k, v, gate and up and every fp8 cast are recomputed
 * in backward from the block's input, the saved rsqrt and the saved
 * outputs of o, gate and up.
 */
static void
region_ci_cast(struct lctx *x)
{
	if (!x->inductor)
		return;
	region_ci(x);
	x->ci_cast[x->nci - 1] = true;
}

/*
 * A linear layer y = x W^T (+ bias), din → dout, on the last dimension of
 * x (n rows).  Saves its input (for the weight gradient) and its weight
 * (a parameter, except under autocast where the low-precision copy is a
 * new tensor held by autocast's cache and by the op).  Under autocast the
 * input is cast to the compute dtype first, once per call: q, k and v
 * projections of one normed input make three copies.
 */
/* A block's linear in its family's spelling. */
static struct lin
block_lin(const struct lctx *x, enum vp_role role)
{
	struct lin l = { x->fam.lin[role], vp_role_lora_bits(role),
	    role_split[role] };

	/* A row must name every linear its block builder uses. */
	assert(l.name != NULL);
	return l;
}

static int32_t dropout_p(struct lctx *x, const char *name, int32_t in,
    double p);

/*
 * torchao's float8 linear (torchao v0.18.0, float8/float8_linear.py,
 * matmul_with_hp_or_float8_args), eager, for n_in input, n_w weight and
 * n_out output elements: forward saves the high-precision input and
 * weight (as nn.Linear does, so no autocast weight copy: the fp32 weight
 * is cast to fp8 directly) and makes, one after another, each operand's
 * fp8 cast.  A cast (hp_tensor_to_float8_dynamic: abs and max for the
 * scale, then _ToFloat8ConstrFunc: x.to(float32) * scale, clamp, .to(fp8))
 * holds 9 bytes per element at its peak (the scaled fp32 tensor, its
 * clamp and the fp8 result; 8 during the multiply) and leaves 1.  Forward
 * casts the input, then the weight, then _scaled_mm makes the output with
 * both fp8 operands alive.  Backward casts the output gradient, the
 * weight, multiplies (the fp8 weight transposed is row-major, so
 * float8_mm copies it column-major), casts the output gradient again (the
 * other axis) and the input, then multiplies with copies of both into the
 * layouts _scaled_mm takes; the casts' results live until the function
 * returns.  With the weights all-gathered in fp8 (--float8-all-gather)
 * the weight arrives cast.  Measured on the CPU (PyTorch 2.13, torchao
 * 0.18.0, tensorwise): forward peaks of 9 n_in and n_in + 9 n_w to 4
 * bytes; the CPU _scaled_mm adds an fp32 epilogue CUDA's does not.
 * Rowwise casts the same way with per-row scales (vectors, left out).
 * Returns the forward workspace beside the output (y_bytes, which does
 * not exist during the casts) and sets *bwd to the backward's beside the
 * gradients it makes.
 *
 * In a compiled block (--compile, torchtitan's apply_compile after its
 * float8 converter) Dynamo traces the casts into the block's graph as
 * aten ops: the amax is a reduction (its output, a scale, is a scalar
 * or, rowwise, a vector) and the rest of the cast (x.to(float32) * scale,
 * clamp, .to(float8)) one pointwise chain, which Inductor fuses into one
 * kernel that reads the high-precision tensor and writes the fp8 one:
 * the fp32 product and its clamp are never materialized (region_end's
 * rule for pointwise intermediates), so a cast holds its 1-byte result
 * alone (cast_peak 1 instead of 9).  The layout copies _scaled_mm takes
 * stay (Inductor may write the cast in that layout directly: then this
 * overstates by those copies).  The saved set is the partitioner's:
 * _scaled_mm reads the casts, so the high-precision input is a pointwise
 * result it recomputes in backward from the block's input, and the
 * linear's output is kept (region_ci_cast; measured, TORCH_LOGS=
 * aot_graphs and the CPU's peak at the loss).  The CPU's _scaled_mm
 * keeps fp32 intermediates CUDA's does not: its transients stay read.
 */
static uint64_t
float8_tmp(uint64_t n_in, uint64_t n_w, uint64_t n_out, uint64_t y_bytes,
    bool w_cast, bool compiled, uint64_t *bwd)
{
	uint64_t k = compiled ? 1 : 9;
	uint64_t wc = w_cast ? k * n_w : 0, f, b;

	f = k * n_in > n_in + wc ? k * n_in : n_in + wc;
	f = f > y_bytes ? f - y_bytes : 0;
	if (f < n_in + n_w)
		f = n_in + n_w;
	b = k * n_out;
	if (n_out + wc > b) b = n_out + wc;
	if (n_out + 2 * n_w > b) b = n_out + 2 * n_w;
	if ((k + 1) * n_out + n_w > b) b = (k + 1) * n_out + n_w;
	if (2 * n_out + n_w + k * n_in > b) b = 2 * n_out + n_w + k * n_in;
	if (3 * n_out + n_w + 2 * n_in > b) b = 3 * n_out + n_w + 2 * n_in;
	*bwd = b;
	return f;
}

/*
 * torchao's NF4 linear (torchtune's QLoRA: LoRALinear's base with
 * quantize_base and FrozenNF4Linear, torchao 0.18.0
 * quantize_/workflows/nf4/nf4_tensor.py): linear_nf4 is the autograd
 * function LinearNF4, which saves only the NF4 weight (a parameter) and
 * runs F.linear(input, weight.to(input.dtype)) forward and
 * grad_output @ weight.to(grad_output.dtype) backward, so the input is
 * not saved (bitsandbytes' MatMul4Bit up to 0.44 keeps it).  The
 * dequantization (NF4Tensor.get_original_weight) is eager torch code
 * that, for n elements of a weight of wb bytes each, unpacks both nibbles
 * to int64 (8 n bytes), looks them up in the NF4 table (n wb), scales
 * them (n wb, with a copy of the expanded scalers alive one half at a
 * time) and stacks the halves (n wb) while everything before is alive,
 * with the dequantized scalers (n / 64 elements): 8 n + 3 n wb + n wb / 64
 * at its peak, before the matmul's result exists, and n wb (the weight)
 * beside it.  Measured on the CPU (PyTorch 2.13, torchao 0.18.0, bf16):
 * 14.031 n for a 1024 x 1024 weight, forward and backward alike.
 * Compiled (--compile; torchtune compiles each layer), the dequantization
 * traces into the block's graph as pointwise ops on the NF4's inner
 * tensors; Inductor fuses them into one kernel writing the bf16 weight,
 * and the partitioner saves that weight for the backward's matmul
 * (the joint graph's CSE makes the backward's dequantization the
 * forward's; TORCH_LOGS=aot_graphs shows every block projection's
 * dequantized weight among the forward graph's saved outputs): a region
 * activation of n wb that no transient precedes.
 */
static uint64_t
nf4_dequant(uint64_t n, unsigned wb)
{
	return vp_add_sat(vp_mul_sat(n, 8 + 3 * (uint64_t)wb),
	    vp_mul_sat((n + 63) / 64, wb));
}

/*
 * The core of a linear layer with weights stored in wdt: the autocast
 * casts, the SP gather, what is saved and the weight gradient.
 */
static int32_t
linear_w(struct lctx *x, struct lin l, int32_t in, uint64_t din,
    uint64_t dout, bool bias, bool trainable, enum vp_cat outcat,
    enum vp_dtype wdt, enum vp_dtype gdt)
{
	uint64_t n = elems_of(x, in) / din, nout = n;
	uint64_t wel = vp_mul_sat(din * dout + (bias ? dout : 0), x->wmult);
	/* bitsandbytes replaces the block projections, the linears LoRA
	 * can target.  Its Linear4bit casts the input to its compute dtype
	 * (ours) whatever autocast says, and the output back to the
	 * input's dtype (bitsandbytes/nn/modules.py, Linear4bit.forward). */
	bool quant = x->p->quant != VP_QUANT_NONE &&
	    (l.lora_bits & VP_LORA_ALL_LINEAR) != 0;
	/* torchtune's QLoRA base is torchao's NF4Tensor instead
	 * (nf4_dequant): no casts, the model trains in its dtype. */
	bool tao = quant && x->p->quant_lib == VP_QLIB_TORCHAO;
	bool bnb = quant && !tao;
	enum vp_dtype cdt = x->autocast || bnb ? x->c : wdt;
	int32_t xin = x->autocast || bnb ? cast(x, in, x->c, VP_CAT_ACT) :
	    in, wc = -1;
	/* Experts (wmult > 1) are not split by TP. */
	enum lin_kind kind = x->wmult == 1 ? l.kind : LIN_LOCAL;
	/* torchtitan's float8 converter swaps every linear of the blocks
	 * whose dimensions are multiples of 16 (its module filter; the
	 * output projection is filtered out by name). */
	bool f8 = x->float8 != VP_FLOAT8_NONE && trainable && !quant &&
	    x->wmult == 1 && (l.lora_bits & VP_LORA_ALL_LINEAR) != 0 &&
	    din % 16 == 0 && dout % 16 == 0;
	/* Experts run in a loop make their per-call temporaries one
	 * expert's weight at a time. */
	uint64_t one_at_a_time = x->pieces > 1 ? x->wmult : 1;
	struct vp_op *o;
	int32_t y;
	/*
	 * Autocast's copy of an fp32 weight.  With sharded weights (ZeRO-3,
	 * FSDP full/hybrid) the unit runs from its gathered 16-bit buffer:
	 * no copies.  Autocast caches only the copies of leaves that
	 * require grad (autocast_mode.cpp, cached_cast): a frozen weight's
	 * copy (a head upcast by --kbit-prep) is made per call and lives
	 * while the op keeps it for the input's gradient.
	 */
	/* In a compiled region the cast is an op of the graph, not a lookup
	 * in autocast's cache: the copy lives while the region saves it
	 * (measured: none is held through the loss under --recompute full). */
	if (x->autocast && wdt != x->c && !x->sharded_weights && !quant &&
	    !f8)
		wc = tnew(x, wel, x->c, trainable && !x->inductor ?
		    VP_CAT_CAST : outcat, x->inductor ? "compiled weight cast" :
		    trainable ? "autocast weight" : "autocast weight (frozen)",
		    false);
	/* Compiled, the NF4 weight's dequantization is a fused kernel of
	 * the block's graph whose bf16 result the backward's matmul reads:
	 * the partitioner saves it (nf4_dequant). */
	if (tao && x->inductor && rg_of(x, xin))
		wc = tnew(x, wel, wdt, outcat, "compiled NF4 dequant", false);
	o = opnew(x, l.name);
	if (f8)
		region_ci_cast(x);
	else
		region_ci(x);
	IN(o, xin);
	if (wc >= 0) {
		OUT(o, wc);
		if (trainable || rg_of(x, xin))
			SAVE(o, wc);
	}
	/* SP: a column-parallel layer all-gathers its sequence-sharded
	 * input (a transient, gathered again in backward) and saves the
	 * shard. */
	if (kind == LIN_COL && x->sp && x->tp > 1) {
		nout = n * x->tp;
		o->fwd_tmp = vp_mul_sat(nout * din, B(dt_of(x, xin)));
		o->bwd_tmp = o->fwd_tmp;
	}
	/* bitsandbytes dequantizes the weight to 16 bit for the matmul,
	 * in forward and again in backward. */
	if (bnb) {
		o->fwd_tmp += vp_mul_sat(wel / one_at_a_time, B(x->c));
		o->bwd_tmp += vp_mul_sat(wel / one_at_a_time, B(x->c));
	}
	y = tnew(x, vp_mul_sat(nout, dout), cdt, outcat, l.name,
	    trainable || rg_of(x, xin));
	OUT(o, y);
	if (tao && !x->inductor) {
		uint64_t dq = nf4_dequant(wel, B(wdt)), w16 = wel * B(wdt);
		uint64_t gx = rg_of(x, xin) ? x->g->t[xin].bytes : 0;
		uint64_t yb = x->g->t[y].bytes;

		o->fwd_tmp = vp_add_sat(o->fwd_tmp, dq > yb + w16 ? dq - yb :
		    w16);
		o->bwd_tmp = vp_add_sat(o->bwd_tmp, dq > gx + w16 ? dq - gx :
		    w16);
	}
	if (f8) {
		uint64_t b8, f = float8_tmp(vp_mul_sat(nout, din), din * dout,
		    vp_mul_sat(nout, dout), x->g->t[y].bytes,
		    !x->p->float8_all_gather, x->inductor, &b8);

		o->fwd_tmp = vp_add_sat(o->fwd_tmp, f);
		o->bwd_tmp = vp_add_sat(o->bwd_tmp, b8);
	}
	/*
	 * F.linear without a bias is aten.mm on the flattened input (with
	 * one, aten.addmm, which torchtitan's op list does not name); its
	 * result is y's storage.  bitsandbytes' and the experts' matmuls are
	 * not this op (rules.c refuses --recompute op with either).
	 */
	if (!bias && !quant && x->wmult == 1) {
		o->sac_mm = true;
		sac_out(o, y);
	}
	/* bitsandbytes' MatMul4Bit keeps its input (ctx.tensors = (A, B))
	 * whenever a gradient flows, though backward only needs B. */
	if (bnb && !trainable && rg_of(x, xin))
		SAVE(o, xin);
	if (trainable) {
		if (x->fp8) {
			/* Transformer Engine keeps the fp8 cast of the input
			 * (1 byte per value) for dW. */
			int32_t q8 = tnew(x, elems_of(x, xin), VP_BOOL,
			    VP_CAT_ACT, "fp8 input", false);
			OUT(o, q8);
			SAVE(o, q8);
		} else {
			SAVE(o, xin);	/* needed for dW */
		}
		o->wgrad_bytes = vp_mul_sat(wel, B(gdt));
		o->wgrad_count = (uint32_t)x->wmult;
		if (bias)
			o->wgrad_bias_bytes = vp_mul_sat(dout * x->wmult,
			    B(gdt));
		/* Autocast: dW comes out in 16 bit, then is cast to fp32.
		 * FSDP's mixed precision runs the unit from 16-bit
		 * parameters: dW is theirs, cast when reduced (mem.c). */
		if (x->autocast && wdt != x->c && !x->fsdp_params16)
			o->wgrad_tmp = vp_mul_sat(wel / one_at_a_time, B(x->c));
		/* F.linear multiplies by weight.t(): dW leaves through
		 * TBackward0 as a view of the matmul's result, unless the
		 * autocast cast's backward (ToCopyBackward0) copies it. */
		x->wgrad_op = (int32_t)(x->g->nop - 1);
		x->wgrad_view = !(x->autocast && wdt != x->c) ||
		    x->fsdp_params16;
	}
	if (bnb)
		y = cast(x, y, dt_of(x, in), outcat);
	/* SP: a row-parallel layer's full output is reduce-scattered
	 * (_c10d_functional.reduce_scatter_tensor, on the op list). */
	if (kind == LIN_ROW && x->sp && x->tp > 1) {
		y = ew(x, "reduce-scatter", elems_of(x, y) / x->tp, dt_of(x, y),
		    y, -1, -1, -1, outcat);
		sac_out(&x->g->op[x->g->nop - 1], y);
		/* A collective: never recomputed, never fused. */
		region_ci(x);
	}
	return y;
}

/*
 * A linear layer of the model.  With LoRA every base weight is frozen (no
 * input saved for dW, no gradient) and each targeted layer adds PEFT's
 * path: the input cast to the adapter dtype, LoRA dropout, A (in -> r,
 * saves its input), B (r -> out, saves the r-wide input), the scaling,
 * and the sum with the base output.
 */
static int32_t
linear(struct lctx *x, struct lin l, int32_t in, uint64_t din,
    uint64_t dout, bool bias, bool trainable, enum vp_cat outcat)
{
	bool lora = x->p->lora_rank > 0;
	int32_t y, a, xl;
	enum vp_dtype ad = x->p->lora_dtype;
	uint64_t r = x->p->lora_rank;

	y = linear_w(x, l, in, din, dout, bias, trainable && !x->frozen &&
	    !(x->p->quant != VP_QUANT_NONE &&
	    (l.lora_bits & VP_LORA_ALL_LINEAR) != 0), outcat, x->w, x->gd);
	if (!lora || !(l.lora_bits & x->p->lora_targets))
		return y;
	xl = cast(x, in, ad, VP_CAT_ACT);
	xl = dropout_p(x, "lora dropout", xl, x->p->lora_dropout);
	a = linear_w(x, LIN_LORA_A, xl, din, r, false, true, VP_CAT_ACT, ad,
	    ad);
	a = linear_w(x, LIN_LORA_B, a, r, dout, false, true, VP_CAT_ACT, ad,
	    ad);
	a = ew(x, "lora scale", elems_of(x, a), dt_of(x, a), a, -1, -1, -1,
	    VP_CAT_ACT);
	a = ew(x, "lora add", elems_of(x, y), promote(dt_of(x, y),
	    dt_of(x, a)), y, a, -1, -1, outcat);
	/* PEFT casts the sum back to the base layer's dtype
	 * (`result.to(torch_result_dtype)`, peft/tuners/lora/layer.py). */
	return cast(x, a, dt_of(x, y), outcat);
}

/* Dropout: CUDA saves a 1-byte mask; CPU an input-dtype noise tensor. */
static int32_t
dropout_p(struct lctx *x, const char *name, int32_t in, double prob)
{
	uint64_t n = elems_of(x, in);
	struct vp_op *o;
	int32_t mask, y;

	if (prob <= 0)
		return in;
	o = opnew(x, name);
	IN(o, in);
	mask = tnew(x, n, x->cpu ? dt_of(x, in) : VP_BOOL, VP_CAT_ACT,
	    "dropout mask", false);
	OUT(o, mask);
	SAVE(o, mask);
	y = tnew(x, n, dt_of(x, in), VP_CAT_ACT, name, rg_of(x, in));
	OUT(o, y);
	return y;
}

static int32_t
dropout(struct lctx *x, const char *name, int32_t in)
{
	return dropout_p(x, name, in, x->drop);
}

/*
 * x * rsqrt(mean(x^2) + eps) over `rows` rows of `width`, in fp32: the
 * weightless part of every RMSNorm (Llama's, Gemma's (1 + w) one) and
 * all of Llama 4's L2 norm of q and k (Llama4TextL2Norm).  The input may
 * be a view of part of a tensor (MLA's kv_a_layernorm on the latent
 * columns of kv_a_proj_with_mqa's output): to(fp32) then copies that
 * part only, or is the view itself, which keeps the whole tensor when
 * saved.
 */
static int32_t
rms_core(struct lctx *x, int32_t in, uint64_t rows, uint64_t width)
{
	uint64_t n = rows * width;
	int32_t x32, sq, var, ve, rs;

	if (n == elems_of(x, in))
		x32 = cast(x, in, VP_FP32, VP_CAT_ACT);
	else
		x32 = dt_of(x, in) == VP_FP32 ? in : ew(x, "to", n, VP_FP32,
		    in, -1, -1, -1, VP_CAT_ACT);
	sq = ew(x, "rms pow", n, VP_FP32, x32, -1, x32, -1, VP_CAT_ACT);
	/* PyTorch 1.13's MeanBackward1 keeps its input (measured); 2.x
	 * keeps only the sizes. */
	var = ew(x, "rms mean", rows, VP_FP32, sq, -1, x->torch113 ? sq : -1,
	    -1, VP_CAT_ACT);
	ve = ew(x, "rms add", rows, VP_FP32, var, -1, -1, -1, VP_CAT_ACT);
	rs = ew(x, "rms rsqrt", rows, VP_FP32, ve, -1, -1, -1, VP_CAT_ACT);
	save_result(x, rs);
	return ew(x, "rms mul", n, VP_FP32, x32, rs, x32, rs, VP_CAT_ACT);
}

/* rms_core, cast back to the input's dtype. */
static int32_t
rms_normalize(struct lctx *x, int32_t in, uint64_t rows, uint64_t width)
{
	return cast(x, rms_core(x, in, rows, width), dt_of(x, in),
	    VP_CAT_ACT);
}

/*
 * Normalisation of n = b*s rows of width h.
 * LayerNorm (native_layer_norm): saves input, mean and rstd (fp32, one per
 * row); under CUDA autocast it runs in fp32 (autocast's fp32 list).
 * RMSNorm (HF LlamaRMSNorm, written in Python): to(fp32), pow(2) saves its
 * input, mean, +eps, rsqrt saves its result, mul saves both operands,
 * to(input dtype), weight * x saves the normalised x.
 */
/*
 * A norm's weight applied in fp32 to its fp32 normalized rows hn (width
 * elements each), then cast back to idt: the product keeps hn only for
 * the weight's gradient (width elements in the gradient dtype), and its
 * backward makes an fp32 temporary of hn's size.
 */
static int32_t
fp32_weight_mul(struct lctx *x, const char *name, int32_t hn, uint64_t width,
    enum vp_dtype idt)
{
	uint64_t n = elems_of(x, hn);
	struct vp_op *o;
	int32_t y;

	o = opnew(x, name);
	IN(o, hn);
	y = tnew(x, n, VP_FP32, VP_CAT_ACT, name, !x->frozen || rg_of(x, hn));
	OUT(o, y);
	if (!x->frozen) {
		SAVE(o, hn);
		o->wgrad_bytes = vp_mul_sat(width, B(x->gd));
	}
	o->bwd_tmp = vp_mul_sat(n, B(VP_FP32));
	return cast(x, y, idt, VP_CAT_ACT);
}

/*
 * Gemma's RMSNorm (Gemma3RMSNorm.forward, transformers 5.24):
 * output = _norm(x.float()) * (1.0 + weight.float()), then
 * .type_as(x).  The pow, the mean and the rsqrt are Llama's; the product
 * with (1 + weight) is in fp32, so the fp32 normalized tensor is what it
 * keeps for the weight's gradient, and the cast back follows it.
 */
static int32_t
norm_1p(struct lctx *x, const char *name, int32_t in, uint64_t width)
{
	uint64_t n = elems_of(x, in), rows = n / width;
	enum vp_dtype idt = dt_of(x, in);
	int32_t hn;

	hn = rms_core(x, in, rows, width);
	return fp32_weight_mul(x, name, hn, width, idt);
}

/*
 * CohereLayerNorm.forward (transformers 5.24): x.to(fp32), its mean, x -
 * mean (which pow(2) saves), the variance's mean, + eps, rsqrt (saves its
 * result), (x - mean) made again and times rstd (the mul saves both),
 * weight.to(fp32) * that (the product kept for the weight's gradient),
 * .to(input dtype).
 */
static int32_t
cohere_ln(struct lctx *x, const char *name, int32_t in, uint64_t rows,
    uint64_t width)
{
	uint64_t n = rows * width;
	enum vp_dtype idt = dt_of(x, in);
	int32_t x32, mu, c, sq, var, ve, rs, hn;

	x32 = cast(x, in, VP_FP32, VP_CAT_ACT);
	mu = ew(x, "cln mean", rows, VP_FP32, x32, -1, -1, -1, VP_CAT_ACT);
	c = ew(x, "cln sub", n, VP_FP32, x32, mu, -1, -1, VP_CAT_ACT);
	sq = ew(x, "cln pow", n, VP_FP32, c, -1, c, -1, VP_CAT_ACT);
	var = ew(x, "cln var mean", rows, VP_FP32, sq, -1, x->torch113 ? sq :
	    -1, -1, VP_CAT_ACT);
	ve = ew(x, "cln add", rows, VP_FP32, var, -1, -1, -1, VP_CAT_ACT);
	rs = ew(x, "cln rsqrt", rows, VP_FP32, ve, -1, -1, -1, VP_CAT_ACT);
	save_result(x, rs);
	c = ew(x, "cln sub", n, VP_FP32, x32, mu, -1, -1, VP_CAT_ACT);
	hn = ew(x, "cln mul", n, VP_FP32, c, rs, c, rs, VP_CAT_ACT);
	return fp32_weight_mul(x, name, hn, width, idt);
}

static int32_t
norm_rows(struct lctx *x, const char *name, int32_t in, uint64_t rows,
    uint64_t width)
{
	uint64_t n = rows * width;
	enum vp_dtype idt = dt_of(x, in);
	struct vp_op *o;
	int32_t y;

	if (x->fam.cohere_ln)
		return cohere_ln(x, name, in, rows, width);
	if (x->m->norm == VP_NORM_LAYERNORM) {
		int32_t xin = in, mean, rstd;
		enum vp_dtype odt;

		if (x->autocast && !x->cpu)
			xin = cast(x, in, VP_FP32, VP_CAT_ACT);
		odt = promote(dt_of(x, xin), x->w);
		o = opnew(x, name);
		IN(o, xin);
		mean = tnew(x, rows, VP_FP32, VP_CAT_ACT, "ln mean", false);
		rstd = tnew(x, rows, VP_FP32, VP_CAT_ACT, "ln rstd", false);
		y = tnew(x, n, odt, VP_CAT_ACT, name, !x->frozen ||
		    rg_of(x, xin));
		OUT(o, y);
		OUT(o, mean);
		OUT(o, rstd);
		if (rg_of(x, y)) {
			SAVE(o, xin);
			SAVE(o, mean);
			SAVE(o, rstd);
		}
		if (!x->frozen) {
			/* gamma and beta */
			o->wgrad_bytes = vp_mul_sat(2 * width, B(x->gd));
			o->wgrad_bias_bytes = vp_mul_sat(width, B(x->gd));
		}
		/* Backward: dgamma/dbeta partial sums per row block. */
		o->bwd_tmp = vp_mul_sat(n, B(VP_FP32));
		return y;
	} else if (x->fam.norm_1p) {
		return norm_1p(x, name, in, width);
	} else {
		int32_t hc = rms_normalize(x, in, rows, width);

		o = opnew(x, name);
		IN(o, hc);
		y = tnew(x, n, promote(x->w, idt), VP_CAT_ACT, name,
		    !x->frozen || rg_of(x, hc));
		OUT(o, y);
		/* weight * x keeps x only for the weight's gradient. */
		if (!x->frozen) {
			SAVE(o, hc);
			o->wgrad_bytes = vp_mul_sat(width, B(x->gd));
		}
		/* Backward of weight*x: grad*x, then a sum over rows. */
		o->bwd_tmp = vp_mul_sat(n, B(dt_of(x, y)));
		return y;
	}
}

static int32_t
norm_w(struct lctx *x, const char *name, int32_t in, uint64_t width)
{
	return norm_rows(x, name, in, elems_of(x, in) / width, width);
}

/* A norm over the model width (the block and final norms). */
static int32_t
norm(struct lctx *x, const char *name, int32_t in)
{
	return norm_w(x, name, in, x->h);
}

/* Activation of the MLP on n elements; returns its output. */
static int32_t
activation(struct lctx *x, enum vp_act act, int32_t in)
{
	uint64_t n = elems_of(x, in);
	enum vp_dtype dt = dt_of(x, in);
	int32_t p3, inner, th, half, onep;

	switch (act) {
	case VP_ACT_RELU:
		/* ReLU saves its result. */
		{
			int32_t y = ew(x, "relu", n, dt, in, -1, -1, -1,
			    VP_CAT_ACT);
			save_result(x, y);
			return y;
		}
	case VP_ACT_RELU2:
		/* ReLUSquaredActivation (transformers' "relu2"): relu saves
		 * its result, torch.square (pow 2) its input, the same
		 * tensor; the square is new. */
		{
			int32_t y = ew(x, "relu", n, dt, in, -1, -1, -1,
			    VP_CAT_ACT);

			save_result(x, y);
			y = ew(x, "square", n, dt, y, -1, y, -1, VP_CAT_ACT);
			/* pow_backward: grad * (2 * x.pow(1)), the pow's
			 * copy and its double live until the product is
			 * made (measured: PowBackward0's pow and mul). */
			x->g->op[x->g->nop - 1].bwd_tmp = vp_mul_sat(2 * n,
			    B(dt));
			return y;
		}
	case VP_ACT_GELU_NEW:
		/*
		 * GPT-2's gelu_new in Python:
		 * 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))).  Saved: x (pow),
		 * tanh's result, 0.5*x and 1+tanh (the final mul's operands).
		 */
		p3 = ew(x, "gelu pow", n, dt, in, -1, in, -1, VP_CAT_ACT);
		p3 = ew(x, "gelu mul", n, dt, p3, -1, -1, -1, VP_CAT_ACT);
		inner = ew(x, "gelu add", n, dt, in, p3, -1, -1, VP_CAT_ACT);
		inner = ew(x, "gelu mul", n, dt, inner, -1, -1, -1, VP_CAT_ACT);
		th = ew(x, "gelu tanh", n, dt, inner, -1, -1, -1, VP_CAT_ACT);
		save_result(x, th);
		onep = ew(x, "gelu add", n, dt, th, -1, -1, -1, VP_CAT_ACT);
		half = ew(x, "gelu mul", n, dt, in, -1, -1, -1, VP_CAT_ACT);
		return ew(x, "gelu mul", n, dt, half, onep, half, onep,
		    VP_CAT_ACT);
	case VP_ACT_QUICK_GELU:
		/* CLIP's QuickGELUActivation: x * sigmoid(1.702 * x); the
		 * scalar mul saves nothing, sigmoid its result, the product
		 * both operands. */
		inner = ew(x, "quick gelu scale", n, dt, in, -1, -1, -1,
		    VP_CAT_ACT);
		th = ew(x, "quick gelu sigmoid", n, dt, inner, -1, -1, -1,
		    VP_CAT_ACT);
		save_result(x, th);
		return ew2(x, "quick gelu mul", n, dt, in, th, VP_CAT_ACT);
	default:
		/* GELU (erf or tanh kernel) and SiLU save their input. */
		return ew(x, act == VP_ACT_SWIGLU ? "silu" : "gelu", n, dt,
		    in, -1, in, -1, VP_CAT_ACT);
	}
}

/*
 * Whether sdpa gets a mask in this block: a local (sliding-window) layer
 * whose window the sequence reaches.  transformers' masking_utils skips
 * the mask for sdpa only when nothing is padded and no window applies
 * (_ignore_causal_mask_sdpa: kv_length >= local_attention_size keeps
 * it), so the kernel gets a (b, 1, s, s) bool mask instead of
 * is_causal; with it, use_gqa_in_sdpa is false (repeat_kv's copies), and
 * PyTorch's scaled_dot_product_attention converts the bool mask to one
 * of q's dtype (convert_boolean_attn_mask), which the kernel's backward
 * keeps.  Nothing else of the window changes memory: eager builds the
 * whole (b, 1, s, s) masks either way, and flash-attn's window saves
 * what its full attention does.
 */
static bool
window_mask(const struct lctx *x)
{
	if (x->p->attention == VP_ATTN_SDPA && x->fam.sdpa_mask)
		return true;
	return x->p->attention == VP_ATTN_SDPA &&
	    vp_layer_local(x->m, x->global_layer) && x->s_kv >= x->m->window;
}

/*
 * Whether F.scaled_dot_product_attention runs PyTorch's math path: on the
 * CPU when v's head dim is not q's and k's (MLA's v_head_dim), which the
 * CPU flash kernel does not take (sdp_utils_cpp.cpp, check_head_dim_size_cpp;
 * measured on 2.13: the grad_fn is the math path's UnsafeViewBackward0).
 * On CUDA the memory-efficient kernel takes such a v (it checks q's and
 * k's head dims only), which the plain sdpa lowering describes.
 */
static bool
sdpa_math(const struct lctx *x)
{
	/* Falcon's multi-query k and v, one head broadcast against q's:
	 * no fused kernel takes them without enable_gqa (sdp_utils,
	 * check_batch_size_and_num_heads_dense), on any device. */
	if (x->p->attention == VP_ATTN_SDPA &&
	    x->m->qkv_split == VP_QKV_MULTI_QUERY)
		return true;
	return x->p->attention == VP_ATTN_SDPA && x->cpu && x->dv != x->d;
}

/*
 * PyTorch's math attention (_scaled_dot_product_attention_math, 2.13):
 * 16-bit q, k and v upcast to fp32 (the default, no reduced-precision
 * reduction); q and k each scaled by sqrt(scale) into new tensors the
 * first bmm saves; the causal mask added out of place; _safe_softmax
 * (softmax, a bool mask of the -inf scores, where) saves its result; the
 * second bmm saves it and v (the fp32 copy, else v itself); the output
 * goes back to the input dtype.  Measured on the autograd graph (every
 * saved tensor's shape, dtype and storage).
 */
static int32_t
sdpa_math_core(struct lctx *x, int32_t q, int32_t k, int32_t v)
{
	uint64_t ss = x->b * x->a * x->s * x->s_kv;
	uint64_t nq = x->b * x->a * x->s * x->d;
	uint64_t nk = x->b * x->a * x->s_kv * x->d;
	uint64_t nv = x->b * x->a * x->s_kv * x->dv;
	enum vp_dtype dt = dt_of(x, q);
	int32_t sc, pr, out;

	if (dt != VP_FP32) {
		q = ew(x, "sdpa math q to fp32", nq, VP_FP32, q, -1, -1, -1,
		    VP_CAT_ACT);
		k = ew(x, "sdpa math k to fp32", nk, VP_FP32, k, -1, -1, -1,
		    VP_CAT_ACT);
		v = ew(x, "sdpa math v to fp32", nv, VP_FP32, v, -1, -1, -1,
		    VP_CAT_ACT);
	}
	q = ew(x, "sdpa math q scale", nq, VP_FP32, q, -1, -1, -1, VP_CAT_ACT);
	k = ew(x, "sdpa math k scale", nk, VP_FP32, k, -1, -1, -1, VP_CAT_ACT);
	sc = ew2(x, "sdpa math qk", ss, VP_FP32, q, k, VP_CAT_ACT);
	sc = ew(x, "sdpa math mask add", ss, VP_FP32, sc, -1, -1, -1,
	    VP_CAT_ACT);
	pr = ew(x, "sdpa math softmax", ss, VP_FP32, sc, -1, -1, -1,
	    VP_CAT_ACT);
	save_result(x, pr);
	/* _safe_softmax: softmax's result and the bool mask live while
	 * where() makes the output. */
	x->g->op[x->g->nop - 1].fwd_tmp = vp_mul_sat(ss, B(VP_FP32) +
	    B(VP_BOOL));
	out = ew2(x, "sdpa math pv", x->b * x->a * x->s * x->dv, VP_FP32, pr,
	    v, VP_CAT_ACT);
	return cast(x, out, dt, VP_CAT_ACT);
}

/*
 * Attention core on q (b,a,s,d), k and v (b,a,s,d after repeat).  q, k
 * and v may be one tensor (a fused projection whose views they are), so
 * the output's size comes from the dimensions: b*a*s rows of d.
 */
static int32_t
attention_core(struct lctx *x, int32_t q, int32_t k, int32_t v,
    bool fp32_softmax, bool mask_fp32)
{
	uint64_t ss = x->b * x->a * x->s * x->s_kv;
	uint64_t rows = x->b * x->a * x->s;
	enum vp_dtype cdt = dt_of(x, q);
	struct vp_op *o;
	int32_t sc, pr, out;
	size_t first = x->g->nop;

	/*
	 * Autocast runs attention's matmuls and kernels in the compute
	 * dtype: fp32 q, k and v (a base upcast by --kbit-prep) are cast
	 * first, each copy kept by the kernel (HF's FlashAttention-2 path
	 * casts them itself, to the same dtype).
	 */
	if (x->autocast && cdt != x->c) {
		int32_t q0 = q, k0 = k;

		q = cast(x, q, x->c, VP_CAT_ACT);
		k = k0 == q0 ? q : cast(x, k, x->c, VP_CAT_ACT);
		v = v == q0 ? q : v == k0 ? k : cast(x, v, x->c, VP_CAT_ACT);
		cdt = x->c;
	}
	if (sdpa_math(x))
		return sdpa_math_core(x, q, k, v);
	if (x->p->attention != VP_ATTN_EAGER) {
		/*
		 * SDPA / FlashAttention: saves q, k, v, the output and the
		 * per-row log-sum-exp (fp32); dropout keeps only RNG state.
		 * Backward recomputes the probabilities blockwise.
		 */
		int32_t lse;
		bool rg;

		int32_t wm = -1;

		if (window_mask(x))
			wm = ew(x, "window mask", x->b * x->s * x->s_kv, cdt,
			    vp_layer_local(x->m, x->global_layer) ?
			    x->mask_local : x->mask_full, -1, -1, -1,
			    VP_CAT_ACT);
		o = opnew(x, "sdpa");
		region_ci(x);
		IN(o, q);
		IN(o, k);
		IN(o, v);
		if (wm >= 0)
			IN(o, wm);
		rg = rg_of(x, q) || rg_of(x, k) || rg_of(x, v);
		out = tnew(x, rows * x->dv, cdt, VP_CAT_ACT, "attn out", rg);
		lse = tnew(x, rows, VP_FP32, VP_CAT_ACT, "lse", false);
		OUT(o, out);
		OUT(o, lse);
		/* On CUDA F.scaled_dot_product_attention runs
		 * _scaled_dot_product_flash_attention (or _efficient_, _cudnn_),
		 * on torchtitan's op list with all its outputs; the CPU kernel
		 * (_scaled_dot_product_flash_attention_for_cpu) and the
		 * flash-attn package's op are not on it. */
		if (!x->cpu && x->p->attention == VP_ATTN_SDPA) {
			sac_out(o, out);
			sac_out(o, lse);
		}
		if (rg) {
			SAVE(o, q);
			SAVE(o, k);
			SAVE(o, v);
			SAVE(o, lse);
			SAVE(o, out);
			if (wm >= 0)
				SAVE(o, wm);
		}
		/* Context parallel (ring attention): the k and v chunks of
		 * the other ranks pass through double buffers. */
		if (x->s_kv > x->s)
			o->fwd_tmp = o->bwd_tmp = 2 * (x->g->t[k].bytes +
			    x->g->t[v].bytes);
		return out;
	}
	/* scores = q k^T (matmul saves both operands), scaled. */
	sc = ew2(x, "qk matmul", ss, cdt, q, k, VP_CAT_ACT);
	sc = ew(x, "scale", ss, cdt, sc, -1, -1, -1, VP_CAT_ACT);
	/* Gemma-2: scores / cap, tanh (saves its result), * cap. */
	if (x->m->attn_softcap) {
		sc = ew(x, "softcap div", ss, cdt, sc, -1, -1, -1, VP_CAT_ACT);
		sc = ew(x, "softcap tanh", ss, cdt, sc, -1, -1, -1,
		    VP_CAT_ACT);
		save_result(x, sc);
		sc = ew(x, "softcap mul", ss, cdt, sc, -1, -1, -1, VP_CAT_ACT);
	}
	/*
	 * The additive mask: HF BERT builds it in the parameters' dtype,
	 * Llama's causal mask in the embeddings' (both fp32 under
	 * autocast; GPT-2's too from transformers 4.55), so the sum is
	 * promoted to fp32, and so is its gradient in backward.  From 5.0
	 * BERT has none when nothing is padded (mask_skip).
	 */
	if (!x->fam.mask_skip || (x->mask_local >= 0 &&
	    vp_layer_local(x->m, x->global_layer)))
		sc = ew(x, "mask add", ss, mask_fp32 && x->autocast ? VP_FP32 :
		    cdt, sc, vp_layer_local(x->m, x->global_layer) ?
		    x->mask_local : x->mask_full, -1, -1, VP_CAT_ACT);
	if (x->fam.sinks) {
		/*
		 * gpt-oss (eager_attention_forward): the sinks (one parameter
		 * per head, the weights' dtype) join each row, cat([scores,
		 * sinks], -1); minus the row max; softmax in that dtype
		 * (saves its result); probs[..., :-1], dropout and
		 * .to(value.dtype): a copy of the s_kv columns when the dtype
		 * changes (fp32 scores under autocast, from the mask).
		 */
		uint64_t sk = x->b * x->a * x->s * (x->s_kv + 1);
		enum vp_dtype ldt = promote(dt_of(x, sc), x->w);

		sc = ew(x, "sink cat", sk, ldt, sc, -1, -1, -1, VP_CAT_ACT);
		sc = ew(x, "sink max sub", sk, ldt, sc, -1, -1, -1, VP_CAT_ACT);
		pr = ew(x, "softmax", sk, ldt, sc, -1, -1, -1, VP_CAT_ACT);
		save_result(x, pr);
		pr = dropout(x, "attn dropout", pr);
		if (ldt != cdt)
			pr = ew(x, "to", ss, cdt, pr, -1, -1, -1, VP_CAT_ACT);
	} else if (fp32_softmax && cdt != VP_FP32) {
		/* Llama: softmax(dtype=float32).to(q.dtype), then dropout. */
		if ((x->autocast && !x->cpu) || x->fam.softmax_convert)
			sc = cast(x, sc, VP_FP32, VP_CAT_ACT);
		pr = ew(x, "softmax", ss, VP_FP32, sc, -1, -1, -1, VP_CAT_ACT);
		save_result(x, pr);
		pr = cast(x, pr, cdt, VP_CAT_ACT);
		pr = dropout(x, "attn dropout", pr);
	} else {
		/*
		 * Softmax saves its result.  CUDA autocast runs softmax in
		 * fp32 (its fp32 op list); CPU autocast (1.13) keeps the
		 * input dtype.  Dropout follows; the value matmul (or
		 * GPT-2's .type(value.dtype)) casts back to 16 bit.
		 */
		enum vp_dtype sdt = x->autocast && !x->cpu ? VP_FP32 :
		    dt_of(x, sc);

		pr = ew(x, "softmax", ss, sdt, sc, -1, -1, -1, VP_CAT_ACT);
		save_result(x, pr);
		/*
		 * Falcon: softmax(scores + mask) while `attention_scores`
		 * still holds the scaled scores, and the attention's locals
		 * live until it returns: fused_qkv and the rotated q and k,
		 * whose (b*a, s, d) copies the bmm saved (the lowering saves
		 * the rotated ones, the same sizes); multi-query's k is one
		 * head, its copy the repeat_kv one.
		 */
		if (x->fam.scores_held) {
			uint64_t n = x->b * x->s, kd = x->kv * x->d;
			uint64_t qd = x->a * x->d, loc = n * (qd + 2 * kd) + n *
			    qd + (x->m->qkv_split == VP_QKV_MULTI_QUERY ? n *
			    kd : n * qd);

			x->g->op[x->g->nop - 1].fwd_tmp = vp_add_sat(vp_mul_sat(
			    ss, B(cdt)), vp_mul_sat(loc, B(cdt)));
			x->probs_held = pr;
		}
		/* GPT-J: softmax(...).to(value.dtype). */
		if (x->fam.qk_fp32)
			pr = cast(x, pr, dt_of(x, v), VP_CAT_ACT);
		pr = dropout(x, "attn dropout", pr);
		if (x->autocast)
			pr = cast(x, pr, cdt, VP_CAT_ACT);
	}
	/* GPT-J: the fp32 scores' probabilities times v, in v's dtype. */
	out = ew2(x, "pv matmul", rows * x->dv, promote(dt_of(x, pr),
	    x->fam.qk_fp32 ? dt_of(x, v) : cdt), pr, v, VP_CAT_ACT);
	/* Selective recompute: the core's saved tensors are re-made (in
	 * the blocks the stride checkpoints). */
	if (x->p->recompute == VP_RECOMP_SELECTIVE &&
	    vp_plan_block_checkpointed(x->p, x->layer)) {
		size_t i;
		for (i = first; i < x->g->nop; i++)
			x->g->op[i].recompute = true;
	}
	return out;
}

/*
 * Whether attention's output goes back to the (b, s, a*d) layout without
 * a copy.  Eager's p.v product is (b, a, s, d), so transpose(1, 2)
 * .contiguous() copies it.  A fused kernel writes its output in q's
 * layout (measured: PyTorch 2.13's CPU flash kernel; CUDA's flash and
 * efficient kernels work in (b, s, a, d) as well; calib/harness.py's
 * MemEffAttention for 1.13 writes (b, s, a, d)), and Hugging Face's q is a
 * transposed view of its projection (q_view): the transpose back is then a
 * view, unless transformers made q contiguous before sdpa.
 */
static bool
attn_out_view(const struct lctx *x)
{
	if (x->p->attention == VP_ATTN_EAGER || !x->fam.q_view)
		return false;
	return !(x->p->attention == VP_ATTN_SDPA && x->fam.sdpa_contiguous);
}

/*
 * Whether sdpa reads the kv heads as they are (enable_gqa=True, from
 * transformers 4.54: sdpa_gqa) rather than repeat_kv's copies: PyTorch
 * has the argument from 2.5, and transformers passes it only without a
 * mask (nothing is padded here) and, from 5.17 (the first release read to
 * check it, #46960), for a head dim of at most 256; above that, earlier
 * releases passed it anyway and PyTorch fell back to its math kernel,
 * which is not modelled: repeat_kv's copies are counted there.
 */
static bool
gqa_in_kernel(const struct lctx *x)
{
	return x->p->attention == VP_ATTN_SDPA && x->fam.sdpa_gqa &&
	    x->p->torch_version >= 205 && x->d <= 256 && !window_mask(x);
}

/*
 * repeat_kv: expand + reshape copies k and v to every head (b*s rows of
 * a*d).  Not for FlashAttention (Hugging Face's flash path never calls
 * it: 4.40's LlamaFlashAttention2, integrations/flash_attention.py
 * later), nor when sdpa reads the kv heads itself (gqa_in_kernel).
 * Returns whether it copied.
 */
static bool
repeat_kv(struct lctx *x, int32_t *k, int32_t *v)
{
	uint64_t n = x->b * x->s * x->a * x->d;

	if (!(x->kv < x->a && x->fam.repeat_kv &&
	    x->p->attention != VP_ATTN_FLASH && !gqa_in_kernel(x)))
		return false;
	*k = ew(x, "repeat k", n, dt_of(x, *k), *k, -1, -1, -1, VP_CAT_ACT);
	*v = ew(x, "repeat v", n, dt_of(x, *v), *v, -1, -1, -1, VP_CAT_ACT);
	return true;
}

/* t.contiguous() of a transposed (b, s, heads, d) view: a copy of `width`
 * (heads * d) elements per token. */
static int32_t
contiguous(struct lctx *x, const char *name, int32_t t, uint64_t width)
{
	return ew(x, name, x->b * x->s * width, dt_of(x, t), t, -1, -1, -1,
	    VP_CAT_ACT);
}

/*
 * torch.compile (--compile, --compile-loss).  Dynamo hands a region
 * (one block, as
 * torchtune's compile_model and torchtitan's apply_compile compile each
 * block on its own; or the loss, compile_loss) to AOTAutograd, whose
 * default partitioner (min_cut_rematerialization_partition,
 * torch/_functorch/partitioners.py) chooses what the forward saves for
 * the backward, and Inductor fuses the pointwise ops of each graph into
 * kernels.  The region is lowered as eager code, then rewritten:
 *
 * - Saved: what a compute-intensive op (a linear, attention) saves, its
 *   outputs and a reduction's output are never recomputed
 *   (should_ban_recomputation: "compute intensive op", "materialized in
 *   backward": a tensor a backward matmul reads; "reduction op": an
 *   output under a quarter of its input), nor is what comes from outside
 *   the region.  Any other saved tensor is a pointwise op's result,
 *   recomputed in the backward from that op's inputs, resolved the same
 *   way: RMSNorm saves its input and the reduction instead of its fp32
 *   intermediates, SiLU's product is re-made from the gate and up
 *   outputs, the second norm's input from the block input and o_proj's
 *   output, RoPE's cos and sin from the positions.
 * - Materialized: what is saved, what a compute-intensive op reads or
 *   writes, and the region's output.  Every other tensor lives inside a
 *   fused kernel and takes no memory, nor does its gradient (the backward
 *   graph fuses the pointwise chain the same way); pointwise ops' forward
 *   and backward workspaces go with them.
 * - Casts of one tensor to one dtype are made once (cast(): the graph's
 *   common-subexpression pass).
 *
 * Measured on PyTorch 2.13's Inductor for the CPU (calib/harness.py
 * --compile, tests/validate_cpu.py --grid torch2): the saved set of a
 * Llama block is exactly the forward graph's saved outputs (TORCH_LOGS=
 * aot_graphs) but for RoPE's (s) position vector.  The partition does not
 * depend on the device; Inductor's kernels do, but the rule above names
 * only what every backend materializes.
 */
static void
region_begin(struct lctx *x, bool compiled)
{
	if (!compiled)
		return;
	x->inductor = true;
	x->region_op0 = x->g->nop;
	x->region_t0 = x->g->nt;
	x->nci = x->nrin = 0;
}

enum { R_KEEP = 1, R_SAVED = 2, R_MAT = 4 };

/* Whether region tensor or input t is saved already. */
static bool
region_saved(const struct lctx *x, int32_t t, const uint8_t *fl)
{
	unsigned i;

	if ((size_t)t >= x->region_t0)
		return (fl[t - x->region_t0] & R_SAVED) != 0;
	for (i = 0; i < x->nrin; i++)
		if (x->rin[i] == t)
			return true;
	return false;
}

/* Whether the partitioner must save t rather than recompute it: a
 * region input, what a matmul or kernel reads or writes, a reduction. */
static bool
region_fixed(const struct lctx *x, int32_t t, const int32_t *prod,
    const uint8_t *fl)
{
	size_t t0 = x->region_t0;

	return (size_t)t < t0 || (fl[t - t0] & R_KEEP) || prod[t - t0] < 0;
}

/* The bytes keeping t adds to what the region saves: t itself, or what
 * it is recomputed from, whichever is less (a tie recomputes). */
static uint64_t
region_cost(const struct lctx *x, int32_t t, const int32_t *prod,
    const uint8_t *fl, int depth)
{
	const struct vp_op *p;
	uint64_t own, sum = 0;
	int k;

	own = region_saved(x, t, fl) ? 0 : x->g->t[t].bytes;
	if (own == 0 || region_fixed(x, t, prod, fl) || depth > 32)
		return own;
	p = &x->g->op[prod[t - x->region_t0]];
	for (k = 0; k < VP_OP_MAXIO && p->in[k] >= 0 && sum <= own; k++)
		sum = vp_add_sat(sum, region_cost(x, p->in[k], prod, fl,
		    depth + 1));
	return sum <= own ? sum : own;
}

/*
 * Op o keeps t for its backward.  The partitioner's minimum cut, decided
 * tensor by tensor in forward order: t itself when it cannot be
 * recomputed or is cheaper to keep, else (recursively) the inputs of the
 * pointwise op that made it.  A Llama block whose input needs no
 * gradient (the first under LoRA) saves the residual sum; the others,
 * which save their input anyway, save o_proj's output and recompute the
 * sum (measured).
 */
static void
region_save(struct lctx *x, struct vp_op *o, int32_t t,
    const int32_t *prod, uint8_t *fl, int depth)
{
	size_t t0 = x->region_t0;
	const struct vp_op *p;
	uint64_t own, sum = 0;
	int k;

	own = region_saved(x, t, fl) ? 0 : x->g->t[t].bytes;
	if (own > 0 && !region_fixed(x, t, prod, fl) && depth <= 32) {
		p = &x->g->op[prod[t - t0]];
		for (k = 0; k < VP_OP_MAXIO && p->in[k] >= 0; k++)
			sum = vp_add_sat(sum, region_cost(x, p->in[k], prod,
			    fl, depth + 1));
		if (sum <= own) {
			for (k = 0; k < VP_OP_MAXIO && p->in[k] >= 0; k++)
				region_save(x, o, p->in[k], prod, fl,
				    depth + 1);
			return;
		}
	}
	add_io(o->saved, t);
	if ((size_t)t >= t0)
		fl[t - t0] |= R_SAVED;
	else if (!region_saved(x, t, fl)) {
		assert(x->nrin < VP_REGION_MAXCI);
		x->rin[x->nrin++] = t;
	}
}

static void
region_end(struct lctx *x, int32_t out)
{
	struct vp_graph *g = x->g;
	size_t t0 = x->region_t0, n, i;
	int32_t *prod;
	uint8_t *fl, *ci;
	int k;

	if (!x->inductor)
		return;
	x->inductor = false;
	n = g->nt - t0;
	prod = xmalloc((n + 1) * sizeof *prod);
	fl = xcalloc(n + 1, 1);
	ci = xcalloc(g->nop - x->region_op0 + 1, 1);
	for (i = 0; i < n; i++)
		prod[i] = -1;
	for (i = 0; i < x->nci; i++)
		ci[x->ci_op[i] - x->region_op0] = x->ci_cast[i] ? 2 : 1;
	for (i = x->region_op0; i < g->nop; i++) {
		const struct vp_op *o = &g->op[i];
		uint64_t inb = 0, outb = 0;

		for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++) {
			assert((size_t)o->out[k] >= t0);
			prod[o->out[k] - (int32_t)t0] = (int32_t)i;
			outb += g->t[o->out[k]].bytes;
		}
		for (k = 0; k < VP_OP_MAXIO && o->in[k] >= 0; k++)
			inb += g->t[o->in[k]].bytes;
		/* A matmul's or kernel's inputs and outputs; a reduction's
		 * output. */
		if (ci[i - x->region_op0] || (inb > 0 && outb * 4 < inb))
			for (k = 0; k < VP_OP_MAXIO && o->out[k] >= 0; k++)
				fl[o->out[k] - t0] |= R_KEEP;
		/* A kernel reading casts of its inputs (float8): the
		 * inputs may be recomputed, but their gradients are that
		 * kernel's outputs in backward, so they keep their size. */
		if (ci[i - x->region_op0])
			for (k = 0; k < VP_OP_MAXIO && o->in[k] >= 0; k++)
				if ((size_t)o->in[k] >= t0)
					fl[o->in[k] - t0] |= ci[i -
					    x->region_op0] == 1 ? R_KEEP :
					    R_MAT;
	}
	if ((size_t)out >= t0)
		fl[out - t0] |= R_KEEP;
	for (i = x->region_op0; i < g->nop; i++) {
		struct vp_op *o = &g->op[i];
		int32_t old[VP_OP_MAXIO];

		memcpy(old, o->saved, sizeof old);
		for (k = 0; k < VP_OP_MAXIO; k++)
			o->saved[k] = -1;
		for (k = 0; k < VP_OP_MAXIO && old[k] >= 0; k++)
			region_save(x, o, old[k], prod, fl, 0);
		if (!ci[i - x->region_op0])
			o->fwd_tmp = o->bwd_tmp = 0;
	}
	for (i = 0; i < n; i++)
		if (fl[i] == 0)
			g->t[t0 + i].bytes = 0;
	free(ci);
	free(fl);
	free(prod);
}

static void
begin_layer(struct lctx *x, uint32_t l, int32_t input)
{
	assert(l >= 1 && l <= x->g->layers);
	x->layer = l;
	x->g->layer_first_op[l] = x->g->nop;
	x->g->layer_input[l] = input;
}

/*
 * gpt-oss's experts (GptOssExperts._apply_gate behind transformers 5's
 * grouped_mm experts, integrations/moe.py): one gate_up projection of 2f
 * (interleaved: gate and up are strided views of it) plus its bias,
 * gathered per row (a transient of the output's size, added in place);
 * gate.clamp(max=limit) and up.clamp(-limit, limit) each keep their
 * input, a view of the whole projection; gate * alpha; sigmoid (keeps
 * its result); glu = gate * sigmoid (keeps both); up + 1; (up + 1) * glu
 * (keeps both); the down projection and its gathered bias.
 */
static int32_t
glu_clamp_mlp(struct lctx *x, int32_t in, uint64_t f)
{
	uint64_t n = elems_of(x, in) / x->h * f;
	int32_t gu, g, u, ga, sg, glu, u1, a, out;
	enum vp_dtype dt;

	gu = linear(x, block_lin(x, VP_ROLE_GATE), in, x->h, 2 * f, true,
	    true, VP_CAT_ACT);
	x->g->op[x->g->nop - 1].fwd_tmp += x->g->t[gu].bytes;
	dt = dt_of(x, gu);
	g = ew(x, "gate clamp", n, dt, gu, -1, gu, -1, VP_CAT_ACT);
	u = ew(x, "up clamp", n, dt, gu, -1, gu, -1, VP_CAT_ACT);
	ga = ew(x, "gate alpha", n, dt, g, -1, -1, -1, VP_CAT_ACT);
	sg = ew(x, "sigmoid", n, dt, ga, -1, -1, -1, VP_CAT_ACT);
	save_result(x, sg);
	glu = ew2(x, "glu mul", n, dt, g, sg, VP_CAT_ACT);
	u1 = ew(x, "up add", n, dt, u, -1, -1, -1, VP_CAT_ACT);
	a = ew2(x, "gate mul", n, dt, u1, glu, VP_CAT_ACT);
	out = linear(x, block_lin(x, VP_ROLE_DOWN), a, f, x->h, true, true,
	    VP_CAT_ACT);
	x->g->op[x->g->nop - 1].fwd_tmp += x->g->t[out].bytes;
	return out;
}

/* The MLP on the rows of in (gated or not); returns the down projection. */
static int32_t
mlp_block(struct lctx *x, int32_t in, uint64_t f)
{
	const struct vp_model *m = x->m;
	uint64_t rows = elems_of(x, in) / x->h;
	int32_t up, a;

	if (x->fam.glu_clamp)
		return glu_clamp_mlp(x, in, f);

	if (vp_act_gated(m->act)) {
		int32_t gate = linear(x, block_lin(x, VP_ROLE_GATE), in, x->h,
		    f, m->bias, true, VP_CAT_ACT);

		a = activation(x, m->act == VP_ACT_GEGLU ? VP_ACT_GELU_TANH :
		    VP_ACT_SWIGLU, gate);
		up = linear(x, block_lin(x, VP_ROLE_UP), in, x->h, f, m->bias,
		    true, VP_CAT_ACT);
		a = ew2(x, "gate mul", rows * f, dt_of(x, up), a, up, VP_CAT_ACT);
		x->gated_op = (int32_t)x->g->nop - 1;
		x->gated_gate = gate;
	} else {
		up = linear(x, block_lin(x, VP_ROLE_FC), in, x->h, f, m->bias,
		    true, VP_CAT_ACT);
		a = activation(x, m->act, up);
	}
	return linear(x, block_lin(x, VP_ROLE_DOWN), a, f, x->h, m->bias, true,
	    VP_CAT_ACT);
}

/*
 * Experts run one at a time: what the region [t0, nt) makes and no op
 * saves is a per-expert temporary, freed before the next expert runs, so
 * it is one piece's size; what is saved stays whole (every expert's
 * saved tensors wait for backward), and its gradient is a piece
 * (struct vp_tensor, pieces: mem.c sizes gradients by it).
 */
static void
per_expert_temporaries(struct lctx *x, size_t t0, size_t op0)
{
	struct vp_graph *g = x->g;
	uint8_t *saved = xcalloc(g->nt - t0 + 1, 1);
	size_t i, t;
	int k;

	for (i = op0; i < g->nop; i++)
		for (k = 0; k < VP_OP_MAXIO && g->op[i].saved[k] >= 0; k++)
			if ((size_t)g->op[i].saved[k] >= t0)
				saved[g->op[i].saved[k] - t0] = 1;
	for (t = t0; t < g->nt; t++)
		if (g->t[t].pieces > 1 && !saved[t - t0])
			g->t[t].bytes = (g->t[t].bytes + g->t[t].pieces - 1) /
			    g->t[t].pieces;
	free(saved);
}

/*
 * Whether the experts run one at a time: transformers 4.x's MoE blocks
 * (MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock...) loop over the
 * experts in Python, each an nn.Linear per projection; 5.0 stores them
 * as 3D parameters behind the experts interface, whose default is
 * grouped_mm (PreTrainedModel.get_correct_experts_implementation): one
 * batched op, as Megatron's grouped GEMM and the torch.nn stacks are.
 */
static bool
experts_looped(const struct lctx *x)
{
	return vp_model_runs_hf(x->m) && x->p->transformers_version < 500;
}

/*
 * Whether the experts are transformers 5's grouped_mm (3D parameters
 * behind the experts interface, the default implementation), which
 * autocast does not reach.  A quantized base keeps the lowering of 4.x.
 */
static bool
grouped_mm_experts(const struct lctx *x)
{
	return vp_model_runs_hf(x->m) && !experts_looped(x) &&
	    x->p->quant == VP_QUANT_NONE;
}

/*
 * DeepSeek's router (DeepseekV3TopkRouter, DeepseekV2TopkRouter):
 * F.linear(h.type(fp32), weight.type(fp32)), which autocast still runs in
 * 16 bit, and a bf16 weight's fp32 copy is kept for h's gradient; V3:
 * sigmoid (saves its result), + e_score_correction_bias (a buffer, no
 * parameter), the group-limited choice (temporaries), gather of the
 * chosen scores (saves the int64 indices), normalised and scaled; V2:
 * softmax(dtype=fp32) (saves its result), topk (saves the indices),
 * scaled.  Returns the routing weights of the rows.
 */
static int32_t
deepseek_router(struct lctx *x, int32_t in, uint64_t rows)
{
	uint64_t e = x->m->moe.experts, k = x->m->moe.top_k;
	enum vp_dtype wdt = x->autocast ? x->w : VP_FP32;
	int32_t h32, lg, sc, idx, w;

	h32 = cast(x, in, VP_FP32, VP_CAT_ACT);
	lg = linear_w(x, LIN_ROUTER, h32, x->h, e, false, true, VP_CAT_ACT,
	    wdt, x->gd);
	if (!x->autocast && x->w != VP_FP32) {
		struct vp_op *o = &x->g->op[x->g->nop - 1];
		int32_t wc = tnew(x, x->h * e, VP_FP32, VP_CAT_ACT,
		    "router weight fp32", false);

		OUT(o, wc);
		SAVE(o, wc);
		/* dW in fp32, then cast to the weight's dtype. */
		o->wgrad_tmp = vp_mul_sat(x->h * e, B(VP_FP32));
	}
	if (x->fam.router_sigmoid) {
		sc = ew(x, "router sigmoid", rows * e, dt_of(x, lg), lg, -1, -1,
		    -1, VP_CAT_ACT);
		save_result(x, sc);
		/* scores + bias and its masked_fill take no gradient: only
		 * the indices of their top-k are used. */
		w = ew(x, "router choice", rows * e, VP_FP32, sc, -1, -1, -1,
		    VP_CAT_ACT);
		x->g->t[w].requires_grad = false;
		w = ew(x, "router masked", rows * e, VP_FP32, w, -1, -1, -1,
		    VP_CAT_ACT);
	} else {
		sc = ew(x, "router softmax", rows * e, VP_FP32, lg, -1, -1, -1,
		    VP_CAT_ACT);
		save_result(x, sc);
		w = sc;
	}
	idx = ew(x, "router topk", rows * k, VP_INT64, w, -1, -1, -1,
	    VP_CAT_ACT);
	x->g->t[idx].requires_grad = false;
	w = ew(x, "router gather", rows * k, dt_of(x, sc), sc, idx, idx, -1,
	    VP_CAT_ACT);
	if (x->fam.router_sigmoid)
		w = ew(x, "router normalise", rows * k, dt_of(x, w), w, -1, w,
		    -1, VP_CAT_ACT);
	return ew(x, "router scale", rows * k, dt_of(x, w), w, -1, -1, -1,
	    VP_CAT_ACT);
}

/*
 * Mixture of experts, as HF Mixtral/Qwen-MoE run it: a router linear and
 * its fp32 softmax; each token's hidden state gathered once per chosen
 * expert (b*s*top_k rows in all, assuming balanced routing), the experts'
 * MLPs over those rows (every expert's weights get gradients), the
 * outputs scaled by the routing weights (the mul saves both) and
 * index-added back; shared experts run densely on every token.  When the
 * experts are looped (experts_looped), the routed rows are lowered as one
 * batch whose temporaries and gradients are one expert's share, and each
 * expert's IndexBackward makes a zeroed gradient of the whole input
 * before it is added to the others.
 */
static int32_t
moe(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	uint64_t rows = elems_of(x, in) / x->h, k = m->moe.top_k;
	uint64_t e = m->moe.experts, ep = x->p->ep;
	uint64_t routed = (uint64_t)((double)rows * (double)k *
	    (x->p->capacity_factor > 0 ? x->p->capacity_factor : 1.0) + 0.5);
	int32_t r, gathered, y, out;
	uint32_t i;
	size_t t0, op0;
	bool looped, autocast = x->autocast;

	if (x->fam.mla) {
		r = deepseek_router(x, in, rows);
	} else {
		r = linear(x, LIN_ROUTER, in, x->h, e, x->fam.router_bias,
		    true, VP_CAT_ACT);
		if (x->fam.router_bias) {
			/* GptOssTopKRouter: topk of the logits, then a
			 * softmax over the k in their dtype (keeps its
			 * result). */
			r = ew(x, "router topk", rows * k, dt_of(x, r), r, -1,
			    -1, -1, VP_CAT_ACT);
			r = ew(x, "router softmax", rows * k, dt_of(x, r), r,
			    -1, -1, -1, VP_CAT_ACT);
		} else {
			r = ew(x, "router softmax", rows * e, VP_FP32, r, -1,
			    -1, -1, VP_CAT_ACT);
		}
		save_result(x, r);
	}
	/*
	 * Routed rows: each token once per chosen expert, padded by the
	 * capacity factor.  With expert parallelism a rank holds e/ep
	 * experts and, with balanced routing, receives as many rows as it
	 * sends; the all-to-all send and receive buffers are transient.
	 */
	looped = experts_looped(x) && e / ep > 1;
	t0 = x->g->nt;
	op0 = x->g->nop;
	if (looped)
		x->pieces = (uint16_t)(e / ep < UINT16_MAX ? e / ep :
		    UINT16_MAX);
	gathered = ew(x, "expert gather", routed * x->h, dt_of(x, in), in, -1,
	    -1, -1, VP_CAT_ACT);
	if (ep > 1)
		x->g->op[x->g->nop - 1].fwd_tmp = x->g->op[x->g->nop - 1].bwd_tmp =
		    2 * x->g->t[gathered].bytes;
	if (looped)
		x->g->op[x->g->nop - 1].bwd_tmp += x->g->t[in].bytes;
	x->wmult = e / ep;
	/*
	 * transformers 5's grouped_mm experts (integrations/moe.py,
	 * _grouped_mm: "not autocast-enabled") run in the weights' dtype:
	 * `input.to(weight.dtype)`, fp32 matmuls and activations under
	 * mixed precision, no autocast weight copies (measured: Qwen3-MoE
	 * and Mixtral bf16-mixed on PyTorch 2.13's CPU, tests/validate_hf.py).
	 * FSDP's mixed precision gathers 16-bit weights: the input goes to
	 * 16 bit, which is what the autocast lowering already does there.
	 */
	if (grouped_mm_experts(x) && !x->fsdp_params16) {
		x->autocast = false;
		gathered = cast(x, gathered, x->w, VP_CAT_ACT);
	}
	y = mlp_block(x, gathered, m->moe.ffn);
	x->autocast = autocast;
	x->wmult = 1;
	y = ew(x, "routing weight mul", routed * x->h, dt_of(x, y), y, r, y, -1,
	    VP_CAT_ACT);
	if (ep > 1)
		x->g->op[x->g->nop - 1].fwd_tmp = x->g->op[x->g->nop - 1].bwd_tmp =
		    2 * x->g->t[y].bytes;
	x->pieces = 0;
	if (looped)
		per_expert_temporaries(x, t0, op0);
	out = ew(x, "expert combine", rows * x->h, dt_of(x, y), y, -1, -1, -1,
	    VP_CAT_ACT);
	for (i = 0; i < m->moe.shared_experts; i++) {
		int32_t sh = mlp_block(x, in, m->moe.shared_ffn);
		out = ew(x, "shared expert add", rows * x->h, dt_of(x, out), out,
		    sh, -1, -1, VP_CAT_ACT);
	}
	return out;
}

/*
 * A pre-norm block in the Hugging Face style (Llama family, GPT-2): norm,
 * attention, residual add, norm, MLP (or MoE), residual add.
 */
static int32_t
prenorm_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	const struct vp_family_info *fam = &x->fam;
	uint64_t n = x->b * x->s, qd = x->a * x->d, kd = x->kv * x->d;
	int32_t h1, q, k, v, ctx, o, res, h2, mlp;
	bool repeated;

	h1 = norm(x, "input norm", in);
	if (fam->fused_qkv) {
		/* Fused qkv projection; q, k, v are views of its output. */
		int32_t qkv = linear(x, block_lin(x, VP_ROLE_QKV), h1, x->h,
		    qd + 2 * kd, m->qkv_bias, true, VP_CAT_ACT);
		q = k = v = qkv;
	} else {
		q = linear(x, block_lin(x, VP_ROLE_Q), h1, x->h, qd,
		    m->qkv_bias, true, VP_CAT_ACT);
		/* OPT: q_proj(h) * scaling, a copy (a scalar mul saves
		 * nothing); the projection's output goes. */
		if (fam->q_scale)
			q = ew(x, "q scale", n * qd, dt_of(x, q), q, -1, -1, -1,
			    VP_CAT_ACT);
		k = linear(x, block_lin(x, VP_ROLE_K), h1, x->h, kd,
		    m->qkv_bias, true, VP_CAT_ACT);
		v = linear(x, block_lin(x, VP_ROLE_V), h1, x->h, kd,
		    m->qkv_bias, true, VP_CAT_ACT);
	}
	if (fam->qk_norm) {
		/*
		 * Qwen3: q_norm(q_proj(h).view(b, s, -1, d)) and the same for
		 * k, an RMSNorm (Qwen3RMSNorm, Llama's code) over each head's
		 * d features, before RoPE; the fused projection is not
		 * modelled with it (no family has both).
		 */
		assert(!fam->fused_qkv);
		q = norm_w(x, "q norm", q, x->d);
		k = norm_w(x, "k norm", k, x->d);
	}
	if (m->pos == VP_POS_ROPE) {
		/*
		 * RoPE: q*cos + rotate_half(q)*sin.  The muls save only cos
		 * and sin (small); rotate_half makes a negated half and a cat.
		 */
		int32_t t1, t2, t3, cs;
		enum vp_dtype dt = dt_of(x, q);

		/* HF v4.40 computes cos and sin (s, d) in every layer; the
		 * muls save them. */
		cs = ew(x, "rope cos sin", 2 * x->s * x->d, dt, -1, -1, -1, -1,
		    VP_CAT_ACT);
		if (rg_of(x, q) || rg_of(x, k))
			x->g->op[x->g->nop - 1].saved[0] = cs;

		t1 = ew(x, "rope mul", n * qd, dt, q, -1, -1, -1, VP_CAT_ACT);
		t2 = ew(x, "rope neg", n * qd / 2, dt, q, -1, -1, -1, VP_CAT_ACT);
		t3 = ew(x, "rope cat", n * qd, dt, t2, -1, -1, -1, VP_CAT_ACT);
		t3 = ew(x, "rope mul", n * qd, dt, t3, -1, -1, -1, VP_CAT_ACT);
		q = ew(x, "rope add", n * qd, dt, t1, t3, -1, -1, VP_CAT_ACT);
		t1 = ew(x, "rope mul", n * kd, dt, k, -1, -1, -1, VP_CAT_ACT);
		t2 = ew(x, "rope neg", n * kd / 2, dt, k, -1, -1, -1, VP_CAT_ACT);
		t3 = ew(x, "rope cat", n * kd, dt, t2, -1, -1, -1, VP_CAT_ACT);
		t3 = ew(x, "rope mul", n * kd, dt, t3, -1, -1, -1, VP_CAT_ACT);
		k = ew(x, "rope add", n * kd, dt, t1, t3, -1, -1, VP_CAT_ACT);
	}
	repeated = repeat_kv(x, &k, &v);
	/* transformers 4.48 to 4.55: q, k and v made contiguous (the
	 * repeated k and v are already); the transposed views' storage
	 * goes once nothing else holds it. */
	if (x->p->attention == VP_ATTN_SDPA && fam->sdpa_contiguous) {
		int32_t qkv = q;

		q = contiguous(x, "q contiguous", qkv, qd);
		if (!repeated) {
			k = contiguous(x, "k contiguous", fam->fused_qkv ? qkv :
			    k, kd);
			v = contiguous(x, "v contiguous", fam->fused_qkv ? qkv :
			    v, kd);
		}
	}
	ctx = attention_core(x, q, k, v, fam->softmax_fp32, fam->mask_fp32);
	/* transpose(1, 2).contiguous(): a copy in (b, s, a*d) layout, or a
	 * view of a fused kernel's output. */
	if (!attn_out_view(x))
		ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx), ctx, -1,
		    -1, -1, VP_CAT_ACT);
	o = linear(x, block_lin(x, VP_ROLE_O), ctx, qd, x->h, m->o_bias > 0,
	    true, VP_CAT_ACT);
	/* Llama-family modules drop out only the attention probabilities;
	 * GPT-2 also drops the residual branches. */
	if (fam->resid_dropout)
		o = dropout(x, "resid dropout", o);
	if (m->post_norms)
		o = norm(x, "post attn norm", o);
	res = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);

	h2 = norm(x, "post attention norm", res);
	mlp = vp_moe_layer_sparse(m, x->global_layer) ?
	    moe(x, h2) : mlp_block(x, h2, x->f);
	if (fam->resid_dropout)
		mlp = dropout(x, "mlp dropout", mlp);
	if (m->post_norms)
		mlp = norm(x, "post ffn norm", mlp);
	return ew(x, "residual add", elems_of(x, res), promote(dt_of(x, res),
	    dt_of(x, mlp)), res, mlp, -1, -1, VP_CAT_ACT);
}

/*
 * RoPE in complex numbers (DeepSeek-V2's and Llama 4's apply_rotary_emb):
 * view_as_complex(t.float().reshape(..., -1, 2)) * freqs_cis, then
 * view_as_real(...).flatten(3).type_as(t): .float() copies a 16-bit t,
 * the complex product (n fp32 values) is new and saves only freqs_cis
 * (`cs`, the positions' table, small), type_as copies back.
 */
static int32_t
complex_rope(struct lctx *x, int32_t t, uint64_t n, int32_t cs)
{
	enum vp_dtype dt = dt_of(x, t);

	if (dt != VP_FP32)
		t = ew(x, "rope float", n, VP_FP32, t, -1, -1, -1, VP_CAT_ACT);
	t = ew(x, "rope complex mul", n, VP_FP32, t, cs, -1, cs, VP_CAT_ACT);
	return cast(x, t, dt, VP_CAT_ACT);
}

/*
 * RoPE on the rotary part of an MLA projection (rope_dim of each q head,
 * the one key head of kv_a_proj_with_mqa's output), a view of `src`;
 * `ne` elements.  Returns the rotated tensor.  The products save only the
 * position embeddings `cs` (cos and sin, or V2's complex freqs_cis:
 * small), never q or k.
 */
static int32_t
mla_rope(struct lctx *x, int32_t src, uint64_t ne, int32_t cs)
{
	enum vp_dtype dt = dt_of(x, src), pt;
	int32_t t1, t2, t3;

	/* DeepSeek-V2: freqs_cis of (s, r/2) complex64 values. */
	if (x->fam.rope_complex)
		return complex_rope(x, src, ne, cs);
	/* DeepSeek-V3: cos and sin in the embeddings' dtype (the residual
	 * stream's), so a 16-bit q or k times them is promoted. */
	pt = promote(dt, x->r);
	if (x->m->mla.rope_interleave) {
		/* apply_rotary_pos_emb_interleave: the even and odd
		 * columns (views), cat([q1 cos - q2 sin, q2 cos + q1 sin]). */
		t1 = ew(x, "rope mul", ne / 2, pt, src, cs, -1, cs, VP_CAT_ACT);
		t2 = ew(x, "rope mul", ne / 2, pt, src, cs, -1, cs, VP_CAT_ACT);
		t1 = ew(x, "rope sub", ne / 2, pt, t1, t2, -1, -1, VP_CAT_ACT);
		t2 = ew(x, "rope mul", ne / 2, pt, src, cs, -1, cs, VP_CAT_ACT);
		t3 = ew(x, "rope mul", ne / 2, pt, src, cs, -1, cs, VP_CAT_ACT);
		t2 = ew(x, "rope add", ne / 2, pt, t2, t3, -1, -1, VP_CAT_ACT);
		return ew(x, "rope cat", ne, pt, t1, t2, -1, -1, VP_CAT_ACT);
	}
	/* apply_rotary_pos_emb: q cos + rotate_half(q) sin. */
	t1 = ew(x, "rope mul", ne, pt, src, cs, -1, cs, VP_CAT_ACT);
	t2 = ew(x, "rope neg", ne / 2, dt, src, -1, -1, -1, VP_CAT_ACT);
	t2 = ew(x, "rope cat", ne, dt, t2, -1, -1, -1, VP_CAT_ACT);
	t2 = ew(x, "rope mul", ne, pt, t2, cs, -1, cs, VP_CAT_ACT);
	return ew(x, "rope add", ne, pt, t1, t2, -1, -1, VP_CAT_ACT);
}

/*
 * DeepSeek's multi-head latent attention (DeepseekV3Attention and
 * DeepseekV2Attention, transformers 5.24), on the normed input; returns
 * o_proj's output.  q: q_b_proj(q_a_layernorm(q_a_proj(h))), or q_proj(h)
 * without q_lora_rank, viewed (b, a, s, nope + rope) and split; the
 * latent: kv_a_proj_with_mqa(h) split into kv_lora_rank columns, normed
 * (kv_a_layernorm reads the view), and one rope_dim key head; RoPE on q's
 * and k's rotary parts; query_states = cat(q_pass, q_rot), a new tensor;
 * kv_b_proj expands the normed latent to (nope + v) per head, k_nope and v
 * are views of it; expand_kv's key_states is new_empty, filled by copy_
 * from k_nope and the broadcast k_rot (saves nothing).  Attention then
 * reads q, k and the v view, whose storage is kv_b_proj's whole output;
 * its output is (b, s, a, v_dim) wide.  attention_bias puts biases on
 * q_a_proj, kv_a_proj_with_mqa and o_proj only.  The softmax scale (with
 * yarn's mscale) is a scalar.
 */
static int32_t
mla_attention(struct lctx *x, int32_t h1)
{
	const struct vp_model *m = x->m;
	const struct vp_mla *ml = &m->mla;
	uint64_t n = x->b * x->s, a = x->a, qk = x->d, r = ml->rope_dim;
	uint64_t kr = ml->kv_rank, dv = x->dv;
	bool ab = m->qkv_bias > 0;
	int32_t q, ckv, kvn, kvb, qr, kro, qs, ks, v, cs, ctx;

	if (ml->q_rank) {
		q = linear(x, block_lin(x, VP_ROLE_Q_A), h1, x->h, ml->q_rank,
		    ab, true, VP_CAT_ACT);
		q = norm_w(x, "q_a_layernorm", q, ml->q_rank);
		q = linear(x, block_lin(x, VP_ROLE_Q_B), q, ml->q_rank, a * qk,
		    false, true, VP_CAT_ACT);
	} else {
		q = linear(x, block_lin(x, VP_ROLE_Q), h1, x->h, a * qk, false,
		    true, VP_CAT_ACT);
	}
	ckv = linear(x, block_lin(x, VP_ROLE_KV_A), h1, x->h, kr + r, ab,
	    true, VP_CAT_ACT);
	kvn = norm_rows(x, "kv_a_layernorm", ckv, n, kr);
	/* The position embeddings (5.x makes them once per forward; one
	 * tensor per block here, as for Llama): cos and sin in the
	 * embeddings' dtype, or V2's complex64 freqs_cis. */
	cs = x->fam.rope_complex ? ew(x, "rope freqs_cis", x->s * r, VP_FP32,
	    -1, -1, -1, -1, VP_CAT_ACT) : ew(x, "rope cos sin", 2 * x->s * r,
	    x->r, -1, -1, -1, -1, VP_CAT_ACT);
	qr = mla_rope(x, q, n * a * r, cs);
	kro = mla_rope(x, ckv, n * r, cs);
	qs = ew(x, "q cat", n * a * qk, promote(dt_of(x, q), dt_of(x, qr)), q,
	    qr, -1, -1, VP_CAT_ACT);
	kvb = linear(x, block_lin(x, VP_ROLE_KV_B), kvn, kr,
	    a * (ml->nope_dim + dv), false, true, VP_CAT_ACT);
	ks = ew(x, "k assemble", n * a * qk, dt_of(x, kvb), kvb, kro, -1, -1,
	    VP_CAT_ACT);
	/*
	 * v is a strided view of kv_b_proj's output.  sdpa's fused kernels
	 * read it as it is and keep the whole output; eager's p.v matmul
	 * (and the math path's, in fp32) reshapes it for bmm, which copies
	 * v's own elements, and keeps the copy: kv_b_proj's output goes
	 * (measured: no tensor of its size lives at the peak).  The math
	 * path's fp32 upcast of a 16-bit v is that copy already.
	 */
	v = kvb;
	if (x->p->attention == VP_ATTN_EAGER || (sdpa_math(x) &&
	    dt_of(x, kvb) == VP_FP32))
		v = ew(x, "v contiguous", n * a * dv, dt_of(x, kvb), kvb, -1,
		    -1, -1, VP_CAT_ACT);
	ctx = attention_core(x, qs, ks, v, x->fam.softmax_fp32,
	    x->fam.mask_fp32);
	/*
	 * attn_output.transpose(1, 2).contiguous(): query_states is the
	 * cat's contiguous (b, a, s, d), not a transposed view (no q_view).
	 * Eager's and the math path's outputs are (b, a, s, v), and so is
	 * the CPU flash kernel's, which takes q's layout (measured: o_proj
	 * saves a copy): the transpose copies.  CUDA's kernels write (b, s,
	 * a, v) whatever q's layout: a view there.
	 */
	if (x->p->attention == VP_ATTN_EAGER || x->cpu)
		ctx = ew(x, "attn transpose", n * a * dv, dt_of(x, ctx), ctx, -1,
		    -1, -1, VP_CAT_ACT);
	return linear(x, block_lin(x, VP_ROLE_O), ctx, a * dv, x->h,
	    m->o_bias > 0, true, VP_CAT_ACT);
}

/*
 * A DeepSeek decoder layer (DeepseekV3DecoderLayer, DeepseekV2DecoderLayer):
 * Llama's pre-norm layout with MLA, and the MLP or DeepSeek's MoE.
 */
static int32_t
mla_block(struct lctx *x, int32_t in)
{
	int32_t h, o, res, mlp;

	h = norm(x, "input norm", in);
	o = mla_attention(x, h);
	res = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);
	h = norm(x, "post attention norm", res);
	mlp = vp_moe_layer_sparse(x->m, x->global_layer) ? moe(x, h) :
	    mlp_block(x, h, x->f);
	return ew(x, "residual add", elems_of(x, res), promote(dt_of(x, res),
	    dt_of(x, mlp)), res, mlp, -1, -1, VP_CAT_ACT);
}

/*
 * A post-norm block: one BERT encoder layer, or a
 * torch.nn.TransformerEncoderLayer (norm_first=False) when q, k and v are
 * fused: attention, residual add, norm, MLP, residual add, norm.
 */
static int32_t
postnorm_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	const struct vp_family_info *fam = &x->fam;
	uint64_t n = x->b * x->s, qd = x->a * x->d;
	int32_t q, k, v, ctx, o, res, ff;

	if (fam->fused_qkv) {
		/* nn.MultiheadAttention: packed in_proj, then a contiguous
		 * re-layout of the whole projection; q is scaled by 1/sqrt(d)
		 * into a new tensor that bmm saves. */
		int32_t qkv = linear(x, block_lin(x, VP_ROLE_QKV), in, x->h,
		    3 * qd, true, true, VP_CAT_ACT);
		qkv = ew(x, "in_proj relayout", n * 3 * qd, dt_of(x, qkv),
		    qkv, -1, -1, -1, VP_CAT_ACT);
		q = ew(x, "q scale", n * qd, dt_of(x, qkv), qkv, -1, -1, -1,
		    VP_CAT_ACT);
		k = v = qkv;
	} else {
		q = linear(x, block_lin(x, VP_ROLE_Q), in, x->h, qd, true,
		    true, VP_CAT_ACT);
		k = linear(x, block_lin(x, VP_ROLE_K), in, x->h, qd, true,
		    true, VP_CAT_ACT);
		v = linear(x, block_lin(x, VP_ROLE_V), in, x->h, qd, true,
		    true, VP_CAT_ACT);
	}
	ctx = attention_core(x, q, k, v, fam->softmax_fp32, fam->mask_fp32);
	if (!attn_out_view(x))
		ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx), ctx, -1,
		    -1, -1, VP_CAT_ACT);
	o = linear(x, block_lin(x, VP_ROLE_O), ctx, qd, x->h, true, true,
	    VP_CAT_ACT);
	if (fam->resid_dropout)
		o = dropout(x, "attn output dropout", o);
	res = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);
	res = norm(x, "attention norm", res);
	ff = linear(x, block_lin(x, VP_ROLE_FC), res, x->h, x->f, true, true,
	    VP_CAT_ACT);
	ff = activation(x, m->act, ff);
	if (fam->ffn_dropout)
		ff = dropout(x, "ffn dropout", ff);
	ff = linear(x, block_lin(x, VP_ROLE_DOWN), ff, x->f, x->h, true, true,
	    VP_CAT_ACT);
	if (fam->resid_dropout)
		ff = dropout(x, "output dropout", ff);
	res = ew(x, "residual add", elems_of(x, res), promote(dt_of(x, res),
	    dt_of(x, ff)), res, ff, -1, -1, VP_CAT_ACT);
	return norm(x, "output norm", res);
}

/*
 * RoPE on the first r dims of each head of t (n*width elements in all,
 * width = heads * d) as transformers 5.24's Phi applies it: the rotated
 * part (a slice view) is multiplied by cos, rotate_half makes -x2 (half)
 * and the cat (x2 | x1) that sin multiplies, the add is the rotated part,
 * and torch.cat((rot, pass), -1) copies the whole head back.  The muls
 * save only cos and sin (the other operands need no gradient).
 */
static int32_t
rope_partial(struct lctx *x, int32_t t, uint64_t width, uint64_t r)
{
	uint64_t n = x->b * x->s, rw = width / x->d * r;
	enum vp_dtype dt = dt_of(x, t);
	int32_t t1, t2, t3, y;

	t1 = ew(x, "rope mul", n * rw, dt, t, -1, -1, -1, VP_CAT_ACT);
	t2 = ew(x, "rope neg", n * rw / 2, dt, t, -1, -1, -1, VP_CAT_ACT);
	t3 = ew(x, "rope cat", n * rw, dt, t2, -1, -1, -1, VP_CAT_ACT);
	t3 = ew(x, "rope mul", n * rw, dt, t3, -1, -1, -1, VP_CAT_ACT);
	y = ew(x, "rope add", n * rw, dt, t1, t3, -1, -1, VP_CAT_ACT);
	/* Falcon: Llama's RoPE over the whole head, no cat. */
	if (!x->fam.rope_cat)
		return y;
	return ew(x, "rope pass cat", n * width, dt, y, t, -1, -1, VP_CAT_ACT);
}

/*
 * Falcon's _split_heads of the query_key_value output *q (= *k = *v):
 * VP_QKV_VIEWS, three views; multi-query, q a view and k, v indexed
 * copies (fused[..., [-2], :]) of the one kv head; the kv groups of the
 * new decoder architecture, q a copy (the flatten of its slice) and k, v
 * indexed copies (b, s, kv, 1, d), broadcast to the group and flattened:
 * copies of every head, after which the small ones go.  Returns k's
 * width (the elements per token).
 */
static uint64_t
falcon_split(struct lctx *x, int32_t *q, int32_t *k, int32_t *v)
{
	uint64_t qd = x->a * x->d, kd = x->kv * x->d;
	int32_t qkv = *q;

	switch (x->m->qkv_split) {
	case VP_QKV_MULTI_QUERY:
		*k = contiguous(x, "k index", qkv, kd);
		*v = contiguous(x, "v index", qkv, kd);
		return kd;
	case VP_QKV_GROUPS:
		*q = contiguous(x, "q flatten", qkv, qd);
		*k = contiguous(x, "k flatten", contiguous(x, "k index", qkv,
		    kd), qd);
		*v = contiguous(x, "v flatten", contiguous(x, "v index", qkv,
		    kd), qd);
		return qd;
	default:
		return kd;
	}
}

/*
 * A parallel block (Phi, GPT-J, GPT-NeoX with use_parallel_residual): attention
 * and the MLP both read the normed input, and `attn + mlp + residual` is
 * the block's output (two adds, nothing saved).  par_norms 1: one norm
 * feeds both branches, whose linears then save that one tensor; 2: each
 * branch has its own norm of the block's input (which both save, once).
 * q, k and v are separate projections or views of one fused projection
 * (GPT-NeoX); with rope_cat, q and k reach attention as the
 * concatenation of their rotated and passed parts, contiguous (b, a, s,
 * d) tensors, so a fused kernel's output is in that layout too and the
 * reshape back to (b, s, a*d) copies it (no q view).
 */
static int32_t
parallel_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	const struct vp_family_info *fam = &x->fam;
	uint64_t n = x->b * x->s, qd = x->a * x->d, kd = x->kv * x->d;
	uint64_t r = m->rotary_dim ? m->rotary_dim : x->d;
	int32_t h1, q, k, v, ctx, o, mlp, sum;

	assert(fam->par_norms >= 1 && fam->par_norms <= 2);
	assert(m->pos == VP_POS_ROPE);
	h1 = norm(x, "input norm", in);
	if (fam->fused_qkv) {
		/* GPT-NeoX's query_key_value: q, k and v are views of its
		 * (b, a, s, 3d) re-view, chunked; v keeps it alive. */
		q = k = v = linear(x, block_lin(x, VP_ROLE_QKV), h1, x->h,
		    qd + 2 * kd, m->qkv_bias, true, VP_CAT_ACT);
		/* Falcon: _split_heads (falcon_split). */
		if (m->qkv_split)
			kd = falcon_split(x, &q, &k, &v);
	} else {
		q = linear(x, block_lin(x, VP_ROLE_Q), h1, x->h, qd,
		    m->qkv_bias, true, VP_CAT_ACT);
		k = linear(x, block_lin(x, VP_ROLE_K), h1, x->h, kd,
		    m->qkv_bias, true, VP_CAT_ACT);
		v = linear(x, block_lin(x, VP_ROLE_V), h1, x->h, kd,
		    m->qkv_bias, true, VP_CAT_ACT);
	}
	{
		/* cos and sin (s, r), which the muls save; GPT-J's
		 * repeat_interleave makes a pair for q and one for k. */
		int i;

		for (i = 0; i < (fam->sincos_table ? 2 : 1); i++) {
			int32_t cs = ew(x, "rope cos sin", 2 * x->s * r,
			    dt_of(x, q), -1, -1, -1, -1, VP_CAT_ACT);

			if (rg_of(x, q) || rg_of(x, k))
				x->g->op[x->g->nop - 1].saved[0] = cs;
		}
	}
	q = rope_partial(x, q, qd, r);
	k = rope_partial(x, k, kd, r);
	if (kd < qd)
		(void)repeat_kv(x, &k, &v);
	/* Eager, fused: matmul(probs, v) reshapes v, a chunk of the
	 * (b, a, s, 3d) view whose batch and head dims do not merge, into a
	 * copy that bmm saves (not the projection; measured, GPT-NeoX). */
	if (fam->fused_qkv && !m->qkv_split &&
	    x->p->attention == VP_ATTN_EAGER)
		v = contiguous(x, "v reshape", v, x->kv * x->d);
	/* GPT-J's eager scores: matmul(q.to(float32), k.to(float32)). */
	if (fam->qk_fp32 && x->p->attention == VP_ATTN_EAGER) {
		q = cast(x, q, VP_FP32, VP_CAT_ACT);
		k = cast(x, k, VP_FP32, VP_CAT_ACT);
	}
	ctx = attention_core(x, q, k, v, fam->softmax_fp32, fam->mask_fp32);
	/* A fused kernel's output is in q's layout: (b, s, a, d) when q is
	 * a transposed view (GPT-J), else (b, a, s, d), copied back. */
	if (!attn_out_view(x))
		ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx), ctx, -1,
		    -1, -1, VP_CAT_ACT);
	o = linear(x, block_lin(x, VP_ROLE_O), ctx, qd, x->h, m->o_bias > 0,
	    true, VP_CAT_ACT);
	if (fam->resid_dropout)
		o = dropout(x, "resid dropout", o);
	/* Two norms (GPT-NeoX): post_attention_layernorm of the block's
	 * input feeds the MLP. */
	mlp = mlp_block(x, fam->par_norms == 2 ?
	    norm(x, "post attention norm", in) : h1, x->f);
	if (fam->resid_dropout)
		mlp = dropout(x, "mlp dropout", mlp);
	sum = ew(x, "branch add", n * x->h, promote(dt_of(x, o), dt_of(x, mlp)),
	    o, mlp, -1, -1, VP_CAT_ACT);
	/* The residual's gradient is the add's output gradient itself
	 * (AddBackward0 returns it unchanged, no copy): the add is lowered
	 * with the branch sum as its one differentiable input, and the
	 * block input's gradient is made by its norm's backward. */
	sum = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, sum),
	    dt_of(x, in)), sum, -1, -1, -1, VP_CAT_ACT);
	/* Falcon, eager: the block before's attention weights are held
	 * (its `outputs`) until this block returns. */
	if (x->probs_prev >= 0)
		x->g->op[x->g->nop - 1].keep[0] = x->probs_prev;
	x->probs_prev = x->probs_held;
	x->probs_held = -1;
	return sum;
}

/* The block builders, by norm placement (vp_family_info.block). */

/*
 * Llama 4's MoE (Llama4TextMoe, v5.24), which runs every expert on every
 * token: the router linear, top-k, a -inf tensor the top values are
 * scattered into, their sigmoid in fp32 and the cast back; the input
 * repeated once per expert and scaled by its column of scores (the mul
 * saves both); one bmm with the experts' gate_up weights (e, h, 2f), SiLU
 * of the gate half times the up half, a bmm with the down weights; the
 * sum over experts added in place to the shared expert's output.  The
 * bmms are autocast ops (their fp32 weights cast, as linears' are).
 */
static int32_t
llama4_moe(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	uint64_t rows = elems_of(x, in) / x->h, e = m->moe.experts;
	uint64_t f = m->moe.ffn, k = m->moe.top_k;
	enum vp_dtype dt;
	int32_t r, topv, sc, sig, rep, col, gu, a, y, out;

	r = linear(x, LIN_ROUTER, in, x->h, e, false, true, VP_CAT_ACT);
	dt = dt_of(x, r);
	/* topk keeps its indices for backward (int64). */
	topv = ew(x, "router topk", rows * k, dt, r, -1, -1, -1, VP_CAT_ACT);
	{
		int32_t idx = tnew(x, rows * k, VP_INT64, VP_CAT_ACT,
		    "topk indices", false);
		struct vp_op *o = &x->g->op[x->g->nop - 1];

		OUT(o, idx);
		SAVE(o, idx);
	}
	sc = ew(x, "router scatter", rows * e, dt, topv, -1, -1, -1,
	    VP_CAT_ACT);
	sig = cast(x, sc, VP_FP32, VP_CAT_ACT);
	sig = ew(x, "router sigmoid", rows * e, VP_FP32, sig, -1, -1, -1,
	    VP_CAT_ACT);
	save_result(x, sig);
	sig = cast(x, sig, dt, VP_CAT_ACT);
	rep = ew(x, "expert repeat", e * rows * x->h, dt_of(x, in), in, -1, -1,
	    -1, VP_CAT_ACT);
	/* scores.transpose(0, 1).reshape(-1, 1): a copy. */
	col = ew(x, "score column", e * rows, dt, sig, -1, -1, -1, VP_CAT_ACT);
	rep = ew(x, "routed scale", e * rows * x->h, promote(dt_of(x, rep), dt),
	    rep, col, rep, col, VP_CAT_ACT);
	x->wmult = e;
	gu = linear(x, block_lin(x, VP_ROLE_GATE), rep, x->h, 2 * f, false,
	    true, VP_CAT_ACT);
	/* gate and up are views of gate_up: SiLU and the product keep
	 * its storage. */
	a = ew(x, "silu", e * rows * f, dt_of(x, gu), gu, -1, gu, -1,
	    VP_CAT_ACT);
	a = ew(x, "gate mul", e * rows * f, dt_of(x, gu), a, gu, a, gu,
	    VP_CAT_ACT);
	y = linear(x, block_lin(x, VP_ROLE_DOWN), a, f, x->h, false, true,
	    VP_CAT_ACT);
	x->wmult = 1;
	y = ew(x, "expert sum", rows * x->h, dt_of(x, y), y, -1, -1, -1,
	    VP_CAT_ACT);
	out = mlp_block(x, in, m->moe.shared_ffn);
	/* out.add_(...) is in place; lowered as an add whose input dies
	 * with it, as moe()'s shared expert add. */
	return ew(x, "shared expert add", rows * x->h, dt_of(x, out), out, y,
	    -1, -1, VP_CAT_ACT);
}

/*
 * Llama 4's text block (Llama4TextDecoderLayer, v5.24): Llama's pre-norm
 * layout; q, k, v projected and viewed (b, s, heads, d); in a RoPE block
 * the complex RoPE and the L2 norm of q and k (qk_l2norm), in a NoPE one
 * the temperature tuning of q (a per-position fp32 factor: the product
 * is fp32, cast back); then transposed views into attention.  A RoPE
 * block attends within chunks, which costs what a local layer's window
 * does (window_mask): once the sequence reaches a chunk, transformers
 * passes sdpa a mask, so not enable_gqa (k and v repeated), and the
 * kernel keeps the mask's float copy.  The MLP is Llama4TextMoe in the
 * blocks with experts, else a SwiGLU MLP of the model's ffn.
 */
static int32_t
llama4_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	uint64_t n = x->b * x->s, qd = x->a * x->d, kd = x->kv * x->d;
	bool rope = !vp_block_nope(m, x->global_layer);
	int32_t h1, q, k, v, ctx, o, res, h2, mlp;

	h1 = norm(x, "input norm", in);
	q = linear(x, block_lin(x, VP_ROLE_Q), h1, x->h, qd, m->qkv_bias,
	    true, VP_CAT_ACT);
	k = linear(x, block_lin(x, VP_ROLE_K), h1, x->h, kd, m->qkv_bias,
	    true, VP_CAT_ACT);
	v = linear(x, block_lin(x, VP_ROLE_V), h1, x->h, kd, m->qkv_bias,
	    true, VP_CAT_ACT);
	if (rope) {
		/* Llama4TextRotaryEmbedding's freqs_cis: (s, d/2) complex64,
		 * one tensor per block here, as for the other families. */
		int32_t cs = ew(x, "rope freqs_cis", x->s * x->d, VP_FP32, -1,
		    -1, -1, -1, VP_CAT_ACT);

		q = complex_rope(x, q, n * qd, cs);
		k = complex_rope(x, k, n * kd, cs);
		if (m->qk_l2norm) {
			q = rms_normalize(x, q, elems_of(x, q) / x->d, x->d);
			k = rms_normalize(x, k, elems_of(x, k) / x->d, x->d);
		}
	} else if (m->attn_temperature) {
		enum vp_dtype dt = dt_of(x, q);

		q = ew(x, "attn temperature", n * qd, VP_FP32, q, -1, -1, -1,
		    VP_CAT_ACT);
		q = cast(x, q, dt, VP_CAT_ACT);
	}
	(void)repeat_kv(x, &k, &v);
	ctx = attention_core(x, q, k, v, x->fam.softmax_fp32,
	    x->fam.mask_fp32);
	if (!attn_out_view(x))
		ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx), ctx, -1,
		    -1, -1, VP_CAT_ACT);
	o = linear(x, block_lin(x, VP_ROLE_O), ctx, qd, x->h, m->o_bias > 0,
	    true, VP_CAT_ACT);
	res = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);
	h2 = norm(x, "post attention norm", res);
	mlp = vp_moe_layer_sparse(m, x->global_layer) ? llama4_moe(x, h2) :
	    mlp_block(x, h2, x->f);
	return ew(x, "residual add", elems_of(x, res), promote(dt_of(x, res),
	    dt_of(x, mlp)), res, mlp, -1, -1, VP_CAT_ACT);
}

/*
 * ModernBERT's RoPE (apply_rotary_pos_emb, modeling_modernbert.py of
 * transformers 5.24): (q.float() * cos) + (rotate_half(q.float()) * sin),
 * then .to(q's dtype).  Each .float() copies a 16-bit t (two copies; fp32
 * t is itself), rotate_half makes -x2 (half) and the cat, the products
 * and the sum are fp32, and the muls save only cos and sin (`cs`, made
 * once per forward by modernbert_rope_tables).  t is a view of Wqkv's
 * output (width = heads x d of it).
 */
static int32_t
modernbert_rope(struct lctx *x, int32_t t, uint64_t width, int32_t cs)
{
	uint64_t n = x->b * x->s * width;
	enum vp_dtype dt = dt_of(x, t);
	int32_t f, c, r;

	f = dt == VP_FP32 ? t : ew(x, "rope float", n, VP_FP32, t, -1, -1,
	    -1, VP_CAT_ACT);
	c = ew(x, "rope mul cos", n, VP_FP32, f, cs, cs, -1, VP_CAT_ACT);
	f = dt == VP_FP32 ? t : ew(x, "rope float", n, VP_FP32, t, -1, -1,
	    -1, VP_CAT_ACT);
	r = ew(x, "rope neg", n / 2, VP_FP32, f, -1, -1, -1, VP_CAT_ACT);
	r = ew(x, "rope cat", n, VP_FP32, r, f, -1, -1, VP_CAT_ACT);
	r = ew(x, "rope mul sin", n, VP_FP32, r, cs, cs, -1, VP_CAT_ACT);
	r = ew(x, "rope add", n, VP_FP32, c, r, -1, -1, VP_CAT_ACT);
	return cast(x, r, dt, VP_CAT_ACT);
}

/*
 * ModernBertModel.forward computes cos and sin, (1, s, d) each in the
 * hidden states' dtype, once per layer type before the blocks
 * (ModernBertRotaryEmbedding); every block's RoPE muls save its type's.
 * They go when the forward returns (masks_freed) and the last saver's
 * backward has run.
 */
static void
modernbert_rope_tables(struct lctx *x, enum vp_dtype dt)
{
	uint64_t l;

	if (x->fam.block != VP_BLOCK_MODERNBERT)
		return;
	for (l = 0; l < x->m->layers; l++) {
		int local = vp_layer_local(x->m, l);

		if (x->rope_cs[local] < 0)
			x->rope_cs[local] = ew(x, local ? "local rope cos sin" :
			    "global rope cos sin", 2 * x->s * x->d, dt, -1,
			    -1, -1, -1, VP_CAT_ACT);
	}
}

/*
 * ModernBertEncoderLayer (transformers 5.24): attn_norm (an Identity in
 * block 0), Wqkv (q, k and v are views of its output: view, unbind,
 * transpose), RoPE in fp32 on q and k, attention (sdpa, or eager with
 * Llama's fp32 softmax; local layers read the sliding-window mask,
 * layer_masks), the output back to (b, s, a*d), Wo, the residual add;
 * mlp_norm, Wi (h -> 2 ffn: input and gate are its chunks, views),
 * GELU of the input half (saves it: a view, so the whole Wi output),
 * times the gate (saves both), Wo, the residual add.  Dropout is refused
 * by rules.c unless 0 (every released config), so no dropout site is
 * lowered: nn.Identity / p = 0 on the CPU are no ops.
 */
static int32_t
modernbert_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	uint64_t n = x->b * x->s, qd = x->a * x->d, nf = n * x->f;
	int32_t cs = x->rope_cs[vp_layer_local(m, x->global_layer)];
	int32_t h1, qkv, q, k, v, ctx, o, res, h2, wi, a;
	enum vp_dtype dt;

	assert(cs >= 0);
	h1 = x->global_layer == 0 ? in : norm(x, "attn norm", in);
	qkv = linear(x, block_lin(x, VP_ROLE_QKV), h1, x->h, 3 * qd,
	    m->qkv_bias > 0, true, VP_CAT_ACT);
	q = modernbert_rope(x, qkv, qd, cs);
	k = modernbert_rope(x, qkv, qd, cs);
	v = qkv;
	/* Eager: matmul(probs, v) reshapes v, an unbound view of the
	 * (b, s, 3, a, d) projection whose dims do not merge, into a copy
	 * that bmm saves (as GPT-NeoX's chunk). */
	if (x->p->attention == VP_ATTN_EAGER)
		v = contiguous(x, "v reshape", v, qd);
	ctx = attention_core(x, q, k, v, true, true);
	if (!attn_out_view(x))
		ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx), ctx, -1,
		    -1, -1, VP_CAT_ACT);
	o = linear(x, block_lin(x, VP_ROLE_O), ctx, qd, x->h, m->o_bias > 0,
	    true, VP_CAT_ACT);
	res = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);
	h2 = norm(x, "mlp norm", res);
	wi = linear(x, block_lin(x, VP_ROLE_GATE), h2, x->h, 2 * x->f, m->bias,
	    true, VP_CAT_ACT);
	dt = dt_of(x, wi);
	a = ew(x, "gelu", nf, dt, wi, -1, wi, -1, VP_CAT_ACT);
	a = ew2(x, "gate mul", nf, dt, a, wi, VP_CAT_ACT);
	o = linear(x, block_lin(x, VP_ROLE_DOWN), a, x->f, x->h, m->bias, true,
	    VP_CAT_ACT);
	return ew(x, "residual add", elems_of(x, res), promote(dt_of(x, res),
	    dt_of(x, o)), res, o, -1, -1, VP_CAT_ACT);
}

/*
 * What DebertaV2Encoder.forward makes before its layers (transformers
 * 5.24), alive until it returns: the input mask expanded to (b, 1, s, s)
 * in fp32 (attention_mask * its transpose; the model's mask is torch.ones
 * when none is given) as mask_full, the relative positions (1, s, s)
 * int64 (log buckets), and the relative embeddings' LayerNorm (2 x span
 * rows of h; its input is the parameter itself, no memory of its own),
 * which every layer's projections save.
 */
static void
deberta_encoder_tensors(struct lctx *x)
{
	struct vp_graph *g = x->g;
	uint64_t rows = 2 * x->m->rel_buckets;
	int32_t w;

	if (x->fam.block != VP_BLOCK_DEBERTA)
		return;
	x->mask_full = ew(x, "attention mask", x->b * x->s * x->s_kv,
	    VP_FP32, -1, -1, -1, -1, VP_CAT_ACT);
	x->deb_relpos = ew(x, "relative positions", x->s * x->s_kv,
	    VP_INT64, -1, -1, -1, -1, VP_CAT_ACT);
	w = ew(x, "rel_embeddings", rows * x->h, x->w, -1, -1, -1, -1,
	    VP_CAT_ACT);
	g->t[w].bytes = 0;	/* the parameter itself */
	g->t[w].requires_grad = !x->frozen;
	if (!x->frozen)
		g->op[g->nop - 1].wgrad_bytes = vp_mul_sat(rows * x->h,
		    B(x->gd));
	x->deb_rel = norm_w(x, "rel embeddings norm", w, x->h);
}

/* transpose_for_scores: view, permute(0, 2, 1, 3).contiguous(): a copy
 * of `rows` rows of a x d per head. */
static int32_t
deberta_heads(struct lctx *x, const char *name, int32_t t, uint64_t rows)
{
	return ew(x, name, rows * x->a * x->d, dt_of(x, t), t, -1, -1, -1,
	    VP_CAT_ACT);
}

/*
 * torch.gather of a 16-bit tensor on the CPU (PyTorch 2.13) gathers into
 * an fp32 buffer of the output's size, freed once the output is made, and
 * its backward's scatter_add_ takes an fp32 buffer of the input's size
 * (measured with the profiler's allocation events: 8 MiB after the 4 MiB
 * output, then 1 MiB in backward, for a (8, 512, 512) bf16 gather of
 * (8, 512, 64)).
 */
static void
deberta_gather_tmp(struct lctx *x, uint64_t out, uint64_t in,
    enum vp_dtype dt)
{
	struct vp_op *o = &x->g->op[x->g->nop - 1];

	if (!x->cpu || dt == VP_FP32)
		return;
	o->fwd_tmp = vp_mul_sat(out, B(VP_FP32));
	o->bwd_tmp = vp_mul_sat(in, B(VP_FP32));
}

/*
 * DebertaV2Layer (transformers 5.24), eager: DisentangledSelfAttention
 * with c2p and p2c and share_att_key (what the reader admits).  q, k, v:
 * each projection made contiguous per head (the projection's output
 * goes); k^T / sqrt(d * 3) a new tensor; the content scores bmm(q, k)
 * saves both.  The relative embeddings through query_proj and key_proj
 * (2 x span rows; the linears save the normed table), made contiguous
 * and repeated per batch row (b x a x 2span x d each); c2p: bmm(q,
 * pos_k) (b a s 2span, saves both), clamp(relative_pos + span) (s, s)
 * int64 that gather saves as its index, gather (b a s s; it saves its
 * input too, measured: the whole b a s 2span product), / scale, then
 * `0 + it` (a new tensor); p2c: -relative_pos + span and the clamp
 * (int64), bmm(k, pos_q), gather, transposed, / scale, added in place;
 * both gathers' results live until the function returns (measured: six
 * b a s s tensors at the forward peak, one the previous layer's softmax).
 * scores + rel_att; the mask's .bool() and its negation (b, 1, s, s), the
 * second saved by masked_fill; softmax (saves its result); bmm(probs, v)
 * (saves both); the context permuted back into a copy.  Then BERT's
 * post-norm output, intermediate and output (dropout refused by rules.c,
 * so none is lowered).
 */
static int32_t
deberta_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	uint64_t n = x->b * x->s, qd = x->a * x->d, span = m->rel_buckets;
	uint64_t ss = x->b * x->a * x->s * x->s_kv, r = 2 * span;
	uint64_t rs = x->b * x->a * x->s * r, bss = x->b * x->s * x->s_kv;
	int32_t q, k, v, ks, sc, pq, pk, c2p, p2c, idx, rel, mb, pr, ctx, o;
	int32_t res, ff, g1, g2;
	enum vp_dtype dt;
	struct vp_op *op;

	assert(x->deb_rel >= 0 && x->deb_relpos >= 0 && x->mask_full >= 0);
	q = linear(x, block_lin(x, VP_ROLE_Q), in, x->h, qd, true, true,
	    VP_CAT_ACT);
	q = deberta_heads(x, "q heads", q, n);
	k = linear(x, block_lin(x, VP_ROLE_K), in, x->h, qd, true, true,
	    VP_CAT_ACT);
	k = deberta_heads(x, "k heads", k, n);
	v = linear(x, block_lin(x, VP_ROLE_V), in, x->h, qd, true, true,
	    VP_CAT_ACT);
	v = deberta_heads(x, "v heads", v, n);
	dt = dt_of(x, q);
	ks = ew(x, "k scale", n * qd, dt, k, -1, -1, -1, VP_CAT_ACT);
	sc = ew2(x, "qk bmm", ss, dt, q, ks, VP_CAT_ACT);
	/* share_att_key: the same projections of the relative table, after
	 * its pos_dropout (one per layer). */
	pr = dropout(x, "pos dropout", x->deb_rel);
	pq = linear(x, block_lin(x, VP_ROLE_Q), pr, x->h, qd, true,
	    true, VP_CAT_ACT);
	pq = deberta_heads(x, "pos q heads", pq, r);
	pq = ew(x, "pos q repeat", x->b * r * qd, dt, pq, -1, -1, -1,
	    VP_CAT_ACT);
	pk = linear(x, block_lin(x, VP_ROLE_K), pr, x->h, qd, true,
	    true, VP_CAT_ACT);
	pk = deberta_heads(x, "pos k heads", pk, r);
	pk = ew(x, "pos k repeat", x->b * r * qd, dt, pk, -1, -1, -1,
	    VP_CAT_ACT);
	/* content -> position */
	c2p = ew2(x, "c2p bmm", rs, dt, q, pk, VP_CAT_ACT);
	idx = ew(x, "c2p index", x->s * x->s_kv, VP_INT64, x->deb_relpos, -1,
	    -1, -1, VP_CAT_ACT);
	idx = ew(x, "c2p clamp", x->s * x->s_kv, VP_INT64, idx, -1, -1, -1,
	    VP_CAT_ACT);
	c2p = ew(x, "c2p gather", ss, dt, c2p, idx, idx, c2p, VP_CAT_ACT);
	g1 = c2p;
	deberta_gather_tmp(x, ss, rs, dt);
	c2p = ew(x, "c2p scale", ss, dt, c2p, -1, -1, -1, VP_CAT_ACT);
	rel = ew(x, "score init", ss, dt, c2p, -1, -1, -1, VP_CAT_ACT);
	/* position -> content */
	idx = ew(x, "p2c neg", x->s * x->s_kv, VP_INT64, x->deb_relpos, -1, -1,
	    -1, VP_CAT_ACT);
	idx = ew(x, "p2c add", x->s * x->s_kv, VP_INT64, idx, -1, -1, -1,
	    VP_CAT_ACT);
	idx = ew(x, "p2c clamp", x->s * x->s_kv, VP_INT64, idx, -1, -1, -1,
	    VP_CAT_ACT);
	p2c = ew2(x, "p2c bmm", rs, dt, k, pq, VP_CAT_ACT);
	p2c = ew(x, "p2c gather", ss, dt, p2c, idx, idx, p2c, VP_CAT_ACT);
	g2 = p2c;
	deberta_gather_tmp(x, ss, rs, dt);
	p2c = ew(x, "p2c scale", ss, dt, p2c, -1, -1, -1, VP_CAT_ACT);
	/* score += ...: in place; the gathers' results stay bound to
	 * c2p_att and p2c_att until disentangled_attention_bias returns. */
	op = opnew(x, "p2c add_");
	IN(op, rel);
	IN(op, p2c);
	IN(op, g1);
	IN(op, g2);
	sc = ew(x, "rel add", ss, dt, sc, rel, -1, -1, VP_CAT_ACT);
	mb = ew(x, "mask bool", bss, VP_BOOL, x->mask_full, -1, -1, -1,
	    VP_CAT_ACT);
	mb = ew(x, "mask not", bss, VP_BOOL, mb, -1, -1, -1, VP_CAT_ACT);
	sc = ew(x, "masked_fill", ss, dt, sc, mb, mb, -1, VP_CAT_ACT);
	/* CUDA autocast runs softmax in fp32 (as attention_core); the
	 * CPU's keeps the scores' dtype; the bmm casts back. */
	pr = ew(x, "softmax", ss, x->autocast && !x->cpu ? VP_FP32 : dt, sc,
	    -1, -1, -1, VP_CAT_ACT);
	save_result(x, pr);
	pr = dropout(x, "attn dropout", pr);
	pr = cast(x, pr, dt, VP_CAT_ACT);
	ctx = ew2(x, "pv bmm", n * qd, dt, pr, v, VP_CAT_ACT);
	ctx = ew(x, "context permute", n * qd, dt, ctx, -1, -1, -1,
	    VP_CAT_ACT);
	o = linear(x, block_lin(x, VP_ROLE_O), ctx, qd, x->h, true, true,
	    VP_CAT_ACT);
	o = dropout(x, "attn output dropout", o);
	res = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);
	res = norm(x, "attention norm", res);
	ff = linear(x, block_lin(x, VP_ROLE_FC), res, x->h, x->f, true, true,
	    VP_CAT_ACT);
	ff = activation(x, m->act, ff);
	ff = linear(x, block_lin(x, VP_ROLE_DOWN), ff, x->f, x->h, true, true,
	    VP_CAT_ACT);
	ff = dropout(x, "output dropout", ff);
	res = ew(x, "residual add", elems_of(x, res), promote(dt_of(x, res),
	    dt_of(x, ff)), res, ff, -1, -1, VP_CAT_ACT);
	return norm(x, "output norm", res);
}

/*
 * Mamba-2 (transformers 5.24, modeling_mamba2.py, Mamba2Mixer's
 * torch_forward path: what runs without the mamba_ssm and causal_conv1d
 * kernels, as on the CPU).  Sizes: N = b s tokens, Np = b Lp with Lp the
 * sequence padded to a multiple of the chunk (cs), c = Lp / cs chunks,
 * H heads of P (I = H P, the inner width, the model's ffn), groups g of
 * state n, conv channels C = I + 2 g n.  Measured on PyTorch 2.13 (what
 * autograd keeps, walked from the block's output: calib/hf_models.py's
 * mamba2 config, fp32, bf16 and bf16-mixed).
 */
static const struct lin LIN_SSM_IN = { "in_proj", 0, LIN_LOCAL };
static const struct lin LIN_SSM_OUT = { "out_proj", 0, LIN_LOCAL };

/*
 * Tensor t, the output of the op just made, is really `k` views of one
 * storage that the code splits (projected_states.split, torch.split of
 * the conv's output): t becomes the first piece (n[0] elements) and the
 * others are outputs of the same op, so that each can be consumed and
 * saved on its own while the bytes stay those of the one tensor.
 */
static void
split_views(struct lctx *x, int32_t t, const uint64_t *n, int k,
    int32_t *piece)
{
	struct vp_op *o = &x->g->op[x->g->nop - 1];
	enum vp_dtype dt = dt_of(x, t);
	int i;

	x->g->t[t].bytes = vp_mul_sat(n[0], B(dt));
	piece[0] = t;
	for (i = 1; i < k; i++) {
		piece[i] = tnew(x, n[i], dt, VP_CAT_ACT, x->g->t[t].name,
		    rg_of(x, t));
		OUT(o, piece[i]);
	}
}

/*
 * One torch.einsum of the chunked scan: it permutes each operand into
 * bmm's batched layout, copying it where the permutation is no view (an
 * operand's copy of `ca` / `cb` elements, 0 = none), and bmm keeps both
 * (under autocast their casts to the compute dtype: the fp32 copies are
 * transients, and backward makes the casts' gradients before theirs).
 * The result, nout elements, is bmm's output seen in the einsum's order.
 */
static int32_t
ssd_einsum(struct lctx *x, const char *name, int32_t a, uint64_t ca,
    int32_t b, uint64_t cb, uint64_t nout)
{
	struct vp_op *o = opnew(x, name);
	int32_t op[2] = { a, b }, keep[2];
	uint64_t cp[2] = { ca, cb };
	enum vp_dtype odt = x->autocast ? x->c : promote(dt_of(x, a),
	    dt_of(x, b));
	bool rg = rg_of(x, a) || rg_of(x, b);
	int32_t y;
	int i;

	IN(o, a);
	IN(o, b);
	for (i = 0; i < 2; i++) {
		enum vp_dtype dt = dt_of(x, op[i]);
		bool cast16 = x->autocast && dt != x->c;
		uint64_t n = cp[i] ? cp[i] : elems_of(x, op[i]);

		keep[i] = op[i];
		if (!cp[i] && !cast16)
			continue;
		keep[i] = tnew(x, n, cast16 ? x->c : dt, VP_CAT_ACT, name,
		    false);
		OUT(o, keep[i]);
		if (cp[i] && cast16)
			o->fwd_tmp = vp_add_sat(o->fwd_tmp, vp_mul_sat(n,
			    B(dt)));
		if (cast16 && rg_of(x, op[i]))
			o->bwd_tmp = vp_add_sat(o->bwd_tmp, vp_mul_sat(n,
			    B(x->c)));
	}
	y = tnew(x, nout, odt, VP_CAT_ACT, name, rg);
	OUT(o, y);
	if (rg) {
		SAVE(o, keep[0]);
		SAVE(o, keep[1]);
	}
	return y;
}

/* A product with a broadcast operand (x * dt[..., None], B * decay,
 * C_times_states * decay): the broadcast operand's gradient is the
 * product with the other's, then a sum (one transient of the output). */
static int32_t
bcast_mul(struct lctx *x, const char *name, uint64_t n, int32_t a,
    int32_t b)
{
	int32_t y = ew(x, name, n, promote(dt_of(x, a), dt_of(x, b)), a, b,
	    rg_of(x, b) ? a : -1, rg_of(x, a) ? b : -1, VP_CAT_ACT);

	x->g->op[x->g->nop - 1].bwd_tmp = vp_mul_sat(n, B(dt_of(x, y)));
	return y;
}

/* segment_sum(t).exp() over the last dim of t (rows of cs): expand,
 * masked_fill, cumsum, masked_fill, exp, each a new tensor of rows x cs
 * x cs (the masks, cs x cs bools, are left out); exp keeps its result. */
static int32_t
ssd_segsum_exp(struct lctx *x, int32_t t, uint64_t rows, uint64_t cs)
{
	uint64_t n = vp_mul_sat(rows, vp_mul_sat(cs, cs));
	int32_t y;

	y = ew(x, "segsum fill", n, VP_FP32, t, -1, -1, -1, VP_CAT_ACT);
	/* The masked gradient, before the expand's sum. */
	x->g->op[x->g->nop - 1].bwd_tmp = vp_mul_sat(n, B(VP_FP32));
	y = ew(x, "segsum cumsum", n, VP_FP32, y, -1, -1, -1, VP_CAT_ACT);
	/* cumsum's backward: flip, cumsum, flip. */
	x->g->op[x->g->nop - 1].bwd_tmp = vp_mul_sat(n, B(VP_FP32));
	y = ew(x, "segsum fill", n, VP_FP32, y, -1, -1, -1, VP_CAT_ACT);
	y = ew(x, "segsum exp", n, VP_FP32, y, -1, -1, -1, VP_CAT_ACT);
	save_result(x, y);
	return y;
}

/*
 * A weightless op that only ends the life of what Python still names
 * (a function's locals at its return): up to VP_OP_MAXKEEP tensors.
 */
static void
release(struct lctx *x, const char *name, int32_t a, int32_t b, int32_t c)
{
	struct vp_op *o = opnew(x, name);

	o->keep[0] = a;
	o->keep[1] = b;
	o->keep[2] = c;
}

/*
 * The mixer (Mamba2Mixer.forward and mamba2_chunk_scan, torch_forward).
 * in_proj's output (kept whole by the views split from it until the
 * mixer returns) is the gate z, xBC and dt; xBC.to(conv weight dtype)
 * through the depthwise conv1d (padding k - 1: its output has s + k - 1
 * steps, the SiLU reads the first s and keeps the whole); the SiLU's
 * output split into x, B and C.  The scan: dt + dt_bias, softplus,
 * clamp (each keeps its input), x.float() and B, C .float() repeated
 * to every head; D_residual = D * pad(x); x * dt and A * dt; the four
 * reshape_into_chunks pads (copies, also with nothing to pad); the
 * cumsum of A; L = exp(segsum(A)); G = C B^T per chunk, M = G * L,
 * Y_diag = M x; decay_states, B * decay, the chunk states; the states
 * of the chunk boundaries (cat with zeros, exp(segsum) of the chunk
 * sums); C times the states, times exp(A_cumsum); the sum made
 * contiguous, plus D_residual.  Then MambaRMSNormGated: y * silu(z) in
 * fp32, an RMSNorm over groups of I / g, times the weight; out_proj on
 * it cast to the mixer input's dtype.
 */
static int32_t
ssm_mixer(struct lctx *x, int32_t h1)
{
	const struct vp_model *m = x->m;
	const struct vp_ssm *q = &m->ssm;
	uint64_t b = x->b, s = x->s, N = b * s, H = q->heads, P = q->head_dim;
	uint64_t I = H * P, gn = q->groups * q->state, C = I + 2 * gn;
	uint64_t cs = q->chunk, c = (s + cs - 1) / cs, Lp = c * cs;
	uint64_t Np = b * Lp, n = q->state, hb = vp_mul_sat(H, B(x->gd));
	uint64_t ns = b * c * H * P * n, nz = b * (c + 1) * H * P * n;
	uint64_t pn[3], xn[3];
	enum vp_dtype f = VP_FP32, pd;
	int32_t proj, pc[3], gate, xbc, dtp, xin, cv, sx, xc[3];
	int32_t dtb, dt1, dt2, x32, b32, c32, brep, crep, xpad, dres, xdt, adt;
	int32_t xp, ap, bp, cp, acum, L, G, M, yd, dec, bd, st, z, cat, dch;
	int32_t nst, sdo, cts, yo, y, g32, sg, hg, hn, no;
	struct vp_op *o;

	/* 1. in_proj: z, xBC, dt. */
	proj = linear(x, LIN_SSM_IN, h1, x->h, I + C + H, q->proj_bias, true,
	    VP_CAT_ACT);
	pn[0] = N * I; pn[1] = N * C; pn[2] = N * H;
	split_views(x, proj, pn, 3, pc);
	gate = pc[0]; xbc = pc[1]; dtp = pc[2];
	pd = dt_of(x, proj);

	/* 2. The causal conv1d: under autocast an fp32 copy (the weight's
	 * dtype), then autocast's cast back for the convolution. */
	xin = cast(x, xbc, x->w, VP_CAT_ACT);
	o = opnew(x, "conv1d");
	IN(o, xin);
	{
		int32_t ci = xin, wc;

		if (x->autocast && dt_of(x, xin) != x->c) {
			ci = tnew(x, N * C, x->c, VP_CAT_ACT, "conv1d input",
			    false);
			OUT(o, ci);
			/* The cast's gradient, then the fp32 one. */
			o->bwd_tmp = vp_mul_sat(N * C, B(x->c));
		}
		wc = x->autocast && x->w != x->c ? tnew(x, C * q->conv_kernel,
		    x->c, VP_CAT_ACT, "conv1d weight", false) : -1;
		if (wc >= 0)
			OUT(o, wc);
		cv = tnew(x, b * C * (s + q->conv_kernel - 1), dt_of(x, ci),
		    VP_CAT_ACT, "conv1d", true);
		OUT(o, cv);
		SAVE(o, ci);
		if (wc >= 0)
			SAVE(o, wc);
		/* Saving a view of in_proj's output keeps all of it. */
		if (ci == xbc) {
			SAVE(o, gate);
			SAVE(o, dtp);
		}
		o->wgrad_bytes = vp_mul_sat(C * (q->conv_kernel +
		    (q->conv_bias ? 1 : 0)), B(x->gd));
		if (q->conv_bias)
			o->wgrad_bias_bytes = vp_mul_sat(C, B(x->gd));
	}
	sx = ew(x, "conv silu", b * C * s, dt_of(x, cv), cv, -1, cv, -1,
	    VP_CAT_ACT);
	/* SiLU's gradient of the s steps, then the slice's of all. */
	x->g->op[x->g->nop - 1].bwd_tmp = vp_mul_sat(b * C * s,
	    B(dt_of(x, cv)));
	xn[0] = N * I; xn[1] = N * gn; xn[2] = N * gn;
	split_views(x, sx, xn, 3, xc);

	/* 3. dt, x, B, C. */
	dtb = ew(x, "dt bias", N * H, pd, dtp, -1, -1, -1, VP_CAT_ACT);
	x->g->op[x->g->nop - 1].wgrad_bytes = hb;
	dtb = ew(x, "dt softplus", N * H, pd, dtb, -1, dtb, -1, VP_CAT_ACT);
	dtb = ew(x, "dt clamp", N * H, pd, dtb, -1, dtb, -1, VP_CAT_ACT);
	x32 = cast(x, xc[0], f, VP_CAT_ACT);
	b32 = cast(x, xc[1], f, VP_CAT_ACT);
	brep = ew(x, "B repeat", N * H * n, f, b32, -1, -1, -1, VP_CAT_ACT);
	c32 = cast(x, xc[2], f, VP_CAT_ACT);
	crep = ew(x, "C repeat", N * H * n, f, c32, -1, -1, -1, VP_CAT_ACT);
	xpad = ew(x, "pad", Np * P * H, f, x32, -1, -1, -1, VP_CAT_ACT);
	dres = ew(x, "D residual", Np * I, f, xpad, -1, xpad, -1, VP_CAT_ACT);
	o = &x->g->op[x->g->nop - 1];
	o->wgrad_bytes = hb;
	o->bwd_tmp = vp_mul_sat(Np * I, B(f));
	dt1 = cast(x, dtb, f, VP_CAT_ACT);
	xdt = bcast_mul(x, "x dt", N * I, x32, dt1);
	/* x * dt keeps a view of the SiLU's output: all of it. */
	if (x32 == xc[0]) {
		SAVE(&x->g->op[x->g->nop - 1], xc[1]);
		SAVE(&x->g->op[x->g->nop - 1], xc[2]);
	}
	dt2 = cast(x, dtb, f, VP_CAT_ACT);
	adt = ew(x, "A dt", N * H, f, dt2, -1, dt2, -1, VP_CAT_ACT);
	x->g->op[x->g->nop - 1].wgrad_bytes = hb;	/* A_log */

	/* 4. Chunks. */
	xp = ew(x, "pad", Np * I, f, xdt, -1, -1, -1, VP_CAT_ACT);
	ap = ew(x, "pad", Np * H, f, adt, -1, -1, -1, VP_CAT_ACT);
	bp = ew(x, "pad", Np * H * n, f, brep, -1, -1, -1, VP_CAT_ACT);
	cp = ew(x, "pad", Np * H * n, f, crep, -1, -1, -1, VP_CAT_ACT);
	acum = ew(x, "A cumsum", Np * H, f, ap, -1, -1, -1, VP_CAT_ACT);
	L = ssd_segsum_exp(x, ap, Np * H / cs, cs);
	G = ssd_einsum(x, "G einsum", cp, Np * H * n, bp, Np * H * n,
	    Np * H * cs);
	M = ew(x, "G * L", Np * H * cs, promote(dt_of(x, G), f), G, L, G, L,
	    VP_CAT_ACT);
	/* M is G's layout, (b, c, h, l, s), already bmm's: no copy. */
	yd = ssd_einsum(x, "Y_diag einsum", M, 0, xp, Np * I, Np * I);
	dec = ew(x, "decay sub", Np * H, f, acum, -1, -1, -1, VP_CAT_ACT);
	dec = ew(x, "decay exp", Np * H, f, dec, -1, -1, -1, VP_CAT_ACT);
	save_result(x, dec);
	bd = bcast_mul(x, "B decay", Np * H * n, bp, dec);
	st = ssd_einsum(x, "states einsum", bd, Np * H * n, xp, Np * I, ns);
	z = ew(x, "zeros", b * H * P * n, dt_of(x, st), -1, -1, -1, -1,
	    VP_CAT_ACT);
	cat = ew(x, "states cat", nz, dt_of(x, st), z, st, -1, -1,
	    VP_CAT_ACT);
	dch = ew(x, "chunk decay exp", b * H * (c + 1) * (c + 1), f, acum, -1,
	    -1, -1, VP_CAT_ACT);
	save_result(x, dch);
	nst = ssd_einsum(x, "chunk states einsum", dch, 0, cat, nz, nz);
	sdo = ew(x, "state decay exp", Np * H, f, acum, -1, -1, -1,
	    VP_CAT_ACT);
	save_result(x, sdo);
	cts = ssd_einsum(x, "C states einsum", cp, Np * H * n, nst, ns,
	    Np * I);
	yo = bcast_mul(x, "Y_off", Np * I, cts, sdo);
	y = ew(x, "Y add", Np * I, f, yd, yo, -1, -1, VP_CAT_ACT);
	y = ew(x, "Y contiguous", Np * I, f, y, -1, -1, -1, VP_CAT_ACT);
	y = ew(x, "D add", Np * I, f, y, dres, -1, -1, VP_CAT_ACT);
	/* mamba2_chunk_scan's locals live until it returns: the chunked x,
	 * A, B and C, A's cumsum, D_residual, L, G, M, the decays, B * decay, the
	 * boundary states, C times them, both halves of the output, the
	 * zero initial states and dt (measured: 1.1 MB of the fp32 case's
	 * 10.6 MB freed at the return). */
	release(x, "scan return", xp, cp, dres);
	release(x, "scan return", bd, nst, z);
	release(x, "scan return", yd, yo, cts);
	release(x, "scan return", G, L, bp);
	release(x, "scan return", dec, sdo, dch);
	release(x, "scan return", acum, ap, dtb);
	/* M is bmm's own operand unless autocast casts it: then a local. */
	release(x, "scan return", M, -1, -1);

	/* 5. MambaRMSNormGated(y, z), in fp32. */
	g32 = cast(x, gate, f, VP_CAT_ACT);
	sg = ew(x, "gate silu", N * I, f, g32, -1, g32, -1, VP_CAT_ACT);
	hg = ew(x, "gate mul", N * I, f, y, sg, y, sg, VP_CAT_ACT);
	hn = rms_normalize(x, hg, N * q->groups, I / q->groups);
	/* pow(2)'s backward, grad * (2 * x.pow(1)) (pow_backward): both
	 * temporaries of x's size live until the product is made (measured
	 * at this norm, where the fp32 step peaks: four tensors of x over
	 * the gradient of x; rms_core's pow is five ops back). */
	assert(dt_of(x, hn) == f &&
	    strcmp(x->g->op[x->g->nop - 5].name, "rms pow") == 0);
	x->g->op[x->g->nop - 5].bwd_tmp = vp_mul_sat(2 * N * I, B(f));
	o = opnew(x, "mixer norm");
	IN(o, hn);
	no = tnew(x, N * I, promote(x->w, f), VP_CAT_ACT, "mixer norm", true);
	OUT(o, no);
	if (!x->frozen) {
		SAVE(o, hn);
		o->wgrad_bytes = vp_mul_sat(I, B(x->gd));
	}
	o->bwd_tmp = vp_mul_sat(N * I, B(dt_of(x, no)));
	y = linear(x, LIN_SSM_OUT, cast(x, no, dt_of(x, h1), VP_CAT_ACT), I,
	    x->h, q->proj_bias, true, VP_CAT_ACT);
	/* The mixer's locals, through out_proj: in_proj's output and the
	 * SiLU's, whole; scan_output, the norm's output before its cast;
	 * and its input, which the block names until the mixer returns
	 * (not what in_proj keeps under autocast, its cast). */
	release(x, "mixer return", pc[1], pc[2], xc[0]);
	release(x, "mixer return", xc[1], xc[2], h1);
	release(x, "mixer return", no, -1, -1);
	return y;
}

static int32_t mamba1_mixer(struct lctx *x, int32_t h1);

/*
 * Mamba2Block and MambaBlock (transformers 5.24): hidden_states.to(norm
 * weight dtype), the RMSNorm (Llama's), the residual in fp32
 * (residual_in_fp32), the mixer (Mamba-2's; MambaMixer: Jamba's without
 * the dt, B and C norms), the sum.
 */
static int32_t
mamba2_block(struct lctx *x, int32_t in)
{
	int32_t h1, res, out;

	h1 = norm(x, "input norm", cast(x, in, x->w, VP_CAT_ACT));
	res = x->m->ssm.residual_fp32 ? cast(x, in, VP_FP32, VP_CAT_ACT) : in;
	out = x->fam.block == VP_BLOCK_MAMBA1 ? mamba1_mixer(x, h1) :
	    ssm_mixer(x, h1);
	out = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, res),
	    dt_of(x, out)), res, out, -1, -1, VP_CAT_ACT);
	/* The caller's hidden_states holds the block input until the block
	 * returns. */
	x->g->op[x->g->nop - 1].keep[0] = in;
	return out;
}

/*
 * A Mamba-2 hybrid's block (BambaDecoderLayer, transformers 5.24):
 * input_layernorm, the mixer (Mamba-2's, or in the attention blocks
 * Llama's attention with partial RoPE: rotate the first rotary_dim dims
 * of each head, concatenate the rest, as Phi's), the residual,
 * pre_ff_layernorm, the SwiGLU MLP, the residual, all in the model's
 * dtype (no fp32 residual).
 */
static int32_t
hybrid_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	const struct vp_family_info *fam = &x->fam;
	uint64_t n = x->b * x->s, qd = x->a * x->d, kd = x->kv * x->d;
	int32_t h1, o, res, h2, mlp;

	h1 = norm(x, "input norm", in);
	if (vp_layer_ssm(m, x->global_layer)) {
		o = ssm_mixer(x, h1);
	} else {
		uint64_t r = m->rotary_dim ? m->rotary_dim : x->d;
		int32_t q, k, v, ctx, cs;

		assert(fam->rope_cat && !fam->fused_qkv);
		q = linear(x, block_lin(x, VP_ROLE_Q), h1, x->h, qd,
		    m->qkv_bias, true, VP_CAT_ACT);
		k = linear(x, block_lin(x, VP_ROLE_K), h1, x->h, kd,
		    m->qkv_bias, true, VP_CAT_ACT);
		v = linear(x, block_lin(x, VP_ROLE_V), h1, x->h, kd,
		    m->qkv_bias, true, VP_CAT_ACT);
		/* cos and sin (s, r), which the muls save. */
		cs = ew(x, "rope cos sin", 2 * x->s * r, dt_of(x, q), -1, -1,
		    -1, -1, VP_CAT_ACT);
		if (rg_of(x, q) || rg_of(x, k))
			x->g->op[x->g->nop - 1].saved[0] = cs;
		q = rope_partial(x, q, qd, r);
		k = rope_partial(x, k, kd, r);
		(void)repeat_kv(x, &k, &v);
		ctx = attention_core(x, q, k, v, fam->softmax_fp32,
		    fam->mask_fp32);
		/* q is the concatenation, contiguous (b, a, s, d): the
		 * output's reshape back copies. */
		ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx), ctx, -1,
		    -1, -1, VP_CAT_ACT);
		o = linear(x, block_lin(x, VP_ROLE_O), ctx, qd, x->h,
		    m->o_bias > 0, true, VP_CAT_ACT);
	}
	res = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);
	h2 = norm(x, "pre ff norm", res);
	mlp = mlp_block(x, h2, x->f);
	return ew(x, "residual add", elems_of(x, res), promote(dt_of(x, res),
	    dt_of(x, mlp)), res, mlp, -1, -1, VP_CAT_ACT);
}

/*
 * A Nemotron-H block (NemotronHBlock, transformers 5.24): its norm (a
 * fp32 product with the weight, norm_1p), one mixer by the block's
 * pattern character, the residual, in the model's dtype: 'M' the Mamba-2
 * mixer (ssm_mixer, Bamba's torch_forward), '*' attention without
 * positions (NemotronHAttention: q, k, v views transposed, the attention
 * interface, the output reshaped and o_proj), '-' the MLP (up_proj,
 * relu2, down_proj).
 */
static int32_t
nemotron_h_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	const struct vp_family_info *fam = &x->fam;
	uint64_t n = x->b * x->s, qd = x->a * x->d, kd = x->kv * x->d;
	int32_t h1, o;

	h1 = norm(x, "norm", in);
	switch (vp_layer_kind(m, x->global_layer)) {
	case 'M':
		o = ssm_mixer(x, h1);
		break;
	case '*': {
		int32_t q, k, v, ctx;

		q = linear(x, block_lin(x, VP_ROLE_Q), h1, x->h, qd, false,
		    true, VP_CAT_ACT);
		k = linear(x, block_lin(x, VP_ROLE_K), h1, x->h, kd, false,
		    true, VP_CAT_ACT);
		v = linear(x, block_lin(x, VP_ROLE_V), h1, x->h, kd, false,
		    true, VP_CAT_ACT);
		(void)repeat_kv(x, &k, &v);
		ctx = attention_core(x, q, k, v, fam->softmax_fp32,
		    fam->mask_fp32);
		if (!attn_out_view(x))
			ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx),
			    ctx, -1, -1, -1, VP_CAT_ACT);
		o = linear(x, block_lin(x, VP_ROLE_O), ctx, qd, x->h, false,
		    true, VP_CAT_ACT);
		break;
	}
	default:
		o = mlp_block(x, h1, x->f);
		break;
	}
	return ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);
}

/*
 * Zamba2 (transformers 5.24, models/zamba2/modeling_zamba2.py).  The
 * model clones the embeddings (original_hidden_states) and, with
 * use_mem_rope, makes cos and sin once (zamba2_model_tensors); both are
 * locals of Zamba2Model.forward, alive until it returns (lm_head's
 * release).  A Mamba-2 block (Zamba2MambaDecoderLayer) is its RMSNorm,
 * Bamba's mixer (Zamba2MambaMixer is BambaMixer's code: ssm_mixer) and
 * the residual, without casts.  A hybrid block (Zamba2HybridLayer)
 * first runs the shared transformer block of its call (the i-th hybrid
 * block calls block i mod num_mem_blocks, one set of weights): the
 * concatenation of the hidden states with the clone (2 h wide),
 * input_layernorm, q, k, v (2 h -> 2 h) each plus the call's adapter
 * (2 h -> r -> 2 h, two linears, with use_shared_attention_adapter),
 * transposed views, RoPE (q * cos + rotate_half(q) * sin with the
 * model's cos and sin, promoted to their dtype), the attention
 * (scaling (d / 2)^-0.5), o_proj (2 h -> h), pre_ff_layernorm,
 * gate_up_proj (h -> 2 ffn) plus the call's adapter (h -> r -> 2 ffn),
 * chunk into gate and up (views), gelu(gate) * up, down_proj; no
 * residual.  Then the block's own linear (h -> h), added to the hidden
 * states before the Mamba-2 block's norm (its residual is the hidden
 * states without it).
 *
 * The shared weights get one gradient for all their calls.  Autograd
 * accumulates the calls' weight gradients in the AccumulateGrad node's
 * input buffer (InputBuffer::accumulate, in place): the first to arrive,
 * from the last call's backward, is the buffer that becomes .grad, the
 * others are transients added into it (zamba2_share).  A linear's
 * weight gradient leaves its matmul as a view (TBackward0), which the
 * buffer cannot add into: the second to arrive (the last call but one)
 * makes the sum out of place, beside both addends, and the sum is the
 * buffer the later ones add into in place (as chunked_output_ce's
 * head; measured: TBackward0's aten::add live at the backward peak of
 * calib/hf_models.py's zamba2-grad).  Under autocast
 * the weight's 16-bit copy is cached and shared by the calls, so their
 * 16-bit gradients meet in the copy's ToCopyBackward0 instead, from the
 * last call's backward to the first's, which then makes the fp32
 * gradient: the first call's copy is a tensor that the later calls
 * read, whose gradient is that 16-bit buffer.
 */
struct zcall {
	unsigned blk;		/* the shared block called */
	bool first, last;	/* its first call, its last */
	bool second;		/* its last but one */
};

static const struct lin LIN_Z_Q = { "shared q_proj", 0, LIN_LOCAL };
static const struct lin LIN_Z_K = { "shared k_proj", 0, LIN_LOCAL };
static const struct lin LIN_Z_V = { "shared v_proj", 0, LIN_LOCAL };
static const struct lin LIN_Z_O = { "shared o_proj", 0, LIN_LOCAL };
static const struct lin LIN_Z_GATE_UP = { "shared gate_up_proj", 0,
    LIN_LOCAL };
static const struct lin LIN_Z_DOWN = { "shared down_proj", 0, LIN_LOCAL };
static const struct lin LIN_Z_GATE = { "shared gate_proj", 0, LIN_LOCAL };
static const struct lin LIN_Z_UP = { "shared up_proj", 0, LIN_LOCAL };
static const struct lin LIN_Z_ADAPTER_A = { "adapter down", 0, LIN_LOCAL };
static const struct lin LIN_Z_ADAPTER_B = { "adapter up", 0, LIN_LOCAL };
static const struct lin LIN_Z_LINEAR = { "hybrid linear", 0, LIN_LOCAL };

/*
 * The ops [op0, nop) just made for a shared weight (slot k of the
 * linears, -1 for a norm): see above.  Without autocast copies, every
 * call but the last makes its gradient as a transient.  With them, the
 * first call's copy (an output of its linear op) takes a gradient, the
 * later calls read it (their own copy is none: 0 bytes) and make no
 * gradient of their own; the first call keeps the fp32 gradient.
 */
static void
zamba2_share(struct lctx *x, size_t op0, const struct zcall *zc, int k)
{
	size_t i;

	for (i = op0; i < x->g->nop; i++) {
		struct vp_op *o = &x->g->op[i];
		int32_t wc = -1;
		int j;

		if (o->wgrad_bytes == 0)
			continue;
		for (j = 0; k >= 0 && j < VP_OP_MAXIO && o->out[j] >= 0; j++)
			if (x->g->t[o->out[j]].cat == VP_CAT_CAST)
				wc = o->out[j];
		if (wc >= 0) {
			int32_t *first = &x->z_wc[zc->blk][k];

			uint64_t w16 = x->g->t[wc].bytes;

			if (zc->first) {
				*first = wc;
				x->g->t[wc].requires_grad = true;
				/* Called again: its 16-bit gradient joins the
				 * buffer (the copy's), which ToCopyBackward0
				 * then casts: the buffer and the fp32 gradient
				 * are the peak, the addend is gone. */
				if (!zc->last)
					o->wgrad_tmp = 0;
				continue;
			}
			assert(*first >= 0);
			x->g->t[wc].bytes = 0;
			IN(o, *first);
			SAVE(o, *first);
			o->wgrad_bytes = o->wgrad_tmp = 0;
			o->wgrad_bias_bytes = 0;
			/* The out-of-place sum beside both addends. */
			if (zc->second)
				o->bwd_tmp = vp_add_sat(o->bwd_tmp, w16);
			continue;
		}
		if (zc->last)
			continue;
		o->wgrad_tmp = vp_add_sat(o->wgrad_tmp, o->wgrad_bytes);
		if (zc->second && k >= 0)
			o->wgrad_sum = o->wgrad_bytes;
		o->wgrad_bytes = o->wgrad_bias_bytes = 0;
	}
}

static int32_t
zamba2_linear(struct lctx *x, struct lin l, int32_t in, uint64_t din,
    uint64_t dout, const struct zcall *zc, int k)
{
	size_t op0 = x->g->nop;
	int32_t y = linear(x, l, in, din, dout, false, true, VP_CAT_ACT);

	zamba2_share(x, op0, zc, k);
	return y;
}

/* A call's adapter: Sequential(Linear(din, r), Linear(r, dout)), both
 * without bias, its output added to the shared projection's. */
static int32_t
zamba2_adapter(struct lctx *x, const char *name, int32_t base, int32_t in,
    uint64_t din, uint64_t dout)
{
	uint64_t r = x->m->zamba2.adapter_rank;
	int32_t a;

	a = linear(x, LIN_Z_ADAPTER_A, in, din, r, false, true, VP_CAT_ACT);
	a = linear(x, LIN_Z_ADAPTER_B, a, r, dout, false, true, VP_CAT_ACT);
	return ew(x, name, elems_of(x, base), promote(dt_of(x, base),
	    dt_of(x, a)), base, a, -1, -1, VP_CAT_ACT);
}

/* apply_rotary_pos_emb on q or k (b, a, s, d) with the model's cos and
 * sin: t * cos, rotate_half(t) (a negated half and a cat, in t's dtype)
 * * sin, the sum; the products in the promoted dtype, each saving cos
 * or sin. */
static int32_t
zamba2_rope(struct lctx *x, int32_t t)
{
	uint64_t n = elems_of(x, t);
	enum vp_dtype dt = dt_of(x, t), pd = promote(dt, dt_of(x, x->z_cs));
	int32_t t1, t2, t3;

	t1 = ew(x, "rope mul", n, pd, t, x->z_cs, -1, x->z_cs, VP_CAT_ACT);
	t2 = ew(x, "rope neg", n / 2, dt, t, -1, -1, -1, VP_CAT_ACT);
	t3 = ew(x, "rope cat", n, dt, t2, -1, -1, -1, VP_CAT_ACT);
	t3 = ew(x, "rope mul", n, pd, t3, x->z_cs, -1, x->z_cs, VP_CAT_ACT);
	return ew(x, "rope add", n, pd, t1, t3, -1, -1, VP_CAT_ACT);
}

static int32_t zamba_mixer(struct lctx *x, int32_t h1);

/* The Mamba-2 block (Zamba's: the Mamba one), its input plus `ths` (the
 * hybrid's linear output; -1 = none) normed. */
static int32_t
zamba2_mamba(struct lctx *x, int32_t in, int32_t ths)
{
	int32_t t = in, out;

	if (ths >= 0)
		t = ew(x, "transformer add", elems_of(x, in),
		    promote(dt_of(x, in), dt_of(x, ths)), in, ths, -1, -1,
		    VP_CAT_ACT);
	t = norm(x, "input norm", t);
	out = vp_model_family(x->m) == VP_FAMILY_ZAMBA ? zamba_mixer(x, t) :
	    ssm_mixer(x, t);
	out = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, out)), in, out, -1, -1, VP_CAT_ACT);
	/* The caller's hidden_states holds the block input until the block
	 * returns. */
	x->g->op[x->g->nop - 1].keep[0] = in;
	return out;
}

static int32_t
zamba2_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	const struct vp_family_info *fam = &x->fam;
	uint64_t n = x->b * x->s, h = x->h, w2 = 2 * h, qd = x->a * x->d;
	uint64_t kd = x->kv * x->d, f = x->f, call, nh = 0, i;
	uint64_t mb = vp_zamba2_mem_blocks(m);
	struct zcall zc;
	int32_t c, h1, q, k, v, ctx, o, h2, gu, pc[2], g, y;
	uint64_t pn[2];
	size_t op0;

	if (m->ssm.pattern[x->global_layer] != 'H')
		return zamba2_mamba(x, in, -1);
	for (i = 0; m->ssm.pattern[i]; i++)
		nh += m->ssm.pattern[i] == 'H';
	call = vp_zamba2_hybrids_before(m, x->global_layer);
	assert(x->z_orig >= 0 && mb <= VP_ZAMBA2_MAX_MEM);
	zc.blk = (unsigned)(call % mb);
	zc.first = call < mb;
	zc.last = call + mb >= nh;
	zc.second = !zc.last && call + 2 * mb >= nh;

	/* Zamba2AttentionDecoderLayer. */
	c = ew(x, "concat", n * w2, promote(dt_of(x, in), dt_of(x,
	    x->z_orig)), in, x->z_orig, -1, -1, VP_CAT_ACT);
	op0 = x->g->nop;
	h1 = norm_w(x, "shared input norm", c, w2);
	zamba2_share(x, op0, &zc, -1);
	q = zamba2_linear(x, LIN_Z_Q, h1, w2, qd, &zc, 0);
	k = zamba2_linear(x, LIN_Z_K, h1, w2, kd, &zc, 1);
	v = zamba2_linear(x, LIN_Z_V, h1, w2, kd, &zc, 2);
	if (m->zamba2.attn_adapter) {
		q = zamba2_adapter(x, "q adapter add", q, h1, w2, qd);
		k = zamba2_adapter(x, "k adapter add", k, h1, w2, kd);
		v = zamba2_adapter(x, "v adapter add", v, h1, w2, kd);
	}
	if (m->zamba2.mem_rope) {
		q = zamba2_rope(x, q);
		k = zamba2_rope(x, k);
	}
	ctx = attention_core(x, q, k, v, fam->softmax_fp32, fam->mask_fp32);
	/* transpose(1, 2) and reshape(...).contiguous(): a copy, but of the
	 * CPU flash kernel's output on a q that is still a transposed
	 * view (no RoPE). */
	if (m->zamba2.mem_rope || !attn_out_view(x))
		ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx), ctx, -1,
		    -1, -1, VP_CAT_ACT);
	o = zamba2_linear(x, LIN_Z_O, ctx, qd, h, &zc, 3);
	op0 = x->g->nop;
	h2 = norm(x, "shared pre ff norm", o);
	zamba2_share(x, op0, &zc, -1);
	if (vp_model_family(m) == VP_FAMILY_ZAMBA) {
		/* ZambaMLP: down_proj(gelu(gate_proj(x)) * up_proj(x)). */
		g = zamba2_linear(x, LIN_Z_GATE, h2, h, f, &zc, 4);
		g = ew(x, "gelu", n * f, dt_of(x, g), g, -1, g, -1,
		    VP_CAT_ACT);
		gu = zamba2_linear(x, LIN_Z_UP, h2, h, f, &zc, 6);
		g = ew2(x, "gelu mul", n * f, promote(dt_of(x, g), dt_of(x,
		    gu)), g, gu, VP_CAT_ACT);
		y = zamba2_linear(x, LIN_Z_DOWN, g, f, h, &zc, 5);
		y = linear(x, LIN_Z_LINEAR, y, h, h, false, true, VP_CAT_ACT);
		return zamba2_mamba(x, in, y);
	}
	/* Zamba2MLP. */
	gu = zamba2_linear(x, LIN_Z_GATE_UP, h2, h, 2 * f, &zc, 4);
	gu = zamba2_adapter(x, "gate_up adapter add", gu, h2, h, 2 * f);
	pn[0] = pn[1] = n * f;
	split_views(x, gu, pn, 2, pc);
	g = ew(x, "gelu", n * f, dt_of(x, gu), pc[0], -1, pc[0], -1,
	    VP_CAT_ACT);
	/* GELU keeps a view of the sum: all of it. */
	SAVE(&x->g->op[x->g->nop - 1], pc[1]);
	g = ew2(x, "gelu mul", n * f, dt_of(x, g), g, pc[1], VP_CAT_ACT);
	y = zamba2_linear(x, LIN_Z_DOWN, g, f, h, &zc, 5);
	/* The hybrid block's own linear, then the Mamba-2 block. */
	y = linear(x, LIN_Z_LINEAR, y, h, h, false, true, VP_CAT_ACT);
	return zamba2_mamba(x, in, y);
}

/*
 * Zamba2Model.forward before its blocks: original_hidden_states =
 * torch.clone(inputs_embeds), and with use_mem_rope the rotary
 * embedding's cos and sin (1, s, d) in the embeddings' dtype.
 */
static void
zamba2_model_tensors(struct lctx *x, int32_t emb)
{
	if (x->fam.block != VP_BLOCK_ZAMBA2)
		return;
	x->z_orig = ew(x, "embeddings clone", elems_of(x, emb), dt_of(x,
	    emb), emb, -1, -1, -1, VP_CAT_ACT);
	if (x->m->zamba2.mem_rope)
		x->z_cs = ew(x, "rope cos sin", 2 * x->s * x->d, dt_of(x, emb),
		    -1, -1, -1, -1, VP_CAT_ACT);
}


/*
 * Jamba's Mamba-1 mixer (JambaMambaMixer.forward and
 * mamba_selective_scan, transformers 5.24, the path without mamba_ssm and
 * causal_conv1d: the CPU's).  Sizes: N = b s tokens, I = expand h the
 * inner width, n the state, r dt_rank, k the conv taps.
 */
static const struct lin LIN_M1_IN = { "in_proj", 0, LIN_LOCAL };
static const struct lin LIN_M1_X = { "x_proj", 0, LIN_LOCAL };
static const struct lin LIN_M1_DT = { "dt_proj", 0, LIN_LOCAL };
static const struct lin LIN_M1_OUT = { "out_proj", 0, LIN_LOCAL };

/*
 * The recurrent loop of mamba_selective_scan, s iterations as one op:
 * ssm_state = dA[:, :, i] * ssm_state + dBu[:, :, i] (a new b x I x n
 * fp32 state each token, which the next token's mul and the matmul save;
 * the product is a transient), scan_output = ssm_state.to(input dtype) @
 * C[:, i] (a 16-bit input keeps the state's copy per token, autocast C's
 * slice cast too), the (b, I) outputs kept in the Python list.  The op's
 * outputs are the s states (one tensor), their copies, the C casts and
 * the list; it saves dA (through its slices), the states and copies, C
 * (or its casts) and the zero initial state (saved by the first mul).
 * Backward, token by token from the last: each slice's SelectBackward
 * makes a zeroed tensor of the whole dA (or dBu) and accumulates it into
 * their gradients, which exist from the first token on: both gradients
 * and one such tensor (measured: one-block fp32 runs match to 56 B; a
 * token's state gradients are gone by then).
 */
static int32_t
mamba1_scan_loop(struct lctx *x, uint64_t I, int32_t dA, int32_t dBu,
    int32_t C, int32_t z0, enum vp_dtype idt, int32_t *list, int32_t *last)
{
	uint64_t b = x->b, s = x->s, N = b * s;
	uint64_t n = x->m->ssm.state, bIn = b * I * n;
	enum vp_dtype odt = x->autocast ? x->c : promote(idt, dt_of(x, C));
	struct vp_op *o = opnew(x, "selective scan loop");
	int32_t st, cp = -1, cc = -1, out;

	IN(o, dA);
	IN(o, dBu);
	IN(o, C);
	IN(o, z0);
	/* With a 16-bit input the matmul saves the state's copy, so the
	 * last state is saved by nothing: the local ssm_state holds it
	 * until the scan returns. */
	st = tnew(x, (idt != VP_FP32 ? s - 1 : s) * bIn, VP_FP32, VP_CAT_ACT,
	    "scan states", true);
	OUT(o, st);
	*last = -1;
	if (idt != VP_FP32) {
		*last = tnew(x, bIn, VP_FP32, VP_CAT_ACT, "scan last state",
		    true);
		OUT(o, *last);
	}
	if (idt != VP_FP32) {
		cp = tnew(x, s * bIn, idt, VP_CAT_ACT, "scan state copies",
		    true);
		OUT(o, cp);
	}
	if (x->autocast && dt_of(x, C) != x->c) {
		cc = tnew(x, N * n, x->c, VP_CAT_ACT, "scan C casts", false);
		OUT(o, cc);
	}
	out = tnew(x, N * I, odt, VP_CAT_ACT, "scan outputs", true);
	OUT(o, out);
	SAVE(o, dA);
	SAVE(o, st);
	if (cp >= 0)
		SAVE(o, cp);
	SAVE(o, cc >= 0 ? cc : C);
	SAVE(o, z0);
	o->fwd_tmp = vp_mul_sat(bIn, B(VP_FP32));
	o->bwd_tmp = vp_mul_sat(N * I * n, B(VP_FP32));
	*list = out;
	return out;
}

/*
 * The mixer's causal conv1d and its SiLU (causal_conv1d_fn without the
 * package): xs.to(conv weight dtype) (under autocast an fp32 copy for
 * the weight's dtype and autocast's cast back), the depthwise conv with
 * k - 1 steps of padding (its output s + k - 1 steps, which the SiLU
 * keeps), the SiLU's output cast back to pd.  `gate` is the other view
 * of xs's storage (kept whole when the conv saves xs itself), -1 when
 * xs is a tensor of its own.
 */
static int32_t
mamba1_conv(struct lctx *x, int32_t xs, int32_t gate, enum vp_dtype pd)
{
	const struct vp_ssm *q = &x->m->ssm;
	uint64_t b = x->b, s = x->s, N = b * s, I = q->expand * x->h;
	int32_t xin, cv, sx;
	struct vp_op *o;

	xin = cast(x, xs, x->w, VP_CAT_ACT);
	o = opnew(x, "conv1d");
	IN(o, xin);
	{
		int32_t ci = xin, wc;

		if (x->autocast && dt_of(x, xin) != x->c) {
			ci = tnew(x, N * I, x->c, VP_CAT_ACT, "conv1d input",
			    false);
			OUT(o, ci);
			o->bwd_tmp = vp_mul_sat(N * I, B(x->c));
		}
		wc = x->autocast && x->w != x->c ? tnew(x, I * q->conv_kernel,
		    x->c, VP_CAT_ACT, "conv1d weight", false) : -1;
		if (wc >= 0)
			OUT(o, wc);
		cv = tnew(x, b * I * (s + q->conv_kernel - 1), dt_of(x, ci),
		    VP_CAT_ACT, "conv1d", true);
		OUT(o, cv);
		SAVE(o, ci);
		if (wc >= 0)
			SAVE(o, wc);
		/* Saving a view of in_proj's output keeps all of it. */
		if (ci == xs && gate >= 0)
			SAVE(o, gate);
		o->wgrad_bytes = vp_mul_sat(I * (q->conv_kernel +
		    (q->conv_bias ? 1 : 0)), B(x->gd));
		if (q->conv_bias)
			o->wgrad_bias_bytes = vp_mul_sat(I, B(x->gd));
	}
	sx = ew(x, "conv silu", N * I, dt_of(x, cv), cv, -1, cv, -1,
	    VP_CAT_ACT);
	x->g->op[x->g->nop - 1].bwd_tmp = vp_mul_sat(N * I, B(dt_of(x, cv)));
	return cast(x, sx, pd, VP_CAT_ACT);
}

/*
 * The mixer: in_proj (x and the gate, views of one output, transposed),
 * A = -exp(A_log.float()), the causal conv1d (as Mamba-2's: under
 * autocast an fp32 copy of x for the weight's dtype and autocast's cast
 * back) and its SiLU, x_proj on the SiLU's output transposed (matmul's
 * reshape copies it), dt, B and C split from it (Jamba: RMSNormed;
 * Mamba: the views), dt_proj's weight @ dt^T; the scan: dt +
 * dt_proj.bias in dt's dtype, softplus, dA = exp(A dt) (fp32, the
 * product a transient), dB = dt B.float(), dBu = dB x.float(), the loop
 * (mamba1_scan_loop), the stack, + x D, times silu(gate); out_proj on
 * the output transposed, cast to the mixer's input dtype (and by
 * autocast), which matmul's reshape copies again.  Measured with
 * tests/validate_hf.py's jamba and mamba configs (one-block runs at two
 * lengths told the tensors that scale with b s I from those that do
 * not).
 */
static int32_t
mamba1_mixer(struct lctx *x, int32_t h1)
{
	const struct vp_ssm *q = &x->m->ssm;
	uint64_t b = x->b, s = x->s, N = b * s, I = q->expand * x->h;
	uint64_t n = q->state, r = q->dt_rank, pn[2], xn[3];
	enum vp_dtype f = VP_FP32, pd, idt;
	int32_t proj, pc[2], xs, gate, A, sx, xr, dbc, xc[3];
	int32_t tdt, tB, tC, dtp, dt1, sp, adt, dA, bf, dB, xf, dBu, z0;
	int32_t list, last, st, hD, y, sz, yo;
	struct vp_op *o;

	proj = linear(x, LIN_M1_IN, h1, x->h, 2 * I, q->proj_bias, true,
	    VP_CAT_ACT);
	pn[0] = pn[1] = N * I;
	split_views(x, proj, pn, 2, pc);
	xs = pc[0];
	gate = pc[1];
	pd = dt_of(x, proj);

	/* A = -exp(A_log.float()): (I, n), A_log's gradient. */
	A = ew(x, "A exp", I * n, f, -1, -1, -1, -1, VP_CAT_ACT);
	x->g->t[A].requires_grad = !x->frozen;
	save_result(x, A);
	x->g->op[x->g->nop - 1].wgrad_bytes = vp_mul_sat(I * n, B(x->gd));
	A = ew(x, "A neg", I * n, f, A, -1, -1, -1, VP_CAT_ACT);

	sx = mamba1_conv(x, xs, gate, pd);
	idt = dt_of(x, sx);

	/* x_proj on the transposed SiLU output: reshape's copy, then dt, B
	 * and C (views) through their RMSNorms. */
	xr = ew(x, "x_proj input copy", N * I, x->autocast ? x->c : idt, sx,
	    -1, -1, -1, VP_CAT_ACT);
	dbc = linear(x, LIN_M1_X, xr, I, r + 2 * n, false, true, VP_CAT_ACT);
	xn[0] = N * r; xn[1] = N * n; xn[2] = N * n;
	split_views(x, dbc, xn, 3, xc);
	if (x->fam.block == VP_BLOCK_JAMBA) {
		tdt = norm_rows(x, "dt_layernorm", xc[0], N, r);
		tB = norm_rows(x, "b_layernorm", xc[1], N, n);
		tC = norm_rows(x, "c_layernorm", xc[2], N, n);
	} else if (vp_model_family(x->m) == VP_FAMILY_FALCON_MAMBA) {
		/* FalconMambaWeightlessRMSNorm: .float(), normalized,
		 * .type_as(x), no weight. */
		tdt = rms_normalize(x, xc[0], N, r);
		tB = rms_normalize(x, xc[1], N, n);
		tC = rms_normalize(x, xc[2], N, n);
	} else {
		/* MambaMixer: the views themselves. */
		tdt = xc[0];
		tB = xc[1];
		tC = xc[2];
	}
	/* dt_proj.weight @ dt^T, without the bias (added in the scan). */
	dtp = linear(x, LIN_M1_DT, tdt, r, I, false, true, VP_CAT_ACT);

	/* 3. mamba_selective_scan. */
	/* dt + delta_bias.to(dt.dtype): in dt's dtype (16 bit under
	 * autocast and in bf16), then softplus, which keeps its input. */
	dt1 = ew(x, "dt bias", N * I, dt_of(x, dtp), dtp, -1, -1, -1,
	    VP_CAT_ACT);
	x->g->op[x->g->nop - 1].wgrad_bytes = vp_mul_sat(I, B(x->gd));
	sp = ew(x, "dt softplus", N * I, dt_of(x, dtp), dt1, -1, dt1, -1,
	    VP_CAT_ACT);
	adt = ew(x, "A dt", N * I * n, f, A, sp, A, sp, VP_CAT_ACT);
	x->g->op[x->g->nop - 1].bwd_tmp = vp_mul_sat(N * I * n, B(f));
	dA = ew(x, "dA exp", N * I * n, f, adt, -1, -1, -1, VP_CAT_ACT);
	save_result(x, dA);
	bf = cast(x, tB, f, VP_CAT_ACT);
	dB = bcast_mul(x, "dB", N * I * n, sp, bf);
	xf = cast(x, sx, f, VP_CAT_ACT);
	dBu = bcast_mul(x, "dBu", N * I * n, dB, xf);
	z0 = ew(x, "scan zeros", b * I * n, idt, -1, -1, -1, -1, VP_CAT_ACT);
	(void)mamba1_scan_loop(x, I, dA, dBu, tC, z0, idt, &list, &last);
	st = ew(x, "scan stack", N * I, dt_of(x, list), list, -1, -1, -1,
	    VP_CAT_ACT);
	hD = ew(x, "D mul", N * I, promote(idt, f), sx, -1, sx, -1,
	    VP_CAT_ACT);
	o = &x->g->op[x->g->nop - 1];
	o->wgrad_bytes = vp_mul_sat(I, B(x->gd));
	o->bwd_tmp = vp_mul_sat(N * I, B(f));
	y = ew(x, "D add", N * I, promote(dt_of(x, st), dt_of(x, hD)), st, hD,
	    -1, -1, VP_CAT_ACT);
	sz = ew(x, "gate silu", N * I, pd, gate, -1, gate, -1, VP_CAT_ACT);
	y = ew2(x, "gate mul", N * I, promote(dt_of(x, y), pd), y, sz,
	    VP_CAT_ACT);
	/* The scan's locals at its return: dBu (saved by nothing), the
	 * list of outputs, the initial state. */
	release(x, "scan return", dBu, list, z0);
	if (last >= 0)
		release(x, "scan return", last, -1, -1);

	/* 4. out_proj(scan_output.transpose(1, 2).to(dtype)). */
	yo = cast(x, y, dt_of(x, h1), VP_CAT_ACT);
	if (x->autocast)
		yo = cast(x, yo, x->c, VP_CAT_ACT);
	yo = ew(x, "out_proj input copy", N * I, dt_of(x, yo), yo, -1, -1,
	    -1, VP_CAT_ACT);
	yo = linear(x, LIN_M1_OUT, yo, I, x->h, q->proj_bias, true,
	    VP_CAT_ACT);
	/* The mixer's locals through out_proj: in_proj's output, the
	 * SiLU's, dt, B and C, the scan's output and the input. */
	release(x, "mixer return", xs, gate, sx);
	release(x, "mixer return", dtp, tB, tC);
	release(x, "mixer return", y, h1, -1);
	return yo;
}

/*
 * Zamba's mixer (ZambaMambaMixer.forward, transformers 5.24, without
 * mamba_ssm): Mamba-1 split into nh = ssm.heads mamba heads of hd = I /
 * nh channels.  in_proj's output, transposed and viewed (b, I, 2, s),
 * interleaves x and the gate: x is squeezed into a contiguous copy (the
 * conv's input, a tensor of its own), the gate stays a view, which keeps
 * the whole output (the x half too) as long as its SiLU saves it.  The conv
 * and its SiLU as Jamba's (mamba1_conv).  x_proj_weight[:, None] @ x
 * (nh, b, hd, s): matmul broadcasts the weight, expand then reshape
 * copies it (nh b (r + 2n) hd, in the compute dtype: autocast casts the
 * view first, a transient), and copies x (its (nh, b) dims do not
 * merge); bmm keeps both copies.  With b = 1 neither is copied (the
 * expand is the weight, the reshape a view): bmm keeps the weight (or
 * autocast's cast of it) and x itself.  dt, B and C are views of the result
 * (no norms); dt_proj_weight[:, None] @ dt^T likewise copies the
 * weight, while dt^T is a view bmm reads as is (it keeps the whole
 * x_proj output).  Then mamba_selective_scan per head, Jamba's ops at hd
 * (dt + bias in dt's dtype, softplus, dA, B.float() and x.float() of
 * the head's slices, dB, dBu, the loop, the stack, + x D, times
 * silu(gate)): each head's outputs are the list the mixer keeps until
 * it returns, the scan's locals die at each head's return.  torch.cat
 * of the heads, then out_proj as Jamba's.  The parameters' gradients
 * reach the weights through the expand's sum (a transient of the
 * expanded size) and, for D and the dt bias, per head slices (tiny, not
 * counted).
 */
#define ZAMBA_MAX_HEADS VP_OP_MAXIO	/* the cat's inputs */

/* A weight broadcast over the batch by matmul: expand + reshape's copy
 * of `el` elements (nh b rows x cols) from the parameter of `pel`.  With
 * one sequence the expand is the weight itself and the reshape a view:
 * no copy, only autocast's cast (which bmm then keeps). */
static int32_t
zamba_weight_expand(struct lctx *x, const char *name, uint64_t el,
    uint64_t pel)
{
	bool cast16 = x->autocast && x->w != x->c;
	enum vp_dtype dt = x->autocast ? x->c : x->w;
	int32_t w = ew(x, name, el, dt, -1, -1, -1, -1, VP_CAT_ACT);
	struct vp_op *o = &x->g->op[x->g->nop - 1];

	x->g->t[w].requires_grad = !x->frozen;
	o->wgrad_bytes = vp_mul_sat(pel, B(x->gd));
	if (x->b == 1) {
		if (!cast16)
			x->g->t[w].bytes = 0;
		return w;
	}
	/* Backward: the copy's gradient (el) summed over the batch, in
	 * the compute dtype, then cast under autocast. */
	if (cast16) {
		o->fwd_tmp = vp_mul_sat(pel, B(x->c));
		o->wgrad_tmp = vp_mul_sat(pel, B(x->c));
	}
	return w;
}

static int32_t
zamba_mixer(struct lctx *x, int32_t h1)
{
	const struct vp_ssm *q = &x->m->ssm;
	uint64_t b = x->b, s = x->s, N = b * s, I = q->expand * x->h;
	uint64_t n = q->state, r = q->dt_rank, nh = q->heads, hd = I / nh;
	uint64_t Nh = N * hd, pn[2], xn[3];
	enum vp_dtype f = VP_FP32, pd, idt, cdt;
	int32_t proj, pc[2], xs, gate, A, sx, xr, wx, dbc, xc[3], wdt, dtp;
	int32_t heads[ZAMBA_MAX_HEADS], cat, yo;
	uint64_t i;
	struct vp_op *o;

	assert(nh >= 1 && nh <= ZAMBA_MAX_HEADS && hd * nh == I);
	proj = linear(x, LIN_M1_IN, h1, x->h, 2 * I, q->proj_bias, true,
	    VP_CAT_ACT);
	pn[0] = pn[1] = N * I;
	split_views(x, proj, pn, 2, pc);
	gate = pc[1];
	pd = dt_of(x, proj);
	xs = ew(x, "x contiguous", N * I, pd, pc[0], -1, -1, -1, VP_CAT_ACT);
	sx = mamba1_conv(x, xs, -1, pd);
	idt = dt_of(x, sx);
	cdt = x->autocast ? x->c : idt;

	/* x_proj: the weight's and x's copies, the bmm, dt, B, C views. */
	/* (nh, b, hd, s) merges into nh b rows only when b is 1. */
	xr = x->b == 1 ? sx : ew(x, "x_proj input copy", N * I, cdt, sx, -1,
	    -1, -1, VP_CAT_ACT);
	wx = zamba_weight_expand(x, "x_proj weight expand", nh * b * (r +
	    2 * n) * hd, I * (r + 2 * n));
	dbc = ew2(x, "x_proj", N * nh * (r + 2 * n), cdt, xr, wx,
	    VP_CAT_ACT);
	xn[0] = N * nh * r; xn[1] = N * nh * n; xn[2] = N * nh * n;
	split_views(x, dbc, xn, 3, xc);
	wdt = zamba_weight_expand(x, "dt_proj weight expand", nh * b * hd *
	    r, I * r);
	dtp = ew2(x, "dt_proj", N * I, cdt, xc[0], wdt, VP_CAT_ACT);
	/* Saving a view of x_proj's output keeps all of it. */
	if (rg_of(x, wdt)) {
		SAVE(&x->g->op[x->g->nop - 1], xc[1]);
		SAVE(&x->g->op[x->g->nop - 1], xc[2]);
	}

	/* A = -exp(A_log.float()): (nh, hd, n), A_log's gradient. */
	A = ew(x, "A exp", I * n, f, -1, -1, -1, -1, VP_CAT_ACT);
	x->g->t[A].requires_grad = !x->frozen;
	save_result(x, A);
	x->g->op[x->g->nop - 1].wgrad_bytes = vp_mul_sat(I * n, B(x->gd));
	A = ew(x, "A neg", I * n, f, A, -1, -1, -1, VP_CAT_ACT);

	for (i = 0; i < nh; i++) {
		int32_t dt1, sp, adt, dA, bf, dB, xf, dBu, z0, list, last, st;
		int32_t hD, y, sz;

		/* dt + delta_bias.to(dt.dtype), softplus. */
		dt1 = ew(x, "dt bias", Nh, dt_of(x, dtp), dtp, -1, -1, -1,
		    VP_CAT_ACT);
		if (i == 0)
			x->g->op[x->g->nop - 1].wgrad_bytes = vp_mul_sat(I,
			    B(x->gd));
		sp = ew(x, "dt softplus", Nh, dt_of(x, dtp), dt1, -1, dt1, -1,
		    VP_CAT_ACT);
		adt = ew(x, "A dt", Nh * n, f, A, sp, A, sp, VP_CAT_ACT);
		x->g->op[x->g->nop - 1].bwd_tmp = vp_mul_sat(Nh * n, B(f));
		dA = ew(x, "dA exp", Nh * n, f, adt, -1, -1, -1, VP_CAT_ACT);
		save_result(x, dA);
		bf = dt_of(x, xc[1]) == f ? xc[1] : ew(x, "B float", N * n, f,
		    xc[1], -1, -1, -1, VP_CAT_ACT);
		dB = bcast_mul(x, "dB", Nh * n, sp, bf);
		xf = idt == f ? sx : ew(x, "x float", Nh, f, sx, -1, -1, -1,
		    VP_CAT_ACT);
		dBu = bcast_mul(x, "dBu", Nh * n, dB, xf);
		z0 = ew(x, "scan zeros", b * hd * n, idt, -1, -1, -1, -1,
		    VP_CAT_ACT);
		(void)mamba1_scan_loop(x, hd, dA, dBu, xc[2], z0, idt, &list,
		    &last);
		st = ew(x, "scan stack", Nh, dt_of(x, list), list, -1, -1, -1,
		    VP_CAT_ACT);
		hD = ew(x, "D mul", Nh, promote(idt, f), sx, -1, sx, -1,
		    VP_CAT_ACT);
		o = &x->g->op[x->g->nop - 1];
		if (i == 0)
			o->wgrad_bytes = vp_mul_sat(I, B(x->gd));
		o->bwd_tmp = vp_mul_sat(Nh, B(f));
		y = ew(x, "D add", Nh, promote(dt_of(x, st), dt_of(x, hD)), st,
		    hD, -1, -1, VP_CAT_ACT);
		sz = ew(x, "gate silu", Nh, pd, gate, -1, gate, -1,
		    VP_CAT_ACT);
		/* Saving a view of in_proj's output keeps all of it. */
		if (rg_of(x, gate))
			SAVE(&x->g->op[x->g->nop - 1], proj);
		heads[i] = ew2(x, "gate mul", Nh, promote(dt_of(x, y), pd), y,
		    sz, VP_CAT_ACT);
		/* The scan's locals at its return. */
		release(x, "scan return", dBu, list, z0);
		if (last >= 0)
			release(x, "scan return", last, -1, -1);
	}
	o = opnew(x, "heads cat");
	for (i = 0; i < nh; i++)
		IN(o, heads[i]);
	cat = tnew(x, N * I, dt_of(x, heads[0]), VP_CAT_ACT, "heads cat",
	    rg_of(x, heads[0]));
	OUT(o, cat);

	/* out_proj(scan_output.transpose(1, 2).to(dtype)). */
	yo = cast(x, cat, dt_of(x, h1), VP_CAT_ACT);
	if (x->autocast)
		yo = cast(x, yo, x->c, VP_CAT_ACT);
	yo = ew(x, "out_proj input copy", N * I, dt_of(x, yo), yo, -1, -1,
	    -1, VP_CAT_ACT);
	yo = linear(x, LIN_M1_OUT, yo, I, x->h, q->proj_bias, true,
	    VP_CAT_ACT);
	/* The mixer's locals through out_proj: in_proj's output (the
	 * gate), the SiLU's, x_proj's and dt_proj's, A, the heads' list,
	 * the cat and the input. */
	release(x, "mixer return", proj, gate, sx);
	release(x, "mixer return", dbc, dtp, A);
	release(x, "mixer return", cat, -1, -1);
	for (i = 0; i < nh; i += 3)
		release(x, "mixer return", heads[i], i + 1 < nh ?
		    heads[i + 1] : -1, i + 2 < nh ? heads[i + 2] : -1);
	release(x, "mixer return", h1, -1, -1);
	return yo;
}

/*
 * A Jamba block (JambaAttentionDecoderLayer, JambaMambaDecoderLayer):
 * input_layernorm, the mixer (attention in the model's ssm.attn blocks:
 * JambaAttention, q, k, v views transposed, no positions, the attention
 * interface, the output reshaped, o_proj; the Mamba-1 mixer in the
 * others), the residual, pre_ff_layernorm, the feed-forward (the experts
 * on the sparse step, JambaSparseMoeBlock; a SwiGLU MLP otherwise), the
 * residual.
 */
static int32_t
jamba_block(struct lctx *x, int32_t in)
{
	const struct vp_model *m = x->m;
	const struct vp_family_info *fam = &x->fam;
	uint64_t n = x->b * x->s, qd = x->a * x->d, kd = x->kv * x->d;
	int32_t h1, o, res, h2, ff;

	h1 = norm(x, "input norm", in);
	if (vp_layer_ssm(m, x->global_layer)) {
		o = mamba1_mixer(x, h1);
	} else {
		int32_t q, k, v, ctx;

		q = linear(x, block_lin(x, VP_ROLE_Q), h1, x->h, qd, false,
		    true, VP_CAT_ACT);
		k = linear(x, block_lin(x, VP_ROLE_K), h1, x->h, kd, false,
		    true, VP_CAT_ACT);
		v = linear(x, block_lin(x, VP_ROLE_V), h1, x->h, kd, false,
		    true, VP_CAT_ACT);
		(void)repeat_kv(x, &k, &v);
		ctx = attention_core(x, q, k, v, fam->softmax_fp32,
		    fam->mask_fp32);
		if (!attn_out_view(x))
			ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx),
			    ctx, -1, -1, -1, VP_CAT_ACT);
		o = linear(x, block_lin(x, VP_ROLE_O), ctx, qd, x->h, false,
		    true, VP_CAT_ACT);
	}
	res = ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);
	h2 = norm(x, "pre ff norm", res);
	ff = vp_moe_layer_sparse(m, x->global_layer) ? moe(x, h2) :
	    mlp_block(x, h2, x->f);
	return ew(x, "residual add", elems_of(x, res), promote(dt_of(x, res),
	    dt_of(x, ff)), res, ff, -1, -1, VP_CAT_ACT);
}

typedef int32_t (*block_fn)(struct lctx *x, int32_t in);
static const block_fn block_builders[VP_BLOCK_COUNT] = {
	[VP_BLOCK_PRE_NORM] = prenorm_block,
	[VP_BLOCK_POST_NORM] = postnorm_block,
	[VP_BLOCK_LLAMA4] = llama4_block,
	[VP_BLOCK_MLA] = mla_block,
	[VP_BLOCK_PARALLEL] = parallel_block,
	[VP_BLOCK_MODERNBERT] = modernbert_block,
	[VP_BLOCK_DEBERTA] = deberta_block,
	[VP_BLOCK_MAMBA2] = mamba2_block,
	[VP_BLOCK_HYBRID] = hybrid_block,
	[VP_BLOCK_NEMOTRON_H] = nemotron_h_block,
	[VP_BLOCK_ZAMBA2] = zamba2_block,
	[VP_BLOCK_JAMBA] = jamba_block,
	[VP_BLOCK_MAMBA1] = mamba2_block,
};

/*
 * Liger's fused linear cross-entropy (--loss chunked): in forward, under
 * no_grad, rows are processed in chunks of next_pow2(ceil(rows /
 * ceil(V / h))); each chunk's logits (compute dtype), their fp32 upcast
 * and fp32 gradient exist only while the chunk runs.  The gradient of the
 * hidden states (rows x h) and of the head weight (V x h, fp32) are made
 * in forward and kept for backward.  Full logits never exist.
 */
static int32_t
fused_linear_ce(struct lctx *x, int32_t hsd, uint64_t rows)
{
	uint64_t inc = (x->V + x->h - 1) / x->h, c = 1, want;
	bool train_head = !x->frozen;
	enum vp_dtype cdt = x->autocast ? x->c : x->w;
	struct vp_op *o;
	int32_t gin, gw, loss;

	if (x->fam.head == VP_HEAD_LM)
		hsd = norm(x, "final norm", hsd);
	want = (rows + inc - 1) / inc;
	while (c < want)
		c *= 2;
	o = opnew(x, "fused linear cross-entropy");
	IN(o, hsd);
	o->fwd_tmp = vp_mul_sat(c * x->V, B(cdt) + 4 + 4);
	gin = tnew(x, rows * x->h, dt_of(x, hsd), VP_CAT_LOGITS,
	    "grad of hidden (fused CE)", false);
	OUT(o, gin);
	SAVE(o, gin);
	if (train_head) {
		gw = tnew(x, x->V * x->h, VP_FP32, VP_CAT_LOGITS,
		    "grad of head (fused CE)", false);
		OUT(o, gw);
		SAVE(o, gw);
		/* Backward hands it to the weight: the same bytes become the
		 * gradient. */
		o->wgrad_bytes = vp_mul_sat(x->V * x->h, B(x->gd));
		x->wgrad_op = (int32_t)(x->g->nop - 1);
		x->wgrad_view = false;
	}
	loss = tnew(x, 1, VP_FP32, VP_CAT_LOGITS, "loss", true);
	OUT(o, loss);
	return loss;
}

/*
 * torchtune's chunked output and CEWithChunkedOutputLoss (--loss
 * chunked-output; torchtune v0.3 to v0.6, num_output_chunks = 8):
 * TransformerDecoder.chunked_output runs the head on
 * h.chunk(8, dim=1) and returns the list
 * (`[self.output(chunk) for chunk in ...]`, modules/transformer.py), so
 * every chunk's logits exist, in the model's dtype, until the recipe's
 * `del logits` after the loss.  The recipe shifts the labels, not the
 * logits (`torch.hstack((labels[..., 1:], ignore_labels_cache))`): all
 * b*s rows.  The loss (modules/loss/ce_chunked_output_loss.py) takes one
 * chunk at a time: `F.cross_entropy(logits.float(), labels,
 * reduction="sum")`, whose fp32 upcast lives for that chunk only and
 * whose log_softmax result is saved, chunk by chunk (so all of them are
 * by the end), and `total_loss +=` sums them.
 *
 * Backward follows the autograd engine's order (higher sequence numbers
 * first): every chunk's nll, log_softmax and cast backward, last chunk
 * first, then the head's matmuls, last chunk first: the chunks' logit
 * gradients all exist before the first matmul backward frees one.  The
 * head's weight gets one gradient per chunk; they meet in its
 * AccumulateGrad node's input buffer (engine.cpp, InputBuffer::
 * accumulate): the second out of place (the first is F.linear's view),
 * once the matmul's backward has returned (TBackward0 adds), the rest in
 * place into that sum, which PyTorch 1.x never does.  So the first (the
 * last chunk's) is the gradient and waits for the last use (graph.h,
 * wgrad_waits), the others are transients (measured on 2.13's CPU: the
 * peak of a small-vocabulary model is that sum, beside the two matmul
 * results).  Each chunk's
 * input gradient is a slice of the final norm's output; the sum of
 * slices is counted as one gradient of it and a transient (the cat of
 * SplitBackward makes both at the end).
 */
#define VP_TT_OUTPUT_CHUNKS 8

/*
 * The compiled chunked loss: under --compile-loss torchtune compiles only
 * CEWithChunkedOutputLoss.compute_cross_entropy (its
 * apply_compile_strategy, called by training.compile_loss, rebinds the
 * method to torch.compile of it in place); the head's chunks run eagerly
 * (chunked_output is no compiled layer).  Each chunk's upcast, log_softmax
 * and nll_loss are then one region whose input is that chunk's logits.
 * Inductor decomposes log_softmax into the row max and log-sum-exp
 * (reductions: saved, two fp32 values a row) and pointwise ops, so by
 * region_end's rules the forward saves the chunk's logits (the same
 * storage as the head's output) and those two values, makes no fp32
 * upcast and keeps no log-softmax, and the backward makes one gradient
 * of the chunk in the logits' dtype (measured on PyTorch 2.13's Inductor
 * for the CPU: tests/validate_cpu.py --grid torch2).
 */

static int32_t
chunked_output_ce(struct lctx *x, int32_t hsd)
{
	uint64_t cs = (x->s + VP_TT_OUTPUT_CHUNKS - 1) / VP_TT_OUTPUT_CHUNKS;
	uint64_t n = (x->s + cs - 1) / cs, k;
	uint64_t wbytes = vp_mul_sat(x->V * x->h, B(x->gd));
	bool trainable = !x->frozen;
	bool tied = trainable && x->embed_op >= 0 && x->m->tie_embeddings &&
	    x->p->framework != VP_FW_MEGATRON;
	int32_t lg[VP_TT_OUTPUT_CHUNKS], loss = -1;
	size_t op[VP_TT_OUTPUT_CHUNKS];
	struct vp_op *o;
	/*
	 * A frozen head (LoRA) on a 3-D chunk: F.linear without a bias is
	 * matmul(chunk, W.t()), which folds the batch into one mm when the
	 * weight requires grad or the input's leading dimensions are dense
	 * (should_fold, aten/src/ATen/native/LinearAlgebra.cpp); a chunk is
	 * a slice along the sequence, whose batch stride is the whole
	 * sequence's (even at b = 1), so with two chunks or more it runs bmm
	 * on the weight expanded to (b, h, V).  The CPU's bf16 bmm makes that
	 * operand contiguous: a
	 * (b, h, V) copy while the chunk's forward runs, and in its backward
	 * (grad.bmm of the expanded (b, V, h) weight) another when b > 1 (at
	 * b = 1 the expansion is contiguous).  Measured on PyTorch 2.13's
	 * CPU profiler (aten::contiguous under aten::bmm): 4,096,000 B at
	 * b 1, h 64, V 32000, 8,192,000 B forward and backward at b 2; none
	 * in fp32, nor where the weight requires grad (one mm).  A device
	 * fact of the CPU: CUDA's bmm passes the expanded operand to cuBLAS's
	 * strided batched GEMM as it is (prepare_batch_matrix_for_cublas,
	 * aten/src/ATen/native/cuda/Blas.cpp, checks only the two matrix
	 * strides).
	 */
	uint64_t frozen_head_bmm = x->cpu && !trainable && n >= 2 &&
	    x->w == VP_BF16 && dt_of(x, hsd) == VP_BF16 ?
	    vp_mul_sat(x->b * x->h * x->V, 2) : 0;

	assert(n >= 1 && n <= VP_TT_OUTPUT_CHUNKS);
	hsd = norm(x, "final norm", hsd);
	for (k = 0; k < n; k++) {
		uint64_t rows = x->b * (k + 1 < n ? cs : x->s - k * cs);

		o = opnew(x, "output (chunk)");
		IN(o, hsd);
		lg[k] = tnew(x, rows * x->V, x->w, VP_CAT_LOGITS,
		    "logits (chunk)", trainable || rg_of(x, hsd));
		OUT(o, lg[k]);
		op[k] = x->g->nop - 1;
		if (trainable)
			SAVE(o, hsd);	/* a view of it, for dW */
		else if (frozen_head_bmm) {
			o->fwd_tmp = frozen_head_bmm;
			o->bwd_tmp = x->b > 1 ? frozen_head_bmm : 0;
		}
	}
	/* The head's weight gradients, in backward order n-1 ... 0. */
	for (k = 0; trainable && k < n; k++) {
		struct vp_op *w = &x->g->op[op[k]];
		bool second = n >= 2 && k == n - 2;

		if (k == n - 1) {
			w->wgrad_bytes = wbytes;
			w->wgrad_waits = n >= 2 && !tied;
			continue;
		}
		w->wgrad_tmp = wbytes;
		if (second || x->torch113)
			w->wgrad_sum = wbytes;	/* out of place, after */
		if (k == 0 && !tied)	/* the last use ends the wait */
			w->wgrad_adds_to = (uint32_t)op[n - 1] + 1;
	}
	if (trainable) {
		x->wgrad_op = (int32_t)op[n - 1];
		/* Two or more make a sum of their own: no view waits. */
		x->wgrad_view = n == 1;
	}
	for (k = 0; k < n; k++) {
		int32_t up, st = -1, ls, lk;

		/* --compile-loss: compute_cross_entropy compiled, one region
		 * per chunk (the compiled chunked loss, above). */
		region_begin(x, x->p->compile_loss);
		up = dt_of(x, lg[k]) == VP_FP32 ? lg[k] : ew(x,
		    "fp32 upcast (chunk)", elems_of(x, lg[k]), VP_FP32, lg[k],
		    -1, -1, -1, VP_CAT_LOGITS);
		if (x->inductor)
			st = ew(x, "row max and logsumexp (chunk)",
			    2 * (elems_of(x, up) / x->V), VP_FP32, up, -1, -1,
			    -1, VP_CAT_LOGITS);
		ls = ew(x, "log_softmax (chunk)", elems_of(x, up), VP_FP32, up,
		    st, -1, -1, VP_CAT_LOGITS);
		save_result(x, ls);
		o = opnew(x, "nll_loss (chunk)");
		IN(o, ls);
		lk = tnew(x, 1, VP_FP32, VP_CAT_LOGITS, "loss (chunk)",
		    rg_of(x, ls));
		OUT(o, lk);
		region_end(x, lk);
		loss = loss < 0 ? lk : ew(x, "loss sum", 1, VP_FP32, loss, lk,
		    -1, -1, VP_CAT_LOGITS);
	}
	/* The recipe's `del logits`, after the loss. */
	for (k = 0; k < n; k++) {
		if (k % VP_OP_MAXKEEP == 0)
			o = opnew(x, "del logits");
		o->keep[k % VP_OP_MAXKEEP] = lg[k];
	}
	/* total_loss / total_elements: the root, the last tensor made. */
	return ew(x, "loss", 1, VP_FP32, loss, -1, -1, -1, VP_CAT_LOGITS);
}

/*
 * The head builders (vp_family_info.head): each takes the last block's
 * output and returns the logits the loss reads, with *rows the rows the
 * loss covers and held[] the tensors Python still references until the
 * loss exists (-1 for none).  Logits are upcast to fp32 always with the
 * family's logits_fp32 (v4.40 Llama's `logits.float()`) or loss_fp32
 * (ForCausalLMLoss), otherwise under CUDA autocast only.
 */
typedef int32_t (*head_fn)(struct lctx *x, int32_t hsd, uint64_t *rows,
    int32_t held[2]);

static int32_t
logits_upcast(struct lctx *x, int32_t lg)
{
	if (x->fam.logits_fp32 || (x->autocast && !x->cpu))
		return cast(x, lg, VP_FP32, VP_CAT_LOGITS);
	return lg;
}

/*
 * Decoder (HF v4.40 Llama/GPT-2): final norm, lm_head gives (b,s,V)
 * logits in the compute dtype, the upcast, and the shift
 * `logits[..., :-1, :].contiguous()` copies b(s-1)V.
 *
 * From 4.46 (Llama; GPT-2 from 4.48, loss_fp32) the model hands its
 * logits to ForCausalLMLoss (loss/loss_utils.py) and holds them until
 * the loss exists; the loss function upcasts them (`logits.float()`, a
 * copy unless they are fp32 already) and keeps its upcast until it
 * returns.  From 4.49 (pad_labels) it pads and shifts the labels instead
 * (`nn.functional.pad(labels, (0, 1), value=ignore_index)`): no shifted
 * copy, and the cross-entropy covers all b*s rows (the last of each
 * sequence ignored).
 */
/* Gemma-2's final soft-capping: logits / cap, tanh (saves its result),
 * * cap, each a new tensor in the logits' dtype; the loss reads the
 * last. */
static int32_t
logit_softcap(struct lctx *x, int32_t lg)
{
	uint64_t n = elems_of(x, lg);

	if (!x->m->logit_softcap)
		return lg;
	lg = ew(x, "logit softcap div", n, dt_of(x, lg), lg, -1, -1, -1,
	    VP_CAT_LOGITS);
	lg = ew(x, "logit softcap tanh", n, dt_of(x, lg), lg, -1, -1, -1,
	    VP_CAT_LOGITS);
	save_result(x, lg);
	return ew(x, "logit softcap mul", n, dt_of(x, lg), lg, -1, -1, -1,
	    VP_CAT_LOGITS);
}

static int32_t
lm_head(struct lctx *x, int32_t hsd, uint64_t *rows, int32_t held[2])
{
	int32_t lg, up, mamba_out = -1;

	hsd = norm(x, "final norm", hsd);
	/* Mamba2ForCausalLM: lm_head(hidden_states.to(lm_head.weight.dtype)),
	 * the fp32 residual stream's norm cast to the weights' dtype.  The
	 * backbone's inputs_embeds lives until Mamba2Model.forward returns,
	 * and the forward's hidden_states (the norm's output) until the loss
	 * is made (measured: one more tensor of b s h at the loss); Bamba's
	 * (BambaModel, BambaForCausalLM.forward) the same, without the
	 * cast. */
	if (x->fam.block == VP_BLOCK_MAMBA2 || x->fam.block ==
	    VP_BLOCK_HYBRID || x->fam.block == VP_BLOCK_NEMOTRON_H ||
	    x->fam.block == VP_BLOCK_ZAMBA2 || x->fam.block ==
	    VP_BLOCK_JAMBA || x->fam.block == VP_BLOCK_MAMBA1) {
		mamba_out = hsd;
		if (x->g->layer_input[1] >= 0)
			release(x, "backbone return", x->g->layer_input[1],
			    x->z_orig, x->z_cs);
		if (x->fam.block == VP_BLOCK_MAMBA2 || x->fam.block ==
		    VP_BLOCK_MAMBA1)
			hsd = cast(x, hsd, x->w, VP_CAT_ACT);
	}
	lg = linear(x, LIN_LM_HEAD, hsd, x->h, x->V, x->fam.head_bias, true,
	    VP_CAT_LOGITS);
	lg = logit_softcap(x, lg);
	/* Cohere: logits * logit_scale, rebound: the head's output goes. */
	if (x->fam.logit_scale)
		lg = ew(x, "logit scale", elems_of(x, lg), dt_of(x, lg), lg,
		    -1, -1, -1, VP_CAT_LOGITS);
	up = x->fam.loss_fp32 ? cast(x, lg, VP_FP32, VP_CAT_LOGITS) :
	    logits_upcast(x, lg);
	/* v4.40 rebinds `logits` to its upcast: the 16-bit ones go. */
	held[0] = x->fam.loss_fp32 && up != lg ? lg : -1;
	held[1] = -1;
	if (x->fam.pad_labels) {
		*rows = x->b * x->s;
		held[1] = mamba_out;
		return up;
	}
	/* The upcast stays referenced until the loss is computed. */
	held[1] = up;
	*rows = x->b * (x->s - 1);
	return ew(x, "shift logits", *rows * x->V, dt_of(x, up), up, -1, -1,
	    -1, VP_CAT_LOGITS);
}

/* BertForMaskedLM: dense h→h, GELU, LayerNorm, the decoder; the loss
 * reads the head's output directly. */
static int32_t
mlm_head(struct lctx *x, int32_t hsd, uint64_t *rows, int32_t held[2])
{
	int32_t t, lg;

	t = linear(x, LIN_MLM_TRANSFORM, hsd, x->h, x->h, true, true,
	    VP_CAT_ACT);
	t = activation(x, VP_ACT_GELU, t);
	t = norm(x, "mlm norm", t);
	lg = linear(x, LIN_MLM_DECODER, t, x->h, x->V, true, true,
	    VP_CAT_LOGITS);
	held[0] = held[1] = -1;
	*rows = x->b * x->s;
	return logits_upcast(x, lg);
}

/* torch.nn stacks: a linear head straight on the last layer's output,
 * shifted when the model is a decoder. */
static int32_t
linear_head(struct lctx *x, int32_t hsd, uint64_t *rows, int32_t held[2])
{
	int32_t lg;

	lg = linear(x, LIN_HEAD, hsd, x->h, x->V, x->m->bias, true,
	    VP_CAT_LOGITS);
	held[0] = held[1] = -1;
	*rows = x->b * x->s;
	if (x->m->arch == VP_ARCH_DECODER) {
		*rows = x->b * (x->s - 1);
		lg = ew(x, "shift logits", *rows * x->V, dt_of(x, lg), lg, -1,
		    -1, -1, VP_CAT_LOGITS);
	}
	return logits_upcast(x, lg);
}

/* An encoder-decoder's rows: the decoder's tokens (lower_encdec sets
 * x->s to the target length while it lowers the decoder). */
static int32_t seq2seq_head(struct lctx *x, int32_t hsd, uint64_t *rows,
    int32_t held[2]);
/* ViT's classifier on the CLS token (with vit_embeddings, at the end of
 * the file beside the layer graphs' convolution it reuses). */
static int32_t cls_head(struct lctx *x, int32_t hsd, uint64_t *rows,
    int32_t held[2]);
static int32_t vit_embeddings(struct lctx *x);
static int32_t llava_embeddings(struct lctx *x, uint64_t rows);

/*
 * ModernBertForMaskedLM (5.24): the model's final_norm, the head's dense
 * (no bias: classifier_bias), GELU (classifier_activation), norm, the
 * decoder (tied, with its bias); the logits go to ForMaskedLMLoss, which
 * upcasts them (`logits.float()`) while the model's output holds them
 * (as lm_head's loss_fp32).  Every token is a row (sparse_prediction is
 * refused by the reader).
 */
static int32_t
modernbert_head(struct lctx *x, int32_t hsd, uint64_t *rows, int32_t held[2])
{
	int32_t t, lg, up;

	hsd = norm(x, "final norm", hsd);
	t = linear(x, LIN_MLM_TRANSFORM, hsd, x->h, x->h, false, true,
	    VP_CAT_ACT);
	t = activation(x, VP_ACT_GELU, t);
	t = norm(x, "mlm norm", t);
	lg = linear(x, LIN_MLM_DECODER, t, x->h, x->V, true, true,
	    VP_CAT_LOGITS);
	up = cast(x, lg, VP_FP32, VP_CAT_LOGITS);
	held[0] = up != lg ? lg : -1;
	held[1] = -1;
	*rows = x->b * x->s;
	return up;
}

static const head_fn head_builders[VP_HEAD_COUNT] = {
	[VP_HEAD_LM] = lm_head,
	[VP_HEAD_MLM] = mlm_head,
	[VP_HEAD_LINEAR] = linear_head,
	[VP_HEAD_SEQ2SEQ] = seq2seq_head,
	[VP_HEAD_MODERNBERT_MLM] = modernbert_head,
	[VP_HEAD_CLS] = cls_head,
};

/*
 * Logits and loss: the family's head, then cross-entropy, whose
 * log_softmax saves its fp32 result.
 */
static int32_t
head_and_loss(struct lctx *x, int32_t hsd)
{
	const struct vp_model *m = x->m;
	uint64_t nshift;
	int32_t lg, ls, loss, held[2];
	struct vp_op *o;

	if (x->p->loss == VP_LOSS_CHUNKED_OUTPUT)
		return chunked_output_ce(x, hsd);
	if (x->p->loss == VP_LOSS_CHUNKED)
		return fused_linear_ce(x, hsd, m->arch == VP_ARCH_DECODER ?
		    x->b * (x->s - 1) : x->b * x->s);
	assert(x->fam.head < VP_HEAD_COUNT);
	lg = head_builders[x->fam.head](x, hsd, &nshift, held);
	/*
	 * Cross-entropy's log_softmax runs in fp32 under autocast (both
	 * devices list it); on CPU it reads 16-bit logits directly and its
	 * backward makes an fp32 gradient before casting it back.
	 */
	/* torch.compile of the loss (torchtitan's compile of "loss"): the
	 * cross-entropy is a region whose input is the logits it reads. */
	region_begin(x, x->p->compile_loss);
	ls = ew(x, "log_softmax", nshift * x->V, x->autocast ? VP_FP32 :
	    dt_of(x, lg), lg, -1, -1, -1, VP_CAT_LOGITS);
	save_result(x, ls);
	if (dt_of(x, lg) != dt_of(x, ls))	/* fp32 grad, then the cast */
		x->g->op[x->g->nop - 1].bwd_tmp = x->g->t[ls].bytes -
		    x->g->t[lg].bytes;
	o = opnew(x, "nll_loss");
	IN(o, ls);
	/* The logits the loss read (and those the head holds) stay
	 * referenced until after the loss. */
	o->keep[0] = lg;
	o->keep[1] = held[0];
	o->keep[2] = held[1];
	loss = tnew(x, 1, VP_FP32, VP_CAT_LOGITS, "loss", true);
	OUT(o, loss);
	region_end(x, loss);
	/* NLL backward allocates a zeroed (rows, V) gradient. */
	return loss;
}

/* Blocks held by pipeline stage `stage` of pp (the first stages take the
 * remainder, as Megatron's uneven split does). */
uint64_t
vp_stage_blocks(uint64_t layers, unsigned pp, unsigned stage)
{
	uint64_t base = layers / pp, rem = layers % pp;

	return base + (stage < rem ? 1 : 0);
}

/*
 * A second lookup table summed into the token embeddings (learned
 * positions, BERT's token types): `entries` x h weights, trainable
 * unless the base is frozen; returns the sum.
 */
static int32_t
added_embedding(struct lctx *x, const char *name, uint64_t entries,
    uint64_t rows, int32_t t)
{
	struct vp_graph *g = x->g;
	int32_t e = ew(x, name, rows * x->h, x->w, -1, -1, -1, -1, VP_CAT_ACT);

	g->t[e].requires_grad = !x->frozen;
	if (!x->frozen)
		g->op[g->nop - 1].wgrad_bytes = vp_mul_sat(entries * x->h,
		    B(x->gd));
	return ew(x, "embedding add", rows * x->h, x->w, t, e, -1, -1,
	    VP_CAT_ACT);
}

/* Embeddings of the first stage; returns the residual stream input. */
static int32_t
embeddings(struct lctx *x, uint64_t rows)
{
	const struct vp_model *m = x->m;
	int32_t ids, t;
	struct vp_op *o;

	/* Token ids (int64); the lookup saves only the indices, and its
	 * weight gradient is a dense vocab x h tensor. */
	ids = tnew(x, rows, VP_INT64, VP_CAT_INPUT, "input ids", false);
	o = opnew(x, "embedding");
	IN(o, ids);
	t = tnew(x, rows * x->h, x->w, VP_CAT_ACT, "embeddings", !x->frozen);
	OUT(o, t);
	if (!x->frozen)
		o->wgrad_bytes = vp_mul_sat(x->V * x->h, B(x->gd));
	x->embed_op = (int32_t)(x->g->nop - 1);
	/* Gemma: the lookup times sqrt(hidden) (a scalar buffer in the
	 * weights' dtype: nothing saved). */
	if (x->fam.embed_scale)
		t = ew(x, "embed scale", rows * x->h, x->w, t, -1, -1, -1,
		    VP_CAT_ACT);
	if (m->pos == VP_POS_LEARNED)
		t = added_embedding(x, "position embedding", m->max_seq +
		    x->fam.pos_offset, rows, t);
	if (m->type_vocab)
		t = added_embedding(x, "token type embedding", m->type_vocab,
		    rows, t);
	if (x->fam.embed_norm)
		t = norm(x, "embedding norm", t);
	/* DeBERTa: embeddings * mask.to(dtype) (b, s, 1), which the mul
	 * saves (small). */
	if (x->fam.embed_mask) {
		t = ew(x, "embedding mask", rows * x->h, dt_of(x, t), t, -1, -1,
		    -1, VP_CAT_ACT);
		t = dropout(x, "embedding dropout", t);
	}
	/* SP: Megatron scatters the embeddings along the sequence before
	 * their dropout. */
	if (x->sp && x->tp > 1)
		t = ew(x, "scatter to sequence parallel", elems_of(x, t) /
		    x->tp, dt_of(x, t), t, -1, -1, -1, VP_CAT_ACT);
	/* GPT-2 and BERT drop out the summed embeddings (with learned
	 * positions, the only kind their code has). */
	if (x->fam.embed_dropout && (m->pos == VP_POS_LEARNED ||
	    x->fam.block == VP_BLOCK_PARALLEL))
		t = dropout(x, "embedding dropout", t);
	return t;
}

/* The lowering context of one rank: local sizes, dtypes, flags. */
static void
lctx_init(struct lctx *x, const struct vp_model *m, const struct vp_plan *p,
    struct vp_graph *g)
{
	const struct vp_prec_info *pi = &vp_prec_info[p->precision];
	uint64_t tp = p->tp, cp = p->cp;

	memset(x, 0, sizeof *x);
	x->g = g;
	x->m = m;
	x->p = p;
	x->fam = vp_model_traits_at(m, p->transformers_version);
	x->b = p->micro_batch;
	/* Context parallel: each rank holds seq/cp of every activation;
	 * attention still sees the whole sequence's keys. */
	x->s = p->seq / cp;
	x->s_kv = p->seq;
	x->h = m->hidden;
	x->tp = tp;
	x->sp = p->sp && tp > 1;
	x->a = m->heads / tp;
	x->kv = m->kv_heads >= tp ? m->kv_heads / tp : 1;
	x->d = m->head_dim;
	x->dv = x->fam.mla ? m->mla.v_dim : m->head_dim;
	x->f = m->ffn / tp;
	x->V = (m->vocab + tp - 1) / tp;
	x->w = pi->weight;
	x->c = pi->compute;
	x->gd = pi->grad;
	x->autocast = pi->autocast;
	x->cpu = p->device == VP_DEVICE_CPU;
	/* Saved-tensor rules that changed with PyTorch 2.0 follow --torch
	 * (the CPU grid measures Debian's 1.13 and says so). */
	x->torch113 = p->torch_version < 200;
	x->r = pi->autocast ? VP_FP32 : pi->weight;
	x->drop = vp_plan_dropout(p, m);
	x->wmult = 1;
	x->fsdp_params16 = p->fsdp == VP_FSDP_FULL ||
	    p->fsdp == VP_FSDP_HYBRID;
	x->sharded_weights = p->zero >= 3 || p->fsdp == VP_FSDP_FULL ||
	    p->fsdp == VP_FSDP_HYBRID;
	x->fp8 = p->precision == VP_PREC_FP8;
	x->float8 = p->float8;
	/*
	 * LoRA: the base is frozen and, under mixed precision, loaded in the
	 * 16-bit compute dtype (as fine-tuning recipes do); the adapters
	 * keep --lora-dtype and autocast handles their matmuls.
	 */
	x->frozen = p->lora_rank > 0;
	/*
	 * FSDP1 with use_orig_params and the adapters in their block's unit
	 * (--fsdp-lora-wrap block): a block's flat parameter requires grad
	 * once one of its originals (an adapter) does, and the frozen
	 * originals are views of it (_flat_param.py, _use_unsharded_views),
	 * so autograd computes their gradients as in full training: each
	 * linear saves its input and makes dW, which the flat gradient's
	 * cat collects and reduce-scatters (measured on 2 gloo ranks,
	 * tests/validate_fsdp.py).  The root unit, all frozen, stays so, and
	 * so do bitsandbytes' 4-bit linears, whose MatMul4Bit returns no
	 * weight gradient (the cat fills zeros).
	 */
	x->flat_grads = x->frozen && p->fsdp != VP_FSDP_NONE &&
	    vp_plan_framework(p) == VP_FW_FSDP1 &&
	    p->fsdp_orig_params == VP_YES &&
	    p->fsdp_lora_wrap == VP_LORAWRAP_BLOCK;
	x->embed_op = -1;
	x->wgrad_op = -1;
	x->gated_op = x->gated_gate = -1;
	x->mask_full = x->mask_local = -1;
	x->rope_cs[0] = x->rope_cs[1] = -1;
	x->deb_relpos = x->deb_rel = -1;
	x->vis_px = -1;
	/* A vision transformer: its patches and the CLS token, whatever
	 * the plan's seq says. */
	if (m->family == VP_FAMILY_VIT)
		x->s = x->s_kv = vp_vision_seq(m, p->image ? p->image :
		    m->vis.image);
	x->probs_held = x->probs_prev = -1;
	x->z_orig = x->z_cs = -1;
	memset(x->z_wc, -1, sizeof x->z_wc);
	if (x->frozen && x->autocast) {
		x->w = x->c;
		x->r = x->c;
	}
	/*
	 * PEFT's prepare_model_for_kbit_training casts every parameter
	 * bitsandbytes did not quantize (embeddings, norms, the head) to
	 * fp32 (peft/utils/other.py): the embeddings, every norm's output
	 * and so the residual stream are fp32, and each Linear4bit casts its
	 * output back to its fp32 input.
	 */
	if (p->quant != VP_QUANT_NONE && p->kbit_prep == VP_KBIT_UPCAST) {
		x->w = VP_FP32;
		x->r = VP_FP32;
	}
}

/*
 * Tied embeddings on a stage that has both uses: the head's backward
 * (which runs first) makes the shared weight's gradient, and the lookup's
 * dense gradient is added to it.  Both go to the weight's one
 * AccumulateGrad node; the engine adds each producer's output into that
 * node's InputBuffer (engine.cpp, evaluate_function -> InputBuffer::add),
 * so the head's gradient waits there through the whole backward until the
 * lookup's arrives.  Adding two dense gradients there, PyTorch 1.13's
 * InputBuffer::accumulate (input_buffer.cpp) always does `old_var + var`:
 * a third V x h tensor while both addends live (measured on the CPU: the
 * `aten::add` under EmbeddingBackward0's evaluate_function, fp32, bf16 and
 * bf16 autocast alike).  PyTorch 2.x adds in place into a buffered tensor
 * it can reuse (can_accumulate_inplace: dense, and the last reference to
 * it and to its storage).  F.linear's dW reaches the buffer as
 * TBackward0's view, which shares its storage with the matmul's result,
 * so the sum is still out of place (measured on 2.13, fp32); the fp32
 * copy made by autocast's cast (ToCopyBackward0) or the fused loss's own
 * gradient is reused (measured: no add under bf16 autocast on 2.13).
 * AccumulateGrad then steals the sum (accumulate_grad.h: new_grad's use
 * count allows it and its layout obeys the parameter's), so .grad costs
 * nothing more; on a later micro-batch it adds the sum into .grad in
 * place.  Megatron writes the head's dW into main_grad itself
 * (gradient_accumulation_fusion) and hands autograd none, so nothing
 * waits there.
 */
static void
tie_embeddings(struct lctx *x)
{
	struct vp_op *e, *h;

	if (x->embed_op < 0 || x->wgrad_op < 0 || x->frozen)
		return;
	e = &x->g->op[x->embed_op];
	h = &x->g->op[x->wgrad_op];
	/* The lookup's gradient only adds to the head's: a transient. */
	e->wgrad_tmp = e->wgrad_bytes;
	e->wgrad_bytes = 0;
	if (x->p->framework == VP_FW_MEGATRON)
		return;
	h->wgrad_waits = true;
	e->wgrad_adds_to = (uint32_t)x->wgrad_op + 1;
	if (x->wgrad_view || x->torch113)
		e->wgrad_sum = e->wgrad_tmp;
}

/*
 * torchtitan's op-level policy over one checkpointed block, ops [a, b)
 * (torchtitan v0.2.2, torchtitan/distributed/activation_checkpoint.py,
 * _apply_op_sac, with the llama3 _op_sac_save_list): a counter per
 * checkpoint call counts the aten.mm ops in forward order and the policy
 * says MUST_SAVE for an op on the list unless it is an mm whose count is
 * even, so the 1st, 3rd, 5th ... mm keep their results; every other op
 * is PREFER_RECOMPUTE.  A Llama block's mms are q, k, v, o, gate, up,
 * down: q, v, gate and down keep theirs.  The recompute counts afresh
 * and takes the same ones back from the cache.
 */
static void
op_policy(struct vp_graph *g, size_t a, size_t b)
{
	unsigned mm = 0;
	size_t i;

	for (i = a; i < b; i++)
		if (g->op[i].sac_mm && ++mm % 2 == 0)
			g->op[i].sac = 0;
}

/*
 * The op-level policy inside a compiled block, ops [a, b): torchtitan
 * compiles the checkpoint-wrapped block (apply_ac, then apply_compile),
 * so AOTAutograd's min-cut partitioner (torch/_functorch/partitioners.py,
 * solve_min_cut) takes the policy's tags: a PREFER_RECOMPUTE node gets an
 * infinite edge to the sink (recomputed inside the backward graph), a
 * MUST_SAVE one is banned from recompute.  What the forward graph saves
 * is then the tagged outputs and block inputs the backward reaches: walk
 * back from what the block's ops save (region_end's set, what the
 * backward reads) through the producers of untagged tensors, stopping at
 * a tagged output or a tensor made before the block.  A tagged output
 * the walk does not reach is not saved at all (a Llama block's down
 * projection, which only the residual sum reads; the eager SAC cache
 * keeps it): its tag goes.  Measured, calib/harness.py --compile wrapped.
 */
static void
op_policy_compiled(struct vp_graph *g, size_t a, size_t b)
{
	size_t t0 = g->nt, n, i, top = 0;
	int32_t *prod, *stack;
	uint8_t *need;
	int k;

	for (i = a; i < b; i++)
		for (k = 0; k < VP_OP_MAXIO && g->op[i].out[k] >= 0; k++)
			if ((size_t)g->op[i].out[k] < t0)
				t0 = (size_t)g->op[i].out[k];
	if (t0 >= g->nt)
		return;
	n = g->nt - t0;
	prod = xmalloc(n * sizeof *prod);
	need = xcalloc(n, 1);
	stack = xmalloc((n * VP_OP_MAXIO + VP_OP_MAXIO * (b - a) + 1) *
	    sizeof *stack);
	for (i = 0; i < n; i++)
		prod[i] = -1;
	for (i = a; i < b; i++)
		for (k = 0; k < VP_OP_MAXIO && g->op[i].out[k] >= 0; k++)
			prod[g->op[i].out[k] - (int32_t)t0] = (int32_t)i;
	for (i = a; i < b; i++)
		for (k = 0; k < VP_OP_MAXIO && g->op[i].saved[k] >= 0; k++)
			stack[top++] = g->op[i].saved[k];
	while (top > 0) {
		int32_t t = stack[--top];
		const struct vp_op *p;
		size_t j;

		if ((size_t)t < t0 || need[t - t0] || prod[t - t0] < 0)
			continue;
		need[t - t0] = 1;
		p = &g->op[prod[t - t0]];
		for (j = 0; j < VP_OP_MAXIO; j++)
			if (p->out[j] == t)
				break;
		if (j < VP_OP_MAXIO && (p->sac & (1u << j)))
			continue;	/* saved from the forward */
		for (k = 0; k < VP_OP_MAXIO && p->in[k] >= 0; k++)
			stack[top++] = p->in[k];
	}
	for (i = a; i < b; i++)
		for (k = 0; k < VP_OP_MAXIO && g->op[i].out[k] >= 0; k++)
			if ((g->op[i].sac & (1u << k)) &&
			    !need[g->op[i].out[k] - (int32_t)t0])
				g->op[i].sac &= (uint8_t)~(1u << k);
	free(stack);
	free(need);
	free(prod);
}

/*
 * The backward of a checkpoint inside a compiled block (torchtitan's
 * order).  The partitioner puts the recompute into the backward graph
 * (reordering_to_mimic_autograd_engine), and Inductor's code for a Llama
 * block (TORCH_LOGS=output_code, PyTorch 2.13) first re-makes what the
 * eager re-run would save but the gated product h, the down projection's
 * input: after dX = dY W_down, one fused kernel reads dX, the gate and
 * up outputs and writes h (for dW_down, the next matmul), d up and
 * d gate; only then are its inputs freed.  In the eager replay h is
 * freed by the down projection's backward and d gate is made by the
 * activation's, after dX is gone: the gated product's backward gets the
 * other two as a workspace, h's and the gate gradient's bytes (measured:
 * six b*s*f buffers live at the backward's peak, fp32 and bf16, full and
 * op policy; the checkpoint outside the compiled block keeps four).
 */
static void
compiled_checkpoint_mlp(struct lctx *x)
{
	struct vp_op *o;

	if (x->gated_op < 0)
		return;
	o = &x->g->op[x->gated_op];
	o->bwd_tmp = vp_add_sat(x->g->t[o->out[0]].bytes,
	    x->g->t[x->gated_gate].bytes);
}

/*
 * The ops of the stage, in forward order: the embeddings (first stage) or
 * the pipeline receive, `blocks` blocks from the family's builder, then
 * the head and loss (last stage) or the pipeline send.  `offset` is the
 * index of the stage's first block in the whole model.
 */
/*
 * The masks a model with local layers builds once per forward
 * (Gemma3TextModel.forward's causal_mask_mapping, masking_utils): for
 * eager, the causal and the sliding-window one, (b, 1, s, s) additive
 * masks in the embeddings' dtype, whatever the layers' types; for sdpa,
 * a bool sliding-window mask only when the window is reached (window_mask;
 * the causal one is skipped for is_causal).  They live until the model's
 * forward returns (the "masks freed" op after the stage's last block);
 * a checkpointed block holds the ones it reads until its backward.
 * Models without local layers build the same causal mask for eager: a
 * Hugging Face decoder (create_causal_mask; 4.40's _update_causal_mask the
 * same), measured: Llama's fp32 (b, 1, s, s) under CPU autocast lives
 * through the forward, and GPT-J's checkpointed blocks under --recompute
 * full hold it through the backward (causal_mask: a family that needs it
 * whatever its implementation).  The own schema's torch-nn and Megatron
 * models build none (causal kernels and masked_fill on a bool buffer).
 */
static void
layer_masks(struct lctx *x, uint64_t offset, uint32_t blocks)
{
	uint64_t n = x->b * x->s * x->s_kv, l;
	bool local = false;

	x->mask_full = x->mask_local = -1;
	for (l = offset; l < offset + blocks && !local; l++)
		local = vp_layer_local(x->m, l);
	if (!local && x->p->attention == VP_ATTN_EAGER && !x->fam.mask_skip &&
	    (x->fam.causal_mask || (x->m->impl == VP_IMPL_HF &&
	    x->m->arch == VP_ARCH_DECODER))) {
		x->mask_full = ew(x, "causal mask", n, x->autocast ? VP_FP32 :
		    x->w, -1, -1, -1, -1, VP_CAT_ACT);
		return;
	}
	/* Falcon: sdpa gets the causal mask too, a bool one. */
	if (!local && x->fam.sdpa_mask && x->p->attention == VP_ATTN_SDPA) {
		x->mask_full = ew(x, "causal mask", n, VP_BOOL, -1, -1, -1,
		    -1, VP_CAT_ACT);
		return;
	}
	if (!local)
		return;
	if (x->p->attention == VP_ATTN_EAGER && !x->fam.mask_skip) {
		enum vp_dtype dt = x->autocast ? VP_FP32 : x->w;

		x->mask_full = ew(x, "causal mask", n, dt, -1, -1, -1, -1,
		    VP_CAT_ACT);
		x->mask_local = ew(x, "sliding window mask", n, dt, -1, -1,
		    -1, -1, VP_CAT_ACT);
	} else if (x->p->attention == VP_ATTN_SDPA &&
	    x->s_kv >= x->m->window) {
		x->mask_local = ew(x, "sliding window mask", n, VP_BOOL, -1,
		    -1, -1, -1, VP_CAT_ACT);
	} else if (x->p->attention == VP_ATTN_EAGER &&
	    x->fam.block == VP_BLOCK_MODERNBERT && x->s_kv >= x->m->window) {
		/* ModernBERT: create_bidirectional_mask skips the full one
		 * (no padding); the sliding-window one, once the window is
		 * reached, is eager_mask's additive one in the embeddings'
		 * dtype. */
		x->mask_local = ew(x, "sliding window mask", n, x->autocast ?
		    VP_FP32 : x->w, -1, -1, -1, -1, VP_CAT_ACT);
	}
}

static void
masks_freed(struct lctx *x)
{
	struct vp_op *o;

	if (x->mask_full < 0 && x->mask_local < 0 && x->rope_cs[0] < 0 &&
	    x->rope_cs[1] < 0 && x->deb_relpos < 0 && x->deb_rel < 0)
		return;
	o = opnew(x, "masks freed");
	if (x->mask_full >= 0)
		IN(o, x->mask_full);
	if (x->mask_local >= 0)
		IN(o, x->mask_local);
	if (x->rope_cs[0] >= 0)
		IN(o, x->rope_cs[0]);
	if (x->rope_cs[1] >= 0)
		IN(o, x->rope_cs[1]);
	if (x->deb_relpos >= 0)
		IN(o, x->deb_relpos);
	if (x->deb_rel >= 0)
		IN(o, x->deb_rel);
	x->deb_relpos = x->deb_rel = -1;
	x->mask_full = x->mask_local = -1;
	x->rope_cs[0] = x->rope_cs[1] = -1;
}

static void
lower_ops(struct lctx *x, uint32_t blocks, uint64_t offset, bool first,
    bool last)
{
	struct vp_graph *g = x->g;
	const struct vp_plan *p = x->p;
	uint64_t n = x->b * x->s;
	block_fn build = block_builders[x->fam.block];
	uint32_t l;
	size_t i;
	int32_t t;

	assert(x->fam.block < VP_BLOCK_COUNT && build != NULL);
	if (first) {
		t = x->m->family == VP_FAMILY_VIT ? vit_embeddings(x) :
		    x->m->vis.llava ? llava_embeddings(x, n) :
		    embeddings(x, n);
	} else {
		/* A later stage receives the previous stage's output. */
		t = ew(x, "pipeline receive", n * x->h / (x->sp ? x->tp : 1),
		    x->r, -1, -1, -1, -1, VP_CAT_ACT);
		g->t[t].requires_grad = true;
	}
	layer_masks(x, offset, blocks);
	if (first)
		zamba2_model_tensors(x, t);
	modernbert_rope_tables(x, dt_of(x, t));
	deberta_encoder_tensors(x);
	for (l = 1; l <= blocks; l++) {
		x->global_layer = offset + l - 1;
		begin_layer(x, l, t);
		x->frozen = x->frozen && !x->flat_grads;
		region_begin(x, x->p->compile);
		x->gated_op = x->gated_gate = -1;
		t = build(x, t);
		region_end(x, t);
		x->frozen = x->p->lora_rank > 0;
		/*
		 * Full and op recompute: the whole block is one checkpoint
		 * (op: with its policy's cache); with a stride, only every
		 * stride-th block of the stage, counted from its first
		 * (vp_plan_block_checkpointed).
		 *
		 * With --compile the checkpoint replays the region's rewritten
		 * ops: torchtune compiles the block inside its checkpoint
		 * wrapper, which is this (measured, --grid torch2).
		 * torchtitan (apply_ac, then apply_compile) compiles the
		 * wrapped block instead (vp_plan_compiled_checkpoint): the
		 * partitioner takes the policy's tags (MUST_SAVE: what
		 * op_policy saves and the backward reads,
		 * op_policy_compiled; PREFER_RECOMPUTE: the rest) and
		 * recomputes inside the backward graph, whose re-made
		 * forward is the eager re-run's but for the gated MLP's
		 * fused backward kernel (compiled_checkpoint_mlp); measured,
		 * calib/harness.py --compile wrapped.  FSDP2's hooks stay
		 * outside the compiled block
		 * (torch._dynamo.config.skip_fsdp_hooks), so the gather
		 * timeline is the eager one.
		 */
		if ((p->recompute == VP_RECOMP_FULL ||
		    p->recompute == VP_RECOMP_OP) &&
		    vp_plan_block_checkpointed(p, l)) {
			for (i = g->layer_first_op[l]; i < g->nop; i++)
				g->op[i].recompute = true;
		}
		if (p->recompute == VP_RECOMP_OP &&
		    vp_plan_block_checkpointed(p, l)) {
			op_policy(g, g->layer_first_op[l], g->nop);
			if (p->compile)
				op_policy_compiled(g, g->layer_first_op[l],
				    g->nop);
		}
		if (vp_plan_compiled_checkpoint(p, l))
			compiled_checkpoint_mlp(x);
	}
	x->layer = 0;
	g->layer_first_op[blocks + 1] = g->nop;
	masks_freed(x);
	if (last) {
		head_and_loss(x, t);
		g->input_bytes = n * B(VP_INT64);	/* labels */
		/* ViT: the pixel values and one label per image. */
		if (x->vis_px >= 0 && x->m->family == VP_FAMILY_VIT)
			g->input_bytes = vp_add_sat(g->t[x->vis_px].bytes,
			    x->b * B(VP_INT64));
		if (first && x->m->tie_embeddings)
			tie_embeddings(x);
	} else {
		/*
		 * Megatron frees the sent output's storage; backward starts
		 * from the gradient the next stage sends back.
		 */
		struct vp_op *o = opnew(x, "pipeline send");
		int32_t done;

		IN(o, t);
		done = tnew(x, 1, VP_FP32, VP_CAT_ACT, "sent", true);
		OUT(o, done);
	}
	/* LLaVA: the pixel values beside the ids and labels. */
	if (first && x->m->vis.llava && x->vis_px >= 0)
		g->input_bytes = vp_add_sat(g->input_bytes,
		    g->t[x->vis_px].bytes);
	/* Only an op-policy checkpoint caches anything. */
	for (i = 0; i < g->nop; i++)
		if (!(g->op[i].recompute && p->recompute == VP_RECOMP_OP))
			g->op[i].sac = 0;
	g->autocast_end_op = x->autocast ? g->nop - 1 : SIZE_MAX;
}

/*
 * Encoder-decoders: T5 / Flan-T5 / mT5 as transformers 5.24 runs them
 * (models/t5/modeling_t5.py, eager attention; rules.c refuses what is not
 * lowered here: parallelism, sharding of the blocks, LoRA, quantization,
 * compile, selective and op recompute, sdpa).  The graph's blocks are the
 * encoder's (1 .. layers) then the decoder's, each a T5Block, which
 * gradient checkpointing wraps one at a time (GradientCheckpointingLayer);
 * what the stacks do around them (embeddings, masks, final norms) is
 * outside every block.
 */
static const struct lin LIN_T5_CROSS_Q = { "cross q", 0, LIN_LOCAL };
static const struct lin LIN_T5_CROSS_K = { "cross k", 0, LIN_LOCAL };
static const struct lin LIN_T5_CROSS_V = { "cross v", 0, LIN_LOCAL };
static const struct lin LIN_T5_CROSS_O = { "cross o", 0, LIN_LOCAL };

/*
 * T5LayerNorm: variance = x.to(fp32).pow(2).mean(-1); x * rsqrt(variance
 * + eps) multiplies the input in its own dtype (an fp32 product that
 * saves the input and the rsqrt), cast to the weight's dtype when that is
 * 16 bit, then weight * x.
 */
static int32_t
t5_norm(struct lctx *x, const char *name, int32_t in)
{
	uint64_t n = elems_of(x, in), rows = n / x->h;
	int32_t x32, sq, var, ve, rs, hn, y;
	struct vp_op *o;

	x32 = cast(x, in, VP_FP32, VP_CAT_ACT);
	sq = ew(x, "rms pow", n, VP_FP32, x32, -1, x32, -1, VP_CAT_ACT);
	var = ew(x, "rms mean", rows, VP_FP32, sq, -1, -1, -1, VP_CAT_ACT);
	ve = ew(x, "rms add", rows, VP_FP32, var, -1, -1, -1, VP_CAT_ACT);
	rs = ew(x, "rms rsqrt", rows, VP_FP32, ve, -1, -1, -1, VP_CAT_ACT);
	save_result(x, rs);
	hn = ew2(x, "rms mul", n, VP_FP32, in, rs, VP_CAT_ACT);
	if (x->w != VP_FP32)
		hn = cast(x, hn, x->w, VP_CAT_ACT);
	o = opnew(x, name);
	IN(o, hn);
	y = tnew(x, n, x->w, VP_CAT_ACT, name, true);
	OUT(o, y);
	SAVE(o, hn);
	o->wgrad_bytes = vp_mul_sat(x->h, B(x->gd));
	/* Backward of weight*x: grad*x, then a sum over rows. */
	o->bwd_tmp = vp_mul_sat(n, B(x->w));
	return y;
}

/*
 * T5Attention.compute_bias: the bucket of each (query, key) pair, an
 * int64 (sq, skv) tensor the embedding lookup saves for its backward,
 * and the lookup, (sq, skv, heads) in the weights' dtype (embeddings are
 * not autocast), whose permuted view is the bias every block of the
 * stack adds to its scores.
 */
static int32_t
t5_rel_bias(struct lctx *x, uint64_t sq, uint64_t skv)
{
	int32_t bk, v;
	struct vp_op *o;

	bk = ew(x, "relative buckets", sq * skv, VP_INT64, -1, -1, -1, -1,
	    VP_CAT_ACT);
	o = opnew(x, "relative_attention_bias");
	IN(o, bk);
	v = tnew(x, vp_mul_sat(sq * skv, x->a), x->w, VP_CAT_ACT,
	    "position bias", true);
	OUT(o, v);
	SAVE(o, bk);
	o->wgrad_bytes = vp_mul_sat(x->m->rel_buckets * x->a, B(x->gd));
	return v;
}

/*
 * eager_attention_forward of modeling_t5.py: q k^T (saves both), times
 * the scaling 1.0 (a new tensor), plus the position bias (broadcast over
 * the batch: promoted to fp32 under autocast, whose bias is fp32), plus
 * the decoder's causal mask, softmax in that dtype (fp32 on CUDA
 * autocast's list), dropout, p v, and the transpose back copied.
 */
static int32_t
t5_attention_core(struct lctx *x, int32_t q, int32_t k, int32_t v,
    uint64_t sq, uint64_t skv, int32_t bias, int32_t mask)
{
	uint64_t ss = x->b * x->a * sq * skv, qd = x->a * x->d;
	enum vp_dtype cdt = dt_of(x, q), sdt;
	int32_t sc, pr, out;

	sc = ew2(x, "qk matmul", ss, cdt, q, k, VP_CAT_ACT);
	sc = ew(x, "scale", ss, cdt, sc, -1, -1, -1, VP_CAT_ACT);
	sc = ew(x, "position bias add", ss, promote(cdt, dt_of(x, bias)), sc,
	    bias, -1, -1, VP_CAT_ACT);
	if (mask >= 0)
		sc = ew(x, "mask add", ss, promote(dt_of(x, sc),
		    dt_of(x, mask)), sc, mask, -1, -1, VP_CAT_ACT);
	sdt = x->autocast && !x->cpu ? VP_FP32 : dt_of(x, sc);
	pr = ew(x, "softmax", ss, sdt, sc, -1, -1, -1, VP_CAT_ACT);
	save_result(x, pr);
	pr = dropout(x, "attn dropout", pr);
	if (x->autocast)
		pr = cast(x, pr, x->c, VP_CAT_ACT);
	out = ew2(x, "pv matmul", x->b * x->a * sq * x->d,
	    promote(dt_of(x, pr), dt_of(x, v)), pr, v, VP_CAT_ACT);
	return ew(x, "attn transpose", x->b * sq * qd, dt_of(x, out), out, -1,
	    -1, -1, VP_CAT_ACT);
}

/*
 * One attention sub-layer (T5LayerSelfAttention, T5LayerCrossAttention):
 * norm, q from it, k and v from it or from the encoder output `kv` (of
 * skv tokens), the core, o, dropout, the residual add.  *bias is the
 * stack's shared position bias, made here when it is -1: the relative
 * bias (self-attention of the first block) or T5Attention's zeros of
 * (1, heads, sq, skv) in q's dtype (cross-attention, which has no
 * relative bias), which require grad under gradient checkpointing
 * (`if self.gradient_checkpointing and self.training`).
 */
static int32_t
t5_attention(struct lctx *x, int32_t in, uint64_t sq, int32_t kv,
    uint64_t skv, int32_t *bias, int32_t mask)
{
	uint64_t qd = x->a * x->d;
	bool cross = kv >= 0;
	int32_t h, q, k, v, o;

	h = t5_norm(x, "attention norm", in);
	q = linear(x, cross ? LIN_T5_CROSS_Q : block_lin(x, VP_ROLE_Q), h,
	    x->h, qd, false, true, VP_CAT_ACT);
	k = linear(x, cross ? LIN_T5_CROSS_K : block_lin(x, VP_ROLE_K),
	    cross ? kv : h, x->h, qd, false, true, VP_CAT_ACT);
	v = linear(x, cross ? LIN_T5_CROSS_V : block_lin(x, VP_ROLE_V),
	    cross ? kv : h, x->h, qd, false, true, VP_CAT_ACT);
	if (*bias < 0 && !cross) {
		*bias = t5_rel_bias(x, sq, skv);
	} else if (*bias < 0) {
		*bias = ew(x, "position bias zeros", x->a * sq * skv,
		    dt_of(x, q), -1, -1, -1, -1, VP_CAT_ACT);
		x->g->t[*bias].requires_grad =
		    x->p->recompute == VP_RECOMP_FULL;
	}
	o = t5_attention_core(x, q, k, v, sq, skv, *bias, mask);
	o = linear(x, cross ? LIN_T5_CROSS_O : block_lin(x, VP_ROLE_O), o, qd,
	    x->h, false, true, VP_CAT_ACT);
	o = dropout(x, "resid dropout", o);
	return ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, o)), in, o, -1, -1, VP_CAT_ACT);
}

/*
 * T5LayerFF: norm, DenseReluDense (wi, ReLU) or DenseGatedActDense
 * (gelu_new(wi_0) * wi_1), dropout, then `hidden_states.to(
 * self.wo.weight.dtype)` when they differ (16-bit activations of fp32
 * weights under autocast: an fp32 copy, which autocast casts back for
 * wo), wo, dropout, the residual add.
 */
static int32_t
t5_ff(struct lctx *x, int32_t in)
{
	uint64_t rows = elems_of(x, in) / x->h;
	int32_t h, a, u;

	h = t5_norm(x, "ff norm", in);
	if (x->m->act == VP_ACT_GEGLU) {
		a = linear(x, block_lin(x, VP_ROLE_GATE), h, x->h, x->f, false,
		    true, VP_CAT_ACT);
		a = activation(x, VP_ACT_GELU_NEW, a);
		u = linear(x, block_lin(x, VP_ROLE_UP), h, x->h, x->f, false,
		    true, VP_CAT_ACT);
		a = ew2(x, "gate mul", rows * x->f, promote(dt_of(x, a),
		    dt_of(x, u)), a, u, VP_CAT_ACT);
	} else {
		a = linear(x, block_lin(x, VP_ROLE_FC), h, x->h, x->f, false,
		    true, VP_CAT_ACT);
		a = activation(x, VP_ACT_RELU, a);
	}
	a = dropout(x, "ffn dropout", a);
	a = cast(x, a, x->w, VP_CAT_ACT);
	a = linear(x, block_lin(x, VP_ROLE_DOWN), a, x->f, x->h, false, true,
	    VP_CAT_ACT);
	a = dropout(x, "ffn output dropout", a);
	return ew(x, "residual add", elems_of(x, in), promote(dt_of(x, in),
	    dt_of(x, a)), in, a, -1, -1, VP_CAT_ACT);
}

/* A lookup in the shared embedding (T5ForConditionalGeneration.shared,
 * the encoder's and decoder's embed_tokens); *op its op. */
static int32_t
t5_lookup(struct lctx *x, const char *name, int32_t ids, uint64_t rows,
    size_t *op)
{
	struct vp_op *o = opnew(x, name);
	int32_t t;

	IN(o, ids);
	if (x->g->t[ids].cat != VP_CAT_INPUT)
		SAVE(o, ids);
	t = tnew(x, rows * x->h, x->w, VP_CAT_ACT, "embeddings", true);
	OUT(o, t);
	o->wgrad_bytes = vp_mul_sat(x->V * x->h, B(x->gd));
	*op = x->g->nop - 1;
	return t;
}

/* Blocks [first, nop) of block l: one checkpoint under --recompute full
 * (T5Block is a GradientCheckpointingLayer). */
static void
t5_checkpoint(struct lctx *x, uint32_t l)
{
	size_t i;

	if (x->p->recompute == VP_RECOMP_FULL)
		for (i = x->g->layer_first_op[l]; i < x->g->nop; i++)
			x->g->op[i].recompute = true;
}

/*
 * The decoder's head (T5ForConditionalGeneration.forward): the decoder
 * stack's final norm and dropout, `sequence_output * (model_dim**-0.5)`
 * when scale_decoder_outputs (a new tensor), lm_head (no bias), and
 * CrossEntropyLoss on the logits (no upcast of the model's own).  The
 * labels are not shifted: b * target rows.
 */
static int32_t
t5_head(struct lctx *x, int32_t hsd, uint64_t *rows, int32_t held[2])
{
	int32_t lg;

	hsd = t5_norm(x, "decoder final norm", hsd);
	hsd = dropout(x, "decoder dropout", hsd);
	x->s2s_held[0] = hsd;
	if (x->m->scale_dec_out)
		hsd = ew(x, "decoder output scale", elems_of(x, hsd),
		    dt_of(x, hsd), hsd, -1, -1, -1, VP_CAT_ACT);
	x->s2s_held[1] = hsd;
	lg = linear(x, LIN_LM_HEAD, hsd, x->h, x->V, false, true,
	    VP_CAT_LOGITS);
	/* The model holds its logits (lm_logits) through the loss;
	 * cross_entropy is on autocast's fp32 list on both devices, so
	 * 16-bit logits are cast (measured on the CPU, 2.13: the fp32 copy
	 * and log_softmax's fp32 result live together in the loss). */
	held[0] = lg;
	held[1] = -1;
	*rows = x->b * x->s;
	return x->autocast ? cast(x, lg, VP_FP32, VP_CAT_LOGITS) : lg;
}

/*
 * The shared embedding is used three times: the head's weight gradient
 * comes first and waits in the AccumulateGrad node's input buffer
 * (tie_embeddings) until the last use's, the encoder lookup's, arrives;
 * the decoder lookup's is added on the way, out of place when the
 * buffered gradient is TBackward0's view (the sum, while both addends
 * live, as chunked_output_ce's), and the encoder's then goes into the
 * buffered sum in place.  Untied (an own-schema model), the decoder
 * lookup's waits for the encoder's, added in place (a lookup's dense
 * gradient is no view).
 */
static void
t5_tie(struct lctx *x, size_t enc, size_t dec)
{
	struct vp_op *e = &x->g->op[enc], *d = &x->g->op[dec], *h;

	e->wgrad_tmp = e->wgrad_bytes;
	e->wgrad_bytes = 0;
	if (!x->m->tie_embeddings) {
		d->wgrad_waits = true;
		e->wgrad_adds_to = (uint32_t)dec + 1;
		return;
	}
	h = &x->g->op[x->wgrad_op];
	h->wgrad_waits = true;
	d->wgrad_tmp = d->wgrad_bytes;
	d->wgrad_bytes = 0;
	if (x->wgrad_view || x->torch113)
		d->wgrad_sum = d->wgrad_tmp;
	e->wgrad_adds_to = (uint32_t)x->wgrad_op + 1;
}

/*
 * What lower_encdec asks of a family (s2s_builders[], by family; NULL for
 * a family that is not an encoder-decoder): the encoder's input up to its
 * first block (enc_in, which sets in_bytes, the inputs the caller holds
 * besides the labels), one encoder block, what follows the last (enc_out:
 * the output every decoder block's cross-attention projects, so it lives
 * until the first decoder block's backward), the decoder's input (dec_in,
 * with x->s the target length from here on), one decoder block (its
 * cross-attention reads st->enc, of st->s tokens), the head (seq2seq_head
 * calls it; it sets x->s2s_held, what the model's forward still holds
 * until it returns) and the gradients of a weight used more than once
 * (tie).  Each block is one checkpoint under --recompute full
 * (transformers' GradientCheckpointingLayer wraps it).
 */
struct s2s_state {
	int32_t enc;		/* the encoder output */
	uint64_t s;		/* its tokens (the source length) */
	int32_t mask;		/* the decoder's additive causal mask (-1:
				 * none) */
	int32_t bias[3];	/* T5's position biases: encoder, decoder,
				 * cross-attention; -1 until made */
	size_t eop, dop;	/* the encoder's and the decoder's token
				 * lookups (SIZE_MAX: none) */
	uint64_t in_bytes;	/* the encoder's inputs */
};

struct s2s_fns {
	int32_t (*enc_in)(struct lctx *x, struct s2s_state *st);
	int32_t (*enc_block)(struct lctx *x, int32_t in, struct s2s_state *st);
	int32_t (*enc_out)(struct lctx *x, int32_t hs);
	int32_t (*dec_in)(struct lctx *x, struct s2s_state *st);
	int32_t (*dec_block)(struct lctx *x, int32_t in, struct s2s_state *st);
	head_fn head;
	void (*tie)(struct lctx *x, const struct s2s_state *st);
};

/* T5: the shared embedding's lookup, dropout. */
static int32_t
t5_enc_in(struct lctx *x, struct s2s_state *st)
{
	int32_t ids = tnew(x, x->b * x->s, VP_INT64, VP_CAT_INPUT,
	    "input ids", false), hs;

	st->in_bytes = x->b * x->s * B(VP_INT64);
	hs = t5_lookup(x, "embedding", ids, x->b * x->s, &st->eop);
	return dropout(x, "embedding dropout", hs);
}

static int32_t
t5_enc_block(struct lctx *x, int32_t in, struct s2s_state *st)
{
	int32_t hs = t5_attention(x, in, x->s, -1, x->s, &st->bias[0], -1);

	return t5_ff(x, hs);
}

/* T5's encoder: its final norm and dropout. */
static int32_t
t5_enc_out(struct lctx *x, int32_t hs)
{
	hs = t5_norm(x, "encoder final norm", hs);
	return dropout(x, "encoder dropout", hs);
}

/*
 * T5's decoder input: `_shift_right` of the labels (a new int64 tensor
 * the lookup saves), the lookup, the causal mask (masking_utils.eager_mask:
 * a (b, 1, t, t) additive float mask in the embeddings' dtype; the
 * encoder's and the cross-attention's are None without padding), dropout.
 */
static int32_t
t5_dec_in(struct lctx *x, struct s2s_state *st)
{
	uint64_t b = x->b, t = x->s;
	int32_t dids, hs;

	dids = ew(x, "decoder input ids", b * t, VP_INT64, -1, -1, -1, -1,
	    VP_CAT_ACT);
	hs = t5_lookup(x, "decoder embedding", dids, b * t, &st->dop);
	st->mask = ew(x, "causal mask", b * t * t, x->w, -1, -1, -1, -1,
	    VP_CAT_ACT);
	return dropout(x, "embedding dropout", hs);
}

static int32_t
t5_dec_block(struct lctx *x, int32_t in, struct s2s_state *st)
{
	int32_t hs;

	hs = t5_attention(x, in, x->s, -1, x->s, &st->bias[1], st->mask);
	hs = t5_attention(x, hs, x->s, st->enc, st->s, &st->bias[2], -1);
	return t5_ff(x, hs);
}

static void
t5_tie_st(struct lctx *x, const struct s2s_state *st)
{
	t5_tie(x, st->eop, st->dop);
}

/*
 * BART and Whisper (models/bart/modeling_bart.py,
 * models/whisper/modeling_whisper.py of transformers 5.24).  The
 * cross-attention's linears have the self-attention's module names under
 * encoder_attn.
 */
static const struct lin LIN_S2S_CROSS_Q = { "encoder_attn.q_proj", 0,
    LIN_LOCAL };
static const struct lin LIN_S2S_CROSS_K = { "encoder_attn.k_proj", 0,
    LIN_LOCAL };
static const struct lin LIN_S2S_CROSS_V = { "encoder_attn.v_proj", 0,
    LIN_LOCAL };
static const struct lin LIN_S2S_CROSS_O = { "encoder_attn.out_proj", 0,
    LIN_LOCAL };

/*
 * A learned position table's lookup: nids int64 position ids the lookup
 * saves (BartLearnedPositionalEmbedding's `position_ids + offset`,
 * Whisper's decoder `self.weight[position_ids]`), rows x h out in the
 * weights' dtype, a dense gradient of entries x h.
 */
static int32_t
s2s_positions(struct lctx *x, const char *name, uint64_t nids,
    uint64_t rows, uint64_t entries)
{
	int32_t ids, e;
	struct vp_op *o;

	ids = ew(x, "position ids", nids, VP_INT64, -1, -1, -1, -1,
	    VP_CAT_ACT);
	o = opnew(x, name);
	IN(o, ids);
	SAVE(o, ids);
	e = tnew(x, rows * x->h, x->w, VP_CAT_ACT, name, true);
	OUT(o, e);
	o->wgrad_bytes = vp_mul_sat(entries * x->h, B(x->gd));
	return e;
}

/*
 * BartAttention / WhisperAttention on the normed input h (self-attention,
 * kv < 0) or over the encoder output kv of skv tokens: q_proj, k_proj,
 * v_proj (biased; Whisper's k_proj is not), the interface
 * (eager_attention_forward: q k^T times the scaling, the additive mask,
 * softmax in the scores' dtype, dropout, p v, the transpose back copied;
 * sdpa: PyTorch's kernel, causal without a mask), out_proj.  Whisper
 * scales q after its projection (`q_proj(h) * scaling`, a new tensor;
 * the interface's scaling is then 1.0, still a multiply in eager) and
 * makes q, k and v contiguous in (b, heads, s, d) (copies: the kernel's
 * output then has that layout, and its transpose back is a copy too).
 */
static int32_t
s2s_attention(struct lctx *x, int32_t h, int32_t kv, uint64_t skv,
    int32_t mask)
{
	bool cross = kv >= 0, wh = vp_model_family(x->m) == VP_FAMILY_WHISPER;
	bool skip = x->fam.mask_skip;
	uint64_t n = elems_of(x, h) / x->h, qd = x->a * x->d, s_kv = x->s_kv;
	uint64_t nkv = (cross ? elems_of(x, kv) / x->h : n) * qd;
	int32_t src = cross ? kv : h, q, k, v, ctx;

	q = linear(x, cross ? LIN_S2S_CROSS_Q : block_lin(x, VP_ROLE_Q), h,
	    x->h, qd, true, true, VP_CAT_ACT);
	if (wh) {
		q = ew(x, "q scale", n * qd, dt_of(x, q), q, -1, -1, -1,
		    VP_CAT_ACT);
		q = ew(x, "q contiguous", n * qd, dt_of(x, q), q, -1, -1, -1,
		    VP_CAT_ACT);
	}
	k = linear(x, cross ? LIN_S2S_CROSS_K : block_lin(x, VP_ROLE_K), src,
	    x->h, qd, !wh, true, VP_CAT_ACT);
	if (wh)
		k = ew(x, "k contiguous", nkv, dt_of(x, k), k, -1, -1, -1,
		    VP_CAT_ACT);
	v = linear(x, cross ? LIN_S2S_CROSS_V : block_lin(x, VP_ROLE_V), src,
	    x->h, qd, true, true, VP_CAT_ACT);
	if (wh)
		v = ew(x, "v contiguous", nkv, dt_of(x, v), v, -1, -1, -1,
		    VP_CAT_ACT);
	x->s_kv = skv;
	x->mask_full = mask;
	x->fam.mask_skip = mask < 0;
	ctx = attention_core(x, q, k, v, false, true);
	/* A fused kernel's k and v longer than q are the cross-attention's,
	 * not context parallelism's chunks (rules.c refuses CP). */
	if (x->p->attention != VP_ATTN_EAGER)
		x->g->op[x->g->nop - 1].fwd_tmp =
		    x->g->op[x->g->nop - 1].bwd_tmp = 0;
	x->fam.mask_skip = skip;
	x->s_kv = s_kv;
	if (!attn_out_view(x))
		ctx = ew(x, "attn transpose", n * qd, dt_of(x, ctx), ctx, -1,
		    -1, -1, VP_CAT_ACT);
	return linear(x, cross ? LIN_S2S_CROSS_O : block_lin(x, VP_ROLE_O),
	    ctx, qd, x->h, true, true, VP_CAT_ACT);
}

/* A residual branch's end: dropout, the residual add. */
static int32_t
s2s_residual(struct lctx *x, int32_t res, int32_t y)
{
	y = dropout(x, "resid dropout", y);
	return ew(x, "residual add", elems_of(x, res), promote(dt_of(x, res),
	    dt_of(x, y)), res, y, -1, -1, VP_CAT_ACT);
}

/* fc1, GELU, dropout (activation_dropout), fc2. */
static int32_t
s2s_mlp(struct lctx *x, int32_t h)
{
	int32_t a;

	a = linear(x, block_lin(x, VP_ROLE_FC), h, x->h, x->f, true, true,
	    VP_CAT_ACT);
	a = activation(x, VP_ACT_GELU, a);
	a = dropout(x, "activation dropout", a);
	return linear(x, block_lin(x, VP_ROLE_DOWN), a, x->f, x->h, true,
	    true, VP_CAT_ACT);
}

/*
 * BART's stack input (BartEncoder.forward, BartDecoder.forward): the
 * shared embedding's lookup times embed_scale (BartScaledWordEmbedding:
 * a multiply even by 1.0, a new tensor), the learned positions
 * (`position_ids + 2`, an int64 tensor the lookup saves: (b, s) in the
 * encoder, (1, t) in the decoder), their sum, layernorm_embedding,
 * dropout.  The decoder builds its causal mask (eager only; sdpa runs
 * causal without one) from the scaled lookup before the positions.
 */
static int32_t
bart_stack_in(struct lctx *x, struct s2s_state *st, bool dec)
{
	uint64_t n = x->b * x->s, pid = dec ? x->s : n;
	int32_t ids, hs, pe;

	if (dec)
		ids = ew(x, "decoder input ids", n, VP_INT64, -1, -1, -1, -1,
		    VP_CAT_ACT);
	else
		ids = tnew(x, n, VP_INT64, VP_CAT_INPUT, "input ids", false);
	hs = t5_lookup(x, dec ? "decoder embedding" : "embedding", ids, n,
	    dec ? &st->dop : &st->eop);
	hs = ew(x, "embed scale", n * x->h, x->w, hs, -1, -1, -1, VP_CAT_ACT);
	if (dec && x->p->attention == VP_ATTN_EAGER)
		st->mask = ew(x, "causal mask", n * x->s, x->w, -1, -1, -1,
		    -1, VP_CAT_ACT);
	pe = s2s_positions(x, "position embedding", pid, pid,
	    x->m->max_seq + 2);
	hs = ew(x, "embedding add", n * x->h, x->w, hs, pe, -1, -1,
	    VP_CAT_ACT);
	hs = norm(x, "embedding norm", hs);
	return dropout(x, "embedding dropout", hs);
}

static int32_t
bart_enc_in(struct lctx *x, struct s2s_state *st)
{
	st->in_bytes = x->b * x->s * B(VP_INT64);
	return bart_stack_in(x, st, false);
}

static int32_t
bart_dec_in(struct lctx *x, struct s2s_state *st)
{
	return bart_stack_in(x, st, true);
}

/* BartEncoderLayer: post-norm attention, then post-norm MLP. */
static int32_t
bart_enc_block(struct lctx *x, int32_t in, struct s2s_state *st)
{
	int32_t hs;

	(void)st;
	hs = s2s_residual(x, in, s2s_attention(x, in, -1, x->s, -1));
	hs = norm(x, "self_attn_layer_norm", hs);
	hs = s2s_residual(x, hs, s2s_mlp(x, hs));
	return norm(x, "final_layer_norm", hs);
}

/* BART has no final norm: the last block's output is the encoder's. */
static int32_t
bart_enc_out(struct lctx *x, int32_t hs)
{
	(void)x;
	return hs;
}

/* BartDecoderLayer: self-attention, cross-attention, MLP, each followed
 * by its dropout, residual add and LayerNorm. */
static int32_t
bart_dec_block(struct lctx *x, int32_t in, struct s2s_state *st)
{
	int32_t hs;

	hs = s2s_residual(x, in, s2s_attention(x, in, -1, x->s, st->mask));
	hs = norm(x, "self_attn_layer_norm", hs);
	hs = s2s_residual(x, hs, s2s_attention(x, hs, st->enc, st->s, -1));
	hs = norm(x, "encoder_attn_layer_norm", hs);
	hs = s2s_residual(x, hs, s2s_mlp(x, hs));
	return norm(x, "final_layer_norm", hs);
}

/*
 * BartForConditionalGeneration.forward: lm_head (the shared embedding,
 * no bias) on the decoder output, plus final_logits_bias, a (1, vocab)
 * buffer in the weights' dtype (so fp32 logits under autocast, which the
 * cross-entropy reads without a copy; the lm_head's own go once the sum
 * exists), CrossEntropyLoss over the b * t rows (the labels are not
 * shifted).  The forward holds the encoder and decoder outputs
 * (`outputs`) until it returns.
 */
static int32_t
bart_head(struct lctx *x, int32_t hsd, uint64_t *rows, int32_t held[2])
{
	int32_t lg;

	x->s2s_held[0] = x->s2s_held[1] = hsd;
	lg = linear(x, LIN_LM_HEAD, hsd, x->h, x->V, false, true,
	    VP_CAT_LOGITS);
	lg = ew(x, "final_logits_bias add", elems_of(x, lg),
	    promote(dt_of(x, lg), x->w), lg, -1, -1, -1, VP_CAT_LOGITS);
	/* The CPU's TensorIterator promotes a 16-bit input into an fp32
	 * temporary before it adds (CUDA casts inside the kernel):
	 * measured, a logits-sized fp32 tensor live during the add. */
	if (x->cpu && dt_of(x, lg) != x->c && x->autocast)
		x->g->op[x->g->nop - 1].fwd_tmp = x->g->t[lg].bytes;
	held[0] = held[1] = -1;
	*rows = x->b * x->s;
	return lg;
}

/*
 * Whisper's conv1 / conv2 (nn.Conv1d, kernel 3, padding 1) of cin
 * channels into h over lout positions: like a linear, it saves its input
 * and its weight (autocast's cached copy: conv1d is on both devices'
 * lower-precision lists) and makes an h x cin x 3 weight and an h bias
 * gradient.
 */
static int32_t
whisper_conv(struct lctx *x, const char *name, int32_t in, uint64_t cin,
    uint64_t lout)
{
	uint64_t wel = vp_add_sat(vp_mul_sat(x->h * 3, cin), x->h);
	bool ac = x->autocast && x->w != x->c;
	int32_t xin = x->autocast ? cast(x, in, x->c, VP_CAT_ACT) : in, wc = -1;
	int32_t y;
	struct vp_op *o;

	if (ac)
		wc = tnew(x, wel, x->c, VP_CAT_CAST, "autocast weight", false);
	o = opnew(x, name);
	IN(o, xin);
	if (wc >= 0) {
		OUT(o, wc);
		SAVE(o, wc);
	}
	y = tnew(x, x->b * x->h * lout, dt_of(x, xin), VP_CAT_ACT, name, true);
	OUT(o, y);
	SAVE(o, xin);
	o->wgrad_bytes = vp_mul_sat(wel, B(x->gd));
	o->wgrad_bias_bytes = vp_mul_sat(x->h, B(x->gd));
	if (ac)
		o->wgrad_tmp = vp_mul_sat(wel, B(x->c));
	return y;
}

/*
 * WhisperEncoder.forward: the input features (b, mel bins, 2 x positions;
 * in the weights' dtype), gelu(conv1), gelu(conv2) (stride 2: the
 * positions), permuted (a view), plus the frozen position table's lookup
 * of all its rows (no gradient, nothing saved: (s, h) in the weights'
 * dtype), dropout.  The class refuses any other length, so --seq is the
 * positions (max_source_positions; rules.c).
 */
static int32_t
whisper_enc_in(struct lctx *x, struct s2s_state *st)
{
	uint64_t mel = x->m->mel_bins, n = x->b * x->s;
	int32_t f, hs, pe;

	f = tnew(x, x->b * mel * 2 * x->s, x->w, VP_CAT_INPUT,
	    "input features", false);
	st->in_bytes = x->g->t[f].bytes;
	hs = whisper_conv(x, "conv1", f, mel, 2 * x->s);
	hs = activation(x, VP_ACT_GELU, hs);
	hs = whisper_conv(x, "conv2", hs, x->h, x->s);
	hs = activation(x, VP_ACT_GELU, hs);
	pe = ew(x, "embed_positions (frozen)", x->s * x->h, x->w, -1, -1, -1,
	    -1, VP_CAT_ACT);
	hs = ew(x, "position add", n * x->h, promote(dt_of(x, hs), x->w), hs,
	    pe, -1, -1, VP_CAT_ACT);
	return dropout(x, "embedding dropout", hs);
}

/* WhisperEncoderLayer: pre-norm attention, then pre-norm MLP. */
static int32_t
whisper_enc_block(struct lctx *x, int32_t in, struct s2s_state *st)
{
	int32_t hs;

	(void)st;
	hs = norm(x, "self_attn_layer_norm", in);
	hs = s2s_residual(x, in, s2s_attention(x, hs, -1, x->s, -1));
	return s2s_residual(x, hs, s2s_mlp(x, norm(x, "final_layer_norm",
	    hs)));
}

/* Each Whisper stack ends in its layer_norm. */
static int32_t
whisper_enc_out(struct lctx *x, int32_t hs)
{
	return norm(x, "encoder layer_norm", hs);
}

/*
 * WhisperDecoder.forward: the labels shifted right (shift_tokens_right, a
 * new int64 tensor), the token lookup, the positions (position_ids
 * repeated over the batch, (b, t) int64, indexing the table: a (b, t, h)
 * tensor), their sum, dropout, then the causal mask (eager only).
 */
static int32_t
whisper_dec_in(struct lctx *x, struct s2s_state *st)
{
	uint64_t n = x->b * x->s;
	int32_t ids, hs, pe;

	ids = ew(x, "decoder input ids", n, VP_INT64, -1, -1, -1, -1,
	    VP_CAT_ACT);
	hs = t5_lookup(x, "decoder embedding", ids, n, &st->dop);
	pe = s2s_positions(x, "decoder embed_positions", n, n,
	    x->m->dec_max_seq);
	hs = ew(x, "embedding add", n * x->h, x->w, hs, pe, -1, -1,
	    VP_CAT_ACT);
	hs = dropout(x, "embedding dropout", hs);
	if (x->p->attention == VP_ATTN_EAGER)
		st->mask = ew(x, "causal mask", n * x->s, x->w, -1, -1, -1,
		    -1, VP_CAT_ACT);
	return hs;
}

/* WhisperDecoderLayer: pre-norm self-attention, cross-attention, MLP. */
static int32_t
whisper_dec_block(struct lctx *x, int32_t in, struct s2s_state *st)
{
	int32_t hs;

	hs = norm(x, "self_attn_layer_norm", in);
	hs = s2s_residual(x, in, s2s_attention(x, hs, -1, x->s, st->mask));
	in = hs;
	hs = norm(x, "encoder_attn_layer_norm", hs);
	hs = s2s_residual(x, in, s2s_attention(x, hs, st->enc, st->s, -1));
	return s2s_residual(x, hs, s2s_mlp(x, norm(x, "final_layer_norm",
	    hs)));
}

/*
 * WhisperForConditionalGeneration.forward: the decoder's layer_norm,
 * proj_out (the token embedding, no bias), CrossEntropyLoss over the
 * b * t rows, which casts 16-bit logits to fp32 (cross_entropy is on
 * autocast's fp32 list) while the model holds them.
 */
static int32_t
whisper_head(struct lctx *x, int32_t hsd, uint64_t *rows, int32_t held[2])
{
	int32_t lg;

	hsd = norm(x, "decoder layer_norm", hsd);
	x->s2s_held[0] = x->s2s_held[1] = hsd;
	lg = linear(x, LIN_LM_HEAD, hsd, x->h, x->V, false, true,
	    VP_CAT_LOGITS);
	held[0] = lg;
	held[1] = -1;
	*rows = x->b * x->s;
	return x->autocast ? cast(x, lg, VP_FP32, VP_CAT_LOGITS) : lg;
}

/* proj_out and the decoder's lookup share the token embedding: the
 * head's gradient waits for the lookup's, which adds to it
 * (tie_embeddings, for the one lookup). */
static void
whisper_tie(struct lctx *x, const struct s2s_state *st)
{
	struct vp_op *d = &x->g->op[st->dop], *h = &x->g->op[x->wgrad_op];

	h->wgrad_waits = true;
	d->wgrad_tmp = d->wgrad_bytes;
	d->wgrad_bytes = 0;
	d->wgrad_adds_to = (uint32_t)x->wgrad_op + 1;
	if (x->wgrad_view || x->torch113)
		d->wgrad_sum = d->wgrad_tmp;
}

static const struct s2s_fns s2s_t5 = {
	t5_enc_in, t5_enc_block, t5_enc_out, t5_dec_in, t5_dec_block,
	t5_head, t5_tie_st,
};
static const struct s2s_fns s2s_bart = {
	bart_enc_in, bart_enc_block, bart_enc_out, bart_dec_in,
	bart_dec_block, bart_head, t5_tie_st,
};
static const struct s2s_fns s2s_whisper = {
	whisper_enc_in, whisper_enc_block, whisper_enc_out, whisper_dec_in,
	whisper_dec_block, whisper_head, whisper_tie,
};
static const struct s2s_fns *const s2s_builders[VP_FAMILY_COUNT] = {
	[VP_FAMILY_T5] = &s2s_t5,
	[VP_FAMILY_BART] = &s2s_bart,
	[VP_FAMILY_WHISPER] = &s2s_whisper,
};

static int32_t
seq2seq_head(struct lctx *x, int32_t hsd, uint64_t *rows, int32_t held[2])
{
	return s2s_builders[vp_model_family(x->m)]->head(x, hsd, rows, held);
}

/*
 * The step of an encoder-decoder: the family's encoder input and blocks,
 * its output, the decoder's input and blocks, the head and the loss.
 */
static void
lower_encdec(struct lctx *x)
{
	struct vp_graph *g = x->g;
	const struct vp_model *m = x->m;
	const struct s2s_fns *f = s2s_builders[vp_model_family(m)];
	uint64_t b = x->b, s = x->s, t = vp_plan_target_seq(x->p);
	uint32_t ne = (uint32_t)m->layers, nd = (uint32_t)m->dec_layers, l;
	struct s2s_state st = { .enc = -1, .s = s, .mask = -1,
	    .bias = { -1, -1, -1 }, .eop = SIZE_MAX, .dop = SIZE_MAX };
	int32_t hs;
	size_t i;
	struct vp_op *o;

	assert(f != NULL);
	hs = f->enc_in(x, &st);
	for (l = 1; l <= ne; l++) {
		x->global_layer = l - 1;
		begin_layer(x, l, hs);
		hs = f->enc_block(x, hs, &st);
		t5_checkpoint(x, l);
	}
	x->layer = 0;
	st.enc = f->enc_out(x, hs);

	x->s = t;
	hs = f->dec_in(x, &st);
	for (l = ne + 1; l <= ne + nd; l++) {
		x->global_layer = l - 1;
		begin_layer(x, l, hs);
		hs = f->dec_block(x, hs, &st);
		t5_checkpoint(x, l);
	}
	x->layer = 0;
	i = g->nop;
	head_and_loss(x, hs);
	/* The loss phase is the cross-entropy (the model's
	 * CrossEntropyLoss, which the CPU measurement marks); the head
	 * before it runs in the forward. */
	while (i < g->nop && strcmp(g->op[i].name, "log_softmax") != 0)
		i++;
	g->layer_first_op[ne + nd + 1] = i;
	/*
	 * The loss is computed inside the model's forward, whose locals
	 * hold the encoder output (encoder_outputs), the decoder's
	 * (decoder_outputs) and, in T5, sequence_output rebound to its
	 * scaled copy until it returns: measured on the CPU (2.13, 5.24),
	 * the (b, s, h) and (b, t, h) tensors live in the loss under
	 * autocast, whose projections saved 16-bit copies instead.
	 */
	o = opnew(x, "forward returns");
	o->keep[0] = st.enc;
	o->keep[1] = x->s2s_held[0];
	o->keep[2] = x->s2s_held[1] != x->s2s_held[0] ? x->s2s_held[1] : -1;
	/* The encoder's inputs and the labels, which the caller holds. */
	g->input_bytes = st.in_bytes + b * t * B(VP_INT64);
	f->tie(x, &st);
	for (i = 0; i < g->nop; i++)
		g->op[i].sac = 0;
	g->autocast_end_op = x->autocast ? g->nop - 1 : SIZE_MAX;
	x->s = s;
}

/*
 * Parameters of this rank: its stage's blocks split by TP (experts by
 * EP), the embedding on the first stage and the head on the last (a tied
 * head is a second copy on the last stage when pp > 1).
 */
static void
rank_params(struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, uint64_t real_blocks, uint64_t offset,
    bool first, bool last)
{
	struct vp_param_count pc;
	uint64_t tp = p->tp, ep = p->ep;
	uint64_t expert_params = 0, dense_here = 0;
	unsigned pp = p->pp;

	vp_model_params(m, &pc);
	if (m->has_moe)
		expert_params = vp_mul_sat(m->moe.experts,
		    vp_mlp_params(m, m->moe.ffn));
	g->block_params = (uint64_t)((double)(pc.per_layer - expert_params) /
	    (double)tp + (double)expert_params / (double)ep);
	if (m->has_moe)
		dense_here = vp_moe_dense_blocks(m, offset, real_blocks);
	g->params = (uint64_t)((double)(real_blocks - dense_here) *
	    ((double)(pc.per_layer - expert_params) / (double)tp +
	    (double)expert_params / (double)ep) +
	    (double)dense_here * (double)pc.dense_layer / (double)tp);
	/* A Mamba-2 hybrid (one rank, rules.c): its attention blocks'
	 * parameters differ from the Mamba-2 ones (per_layer). */
	if (m->ssm.n_attn > 0) {
		uint64_t l, na = 0, na_all = 0, attn_layer;

		for (l = 0; l < m->layers; l++)
			if (!vp_layer_ssm(m, l)) {
				na_all++;
				if (l >= offset && l < offset + real_blocks)
					na++;
			}
		attn_layer = na_all ? (pc.layers - (m->layers - na_all) *
		    pc.per_layer) / na_all : 0;
		g->params = na * attn_layer + (real_blocks - na) *
		    pc.per_layer;
		g->stage_block_params = g->params;
	}
	/* Jamba (one rank, rules.c): each block its mixer and its
	 * feed-forward. */
	if (vp_model_traits(m).block == VP_BLOCK_JAMBA) {
		uint64_t l;

		g->params = 0;
		for (l = offset; l < offset + real_blocks; l++)
			g->params = vp_add_sat(g->params,
			    vp_jamba_block_params(m, l, false));
	}
	/* Nemotron-H (one rank, rules.c): each block its own kind. */
	if (vp_model_traits(m).block == VP_BLOCK_NEMOTRON_H) {
		uint64_t l;

		g->params = 0;
		for (l = offset; l < offset + real_blocks; l++)
			g->params = vp_add_sat(g->params,
			    vp_nemotron_h_block_params(m, l));
	}
	/* Zamba2 (one rank, rules.c): the shared blocks at their first
	 * calls. */
	if (vp_model_traits(m).block == VP_BLOCK_ZAMBA2) {
		uint64_t l;

		g->params = 0;
		for (l = offset; l < offset + real_blocks; l++)
			g->params = vp_add_sat(g->params,
			    vp_zamba2_block_params(m, l));
	}
	g->stage_block_params = g->params;
	g->expert_params = m->has_moe ? (uint64_t)((double)(real_blocks -
	    dense_here) * (double)expert_params / (double)ep) : 0;
	if (first)
		g->params += pc.embedding / tp;
	if (last) {
		g->params += pc.head / tp;
		if (m->tie_embeddings && pp > 1)
			g->params += m->vocab * m->hidden / tp;
	}
}

/*
 * The persistent terms of the real stage (with the block count overridden
 * by the fast path they still describe it): weights, trainable part,
 * adapters, gradients, master weights, fp8 copies, optimizer states and
 * the largest parameter.
 */
static void
persistent_terms(struct vp_graph *g, const struct lctx *x,
    uint64_t real_blocks, bool first, bool last)
{
	const struct vp_model *m = x->m;
	const struct vp_plan *p = x->p;
	const struct vp_prec_info *pi = &vp_prec_info[p->precision];
	uint64_t big;

	g->trainable = g->params;
	g->weight_bytes = vp_mul_sat(g->params, B(x->w));
	/* GPT-J's embed_positions: a (max_seq, rotary_dim) sin|cos buffer
	 * of the first stage, in the weights' dtype (model.to() casts it). */
	if (first && x->fam.sincos_table)
		g->weight_bytes = vp_add_sat(g->weight_bytes, vp_mul_sat(
		    vp_mul_sat(m->max_seq, m->rotary_dim), B(x->w)));
	if (p->lora_rank > 0) {
		g->trainable = vp_lora_params(m, p, real_blocks);
		if (last)
			g->trainable = vp_add_sat(g->trainable,
			    vp_lora_head_params(m, p));
		g->adapter_bytes = vp_mul_sat(g->trainable, B(p->lora_dtype));
		g->weight_bytes = vp_add_sat(vp_frozen_base_bytes(m, p,
		    real_blocks, g->params, x->w), g->adapter_bytes);
		g->grad_bytes = g->adapter_bytes;
	} else {
		g->grad_bytes = vp_mul_sat(g->params, B(x->gd));
	}
	if (pi->master) {
		g->master_bytes = vp_mul_sat(g->trainable, 4);
		/* Megatron accumulates into an fp32 main_grad buffer;
		 * DeepSpeed keeps 16-bit gradients. */
		if (p->framework == VP_FW_MEGATRON)
			g->grad_bytes = vp_mul_sat(g->trainable, 4);
	}
	/* Transformer Engine keeps an fp8 copy of each linear weight and
	 * its transpose for backward (1 byte each), plus amax histories
	 * (1024 fp32 per tensor, a few per linear: small). */
	if (x->fp8)
		g->fp8_bytes = vp_mul_sat(2, vp_block_linear_params(m, p,
		    real_blocks));
	g->optim_state_bytes = vp_optimizer_state_bytes(m, p, real_blocks,
	    first, last, g->trainable);
	if (p->lora_rank > 0) {
		/* The largest trainable tensor is an adapter: r x max dim
		 * (the vocabulary's, for the head's). */
		uint64_t dim = x->f > x->h ? x->f : x->h;

		if (last && vp_lora_head_params(m, p) && x->V > dim)
			dim = x->V;
		g->largest_param_bytes = vp_mul_sat((uint64_t)p->lora_rank *
		    dim, B(p->lora_dtype));
		return;
	}
	big = vp_mul_sat(x->h, x->f > x->h ? x->f : x->h);
	if ((first || last) && vp_mul_sat(x->V, x->h) > big)
		big = vp_mul_sat(x->V, x->h);
	/*
	 * transformers 5's experts are 3D parameters, one per projection of
	 * all a rank's experts (gate_up_proj: e x h x 2 ffn when gated), as
	 * Llama 4's are in every release: the largest parameter when it
	 * outgrows the embeddings (measured: gpt-oss's and Llama 4's CPU
	 * for-loop AdamW, two temporaries of gate_up_proj).
	 */
	if (m->has_moe && (grouped_mm_experts(x) ||
	    (vp_model_runs_hf(m) && vp_model_family(m) == VP_FAMILY_LLAMA4))) {
		uint64_t ex = vp_mul_sat(vp_mul_sat(m->moe.experts / p->ep,
		    x->h), vp_mul_sat(vp_act_gated(m->act) ? 2 : 1,
		    m->moe.ffn));

		if (ex > big)
			big = ex;
	}
	/* Mamba-2: in_proj, h x (2 inner + 2 groups state + heads). */
	if (x->fam.block == VP_BLOCK_MAMBA2 || x->fam.block ==
	    VP_BLOCK_HYBRID || (x->fam.block == VP_BLOCK_ZAMBA2 &&
	    vp_model_family(m) != VP_FAMILY_ZAMBA) ||
	    (x->fam.block == VP_BLOCK_NEMOTRON_H &&
	    strchr(m->ssm.pattern, 'M') != NULL)) {
		uint64_t ip = vp_mul_sat(x->h, 2 * m->ssm.heads *
		    m->ssm.head_dim + 2 * m->ssm.groups * m->ssm.state +
		    m->ssm.heads);

		if (ip > big)
			big = ip;
	}
	/* Zamba2's shared q_proj (2 h x 2 h) and gate_up_proj (h x 2 ffn);
	 * Zamba's gate_proj and up_proj apart (h x ffn). */
	if (x->fam.block == VP_BLOCK_ZAMBA2) {
		uint64_t zq = vp_mul_sat(4 * x->h, x->h), zg = vp_mul_sat(
		    (vp_model_family(m) == VP_FAMILY_ZAMBA ? 1 : 2) * x->f,
		    x->h);

		big = zq > big ? zq : big;
		big = zg > big ? zg : big;
	}
	/* Jamba, Mamba and Zamba: the Mamba-1 in_proj, h x 2 inner. */
	if ((x->fam.block == VP_BLOCK_JAMBA || x->fam.block ==
	    VP_BLOCK_MAMBA1 || vp_model_family(m) == VP_FAMILY_ZAMBA) &&
	    vp_mul_sat(x->h, 2 * m->ssm.expand * x->h) > big)
		big = vp_mul_sat(x->h, 2 * m->ssm.expand * x->h);
	g->largest_param_bytes = vp_mul_sat(big, B(x->w));
}

/* ---- Layer graphs (lgraph.h) ---------------------------------------- */

/*
 * A layer-graph model lowers to the same ops as a transformer, one op per
 * torch.nn layer as PyTorch 2.13 runs it in training (derivatives.yaml
 * says what each backward needs, so what autograd saves).  The whole
 * network is block 1 (so "forward" is the model's forward), the loss
 * follows outside the blocks (the "loss" phase).  Shapes follow
 * vp_layer_shape; x->b samples.  Measured on the CPU against transformers'
 * ResNetForImageClassification (tests/validate_lgraph.py).
 */
struct lgw {
	struct vp_lshape sh;	/* per-sample shape of the current tensor */
	uint64_t largest;	/* elements of the largest parameter tensor */
};

static uint64_t
lshape_elems(const struct lctx *x, struct vp_lshape s)
{
	return vp_mul_sat(x->b, s.flat ? s.c : vp_mul_sat(s.c,
	    vp_mul_sat(s.h, s.w)));
}

/*
 * nn.Conv2d: aten.convolution saves its input and weight
 * (ConvolutionBackward0), whether or not the input requires grad (the
 * images do not).  Under autocast the input and the weight are cast to
 * the compute dtype (conv2d is on both devices' lower-precision lists);
 * the weight's copy is cached, and dW comes out in 16 bit before its
 * cast back (as linear_w's).
 */
static int32_t
lg_conv2d(struct lctx *x, const struct vp_layer *l, int32_t in,
    struct vp_lshape out, struct lgw *w)
{
	uint64_t wel = l->out * (w->sh.c / l->groups) * l->kernel * l->kernel;
	uint64_t bel = l->bias ? l->out : 0;
	bool cast_w = x->autocast && x->w != x->c && !x->sharded_weights;
	int32_t xin = x->autocast ? cast(x, in, x->c, VP_CAT_ACT) : in, wc = -1;
	struct vp_op *o;
	int32_t y;

	if (cast_w)
		wc = tnew(x, wel + bel, x->c, VP_CAT_CAST, "autocast weight",
		    false);
	o = opnew(x, "conv2d");
	IN(o, xin);
	if (wc >= 0) {
		OUT(o, wc);
		SAVE(o, wc);
	}
	y = tnew(x, lshape_elems(x, out), x->autocast ? x->c : x->w,
	    VP_CAT_ACT, "conv2d", true);
	OUT(o, y);
	SAVE(o, xin);
	/*
	 * The CPU's backward (mkldnn_convolution_backward, oneDNN) holds a
	 * copy of the output gradient while it runs and, when the input
	 * takes a gradient, an input-sized one more; a strided window
	 * (3x3 stride 2) holds two input-sized ones instead of the output's
	 * (measured on PyTorch 2.13, fp32 and bf16 autocast alike, up to
	 * a scratchpad of a few KiB).  CUDA's are cuDNN's workspaces, chosen
	 * with the algorithm: not modelled.
	 */
	if (x->cpu) {
		uint64_t xb = x->g->t[xin].bytes, yb = x->g->t[y].bytes;

		o->bwd_tmp = rg_of(x, xin) ? xb + (l->stride > 1 &&
		    l->kernel > 1 ? xb : yb) : yb;
	}
	o->wgrad_bytes = vp_mul_sat(wel + bel, B(x->gd));
	o->wgrad_bias_bytes = vp_mul_sat(bel, B(x->gd));
	if (cast_w && !x->fsdp_params16)
		o->wgrad_tmp = vp_mul_sat(wel + bel, B(x->c));
	if (wel > w->largest)
		w->largest = wel;
	return y;
}

/*
 * nn.BatchNorm2d in training: native_batch_norm's output in the input's
 * dtype (a 16-bit input with fp32 parameters stays 16 bit), and its
 * save_mean and save_invstd (fp32, one per channel); the backward saves
 * the input, the weight, the running statistics and those two.  The
 * running statistics are buffers (vp_lgraph_buffers, in the weights).
 */
static int32_t
lg_batchnorm(struct lctx *x, const struct vp_layer *l, int32_t in,
    struct lgw *w)
{
	struct vp_op *o = opnew(x, "batchnorm2d");
	int32_t y, mean, invstd;

	IN(o, in);
	y = tnew(x, elems_of(x, in), dt_of(x, in), VP_CAT_ACT, "batchnorm2d",
	    true);
	mean = tnew(x, w->sh.c, VP_FP32, VP_CAT_ACT, "bn save_mean", false);
	invstd = tnew(x, w->sh.c, VP_FP32, VP_CAT_ACT, "bn save_invstd",
	    false);
	OUT(o, y);
	OUT(o, mean);
	OUT(o, invstd);
	SAVE(o, in);
	SAVE(o, mean);
	SAVE(o, invstd);
	/* The CPU's batch_norm_backward holds one input-sized temporary
	 * (measured on 2.13: fp32, bf16, bf16 input with fp32 weights). */
	if (x->cpu)
		o->bwd_tmp = x->g->t[in].bytes;
	if (l->affine) {
		o->wgrad_bytes = vp_mul_sat(2 * w->sh.c, B(x->gd));
		o->wgrad_bias_bytes = vp_mul_sat(w->sh.c, B(x->gd));
	}
	return y;
}

/* nn.GroupNorm: native_group_norm keeps its input, mean and rstd (one
 * per sample and group, in the input's dtype). */
static int32_t
lg_groupnorm(struct lctx *x, const struct vp_layer *l, int32_t in,
    struct lgw *w)
{
	struct vp_op *o = opnew(x, "groupnorm");
	uint64_t rows = vp_mul_sat(x->b, l->ngroups);
	int32_t y, mean, rstd;

	IN(o, in);
	y = tnew(x, elems_of(x, in), dt_of(x, in), VP_CAT_ACT, "groupnorm",
	    true);
	mean = tnew(x, rows, dt_of(x, in), VP_CAT_ACT, "gn mean", false);
	rstd = tnew(x, rows, dt_of(x, in), VP_CAT_ACT, "gn rstd", false);
	OUT(o, y);
	OUT(o, mean);
	OUT(o, rstd);
	SAVE(o, in);
	SAVE(o, mean);
	SAVE(o, rstd);
	if (l->affine) {
		o->wgrad_bytes = vp_mul_sat(2 * w->sh.c, B(x->gd));
		o->wgrad_bias_bytes = vp_mul_sat(w->sh.c, B(x->gd));
	}
	return y;
}

static int32_t lg_seq(struct lctx *x, const struct vp_lseq *s, int32_t t,
    struct lgw *w);

static int32_t
lg_layer(struct lctx *x, const struct vp_layer *l, int32_t t, struct lgw *w)
{
	static const struct lin lin_fc = { "linear", 0, LIN_LOCAL };
	struct vp_lshape out = w->sh;
	char msg[160];
	struct vp_op *o;
	uint32_t r;
	int32_t y, idx;

	if (l->type == VP_L_RESIDUAL) {
		for (r = 0; r < l->repeat; r++) {
			struct lgw wb = *w, ws = *w;
			int32_t b, sc;

			b = lg_seq(x, &l->body, t, &wb);
			sc = lg_seq(x, &l->shortcut, t, &ws);
			w->largest = wb.largest > ws.largest ? wb.largest :
			    ws.largest;
			w->sh = wb.sh;
			/* out += identity (in place in torchvision and
			 * transformers; the replay makes the sum a new
			 * tensor as the body's last output dies, which costs
			 * the sum's size at this op only).  AddBackward0
			 * saves nothing. */
			t = ew(x, "residual add", elems_of(x, b),
			    promote(dt_of(x, b), dt_of(x, sc)), b, sc, -1, -1,
			    VP_CAT_ACT);
			t = lg_seq(x, &l->after, t, w);
		}
		return t;
	}
	/* The graph was checked at this resolution (rules.c). */
	if (vp_layer_shape(l, w->sh, &out, msg, sizeof msg) != 0)
		assert(!"layer graph not checked at the plan's resolution");
	switch (l->type) {
	case VP_L_CONV2D:
		t = lg_conv2d(x, l, t, out, w);
		break;
	case VP_L_BATCHNORM2D:
		t = lg_batchnorm(x, l, t, w);
		break;
	case VP_L_GROUPNORM:
		t = lg_groupnorm(x, l, t, w);
		break;
	case VP_L_LAYERNORM:
		t = norm_w(x, "layernorm", t, w->sh.c);
		break;
	case VP_L_LINEAR:
		t = linear_w(x, lin_fc, t, w->sh.c, l->out, l->bias, true,
		    VP_CAT_ACT, x->w, x->gd);
		if (w->sh.c * l->out > w->largest)
			w->largest = w->sh.c * l->out;
		break;
	case VP_L_RELU:
	case VP_L_TANH:
	case VP_L_SIGMOID:
		/*
		 * These save their result.  ReLU(inplace=True) (torchvision)
		 * writes into its input, which dies with it; the replay makes
		 * the result a new tensor as the input dies, so only this
		 * op's own check sees both.
		 */
		t = ew(x, vp_ltype_names[l->type], elems_of(x, t), dt_of(x, t),
		    t, -1, -1, -1, VP_CAT_ACT);
		save_result(x, t);
		break;
	case VP_L_GELU:
	case VP_L_SILU:
		t = ew(x, vp_ltype_names[l->type], elems_of(x, t), dt_of(x, t),
		    t, -1, t, -1, VP_CAT_ACT);
		break;
	case VP_L_MAXPOOL2D:
		/* max_pool2d_with_indices: the output and int64 indices;
		 * the backward keeps the input and the indices. */
		o = opnew(x, "maxpool2d");
		IN(o, t);
		y = tnew(x, lshape_elems(x, out), dt_of(x, t), VP_CAT_ACT,
		    "maxpool2d", true);
		idx = tnew(x, lshape_elems(x, out), VP_INT64, VP_CAT_ACT,
		    "maxpool2d indices", false);
		OUT(o, y);
		OUT(o, idx);
		SAVE(o, t);
		SAVE(o, idx);
		t = y;
		break;
	case VP_L_AVGPOOL2D:
		/* avg_pool2d's backward keeps its input. */
		t = ew(x, "avgpool2d", lshape_elems(x, out), dt_of(x, t), t,
		    -1, t, -1, VP_CAT_ACT);
		break;
	case VP_L_ADAPTIVE_AVGPOOL2D:
		/* To 1x1 it is input.mean((-1, -2), keepdim=True)
		 * (AdaptiveAveragePooling.cpp), which keeps only sizes;
		 * other sizes run _adaptive_avg_pool2d, which keeps the
		 * input. */
		t = ew(x, "adaptive-avgpool2d", lshape_elems(x, out),
		    dt_of(x, t), t, -1, l->out == 1 ? -1 : t, -1, VP_CAT_ACT);
		break;
	case VP_L_FLATTEN:
		break;		/* a view */
	case VP_L_DROPOUT:
		t = dropout_p(x, "dropout", t, l->p);
		break;
	default:
		assert(!"lg_layer: no lowering");
	}
	w->sh = out;
	return t;
}

static int32_t
lg_seq(struct lctx *x, const struct vp_lseq *s, int32_t t, struct lgw *w)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		t = lg_layer(x, &s->v[i], t, w);
	return t;
}

/* The resolution a plan runs a layer graph at. */
uint64_t
vp_lgraph_image(const struct vp_model *m, const struct vp_plan *p)
{
	return p->image ? p->image : m->lg->image;
}

static int
lgraph_build(const struct vp_model *m, const struct vp_plan *p,
    struct vp_graph *g)
{
	const struct vp_lgraph *lg = m->lg;
	uint64_t img = vp_lgraph_image(m, p), bf, bi;
	struct lgw w = { { lg->channels, img, img, false }, 0 };
	struct lctx x;
	int32_t px, t, ls, loss;
	struct vp_op *o;

	memset(g, 0, sizeof *g);
	lctx_init(&x, m, p, g);
	g->layers = 1;
	g->layer_first_op = xcalloc(3, sizeof *g->layer_first_op);
	g->layer_input = xcalloc(2, sizeof *g->layer_input);
	/* The images, in the parameters' dtype; counted with the labels in
	 * input_bytes, so never allocated by the replay. */
	px = tnew(&x, lshape_elems(&x, w.sh), x.w, VP_CAT_INPUT, "images",
	    false);
	begin_layer(&x, 1, px);
	t = lg_seq(&x, &lg->layers, px, &w);
	x.layer = 0;
	g->layer_first_op[2] = g->nop;
	/*
	 * F.cross_entropy: on the CPU autocast runs it in fp32 (the logits
	 * cast), then log_softmax (saves its result) and nll_loss.
	 */
	if (x.autocast)
		t = cast(&x, t, VP_FP32, VP_CAT_LOGITS);
	ls = ew(&x, "log_softmax", elems_of(&x, t), dt_of(&x, t), t, -1, -1,
	    -1, VP_CAT_LOGITS);
	save_result(&x, ls);
	o = opnew(&x, "nll_loss");
	IN(o, ls);
	loss = tnew(&x, 1, VP_FP32, VP_CAT_LOGITS, "loss", true);
	OUT(o, loss);
	g->autocast_end_op = x.autocast ? g->nop - 1 : SIZE_MAX;
	/* Parameters, buffers (BatchNorm's running statistics in the
	 * parameters' dtype, num_batches_tracked int64), states. */
	g->params = g->block_params = vp_lgraph_params(lg);
	persistent_terms(g, &x, 1, true, true);
	vp_lgraph_buffers(lg, &bf, &bi);
	g->weight_bytes = vp_add_sat(g->weight_bytes, vp_add_sat(
	    vp_mul_sat(bf, B(x.w)), vp_mul_sat(bi, B(VP_INT64))));
	g->largest_param_bytes = vp_mul_sat(w.largest, B(x.w));
	g->input_bytes = vp_add_sat(g->t[px].bytes, vp_mul_sat(x.b,
	    B(VP_INT64)));
	return 0;
}

/*
 * ViTEmbeddings (transformers 5.24, models/vit/modeling_vit.py): the
 * pixel values (fp32 from the loader; ViTModel casts them to the weights'
 * dtype, a copy when those are 16 bit), the patch Conv2d of kernel and
 * stride patch_size (lg_conv2d: it saves its input and, under autocast,
 * the 16-bit copies), flatten(2).transpose(1, 2) (a view), torch.cat of
 * the expanded cls_token in front (a new tensor, promoted to fp32 when
 * the convolution ran in 16 bit under autocast; cat saves nothing), plus
 * position_embeddings (a new tensor; nothing saved), dropout.  The
 * cls_token's and the position table's gradients are made by the cat's
 * and the add's backward.
 */
static int32_t
vit_embeddings(struct lctx *x)
{
	const struct vp_model *m = x->m;
	uint64_t img = x->p->image ? x->p->image : m->vis.image;
	uint64_t side = img / m->vis.patch, n = x->b * x->s * x->h;
	struct vp_layer conv;
	struct lgw w = { { m->vis.channels, img, img, false }, 0 };
	struct vp_lshape out = { x->h, side, side, false };
	int32_t t, pos = -1;

	memset(&conv, 0, sizeof conv);
	conv.type = VP_L_CONV2D;
	conv.out = x->h;
	conv.kernel = conv.stride = (uint32_t)m->vis.patch;
	conv.dilation = conv.groups = 1;
	conv.bias = true;
	x->vis_px = tnew(x, lshape_elems(x, w.sh), VP_FP32, VP_CAT_INPUT,
	    "pixel values", false);
	t = cast(x, x->vis_px, x->w, VP_CAT_ACT);
	t = lg_conv2d(x, &conv, t, out, &w);
	x->embed_op = -1;
	t = ew(x, "cls token cat", n, promote(dt_of(x, t), x->w), t, -1, -1,
	    -1, VP_CAT_ACT);
	x->g->op[x->g->nop - 1].wgrad_bytes = vp_mul_sat(x->h, B(x->gd));
	/* Another resolution than the table's: interpolate_pos_encoding
	 * resizes the patch rows (bicubic) and cats the class row back, a
	 * (1, s, h) tensor the add broadcasts (nothing saved but sizes). */
	if (img != m->vis.image)
		pos = ew(x, "position interpolate", x->s * x->h, x->w, -1, -1,
		    -1, -1, VP_CAT_ACT);
	t = ew(x, "position embedding add", n, promote(dt_of(x, t), x->w), t,
	    pos, -1, -1, VP_CAT_ACT);
	/* The table's gradient: its own rows, whatever the resolution. */
	x->g->op[x->g->nop - 1].wgrad_bytes = vp_mul_sat(vp_vision_seq(m,
	    m->vis.image) * x->h, B(x->gd));
	return dropout(x, "embedding dropout", t);
}

/*
 * ViTForImageClassification's head: ViTModel's final layernorm over every
 * token, pooled_output = sequence_output[:, 0, :] (a view), the biased
 * classifier h -> the classes (`vocab`), the loss (ForSequenceClassification
 * Loss: cross_entropy of the (b, classes) logits; head_and_loss).  The
 * classifier keeps its input for dW: under autocast that is its 16-bit
 * copy of the b rows; otherwise the view itself, which holds the whole
 * normed output (b, s, h) until the classifier's backward.
 */
static const struct lin LIN_CLASSIFIER = { "classifier", 0, LIN_LOCAL };
static const struct lin LIN_VISUAL_PROJ = { "visual_projection", 0,
    LIN_LOCAL };
static const struct lin LIN_TEXT_PROJ = { "text_projection", 0, LIN_LOCAL };

static int32_t
cls_head(struct lctx *x, int32_t hsd, uint64_t *rows, int32_t held[2])
{
	struct vp_op *o;
	int32_t sq, pooled, lg;
	int i;

	held[0] = held[1] = -1;
	*rows = x->b;
	sq = norm(x, "final norm", hsd);
	if (x->autocast) {
		pooled = ew(x, "cls token to", x->b * x->h, x->c, sq, -1, -1,
		    -1, VP_CAT_ACT);
		return linear(x, LIN_CLASSIFIER, pooled, x->h, x->V, true,
		    true, VP_CAT_LOGITS);
	}
	pooled = ew(x, "cls token", x->b * x->h, dt_of(x, sq), sq, -1, -1,
	    -1, VP_CAT_ACT);
	lg = linear(x, LIN_CLASSIFIER, pooled, x->h, x->V, true, true,
	    VP_CAT_LOGITS);
	/* The view costs nothing; what the classifier saves is its base. */
	x->g->t[pooled].bytes = 0;
	o = &x->g->op[x->g->nop - 1];
	for (i = 0; i < VP_OP_MAXIO; i++)
		if (o->saved[i] == pooled)
			o->saved[i] = sq;
	return lg;
}

/*
 * One CLIP tower's sizes on the lowering context (its own model view for
 * the block builder: the vision tower's sizes replace the text tower's).
 */
static void
clip_tower(struct lctx *x, struct vp_model *tw, bool vision)
{
	const struct vp_model *m = x->m;

	*tw = *m;
	if (vision) {
		tw->hidden = m->vis.hidden;
		tw->layers = m->vis.layers;
		tw->heads = tw->kv_heads = m->vis.heads;
		tw->head_dim = m->vis.hidden / m->vis.heads;
		tw->ffn = m->vis.ffn;
		tw->act = m->vis.act;
	}
	x->h = tw->hidden;
	x->a = x->kv = tw->heads;
	x->d = x->dv = tw->head_dim;
	x->f = tw->ffn;
	x->s = x->s_kv = vision ? vp_vision_seq(m, x->p->image ? x->p->image :
	    m->vis.image) : x->p->seq;
	/* The text tower's eager attention adds the causal mask (fp32 under
	 * autocast, the embeddings' dtype); the vision tower has none. */
	x->fam.mask_skip = vision;
}

/* A CLIP tower's blocks [first, first + n), each a CLIPEncoderLayer,
 * which gradient checkpointing wraps one at a time. */
static int32_t
clip_blocks(struct lctx *x, int32_t t, uint32_t first, uint32_t n)
{
	uint32_t l;

	for (l = first; l < first + n; l++) {
		x->global_layer = l - 1;
		begin_layer(x, l, t);
		t = prenorm_block(x, t);
		t5_checkpoint(x, l);
	}
	x->layer = 0;
	return t;
}

/* _get_vector_norm and the division: image_embeds / ||image_embeds||
 * (b x proj: pow, sum, pow, div). */
static int32_t
clip_normalize(struct lctx *x, int32_t e)
{
	uint64_t n = elems_of(x, e), rows = x->b;
	enum vp_dtype dt = dt_of(x, e);
	int32_t sq, sum, nrm;

	sq = ew(x, "embeds pow", n, dt, e, -1, e, -1, VP_CAT_LOGITS);
	sum = ew(x, "embeds sum", rows, dt, sq, -1, -1, -1, VP_CAT_LOGITS);
	nrm = ew(x, "embeds norm", rows, dt, sum, -1, sum, -1, VP_CAT_LOGITS);
	save_result(x, nrm);
	return ew2(x, "embeds div", n, dt, e, nrm, VP_CAT_LOGITS);
}

/*
 * CLIPModel.forward with return_loss (transformers 5.24, eager or sdpa):
 * the vision tower (CLIPVisionEmbeddings: the pixel values cast to the
 * weights' dtype, the bias-free patch Conv2d, the class embedding cat in
 * front, the position lookup added; pre_layrnorm; the blocks;
 * post_layernorm on the CLS row, a view whose base it saves), the visual
 * projection; the text tower (token and position lookups, the blocks
 * with the causal mask, final_layer_norm, the row of each sequence's
 * highest id gathered), the text projection; both embeddings normalised,
 * logits_per_text = text @ image^T * exp(logit_scale), and the mean of
 * the cross-entropies of it and of its transpose against arange(b).  The
 * graph's blocks are the vision tower's then the text tower's.
 */
static void
lower_clip(struct lctx *x)
{
	struct vp_graph *g = x->g;
	const struct vp_model *m = x->m;
	struct vp_model tv, tt;
	uint64_t b = x->b, img = x->p->image ? x->p->image : m->vis.image;
	uint64_t side = img / m->vis.patch, proj = m->vis.proj;
	uint32_t nv = (uint32_t)m->vis.layers, nt = (uint32_t)m->layers;
	struct vp_layer conv;
	struct lgw w = { { m->vis.channels, img, img, false }, 0 };
	struct vp_lshape out = { m->vis.hidden, side, side, false };
	int32_t px, t, vlast, ie, te, lg, lgt, ls1, ls2, loss, ids, held;
	uint64_t big;
	size_t i;
	struct vp_op *o;

	/* The vision tower. */
	clip_tower(x, &tv, true);
	x->m = &tv;
	memset(&conv, 0, sizeof conv);
	conv.type = VP_L_CONV2D;
	conv.out = x->h;
	conv.kernel = conv.stride = (uint32_t)m->vis.patch;
	conv.dilation = conv.groups = 1;
	conv.bias = false;
	px = tnew(x, lshape_elems(x, w.sh), VP_FP32, VP_CAT_INPUT,
	    "pixel values", false);
	t = cast(x, px, x->w, VP_CAT_ACT);
	t = lg_conv2d(x, &conv, t, out, &w);
	t = ew(x, "class embedding cat", b * x->s * x->h, promote(dt_of(x, t),
	    x->w), t, -1, -1, -1, VP_CAT_ACT);
	g->op[g->nop - 1].wgrad_bytes = vp_mul_sat(x->h, B(x->gd));
	t = ew(x, "position embedding add", b * x->s * x->h, promote(dt_of(x,
	    t), x->w), t, -1, -1, -1, VP_CAT_ACT);
	g->op[g->nop - 1].wgrad_bytes = vp_mul_sat(x->s * x->h, B(x->gd));
	t = norm(x, "pre_layrnorm", t);
	vlast = clip_blocks(x, t, 1, nv);
	/* post_layernorm(last_hidden_state[:, 0, :]): the norm's input is a
	 * view of the tower's output, which it saves whole. */
	t = norm_rows(x, "post_layernorm", vlast, b, x->h);
	ie = linear(x, LIN_VISUAL_PROJ, t, x->h, proj, false, true,
	    VP_CAT_LOGITS);

	/* The text tower. */
	x->m = m;
	clip_tower(x, &tt, false);
	x->m = &tt;
	t = embeddings(x, b * x->s);
	t = clip_blocks(x, t, nv + 1, nt);
	g->layer_first_op[nv + nt + 1] = g->nop;
	held = norm(x, "final_layer_norm", t);
	/* last_hidden_state[arange(b), ids.argmax(-1)]: advanced indexing
	 * copies the b rows (its backward scatters into zeros). */
	t = ew(x, "eos gather", b * x->h, dt_of(x, held), held, -1, -1, -1,
	    VP_CAT_ACT);
	te = linear(x, LIN_TEXT_PROJ, t, x->h, proj, false, true,
	    VP_CAT_LOGITS);

	/* The contrastive loss, on b x proj and b x b tensors. */
	ie = clip_normalize(x, ie);
	te = clip_normalize(x, te);
	lg = ew2(x, "logits_per_text", b * b, dt_of(x, te), te, ie,
	    VP_CAT_LOGITS);
	lgt = ew(x, "logit scale mul", b * b, dt_of(x, lg), lg, -1, lg, -1,
	    VP_CAT_LOGITS);
	g->op[g->nop - 1].wgrad_bytes = B(x->gd);
	ls1 = ew(x, "log_softmax", b * b, x->autocast ? VP_FP32 : dt_of(x,
	    lgt), lgt, -1, -1, -1, VP_CAT_LOGITS);
	save_result(x, ls1);
	ls2 = ew(x, "log_softmax", b * b, x->autocast ? VP_FP32 : dt_of(x,
	    lgt), lgt, -1, -1, -1, VP_CAT_LOGITS);
	save_result(x, ls2);
	o = opnew(x, "nll_loss");
	IN(o, ls1);
	IN(o, ls2);
	/*
	 * CLIPModel.forward's locals and its output hold the towers'
	 * last hidden states (BaseModelOutputWithPooling) until it
	 * returns.
	 */
	o->keep[0] = vlast;
	o->keep[1] = held;
	loss = tnew(x, 1, VP_FP32, VP_CAT_LOGITS, "loss", true);
	OUT(o, loss);

	x->m = m;
	/* The text ids and the pixel values, which the caller holds (the
	 * labels, arange(b), are made in the loss). */
	ids = -1;
	(void)ids;
	g->input_bytes = vp_add_sat(g->t[px].bytes, vp_mul_sat(b * x->p->seq,
	    B(VP_INT64)));
	for (i = 0; i < g->nop; i++)
		g->op[i].sac = 0;
	g->autocast_end_op = x->autocast ? g->nop - 1 : SIZE_MAX;
	/* The largest parameter (the CPU for-loop optimizer's temporaries):
	 * the token table or an MLP matrix of either tower. */
	big = vp_mul_sat(m->vocab, m->hidden);
	if (vp_mul_sat(m->hidden, m->ffn) > big)
		big = vp_mul_sat(m->hidden, m->ffn);
	if (vp_mul_sat(m->vis.hidden, m->vis.ffn) > big)
		big = vp_mul_sat(m->vis.hidden, m->vis.ffn);
	g->largest_param_bytes = vp_mul_sat(big, B(x->w));
}

/*
 * LlavaModel.forward's inputs_embeds (transformers 5.24,
 * models/llava/modeling_llava.py), with the vision tower frozen
 * (requires_grad False, as LLaVA-1.5 trains): CLIPVisionModel's forward
 * (the pixel values cast to the weights' dtype, the bias-free patch
 * convolution, the class embedding, the positions, pre_layrnorm, every
 * block) builds no autograd graph, so its tensors are transients but for
 * the selected hidden state (vision_feature_layer, the output of a
 * block), whose patch rows ([:, 1:], a view) the projector reads:
 * linear_1 saves that view (the whole hidden state) or, under autocast,
 * its 16-bit copy; GELU; linear_2; torch.cat of the per-image list (a
 * copy) and .to(inputs_embeds.dtype); the token lookup; masked_scatter of
 * the features into the embeddings at the image tokens (a new tensor;
 * its mask is small).  The tower's last block and post_layernorm run
 * too, their outputs unused.
 */
static const struct lin LIN_MM_PROJ1 = { "multi_modal_projector.linear_1",
    0, LIN_LOCAL };
static const struct lin LIN_MM_PROJ2 = { "multi_modal_projector.linear_2",
    0, LIN_LOCAL };

static int32_t
llava_embeddings(struct lctx *x, uint64_t rows)
{
	const struct vp_model *m = x->m;
	struct vp_model tv;
	struct lctx keep = *x;
	uint64_t b = x->b, img = m->vis.image, side = img / m->vis.patch;
	uint64_t nt = vp_llava_image_tokens(m), hv = m->vis.hidden, l;
	int32_t t, feat = -1, crop, y, emb;
	struct vp_op *o;
	int i;

	tv = *m;
	tv.hidden = hv;
	tv.layers = m->vis.layers;
	tv.heads = tv.kv_heads = m->vis.heads;
	tv.head_dim = hv / m->vis.heads;
	tv.ffn = m->vis.ffn;
	tv.act = m->vis.act;
	tv.norm = VP_NORM_LAYERNORM;
	tv.pos = VP_POS_NONE;
	tv.bias = true;
	tv.qkv_bias = tv.o_bias = 1;
	tv.post_norms = false;
	x->m = &tv;
	x->h = hv;
	x->a = x->kv = tv.heads;
	x->d = x->dv = tv.head_dim;
	x->f = tv.ffn;
	x->s = x->s_kv = nt + 1;
	x->sp = false;
	x->fam.mask_skip = true;
	x->fam.qk_norm = x->fam.norm_1p = false;
	x->frozen = true;
	x->vis_px = tnew(x, b * m->vis.channels * img * img, VP_FP32,
	    VP_CAT_INPUT, "pixel values", false);
	t = cast(x, x->vis_px, x->w, VP_CAT_ACT);
	t = ew(x, "patch_embedding", b * hv * side * side, x->autocast ? x->c :
	    x->w, t, -1, -1, -1, VP_CAT_ACT);
	t = ew(x, "class embedding cat", b * x->s * hv, x->w, t, -1, -1, -1,
	    VP_CAT_ACT);
	t = ew(x, "position embedding add", b * x->s * hv, x->w, t, -1, -1,
	    -1, VP_CAT_ACT);
	t = norm(x, "pre_layrnorm", t);
	for (l = 1; l <= tv.layers; l++) {
		t = prenorm_block(x, t);
		/* vision_feature_layer -2: the second-to-last block's
		 * output (LLaVA-1.5's; any single layer holds as much). */
		if (l + 1 == tv.layers || tv.layers == 1)
			feat = t;
	}
	(void)norm_rows(x, "post_layernorm", t, b, hv);
	x->frozen = keep.frozen;
	x->m = m;
	x->h = keep.h;
	x->a = keep.a;
	x->kv = keep.kv;
	x->d = keep.d;
	x->dv = keep.dv;
	x->f = keep.f;
	x->s = keep.s;
	x->s_kv = keep.s_kv;
	x->sp = keep.sp;
	x->fam = keep.fam;

	/* The projector on the patch rows, a view of the feature. */
	crop = ew(x, "image feature rows", b * nt * hv, dt_of(x, feat), feat,
	    -1, -1, -1, VP_CAT_ACT);
	y = linear(x, LIN_MM_PROJ1, crop, hv, x->h, true, true, VP_CAT_ACT);
	x->g->t[crop].bytes = 0;
	o = &x->g->op[x->g->nop - 1];
	for (i = 0; i < VP_OP_MAXIO; i++)
		if (o->saved[i] == crop)
			o->saved[i] = feat;
	y = activation(x, VP_ACT_GELU, y);
	y = linear(x, LIN_MM_PROJ2, y, x->h, x->h, true, true, VP_CAT_ACT);
	y = ew(x, "image features cat", elems_of(x, y), dt_of(x, y), y, -1,
	    -1, -1, VP_CAT_ACT);
	emb = embeddings(x, rows);
	y = cast(x, y, dt_of(x, emb), VP_CAT_ACT);
	return ew(x, "masked_scatter", rows * x->h, dt_of(x, emb), emb, y, -1,
	    -1, VP_CAT_ACT);
}

int
vp_graph_build_blocks(const struct vp_model *m, const struct vp_plan *p,
    uint64_t blocks, struct vp_graph *g)
{
	unsigned pp = p->pp, st;
	bool first = p->stage == 0, last = p->stage + 1 >= pp;
	uint64_t offset = 0;
	uint32_t nl = (uint32_t)blocks;
	struct lctx x;

	/* Plans reach the lowering normalised (vp_plan_normalize). */
	assert(vp_plan_degrees_ok(p));
	assert(p->stage < pp);
	assert(blocks == nl);
	if (m->lg != NULL)
		return lgraph_build(m, p, g);
	memset(g, 0, sizeof *g);
	lctx_init(&x, m, p, g);
	g->layers = nl;
	g->layer_first_op = xcalloc(nl + 2, sizeof *g->layer_first_op);
	g->layer_input = xcalloc(nl + 1, sizeof *g->layer_input);
	for (st = 0; st < p->stage; st++)
		offset += vp_stage_blocks(m->layers, pp, st);

	if (vp_model_family(m) == VP_FAMILY_CLIP) {
		struct vp_param_count pc;
		uint64_t big;

		/* One rank holds the whole model (rules.c, clip_plan). */
		assert(pp == 1 && p->tp == 1);
		vp_graph_free(g);
		lctx_init(&x, m, p, g);
		nl = (uint32_t)(m->vis.layers + m->layers);
		g->layers = nl;
		g->layer_first_op = xcalloc(nl + 2, sizeof *g->layer_first_op);
		g->layer_input = xcalloc(nl + 1, sizeof *g->layer_input);
		lower_clip(&x);
		big = g->largest_param_bytes;
		vp_model_params(m, &pc);
		g->block_params = pc.per_layer;
		g->params = pc.total;
		persistent_terms(g, &x, m->layers, true, true);
		g->largest_param_bytes = big;
		return 0;
	}
	if (m->arch == VP_ARCH_ENCDEC) {
		struct vp_param_count pc;

		/* One rank holds the whole model (rules.c). */
		assert(pp == 1 && p->tp == 1);
		vp_graph_free(g);
		lctx_init(&x, m, p, g);
		nl = (uint32_t)(m->layers + m->dec_layers);
		g->layers = nl;
		g->layer_first_op = xcalloc(nl + 2, sizeof *g->layer_first_op);
		g->layer_input = xcalloc(nl + 1, sizeof *g->layer_input);
		lower_encdec(&x);
		vp_model_params(m, &pc);
		g->block_params = pc.per_layer;
		g->params = pc.total;
		persistent_terms(g, &x, m->layers, true, true);
		/* Whisper's encoder position table is a parameter that
		 * takes no gradient (requires_grad_(False)): no gradient,
		 * master copy or optimizer state. */
		if (vp_model_family(m) == VP_FAMILY_WHISPER) {
			g->trainable -= m->max_seq * m->hidden;
			g->grad_bytes = vp_mul_sat(g->trainable, B(x.gd));
			if (vp_prec_info[p->precision].master)
				g->master_bytes = vp_mul_sat(g->trainable, 4);
			g->optim_state_bytes = vp_optimizer_state_bytes(m, p,
			    m->layers, true, true, g->trainable);
		}
		return 0;
	}
	lower_ops(&x, nl, offset, first, last);
	rank_params(g, m, p, vp_stage_blocks(m->layers, pp, p->stage), offset,
	    first, last);
	persistent_terms(g, &x, vp_stage_blocks(m->layers, pp, p->stage),
	    first, last);
	/* LLaVA: the frozen vision tower has no gradients, master weights or
	 * optimizer states. */
	if (m->vis.llava && first && p->lora_rank == 0) {
		g->trainable -= vp_llava_frozen_params(m);
		g->grad_bytes = vp_mul_sat(g->trainable, B(x.gd));
		if (vp_prec_info[p->precision].master)
			g->master_bytes = vp_mul_sat(g->trainable, 4);
		g->optim_state_bytes = vp_optimizer_state_bytes(m, p,
		    vp_stage_blocks(m->layers, pp, p->stage), first, last,
		    g->trainable);
	}
	return 0;
}

int
vp_graph_build(const struct vp_model *m, const struct vp_plan *p,
    struct vp_graph *g)
{
	assert(vp_plan_degrees_ok(p));
	return vp_graph_build_blocks(m, p, vp_stage_blocks(m->layers, p->pp,
	    p->stage), g);
}

void
vp_graph_free(struct vp_graph *g)
{
	if (g == NULL)
		return;
	free(g->t);
	free(g->op);
	free(g->layer_first_op);
	free(g->layer_input);
	memset(g, 0, sizeof *g);
}
