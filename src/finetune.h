/*
 * finetune.h — the per-matrix view of a model that fine-tuning methods
 * need: which linear layers LoRA adapts and how many adapter parameters
 * that makes, how bitsandbytes stores a quantized weight, and the
 * optimizer states whose size depends on each tensor's shape (8-bit
 * blockwise Adam, Adafactor's factored moments).
 *
 * Pure.  Sizes are per rank (tensor-parallel splits applied).
 */
#ifndef VP_FINETUNE_H
#define VP_FINETUNE_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "plan.h"

/* A weight matrix of shape rows x cols (out x in), count copies. */
struct vp_matrix {
	const char *name;
	uint64_t rows, cols;
	uint64_t count;		/* over all blocks (and experts) of the rank */
	unsigned lora_bits;	/* LoRA targets this matrix answers to; 0: none */
	bool quantizable;	/* a block projection (bitsandbytes replaces it) */
};

/* The LoRA targets a block linear of this role answers to (a fused qkv
 * answers to q, k and v: PEFT adapts the whole matrix). */
unsigned vp_role_lora_bits(enum vp_role role);

/*
 * The rank's weight matrices, as the family lays them out (the linears of
 * vp_model_traits, so the lowering adapts exactly what is counted here).
 * At most VP_MAX_MATRICES.
 */
#define VP_MAX_MATRICES 16
size_t vp_model_matrices(const struct vp_model *m, const struct vp_plan *p,
    uint64_t blocks, struct vp_matrix *out);

/* Adapter parameters: r (in + out) per adapted matrix of `blocks`
 * blocks, and those of the LM head (on the last pipeline stage). */
uint64_t vp_lora_params(const struct vp_model *m, const struct vp_plan *p,
    uint64_t blocks);
uint64_t vp_lora_head_params(const struct vp_model *m,
    const struct vp_plan *p);
/* Targets the model has (a gated MLP has gate; others do not). */
unsigned vp_lora_available(const struct vp_model *m);

/*
 * Bytes of one quantized rows x cols weight, bitsandbytes layout:
 * NF4/FP4 — two values per byte, one absmax per block of 64 quantized to
 * 8 bits (double quantization) with one fp32 absmax per 256 blocks, plus
 * the per-tensor codes (16 fp32 for the 4-bit code, 256 fp32 for the
 * 8-bit one) and an fp32 offset: 4 + 8/64 + 32/16384 = 4.127 bits per
 * parameter.  INT8 (LLM.int8) — one byte per value plus an fp32 scale
 * per row.
 */
uint64_t vp_quant_tensor_bytes(uint64_t rows, uint64_t cols, enum vp_quant q);

/*
 * Bytes of one rows x cols weight as torchao's NF4Tensor (to_nf4 with its
 * default blocks, torchao 0.18.0) of a weight whose elements are wb
 * bytes: two values per byte, an int8 scaler per block of 64, one
 * quantization factor per 256 scalers and the scalers' mean in the
 * weight's dtype, and the 16-entry NF4 table in it too.
 */
uint64_t vp_torchao_nf4_bytes(uint64_t rows, uint64_t cols, unsigned wb);

/*
 * bitsandbytes 8-bit Adam: tensors of at least 4096 elements keep two
 * uint8 states with an fp32 absmax per block of 2048 and two 256-entry
 * fp32 quantization maps; smaller tensors keep fp32 states.
 */
uint64_t vp_adam8bit_tensor_bytes(uint64_t numel);
/* Adafactor: fp32 row and column second moments for a matrix, a full
 * fp32 moment for a vector (no first moment by default). */
uint64_t vp_adafactor_tensor_bytes(uint64_t rows, uint64_t cols);

#endif

/*
 * Optimizer state bytes on one rank for the trainable tensors: every
 * parameter in full fine-tuning (blocks of this stage, the embedding on
 * the first, the head on the last), the adapters under LoRA.  Shape-aware
 * for 8-bit Adam and Adafactor; states are fp32 except under pure 16-bit
 * training.  `trainable` is the parameter count those tensors hold.
 */
uint64_t vp_optimizer_state_bytes(const struct vp_model *m,
    const struct vp_plan *p, uint64_t blocks, bool first, bool last,
    uint64_t trainable);
/* Bytes of the frozen base on one rank under LoRA (quantized or 16 bit). */
uint64_t vp_frozen_base_bytes(const struct vp_model *m,
    const struct vp_plan *p, uint64_t blocks, uint64_t params,
    enum vp_dtype base);
/* Linear-weight parameters of the blocks (fp8 copies are made of them). */
uint64_t vp_block_linear_params(const struct vp_model *m,
    const struct vp_plan *p, uint64_t blocks);
