/* finetune.c — see finetune.h. */
#include "finetune.h"

#include <assert.h>
#include <string.h>

#define BIT(t) (1u << VP_LORA_##t)

static const unsigned role_lora[VP_ROLE_COUNT] = {
	[VP_ROLE_Q] = BIT(Q), [VP_ROLE_K] = BIT(K), [VP_ROLE_V] = BIT(V),
	[VP_ROLE_QKV] = BIT(Q) | BIT(K) | BIT(V), [VP_ROLE_O] = BIT(O),
	[VP_ROLE_GATE] = BIT(GATE), [VP_ROLE_UP] = BIT(UP),
	[VP_ROLE_FC] = BIT(UP), [VP_ROLE_DOWN] = BIT(DOWN),
};

unsigned
vp_role_lora_bits(enum vp_role role)
{
	assert(role < VP_ROLE_COUNT);
	return role_lora[role];
}

/* One block matrix of a role: its LoRA bits, quantizable. */
static struct vp_matrix
role_matrix(enum vp_role role, uint64_t rows, uint64_t cols, uint64_t count)
{
	return (struct vp_matrix){ vp_role_names[role], rows, cols, count,
	    role_lora[role], true };
}

size_t
vp_model_matrices(const struct vp_model *m, const struct vp_plan *p,
    uint64_t blocks, struct vp_matrix *out)
{
	uint64_t tp = p->tp, ep = p->ep;
	uint64_t h = m->hidden, d = m->head_dim;
	uint64_t qd = m->heads / tp * d;
	uint64_t kd = (m->kv_heads >= tp ? m->kv_heads / tp : 1) * d;
	uint64_t f = m->ffn / tp, moe_blocks = 0, dense_blocks = blocks;
	struct vp_family_info fam = vp_model_traits(m);
	bool gated = vp_act_gated(m->act) && fam.lin[VP_ROLE_GATE] != NULL;
	size_t n = 0;

	/* The plan is normalised (vp_plan_normalize): no degree is 0. */
	assert(vp_plan_degrees_ok(p));

	if (m->has_moe) {
		dense_blocks = vp_moe_dense_blocks(m, 0, blocks);
		moe_blocks = blocks - dense_blocks;
	}
	if (fam.mla) {
		/* DeepSeek's MLA (model.c, mla_params); rules.c refuses
		 * TP with it, so the shapes are whole. */
		const struct vp_mla *a = &m->mla;
		uint64_t qo = m->heads * (a->nope_dim + a->rope_dim);

		if (a->q_rank) {
			out[n++] = role_matrix(VP_ROLE_Q_A, a->q_rank, h, blocks);
			out[n++] = role_matrix(VP_ROLE_Q_B, qo, a->q_rank,
			    blocks);
		} else {
			out[n++] = role_matrix(VP_ROLE_Q, qo, h, blocks);
		}
		out[n++] = role_matrix(VP_ROLE_KV_A, a->kv_rank + a->rope_dim,
		    h, blocks);
		out[n++] = role_matrix(VP_ROLE_KV_B, m->heads * (a->nope_dim +
		    a->v_dim), a->kv_rank, blocks);
		out[n++] = role_matrix(VP_ROLE_O, h, m->heads * a->v_dim,
		    blocks);
	} else if (fam.fused_qkv) {
		/* GPT-2's c_attn, Megatron's linear_qkv,
		 * nn.MultiheadAttention's in_proj. */
		out[n++] = role_matrix(VP_ROLE_QKV, qd + 2 * kd, h, blocks);
	} else {
		out[n++] = role_matrix(VP_ROLE_Q, qd, h, blocks);
		out[n++] = role_matrix(VP_ROLE_K, kd, h, blocks);
		out[n++] = role_matrix(VP_ROLE_V, kd, h, blocks);
	}
	if (!fam.mla)
		out[n++] = role_matrix(VP_ROLE_O, h, qd, blocks);
	if (gated) {
		out[n++] = role_matrix(VP_ROLE_GATE, f, h, dense_blocks);
		out[n++] = role_matrix(VP_ROLE_UP, f, h, dense_blocks);
	} else {
		out[n++] = role_matrix(VP_ROLE_FC, f, h, dense_blocks);
	}
	out[n++] = role_matrix(VP_ROLE_DOWN, h, f, dense_blocks);
	if (moe_blocks) {
		uint64_t e = m->moe.experts / ep * moe_blocks, ef = m->moe.ffn;

		out[n++] = (struct vp_matrix){ "expert gate", ef, h, e,
		    BIT(GATE), true };
		out[n++] = (struct vp_matrix){ "expert up", ef, h, e, BIT(UP),
		    true };
		out[n++] = (struct vp_matrix){ "expert down", h, ef, e,
		    BIT(DOWN), true };
		out[n++] = (struct vp_matrix){ "router", m->moe.experts, h,
		    moe_blocks, 0, false };
		if (m->moe.shared_experts) {
			uint64_t sf = m->moe.shared_ffn, c = moe_blocks *
			    m->moe.shared_experts;

			out[n++] = (struct vp_matrix){ "shared gate", sf, h, c,
			    BIT(GATE), true };
			out[n++] = (struct vp_matrix){ "shared up", sf, h, c,
			    BIT(UP), true };
			out[n++] = (struct vp_matrix){ "shared down", h, sf, c,
			    BIT(DOWN), true };
		}
	}
	assert(n <= VP_MAX_MATRICES);
	return n;
}

unsigned
vp_lora_available(const struct vp_model *m)
{
	unsigned all = VP_LORA_ALL_LINEAR;
	struct vp_family_info fam = vp_model_traits(m);
	bool gate = vp_act_gated(m->act) && fam.lin[VP_ROLE_GATE] != NULL;

	/* The expert matrices always list a gate (vp_model_matrices). */
	if (!gate && !m->has_moe)
		all &= ~BIT(GATE);
	/* The LM head of a decoder (lm_head, torchtune's output). */
	if (fam.head == VP_HEAD_LM)
		all |= BIT(HEAD);
	return all;
}

uint64_t
vp_lora_head_params(const struct vp_model *m, const struct vp_plan *p)
{
	if (!(p->lora_targets & BIT(HEAD)) ||
	    vp_model_traits(m).head != VP_HEAD_LM)
		return 0;
	/* A: r x h; B: V/tp x r (the head is column-parallel). */
	return vp_mul_sat(p->lora_rank, m->hidden + (m->vocab + p->tp - 1) /
	    p->tp);
}

uint64_t
vp_lora_params(const struct vp_model *m, const struct vp_plan *p,
    uint64_t blocks)
{
	struct vp_matrix mx[VP_MAX_MATRICES];
	size_t n = vp_model_matrices(m, p, blocks, mx), i;
	uint64_t r = p->lora_rank, total = 0;

	/* PEFT: A is r x in, B is out x r, for each adapted matrix. */
	for (i = 0; i < n; i++)
		if (mx[i].lora_bits & p->lora_targets)
			total = vp_add_sat(total, vp_mul_sat(mx[i].count,
			    r * (mx[i].rows + mx[i].cols)));
	return total;
}

static uint64_t
ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

uint64_t
vp_quant_tensor_bytes(uint64_t rows, uint64_t cols, enum vp_quant q)
{
	uint64_t n = vp_mul_sat(rows, cols), blocks;

	switch (q) {
	case VP_QUANT_NF4:
	case VP_QUANT_FP4:
		blocks = ceil_div(n, 64);
		return ceil_div(n, 2) + blocks + 4 * ceil_div(blocks, 256) +
		    16 * 4 + 256 * 4 + 4;
	case VP_QUANT_INT8:
		return n + 4 * rows;
	default:
		return 2 * n;
	}
}

uint64_t
vp_torchao_nf4_bytes(uint64_t rows, uint64_t cols, unsigned wb)
{
	uint64_t n = vp_mul_sat(rows, cols), blocks = ceil_div(n, 64);

	return ceil_div(n, 2) + blocks + wb * ceil_div(blocks, 256) + wb +
	    16 * (uint64_t)wb;
}

uint64_t
vp_adam8bit_tensor_bytes(uint64_t numel)
{
	if (numel < 4096)
		return 8 * numel;
	return 2 * numel + 2 * 4 * ceil_div(numel, 2048) + 2 * 256 * 4;
}

uint64_t
vp_adafactor_tensor_bytes(uint64_t rows, uint64_t cols)
{
	if (rows <= 1 || cols <= 1)
		return 4 * rows * cols;
	return 4 * (rows + cols);
}

uint64_t
vp_block_linear_params(const struct vp_model *m, const struct vp_plan *p,
    uint64_t blocks)
{
	struct vp_matrix mx[VP_MAX_MATRICES];
	size_t n = vp_model_matrices(m, p, blocks, mx), i;
	uint64_t total = 0;

	for (i = 0; i < n; i++)
		if (mx[i].quantizable)
			total = vp_add_sat(total, vp_mul_sat(mx[i].count,
			    mx[i].rows * mx[i].cols));
	return total;
}

uint64_t
vp_frozen_base_bytes(const struct vp_model *m, const struct vp_plan *p,
    uint64_t blocks, uint64_t params, enum vp_dtype base)
{
	struct vp_matrix mx[VP_MAX_MATRICES];
	size_t n, i;
	uint64_t lin = 0, bytes = 0;

	if (p->quant == VP_QUANT_NONE)
		return vp_mul_sat(params, vp_dtype_bytes[base]);
	/* The block projections are quantized; embeddings, norms, the
	 * router and the head stay in 16 bit. */
	n = vp_model_matrices(m, p, blocks, mx);
	for (i = 0; i < n; i++)
		if (mx[i].quantizable) {
			lin = vp_add_sat(lin, vp_mul_sat(mx[i].count,
			    mx[i].rows * mx[i].cols));
			bytes = vp_add_sat(bytes, vp_mul_sat(mx[i].count,
			    p->quant_lib == VP_QLIB_TORCHAO ?
			    vp_torchao_nf4_bytes(mx[i].rows, mx[i].cols,
			    vp_dtype_bytes[base]) :
			    vp_quant_tensor_bytes(mx[i].rows, mx[i].cols,
			    p->quant)));
		}
	return vp_add_sat(bytes, vp_mul_sat(params > lin ? params - lin : 0,
	    vp_dtype_bytes[base]));
}

/* Per-tensor state bytes for one optimizer. */
static uint64_t
tensor_states(const struct vp_plan *p, uint64_t rows, uint64_t cols,
    unsigned sb)
{
	uint64_t n = vp_mul_sat(rows, cols);

	switch (p->optimizer) {
	case VP_OPT_ADAMW_8BIT:
	case VP_OPT_PAGED_ADAMW_8BIT:
		return vp_adam8bit_tensor_bytes(n);
	case VP_OPT_ADAFACTOR:
		return vp_adafactor_tensor_bytes(rows, cols) / 4 * sb;
	default:
		return vp_mul_sat(n, vp_opt_info[p->optimizer].nstates * sb);
	}
}

uint64_t
vp_optimizer_state_bytes(const struct vp_model *m, const struct vp_plan *p,
    uint64_t blocks, bool first, bool last, uint64_t trainable)
{
	struct vp_matrix mx[VP_MAX_MATRICES];
	unsigned sb = vp_dtype_bytes[vp_prec_info[p->precision].state];
	uint64_t total = 0, covered = 0, tp = p->tp, r;
	size_t n, i;

	assert(vp_plan_degrees_ok(p));
	/* torch.optim keeps states in each parameter's dtype: the adapters'
	 * under LoRA. */
	if (p->lora_rank > 0)
		sb = vp_dtype_bytes[p->lora_dtype];
	if (p->optimizer != VP_OPT_ADAMW_8BIT &&
	    p->optimizer != VP_OPT_PAGED_ADAMW_8BIT &&
	    p->optimizer != VP_OPT_ADAFACTOR)
		return vp_mul_sat(trainable, vp_opt_info[p->optimizer].nstates *
		    sb);
	n = vp_model_matrices(m, p, blocks, mx);
	if (p->lora_rank > 0) {
		/* Adapters: A is r x in, B is out x r. */
		r = p->lora_rank;
		for (i = 0; i < n; i++)
			if (mx[i].lora_bits & p->lora_targets) {
				total = vp_add_sat(total, vp_mul_sat(mx[i].count,
				    tensor_states(p, r, mx[i].cols, sb) +
				    tensor_states(p, mx[i].rows, r, sb)));
				covered = vp_add_sat(covered,
				    vp_mul_sat(mx[i].count, r * (mx[i].rows +
				    mx[i].cols)));
			}
	} else {
		for (i = 0; i < n; i++) {
			total = vp_add_sat(total, vp_mul_sat(mx[i].count,
			    tensor_states(p, mx[i].rows, mx[i].cols, sb)));
			covered = vp_add_sat(covered, vp_mul_sat(mx[i].count,
			    mx[i].rows * mx[i].cols));
		}
		if (first) {
			total = vp_add_sat(total, tensor_states(p, m->vocab / tp,
			    m->hidden, sb));
			covered += m->vocab / tp * m->hidden;
		}
		if (last && !m->tie_embeddings) {
			total = vp_add_sat(total, tensor_states(p, m->vocab / tp,
			    m->hidden, sb));
			covered += m->vocab / tp * m->hidden;
		}
	}
	/* What is left (norms, biases, positions) are small vectors: fp32
	 * states under 8-bit Adam (under 4096 elements each), a full second
	 * moment under Adafactor. */
	if (trainable > covered)
		total = vp_add_sat(total, vp_mul_sat(trainable - covered,
		    p->optimizer == VP_OPT_ADAFACTOR ? sb : 8));
	return total;
}
