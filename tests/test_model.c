/*
 * test_model.c — unit tests of the model reader (model_read.c over
 * ydoc.c) and of validation and parameter counting (model.c).
 *
 * Models are parsed from YAML/JSON text held in memory with ydoc_parse and
 * vp_model_from_doc.  Every parameter count is derived by hand in the
 * comment above it from the module layouts of the Hugging Face classes
 * (LlamaForCausalLM, GPT2LMHeadModel, BertForMaskedLM, MixtralForCausalLM).
 *
 * Tests named bug_* guard defects that were found in src/ and fixed (the
 * comment above each says what was wrong).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "lgraph.h"
#include "model_read.h"
#include "plan.h"
#include "ydoc.h"

/* Parse text and read it as a model; -2 when the YAML itself failed. */
static int
load(const char *text, struct vp_model *m, struct vp_diags *d)
{
	struct ydoc *doc = ydoc_parse("m.yaml", text, strlen(text), d);
	int rc;

	if (doc == NULL) {
		vp_model_init(m);
		return -2;
	}
	rc = vp_model_from_doc(doc, m, d);
	ydoc_free(doc);
	return rc;
}

/* The first diagnostic of a level whose message contains sub, or NULL. */
static const struct vp_diag *
find(const struct vp_diags *d, enum vp_level lv, const char *sub)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->v[i].level == lv && strstr(d->v[i].msg, sub) != NULL)
			return &d->v[i];
	return NULL;
}

/* Assert an error containing sub at line:col (col 0 = do not check). */
static void
expect_error_at(const struct vp_diags *d, const char *sub, int line, int col)
{
	const struct vp_diag *g = find(d, VP_ERROR, sub);

	if (g == NULL) {
		struct vp_buf b;
		vp_buf_init(&b);
		vp_diags_format(d, &b);
		fail_msg("no error containing \"%s\"; got:\n%s", sub, b.s);
	}
	assert_string_equal(g->file, "m.yaml");
	assert_int_equal(g->line, line);
	if (col)
		assert_int_equal(g->col, col);
}

/* Load text expecting success and no errors. */
static void
load_ok(const char *text, struct vp_model *m, struct vp_diags *d)
{
	int rc = load(text, m, d);

	if (rc != 0) {
		struct vp_buf b;
		vp_buf_init(&b);
		vp_diags_format(d, &b);
		fail_msg("model did not load (rc %d):\n%s", rc, b.s);
	}
	assert_int_equal(vp_diags_count(d, VP_ERROR), 0);
}

static uint64_t
total(const struct vp_model *m)
{
	struct vp_param_count pc;

	vp_model_params(m, &pc);
	return pc.total;
}

/* ---- defaults ----------------------------------------------------------- */

static void
defaults(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("name: tiny\nlayers: 2\nhidden: 64\nheads: 8\nffn: 160\n"
	    "vocab: 100\n", &m, &d);
	assert_string_equal(m.name, "tiny");
	assert_string_equal(m.file, "m.yaml");
	assert_int_equal(m.arch, VP_ARCH_DECODER);
	assert_int_equal(m.act, VP_ACT_GELU);
	assert_int_equal(m.norm, VP_NORM_LAYERNORM);
	assert_int_equal(m.pos, VP_POS_ROPE);
	assert_int_equal(m.impl, VP_IMPL_HF);
	assert_false(m.bias);
	assert_int_equal(m.qkv_bias, 0);	/* -1 → same as bias (false) */
	assert_false(m.tie_embeddings);
	assert_false(m.post_norms);
	assert_false(m.has_moe);
	assert_true(m.max_seq == 0);
	assert_true(m.type_vocab == 0);
	assert_true(m.dropout == 0.0);
	/* kv_heads defaults to heads; head_dim to hidden / heads = 8. */
	assert_true(m.kv_heads == 8);
	assert_true(m.head_dim == 8);
	assert_true(m.train.micro_batch == 0 && m.train.seq == 0);
	assert_int_equal(m.train.precision, -1);
	assert_int_equal(m.train.optimizer, -1);
	/*
	 * Parameters: LayerNorm (weight + bias), GELU MLP, no biases,
	 * untied.  h = 64, q = kv = 8 * 8 = 64, f = 160, V = 100.
	 *   attention 4 h^2          = 4 * 4096        = 16384
	 *   MLP 2 h f                = 2 * 64 * 160    = 20480
	 *   norms 2 * 2h             = 256
	 *   per layer                                  = 37120
	 *   2 layers                                   = 74240
	 *   embedding V h            = 6400
	 *   head: final LN 2h + V h  = 128 + 6400      = 6528
	 *   total = 6400 + 74240 + 6528                = 87168
	 */
	{
		struct vp_param_count pc;
		vp_model_params(&m, &pc);
		assert_true(pc.per_layer == 37120);
		assert_true(pc.layers == 74240);
		assert_true(pc.embedding == 6400);
		assert_true(pc.head == 6528);
		assert_true(pc.total == 87168);
		assert_true(pc.active == pc.total);
	}
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
training_block(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_plan p;

	(void)state;
	load_ok("name: t\nlayers: 1\nhidden: 32\nheads: 4\nffn: 64\n"
	    "vocab: 50\ntraining:\n  micro_batch: 3\n  seq: 512\n"
	    "  precision: fp16-mixed\n  optimizer: sgd\n", &m, &d);
	assert_true(m.train.micro_batch == 3);
	assert_true(m.train.seq == 512);
	assert_int_equal(m.train.precision, VP_PREC_FP16_MIXED);
	assert_int_equal(m.train.optimizer, VP_OPT_SGD);
	/* The plan takes the model's training block over its defaults. */
	vp_plan_defaults(&p, &m);
	assert_true(p.micro_batch == 3 && p.seq == 512);
	assert_int_equal(p.precision, VP_PREC_FP16_MIXED);
	assert_int_equal(p.optimizer, VP_OPT_SGD);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
kv_heads_and_head_dim(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	/* Explicit kv_heads and a head_dim that does not equal
	 * hidden / heads (Gemma style): q = 4 * 32 = 128 > hidden 64. */
	load_ok("name: g\nlayers: 1\nhidden: 64\nheads: 4\nkv_heads: 2\n"
	    "head_dim: 32\nffn: 128\nvocab: 10\nnorm: rmsnorm\n"
	    "activation: geglu\ntie_embeddings: true\n", &m, &d);
	assert_true(m.kv_heads == 2);
	assert_true(m.head_dim == 32);
	/*
	 * h = 64, q = 128, kv = 2 * 32 = 64, f = 128, V = 10, tied.
	 *   q_proj h q = 8192, k/v 2 h kv = 8192, o_proj q h = 8192 → 24576
	 *   GeGLU MLP 3 h f = 3 * 64 * 128                          = 24576
	 *   two RMSNorms 2h                                         = 128
	 *   layer                                                   = 49280
	 *   embedding V h = 640; head = final RMSNorm 64 (tied)
	 *   total = 640 + 49280 + 64                                = 49984
	 */
	assert_true(total(&m) == 49984);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* With head_dim given, heads need not divide hidden: 60 / 7. */
	load_ok("name: g\nlayers: 1\nhidden: 60\nheads: 7\nhead_dim: 16\n"
	    "ffn: 128\nvocab: 10\n", &m, &d);
	assert_true(m.head_dim == 16);
	assert_true(m.kv_heads == 7);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/* ---- validation errors with positions --------------------------------- */

/* A valid base with line numbers: each test replaces one line. */
static void
heads_must_divide_hidden(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	assert_int_equal(load("name: x\n"		/* 1 */
	    "layers: 2\n"				/* 2 */
	    "hidden: 64\n"				/* 3 */
	    "heads: 5\n"				/* 4: value at col 8 */
	    "ffn: 128\n"
	    "vocab: 100\n", &m, &d), -1);
	/* Divisors of 64 around 5: 4 below, 8 above. */
	expect_error_at(&d, "'heads' (5) must divide 'hidden' (64) when "
	    "'head_dim' is not given; nearest valid: 4 or 8", 4, 8);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
kv_heads_must_divide_heads(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	assert_int_equal(load("name: x\nlayers: 2\nhidden: 64\nheads: 8\n"
	    "ffn: 128\n"
	    "vocab: 100\n"
	    "kv_heads: 3\n"		/* line 7, value col 11 */
	    , &m, &d), -1);
	/* Divisors of 8 around 3: 2 and 4. */
	expect_error_at(&d, "'kv_heads' (3) must divide 'heads' (8); nearest "
	    "valid: 2 or 4", 7, 11);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
learned_needs_max_seq(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	assert_int_equal(load("name: x\nlayers: 2\nhidden: 64\nheads: 8\n"
	    "ffn: 128\nvocab: 100\n"
	    "  \n"
	    "position: learned\n"	/* line 8, value col 11 */
	    , &m, &d), -1);
	expect_error_at(&d, "'max_seq' is required with learned positions",
	    8, 11);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
train_seq_past_max_seq(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	assert_int_equal(load("name: x\nlayers: 2\nhidden: 64\nheads: 8\n"
	    "ffn: 128\nvocab: 100\nposition: learned\nmax_seq: 1024\n"
	    "training:\n"
	    "  seq: 2048\n"		/* line 10, value col 8 */
	    , &m, &d), -1);
	expect_error_at(&d, "training 'seq' (2048) is longer than 'max_seq' "
	    "(1024)", 10, 8);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* With RoPE the same numbers are fine (no position table). */
	load_ok("name: x\nlayers: 2\nhidden: 64\nheads: 8\nffn: 128\n"
	    "vocab: 100\nmax_seq: 1024\ntraining:\n  seq: 2048\n", &m, &d);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
top_k_past_experts(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	assert_int_equal(load("name: x\nlayers: 2\nhidden: 64\nheads: 8\n"
	    "ffn: 128\nvocab: 100\n"
	    "moe:\n"
	    "  experts: 2\n"
	    "  top_k: 4\n"		/* line 9, value col 10 */
	    , &m, &d), -1);
	expect_error_at(&d, "'top_k' (4) must not exceed 'experts' (2)", 9,
	    10);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
absurd_size(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	/*
	 * Each number is within its own range, the product is not:
	 * h = 131072 = 2^17, f = 2^21, 4096 layers, MHA, LayerNorm.
	 *   attention 4 h^2 = 2^36          = 68719476736
	 *   MLP 2 h f       = 2^39          = 549755813888
	 *   norms 4h                        = 524288
	 *   per layer                       ≈ 6.18e11
	 *   4096 layers                     ≈ 2.53e15 > 10^15
	 */
	assert_int_equal(load("name: x\nlayers: 4096\n"
	    "hidden: 131072\n"		/* line 3, value col 9 */
	    "heads: 64\nffn: 2097152\nvocab: 1000\n", &m, &d), -1);
	expect_error_at(&d, "past any real model", 3, 9);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
reader_errors(void **state)
{
	static const struct {
		const char *line;	/* appended as line 7 */
		const char *msg;
		int col;
	} cases[] = {
		{ "activation: swiglo", "unknown activation 'swiglo'; did you "
		    "mean 'swiglu'? (one of: gelu, gelu-tanh, gelu-new, relu, "
		    "swiglu, geglu, quick-gelu, relu2)", 13 },
		{ "norm: batchnorm", "unknown norm 'batchnorm' (one of: "
		    "layernorm, rmsnorm)", 7 },
		{ "bias: maybe", "'bias' must be true or false, not 'maybe'",
		    7 },
		{ "dropout: 1.5", "'dropout' must be a number from 0 to 0.99, "
		    "not '1.5'", 10 },
		{ "max_seq: lots", "'max_seq' must be a whole number from 1 to "
		    "134217728, not 'lots'", 10 },
		{ "kv_heads: [1, 2]", "'kv_heads' must be a whole number from "
		    "1 to 65536, not a list", 11 },
		{ "architecture: custom", "architecture "
		    "'custom' is not supported yet", 15 },
		{ "moe: 8", "'moe' must be a mapping, not '8'", 6 },
		{ "training: {seq: 0}", "'seq' must be a whole number from 1 to "
		    "134217728, not '0'", 17 },
		{ "training: {optimiser: adamw}", "unknown key 'optimiser' in "
		    "'training'; did you mean 'optimizer'?", 12 },
		{ "hiddden: 64", "unknown key 'hiddden' in the model; did you "
		    "mean 'hidden'?", 1 },
		{ "frobnicate: 1", "unknown key 'frobnicate' in the model", 1 },
		{ "moe: {top_k: 1}", "missing required key 'experts' in 'moe' "
		    "(the number of routed experts, e.g. 8)", 6 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < VP_NELEM(cases); i++) {
		struct vp_diags d = { 0 };
		struct vp_model m;
		struct vp_buf t;

		vp_buf_init(&t);
		vp_buf_printf(&t, "name: x\nlayers: 2\nhidden: 64\nheads: 8\n"
		    "ffn: 128\nvocab: 100\n%s\n", cases[i].line);
		assert_int_equal(load(t.s, &m, &d), -1);
		expect_error_at(&d, cases[i].msg, 7, cases[i].col);
		vp_buf_free(&t);
		vp_model_free(&m);
		vp_diags_clear(&d);
	}
}

static void
range_errors(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	assert_int_equal(load("name: x\n"
	    "layers: 200000\n"		/* line 2: past MAX_LAYERS 4096 */
	    "hidden: 0\n"		/* line 3: below 1 */
	    "heads: two\n"		/* line 4 */
	    "ffn: 2e3\n"		/* exponent form: 2000, fine */
	    "vocab: 100\n", &m, &d), -1);
	expect_error_at(&d, "'layers' must be a whole number from 1 to 4096, "
	    "not '200000'", 2, 9);
	expect_error_at(&d, "'hidden' must be a whole number from 1 to 1048576, "
	    "not '0'", 3, 9);
	expect_error_at(&d, "'heads' must be a whole number from 1 to 65536, "
	    "not 'two'", 4, 8);
	assert_null(find(&d, VP_ERROR, "'ffn'"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
missing_and_duplicate_keys(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	/* No vocab: reported at the mapping's start, 1:1, with a hint. */
	assert_int_equal(load("name: x\nlayers: 2\nhidden: 64\nheads: 8\n"
	    "ffn: 128\n", &m, &d), -1);
	expect_error_at(&d, "missing required key 'vocab' in the model (the "
	    "vocabulary size, e.g. 32000)", 1, 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* A key given twice: the second is the error, at its key. */
	assert_int_equal(load("name: x\nlayers: 2\nhidden: 64\nheads: 8\n"
	    "ffn: 128\nvocab: 100\n"
	    "layers: 3\n", &m, &d), -1);
	expect_error_at(&d, "duplicate key 'layers' in the model", 7, 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* Duplicates inside a nested mapping too. */
	assert_int_equal(load("name: x\nlayers: 2\nhidden: 64\nheads: 8\n"
	    "ffn: 128\nvocab: 100\ntraining:\n  seq: 8\n  seq: 9\n", &m, &d),
	    -1);
	expect_error_at(&d, "duplicate key 'seq' in 'training'", 9, 3);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* A null name is not a name. */
	assert_int_equal(load("name: ~\nlayers: 2\nhidden: 64\nheads: 8\n"
	    "ffn: 128\nvocab: 100\n", &m, &d), -1);
	expect_error_at(&d, "'name' must be a string, not null", 1, 7);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
not_a_mapping(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	assert_int_equal(load("- a\n- b\n", &m, &d), -1);
	expect_error_at(&d, "a model file must be a mapping of keys, not a "
	    "list", 1, 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	assert_int_equal(load("", &m, &d), -1);
	expect_error_at(&d, "empty model file", 1, 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	assert_int_equal(load("# only a comment\n", &m, &d), -1);
	expect_error_at(&d, "empty model file", 1, 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* Two documents: ydoc rejects the second at its '---' (line 2). */
	assert_int_equal(load("a: 1\n---\nb: 2\n", &m, &d), -2);
	expect_error_at(&d, "more than one YAML document", 2, 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* Broken YAML: an unclosed flow sequence. */
	assert_int_equal(load("name: [x\n", &m, &d), -2);
	assert_non_null(find(&d, VP_ERROR, "invalid YAML"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/* ---- parameter counts by hand ----------------------------------------- */

static void
params_decoder_rmsnorm_swiglu_gqa(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_param_count pc;

	(void)state;
	load_ok("name: tiny-llama\nlayers: 2\nhidden: 64\nheads: 8\n"
	    "kv_heads: 2\nffn: 160\nvocab: 100\nactivation: swiglu\n"
	    "norm: rmsnorm\nposition: rope\nbias: false\n"
	    "tie_embeddings: false\n", &m, &d);
	vp_model_params(&m, &pc);
	/*
	 * LlamaForCausalLM, h = 64, 8 heads of d = 8, 2 kv heads, f = 160,
	 * V = 100, no biases, untied:
	 *   q_proj h*(8*8)   = 4096     k_proj h*(2*8) = 1024
	 *   v_proj           = 1024     o_proj 64*64   = 4096
	 *   attention                                  = 10240
	 *   gate/up/down 3 h f = 3 * 64 * 160          = 30720
	 *   input + post-attention RMSNorm 2h          = 128
	 *   per layer                                  = 41088
	 *   2 layers                                   = 82176
	 *   embed_tokens V h                           = 6400
	 *   final norm h + lm_head V h = 64 + 6400     = 6464
	 *   total = 6400 + 82176 + 6464                = 95040
	 */
	assert_true(pc.per_layer == 41088);
	assert_true(pc.layers == 82176);
	assert_true(pc.embedding == 6400);
	assert_true(pc.head == 6464);
	assert_true(pc.total == 95040);
	assert_true(pc.active == 95040);
	/* vp_mlp_params on its own: 3 h f = 30720, gated. */
	assert_true(vp_act_gated(m.act));
	assert_true(vp_mlp_params(&m, 160) == 30720);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
params_gpt2_like(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_param_count pc;

	(void)state;
	load_ok("name: tiny-gpt2\nlayers: 2\nhidden: 32\nheads: 4\nffn: 128\n"
	    "vocab: 50\nactivation: gelu-new\nnorm: layernorm\nbias: true\n"
	    "tie_embeddings: true\nposition: learned\nmax_seq: 16\n"
	    "dropout: 0.1\n", &m, &d);
	vp_model_params(&m, &pc);
	/*
	 * GPT2LMHeadModel, h = 32, 4 heads, f = 128 (= 4h), V = 50, 16
	 * positions, biases everywhere, lm_head tied to wte:
	 *   ln_1 2h = 64
	 *   c_attn h*3h + 3h = 3072 + 96 = 3168
	 *   c_proj h*h + h   = 1024 + 32 = 1056
	 *   ln_2 2h = 64
	 *   c_fc h*4h + 4h   = 4096 + 128 = 4224
	 *   mlp c_proj 4h*h + h = 4096 + 32 = 4128
	 *   per block = 64 + 3168 + 1056 + 64 + 4224 + 4128 = 12704
	 *   2 blocks = 25408
	 *   wte V h + wpe 16 h = 1600 + 512 = 2112
	 *   ln_f 2h = 64 (lm_head tied: 0)
	 *   total = 2112 + 25408 + 64 = 27584
	 */
	assert_true(pc.per_layer == 12704);
	assert_true(pc.embedding == 2112);
	assert_true(pc.head == 64);
	assert_true(pc.total == 27584);
	/* Untied would add V h = 1600. */
	m.tie_embeddings = false;
	assert_true(total(&m) == 27584 + 1600);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
params_bert_like(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_param_count pc;

	(void)state;
	load_ok("name: tiny-bert\narchitecture: encoder\nlayers: 2\n"
	    "hidden: 32\nheads: 4\nffn: 64\nvocab: 40\nactivation: gelu\n"
	    "norm: layernorm\nbias: true\ntie_embeddings: true\n"
	    "position: learned\nmax_seq: 16\ntype_vocab: 2\n", &m, &d);
	assert_int_equal(m.arch, VP_ARCH_ENCODER);
	vp_model_params(&m, &pc);
	/*
	 * BertForMaskedLM (no pooler), h = 32, f = 64, V = 40, 16
	 * positions, 2 token types:
	 *   embeddings: word V h 1280 + position 16 h 512 + type 2 h 64
	 *               = 1856
	 *   layer: query/key/value/output dense 4 (h*h + h) = 4 * 1056
	 *          = 4224; attention LayerNorm 64; intermediate h f + f =
	 *          2048 + 64 = 2112; output f h + h = 2048 + 32 = 2080;
	 *          output LayerNorm 64 → 4224 + 64 + 2112 + 2080 + 64 = 8544
	 *   2 layers = 17088
	 *   head: embedding LayerNorm 64 + transform dense h*h + h 1056 +
	 *         transform LayerNorm 64 + decoder bias V 40 (decoder
	 *         weight tied) = 1224
	 *   total = 1856 + 17088 + 1224 = 20168
	 */
	assert_true(pc.embedding == 1856);
	assert_true(pc.per_layer == 8544);
	assert_true(pc.head == 1224);
	assert_true(pc.total == 20168);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
params_moe_router_shared(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_param_count pc;

	(void)state;
	load_ok("name: tiny-moe\nlayers: 1\nhidden: 32\nheads: 4\nkv_heads: 2\n"
	    "ffn: 64\nvocab: 50\nactivation: swiglu\nnorm: rmsnorm\n"
	    "moe:\n  experts: 4\n  top_k: 2\n  ffn: 48\n  shared_experts: 1\n"
	    "  shared_ffn: 96\n", &m, &d);
	assert_true(m.has_moe);
	vp_model_params(&m, &pc);
	/*
	 * h = 32, 4 heads of d = 8, 2 kv heads, routed experts of f = 48,
	 * one shared expert of f = 96, router h → 4:
	 *   attention h*32 + 2 h*16 + 32*h = 1024 + 1024 + 1024 = 3072
	 *   one expert 3 h 48 = 4608;  4 experts = 18432
	 *   shared expert 3 h 96 = 9216
	 *   router h * 4 = 128
	 *   MoE block = 18432 + 9216 + 128 = 27776
	 *   norms 2h = 64
	 *   per layer = 3072 + 27776 + 64 = 30912
	 *   embedding V h = 1600; head h + V h = 32 + 1600 = 1632
	 *   total = 1600 + 30912 + 1632 = 34144
	 * Active per token: top_k = 2 experts:
	 *   MoE block = 2 * 4608 + 9216 + 128 = 18560
	 *   per layer = 3072 + 18560 + 64 = 21696
	 *   active = 1600 + 21696 + 1632 = 24928
	 */
	assert_true(pc.per_layer == 30912);
	assert_true(pc.total == 34144);
	assert_true(pc.active == 24928);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* Defaults: moe.ffn = ffn, shared_ffn = moe.ffn. */
	load_ok("name: m\nlayers: 1\nhidden: 32\nheads: 4\nffn: 64\n"
	    "vocab: 50\nactivation: swiglu\nmoe:\n  experts: 4\n  top_k: 1\n"
	    "  shared_experts: 2\n", &m, &d);
	assert_true(m.moe.ffn == 64);
	assert_true(m.moe.shared_ffn == 64);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/* ---- Hugging Face config.json ----------------------------------------- */

static void
hf_llama(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\n"
	    "  \"architectures\": [\"LlamaForCausalLM\"],\n"
	    "  \"model_type\": \"llama\",\n"
	    "  \"hidden_size\": 64,\n"
	    "  \"num_hidden_layers\": 2,\n"
	    "  \"num_attention_heads\": 8,\n"
	    "  \"num_key_value_heads\": 2,\n"
	    "  \"intermediate_size\": 160,\n"
	    "  \"vocab_size\": 100,\n"
	    "  \"max_position_embeddings\": 128,\n"
	    "  \"hidden_act\": \"silu\",\n"
	    "  \"rms_norm_eps\": 1e-05,\n"
	    "  \"rope_scaling\": null,\n"
	    "  \"tie_word_embeddings\": false,\n"
	    "  \"torch_dtype\": \"bfloat16\"\n"
	    "}\n", &m, &d);
	assert_int_equal(vp_diags_count(&d, VP_WARNING), 0);
	assert_int_equal(m.arch, VP_ARCH_DECODER);
	assert_int_equal(m.norm, VP_NORM_RMSNORM);
	assert_int_equal(m.pos, VP_POS_ROPE);
	assert_int_equal(m.act, VP_ACT_SWIGLU);
	assert_false(m.bias);
	assert_int_equal(m.qkv_bias, 0);
	assert_false(m.tie_embeddings);
	assert_true(m.layers == 2 && m.hidden == 64 && m.heads == 8);
	assert_true(m.kv_heads == 2 && m.head_dim == 8);
	assert_true(m.ffn == 160 && m.vocab == 100 && m.max_seq == 128);
	assert_string_equal(m.name, "llama");
	/* Same shape as params_decoder_rmsnorm_swiglu_gqa: 95040. */
	assert_true(total(&m) == 95040);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
hf_gpt2_n_keys(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"model_type\": \"gpt2\", \"_name_or_path\": \"tiny-gpt2\","
	    " \"n_embd\": 32, \"n_layer\": 2, \"n_head\": 4,"
	    " \"n_inner\": null, \"n_positions\": 16, \"n_ctx\": 16,"
	    " \"vocab_size\": 50, \"activation_function\": \"gelu_new\","
	    " \"resid_pdrop\": 0.1, \"embd_pdrop\": 0.1}", &m, &d);
	assert_string_equal(m.name, "tiny-gpt2");
	/* n_inner null → 4 * n_embd = 128. */
	assert_true(m.ffn == 128);
	assert_true(m.hidden == 32 && m.layers == 2 && m.heads == 4);
	assert_true(m.max_seq == 16);
	assert_int_equal(m.pos, VP_POS_LEARNED);
	assert_int_equal(m.norm, VP_NORM_LAYERNORM);
	assert_int_equal(m.act, VP_ACT_GELU_NEW);
	assert_true(m.bias);
	assert_int_equal(m.qkv_bias, 1);
	assert_true(m.tie_embeddings);
	assert_float_equal(m.dropout, 0.1, 1e-12);
	/* Same shape as params_gpt2_like: 27584. */
	assert_true(total(&m) == 27584);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* n_inner absent altogether behaves the same; given, it wins. */
	load_ok("{\"model_type\": \"gpt2\", \"n_embd\": 32, \"n_layer\": 2,"
	    " \"n_head\": 4, \"n_positions\": 16, \"vocab_size\": 50}", &m,
	    &d);
	assert_true(m.ffn == 128);
	vp_model_free(&m);
	vp_diags_clear(&d);
	load_ok("{\"model_type\": \"gpt2\", \"n_embd\": 32, \"n_layer\": 2,"
	    " \"n_head\": 4, \"n_inner\": 96, \"n_positions\": 16,"
	    " \"vocab_size\": 50}", &m, &d);
	assert_true(m.ffn == 96);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
hf_bert(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"architectures\": [\"BertForMaskedLM\"],"
	    " \"model_type\": \"bert\", \"hidden_size\": 32,"
	    " \"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
	    " \"intermediate_size\": 64, \"vocab_size\": 40,"
	    " \"max_position_embeddings\": 16, \"type_vocab_size\": 2,"
	    " \"hidden_act\": \"gelu\", \"hidden_dropout_prob\": 0.1,"
	    " \"attention_probs_dropout_prob\": 0.1,"
	    " \"layer_norm_eps\": 1e-12}", &m, &d);
	assert_int_equal(m.arch, VP_ARCH_ENCODER);
	assert_int_equal(m.pos, VP_POS_LEARNED);
	assert_int_equal(m.act, VP_ACT_GELU);
	assert_int_equal(m.norm, VP_NORM_LAYERNORM);
	assert_true(m.bias);
	assert_true(m.tie_embeddings);
	assert_true(m.type_vocab == 2);
	assert_float_equal(m.dropout, 0.1, 1e-12);
	/* Same shape as params_bert_like: 20168. */
	assert_true(total(&m) == 20168);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
hf_mixtral(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_param_count pc;

	(void)state;
	load_ok("{\"model_type\": \"mixtral\", \"hidden_size\": 32,"
	    " \"num_hidden_layers\": 1, \"num_attention_heads\": 4,"
	    " \"num_key_value_heads\": 2, \"intermediate_size\": 48,"
	    " \"vocab_size\": 50, \"num_local_experts\": 4,"
	    " \"num_experts_per_tok\": 2, \"hidden_act\": \"silu\","
	    " \"tie_word_embeddings\": false, \"sliding_window\": null}", &m,
	    &d);
	assert_true(m.has_moe);
	assert_true(m.moe.experts == 4 && m.moe.top_k == 2);
	/* Mixtral's intermediate_size is the expert size. */
	assert_true(m.moe.ffn == 48);
	assert_true(m.moe.shared_experts == 0);
	vp_model_params(&m, &pc);
	/*
	 * h = 32, 4 heads of 8, 2 kv heads, 4 experts of f = 48, top-2:
	 *   attention 1024 + 2*512 + 1024 = 3072
	 *   experts 4 * 3 * 32 * 48 = 4 * 4608 = 18432; router 32 * 4 = 128
	 *   norms 64; per layer = 3072 + 18432 + 128 + 64 = 21696
	 *   total = embed 1600 + 21696 + head (32 + 1600) = 24928
	 *   active: 2 experts = 9216 + 128 → layer 12480
	 *           = 1600 + 12480 + 1632 = 15712
	 */
	assert_true(pc.total == 24928);
	assert_true(pc.active == 15712);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
hf_qwen2_qkv_bias(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"model_type\": \"qwen2\", \"hidden_size\": 64,"
	    " \"num_hidden_layers\": 2, \"num_attention_heads\": 8,"
	    " \"num_key_value_heads\": 2, \"intermediate_size\": 160,"
	    " \"vocab_size\": 100, \"hidden_act\": \"silu\","
	    " \"tie_word_embeddings\": false}", &m, &d);
	assert_int_equal(m.qkv_bias, 1);
	assert_false(m.bias);
	/*
	 * The Llama shape (95040) plus q/k/v biases per layer:
	 * q 64 + k 16 + v 16 = 96; 2 layers → 192.  Total 95232.
	 */
	assert_true(total(&m) == 95232);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* Tied (Qwen2.5-0.5B style) drops lm_head: 95232 - 6400 = 88832. */
	load_ok("{\"model_type\": \"qwen2\", \"hidden_size\": 64,"
	    " \"num_hidden_layers\": 2, \"num_attention_heads\": 8,"
	    " \"num_key_value_heads\": 2, \"intermediate_size\": 160,"
	    " \"vocab_size\": 100, \"tie_word_embeddings\": true}", &m, &d);
	assert_true(total(&m) == 88832);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/* A model_type that is not a supported family is an error at its value,
 * naming the supported ones; it is never read as another family. */
static void
hf_unknown_model_type(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	assert_int_equal(load("{\n"
	    "  \"model_type\": \"frobnicator\",\n"	/* line 2, value col 17 */
	    "  \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
	    "  \"num_attention_heads\": 8, \"intermediate_size\": 160,\n"
	    "  \"vocab_size\": 100\n}\n", &m, &d), -1);
	expect_error_at(&d, "model_type 'frobnicator' is not a supported "
	    "family (supported: llama, mistral,", 2, 17);
	/* The end of the list moves as families are added. */
	expect_error_at(&d, "); describe the model in vramplan's own YAML "
	    "schema instead (see vramplan-model(5))", 2, 17);
	assert_int_equal(vp_diags_count(&d, VP_ERROR), 1);
	assert_int_equal(vp_diags_count(&d, VP_WARNING), 0);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* A near name of a supported one is no match either: Phi-3.5-MoE
	 * is not Phi, Qwen3-Next is not Qwen3. */
	assert_int_equal(load("{\"model_type\": \"phimoe\", \"hidden_size\": 64}",
	    &m, &d), -1);
	expect_error_at(&d, "model_type 'phimoe' is not a supported family", 1,
	    16);
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"qwen3_next\", "
	    "\"shared_expert_intermediate_size\": 0}", &m, &d), -1);
	expect_error_at(&d, "model_type 'qwen3_next' is not a supported family",
	    1, 16);
	assert_int_equal(vp_diags_count(&d, VP_ERROR), 1);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/* Without model_type, the first architectures entry names the family, as
 * transformers' Auto classes read it: the whole class name, a family's
 * prefix and one of its classes' suffixes. */
static void
hf_architectures(void **state)
{
	static const char *const ok[][2] = {
		{ "LlamaForCausalLM", "llama" },
		{ "MistralForCausalLM", "mistral" },
		{ "Qwen2MoeForCausalLM", "qwen2_moe" },
		{ "Qwen2ForSequenceClassification", "qwen2" },
		{ "Qwen3ForCausalLM", "qwen3" },
		{ "Qwen3MoeForCausalLM", "qwen3_moe" },
		{ "Gemma2ForCausalLM", "gemma2" },
		{ "GPT2LMHeadModel", "gpt2" },
		{ "BertModel", "bert" },
		{ "RobertaForMaskedLM", "roberta" },
		{ "PhiForCausalLM", "phi" },
		{ "GPTNeoXForCausalLM", "gpt_neox" },
		{ "OPTForCausalLM", "opt" },
		{ "T5ForConditionalGeneration", "t5" },
		{ "MT5ForConditionalGeneration", "mt5" },
		{ "BartForConditionalGeneration", "bart" },
		{ "WhisperForConditionalGeneration", "whisper" },
		{ "GPTJForCausalLM", "gptj" },
		{ "FalconForCausalLM", "falcon" },
		{ "CohereForCausalLM", "cohere" },
	};
	static const char *const bad[] = { "Llama4ForConditionalGeneration",
	    "Qwen3NextForCausalLM", "PhimoeForCausalLM",
	    "LlavaForConditionalGeneration", "MBartForConditionalGeneration",
	    "Llama", "LlamaForCausalLMX" };
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_buf t;
	size_t i;

	(void)state;
	for (i = 0; i < VP_NELEM(ok); i++) {
		vp_buf_init(&t);
		vp_buf_printf(&t, "{\"architectures\": [\"%s\"],"
		    " \"hidden_size\": 64, \"num_hidden_layers\": 2,"
		    " \"num_attention_heads\": 8, \"intermediate_size\": 160,"
		    " \"vocab_size\": 100, \"max_position_embeddings\": 64%s}",
		    ok[i][0], strcmp(ok[i][1], "gptj") == 0 ?
		    ", \"rotary_dim\": 4" : "");
		load_ok(t.s, &m, &d);
		assert_string_equal(m.name, ok[i][1]);
		/* A class with another head than the LM one is planned
		 * with the LM head, and the reader says so. */
		if (strstr(ok[i][0], "Classification") != NULL ||
		    strcmp(ok[i][0], "BertModel") == 0) {
			vp_buf_free(&t);
			vp_buf_init(&t);
			vp_buf_printf(&t, "'%s' has %s, which is not "
			    "modelled: planned with the %s family's "
			    "language-modelling head", ok[i][0],
			    ok[i][0][0] == 'B' ? "no head" :
			    "a sequence-classification head", ok[i][1]);
			assert_non_null(find(&d, VP_WARNING, t.s));
			assert_int_equal(vp_diags_count(&d, VP_WARNING), 1);
		} else
			assert_int_equal(vp_diags_count(&d, VP_WARNING), 0);
		vp_model_free(&m);
		vp_diags_clear(&d);
		vp_buf_free(&t);
	}
	/* The RoBERTa family's defaults, as with model_type "roberta":
	 * the shape of hf_bert, 20168 parameters. */
	load_ok("{\"architectures\": [\"RobertaForMaskedLM\"],"
	    " \"hidden_size\": 32, \"num_hidden_layers\": 2,"
	    " \"num_attention_heads\": 4, \"intermediate_size\": 64,"
	    " \"vocab_size\": 40, \"max_position_embeddings\": 16,"
	    " \"type_vocab_size\": 2}", &m, &d);
	assert_int_equal(m.arch, VP_ARCH_ENCODER);
	assert_true(total(&m) == 20168);
	vp_model_free(&m);
	vp_diags_clear(&d);

	for (i = 0; i < VP_NELEM(bad); i++) {
		vp_buf_init(&t);
		vp_buf_printf(&t, "{\"architectures\": [\"%s\"],"
		    " \"hidden_size\": 64}", bad[i]);
		assert_int_equal(load(t.s, &m, &d), -1);
		vp_buf_free(&t);
		vp_buf_init(&t);
		vp_buf_printf(&t, "architecture '%s' is not of a supported "
		    "family (supported: llama,", bad[i]);
		expect_error_at(&d, t.s, 1, 20);
		assert_int_equal(vp_diags_count(&d, VP_ERROR), 1);
		vp_buf_free(&t);
		vp_model_free(&m);
		vp_diags_clear(&d);
	}

	/* Neither key: the family is unknown, at the mapping. */
	assert_int_equal(load("{\"hidden_size\": 64, \"num_hidden_layers\": 2,"
	    " \"num_attention_heads\": 8, \"intermediate_size\": 160,"
	    " \"vocab_size\": 100}", &m, &d), -1);
	expect_error_at(&d, "the config has neither 'model_type' nor "
	    "'architectures' to tell its family (supported: llama,", 1, 1);
	expect_error_at(&d, "add the model_type its code has, or describe the "
	    "model in vramplan's own YAML schema instead", 1, 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* T5's keys: the family error, not a missing hidden_size. */
	assert_int_equal(load("{\"d_model\": 512, \"num_layers\": 6,"
	    " \"num_heads\": 8, \"d_ff\": 2048, \"vocab_size\": 32128}", &m,
	    &d), -1);
	expect_error_at(&d, "the config has neither 'model_type' nor "
	    "'architectures'", 1, 1);
	assert_int_equal(vp_diags_count(&d, VP_ERROR), 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* Not a list of names. */
	assert_int_equal(load("{\"architectures\": \"LlamaForCausalLM\"}", &m,
	    &d), -1);
	expect_error_at(&d, "'architectures' must be a list of class names, "
	    "not a scalar", 1, 19);
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"architectures\": []}", &m, &d), -1);
	expect_error_at(&d, "'architectures' must be a list of class names, "
	    "not an empty list", 1, 19);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static int
load_flags(const char *text, unsigned flags, struct vp_model *m,
    struct vp_diags *d)
{
	struct ydoc *doc = ydoc_parse("m.yaml", text, strlen(text), d);
	int rc;

	if (doc == NULL) {
		vp_model_init(m);
		return -2;
	}
	rc = vp_model_from_doc_ex(doc, flags, m, d);
	ydoc_free(doc);
	return rc;
}

#define TEXT_LLAMA "\"text_config\": {\"model_type\": \"llama\"," \
	" \"hidden_size\": 64, \"num_hidden_layers\": 2," \
	" \"num_attention_heads\": 8, \"num_key_value_heads\": 2," \
	" \"intermediate_size\": 160, \"vocab_size\": 100," \
	" \"tie_word_embeddings\": false}"

/* Nested configs: the language model under text_config; a vision or
 * audio tower is refused unless the text model alone is asked for. */
static void
hf_text_config(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	/* Only a text_config: read from there; the wrapper's model_type
	 * does not matter.  The shape of hf_llama: 95040. */
	load_ok("{\"model_type\": \"wrapper\", " TEXT_LLAMA "}", &m, &d);
	assert_string_equal(m.name, "llama");
	assert_true(total(&m) == 95040);
	assert_int_equal(vp_diags_count(&d, VP_WARNING), 0);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* LLaVA: the frozen CLIP tower and the projector join the Llama;
	 * 125,248 parameters (LlavaForConditionalGeneration of 5.24 on the
	 * meta device), 101,312 of them trainable (the tower's 23,936
	 * frozen), 16 image tokens. */
	load_ok("{\"model_type\": \"llava\", " TEXT_LLAMA ",\n"
	    "\"vision_config\": {\"model_type\": \"clip_vision_model\","
	    " \"hidden_size\": 32, \"num_hidden_layers\": 2,"
	    " \"num_attention_heads\": 4, \"intermediate_size\": 64,"
	    " \"image_size\": 32, \"patch_size\": 8}}", &m, &d);
	assert_true(m.vis.llava && vp_llava_image_tokens(&m) == 16);
	assert_true(total(&m) == 125248);
	assert_true(total(&m) - vp_llava_frozen_params(&m) == 101312);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* Another vision tower wrapper: an error at vision_config, whatever
	 * the text. */
	assert_int_equal(load("{\"model_type\": \"llava_next\", " TEXT_LLAMA ",\n"
	    "\"vision_config\": {\"model_type\": \"clip_vision_model\"}}",
	    &m, &d), -1);
	expect_error_at(&d, "the model has a vision tower ('vision_config'), "
	    "which vramplan does not model yet; pass --text-only to plan its "
	    "language model (model_type 'llama' in 'text_config') alone, "
	    "without the vision tower and its projector", 2, 18);
	assert_int_equal(vp_diags_count(&d, VP_ERROR), 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* ... which --text-only turns into a note; the text model is the
	 * same as alone. */
	assert_int_equal(load_flags("{\"model_type\": \"llava\", " TEXT_LLAMA
	    ",\n\"vision_config\": {\"model_type\": \"clip_vision_model\"}}",
	    VP_READ_TEXT_ONLY, &m, &d), 0);
	assert_non_null(find(&d, VP_NOTE, "--text-only: planning the language "
	    "model alone; the vision tower ('vision_config') and its "
	    "projector are left out"));
	assert_true(total(&m) == 95040);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* An audio tower, flat text keys: the same. */
	assert_int_equal(load("{\"model_type\": \"llama\", \"hidden_size\": 64,"
	    " \"num_hidden_layers\": 2, \"num_attention_heads\": 8,"
	    " \"intermediate_size\": 160, \"vocab_size\": 100,"
	    " \"audio_config\": {}}", &m, &d), -1);
	expect_error_at(&d, "the model has an audio tower ('audio_config')", 1,
	    0);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* The family error comes first: an unsupported text model. */
	assert_int_equal(load("{\"model_type\": \"qwen3_vl\",\n"
	    "\"text_config\": {\"model_type\": \"qwen3_next\"},"
	    " \"vision_config\": {}}", &m, &d), -1);
	expect_error_at(&d, "model_type 'qwen3_next' is not a supported "
	    "family", 2, 31);
	assert_int_equal(vp_diags_count(&d, VP_ERROR), 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* A size missing in text_config is named there, at text_config. */
	assert_int_equal(load_flags("{\"text_config\": {\"model_type\": "
	    "\"llama\", \"vocab_size\": 100}, \"vision_config\": {}}",
	    VP_READ_TEXT_ONLY, &m, &d), -1);
	expect_error_at(&d, "missing required key 'hidden_size' in "
	    "'text_config' (the model width)", 1, 17);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* text_config must be a mapping. */
	assert_int_equal(load("{\"model_type\": \"llava\", \"text_config\": 3}",
	    &m, &d), -1);
	expect_error_at(&d, "'text_config' must be a mapping of keys, not a "
	    "scalar", 1, 40);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

static void
hf_errors(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	/* A required key missing: reported at the root. */
	assert_int_equal(load("{\"model_type\": \"llama\", \"hidden_size\": 64,"
	    " \"num_attention_heads\": 8, \"intermediate_size\": 160,"
	    " \"vocab_size\": 100}", &m, &d), -1);
	expect_error_at(&d, "missing required key 'num_hidden_layers' in the "
	    "config", 1, 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* The keys read are type-checked, with their position. */
	assert_int_equal(load("{\"model_type\": \"llama\",\n"
	    "\"hidden_size\": \"big\", \"num_hidden_layers\": 2,"
	    " \"num_attention_heads\": 8, \"intermediate_size\": 160,"
	    " \"vocab_size\": 100}", &m, &d), -1);
	expect_error_at(&d, "'hidden_size' must be a whole number", 2, 16);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * FIXED BUG (model_read.c read_hf): "attention_bias": true sets m->bias as
 * well as m->qkv_bias, so the MLP is counted with biases.  In
 * transformers' LlamaAttention, attention_bias puts a bias on q, k, v and
 * o_proj only; LlamaMLP's biases follow the separate "mlp_bias" key
 * (default false).  For the tiny Llama below (h 64, 8 heads of 8, 2 kv
 * heads, f 160, 2 layers):
 *   correct: 95040 + 2 * (q 64 + k 16 + v 16 + o 64) = 95040 + 320 = 95360
 *   vramplan also adds gate/up/down biases 2f + h = 384 per layer: 96128.
 * Fix: set only qkv_bias from attention_bias and model the o_proj bias
 * (e.g. a separate out_bias field), and read mlp_bias into m->bias.
 */
static void
bug_hf_attention_bias_adds_mlp_bias(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"model_type\": \"llama\", \"hidden_size\": 64,"
	    " \"num_hidden_layers\": 2, \"num_attention_heads\": 8,"
	    " \"num_key_value_heads\": 2, \"intermediate_size\": 160,"
	    " \"vocab_size\": 100, \"attention_bias\": true,"
	    " \"mlp_bias\": false, \"tie_word_embeddings\": false}", &m, &d);
	assert_true(total(&m) == 95360);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * FIXED BUG (model.c vp_model_params, qwen2_moe): Qwen2MoeSparseMoeBlock has
 * a shared_expert_gate, nn.Linear(hidden, 1, bias=False), next to the
 * shared expert; it is not counted (h parameters per layer).  For the tiny
 * config below (h 32, 4 heads of 8, 2 kv heads, 4 experts of 48, top-2,
 * shared expert 96, V 50, 1 layer, untied, qkv biases):
 *   attention 3072 + q/k/v biases 32 + 16 + 16 = 3136
 *   experts 4 * 3 * 32 * 48 = 18432; shared 3 * 32 * 96 = 9216;
 *   router 32 * 4 = 128; shared_expert_gate 32
 *   norms 64 → layer = 3136 + 18432 + 9216 + 128 + 32 + 64 = 31008
 *   total = 1600 + 31008 + 1632 = 34240   (vramplan: 34208)
 * Fix: add h per layer for each gated shared expert when the family is
 * qwen2_moe (a flag on struct vp_moe, set by read_hf).
 */
static void
bug_hf_qwen2_moe_shared_expert_gate(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"model_type\": \"qwen2_moe\", \"hidden_size\": 32,"
	    " \"num_hidden_layers\": 1, \"num_attention_heads\": 4,"
	    " \"num_key_value_heads\": 2, \"intermediate_size\": 64,"
	    " \"moe_intermediate_size\": 48, \"num_experts\": 4,"
	    " \"num_experts_per_tok\": 2,"
	    " \"shared_expert_intermediate_size\": 96, \"vocab_size\": 50,"
	    " \"tie_word_embeddings\": false}", &m, &d);
	assert_true(m.has_moe && m.moe.shared_experts == 1);
	assert_true(total(&m) == 34240);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/* ---- hostile YAML ----------------------------------------------------- */

/* "Billion laughs": 9 levels of 10 aliases = 10^9 leaves if expanded. */
static const char bomb[] =
    "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
    "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
    "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
    "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
    "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n";

static double
cpu_seconds(clock_t t0)
{
	return (double)(clock() - t0) / CLOCKS_PER_SEC;
}

static void
alias_bomb(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_buf t;
	clock_t t0 = clock();

	(void)state;
	/* As a model file: unknown keys, rejected, and at once. */
	assert_int_equal(load(bomb, &m, &d), -1);
	expect_error_at(&d, "unknown key 'a' in the model", 1, 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* Aimed at a known key: a type error, not an expansion. */
	vp_buf_init(&t);
	vp_buf_printf(&t, "%sname: x\nlayers: *i\nhidden: 64\nheads: 8\n"
	    "ffn: 128\nvocab: 100\n", bomb);
	assert_int_equal(load(t.s, &m, &d), -1);
	/* An alias is the anchored node itself, so the error carries the
	 * anchor's position: line 9, where &i is defined. */
	expect_error_at(&d, "'layers' must be a whole number from 1 to "
	    "4096, not a list", 9, 0);
	vp_model_free(&m);
	vp_diags_clear(&d);
	vp_buf_free(&t);

	/* Inside a Hugging Face config, where unknown keys are ignored:
	 * the model loads, the bomb is never walked. */
	vp_buf_init(&t);
	vp_buf_printf(&t, "%smodel_type: llama\nhidden_size: 64\n"
	    "num_hidden_layers: 2\nnum_attention_heads: 8\n"
	    "intermediate_size: 160\nvocab_size: 100\nextra: *i\n", bomb);
	load_ok(t.s, &m, &d);
	vp_model_free(&m);
	vp_diags_clear(&d);
	vp_buf_free(&t);

	/* All three took well under a second of CPU (an expansion of 10^9
	 * nodes would take minutes and gigabytes). */
	assert_true(cpu_seconds(t0) < 1.0);
}

static void
alias_self_reference(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	/* An anchor is complete only at its end: no cycles. */
	assert_int_equal(load("a: &a [1, *a]\n", &m, &d), -2);
	expect_error_at(&d, "alias '*a' refers to an undefined anchor", 1, 0);
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("a: *nowhere\n", &m, &d), -2);
	expect_error_at(&d, "alias '*nowhere' refers to an undefined anchor", 1,
	    4);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/* "x: " followed by n nested flow sequences. */
static char *
nested(size_t n)
{
	char *s = xmalloc(2 * n + 8);
	size_t i, k = 0;

	memcpy(s, "x: ", 3);
	k = 3;
	for (i = 0; i < n; i++)
		s[k++] = '[';
	for (i = 0; i < n; i++)
		s[k++] = ']';
	s[k++] = '\n';
	s[k] = '\0';
	return s;
}

static void
deep_nesting(void **state)
{
	struct vp_diags d = { 0 };
	struct ydoc *doc;
	char *s;
	clock_t t0;

	(void)state;
	/* The root mapping is level 1, so 63 sequences make 64 levels:
	 * exactly VP_YDOC_MAX_DEPTH, accepted. */
	s = nested(VP_YDOC_MAX_DEPTH - 1);
	doc = ydoc_parse("m.yaml", s, strlen(s), &d);
	assert_non_null(doc);
	assert_int_equal(d.n, 0);
	ydoc_free(doc);
	free(s);

	/* One more level is refused; the 65th level opens at column
	 * 3 + 64 = 67 ("x: " then 63 brackets, the 64th at col 67). */
	s = nested(VP_YDOC_MAX_DEPTH);
	doc = ydoc_parse("m.yaml", s, strlen(s), &d);
	assert_null(doc);
	expect_error_at(&d, "nesting deeper than 64 levels", 1, 67);
	vp_diags_clear(&d);
	free(s);

	/* 100000 levels: refused as quickly. */
	t0 = clock();
	s = nested(100000);
	doc = ydoc_parse("m.yaml", s, strlen(s), &d);
	assert_null(doc);
	assert_int_equal(vp_diags_count(&d, VP_ERROR), 1);
	assert_true(cpu_seconds(t0) < 1.0);
	vp_diags_clear(&d);
	free(s);
}

/*
 * FIXED BUG (ydoc.c add_kid): when a mapping or sequence outgrows its kids
 * array, add_kid looks the old block up in the document's ownership list
 * with a linear scan over every allocation so far.  Each container with
 * more than 8 children triggers one scan, so a document of many small
 * lists costs O(containers x nodes): 40000 lines of "- [1,...,9]" (880 KB,
 * 400k nodes, well inside the size and node limits) take 8.5 s, and a
 * 2 MB file near the 10^6-node limit about a minute — a hang by the
 * header's own promise ("no input crashes or hangs the program").
 * Fix: remember the kids array's slot in doc->owned in the parse frame
 * (struct frame gets an `owned_slot`), and update that slot on realloc
 * instead of searching.
 */
static void
bug_ydoc_many_small_lists_quadratic(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_buf t;
	struct ydoc *doc;
	clock_t t0;
	int i;

	(void)state;
	vp_buf_init(&t);
	/* 30000 lists of 9 = 300000 scalars, 660 KB. */
	for (i = 0; i < 30000; i++)
		vp_buf_add(&t, "- [1, 2, 3, 4, 5, 6, 7, 8, 9]\n");
	t0 = clock();
	doc = ydoc_parse("m.yaml", t.s, t.len, &d);
	assert_non_null(doc);
	ydoc_free(doc);
	/* Linear work: a few tenths of a second at most. */
	assert_true(cpu_seconds(t0) < 1.0);
	vp_buf_free(&t);
	vp_diags_clear(&d);
}

static void
validate_direct(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	/* vp_model_validate on a struct filled by hand (no reader). */
	vp_model_init(&m);
	m.layers = 1;
	m.hidden = 48;
	m.heads = 6;
	m.ffn = 96;
	m.vocab = 10;
	m.bias = true;
	assert_int_equal(vp_model_validate(&m, &d), 0);
	/* kv_heads = heads = 6, head_dim = 48 / 6 = 8, qkv_bias = bias. */
	assert_true(m.kv_heads == 6 && m.head_dim == 8);
	assert_int_equal(m.qkv_bias, 1);
	/* No file: diagnostics carry file NULL. */
	m.head_dim = 0;
	m.heads = 7;
	m.kv_heads = 7;
	assert_int_equal(vp_model_validate(&m, &d), -1);
	assert_int_equal(d.n, 1);
	assert_null(d.v[0].file);
	/* Divisors of 48 near 7: 6 below, 8 above. */
	assert_non_null(strstr(d.v[0].msg, "nearest valid: 6 or 8"));
	vp_diags_clear(&d);
	vp_model_free(&m);
	vp_model_free(NULL);
}

/*
 * FIXED BUG (model.c vp_model_validate / nearest_divisors): with heads == 0
 * (possible for a struct filled by hand; the readers reject it first) the
 * "must divide" message calls say_divisors(hidden, 0), whose upward loop
 * starts at i = 0 and evaluates hidden % 0: SIGFPE.  Fix: start the upward
 * search at max(v, 1) (and let validate reject heads == 0 with its own
 * message before dividing).
 */
static void
bug_validate_zero_heads(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	vp_model_init(&m);
	m.layers = 1;
	m.hidden = 64;
	m.heads = 0;
	m.ffn = 128;
	m.vocab = 10;
	assert_int_equal(vp_model_validate(&m, &d), -1);
	assert_true(vp_diags_count(&d, VP_ERROR) >= 1);
	vp_diags_clear(&d);
	vp_model_free(&m);
}

/*
 * Families: without a 'family' key the family is derived as files were
 * always lowered (torch-nn, then encoder, then learned positions, then
 * llama); an explicit one wins and implies its architecture.
 */
static void
family_default_and_explicit(void **state)
{
	static const char base[] = "name: t\nlayers: 2\nhidden: 64\n"
	    "heads: 4\nffn: 256\nvocab: 100\n";
	struct vp_diags d = { 0 };
	struct vp_model m;
	char text[512];

	(void)state;
	vp_model_init(&m);
	assert_int_equal(m.family, -1);
	assert_int_equal(vp_model_family(&m), VP_FAMILY_LLAMA);
	m.pos = VP_POS_LEARNED;
	assert_int_equal(vp_model_family(&m), VP_FAMILY_GPT2);
	m.arch = VP_ARCH_ENCODER;
	assert_int_equal(vp_model_family(&m), VP_FAMILY_BERT);
	m.impl = VP_IMPL_TORCH_NN;
	assert_int_equal(vp_model_family(&m), VP_FAMILY_TORCH_NN);
	/* Megatron fuses q, k and v of a pre-norm block only. */
	vp_model_init(&m);
	m.impl = VP_IMPL_MEGATRON;
	assert_true(vp_model_traits(&m).fused_qkv);
	assert_false(vp_family_info[VP_FAMILY_LLAMA].fused_qkv);
	m.arch = VP_ARCH_ENCODER;
	assert_false(vp_model_traits(&m).fused_qkv);

	/* An OPT-like decoder: learned positions, Llama's block layout. */
	snprintf(text, sizeof text, "%sposition: learned\nmax_seq: 128\n"
	    "family: llama\n", base);
	assert_int_equal(load(text, &m, &d), 0);
	assert_int_equal(vp_model_family(&m), VP_FAMILY_LLAMA);
	assert_int_equal(m.pos, VP_POS_LEARNED);
	vp_model_free(&m);
	/* family: bert implies architecture: encoder. */
	snprintf(text, sizeof text, "%sfamily: bert\n", base);
	assert_int_equal(load(text, &m, &d), 0);
	assert_int_equal(m.arch, VP_ARCH_ENCODER);
	vp_model_free(&m);
	/* family: torch-nn implies its implementation. */
	snprintf(text, sizeof text, "%sfamily: torch-nn\n", base);
	assert_int_equal(load(text, &m, &d), 0);
	assert_int_equal(m.impl, VP_IMPL_TORCH_NN);
	assert_int_equal(m.arch, VP_ARCH_DECODER);
	vp_model_free(&m);
	assert_int_equal(d.n, 0);

	/* Contradictions are errors at the family key. */
	snprintf(text, sizeof text, "%sarchitecture: decoder\nfamily: bert\n",
	    base);
	assert_int_equal(load(text, &m, &d), -1);
	expect_error_at(&d, "family 'bert' needs 'architecture: encoder', "
	    "not decoder", 8, 9);
	vp_model_free(&m);
	vp_diags_clear(&d);
	snprintf(text, sizeof text, "%simplementation: hf\n"
	    "family: torch-nn\n", base);
	assert_int_equal(load(text, &m, &d), -1);
	expect_error_at(&d, "family 'torch-nn' does not go with "
	    "'implementation: hf'", 8, 9);
	vp_model_free(&m);
	vp_diags_clear(&d);
	snprintf(text, sizeof text, "%sfamily: opt\n", base);
	assert_int_equal(load(text, &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "family"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/* Hugging Face configs name their family through model_type. */
static void
hf_families_set_family(void **state)
{
	static const struct { const char *json; enum vp_family fam; } c[] = {
		{ "{\"model_type\": \"gpt2\", \"n_embd\": 64, \"n_layer\": 2, "
		  "\"n_head\": 4, \"vocab_size\": 100, \"n_positions\": 64}",
		  VP_FAMILY_GPT2 },
		{ "{\"model_type\": \"roberta\", \"hidden_size\": 64, "
		  "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
		  "\"intermediate_size\": 256, \"vocab_size\": 100, "
		  "\"max_position_embeddings\": 64}", VP_FAMILY_BERT },
		{ "{\"model_type\": \"qwen2\", \"hidden_size\": 64, "
		  "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
		  "\"intermediate_size\": 256, \"vocab_size\": 100}",
		  VP_FAMILY_LLAMA },
	};
	struct vp_diags d = { 0 };
	struct vp_model m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		assert_int_equal(load(c[i].json, &m, &d), 0);
		assert_int_equal(m.family, (int)c[i].fam);
		assert_int_equal(vp_model_family(&m), c[i].fam);
		vp_model_free(&m);
	}
	/* GPT-2's null n_inner is 4 hidden (hf_families' ffn_4h). */
	assert_int_equal(load(c[0].json, &m, &d), 0);
	assert_int_equal(m.ffn, 256);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * Qwen3 and Qwen3-MoE configs (hf_qwen3): head_dim defaults to 128, not
 * hidden / heads; the blocks in mlp_only_layers and those off
 * decoder_sparse_step keep a dense MLP (Qwen3MoeDecoderLayer); the
 * expert keys take Qwen3MoeConfig's defaults; a shared expert size of 0
 * is none, a nonzero one is ignored with a warning; sliding windows are
 * refused.  The counts are those of the transformers 5.24 classes on the
 * meta device (calib/hf_params.py).
 */
/*
 * Gemma-2's soft-capping (hf_softcap): on by default for gemma2, as
 * Gemma2Config's 50.0 and 30.0 say; null turns each off; a number turns
 * it on for any family.  No parameters.
 */
static void
hf_softcap_configs(void **state)
{
	static const char dims[] = "\"hidden_size\": 64, "
	    "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
	    "\"intermediate_size\": 256, \"vocab_size\": 100";
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_buf t;

	(void)state;
	vp_buf_init(&t);
	vp_buf_printf(&t, "{\"model_type\": \"gemma2\", %s}", dims);
	assert_int_equal(load(t.s, &m, &d), 0);
	assert_true(m.attn_softcap && m.logit_softcap && m.post_norms);
	vp_model_free(&m);
	vp_buf_free(&t);

	vp_buf_init(&t);
	vp_buf_printf(&t, "{\"model_type\": \"gemma2\", %s, "
	    "\"attn_logit_softcapping\": null, "
	    "\"final_logit_softcapping\": 30.0}", dims);
	assert_int_equal(load(t.s, &m, &d), 0);
	assert_true(!m.attn_softcap && m.logit_softcap);
	vp_model_free(&m);
	vp_buf_free(&t);

	vp_buf_init(&t);
	vp_buf_printf(&t, "{\"model_type\": \"llama\", %s}", dims);
	assert_int_equal(load(t.s, &m, &d), 0);
	assert_true(!m.attn_softcap && !m.logit_softcap);
	vp_model_free(&m);
	vp_buf_free(&t);
	vp_diags_clear(&d);
}

static void
hf_qwen3_configs(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_param_count pc;

	(void)state;
	assert_int_equal(load("{\"model_type\": \"qwen3\", "
	    "\"hidden_size\": 64, \"num_hidden_layers\": 2, "
	    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
	    "\"intermediate_size\": 256, \"vocab_size\": 100}", &m, &d), 0);
	assert_int_equal(m.family, VP_FAMILY_QWEN3);
	assert_int_equal(m.head_dim, 128);
	vp_model_params(&m, &pc);
	/* q 64x512, k, v 64x256, o 512x64, q/k norms 2x128, MLP 3x64x256,
	 * 2 norms of 64; embedding and untied head 100x64, final norm. */
	assert_int_equal(pc.per_layer, 64 * 512 + 2 * 64 * 256 + 512 * 64 +
	    2 * 128 + 3 * 64 * 256 + 2 * 64);
	vp_model_free(&m);

	/* 6 blocks, step 2: blocks 1, 3, 5 are sparse, 1 is mlp_only. */
	assert_int_equal(load("{\"model_type\": \"qwen3_moe\", "
	    "\"hidden_size\": 64, \"num_hidden_layers\": 6, "
	    "\"num_attention_heads\": 4, \"head_dim\": 16, "
	    "\"intermediate_size\": 256, \"vocab_size\": 100, "
	    "\"num_experts\": 16, \"moe_intermediate_size\": 32, "
	    "\"decoder_sparse_step\": 2, \"mlp_only_layers\": [1], "
	    "\"shared_expert_intermediate_size\": 0}", &m, &d), 0);
	assert_true(m.has_moe);
	assert_int_equal(m.moe.top_k, 8);
	assert_int_equal(m.moe.shared_experts, 0);
	assert_false(vp_moe_layer_sparse(&m, 0));
	assert_false(vp_moe_layer_sparse(&m, 1));
	assert_false(vp_moe_layer_sparse(&m, 2));
	assert_true(vp_moe_layer_sparse(&m, 3));
	assert_true(vp_moe_layer_sparse(&m, 5));
	assert_int_equal(vp_moe_dense_blocks(&m, 0, 6), 4);
	assert_int_equal(vp_moe_dense_blocks(&m, 3, 3), 1);
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* Qwen3MoeSparseMoeBlock has no shared expert. */
	assert_int_equal(load("{\"model_type\": \"qwen3_moe\", "
	    "\"hidden_size\": 64, \"num_hidden_layers\": 2, "
	    "\"num_attention_heads\": 4, \"intermediate_size\": 256, "
	    "\"vocab_size\": 100, \"num_experts\": 4, "
	    "\"num_experts_per_tok\": 2, "
	    "\"shared_expert_intermediate_size\": 64}", &m, &d), 0);
	assert_int_equal(m.moe.shared_experts, 0);
	assert_int_equal(m.moe.ffn, 768);
	assert_non_null(find(&d, VP_WARNING, "no shared expert"));
	vp_model_free(&m);
	vp_diags_clear(&d);

	assert_int_equal(load("{\"model_type\": \"qwen3\", "
	    "\"hidden_size\": 64, \"num_hidden_layers\": 2, "
	    "\"num_attention_heads\": 4, \"intermediate_size\": 256, "
	    "\"vocab_size\": 100, \"use_sliding_window\": true}", &m, &d),
	    -1);
	assert_non_null(find(&d, VP_ERROR, "use_sliding_window"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * Llama 4 text configs (hf_llama4): intermediate_size is the experts'
 * (and the shared expert's), intermediate_size_mlp the dense blocks';
 * moe_layers and no_rope_layers must follow the every-k-th patterns the
 * lowering has, derived from interleave_moe_layer_step and the first
 * NoPE block; layer_types must agree; attn_temperature_tuning may be a
 * number (Scout's config says 4); a null attention_chunk_size is none.
 */
static void
hf_llama4_configs(void **state)
{
	static const char dims[] = "\"model_type\": \"llama4_text\", "
	    "\"hidden_size\": 64, \"num_hidden_layers\": 4, "
	    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
	    "\"head_dim\": 16, \"intermediate_size\": 32, "
	    "\"intermediate_size_mlp\": 128, \"vocab_size\": 100, "
	    "\"num_local_experts\": 4";
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_param_count pc;
	struct vp_buf t;

	(void)state;
	vp_buf_init(&t);
	vp_buf_printf(&t, "{%s, \"interleave_moe_layer_step\": 2, "
	    "\"moe_layers\": [1, 3], \"no_rope_layers\": [1, 0, 1, 0], "
	    "\"attn_temperature_tuning\": 4, \"attention_chunk_size\": null}",
	    dims);
	assert_int_equal(load(t.s, &m, &d), 0);
	assert_int_equal(m.family, VP_FAMILY_LLAMA4);
	assert_int_equal(m.ffn, 128);
	assert_int_equal(m.moe.ffn, 32);
	assert_int_equal(m.moe.shared_experts, 1);
	assert_int_equal(m.moe.shared_ffn, 32);
	assert_int_equal(m.moe.top_k, 1);
	assert_int_equal(m.global_every, 2);
	assert_int_equal(m.window, 0);
	assert_true(m.attn_temperature && m.qk_l2norm);
	assert_false(vp_moe_layer_sparse(&m, 0));
	assert_true(vp_moe_layer_sparse(&m, 1));
	assert_false(vp_block_nope(&m, 0));
	assert_true(vp_block_nope(&m, 3));
	vp_model_params(&m, &pc);
	/* Attention q 64x64, k, v 64x32, o 64x64 (no L2-norm weights);
	 * experts 4 x 3 x 64x32, shared 3x64x32, router 64x4; 2 norms. */
	assert_int_equal(pc.per_layer, 2 * 64 * 64 + 2 * 64 * 32 +
	    4 * 3 * 64 * 32 + 3 * 64 * 32 + 64 * 4 + 2 * 64);
	vp_model_free(&m);
	vp_buf_free(&t);
	vp_diags_clear(&d);

	vp_buf_init(&t);
	vp_buf_printf(&t, "{%s, \"interleave_moe_layer_step\": 2, "
	    "\"moe_layers\": [0, 2]}", dims);
	assert_int_equal(load(t.s, &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "moe_layers: block 0 breaks"));
	vp_model_free(&m);
	vp_buf_free(&t);
	vp_diags_clear(&d);

	vp_buf_init(&t);
	vp_buf_printf(&t, "{%s, \"no_rope_layers\": [1, 0, 0, 1]}", dims);
	assert_int_equal(load(t.s, &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "no_rope_layers: block 2"));
	vp_model_free(&m);
	vp_buf_free(&t);
	vp_diags_clear(&d);

	vp_buf_init(&t);
	vp_buf_printf(&t, "{%s, \"layer_types\": [\"full_attention\", "
	    "\"full_attention\", \"full_attention\", \"full_attention\"]}",
	    dims);
	assert_int_equal(load(t.s, &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "layer_types: block 0 is "
	    "planned as 'chunked_attention'"));
	vp_model_free(&m);
	vp_buf_free(&t);
	vp_diags_clear(&d);
}

/*
 * Layer graphs (lgraph.h): torch.nn's output sizes (dilation, padding,
 * a window that no longer fits), parameters and buffers by hand, the
 * repeat count, and a graph checked again at another resolution.
 */
static void
lgraph_shapes_and_params(void **state)
{
	static const char text[] =
	    "name: t\n"
	    "input: {channels: 3, image: 32}\n"
	    "layers:\n"
	    "  - conv2d: {out: 8, kernel: 3, dilation: 2, padding: 1}\n"
	    "  - batchnorm2d\n"
	    "  - relu: {inplace: true}\n"
	    "  - residual:\n"
	    "      repeat: 3\n"
	    "      layers:\n"
	    "        - conv2d: {out: 8, kernel: 3, padding: 1, groups: 2, "
	    "bias: false}\n"
	    "  - maxpool2d: {kernel: 2}\n"
	    "  - flatten\n"
	    "  - linear: {out: 10}\n";
	struct vp_diags d = { 0 };
	struct vp_lshape in = { 3, 32, 32, false }, out;
	struct vp_param_count pc;
	struct vp_model m;
	uint64_t bf, bi;
	char err[128];

	(void)state;
	assert_int_equal(load(text, &m, &d), 0);
	assert_non_null(m.lg);
	/* (32 + 2 - 2*2 - 1) / 1 + 1 = 30 */
	assert_int_equal(vp_layer_shape(&m.lg->layers.v[0], in, &out, err,
	    sizeof err), 0);
	assert_int_equal(out.c, 8);
	assert_int_equal(out.h, 30);
	assert_int_equal(out.w, 30);
	vp_model_params(&m, &pc);
	/* conv 8*3*9 + 8, bn 16, 3 x conv 8*4*9, linear 8*15*15*10 + 10 */
	assert_int_equal(pc.total, 224 + 16 + 3 * 288 + 18000 + 10);
	vp_lgraph_buffers(m.lg, &bf, &bi);
	assert_int_equal(bf, 16);
	assert_int_equal(bi, 1);
	assert_int_equal(vp_lgraph_count(m.lg, VP_L_RESIDUAL), 3);
	assert_int_equal(vp_lgraph_count(m.lg, VP_L_CONV2D), 4);
	/* At 2x2 the dilated 3x3 window (span 5) no longer fits. */
	assert_int_equal(vp_lgraph_check(m.lg, 2, "m.yaml", &d), -1);
	expect_error_at(&d, "conv2d kernel 3 does not fit its 2x2 input", 4,
	    0);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * DeepSeek-V2/V3 and Kimi-K2 configs (hf_deepseek): MLA's sizes with the
 * classes' defaults, head_dim from the nope and rope parts whatever the
 * config says, one shared MLP of n_shared_experts x the expert size,
 * kimi_k2 read as DeepSeek-V3's code, and what is refused.
 */
static void
hf_deepseek(void **state)
{
	static const char *const v2 = "{\"model_type\": \"deepseek_v2\","
	    " \"hidden_size\": 128, \"num_hidden_layers\": 3,"
	    " \"num_attention_heads\": 4, \"num_key_value_heads\": 4,"
	    " \"head_dim\": 16, \"intermediate_size\": 256,"
	    " \"vocab_size\": 512, \"q_lora_rank\": null,"
	    " \"kv_lora_rank\": 32, \"qk_rope_head_dim\": 16,"
	    " \"qk_nope_head_dim\": 32, \"v_head_dim\": 24,"
	    " \"n_routed_experts\": 8, \"num_experts_per_tok\": 2,"
	    " \"n_shared_experts\": 2, \"moe_intermediate_size\": 64,"
	    " \"first_k_dense_replace\": 1%s}";
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_param_count pc;
	struct vp_buf t;

	(void)state;
	vp_buf_init(&t);
	vp_buf_printf(&t, v2, "");
	load_ok(t.s, &m, &d);
	assert_int_equal(vp_model_family(&m), VP_FAMILY_DEEPSEEK_V2);
	assert_int_equal(m.mla.q_rank, 0);
	assert_int_equal(m.mla.kv_rank, 32);
	assert_int_equal(m.head_dim, 48);	/* nope + rope, not 16 */
	assert_int_equal(m.moe.shared_experts, 1);
	assert_int_equal(m.moe.shared_ffn, 128);
	assert_int_equal(m.moe.first_dense, 1);
	/* Embeddings and head 2 x 512 x 128, final norm 128; per block:
	 * q_proj 128 x 192, kv_a 128 x 48, kv_a_layernorm 32, kv_b 32 x
	 * 224, o_proj 96 x 128, 2 norms of 128; block 0 an MLP of 256,
	 * blocks 1-2 a router of 8 x 128, 8 experts of 64 and a shared MLP
	 * of 128. */
	vp_model_params(&m, &pc);
	assert_int_equal(pc.total, 2 * 512 * 128 + 128 +
	    3 * (128 * 192 + 128 * 48 + 32 + 32 * 224 + 96 * 128 + 256) +
	    3 * 128 * 256 + 2 * (8 * 128 + 8 * 3 * 128 * 64 + 3 * 128 * 128));
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* kimi_k2: DeepSeek-V3's code, under its own name. */
	load_ok("{\"model_type\": \"kimi_k2\", \"architectures\":"
	    " [\"DeepseekV3ForCausalLM\"], \"hidden_size\": 128,"
	    " \"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
	    " \"num_key_value_heads\": 4, \"intermediate_size\": 256,"
	    " \"vocab_size\": 512, \"q_lora_rank\": 64, \"kv_lora_rank\": 32,"
	    " \"qk_rope_head_dim\": 16, \"qk_nope_head_dim\": 32,"
	    " \"v_head_dim\": 32, \"n_routed_experts\": 8,"
	    " \"num_experts_per_tok\": 2, \"n_group\": 1, \"topk_group\": 1,"
	    " \"moe_intermediate_size\": 64, \"first_k_dense_replace\": 1,"
	    " \"num_nextn_predict_layers\": 1}", &m, &d);
	assert_int_equal(vp_model_family(&m), VP_FAMILY_DEEPSEEK_V3);
	assert_string_equal(m.name, "kimi_k2");
	assert_int_equal(m.mla.q_rank, 64);
	assert_true(m.mla.rope_interleave);
	assert_int_equal(m.moe.groups, 1);
	assert_int_equal(m.moe.shared_experts, 1);	/* the class's default */
	assert_non_null(find(&d, VP_NOTE, "multi-token-prediction"));
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* What the classes do not run, or the lowering does not model. */
	vp_buf_free(&t);
	vp_buf_init(&t);
	vp_buf_printf(&t, v2, ", \"moe_layer_freq\": 2");
	assert_int_equal(load(t.s, &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "moe_layer_freq 2 is not what "
	    "transformers' DeepseekV2Moe runs"));
	vp_model_free(&m);
	vp_diags_clear(&d);
	vp_buf_free(&t);
	vp_buf_init(&t);
	vp_buf_printf(&t, v2, ", \"mlp_bias\": true");
	assert_int_equal(load(t.s, &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "mlp_bias: true is not modelled"));
	vp_model_free(&m);
	vp_diags_clear(&d);
	vp_buf_free(&t);
	vp_buf_init(&t);
	vp_buf_printf(&t, v2, ", \"topk_method\": \"noaux_tc\"");
	assert_int_equal(load(t.s, &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "topk_method 'noaux_tc' is not"));
	vp_model_free(&m);
	vp_diags_clear(&d);
	vp_buf_free(&t);

	/* The own schema: mla needs an MLA family. */
	assert_int_equal(load("name: x\nlayers: 2\nhidden: 64\nheads: 4\n"
	    "ffn: 128\nvocab: 100\nmla:\n  kv_lora_rank: 16\n"
	    "  qk_rope_head_dim: 8\n  qk_nope_head_dim: 8\n"
	    "  v_head_dim: 16\n", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "'mla' needs a family with "
	    "multi-head latent attention"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * T5 and mT5 configs (hf_t5): T5Config's names and defaults, the decoder
 * as deep as the encoder unless said, the head tied whatever
 * tie_word_embeddings says (transformers 5.24) and the rescale it
 * decides, gated-gelu as geglu, and any other feed_forward_proj refused.
 * 44,800 parameters (T5ForConditionalGeneration of 5.24 on the meta device
 * says so): two 32-wide relu stacks of 2 blocks, 100 tokens
 * (counted by hand from modeling_t5.py: 3,200 embedding; encoder blocks
 * 4 x 32 x 32 + 2 x 32 x 64 + 64; decoder blocks 8 x 32 x 32 + 2 x 32 x 64
 * + 96; 2 x 32 x 4 bias tables; two final norms).
 */
static void
hf_t5_configs(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"model_type\": \"t5\", \"d_model\": 32, \"num_layers\": 2,"
	    " \"num_heads\": 4, \"d_kv\": 8, \"d_ff\": 64,"
	    " \"vocab_size\": 100}", &m, &d);
	assert_int_equal(m.arch, VP_ARCH_ENCDEC);
	assert_int_equal(m.family, VP_FAMILY_T5);
	assert_true(m.dec_layers == 2 && m.rel_buckets == 32);
	assert_true(m.tie_embeddings && m.scale_dec_out);
	assert_int_equal(m.act, VP_ACT_RELU);
	assert_true(total(&m) == 3200 + 2 * (4 * 1024 + 2 * 2048 + 64) +
	    2 * (8 * 1024 + 2 * 2048 + 96) + 2 * 32 * 4 + 2 * 32);
	vp_model_free(&m);
	vp_diags_clear(&d);
	load_ok("{\"model_type\": \"mt5\", \"d_model\": 32, \"num_layers\": 2,"
	    " \"num_decoder_layers\": 3, \"num_heads\": 4, \"d_kv\": 8,"
	    " \"d_ff\": 64, \"vocab_size\": 100,"
	    " \"feed_forward_proj\": \"gated-gelu\","
	    " \"tie_word_embeddings\": false}", &m, &d);
	assert_true(m.dec_layers == 3 && m.act == VP_ACT_GEGLU);
	assert_true(m.tie_embeddings && !m.scale_dec_out);
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"t5\","
	    " \"feed_forward_proj\": \"gated-silu\"}", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "feed_forward_proj 'gated-silu' "
	    "is not modelled"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * BART and Whisper configs (configuration_bart.py, configuration_whisper.py
 * of 5.24): d_model and the encoder_/decoder_ keys, the tied head, and what
 * is refused.  The counts are the classes' on the meta device, and by
 * hand from the modeling files: BART 60,064 (3,200 embedding, two
 * position tables of 18 x 32, two layernorm_embedding; encoder blocks
 * 4 x (32 x 32 + 32) + 2 x 32 x 64 + 96 + 2 x 64; decoder blocks two
 * attentions and three norms); Whisper 50,688 (k_proj unbiased; conv1
 * 8 x 32 x 3 + 32, conv2 32 x 32 x 3 + 32, position tables of 16 and 12
 * rows, two final norms).
 */
static void
hf_s2s_configs(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"model_type\": \"bart\", \"d_model\": 32,"
	    " \"encoder_layers\": 2, \"decoder_layers\": 3,"
	    " \"encoder_attention_heads\": 4, \"decoder_attention_heads\": 4,"
	    " \"encoder_ffn_dim\": 64, \"decoder_ffn_dim\": 64,"
	    " \"vocab_size\": 100, \"max_position_embeddings\": 16}", &m, &d);
	assert_int_equal(m.arch, VP_ARCH_ENCDEC);
	assert_int_equal(m.family, VP_FAMILY_BART);
	assert_true(m.layers == 2 && m.dec_layers == 3 && m.head_dim == 8);
	assert_true(m.tie_embeddings && m.act == VP_ACT_GELU);
	assert_true(m.dropout == 0.1);
	assert_true(total(&m) == 60064);
	vp_model_free(&m);
	vp_diags_clear(&d);
	load_ok("{\"model_type\": \"whisper\", \"d_model\": 32,"
	    " \"encoder_layers\": 2, \"decoder_layers\": 2,"
	    " \"encoder_attention_heads\": 4, \"decoder_attention_heads\": 4,"
	    " \"encoder_ffn_dim\": 64, \"decoder_ffn_dim\": 64,"
	    " \"vocab_size\": 100, \"num_mel_bins\": 8,"
	    " \"max_source_positions\": 16, \"max_target_positions\": 12}",
	    &m, &d);
	assert_int_equal(m.family, VP_FAMILY_WHISPER);
	assert_true(m.max_seq == 16 && m.dec_max_seq == 12 && m.mel_bins == 8);
	assert_true(total(&m) == 50688);
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"bart\","
	    " \"decoder_attention_heads\": 8}", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "the decoder's heads (8) and MLP "
	    "size (4096) differ from the encoder's (16, 4096)"));
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"bart\","
	    " \"encoder_layerdrop\": 0.1, \"tie_word_embeddings\": false,"
	    " \"activation_function\": \"relu\"}", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "encoder_layerdrop 0.1 is not "
	    "modelled"));
	assert_non_null(find(&d, VP_ERROR, "tie_word_embeddings: false is "
	    "not modelled for bart"));
	assert_non_null(find(&d, VP_ERROR, "activation_function 'relu' is "
	    "not modelled for bart"));
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"whisper\","
	    " \"apply_spec_augment\": true}", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "apply_spec_augment: true"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * ViT configs (hf_vit): ViTConfig's names, qkv_bias, the classes from
 * id2label (3 here), 17 tokens (16 patches of 8x8 in a 32x32 image and
 * the CLS token).  23,811 parameters: ViTForImageClassification of 5.24
 * on the meta device says so (by hand: the patch convolution 3 x 8 x 8 x
 * 32 + 32, cls 32, positions 17 x 32; blocks of 4 x 32 x 32 + 32 (o's
 * bias), 2 x 32 x 64 + 64 + 32, two LayerNorms; the final LayerNorm and
 * the classifier 32 x 3 + 3).  An attention dropout other than the
 * hidden one is refused.
 */
static void
hf_vit_configs(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"model_type\": \"vit\", \"hidden_size\": 32,"
	    " \"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
	    " \"intermediate_size\": 64, \"image_size\": 32,"
	    " \"patch_size\": 8, \"qkv_bias\": false,"
	    " \"id2label\": {\"0\": \"a\", \"1\": \"b\", \"2\": \"c\"}}",
	    &m, &d);
	assert_int_equal(m.family, VP_FAMILY_VIT);
	assert_int_equal(m.arch, VP_ARCH_ENCODER);
	assert_true(m.vocab == 3 && m.vis.channels == 3 && !m.qkv_bias);
	assert_true(vp_vision_seq(&m, m.vis.image) == 17);
	assert_true(total(&m) == 3 * 64 * 32 + 32 + 32 + 17 * 32 +
	    2 * (4 * 1024 + 32 + 2 * 2048 + 64 + 32 + 4 * 32) + 2 * 32 +
	    3 * 32 + 3);
	assert_true(total(&m) == 23811);
	vp_model_free(&m);
	vp_diags_clear(&d);
	/* The same in the own schema: family vit implies position none and
	 * biases. */
	load_ok("name: v\nfamily: vit\nlayers: 2\nhidden: 32\nheads: 4\n"
	    "ffn: 64\nvocab: 3\nqkv_bias: false\nimage_size: 32\n"
	    "patch_size: 8\nchannels: 3\n", &m, &d);
	assert_true(m.pos == VP_POS_NONE && m.bias && total(&m) == 23811);
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"vit\","
	    " \"hidden_dropout_prob\": 0.1,"
	    " \"attention_probs_dropout_prob\": 0.0}", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "attention_probs_dropout_prob"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * CLIP configs (read_clip): the text tower from text_config, the vision
 * tower from vision_config, each with its own activation; 88,225
 * parameters (CLIPModel of 5.24 on the meta device says so).  A tower's
 * dropout and an activation not modelled are refused.
 */
static void
hf_clip_configs(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"model_type\": \"clip\", \"projection_dim\": 8,"
	    " \"text_config\": {\"hidden_size\": 32, \"num_hidden_layers\": 1,"
	    " \"num_attention_heads\": 2, \"intermediate_size\": 64,"
	    " \"vocab_size\": 100, \"max_position_embeddings\": 16},"
	    " \"vision_config\": {\"hidden_size\": 48, \"num_hidden_layers\": 2,"
	    " \"num_attention_heads\": 4, \"intermediate_size\": 96,"
	    " \"image_size\": 32, \"patch_size\": 16, \"hidden_act\": \"gelu\"}}",
	    &m, &d);
	assert_int_equal(m.family, VP_FAMILY_CLIP);
	assert_true(m.hidden == 32 && m.max_seq == 16 &&
	    m.act == VP_ACT_QUICK_GELU);
	assert_true(m.vis.hidden == 48 && m.vis.layers == 2 &&
	    m.vis.act == VP_ACT_GELU && m.vis.proj == 8);
	assert_true(vp_vision_seq(&m, m.vis.image) == 5);
	assert_true(total(&m) == 88225);
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"clip\","
	    " \"text_config\": {\"dropout\": 0.1}}", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "dropout 0.1 is not modelled"));
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"clip\","
	    " \"vision_config\": {\"hidden_act\": \"silu\"}}", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "hidden_act 'silu' is not "
	    "modelled for CLIP"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/* Every family's row names the linears its block builder asks for. */
static void
family_rows_complete(void **state)
{
	int f;

	(void)state;
	for (f = 0; f < VP_FAMILY_COUNT; f++) {
		const struct vp_family_info *fi = &vp_family_info[f];

		assert_non_null(fi->source);
		assert_true(fi->block < VP_BLOCK_COUNT);
		assert_true(fi->head < VP_HEAD_COUNT);
		/* A Mamba-2 block has no linear of the roles (its in_proj and
		 * out_proj are the builder's own, not LoRA targets), nor
		 * has Zamba2's (its shared blocks' linears are its own). */
		if (fi->block == VP_BLOCK_MAMBA2 || fi->block ==
		    VP_BLOCK_ZAMBA2) {
			int r;

			for (r = 0; r < VP_ROLE_COUNT; r++)
				assert_null(fi->lin[r]);
			continue;
		}
		assert_non_null(fi->lin[fi->fused_qkv ? VP_ROLE_QKV : VP_ROLE_Q]);
		assert_non_null(fi->lin[VP_ROLE_O]);
		assert_non_null(fi->lin[VP_ROLE_DOWN]);
		if (fi->mla) {
			/* DeepSeek's MLA block and gated MLP. */
			assert_true(fi->block == VP_BLOCK_MLA);
			assert_non_null(fi->lin[VP_ROLE_Q_A]);
			assert_non_null(fi->lin[VP_ROLE_Q_B]);
			assert_non_null(fi->lin[VP_ROLE_KV_A]);
			assert_non_null(fi->lin[VP_ROLE_KV_B]);
			assert_non_null(fi->lin[VP_ROLE_GATE]);
			assert_non_null(fi->lin[VP_ROLE_UP]);
			continue;
		}
		assert_non_null(fi->lin[VP_ROLE_FC]);
		/* An encoder-decoder row runs Hugging Face's code only (no
		 * Megatron fusion); T5's names its gated MLP's linears, BART's
		 * and Whisper's MLPs are ungated. */
		if (fi->arch == VP_ARCH_ENCDEC) {
			assert_null(fi->lin[VP_ROLE_QKV]);
			if (f == VP_FAMILY_T5) {
				assert_non_null(fi->lin[VP_ROLE_GATE]);
				assert_non_null(fi->lin[VP_ROLE_UP]);
			} else {
				assert_null(fi->lin[VP_ROLE_GATE]);
			}
			continue;
		}
		/* OPT's and ViT's pre-norm rows are Hugging Face's ungated
		 * blocks only (model validation refuses the rest). */
		if (f == VP_FAMILY_CLIP)
			assert_true(fi->head == VP_HEAD_CONTRASTIVE &&
			    fi->lin[VP_ROLE_K] != NULL);
		if (f == VP_FAMILY_VIT) {
			assert_non_null(fi->lin[VP_ROLE_K]);
			assert_non_null(fi->lin[VP_ROLE_V]);
			assert_true(fi->head == VP_HEAD_CLS);
		}
		if (fi->block == VP_BLOCK_PRE_NORM && f != VP_FAMILY_OPT &&
		    f != VP_FAMILY_VIT && f != VP_FAMILY_CLIP) {
			/* Pre-norm rows may be fused by Megatron, and carry
			 * a gated MLP when the activation is gated. */
			assert_non_null(fi->lin[VP_ROLE_QKV]);
			assert_non_null(fi->lin[VP_ROLE_Q]);
			assert_non_null(fi->lin[VP_ROLE_GATE]);
			assert_non_null(fi->lin[VP_ROLE_UP]);
		}
		/* ModernBERT: a fused Wqkv and one Wi for gate and up. */
		if (fi->block == VP_BLOCK_MODERNBERT) {
			assert_true(fi->fused_qkv);
			assert_null(fi->lin[VP_ROLE_Q]);
			assert_non_null(fi->lin[VP_ROLE_GATE]);
			assert_non_null(fi->lin[VP_ROLE_UP]);
			assert_true(fi->head == VP_HEAD_MODERNBERT_MLM);
		}
		/* A parallel block has one norm or two, separate q, k, v. */
		if (fi->block == VP_BLOCK_PARALLEL) {
			assert_true(fi->par_norms >= 1 && fi->par_norms <= 2);
			if (!fi->fused_qkv) {
				assert_non_null(fi->lin[VP_ROLE_K]);
				assert_non_null(fi->lin[VP_ROLE_V]);
			}
		}
	}
}

/*
 * Parallel blocks: the rotary dims come from the config's factor (Phi's
 * partial_rotary_factor, GPT-NeoX's rotary_pct or rope_parameters), and
 * what was not measured is refused: GPT-NeoX's sequential block, Phi's
 * qk_layernorm.
 */
static void
hf_parallel_blocks(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	load_ok("{\"model_type\": \"phi\", \"hidden_size\": 2560, "
	    "\"num_hidden_layers\": 2, \"num_attention_heads\": 32, "
	    "\"intermediate_size\": 10240, \"vocab_size\": 100, "
	    "\"partial_rotary_factor\": 0.4}", &m, &d);
	assert_int_equal(m.family, VP_FAMILY_PHI);
	assert_int_equal(m.rotary_dim, 32);
	vp_model_free(&m);
	vp_diags_clear(&d);
	load_ok("{\"model_type\": \"gpt_neox\", \"hidden_size\": 512, "
	    "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
	    "\"intermediate_size\": 2048, \"vocab_size\": 100, "
	    "\"rope_parameters\": {\"partial_rotary_factor\": 0.5}, "
	    "\"rotary_pct\": 0.25}", &m, &d);
	assert_int_equal(m.family, VP_FAMILY_GPT_NEOX);
	assert_int_equal(m.rotary_dim, 32);	/* rope_parameters wins */
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"gpt_neox\", "
	    "\"hidden_size\": 512, \"num_hidden_layers\": 2, "
	    "\"num_attention_heads\": 8, \"intermediate_size\": 2048, "
	    "\"vocab_size\": 100, \"use_parallel_residual\": false}", &m,
	    &d), -1);
	expect_error_at(&d, "use_parallel_residual: false", 1, 169);
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"phi\", \"hidden_size\": 64, "
	    "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
	    "\"intermediate_size\": 256, \"vocab_size\": 100, "
	    "\"qk_layernorm\": true}", &m, &d), -1);
	expect_error_at(&d, "qk_layernorm: true is not modelled", 1, 153);
	vp_model_free(&m);
	vp_diags_clear(&d);
	/* OPT: ffn_dim, enable_bias; OPT-350m's post-norm block and
	 * project_in/out are refused. */
	load_ok("{\"model_type\": \"opt\", \"hidden_size\": 64, "
	    "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
	    "\"ffn_dim\": 256, \"vocab_size\": 100, "
	    "\"max_position_embeddings\": 32, \"enable_bias\": false}",
	    &m, &d);
	assert_int_equal(m.family, VP_FAMILY_OPT);
	assert_int_equal(m.ffn, 256);
	assert_false(m.bias);
	assert_int_equal(m.qkv_bias, 0);
	vp_model_free(&m);
	vp_diags_clear(&d);
	assert_int_equal(load("{\"model_type\": \"opt\", \"hidden_size\": 1024, "
	    "\"num_hidden_layers\": 2, \"num_attention_heads\": 16, "
	    "\"ffn_dim\": 4096, \"vocab_size\": 100, "
	    "\"max_position_embeddings\": 32, "
	    "\"do_layer_norm_before\": false, "
	    "\"word_embed_proj_dim\": 512}", &m, &d), -1);
	assert_int_equal(vp_diags_count(&d, VP_ERROR), 2);
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * hf_changes: each change applies from its first release on, only to the
 * families it names and only to Hugging Face code.
 */
static void
transformers_release_rows(void **state)
{
	struct vp_model m;
	struct vp_family_info t;

	(void)state;
	vp_model_init(&m);			/* Llama family, hf */
	t = vp_model_traits_at(&m, 440);
	assert_true(t.logits_fp32);
	assert_false(t.loss_fp32 || t.pad_labels || t.sdpa_gqa ||
	    t.sdpa_contiguous || t.mask_skip);
	assert_true(t.mask_fp32 && t.q_view && t.repeat_kv);
	assert_true(vp_model_traits_at(&m, 445).logits_fp32);
	t = vp_model_traits_at(&m, 446);
	assert_false(t.logits_fp32);
	assert_true(t.loss_fp32);
	assert_false(vp_model_traits_at(&m, 447).sdpa_contiguous);
	assert_true(vp_model_traits_at(&m, 448).sdpa_contiguous);
	assert_false(vp_model_traits_at(&m, 448).pad_labels);
	assert_true(vp_model_traits_at(&m, 449).pad_labels);
	assert_false(vp_model_traits_at(&m, 453).sdpa_gqa);
	assert_true(vp_model_traits_at(&m, 454).sdpa_gqa);
	assert_true(vp_model_traits_at(&m, 455).sdpa_contiguous);
	t = vp_model_traits_at(&m, 456);
	assert_false(t.sdpa_contiguous);
	assert_true(t.loss_fp32 && t.pad_labels && t.sdpa_gqa);
	/* A Megatron Llama runs no transformers code. */
	m.impl = VP_IMPL_MEGATRON;
	t = vp_model_traits_at(&m, 524);
	assert_true(t.logits_fp32);
	assert_false(t.loss_fp32 || t.pad_labels || t.sdpa_gqa);

	/* GPT-2: the shared loss from 4.48, the fp32 eager mask from 4.55. */
	vp_model_init(&m);
	m.pos = VP_POS_LEARNED;
	assert_false(vp_model_traits_at(&m, 447).loss_fp32);
	assert_true(vp_model_traits_at(&m, 448).loss_fp32);
	assert_false(vp_model_traits_at(&m, 454).mask_fp32);
	assert_true(vp_model_traits_at(&m, 455).mask_fp32);
	assert_false(vp_model_traits_at(&m, 524).sdpa_gqa);

	/* BERT: the extended mask until 4.57, none without padding from 5.0;
	 * its own loss and sdpa class are untouched. */
	vp_model_init(&m);
	m.arch = VP_ARCH_ENCODER;
	t = vp_model_traits_at(&m, 457);
	assert_true(t.mask_fp32);
	assert_false(t.mask_skip);
	t = vp_model_traits_at(&m, 500);
	assert_false(t.mask_fp32);
	assert_true(t.mask_skip);
	assert_false(t.loss_fp32 || t.pad_labels || t.sdpa_contiguous);
}

/*
 * Gemma-3's local layers: sliding_window_pattern and layer_types give the
 * same global layers; a list off the pattern, a null window and
 * Gemma3TextConfig's defaults for a sparse config.
 */
static void
gemma3_layer_types(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;

	(void)state;
	assert_int_equal(load("{\"model_type\": \"gemma3_text\", "
	    "\"num_hidden_layers\": 7, \"sliding_window\": 512, "
	    "\"sliding_window_pattern\": 3}", &m, &d), 0);
	assert_int_equal(m.window, 512);
	assert_int_equal(m.global_every, 3);
	assert_true(vp_layer_local(&m, 0) && vp_layer_local(&m, 1));
	assert_false(vp_layer_local(&m, 2));
	assert_true(vp_layer_local(&m, 6));
	/* Gemma3TextConfig's defaults fill what the config leaves out. */
	assert_int_equal(m.hidden, 2304);
	assert_int_equal(m.head_dim, 256);
	assert_int_equal(m.vocab, 262208);
	assert_false(m.attn_softcap || m.logit_softcap);
	vp_model_free(&m);
	vp_diags_clear(&d);

	assert_int_equal(load("{\"model_type\": \"gemma3_text\", "
	    "\"num_hidden_layers\": 4, \"layer_types\": [\"sliding_attention\", "
	    "\"full_attention\", \"sliding_attention\", \"full_attention\"]}",
	    &m, &d), 0);
	assert_int_equal(m.global_every, 2);
	assert_int_equal(m.window, 4096);
	vp_model_free(&m);
	vp_diags_clear(&d);

	assert_int_equal(load("{\"model_type\": \"gemma3_text\", "
	    "\"num_hidden_layers\": 3, \"layer_types\": [\"full_attention\", "
	    "\"sliding_attention\", \"sliding_attention\"]}", &m, &d), -1);
	expect_error_at(&d, "layer_types: layer 1 breaks the pattern", 1, 89);
	vp_model_free(&m);
	vp_diags_clear(&d);

	assert_int_equal(load("{\"model_type\": \"gemma3_text\", "
	    "\"sliding_window\": null}", &m, &d), 0);
	assert_int_equal(m.window, 0);
	assert_int_equal(m.global_every, 0);
	assert_false(vp_layer_local(&m, 0));
	vp_model_free(&m);
	vp_diags_clear(&d);

	assert_int_equal(load("{\"model_type\": \"gemma3_text\", "
	    "\"use_bidirectional_attention\": true}", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "use_bidirectional_attention"));
	vp_model_free(&m);
	vp_diags_clear(&d);

	/* The own schema: the two keys go together. */
	assert_int_equal(load("name: x\nfamily: gemma3\nlayers: 2\n"
	    "hidden: 64\nheads: 4\nffn: 128\nvocab: 100\n"
	    "sliding_window: 16\n", &m, &d), -1);
	assert_non_null(find(&d, VP_ERROR, "'sliding_window' and "
	    "'global_every' go together"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

/*
 * gpt-oss: GptOssConfig's defaults (gpt-oss-120b's sizes) for what a
 * config leaves out, every other layer local, the MXFP4
 * quantization_config read with a note, another method refused.
 */
static void
gpt_oss_config(void **state)
{
	struct vp_diags d = { 0 };
	struct vp_model m;
	struct vp_param_count pc;

	(void)state;
	assert_int_equal(load("{\"model_type\": \"gpt_oss\", "
	    "\"num_local_experts\": 128, \"quantization_config\": "
	    "{\"quant_method\": \"mxfp4\"}}", &m, &d), 0);
	assert_int_equal(m.layers, 36);
	assert_int_equal(m.moe.experts, 128);
	assert_int_equal(m.moe.top_k, 4);
	assert_int_equal(m.window, 128);
	assert_int_equal(m.global_every, 2);
	assert_true(vp_layer_local(&m, 0));
	assert_false(vp_layer_local(&m, 1));
	assert_true(m.bias && m.qkv_bias && m.o_bias);
	assert_false(m.tie_embeddings);
	assert_non_null(find(&d, VP_NOTE, "planned dequantized"));
	/* GptOssForCausalLM(GptOssConfig()) on the meta device. */
	vp_model_params(&m, &pc);
	assert_int_equal(pc.total, 116829156672ULL);
	vp_model_free(&m);
	vp_diags_clear(&d);

	assert_int_equal(load("{\"model_type\": \"gpt_oss\", "
	    "\"quantization_config\": {\"quant_method\": \"gptq\"}}", &m,
	    &d), -1);
	assert_non_null(find(&d, VP_ERROR, "only gpt-oss's MXFP4"));
	vp_model_free(&m);
	vp_diags_clear(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(training_block),
		cmocka_unit_test(kv_heads_and_head_dim),
		cmocka_unit_test(heads_must_divide_hidden),
		cmocka_unit_test(kv_heads_must_divide_heads),
		cmocka_unit_test(learned_needs_max_seq),
		cmocka_unit_test(train_seq_past_max_seq),
		cmocka_unit_test(top_k_past_experts),
		cmocka_unit_test(absurd_size),
		cmocka_unit_test(reader_errors),
		cmocka_unit_test(range_errors),
		cmocka_unit_test(missing_and_duplicate_keys),
		cmocka_unit_test(not_a_mapping),
		cmocka_unit_test(params_decoder_rmsnorm_swiglu_gqa),
		cmocka_unit_test(params_gpt2_like),
		cmocka_unit_test(params_bert_like),
		cmocka_unit_test(params_moe_router_shared),
		cmocka_unit_test(hf_llama),
		cmocka_unit_test(hf_gpt2_n_keys),
		cmocka_unit_test(hf_bert),
		cmocka_unit_test(hf_mixtral),
		cmocka_unit_test(hf_qwen2_qkv_bias),
		cmocka_unit_test(hf_unknown_model_type),
		cmocka_unit_test(gemma3_layer_types),
		cmocka_unit_test(gpt_oss_config),
		cmocka_unit_test(hf_architectures),
		cmocka_unit_test(hf_t5_configs),
		cmocka_unit_test(hf_s2s_configs),
		cmocka_unit_test(hf_vit_configs),
		cmocka_unit_test(hf_clip_configs),
		cmocka_unit_test(hf_text_config),
		cmocka_unit_test(hf_errors),
		cmocka_unit_test(bug_hf_attention_bias_adds_mlp_bias),
		cmocka_unit_test(bug_hf_qwen2_moe_shared_expert_gate),
		cmocka_unit_test(alias_bomb),
		cmocka_unit_test(alias_self_reference),
		cmocka_unit_test(deep_nesting),
		cmocka_unit_test(bug_ydoc_many_small_lists_quadratic),
		cmocka_unit_test(validate_direct),
		cmocka_unit_test(bug_validate_zero_heads),
		cmocka_unit_test(family_default_and_explicit),
		cmocka_unit_test(hf_families_set_family),
		cmocka_unit_test(hf_qwen3_configs),
		cmocka_unit_test(hf_llama4_configs),
		cmocka_unit_test(hf_softcap_configs),
		cmocka_unit_test(family_rows_complete),
		cmocka_unit_test(transformers_release_rows),
		cmocka_unit_test(lgraph_shapes_and_params),
		cmocka_unit_test(hf_deepseek),
		cmocka_unit_test(hf_parallel_blocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
