/*
 * model.h — the model description and its validation.
 *
 * struct vp_model is what the reader (model_read.c) fills from a vramplan
 * YAML file or a Hugging Face config.json.  vp_model_validate checks the
 * numbers against each other (heads divide hidden, kv_heads divide heads,
 * sizes within reason) and fills derived fields; vp_model_params counts
 * parameters exactly as the common implementations lay them out.
 *
 * Pure.  Ownership: the model owns its strings; vp_model_free releases
 * them (vp_model_free(NULL) is a no-op).
 */
#ifndef VP_MODEL_H
#define VP_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"

struct vp_lgraph;
struct vp_model;

/* Enum and name table kept in step by X-macros. */
#define VP_ARCH_LIST(X) X(DECODER, "decoder") X(ENCODER, "encoder") \
	X(ENCDEC, "encoder-decoder")
#define VP_ACT_LIST(X) \
	X(GELU, "gelu") X(GELU_TANH, "gelu-tanh") X(GELU_NEW, "gelu-new") \
	X(RELU, "relu") X(SWIGLU, "swiglu") X(GEGLU, "geglu") \
	X(QUICK_GELU, "quick-gelu") X(RELU2, "relu2")
#define VP_NORM_LIST(X) X(LAYERNORM, "layernorm") X(RMSNORM, "rmsnorm")
#define VP_POS_LIST(X) X(ROPE, "rope") X(LEARNED, "learned") X(NONE, "none")
#define VP_IMPL_LIST(X) X(HF, "hf") X(TORCH_NN, "torch-nn") X(MEGATRON, "megatron")
/*
 * Model families (the `family` key, or a Hugging Face model_type): how the
 * model's code lays out and runs a block.  What each one implies is its
 * row in vp_family_info; graph.c and finetune.c read nothing else.
 */
#define VP_FAMILY_LIST(X) \
	X(LLAMA, "llama") X(GPT2, "gpt2") X(BERT, "bert") \
	X(TORCH_NN, "torch-nn") X(QWEN3, "qwen3") X(LLAMA4, "llama4") \
	X(GEMMA3, "gemma3") X(GPT_OSS, "gpt-oss") \
	X(DEEPSEEK_V2, "deepseek-v2") X(DEEPSEEK_V3, "deepseek-v3") \
	X(PHI, "phi") X(GPT_NEOX, "gpt-neox") X(OPT, "opt") X(T5, "t5") \
	X(BART, "bart") X(WHISPER, "whisper") \
	X(MODERNBERT, "modernbert") X(DEBERTA_V2, "deberta-v2") \
	X(VIT, "vit") X(CLIP, "clip") \
	X(GPTJ, "gptj") X(FALCON, "falcon") X(COHERE, "cohere") \
	X(MAMBA2, "mamba2") X(BAMBA, "bamba") \
	X(NEMOTRON_H, "nemotron-h") X(ZAMBA2, "zamba2") X(JAMBA, "jamba") X(MAMBA, "mamba") \
	X(FALCON_MAMBA, "falcon-mamba") X(ZAMBA, "zamba")
/* Block builders of the lowering (graph.c's block_builders[]): where the
 * norms sit relative to the residual adds. */
#define VP_BLOCK_LIST(X) X(PRE_NORM, "pre-norm") X(POST_NORM, "post-norm") \
	X(LLAMA4, "llama4") X(MLA, "mla-pre-norm") X(PARALLEL, "parallel") \
	X(MODERNBERT, "modernbert") X(DEBERTA, "deberta") \
	X(MAMBA2, "mamba2") X(HYBRID, "mamba2-hybrid") \
	X(NEMOTRON_H, "nemotron-h") X(ZAMBA2, "zamba2") X(JAMBA, "jamba") X(MAMBA1, "mamba")
/* What follows the last block (graph.c's head_builders[]). */
#define VP_HEAD_LIST(X) \
	X(LM, "lm-head") X(MLM, "mlm-head") X(LINEAR, "linear-head") \
	X(SEQ2SEQ, "seq2seq-lm-head") \
	X(MODERNBERT_MLM, "modernbert-mlm-head") X(CLS, "cls-head") \
	X(CONTRASTIVE, "contrastive")
/*
 * The linear layers a block can have, by what they do.  FC is the input
 * linear of an ungated MLP; LoRA counts it as "up".  The names are the
 * matrix names of finetune.c's view (and its error messages).
 */
#define VP_ROLE_LIST(X) \
	X(Q, "q") X(K, "k") X(V, "v") X(QKV, "qkv") X(O, "o") \
	X(GATE, "gate") X(UP, "up") X(FC, "up") X(DOWN, "down") \
	X(Q_A, "q_a") X(Q_B, "q_b") X(KV_A, "kv_a") X(KV_B, "kv_b")

#define X(e, s) VP_ARCH_##e,
enum vp_arch { VP_ARCH_LIST(X) VP_ARCH_COUNT };
#undef X
#define X(e, s) VP_ACT_##e,
enum vp_act { VP_ACT_LIST(X) VP_ACT_COUNT };
#undef X
#define X(e, s) VP_NORM_##e,
enum vp_norm { VP_NORM_LIST(X) VP_NORM_COUNT };
#undef X
#define X(e, s) VP_POS_##e,
enum vp_pos { VP_POS_LIST(X) VP_POS_COUNT };
#undef X
#define X(e, s) VP_IMPL_##e,
enum vp_impl { VP_IMPL_LIST(X) VP_IMPL_COUNT };
#undef X
#define X(e, s) VP_FAMILY_##e,
enum vp_family { VP_FAMILY_LIST(X) VP_FAMILY_COUNT };
#undef X
#define X(e, s) VP_BLOCK_##e,
enum vp_block { VP_BLOCK_LIST(X) VP_BLOCK_COUNT };
#undef X
#define X(e, s) VP_HEAD_##e,
enum vp_head { VP_HEAD_LIST(X) VP_HEAD_COUNT };
#undef X
#define X(e, s) VP_ROLE_##e,
enum vp_role { VP_ROLE_LIST(X) VP_ROLE_COUNT };
#undef X

extern const char *const vp_arch_names[VP_ARCH_COUNT];
extern const char *const vp_act_names[VP_ACT_COUNT];
extern const char *const vp_norm_names[VP_NORM_COUNT];
extern const char *const vp_pos_names[VP_POS_COUNT];
extern const char *const vp_impl_names[VP_IMPL_COUNT];
extern const char *const vp_family_names[VP_FAMILY_COUNT];
extern const char *const vp_block_names[VP_BLOCK_COUNT];
extern const char *const vp_head_names[VP_HEAD_COUNT];
extern const char *const vp_role_names[VP_ROLE_COUNT];

/*
 * What a family's code does, as data.  The lowering (graph.c) builds a
 * block with block_builders[block] and the head with head_builders[head],
 * and every variant below is a flag those builders test; finetune.c lists
 * the same linears (lin[]) for LoRA, quantization and fp8.  Sources: the
 * Hugging Face modeling files named in `source`, torch.nn.
 */
struct vp_family_info {
	const char *source;	/* the code the row follows */
	int arch;		/* enum vp_arch; -1 = either (torch-nn) */
	enum vp_block block;	/* norm placement: which block builder */
	enum vp_head head;	/* which head builder */
	bool fused_qkv;		/* one q,k,v projection (GPT-2's
				 * c_attn; in a post-norm block
				 * nn.MultiheadAttention's in_proj,
				 * relaid out, q scaled) */
	bool repeat_kv;		/* GQA: k and v copied to every head
				 * (eager and sdpa; never with flash) */
	bool softmax_fp32;	/* eager softmax(dtype=float32) (Llama) */
	bool mask_fp32;		/* additive mask in the params' dtype */
	bool resid_dropout;	/* dropout on attention and MLP outputs */
	bool ffn_dropout;	/* dropout after the MLP activation */
	bool embed_norm;	/* LayerNorm after the embeddings (BERT) */
	bool embed_dropout;	/* dropout on the summed embeddings */
	bool logits_fp32;	/* logits.float() before the loss (Llama) */
	bool qk_norm;		/* RMSNorm over head_dim on q and k after
				 * their projections, before RoPE (Qwen3's
				 * q_norm, k_norm) */
	bool norm_1p;		/* Gemma's RMSNorm: x.float() normalized,
				 * times (1 + weight) in fp32, then cast
				 * back (Gemma3RMSNorm): the product's fp32
				 * input is what the weight keeps */
	bool embed_scale;	/* embeddings times sqrt(hidden) (Gemma's
				 * scaled word embedding): one more
				 * tensor of the embeddings' size */
	bool sinks;		/* gpt-oss: a learned logit per head joins
				 * each row of the eager scores (cat, minus
				 * the row max, softmax, the sink dropped);
				 * one parameter per head */
	bool router_bias;	/* the MoE router linear has a bias */
	bool glu_clamp;		/* gpt-oss's experts: gate and up
				 * interleaved in one projection, clamped,
				 * gate * sigmoid(alpha * gate) * (up + 1),
				 * biases on both projections */
	bool q_view;		/* q reaches attention as a transposed view
				 * of its (b, s, a*d) projection (Hugging
				 * Face): a fused kernel's output takes that
				 * layout, so its transpose back is a view */
	bool mla;		/* DeepSeek's multi-head latent attention
				 * (struct vp_mla): q through q_a_proj,
				 * q_a_layernorm, q_b_proj (or q_proj),
				 * k and v from kv_a_proj_with_mqa's latent
				 * through kv_a_layernorm and kv_b_proj */
	bool rope_complex;	/* DeepSeek-V2's RoPE: the rotary part in
				 * fp32 as complex numbers (view_as_complex,
				 * a product, type_as back) */
	bool router_sigmoid;	/* DeepSeek-V3's router: sigmoid scores,
				 * e_score_correction_bias, group-limited
				 * top-k (else a softmax over the experts) */
	/* Set by later transformers releases (hf_changes in model.c, read
	 * through vp_model_traits_at); false in every row. */
	bool sdpa_contiguous;	/* q, k, v made contiguous before sdpa */
	bool loss_fp32;		/* the shared ForCausalLMLoss upcasts the
				 * logits, which the model still holds */
	bool pad_labels;	/* the loss pads the labels: no shifted
				 * copy of the logits, b*s rows */
	bool sdpa_gqa;		/* sdpa gets enable_gqa=True instead of
				 * repeat_kv's copies (PyTorch >= 2.5) */
	bool mask_skip;		/* no additive mask when nothing is padded
				 * (a bidirectional mask that may be None) */
	/* Parallel blocks (block = parallel: attention and MLP read the
	 * same input, their outputs summed with the residual). */
	uint8_t par_norms;	/* norms per parallel block: 1 = one norm
				 * feeds both branches (Phi) */
	bool head_bias;		/* lm_head has a bias (Phi) */
	bool rope_cat;		/* partial RoPE: q and k split into the
				 * rotated and passed dims, rotated, and
				 * concatenated back (a copy of each) */
	bool q_scale;		/* q_proj(h) * scaling: a scaled copy of q
				 * (OPT) */
	uint8_t pos_offset;	/* learned position table rows past max_seq
				 * (OPT's offset 2) */
	/* ModernBERT (block = modernbert). */
	bool norm_nobias;	/* LayerNorm(bias=False): a weight only
				 * (ModernBERT's norm_bias false) */
	bool embed_mask;	/* the embeddings times the (b, s, 1) input
				 * mask after their norm (DeBERTa) */
	bool softmax_convert;	/* eager softmax(dtype=float32) of 16-bit
				 * scores copies them to fp32 first (ATen's
				 * softmax but for CUDA fp16), and the
				 * copy's backward makes an fp32 gradient
				 * (measured for ModernBERT) */
	bool global_first;	/* with a window, block l (from 0) is global
				 * when l (not l + 1) is a multiple of
				 * global_every: the first block is global
				 * (ModernBERT's global_attn_every_n_layers) */
	bool qk_fp32;		/* eager: q and k upcast to fp32 for the
				 * scores, the probabilities cast to v's
				 * dtype (GPT-J) */
	bool sincos_table;	/* RoPE from a (max_seq, rotary_dim) sin|cos
				 * buffer; each of q's and k's rotations
				 * repeat_interleaves its own cos and sin
				 * (GPT-J) */
	bool cohere_ln;		/* CohereLayerNorm: a LayerNorm without bias
				 * written in Python, in fp32 (Cohere) */
	bool logit_scale;	/* logits * logit_scale, a copy (Cohere) */
	bool scores_held;	/* eager: the scaled scores live through the
				 * softmax of scores + mask (Falcon) */
	bool sdpa_mask;		/* sdpa gets a materialized (b, 1, s, s)
				 * bool mask, not is_causal (Falcon) */
	bool causal_mask;	/* eager: the (b, 1, s, s) causal mask is
				 * lowered as the local layers' masks are
				 * (layer_masks), not left out (GPT-J) */
	/* Module name of each linear the block has (the op names in
	 * --explain); NULL = the family has no such linear. */
	const char *lin[VP_ROLE_COUNT];
};
extern const struct vp_family_info vp_family_info[VP_FAMILY_COUNT];

/* Falcon's _split_heads (vp_model.qkv_split; 0 = from kv_heads, set by
 * validation): q, k, v views of the (b, s, a, 3, d) projection;
 * multi-query: q a view, k and v indexed copies of their one head; the
 * new decoder architecture's kv groups: q a copy, k and v indexed copies
 * broadcast to every head and copied. */
enum { VP_QKV_VIEWS = 1, VP_QKV_MULTI_QUERY, VP_QKV_GROUPS };

/* Fields whose source position the reader records, for validation messages. */
enum vp_field {
	VP_F_NAME, VP_F_LAYERS, VP_F_HIDDEN, VP_F_HEADS, VP_F_KV_HEADS,
	VP_F_HEAD_DIM, VP_F_FFN, VP_F_VOCAB, VP_F_MAX_SEQ, VP_F_POSITION,
	VP_F_MOE, VP_F_MOE_EXPERTS, VP_F_MOE_TOP_K, VP_F_MOE_FFN,
	VP_F_TRAIN_SEQ, VP_F_FAMILY, VP_F_ROTARY_DIM, VP_F_COUNT
};

/* The most mlp_only_layers a model may list. */
#define VP_MOE_MAX_MLP_ONLY 64

/*
 * DeepSeek's multi-head latent attention (families with the mla trait):
 * q = q_b_proj(q_a_layernorm(q_a_proj(h))) of q_rank (plain q_proj when
 * q_rank is 0), kv_a_proj_with_mqa: h -> kv_rank + rope_dim, the latent
 * normed (kv_a_layernorm) and expanded by kv_b_proj to heads x (nope_dim
 * + v_dim); the rope_dim part is one key head shared by all heads.
 * head_dim is nope_dim + rope_dim (q's and k's).
 */
struct vp_mla {
	uint64_t q_rank;	/* q_lora_rank; 0 = null (q_proj) */
	uint64_t kv_rank;	/* kv_lora_rank */
	uint64_t rope_dim;	/* qk_rope_head_dim */
	uint64_t nope_dim;	/* qk_nope_head_dim */
	uint64_t v_dim;		/* v_head_dim */
	bool rope_interleave;	/* DeepSeek-V3's rope_interleave */
};

/*
 * Mamba-2's mixer (family mamba2, block mamba2): the model's heads and
 * head_dim are the SSM's (num_heads, head_dim), ffn its inner width
 * (expand x hidden = heads x head_dim); in_proj makes the gate z (ffn),
 * x, B and C (ffn + 2 groups state, through the depthwise causal conv1d
 * of conv_kernel taps) and dt (heads); the chunked scan runs in chunks
 * of `chunk` tokens.
 */
#define VP_SSM_MAX_ATTN 64
#define VP_SSM_MAX_PATTERN 256
struct vp_ssm {
	uint64_t heads;		/* the SSM's heads (0: the model's) */
	uint64_t head_dim;	/* ... and their width (0: the model's) */
	bool proj_bias;		/* biases on in_proj and out_proj */
	/* A hybrid (block mamba2-hybrid, Bamba): the blocks (from 0)
	 * whose mixer is attention; every other block's is Mamba-2. */
	uint32_t n_attn;
	uint32_t attn[VP_SSM_MAX_ATTN];
	/* Nemotron-H (block nemotron-h): each block's one mixer, a
	 * character per block as hybrid_override_pattern spells it: 'M'
	 * Mamba-2, '*' attention, '-' an MLP. */
	char pattern[VP_SSM_MAX_PATTERN + 1];
	uint64_t state;		/* state_size (n) */
	uint64_t groups;	/* n_groups of B and C */
	uint64_t conv_kernel;	/* conv_kernel */
	uint64_t chunk;		/* chunk_size */
	bool conv_bias;		/* use_conv_bias */
	bool residual_fp32;	/* residual_in_fp32 */
	/* The Mamba-1 mixer (Jamba's, block jamba, and Mamba's, block
	 * mamba, which has no dt/B/C norms): in_proj makes x and the
	 * gate z (expand x hidden each), x_proj dt (dt_rank wide), B and C
	 * (state each), dt_proj dt_rank -> inner; the attention blocks are
	 * attn[] (read from attn_layer_period and attn_layer_offset). */
	uint64_t expand;	/* mamba_expand */
	uint64_t dt_rank;	/* mamba_dt_rank */
};

/*
 * Zamba2's shared transformer blocks (family zamba2): mem_blocks distinct
 * blocks (num_mem_blocks), the hybrid blocks calling them in turn (the
 * i-th hybrid block, from 0, calls block i mod mem_blocks); each call has
 * its own rank-`adapter_rank` adapters on the MLP's gate_up_proj and,
 * with attn_adapter (use_shared_attention_adapter), on q, k and v; RoPE
 * in the shared attention with mem_rope (use_mem_rope).
 */
struct vp_zamba2 {
	uint32_t mem_blocks;
	uint64_t adapter_rank;
	bool attn_adapter;
	bool mem_rope;
};

struct vp_moe {
	uint32_t experts;	/* routed experts per MoE layer */
	uint32_t top_k;		/* experts each token is sent to */
	uint64_t ffn;		/* routed expert intermediate size */
	uint32_t shared_experts;
	uint64_t shared_ffn;	/* size of each shared expert (default ffn) */
	bool shared_gate;	/* Qwen-MoE: a sigmoid gate h→1 per shared expert */
	uint32_t first_dense;	/* DeepSeek: the first blocks keep a dense MLP
				 * of the model's ffn */
	uint32_t sparse_step;	/* Qwen-MoE decoder_sparse_step: block l
				 * (from 0) has experts when (l + 1) is a
				 * multiple of it; 0 and 1 = every block */
	uint32_t n_mlp_only;	/* Qwen-MoE mlp_only_layers: blocks (from 0)
				 * that keep a dense MLP of the model's ffn */
	uint32_t mlp_only[VP_MOE_MAX_MLP_ONLY];
	uint32_t groups;	/* DeepSeek n_group: group-limited routing */
	uint32_t topk_groups;	/* DeepSeek topk_group */
};

/* A vision transformer's input (family vit; struct vp_model's vis). */
struct vp_vision {
	uint64_t image;		/* the resolution its position table is
				 * for (image_size) */
	uint64_t patch;		/* patch_size; 0 = not a vision model */
	uint64_t channels;	/* num_channels */
	/* CLIP (family clip): the vision tower's sizes (the model's own
	 * are the text tower's) and the projections' width; 0 otherwise. */
	uint64_t hidden, layers, heads, ffn, proj;
	enum vp_act act;
	/* LLaVA (a Llama-family language model with a `vision` mapping):
	 * the frozen CLIP vision tower above, whose patch features (the
	 * class token dropped) go through the multi-modal projector
	 * (linear, GELU, linear, biases) into the language model's
	 * sequence at the image tokens. */
	bool llava;
};

/* The image tokens a LLaVA model puts in its language model's sequence
 * (the patches of its image); 0 for any other model. */
uint64_t vp_llava_image_tokens(const struct vp_model *m);
/* A LLaVA model's frozen parameters: its CLIP vision tower's. */
uint64_t vp_llava_frozen_params(const struct vp_model *m);

/* The tokens of a vision transformer at `image` x `image` pixels: the
 * patches and the CLS token. */
struct vp_model;
uint64_t vp_vision_seq(const struct vp_model *m, uint64_t image);

/* Training defaults a model file may carry; 0 / -1 = not given. */
struct vp_train_defaults {
	uint64_t micro_batch;
	uint64_t seq;
	int precision;		/* enum vp_precision, -1 = not given */
	int optimizer;		/* enum vp_optimizer, -1 = not given */
};

struct vp_model {
	char *name;
	char *file;		/* where it was read from, for messages */
	enum vp_arch arch;
	uint64_t layers;
	uint64_t hidden;
	uint64_t heads;
	uint64_t kv_heads;	/* 0 = heads, filled by validation */
	uint64_t head_dim;	/* 0 = hidden / heads, filled by validation */
	uint64_t ffn;
	enum vp_act act;
	enum vp_norm norm;
	bool bias;		/* biases on every linear */
	int qkv_bias;		/* -1 = same as bias */
	int o_bias;		/* output projection bias; -1 = same as bias */
	bool post_norms;	/* Gemma-2 sandwich norms: 4 per layer */
	bool attn_softcap;	/* Gemma-2: tanh soft-capping of eager scores */
	bool logit_softcap;	/* Gemma-2: tanh soft-capping of the logits */
	/* Llama 4 (family llama4): every global_every-th block (from 1)
	 * has no RoPE and global attention, the others RoPE, an L2 norm of
	 * q and k (qk_l2norm) and attention within chunks of `window`
	 * tokens, lowered as local layers (what a chunk's mask costs is a
	 * window's); attn_temperature scales the NoPE blocks' q by a
	 * per-position factor. */
	bool attn_temperature;
	bool qk_l2norm;
	uint64_t window;	/* sliding-window size of the local layers
				 * (Gemma-3, gpt-oss); 0 = every layer
				 * attends to the whole sequence */
	uint32_t global_every;	/* with a window: block l (from 0) is a
				 * global (full-attention) one when
				 * (l + 1) is a multiple of it (l itself
				 * for a global_first family), the others
				 * local; 1 = none local */
	uint64_t rotary_dim;	/* dims of each head RoPE rotates; 0 = all
				 * (Phi's partial_rotary_factor) */
	uint8_t par_norms;	/* norms of a parallel block; 0 = the
				 * family's (Falcon's new decoder
				 * architecture: 2) */
	uint8_t qkv_split;	/* Falcon's query_key_value split (below) */
	uint64_t vocab;
	bool tie_embeddings;
	enum vp_pos pos;
	uint64_t max_seq;	/* 0 = not given */
	uint64_t type_vocab;
	double dropout;
	enum vp_impl impl;
	int family;		/* enum vp_family; -1 = from the keys above
				 * (vp_model_family) */
	bool has_moe;
	struct vp_moe moe;
	struct vp_mla mla;	/* families with the mla trait */
	struct vp_ssm ssm;	/* block mamba2 */
	/* Encoder-decoders (architecture encoder-decoder): `layers` is the
	 * encoder's blocks, dec_layers the decoder's (each with
	 * cross-attention); T5's relative position bias is an embedding of
	 * rel_buckets x heads in the first block of each stack, and
	 * scale_dec_out multiplies the decoder output by hidden^-0.5 before
	 * the (tied) head. */
	uint64_t dec_layers;
	uint64_t rel_buckets;	/* also DeBERTa's attention span (its
				 * position_buckets, else
				 * max_relative_positions): 2 x it
				 * relative embeddings */
	bool scale_dec_out;
	/* Whisper's audio front end: mel bins (conv1's input channels); the
	 * encoder's positions after it are max_seq (max_source_positions),
	 * the decoder's position table dec_max_seq rows
	 * (max_target_positions; BART's stacks both have max_seq). */
	uint64_t mel_bins;
	uint64_t dec_max_seq;
	/* Vision transformers (family vit): images of image x image pixels
	 * in `channels` channels cut into patch x patch squares by a
	 * strided convolution; the sequence is the patches plus the CLS
	 * token, and `vocab` is the classifier's number of classes.
	 * patch = 0 for every other model. */
	struct vp_vision vis;
	struct vp_train_defaults train;
	struct vp_srcpos where[VP_F_COUNT];
	/* A layer-graph model (lgraph.h: `layers:` is a list of layers):
	 * owned; NULL for a transformer.  Such a model has layers = 1 (one
	 * "block" holding the whole network, graph.c's lower_lgraph) and
	 * none of the transformer sizes. */
	struct vp_lgraph *lg;
	/* Zamba2 (block zamba2): ssm.pattern says each block's kind, 'M' a
	 * Mamba-2 block, 'H' a hybrid one (the shared transformer block,
	 * its linear, then a Mamba-2 block). */
	struct vp_zamba2 zamba2;
};

/* Upper bound on a believable model (10^15 parameters is past any). */
#define VP_MAX_PARAMS 1000000000000000ULL

void vp_model_init(struct vp_model *m);
void vp_model_free(struct vp_model *m);
/* Check the numbers; fill kv_heads/head_dim/qkv_bias defaults.  0 or -1. */
int vp_model_validate(struct vp_model *m, struct vp_diags *d);

/* Parameter counts by place, exact for the lowered layout. */
struct vp_param_count {
	uint64_t embedding;	/* token (+ position, token type) embeddings */
	uint64_t per_layer;	/* one transformer block (an MoE one if any) */
	uint64_t dense_layer;	/* a block with a dense MLP (MoE: first_dense,
				 * mlp_only_layers, off the sparse step) */
	uint64_t layers;	/* all blocks */
	uint64_t head;		/* final norm, LM head (untied), MLM head */
	uint64_t total;
	uint64_t active;	/* used per token (MoE: top_k experts) */
};
void vp_model_params(const struct vp_model *m, struct vp_param_count *out);

/*
 * The model's family: `family` when given, otherwise, in this order,
 * torch-nn for `implementation: torch-nn`, bert for an encoder, gpt2 for
 * a decoder with learned positions, llama for every other decoder (the
 * rule files without a `family` key have always been lowered by).
 */
enum vp_family vp_model_family(const struct vp_model *m);
/* Whether the model runs Hugging Face transformers' modelling code
 * (`implementation: hf`), which --transformers then names. */
bool vp_model_runs_hf(const struct vp_model *m);
/*
 * The family's row as this model runs it: `implementation: megatron`
 * fuses q, k and v of a pre-norm block into Megatron's linear_qkv.  The
 * lowering and the fine-tuning view both take their traits from here.
 */
struct vp_family_info vp_model_traits(const struct vp_model *m);
/*
 * The same as the code of a transformers release runs it (`transformers`
 * as major * 100 + minor, --transformers): the rows follow v4.40, and
 * each later change (hf_changes in model.c) applies from the first
 * release that has it, to a model that runs Hugging Face code.  The
 * lowering reads this; the fine-tuning view needs only the linears, which
 * no release changed.
 */
struct vp_family_info vp_model_traits_at(const struct vp_model *m,
    unsigned transformers);

/*
 * Whether block l (from 0) of the model runs the experts: not one of
 * DeepSeek's first_dense blocks nor of Qwen-MoE's mlp_only_layers, and on
 * its decoder_sparse_step.  False for a model without experts.
 */
bool vp_moe_layer_sparse(const struct vp_model *m, uint64_t l);
/* Whether block l (from 0) of a Llama 4 model has no RoPE (its global
 * blocks, global_every). */
bool vp_block_nope(const struct vp_model *m, uint64_t l);
/* How many of the blocks [first, first + count) keep a dense MLP (all of
 * them in a model without experts). */
uint64_t vp_moe_dense_blocks(const struct vp_model *m, uint64_t first,
    uint64_t count);

/* Whether block l (from 0) attends within the sliding window (a local
 * layer of Gemma-3, gpt-oss or ModernBERT); false for a model without a
 * window. */
bool vp_layer_local(const struct vp_model *m, uint64_t l);

/* Whether block l (from 0) mixes with Mamba-2 (every block of a mamba2
 * model, a hybrid's other than its attention blocks). */
bool vp_layer_ssm(const struct vp_model *m, uint64_t l);
/* Parameters of one Mamba-2 mixer (in_proj, conv1d, dt_bias, A_log, D,
 * the gated norm, out_proj), without the block's norm. */
uint64_t vp_ssm_mixer_params(const struct vp_model *m);
/* Nemotron-H: block l's kind ('M', '*' or '-', its pattern's
 * character; 0 for another family) and its parameters (its norm and
 * its mixer). */
char vp_layer_kind(const struct vp_model *m, uint64_t l);
uint64_t vp_nemotron_h_block_params(const struct vp_model *m, uint64_t l);
/* Zamba2: how many hybrid blocks come before block l (the call index
 * of its shared block, when l is one), and block l's parameters: a
 * Mamba-2 block's norm and mixer; a hybrid's also its linear and its
 * call's adapters, and the shared block's own weights at its first
 * call (so that each of the mem_blocks is counted once). */
uint64_t vp_zamba2_hybrids_before(const struct vp_model *m, uint64_t l);
uint64_t vp_zamba2_block_params(const struct vp_model *m, uint64_t l);
uint64_t vp_zamba2_mixer_params(const struct vp_model *m);
uint32_t vp_zamba2_mem_blocks(const struct vp_model *m);
/* The shared transformer block's own weights (norms, attention, MLP). */
uint64_t vp_zamba2_shared_params(const struct vp_model *m);
/* One call's adapters. */
uint64_t vp_zamba2_adapter_params(const struct vp_model *m);
/* Jamba: the parameters of one Mamba-1 mixer (JambaMambaMixer), and of
 * block l (its two norms, its mixer, its MLP or experts; with `active`
 * the top_k experts only). */
uint64_t vp_mamba1_mixer_params(const struct vp_model *m);
uint64_t vp_jamba_block_params(const struct vp_model *m, uint64_t l,
    bool active);

bool vp_act_gated(enum vp_act a);
/* Parameters of one MLP block (gated or not) of intermediate size ffn. */
uint64_t vp_mlp_params(const struct vp_model *m, uint64_t ffn);

#endif
