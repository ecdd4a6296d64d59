/*
 * mem.h — memory accounting: replay one training step over the lowered
 * graph the way the autograd engine and the allocator see it, and report
 * the peak per rank at three levels.
 *
 *   allocated — live tensor bytes (torch.cuda.max_memory_allocated), with
 *               the caching allocator's 512-byte rounding on CUDA;
 *   reserved  — allocated plus the allocator's segment rounding and
 *               fragmentation (max_memory_reserved);
 *   device    — reserved plus what PyTorch does not see: CUDA context and
 *               kernels, cuBLAS workspaces, NCCL buffers (nvidia-smi).
 *
 * The step: forward of each micro-batch (saved tensors grow op by op,
 * each op's output and workspace transient), the loss, backward (saved
 * tensors freed as each op's backward runs, gradients appear), the
 * optimizer step with its temporaries; with gradient accumulation the
 * later micro-batches run with gradients already held.  Optimizer states
 * exist from the first step on, so the steady state is what is reported.
 *
 * Pure.  Results are plain values in a caller-owned struct.
 */
#ifndef VP_MEM_H
#define VP_MEM_H

#include <stdint.h>

#include "gpu.h"
#include "graph.h"
#include "model.h"
#include "plan.h"

#define VP_PHASE_LIST(X) \
	X(FORWARD, "forward") X(LOSS, "loss") X(BACKWARD, "backward") \
	X(OPTIMIZER, "optimizer")
#define X(e, s) VP_PHASE_##e,
enum vp_phase { VP_PHASE_LIST(X) VP_PHASE_COUNT };
#undef X
extern const char *const vp_phase_names[VP_PHASE_COUNT];

#define VP_MEM_TOP 12
#define VP_MEM_FW 6

struct vp_live {
	const char *name;
	uint32_t layer;
	uint8_t cat;
	uint64_t bytes;
	uint32_t count;		/* tensors of this name and layer */
};

/* Places of the step, for the fast replay (mem.c, place_of). */
enum { VP_PLACE_BEFORE, VP_PLACE_AFTER, VP_PLACE_FIRST, VP_PLACE_LAST,
	VP_PLACE_INSIDE, VP_PLACES };

struct vp_mem {
	/* Breakdown of the allocated peak by term. */
	uint64_t term[VP_CAT_COUNT];
	uint64_t allocated_peak;
	uint64_t reserved_peak;
	uint64_t device_peak;
	/* What lies between the levels. */
	uint64_t frag_bytes;		/* reserved - allocated */
	uint64_t context_bytes;
	uint64_t workspace_bytes;
	uint64_t nccl_bytes;
	uint64_t symm_bytes;		/* async TP's symmetric memory */
	uint64_t overhead_bytes;	/* device - allocated */
	enum vp_phase peak_phase;
	uint32_t peak_layer;		/* block where the peak is, 0 = none */
	const char *peak_op;
	uint64_t phase_peak[VP_PHASE_COUNT];
	/*
	 * Each phase's peak by place (VP_PLACE_*): before the blocks, after
	 * them, in the first period of blocks, in the last (with the
	 * blocks after it), in between.  The fast replay extends each place
	 * on its own line (vp_mem_estimate_fast).
	 */
	uint64_t place_peak[VP_PHASE_COUNT][VP_PLACES];
	/* Persistent terms over the whole step (not only at the peak). */
	uint64_t weights_bytes, master_bytes, grads_bytes, optim_bytes;
	uint64_t saved_per_microbatch;	/* activations at end of forward */
	uint64_t shard_gather_bytes;	/* ZeRO-3/FSDP gathered parameters */
	uint64_t grad_buffer_bytes;	/* DDP buckets / DeepSpeed reduce bucket */
	/* Off the GPU, per rank: what offload and paged optimizers move to
	 * host RAM (pinned buffers included) or NVMe. */
	uint64_t host_bytes;
	uint64_t nvme_bytes;
	uint64_t trainable;		/* parameters that train on this rank */
	uint64_t params;		/* parameters on this rank */
	/*
	 * CUDA, the exact replay of a plan with alloc_conf set
	 * (--alloc-conf): the caching allocator simulated over the replay's
	 * events (alloc.h).  alloc_simulated false: the reserved level is
	 * the profile's formula (the default, CPU, the planner's fast
	 * replay, the cudaMallocAsync backend).
	 */
	bool alloc_simulated;
	bool alloc_oom;			/* a real OOM after free-and-retry */
	uint64_t alloc_allocated_peak;	/* max_memory_allocated */
	uint64_t alloc_reserved_peak;	/* max_memory_reserved */
	uint64_t alloc_retries;		/* free-cached-and-retry rounds */
	uint64_t alloc_segments;	/* cudaMalloc calls */
	/*
	 * --load (load.c): building the model, when the reading includes
	 * it.  The reserved level is at least what building left reserved
	 * (load_sets_reserved); the allocated level stays the step's (the
	 * recipe resets the peaks after building).
	 */
	uint64_t load_allocated_peak;
	uint64_t load_reserved_bytes;
	bool load_sets_reserved;
	/* With explain: the largest live tensors at the peak. */
	struct vp_live top[VP_MEM_TOP];
	int ntop;
	/* ... and the framework's buffers among them, by the names the
	 * frameworks use (mem.c, fw_buffers), whatever their rank. */
	struct vp_live fw[VP_MEM_FW];
	int nfw;
};

struct vp_mem_opts {
	const struct vp_profile *profile;
	unsigned world;		/* GPUs in the job (1 = no NCCL) */
	int explain;		/* fill top[] */
	/* What one process can use on the card (0: unknown, unlimited):
	 * the simulated allocator gets this minus the context, cuBLAS
	 * workspace and NCCL buffers as its capacity. */
	uint64_t usable_bytes;
};

int vp_mem_estimate(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out);

/*
 * The allocated bytes through the step, for the TUI's timeline and the
 * estimate's --svg: one value per replay event (every place a peak is
 * looked for), downsampled to at most VP_TIMELINE_MAX points by keeping
 * the largest value of each bucket of at most per_point events of one
 * phase (a phase starts a new point, so even a short one has a point).  The pipeline's in-flight share (held through the
 * steady state) is added to every point, so the highest point is the
 * replay's allocated peak (a calibrated profile's corrections, applied to
 * the terms afterwards, and the simulated allocator's block rounding are
 * not in the timeline).  Capturing changes no
 * number of the estimate.
 */
#define VP_TIMELINE_MAX 512
struct vp_timeline {
	uint64_t live[VP_TIMELINE_MAX];	/* bytes at the point */
	/* The same bytes by term (they sum to live[i]): what is alive at
	 * that event, the bytes a framework holds beside the tensors (FSDP
	 * and ZeRO-3 gathers, DDP and DeepSpeed buckets) as the peak's
	 * breakdown counts them, and the in-flight share in activations. */
	uint64_t term[VP_TIMELINE_MAX][VP_CAT_COUNT];
	uint8_t phase[VP_TIMELINE_MAX];	/* enum vp_phase of that value */
	size_t n;			/* points */
	size_t peak;			/* index of the highest point */
	uint64_t events;		/* replay events seen */
	uint64_t per_point;		/* events per point at most (a power
					 * of two) */
	uint64_t fill;			/* events in the last point so far */
};
/* vp_mem_estimate that also fills tl (the exact replay only). */
int vp_mem_estimate_timeline(const struct vp_model *m,
    const struct vp_plan *p, const struct vp_mem_opts *o, struct vp_mem *out,
    struct vp_timeline *tl);
/* Two short replays extended to the stage's depth: for the planner. */
int vp_mem_estimate_fast(const struct vp_model *m, const struct vp_plan *p,
    const struct vp_mem_opts *o, struct vp_mem *out);
/* The reserved level of an allocated peak under a fragmentation share
 * (the levels use the profile's; calibration scans others). */
uint64_t vp_mem_reserved(uint64_t allocated, double share,
    const struct vp_profile *p);
/* The same on an already lowered graph. */
void vp_mem_run(const struct vp_graph *g, const struct vp_model *m,
    const struct vp_plan *p, const struct vp_mem_opts *o, struct vp_mem *out);

#endif
