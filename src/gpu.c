/* gpu.c — catalog lookups and default profiles (see gpu.h). */
#include "gpu.h"
#include "plan.h"

#include <assert.h>

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static void
prices_free(struct vp_gpu *g)
{
	size_t j;

	for (j = 0; j < g->nprices; j++) {
		free(g->prices[j].provider);
		free(g->prices[j].offering);
		free(g->prices[j].date);
		free(g->prices[j].source);
	}
}

static void
card_free(struct vp_gpu *g)
{
	size_t j;

	free(g->id);
	for (j = 0; j < g->naliases; j++)
		free(g->aliases[j]);
	free(g->aliases);
	free(g->vendor);
	free(g->name);
	free(g->segment);
	free(g->memory_type);
	free(g->usable_basis);
	prices_free(g);
	free(g->prices);
	memset(g, 0, sizeof *g);
}

void
vp_catalog_free(struct vp_catalog *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++)
		card_free(&c->v[i]);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

void
vp_catalog_merge(struct vp_catalog *base, struct vp_catalog *user)
{
	size_t i, j;

	for (i = 0; i < user->n; i++) {
		for (j = 0; j < base->n; j++)
			if (vp_strcaseeq(base->v[j].id, user->v[i].id))
				break;
		if (j == base->n) {
			base->v = xreallocarray(base->v, base->n + 1,
			    sizeof *base->v);
			base->n++;
		} else {
			card_free(&base->v[j]);
		}
		base->v[j] = user->v[i];
	}
	free(user->v);
	user->v = NULL;
	user->n = 0;
}

const struct vp_price *
vp_gpu_cheapest_price(const struct vp_gpu *g)
{
	const struct vp_price *best = NULL;
	size_t i;

	for (i = 0; g != NULL && i < g->nprices; i++)
		if (!isnan(g->prices[i].usd_per_gpu_hour) && (best == NULL ||
		    g->prices[i].usd_per_gpu_hour < best->usd_per_gpu_hour))
			best = &g->prices[i];
	return best;
}

unsigned
vp_gpu_node(const struct vp_gpu *g)
{
	if (g == NULL || g->gpus_per_node == 0)
		return VP_DEFAULT_GPUS_PER_NODE;
	return g->gpus_per_node * (g->devices_per_card ? g->devices_per_card :
	    1);
}

const struct vp_price *
vp_gpu_job_price(const struct vp_gpu *g, unsigned n, unsigned node,
    bool undated_equal, double *usd_per_hour, unsigned *paid)
{
	const struct vp_price *best = NULL;
	double best_cost = NAN;
	size_t i;

	*usd_per_hour = NAN;
	*paid = 0;
	for (i = 0; g != NULL && i < g->nprices; i++) {
		const struct vp_price *p = &g->prices[i];
		unsigned unit = p->unit_gpus ? p->unit_gpus : 1;
		unsigned units = (n + unit - 1) / unit;
		double cost = p->usd_per_gpu_hour * units * unit;

		if (isnan(cost) || (!p->multi_node && n > (unit > node ?
		    unit : node)))
			continue;
		if (best != NULL && !undated_equal && best->dated != p->dated) {
			if (best->dated)
				continue;
		} else if (best != NULL && !(cost < best_cost)) {
			continue;
		}
		best = p;
		best_cost = cost;
		*paid = units * unit;
	}
	*usd_per_hour = best_cost;
	return best;
}

void
vp_catalog_set_price(struct vp_gpu *g, double usd_per_gpu_hour)
{
	prices_free(g);
	g->prices = xreallocarray(g->prices, 1, sizeof *g->prices);
	g->nprices = 1;
	g->prices[0].provider = xstrdup("--price");
	g->prices[0].offering = xstrdup("given on the command line");
	g->prices[0].date = xstrdup("given");
	g->prices[0].source = xstrdup("command line");
	g->prices[0].usd_per_gpu_hour = usd_per_gpu_hour;
	/* The user's price: per GPU, for any count, as a dated one. */
	g->prices[0].unit_gpus = 1;
	g->prices[0].gpu_only = false;
	g->prices[0].multi_node = true;
	g->prices[0].dated = true;
}

const struct vp_gpu *
vp_catalog_find(const struct vp_catalog *c, const char *name)
{
	size_t i, j;

	for (i = 0; i < c->n; i++)
		if (vp_strcaseeq(c->v[i].id, name))
			return &c->v[i];
	for (i = 0; i < c->n; i++)
		for (j = 0; j < c->v[i].naliases; j++)
			if (vp_strcaseeq(c->v[i].aliases[j], name))
				return &c->v[i];
	return NULL;
}

size_t
vp_catalog_suggest(const struct vp_catalog *c, const char *name,
    const char **out, size_t max)
{
	size_t i, j, k, n = 0;
	size_t *dist = xcalloc(max ? max : 1, sizeof *dist);

	/* Keep the max best card ids by their closest id-or-alias distance. */
	for (i = 0; i < c->n; i++) {
		size_t d = vp_edit_distance(name, c->v[i].id);

		for (j = 0; j < c->v[i].naliases; j++) {
			size_t da = vp_edit_distance(name, c->v[i].aliases[j]);
			if (da < d)
				d = da;
		}
		for (k = n; k > 0 && dist[k - 1] > d; k--)
			if (k < max) {
				dist[k] = dist[k - 1];
				out[k] = out[k - 1];
			}
		if (k < max) {
			dist[k] = d;
			out[k] = c->v[i].id;
			if (n < max)
				n++;
		}
	}
	free(dist);
	return n;
}

int
vp_gpuset_parse(const struct vp_catalog *c, const char *arg,
    struct vp_gpuset *out, struct vp_buf *msg)
{
	const char *name = arg, *x;
	const char *err;
	uint64_t count = 1;

	memset(out, 0, sizeof *out);
	x = strpbrk(arg, "xX");
	if (x != NULL && x > arg) {
		const char *p;
		char num[24];

		for (p = arg; p < x && isdigit((unsigned char)*p); p++)
			;
		if (p == x) {
			if ((size_t)(x - arg) >= sizeof num) {
				vp_buf_printf(msg, "GPU count in '%s' is too "
				    "large (at most 65536)", arg);
				return -1;
			}
			memcpy(num, arg, (size_t)(x - arg));
			num[x - arg] = '\0';
			if (vp_parse_u64(num, 1, 65536, &count, &err) != 0) {
				vp_buf_printf(msg, "GPU count in '%s' is %s "
				    "(expected 1 to 65536)", arg, err);
				return -1;
			}
			name = x + 1;
			out->counted = true;
		}
	}
	out->gpu = vp_catalog_find(c, name);
	if (out->gpu == NULL) {
		const char *near[3];
		size_t n = vp_catalog_suggest(c, name, near, 3), i;

		vp_buf_printf(msg, "unknown GPU '%s'", name);
		if (n > 0) {
			vp_buf_add(msg, "; closest: ");
			for (i = 0; i < n; i++)
				vp_buf_printf(msg, "%s%s", i ? ", " : "",
				    near[i]);
		}
		vp_buf_add(msg, " (see 'vramplan gpus')");
		return -1;
	}
	out->count = (unsigned)count;
	out->via_alias = !vp_strcaseeq(out->gpu->id, name);
	out->typed = xstrdup(name);
	return 0;
}

void
vp_gpuset_free(struct vp_gpuset *s)
{
	if (s == NULL)
		return;
	free(s->typed);
	s->typed = NULL;
}

/*
 * Default software-stack profile.  Sources (PyTorch's
 * c10/cuda/CUDACachingAllocator.cpp and CublasHandlePool.cpp, NCCL's
 * documentation of NCCL_BUFFSIZE and channels, the forum threads named):
 * - CUDA context with lazy module loading (PyTorch >= 1.13, CUDA >= 11.7):
 *   about 300-500 MB per process; ptrblck quotes ~400 MB (pytorch #109888).
 *   We take 500 MiB on Hopper/Blackwell (bigger kernel images), 400 MiB
 *   elsewhere.
 * - cuBLAS workspace: PyTorch sizes it per handle and stream; on Hopper it
 *   is 32 MiB (CUBLAS_WORKSPACE_CONFIG default :4096:8 = 4 MiB x 8), 8 MiB
 *   earlier (:4096:2 x ...).  cuBLASLt adds its own.
 * - NCCL: NCCL_BUFFSIZE 4 MiB per channel, up to 32 channels on NVLink
 *   systems, both directions: ~128 MiB + proxy state per communicator; we
 *   use 256 MiB when there is more than one GPU.
 * - Fragmentation: reserved exceeds allocated by a few percent in steady
 *   training; 5 % default until calibration measures it.
 * - Caching allocator: blocks rounded to 512 B; large (> 1 MiB) requests
 *   are served from 2 MiB-multiple segments (20 MiB size class for
 *   requests between 1 and 10 MiB).
 * - MFU defaults from measured matmul efficiency times a typical
 *   end-to-end factor: 0.40 on datacenter parts, 0.35 on consumer cards.
 */
/*
 * The family's row: where the context and cuBLAS figures above differ by
 * generation, and the MFU of consumer parts.  AMD (ROCm: HIP context,
 * hipBLASLt workspace, RCCL) and Intel Gaudi (SynapseAI, HCCL) stacks
 * have no measured constants: their rows keep the generic CUDA figures
 * as placeholders, marked measured = false, until a calibrated profile
 * replaces them.
 */
/*
 * cuBLAS's workspace per handle and stream, allocated through the caching
 * allocator (aten/src/ATen/cuda/CublasHandlePool.cpp): the default
 * CUBLAS_WORKSPACE_CONFIG ":4096:2:16:8" is 2 x 4 MiB + 8 x 16 KiB =
 * 8,519,680 B; on sm_90 and later 32 MiB (":4096:8" since PyTorch 2.1
 * [the release is the change's date, unconfirmed]).
 */
#define VP_CUBLAS_PRE_SM90 (2 * (4ULL << 20) + 8 * (16ULL << 10))
#define VP_CUBLAS_SM90 (32ULL << 20)

struct family_stack {
	uint64_t context_mib, cublas_bytes;
	double mfu;
	bool measured;		/* the constants were measured on this stack */
};

static const struct family_stack family_stack[VP_GPU_FAM_COUNT] = {
	/*                                ctx  cuBLAS workspace    mfu   measured */
	[VP_GPU_FAM_GENERIC]            = { 400, VP_CUBLAS_PRE_SM90, 0.40, true },
	[VP_GPU_FAM_VOLTA]              = { 400, VP_CUBLAS_PRE_SM90, 0.40, true },
	[VP_GPU_FAM_TURING]             = { 400, VP_CUBLAS_PRE_SM90, 0.40, true },
	[VP_GPU_FAM_AMPERE]             = { 400, VP_CUBLAS_PRE_SM90, 0.40, true },
	[VP_GPU_FAM_AMPERE_CONSUMER]    = { 400, VP_CUBLAS_PRE_SM90, 0.35, true },
	[VP_GPU_FAM_AMPERE_WORKSTATION] = { 400, VP_CUBLAS_PRE_SM90, 0.40, true },
	[VP_GPU_FAM_ADA]                = { 400, VP_CUBLAS_PRE_SM90, 0.40, true },
	[VP_GPU_FAM_ADA_CONSUMER]       = { 400, VP_CUBLAS_PRE_SM90, 0.35, true },
	[VP_GPU_FAM_ADA_WORKSTATION]    = { 400, VP_CUBLAS_PRE_SM90, 0.40, true },
	[VP_GPU_FAM_HOPPER]             = { 500, VP_CUBLAS_SM90, 0.40, true },
	[VP_GPU_FAM_BLACKWELL]          = { 500, VP_CUBLAS_SM90, 0.40, true },
	/* Consumer and workstation Blackwell keep the pre-Hopper figures:
	 * the bigger ones were measured on the datacenter parts only. */
	[VP_GPU_FAM_BLACKWELL_CONSUMER] = { 400, VP_CUBLAS_PRE_SM90, 0.35, true },
	[VP_GPU_FAM_BLACKWELL_WORKSTATION] = { 400,VP_CUBLAS_PRE_SM90, 0.40, true },
	[VP_GPU_FAM_CDNA2]              = { 400, VP_CUBLAS_PRE_SM90, 0.40, false },
	[VP_GPU_FAM_CDNA3]              = { 400, VP_CUBLAS_PRE_SM90, 0.40, false },
	[VP_GPU_FAM_GAUDI]              = { 400, VP_CUBLAS_PRE_SM90, 0.40, false },
};

#define X(e, s) s,
const char *const vp_gpu_family_names[VP_GPU_FAM_COUNT] = {
	VP_GPU_FAMILY_LIST(X) };
#undef X

/*
 * What the versions change in a built-in profile (a calibrated one
 * measured its own stack and is taken as it is):
 * - CUDA module loading: lazy from CUDA 11.7 with PyTorch 1.13
 *   (pytorch/pytorch#86509 sets CUDA_MODULE_LOADING=LAZY when unset);
 *   before, every kernel of libtorch_cuda loads with the context: 1343 MiB
 *   measured on a V100 with CUDA 11.2 and driver 460 (the transformers
 *   docs' perf_train_gpu_one, tests/data/published_gpu: hf-bert-00), the
 *   one measurement we have of an eager context;
 * - the sm_90 workspace is 32 MiB only from PyTorch 2.1; earlier releases
 *   used the pre-Hopper default there too.
 */
void
vp_stack_consts(const struct vp_profile *pr, unsigned torch, unsigned cuda,
    uint64_t *context, uint64_t *workspace)
{
	*context = pr->context_bytes;
	*workspace = pr->cublas_workspace_bytes;
	if (pr->calibrated)
		return;
	if (torch < 113 || cuda < 1107)
		*context = 1343ULL << 20;
	if (torch < 201 && *workspace == VP_CUBLAS_SM90)
		*workspace = VP_CUBLAS_PRE_SM90;
}

bool
vp_gpu_stack_measured(const struct vp_gpu *gpu)
{
	return family_stack[gpu ? gpu->family : VP_GPU_FAM_GENERIC].measured;
}

void
vp_profile_default(const struct vp_gpu *gpu, struct vp_profile *p)
{
	const struct family_stack *f =
	    &family_stack[gpu ? gpu->family : VP_GPU_FAM_GENERIC];
	unsigned i;

	assert(!gpu || (unsigned)gpu->family < VP_GPU_FAM_COUNT);
	memset(p, 0, sizeof *p);
	p->name = "built-in";
	p->context_bytes = f->context_mib << 20;
	p->cublas_workspace_bytes = f->cublas_bytes;
	p->nccl_bytes_per_group = 256ULL << 20;
	p->frag_share = 0.05;
	p->alloc_round_bytes = 512;
	p->large_segment_bytes = 2ULL << 20;
	p->mfu = f->mfu;
	for (i = 0; i < VP_LOWERINGS; i++)
		p->act_scale[i] = 1.0;
	p->temp_scale = 1.0;
}

_Static_assert(VP_LOWERINGS == VP_IMPL_COUNT * VP_ARCH_COUNT,
    "VP_LOWERINGS in gpu.h is impl x arch");

/* Index impl * VP_ARCH_COUNT + arch, spelt impl-arch. */
const char *const vp_lowering_names[VP_LOWERINGS] = {
	"hf-decoder", "hf-encoder", "hf-encoder-decoder", "torch-nn-decoder",
	"torch-nn-encoder", "torch-nn-encoder-decoder", "megatron-decoder",
	"megatron-encoder", "megatron-encoder-decoder",
};

unsigned
vp_lowering(const struct vp_model *m)
{
	return (unsigned)m->impl * VP_ARCH_COUNT + (unsigned)m->arch;
}

/* The name in upper case, words split at spaces and dashes, without the
 * vendor and brand words; returns the number of words. */
static size_t
device_words(const char *name, char words[][24], size_t max)
{
	static const char *const noise[] = { "NVIDIA", "GEFORCE", "TESLA",
	    "QUADRO" };
	size_t n = 0, len, i;
	bool skip;

	while (*name && n < max) {
		while (*name == ' ' || *name == '-')
			name++;
		for (len = 0; name[len] && name[len] != ' ' &&
		    name[len] != '-'; len++)
			;
		if (len == 0)
			break;
		if (len < 24) {
			for (i = 0; i < len; i++)
				words[n][i] = (char)toupper(
				    (unsigned char)name[i]);
			words[n][len] = '\0';
			skip = false;
			for (i = 0; i < VP_NELEM(noise); i++)
				skip |= strcmp(words[n], noise[i]) == 0;
			if (!skip)
				n++;
		}
		name += len;
	}
	return n;
}

/* How well a card fits the name's words: -1 not at all, 2 its model is
 * spelt exactly by the first words, 1 the words begin it. */
static int
model_match(const struct vp_gpu *g, char words[][24], size_t n)
{
	char model[64], spelt[96];
	size_t len = strcspn(g->id, "-"), k, i;
	int best = -1;

	if (len == 0 || len >= sizeof model)
		return -1;
	for (i = 0; i < len; i++)
		model[i] = (char)toupper((unsigned char)g->id[i]);
	model[len] = '\0';
	spelt[0] = '\0';
	for (k = 0; k < n && k < 4; k++) {
		if (strlen(spelt) + strlen(words[k]) >= sizeof spelt)
			break;
		strcat(spelt, words[k]);
		if (strcmp(spelt, model) == 0)
			return 2;
		/* "RTX PRO 6000" begins RTXPRO6000BW; "A10" does not begin
		 * A100 (a digit may not follow). */
		if (strncmp(model, spelt, strlen(spelt)) == 0 &&
		    !isdigit((unsigned char)model[strlen(spelt)]) &&
		    strlen(spelt) >= 3)
			best = 1;
	}
	return best;
}

const struct vp_gpu *
vp_catalog_match_device(const struct vp_catalog *c, const char *devname,
    uint64_t total_bytes)
{
	static const char *const forms[] = { "PCIE", "SXM", "NVL" };
	char words[8][24];
	const struct vp_gpu *best = NULL;
	double best_score = INFINITY;
	size_t n, i, f;
	int level = 0;

	if (devname == NULL || (n = device_words(devname, words, 8)) == 0)
		return NULL;
	for (i = 0; i < c->n; i++) {
		const struct vp_gpu *g = &c->v[i];
		int mm = model_match(g, words, n);
		double score = 0;

		if (mm < 0 || mm < level)
			continue;
		if (mm > level) {
			level = mm;
			best = NULL;
			best_score = INFINITY;
		}
		/* Distance in GB between the marketed memory and what the
		 * device reports (in GiB: "80GB" parts report about 80 GiB).
		 * A form factor the name contradicts adds 0.5, less than any
		 * memory step between variants of one model, so it only
		 * breaks ties.  SXM parts name HBM3 rather than SXM. */
		if (total_bytes && !isnan(g->memory_gb))
			score = fabs(g->memory_gb - (double)total_bytes /
			    VP_GIB);
		for (f = 0; f < VP_NELEM(forms); f++) {
			bool says = strstr(devname, forms[f]) != NULL ||
			    (f == 0 && strstr(devname, "PCIe") != NULL) ||
			    (f == 1 && strstr(devname, "HBM3") != NULL);
			bool is = strstr(g->id, forms[f]) != NULL;

			if (says != is && (says || is))
				score += 0.5;
		}
		if (score < best_score) {
			best_score = score;
			best = g;
		}
	}
	return best;
}
