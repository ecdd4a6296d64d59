/*
 * model_read.c — model descriptions from YAML trees (see model_read.h).
 *
 * Two dialects: vramplan's own schema (strict: an unknown key is an error
 * with a "did you mean") and Hugging Face config.json (lenient: configs
 * carry dozens of keys that do not affect memory, so unknown keys are
 * ignored, but the keys we read are type-checked).
 */
#include "model_read.h"
#include <ctype.h>

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lgraph_read.h"
#include "plan.h"

/* Ranges: generous, but past them the file is wrong, not the model big. */
/* Blocks: the deepest trained transformers are about a thousand deep
 * (DeepNet's 1000 layers); an exact replay's time grows with the count,
 * and 4096 answers in under a second. */
#define MAX_LAYERS 4096
#define MAX_HIDDEN (1u << 20)
#define MAX_HEADS 65536
#define MAX_FFN (1u << 24)
#define MAX_VOCAB (1u << 26)
#define MAX_SEQ (1u << 27)
#define MAX_BATCH (1u << 20)
#define MAX_IMAGE (1u << 16)	/* pixels on a side */

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
	{ "o_bias", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "post_norms", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "attn_softcap", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "logit_softcap", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "attn_temperature", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "qk_l2norm", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
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
	{ "sliding_window", K_U64, 1, MAX_SEQ, NULL, 0, -1, NULL, false },
	{ "global_every", K_U64, 1, MAX_LAYERS, NULL, 0, -1, NULL, false },
	{ "mla", K_MAP, 0, 0, NULL, 0, -1, NULL, false },
	{ "rotary_dim", K_U64, 2, MAX_HEADS, NULL, 0, VP_F_ROTARY_DIM, NULL,
	    false },
	{ "decoder_layers", K_U64, 1, MAX_LAYERS, NULL, 0, -1, NULL, false },
	{ "relative_buckets", K_U64, 1, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "decoder_output_scale", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "mel_bins", K_U64, 1, MAX_HIDDEN, NULL, 0, -1, NULL, false },
	{ "decoder_max_seq", K_U64, 1, MAX_SEQ, NULL, 0, -1, NULL, false },
	{ "image_size", K_U64, 1, MAX_IMAGE, NULL, 0, -1, NULL, false },
	{ "patch_size", K_U64, 1, MAX_IMAGE, NULL, 0, -1, NULL, false },
	{ "channels", K_U64, 1, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "vision", K_MAP, 0, 0, NULL, 0, -1, NULL, false },
	{ "projection_dim", K_U64, 1, MAX_HIDDEN, NULL, 0, -1, NULL, false },
	{ "ssm", K_MAP, 0, 0, NULL, 0, -1, NULL, false },
	{ "zamba2", K_MAP, 0, 0, NULL, 0, -1, NULL, false },
};

/* A CLIP model's vision tower (struct vp_vision; family clip). */
static const struct key vision_keys[] = {
	{ "layers", K_U64, 1, MAX_LAYERS, NULL, 0, -1,
	    "the vision tower's blocks, e.g. 24", true },
	{ "hidden", K_U64, 1, MAX_HIDDEN, NULL, 0, -1,
	    "the vision tower's width, e.g. 1024", true },
	{ "heads", K_U64, 1, MAX_HEADS, NULL, 0, -1,
	    "the vision tower's attention heads, e.g. 16", true },
	{ "ffn", K_U64, 1, MAX_FFN, NULL, 0, -1,
	    "the vision tower's MLP size, e.g. 4096", true },
	{ "activation", K_ENUM, 0, 0, vp_act_names, VP_ACT_COUNT, -1, NULL,
	    false },
	{ "image_size", K_U64, 1, MAX_IMAGE, NULL, 0, -1,
	    "the input resolution, e.g. 224", true },
	{ "patch_size", K_U64, 1, MAX_IMAGE, NULL, 0, -1,
	    "the patch side, e.g. 14", true },
	{ "channels", K_U64, 1, MAX_HEADS, NULL, 0, -1, NULL, false },
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
	{ "sparse_step", K_U64, 0, MAX_LAYERS, NULL, 0, -1, NULL, false },
	{ "groups", K_U64, 0, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "topk_groups", K_U64, 0, MAX_HEADS, NULL, 0, -1, NULL, false },
};

/* DeepSeek's multi-head latent attention (struct vp_mla), with the names
 * of its config.json keys. */
static const struct key mla_keys[] = {
	{ "q_lora_rank", K_U64, 0, MAX_HIDDEN, NULL, 0, -1, NULL, false },
	{ "kv_lora_rank", K_U64, 1, MAX_HIDDEN, NULL, 0, -1,
	    "the latent width of k and v, e.g. 512", true },
	{ "qk_rope_head_dim", K_U64, 1, MAX_HEADS, NULL, 0, -1,
	    "the rotary part of each q and k head, e.g. 64", true },
	{ "qk_nope_head_dim", K_U64, 1, MAX_HEADS, NULL, 0, -1,
	    "the part of each q and k head without RoPE, e.g. 128", true },
	{ "v_head_dim", K_U64, 1, MAX_HEADS, NULL, 0, -1,
	    "each value head's width, e.g. 128", true },
	{ "rope_interleave", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
};

/* Mamba-2's mixer (struct vp_ssm): the sizes config.json does not
 * already give as heads, head_dim and ffn. */
static const struct key ssm_keys[] = {
	{ "state", K_U64, 1, MAX_HEADS, NULL, 0, -1,
	    "the SSM state size (state_size), e.g. 128", true },
	{ "groups", K_U64, 1, MAX_HEADS, NULL, 0, -1,
	    "the groups of B and C (n_groups), e.g. 8", false },
	{ "conv_kernel", K_U64, 1, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "chunk", K_U64, 1, MAX_SEQ, NULL, 0, -1, NULL, false },
	{ "conv_bias", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "residual_fp32", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "heads", K_U64, 1, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "head_dim", K_U64, 1, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "bias", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "attention_layers", K_STR, 0, 0, NULL, 0, -1, NULL, false },
	{ "pattern", K_STR, 0, 0, NULL, 0, -1, NULL, false },
	{ "expand", K_U64, 1, MAX_HEADS, NULL, 0, -1, NULL, false },
	{ "dt_rank", K_U64, 1, MAX_FFN, NULL, 0, -1, NULL, false },
};

/* Zamba2's shared transformer blocks (struct vp_zamba2). */
static const struct key zamba2_keys[] = {
	{ "mem_blocks", K_U64, 1, MAX_LAYERS, NULL, 0, -1,
	    "the distinct shared blocks (num_mem_blocks), e.g. 2", true },
	{ "adapter_rank", K_U64, 1, MAX_HIDDEN, NULL, 0, -1,
	    "the rank of each call's adapters, e.g. 128", true },
	{ "attn_adapter", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
	{ "mem_rope", K_BOOL, 0, 0, NULL, 0, -1, NULL, false },
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
	const struct ynode *mla;
	const struct ynode *vision;
	const struct ynode *ssm;
	const char *ssm_attn;	/* ssm.attention_layers, "9,18,27" */
	const char *ssm_pattern;	/* ssm.pattern, "M-M*-" */
	const struct ynode *zamba2;
};
typedef void (*setter)(struct reading *r, const char *key, union val v);

static size_t
read_map(const struct ynode *map, const char *file, const char *what,
    const struct key *keys, size_t nkeys, struct reading *rd, setter set,
    struct vp_diags *d)
{
	const char *names[64];
	int seen[64], hinted[64];
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
	else if (!strcmp(k, "sparse_step")) m->moe.sparse_step = (uint32_t)v.u;
	else if (!strcmp(k, "groups")) m->moe.groups = (uint32_t)v.u;
	else if (!strcmp(k, "topk_groups")) m->moe.topk_groups = (uint32_t)v.u;
}

static void
set_mla(struct reading *r, const char *k, union val v)
{
	struct vp_mla *a = &r->m->mla;

	if (!strcmp(k, "q_lora_rank")) a->q_rank = v.u;
	else if (!strcmp(k, "kv_lora_rank")) a->kv_rank = v.u;
	else if (!strcmp(k, "qk_rope_head_dim")) a->rope_dim = v.u;
	else if (!strcmp(k, "qk_nope_head_dim")) a->nope_dim = v.u;
	else if (!strcmp(k, "v_head_dim")) a->v_dim = v.u;
	else if (!strcmp(k, "rope_interleave")) a->rope_interleave = v.b;
}

static void
set_vision(struct reading *r, const char *k, union val v)
{
	struct vp_vision *a = &r->m->vis;

	if (!strcmp(k, "layers")) a->layers = v.u;
	else if (!strcmp(k, "hidden")) a->hidden = v.u;
	else if (!strcmp(k, "heads")) a->heads = v.u;
	else if (!strcmp(k, "ffn")) a->ffn = v.u;
	else if (!strcmp(k, "activation")) a->act = (enum vp_act)v.e;
	else if (!strcmp(k, "image_size")) a->image = v.u;
	else if (!strcmp(k, "patch_size")) a->patch = v.u;
	else if (!strcmp(k, "channels")) a->channels = v.u;
}

static void
set_ssm(struct reading *r, const char *k, union val v)
{
	struct vp_ssm *q = &r->m->ssm;

	if (!strcmp(k, "state")) q->state = v.u;
	else if (!strcmp(k, "groups")) q->groups = v.u;
	else if (!strcmp(k, "conv_kernel")) q->conv_kernel = v.u;
	else if (!strcmp(k, "chunk")) q->chunk = v.u;
	else if (!strcmp(k, "conv_bias")) q->conv_bias = v.b;
	else if (!strcmp(k, "residual_fp32")) q->residual_fp32 = v.b;
	else if (!strcmp(k, "heads")) q->heads = v.u;
	else if (!strcmp(k, "head_dim")) q->head_dim = v.u;
	else if (!strcmp(k, "bias")) q->proj_bias = v.b;
	else if (!strcmp(k, "attention_layers")) r->ssm_attn = v.s;
	else if (!strcmp(k, "pattern")) r->ssm_pattern = v.s;
	else if (!strcmp(k, "expand")) q->expand = v.u;
	else if (!strcmp(k, "dt_rank")) q->dt_rank = v.u;
}

static void
set_zamba2(struct reading *r, const char *k, union val v)
{
	struct vp_zamba2 *z = &r->m->zamba2;

	if (!strcmp(k, "mem_blocks")) z->mem_blocks = (uint32_t)v.u;
	else if (!strcmp(k, "adapter_rank")) z->adapter_rank = v.u;
	else if (!strcmp(k, "attn_adapter")) z->attn_adapter = v.b;
	else if (!strcmp(k, "mem_rope")) z->mem_rope = v.b;
}

/* "9,18,27": a hybrid's attention blocks, ascending.  0 or -1. */
static int
ssm_attn_list(const char *s, struct vp_model *m)
{
	struct vp_ssm *q = &m->ssm;
	char *end;
	unsigned long long v;

	q->n_attn = 0;
	while (*s) {
		if (*s < '0' || *s > '9' || q->n_attn == VP_SSM_MAX_ATTN)
			return -1;
		v = strtoull(s, &end, 10);
		if (v > MAX_LAYERS || (q->n_attn && v <= q->attn[q->n_attn - 1]))
			return -1;
		q->attn[q->n_attn++] = (uint32_t)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return 0;
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
	else if (!strcmp(k, "o_bias")) m->o_bias = v.b;
	else if (!strcmp(k, "post_norms")) m->post_norms = v.b;
	else if (!strcmp(k, "attn_softcap")) m->attn_softcap = v.b;
	else if (!strcmp(k, "logit_softcap")) m->logit_softcap = v.b;
	else if (!strcmp(k, "attn_temperature")) m->attn_temperature = v.b;
	else if (!strcmp(k, "qk_l2norm")) m->qk_l2norm = v.b;
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
	else if (!strcmp(k, "sliding_window")) m->window = v.u;
	else if (!strcmp(k, "global_every")) m->global_every = (uint32_t)v.u;
	else if (!strcmp(k, "mla")) r->mla = v.map;
	else if (!strcmp(k, "rotary_dim")) m->rotary_dim = v.u;
	else if (!strcmp(k, "decoder_layers")) m->dec_layers = v.u;
	else if (!strcmp(k, "relative_buckets")) m->rel_buckets = v.u;
	else if (!strcmp(k, "decoder_output_scale")) m->scale_dec_out = v.b;
	else if (!strcmp(k, "mel_bins")) m->mel_bins = v.u;
	else if (!strcmp(k, "decoder_max_seq")) m->dec_max_seq = v.u;
	else if (!strcmp(k, "image_size")) m->vis.image = v.u;
	else if (!strcmp(k, "patch_size")) m->vis.patch = v.u;
	else if (!strcmp(k, "channels")) m->vis.channels = v.u;
	else if (!strcmp(k, "vision")) r->vision = v.map;
	else if (!strcmp(k, "projection_dim")) m->vis.proj = v.u;
	else if (!strcmp(k, "ssm")) r->ssm = v.map;
	else if (!strcmp(k, "zamba2")) r->zamba2 = v.map;
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
	/* A ViT's position table is its image's, a CLIP text tower's
	 * learned; both have biases. */
	if ((m->family == VP_FAMILY_VIT || m->family == VP_FAMILY_CLIP) &&
	    ynode_get(root, "position") == NULL)
		m->pos = m->family == VP_FAMILY_VIT ? VP_POS_NONE :
		    VP_POS_LEARNED;
	if ((m->family == VP_FAMILY_VIT || m->family == VP_FAMILY_CLIP) &&
	    ynode_get(root, "bias") == NULL)
		m->bias = true;
	/* Llama4TextConfig's defaults (v5.24): a NoPE block every 4th,
	 * chunks of 8192, temperature tuning and the L2 q/k norm on. */
	if (m->family == VP_FAMILY_LLAMA4) {
		if (ynode_get(root, "global_every") == NULL)
			m->global_every = 4;
		if (ynode_get(root, "sliding_window") == NULL)
			m->window = 8192;
		if (ynode_get(root, "attn_temperature") == NULL)
			m->attn_temperature = true;
		if (ynode_get(root, "qk_l2norm") == NULL)
			m->qk_l2norm = true;
	}
	/* ModernBertConfig's defaults (v5.24): global_attn_every_n_layers
	 * 3, local_attention 128 (a half-window, sliding_window, of 64). */
	if (m->family == VP_FAMILY_MODERNBERT) {
		if (ynode_get(root, "global_every") == NULL)
			m->global_every = 3;
		if (ynode_get(root, "sliding_window") == NULL)
			m->window = 64;
	}
	/* DeBERTa-v3's span: position_buckets 256. */
	if (m->family == VP_FAMILY_DEBERTA_V2 &&
	    ynode_get(root, "relative_buckets") == NULL)
		m->rel_buckets = 256;
}

/*
 * A layer-graph model file (`layers:` is a list; vramplan-model(5),
 * LAYER GRAPHS): name, input, loss, layers, training.  The layers are
 * lgraph_read.c's; the training block is the transformer files' own.
 */
static const char *const lgraph_top_keys[] = { "name", "input", "loss",
    "layers", "training" };

static int
read_layer_graph(const struct ynode *root, const char *file,
    struct vp_model *m, struct vp_diags *d)
{
	struct reading rd = { .m = m };
	const struct ynode *nm = ynode_get(root, "name"),
	    *tr = ynode_get(root, "training");
	const char *s;
	int rc = 0;

	if (ynode_check_keys(root, file, "a layer-graph model",
	    lgraph_top_keys, VP_NELEM(lgraph_top_keys), d) != 0)
		rc = -1;
	if (nm == NULL) {
		vp_diag_add(d, file, root->pos, VP_ERROR, "missing required "
		    "key 'name' in the model (a display name)");
		rc = -1;
	} else if (ynode_string(nm, file, "name", &s, d) == 0) {
		free(m->name);
		m->name = xstrdup(s);
	} else {
		rc = -1;
	}
	if (tr != NULL && (ynode_want(tr, YN_MAP, file, "training", d) != 0 ||
	    read_map(tr, file, "'training'", train_keys, VP_NELEM(train_keys),
	    &rd, set_train, d) != 0))
		rc = -1;
	if (m->train.seq) {
		vp_diag_add(d, file, m->where[VP_F_TRAIN_SEQ], VP_ERROR,
		    "a layer-graph model takes images, not sequences: "
		    "'training' has no 'seq' here");
		rc = -1;
	}
	m->arch = VP_ARCH_ENCODER;
	m->pos = VP_POS_NONE;
	if (vp_lgraph_read(root, file, &m->lg, d) != 0)
		rc = -1;
	return rc;
}

static int
read_own(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	struct reading rd = { m, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL,
	    NULL };
	size_t nerr;
	const struct ynode *ly = ynode_get(root, "layers");

	/* A list of layers without the transformer sizes: a layer graph. */
	if (ly != NULL && ly->kind == YN_SEQ && ynode_get(root, "hidden") ==
	    NULL && ynode_get(root, "heads") == NULL)
		return read_layer_graph(root, file, m, d);
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
	if (rd.mla != NULL) {
		/* DeepseekV3Config's default: interleaved rotary pairs. */
		m->mla.rope_interleave = true;
		nerr += read_map(rd.mla, file, "'mla'", mla_keys,
		    VP_NELEM(mla_keys), &rd, set_mla, d);
		/* q's and k's head dim. */
		if (m->head_dim == 0)
			m->head_dim = m->mla.nope_dim + m->mla.rope_dim;
	}
	if (rd.vision != NULL) {
		/* CLIPVisionConfig's defaults for what may be left out. */
		m->vis.act = VP_ACT_QUICK_GELU;
		m->vis.channels = 3;
		nerr += read_map(rd.vision, file, "'vision'", vision_keys,
		    VP_NELEM(vision_keys), &rd, set_vision, d);
		/* On a language model: LLaVA's frozen tower and projector. */
		if (m->family != VP_FAMILY_CLIP)
			m->vis.llava = true;
	}
	if (rd.ssm != NULL) {
		/* Mamba2Config's defaults (v5.24). */
		m->ssm.conv_kernel = 4;
		m->ssm.chunk = 256;
		m->ssm.conv_bias = true;
		m->ssm.residual_fp32 = true;
		nerr += read_map(rd.ssm, file, "'ssm'", ssm_keys,
		    VP_NELEM(ssm_keys), &rd, set_ssm, d);
		if (rd.ssm_attn != NULL && ssm_attn_list(rd.ssm_attn, m) != 0) {
			vp_diag_add(d, file, ynode_get(rd.ssm,
			    "attention_layers")->pos, VP_ERROR,
			    "'attention_layers' must list block indices from "
			    "0, ascending, separated by commas (\"9,18,27\"), "
			    "at most %d", VP_SSM_MAX_ATTN);
			nerr++;
		}
		if (rd.ssm_pattern != NULL) {
			if (strlen(rd.ssm_pattern) > VP_SSM_MAX_PATTERN ||
			    strspn(rd.ssm_pattern, "M*-H") !=
			    strlen(rd.ssm_pattern)) {
				vp_diag_add(d, file, ynode_get(rd.ssm,
				    "pattern")->pos, VP_ERROR, "'pattern' "
				    "must be one character per block, 'M' "
				    "(Mamba-2), '*' (attention) or '-' (MLP), "
				    "or for zamba2 'M' and 'H' (hybrid), at "
				    "most %d", VP_SSM_MAX_PATTERN);
				nerr++;
			} else {
				strcpy(m->ssm.pattern, rd.ssm_pattern);
			}
		}
	}
	if (rd.zamba2 != NULL)
		nerr += read_map(rd.zamba2, file, "'zamba2'", zamba2_keys,
		    VP_NELEM(zamba2_keys), &rd, set_zamba2, d);
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
	{ "llama4_text", "Llama4", VP_FAMILY_LLAMA4, VP_NORM_RMSNORM,
	    VP_POS_ROPE, VP_ACT_SWIGLU, false, false, false, false, false,
	    false },
	{ "gemma3_text", "Gemma3", VP_FAMILY_GEMMA3, VP_NORM_RMSNORM,
	    VP_POS_ROPE, VP_ACT_GEGLU, false, false, true, true, false, false },
	{ "gpt_oss", "GptOss", VP_FAMILY_GPT_OSS, VP_NORM_RMSNORM, VP_POS_ROPE,
	    VP_ACT_SWIGLU, true, true, false, false, false, false },
	{ "deepseek_v2", "DeepseekV2", VP_FAMILY_DEEPSEEK_V2, VP_NORM_RMSNORM,
	    VP_POS_ROPE, VP_ACT_SWIGLU, false, false, false, false, false,
	    false },
	{ "deepseek_v3", "DeepseekV3", VP_FAMILY_DEEPSEEK_V3, VP_NORM_RMSNORM,
	    VP_POS_ROPE, VP_ACT_SWIGLU, false, false, false, false, false,
	    false },
	/*
	 * Kimi-K2 (moonshotai/Kimi-K2-Instruct): model_type kimi_k2, which
	 * transformers does not register; its config's architectures and
	 * auto_map name DeepseekV3ForCausalLM and DeepseekV3Config, and the
	 * code it runs is DeepSeek-V3's (Moonshot's model card: "uses the
	 * same architecture as DeepSeek-V3"), so it is that family by name.
	 */
	{ "kimi_k2", "DeepseekV3", VP_FAMILY_DEEPSEEK_V3, VP_NORM_RMSNORM,
	    VP_POS_ROPE, VP_ACT_SWIGLU, false, false, false, false, false,
	    false },
	{ "phi", "Phi", VP_FAMILY_PHI, VP_NORM_LAYERNORM, VP_POS_ROPE,
	    VP_ACT_GELU_NEW, true, true, false, false, false, false },
	{ "gpt_neox", "GPTNeoX", VP_FAMILY_GPT_NEOX, VP_NORM_LAYERNORM,
	    VP_POS_ROPE, VP_ACT_GELU, true, true, false, false, false, false },
	{ "opt", "OPT", VP_FAMILY_OPT, VP_NORM_LAYERNORM, VP_POS_LEARNED,
	    VP_ACT_RELU, true, true, false, true, false, false },
	{ "t5", "T5", VP_FAMILY_T5, VP_NORM_RMSNORM, VP_POS_NONE, VP_ACT_RELU,
	    false, false, false, true, false, false },
	{ "mt5", "MT5", VP_FAMILY_T5, VP_NORM_RMSNORM, VP_POS_NONE,
	    VP_ACT_RELU, false, false, false, true, false, false },
	{ "bart", "Bart", VP_FAMILY_BART, VP_NORM_LAYERNORM, VP_POS_LEARNED,
	    VP_ACT_GELU, true, true, false, true, false, false },
	{ "whisper", "Whisper", VP_FAMILY_WHISPER, VP_NORM_LAYERNORM,
	    VP_POS_NONE, VP_ACT_GELU, true, true, false, true, false, false },
	{ "modernbert", "ModernBert", VP_FAMILY_MODERNBERT, VP_NORM_LAYERNORM,
	    VP_POS_ROPE, VP_ACT_GEGLU, false, false, false, true, false,
	    false },
	{ "deberta-v2", "DebertaV2", VP_FAMILY_DEBERTA_V2, VP_NORM_LAYERNORM,
	    VP_POS_LEARNED, VP_ACT_GELU, true, true, false, true, false,
	    false },
	{ "vit", "ViT", VP_FAMILY_VIT, VP_NORM_LAYERNORM, VP_POS_NONE,
	    VP_ACT_GELU, true, true, false, false, false, false },
	{ "clip", "CLIP", VP_FAMILY_CLIP, VP_NORM_LAYERNORM, VP_POS_LEARNED,
	    VP_ACT_QUICK_GELU, true, true, false, false, false, false },
	{ "gptj", "GPTJ", VP_FAMILY_GPTJ, VP_NORM_LAYERNORM, VP_POS_ROPE,
	    VP_ACT_GELU_NEW, true, false, false, false, true, false },
	{ "falcon", "Falcon", VP_FAMILY_FALCON, VP_NORM_LAYERNORM,
	    VP_POS_ROPE, VP_ACT_GELU, false, false, false, true, true, false },
	{ "cohere", "Cohere", VP_FAMILY_COHERE, VP_NORM_LAYERNORM,
	    VP_POS_ROPE, VP_ACT_SWIGLU, false, false, false, true, false,
	    false },
	{ "mamba2", "Mamba2", VP_FAMILY_MAMBA2, VP_NORM_RMSNORM, VP_POS_NONE,
	    VP_ACT_SWIGLU, false, false, false, false, false, false },
	{ "bamba", "Bamba", VP_FAMILY_BAMBA, VP_NORM_RMSNORM, VP_POS_ROPE,
	    VP_ACT_SWIGLU, false, false, false, false, false, false },
	{ "nemotron_h", "NemotronH", VP_FAMILY_NEMOTRON_H, VP_NORM_RMSNORM,
	    VP_POS_NONE, VP_ACT_RELU2, false, false, false, false, false,
	    false },
	{ "zamba2", "Zamba2", VP_FAMILY_ZAMBA2, VP_NORM_RMSNORM, VP_POS_NONE,
	    VP_ACT_GEGLU, false, false, false, true, true, false },
	{ "jamba", "Jamba", VP_FAMILY_JAMBA, VP_NORM_RMSNORM, VP_POS_NONE,
	    VP_ACT_SWIGLU, false, false, false, false, false, false },
	{ "mamba", "Mamba", VP_FAMILY_MAMBA, VP_NORM_RMSNORM, VP_POS_NONE,
	    VP_ACT_SWIGLU, false, false, false, true, false, false },
	{ "falcon_mamba", "FalconMamba", VP_FAMILY_FALCON_MAMBA,
	    VP_NORM_RMSNORM, VP_POS_NONE, VP_ACT_SWIGLU, false, false, false,
	    true, false, false },
	{ "zamba", "Zamba", VP_FAMILY_ZAMBA, VP_NORM_RMSNORM, VP_POS_NONE,
	    VP_ACT_GEGLU, false, false, false, true, false, false },
};
#undef D

/*
 * What follows a family's prefix in the names of its transformers classes
 * (the "architectures" of a config): "LlamaForCausalLM", "BertModel".
 * The whole name must match, so "Qwen3NextForCausalLM" names no family of
 * the table.  "ForConditionalGeneration" is an encoder-decoder's LM class
 * (T5ForConditionalGeneration) and, for a decoder family, its multimodal
 * wrapper (Llama4ForConditionalGeneration, whose sizes are under
 * text_config): only an encoder-decoder row takes it (hf_family_of_class).
 */
static const char *const hf_class_suffixes[] = { "Model", "ForCausalLM",
    "LMHeadModel", "DoubleHeadsModel", "ForMaskedLM", "ForPreTraining",
    "ForNextSentencePrediction", "ForSequenceClassification",
    "ForTokenClassification", "ForQuestionAnswering", "ForMultipleChoice",
    "ForConditionalGeneration", "ForImageClassification" };

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

/*
 * State-space hybrids whose code was read and is not modelled: the
 * model_type, the transformers classes' prefix, and why (transformers
 * 5.24).  They are refused with the reason; the own schema cannot
 * describe them either.
 */
static const struct { const char *model_type, *cls, *why; } hf_refused[] = {
	/* None today (Zamba, the last, is modelled); the end. */
	{ NULL, NULL, NULL },
};

/* The refusal of a known but unmodelled hybrid, by model_type or by
 * class name (cls non-NULL); true when one was made. */
static bool
hf_refuse_known(const char *file, struct vp_srcpos pos, const char *name,
    bool cls, struct vp_diags *d)
{
	size_t i, n;

	for (i = 0; hf_refused[i].model_type != NULL; i++) {
		n = strlen(hf_refused[i].cls);
		if (cls ? strncmp(name, hf_refused[i].cls, n) != 0 ||
		    strncmp(name + n, "For", 3) != 0 :
		    strcmp(name, hf_refused[i].model_type) != 0)
			continue;
		vp_diag_add(d, file, pos, VP_ERROR, "%s '%.64s' is not "
		    "modelled: %s; vramplan cannot plan it yet",
		    cls ? "architecture" : "model_type", name,
		    hf_refused[i].why);
		return true;
	}
	return false;
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
		for (j = 0; j < VP_NELEM(hf_class_suffixes); j++) {
			if (strcmp(name + n, hf_class_suffixes[j]) != 0)
				continue;
			if (strcmp(hf_class_suffixes[j],
			    "ForConditionalGeneration") == 0 &&
			    vp_family_info[hf_families[i].family].arch !=
			    VP_ARCH_ENCDEC)
				continue;
			return &hf_families[i];
		}
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
		if (hf_refuse_known(file, mt->pos, *type, false, d))
			return NULL;
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
		if (hf_refuse_known(file, a0->pos, *type, true, d))
			return NULL;
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
 * A list of block indices (moe_layers) or per-block flags (no_rope_layers)
 * compared with the pattern "every step-th block, counting from 1", which
 * is all the lowering models.  want(l) says what the pattern has at block
 * l; as_flags reads a list of 0/1 per block instead of indices.  Returns
 * 0 when the list matches, -1 after an error naming the first mismatch.
 */
static int
hf_layer_pattern(const struct ynode *n, const char *file, const char *key,
    uint64_t layers, bool as_flags, bool (*want)(uint64_t, uint32_t),
    uint32_t step, const char *pattern, struct vp_diags *d)
{
	uint64_t l, v, j = 0;

	if (ynode_want(n, YN_SEQ, file, key, d) != 0)
		return -1;
	if (as_flags && n->nkids < layers) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "%s has %zu entries "
		    "for %llu blocks; it needs one per block", key, n->nkids,
		    (unsigned long long)layers);
		return -1;
	}
	for (l = 0; l < layers; l++) {
		bool in;

		if (as_flags) {
			if (ynode_u64(n->kids[l], file, key, 0, 1, &v, d) != 0)
				return -1;
			in = v == 1;
		} else {
			in = false;
			if (j < n->nkids) {
				if (ynode_u64(n->kids[j], file, key, 0,
				    MAX_LAYERS, &v, d) != 0)
					return -1;
				if (v == l) {
					in = true;
					j++;
				}
			}
		}
		if (in != want(l, step)) {
			vp_diag_add(d, file, n->pos, VP_ERROR, "%s: block %llu "
			    "breaks the pattern the model is planned with "
			    "(%s); other layouts are not modelled", key,
			    (unsigned long long)l, pattern);
			return -1;
		}
	}
	if (!as_flags && j < n->nkids) {
		vp_diag_add(d, file, n->kids[j]->pos, VP_ERROR, "%s lists a "
		    "block that is not in the model, or out of order; list "
		    "block indices from 0, ascending", key);
		return -1;
	}
	return 0;
}

static bool
every_step(uint64_t l, uint32_t step)
{
	return step <= 1 || (l + 1) % step == 0;
}

static bool
rope_block(uint64_t l, uint32_t global_every)
{
	return global_every == 0 || (l + 1) % global_every != 0;
}

/*
 * Llama 4's text model (transformers Llama4TextConfig and
 * Llama4TextDecoderLayer, v5.24).  intermediate_size is the size of each
 * routed expert and of the shared one (Llama4TextMoe), intermediate_size_mlp
 * that of the dense blocks' MLP; the blocks in moe_layers (default every
 * interleave_moe_layer_step-th) have the experts.  no_rope_layers flags the
 * blocks with RoPE (1) and without (0; default every
 * no_rope_layer_interval-th); the RoPE blocks attend within chunks of
 * attention_chunk_size (layer_types "chunked_attention") and L2-normalize
 * q and k (use_qk_norm), the NoPE ones attend globally and, with
 * attn_temperature_tuning, scale q per position.  Defaults are the
 * config class's.
 */
static void
hf_llama4(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	uint64_t v;
	bool b;
	size_t i;

	if (m->family != VP_FAMILY_LLAMA4)
		return;
	if (ynode_get(root, "head_dim") == NULL)
		m->head_dim = 128;
	if (ynode_get(root, "num_key_value_heads") == NULL)
		m->kv_heads = 8;
	m->has_moe = true;
	if (m->moe.experts == 0)
		m->moe.experts = 16;
	if (m->moe.top_k == 0)
		m->moe.top_k = 1;
	m->moe.ffn = m->ffn ? m->ffn : 8192;
	m->moe.shared_experts = 1;
	m->moe.shared_ffn = m->moe.ffn;
	m->ffn = 16384;
	hf_u64(root, file, "intermediate_size_mlp", 1, MAX_FFN, &m->ffn,
	    VP_F_FFN, m, d);
	v = 1;
	hf_u64(root, file, "interleave_moe_layer_step", 1, MAX_LAYERS, &v, -1,
	    m, d);
	m->moe.sparse_step = (uint32_t)v;
	n = ynode_get(root, "moe_layers");
	if (n != NULL && !ynode_is_null(n) && m->layers > 0)
		hf_layer_pattern(n, file, "moe_layers", m->layers, false,
		    every_step, m->moe.sparse_step,
		    "experts in every interleave_moe_layer_step-th block", d);
	v = 4;
	hf_u64(root, file, "no_rope_layer_interval", 1, MAX_LAYERS, &v, -1, m,
	    d);
	m->global_every = (uint32_t)v;
	n = ynode_get(root, "no_rope_layers");
	if (n != NULL && !ynode_is_null(n) && n->kind == YN_SEQ &&
	    m->layers > 0) {
		/* The interval is where the first NoPE block (0) sits. */
		m->global_every = 0;
		for (i = 0; i < n->nkids && i < m->layers; i++)
			if (n->kids[i]->kind == YN_SCALAR &&
			    strcmp(n->kids[i]->str, "0") == 0) {
				m->global_every = (uint32_t)(i + 1);
				break;
			}
		hf_layer_pattern(n, file, "no_rope_layers", m->layers, true,
		    rope_block, m->global_every,
		    "no RoPE in every k-th block only", d);
	} else if (n != NULL && !ynode_is_null(n)) {
		ynode_want(n, YN_SEQ, file, "no_rope_layers", d);
	}
	/* Every block with RoPE: none is global. */
	if (m->global_every == 0)
		m->global_every = (uint32_t)(m->layers + 1);
	m->window = 8192;
	n = ynode_get(root, "attention_chunk_size");
	if (n != NULL && ynode_is_null(n))
		m->window = 0;
	else
		hf_u64(root, file, "attention_chunk_size", 1, MAX_SEQ,
		    &m->window, -1, m, d);
	n = ynode_get(root, "layer_types");
	if (n != NULL && !ynode_is_null(n) &&
	    ynode_want(n, YN_SEQ, file, "layer_types", d) == 0) {
		for (i = 0; i < n->nkids && i < m->layers; i++) {
			const char *want = m->window &&
			    !vp_block_nope(m, i) ? "chunked_attention" :
			    "full_attention";

			if (n->kids[i]->kind != YN_SCALAR ||
			    strcmp(n->kids[i]->str, want) != 0) {
				vp_diag_add(d, file, n->kids[i]->pos, VP_ERROR,
				    "layer_types: block %zu is planned as "
				    "'%s' (chunked attention in the RoPE "
				    "blocks when attention_chunk_size is "
				    "set); other layouts are not modelled", i,
				    want);
				break;
			}
		}
	}
	/* A number in the released configs (Scout's says 4): the class
	 * tests its truth. */
	m->attn_temperature = true;
	n = ynode_get(root, "attn_temperature_tuning");
	if (n != NULL && n->kind == YN_SCALAR && !ynode_is_null(n) &&
	    (isdigit((unsigned char)n->str[0]) || n->str[0] == '-'))
		m->attn_temperature = strtod(n->str, NULL) != 0;
	else if (hf_bool(root, file, "attn_temperature_tuning", &b, d) > 0)
		m->attn_temperature = b;
	m->qk_l2norm = true;
	if (hf_bool(root, file, "use_qk_norm", &b, d) > 0)
		m->qk_l2norm = b;
	if ((n = ynode_get(root, "router_jitter_noise")) != NULL &&
	    n->kind == YN_SCALAR && strtod(n->str, NULL) != 0)
		vp_diag_add(d, file, n->pos, VP_ERROR, "router_jitter_noise "
		    "is not modelled (a noise tensor per router input); set it "
		    "to 0");
}

/*
 * Gemma-3 text (transformers 5.24's Gemma3TextConfig): the hub's
 * multimodal configs give a sparse text_config and leave the rest to the
 * class's defaults, which are these (read before the config's keys, which
 * override them).  Soft-capping is off unless a cap is given.
 */
static void
hf_gemma3_defaults(struct vp_model *m)
{
	if (m->family != VP_FAMILY_GEMMA3)
		return;
	m->vocab = 262208;
	m->hidden = 2304;
	m->ffn = 9216;
	m->layers = 26;
	m->heads = 8;
	m->kv_heads = 4;
	m->head_dim = 256;
	m->max_seq = 131072;
	m->attn_softcap = m->logit_softcap = false;
	m->window = 4096;
	m->global_every = 6;
}

/*
 * gpt-oss (transformers 5.24's GptOssConfig): its defaults, which are
 * gpt-oss-120b's sizes; every block has experts (GptOssMLP), biases on the
 * experts' projections (and, with attention_bias, default true, on q, k,
 * v and o), a global layer every second one (layer_types' default).
 */
static void
hf_gpt_oss_defaults(struct vp_model *m)
{
	if (m->family != VP_FAMILY_GPT_OSS)
		return;
	m->vocab = 201088;
	m->hidden = 2880;
	m->ffn = 2880;
	m->layers = 36;
	m->heads = 64;
	m->kv_heads = 8;
	m->head_dim = 64;
	m->max_seq = 131072;
	m->has_moe = true;
	m->moe.experts = 128;
	m->moe.top_k = 4;
	m->window = 128;
	m->global_every = 2;
}

/*
 * gpt-oss's Hub checkpoints store the experts in MXFP4
 * (quantization_config, quant_method mxfp4), which transformers
 * dequantizes to bf16 for training (Mxfp4Config(dequantize=True), the
 * only way its experts take gradients): the plan is that of the
 * dequantized model, its experts in the plan's precision.  Said with a
 * note; another quant_method is refused.
 */
static void
hf_gpt_oss_quant(const struct ynode *root, const char *file,
    struct vp_model *m, struct vp_diags *d)
{
	const struct ynode *q, *meth;

	if (m->family != VP_FAMILY_GPT_OSS)
		return;
	/* hf_moe's default of one expert per token is not GptOssConfig's. */
	if (ynode_get(root, "num_experts_per_tok") == NULL)
		m->moe.top_k = 4;
	if ((q = ynode_get(root, "quantization_config")) == NULL ||
	    ynode_is_null(q))
		return;
	meth = ynode_get(q, "quant_method");
	if (meth != NULL && meth->kind == YN_SCALAR &&
	    strcmp(meth->str, "mxfp4") == 0)
		vp_diag_add(d, file, q->pos, VP_NOTE, "quantization_config: "
		    "the MXFP4 experts are planned dequantized, in the plan's "
		    "precision (transformers trains gpt-oss from "
		    "Mxfp4Config(dequantize=True))");
	else
		vp_diag_add(d, file, q->pos, VP_ERROR, "quantization_config: "
		    "only gpt-oss's MXFP4 checkpoints (quant_method mxfp4, "
		    "planned dequantized) are understood");
}

/*
 * Local and global layers (Gemma3TextConfig): sliding_window (null: no
 * window), and which layers use it: layer_types when given, else
 * sliding_window_pattern (the hub's older key; default 6): layer l (from
 * 0) is global when (l + 1) is a multiple of it.  A layer_types list that
 * is not such a pattern is refused, as is use_bidirectional_attention
 * (EmbeddingGemma's encoder, another mask).
 */
static void
hf_layer_types(const struct ynode *root, const char *file,
    struct vp_model *m, struct vp_diags *d)
{
	const struct ynode *n;
	uint64_t v = 0;
	size_t i, first = 0;
	bool b, found = false;

	if (m->family != VP_FAMILY_GEMMA3 && m->family != VP_FAMILY_GPT_OSS)
		return;
	if (hf_bool(root, file, "use_bidirectional_attention", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root,
		    "use_bidirectional_attention")->pos, VP_ERROR,
		    "use_bidirectional_attention: true (a bidirectional "
		    "encoder's masks) is not modelled");
	n = ynode_get(root, "sliding_window");
	if (n != NULL && ynode_is_null(n))
		m->window = 0;
	else if (hf_u64(root, file, "sliding_window", 1, MAX_SEQ, &v, -1, m,
	    d) > 0)
		m->window = v;
	v = 0;
	if (hf_u64(root, file, "sliding_window_pattern", 1, MAX_LAYERS, &v, -1,
	    m, d) > 0 || hf_u64(root, file, "_sliding_window_pattern", 1,
	    MAX_LAYERS, &v, -1, m, d) > 0)
		m->global_every = (uint32_t)v;
	n = ynode_get(root, "layer_types");
	if (n == NULL || ynode_is_null(n))
		return;
	if (ynode_want(n, YN_SEQ, file, "layer_types", d) != 0)
		return;
	if (n->nkids != m->layers) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "layer_types lists %zu "
		    "layers; num_hidden_layers is %llu", n->nkids,
		    (unsigned long long)m->layers);
		return;
	}
	for (i = 0; i < n->nkids; i++) {
		const struct ynode *k = n->kids[i];

		if (k->kind != YN_SCALAR || (strcmp(k->str,
		    "sliding_attention") != 0 && strcmp(k->str,
		    "full_attention") != 0)) {
			vp_diag_add(d, file, k->pos, VP_ERROR, "layer_types: "
			    "expected 'sliding_attention' or "
			    "'full_attention'");
			return;
		}
		if (!found && strcmp(k->str, "full_attention") == 0) {
			found = true;
			first = i;
		}
	}
	/* No global layer: every one is local. */
	m->global_every = (uint32_t)(found ? first + 1 : m->layers + 1);
	for (i = 0; i < n->nkids; i++)
		if ((strcmp(n->kids[i]->str, "full_attention") == 0) !=
		    ((i + 1) % m->global_every == 0)) {
			vp_diag_add(d, file, n->kids[i]->pos, VP_ERROR,
			    "layer_types: layer %zu breaks the pattern of a "
			    "global layer every %u (the first at %zu); other "
			    "orders are not modelled", i, m->global_every,
			    first);
			return;
		}
}

/* An integer key of a DeepSeek config, or the config class's default
 * `def` when absent; null is 0.  1 when read or defaulted, -1 on error. */
static int
hf_u64_or(const struct ynode *root, const char *file, const char *key,
    uint64_t min, uint64_t max, uint64_t def, uint64_t *out,
    struct vp_diags *d)
{
	const struct ynode *n = ynode_get(root, key);

	if (n == NULL) {
		*out = def;
		return 1;
	}
	if (ynode_is_null(n)) {
		*out = 0;
		return 1;
	}
	return ynode_u64(n, file, key, min, max, out, d) == 0 ? 1 : -1;
}

/*
 * DeepSeek-V2 and V3 (DeepseekV2Config, DeepseekV3Config, transformers
 * 5.24; Kimi-K2's config is read as V3's).  MLA's sizes (struct vp_mla),
 * with the classes' defaults: q_lora_rank 1536 (null: a plain q_proj),
 * kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim
 * 128; the class sets head_dim to qk_rope_head_dim whatever the config
 * says, and q's and k's head dim is nope + rope.  The MoE: V3's defaults
 * are 256 experts of 2048, 8 per token, one shared expert, 3 dense blocks,
 * 8 groups with 4 chosen; V2's 64 experts of 1407, two shared, no dense
 * block, and num_experts_per_tok has no default.  The shared experts are
 * one MLP of n_shared_experts x moe_intermediate_size.  Every block from
 * first_k_dense_replace on has experts: the transformers classes read no
 * moe_layer_freq, so a config whose moe_layer_freq is not 1 (which
 * DeepSeek's own code would honour) is refused.  The multi-token
 * prediction layers (num_nextn_predict_layers) are not part of the
 * transformers class, which skips their weights: not planned, and said.
 */
static void
hf_deepseek(const struct ynode *root, const char *file, const char *type,
    struct vp_model *m, struct vp_diags *d)
{
	const struct ynode *n;
	struct vp_mla *a = &m->mla;
	bool v3 = m->family == VP_FAMILY_DEEPSEEK_V3;
	uint64_t v = 0;
	bool b;

	if (m->family < 0 || !vp_family_info[m->family].mla)
		return;
	m->where[VP_F_FAMILY] = root->pos;
	hf_u64_or(root, file, "q_lora_rank", 1, MAX_HIDDEN, 1536, &a->q_rank,
	    d);
	hf_u64_or(root, file, "kv_lora_rank", 1, MAX_HIDDEN, 512, &a->kv_rank,
	    d);
	hf_u64_or(root, file, "qk_rope_head_dim", 1, MAX_HEADS, 64,
	    &a->rope_dim, d);
	hf_u64_or(root, file, "qk_nope_head_dim", 1, MAX_HEADS, 128,
	    &a->nope_dim, d);
	hf_u64_or(root, file, "v_head_dim", 1, MAX_HEADS, 128, &a->v_dim, d);
	m->head_dim = a->nope_dim + a->rope_dim;
	a->rope_interleave = v3;
	if (v3 && hf_bool(root, file, "rope_interleave", &b, d) > 0)
		a->rope_interleave = b;
	/* DeepseekV3Config's num_key_value_heads defaults to 128. */
	if (v3 && ynode_get(root, "num_key_value_heads") == NULL)
		m->kv_heads = 128;
	/* DeepseekV3MLP has no biases; DeepseekV2MLP's follow mlp_bias,
	 * which its experts (3D parameters) do not have. */
	if (v3)
		m->bias = false;
	else if (m->bias)
		vp_diag_add(d, file, ynode_get(root, "mlp_bias")->pos, VP_ERROR,
		    "mlp_bias: true is not modelled for %s (biases on the "
		    "dense and shared MLPs, none on the routed experts)", type);
	if ((n = ynode_get(root, "moe_layer_freq")) != NULL &&
	    !ynode_is_null(n) && (ynode_u64(n, file, "moe_layer_freq", 1,
	    MAX_LAYERS, &v, d) != 0 || v != 1)) {
		if (v > 1)
			vp_diag_add(d, file, n->pos, VP_ERROR, "moe_layer_freq "
			    "%llu is not what transformers' %s runs (every "
			    "block from first_k_dense_replace on has "
			    "experts); only 1 is modelled",
			    (unsigned long long)v, v3 ? "DeepseekV3MoE" :
			    "DeepseekV2Moe");
		return;
	}
	if ((n = ynode_get(root, "num_nextn_predict_layers")) != NULL &&
	    !ynode_is_null(n) && n->kind == YN_SCALAR && strcmp(n->str, "0"))
		vp_diag_add(d, file, n->pos, VP_NOTE, "num_nextn_predict_layers: "
		    "%s multi-token-prediction layer(s) are not part of "
		    "transformers' %sForCausalLM (their weights are skipped "
		    "when loading): not planned", n->str, v3 ? "DeepseekV3" :
		    "DeepseekV2");
	/* The experts, with the classes' defaults where the keys are
	 * absent (hf_moe read those present). */
	if (ynode_get(root, "n_routed_experts") == NULL &&
	    ynode_get(root, "num_local_experts") == NULL &&
	    ynode_get(root, "num_experts") == NULL) {
		m->has_moe = true;
		m->moe.experts = v3 ? 256 : 64;
	}
	if (!m->has_moe)
		return;
	if (ynode_get(root, "num_experts_per_tok") == NULL) {
		if (v3)
			m->moe.top_k = 8;
		else
			vp_diag_add(d, file, root->pos, VP_ERROR, "missing "
			    "required key 'num_experts_per_tok' (DeepseekV2Config "
			    "has no default)");
	}
	if (ynode_get(root, "moe_intermediate_size") == NULL)
		m->moe.ffn = v3 ? 2048 : 1407;
	v = 0;
	if (hf_u64_or(root, file, "n_shared_experts", 0, MAX_HEADS, v3 ? 1 : 2,
	    &v, d) > 0) {
		m->moe.shared_experts = v ? 1 : 0;
		m->moe.shared_ffn = vp_mul_sat(v, m->moe.ffn);
	}
	if (ynode_get(root, "first_k_dense_replace") == NULL)
		m->moe.first_dense = v3 ? 3 : 0;
	if (v3) {
		hf_u64_or(root, file, "n_group", 1, MAX_HEADS, 8, &v, d);
		m->moe.groups = (uint32_t)v;
		hf_u64_or(root, file, "topk_group", 1, MAX_HEADS, 4, &v, d);
		m->moe.topk_groups = (uint32_t)v;
		return;
	}
	n = ynode_get(root, "topk_method");
	if (n == NULL || ynode_is_null(n) || (n->kind == YN_SCALAR &&
	    strcmp(n->str, "greedy") == 0))
		return;
	if (n->kind != YN_SCALAR || strcmp(n->str, "group_limited_greedy")) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "topk_method '%s' is not "
		    "one DeepseekV2TopkRouter runs (greedy, "
		    "group_limited_greedy)", n->kind == YN_SCALAR ? n->str :
		    ynode_kind_name(n));
		return;
	}
	hf_u64_or(root, file, "n_group", 1, MAX_HEADS, 0, &v, d);
	m->moe.groups = (uint32_t)v;
	hf_u64_or(root, file, "topk_group", 1, MAX_HEADS, 0, &v, d);
	m->moe.topk_groups = (uint32_t)v;
}

/*
 * Partial RoPE (Phi, GPT-NeoX): the first int(head_dim * factor) dims
 * of each head rotate.  The factor is rope_parameters'
 * partial_rotary_factor (transformers 5), else the top-level `key`
 * (GPT-NeoX's rotary_pct, Phi-2's partial_rotary_factor), else the top
 * level partial_rotary_factor, else `def` (the config class's default).
 */
static void
hf_rotary(const struct ynode *root, const char *file, const char *key,
    double def, struct vp_model *m, struct vp_diags *d)
{
	const struct ynode *n = NULL, *rp = ynode_get(root, "rope_parameters");
	double f = def;
	uint64_t hd;

	if (rp != NULL && rp->kind == YN_MAP)
		n = ynode_get(rp, "partial_rotary_factor");
	if (n == NULL || ynode_is_null(n))
		n = ynode_get(root, key);
	if (n == NULL || ynode_is_null(n))
		n = ynode_get(root, "partial_rotary_factor");
	if (n != NULL && !ynode_is_null(n) &&
	    ynode_double(n, file, key, 0, 1, &f, d) != 0)
		return;
	hd = m->head_dim ? m->head_dim : m->heads ? m->hidden / m->heads : 0;
	m->rotary_dim = (uint64_t)((double)hd * f);
	if (hd && m->rotary_dim < 2)
		vp_diag_add(d, file, n != NULL ? n->pos : root->pos, VP_ERROR,
		    "a rotary factor of %g rotates no pair of the %llu dims "
		    "of a head; RoPE off is not modelled", f,
		    (unsigned long long)hd);
}

/*
 * A partial_rotary_factor below 1 in a family whose block rotates whole
 * heads (Phi-3's row for Phi-4-mini, say) is refused: the split, the
 * rotation of part of each head and the torch.cat back are lowered only
 * by the families whose row has rope_cat.
 */
static void
hf_partial_rope(const struct ynode *root, const char *file,
    struct vp_model *m, struct vp_diags *d)
{
	const struct ynode *n = NULL, *rp = ynode_get(root, "rope_parameters");
	double f = 1;

	if (vp_family_info[vp_model_family(m)].rope_cat)
		return;
	if (rp != NULL && rp->kind == YN_MAP)
		n = ynode_get(rp, "partial_rotary_factor");
	if (n == NULL || ynode_is_null(n))
		n = ynode_get(root, "partial_rotary_factor");
	if (n == NULL || ynode_is_null(n) ||
	    ynode_double(n, file, "partial_rotary_factor", 0, 1, &f, d) != 0 ||
	    f == 1)
		return;
	vp_diag_add(d, file, n->pos, VP_ERROR,
	    "partial_rotary_factor %g (RoPE on part of each head) is not "
	    "modelled for the %s family; its rows rotate whole heads (partial "
	    "RoPE is lowered for the families that split and concatenate "
	    "the head: phi, gpt-neox)", f,
	    vp_family_names[vp_model_family(m)]);
}

/* A warning when the dropout keys of a family differ from the one
 * probability read (m->dropout), which is lowered at every site. */
static void
hf_dropout_sites(const struct ynode *root, const char *file,
    const char *const *keys, size_t nkeys, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	double o;
	size_t i;

	for (i = 0; i < nkeys; i++) {
		n = ynode_get(root, keys[i]);
		o = 0;
		if (n == NULL || ynode_is_null(n) ||
		    ynode_double(n, file, keys[i], 0, 0.99, &o, d) != 0 ||
		    o == m->dropout)
			continue;
		vp_diag_add(d, file, n->pos, VP_WARNING, "%s is %g where "
		    "the dropout read is %g: vramplan lowers one dropout "
		    "probability at every dropout site (embeddings, "
		    "attention, residual branches) and takes %g (--dropout "
		    "sets another)", keys[i], o, m->dropout, m->dropout);
		break;
	}
}

/*
 * Phi (transformers 5.24's PhiConfig, PhiAttention): partial RoPE with
 * PhiConfig's default factor 0.5.  qk_layernorm's per-head LayerNorms
 * are not modelled.  resid_pdrop is the dropout read (hf_dropout).
 */
static void
hf_phi(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	static const char *const drops[] = { "embd_pdrop",
	    "attention_dropout" };
	bool b;

	if (m->family != VP_FAMILY_PHI)
		return;
	if (hf_bool(root, file, "qk_layernorm", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "qk_layernorm")->pos,
		    VP_ERROR, "qk_layernorm: true is not modelled (Phi's "
		    "per-head LayerNorms on q and k were not measured)");
	hf_rotary(root, file, "partial_rotary_factor", 0.5, m, d);
	hf_dropout_sites(root, file, drops, VP_NELEM(drops), m, d);
}

/*
 * GPT-NeoX (transformers 5.24's GPTNeoXConfig): rotary_pct (default
 * 0.25) as the rotary factor; hidden_dropout is the dropout of the
 * embeddings and both branches (the generic keys do not name it);
 * use_parallel_residual: false (a sequential block) is not modelled.
 * attention_bias (default true) is read by hf_sizes.
 */
static void
hf_gpt_neox(const struct ynode *root, const char *file,
    struct vp_model *m, struct vp_diags *d)
{
	static const char *const drops[] = { "attention_dropout" };
	const struct ynode *n;
	bool b;

	if (m->family != VP_FAMILY_GPT_NEOX)
		return;
	if (hf_bool(root, file, "use_parallel_residual", &b, d) > 0 && !b)
		vp_diag_add(d, file, ynode_get(root,
		    "use_parallel_residual")->pos, VP_ERROR,
		    "use_parallel_residual: false (GPT-NeoX's sequential "
		    "block) is not modelled; only the parallel block was "
		    "measured");
	hf_rotary(root, file, "rotary_pct", 0.25, m, d);
	/* The class has no hidden_dropout_prob or attention_probs_dropout_prob
	 * (gpt-neox-20b's config carries them, unread): its default is 0. */
	m->dropout = 0;
	n = ynode_get(root, "hidden_dropout");
	if (n != NULL && !ynode_is_null(n))
		(void)ynode_double(n, file, "hidden_dropout", 0, 0.99,
		    &m->dropout, d);
	hf_dropout_sites(root, file, drops, VP_NELEM(drops), m, d);
}

/*
 * OPT (transformers 5.24's OPTConfig): ffn_dim is the MLP size,
 * enable_bias (default true) the linears' biases, dropout the residual
 * branches' (attention_dropout the probabilities'), and the position
 * table has max_position_embeddings + 2 rows (the family's row).  What
 * the pre-norm row does not describe is refused: OPT-350m's post-norm
 * block (do_layer_norm_before: false) and its project_in / project_out
 * (word_embed_proj_dim other than hidden_size), a removed final norm, and
 * LayerNorms without affine weights.
 */
static void
hf_opt(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	static const char *const drops[] = { "attention_dropout" };
	const struct ynode *n;
	uint64_t v = 0;
	bool b;

	if (m->family != VP_FAMILY_OPT)
		return;
	hf_u64(root, file, "ffn_dim", 1, MAX_FFN, &m->ffn, VP_F_FFN, m, d);
	if (hf_bool(root, file, "enable_bias", &b, d) > 0) {
		m->bias = b;
		m->qkv_bias = b;
		m->o_bias = b;
	}
	if (hf_bool(root, file, "do_layer_norm_before", &b, d) > 0 && !b)
		vp_diag_add(d, file, ynode_get(root,
		    "do_layer_norm_before")->pos, VP_ERROR,
		    "do_layer_norm_before: false (OPT-350m's post-norm "
		    "block) is not modelled");
	if (hf_u64(root, file, "word_embed_proj_dim", 1, MAX_HIDDEN, &v, -1,
	    m, d) > 0 && m->hidden && v != m->hidden)
		vp_diag_add(d, file, ynode_get(root, "word_embed_proj_dim")->pos,
		    VP_ERROR, "word_embed_proj_dim %llu differs from "
		    "hidden_size %llu: OPT's project_in and project_out are "
		    "not modelled", (unsigned long long)v,
		    (unsigned long long)m->hidden);
	if (hf_bool(root, file, "_remove_final_layer_norm", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root,
		    "_remove_final_layer_norm")->pos, VP_ERROR,
		    "_remove_final_layer_norm: true is not modelled");
	if (hf_bool(root, file, "layer_norm_elementwise_affine", &b, d) > 0 &&
	    !b)
		vp_diag_add(d, file, ynode_get(root,
		    "layer_norm_elementwise_affine")->pos, VP_ERROR,
		    "layer_norm_elementwise_affine: false is not modelled");
	/* OPTConfig's dropout default is 0.1. */
	n = ynode_get(root, "dropout");
	m->dropout = 0.1;
	if (n != NULL && !ynode_is_null(n))
		(void)ynode_double(n, file, "dropout", 0, 0.99, &m->dropout,
		    d);
	hf_dropout_sites(root, file, drops, VP_NELEM(drops), m, d);
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

/*
 * The stacks' sizes of BART and Whisper (configuration_bart.py,
 * configuration_whisper.py of transformers 5.24: d_model, encoder_* and
 * decoder_* keys, the config class's defaults for those left out).  The
 * lowering has one width, head count and MLP size for both stacks, so
 * configs whose encoder and decoder differ in them are refused, as are
 * LayerDrop (blocks skipped at random), an activation other than GELU and
 * an untied head (both classes tie it by default; untied was not
 * measured).  One dropout probability is lowered at every site: the
 * config's `dropout`, with a warning when attention_dropout or
 * activation_dropout differ.
 */
static void
hf_s2s_stacks(const struct ynode *root, const char *file, struct vp_model *m,
    const uint64_t def[6], struct vp_diags *d)
{
	static const char *const drops[] = { "attention_dropout",
	    "activation_dropout" };
	static const char *const zero[] = { "encoder_layerdrop",
	    "decoder_layerdrop" };
	uint64_t dh = def[2], df = def[3];
	const struct ynode *n;
	double v;
	size_t i;
	bool b;

	m->hidden = def[0];
	m->layers = m->dec_layers = def[1];
	m->heads = def[2];
	m->ffn = def[3];
	m->vocab = def[4];
	m->dropout = (double)def[5] / 100;
	hf_u64(root, file, "d_model", 1, MAX_HIDDEN, &m->hidden, VP_F_HIDDEN, m, d);
	hf_u64(root, file, "encoder_layers", 1, MAX_LAYERS, &m->layers, VP_F_LAYERS, m, d);
	hf_u64(root, file, "decoder_layers", 1, MAX_LAYERS, &m->dec_layers, -1, m, d);
	hf_u64(root, file, "encoder_attention_heads", 1, MAX_HEADS, &m->heads, VP_F_HEADS, m, d);
	hf_u64(root, file, "decoder_attention_heads", 1, MAX_HEADS, &dh, -1, m, d);
	hf_u64(root, file, "encoder_ffn_dim", 1, MAX_FFN, &m->ffn, VP_F_FFN, m, d);
	hf_u64(root, file, "decoder_ffn_dim", 1, MAX_FFN, &df, -1, m, d);
	hf_u64(root, file, "vocab_size", 1, MAX_VOCAB, &m->vocab, VP_F_VOCAB, m, d);
	m->kv_heads = m->heads;
	m->head_dim = m->heads ? m->hidden / m->heads : 0;
	if (dh != m->heads || df != m->ffn)
		vp_diag_add(d, file, root->pos, VP_ERROR, "the decoder's heads "
		    "(%llu) and MLP size (%llu) differ from the encoder's "
		    "(%llu, %llu): one width, head count and MLP size for "
		    "both stacks is what is modelled", (unsigned long long)dh,
		    (unsigned long long)df, (unsigned long long)m->heads,
		    (unsigned long long)m->ffn);
	else if (m->heads && m->hidden % m->heads != 0)
		vp_diag_add(d, file, root->pos, VP_ERROR, "d_model %llu is not "
		    "a multiple of the %llu attention heads (the class "
		    "refuses it)", (unsigned long long)m->hidden,
		    (unsigned long long)m->heads);
	if ((n = ynode_get(root, "dropout")) != NULL && !ynode_is_null(n))
		ynode_double(n, file, "dropout", 0, 0.99, &m->dropout, d);
	hf_dropout_sites(root, file, drops, VP_NELEM(drops), m, d);
	for (i = 0; i < VP_NELEM(zero); i++)
		if ((n = ynode_get(root, zero[i])) != NULL &&
		    !ynode_is_null(n) && ynode_double(n, file, zero[i], 0, 1,
		    &v, d) == 0 && v > 0)
			vp_diag_add(d, file, n->pos, VP_ERROR, "%s %g is not "
			    "modelled (LayerDrop skips blocks at random); "
			    "set it to 0", zero[i], v);
	if ((n = ynode_get(root, "activation_function")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "gelu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "activation_function "
		    "'%s' is not modelled for %s; 'gelu' (every published "
		    "checkpoint's) is", n->kind == YN_SCALAR ? n->str :
		    ynode_kind_name(n), vp_family_names[m->family]);
	m->act = VP_ACT_GELU;
	if (hf_bool(root, file, "tie_word_embeddings", &b, d) > 0 && !b)
		vp_diag_add(d, file, ynode_get(root,
		    "tie_word_embeddings")->pos, VP_ERROR,
		    "tie_word_embeddings: false is not modelled for %s (its "
		    "lm_head is the shared embedding in every published "
		    "checkpoint)", vp_family_names[m->family]);
	m->tie_embeddings = true;
	m->o_bias = 1;
}

/*
 * BART (BartConfig of 5.24: d_model 1024, 12 + 12 layers, 16 heads, MLP
 * 4096, vocab 50265, dropout 0.1, max_position_embeddings 1024).
 * scale_embedding multiplies the lookups by sqrt(d_model); the multiply
 * happens either way (BartScaledWordEmbedding: `* self.embed_scale`,
 * 1.0 when off), so it changes no memory and is not kept.
 */
static void
hf_bart(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	static const uint64_t def[6] = { 1024, 12, 16, 4096, 50265, 10 };

	if (m->family != VP_FAMILY_BART)
		return;
	hf_s2s_stacks(root, file, m, def, d);
	m->max_seq = 1024;
	hf_u64(root, file, "max_position_embeddings", 1, MAX_SEQ, &m->max_seq,
	    VP_F_MAX_SEQ, m, d);
}

/*
 * Whisper (WhisperConfig of 5.24: d_model 384, 4 + 4 layers, 6 heads,
 * MLP 1536, vocab 51865, 80 mel bins, 1500 source and 448 target
 * positions, dropout 0).  SpecAugment (apply_spec_augment, which masks
 * the input features in training) is not modelled.
 */
static void
hf_whisper(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	static const uint64_t def[6] = { 384, 4, 6, 1536, 51865, 0 };
	bool b;

	if (m->family != VP_FAMILY_WHISPER)
		return;
	hf_s2s_stacks(root, file, m, def, d);
	m->mel_bins = 80;
	m->max_seq = 1500;
	m->dec_max_seq = 448;
	hf_u64(root, file, "num_mel_bins", 1, MAX_HIDDEN, &m->mel_bins, -1, m, d);
	hf_u64(root, file, "max_source_positions", 1, MAX_SEQ, &m->max_seq,
	    VP_F_MAX_SEQ, m, d);
	hf_u64(root, file, "max_target_positions", 1, MAX_SEQ,
	    &m->dec_max_seq, -1, m, d);
	if (hf_bool(root, file, "apply_spec_augment", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root,
		    "apply_spec_augment")->pos, VP_ERROR, "apply_spec_augment: "
		    "true (SpecAugment's masks of the input features) is not "
		    "modelled");
	if (hf_bool(root, file, "use_weighted_layer_sum", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root,
		    "use_weighted_layer_sum")->pos, VP_ERROR,
		    "use_weighted_layer_sum (the audio classification head) "
		    "is not modelled");
}

/* A bool key of a ModernBERT config that must keep the class's default
 * `want` (the only layout modelled); an error naming it otherwise. */
static void
hf_modernbert_flag(const struct ynode *root, const char *file,
    const char *key, bool want, const char *what, struct vp_diags *d)
{
	bool b;

	if (hf_bool(root, file, key, &b, d) > 0 && b != want)
		vp_diag_add(d, file, ynode_get(root, key)->pos, VP_ERROR,
		    "%s: %s (%s) is not modelled; ModernBERT's released "
		    "configs have %s", key, b ? "true" : "false", what,
		    want ? "true" : "false");
}

/*
 * ModernBERT (configuration_modernbert.py, modeling_modernbert.py of
 * transformers 5.24): local_attention (default 128) is the whole window,
 * config.sliding_window its half (what the masks and the sdpa skip test
 * use), the window read; layer l (from 0) is global when l is a multiple
 * of global_attn_every_n_layers (default 3), which layer_types, when
 * given, must follow; attention_bias puts biases on Wqkv and Wo only
 * (hf_sizes sets qkv_bias; Wo follows it here, not mlp_bias).  Refused:
 * norm_bias, classifier_bias, sparse_prediction (the head on the masked
 * rows only) and an unbiased decoder, none of which a released config
 * has.  The dropout read is the first non-zero of attention_dropout,
 * mlp_dropout and embedding_dropout (rules.c refuses any but 0).
 */
static void
hf_modernbert(const struct ynode *root, const char *file,
    struct vp_model *m, struct vp_diags *d)
{
	static const char *const drops[] = { "attention_dropout",
	    "mlp_dropout", "embedding_dropout" };
	const struct ynode *n;
	uint64_t v = 128;
	size_t i, second = 0;

	if (m->family != VP_FAMILY_MODERNBERT)
		return;
	m->o_bias = m->qkv_bias;
	hf_modernbert_flag(root, file, "norm_bias", false,
	    "biased LayerNorms", d);
	hf_modernbert_flag(root, file, "classifier_bias", false,
	    "a biased MLM head dense", d);
	hf_modernbert_flag(root, file, "decoder_bias", true,
	    "an MLM decoder without bias", d);
	hf_modernbert_flag(root, file, "sparse_prediction", false,
	    "logits of the masked tokens only", d);
	m->dropout = 0;
	for (i = 0; i < VP_NELEM(drops) && m->dropout == 0; i++)
		if ((n = ynode_get(root, drops[i])) != NULL &&
		    !ynode_is_null(n))
			(void)ynode_double(n, file, drops[i], 0, 0.99,
			    &m->dropout, d);
	(void)hf_u64(root, file, "local_attention", 2, MAX_SEQ, &v, -1, m, d);
	m->window = v / 2;
	v = 3;
	(void)hf_u64(root, file, "global_attn_every_n_layers", 1, MAX_LAYERS,
	    &v, -1, m, d);
	m->global_every = (uint32_t)v;
	n = ynode_get(root, "layer_types");
	if (n == NULL || ynode_is_null(n) ||
	    ynode_want(n, YN_SEQ, file, "layer_types", d) != 0)
		return;
	if (n->nkids != m->layers) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "layer_types lists %zu "
		    "layers; num_hidden_layers is %llu", n->nkids,
		    (unsigned long long)m->layers);
		return;
	}
	for (i = 0; i < n->nkids; i++) {
		const struct ynode *k = n->kids[i];

		if (k->kind != YN_SCALAR || (strcmp(k->str,
		    "sliding_attention") != 0 && strcmp(k->str,
		    "full_attention") != 0)) {
			vp_diag_add(d, file, k->pos, VP_ERROR, "layer_types: "
			    "expected 'sliding_attention' or "
			    "'full_attention'");
			return;
		}
		if (i > 0 && second == 0 && !strcmp(k->str, "full_attention"))
			second = i;
	}
	/* One global layer (the first): every other one is local. */
	m->global_every = (uint32_t)(second ? second : n->nkids);
	for (i = 0; i < n->nkids; i++)
		if ((strcmp(n->kids[i]->str, "full_attention") == 0) !=
		    (i % m->global_every == 0)) {
			vp_diag_add(d, file, n->kids[i]->pos, VP_ERROR,
			    "layer_types: layer %zu breaks the pattern of a "
			    "global layer every %u from layer 0 "
			    "(ModernBERT's); other orders are not modelled",
			    i, m->global_every);
			return;
		}
}

/* A DeBERTa config key whose value is not the layout modelled. */
static void
hf_deberta_refuse(const struct ynode *root, const char *file,
    const char *key, const char *what, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(root, key);

	vp_diag_add(d, file, n != NULL ? n->pos : root->pos, VP_ERROR,
	    "%s is not modelled for DeBERTa (model_type deberta-v2); "
	    "DeBERTa-v3's layout is modelled: relative_attention true, "
	    "pos_att_type p2c|c2p, share_att_key true, norm_rel_ebd "
	    "layer_norm, no conv layer, the legacy MLM head", what);
}

/*
 * DeBERTa-v2 / v3 (configuration_deberta_v2.py, modeling_deberta_v2.py
 * of transformers 5.24): position_biased_input (default true) adds the
 * absolute position table; the attention span is position_buckets when
 * positive, else max_relative_positions, else max_position_embeddings
 * (2 x span relative embeddings).  What the lowering does not describe
 * is refused: relative_attention false, a pos_att_type other than c2p
 * and p2c, share_att_key false (separate pos_key_proj, pos_query_proj),
 * norm_rel_ebd without layer_norm, conv_kernel_size (DeBERTa-v2's
 * ConvLayer), embedding_size other than hidden_size (embed_proj), an
 * attention_head_size other than hidden / heads, legacy false (the other
 * MLM head).  hidden_dropout_prob is the dropout read; rules.c refuses
 * any but 0.
 */
static void
hf_deberta(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	uint64_t v = 0;
	bool b, c2p = false, p2c = false;
	size_t i;

	if (m->family != VP_FAMILY_DEBERTA_V2)
		return;
	m->o_bias = 1;
	m->pos = VP_POS_LEARNED;
	if (hf_bool(root, file, "position_biased_input", &b, d) > 0 && !b)
		m->pos = VP_POS_NONE;
	if (!(hf_bool(root, file, "relative_attention", &b, d) > 0 && b))
		hf_deberta_refuse(root, file, "relative_attention",
		    "attention without relative positions "
		    "(relative_attention false, DebertaV2Config's default)", d);
	if (!(hf_bool(root, file, "share_att_key", &b, d) > 0 && b))
		hf_deberta_refuse(root, file, "share_att_key",
		    "share_att_key false (pos_key_proj, pos_query_proj)", d);
	n = ynode_get(root, "pos_att_type");
	if (n != NULL && n->kind == YN_SCALAR && !ynode_is_null(n)) {
		c2p = strstr(n->str, "c2p") != NULL;
		p2c = strstr(n->str, "p2c") != NULL;
	} else if (n != NULL && n->kind == YN_SEQ) {
		for (i = 0; i < n->nkids; i++)
			if (n->kids[i]->kind == YN_SCALAR) {
				c2p |= !strcmp(n->kids[i]->str, "c2p");
				p2c |= !strcmp(n->kids[i]->str, "p2c");
			}
	}
	if (!c2p || !p2c)
		hf_deberta_refuse(root, file, "pos_att_type",
		    "a pos_att_type without both c2p and p2c", d);
	n = ynode_get(root, "norm_rel_ebd");
	if (n == NULL || n->kind != YN_SCALAR || ynode_is_null(n) ||
	    strstr(n->str, "layer_norm") == NULL)
		hf_deberta_refuse(root, file, "norm_rel_ebd",
		    "relative embeddings without their LayerNorm", d);
	if (hf_u64(root, file, "conv_kernel_size", 0, MAX_HEADS, &v, -1, m,
	    d) > 0 && v > 0)
		hf_deberta_refuse(root, file, "conv_kernel_size",
		    "DeBERTa-v2's ConvLayer (conv_kernel_size)", d);
	v = 0;
	if (hf_u64(root, file, "embedding_size", 1, MAX_HIDDEN, &v, -1, m,
	    d) > 0 && m->hidden && v != m->hidden)
		hf_deberta_refuse(root, file, "embedding_size",
		    "an embedding_size other than hidden_size (embed_proj)", d);
	v = 0;
	if (hf_u64(root, file, "attention_head_size", 1, MAX_HIDDEN, &v, -1,
	    m, d) > 0 && m->heads && v * m->heads != m->hidden)
		hf_deberta_refuse(root, file, "attention_head_size",
		    "an attention_head_size other than hidden_size / "
		    "num_attention_heads", d);
	if (hf_bool(root, file, "legacy", &b, d) > 0 && !b)
		hf_deberta_refuse(root, file, "legacy",
		    "legacy false (DebertaV2OnlyMLMHead's matmul head)", d);
	v = 0;
	if (hf_u64(root, file, "z_steps", 0, MAX_LAYERS, &v, -1, m, d) > 0 &&
	    v > 1)
		hf_deberta_refuse(root, file, "z_steps",
		    "z_steps above 1 (the enhanced mask decoder's re-runs)", d);
	/* The span: position_buckets, max_relative_positions, else
	 * max_position_embeddings (DebertaV2Config's 512). */
	if (m->max_seq == 0)
		m->max_seq = 512;
	m->rel_buckets = m->max_seq;
	n = ynode_get(root, "max_relative_positions");
	if (n != NULL && n->kind == YN_SCALAR && !ynode_is_null(n) &&
	    strtol(n->str, NULL, 10) >= 1)
		(void)hf_u64(root, file, "max_relative_positions", 1, MAX_SEQ,
		    &m->rel_buckets, -1, m, d);
	n = ynode_get(root, "position_buckets");
	if (n != NULL && n->kind == YN_SCALAR && !ynode_is_null(n) &&
	    strtol(n->str, NULL, 10) >= 1)
		(void)hf_u64(root, file, "position_buckets", 1, MAX_SEQ,
		    &m->rel_buckets, -1, m, d);
}

/*
 * ViT (ViTConfig, v5.24): image_size 224, patch_size 16, num_channels 3,
 * qkv_bias true by default; no vocabulary: `vocab` is the classifier's
 * classes, num_labels, which PretrainedConfig derives from id2label (2
 * when neither is given).  The position table is the image's, not
 * max_position_embeddings.
 */
static void
hf_vit(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	bool b;

	if (m->family != VP_FAMILY_VIT)
		return;
	m->vis.image = 224;
	m->vis.patch = 16;
	m->vis.channels = 3;
	m->hidden = 768;
	m->layers = 12;
	m->heads = 12;
	m->ffn = 3072;
	m->vocab = 2;
	m->max_seq = 0;
	hf_u64(root, file, "hidden_size", 1, MAX_HIDDEN, &m->hidden, VP_F_HIDDEN, m, d);
	hf_u64(root, file, "num_hidden_layers", 1, MAX_LAYERS, &m->layers, VP_F_LAYERS, m, d);
	hf_u64(root, file, "num_attention_heads", 1, MAX_HEADS, &m->heads, VP_F_HEADS, m, d);
	hf_u64(root, file, "intermediate_size", 1, MAX_FFN, &m->ffn, VP_F_FFN, m, d);
	hf_u64(root, file, "image_size", 1, MAX_IMAGE, &m->vis.image, -1, m, d);
	hf_u64(root, file, "patch_size", 1, MAX_IMAGE, &m->vis.patch, -1, m, d);
	hf_u64(root, file, "num_channels", 1, MAX_HEADS, &m->vis.channels, -1, m, d);
	if ((n = ynode_get(root, "id2label")) != NULL && n->kind == YN_MAP &&
	    n->nkids > 0)
		m->vocab = n->nkids / 2;	/* keys and values */
	hf_u64(root, file, "num_labels", 1, MAX_VOCAB, &m->vocab, VP_F_VOCAB, m, d);
	m->qkv_bias = true;
	if (hf_bool(root, file, "qkv_bias", &b, d) > 0)
		m->qkv_bias = b;
	m->bias = true;
	m->o_bias = -1;
	m->kv_heads = m->heads;
	m->tie_embeddings = false;
	/* hidden_dropout_prob (embeddings and both branches) and
	 * attention_probs_dropout_prob, 0.0 by default. */
	m->dropout = 0;
	hf_dropout(root, file, m, d);
	if ((n = ynode_get(root, "attention_probs_dropout_prob")) != NULL &&
	    !ynode_is_null(n)) {
		double pa;

		if (ynode_double(n, file, "attention_probs_dropout_prob", 0,
		    0.99, &pa, d) == 0 && pa != m->dropout)
			vp_diag_add(d, file, n->pos, VP_ERROR,
			    "attention_probs_dropout_prob (%g) differs from "
			    "hidden_dropout_prob (%g); vramplan models one "
			    "dropout probability for a ViT", pa, m->dropout);
	}
}

/* An activation of CLIP's towers: quick_gelu, gelu, gelu_pytorch_tanh,
 * relu; anything else is an error. */
static void
hf_clip_act(const struct ynode *root, const char *file, enum vp_act *act,
    struct vp_diags *d)
{
	const struct ynode *n = ynode_get(root, "hidden_act");

	if (n == NULL || ynode_is_null(n))
		return;
	if (n->kind == YN_SCALAR && !strcmp(n->str, "quick_gelu"))
		*act = VP_ACT_QUICK_GELU;
	else if (n->kind == YN_SCALAR && !strcmp(n->str, "gelu"))
		*act = VP_ACT_GELU;
	else if (n->kind == YN_SCALAR && !strcmp(n->str, "gelu_pytorch_tanh"))
		*act = VP_ACT_GELU_TANH;
	else if (n->kind == YN_SCALAR && !strcmp(n->str, "relu"))
		*act = VP_ACT_RELU;
	else
		vp_diag_add(d, file, n->pos, VP_ERROR, "hidden_act '%s' is "
		    "not modelled for CLIP (quick_gelu, gelu, "
		    "gelu_pytorch_tanh, relu)", n->kind == YN_SCALAR ? n->str :
		    ynode_kind_name(n));
}

/* A CLIP tower's dropout (`dropout`, `attention_dropout`): none is
 * modelled. */
static void
hf_clip_dropout(const struct ynode *root, const char *file,
    struct vp_diags *d)
{
	static const char *const keys[] = { "dropout", "attention_dropout" };
	const struct ynode *n;
	double p;
	size_t i;

	for (i = 0; i < VP_NELEM(keys); i++)
		if ((n = ynode_get(root, keys[i])) != NULL &&
		    !ynode_is_null(n) && ynode_double(n, file, keys[i], 0, 0.99,
		    &p, d) == 0 && p != 0)
			vp_diag_add(d, file, n->pos, VP_ERROR, "%s %g is not "
			    "modelled for CLIP (its configs have 0.0)", keys[i],
			    p);
}

/*
 * CLIP (CLIPConfig, transformers 5.24): the text tower from text_config
 * (CLIPTextConfig's defaults: hidden 512, 12 layers, 8 heads, MLP 2048,
 * vocab 49408, 77 positions, quick_gelu), the vision tower from
 * vision_config (CLIPVisionConfig's: hidden 768, 12 layers, 12 heads, MLP
 * 3072, 224 pixels in patches of 32, 3 channels, quick_gelu) and
 * projection_dim (512).  Every linear but the projections has a bias.
 */
static int
read_clip(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *tc = ynode_get(root, "text_config");
	const struct ynode *vc = ynode_get(root, "vision_config");
	const struct ynode *n;
	size_t before = vp_diags_count(d, VP_ERROR);
	struct vp_vision *v = &m->vis;
	static const struct ynode empty = { .kind = YN_MAP };

	m->family = VP_FAMILY_CLIP;
	m->arch = VP_ARCH_ENCODER;
	m->norm = VP_NORM_LAYERNORM;
	m->pos = VP_POS_LEARNED;
	m->act = VP_ACT_QUICK_GELU;
	m->bias = true;
	m->qkv_bias = true;
	m->tie_embeddings = false;
	m->hidden = 512;
	m->layers = 12;
	m->heads = 8;
	m->ffn = 2048;
	m->vocab = 49408;
	m->max_seq = 77;
	v->hidden = 768;
	v->layers = 12;
	v->heads = 12;
	v->ffn = 3072;
	v->image = 224;
	v->patch = 32;
	v->channels = 3;
	v->proj = 512;
	v->act = VP_ACT_QUICK_GELU;
	m->name = xstrdup("clip");
	if ((n = ynode_get(root, "_name_or_path")) != NULL &&
	    n->kind == YN_SCALAR && n->str[0])
		{ free(m->name); m->name = xstrdup(n->str); }
	hf_u64(root, file, "projection_dim", 1, MAX_HIDDEN, &v->proj, -1, m, d);
	if (tc == NULL || ynode_is_null(tc))
		tc = &empty;
	if (vc == NULL || ynode_is_null(vc))
		vc = &empty;
	if (tc->kind != YN_MAP || vc->kind != YN_MAP) {
		vp_diag_add(d, file, (tc->kind != YN_MAP ? tc : vc)->pos,
		    VP_ERROR, "'text_config' and 'vision_config' of a CLIP "
		    "config must be mappings of keys");
		return -1;
	}
	hf_u64(tc, file, "hidden_size", 1, MAX_HIDDEN, &m->hidden, VP_F_HIDDEN, m, d);
	hf_u64(tc, file, "num_hidden_layers", 1, MAX_LAYERS, &m->layers, VP_F_LAYERS, m, d);
	hf_u64(tc, file, "num_attention_heads", 1, MAX_HEADS, &m->heads, VP_F_HEADS, m, d);
	hf_u64(tc, file, "intermediate_size", 1, MAX_FFN, &m->ffn, VP_F_FFN, m, d);
	hf_u64(tc, file, "vocab_size", 1, MAX_VOCAB, &m->vocab, VP_F_VOCAB, m, d);
	hf_u64(tc, file, "max_position_embeddings", 1, MAX_SEQ, &m->max_seq, VP_F_MAX_SEQ, m, d);
	hf_clip_act(tc, file, &m->act, d);
	hf_clip_dropout(tc, file, d);
	hf_u64(vc, file, "hidden_size", 1, MAX_HIDDEN, &v->hidden, -1, m, d);
	hf_u64(vc, file, "num_hidden_layers", 1, MAX_LAYERS, &v->layers, -1, m, d);
	hf_u64(vc, file, "num_attention_heads", 1, MAX_HEADS, &v->heads, -1, m, d);
	hf_u64(vc, file, "intermediate_size", 1, MAX_FFN, &v->ffn, -1, m, d);
	hf_u64(vc, file, "image_size", 1, MAX_IMAGE, &v->image, -1, m, d);
	hf_u64(vc, file, "patch_size", 1, MAX_IMAGE, &v->patch, -1, m, d);
	hf_u64(vc, file, "num_channels", 1, MAX_HEADS, &v->channels, -1, m, d);
	hf_clip_act(vc, file, &v->act, d);
	hf_clip_dropout(vc, file, d);
	m->kv_heads = m->heads;
	return vp_diags_count(d, VP_ERROR) == before ? 0 : -1;
}

/*
 * LLaVA (LlavaConfig, transformers 5.24): the CLIP vision tower of
 * vision_config (CLIPVisionConfig's defaults: hidden 768, 12 layers, 12
 * heads, MLP 3072, 224 pixels in patches of 32, quick_gelu), frozen as
 * LLaVA-1.5 trains it; vision_feature_select_strategy "default" (the
 * class token dropped: one image token per patch); a GELU projector with
 * biases.  What is not modelled is refused: the "full" strategy, several
 * feature layers, another projector activation, no projector bias, and a
 * vision tower that is not CLIP's.
 */
static void
hf_llava(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *vc = ynode_get(root, "vision_config"), *n;
	struct vp_vision *v = &m->vis;
	bool b;

	v->llava = true;
	v->hidden = 768;
	v->layers = 12;
	v->heads = 12;
	v->ffn = 3072;
	v->image = 224;
	v->patch = 32;
	v->channels = 3;
	v->act = VP_ACT_QUICK_GELU;
	if ((n = ynode_get(root, "vision_feature_select_strategy")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "default") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "vision_feature_"
		    "select_strategy '%s' is not modelled; LLaVA's is "
		    "'default' (the class token dropped)", n->kind == YN_SCALAR ?
		    n->str : ynode_kind_name(n));
	if ((n = ynode_get(root, "vision_feature_layer")) != NULL &&
	    !ynode_is_null(n) && n->kind != YN_SCALAR)
		vp_diag_add(d, file, n->pos, VP_ERROR, "several "
		    "vision_feature_layer values (concatenated features) are "
		    "not modelled; give one layer");
	if ((n = ynode_get(root, "projector_hidden_act")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "gelu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "projector_hidden_act "
		    "'%s' is not modelled; LLaVA's projector is gelu",
		    n->kind == YN_SCALAR ? n->str : ynode_kind_name(n));
	if (hf_bool(root, file, "multimodal_projector_bias", &b, d) > 0 && !b)
		vp_diag_add(d, file, ynode_get(root,
		    "multimodal_projector_bias")->pos, VP_ERROR,
		    "a projector without biases is not modelled");
	if (vc == NULL || ynode_is_null(vc))
		return;
	if (vc->kind != YN_MAP) {
		vp_diag_add(d, file, vc->pos, VP_ERROR, "'vision_config' must "
		    "be a mapping of keys");
		return;
	}
	if ((n = ynode_get(vc, "model_type")) != NULL && !ynode_is_null(n) &&
	    (n->kind != YN_SCALAR || strcmp(n->str, "clip_vision_model") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "a LLaVA vision tower "
		    "of model_type '%s' is not modelled; CLIP's "
		    "('clip_vision_model') is", n->kind == YN_SCALAR ? n->str :
		    ynode_kind_name(n));
	hf_u64(vc, file, "hidden_size", 1, MAX_HIDDEN, &v->hidden, -1, m, d);
	hf_u64(vc, file, "num_hidden_layers", 1, MAX_LAYERS, &v->layers, -1, m, d);
	hf_u64(vc, file, "num_attention_heads", 1, MAX_HEADS, &v->heads, -1, m, d);
	hf_u64(vc, file, "intermediate_size", 1, MAX_FFN, &v->ffn, -1, m, d);
	hf_u64(vc, file, "image_size", 1, MAX_IMAGE, &v->image, -1, m, d);
	hf_u64(vc, file, "patch_size", 1, MAX_IMAGE, &v->patch, -1, m, d);
	hf_u64(vc, file, "num_channels", 1, MAX_HEADS, &v->channels, -1, m, d);
	hf_clip_act(vc, file, &v->act, d);
	hf_clip_dropout(vc, file, d);
}

/*
 * GPT-J (transformers 5.24's GPTJConfig): rotary_dim (default 64) dims of
 * each head rotate; null (the whole head, without the cat) is not
 * modelled.  q, k, v and out_proj have no bias, fc_in, fc_out and
 * lm_head do.  resid_pdrop is the dropout read (hf_dropout).
 */
static void
hf_gptj(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	static const char *const drops[] = { "embd_pdrop", "attn_pdrop" };
	const struct ynode *n;

	if (m->family != VP_FAMILY_GPTJ)
		return;
	m->o_bias = 0;
	m->rotary_dim = 64;
	n = ynode_get(root, "rotary_dim");
	if (n != NULL && ynode_is_null(n))
		vp_diag_add(d, file, n->pos, VP_ERROR, "rotary_dim: null "
		    "(RoPE over the whole head, without the cat) is not "
		    "modelled; give the rotated dims, even, 2 to head_dim");
	else
		hf_u64(root, file, "rotary_dim", 2, MAX_HEADS, &m->rotary_dim,
		    VP_F_ROTARY_DIM, m, d);
	hf_dropout_sites(root, file, drops, VP_NELEM(drops), m, d);
}

/*
 * Falcon (transformers 5.24's FalconConfig): n_embed for hidden_size,
 * ffn_hidden_size (null: 4 hidden), num_kv_heads (null: the heads);
 * new_decoder_architecture (kv groups, num_ln_in_parallel_attn null = 2
 * norms), else multi_query (default true: one kv head) or one group per
 * head, with parallel_attn.  Refused: alibi (Falcon-RW's positions), the
 * sequential block (parallel_attn false), bias (FalconLinear's separate
 * bias add), an activation other than gelu, and the layouts the class
 * itself cannot run.  hidden_dropout is the dropout read.
 */
static void
hf_falcon(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	static const char *const drops[] = { "attention_dropout" };
	const struct ynode *n;
	bool newarch = false, mq = true, par = true, b;
	uint64_t kv = 0, nln = 0;

	if (m->family != VP_FAMILY_FALCON)
		return;
	hf_u64(root, file, "n_embed", 1, MAX_HIDDEN, &m->hidden, VP_F_HIDDEN,
	    m, d);
	hf_u64(root, file, "ffn_hidden_size", 1, MAX_FFN, &m->ffn, VP_F_FFN,
	    m, d);
	if (m->ffn == 0 && m->hidden != 0)
		m->ffn = 4 * m->hidden;
	hf_u64(root, file, "num_kv_heads", 1, MAX_HEADS, &kv, VP_F_KV_HEADS,
	    m, d);
	(void)hf_bool(root, file, "new_decoder_architecture", &newarch, d);
	(void)hf_bool(root, file, "multi_query", &mq, d);
	(void)hf_bool(root, file, "parallel_attn", &par, d);
	hf_u64(root, file, "num_ln_in_parallel_attn", 1, 2, &nln, -1, m, d);
	if (hf_bool(root, file, "alibi", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "alibi")->pos, VP_ERROR,
		    "alibi: true (ALiBi positions, Falcon-RW) is not "
		    "modelled; Falcon is modelled with RoPE (alibi: false)");
	if (hf_bool(root, file, "bias", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "bias")->pos, VP_ERROR,
		    "bias: true (FalconLinear's bias added after the matmul) "
		    "is not modelled; Falcon is modelled without biases");
	n = ynode_get(root, "activation");
	if (n != NULL && !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "gelu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "activation '%s' is "
		    "not modelled for Falcon; its models use 'gelu'",
		    n->kind == YN_SCALAR ? n->str : ynode_kind_name(n));
	m->act = VP_ACT_GELU;
	m->bias = false;
	if (newarch) {
		m->kv_heads = kv ? kv : m->heads;
		m->qkv_split = VP_QKV_GROUPS;
		m->par_norms = nln == 1 ? 1 : 2;
		if (m->kv_heads == m->heads || (m->kv_heads &&
		    m->heads % m->kv_heads != 0))
			vp_diag_add(d, file, root->pos, VP_ERROR, "the new "
			    "decoder architecture is modelled with fewer kv "
			    "heads (num_kv_heads) than heads, dividing them");
	} else if (!par) {
		vp_diag_add(d, file, ynode_get(root, "parallel_attn")->pos,
		    VP_ERROR, "parallel_attn: false (the sequential block) "
		    "is not modelled; Falcon is modelled with parallel "
		    "attention or the new decoder architecture");
	} else if (nln == 2) {
		vp_diag_add(d, file, ynode_get(root,
		    "num_ln_in_parallel_attn")->pos, VP_ERROR,
		    "num_ln_in_parallel_attn: 2 without the new decoder "
		    "architecture (the class's forward has no "
		    "input_layernorm then) is not modelled");
	} else if (mq) {
		m->kv_heads = 1;
		m->qkv_split = VP_QKV_MULTI_QUERY;
	} else {
		m->kv_heads = m->heads;
		m->qkv_split = VP_QKV_VIEWS;
	}
	m->dropout = 0;
	n = ynode_get(root, "hidden_dropout");
	if (n != NULL && !ynode_is_null(n))
		(void)ynode_double(n, file, "hidden_dropout", 0, 0.99,
		    &m->dropout, d);
	hf_dropout_sites(root, file, drops, VP_NELEM(drops), m, d);
}

/*
 * Cohere (transformers 5.24's CohereConfig): use_qk_norm (Command R+'s
 * per-head LayerNorms of q and k) and attention_bias are not modelled;
 * attention_dropout is the dropout read (the class has no other).
 */
static void
hf_cohere(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	bool b;

	if (m->family != VP_FAMILY_COHERE)
		return;
	if (hf_bool(root, file, "use_qk_norm", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "use_qk_norm")->pos,
		    VP_ERROR, "use_qk_norm: true (Command R+'s LayerNorms of "
		    "q and k per head) is not modelled");
	if (hf_bool(root, file, "attention_bias", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "attention_bias")->pos,
		    VP_ERROR, "attention_bias: true is not modelled for "
		    "Cohere; its models have no biases");
	m->bias = false;
	m->qkv_bias = m->o_bias = 0;
	m->dropout = 0;
	n = ynode_get(root, "attention_dropout");
	if (n != NULL && !ynode_is_null(n))
		(void)ynode_double(n, file, "attention_dropout", 0, 0.99,
		    &m->dropout, d);
}

/*
 * Mamba2Config (transformers 5.24): its defaults, then num_heads,
 * head_dim, state_size, n_groups, conv_kernel, expand, chunk_size,
 * use_bias, use_conv_bias, residual_in_fp32.  The mixer's inner width
 * int(expand x hidden) must be num_heads x head_dim (the class checks
 * it too); hidden_act is the conv's activation, silu in every config and
 * the only one lowered.  The model's heads, head_dim and ffn are the
 * SSM's heads, head dim and inner width.
 */
static void
hf_mamba2(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	uint64_t expand = 2;
	bool b;

	if (m->family != VP_FAMILY_MAMBA2)
		return;
	m->heads = 128;
	m->head_dim = 64;
	if (ynode_get(root, "vocab_size") == NULL)
		m->vocab = 32768;
	if (ynode_get(root, "hidden_size") == NULL)
		m->hidden = 4096;
	if (ynode_get(root, "num_hidden_layers") == NULL)
		m->layers = 64;
	m->ssm = (struct vp_ssm){ .state = 128, .groups = 8, .conv_kernel = 4,
	    .chunk = 256, .conv_bias = true, .residual_fp32 = true };
	m->bias = false;
	m->max_seq = 0;
	hf_u64(root, file, "num_heads", 1, MAX_HEADS, &m->heads, VP_F_HEADS, m, d);
	hf_u64(root, file, "head_dim", 1, MAX_HEADS, &m->head_dim, VP_F_HEAD_DIM, m, d);
	hf_u64(root, file, "state_size", 1, MAX_HEADS, &m->ssm.state, -1, m, d);
	hf_u64(root, file, "n_groups", 1, MAX_HEADS, &m->ssm.groups, -1, m, d);
	hf_u64(root, file, "conv_kernel", 1, MAX_HEADS, &m->ssm.conv_kernel, -1, m, d);
	hf_u64(root, file, "chunk_size", 1, MAX_SEQ, &m->ssm.chunk, -1, m, d);
	hf_u64(root, file, "expand", 1, MAX_HEADS, &expand, VP_F_FFN, m, d);
	if (hf_bool(root, file, "use_bias", &b, d) > 0)
		m->bias = b;
	if (hf_bool(root, file, "use_conv_bias", &b, d) > 0)
		m->ssm.conv_bias = b;
	if (hf_bool(root, file, "residual_in_fp32", &b, d) > 0)
		m->ssm.residual_fp32 = b;
	m->kv_heads = m->heads;
	m->qkv_bias = m->o_bias = m->bias;
	m->ffn = vp_mul_sat(expand, m->hidden);
	if (m->ffn != vp_mul_sat(m->heads, m->head_dim))
		vp_diag_add(d, file, m->where[VP_F_FFN], VP_ERROR,
		    "expand x hidden_size (%llu x %llu) must equal "
		    "num_heads x head_dim (%llu x %llu): the mixer's inner "
		    "width", (unsigned long long)expand,
		    (unsigned long long)m->hidden,
		    (unsigned long long)m->heads,
		    (unsigned long long)m->head_dim);
	if ((n = ynode_get(root, "hidden_act")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "silu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "hidden_act '%s' is "
		    "not modelled for mamba2; the conv1d's activation is "
		    "'silu' in Mamba2Config and every released config",
		    n->kind == YN_SCALAR ? n->str : ynode_kind_name(n));
}

/*
 * BambaConfig (transformers 5.24): mamba_n_heads (128), mamba_d_head
 * ("auto": mamba_expand x hidden_size / mamba_n_heads), mamba_n_groups
 * (1), mamba_d_state (256), mamba_d_conv (4), mamba_expand (2),
 * mamba_chunk_size (256), mamba_conv_bias (true), mamba_proj_bias
 * (false), attn_layer_indices (the attention blocks; none: every block
 * Mamba-2); partial_rotary_factor is 0.5 whatever the config says (the
 * class hardcodes it), head_dim hidden / heads.  The sizes it leaves out
 * are its defaults (hidden 4096, 32 layers, 32 heads, 8 KV heads,
 * intermediate 14336, vocab 128000).  A z_loss_coefficient other than 0
 * (an extra logsumexp of the logits) is not modelled.
 */
static void
hf_bamba(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	struct vp_ssm *q = &m->ssm;
	uint64_t expand = 2, v;
	double zl;
	bool b;
	size_t i;

	if (m->family != VP_FAMILY_BAMBA)
		return;
	if (ynode_get(root, "hidden_size") == NULL) m->hidden = 4096;
	if (ynode_get(root, "num_hidden_layers") == NULL) m->layers = 32;
	if (ynode_get(root, "num_attention_heads") == NULL) m->heads = 32;
	if (ynode_get(root, "num_key_value_heads") == NULL) m->kv_heads = 8;
	if (ynode_get(root, "intermediate_size") == NULL) m->ffn = 14336;
	if (ynode_get(root, "vocab_size") == NULL) m->vocab = 128000;
	*q = (struct vp_ssm){ .heads = 128, .groups = 1, .state = 256,
	    .conv_kernel = 4, .chunk = 256, .conv_bias = true };
	m->max_seq = 0;
	hf_u64(root, file, "mamba_n_heads", 1, MAX_HEADS, &q->heads, -1, m, d);
	hf_u64(root, file, "mamba_n_groups", 1, MAX_HEADS, &q->groups, -1, m, d);
	hf_u64(root, file, "mamba_d_state", 1, MAX_HEADS, &q->state, -1, m, d);
	hf_u64(root, file, "mamba_d_conv", 1, MAX_HEADS, &q->conv_kernel, -1, m, d);
	hf_u64(root, file, "mamba_expand", 1, MAX_HEADS, &expand, -1, m, d);
	hf_u64(root, file, "mamba_chunk_size", 1, MAX_SEQ, &q->chunk, -1, m, d);
	if (hf_bool(root, file, "mamba_conv_bias", &b, d) > 0)
		q->conv_bias = b;
	if (hf_bool(root, file, "mamba_proj_bias", &b, d) > 0)
		q->proj_bias = b;
	n = ynode_get(root, "mamba_d_head");
	if (n != NULL && !ynode_is_null(n) && !(n->kind == YN_SCALAR &&
	    strcmp(n->str, "auto") == 0))
		hf_u64(root, file, "mamba_d_head", 1, MAX_HEADS, &q->head_dim,
		    -1, m, d);
	else if (q->heads)
		q->head_dim = expand * m->hidden / q->heads;
	if (q->heads * q->head_dim != expand * m->hidden)
		vp_diag_add(d, file, root->pos, VP_ERROR, "mamba_n_heads x "
		    "mamba_d_head (%llu x %llu) must be mamba_expand x "
		    "hidden_size (%llu x %llu)", (unsigned long long)q->heads,
		    (unsigned long long)q->head_dim,
		    (unsigned long long)expand, (unsigned long long)m->hidden);
	n = ynode_get(root, "attn_layer_indices");
	if (n != NULL && !ynode_is_null(n)) {
		if (ynode_want(n, YN_SEQ, file, "attn_layer_indices", d) != 0)
			return;
		for (i = 0; i < n->nkids; i++) {
			if (ynode_u64(n->kids[i], file, "attn_layer_indices", 0,
			    MAX_LAYERS, &v, d) != 0)
				return;
			if (q->n_attn == VP_SSM_MAX_ATTN || (q->n_attn &&
			    v <= q->attn[q->n_attn - 1])) {
				vp_diag_add(d, file, n->kids[i]->pos, VP_ERROR,
				    "attn_layer_indices must be ascending, at "
				    "most %d", VP_SSM_MAX_ATTN);
				return;
			}
			q->attn[q->n_attn++] = (uint32_t)v;
		}
	}
	if ((n = ynode_get(root, "z_loss_coefficient")) != NULL &&
	    !ynode_is_null(n) && ynode_double(n, file, "z_loss_coefficient",
	    0, 1e9, &zl, d) == 0 && zl != 0)
		vp_diag_add(d, file, n->pos, VP_ERROR, "z_loss_coefficient "
		    "%g (the logits' logsumexp added to the loss) is not "
		    "modelled; Bamba's configs say 0.0", zl);
	if (m->heads && m->head_dim == 0 && m->hidden % m->heads == 0)
		m->head_dim = m->hidden / m->heads;
	m->rotary_dim = m->head_dim / 2;	/* partial_rotary_factor 0.5 */
}

/*
 * MambaConfig (transformers 5.24): hidden 768, 32 layers, vocab 50280,
 * state_size 16, conv_kernel 4, expand 2 (intermediate_size = expand x
 * hidden), time_step_rank "auto" = ceil(hidden / 16), use_bias false,
 * use_conv_bias true, residual_in_fp32 true, tied embeddings.  The model
 * has one "head", head_dim and ffn the inner width (no attention).
 */
static void
hf_mamba(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	struct vp_ssm *q = &m->ssm;
	bool b;

	if (m->family != VP_FAMILY_MAMBA && m->family != VP_FAMILY_FALCON_MAMBA)
		return;
	if (ynode_get(root, "hidden_size") == NULL) m->hidden = 768;
	if (ynode_get(root, "num_hidden_layers") == NULL) m->layers = 32;
	if (ynode_get(root, "vocab_size") == NULL) m->vocab = 50280;
	*q = (struct vp_ssm){ .state = 16, .conv_kernel = 4, .expand = 2,
	    .conv_bias = true, .residual_fp32 = true };
	m->bias = false;
	m->max_seq = 0;
	hf_u64(root, file, "state_size", 1, MAX_HEADS, &q->state, -1, m, d);
	hf_u64(root, file, "conv_kernel", 1, MAX_HEADS, &q->conv_kernel, -1, m, d);
	hf_u64(root, file, "expand", 1, MAX_HEADS, &q->expand, -1, m, d);
	if (hf_bool(root, file, "use_bias", &b, d) > 0)
		q->proj_bias = b;
	if (hf_bool(root, file, "use_conv_bias", &b, d) > 0)
		q->conv_bias = b;
	if (hf_bool(root, file, "residual_in_fp32", &b, d) > 0)
		q->residual_fp32 = b;
	n = ynode_get(root, "time_step_rank");
	if (n != NULL && !ynode_is_null(n) && !(n->kind == YN_SCALAR &&
	    strcmp(n->str, "auto") == 0))
		hf_u64(root, file, "time_step_rank", 1, MAX_FFN, &q->dt_rank,
		    -1, m, d);
	else
		q->dt_rank = (m->hidden + 15) / 16;
	if ((n = ynode_get(root, "hidden_act")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "silu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "hidden_act '%s' is "
		    "not modelled for mamba; the conv1d's activation is "
		    "'silu' in MambaConfig and every released config",
		    n->kind == YN_SCALAR ? n->str : ynode_kind_name(n));
	if (hf_bool(root, file, "use_mambapy", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "use_mambapy")->pos,
		    VP_ERROR, "use_mambapy: true (mamba.py's parallel scan "
		    "instead of the recurrent loop) is not modelled");
	if (hf_bool(root, file, "use_falcon_mambapy", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "use_falcon_mambapy")->pos,
		    VP_ERROR, "use_falcon_mambapy: true (mamba.py's parallel "
		    "scan instead of the recurrent loop) is not modelled");
	/* An intermediate_size the config gives is the class's (it wins
	 * over expand: tiiuae/falcon-mamba-7b says expand 16 and 8192). */
	if ((n = ynode_get(root, "intermediate_size")) != NULL &&
	    !ynode_is_null(n)) {
		uint64_t is = 0;

		if (ynode_u64(n, file, "intermediate_size", 1, MAX_FFN, &is,
		    d) == 0) {
			if (m->hidden && is % m->hidden == 0)
				q->expand = is / m->hidden;
			else
				vp_diag_add(d, file, n->pos, VP_ERROR,
				    "intermediate_size %llu is not a multiple "
				    "of hidden_size %llu: the mixer's inner "
				    "width is modelled as expand x hidden",
				    (unsigned long long)is,
				    (unsigned long long)m->hidden);
		}
	}
	m->ffn = vp_mul_sat(q->expand, m->hidden);
	m->heads = m->kv_heads = 1;
	m->head_dim = m->ffn;
	m->qkv_bias = m->o_bias = 0;
}

/*
 * JambaConfig (transformers 5.24): block l's mixer is attention when
 * l % attn_layer_period == attn_layer_offset (layers_block_type), the
 * Mamba-1 mixer otherwise (mamba_d_state 16, mamba_d_conv 4,
 * mamba_expand 2, mamba_dt_rank "auto" = ceil(hidden / 16),
 * mamba_conv_bias true, mamba_proj_bias false); its feed-forward has
 * num_experts experts (16, top num_experts_per_tok = 2, of
 * intermediate_size) when l % expert_layer_period == expert_layer_offset
 * (layers_num_experts; a count of 1 is the dense JambaMLP), lowered as
 * the sparse step, so only an offset of period - 1 is read (every
 * released config's 2 and 1).  No positions, no biases on the attention;
 * hidden_act the SwiGLU's and the conv's activation (silu).  The sizes it
 * leaves out are its defaults (hidden 4096, 32 layers, 32 heads, 8 KV
 * heads, intermediate 14336, vocab 65536).  output_router_logits (the
 * auxiliary loss over every block's router logits) is not modelled.
 */
static void
hf_jamba(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	struct vp_ssm *q = &m->ssm;
	uint64_t ap = 8, ao = 4, ep = 2, eo = 1, e = 16, l;
	bool b;

	if (m->family != VP_FAMILY_JAMBA)
		return;
	if (ynode_get(root, "hidden_size") == NULL) m->hidden = 4096;
	if (ynode_get(root, "num_hidden_layers") == NULL) m->layers = 32;
	if (ynode_get(root, "num_attention_heads") == NULL) m->heads = 32;
	if (ynode_get(root, "num_key_value_heads") == NULL) m->kv_heads = 8;
	if (ynode_get(root, "intermediate_size") == NULL) m->ffn = 14336;
	if (ynode_get(root, "vocab_size") == NULL) m->vocab = 65536;
	*q = (struct vp_ssm){ .state = 16, .conv_kernel = 4, .expand = 2,
	    .conv_bias = true };
	m->max_seq = 0;
	m->qkv_bias = m->o_bias = 0;
	hf_u64(root, file, "mamba_d_state", 1, MAX_HEADS, &q->state, -1, m, d);
	hf_u64(root, file, "mamba_d_conv", 1, MAX_HEADS, &q->conv_kernel, -1, m, d);
	hf_u64(root, file, "mamba_expand", 1, MAX_HEADS, &q->expand, -1, m, d);
	if (hf_bool(root, file, "mamba_conv_bias", &b, d) > 0)
		q->conv_bias = b;
	if (hf_bool(root, file, "mamba_proj_bias", &b, d) > 0)
		q->proj_bias = b;
	n = ynode_get(root, "mamba_dt_rank");
	if (n != NULL && !ynode_is_null(n) && !(n->kind == YN_SCALAR &&
	    strcmp(n->str, "auto") == 0))
		hf_u64(root, file, "mamba_dt_rank", 1, MAX_FFN, &q->dt_rank, -1,
		    m, d);
	else
		q->dt_rank = (m->hidden + 15) / 16;
	if ((n = ynode_get(root, "hidden_act")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "silu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "hidden_act '%s' is "
		    "not modelled for jamba; its MLP and conv1d are lowered "
		    "with 'silu', JambaConfig's default and every released "
		    "config's", n->kind == YN_SCALAR ? n->str :
		    ynode_kind_name(n));
	if (hf_bool(root, file, "output_router_logits", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root,
		    "output_router_logits")->pos, VP_ERROR,
		    "output_router_logits: true (the router's auxiliary "
		    "loss over every block's logits) is not modelled");
	if (hf_bool(root, file, "use_mambapy", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "use_mambapy")->pos,
		    VP_ERROR, "use_mambapy: true (mamba.py's parallel scan "
		    "instead of the recurrent loop) is not modelled");
	hf_u64(root, file, "attn_layer_period", 1, MAX_LAYERS, &ap, -1, m, d);
	hf_u64(root, file, "attn_layer_offset", 0, MAX_LAYERS, &ao, -1, m, d);
	hf_u64(root, file, "expert_layer_period", 1, MAX_LAYERS, &ep, -1, m, d);
	hf_u64(root, file, "expert_layer_offset", 0, MAX_LAYERS, &eo, -1, m, d);
	if (ao >= ap || eo >= ep) {
		vp_diag_add(d, file, root->pos, VP_ERROR, "attn_layer_offset "
		    "and expert_layer_offset (%llu, %llu) must be below their "
		    "periods (%llu, %llu), as JambaConfig checks",
		    (unsigned long long)ao, (unsigned long long)eo,
		    (unsigned long long)ap, (unsigned long long)ep);
		return;
	}
	q->n_attn = 0;
	for (l = ao; l < m->layers; l += ap) {
		if (q->n_attn == VP_SSM_MAX_ATTN) {
			vp_diag_add(d, file, root->pos, VP_ERROR, "more than "
			    "%d attention blocks are not modelled",
			    VP_SSM_MAX_ATTN);
			return;
		}
		q->attn[q->n_attn++] = (uint32_t)l;
	}
	if (ynode_get(root, "num_experts") == NULL &&
	    ynode_get(root, "num_local_experts") == NULL) {
		m->has_moe = true;
		m->moe.experts = (uint32_t)e;
	}
	if (ynode_get(root, "num_experts_per_tok") == NULL)
		m->moe.top_k = 2;
	/* num_experts: 1 is JambaMLP everywhere. */
	if (m->has_moe && m->moe.experts <= 1) {
		m->has_moe = false;
		memset(&m->moe, 0, sizeof m->moe);
		return;
	}
	if (eo + 1 != ep) {
		n = ynode_get(root, "expert_layer_offset");
		if (n == NULL)
			n = ynode_get(root, "expert_layer_period");
		vp_diag_add(d, file, n != NULL ? n->pos : root->pos, VP_ERROR,
		    "expert_layer_offset "
		    "%llu with expert_layer_period %llu is not modelled: the "
		    "experts are lowered on every period-th block from the "
		    "period - 1-th (offset %llu, every released config's "
		    "layout)", (unsigned long long)eo, (unsigned long long)ep,
		    (unsigned long long)(ep - 1));
		return;
	}
	m->moe.sparse_step = (uint32_t)ep;
	m->moe.ffn = m->ffn;
}

/*
 * NemotronHConfig (transformers 5.24): the blocks from
 * hybrid_override_pattern ('M' Mamba-2, '*' attention, '-' MLP, 'E'
 * MoE) or layers_block_type (mamba/linear_attention, attention/
 * full_attention, mlp, moe), num_hidden_layers being the list's length
 * whatever the key says (the class derives it); the mixer from
 * mamba_num_heads (128) x mamba_head_dim (64), ssm_state_size (128),
 * n_groups (mamba_n_groups, 8), conv_kernel (mamba_d_conv, 4),
 * chunk_size (mamba_chunk_size, 128), use_conv_bias (mamba_conv_bias,
 * true), and use_bias for in_proj and out_proj (mamba_proj_bias is read
 * by no module); the attention has no biases whatever attention_bias
 * says, no positions; the MLP is mlp_hidden_act (relu2) with mlp_bias.
 * The sizes it leaves out are its defaults.  MoE blocks are not
 * modelled; lm_head is never tied (_tied_weights_keys is empty).
 */
static void
hf_nemotron_h(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	static const struct { const char *name; char c; } kinds[] = {
		{ "mamba", 'M' }, { "linear_attention", 'M' },
		{ "attention", '*' }, { "full_attention", '*' },
		{ "mlp", '-' }, { "moe", 'E' },
	};
	const struct ynode *n;
	struct vp_ssm *q = &m->ssm;
	char *pat = q->pattern;
	size_t i, k, len;
	bool b;

	if (m->family != VP_FAMILY_NEMOTRON_H)
		return;
	if (ynode_get(root, "hidden_size") == NULL) m->hidden = 4096;
	if (ynode_get(root, "num_attention_heads") == NULL) m->heads = 32;
	if (ynode_get(root, "num_key_value_heads") == NULL) m->kv_heads = 8;
	if (ynode_get(root, "head_dim") == NULL) m->head_dim = 128;
	if (ynode_get(root, "intermediate_size") == NULL) m->ffn = 21504;
	if (ynode_get(root, "vocab_size") == NULL) m->vocab = 131072;
	*q = (struct vp_ssm){ .heads = 128, .head_dim = 64, .groups = 8,
	    .state = 128, .conv_kernel = 4, .chunk = 128, .conv_bias = true };
	m->max_seq = 0;
	m->qkv_bias = m->o_bias = 0;
	m->tie_embeddings = false;
	hf_u64(root, file, "mamba_num_heads", 1, MAX_HEADS, &q->heads, -1, m, d);
	hf_u64(root, file, "mamba_head_dim", 1, MAX_HEADS, &q->head_dim, -1, m, d);
	hf_u64(root, file, "ssm_state_size", 1, MAX_HEADS, &q->state, -1, m, d);
	hf_u64(root, file, "n_groups", 1, MAX_HEADS, &q->groups, -1, m, d);
	hf_u64(root, file, "mamba_n_groups", 1, MAX_HEADS, &q->groups, -1, m, d);
	hf_u64(root, file, "conv_kernel", 1, MAX_HEADS, &q->conv_kernel, -1, m, d);
	hf_u64(root, file, "mamba_d_conv", 1, MAX_HEADS, &q->conv_kernel, -1, m, d);
	hf_u64(root, file, "chunk_size", 1, MAX_SEQ, &q->chunk, -1, m, d);
	hf_u64(root, file, "mamba_chunk_size", 1, MAX_SEQ, &q->chunk, -1, m, d);
	if (hf_bool(root, file, "use_conv_bias", &b, d) > 0)
		q->conv_bias = b;
	if (hf_bool(root, file, "mamba_conv_bias", &b, d) > 0)
		q->conv_bias = b;
	if (hf_bool(root, file, "use_bias", &b, d) > 0)
		q->proj_bias = b;
	m->act = VP_ACT_RELU2;
	if ((n = ynode_get(root, "mlp_hidden_act")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "relu2") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "mlp_hidden_act '%s' "
		    "is not modelled for nemotron_h; its MLP is lowered with "
		    "'relu2', NemotronHConfig's default and every released "
		    "config's", n->kind == YN_SCALAR ? n->str :
		    ynode_kind_name(n));
	if ((n = ynode_get(root, "mamba_hidden_act")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "silu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "mamba_hidden_act '%s' "
		    "is not modelled; the conv1d's activation is 'silu'",
		    n->kind == YN_SCALAR ? n->str : ynode_kind_name(n));
	pat[0] = 0;
	if ((n = ynode_get(root, "layers_block_type")) != NULL &&
	    !ynode_is_null(n)) {
		if (ynode_want(n, YN_SEQ, file, "layers_block_type", d) != 0)
			return;
		if (n->nkids > VP_SSM_MAX_PATTERN) {
			vp_diag_add(d, file, n->pos, VP_ERROR,
			    "layers_block_type has %zu blocks, at most %d are "
			    "modelled", n->nkids, VP_SSM_MAX_PATTERN);
			return;
		}
		for (i = 0; i < n->nkids; i++) {
			const struct ynode *e = n->kids[i];

			for (k = 0; k < VP_NELEM(kinds); k++)
				if (e->kind == YN_SCALAR &&
				    strcmp(e->str, kinds[k].name) == 0)
					break;
			if (k == VP_NELEM(kinds)) {
				vp_diag_add(d, file, e->pos, VP_ERROR,
				    "a layers_block_type entry must be one of "
				    "mamba, attention, mlp, moe (or "
				    "linear_attention, full_attention)");
				return;
			}
			pat[i] = kinds[k].c;
		}
		pat[n->nkids] = 0;
	} else if ((n = ynode_get(root, "hybrid_override_pattern")) != NULL &&
	    !ynode_is_null(n)) {
		if (n->kind != YN_SCALAR || strlen(n->str) == 0 ||
		    strlen(n->str) > VP_SSM_MAX_PATTERN ||
		    strspn(n->str, "M*-E") != strlen(n->str)) {
			vp_diag_add(d, file, n->pos, VP_ERROR,
			    "hybrid_override_pattern must be one character "
			    "per block, 'M' (Mamba-2), '*' (attention), '-' "
			    "(MLP) or 'E' (MoE), at most %d blocks",
			    VP_SSM_MAX_PATTERN);
			return;
		}
		strcpy(pat, n->str);
	} else {
		strcpy(pat, "ME*-");	/* NemotronHConfig's default */
		n = root;
	}
	len = strlen(pat);
	if (strchr(pat, 'E') != NULL) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "Nemotron-H's MoE "
		    "blocks ('E', block %zu) are not modelled (not measured); "
		    "the blocks modelled are Mamba-2 ('M'), attention ('*') "
		    "and MLP ('-')", (size_t)(strchr(pat, 'E') - pat));
		return;
	}
	m->has_moe = false;
	if ((n = ynode_get(root, "num_hidden_layers")) != NULL &&
	    !ynode_is_null(n) && m->layers != len)
		vp_diag_add(d, file, n->pos, VP_WARNING, "num_hidden_layers "
		    "(%llu) is not the pattern's %zu blocks; NemotronHConfig "
		    "ignores it and builds the pattern's", (unsigned long long)
		    m->layers, len);
	m->layers = len;
}

/*
 * Zamba's and Zamba2's layers_block_type into the pattern: "mamba" (or
 * "linear_attention") a Mamba block 'M', "hybrid" 'H'; their Model
 * classes build any other name as a Mamba block, an error here as a
 * likely typo (`hint` says more).  0, or -1 with the error said.
 */
static int
hf_zamba_blocks(const struct ynode *n, const char *file, char *pat,
    const char *hint, struct vp_diags *d)
{
	size_t i;

	if (ynode_want(n, YN_SEQ, file, "layers_block_type", d) != 0)
		return -1;
	if (n->nkids == 0 || n->nkids > VP_SSM_MAX_PATTERN) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "layers_block_type has "
		    "%zu blocks; from 1 to %d are modelled", n->nkids,
		    VP_SSM_MAX_PATTERN);
		return -1;
	}
	for (i = 0; i < n->nkids; i++) {
		const struct ynode *e = n->kids[i];

		if (e->kind == YN_SCALAR && (!strcmp(e->str, "mamba") ||
		    !strcmp(e->str, "linear_attention")))
			pat[i] = 'M';
		else if (e->kind == YN_SCALAR && !strcmp(e->str, "hybrid"))
			pat[i] = 'H';
		else {
			vp_diag_add(d, file, e->pos, VP_ERROR, "a "
			    "layers_block_type entry must be mamba (or "
			    "linear_attention) or hybrid%s", hint);
			return -1;
		}
	}
	pat[n->nkids] = 0;
	return 0;
}

/*
 * What Zamba and Zamba2 (family `name`, config class `cls`) check alike:
 * the shared attention's heads over 2 x hidden (its head_dim), as many
 * kv heads, and a tied head (5.24 ties nothing else otherwise, not even
 * the shared blocks).  -1 when the heads do not divide (nothing more can
 * be read), else 0.
 */
static int
hf_zamba_shared(const struct ynode *root, const char *file,
    struct vp_model *m, const char *name, const char *cls,
    struct vp_diags *d)
{
	if (m->heads == 0 || (2 * m->hidden) % m->heads != 0) {
		vp_diag_add(d, file, root->pos, VP_ERROR, "num_attention_heads "
		    "(%llu) must divide 2 x hidden_size (%llu), the shared "
		    "attention's width", (unsigned long long)m->heads,
		    (unsigned long long)(2 * m->hidden));
		return -1;
	}
	if (m->kv_heads && m->kv_heads != m->heads)
		vp_diag_add(d, file, ynode_get(root, "num_key_value_heads")->pos,
		    VP_ERROR, "num_key_value_heads (%llu) other than "
		    "num_attention_heads (%llu) is not modelled for %s (not "
		    "measured; %s's default and every released config have "
		    "as many)", (unsigned long long)m->kv_heads,
		    (unsigned long long)m->heads, name, cls);
	if (!m->tie_embeddings)
		vp_diag_add(d, file, ynode_get(root, "tie_word_embeddings") ?
		    ynode_get(root, "tie_word_embeddings")->pos : root->pos,
		    VP_ERROR, "tie_word_embeddings: false is not modelled for "
		    "%s: transformers 5.24 then ties none of "
		    "_tied_weights_keys, not even the shared transformer "
		    "blocks, so every hybrid block gets its own copy (%s's "
		    "default, true, shares them)", name, cls);
	return 0;
}

/*
 * The end of Zamba's and Zamba2's reading: the blocks are the pattern's
 * (a num_hidden_layers that differs is a warning: `model` builds the
 * list's), no experts.
 */
static void
hf_zamba_layers(const struct ynode *root, const char *file,
    struct vp_model *m, const char *model, struct vp_diags *d)
{
	const struct ynode *n;
	size_t len = strlen(m->ssm.pattern);

	m->has_moe = false;
	if ((n = ynode_get(root, "num_hidden_layers")) != NULL &&
	    !ynode_is_null(n) && m->layers != len)
		vp_diag_add(d, file, n->pos, VP_WARNING, "num_hidden_layers "
		    "(%llu) is not layers_block_type's %zu blocks; %s builds "
		    "the list's", (unsigned long long)m->layers, len, model);
	m->layers = len;
}

/*
 * Zamba2Config (transformers 5.24): the blocks from layers_block_type
 * ("mamba" or "linear_attention" a Mamba-2 block, "hybrid" a hybrid one;
 * the class builds one block per entry whatever num_hidden_layers says,
 * and its default list of 54), the mixer from n_mamba_heads (8) heads of
 * mamba_expand (2) x hidden / n_mamba_heads, mamba_d_state (64),
 * mamba_ngroups (1), mamba_d_conv (4), chunk_size (256), a conv1d bias
 * always (Zamba2MambaMixer passes bias=True whatever use_conv_bias
 * says); the shared attention's heads of 2 hidden / num_attention_heads
 * (the class derives attention_head_dim, whatever the key says),
 * num_mem_blocks (1), adapter_rank (128), use_shared_attention_adapter
 * (false), use_mem_rope (false); intermediate_size null is 4 hidden, the
 * head tied by default (and only then are the shared blocks shared:
 * tie_word_embeddings false ties nothing, refused).  add_bias_linear
 * (biases on in_proj, out_proj, gate_up_proj and down_proj), another
 * hidden_act than gelu, kv heads other than the heads and the
 * pre-integration configs' 'm'/'g' block list (which 5.24 builds as all
 * Mamba-2 blocks of its default sizes) are refused: not measured.
 */
static void
hf_zamba2(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	static const char def[] = "MMMMMMHMMMMMHMMMMMHMMMMMHMMMMMHMMMMMH"
	    "MMMMMHMMMMHMMMHMM";
	const struct ynode *n;
	struct vp_ssm *q = &m->ssm;
	struct vp_zamba2 *z = &m->zamba2;
	char *pat = q->pattern;
	uint64_t expand = 2, mb = 1;
	bool b;

	if (m->family != VP_FAMILY_ZAMBA2)
		return;
	_Static_assert(sizeof def - 1 == 54, "Zamba2Config's 54 blocks");
	if (ynode_get(root, "hidden_size") == NULL) m->hidden = 2560;
	if (ynode_get(root, "num_attention_heads") == NULL) m->heads = 32;
	if (ynode_get(root, "vocab_size") == NULL) m->vocab = 32000;
	if (ynode_get(root, "max_position_embeddings") == NULL)
		m->max_seq = 4096;
	if (m->ffn == 0 && m->hidden)
		m->ffn = 4 * m->hidden;
	*q = (struct vp_ssm){ .heads = 8, .groups = 1, .state = 64,
	    .conv_kernel = 4, .chunk = 256, .conv_bias = true };
	*z = (struct vp_zamba2){ .adapter_rank = 128 };
	m->act = VP_ACT_GEGLU;
	m->bias = false;
	m->qkv_bias = m->o_bias = 0;
	hf_u64(root, file, "n_mamba_heads", 1, MAX_HEADS, &q->heads, -1, m, d);
	hf_u64(root, file, "mamba_d_state", 1, MAX_HEADS, &q->state, -1, m, d);
	hf_u64(root, file, "mamba_ngroups", 1, MAX_HEADS, &q->groups, -1, m, d);
	hf_u64(root, file, "mamba_d_conv", 1, MAX_HEADS, &q->conv_kernel, -1, m, d);
	hf_u64(root, file, "chunk_size", 1, MAX_SEQ, &q->chunk, -1, m, d);
	hf_u64(root, file, "mamba_expand", 1, MAX_HEADS, &expand, -1, m, d);
	hf_u64(root, file, "num_mem_blocks", 1, MAX_LAYERS, &mb, -1, m, d);
	z->mem_blocks = (uint32_t)mb;
	hf_u64(root, file, "adapter_rank", 1, MAX_HIDDEN, &z->adapter_rank, -1, m, d);
	if (hf_bool(root, file, "use_shared_attention_adapter", &b, d) > 0)
		z->attn_adapter = b;
	if (hf_bool(root, file, "use_mem_rope", &b, d) > 0)
		z->mem_rope = b;
	m->pos = z->mem_rope ? VP_POS_ROPE : VP_POS_NONE;
	if (hf_bool(root, file, "add_bias_linear", &b, d) > 0 && b)
		vp_diag_add(d, file, ynode_get(root, "add_bias_linear")->pos,
		    VP_ERROR, "add_bias_linear: true (biases on in_proj, "
		    "out_proj, gate_up_proj and down_proj) is not modelled "
		    "for zamba2 (not measured); every released config says "
		    "false");
	if ((n = ynode_get(root, "hidden_act")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "gelu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "hidden_act '%s' is "
		    "not modelled for zamba2; its shared MLP is lowered with "
		    "'gelu' (exact), Zamba2Config's default",
		    n->kind == YN_SCALAR ? n->str : ynode_kind_name(n));
	if (hf_zamba_shared(root, file, m, "zamba2", "Zamba2Config", d) != 0)
		return;
	m->head_dim = 2 * m->hidden / m->heads;
	if (q->heads == 0 || (expand * m->hidden) % q->heads != 0) {
		vp_diag_add(d, file, root->pos, VP_ERROR, "n_mamba_heads "
		    "(%llu) must divide mamba_expand x hidden_size (%llu)",
		    (unsigned long long)q->heads,
		    (unsigned long long)(expand * m->hidden));
		return;
	}
	q->head_dim = expand * m->hidden / q->heads;
	if (q->heads % q->groups != 0)
		vp_diag_add(d, file, root->pos, VP_ERROR, "mamba_ngroups "
		    "(%llu) must divide n_mamba_heads (%llu)",
		    (unsigned long long)q->groups,
		    (unsigned long long)q->heads);
	if ((n = ynode_get(root, "layers_block_type")) != NULL &&
	    !ynode_is_null(n)) {
		if (hf_zamba_blocks(n, file, pat, "; the pre-integration "
		    "'m'/'g' list (with state_size, lora_rank...) is not "
		    "Zamba2Config's: transformers 5.24 builds it as Mamba-2 "
		    "blocks only, of its default sizes", d) != 0)
			return;
	} else {
		strcpy(pat, def);
		n = root;
	}
	if (strchr(pat, 'H') == NULL) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "layers_block_type "
		    "has no hybrid block: a Zamba2 of Mamba-2 blocks only is "
		    "not modelled (not measured); describe it as family "
		    "mamba2");
		return;
	}
	hf_zamba_layers(root, file, m, "Zamba2Model", d);
}

/*
 * ZambaConfig (transformers 5.24): the blocks from layers_block_type
 * ("hybrid" a hybrid block, "mamba" or "linear_attention" a Mamba block;
 * ZambaModel builds any other name as a Mamba block, an error here as a
 * likely typo; without it two Mamba blocks, a hybrid one, then a hybrid
 * block where (l - 3) % attn_layer_period == attn_layer_offset), the
 * mixer of n_mamba_heads (2) mamba heads splitting mamba_expand (2) x
 * hidden, mamba_d_state (16), mamba_d_conv (4), mamba_dt_rank ("auto" =
 * ceil(hidden / 16)), mamba_conv_bias (true), mamba_proj_bias (false);
 * the one shared transformer block on 2 x hidden (attention_hidden_size
 * and attention_head_dim must be the class's derived 2 hidden and 2
 * hidden / heads), no positions, a GELU-gated MLP of intermediate_size;
 * the head tied by default (and only then is the block shared:
 * tie_word_embeddings false ties nothing, refused).  Defaults are
 * ZambaConfig's (hidden 3712, 76 layers, 16 heads, 14848, vocab 32000).
 * Another hidden_act than gelu, hidden_mamba_act than silu and kv heads
 * other than the heads are refused: not measured; a single hybrid block
 * too: 5.24 cannot build it tied (nothing to tie its shared block into).
 */
static void
hf_zamba(const struct ynode *root, const char *file, struct vp_model *m,
    struct vp_diags *d)
{
	const struct ynode *n;
	struct vp_ssm *q = &m->ssm;
	char *pat = q->pattern;
	uint64_t ap = 6, ao = 4, v, l;
	bool b;

	if (m->family != VP_FAMILY_ZAMBA)
		return;
	if (ynode_get(root, "hidden_size") == NULL) m->hidden = 3712;
	if (ynode_get(root, "num_hidden_layers") == NULL) m->layers = 76;
	if (ynode_get(root, "num_attention_heads") == NULL) m->heads = 16;
	if (ynode_get(root, "num_key_value_heads") == NULL) m->kv_heads = 0;
	if (ynode_get(root, "intermediate_size") == NULL) m->ffn = 14848;
	if (ynode_get(root, "vocab_size") == NULL) m->vocab = 32000;
	if (ynode_get(root, "max_position_embeddings") == NULL)
		m->max_seq = 4096;
	*q = (struct vp_ssm){ .heads = 2, .state = 16, .conv_kernel = 4,
	    .expand = 2, .conv_bias = true };
	m->act = VP_ACT_GEGLU;
	m->pos = VP_POS_NONE;
	m->bias = false;
	m->qkv_bias = m->o_bias = 0;
	hf_u64(root, file, "n_mamba_heads", 1, MAX_HEADS, &q->heads, -1, m, d);
	hf_u64(root, file, "mamba_d_state", 1, MAX_HEADS, &q->state, -1, m, d);
	hf_u64(root, file, "mamba_d_conv", 1, MAX_HEADS, &q->conv_kernel, -1, m, d);
	hf_u64(root, file, "mamba_expand", 1, MAX_HEADS, &q->expand, -1, m, d);
	if (hf_bool(root, file, "mamba_conv_bias", &b, d) > 0)
		q->conv_bias = b;
	if (hf_bool(root, file, "mamba_proj_bias", &b, d) > 0)
		q->proj_bias = b;
	n = ynode_get(root, "mamba_dt_rank");
	if (n != NULL && !ynode_is_null(n) && !(n->kind == YN_SCALAR &&
	    strcmp(n->str, "auto") == 0))
		hf_u64(root, file, "mamba_dt_rank", 1, MAX_FFN, &q->dt_rank, -1,
		    m, d);
	else
		q->dt_rank = (m->hidden + 15) / 16;
	if ((n = ynode_get(root, "hidden_act")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "gelu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "hidden_act '%s' is "
		    "not modelled for zamba; its shared MLP is lowered with "
		    "'gelu' (exact), ZambaConfig's default",
		    n->kind == YN_SCALAR ? n->str : ynode_kind_name(n));
	if ((n = ynode_get(root, "hidden_mamba_act")) != NULL &&
	    !ynode_is_null(n) && (n->kind != YN_SCALAR ||
	    strcmp(n->str, "silu") != 0))
		vp_diag_add(d, file, n->pos, VP_ERROR, "hidden_mamba_act "
		    "'%s' is not modelled for zamba; the conv1d's activation "
		    "is lowered as 'silu', ZambaConfig's default",
		    n->kind == YN_SCALAR ? n->str : ynode_kind_name(n));
	if (hf_zamba_shared(root, file, m, "zamba", "ZambaConfig", d) != 0)
		return;
	if ((n = ynode_get(root, "attention_hidden_size")) != NULL &&
	    !ynode_is_null(n) && ynode_u64(n, file, "attention_hidden_size",
	    1, MAX_HIDDEN, &v, d) == 0 && v != 2 * m->hidden)
		vp_diag_add(d, file, n->pos, VP_ERROR, "attention_hidden_size "
		    "(%llu) must be 2 x hidden_size (%llu): the shared block "
		    "runs on the concatenation of the hidden states with the "
		    "embeddings", (unsigned long long)v,
		    (unsigned long long)(2 * m->hidden));
	if ((n = ynode_get(root, "attention_head_dim")) != NULL &&
	    !ynode_is_null(n) && ynode_u64(n, file, "attention_head_dim", 1,
	    MAX_HIDDEN, &v, d) == 0 && v != 2 * m->hidden / m->heads)
		vp_diag_add(d, file, n->pos, VP_ERROR, "attention_head_dim "
		    "(%llu) other than 2 x hidden_size / num_attention_heads "
		    "(%llu), ZambaConfig's, is not modelled (not measured)",
		    (unsigned long long)v,
		    (unsigned long long)(2 * m->hidden / m->heads));
	m->head_dim = 2 * m->hidden / m->heads;
	if (q->heads == 0 || (q->expand * m->hidden) % q->heads != 0) {
		vp_diag_add(d, file, root->pos, VP_ERROR, "n_mamba_heads "
		    "(%llu) must divide mamba_expand x hidden_size (%llu)",
		    (unsigned long long)q->heads,
		    (unsigned long long)(q->expand * m->hidden));
		return;
	}
	q->head_dim = q->expand * m->hidden / q->heads;
	if (q->heads > 6)
		vp_diag_add(d, file, ynode_get(root, "n_mamba_heads")->pos,
		    VP_ERROR, "n_mamba_heads (%llu): from 1 to 6 are "
		    "modelled (ZambaConfig's default is 2)",
		    (unsigned long long)q->heads);
	if ((n = ynode_get(root, "layers_block_type")) != NULL &&
	    !ynode_is_null(n)) {
		if (hf_zamba_blocks(n, file, pat, "", d) != 0)
			return;
	} else {
		hf_u64(root, file, "attn_layer_period", 1, MAX_LAYERS, &ap, -1,
		    m, d);
		hf_u64(root, file, "attn_layer_offset", 0, MAX_LAYERS, &ao, -1,
		    m, d);
		if (m->layers < 3 || m->layers > VP_SSM_MAX_PATTERN) {
			vp_diag_add(d, file, root->pos, VP_ERROR,
			    "num_hidden_layers (%llu): from 3 to %d are "
			    "modelled (ZambaConfig's layout starts with "
			    "three blocks)", (unsigned long long)m->layers,
			    VP_SSM_MAX_PATTERN);
			return;
		}
		strcpy(pat, "MMH");
		for (l = 0; l + 3 < m->layers; l++)
			pat[l + 3] = l % ap == ao ? 'H' : 'M';
		pat[m->layers] = 0;
		n = root;
	}
	if (strchr(pat, 'H') == NULL) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "layers_block_type "
		    "has no hybrid block: a Zamba of Mamba blocks only is "
		    "not modelled (not measured)");
		return;
	}
	if (strchr(pat, 'H') == strrchr(pat, 'H') && m->tie_embeddings) {
		vp_diag_add(d, file, n->pos, VP_ERROR, "one hybrid block "
		    "only: transformers 5.24 cannot build it tied (ZambaModel "
		    "ties the other hybrid blocks' shared_transf to the "
		    "first's, and get_expanded_tied_weights_keys raises "
		    "ValueError when there is none)");
		return;
	}
	hf_zamba_layers(root, file, m, "ZambaModel", d);
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

	bool llava;

	/* CLIP: two towers, neither of them a language model. */
	if ((n = ynode_get(root, "model_type")) != NULL &&
	    n->kind == YN_SCALAR && strcmp(n->str, "clip") == 0)
		return read_clip(root, file, m, d);
	llava = n != NULL && n->kind == YN_SCALAR &&
	    strcmp(n->str, "llava") == 0 && !(flags & VP_READ_TEXT_ONLY);
	if ((text = hf_text_node(root, file, &where, d)) == NULL)
		return -1;
	if ((fam = hf_family_of(text, file, where, &type, d)) == NULL)
		return -1;
	if (llava && fam->family != VP_FAMILY_LLAMA) {
		vp_diag_add(d, file, text->pos, VP_ERROR, "a LLaVA model is "
		    "modelled with a Llama-family language model (llama, "
		    "mistral, qwen2), not model_type '%s'; pass --text-only "
		    "to plan the language model alone", type);
		return -1;
	}
	if (!llava && (tower = hf_tower(root, &which)) != NULL) {
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
	/* LlavaConfig's text_config is a LlamaConfig: what it leaves out is
	 * LlamaConfig's default (llava-1.5's gives only the vocabulary and
	 * the positions). */
	if (ynode_get(root, "model_type") != NULL && (n = ynode_get(root,
	    "model_type"))->kind == YN_SCALAR && !strcmp(n->str, "llava") &&
	    !strcmp(type, "llama")) {
		m->hidden = 4096;
		m->layers = 32;
		m->heads = 32;
		m->ffn = 11008;
		m->vocab = 32000;
		m->max_seq = 2048;
	}
	hf_gemma3_defaults(m);
	hf_gpt_oss_defaults(m);
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
	hf_layer_types(text, file, m, d);
	hf_gpt_oss_quant(text, file, m, d);
	if (m->window == 0)
		m->global_every = 0;	/* sliding_window: null */
	hf_deepseek(text, file, type, m, d);
	hf_phi(text, file, m, d);
	hf_gpt_neox(text, file, m, d);
	hf_opt(text, file, m, d);
	hf_gptj(text, file, m, d);
	hf_falcon(text, file, m, d);
	hf_cohere(text, file, m, d);
	hf_softcap(text, m);
	hf_partial_rope(text, file, m, d);
	hf_llama4(text, file, m, d);
	hf_t5(text, file, m, d);
	hf_bart(text, file, m, d);
	hf_whisper(text, file, m, d);
	hf_modernbert(text, file, m, d);
	hf_deberta(text, file, m, d);
	hf_vit(text, file, m, d);
	if (llava)
		hf_llava(root, file, m, d);
	hf_mamba2(text, file, m, d);
	hf_bamba(text, file, m, d);
	hf_nemotron_h(text, file, m, d);
	hf_zamba2(text, file, m, d);
	hf_jamba(text, file, m, d);
	hf_mamba(text, file, m, d);
	hf_zamba(text, file, m, d);
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
