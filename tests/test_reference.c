/*
 * test_reference.c — the op model against published closed forms.
 *
 * Korthikanti et al., "Reducing Activation Recomputation in Large
 * Transformer Models" (2022), §4.1: under their assumptions a transformer
 * layer saves
 *
 *     s*b*h*(34 + 5*a*s/h)  bytes
 *
 * (16-bit activations, eager attention with dropout, ffn = 4h, no GQA,
 * learned positions, no parallelism).  Their items: attention 11sbh +
 * 5as^2b (QKV input 2sbh, Q and K 4sbh, softmax output 2as^2b, dropout mask
 * as^2b, dropout output 2as^2b, V 2sbh, output-projection input 2sbh,
 * dropout mask sbh); MLP 19sbh (input 2sbh, GELU input 8sbh, second linear
 * input 8sbh, dropout mask sbh); two LayerNorm inputs 4sbh.
 *
 * The op model lowers the same layer (implementation: megatron, precision
 * bf16-master, CUDA semantics) and must give exactly that plus the one
 * thing the formula leaves out: each native LayerNorm also saves its
 * per-row mean and rstd in fp32, 2 norms x 2 x 4 bytes x s*b = 16sb.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gpu.h"
#include "mem.h"
#include "model.h"
#include "plan.h"

static uint64_t
saved_per_microbatch(uint64_t layers, uint64_t s, uint64_t b, uint64_t h,
    uint64_t a)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_plan p;
	struct vp_profile prof;
	struct vp_mem_opts o;
	struct vp_mem r;

	vp_model_init(&m);
	m.name = NULL;
	m.layers = layers;
	m.hidden = h;
	m.heads = a;
	m.ffn = 4 * h;
	m.vocab = 512;
	m.act = VP_ACT_GELU;
	m.norm = VP_NORM_LAYERNORM;
	m.bias = true;
	m.pos = VP_POS_LEARNED;
	m.max_seq = s;
	m.dropout = 0.1;
	m.impl = VP_IMPL_MEGATRON;
	assert_int_equal(vp_model_validate(&m, &d), 0);
	vp_plan_defaults(&p, &m);
	p.precision = VP_PREC_BF16_MASTER;
	p.attention = VP_ATTN_EAGER;
	p.micro_batch = b;
	p.seq = s;
	p.device = VP_DEVICE_CUDA;
	vp_profile_default(NULL, &prof);
	o.profile = &prof;
	o.world = 1;
	o.explain = 0;
	assert_int_equal(vp_mem_estimate(&m, &p, &o, &r), 0);
	vp_diags_clear(&d);
	return r.saved_per_microbatch;
}

static void
korthikanti_per_layer(void **state)
{
	/* Sizes chosen so every tensor is a multiple of 512 bytes (the
	 * caching allocator's rounding would otherwise show). */
	static const struct { uint64_t s, b, h, a; } cases[] = {
		{ 256, 1, 512, 8 },
		{ 512, 2, 1024, 16 },
		{ 1024, 1, 768, 12 },
		{ 128, 4, 2048, 32 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t s = cases[i].s, b = cases[i].b, h = cases[i].h;
		uint64_t a = cases[i].a;
		uint64_t one = saved_per_microbatch(1, s, b, h, a);
		uint64_t two = saved_per_microbatch(2, s, b, h, a);
		uint64_t formula = s * b * h * 34 + 5 * a * s * s * b;
		uint64_t ln_stats = 16 * s * b;

		print_message("s=%llu b=%llu h=%llu a=%llu: op model %llu B/layer,"
		    " formula %llu + LayerNorm stats %llu\n",
		    (unsigned long long)s, (unsigned long long)b,
		    (unsigned long long)h, (unsigned long long)a,
		    (unsigned long long)(two - one),
		    (unsigned long long)formula, (unsigned long long)ln_stats);
		assert_int_equal(two - one, formula + ln_stats);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(korthikanti_per_layer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
