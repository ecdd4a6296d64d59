/*
 * alloc.h — a simulation of PyTorch's CUDA caching allocator, driven by
 * an event stream: allocate(size, stream) gives a handle, deallocate
 * (handle) gives it back, and the statistics torch.cuda.memory_stats()
 * reports (allocated, requested, reserved, their peaks, segments,
 * cudaMalloc calls, OOM retries) are read at any point.
 *
 * Source: pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp, class
 * DeviceCachingAllocator (commit 001074d25084), and the option parser
 * c10/core/AllocatorConfig.cpp.  Function names in comments are the
 * source's.
 *
 * Pure: no I/O, no clock, no environment.  The caller passes the
 * PYTORCH_CUDA_ALLOC_CONF string to vp_alloc_conf_parse and the device's
 * capacity to vp_alloc_new.  Ownership: vp_alloc_new pairs with
 * vp_alloc_free (NULL is a no-op); the allocator copies the config.
 * Handles are plain numbers, 0 is the null handle (a 0-byte request), and
 * a handle is dead once deallocated: using it again is an error, never a
 * crash.  Addresses are synthetic (segment base + offset); only their
 * order matters, as in the best fit's (stream, size, address) order.
 *
 * Streams are caller-chosen 32-bit numbers.  A block freed on one stream
 * is reused only by requests on that stream.  A block used on other
 * streams (vp_alloc_record_stream, torch's Tensor.record_stream) is
 * freed in two steps: vp_alloc_deallocate drops it from allocated at
 * once, and it returns to the cache when the caller says each recorded
 * stream synchronised (vp_alloc_sync_stream), or at an OOM retry, which
 * synchronises everything as cudaEventSynchronize does.
 */
#ifndef VP_ALLOC_H
#define VP_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define VP_ALLOC_MIN_BLOCK 512ULL		/* kMinBlockSize */
#define VP_ALLOC_SMALL_SIZE (1ULL << 20)	/* kSmallSize: small pool limit */
#define VP_ALLOC_SMALL_BUFFER (2ULL << 20)	/* kSmallBuffer */
#define VP_ALLOC_MIN_LARGE_ALLOC (10ULL << 20)	/* kMinLargeAlloc */
#define VP_ALLOC_LARGE_BUFFER (20ULL << 20)	/* kLargeBuffer */
#define VP_ALLOC_ROUND_LARGE (2ULL << 20)	/* kRoundLarge */
/* roundup_power2_divisions bands: 1 MiB, 2 MiB, ... 32 GiB and above. */
#define VP_ALLOC_BANDS 16

/*
 * The allocator's options, as PYTORCH_CUDA_ALLOC_CONF sets them.
 * vp_alloc_conf_init gives PyTorch's defaults.
 */
struct vp_alloc_conf {
	/* Blocks at least this big are never split; UINT64_MAX = unset. */
	uint64_t max_split_size_bytes;
	/* An oversize block serves a request only if it exceeds it by less
	 * than this (kLargeBuffer, 20 MiB, by default). */
	uint64_t max_non_split_rounding_bytes;
	/* Divisions per power-of-two interval, per size band
	 * (index clamp(log2(size) - 20, 0, 15)); 0 or 1 = off. */
	uint32_t roundup_power2_divisions[VP_ALLOC_BANDS];
	/* In (0, 1), 0 = off; acts only with a memory fraction set. */
	double garbage_collection_threshold;
	int expandable_segments;
	/* backend:cudaMallocAsync was given: it is not simulated, and the
	 * native options above are then ignored by PyTorch. */
	int async_backend;
};

void vp_alloc_conf_init(struct vp_alloc_conf *c);
/*
 * Parse a PYTORCH_CUDA_ALLOC_CONF string ("", NULL or the word "defaults",
 * which PyTorch itself does not know: the defaults) into *c, starting
 * from the defaults, as PyTorch does.  Returns 0, or -1 with
 * *c untouched and one message in err ("'KEY' value 'V' ...; allowed:
 * ..."), lowercase and without a final full stop, for the CLI to print.
 * Options that do not change device memory (release_lock_on_cudamalloc,
 * pinned_*) are checked and ignored.
 */
int vp_alloc_conf_parse(struct vp_alloc_conf *c, const char *s,
    struct vp_buf *err);
/*
 * The settings in use, for a report line: the non-default options as a
 * PYTORCH_CUDA_ALLOC_CONF string that vp_alloc_conf_parse reads back to
 * the same struct, or "defaults"; a cudaMallocAsync backend is named with
 * "(not simulated)".
 */
void vp_alloc_conf_format(const struct vp_alloc_conf *c, struct vp_buf *out);

/* The rules on their own, for tests and for callers that only round. */
uint64_t vp_alloc_round_size(const struct vp_alloc_conf *c, uint64_t bytes);
uint64_t vp_alloc_roundup_power2_next_division(uint64_t bytes,
    uint32_t divisions);
/* get_allocation_size: a new segment's size for a rounded request. */
uint64_t vp_alloc_segment_size(uint64_t rounded_bytes);
/* should_split: whether a block of block_bytes in the small
 * (small_pool != 0) or large pool, serving a rounded request, is split
 * (with expandable_segments, the small pool's 512 B rule for both). */
int vp_alloc_should_split(const struct vp_alloc_conf *c, int small_pool,
    uint64_t block_bytes, uint64_t rounded_bytes);

/* One statistic: its value now and its peak since the last reset. */
struct vp_alloc_stat {
	uint64_t current;
	uint64_t peak;
};

/* torch.cuda.memory_stats()'s aggregate counters, same meanings. */
struct vp_alloc_stats {
	struct vp_alloc_stat allocated_bytes;	/* sum of live block sizes */
	struct vp_alloc_stat requested_bytes;	/* sum of the requests */
	struct vp_alloc_stat active_bytes;	/* allocated + awaiting events */
	struct vp_alloc_stat reserved_bytes;	/* segments (mapped pages) */
	struct vp_alloc_stat allocations;	/* live blocks */
	struct vp_alloc_stat segments;		/* cudaMalloc segments */
	uint64_t device_allocs;	/* num_device_alloc: cudaMalloc + maps */
	uint64_t device_frees;	/* num_device_free: cudaFree + unmaps */
	uint64_t alloc_retries;	/* num_alloc_retries */
	uint64_t ooms;		/* num_ooms */
	uint64_t sync_all_streams;	/* num_sync_all_streams */
	uint64_t last_oom_bytes;	/* the segment size the last OOM wanted */
	uint64_t expandable_segments;	/* virtual ranges alive */
};

struct vp_alloc;
typedef uint64_t vp_alloc_handle;

enum vp_alloc_status {
	VP_ALLOC_OK = 0,
	VP_ALLOC_OOM = -1,	/* a result: torch raises OutOfMemoryError */
	VP_ALLOC_BAD_HANDLE = -2,	/* a caller error: dead or unknown */
};

/*
 * capacity_bytes: what the driver can still hand out to segments (device
 * memory minus the context, NCCL and other processes); 0 = unlimited.
 */
struct vp_alloc *vp_alloc_new(const struct vp_alloc_conf *c,
    uint64_t capacity_bytes);
void vp_alloc_free(struct vp_alloc *a);
/* torch.cuda.set_per_process_memory_fraction: segments may total at most
 * fraction × total_bytes, and the garbage collector can act. */
void vp_alloc_set_fraction(struct vp_alloc *a, double fraction,
    uint64_t total_bytes);

/* malloc: 0 and *h set, or VP_ALLOC_OOM with *h = 0 and the allocator as
 * the failed request left it (cached segments released). */
int vp_alloc_allocate(struct vp_alloc *a, uint64_t bytes, uint32_t stream,
    vp_alloc_handle *h);
/* recordStream: h is used on stream too (its own stream is ignored). */
int vp_alloc_record_stream(struct vp_alloc *a, vp_alloc_handle h,
    uint32_t stream);
/* free; the null handle is a no-op. */
int vp_alloc_deallocate(struct vp_alloc *a, vp_alloc_handle h);
/* Everything recorded on stream so far has completed. */
void vp_alloc_sync_stream(struct vp_alloc *a, uint32_t stream);
/* torch.cuda.empty_cache(): synchronise, release unsplit segments. */
void vp_alloc_empty_cache(struct vp_alloc *a);
/* torch.cuda.reset_peak_memory_stats(): peaks become the current values. */
void vp_alloc_reset_peaks(struct vp_alloc *a);

const struct vp_alloc_stats *vp_alloc_stats(const struct vp_alloc *a);

/* A live block, as a snapshot shows it. */
struct vp_alloc_block {
	uint64_t addr;
	uint64_t bytes;		/* block size: rounded, maybe unsplit */
	uint64_t requested_bytes;
	uint32_t stream;
	int small_pool;
};
int vp_alloc_block_info(const struct vp_alloc *a, vp_alloc_handle h,
    struct vp_alloc_block *out);
/*
 * torch.cuda.memory_snapshot() in one line per segment (one per mapped
 * range of an expandable segment), by address:
 * "large s0 0x0 20971520: A8388608 F12582912", A allocated, P awaiting
 * events, F free.
 */
void vp_alloc_snapshot(const struct vp_alloc *a, struct vp_buf *out);

#endif
