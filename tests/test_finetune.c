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
#include "model.h"
#include "plan.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nf4_bits_per_param),
		cmocka_unit_test(adam8bit_layout),
		cmocka_unit_test(adafactor_layout),
		cmocka_unit_test(lora_params_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
