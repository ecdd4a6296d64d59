/*
 * model_read.c — model descriptions from YAML trees (see model_read.h).
 *
 * Two dialects: vramplan's own schema (strict: an unknown key is an error
 * with a "did you mean") and Hugging Face config.json (lenient: configs
 * carry dozens of keys that do not affect memory, so unknown keys are
 * ignored, but the keys we read are type-checked).
 */
#include "model_read.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/* Ranges: generous, but past them the file is wrong, not the model big. */
#define MAX_LAYERS 100000
#define MAX_HIDDEN (1u << 20)
#define MAX_HEADS 65536
#define MAX_FFN (1u << 24)
#define MAX_VOCAB (1u << 26)
#define MAX_SEQ (1u << 27)
#define MAX_BATCH (1u << 20)

enum kty { K_STR, K_U64, K_DBL, K_BOOL, K_ENUM, K_MAP };

struct key {
	const char *name;
	enum kty type;
	uint64_t min, max;
	const char *const *names;	/* K_ENUM */
	int nnames;
	int field;			/* enum vp_field or -1 */
	const char *hint;		/* for "missing required key" */
	bool required;
};

static const char *const arch_all[] = { "decoder", "encoder",
    "encoder-decoder", "custom" };

static const struct key top_keys[] = {
	{ "name", K_STR, 0, 0, NULL, 0, VP_F_NAME, "a display name", true },
	{ "architecture", K_ENUM, 0, 0, arch_all, 4, -1, NULL, false },
	{ "layers", K_U64, 1, MAX_LAYERS, NULL, 0, VP_F_LAYERS,
	    "the number of transformer blocks, e.g. 32", true },
	{ "hidden", K_U64, 1, MAX_HIDDEN, NULL, 0, VP_F_HIDDEN,
	    "the model width, e.g. 4096", true },
	{ "heads", K_U64, 1, MAX_HEADS, NULL, 0, VP_F_HEADS,
	    "the number of attention heads, e.g. 32", true },
	{ "kv_heads", K_U64, 1, MAX_HEADS, NULL, 0, VP_F_KV_HEADS, NULL, false },
	{ "head_dim", K_U64, 1, MAX_HEADS, NULL, 0, VP_F_HEAD_DIM, NULL, false },
	{ "ffn", K_U64, 1, MAX_FFN, NULL, 0, VP_F_FFN,
	    "the MLP intermediate size, e.g. 14336", true },
	{ "activation", K_ENUM, 0, 0, vp_act_names, VP_ACT_COUNT, -1, NULL,
	    false },
	{ "norm", K_ENUM, 0, 0, vp_norm_names, VP_NORM_COUNT, -1, NULL, false },
	{ "bias", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "qkv_bias", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "post_norms", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "attn_softcap", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "logit_softcap", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "vocab", K_U64, 1, MAX_VOCAB, NULL, 0, VP_F_VOCAB,
	    "the vocabulary size, e.g. 32000", true },
	{ "tie_embeddings", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "position", K_ENUM, 0, 0, vp_pos_names, VP_POS_COUNT, VP_F_POSITION,
	    NULL, false },
	{ "max_seq", K_U64, 1, MAX_SEQ, NULL, 0, VP_F_MAX_SEQ, NULL, false },
	{ "type_vocab", K_U64, 0, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "dropout", K_DBL, 0, 0, NULL, 0, -1, NULL, false },
	{ "implementation", K_ENUM, 0, 0, vp_impl_names, VP_IMPL_COUNT, -1,
	    NULL, false },
	{ "family", K_ENUM, 0, 0, vp_family_names, VP_FAMILY_COUNT,
	    VP_F_FAMILY, NULL, false },
	{ "moe", K_MAP, 0, 0, NULL, 0, VP_F_MOE, NULL, false },
	{ "training", K_MAP, 0, 0, NULL, 0, -1, NULL, false },
	{ "decoder_layers", K_U64, 1, MAX_LAYERS, NULL, 0, -1, NULL, false },
	{ "relative_buckets", K_U64, 1, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "decoder_output_scale", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
};

static const struct key moe_keys[] = {
	{ "experts", K_U64, 1, MAX_HEADS, NULL, 0, VP_F_MOE_EXPERTS,
	    "the number of routed experts, e.g. 8", true },
	{ "top_k", K_U64, 1, MAX_HEADS, NULL, 0, VP_F_MOE_TOP_K,
	    "the experts per token, e.g. 2", true },
	{ "ffn", K_U64, 1, MAX_FFN, NULL, 0, VP_F_MOE_FFN, NULL, false },
	{ "shared_experts", K_U64, 0, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "shared_ffn", K_U64, 0, MAX_FFN, NULL, 0, -1, NULL, false },
	{ "shared_gate", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "first_dense", K_U64, 0, MAX_LAYERS, NULL, 0, -1, NULL, false },
};

static const struct key train_keys[] = {
	{ "micro_batch", K_U64, 1, MAX_BATCH, NULL, 0, -1, NULL, false },
	{ "seq", K_U64, 1, MAX_SEQ, NULL, 0, VP_F_TRAIN_SEQ, NULL, false },
	{ "precision", K_ENUM, 0, 0, vp_prec_names, VP_PREC_COUNT, -1, NULL,
	    false },
	{ "optimizer", K_ENUM, 0, 0, vp_opt_names, VP_OPT_COUNT, -1, NULL,
	    false },
};

/* A checked value, as read from one key. */
union val {
	const char *s;
	uint64_t u;
	double d;
	bool b;
	int e;
	const struct ynode *map;
};

/*
 * Walk a strict mapping: unknown and duplicate keys are errors; each known
 * key is type-checked and handed to set().  Returns the number of errors.
 */
struct reading {
	struct vp_model *m;
	/* Nested maps, read after the top level with their own tables. */
	const struct ynode *moe, *training;
	int bad_arch;		/* an architecture named but not supported */
};
typedef void (*setter)(struct reading *r, const char *key, union val v);

static size_t
read_map(const struct ynode *map, const char *file, const char *what,
    const struct key *keys, size_t nkeys, struct reading *rd, setter set,
    struct vp_diags *d)
{
	const char *names[32];
	int seen[32], hinted[32];
	size_t i, k, before = vp_diags_count(d, VP_ERROR);

	assert(nkeys <= VP_NELEM(names));
	for (k = 0; k < nkeys; k++) {
		names[k] = keys[k].name;
		seen[k] = hinted[k] = 0;
	}
	for (i = 0; i + 1 < map->nkids; i += 2) {
		const struct ynode *kn = map->kids[i], *vn = map->kids[i + 1];
		const struct key *ky = NULL;
		union val v;
		int rc = 0;

		if (kn->kind != YN_SCALAR) {
			vp_diag_add(d, file, kn->pos, VP_ERROR,
			    "key must be a plain name, not %s",
			    ynode_kind_name(kn));
			continue;
		}
		for (k = 0; k < nkeys; k++)
			if (strcmp(kn->str, keys[k].name) == 0) {
				ky = &keys[k];
				break;
			}
		if (ky == NULL) {
			const char *near = vp_closest(kn->str, names, nkeys);

			if (near) {
				vp_diag_add(d, file, kn->pos, VP_ERROR,
				    "unknown key '%.64s' in %s; did you mean "
				    "'%s'?", kn->str, what, near);
				for (k = 0; k < nkeys; k++)
					if (names[k] == near)
						hinted[k] = 1;
			}
			else
				vp_diag_add(d, file, kn->pos, VP_ERROR,
				    "unknown key '%.64s' in %s", kn->str, what);
			continue;
		}
		if (seen[k]++) {
			vp_diag_add(d, file, kn->pos, VP_ERROR,
			    "duplicate key '%s' in %s", ky->name, what);
			continue;
		}
		if (ky->field >= 0)
			rd->m->where[ky->field] = vn->pos;
		switch (ky->type) {
		case K_STR:
			rc = ynode_string(vn, file, ky->name, &v.s, d);
			break;
		case K_U64:
			rc = ynode_u64(vn, file, ky->name, ky->min, ky->max,
			    &v.u, d);
			break;
		case K_DBL:
			rc = ynode_double(vn, file, ky->name, 0.0, 0.99, &v.d,
			    d);
			break;
		case K_BOOL:
			rc = ynode_bool(vn, file, ky->name, &v.b, d);
			break;
		case K_ENUM:
			rc = ynode_enum(vn, file, ky->name, ky->names,
			    ky->nnames, &v.e, d);
			break;
		case K_MAP:
			rc = ynode_want(vn, YN_MAP, file, ky->name, d);
			v.map = vn;
			break;
		}
		if (rc == 0)
			set(rd, ky->name, v);
	}
	for (k = 0; k < nkeys; k++)
		if (keys[k].required && !seen[k] && !hinted[k])
			vp_diag_add(d, file, map->pos, VP_ERROR,
			    "missing required key '%s' in %s (%s)",
			    keys[k].name, what, keys[k].hint);
	return vp_diags_count(d, VP_ERROR) - before;
}

static void
set_moe(struct reading *r, const char *k, union val v)
{
	struct vp_model *m = r->m;

	if (!strcmp(k, "experts")) m->moe.experts = (uint32_t)v.u;
	else if (!strcmp(k, "top_k")) m->moe.top_k = (uint32_t)v.u;
	else if (!strcmp(k, "ffn")) m->moe.ffn = v.u;
	else if (!strcmp(k, "shared_experts")) m->moe.shared_experts = (uint32_t)v.u;
	else if (!strcmp(k, "shared_ffn")) m->moe.shared_ffn = v.u;
	else if (!strcmp(k, "shared_gate")) m->moe.shared_gate = v.b;
	else if (!strcmp(k, "first_dense")) m->moe.first_dense = (uint32_t)v.u;
}

static void
set_train(struct reading *r, const char *k, union val v)
{
	struct vp_model *m = r->m;

	if (!strcmp(k, "micro_batch")) m->train.micro_batch = v.u;
	else if (!strcmp(k, "seq")) m->train.seq = v.u;
	else if (!strcmp(k, "precision")) m->train.precision = v.e;
	else if (!strcmp(k, "optimizer")) m->train.optimizer = v.e;
}

static void
set_top(struct reading *r, const char *k, union val v)
{
	struct vp_model *m = r->m;

	if (!strcmp(k, "name")) { free(m->name); m->name = xstrdup(v.s); }
	else if (!strcmp(k, "architecture")) {
		if (v.e >= VP_ARCH_COUNT)
			r->bad_arch = v.e;
		else
			m->arch = (enum vp_arch)v.e;
	}
	else if (!strcmp(k, "layers")) m->layers = v.u;
	else if (!strcmp(k, "hidden")) m->hidden = v.u;
	else if (!strcmp(k, "heads")) m->heads = v.u;
	else if (!strcmp(k, "kv_heads")) m->kv_heads = v.u;
	else if (!strcmp(k, "head_dim")) m->head_dim = v.u;
	else if (!strcmp(k, "ffn")) m->ffn = v.u;
	else if (!strcmp(k, "activation")) m->act = (enum vp_act)v.e;
	else if (!strcmp(k, "norm")) m->norm = (enum vp_norm)v.e;
	else if (!strcmp(k, "bias")) m->bias = v.b;
	else if (!strcmp(k, "qkv_bias")) m->qkv_bias = v.b;
	else if (!strcmp(k, "post_norms")) m->post_norms = v.b;
	else if (!strcmp(k, "attn_softcap")) m->attn_softcap = v.b;
	else if (!strcmp(k, "logit_softcap")) m->logit_softcap = v.b;
	else if (!strcmp(k, "vocab")) m->vocab = v.u;
	else if (!strcmp(k, "tie_embeddings")) m->tie_embeddings = v.b;
	else if (!strcmp(k, "position")) m->pos = (enum vp_pos)v.e;
	else if (!strcmp(k, "max_seq")) m->max_seq = v.u;
	else if (!strcmp(k, "type_vocab")) m->type_vocab = v.u;
	else if (!strcmp(k, "dropout")) m->dropout = v.d;
	else if (!strcmp(k, "implementation")) m->impl = (enum vp_impl)v.e;
	else if (!strcmp(k, "family")) m->family = v.e;
	else if (!strcmp(k, "moe")) r->moe = v.map;
	else if (!strcmp(k, "training")) r->training = v.map;
	else if (!strcmp(k, "decoder_layers")) m->dec_layers = v.u;
	else if (!strcmp(k, "relative_buckets")) m->rel_buckets = v.u;
	else if (!strcmp(k, "decoder_output_scale")) m->scale_dec_out = v.b;
}

/*
 * A `family` key stands for the keys it implies when they are not given:
 * the architecture of its row, and `implementation: torch-nn` for
 * torch-nn.  Keys that are given win (validation reports a mismatch).
 */
static void
family_defaults(const struct ynode *root, struct vp_model *m)
{
	int arch;

	if (m->family < 0)
		return;
	arch = vp_family_info[m->family].arch;
	if (arch >= 0 && ynode_get(root, "architecture") == NULL)
		m->arch = (enum vp_arch)arch;
	if (m->family == VP_FAMILY_TORCH_NN &&
	    ynode_get(root, "implementation") == NULL)
		m->impl = VP_IMPL_TORCH_NN;
}

static int
read_own(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	struct reading rd = { m, NULL, NULL, 0 };
	size_t nerr;

	nerr = read_map(root, file, "the model", top_keys,
	    VP_NELEM(top_keys), &rd, set_top, d);
	if (rd.bad_arch)
		vp_diag_add(d, file, ynode_get(root, "architecture")->pos,
		    VP_ERROR, "architecture '%s' is not supported yet; use "
		    "decoder, encoder or encoder-decoder", arch_all[rd.bad_arch]);
	if (rd.moe != NULL) {
		m->has_moe = true;
		nerr += read_map(rd.moe, file, "'moe'", moe_keys,
		    VP_NELEM(moe_keys), &rd, set_moe, d);
	}
	if (rd.training != NULL)
		nerr += read_map(rd.training, file, "'training'", train_keys,
		    VP_NELEM(train_keys), &rd, set_train, d);
	family_defaults(root, m);
	return nerr || rd.bad_arch ? -1 : 0;
}

/* ---- Hugging Face config.json ---------------------------------------- */

/*
 * Per model_type: what the config does not say but the code does.  The
 * family is the lowering's traits row (model.c's vp_family_info).  A type
 * whose code no row describes has no row, and is refused (hf_family_of):
 * reading Qwen3 as a Llama, for one, missed its per-head q/k RMSNorms,
 * about 15% of the activations at Qwen3-8B's sizes.
 */
struct hf_family {
	const char *model_type;
	const char *cls;	/* its transformers classes' prefix */
	enum vp_family family;
	enum vp_norm norm;
	enum vp_pos pos;
	enum vp_act act;	/* the activation its MLP applies */
	bool bias, qkv_bias, post_norms, tie_default;
	bool ffn_4h;		/* null intermediate size: 4 hidden */
	bool shared_gate;	/* a sigmoid gate on the shared expert */
};

#define D VP_FAMILY_LLAMA, VP_NORM_RMSNORM, VP_POS_ROPE
static const struct hf_family hf_families[] = {
	{ "llama", "Llama", D, VP_ACT_SWIGLU, false, false, false, false,
	    false, false },
	{ "mistral", "Mistral", D, VP_ACT_SWIGLU, false, false, false, false,
	    false, false },
	{ "mixtral", "Mixtral", D, VP_ACT_SWIGLU, false, false, false, false,
	    false, false },
	{ "qwen2", "Qwen2", D, VP_ACT_SWIGLU, false, true, false, false,
	    false, false },
	{ "qwen2_moe", "Qwen2Moe", D, VP_ACT_SWIGLU, false, true, false, false,
	    false, true },
	{ "deepseek", "Deepseek", D, VP_ACT_SWIGLU, false, false, false, false,
	    false, false },
	{ "qwen3", "Qwen3", VP_FAMILY_QWEN3, VP_NORM_RMSNORM, VP_POS_ROPE,
	    VP_ACT_SWIGLU, false, false, false, false, false, false },
	{ "qwen3_moe", "Qwen3Moe", VP_FAMILY_QWEN3, VP_NORM_RMSNORM,
	    VP_POS_ROPE, VP_ACT_SWIGLU, false, false, false, false, false,
	    false },
	{ "phi3", "Phi3", D, VP_ACT_SWIGLU, false, false, false, false,
	    false, false },
	{ "gemma", "Gemma", D, VP_ACT_GEGLU, false, false, false, true,
	    false, false },
	{ "gemma2", "Gemma2", D, VP_ACT_GEGLU, false, false, true, true,
	    false, false },
	{ "gpt2", "GPT2", VP_FAMILY_GPT2, VP_NORM_LAYERNORM, VP_POS_LEARNED,
	    VP_ACT_GELU_NEW, true, true, false, true, true, false },
	{ "bert", "Bert", VP_FAMILY_BERT, VP_NORM_LAYERNORM, VP_POS_LEARNED,
	    VP_ACT_GELU, true, true, false, true, false, false },
	{ "roberta", "Roberta", VP_FAMILY_BERT, VP_NORM_LAYERNORM,
	    VP_POS_LEARNED, VP_ACT_GELU, true, true, false, true, false, false },
	{ "t5", "T5", VP_FAMILY_T5, VP_NORM_RMSNORM, VP_POS_NONE, VP_ACT_RELU,
	    false, false, false, true, false, false },
	{ "mt5", "MT5", VP_FAMILY_T5, VP_NORM_RMSNORM, VP_POS_NONE,
	    VP_ACT_RELU, false, false, false, true, false, false },
};
#undef D

/*
 * What follows a family's prefix in the names of its transformers classes
 * (the "architectures" of a config): "LlamaForCausalLM", "BertModel".
 * The whole name must match, so "Llama4ForConditionalGeneration" or
 * "DeepseekV3ForCausalLM" names no family of the table.
 */
static const char *const hf_class_suffixes[] = { "Model", "ForCausalLM",
    "LMHeadModel", "DoubleHeadsModel", "ForMaskedLM", "ForPreTraining",
    "ForNextSentencePrediction", "ForSequenceClassification",
    "ForTokenClassification", "ForQuestionAnswering", "ForMultipleChoice",
    "ForConditionalGeneration" };

/*
 * The class suffixes whose head is not a language-modelling one: the
 * lowering has the family's LM (or BERT's MLM) head only, so a config
 * naming one of these is planned with that head, and told so.
 */
static const struct { const char *suffix, *what; } hf_other_heads[] = {
	{ "Model", "no head" },
	{ "DoubleHeadsModel", "a multiple-choice head beside its LM head" },
	{ "ForNextSentencePrediction", "a next-sentence head" },
	{ "ForSequenceClassification", "a sequence-classification head" },
	{ "ForTokenClassification", "a token-classification head" },
	{ "ForQuestionAnswering", "a span (question-answering) head" },
	{ "ForMultipleChoice", "a multiple-choice head" },
};

/* A warning when the config's first architectures entry is a class of
 * the family with another head than the one the lowering has. */
static void
hf_head_note(const struct ynode *node, const char *file,
    const struct hf_family *fam, struct vp_diags *d)
{
	const struct ynode *ar = ynode_get(node, "architectures");
	const struct ynode *a0;
	size_t n = strlen(fam->cls), i;

	if (ar == NULL || ar->kind != YN_SEQ || ar->nkids == 0)
		return;
	a0 = ar->kids[0];
	if (a0->kind != YN_SCALAR || strncmp(a0->str, fam->cls, n) != 0)
		return;
	for (i = 0; i < VP_NELEM(hf_other_heads); i++)
		if (strcmp(a0->str + n, hf_other_heads[i].suffix) == 0)
			vp_diag_add(d, file, a0->pos, VP_WARNING, "'%s' has "
			    "%s, which is not modelled: planned with the "
			    "%s family's language-modelling head instead "
			    "(vocabulary-wide logits and their loss, more "
			    "than a classification head holds)", a0->str,
			    hf_other_heads[i].what, fam->model_type);
}

/* A config key read as an integer / number / bool, when present. */
static int
hf_u64(const struct ynode *root, const char *file, const char *key,
    uint64_t min, uint64_t max, uint64_t *out, int field, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n = ynode_get(root, key);

	if (n == NULL || ynode_is_null(n))
		return 0;
	if (field >= 0)
		m->where[field] = n->pos;
	return ynode_u64(n, file, key, min, max, out, d) == 0 ? 1 : -1;
}

static int
hf_bool(const struct ynode *root, const char *file, const char *key,
    bool *out, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(root, key);

	if (n == NULL || ynode_is_null(n))
		return 0;
	return ynode_bool(n, file, key, out, d) == 0 ? 1 : -1;
}

/* "llama, mistral, ..., roberta": the model_types of hf_families. */
static void
hf_supported(struct vp_buf *b)
{
	size_t i;

	for (i = 0; i < VP_NELEM(hf_families); i++)
		vp_buf_printf(b, "%s%s", i ? ", " : "",
		    hf_families[i].model_type);
}

/* The error for a config whose family is not one of hf_families: what
 * the supported ones are and what to do instead (`fix`, then the own
 * schema). */
static void
hf_unsupported(const char *file, struct vp_srcpos pos, struct vp_diags *d,
    const char *what, const char *fix)
{
	struct vp_buf b;

	vp_buf_init(&b);
	hf_supported(&b);
	vp_diag_add(d, file, pos, VP_ERROR, "%s (supported: %s); %sdescribe "
	    "the model in vramplan's own YAML schema instead (see "
	    "vramplan-model(5))", what, b.s, fix);
	vp_buf_free(&b);
}

/* The row whose classes a transformers class name belongs to, or NULL. */
static const struct hf_family *
hf_family_of_class(const char *name)
{
	size_t i, j, n;

	for (i = 0; i < VP_NELEM(hf_families); i++) {
		n = strlen(hf_families[i].cls);
		if (strncmp(name, hf_families[i].cls, n) != 0)
			continue;
		for (j = 0; j < VP_NELEM(hf_class_suffixes); j++)
			if (strcmp(name + n, hf_class_suffixes[j]) == 0)
				return &hf_families[i];
	}
	return NULL;
}

/*
 * The row for a config (the top level, or its text_config): by model_type,
 * else by the first entry of architectures, as transformers' Auto classes
 * do.  NULL, after an error, when the family is not one of hf_families or
 * neither key says; *type is the model_type the row stands for.  `where`
 * names the mapping in messages ("the config", "'text_config'").
 */
static const struct hf_family *
hf_family_of(const struct ynode *node, const char *file, const char *where,
    const char **type, struct vp_diags *d)
{
	const struct ynode *mt = ynode_get(node, "model_type");
	const struct ynode *ar = ynode_get(node, "architectures");
	const struct ynode *a0;
	const struct hf_family *fam;
	char what[192];
	size_t i;

	*type = "";
	if (mt != NULL && !ynode_is_null(mt)) {
		if (ynode_string(mt, file, "model_type", type, d) != 0)
			return NULL;
		for (i = 0; i < VP_NELEM(hf_families); i++)
			if (strcmp(*type, hf_families[i].model_type) == 0)
				return &hf_families[i];
		snprintf(what, sizeof what, "model_type '%.64s' is not a "
		    "supported family", *type);
		hf_unsupported(file, mt->pos, d, what, "");
		return NULL;
	}
	if (ar != NULL && !ynode_is_null(ar)) {
		if (ar->kind != YN_SEQ || ar->nkids == 0) {
			vp_diag_add(d, file, ar->pos, VP_ERROR,
			    "'architectures' must be a list of class names, "
			    "not %s", ar->kind == YN_SEQ ? "an empty list" :
			    ynode_kind_name(ar));
			return NULL;
		}
		a0 = ar->kids[0];
		if (ynode_string(a0, file, "architectures", type, d) != 0)
			return NULL;
		if ((fam = hf_family_of_class(*type)) != NULL) {
			*type = fam->model_type;
			return fam;
		}
		snprintf(what, sizeof what, "architecture '%.64s' is not of a "
		    "supported family", *type);
		hf_unsupported(file, a0->pos, d, what, "");
		return NULL;
	}
	snprintf(what, sizeof what, "%s has neither 'model_type' nor "
	    "'architectures' to tell its family", where);
	hf_unsupported(file, node->pos, d, what, "add the model_type its "
	    "code has, or ");
	return NULL;
}

/* The family's defaults, which the config's keys then override. */
static void
hf_apply_family(const struct hf_family *fam, struct vp_model *m)
{
	m->family = (int)fam->family;
	m->arch = (enum vp_arch)vp_family_info[fam->family].arch;
	m->norm = fam->norm;
	m->pos = fam->pos;
	m->act = fam->act;
	m->bias = fam->bias;
	m->qkv_bias = fam->qkv_bias;
	m->post_norms = fam->post_norms;
	m->tie_embeddings = fam->tie_default;
	/* Gemma2Config's defaults: attn_logit_softcapping 50.0,
	 * final_logit_softcapping 30.0 (hf_softcap reads the keys). */
	m->attn_softcap = m->logit_softcap = fam->post_norms;
}

/*
 * Gemma-2's tanh soft-capping (modeling_gemma2.py): of the attention
 * scores in eager_attention_forward (sdpa has none) and of the logits in
 * Gemma2ForCausalLM.forward.  The cap's value changes no memory; null
 * turns it off.
 */
static void
hf_softcap(const struct ynode *root, struct vp_model *m)
{
	const struct ynode *n;

	if ((n = ynode_get(root, "attn_logit_softcapping")) != NULL)
		m->attn_softcap = !ynode_is_null(n);
	if ((n = ynode_get(root, "final_logit_softcapping")) != NULL)
		m->logit_softcap = !ynode_is_null(n);
}

/* Sizes, biases and ties.  GPT-2 spells its keys n_*; everyone else uses
 * the long names. */
static void
hf_sizes(const struct ynode *root, const char *file,
    const struct hf_family *fam, struct vp_model *m, struct vp_diags *d)
{
	bool b;

	hf_u64(root, file, "hidden_size", 1, MAX_HIDDEN, &m->hidden, VP_F_HIDDEN, m, d);
	hf_u64(root, file, "n_embd", 1, MAX_HIDDEN, &m->hidden, VP_F_HIDDEN, m, d);
	hf_u64(root, file, "num_hidden_layers", 1, MAX_LAYERS, &m->layers, VP_F_LAYERS, m, d);
	hf_u64(root, file, "n_layer", 1, MAX_LAYERS, &m->layers, VP_F_LAYERS, m, d);
	hf_u64(root, file, "num_attention_heads", 1, MAX_HEADS, &m->heads, VP_F_HEADS, m, d);
	hf_u64(root, file, "n_head", 1, MAX_HEADS, &m->heads, VP_F_HEADS, m, d);
	hf_u64(root, file, "num_key_value_heads", 1, MAX_HEADS, &m->kv_heads, VP_F_KV_HEADS, m, d);
	hf_u64(root, file, "head_dim", 1, MAX_HEADS, &m->head_dim, VP_F_HEAD_DIM, m, d);
	hf_u64(root, file, "intermediate_size", 1, MAX_FFN, &m->ffn, VP_F_FFN, m, d);
	hf_u64(root, file, "n_inner", 1, MAX_FFN, &m->ffn, VP_F_FFN, m, d);
	hf_u64(root, file, "vocab_size", 1, MAX_VOCAB, &m->vocab, VP_F_VOCAB, m, d);
	hf_u64(root, file, "max_position_embeddings", 1, MAX_SEQ, &m->max_seq, VP_F_MAX_SEQ, m, d);
	hf_u64(root, file, "n_positions", 1, MAX_SEQ, &m->max_seq, VP_F_MAX_SEQ, m, d);
	hf_u64(root, file, "type_vocab_size", 0, MAX_HEADS, &m->type_vocab, -1, m, d);
	hf_bool(root, file, "tie_word_embeddings", &m->tie_embeddings, d);
	/* Llama-style configs: attention_bias puts biases on q, k, v and o;
	 * the MLP's follow mlp_bias. */
	if (hf_bool(root, file, "attention_bias", &b, d) > 0) {
		m->qkv_bias = b;
		m->o_bias = b;
	}
	if (hf_bool(root, file, "mlp_bias", &b, d) > 0)
		m->bias = b;
	if (m->ffn == 0 && m->hidden != 0 && fam->ffn_4h)
		m->ffn = 4 * m->hidden;		/* n_inner: null */
}

/* Activation: silu in a gated MLP is SwiGLU; gelu variants GeGLU. */
static void
hf_activation(const struct ynode *root, const char *file,
    const struct hf_family *fam, struct vp_model *m, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(root, "hidden_act");
	const char *s;

	if (n == NULL)
		n = ynode_get(root, "hidden_activation");
	if (n == NULL)
		n = ynode_get(root, "activation_function");
	if (n == NULL || n->kind != YN_SCALAR || ynode_is_null(n))
		return;
	s = n->str;
	if (!strcmp(s, "relu"))
		m->act = VP_ACT_RELU;
	else if (vp_act_gated(fam->act))
		m->act = strncmp(s, "gelu", 4) == 0 ? VP_ACT_GEGLU :
		    VP_ACT_SWIGLU;
	else if (!strcmp(s, "gelu_new"))
		m->act = VP_ACT_GELU_NEW;
	else if (!strcmp(s, "gelu_pytorch_tanh"))
		m->act = VP_ACT_GELU_TANH;
	else if (!strcmp(s, "gelu"))
		m->act = VP_ACT_GELU;
	else
		vp_diag_add(d, file, n->pos, VP_WARNING,
		    "activation '%s' is not modelled; reading it as '%s'", s,
		    vp_act_names[m->act]);
}

/* Dropout: the residual/hidden probability the model trains with, the
 * first non-zero of these keys. */
static void
hf_dropout(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	static const char *const dk[] = { "hidden_dropout_prob",
	    "resid_pdrop", "attention_dropout", "dropout" };
	const struct ynode *n;
	size_t i;

	for (i = 0; i < VP_NELEM(dk); i++) {
		n = ynode_get(root, dk[i]);
		if (n != NULL && !ynode_is_null(n)) {
			if (ynode_double(n, file, dk[i], 0, 0.99, &m->dropout,
			    d) != 0)
				break;
			if (m->dropout > 0)
				break;
		}
	}
}

/* Mixture of experts (Mixtral, Qwen-MoE and DeepSeek spellings). */
static void
hf_moe(const struct ynode *root, const char *file,
    const struct hf_family *fam, struct vp_model *m, struct vp_diags *d)
{
	uint64_t v = 0, k = 0, sh = 0;

	if (hf_u64(root, file, "num_local_experts", 1, MAX_HEADS, &v, VP_F_MOE_EXPERTS, m, d) <= 0 &&
	    hf_u64(root, file, "num_experts", 1, MAX_HEADS, &v, VP_F_MOE_EXPERTS, m, d) <= 0)
		hf_u64(root, file, "n_routed_experts", 1, MAX_HEADS, &v, VP_F_MOE_EXPERTS, m, d);
	if (v == 0)
		return;
	m->has_moe = true;
	m->moe.experts = (uint32_t)v;
	hf_u64(root, file, "num_experts_per_tok", 1, MAX_HEADS, &k, VP_F_MOE_TOP_K, m, d);
	m->moe.top_k = (uint32_t)(k ? k : 1);
	hf_u64(root, file, "moe_intermediate_size", 1, MAX_FFN, &m->moe.ffn, VP_F_MOE_FFN, m, d);
	/* DeepSeek: n_shared_experts of moe_intermediate_size, and the
	 * first first_k_dense_replace blocks stay dense. */
	if (hf_u64(root, file, "n_shared_experts", 1, MAX_HEADS, &sh, -1, m, d) > 0) {
		m->moe.shared_experts = (uint32_t)sh;
		m->moe.shared_ffn = m->moe.ffn;
	}
	sh = 0;
	if (hf_u64(root, file, "first_k_dense_replace", 0, MAX_LAYERS, &sh, -1, m, d) > 0)
		m->moe.first_dense = (uint32_t)sh;
	sh = 0;
	/* 0 means none (Qwen3-Coder-480B-A35B's config says so). */
	if (hf_u64(root, file, "shared_expert_intermediate_size", 0, MAX_FFN, &sh, -1, m, d) > 0 &&
	    sh > 0) {
		m->moe.shared_experts = 1;
		m->moe.shared_ffn = sh;
		m->moe.shared_gate = fam->shared_gate;
	}
}

/*
 * Qwen3 and Qwen3-MoE (transformers' Qwen3Config, Qwen3MoeConfig, v5.24):
 * what their classes do that the generic keys do not say.  Qwen3Config
 * defaults head_dim to 128, not hidden / heads.  Qwen3MoeConfig's expert
 * keys default to 128 experts of 768, 8 per token; a block (from 0) has
 * experts unless it is in mlp_only_layers or off decoder_sparse_step
 * (Qwen3MoeDecoderLayer), the others a dense MLP of intermediate_size;
 * Qwen3MoeSparseMoeBlock has no shared expert whatever the config says.
 * Sliding-window attention (use_sliding_window) is not modelled.
 */
static void
hf_qwen3(const struct ynode *root, const char *file, const char *type,
    struct vp_model *m, struct vp_diags *d)
{
	const struct ynode *n;
	uint64_t v;
	bool b;
	size_t i;

	if (m->family != VP_FAMILY_QWEN3)
		return;
	if (ynode_get(root, "head_dim") == NULL && strcmp(type, "qwen3") == 0)
		m->head_dim = 128;
	if (hf_bool(root, file, "use_sliding_window", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "use_sliding_window")->pos,
		    VP_ERROR, "use_sliding_window: true is not modelled "
		    "(sliding-window attention in the layers past "
		    "max_window_layers)");
	if (strcmp(type, "qwen3_moe") != 0)
		return;
	/* to_dict() writes num_experts as num_local_experts (the
	 * config's attribute_map). */
	if (ynode_get(root, "num_experts") == NULL &&
	    ynode_get(root, "num_local_experts") == NULL) {
		m->has_moe = true;
		m->moe.experts = 128;
	}
	if (!m->has_moe)
		return;
	if (ynode_get(root, "num_experts_per_tok") == NULL)
		m->moe.top_k = 8;
	if (ynode_get(root, "moe_intermediate_size") == NULL)
		m->moe.ffn = 768;
	if (m->moe.shared_experts) {
		vp_diag_add(d, file, ynode_get(root,
		    "shared_expert_intermediate_size")->pos, VP_WARNING,
		    "qwen3_moe has no shared expert "
		    "(Qwen3MoeSparseMoeBlock); "
		    "shared_expert_intermediate_size is ignored");
		m->moe.shared_experts = 0;
		m->moe.shared_ffn = 0;
		m->moe.shared_gate = false;
	}
	v = 0;
	if (hf_u64(root, file, "decoder_sparse_step", 1, MAX_LAYERS, &v, -1,
	    m, d) > 0)
		m->moe.sparse_step = (uint32_t)v;
	n = ynode_get(root, "mlp_only_layers");
	if (n == NULL || ynode_is_null(n))
		return;
	if (ynode_want(n, YN_SEQ, file, "mlp_only_layers", d) != 0)
		return;
	if (n->nkids > VP_MOE_MAX_MLP_ONLY) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "mlp_only_layers lists "
		    "%zu blocks; at most %d are supported", n->nkids,
		    VP_MOE_MAX_MLP_ONLY);
		return;
	}
	for (i = 0; i < n->nkids; i++)
		if (ynode_u64(n->kids[i], file, "mlp_only_layers", 0,
		    MAX_LAYERS, &v, d) == 0)
			m->moe.mlp_only[m->moe.n_mlp_only++] = (uint32_t)v;
}

/*
 * T5 and mT5 (configuration_t5.py, modeling_t5.py of transformers 5.24):
 * their own key names, and T5Config's defaults for the keys a config
 * leaves out.  feed_forward_proj "relu" is T5 v1.0's DenseReluDense,
 * "gated-gelu" v1.1's (Flan-T5, mT5) wi_0/wi_1 with gelu_new; any other
 * is refused.  T5Config.__post_init__ of 5.24 sets tie_word_embeddings
 * to True whatever the config says, so the lm_head is always the shared
 * embedding (T5ForConditionalGeneration._tied_weights_keys; measured:
 * num_parameters() of a gated-gelu config with tie_word_embeddings false
 * counts one vocab x d_model table), and keeps what the config said as
 * scale_decoder_outputs: the decoder output times d_model^-0.5 unless
 * tie_word_embeddings is false (a config written by 5.x's to_dict()
 * has scale_decoder_outputs itself, which from_dict keeps).
 */
static void
hf_t5(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	bool b;

	if (m->family != VP_FAMILY_T5)
		return;
	m->hidden = 512;
	m->layers = 6;
	m->heads = 8;
	m->head_dim = 64;
	m->ffn = 2048;
	m->vocab = 32128;
	m->rel_buckets = 32;
	m->dropout = 0.1;
	m->max_seq = 0;
	hf_u64(root, file, "d_model", 1, MAX_HIDDEN, &m->hidden, VP_F_HIDDEN, m, d);
	hf_u64(root, file, "num_layers", 1, MAX_LAYERS, &m->layers, VP_F_LAYERS, m, d);
	m->dec_layers = m->layers;
	hf_u64(root, file, "num_decoder_layers", 1, MAX_LAYERS, &m->dec_layers, -1, m, d);
	hf_u64(root, file, "num_heads", 1, MAX_HEADS, &m->heads, VP_F_HEADS, m, d);
	hf_u64(root, file, "d_kv", 1, MAX_HEADS, &m->head_dim, VP_F_HEAD_DIM, m, d);
	hf_u64(root, file, "d_ff", 1, MAX_FFN, &m->ffn, VP_F_FFN, m, d);
	hf_u64(root, file, "vocab_size", 1, MAX_VOCAB, &m->vocab, VP_F_VOCAB, m, d);
	hf_u64(root, file, "relative_attention_num_buckets", 1, MAX_HEADS,
	    &m->rel_buckets, -1, m, d);
	m->kv_heads = m->heads;
	if ((n = ynode_get(root, "dropout_rate")) != NULL && !ynode_is_null(n))
		ynode_double(n, file, "dropout_rate", 0, 0.99, &m->dropout, d);
	m->scale_dec_out = !(hf_bool(root, file, "tie_word_embeddings", &b,
	    d) > 0 && !b);
	/* A config written by T5Config.to_dict() of 5.x says it itself
	 * (and tie_word_embeddings: true). */
	if (hf_bool(root, file, "scale_decoder_outputs", &b, d) > 0)
		m->scale_dec_out = b;
	m->tie_embeddings = true;
	m->act = VP_ACT_RELU;
	if ((n = ynode_get(root, "feed_forward_proj")) != NULL &&
	    !ynode_is_null(n)) {
		if (n->kind != YN_SCALAR || (strcmp(n->str, "relu") != 0 &&
		    strcmp(n->str, "gated-gelu") != 0))
			vp_diag_add(d, file, n->pos, VP_ERROR,
			    "feed_forward_proj '%s' is not modelled; T5's "
			    "are 'relu' (v1.0) and 'gated-gelu' (v1.1, "
			    "Flan-T5, mT5)", n->kind == YN_SCALAR ? n->str :
			    ynode_kind_name(n));
		else if (strcmp(n->str, "gated-gelu") == 0)
			m->act = VP_ACT_GEGLU;
	}
}

/* The sizes every config must give; one message, for the first missing,
 * and only when nothing else went wrong.  `where` names the mapping. */
static void
hf_required(const struct ynode *root, const char *file, const char *where,
    struct vp_model *m, size_t before, struct vp_diags *d)
{
	static const struct { const char *key; const char *hint; } req[] = {
		{ "hidden_size", "the model width" },
		{ "num_hidden_layers", "the number of layers" },
		{ "num_attention_heads", "the number of attention heads" },
		{ "intermediate_size", "the MLP size" },
		{ "vocab_size", "the vocabulary size" },
	};
	uint64_t *vals[] = { &m->hidden, &m->layers, &m->heads, &m->ffn,
	    &m->vocab };
	size_t i;

	_Static_assert(VP_NELEM(req) == VP_NELEM(vals), "one value per key");
	for (i = 0; i < VP_NELEM(req); i++)
		if (*vals[i] == 0 && vp_diags_count(d, VP_ERROR) == before)
			vp_diag_add(d, file, root->pos, VP_ERROR,
			    "missing required key '%s' in %s (%s)",
			    req[i].key, where, req[i].hint);
}

/*
 * The towers of a multimodal config that vramplan does not model: the
 * first present, or NULL.  Their parameters, gradients, optimizer states
 * and activations are left out only when the user asks for the text
 * model alone (VP_READ_TEXT_ONLY).
 */
static const struct { const char *key, *a, *what; } hf_towers[] = {
	{ "vision_config", "a", "vision tower" },
	{ "audio_config", "an", "audio tower" },
};

static const struct ynode *
hf_tower(const struct ynode *root, size_t *which)
{
	const struct ynode *n;
	size_t i;

	for (i = 0; i < VP_NELEM(hf_towers); i++) {
		n = ynode_get(root, hf_towers[i].key);
		if (n != NULL && !ynode_is_null(n)) {
			*which = i;
			return n;
		}
	}
	return NULL;
}

/*
 * The mapping that holds the language model: text_config when the config
 * nests one (multimodal wrappers: LLaVA, Llama 4, Gemma 3), else the top
 * level.  NULL after an error.
 */
static const struct ynode *
hf_text_node(const struct ynode *root, const char *file, const char **where,
    struct vp_diags *d)
{
	const struct ynode *tc = ynode_get(root, "text_config");

	*where = "the config";
	if (tc == NULL || ynode_is_null(tc))
		return root;
	if (tc->kind != YN_MAP) {
		vp_diag_add(d, file, tc->pos, VP_ERROR, "'text_config' must be "
		    "a mapping of keys, not %s", ynode_kind_name(tc));
		return NULL;
	}
	*where = "'text_config'";
	return tc;
}

static int
read_hf(const struct ynode *root, const char *file, unsigned flags,
    struct vp_model *m, struct vp_diags *d)
{
	const struct hf_family *fam;
	const struct ynode *n, *text, *tower;
	const char *type, *where;
	size_t before = vp_diags_count(d, VP_ERROR), which = 0;

	if ((text = hf_text_node(root, file, &where, d)) == NULL)
		return -1;
	if ((fam = hf_family_of(text, file, where, &type, d)) == NULL)
		return -1;
	if ((tower = hf_tower(root, &which)) != NULL) {
		if (!(flags & VP_READ_TEXT_ONLY)) {
			vp_diag_add(d, file, tower->pos, VP_ERROR,
			    "the model has %s %s ('%s'), which vramplan does "
			    "not model yet; pass --text-only to plan its "
			    "language model (model_type '%s' in %s) alone, "
			    "without the %s and its projector",
			    hf_towers[which].a, hf_towers[which].what,
			    hf_towers[which].key,
			    type, where, hf_towers[which].what);
			return -1;
		}
		vp_diag_add(d, file, tower->pos, VP_NOTE,
		    "--text-only: planning the language model alone; the "
		    "%s ('%s') and its projector are left out",
		    hf_towers[which].what, hf_towers[which].key);
	}
	hf_apply_family(fam, m);
	hf_head_note(text, file, fam, d);
	m->name = xstrdup(type);
	if (((n = ynode_get(text, "_name_or_path")) != NULL ||
	    (n = ynode_get(root, "_name_or_path")) != NULL) &&
	    n->kind == YN_SCALAR && n->str[0])
		{ free(m->name); m->name = xstrdup(n->str); }
	hf_sizes(text, file, fam, m, d);
	hf_activation(text, file, fam, m, d);
	hf_dropout(text, file, m, d);
	hf_moe(text, file, fam, m, d);
	hf_qwen3(text, file, type, m, d);
	hf_softcap(text, m);
	hf_t5(text, file, m, d);
	hf_required(text, file, where, m, before, d);
	return vp_diags_count(d, VP_ERROR) == before ? 0 : -1;
}

/* A Hugging Face config: one of the keys every config has (T5's d_model,
 * a multimodal wrapper's text_config included, so that they get the
 * family error rather than the own schema's unknown keys). */
static bool
looks_like_hf(const struct ynode *root)
{
	static const char *const keys[] = { "model_type", "architectures",
	    "hidden_size", "n_embd", "d_model", "text_config" };
	size_t i;

	for (i = 0; i < VP_NELEM(keys); i++)
		if (ynode_get(root, keys[i]) != NULL)
			return true;
	return false;
}

int
vp_model_from_doc_ex(const struct ydoc *doc, unsigned flags,
    struct vp_model *m, struct vp_diags *d)
{
	const struct ynode *root = ydoc_root(doc);
	const char *file = ydoc_name(doc);
	int rc;

	vp_model_init(m);
	m->file = xstrdup(file);
	if (root == NULL || ynode_is_null(root)) {
		vp_diag_add(d, file, (struct vp_srcpos){ 1, 1 }, VP_ERROR,
		    "empty model file; expected a mapping with 'name', "
		    "'layers', 'hidden', 'heads', 'ffn' and 'vocab'");
		return -1;
	}
	if (root->kind != YN_MAP) {
		vp_diag_add(d, file, root->pos, VP_ERROR,
		    "a model file must be a mapping of keys, not %s",
		    ynode_kind_name(root));
		return -1;
	}
	rc = looks_like_hf(root) ? read_hf(root, file, flags, m, d) :
	    read_own(root, file, m, d);
	if (rc != 0)
		return -1;
	return vp_model_validate(m, d);
}

int
vp_model_from_doc(const struct ydoc *doc, struct vp_model *m,
    struct vp_diags *d)
{
	return vp_model_from_doc_ex(doc, 0, m, d);
}

int
vp_model_load_ex(const char *path, unsigned flags, struct vp_model *m,
    struct vp_diags *d)
{
	struct ydoc *doc = ydoc_load(path, d);
	int rc;

	if (doc == NULL) {
		vp_model_init(m);
		return -1;
	}
	rc = vp_model_from_doc_ex(doc, flags, m, d);
	ydoc_free(doc);
	return rc;
}

int
vp_model_load(const char *path, struct vp_model *m, struct vp_diags *d)
{
	return vp_model_load_ex(path, 0, m, d);
}
