/* model.c — model validation and parameter counting (see model.h). */
#include "model.h"

#include "lgraph.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define X(e, s) s,
const char *const vp_arch_names[VP_ARCH_COUNT] = { VP_ARCH_LIST(X) };
const char *const vp_act_names[VP_ACT_COUNT] = { VP_ACT_LIST(X) };
const char *const vp_norm_names[VP_NORM_COUNT] = { VP_NORM_LIST(X) };
const char *const vp_pos_names[VP_POS_COUNT] = { VP_POS_LIST(X) };
const char *const vp_impl_names[VP_IMPL_COUNT] = { VP_IMPL_LIST(X) };
const char *const vp_family_names[VP_FAMILY_COUNT] = { VP_FAMILY_LIST(X) };
const char *const vp_block_names[VP_BLOCK_COUNT] = { VP_BLOCK_LIST(X) };
const char *const vp_head_names[VP_HEAD_COUNT] = { VP_HEAD_LIST(X) };
const char *const vp_role_names[VP_ROLE_COUNT] = { VP_ROLE_LIST(X) };
#undef X

/* Hugging Face's decoder module names (Llama's; GPT-2's c_attn, c_proj,
 * c_fc and mlp.c_proj play the same parts). */
#define DECODER_LINEARS { [VP_ROLE_Q] = "q_proj", [VP_ROLE_K] = "k_proj", \
	[VP_ROLE_V] = "v_proj", [VP_ROLE_QKV] = "qkv_proj", \
	[VP_ROLE_O] = "o_proj", [VP_ROLE_GATE] = "gate_proj", \
	[VP_ROLE_UP] = "up_proj", [VP_ROLE_FC] = "fc_in", \
	[VP_ROLE_DOWN] = "down_proj" }

/* DeepSeek's MLA block (modeling_deepseek_v3.py): q_proj only when
 * q_lora_rank is null; no k, v or fused projection. */
#define DEEPSEEK_LINEARS { [VP_ROLE_Q] = "q_proj", [VP_ROLE_O] = "o_proj", \
	[VP_ROLE_GATE] = "gate_proj", [VP_ROLE_UP] = "up_proj", \
	[VP_ROLE_DOWN] = "down_proj", [VP_ROLE_Q_A] = "q_a_proj", \
	[VP_ROLE_Q_B] = "q_b_proj", [VP_ROLE_KV_A] = "kv_a_proj_with_mqa", \
	[VP_ROLE_KV_B] = "kv_b_proj" }

/*
 * One row per family.  A new family is a row here (and, if no builder
 * does what its block does, a builder in graph.c); see HACKING.md, "Add
 * an architecture".
 */
const struct vp_family_info vp_family_info[VP_FAMILY_COUNT] = {
	[VP_FAMILY_LLAMA] = {
		.source = "transformers LlamaForCausalLM (v4.40)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .logits_fp32 = true, .q_view = true,
		.lin = DECODER_LINEARS,
	},
	[VP_FAMILY_GPT2] = {
		.source = "transformers GPT2LMHeadModel (v4.40)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_LM, .fused_qkv = true, .resid_dropout = true,
		.embed_dropout = true, .q_view = true, .lin = DECODER_LINEARS,
	},
	[VP_FAMILY_BERT] = {
		.source = "transformers BertForMaskedLM (v4.40)",
		.arch = VP_ARCH_ENCODER, .block = VP_BLOCK_POST_NORM,
		.head = VP_HEAD_MLM, .mask_fp32 = true, .resid_dropout = true,
		.embed_norm = true, .embed_dropout = true, .q_view = true,
		.lin = { [VP_ROLE_Q] = "query", [VP_ROLE_K] = "key",
		    [VP_ROLE_V] = "value", [VP_ROLE_O] = "attn output",
		    [VP_ROLE_FC] = "intermediate", [VP_ROLE_DOWN] = "output" },
	},
	/*
	 * Qwen3 (dense and MoE): Llama's block with an RMSNorm over
	 * head_dim on q and k (q_norm, k_norm: one weight of head_dim
	 * each) between their projections and RoPE.  The modeling code is
	 * Llama's otherwise (it first shipped in 4.51, after every 4.4x row
	 * of hf_changes; the row is the Llama row it was copied from).
	 */
	[VP_FAMILY_QWEN3] = {
		.source = "transformers Qwen3ForCausalLM, Qwen3MoeForCausalLM "
		    "(v4.51; v5.24 read for the MoE block)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .logits_fp32 = true, .qk_norm = true,
		.q_view = true, .lin = DECODER_LINEARS,
	},
	/*
	 * Gemma-3 (text): Gemma-2's block (the sandwich norms are the
	 * model's post_norms) with Qwen3's per-head q_norm and k_norm, every
	 * RMSNorm Gemma's (1 + weight) in fp32, the embeddings scaled by
	 * sqrt(hidden), and sliding-window attention in the local layers
	 * (the model's window and global_every).  Soft-capping, off in its
	 * configs, stays a model trait as for Gemma-2.
	 */
	[VP_FAMILY_GEMMA3] = {
		.source = "transformers Gemma3ForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .logits_fp32 = true, .qk_norm = true,
		.norm_1p = true, .embed_scale = true, .q_view = true,
		.lin = DECODER_LINEARS,
	},
	/*
	 * gpt-oss: Llama's block with biases on q, k, v and o, a sink logit
	 * per head in eager attention (transformers refuses sdpa), RMSNorms
	 * whose weight multiplies in fp32 (GptOssRMSNorm: the weight times
	 * the fp32 normalized tensor, then the cast, as Gemma's), and every
	 * block's MLP experts: a biased router, top-k then a softmax over
	 * the k, the experts' interleaved gate_up projection and down
	 * projection with biases and the clamped SwiGLU (glu_clamp); local
	 * layers as the model's window says.
	 */
	[VP_FAMILY_GPT_OSS] = {
		.source = "transformers GptOssForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_LM, .repeat_kv = true, .mask_fp32 = true,
		.logits_fp32 = true, .norm_1p = true, .sinks = true,
		.router_bias = true, .glu_clamp = true, .q_view = true,
		.lin = DECODER_LINEARS,
	},
	[VP_FAMILY_TORCH_NN] = {
		.source = "torch.nn.TransformerEncoderLayer stack, linear head",
		.arch = -1, .block = VP_BLOCK_POST_NORM,
		.head = VP_HEAD_LINEAR, .fused_qkv = true,
		.resid_dropout = true, .ffn_dropout = true,
		.lin = { [VP_ROLE_QKV] = "in_proj", [VP_ROLE_O] = "out_proj",
		    [VP_ROLE_FC] = "intermediate", [VP_ROLE_DOWN] = "output" },
	},
	/*
	 * Llama 4's text model: Llama's pre-norm block with complex RoPE in
	 * fp32, an L2 norm of q and k and chunked attention in the RoPE
	 * blocks, temperature-tuned q in the NoPE ones, and an MoE that runs
	 * every expert on every token (graph.c, llama4_block).  First
	 * shipped in 4.51; the row is the code of 5.24.
	 */
	[VP_FAMILY_LLAMA4] = {
		.source = "transformers Llama4ForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_LLAMA4,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = false,
		.mask_fp32 = true, .logits_fp32 = true, .q_view = true,
		.lin = DECODER_LINEARS,
	},
	/*
	 * DeepSeek-V2 and V3 (Kimi-K2 and Moonlight run V3's code): Llama's
	 * pre-norm block and head with multi-head latent attention (mla,
	 * struct vp_mla) and DeepSeek's MoE (DeepseekV2Moe, DeepseekV3MoE:
	 * one shared MLP of n_shared_experts x moe_intermediate_size beside
	 * the routed experts, the first first_k_dense_replace blocks dense).
	 * The two differ in RoPE (V2: complex numbers in fp32, rope_complex;
	 * V3: rotate_half or interleaved pairs, rope_interleave) and in the
	 * router (V2: a softmax; V3: sigmoid scores, group-limited,
	 * router_sigmoid).  Modular code generated from Llama's: the rows
	 * are the v4.40 Llama traits the v5.24 code inherits, hf_changes
	 * bring them to 5.x (rules.c refuses releases before 5.0, whose
	 * MLA and expert code is not what is lowered).
	 */
	[VP_FAMILY_DEEPSEEK_V2] = {
		.source = "transformers DeepseekV2ForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_MLA,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .logits_fp32 = true,
		.mla = true, .rope_complex = true,
		.lin = DEEPSEEK_LINEARS,
	},
	[VP_FAMILY_DEEPSEEK_V3] = {
		.source = "transformers DeepseekV3ForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_MLA,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .logits_fp32 = true,
		.mla = true, .router_sigmoid = true,
		.lin = DEEPSEEK_LINEARS,
	},
	/*
	 * Phi-1/1.5/2 (PhiForCausalLM, transformers 5.24's
	 * models/phi/modeling_phi.py; the row is that code, not 4.40's,
	 * and rules.c refuses an earlier --transformers): one LayerNorm
	 * (input_layernorm) whose output feeds both attention and the MLP;
	 * q, k, v and dense with biases; partial RoPE on the first
	 * rotary_ndims of each head, then torch.cat with the rest; the
	 * eager softmax in fp32 (Llama's eager_attention_forward); fc1,
	 * gelu_new, fc2 with biases; resid_dropout on both branches,
	 * `attn + mlp + residual`; final_layernorm and a biased lm_head;
	 * the shared ForCausalLMLoss (upcast, padded labels).
	 */
	[VP_FAMILY_PHI] = {
		.source = "transformers PhiForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PARALLEL,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .resid_dropout = true, .embed_dropout = true,
		.loss_fp32 = true, .pad_labels = true, .sdpa_gqa = true,
		.par_norms = 1, .head_bias = true, .rope_cat = true,
		.lin = { [VP_ROLE_Q] = "q_proj", [VP_ROLE_K] = "k_proj",
		    [VP_ROLE_V] = "v_proj", [VP_ROLE_O] = "dense",
		    [VP_ROLE_FC] = "fc1", [VP_ROLE_DOWN] = "fc2" },
	},
	/*
	 * GPT-NeoX and Pythia (GPTNeoXForCausalLM, transformers 5.24's
	 * models/gpt_neox/modeling_gpt_neox.py, use_parallel_residual):
	 * input_layernorm feeds attention, post_attention_layernorm (of the
	 * same block input) the MLP; query_key_value is one projection whose
	 * (b, s, a, 3d) re-view is chunked into q, k, v; partial RoPE
	 * (rotary_pct) and torch.cat as Phi's; post_attention_dropout,
	 * post_mlp_dropout, `mlp + attn + residual`; an unbiased lm_head
	 * (embed_out), the shared ForCausalLMLoss.
	 */
	[VP_FAMILY_GPT_NEOX] = {
		.source = "transformers GPTNeoXForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PARALLEL,
		.head = VP_HEAD_LM, .fused_qkv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .resid_dropout = true, .embed_dropout = true,
		.loss_fp32 = true, .pad_labels = true, .par_norms = 2,
		.rope_cat = true,
		.lin = { [VP_ROLE_QKV] = "query_key_value", [VP_ROLE_O] = "dense",
		    [VP_ROLE_FC] = "dense_h_to_4h",
		    [VP_ROLE_DOWN] = "dense_4h_to_h" },
	},
	/*
	 * OPT (OPTForCausalLM, transformers 5.24's models/opt/modeling_opt.py,
	 * do_layer_norm_before): a pre-norm decoder with learned positions
	 * whose table has max_position_embeddings + 2 rows (the offset 2),
	 * no dropout on the embeddings; separate q, k, v (q_proj's output
	 * scaled into a copy), the eager softmax in fp32; dropout after
	 * out_proj and fc2; fc1, ReLU, fc2; the final LayerNorm, the tied
	 * lm_head, the shared ForCausalLMLoss.
	 */
	[VP_FAMILY_OPT] = {
		.source = "transformers OPTForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_LM, .softmax_fp32 = true, .mask_fp32 = true,
		.resid_dropout = true, .q_view = true, .loss_fp32 = true,
		.pad_labels = true, .q_scale = true, .pos_offset = 2,
		.lin = { [VP_ROLE_Q] = "q_proj", [VP_ROLE_K] = "k_proj",
		    [VP_ROLE_V] = "v_proj", [VP_ROLE_O] = "out_proj",
		    [VP_ROLE_FC] = "fc1", [VP_ROLE_DOWN] = "fc2" },
	},
	/*
	 * T5, Flan-T5, mT5 (models/t5/modeling_t5.py of transformers 5.24;
	 * mT5's is a copy): two pre-norm stacks sharing one embedding, the
	 * decoder's blocks with cross-attention over the encoder output
	 * (graph.c, lower_encdec).  T5LayerNorm is an RMSNorm whose product
	 * reads the input in its own dtype; no biases; the relative position
	 * bias of each stack's first block is added to every block's eager
	 * scores (T5Attention: no 1/sqrt(d) scaling); dropout on the
	 * embeddings, the attention probabilities, the MLP activation, each
	 * residual branch and each stack's output.
	 */
	[VP_FAMILY_T5] = {
		.source = "transformers T5ForConditionalGeneration, "
		    "MT5ForConditionalGeneration (v5.24)",
		.arch = VP_ARCH_ENCDEC, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_SEQ2SEQ, .resid_dropout = true,
		.ffn_dropout = true,
		.embed_dropout = true,
		.lin = { [VP_ROLE_Q] = "q", [VP_ROLE_K] = "k", [VP_ROLE_V] = "v",
		    [VP_ROLE_O] = "o", [VP_ROLE_GATE] = "wi_0",
		    [VP_ROLE_UP] = "wi_1", [VP_ROLE_FC] = "wi",
		    [VP_ROLE_DOWN] = "wo" },
	},
	/*
	 * BART (models/bart/modeling_bart.py of transformers 5.24): two
	 * post-norm stacks (BartEncoderLayer, BartDecoderLayer: attention,
	 * dropout, residual add, LayerNorm; fc1, GELU, dropout, fc2,
	 * dropout, residual add, LayerNorm), biases on every linear, one
	 * shared embedding (each stack's lookup times embed_scale) tied to
	 * the lm_head, a learned position table of max_position_embeddings
	 * + 2 rows per stack and a layernorm_embedding on each stack's
	 * input; no final norms; final_logits_bias (a buffer) added to the
	 * logits (graph.c, bart_*).
	 */
	[VP_FAMILY_BART] = {
		.source = "transformers BartForConditionalGeneration (v5.24)",
		.arch = VP_ARCH_ENCDEC, .block = VP_BLOCK_POST_NORM,
		.head = VP_HEAD_SEQ2SEQ, .resid_dropout = true,
		.ffn_dropout = true, .embed_norm = true, .embed_dropout = true,
		.q_view = true, .pos_offset = 2,
		.lin = { [VP_ROLE_Q] = "q_proj", [VP_ROLE_K] = "k_proj",
		    [VP_ROLE_V] = "v_proj", [VP_ROLE_O] = "out_proj",
		    [VP_ROLE_FC] = "fc1", [VP_ROLE_DOWN] = "fc2" },
	},
	/*
	 * Whisper (models/whisper/modeling_whisper.py of transformers
	 * 5.24): the encoder's audio front end (conv1 over the mel bins,
	 * GELU, conv2 of stride 2, GELU, plus a frozen position table of
	 * max_source_positions rows), pre-norm blocks (LayerNorm, attention
	 * with k_proj unbiased, dropout, residual add; LayerNorm, fc1, GELU,
	 * dropout, fc2, dropout, residual add), each stack's final
	 * LayerNorm, the decoder's token embedding and learned positions
	 * (max_target_positions rows), proj_out tied to the token embedding
	 * (graph.c, whisper_*).
	 */
	[VP_FAMILY_WHISPER] = {
		.source = "transformers WhisperForConditionalGeneration "
		    "(v5.24)",
		.arch = VP_ARCH_ENCDEC, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_SEQ2SEQ, .resid_dropout = true,
		.ffn_dropout = true, .embed_dropout = true,
		.lin = { [VP_ROLE_Q] = "q_proj", [VP_ROLE_K] = "k_proj",
		    [VP_ROLE_V] = "v_proj", [VP_ROLE_O] = "out_proj",
		    [VP_ROLE_FC] = "fc1", [VP_ROLE_DOWN] = "fc2" },
	},
	/*
	 * ModernBERT (ModernBertForMaskedLM): a pre-norm encoder of its own
	 * (graph.c, modernbert_block): bias-free LayerNorms (the first
	 * block's attn_norm is an Identity), a fused Wqkv, RoPE in fp32,
	 * global and local (bidirectional sliding-window) layers with the
	 * first one global, a GeGLU whose Wi holds input and gate, then the
	 * final norm and the MLM head (dense, GELU, norm, the tied decoder
	 * with its bias) whose loss upcasts the logits (ForMaskedLMLoss).
	 * No padding: the class's padded path (5.24 has no unpadding).
	 */
	[VP_FAMILY_MODERNBERT] = {
		.source = "transformers ModernBertForMaskedLM (v5.24)",
		.arch = VP_ARCH_ENCODER, .block = VP_BLOCK_MODERNBERT,
		.head = VP_HEAD_MODERNBERT_MLM, .fused_qkv = true,
		.softmax_fp32 = true, .embed_norm = true, .q_view = true,
		.mask_skip = true, .norm_nobias = true, .global_first = true,
		.softmax_convert = true,
		/* Wi holds input (up) and gate: the matrix list's gate
		 * and up are its halves. */
		.lin = { [VP_ROLE_QKV] = "Wqkv", [VP_ROLE_O] = "Wo",
		    [VP_ROLE_GATE] = "Wi", [VP_ROLE_UP] = "Wi",
		    [VP_ROLE_FC] = "Wi", [VP_ROLE_DOWN] = "mlp Wo" },
	},
	/*
	 * DeBERTa-v2 and -v3 (DebertaV2ForMaskedLM with its default legacy
	 * MLM head, BERT's): BERT's post-norm layer with disentangled
	 * attention (graph.c, deberta_block): q, k and v made contiguous
	 * per head, the content scores plus the c2p and p2c terms, each a
	 * bmm against the LayerNormed relative embeddings projected by the
	 * same query_proj and key_proj (share_att_key) and a gather over
	 * the relative positions, masked_fill with the input mask, softmax
	 * in the scores' dtype; the embeddings normed and multiplied by the
	 * mask.  Eager only (the class has no other path).
	 */
	[VP_FAMILY_DEBERTA_V2] = {
		.source = "transformers DebertaV2ForMaskedLM (v5.24)",
		.arch = VP_ARCH_ENCODER, .block = VP_BLOCK_DEBERTA,
		.head = VP_HEAD_MLM, .embed_norm = true, .embed_mask = true,
		.lin = { [VP_ROLE_Q] = "query_proj", [VP_ROLE_K] = "key_proj",
		    [VP_ROLE_V] = "value_proj", [VP_ROLE_O] = "attn output",
		    [VP_ROLE_FC] = "intermediate", [VP_ROLE_DOWN] = "output" },
	},
	/*
	 * ViT (ViTForImageClassification, transformers 5.24's
	 * models/vit/modeling_vit.py; the row is that code): the patch
	 * embedding (a Conv2d of stride patch_size), the CLS token
	 * concatenated in front, the position table added (interpolation
	 * off), dropout; pre-norm blocks (layernorm_before, q, k, v with
	 * qkv_bias, o_proj with a bias, the eager softmax in fp32,
	 * layernorm_after, fc1, GELU, fc2, dropout on both branches); the
	 * final layernorm over every token, the classifier on the CLS
	 * token's row, cross-entropy over the labels (graph.c, vit_*).  No
	 * attention mask (create_bidirectional_mask gives None).
	 */
	[VP_FAMILY_VIT] = {
		.source = "transformers ViTForImageClassification (v5.24)",
		.arch = VP_ARCH_ENCODER, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_CLS, .softmax_fp32 = true, .resid_dropout = true,
		.embed_dropout = true, .q_view = true, .mask_skip = true,
		.lin = { [VP_ROLE_Q] = "q_proj", [VP_ROLE_K] = "k_proj",
		    [VP_ROLE_V] = "v_proj", [VP_ROLE_O] = "o_proj",
		    [VP_ROLE_FC] = "fc1", [VP_ROLE_DOWN] = "fc2" },
	},
	/*
	 * CLIP (CLIPModel, transformers 5.24's models/clip/modeling_clip.py):
	 * two towers of CLIPEncoderLayer (pre-norm: layer_norm1, biased q,
	 * k, v and out_proj, layer_norm2, fc1, quick_gelu, fc2), the text
	 * one causal with learned positions and its final LayerNorm, the
	 * vision one (struct vp_vision) with a bias-free patch convolution,
	 * the class embedding, pre_layrnorm and post_layernorm on the CLS
	 * token; the projections and the symmetric contrastive loss
	 * (graph.c, lower_clip).  The model's sizes are the text tower's.
	 */
	[VP_FAMILY_CLIP] = {
		.source = "transformers CLIPModel (v5.24)",
		.arch = VP_ARCH_ENCODER, .block = VP_BLOCK_PRE_NORM,
		.head = VP_HEAD_CONTRASTIVE, .softmax_fp32 = true,
		.mask_fp32 = true, .q_view = true,
		.lin = { [VP_ROLE_Q] = "q_proj", [VP_ROLE_K] = "k_proj",
		    [VP_ROLE_V] = "v_proj", [VP_ROLE_O] = "out_proj",
		    [VP_ROLE_FC] = "fc1", [VP_ROLE_DOWN] = "fc2" },
	},
	/*
	 * GPT-J (GPTJForCausalLM, transformers 5.24's
	 * models/gptj/modeling_gptj.py): Phi's parallel block (one ln_1,
	 * `attn + mlp + residual`) with unbiased q, k, v and out_proj, a
	 * biased fc_in / fc_out and lm_head; RoPE (rotate_every_two: the
	 * same tensors as rotate_half) on the first rotary_dim dims of each
	 * (b, s, a, d) head, then torch.cat and a transpose, so q is a view
	 * and a fused kernel's output transposes back without a copy; the
	 * eager scores of fp32 copies of q and k, their softmax cast to v's
	 * dtype (qk_fp32); cos and sin gathered from the embed_positions
	 * buffer and repeat_interleaved again in each of q's and k's
	 * apply_rotary_pos_emb (sincos_table); the shared ForCausalLMLoss.
	 */
	[VP_FAMILY_GPTJ] = {
		.source = "transformers GPTJForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PARALLEL,
		.head = VP_HEAD_LM, .mask_fp32 = true, .resid_dropout = true,
		.embed_dropout = true, .q_view = true, .loss_fp32 = true,
		.pad_labels = true, .par_norms = 1, .head_bias = true,
		.rope_cat = true, .qk_fp32 = true, .sincos_table = true,
		.causal_mask = true,
		.lin = { [VP_ROLE_Q] = "q_proj", [VP_ROLE_K] = "k_proj",
		    [VP_ROLE_V] = "v_proj", [VP_ROLE_O] = "out_proj",
		    [VP_ROLE_FC] = "fc_in", [VP_ROLE_DOWN] = "fc_out" },
	},
	/*
	 * Falcon (FalconForCausalLM, transformers 5.24's
	 * models/falcon/modeling_falcon.py, RoPE, parallel_attn or the new
	 * decoder architecture): input_layernorm (or ln_attn and ln_mlp,
	 * par_norms 2) of the block input; one query_key_value projection
	 * (FalconLinear: input @ weight.T) split by _split_heads as
	 * vp_model.qkv_split says; Llama's RoPE over the whole head (no
	 * cat); sdpa with a materialized bool mask (allow_is_causal_skip
	 * false); eager scores softmaxed in the hidden states' dtype; dense,
	 * the MLP (dense_h_to_4h, GELU, dense_4h_to_h), mlp += attn, then
	 * residual + dropout; no dropout on the embeddings; the tied
	 * lm_head, the shared ForCausalLMLoss.
	 */
	[VP_FAMILY_FALCON] = {
		.source = "transformers FalconForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PARALLEL,
		.head = VP_HEAD_LM, .fused_qkv = true, .repeat_kv = true,
		.mask_fp32 = true, .loss_fp32 = true, .pad_labels = true,
		.par_norms = 1, .sdpa_mask = true, .causal_mask = true,
		.q_view = true, .scores_held = true,
		.lin = { [VP_ROLE_QKV] = "query_key_value",
		    [VP_ROLE_O] = "dense", [VP_ROLE_FC] = "dense_h_to_4h",
		    [VP_ROLE_DOWN] = "dense_4h_to_h" },
	},
	/*
	 * Cohere / Command-R (CohereForCausalLM, transformers 5.24's
	 * models/cohere/modeling_cohere.py, use_qk_norm false): one
	 * CohereLayerNorm (a LayerNorm without bias written in Python, in
	 * fp32) feeds attention and the gated SiLU MLP, `residual + attn +
	 * mlp`; Llama's attention (eager softmax in fp32, repeat_kv, sdpa
	 * with enable_gqa) with RoPE on interleaved pairs (rotate_half's
	 * stack: the same tensors as Llama's cat); no dropout on the
	 * embeddings; a tied lm_head whose logits are scaled into a copy
	 * (logit_scale); the shared ForCausalLMLoss.
	 */
	[VP_FAMILY_COHERE] = {
		.source = "transformers CohereForCausalLM (v5.24)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_PARALLEL,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .q_view = true, .loss_fp32 = true,
		.pad_labels = true, .sdpa_gqa = true, .par_norms = 1,
		.cohere_ln = true, .logit_scale = true, .causal_mask = true,
		.lin = DECODER_LINEARS,
	},
	/*
	 * Mamba-2 (Mamba2ForCausalLM, transformers 5.24's
	 * models/mamba2/modeling_mamba2.py, torch_forward: the chunked SSD
	 * scan in PyTorch, what runs without the mamba_ssm and causal_conv1d
	 * kernels): each block is an RMSNorm, the mixer and the residual
	 * (graph.c, mamba2_block); norm_f, the untied lm_head on the
	 * hidden states cast to its dtype, fp32 logits, the shared
	 * ForCausalLMLoss (whose upcast of fp32 logits is no copy).  No attention and no MLP: lin[] is empty (the
	 * mixer's in_proj and out_proj are not LoRA targets here).
	 */
	[VP_FAMILY_MAMBA2] = {
		.source = "transformers Mamba2ForCausalLM (v5.24, torch_forward)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_MAMBA2,
		.head = VP_HEAD_LM, .logits_fp32 = true, .pad_labels = true,
	},
	/*
	 * Bamba (BambaForCausalLM, transformers 5.24's
	 * models/bamba/modeling_bamba.py): a Mamba-2 hybrid whose blocks are
	 * Llama's pre-norm ones (RMSNorm, a mixer, the residual, RMSNorm,
	 * SwiGLU, the residual) with a Mamba-2 mixer (Mamba2Mixer's
	 * torch_forward, no fp32 residual) in every block but the attention
	 * ones (the model's ssm.attn), whose attention is Llama's with
	 * partial RoPE (half of each head, rotated then concatenated); the
	 * lm_head and the shared ForCausalLMLoss.  The Llama traits come
	 * through hf_changes (LLAMAS).
	 */
	[VP_FAMILY_BAMBA] = {
		.source = "transformers BambaForCausalLM (v5.24, torch_forward)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_HYBRID,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .logits_fp32 = true, .rope_cat = true,
		.lin = DECODER_LINEARS,
	},
	/*
	 * Nemotron-H (NemotronHForCausalLM, transformers 5.24's
	 * models/nemotron_h/modeling_nemotron_h.py): blocks of one mixer
	 * each (NemotronHBlock: norm, the mixer, the residual), the mixer
	 * by the block's character of hybrid_override_pattern (the model's
	 * ssm.pattern): 'M' Bamba's Mamba-2 mixer (the same torch_forward),
	 * '*' attention without positions (q, k, v, o without biases,
	 * eager_attention_forward or sdpa), '-' an MLP (up_proj, relu2,
	 * down_proj).  NemotronHRMSNorm multiplies by the weight in fp32
	 * and casts the product back (Gemma's norm_1p saves the same: the
	 * fp32 normalized tensor); the model's forward upcasts the logits
	 * itself (`.float()`, rebound) and the loss pads the labels.  The
	 * sdpa integration of 5.24 passes enable_gqa (sdpa_gqa).
	 */
	[VP_FAMILY_NEMOTRON_H] = {
		.source = "transformers NemotronHForCausalLM (v5.24, "
		    "torch_forward)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_NEMOTRON_H,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .logits_fp32 = true, .pad_labels = true,
		.norm_1p = true, .sdpa_gqa = true, .q_view = true,
		.lin = { [VP_ROLE_Q] = "q_proj", [VP_ROLE_K] = "k_proj",
		    [VP_ROLE_V] = "v_proj", [VP_ROLE_O] = "o_proj",
		    [VP_ROLE_FC] = "up_proj", [VP_ROLE_DOWN] = "down_proj" },
	},
	/*
	 * Zamba2 (Zamba2ForCausalLM, transformers 5.24's
	 * models/zamba2/modeling_zamba2.py): Mamba-2 blocks
	 * (Zamba2MambaDecoderLayer: norm, Bamba's mixer, the residual) and
	 * hybrid blocks (Zamba2HybridLayer) that first run a transformer
	 * block shared by every num_mem_blocks-th hybrid block on the
	 * concatenation of the hidden states with a clone of the
	 * embeddings (2 x hidden wide: its RMSNorm, q, k, v of heads x
	 * 2 hidden / heads, RoPE with use_mem_rope, eager or sdpa
	 * attention, o_proj back to hidden, an RMSNorm, gate_up_proj, GELU
	 * gate times up, down_proj; no residual), with the call's own
	 * adapters on q, k, v and gate_up_proj, then their own linear, whose
	 * output is added to the Mamba-2 block's input.  The block builder
	 * is its own (zamba2_block); its linears are not LoRA targets.
	 */
	[VP_FAMILY_ZAMBA2] = {
		.source = "transformers Zamba2ForCausalLM (v5.24, "
		    "torch_forward)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_ZAMBA2,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .logits_fp32 = true, .q_view = true,
	},
	/*
	 * Jamba (JambaForCausalLM, transformers 5.24's
	 * models/jamba/modeling_jamba.py, without mamba_ssm): pre-norm
	 * blocks (input_layernorm, a mixer, the residual, pre_ff_layernorm,
	 * the feed-forward, the residual), the mixer attention in the
	 * model's ssm.attn blocks (attn_layer_period, attn_layer_offset:
	 * Llama's attention without positions, q, k, v, o without biases)
	 * and JambaMambaMixer, a Mamba-1 mixer, in the others (graph.c,
	 * mamba1_mixer: mamba_selective_scan's recurrent loop over the
	 * tokens); the feed-forward Mixtral-style experts on the sparse step
	 * (JambaSparseMoeBlock: a softmax router, top-k left unnormalized,
	 * grouped_mm experts) or a SwiGLU MLP.  The code is 5.24's, so the
	 * traits Llama's row gets through hf_changes are set here.
	 */
	[VP_FAMILY_JAMBA] = {
		.source = "transformers JambaForCausalLM (v5.24, without "
		    "mamba_ssm)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_JAMBA,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .loss_fp32 = true, .pad_labels = true,
		.sdpa_gqa = true, .q_view = true, .lin = DECODER_LINEARS,
	},
	/*
	 * Mamba (MambaForCausalLM, transformers 5.24's
	 * models/mamba/modeling_mamba.py, without mamba_ssm: MambaMixer's
	 * mamba_inner_fn is then None and the mixer runs the same PyTorch
	 * path as Jamba's, mamba_selective_scan's loop, without the dt, B
	 * and C norms): each block an RMSNorm of the input cast to its
	 * weight's dtype, the mixer, the residual (fp32 with
	 * residual_in_fp32), as Mamba2Block; norm_f, the lm_head on the
	 * hidden states cast to its dtype, fp32 logits, ForCausalLMLoss.
	 * No attention and no MLP: lin[] is empty.
	 */
	[VP_FAMILY_MAMBA] = {
		.source = "transformers MambaForCausalLM (v5.24, without "
		    "mamba_ssm)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_MAMBA1,
		.head = VP_HEAD_LM, .logits_fp32 = true, .pad_labels = true,
	},
	/*
	 * Falcon-Mamba (FalconMambaForCausalLM, transformers 5.24's
	 * models/falcon_mamba/modeling_falcon_mamba.py): Mamba's block,
	 * mixer and head, with FalconMambaWeightlessRMSNorm on dt, B and C
	 * after x_proj (to fp32, the RMS normalization, back to the input's
	 * dtype; no weight: its "weight" is a non-persistent buffer of ones,
	 * I + 2 state per block, not counted).
	 */
	[VP_FAMILY_FALCON_MAMBA] = {
		.source = "transformers FalconMambaForCausalLM (v5.24, without "
		    "mamba_ssm)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_MAMBA1,
		.head = VP_HEAD_LM, .logits_fp32 = true, .pad_labels = true,
	},
	/*
	 * Zamba (ZambaForCausalLM, transformers 5.24's
	 * models/zamba/modeling_zamba.py, without mamba_ssm): Zamba2's
	 * builder (zamba2_block) with one shared transformer block (no
	 * adapters, no positions, gate_proj and up_proj apart) and, for the
	 * Mamba blocks, ZambaMambaMixer: Mamba-1 split into ssm.heads mamba
	 * heads, each with its own x_proj and dt_proj weights and its own
	 * mamba_selective_scan loop (graph.c, zamba_mixer).
	 */
	[VP_FAMILY_ZAMBA] = {
		.source = "transformers ZambaForCausalLM (v5.24, without "
		    "mamba_ssm)",
		.arch = VP_ARCH_DECODER, .block = VP_BLOCK_ZAMBA2,
		.head = VP_HEAD_LM, .repeat_kv = true, .softmax_fp32 = true,
		.mask_fp32 = true, .logits_fp32 = true, .q_view = true,
	},
};

enum vp_family
vp_model_family(const struct vp_model *m)
{
	if (m->family >= 0) {
		assert(m->family < VP_FAMILY_COUNT);
		return (enum vp_family)m->family;
	}
	if (m->impl == VP_IMPL_TORCH_NN)
		return VP_FAMILY_TORCH_NN;
	if (m->arch == VP_ARCH_ENCODER)
		return VP_FAMILY_BERT;
	if (m->pos == VP_POS_LEARNED)
		return VP_FAMILY_GPT2;
	return VP_FAMILY_LLAMA;
}

bool
vp_model_runs_hf(const struct vp_model *m)
{
	return m->impl == VP_IMPL_HF;
}

struct vp_family_info
vp_model_traits(const struct vp_model *m)
{
	struct vp_family_info t = vp_family_info[vp_model_family(m)];

	/* Megatron-core's attention has one linear_qkv.  Only its decoder
	 * layout is modelled; a Megatron BERT lowers as Hugging Face's. */
	if (m->impl == VP_IMPL_MEGATRON && t.block == VP_BLOCK_PRE_NORM)
		t.fused_qkv = true;
	/* Falcon's new decoder architecture: ln_attn and ln_mlp. */
	if (m->par_norms)
		t.par_norms = m->par_norms;
	/* A Mamba-2 block has neither attention nor MLP linears (and a
	 * hybrid's attention blocks are Hugging Face's, never fused). */
	if (t.block == VP_BLOCK_MAMBA2 || t.block == VP_BLOCK_HYBRID ||
	    t.block == VP_BLOCK_NEMOTRON_H || t.block == VP_BLOCK_ZAMBA2 ||
	    t.block == VP_BLOCK_MAMBA1)
		return t;
	assert(t.lin[t.fused_qkv ? VP_ROLE_QKV : VP_ROLE_Q] != NULL);
	assert(t.lin[VP_ROLE_O] != NULL && t.lin[VP_ROLE_DOWN] != NULL);
	return t;
}

/*
 * What later transformers releases changed in the code the rows describe
 * (v4.40), each from the first release that has it: found by reading the
 * released wheels from PyPI, where the release before still has the old
 * code (a patch release is taken to change nothing of this).  A change
 * sets one bool of the row for the families it names.
 */
#define FAM(f) (1u << VP_FAMILY_##f)
#define TRAIT(f) offsetof(struct vp_family_info, f)
/* Qwen3's and DeepSeek's modeling files are generated from Llama's
 * (modular transformers): every change to Llama's code is one to theirs. */
#define LLAMAS (FAM(LLAMA) | FAM(QWEN3) | FAM(LLAMA4) | FAM(GEMMA3) | \
    FAM(GPT_OSS) | FAM(DEEPSEEK_V2) | FAM(DEEPSEEK_V3) | FAM(BAMBA))
static const struct hf_change {
	unsigned since;		/* transformers major * 100 + minor */
	unsigned families;	/* FAM() bits */
	size_t trait;		/* a bool of struct vp_family_info */
	bool value;
} hf_changes[] = {
	/*
	 * loss/loss_utils.py's ForCausalLMLoss upcasts the logits it gets
	 * (`logits = logits.float()`); Llama's forward calls it from 4.46
	 * with the logits it keeps (4.45 and before: `logits =
	 * logits.float()` in the model, which let the 16-bit ones go).
	 * GPT-2 calls it from 4.48 (4.47.1 still ran its own
	 * CrossEntropyLoss on 16-bit logits: no upcast at all).
	 */
	{ 446, LLAMAS, TRAIT(logits_fp32), false },
	{ 446, LLAMAS, TRAIT(loss_fp32), true },
	{ 448, FAM(GPT2), TRAIT(loss_fp32), true },
	/*
	 * integrations/sdpa_attention.py (4.48: Llama and GPT-2 go through
	 * it) calls .contiguous() on q, k and v before
	 * F.scaled_dot_product_attention (the workaround for pytorch#112577);
	 * 4.56 no longer does (4.55.0 still did).  BERT kept its own sdpa
	 * class, which does so only on CUDA with a mask, until 5.0, whose
	 * integration no longer does.
	 */
	{ 448, LLAMAS | FAM(GPT2), TRAIT(sdpa_contiguous), true },
	/*
	 * 4.49: ForCausalLMLoss pads the labels with ignore_index and
	 * shifts them (`nn.functional.pad(labels, (0, 1))`,
	 * huggingface/transformers#35646) where 4.48.3 copied
	 * `logits[..., :-1, :].contiguous()`.
	 */
	{ 449, LLAMAS | FAM(GPT2), TRAIT(pad_labels), true },
	/*
	 * 4.54: sdpa_attention_forward passes enable_gqa=True instead of
	 * calling repeat_kv when use_gqa_in_sdpa allows it (PyTorch >= 2.5,
	 * no mask; #39412; 4.53.3 still repeated).  graph.c checks the
	 * PyTorch side.
	 */
	{ 454, LLAMAS, TRAIT(sdpa_gqa), true },
	/*
	 * 4.55: GPT-2's mask comes from masking_utils.create_causal_mask,
	 * which gives eager attention an additive float mask in the
	 * embeddings' dtype (fp32 under autocast): the scores, and so the
	 * softmax, become fp32, then `.type(value.dtype)` copies them back.
	 * 4.54 passed no mask without padding (torch.where in the scores'
	 * dtype).
	 */
	{ 455, FAM(GPT2), TRAIT(mask_fp32), true },
	{ 456, LLAMAS | FAM(GPT2), TRAIT(sdpa_contiguous), false },
	/*
	 * 5.0: BERT's mask comes from masking_utils.create_bidirectional_mask,
	 * None when nothing is padded (allow_is_bidirectional_skip): no
	 * additive mask at all, where 4.57 always added the extended
	 * (b, 1, 1, s) mask in the parameters' dtype.
	 */
	{ 500, FAM(BERT), TRAIT(mask_fp32), false },
	{ 500, FAM(BERT), TRAIT(mask_skip), true },
};
#undef TRAIT
#undef LLAMAS

struct vp_family_info
vp_model_traits_at(const struct vp_model *m, unsigned transformers)
{
	struct vp_family_info t = vp_model_traits(m);
	unsigned fam = 1u << vp_model_family(m);
	size_t i;

	if (!vp_model_runs_hf(m))
		return t;
	/* In release order, so a later change to a trait wins. */
	for (i = 0; i < VP_NELEM(hf_changes); i++) {
		const struct hf_change *c = &hf_changes[i];
		bool *b = (bool *)((char *)&t + c->trait);

		assert(i == 0 || hf_changes[i - 1].since <= c->since);
		if (c->since <= transformers && (c->families & fam))
			*b = c->value;
	}
	return t;
}
#undef FAM

void
vp_model_init(struct vp_model *m)
{
	memset(m, 0, sizeof *m);
	m->arch = VP_ARCH_DECODER;
	m->act = VP_ACT_GELU;
	m->norm = VP_NORM_LAYERNORM;
	m->qkv_bias = -1;
	m->o_bias = -1;
	m->pos = VP_POS_ROPE;
	m->impl = VP_IMPL_HF;
	m->family = -1;
	m->train.precision = -1;
	m->train.optimizer = -1;
}

void
vp_model_free(struct vp_model *m)
{
	if (m == NULL)
		return;
	free(m->name);
	free(m->file);
	m->name = m->file = NULL;
	vp_lgraph_free(m->lg);
	m->lg = NULL;
}

bool
vp_moe_layer_sparse(const struct vp_model *m, uint64_t l)
{
	uint32_t i;

	if (!m->has_moe || l < m->moe.first_dense)
		return false;
	for (i = 0; i < m->moe.n_mlp_only; i++)
		if (m->moe.mlp_only[i] == l)
			return false;
	return m->moe.sparse_step <= 1 || (l + 1) % m->moe.sparse_step == 0;
}

bool
vp_block_nope(const struct vp_model *m, uint64_t l)
{
	return vp_model_family(m) == VP_FAMILY_LLAMA4 && m->global_every > 0 &&
	    (l + 1) % m->global_every == 0;
}

uint64_t
vp_moe_dense_blocks(const struct vp_model *m, uint64_t first, uint64_t count)
{
	uint64_t l, n = 0;

	if (!m->has_moe)
		return count;
	/* Closed form for the common case: only the first blocks dense. */
	if (m->moe.sparse_step <= 1 && m->moe.n_mlp_only == 0) {
		if (m->moe.first_dense <= first)
			return 0;
		return m->moe.first_dense - first < count ?
		    m->moe.first_dense - first : count;
	}
	for (l = first; l < first + count; l++)
		n += !vp_moe_layer_sparse(m, l);
	return n;
}

bool
vp_layer_local(const struct vp_model *m, uint64_t l)
{
	if (m->window == 0 || m->global_every <= 1)
		return false;
	if (m->lg == NULL && vp_family_info[vp_model_family(m)].global_first)
		return l % m->global_every != 0;
	return (l + 1) % m->global_every != 0;
}

bool
vp_act_gated(enum vp_act a)
{
	return a == VP_ACT_SWIGLU || a == VP_ACT_GEGLU;
}

static void
say_divisors(struct vp_buf *b, uint64_t n, uint64_t v)
{
	uint64_t lo, hi;

	vp_nearest_divisors(n, v, &lo, &hi);
	if (lo && hi && lo != hi)
		vp_buf_printf(b, "; nearest valid: %llu or %llu",
		    (unsigned long long)lo, (unsigned long long)hi);
	else if (lo || hi)
		vp_buf_printf(b, "; nearest valid: %llu",
		    (unsigned long long)(lo ? lo : hi));
}

int
vp_model_validate(struct vp_model *m, struct vp_diags *d)
{
	struct vp_param_count pc;
	struct vp_buf b;
	size_t before = vp_diags_count(d, VP_ERROR);

	/* A layer graph was checked as it was read (vp_lgraph_check); it
	 * is one "block" with no transformer sizes. */
	if (m->lg != NULL) {
		m->layers = 1;
		return vp_model_params(m, &pc), 0;
	}
	vp_buf_init(&b);
	if (m->kv_heads == 0)
		m->kv_heads = m->heads;
	if (m->qkv_bias < 0)
		m->qkv_bias = m->bias;
	if (m->o_bias < 0)
		m->o_bias = m->bias;
	if (m->layers == 0 || m->hidden == 0 || m->heads == 0 || m->ffn == 0 ||
	    m->vocab == 0) {
		vp_diag_add(d, m->file, m->where[VP_F_HIDDEN], VP_ERROR,
		    "'layers', 'hidden', 'heads', 'ffn' and 'vocab' must all be "
		    "at least 1");
		vp_buf_free(&b);
		return -1;
	}
	if (m->head_dim == 0) {
		if (m->heads == 0 || m->hidden % m->heads != 0) {
			vp_buf_printf(&b, "'heads' (%llu) must divide 'hidden' "
			    "(%llu) when 'head_dim' is not given",
			    (unsigned long long)m->heads,
			    (unsigned long long)m->hidden);
			say_divisors(&b, m->hidden, m->heads);
			vp_diag_add(d, m->file, m->where[VP_F_HEADS], VP_ERROR,
			    "%s", b.s);
		} else {
			m->head_dim = m->hidden / m->heads;
		}
	}
	/* Partial RoPE rotates pairs of the first rotary_dim dims. */
	if (m->rotary_dim != 0 && m->head_dim != 0 &&
	    (m->rotary_dim > m->head_dim || m->rotary_dim % 2 != 0 ||
	    m->pos != VP_POS_ROPE))
		vp_diag_add(d, m->file, m->where[VP_F_ROTARY_DIM], VP_ERROR,
		    "'rotary_dim' (%llu) must be even, at most 'head_dim' "
		    "(%llu), and needs 'position: rope'",
		    (unsigned long long)m->rotary_dim,
		    (unsigned long long)m->head_dim);
	if (m->heads != 0 && m->kv_heads != 0 && m->heads % m->kv_heads != 0) {
		b.len = 0;
		vp_buf_printf(&b, "'kv_heads' (%llu) must divide 'heads' (%llu)",
		    (unsigned long long)m->kv_heads,
		    (unsigned long long)m->heads);
		say_divisors(&b, m->heads, m->kv_heads);
		vp_diag_add(d, m->file, m->where[VP_F_KV_HEADS], VP_ERROR, "%s",
		    b.s);
	}
	if (m->family >= 0) {
		const struct vp_family_info *fi = &vp_family_info[m->family];

		if (fi->arch >= 0 && (enum vp_arch)fi->arch != m->arch)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family '%s' needs 'architecture: %s', not %s",
			    vp_family_names[m->family],
			    vp_arch_names[fi->arch], vp_arch_names[m->arch]);
		if ((m->family == VP_FAMILY_TORCH_NN) !=
		    (m->impl == VP_IMPL_TORCH_NN))
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family '%s' does not go with 'implementation: "
			    "%s'; torch-nn is both or neither",
			    vp_family_names[m->family], vp_impl_names[m->impl]);
	}
	if (m->mla.kv_rank && !vp_family_info[vp_model_family(m)].mla)
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "'mla' needs a family with multi-head latent attention "
		    "(deepseek-v2 or deepseek-v3), not %s",
		    vp_family_names[vp_model_family(m)]);
	if (m->family >= 0 && vp_family_info[m->family].mla) {
		const struct vp_mla *a = &m->mla;

		if (a->kv_rank == 0 || a->rope_dim == 0 || a->nope_dim == 0 ||
		    a->v_dim == 0 || a->rope_dim % 2 != 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family '%s' needs 'kv_lora_rank', "
			    "'qk_nope_head_dim', 'v_head_dim' and an even "
			    "'qk_rope_head_dim', all at least 1",
			    vp_family_names[m->family]);
		else if (m->head_dim != a->nope_dim + a->rope_dim)
			vp_diag_add(d, m->file, m->where[VP_F_HEAD_DIM],
			    VP_ERROR, "'head_dim' (%llu) of an MLA model must "
			    "be qk_nope_head_dim + qk_rope_head_dim (%llu)",
			    (unsigned long long)m->head_dim,
			    (unsigned long long)(a->nope_dim + a->rope_dim));
		if (m->kv_heads != m->heads)
			vp_diag_add(d, m->file, m->where[VP_F_KV_HEADS],
			    VP_ERROR, "num_key_value_heads (%llu) must equal "
			    "num_attention_heads (%llu) in an MLA model: "
			    "kv_b_proj makes a key and a value per head, and "
			    "repeating them again is not modelled",
			    (unsigned long long)m->kv_heads,
			    (unsigned long long)m->heads);
	}
	/* Falcon's split, when no config said it: one kv head is
	 * multi-query, as many as the heads one group per head. */
	if (vp_model_family(m) == VP_FAMILY_FALCON && m->qkv_split == 0)
		m->qkv_split = m->kv_heads == m->heads ? VP_QKV_VIEWS :
		    m->kv_heads == 1 ? VP_QKV_MULTI_QUERY : VP_QKV_GROUPS;
	if (m->rotary_dim != 0 && !vp_family_info[vp_model_family(m)].rope_cat)
		vp_diag_add(d, m->file, m->where[VP_F_ROTARY_DIM], VP_ERROR,
		    "'rotary_dim' (partial RoPE) is modelled for the phi, "
		    "gpt-neox and gptj families only, not %s",
		    vp_family_names[vp_model_family(m)]);
	/* Mamba-2: heads x head_dim is the inner width (ffn), which the
	 * groups of B and C and the heads split evenly; no attention, MLP,
	 * experts or positions. */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_MAMBA2) {
		struct vp_ssm *q = &m->ssm;

		if ((q->heads && q->heads != m->heads) || (q->head_dim &&
		    q->head_dim != m->head_dim))
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "a mamba2 model's SSM heads are its 'heads' and "
			    "'head_dim'; 'ssm' gives %llu of %llu",
			    (unsigned long long)q->heads,
			    (unsigned long long)q->head_dim);
		q->heads = m->heads;
		q->head_dim = m->head_dim;
		q->proj_bias = m->bias;

		if (q->state == 0 || q->groups == 0 || q->conv_kernel == 0 ||
		    q->chunk == 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'mamba2' needs 'ssm' with 'state', "
			    "'groups', 'conv_kernel' and 'chunk', all at "
			    "least 1");
		else if (m->heads * m->head_dim != m->ffn ||
		    m->heads % q->groups != 0)
			vp_diag_add(d, m->file, m->where[VP_F_FFN], VP_ERROR,
			    "a mamba2 model's 'ffn' (%llu, the mixer's inner "
			    "width) must be 'heads' x 'head_dim' (%llu x "
			    "%llu), and 'ssm.groups' (%llu) must divide "
			    "'heads'", (unsigned long long)m->ffn,
			    (unsigned long long)m->heads,
			    (unsigned long long)m->head_dim,
			    (unsigned long long)q->groups);
		if (m->has_moe || m->post_norms || m->attn_softcap ||
		    m->logit_softcap || m->window || m->norm !=
		    VP_NORM_RMSNORM || m->pos != VP_POS_NONE)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'mamba2' is modelled with 'norm: "
			    "rmsnorm', 'position: none' and no moe, "
			    "post_norms, soft-capping or sliding window");
	} else if (vp_family_info[vp_model_family(m)].block ==
	    VP_BLOCK_HYBRID) {
		const struct vp_ssm *q = &m->ssm;
		uint32_t i;

		if (q->state == 0 || q->groups == 0 || q->conv_kernel == 0 ||
		    q->chunk == 0 || q->heads == 0 || q->head_dim == 0 ||
		    q->heads % q->groups != 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family '%s' needs 'ssm' with 'heads', 'head_dim', "
			    "'state', 'groups' (dividing 'heads'), "
			    "'conv_kernel' and 'chunk', all at least 1",
			    vp_family_names[vp_model_family(m)]);
		for (i = 0; i < q->n_attn; i++)
			if (q->attn[i] >= m->layers)
				vp_diag_add(d, m->file, m->where[VP_F_FAMILY],
				    VP_ERROR, "attention block %u of the "
				    "hybrid is past its %llu layers",
				    (unsigned)q->attn[i],
				    (unsigned long long)m->layers);
		if (m->has_moe || m->post_norms || m->attn_softcap ||
		    m->logit_softcap || m->window || m->norm !=
		    VP_NORM_RMSNORM || m->pos != VP_POS_ROPE ||
		    !vp_act_gated(m->act))
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family '%s' is modelled with 'norm: rmsnorm', "
			    "'position: rope', a gated MLP and no moe, "
			    "post_norms, soft-capping or sliding window",
			    vp_family_names[vp_model_family(m)]);
	} else if (vp_family_info[vp_model_family(m)].block ==
	    VP_BLOCK_NEMOTRON_H) {
		const struct vp_ssm *q = &m->ssm;
		size_t len = strlen(q->pattern);

		if (q->state == 0 || q->groups == 0 || q->conv_kernel == 0 ||
		    q->chunk == 0 || q->heads == 0 || q->head_dim == 0 ||
		    q->heads % q->groups != 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'nemotron-h' needs 'ssm' with 'heads', "
			    "'head_dim', 'state', 'groups' (dividing 'heads'), "
			    "'conv_kernel' and 'chunk', all at least 1");
		if (len != m->layers || strspn(q->pattern, "M*-") != len)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'nemotron-h' needs 'ssm.pattern', one "
			    "character per block ('M' Mamba-2, '*' attention, "
			    "'-' MLP; %llu layers), not \"%s\"",
			    (unsigned long long)m->layers, q->pattern);
		if (m->has_moe || m->post_norms || m->attn_softcap ||
		    m->logit_softcap || m->window || m->norm !=
		    VP_NORM_RMSNORM || m->pos != VP_POS_NONE ||
		    m->act != VP_ACT_RELU2)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'nemotron-h' is modelled with 'norm: "
			    "rmsnorm', 'position: none', 'activation: relu2' "
			    "and no moe, post_norms, soft-capping or sliding "
			    "window");
	} else if (vp_model_family(m) == VP_FAMILY_ZAMBA) {
		const struct vp_ssm *q = &m->ssm;
		size_t len = strlen(q->pattern);

		if (q->state == 0 || q->conv_kernel == 0 || q->expand == 0 ||
		    q->dt_rank == 0 || q->heads == 0 || q->head_dim == 0 ||
		    q->heads * q->head_dim != q->expand * m->hidden ||
		    q->heads > 6 || q->groups)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba' needs 'ssm' with 'heads' (the "
			    "mamba heads, 1 to 6) of 'head_dim' making "
			    "'expand' x hidden, 'state', 'conv_kernel' and "
			    "'dt_rank', all at least 1, and no 'groups'");
		if (len != m->layers || strspn(q->pattern, "MH") != len ||
		    strchr(q->pattern, 'H') == NULL)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba' needs 'ssm.pattern', one "
			    "character per block ('M' Mamba, 'H' hybrid, at "
			    "least one; %llu layers), not \"%s\"",
			    (unsigned long long)m->layers, q->pattern);
		else if (strchr(q->pattern, 'H') == strrchr(q->pattern, 'H'))
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba' needs two hybrid blocks or more: "
			    "transformers 5.24 cannot build one tied (nothing "
			    "to tie its shared block into)");
		if (!m->tie_embeddings)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba' needs 'tie_embeddings: true' "
			    "(transformers 5.24 shares the transformer block "
			    "only with the head tied)");
		if (m->zamba2.mem_blocks)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "'zamba2' is for family zamba2 only: family "
			    "'zamba' has one shared block without adapters or "
			    "positions");
		if (m->heads == 0 || (2 * m->hidden) % m->heads != 0 ||
		    (m->head_dim && m->head_dim != 2 * m->hidden / m->heads) ||
		    (m->kv_heads && m->kv_heads != m->heads))
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba' needs heads dividing 2 x hidden, "
			    "head_dim 2 x hidden / heads and kv_heads equal "
			    "to heads (the only layout measured)");
		if (m->has_moe || m->post_norms || m->attn_softcap ||
		    m->logit_softcap || m->window || m->norm !=
		    VP_NORM_RMSNORM || m->act != VP_ACT_GEGLU || m->bias ||
		    m->qkv_bias || m->o_bias > 0 || m->pos != VP_POS_NONE)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba' is modelled with 'norm: "
			    "rmsnorm', 'activation: geglu' (GELU gate times "
			    "up), 'position: none' and no biases, moe, "
			    "post_norms, soft-capping or sliding window");
	} else if (vp_family_info[vp_model_family(m)].block ==
	    VP_BLOCK_ZAMBA2) {
		const struct vp_ssm *q = &m->ssm;
		size_t len = strlen(q->pattern);

		if (q->state == 0 || q->groups == 0 || q->conv_kernel == 0 ||
		    q->chunk == 0 || q->heads == 0 || q->head_dim == 0 ||
		    q->heads % q->groups != 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba2' needs 'ssm' with 'heads', "
			    "'head_dim', 'state', 'groups' (dividing 'heads'), "
			    "'conv_kernel' and 'chunk', all at least 1");
		if (len != m->layers || strspn(q->pattern, "MH") != len ||
		    strchr(q->pattern, 'H') == NULL)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba2' needs 'ssm.pattern', one "
			    "character per block ('M' Mamba-2, 'H' hybrid, at "
			    "least one; %llu layers), not \"%s\"",
			    (unsigned long long)m->layers, q->pattern);
		if (!m->tie_embeddings)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba2' needs 'tie_embeddings: true' "
			    "(transformers 5.24 shares the transformer blocks "
			    "only with the head tied)");
		if (m->zamba2.mem_blocks == 0 || m->zamba2.adapter_rank == 0 ||
		    m->zamba2.mem_blocks > 8)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba2' needs 'zamba2' with 'mem_blocks' "
			    "(1 to 8, the shared blocks modelled) and "
			    "'adapter_rank', at least 1");
		if (m->heads == 0 || (2 * m->hidden) % m->heads != 0 ||
		    (m->head_dim && m->head_dim != 2 * m->hidden / m->heads) ||
		    (m->kv_heads && m->kv_heads != m->heads))
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba2' needs heads dividing 2 x hidden, "
			    "head_dim 2 x hidden / heads and kv_heads equal "
			    "to heads (Zamba2Attention's adapters add 2 x "
			    "hidden to k and v)");
		if (m->has_moe || m->post_norms || m->attn_softcap ||
		    m->logit_softcap || m->window || m->norm !=
		    VP_NORM_RMSNORM || m->act != VP_ACT_GEGLU || m->bias ||
		    m->qkv_bias || m->o_bias > 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'zamba2' is modelled with 'norm: "
			    "rmsnorm', 'activation: geglu' (GELU gate times "
			    "up) and no biases, moe, post_norms, soft-capping "
			    "or sliding window");
	} else if (vp_family_info[vp_model_family(m)].block ==
	    VP_BLOCK_JAMBA) {
		const struct vp_ssm *q = &m->ssm;
		uint32_t i;

		if (q->state == 0 || q->conv_kernel == 0 || q->expand == 0 ||
		    q->dt_rank == 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'jamba' needs 'ssm' with 'state', "
			    "'conv_kernel', 'expand' and 'dt_rank', all at "
			    "least 1");
		for (i = 0; i < q->n_attn; i++)
			if (q->attn[i] >= m->layers)
				vp_diag_add(d, m->file, m->where[VP_F_FAMILY],
				    VP_ERROR, "attention block %u of the "
				    "hybrid is past its %llu layers",
				    (unsigned)q->attn[i],
				    (unsigned long long)m->layers);
		if (m->post_norms || m->attn_softcap || m->logit_softcap ||
		    m->window || m->norm != VP_NORM_RMSNORM || m->pos !=
		    VP_POS_NONE || m->act != VP_ACT_SWIGLU || m->bias ||
		    m->qkv_bias > 0 || m->o_bias > 0 || (m->has_moe &&
		    (m->moe.shared_experts || m->moe.first_dense ||
		    m->moe.n_mlp_only)))
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'jamba' is modelled with 'norm: rmsnorm', "
			    "'position: none', 'activation: swiglu', no "
			    "biases, post_norms, soft-capping or sliding "
			    "window, and experts (if any) on 'sparse_step' "
			    "alone, without shared experts");
	} else if (vp_family_info[vp_model_family(m)].block ==
	    VP_BLOCK_MAMBA1) {
		const struct vp_ssm *q = &m->ssm;

		if (q->state == 0 || q->conv_kernel == 0 || q->expand == 0 ||
		    q->dt_rank == 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family '%s' needs 'ssm' with 'state', "
			    "'conv_kernel', 'expand' and 'dt_rank', all at "
			    "least 1", vp_family_names[vp_model_family(m)]);
		else if (m->heads != 1 || m->ffn != vp_mul_sat(q->expand,
		    m->hidden))
			vp_diag_add(d, m->file, m->where[VP_F_FFN], VP_ERROR,
			    "a %s model has 'heads: 1' and 'ffn' the "
			    "mixer's inner width, 'ssm.expand' x 'hidden' "
			    "(%llu x %llu), not %llu heads and %llu",
			    vp_family_names[vp_model_family(m)],
			    (unsigned long long)q->expand,
			    (unsigned long long)m->hidden,
			    (unsigned long long)m->heads,
			    (unsigned long long)m->ffn);
		if (m->has_moe || m->post_norms || m->attn_softcap ||
		    m->logit_softcap || m->window || m->norm !=
		    VP_NORM_RMSNORM || m->pos != VP_POS_NONE || m->bias)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family '%s' is modelled with 'norm: rmsnorm', "
			    "'position: none', 'bias: false' (ssm.bias for "
			    "the projections) and no moe, post_norms, "
			    "soft-capping or sliding window",
			    vp_family_names[vp_model_family(m)]);
	} else if (m->ssm.state != 0) {
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "'ssm' needs 'family: mamba2' or a hybrid, not %s",
		    vp_family_names[vp_model_family(m)]);
	}
	/* Each hybrid's own way of saying which block mixes how. */
	if ((m->ssm.pattern[0] && vp_family_info[vp_model_family(m)].block !=
	    VP_BLOCK_NEMOTRON_H && vp_family_info[vp_model_family(m)].block !=
	    VP_BLOCK_ZAMBA2) || (m->ssm.n_attn && vp_family_info[
	    vp_model_family(m)].block != VP_BLOCK_HYBRID &&
	    vp_family_info[vp_model_family(m)].block != VP_BLOCK_JAMBA))
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "'ssm.%s' is for family %s only, not %s",
		    m->ssm.pattern[0] ? "pattern" : "attention_layers",
		    m->ssm.pattern[0] ? "nemotron-h or zamba2" :
		    "bamba or jamba",
		    vp_family_names[vp_model_family(m)]);
	/* The Mamba-1 sizes. */
	if ((m->ssm.expand || m->ssm.dt_rank) && vp_family_info[
	    vp_model_family(m)].block != VP_BLOCK_JAMBA && vp_family_info[
	    vp_model_family(m)].block != VP_BLOCK_MAMBA1 &&
	    vp_model_family(m) != VP_FAMILY_ZAMBA)
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "'ssm.expand' and 'ssm.dt_rank' are for the families "
		    "jamba, mamba, falcon-mamba and zamba only, not %s",
		    vp_family_names[vp_model_family(m)]);
	if (m->zamba2.mem_blocks && vp_family_info[vp_model_family(m)].block !=
	    VP_BLOCK_ZAMBA2)
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "'zamba2' is for family zamba2 only, not %s",
		    vp_family_names[vp_model_family(m)]);
	/* The parallel builder has an ungated MLP after RoPE attention,
	 * the only layout measured (Phi). */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_PARALLEL &&
	    (m->pos != VP_POS_ROPE || (vp_act_gated(m->act) !=
	    (vp_model_family(m) == VP_FAMILY_COHERE)) || m->has_moe ||
	    m->post_norms || m->attn_softcap || m->logit_softcap))
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "family '%s' (a parallel attention + MLP block) is "
		    "modelled with 'position: rope', an ungated activation "
		    "(cohere: swiglu) and no moe, post_norms or "
		    "soft-capping",
		    vp_family_names[vp_model_family(m)]);
	/* OPT's row is its HF code with learned positions and an ungated
	 * MLP; Megatron's fused layout of it is not modelled. */
	if (vp_model_family(m) == VP_FAMILY_OPT &&
	    (m->pos != VP_POS_LEARNED || vp_act_gated(m->act) ||
	    m->has_moe || m->post_norms || m->impl != VP_IMPL_HF))
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "family 'opt' is modelled with 'position: learned', an "
		    "ungated activation, 'implementation: hf' and no moe or "
		    "post_norms");
	if (m->arch == VP_ARCH_ENCDEC && m->family < 0)
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "an encoder-decoder needs its family ('family: t5', "
		    "'bart' or 'whisper', the encoder-decoders lowered)");
	if ((m->arch == VP_ARCH_ENCDEC) != (m->dec_layers > 0))
		vp_diag_add(d, m->file, m->where[VP_F_LAYERS], VP_ERROR,
		    m->dec_layers ? "'decoder_layers' is for an encoder-decoder "
		    "('architecture: encoder-decoder')" : "an encoder-decoder "
		    "needs 'decoder_layers' (the decoder's blocks; 'layers' "
		    "is the encoder's)");
	if (m->arch == VP_ARCH_ENCDEC && m->impl != VP_IMPL_HF)
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "an encoder-decoder is lowered as Hugging Face's code "
		    "only ('implementation: hf')");
	if (m->family == VP_FAMILY_T5 && (m->has_moe || m->post_norms ||
	    m->attn_softcap || m->logit_softcap || m->type_vocab ||
	    m->pos != VP_POS_NONE || m->norm != VP_NORM_RMSNORM || m->bias ||
	    (m->act != VP_ACT_RELU && m->act != VP_ACT_GEGLU)))
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "a t5 encoder-decoder is RMSNorm, no biases, 'position: "
		    "none' (its relative bias is 'relative_buckets'), "
		    "activation relu or geglu (gated-gelu), no experts, "
		    "post-norms, soft-capping or token types");
	if (m->family == VP_FAMILY_BART && (m->has_moe || m->post_norms ||
	    m->attn_softcap || m->logit_softcap || m->type_vocab ||
	    m->rel_buckets || m->scale_dec_out || m->pos != VP_POS_LEARNED ||
	    m->norm != VP_NORM_LAYERNORM || !m->bias || !m->qkv_bias ||
	    !m->o_bias || m->act != VP_ACT_GELU || m->kv_heads != m->heads))
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "a bart encoder-decoder is LayerNorm, biases everywhere, "
		    "'position: learned', activation gelu, as many kv heads "
		    "as heads, no experts, post-norms, soft-capping, token "
		    "types, relative buckets or decoder output scale");
	if (m->family == VP_FAMILY_WHISPER && (m->has_moe || m->post_norms ||
	    m->attn_softcap || m->logit_softcap || m->type_vocab ||
	    m->rel_buckets || m->scale_dec_out || m->pos != VP_POS_NONE ||
	    m->norm != VP_NORM_LAYERNORM || !m->bias || !m->qkv_bias ||
	    !m->o_bias || m->act != VP_ACT_GELU || m->kv_heads != m->heads ||
	    m->mel_bins == 0 || m->max_seq == 0 || m->dec_max_seq == 0))
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "a whisper encoder-decoder is LayerNorm, biases (k_proj "
		    "none), 'position: none' (its tables are 'max_seq', the "
		    "encoder's positions, and 'decoder_max_seq'), 'mel_bins', "
		    "activation gelu, as many kv heads as heads, no experts, "
		    "post-norms, soft-capping, token types, relative buckets "
		    "or decoder output scale");
	if (m->family == VP_FAMILY_VIT && (m->vis.patch == 0 ||
	    m->vis.channels == 0 || m->vis.image == 0 ||
	    m->vis.image % m->vis.patch != 0))
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "family 'vit' needs 'image_size' (%llu), 'patch_size' "
		    "(%llu) dividing it, and 'channels' (%llu), all at least 1",
		    (unsigned long long)m->vis.image,
		    (unsigned long long)m->vis.patch,
		    (unsigned long long)m->vis.channels);
	else if (m->family == VP_FAMILY_VIT && (m->pos != VP_POS_NONE ||
	    m->norm != VP_NORM_LAYERNORM || vp_act_gated(m->act) ||
	    m->act == VP_ACT_GELU_NEW || m->has_moe || m->post_norms ||
	    m->attn_softcap || m->logit_softcap || m->type_vocab ||
	    m->tie_embeddings || m->impl != VP_IMPL_HF || m->window ||
	    m->kv_heads != m->heads || !m->bias))
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "family 'vit' is modelled as ViTForImageClassification "
		    "has it: 'position: none' (its position table is the "
		    "image's), LayerNorm, biases, an ungated gelu, gelu-tanh "
		    "or relu MLP, as many kv_heads as heads, "
		    "'implementation: hf', and no moe, post_norms, "
		    "soft-capping, token types, sliding window or tied "
		    "embeddings");
	if (m->family == VP_FAMILY_CLIP) {
		const struct vp_vision *v = &m->vis;

		if (v->hidden == 0 || v->layers == 0 || v->heads == 0 ||
		    v->ffn == 0 || v->proj == 0 || v->patch == 0 ||
		    v->channels == 0 || v->image == 0 ||
		    v->image % v->patch != 0 || v->hidden % v->heads != 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'clip' needs its vision tower's sizes "
			    "(hidden, layers, heads dividing hidden, ffn, "
			    "image_size, patch_size dividing it, channels) and "
			    "projection_dim, all at least 1");
		else if (m->pos != VP_POS_LEARNED || m->max_seq == 0 ||
		    m->norm != VP_NORM_LAYERNORM || !m->bias ||
		    vp_act_gated(m->act) || vp_act_gated(v->act) ||
		    m->act == VP_ACT_GELU_NEW || v->act == VP_ACT_GELU_NEW ||
		    m->has_moe || m->post_norms || m->attn_softcap ||
		    m->logit_softcap || m->type_vocab || m->tie_embeddings ||
		    m->impl != VP_IMPL_HF || m->window ||
		    m->kv_heads != m->heads || m->dropout != 0)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "family 'clip' is modelled as CLIPModel has it: "
			    "the text tower with 'position: learned' and "
			    "'max_seq', LayerNorm, biases, ungated activations "
			    "(quick-gelu, gelu, gelu-tanh, relu) in both towers, "
			    "as many kv_heads as heads, 'implementation: hf', "
			    "no dropout, and no moe, post_norms, soft-capping, "
			    "token types, sliding window or tied embeddings");
	} else if (m->vis.llava) {
		const struct vp_vision *v = &m->vis;

		if (vp_model_family(m) != VP_FAMILY_LLAMA ||
		    m->arch != VP_ARCH_DECODER || m->impl != VP_IMPL_HF ||
		    m->has_moe || v->proj)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "a 'vision' tower on a language model (LLaVA) is "
			    "modelled for a dense Llama-family decoder run by "
			    "Hugging Face's code, without 'projection_dim'");
		else if (v->hidden == 0 || v->layers == 0 || v->heads == 0 ||
		    v->ffn == 0 || v->patch == 0 || v->channels == 0 ||
		    v->image == 0 || v->image % v->patch != 0 ||
		    v->hidden % v->heads != 0 || vp_act_gated(v->act) ||
		    v->act == VP_ACT_GELU_NEW)
			vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
			    "a LLaVA vision tower needs hidden, layers, heads "
			    "dividing hidden, ffn, image_size, patch_size "
			    "dividing it and channels, all at least 1, and an "
			    "ungated activation");
	} else if (m->vis.hidden || m->vis.proj) {
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "a vision tower ('vision') and 'projection_dim' are for "
		    "a CLIP model ('family: clip')");
	}
	if (m->family != VP_FAMILY_VIT && m->family != VP_FAMILY_CLIP &&
	    !m->vis.llava && (m->vis.patch || m->vis.image ||
	    m->vis.channels))
		vp_diag_add(d, m->file, m->where[VP_F_FAMILY], VP_ERROR,
		    "'image_size', 'patch_size' and 'channels' are for a "
		    "vision transformer ('family: vit')");
	if (m->pos == VP_POS_LEARNED && m->max_seq == 0)
		vp_diag_add(d, m->file, m->where[VP_F_POSITION], VP_ERROR,
		    "'max_seq' is required with learned positions (the "
		    "position table has max_seq rows)");
	if (m->train.seq && m->pos == VP_POS_LEARNED && m->max_seq &&
	    m->train.seq > m->max_seq)
		vp_diag_add(d, m->file, m->where[VP_F_TRAIN_SEQ], VP_ERROR,
		    "training 'seq' (%llu) is longer than 'max_seq' (%llu) of "
		    "a model with learned positions",
		    (unsigned long long)m->train.seq,
		    (unsigned long long)m->max_seq);
	/* Llama 4's global blocks (its NoPE ones) exist without a chunk. */
	if ((m->window == 0) != (m->global_every == 0) &&
	    !(vp_model_family(m) == VP_FAMILY_LLAMA4 && m->window == 0))
		vp_diag_add(d, m->file, m->where[VP_F_LAYERS], VP_ERROR,
		    "'sliding_window' and 'global_every' go together: the "
		    "window of the local layers, and every how many layers "
		    "one is global (1: none is local)");
	if (m->has_moe) {
		if (m->moe.top_k > m->moe.experts)
			vp_diag_add(d, m->file, m->where[VP_F_MOE_TOP_K],
			    VP_ERROR, "'top_k' (%u) must not exceed 'experts' "
			    "(%u)", m->moe.top_k, m->moe.experts);
		if (m->moe.ffn == 0)
			m->moe.ffn = m->ffn;
		if (m->moe.shared_experts && m->moe.shared_ffn == 0)
			m->moe.shared_ffn = m->moe.ffn;
		if (m->moe.groups && (m->moe.experts % m->moe.groups != 0 ||
		    m->moe.topk_groups == 0 ||
		    m->moe.topk_groups > m->moe.groups ||
		    m->moe.top_k > (uint64_t)m->moe.topk_groups *
		    (m->moe.experts / m->moe.groups)))
			vp_diag_add(d, m->file, m->where[VP_F_MOE], VP_ERROR,
			    "group-limited routing needs 'groups' (%u) to "
			    "divide 'experts' (%u) and 1 to 'groups' chosen "
			    "groups (%u) holding at least 'top_k' (%u) experts",
			    m->moe.groups, m->moe.experts, m->moe.topk_groups,
			    m->moe.top_k);
		if (m->moe.first_dense >= m->layers)
			vp_diag_add(d, m->file, m->where[VP_F_MOE], VP_ERROR,
			    "'first_dense' (%u) must leave at least one MoE "
			    "block of the %llu", m->moe.first_dense,
			    (unsigned long long)m->layers);
		else if (vp_moe_dense_blocks(m, 0, m->layers) == m->layers)
			vp_diag_add(d, m->file, m->where[VP_F_MOE], VP_ERROR,
			    "no block of the %llu has experts (the sparse "
			    "step %u and the dense blocks leave none); read "
			    "it as a dense model",
			    (unsigned long long)m->layers, m->moe.sparse_step);
	}
	vp_buf_free(&b);
	if (vp_diags_count(d, VP_ERROR) != before)
		return -1;
	vp_model_params(m, &pc);
	if (pc.total > VP_MAX_PARAMS) {
		vp_diag_add(d, m->file, m->where[VP_F_HIDDEN], VP_ERROR,
		    "model has %.3g parameters, past any real model (limit "
		    "10^15); check 'hidden', 'ffn', 'layers' and 'vocab'",
		    (double)pc.total);
		return -1;
	}
	return 0;
}

uint64_t
vp_vision_seq(const struct vp_model *m, uint64_t image)
{
	uint64_t side;

	if (m->vis.patch == 0 || image == 0)
		return 0;
	side = image / m->vis.patch;
	return vp_add_sat(vp_mul_sat(side, side), 1);
}

uint64_t
vp_llava_image_tokens(const struct vp_model *m)
{
	uint64_t n = vp_vision_seq(m, m->vis.image);

	return m->vis.llava && n ? n - 1 : 0;
}

/* CLIPVisionModel: the bias-free patch convolution, the class embedding,
 * the position table of the patches plus one, pre_layrnorm, the blocks
 * (biased q, k, v, out_proj, fc1, fc2, two LayerNorms), post_layernorm. */
uint64_t
vp_llava_frozen_params(const struct vp_model *m)
{
	const struct vp_vision *v = &m->vis;
	uint64_t hv = v->hidden, l, p;

	if (!v->llava)
		return 0;
	l = vp_add_sat(vp_mul_sat(4, vp_mul_sat(hv, hv)), 4 * hv);
	l = vp_add_sat(l, vp_add_sat(vp_mul_sat(2, vp_mul_sat(hv, v->ffn)),
	    v->ffn + hv));
	l = vp_add_sat(l, 4 * hv);
	p = vp_mul_sat(hv, vp_mul_sat(v->channels, vp_mul_sat(v->patch,
	    v->patch)) + 1 + vp_vision_seq(m, v->image));
	p = vp_add_sat(p, 4 * hv);
	return vp_add_sat(p, vp_mul_sat(v->layers, l));
}

static uint64_t
norm_params(const struct vp_model *m)
{
	/* LayerNorm has weight and bias (not ModernBERT's, nor Cohere's);
	 * RMSNorm a weight only. */
	return m->norm == VP_NORM_LAYERNORM &&
	    !vp_family_info[vp_model_family(m)].norm_nobias &&
	    !vp_family_info[vp_model_family(m)].cohere_ln ? 2 * m->hidden :
	    m->hidden;
}

/*
 * Mamba2Mixer's parameters: in_proj h -> 2 ffn + 2 groups state + heads
 * (z, x, B, C, dt), the depthwise conv1d over ffn + 2 groups state
 * channels (conv_kernel taps, a bias when use_conv_bias), dt_bias, A_log
 * and D (one per head), the gated RMSNorm's weight (ffn), out_proj
 * ffn -> h; use_bias puts biases on both projections.
 */
uint64_t
vp_ssm_mixer_params(const struct vp_model *m)
{
	uint64_t h = m->hidden, nh = m->ssm.heads;
	uint64_t di = vp_mul_sat(nh, m->ssm.head_dim);
	uint64_t conv = vp_add_sat(di, vp_mul_sat(2, vp_mul_sat(m->ssm.groups,
	    m->ssm.state)));
	uint64_t proj = vp_add_sat(vp_add_sat(di, conv), nh), p;

	p = vp_mul_sat(h, proj);
	p = vp_add_sat(p, vp_mul_sat(conv, m->ssm.conv_kernel));
	if (m->ssm.conv_bias)
		p = vp_add_sat(p, conv);
	p = vp_add_sat(p, vp_mul_sat(3, nh));
	p = vp_add_sat(p, di);
	p = vp_add_sat(p, vp_mul_sat(di, h));
	if (m->ssm.proj_bias)
		p = vp_add_sat(p, vp_add_sat(proj, h));
	return p;
}

bool
vp_layer_ssm(const struct vp_model *m, uint64_t l)
{
	uint32_t i;

	switch (vp_family_info[vp_model_family(m)].block) {
	case VP_BLOCK_MAMBA2:
	case VP_BLOCK_MAMBA1:
		return true;
	case VP_BLOCK_HYBRID:
	case VP_BLOCK_JAMBA:
		for (i = 0; i < m->ssm.n_attn; i++)
			if (m->ssm.attn[i] == l)
				return false;
		return true;
	case VP_BLOCK_NEMOTRON_H:
		return vp_layer_kind(m, l) == 'M';
	case VP_BLOCK_ZAMBA2:
		return true;	/* a hybrid block ends with one too */
	default:
		return false;
	}
}

/*
 * JambaMambaMixer's parameters: in_proj h -> 2 inner (x and the gate;
 * mamba_proj_bias puts biases on it and on out_proj), the depthwise
 * conv1d over inner channels (d_conv taps, a bias when mamba_conv_bias),
 * x_proj inner -> dt_rank + 2 state without bias, dt_proj dt_rank ->
 * inner with its bias, A_log (inner x state), D (inner), out_proj inner
 * -> h, and the RMSNorms of dt (dt_rank), B and C (state each).
 */
uint64_t
vp_mamba1_mixer_params(const struct vp_model *m)
{
	const struct vp_ssm *q = &m->ssm;
	uint64_t h = m->hidden, di = vp_mul_sat(q->expand, h), p;
	uint64_t r = q->dt_rank, n = q->state;

	p = vp_mul_sat(h, vp_mul_sat(2, di));
	p = vp_add_sat(p, vp_mul_sat(di, q->conv_kernel));
	if (q->conv_bias)
		p = vp_add_sat(p, di);
	p = vp_add_sat(p, vp_mul_sat(di, r + 2 * n));
	p = vp_add_sat(p, vp_mul_sat(r + 1, di));
	p = vp_add_sat(p, vp_mul_sat(di, n + 1));
	p = vp_add_sat(p, vp_mul_sat(di, h));
	if (q->proj_bias)
		p = vp_add_sat(p, vp_add_sat(vp_mul_sat(2, di), h));
	/* MambaMixer has no dt, B and C norms. */
	if (vp_family_info[vp_model_family(m)].block != VP_BLOCK_JAMBA)
		return p;
	return vp_add_sat(p, r + 2 * n);
}

/*
 * A Jamba block: its two RMSNorms, its mixer (attention without biases,
 * or the Mamba-1 mixer) and its feed-forward (the router and every
 * expert, top_k of them when `active`, on the sparse step; a SwiGLU MLP
 * otherwise).
 */
uint64_t
vp_jamba_block_params(const struct vp_model *m, uint64_t l, bool active)
{
	uint64_t h = m->hidden, qd = vp_mul_sat(m->heads, m->head_dim);
	uint64_t kd = vp_mul_sat(m->kv_heads, m->head_dim), p;

	p = vp_mul_sat(2, h);
	if (vp_layer_ssm(m, l))
		p = vp_add_sat(p, vp_mamba1_mixer_params(m));
	else
		p = vp_add_sat(p, vp_mul_sat(h, vp_add_sat(vp_mul_sat(2, qd),
		    vp_mul_sat(2, kd))));
	if (vp_moe_layer_sparse(m, l))
		p = vp_add_sat(p, vp_add_sat(vp_mul_sat(h, m->moe.experts),
		    vp_mul_sat(active ? m->moe.top_k : m->moe.experts,
		    vp_mlp_params(m, m->moe.ffn))));
	else
		p = vp_add_sat(p, vp_mlp_params(m, m->ffn));
	return p;
}

char
vp_layer_kind(const struct vp_model *m, uint64_t l)
{
	if (vp_family_info[vp_model_family(m)].block != VP_BLOCK_NEMOTRON_H ||
	    l >= strlen(m->ssm.pattern))
		return 0;
	return m->ssm.pattern[l];
}

/*
 * A Nemotron-H block: its RMSNorm and its mixer (NemotronHBlock): the
 * Mamba-2 mixer, the attention (q, k, v, o, no biases in the class) or
 * the MLP (up_proj and down_proj, mlp_bias).
 */
uint64_t
vp_nemotron_h_block_params(const struct vp_model *m, uint64_t l)
{
	uint64_t h = m->hidden, q = vp_mul_sat(m->heads, m->head_dim);
	uint64_t kv = vp_mul_sat(m->kv_heads, m->head_dim), p;

	switch (vp_layer_kind(m, l)) {
	case 'M':
		p = vp_ssm_mixer_params(m);
		break;
	case '*':
		p = vp_add_sat(vp_mul_sat(2, vp_mul_sat(h, q)),
		    vp_mul_sat(2, vp_mul_sat(h, kv)));
		break;
	case '-':
		p = vp_mlp_params(m, m->ffn);
		break;
	default:
		return 0;
	}
	return vp_add_sat(p, norm_params(m));
}

/* A Zamba2 block's Mamba-2 mixer, a Zamba block's Mamba-1 mixer
 * (ZambaMambaMixer: its heads split x_proj's and dt_proj's weights, which
 * count as Mamba's; no dt, B and C norms). */
uint64_t
vp_zamba2_mixer_params(const struct vp_model *m)
{
	if (vp_model_family(m) == VP_FAMILY_ZAMBA)
		return vp_mamba1_mixer_params(m);
	return vp_ssm_mixer_params(m);
}

/* The distinct shared blocks: Zamba2's num_mem_blocks, Zamba's one. */
uint32_t
vp_zamba2_mem_blocks(const struct vp_model *m)
{
	return vp_model_family(m) == VP_FAMILY_ZAMBA ? 1 :
	    m->zamba2.mem_blocks;
}

uint64_t
vp_zamba2_hybrids_before(const struct vp_model *m, uint64_t l)
{
	uint64_t i, n = 0;

	for (i = 0; i < l && m->ssm.pattern[i]; i++)
		n += m->ssm.pattern[i] == 'H';
	return n;
}

/*
 * Zamba2AttentionDecoderLayer's own weights: input_layernorm (2 h),
 * q, k, v (2 h -> heads x 2 h / heads), o_proj (back to h), the
 * pre_ff_layernorm (h), gate_up_proj (h -> 2 ffn) and down_proj, none
 * with biases (rules out add_bias_linear: vp_model_validate).
 */
uint64_t
vp_zamba2_shared_params(const struct vp_model *m)
{
	uint64_t h = m->hidden, a = 2 * h, q = vp_mul_sat(m->heads,
	    m->head_dim), kv = vp_mul_sat(m->kv_heads ? m->kv_heads :
	    m->heads, m->head_dim), p;

	p = vp_add_sat(a, h);
	p = vp_add_sat(p, vp_mul_sat(a, vp_add_sat(q, 2 * kv)));
	p = vp_add_sat(p, vp_mul_sat(q, h));
	p = vp_add_sat(p, vp_mul_sat(3, vp_mul_sat(h, m->ffn)));
	return p;
}

/* One call's adapters: gate_up_proj's (h -> r -> 2 ffn) and, with
 * use_shared_attention_adapter, q's, k's and v's (2 h -> r -> 2 h). */
uint64_t
vp_zamba2_adapter_params(const struct vp_model *m)
{
	uint64_t h = m->hidden, r = m->zamba2.adapter_rank, p;

	if (vp_model_family(m) == VP_FAMILY_ZAMBA)
		return 0;	/* Zamba has no adapters */

	p = vp_mul_sat(r, vp_add_sat(h, 2 * m->ffn));
	if (m->zamba2.attn_adapter)
		p = vp_add_sat(p, vp_mul_sat(3, vp_mul_sat(r, 4 * h)));
	return p;
}

uint64_t
vp_zamba2_block_params(const struct vp_model *m, uint64_t l)
{
	uint64_t p = vp_add_sat(vp_zamba2_mixer_params(m), norm_params(m));

	if (l >= strlen(m->ssm.pattern) || m->ssm.pattern[l] != 'H')
		return p;
	p = vp_add_sat(p, vp_mul_sat(m->hidden, m->hidden));
	p = vp_add_sat(p, vp_zamba2_adapter_params(m));
	if (vp_zamba2_hybrids_before(m, l) < vp_zamba2_mem_blocks(m))
		p = vp_add_sat(p, vp_zamba2_shared_params(m));
	return p;
}

uint64_t
vp_mlp_params(const struct vp_model *m, uint64_t ffn)
{
	uint64_t h = m->hidden, p;

	if (vp_act_gated(m->act)) {
		/* gate, up: h→ffn; down: ffn→h. */
		p = vp_mul_sat(3, vp_mul_sat(h, ffn));
		if (m->bias)
			p = vp_add_sat(p, 2 * ffn + h);
	} else {
		p = vp_mul_sat(2, vp_mul_sat(h, ffn));
		if (m->bias)
			p = vp_add_sat(p, ffn + h);
	}
	return p;
}

/*
 * DeepseekV3Attention (and V2's, the same layout): q_a_proj h -> q_rank
 * (bias with attention_bias), q_a_layernorm (q_rank), q_b_proj q_rank ->
 * heads x (nope + rope), or q_proj h -> heads x (nope + rope) when
 * q_lora_rank is null; kv_a_proj_with_mqa h -> kv_rank + rope (bias with
 * attention_bias), kv_a_layernorm (kv_rank), kv_b_proj kv_rank -> heads x
 * (nope + v); o_proj heads x v -> h (bias with attention_bias).
 */
static uint64_t
mla_params(const struct vp_model *m)
{
	const struct vp_mla *a = &m->mla;
	uint64_t h = m->hidden, qk = a->nope_dim + a->rope_dim, p;
	uint64_t qout = vp_mul_sat(m->heads, qk);

	if (a->q_rank) {
		p = vp_add_sat(vp_mul_sat(h, a->q_rank), a->q_rank);
		p = vp_add_sat(p, vp_mul_sat(a->q_rank, qout));
		if (m->qkv_bias > 0)
			p = vp_add_sat(p, a->q_rank);
	} else {
		p = vp_mul_sat(h, qout);
	}
	p = vp_add_sat(p, vp_mul_sat(h, a->kv_rank + a->rope_dim));
	p = vp_add_sat(p, a->kv_rank);
	p = vp_add_sat(p, vp_mul_sat(a->kv_rank, vp_mul_sat(m->heads,
	    a->nope_dim + a->v_dim)));
	p = vp_add_sat(p, vp_mul_sat(vp_mul_sat(m->heads, a->v_dim), h));
	if (m->qkv_bias > 0)
		p = vp_add_sat(p, a->kv_rank + a->rope_dim);
	if (m->o_bias > 0)
		p = vp_add_sat(p, h);
	return p;
}

/*
 * ModernBertForMaskedLM: tok_embeddings and their norm; per block attn_norm
 * (an Identity in block 0), Wqkv h -> 3 heads x d, Wo, mlp_norm, Wi h ->
 * 2 ffn, Wo ffn -> h (biases with attention_bias, mlp_bias); final_norm;
 * the head's dense h -> h (no bias: classifier_bias false, the reader
 * refuses true) and norm, the decoder tied to the embeddings (unless
 * untied) with its vocab-sized bias (decoder_bias).  The norms have no
 * bias (norm_params).
 */
static void
modernbert_params(const struct vp_model *m, struct vp_param_count *out)
{
	uint64_t h = m->hidden, q = vp_mul_sat(m->heads, m->head_dim);
	uint64_t nrm = norm_params(m), attn, mlp, layer;

	out->embedding = vp_add_sat(vp_mul_sat(m->vocab, h), nrm);
	attn = vp_add_sat(vp_mul_sat(h, vp_mul_sat(3, q)), vp_mul_sat(q, h));
	if (m->qkv_bias > 0)
		attn = vp_add_sat(attn, vp_mul_sat(3, q));
	if (m->o_bias > 0)
		attn = vp_add_sat(attn, h);
	mlp = vp_mul_sat(3, vp_mul_sat(h, m->ffn));
	if (m->bias)
		mlp = vp_add_sat(mlp, 2 * m->ffn + h);
	layer = vp_add_sat(vp_add_sat(attn, mlp), vp_mul_sat(2, nrm));
	out->per_layer = out->dense_layer = layer;
	out->layers = vp_mul_sat(m->layers, layer);
	if (out->layers != UINT64_MAX)
		out->layers -= nrm;	/* block 0's attn_norm is an Identity */
	out->head = vp_add_sat(vp_mul_sat(2, nrm), vp_mul_sat(h, h));
	out->head = vp_add_sat(out->head, m->vocab);
	if (!m->tie_embeddings)
		out->head = vp_add_sat(out->head, vp_mul_sat(m->vocab, h));
	out->total = vp_add_sat(vp_add_sat(out->embedding, out->layers),
	    out->head);
	out->active = out->total;
}

/*
 * DebertaV2ForMaskedLM (legacy head): word embeddings (and position and
 * token-type tables when the model has them) and their LayerNorm; per
 * layer q, k, v and the attention output (biased), its LayerNorm, the
 * intermediate and output linears (biased) and their LayerNorm; the
 * encoder's 2 x span relative embeddings and their LayerNorm; the head's
 * dense (biased) and LayerNorm, the decoder tied to the word embeddings
 * (unless untied) and one vocab-sized bias (decoder.bias is tied to
 * predictions.bias).
 */
static void
deberta_params(const struct vp_model *m, struct vp_param_count *out)
{
	uint64_t h = m->hidden, q = vp_mul_sat(m->heads, m->head_dim);
	uint64_t nrm = norm_params(m), attn, layer;

	out->embedding = vp_add_sat(vp_mul_sat(m->vocab, h), nrm);
	if (m->pos == VP_POS_LEARNED)
		out->embedding = vp_add_sat(out->embedding,
		    vp_mul_sat(m->max_seq, h));
	out->embedding = vp_add_sat(out->embedding,
	    vp_mul_sat(m->type_vocab, h));
	attn = vp_add_sat(vp_mul_sat(3, vp_mul_sat(h, q) + q),
	    vp_mul_sat(q, h) + h);
	layer = vp_add_sat(vp_add_sat(attn, vp_mlp_params(m, m->ffn)),
	    vp_mul_sat(2, nrm));
	out->per_layer = out->dense_layer = layer;
	out->layers = vp_add_sat(vp_mul_sat(m->layers, layer),
	    vp_add_sat(vp_mul_sat(2 * m->rel_buckets, h), nrm));
	out->head = vp_add_sat(vp_add_sat(vp_mul_sat(h, h) + h, nrm),
	    m->vocab);
	if (!m->tie_embeddings)
		out->head = vp_add_sat(out->head, vp_mul_sat(m->vocab, h));
	out->total = vp_add_sat(vp_add_sat(out->embedding, out->layers),
	    out->head);
	out->active = out->total;
}

/*
 * Counting follows the Hugging Face layouts (LlamaForCausalLM,
 * GPT2LMHeadModel, BertForMaskedLM, MixtralForCausalLM, Gemma2): every
 * count is a sum of the weight matrices those modules create.  All
 * arithmetic saturates, so absurd inputs give UINT64_MAX, not a wrap.
 */
void
vp_model_params(const struct vp_model *m, struct vp_param_count *out)
{
	uint64_t h = m->hidden, q = vp_mul_sat(m->heads, m->head_dim);
	uint64_t kv = vp_mul_sat(m->kv_heads, m->head_dim);
	uint64_t attn, mlp, mlp_active, norms, layer, layer_active;
	uint64_t ssm_layer = 0, jamba_active = 0;

	memset(out, 0, sizeof *out);
	/* A layer graph: all of it is the one block. */
	if (m->lg != NULL) {
		out->per_layer = out->dense_layer = out->layers = out->total =
		    out->active = vp_lgraph_params(m->lg);
		return;
	}
	if (vp_model_family(m) == VP_FAMILY_MODERNBERT) {
		modernbert_params(m, out);
		return;
	}
	if (vp_model_family(m) == VP_FAMILY_DEBERTA_V2) {
		deberta_params(m, out);
		return;
	}
	out->embedding = vp_mul_sat(m->vocab, h);
	if (m->pos == VP_POS_LEARNED)
		out->embedding = vp_add_sat(out->embedding,
		    vp_mul_sat(m->max_seq +
		    vp_family_info[vp_model_family(m)].pos_offset, h));
	out->embedding = vp_add_sat(out->embedding,
	    vp_mul_sat(m->type_vocab, h));
	/* ViTEmbeddings: the patch Conv2d (channels x patch x patch -> h,
	 * with a bias), cls_token (h) and position_embeddings (the patches
	 * of the model's resolution plus one, x h); no token table. */
	if (m->family == VP_FAMILY_VIT) {
		out->embedding = vp_mul_sat(vp_mul_sat(m->vis.channels,
		    vp_mul_sat(m->vis.patch, m->vis.patch)) + 2, h);
		out->embedding = vp_add_sat(out->embedding, vp_mul_sat(
		    vp_vision_seq(m, m->vis.image), h));
	}

	if (vp_family_info[vp_model_family(m)].mla) {
		attn = mla_params(m);
	} else {
		/* q, k, v: h→q, h→kv, h→kv; o: q→h. */
		attn = vp_add_sat(vp_mul_sat(h, q),
		    vp_mul_sat(2, vp_mul_sat(h, kv)));
		attn = vp_add_sat(attn, vp_mul_sat(q, h));
		if (m->qkv_bias > 0)
			attn = vp_add_sat(attn, vp_add_sat(q, 2 * kv));
		if (m->o_bias > 0)
			attn = vp_add_sat(attn, h);
	}
	/* Qwen3's q_norm and k_norm: an RMSNorm weight of head_dim each. */
	if (vp_family_info[vp_model_family(m)].qk_norm)
		attn = vp_add_sat(attn, vp_mul_sat(2, m->head_dim));
	/* gpt-oss's sinks: one logit per head. */
	if (vp_family_info[vp_model_family(m)].sinks)
		attn = vp_add_sat(attn, m->heads);

	if (m->has_moe) {
		uint64_t expert = vp_mlp_params(m, m->moe.ffn);
		uint64_t shared = m->moe.shared_experts ?
		    vp_mul_sat(m->moe.shared_experts,
		    vp_mlp_params(m, m->moe.shared_ffn)) : 0;
		uint64_t router = vp_mul_sat(h, m->moe.experts);

		if (vp_family_info[vp_model_family(m)].router_bias)
			router = vp_add_sat(router, m->moe.experts);

		if (m->moe.shared_gate)
			router = vp_add_sat(router,
			    vp_mul_sat(h, m->moe.shared_experts));

		mlp = vp_add_sat(vp_mul_sat(m->moe.experts, expert),
		    vp_add_sat(shared, router));
		mlp_active = vp_add_sat(vp_mul_sat(m->moe.top_k, expert),
		    vp_add_sat(shared, router));
	} else {
		mlp = mlp_active = vp_mlp_params(m, m->ffn);
	}
	norms = vp_mul_sat(m->post_norms ? 4 : 2, norm_params(m));
	/* A parallel block has one or two norms (par_norms). */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_PARALLEL)
		norms = vp_mul_sat(vp_model_traits(m).par_norms,
		    norm_params(m));
	layer = vp_add_sat(vp_add_sat(attn, mlp), norms);
	layer_active = vp_add_sat(vp_add_sat(attn, mlp_active), norms);
	/* Mamba-2: the block's RMSNorm and the mixer, nothing else. */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_MAMBA2)
		layer = layer_active = vp_add_sat(norm_params(m),
		    vp_ssm_mixer_params(m));
	/* A hybrid's Mamba-2 blocks: the mixer instead of attention. */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_HYBRID)
		ssm_layer = vp_add_sat(vp_add_sat(vp_ssm_mixer_params(m), mlp),
		    norms);
	out->per_layer = layer;
	out->dense_layer = vp_add_sat(vp_add_sat(attn, vp_mlp_params(m, m->ffn)),
	    norms);
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_MAMBA2)
		out->dense_layer = layer;
	out->layers = vp_mul_sat(m->layers, layer);
	/* A hybrid: its attention blocks are the Llama ones counted above,
	 * the others Mamba-2 blocks; per_layer is the latter's. */
	if (ssm_layer) {
		uint64_t na = m->ssm.n_attn < m->layers ? m->ssm.n_attn :
		    m->layers;

		out->layers = vp_add_sat(vp_mul_sat(na, layer),
		    vp_mul_sat(m->layers - na, ssm_layer));
		out->per_layer = out->dense_layer = ssm_layer;
	}
	/* Nemotron-H: each block its own kind; per_layer is a Mamba-2
	 * block's. */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_NEMOTRON_H) {
		uint64_t l;

		out->layers = 0;
		for (l = 0; l < m->layers; l++)
			out->layers = vp_add_sat(out->layers,
			    vp_nemotron_h_block_params(m, l));
		out->per_layer = out->dense_layer = vp_add_sat(
		    vp_ssm_mixer_params(m), norm_params(m));
		layer_active = m->layers ? out->layers / m->layers : 0;
	}
	/* Zamba2: each block its own parameters (the shared blocks counted
	 * at their first calls); per_layer is a Mamba-2 block's. */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_ZAMBA2) {
		uint64_t l;

		out->layers = 0;
		for (l = 0; l < m->layers; l++)
			out->layers = vp_add_sat(out->layers,
			    vp_zamba2_block_params(m, l));
		out->per_layer = out->dense_layer = vp_add_sat(
		    vp_zamba2_mixer_params(m), norm_params(m));
		layer_active = m->layers ? out->layers / m->layers : 0;
	}
	/* Mamba: the block's RMSNorm and the Mamba-1 mixer. */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_MAMBA1) {
		layer = layer_active = vp_add_sat(norm_params(m),
		    vp_mamba1_mixer_params(m));
		out->per_layer = out->dense_layer = layer;
		out->layers = vp_mul_sat(m->layers, layer);
	}
	/* Jamba: each block its own mixer and feed-forward; per_layer is
	 * a Mamba-1 block's with experts, dense_layer one with the MLP. */
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_JAMBA) {
		uint64_t l, act = 0;

		out->layers = 0;
		out->per_layer = out->dense_layer = 0;
		for (l = 0; l < m->layers; l++) {
			uint64_t bp = vp_jamba_block_params(m, l, false);

			out->layers = vp_add_sat(out->layers, bp);
			act = vp_add_sat(act, vp_jamba_block_params(m, l,
			    true));
			if (vp_moe_layer_sparse(m, l) && bp > out->per_layer)
				out->per_layer = bp;
			if (!vp_moe_layer_sparse(m, l) && bp >
			    out->dense_layer)
				out->dense_layer = bp;
		}
		jamba_active = act;
	}
	if (m->has_moe && vp_moe_dense_blocks(m, 0, m->layers) &&
	    vp_family_info[vp_model_family(m)].block != VP_BLOCK_JAMBA) {
		/* DeepSeek: the first blocks keep a dense MLP; Qwen-MoE: the
		 * mlp_only_layers and those off the sparse step. */
		uint64_t fd = vp_moe_dense_blocks(m, 0, m->layers);

		out->layers = vp_add_sat(vp_mul_sat(m->layers - fd, layer),
		    vp_mul_sat(fd, out->dense_layer));
		layer_active = (vp_add_sat(vp_mul_sat(m->layers - fd,
		    layer_active), vp_mul_sat(fd, out->dense_layer))) / m->layers;
	}

	/* LLaVA: the vision tower and the projector (linear_1 hv -> h,
	 * linear_2 h -> h, biased) count with the embeddings. */
	if (m->vis.llava)
		out->embedding = vp_add_sat(out->embedding, vp_add_sat(
		    vp_llava_frozen_params(m), vp_mul_sat(m->vis.hidden + h +
		    2, h)));
	if (vp_model_family(m) == VP_FAMILY_CLIP) {
		/*
		 * CLIPModel: the text tower (token and position tables, the
		 * blocks counted above, final_layer_norm, text_projection),
		 * the vision tower (the bias-free patch convolution, the class
		 * embedding, the position table of the patches plus one,
		 * pre_layrnorm, its blocks, post_layernorm,
		 * visual_projection) and logit_scale.
		 */
		const struct vp_vision *v = &m->vis;
		uint64_t hv = v->hidden, vl;

		vl = vp_add_sat(vp_mul_sat(4, vp_mul_sat(hv, hv)), 4 * hv);
		vl = vp_add_sat(vl, vp_add_sat(vp_mul_sat(2, vp_mul_sat(hv,
		    v->ffn)), v->ffn + hv));
		vl = vp_add_sat(vl, 4 * hv);
		out->embedding = vp_add_sat(out->embedding, vp_mul_sat(hv,
		    vp_mul_sat(v->channels, vp_mul_sat(v->patch, v->patch)) +
		    1 + vp_vision_seq(m, v->image)));
		out->layers = vp_add_sat(out->layers, vp_mul_sat(v->layers, vl));
		out->head = vp_add_sat(vp_add_sat(norm_params(m), vp_mul_sat(h,
		    v->proj)), vp_add_sat(4 * hv, vp_mul_sat(hv, v->proj)));
		out->head = vp_add_sat(out->head, 1);
		out->total = vp_add_sat(vp_add_sat(out->embedding,
		    out->layers), out->head);
		out->active = out->total;
		return;
	}
	if (m->arch == VP_ARCH_ENCDEC) {
		/*
		 * T5ForConditionalGeneration: the encoder's blocks (self
		 * attention, MLP, two norms), the decoder's (self and cross
		 * attention, MLP, three norms), one relative position bias
		 * table (buckets x heads) in the first block of each stack,
		 * the encoder's final norm; the head is the decoder's final
		 * norm and, untied, the lm_head.
		 */
		uint64_t dec = vp_add_sat(vp_add_sat(vp_mul_sat(2, attn),
		    mlp), vp_mul_sat(3, norm_params(m)));
		uint64_t enc = vp_add_sat(vp_add_sat(attn, mlp),
		    vp_mul_sat(2, norm_params(m)));

		/*
		 * BART: one more position table (the decoder's), and the two
		 * layernorm_embedding in place of T5's final norms.
		 * Whisper: k_proj has no bias (one h fewer per attention);
		 * the encoder's conv1 (mel_bins x h x 3 + h), conv2 (h x h x 3
		 * + h) and position table (max_seq rows, frozen but a
		 * parameter), the decoder's (dec_max_seq rows); its two final
		 * norms are T5's.
		 */
		if (vp_model_family(m) == VP_FAMILY_WHISPER) {
			dec = dec > 2 * h ? dec - 2 * h : 0;
			enc = enc > h ? enc - h : 0;
			out->embedding = vp_add_sat(out->embedding,
			    vp_add_sat(vp_mul_sat(m->max_seq + m->dec_max_seq,
			    h), vp_add_sat(vp_mul_sat(3 * h, m->mel_bins + h),
			    2 * h)));
		} else if (vp_model_family(m) == VP_FAMILY_BART) {
			out->embedding = vp_add_sat(out->embedding,
			    vp_mul_sat(m->max_seq + 2, h));
		}
		out->per_layer = out->dense_layer = dec;
		out->layers = vp_add_sat(vp_mul_sat(m->layers, enc),
		    vp_mul_sat(m->dec_layers, dec));
		out->layers = vp_add_sat(out->layers, vp_add_sat(vp_mul_sat(2,
		    vp_mul_sat(m->rel_buckets, m->heads)), norm_params(m)));
		out->head = norm_params(m);
		if (!m->tie_embeddings)
			out->head = vp_add_sat(out->head,
			    vp_mul_sat(m->vocab, h));
		out->total = vp_add_sat(vp_add_sat(out->embedding,
		    out->layers), out->head);
		out->active = out->total;
		return;
	}
	switch (vp_family_info[vp_model_family(m)].head) {
	case VP_HEAD_LINEAR:
		/* torch.nn.TransformerEncoderLayer stack: a plain linear head
		 * (with bias when the model has biases), no final norm. */
		out->head = m->tie_embeddings ? 0 : vp_mul_sat(m->vocab, h);
		if (m->bias)
			out->head = vp_add_sat(out->head, m->vocab);
		break;
	case VP_HEAD_MLM:
		/*
		 * BERT: LayerNorm after the embeddings; BertForMaskedLM head
		 * = dense h→h with bias, LayerNorm, decoder tied to the word
		 * embeddings plus its own vocab-sized bias.
		 */
		out->head = vp_add_sat(norm_params(m),
		    vp_add_sat(vp_mul_sat(h, h) + h, norm_params(m)));
		out->head = vp_add_sat(out->head, m->vocab);
		if (!m->tie_embeddings)
			out->head = vp_add_sat(out->head,
			    vp_mul_sat(m->vocab, h));
		break;
	case VP_HEAD_CLS:
		/* ViT: the final LayerNorm and the classifier (h -> the
		 * `vocab` classes, with a bias). */
		out->head = vp_add_sat(norm_params(m), vp_add_sat(
		    vp_mul_sat(m->vocab, h), m->vocab));
		break;
	case VP_HEAD_LM:
	default:
		/* Final norm and lm_head (Phi's with a bias). */
		out->head = norm_params(m);
		if (!m->tie_embeddings)
			out->head = vp_add_sat(out->head,
			    vp_mul_sat(m->vocab, h));
		if (vp_family_info[vp_model_family(m)].head_bias)
			out->head = vp_add_sat(out->head, m->vocab);
		break;
	}
	out->total = vp_add_sat(vp_add_sat(out->embedding, out->layers),
	    out->head);
	out->active = vp_add_sat(vp_add_sat(out->embedding,
	    vp_mul_sat(m->layers, layer_active)), out->head);
	/* A hybrid (no experts): every parameter is used per token. */
	if (ssm_layer || vp_family_info[vp_model_family(m)].block ==
	    VP_BLOCK_NEMOTRON_H || vp_family_info[vp_model_family(m)].block ==
	    VP_BLOCK_ZAMBA2)
		out->active = out->total;
	if (vp_family_info[vp_model_family(m)].block == VP_BLOCK_JAMBA)
		out->active = vp_add_sat(vp_add_sat(out->embedding,
		    jamba_active), out->head);
}
