/*
 * test_finetune.c — the storage layouts and counts fine-tuning depends on,
 * against numbers derived by hand from the libraries' formats.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "finetune.h"
#include "graph.h"
#include "model.h"
#include "plan.h"
#include "rules.h"

static void
nf4_bits_per_param(void **state)
{
	/*
	 * bitsandbytes 4-bit with double quantization, 4096 x 4096:
	 * packed 16777216 / 2 = 8388608; 262144 blocks of 64, their absmax
	 * in 8 bit = 262144; 1024 groups of 256 blocks with an fp32 absmax
	 * = 4096; codes 16 x 4 + 256 x 4 = 1088; offset 4.  Total 8656340
	 * bytes = 4.1274 bits per parameter (QLoRA: 4.127).
	 */
	uint64_t b = vp_quant_tensor_bytes(4096, 4096, VP_QUANT_NF4);
	double bits = 8.0 * (double)b / (4096.0 * 4096.0);

	(void)state;
	assert_int_equal(b, 8388608 + 262144 + 4096 + 1088 + 4);
	print_message("nf4: %.4f bits per parameter\n", bits);
	assert_true(fabs(bits - 4.127) < 0.001);
	assert_int_equal(vp_quant_tensor_bytes(4096, 4096, VP_QUANT_FP4), b);
	/*
	 * torchao 0.18's NF4Tensor of a bf16 4096 x 4096 weight: packed
	 * 8388608; 262144 int8 scalers; 1024 bf16 quantization factors;
	 * a bf16 mean; the 16-entry bf16 NF4 table.  The harness counts
	 * these inner tensors to the byte (tests/data/val/llama-nf4.yaml).
	 */
	assert_int_equal(vp_torchao_nf4_bytes(4096, 4096, 2),
	    8388608 + 262144 + 2 * 1024 + 2 + 2 * 16);
	/* LLM.int8: one byte per value and an fp32 scale per row. */
	assert_int_equal(vp_quant_tensor_bytes(11008, 4096, VP_QUANT_INT8),
	    11008ULL * 4096 + 4 * 11008);
}

static void
adam8bit_layout(void **state)
{
	(void)state;
	/* Under 4096 elements: fp32 states, 8 bytes each. */
	assert_int_equal(vp_adam8bit_tensor_bytes(4095), 8 * 4095);
	/* 4096 x 4096: two uint8 states (33554432), an fp32 absmax per
	 * 2048-block for each (2 x 4 x 8192 = 65536), two 256-entry fp32
	 * maps (2048): 2.004 bytes per parameter. */
	assert_int_equal(vp_adam8bit_tensor_bytes(4096ULL * 4096),
	    33554432 + 65536 + 2048);
}

static void
adafactor_layout(void **state)
{
	(void)state;
	/* A matrix keeps a row and a column vector in fp32. */
	assert_int_equal(vp_adafactor_tensor_bytes(4096, 11008),
	    4 * (4096 + 11008));
	/* A vector keeps its full second moment. */
	assert_int_equal(vp_adafactor_tensor_bytes(4096, 1), 4 * 4096);
}

static void
lora_params_exact(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_plan p;
	unsigned set;
	const char *bad;

	(void)state;
	/* Llama-2-7B: h 4096, 32 heads, ffn 11008, 32 layers. */
	vp_model_init(&m);
	m.layers = 32;
	m.hidden = 4096;
	m.heads = 32;
	m.ffn = 11008;
	m.vocab = 32000;
	m.act = VP_ACT_SWIGLU;
	m.norm = VP_NORM_RMSNORM;
	assert_int_equal(vp_model_validate(&m, &d), 0);
	vp_plan_defaults(&p, &m);
	p.lora_rank = 64;
	/* PEFT's default q,v: 2 x 64 x (4096 + 4096) x 32 = 33554432. */
	assert_int_equal(vp_lora_params(&m, &p, 32), 33554432);
	/* all-linear, rank 8: per layer 4 x 8 x 8192 (q k v o) + 3 x 8 x
	 * (4096 + 11008) (gate up down) = 262144 + 362496 = 624640;
	 * x 32 = 19988480 (PEFT prints 19,988,480 for this model). */
	assert_int_equal(vp_lora_parse_targets("all-linear", &set, &bad), 0);
	p.lora_targets = set;
	p.lora_rank = 8;
	assert_int_equal(vp_lora_params(&m, &p, 32), 19988480);
	assert_int_equal(vp_lora_parse_targets("q,v,x", &set, &bad), -1);
	assert_string_equal(bad, "x");
	vp_diags_clear(&d);
}

/* Adapter parameters the lowering builds: the weight gradients of its
 * lora_A and lora_B ops, in the adapter dtype. */
static uint64_t
lowered_adapter_params(const struct vp_model *m, const struct vp_plan *p)
{
	struct vp_graph g;
	uint64_t bytes = 0;
	size_t i;

	assert_int_equal(vp_graph_build(m, p, &g), 0);
	for (i = 0; i < g.nop; i++)
		if (strcmp(g.op[i].name, "lora_A") == 0 ||
		    strcmp(g.op[i].name, "lora_B") == 0)
			bytes += g.op[i].wgrad_bytes;
	vp_graph_free(&g);
	return bytes / vp_dtype_bytes[p->lora_dtype];
}

/*
 * The lowering and the fine-tuning view read the same traits, so what the
 * lowering adapts is what vp_lora_params counts, for every family and a
 * Megatron layout.  The bug this guards: with implementation megatron
 * (RoPE) the lowering adapted the whole fused qkv under --lora-targets q
 * while vp_model_matrices counted q alone.
 */
static void
lora_lowering_matches_view(void **state)
{
	static const struct {
		enum vp_arch arch; enum vp_pos pos; enum vp_impl impl;
		enum vp_act act; int family;
	} c[] = {
		{ VP_ARCH_DECODER, VP_POS_ROPE, VP_IMPL_HF, VP_ACT_SWIGLU, -1 },
		{ VP_ARCH_DECODER, VP_POS_ROPE, VP_IMPL_MEGATRON, VP_ACT_SWIGLU, -1 },
		{ VP_ARCH_DECODER, VP_POS_LEARNED, VP_IMPL_HF, VP_ACT_GELU_NEW, -1 },
		{ VP_ARCH_DECODER, VP_POS_LEARNED, VP_IMPL_HF, VP_ACT_RELU,
		  VP_FAMILY_LLAMA },
		{ VP_ARCH_ENCODER, VP_POS_LEARNED, VP_IMPL_HF, VP_ACT_GELU, -1 },
		{ VP_ARCH_ENCODER, VP_POS_LEARNED, VP_IMPL_TORCH_NN, VP_ACT_RELU, -1 },
		{ VP_ARCH_DECODER, VP_POS_ROPE, VP_IMPL_HF, VP_ACT_SWIGLU,
		  VP_FAMILY_QWEN3 },
	};
	static const char *const targets[] = { "q", "q,v", "all-linear",
	    "q,v,head", "head" };
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_plan p;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		vp_model_init(&m);
		m.layers = 2;
		m.hidden = 64;
		m.heads = 4;
		m.kv_heads = 2;
		m.ffn = 256;
		m.vocab = 128;
		m.max_seq = 64;
		m.arch = c[i].arch;
		m.pos = c[i].pos;
		m.impl = c[i].impl;
		m.act = c[i].act;
		m.family = c[i].family;
		if (c[i].arch == VP_ARCH_ENCODER)
			m.kv_heads = 4;
		assert_int_equal(vp_model_validate(&m, &d), 0);
		for (j = 0; j < sizeof targets / sizeof targets[0]; j++) {
			unsigned set;
			const char *bad;

			vp_plan_defaults(&p, &m);
			p.seq = 16;
			p.micro_batch = 1;
			p.lora_rank = 4;
			assert_int_equal(vp_lora_parse_targets(targets[j], &set,
			    &bad), 0);
			p.lora_targets = set & vp_lora_available(&m);
			if (p.lora_targets == 0)
				continue;	/* no head on an encoder */
			assert_int_equal(lowered_adapter_params(&m, &p),
			    vp_lora_params(&m, &p, m.layers) +
			    vp_lora_head_params(&m, &p));
		}
	}
	/* all-linear leaves the head out, as PEFT's does. */
	{
		unsigned set;
		const char *bad;

		assert_int_equal(vp_lora_parse_targets("all-linear", &set,
		    &bad), 0);
		assert_false(set & (1u << VP_LORA_HEAD));
	}
	/* Megatron's fused qkv under q: r (h + q + 2 kv) per block =
	 * 4 (64 + 64 + 2 x 32) x 2 = 1536. */
	vp_model_init(&m);
	m.layers = 2;
	m.hidden = 64;
	m.heads = 4;
	m.kv_heads = 2;
	m.ffn = 256;
	m.vocab = 128;
	m.impl = VP_IMPL_MEGATRON;
	m.act = VP_ACT_SWIGLU;
	assert_int_equal(vp_model_validate(&m, &d), 0);
	vp_plan_defaults(&p, &m);
	p.lora_rank = 4;
	p.lora_targets = 1u << VP_LORA_Q;
	assert_int_equal(vp_lora_params(&m, &p, 2), 1536);
	vp_diags_clear(&d);
}

/*
 * DeepSeek's MLA: the matrices the fine-tuning view lists (q_a_proj,
 * q_b_proj or q_proj, kv_a_proj_with_mqa, kv_b_proj, o_proj and the MLP)
 * are the block's parameters but its norms, so shape-aware optimizer
 * states and ZeRO-3's persistence see the real shapes; LoRA, quantization
 * and tensor parallelism with it are refused (not measured).
 */
static void
mla_matrices_match_params(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_param_count pc;
	struct vp_model m;
	struct vp_plan p;
	int q;

	(void)state;
	for (q = 0; q < 2; q++) {
		vp_model_init(&m);
		m.family = VP_FAMILY_DEEPSEEK_V3;
		m.layers = 2;
		m.hidden = 64;
		m.heads = 4;
		m.ffn = 256;
		m.vocab = 128;
		m.act = VP_ACT_SWIGLU;
		m.norm = VP_NORM_RMSNORM;
		m.mla.q_rank = q ? 48 : 0;
		m.mla.kv_rank = 32;
		m.mla.rope_dim = 16;
		m.mla.nope_dim = 32;
		m.mla.v_dim = 24;
		m.head_dim = 48;
		assert_int_equal(vp_model_validate(&m, &d), 0);
		vp_plan_defaults(&p, &m);
		vp_model_params(&m, &pc);
		assert_int_equal(vp_block_linear_params(&m, &p, 1),
		    pc.per_layer - 2 * m.hidden - m.mla.q_rank -
		    m.mla.kv_rank);
		p.lora_rank = 8;
		assert_int_equal(vp_plan_check(&p, &m, 1, &d), -1);
		p.lora_rank = 0;
		p.tp = 2;
		assert_int_equal(vp_plan_check(&p, &m, 2, &d), -1);
		vp_diags_clear(&d);
		vp_model_free(&m);
	}
}

static size_t
count_ops(const struct vp_graph *g, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < g->nop; i++)
		n += strcmp(g->op[i].name, name) == 0;
	return n;
}

/*
 * The family, not the position kind, decides the block: a learned-position
 * decoder (OPT-like) read as family llama keeps separate q, k, v, no
 * residual dropouts and no embedding dropout; the same model without a
 * family is lowered as GPT-2, as always.
 */
static void
family_drives_lowering(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_plan p;
	struct vp_graph g;
	int pass;

	(void)state;
	for (pass = 0; pass < 2; pass++) {
		vp_model_init(&m);
		m.layers = 2;
		m.hidden = 64;
		m.heads = 4;
		m.ffn = 256;
		m.vocab = 128;
		m.pos = VP_POS_LEARNED;
		m.max_seq = 64;
		m.dropout = 0.1;
		m.family = pass == 0 ? -1 : VP_FAMILY_LLAMA;
		assert_int_equal(vp_model_validate(&m, &d), 0);
		vp_plan_defaults(&p, &m);
		p.seq = 16;
		p.micro_batch = 1;
		p.precision = VP_PREC_FP32;
		assert_int_equal(vp_graph_build(&m, &p, &g), 0);
		assert_int_equal(count_ops(&g, "qkv_proj"), pass == 0 ? 2 : 0);
		assert_int_equal(count_ops(&g, "q_proj"), pass == 0 ? 0 : 2);
		assert_int_equal(count_ops(&g, "resid dropout"),
		    pass == 0 ? 2 : 0);
		assert_int_equal(count_ops(&g, "embedding dropout"),
		    pass == 0 ? 1 : 0);
		/* Both keep the decoder's LM head. */
		assert_int_equal(count_ops(&g, "lm_head"), 1);
		vp_graph_free(&g);
	}
	vp_diags_clear(&d);
}

/*
 * --transformers and --torch reach the lowering: the shifted copy of the
 * logits goes with 4.49, repeat_kv's copies under sdpa with 4.54 on
 * PyTorch 2.5 (never under flash, always under eager), the contiguous
 * q, k and v and the transpose copy are 4.48 to 4.55's.
 */
static void
transformers_release_drives_lowering(void **state)
{
	static const struct {
		unsigned tf, torch;
		enum vp_attention attn;
		size_t shift, repeat, contig, transpose;
	} cases[] = {
		{ 440, 213, VP_ATTN_SDPA,  1, 2, 0, 0 },
		{ 448, 213, VP_ATTN_SDPA,  1, 2, 1, 2 },
		{ 449, 213, VP_ATTN_SDPA,  0, 2, 1, 2 },
		{ 454, 213, VP_ATTN_SDPA,  0, 0, 3, 2 },
		{ 454, 204, VP_ATTN_SDPA,  0, 2, 1, 2 },
		{ 456, 213, VP_ATTN_SDPA,  0, 0, 0, 0 },
		{ 524, 213, VP_ATTN_EAGER, 0, 2, 0, 2 },
		{ 440, 213, VP_ATTN_FLASH, 1, 0, 0, 0 },
	};
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_plan p;
	struct vp_graph g;
	size_t i;

	(void)state;
	vp_model_init(&m);		/* Llama family, 4 heads / 2 kv */
	m.layers = 2;
	m.hidden = 64;
	m.heads = 4;
	m.kv_heads = 2;
	m.ffn = 256;
	m.vocab = 128;
	m.act = VP_ACT_SWIGLU;
	m.norm = VP_NORM_RMSNORM;
	assert_int_equal(vp_model_validate(&m, &d), 0);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		vp_plan_defaults(&p, &m);
		p.seq = 16;
		p.micro_batch = 1;
		p.precision = VP_PREC_FP32;
		p.transformers_version = cases[i].tf;
		p.torch_version = cases[i].torch;
		p.attention = cases[i].attn;
		assert_int_equal(vp_graph_build(&m, &p, &g), 0);
		assert_int_equal(count_ops(&g, "shift logits"), cases[i].shift);
		/* Counts over the two layers; the contiguous copies are
		 * per layer: q, and k and v when not repeated. */
		assert_int_equal(count_ops(&g, "repeat k"), cases[i].repeat);
		assert_int_equal(count_ops(&g, "repeat v"), cases[i].repeat);
		assert_int_equal(count_ops(&g, "q contiguous") +
		    count_ops(&g, "k contiguous") + count_ops(&g,
		    "v contiguous"), cases[i].contig * 2);
		assert_int_equal(count_ops(&g, "attn transpose"),
		    cases[i].transpose);
		vp_graph_free(&g);
	}
	vp_diags_clear(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nf4_bits_per_param),
		cmocka_unit_test(adam8bit_layout),
		cmocka_unit_test(adafactor_layout),
		cmocka_unit_test(lora_params_exact),
		cmocka_unit_test(lora_lowering_matches_view),
		cmocka_unit_test(family_drives_lowering),
		cmocka_unit_test(mla_matrices_match_params),
		cmocka_unit_test(transformers_release_drives_lowering),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
