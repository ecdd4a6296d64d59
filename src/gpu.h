/*
 * gpu.h — the GPU catalog and the software-stack profile of each family.
 *
 * The catalog is read from models/gpus.yaml by gpu_read.c; lookups here
 * are pure.  A card is named by its id or an alias, case-insensitively;
 * `--gpus NxNAME` is parsed by vp_gpuset_parse.
 *
 * Ownership: struct vp_catalog owns its cards and their strings;
 * vp_catalog_free releases them.  Lookups return borrowed const pointers.
 */
#ifndef VP_GPU_H
#define VP_GPU_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"

struct vp_model;

/*
 * GPU families, the catalog's `family` key: the reader accepts only these
 * names (gpu_read.c).  GENERIC is no family given (a user card without
 * the key): the generic CUDA profile.  What each implies is a row of
 * the profile table in gpu.c.
 */
#define VP_GPU_FAMILY_LIST(X) X(GENERIC, "generic") \
	X(VOLTA, "volta") X(TURING, "turing") X(AMPERE, "ampere") \
	X(AMPERE_CONSUMER, "ampere-consumer") \
	X(AMPERE_WORKSTATION, "ampere-workstation") X(ADA, "ada") \
	X(ADA_CONSUMER, "ada-consumer") X(ADA_WORKSTATION, "ada-workstation") \
	X(HOPPER, "hopper") X(BLACKWELL, "blackwell") \
	X(BLACKWELL_CONSUMER, "blackwell-consumer") \
	X(BLACKWELL_WORKSTATION, "blackwell-workstation") \
	X(CDNA2, "cdna2") X(CDNA3, "cdna3") X(GAUDI, "gaudi")
#define X(e, s) VP_GPU_FAM_##e,
enum vp_gpu_family { VP_GPU_FAMILY_LIST(X) VP_GPU_FAM_COUNT };
#undef X
extern const char *const vp_gpu_family_names[VP_GPU_FAM_COUNT];

struct vp_price {
	char *provider;
	char *offering;
	char *date;
	char *source;
	double usd_per_gpu_hour;
	unsigned unit_gpus;	/* GPUs sold together, paid for whole (1) */
	bool gpu_only;		/* covers: gpu (the VM billed on top) */
	bool multi_node;	/* machines joined in one job over a fabric */
	bool dated;		/* date is a calendar date (YYYY-MM...) */
};

struct vp_gpu {
	char *id;
	char **aliases;
	size_t naliases;
	char *vendor, *name, *segment, *memory_type;
	enum vp_gpu_family family;
	char *usable_basis;
	double memory_gb;		/* as marketed */
	uint64_t usable_bytes;		/* what one process can allocate */
	unsigned devices_per_card;
	double bandwidth_gbs;		/* memory bandwidth, decimal GB/s */
	/* Dense peak TFLOP/s; NAN where unknown or unsupported. */
	double fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops;
	double link_gbs;		/* GPU-to-GPU per direction */
	double host_gbs;		/* host link per direction */
	double tdp_w;			/* NAN when unknown */
	double launch_price_usd;	/* NAN when unknown */
	struct vp_price *prices;
	size_t nprices;
	/*
	 * The card's network as sold (the catalog's `network` block) and
	 * its achievable matmul rates (`achievable`), for the time model
	 * (plan_search.c).  0 / NAN where the catalog does not say.
	 * scale_out false: one node only (consumer and workstation cards by
	 * default); compare reads it to refuse multi-node plans.
	 */
	unsigned gpus_per_node;		/* GPUs in one node as sold */
	double intra_busbw_gbs;		/* measured all-reduce bus bandwidth */
	unsigned nics_per_node;		/* scale-out NICs (ports) per node */
	double nic_gbps;		/* line rate of each, Gb/s */
	bool scale_out;			/* nodes can be networked */
	double gemm_bf16_tflops;	/* measured matmul rate (MAMF), bf16 */
	double gemm_fp8_tflops;		/* the same, fp8 */
};

struct vp_catalog {
	struct vp_gpu *v;
	size_t n;
};

void vp_catalog_free(struct vp_catalog *c);
/* Cards of user replace same-id cards of base or are added; user is left
 * empty. */
void vp_catalog_merge(struct vp_catalog *base, struct vp_catalog *user);
/* --price: one price replaces the card's dated prices. */
void vp_catalog_set_price(struct vp_gpu *g, double usd_per_gpu_hour);
/* The devices one node of the card holds as sold: the catalog's
 * network.gpus_per_node (x devices_per_card), else 8. */
unsigned vp_gpu_node(const struct vp_gpu *g);
/* The lowest price per GPU-hour, dated or not (the first of equal ones);
 * NULL when the card has none. */
const struct vp_price *vp_gpu_cheapest_price(const struct vp_gpu *g);
/*
 * The price compare charges a job of n GPUs: among the card's prices
 * that can rent n GPUs as one job (a multi-node offering, or n within one
 * machine of at most max(node, the unit of sale) GPUs), the one whose
 * whole units cost least per hour, dated prices before undated ones
 * unless undated_equal.  NULL when none can; else *usd_per_hour is the
 * job's cost per hour (whole units x unit x price per GPU-hour) and
 * *paid the GPUs paid for.
 */
const struct vp_price *vp_gpu_job_price(const struct vp_gpu *g, unsigned n,
    unsigned node, bool undated_equal, double *usd_per_hour, unsigned *paid);
/* By id or alias, case-insensitive; NULL when unknown. */
const struct vp_gpu *vp_catalog_find(const struct vp_catalog *c,
    const char *name);
/*
 * The card a driver's device name means ("NVIDIA H100 80GB HBM3",
 * "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090"): the cards whose
 * model (the id before its first '-') the name's first words spell, then
 * the one whose memory is nearest total_bytes (0: unknown), then the one
 * whose form factor (PCIe, SXM, NVL) the name states.  NULL if none.
 */
const struct vp_gpu *vp_catalog_match_device(const struct vp_catalog *c,
    const char *devname, uint64_t total_bytes);
/* Up to max ids closest to name, for "did you mean" (returns count). */
size_t vp_catalog_suggest(const struct vp_catalog *c, const char *name,
    const char **out, size_t max);

struct vp_gpuset {
	const struct vp_gpu *gpu;
	unsigned count;
	bool via_alias;		/* the user typed an alias, not the id */
	bool counted;		/* "NxCARD" rather than a bare card name */
	char *typed;		/* what the user typed (owned) */
};

/*
 * Parse "NxNAME" (or just NAME, meaning 1).  On error, fills msg (a
 * message in git's wording) and returns -1.
 */
int vp_gpuset_parse(const struct vp_catalog *c, const char *arg,
    struct vp_gpuset *out, struct vp_buf *msg);
void vp_gpuset_free(struct vp_gpuset *s);

/*
 * Software-stack constants that the memory model needs beyond tensor
 * bytes.  Built-in defaults per GPU family (gpu.c says where each number
 * comes from); a calibrated profile replaces them.
 */
/* VP_IMPL_COUNT x VP_ARCH_COUNT (model.h), spelt out so that this
 * header needs no model.h; gpu.c asserts they agree. */
#define VP_LOWERINGS 9

struct vp_profile {
	const char *name;
	uint64_t context_bytes;		/* CUDA context + loaded kernels */
	uint64_t cublas_workspace_bytes;/* cuBLAS/cuBLASLt workspaces */
	uint64_t nccl_bytes_per_group;	/* NCCL buffers per communicator */
	double frag_share;		/* reserved-but-unallocated share */
	uint64_t alloc_round_bytes;	/* allocator rounding of small blocks */
	uint64_t large_segment_bytes;	/* size class of large segments */
	double mfu;			/* model FLOPs utilisation default */
	/*
	 * Calibration (vramplan calibrate; calib.h).  The built-in profiles
	 * have calibrated false, scales 1 and no error bars.  The corrected
	 * allocated peak is the replay's with its activation and logits
	 * terms scaled by act_scale of the model's lowering, its transient
	 * buffers by temp_scale, plus alloc_fixed_bytes.
	 */
	bool calibrated;
	double act_scale[VP_LOWERINGS];
	double temp_scale;
	uint64_t alloc_fixed_bytes;
	/* What one process can use on the card, measured by the probe
	 * (0: the catalog's usable_memory_mib). */
	uint64_t usable_bytes;
	/* Worst relative residual of the fit per level (0 = not measured). */
	double err_allocated, err_reserved, err_device;
};
/* The lowering a model gets: implementation x architecture. */
unsigned vp_lowering(const struct vp_model *m);
extern const char *const vp_lowering_names[VP_LOWERINGS];
/* The CUDA context and cuBLAS workspace of a profile under a software
 * stack (versions as major * 100 + minor); a calibrated profile's own. */
void vp_stack_consts(const struct vp_profile *pr, unsigned torch,
    unsigned cuda, uint64_t *context, uint64_t *workspace);
/* Whether the software-stack constants of a card's family were measured
 * on that stack (false: AMD and Gaudi, whose rows borrow CUDA's). */
bool vp_gpu_stack_measured(const struct vp_gpu *gpu);
/* The default profile for a card (NULL gpu: a generic CUDA profile). */
void vp_profile_default(const struct vp_gpu *gpu, struct vp_profile *out);

#endif
