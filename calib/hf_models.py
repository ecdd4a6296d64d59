"""Real Hugging Face transformers models under calib/harness.py's CPU meter.

    python calib/hf_models.py --write-configs tests/data/hf-val   # regenerate the configs
    python calib/hf_models.py CONFIG.json [--precision P] [--optimizer O] [--micro-batch B]
                              [--seq S] [--recompute none|full] [--attention sdpa|eager] [--trace]

Needs torch >= 2 and transformers (requirements-test.txt, in the virtual
environment `make venv` creates).  The model is built with the real class
(AutoModelForCausalLM / AutoModelForMaskedLM .from_config, random weights,
no hub access) from a config.json that vramplan reads too.  The training
step is harness._train_step's: forward with labels, backward, the
optimizer's step, zero_grad(set_to_none=True), under harness._measure_cpu's
exact replay of the CPU allocator's events.  The phases: "forward" is the
model's forward up to its loss_function, "loss" is that function (HF's
ForCausalLMLoss / ForMaskedLMLoss: the fp32 upcast and the cross-entropy),
then "backward", "optimizer", "zero_grad" as for the torch.nn clones.
"""

import argparse
import contextlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import harness  # noqa: E402  (sets the oneDNN ISA cap before torch is imported)
from harness import torch, nn, phase  # noqa: E402

# The shipped configs: (model_type, the config class's arguments).  Each is
# the class's own to_dict() (every real field), shrunk: 2-4 layers, small
# hidden, dropout 0, no cache.  Small vocabularies (256-512) leave the peak
# to the activations; the 2048-8192 ones to the logits.
CONFIGS = {
    "llama-gqa": ("llama", dict(vocab_size=2048, hidden_size=128, intermediate_size=344, num_hidden_layers=2,
                                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048)),
    "llama-act": ("llama", dict(vocab_size=256, hidden_size=128, intermediate_size=344, num_hidden_layers=4,
                                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048)),
    "qwen2": ("qwen2", dict(vocab_size=2048, hidden_size=128, intermediate_size=344, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                            tie_word_embeddings=True)),
    # Qwen3: q/k norms over head_dim; head_dim 48 is not hidden / heads (32).
    "qwen3": ("qwen3", dict(vocab_size=2048, hidden_size=128, intermediate_size=344, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, head_dim=48, max_position_embeddings=2048,
                            tie_word_embeddings=False)),
    # Qwen3-MoE: 8 experts of 96, 2 per token (norm_topk_prob), block 1 dense (mlp_only_layers), vocab 512.
    "qwen3-moe": ("qwen3_moe", dict(vocab_size=512, hidden_size=128, intermediate_size=256, moe_intermediate_size=96,
                                    num_experts=8, num_experts_per_tok=2, norm_topk_prob=True, decoder_sparse_step=1,
                                    mlp_only_layers=[1], num_hidden_layers=3, num_attention_heads=4,
                                    num_key_value_heads=2, head_dim=48, max_position_embeddings=2048,
                                    tie_word_embeddings=False)),
    # Mixtral: transformers 5's grouped_mm experts, as Qwen3-MoE's, without Qwen3's q/k norms.
    "mixtral": ("mixtral", dict(vocab_size=512, hidden_size=128, intermediate_size=96, num_hidden_layers=2,
                                num_attention_heads=4, num_key_value_heads=2, num_local_experts=8, num_experts_per_tok=2,
                                max_position_embeddings=2048, tie_word_embeddings=False)),
    # Llama 4 text: 4 experts of 96 (top 1, sigmoid router) plus a shared expert in blocks 1 and 3
    # (interleave_moe_layer_step 2), dense MLPs of 256 in blocks 0 and 2; block 3 is NoPE (global attention
    # with temperature tuning), the others RoPE (complex, in fp32) with L2 q/k norms and chunked attention of 32.
    "llama4": ("llama4_text", dict(vocab_size=512, hidden_size=128, intermediate_size=96, intermediate_size_mlp=256,
                                   num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                                   num_local_experts=4, num_experts_per_tok=1, interleave_moe_layer_step=2,
                                   no_rope_layer_interval=4, attention_chunk_size=32, attn_temperature_tuning=True,
                                   use_qk_norm=True, max_position_embeddings=2048, tie_word_embeddings=False,
                                   pad_token_id=0, bos_token_id=1, eos_token_id=2)),
    # DeepSeek-V3 (MLA with q_lora_rank, v_head_dim 24 != qk head dim 48, 2 dense blocks then MoE blocks: 8
    # experts of 64 in 4 groups, 2 groups and 2 experts per token, sigmoid scores, one shared expert), vocab 512.
    "deepseek-v3": ("deepseek_v3", dict(vocab_size=512, hidden_size=128, intermediate_size=256, moe_intermediate_size=64,
                                        num_hidden_layers=4, first_k_dense_replace=2, num_attention_heads=4,
                                        num_key_value_heads=4, q_lora_rank=64, kv_lora_rank=32, qk_rope_head_dim=16,
                                        qk_nope_head_dim=32, v_head_dim=24, n_routed_experts=8, num_experts_per_tok=2,
                                        n_group=4, topk_group=2, n_shared_experts=1, routed_scaling_factor=2.5,
                                        max_position_embeddings=2048, tie_word_embeddings=False)),
    # DeepSeek-V2-Lite's layout: no q_lora_rank (a plain q_proj), softmax scores (greedy top-k), 2 shared experts,
    # block 0 dense, vocab 512; v_head_dim = qk head dim (48), so that sdpa runs PyTorch's CPU flash kernel (with
    # DeepSeek-V3's v_head_dim 24 it runs the math path, which materialises the scores).
    "deepseek-v2-lite": ("deepseek_v2", dict(vocab_size=512, hidden_size=128, intermediate_size=256,
                                             moe_intermediate_size=64, num_hidden_layers=3, first_k_dense_replace=1,
                                             num_attention_heads=4, num_key_value_heads=4, q_lora_rank=None,
                                             kv_lora_rank=32, qk_rope_head_dim=16, qk_nope_head_dim=32, v_head_dim=48,
                                             n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=2,
                                             topk_method="greedy", routed_scaling_factor=1.0,
                                             max_position_embeddings=2048, tie_word_embeddings=False)),
    "gpt2": ("gpt2", dict(vocab_size=4096, n_embd=128, n_layer=2, n_head=4, n_positions=1024, bos_token_id=4095, eos_token_id=4095,
                          attn_pdrop=0.0, embd_pdrop=0.0, resid_pdrop=0.0, summary_first_dropout=0.0)),
    "gpt2-act": ("gpt2", dict(vocab_size=512, n_embd=128, n_layer=3, n_head=4, n_positions=1024, bos_token_id=511,
                              eos_token_id=511, attn_pdrop=0.0, embd_pdrop=0.0, resid_pdrop=0.0, summary_first_dropout=0.0)),
    # T5 v1.0 (relu, decoder output rescaled before the tied head) and v1.1 (gated-gelu, no rescale;
    # transformers 5.24 ties the head in both): 2 + 2 blocks, d_kv 32 x 4 heads, vocab 512.
    "t5-relu": ("t5", dict(vocab_size=512, d_model=128, d_kv=32, d_ff=344, num_layers=2, num_decoder_layers=2,
                           num_heads=4, feed_forward_proj="relu", dropout_rate=0.0, decoder_start_token_id=0)),
    "t5-gated": ("t5", dict(vocab_size=512, d_model=128, d_kv=32, d_ff=344, num_layers=2, num_decoder_layers=2,
                            num_heads=4, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                            dropout_rate=0.0, decoder_start_token_id=0)),
    # BART (post-norm, biases, learned positions with offset 2, layernorm_embedding, tied head plus
    # final_logits_bias) and Whisper (a conv1/conv2 audio front end over 16 mel bins and 2 x 64 frames, pre-norm,
    # k_proj unbiased, max_source_positions 64 = the validation's --seq): 2 + 2 blocks, 4 heads of 32, vocab 512.
    "bart": ("bart", dict(vocab_size=512, d_model=128, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                          decoder_attention_heads=4, encoder_ffn_dim=344, decoder_ffn_dim=344,
                          max_position_embeddings=256, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                          pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                          forced_eos_token_id=2)),
    "whisper": ("whisper", dict(vocab_size=512, d_model=128, encoder_layers=2, decoder_layers=2,
                                encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=344,
                                decoder_ffn_dim=344, num_mel_bins=16, max_source_positions=64,
                                max_target_positions=64, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                                pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=3,
                                begin_suppress_tokens=None)),
    # ViT (ViTForImageClassification): 64x64 images in 8x8 patches (64 patches plus CLS: 65 tokens), 2
    # pre-norm blocks of 64 wide, 4 heads, MLP 256, 10 classes.
    "vit": ("vit", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
                        image_size=64, patch_size=8, num_channels=3, num_labels=10, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)),
    # CLIP (CLIPModel, return_loss): a text tower of 2 blocks of 64 (4 heads, MLP 256, vocab 512, 32
    # positions) and a vision tower of 2 blocks of 64 over 32x32 images in 8x8 patches (17 tokens),
    # projections of 32, quick_gelu in both.
    "clip": ("clip", dict(projection_dim=32,
                          text_config=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                           intermediate_size=256, vocab_size=512, max_position_embeddings=32,
                                           bos_token_id=0, eos_token_id=2, pad_token_id=1),
                          vision_config=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                             intermediate_size=256, image_size=32, patch_size=8))),
    # LLaVA (LlavaForConditionalGeneration): a Llama of 2 blocks of 64 (GQA 4/2, MLP 172, vocab 512) and a
    # CLIP vision tower of 2 blocks of 64 over 32x32 images in 8x8 patches (16 image tokens, the class token
    # dropped), feature layer -2, the GELU projector; the tower is frozen (calib: requires_grad_(False)).
    "llava": ("llava", dict(text_config=dict(model_type="llama", hidden_size=64, intermediate_size=172,
                                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                             vocab_size=512, max_position_embeddings=512),
                            vision_config=dict(model_type="clip_vision_model", hidden_size=64, intermediate_size=256,
                                               num_hidden_layers=2, num_attention_heads=4, image_size=32,
                                               patch_size=8),
                            image_token_id=500, vision_feature_layer=-2, vision_feature_select_strategy="default",
                            projector_hidden_act="gelu")),
    # Mamba-2 (Mamba2ForCausalLM, torch_forward's chunked SSD scan on the CPU): expand 2 (intermediate 256),
    # 8 heads of 32, 2 groups, state 24, conv kernel 4, chunks of 16 tokens, 2 blocks, vocab 256, untied head.
    "mamba2": ("mamba2", dict(vocab_size=256, hidden_size=128, num_hidden_layers=2, num_heads=8, head_dim=32,
                              n_groups=2, state_size=24, expand=2, conv_kernel=4, chunk_size=16,
                              tie_word_embeddings=False)),
    # The same with the head tied to the embedding (Mamba-2 2.7B's layout), vocab 1024 so that the tied weight's
    # two gradients matter.
    "mamba2-tied": ("mamba2", dict(vocab_size=1024, hidden_size=128, num_hidden_layers=2, num_heads=8, head_dim=32,
                                   n_groups=2, state_size=24, expand=2, conv_kernel=4, chunk_size=16,
                                   tie_word_embeddings=True)),
    # The same at zamba2-grad's Mamba-2 sizes (hidden 256: intermediate 512, 8 heads of 64, 1 group, state 16), for
    # b1 s16 with SGD: the weights' gradients make the backward peak, at the first block's in_proj, whose weight
    # gradient autocast casts to fp32 after the matmul's node has released the cached 16-bit copy.
    "mamba2-grad": ("mamba2", dict(vocab_size=256, hidden_size=256, num_hidden_layers=2, num_heads=8, head_dim=64,
                                   n_groups=1, state_size=16, expand=2, conv_kernel=4, chunk_size=16,
                                   tie_word_embeddings=False)),
    # Bamba (BambaForCausalLM, a Mamba-2 hybrid): blocks 0 and 2 Mamba-2 (8 heads of 32, 2 groups, state 24,
    # chunks of 16), block 1 Llama attention (4 heads of 32, 2 KV heads, RoPE on half of each head); a SwiGLU MLP of
    # 256 in every block; vocab 256, untied.
    "bamba": ("bamba", dict(vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=3,
                            num_attention_heads=4, num_key_value_heads=2, attn_layer_indices=[1], mamba_n_heads=8,
                            mamba_d_head=32, mamba_n_groups=2, mamba_d_state=24, mamba_d_conv=4, mamba_expand=2,
                            mamba_chunk_size=16, max_position_embeddings=2048, tie_word_embeddings=False)),
    # Nemotron-H (NemotronHForCausalLM): blocks of one mixer each, hybrid_override_pattern "M-*-M-": Mamba-2 blocks
    # 0 and 4 (8 heads of 32, 2 groups, state 24, chunks of 16), attention block 2 (4 heads of 32, 2 KV heads, no
    # positions), relu2 MLP blocks 1, 3 and 5 (256); vocab 256, untied.
    "nemotron-h": ("nemotron_h", dict(vocab_size=256, hidden_size=128, intermediate_size=256,
                                      hybrid_override_pattern="M-*-M-", num_attention_heads=4, num_key_value_heads=2,
                                      head_dim=32, mamba_num_heads=8, mamba_head_dim=32, n_groups=2,
                                      ssm_state_size=24, conv_kernel=4, chunk_size=16, max_position_embeddings=2048,
                                      tie_word_embeddings=False)),
    # Zamba2 (Zamba2ForCausalLM): blocks 0, 2, 4 Mamba-2 (8 heads of 32, 2 groups, state 24, chunks of 16), blocks
    # 1, 3, 5 hybrid: two shared transformer blocks (num_mem_blocks 2) called in turn, so block 0's weights serve
    # calls 0 and 2 (their gradients accumulate); 4 heads of 64 on the 2 x 128 concatenation, RoPE, adapters of
    # rank 16 on q, k, v and gate_up_proj, a GELU MLP of 256; vocab 256, the head tied (transformers 5.24 ties the
    # shared blocks only when tie_word_embeddings is true, as Zamba2Config's default).
    "zamba2": ("zamba2", dict(vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=6,
                              layers_block_type=["mamba", "hybrid", "mamba", "hybrid", "mamba", "hybrid"],
                              num_attention_heads=4, n_mamba_heads=8, mamba_ngroups=2, mamba_d_state=24,
                              mamba_d_conv=4, mamba_expand=2, chunk_size=16, num_mem_blocks=2,
                              use_shared_attention_adapter=True, adapter_rank=16, use_mem_rope=True,
                              max_position_embeddings=2048, tie_word_embeddings=True)),
    # The same layout wider and shorter (hidden 256, MLP 1024, 4 heads of 128 on the concatenation, 8 Mamba-2
    # heads of 64, adapters of 32): the weights, their gradients and the optimizer states make the peak, so the
    # shared blocks' accumulated gradients (block 0's two calls) and the cached autocast copies decide it.
    "zamba2-grad": ("zamba2", dict(vocab_size=256, hidden_size=256, intermediate_size=1024, num_hidden_layers=6,
                                   layers_block_type=["mamba", "hybrid", "mamba", "hybrid", "mamba", "hybrid"],
                                   num_attention_heads=4, n_mamba_heads=8, mamba_ngroups=1, mamba_d_state=16,
                                   mamba_d_conv=4, mamba_expand=2, chunk_size=16, num_mem_blocks=2,
                                   use_shared_attention_adapter=True, adapter_rank=32, use_mem_rope=True,
                                   max_position_embeddings=2048, tie_word_embeddings=True)),
    # zamba2-grad with one shared block (Zamba2-1.2B's layout): its three calls' gradients, the second summed out
    # of place, the third added in place.
    "zamba2-one": ("zamba2", dict(vocab_size=256, hidden_size=256, intermediate_size=1024, num_hidden_layers=6,
                                  layers_block_type=["mamba", "hybrid", "mamba", "hybrid", "mamba", "hybrid"],
                                  num_attention_heads=4, n_mamba_heads=8, mamba_ngroups=1, mamba_d_state=16,
                                  mamba_d_conv=4, mamba_expand=2, chunk_size=16, num_mem_blocks=1,
                                  use_shared_attention_adapter=True, adapter_rank=32, use_mem_rope=True,
                                  max_position_embeddings=2048, tie_word_embeddings=True)),
    # Jamba (JambaForCausalLM, Mamba-1 mixers on mamba_selective_scan's recurrent loop without mamba_ssm): 4 blocks,
    # attention in block 1 (attn_layer_period 4, offset 1; 4 heads of 32, 2 KV heads, no positions), Mamba-1 in 0, 2
    # and 3 (expand 2: intermediate 256, d_state 16, d_conv 4, dt_rank 8); 4 experts of 256, top 2, in blocks 1 and 3
    # (expert_layer_period 2, offset 1), a SwiGLU MLP of 256 in 0 and 2; vocab 256, untied.
    "jamba": ("jamba", dict(vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=4,
                            num_attention_heads=4, num_key_value_heads=2, attn_layer_period=4, attn_layer_offset=1,
                            expert_layer_period=2, expert_layer_offset=1, num_experts=4, num_experts_per_tok=2,
                            mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=8,
                            max_position_embeddings=2048, tie_word_embeddings=False)),
    # Mamba (MambaForCausalLM, the same mixer as Jamba's without the dt/B/C norms, mamba_selective_scan's loop):
    # 3 blocks, hidden 128, expand 2 (intermediate 256), state 16, conv kernel 4, time_step_rank 8, residual in fp32,
    # vocab 256, tied (MambaConfig's default).
    "mamba": ("mamba", dict(vocab_size=256, hidden_size=128, num_hidden_layers=3, state_size=16, expand=2,
                            conv_kernel=4, time_step_rank=8)),
    # Falcon-Mamba (FalconMambaForCausalLM): Mamba's with weightless RMSNorms on dt, B and C; the same sizes.
    "falcon-mamba": ("falcon_mamba", dict(vocab_size=256, hidden_size=128, num_hidden_layers=3, state_size=16,
                                          expand=2, conv_kernel=4, time_step_rank=8)),
    # Zamba (ZambaForCausalLM, v1): 6 blocks, hybrid in 2 and 5 (ZambaConfig's layout for 6 layers: attn_layer_period
    # 3, offset 2), each calling the one shared transformer block (4 heads of 64 on the 2 x 128 concatenation, no
    # positions, a GELU-gated MLP of 256, no adapters) then its own linear; the Mamba-1 mixers split into 2 mamba
    # heads of 128 (expand 2, state 16, conv kernel 4, dt_rank 8), mamba_selective_scan's loop per head; vocab 256,
    # tied (ZambaConfig's default).
    "zamba": ("zamba", dict(vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=6,
                            num_attention_heads=4, num_key_value_heads=4, n_mamba_heads=2, attn_layer_period=3,
                            attn_layer_offset=2, mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=8,
                            max_position_embeddings=2048, tie_word_embeddings=True)),
    # The same wider and shorter, three hybrid calls (blocks 1, 3, 5: the second call's gradient summed out of
    # place, the third added in place) with 4 heads of 128 on the 2 x 256 concatenation and an MLP of 1024: with
    # SGD at b1 s16 the weights' gradients make the backward peak.
    "zamba-grad": ("zamba", dict(vocab_size=256, hidden_size=256, intermediate_size=1024, num_hidden_layers=6,
                                 layers_block_type=["mamba", "hybrid", "mamba", "hybrid", "mamba", "hybrid"],
                                 num_attention_heads=4, num_key_value_heads=4, n_mamba_heads=2, mamba_d_state=16,
                                 mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=16, max_position_embeddings=2048,
                                 tie_word_embeddings=True)),
    "bert": ("bert", dict(vocab_size=4096, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                          intermediate_size=512, max_position_embeddings=512, hidden_dropout_prob=0.0,
                          attention_probs_dropout_prob=0.0)),
    # ModernBERT (ModernBertForMaskedLM): 3 layers, layer 0 global (full attention, no attn_norm), 1 and 2 local
    # (local_attention 32: a bidirectional window of 16 each way, reached at s >= 16), fused Wqkv, GeGLU Wi of
    # 2 x 192, LayerNorms without bias, tied decoder with its bias, vocab 512.
    "modernbert": ("modernbert", dict(vocab_size=512, hidden_size=128, intermediate_size=192, num_hidden_layers=3,
                                      num_attention_heads=4, local_attention=32, global_attn_every_n_layers=3,
                                      max_position_embeddings=1024, pad_token_id=0, bos_token_id=1,
                                      eos_token_id=2, cls_token_id=1, sep_token_id=2)),
    # DeBERTa-v3 (DebertaV2ForMaskedLM, the legacy MLM head its configs get by default): disentangled attention
    # with c2p and p2c, share_att_key, 32 log buckets (2 x 32 relative embeddings, LayerNormed), no absolute
    # positions or token types, 2 layers, vocab 512.
    "deberta-v3": ("deberta-v2", dict(vocab_size=512, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=256, max_position_embeddings=512, relative_attention=True,
                                      position_buckets=32, norm_rel_ebd="layer_norm", share_att_key=True,
                                      pos_att_type="p2c|c2p", position_biased_input=False, type_vocab_size=0,
                                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=0)),
    # the same with DeBERTa-v3's released dropout, 0.1 (hidden and attention probabilities)
    "deberta-v3-drop": ("deberta-v2", dict(vocab_size=512, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                           intermediate_size=256, max_position_embeddings=512, relative_attention=True,
                                           position_buckets=32, norm_rel_ebd="layer_norm", share_att_key=True,
                                           pos_att_type="p2c|c2p", position_biased_input=False, type_vocab_size=0,
                                           hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                                           pad_token_id=0)),
    # GPT-J: Phi's parallel block without q/k/v/out_proj biases, rotary_dim 16 of a head of 32
    # (rotate_every_two), dropout 0; vocab 2048 (logits' peak) and 256 over 3 blocks (activations').
    "gptj": ("gptj", dict(vocab_size=2048, n_embd=128, n_layer=2, n_head=4, n_inner=512, rotary_dim=16,
                          n_positions=2048, attn_pdrop=0.0, embd_pdrop=0.0, resid_pdrop=0.0)),
    "gptj-act": ("gptj", dict(vocab_size=256, n_embd=128, n_layer=3, n_head=4, n_inner=512, rotary_dim=16,
                              n_positions=2048, attn_pdrop=0.0, embd_pdrop=0.0, resid_pdrop=0.0)),
    # Falcon: the new decoder architecture (Falcon-40B/180B: kv groups, 4 heads of 32 in 2 groups, ln_attn and
    # ln_mlp) and the multi-query block (Falcon-7B: one kv head, one input_layernorm); RoPE, no bias, tied.
    "falcon": ("falcon", dict(vocab_size=2048, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                              num_kv_heads=2, new_decoder_architecture=True, ffn_hidden_size=512, alibi=False,
                              bias=False, max_position_embeddings=2048, bos_token_id=1, eos_token_id=2)),
    "falcon-act": ("falcon", dict(vocab_size=256, hidden_size=128, num_hidden_layers=3, num_attention_heads=4,
                                  num_kv_heads=2, new_decoder_architecture=True, ffn_hidden_size=512, alibi=False,
                                  bias=False, max_position_embeddings=2048, bos_token_id=1, eos_token_id=2)),
    "falcon-mq": ("falcon", dict(vocab_size=2048, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                 multi_query=True, parallel_attn=True, ffn_hidden_size=512, alibi=False,
                                 bias=False, max_position_embeddings=2048, bos_token_id=1, eos_token_id=2)),
    # Cohere (Command-R's block: one CohereLayerNorm, parallel attention and SwiGLU MLP, GQA 4/2, tied, logits
    # scaled by logit_scale), vocab 2048 and 256 over 3 blocks.
    "cohere": ("cohere", dict(vocab_size=2048, hidden_size=128, intermediate_size=344, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                              pad_token_id=0, bos_token_id=1, eos_token_id=2)),
    "cohere-act": ("cohere", dict(vocab_size=256, hidden_size=128, intermediate_size=344, num_hidden_layers=3,
                                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                                  pad_token_id=0, bos_token_id=1, eos_token_id=2)),
}


def write_configs(out_dir):
    import transformers
    os.makedirs(out_dir, exist_ok=True)
    for name, (mt, kw) in sorted(CONFIGS.items()):
        cfg = transformers.CONFIG_MAPPING[mt](use_cache=False, **kw)
        d = cfg.to_dict()
        d.pop("transformers_version", None)   # the file stays put when the pin moves
        path = os.path.join(out_dir, name + ".config.json")
        with open(path, "w") as f:
            json.dump(d, f, indent=2, sort_keys=True)
            f.write("\n")
        print(path)


def load_config(path):
    import transformers
    with open(path) as f:
        d = json.load(f)
    mt = d.pop("model_type")
    return transformers.CONFIG_MAPPING[mt].from_dict(d)


class HFStep(nn.Module):
    """model(ids, labels) -> loss, as harness._train_step calls it, with the
    phase marks: "forward" around the HF forward, "loss" (nested; the
    replay gives events to the mark that started last) around its
    loss_function.  The output object (and with it the logits) dies before
    forward returns, as in a training loop that keeps only the loss."""

    def __init__(self, model, input_name="input_ids"):
        super().__init__()
        self.model = model
        self.input_name = input_name
        self.extra = {}
        inner = model.loss_function

        def loss_function(*a, **k):
            with phase("loss"):
                return inner(*a, **k)
        model.loss_function = loss_function

    def forward(self, ids, labels):
        with phase("forward"):
            out = self.model(**{self.input_name: ids}, labels=labels, **self.extra)
            loss = out.loss
            del out
        return loss


class CLIPStep(nn.Module):
    """CLIPModel(input_ids, pixel_values, return_loss=True) -> loss, under
    the "forward" mark, its image_text_contrastive_loss under "loss"."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        import importlib
        mod = importlib.import_module("transformers.models.clip.modeling_clip")
        inner = mod.image_text_contrastive_loss

        def contrastive(*a, **k):
            with phase("loss"):
                return inner(*a, **k)
        mod.image_text_contrastive_loss = contrastive

    def forward(self, ids, pixel_values):
        with phase("forward"):
            out = self.model(input_ids=ids, pixel_values=pixel_values, return_loss=True)
            loss = out.loss
            del out
        return loss


class LlavaStep(HFStep):
    """LlavaForConditionalGeneration(input_ids, pixel_values, labels=ids)
    -> loss; the ids start with the image tokens, one per patch."""

    def forward(self, ids, pixel_values):
        with phase("forward"):
            out = self.model(input_ids=ids, pixel_values=pixel_values, labels=ids)
            loss = out.loss
            del out
        return loss


class _PhasedCrossEntropyLoss(nn.CrossEntropyLoss):
    """modeling_t5's CrossEntropyLoss under the "loss" mark, the place the
    other classes' loss_function has."""

    def forward(self, *a, **k):
        with phase("loss"):
            return super().forward(*a, **k)


def build(config_path, attention, recompute, precision):
    import transformers
    cfg = load_config(config_path)
    if cfg.model_type in ("t5", "mt5", "bart", "whisper"):
        import importlib
        mod = importlib.import_module("transformers.models.%s.modeling_%s" % (cfg.model_type, cfg.model_type))
        mod.CrossEntropyLoss = _PhasedCrossEntropyLoss
        auto = transformers.AutoModelForSpeechSeq2Seq if cfg.model_type == "whisper" else \
            transformers.AutoModelForSeq2SeqLM
    elif cfg.model_type in ("bert", "modernbert"):
        auto = transformers.AutoModelForMaskedLM
    elif cfg.model_type == "deberta-v2":
        import importlib
        mod = importlib.import_module("transformers.models.deberta_v2.modeling_deberta_v2")
        mod.CrossEntropyLoss = _PhasedCrossEntropyLoss
        auto = transformers.AutoModelForMaskedLM
    elif cfg.model_type in VISION_TYPES:
        auto = transformers.AutoModelForImageClassification
    elif cfg.model_type == "clip":
        auto = transformers.AutoModel
    elif cfg.model_type == "llava":
        auto = transformers.AutoModelForImageTextToText
    else:
        auto = transformers.AutoModelForCausalLM
    model = auto.from_config(cfg, attn_implementation=attention)
    if any(p.dtype != torch.float32 for p in model.parameters()):
        model = model.float()
    got = getattr(model.config, "_attn_implementation", attention)
    if got != attention:
        raise harness.HarnessError("%s: asked for attention %s, transformers chose %s" % (config_path, attention, got))
    model.train()
    if recompute == "full":
        import warnings
        with warnings.catch_warnings():   # transformers 5 renames it activation_checkpointing_enable
            warnings.simplefilter("ignore", FutureWarning)
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if precision == "bf16":
        model.to(torch.bfloat16)
    if cfg.model_type == "clip":
        return CLIPStep(model), cfg
    if cfg.model_type == "llava":
        model.model.vision_tower.requires_grad_(False)   # LLaVA-1.5's recipe: the CLIP tower frozen
        return LlavaStep(model), cfg
    return HFStep(model, "pixel_values" if cfg.model_type in VISION_TYPES else
                  "input_features" if cfg.model_type == "whisper" else "input_ids"), cfg


# Image classifiers: pixel values (fp32, as a loader gives them) and one
# class label per image; `seq` is the tokens, patches plus the CLS token,
# whose image another than the config's image_size runs with the position
# table interpolated (interpolate_pos_encoding=True).
VISION_TYPES = ("vit",)


def vision_image(cfg, seq):
    """The square image of `seq` tokens (patches plus the CLS token)."""
    side = int(round((seq - 1) ** 0.5))
    if side * side != seq - 1:
        raise harness.HarnessError("%d tokens are not a square of patches plus one" % seq)
    return side * cfg.patch_size


def measure(config_path, precision="fp32", optimizer="adamw", micro_batch=2, seq=64, recompute="none",
            attention="sdpa", steps=2, seed=0, num_threads=2, trace=False, optimizer_impl="default",
            target_seq=None):
    """harness.measure's result keys (allocated_peak_bytes, peak_phase,
    peak_step, phases, steps_detail, checks, ...) for an HF model.  An
    encoder-decoder takes labels of target_seq tokens (default seq), from
    which it makes its decoder input (_shift_right)."""
    import transformers
    torch.set_num_threads(int(num_threads))
    torch.manual_seed(seed)
    o = {"device": "cpu", "precision": precision}
    model, cfg = build(config_path, attention, recompute, precision)
    gen = torch.Generator().manual_seed(seed + 1)
    if cfg.model_type == "llava":
        vc = cfg.vision_config
        n_img = (vc.image_size // vc.patch_size) ** 2
        ids = torch.randint(0, int(cfg.image_token_id), (micro_batch, seq), generator=gen)
        ids[:, :n_img] = cfg.image_token_id
        labels = torch.randn(micro_batch, vc.num_channels, vc.image_size, vc.image_size, generator=gen)
    elif cfg.model_type == "clip":
        tc, vc = cfg.text_config, cfg.vision_config
        ids = torch.randint(0, int(tc.vocab_size), (micro_batch, seq), generator=gen)
        labels = torch.randn(micro_batch, vc.num_channels, vc.image_size, vc.image_size, generator=gen)
    elif cfg.model_type in VISION_TYPES:
        img = vision_image(cfg, seq)
        ids = torch.randn(micro_batch, cfg.num_channels, img, img, generator=gen)
        if img != cfg.image_size:
            model.extra = {"interpolate_pos_encoding": True}
        labels = torch.randint(0, int(cfg.num_labels), (micro_batch,), generator=gen)
    elif cfg.model_type == "whisper":
        # log-mel features: num_mel_bins x 2 * seq frames (seq = max_source_positions), in the weights' dtype
        ids = torch.randn((micro_batch, int(cfg.num_mel_bins), 2 * seq), generator=gen,
                          dtype=torch.bfloat16 if precision == "bf16" else torch.float32)
        labels = ids
    else:
        ids = torch.randint(0, int(cfg.vocab_size), (micro_batch, seq), generator=gen)
        labels = ids
    if cfg.is_encoder_decoder:
        labels = torch.randint(0, int(cfg.vocab_size), (micro_batch, target_seq or seq), generator=gen)
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = harness.make_optimizer(optimizer, trainable, "cpu", optimizer_impl)
    params = list(model.parameters())
    buffers = list(model.buffers())
    seen = {}
    weights = harness._unique_bytes(params, seen)
    bufs = harness._unique_bytes(buffers, seen)
    inputs = harness._unique_bytes([ids, labels], seen)
    res = {
        "torch": torch.__version__, "transformers": transformers.__version__,
        "model_class": type(model.model).__name__, "attention_impl": model.model.config._attn_implementation,
        "precision": precision, "optimizer": optimizer, "foreach": harness.effective_foreach(opt),
        "micro_batch": micro_batch, "seq": seq, "recompute": recompute,
        "weights_bytes": weights, "buffers_bytes": bufs, "inputs_bytes": inputs,
        "baseline_bytes": weights + bufs + inputs,
    }
    import gc
    gc.collect()
    info = {}
    rep = harness._measure_cpu(res, model, ids, labels, opt, o, None, info, params, buffers, steps, trace)
    res["grad_bytes"] = info.get("grad_bytes")
    res["optimizer_state_bytes"] = harness._unique_bytes(harness._optimizer_tensors(opt))
    res["final_loss"] = info.get("loss")
    if trace:
        res["_replay"] = rep
    del model, opt, ids, labels, params, buffers, trainable
    gc.collect()
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(prog="hf_models.py")
    ap.add_argument("config", nargs="?")
    ap.add_argument("--write-configs", metavar="DIR")
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--optimizer", default="adamw")
    ap.add_argument("--micro-batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--target-seq", type=int, default=None, help="an encoder-decoder's decoder length")
    ap.add_argument("--recompute", default="none")
    ap.add_argument("--attention", default="sdpa")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--trace", action="store_true", help="the largest allocations live at the peak, on stderr")
    a = ap.parse_args(argv)
    if a.write_configs:
        write_configs(a.write_configs)
        return 0
    if not a.config:
        ap.error("a config.json is needed")
    res = measure(a.config, a.precision, a.optimizer, a.micro_batch, a.seq, a.recompute, a.attention,
                  num_threads=a.threads, trace=a.trace, target_seq=a.target_seq)
    rep = res.pop("_replay", None)
    if rep is not None:
        peak, peak_i, ph, st, per = rep.summarize()
        top, groups, tot = rep.live_at(peak_i, top=25)
        for t in top:
            sys.stderr.write("%12d  %-16s %s\n" % (t["bytes"], t["allocated_in"], t["op"]))
        sys.stderr.write("by phase: %s\n" % json.dumps(groups))
    json.dump(res, sys.stdout, indent=1, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
