/*
 * test_alloc.c — unit tests of src/alloc.c, the simulation of PyTorch's
 * CUDA caching allocator: the rules on their own (round_size,
 * get_allocation_size, should_split), traced scenarios whose layouts are
 * worked out by hand from the source's rules and checked through the
 * snapshot, streams and recorded-stream frees, the OOM path, the
 * max_split_size rules, expandable segments, the garbage collector, the
 * PYTORCH_CUDA_ALLOC_CONF parser's messages and a random trace checked
 * against invariants.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define MiB (1ULL << 20)

static struct vp_alloc_conf
conf_of(const char *s)
{
	struct vp_alloc_conf c;
	struct vp_buf err;

	vp_buf_init(&err);
	if (vp_alloc_conf_parse(&c, s, &err) != 0)
		fail_msg("conf '%s': %s", s, err.s);
	vp_buf_free(&err);
	return c;
}

static vp_alloc_handle
must_alloc(struct vp_alloc *a, uint64_t bytes, uint32_t stream)
{
	vp_alloc_handle h;

	assert_int_equal(vp_alloc_allocate(a, bytes, stream, &h), VP_ALLOC_OK);
	return h;
}

static void
snap_is(const struct vp_alloc *a, const char *want)
{
	struct vp_buf b;

	vp_buf_init(&b);
	vp_alloc_snapshot(a, &b);
	assert_string_equal(b.s != NULL ? b.s : "", want);
	vp_buf_free(&b);
}

static void
round_size(void **state)
{
	struct vp_alloc_conf c, d4 = conf_of("roundup_power2_divisions:4");

	(void)state;
	vp_alloc_conf_init(&c);
	assert_int_equal(vp_alloc_round_size(&c, 1), 512);
	assert_int_equal(vp_alloc_round_size(&c, 512), 512);
	assert_int_equal(vp_alloc_round_size(&c, 513), 1024);
	assert_int_equal(vp_alloc_round_size(&c, 1200), 1536);
	/* The source's own example is the division step: 1200 lies in
	 * 1024..2048, whose quarters are 1024, 1280, 1536, 1792. */
	assert_int_equal(vp_alloc_roundup_power2_next_division(1200, 4), 1280);
	/* But round_size divides only above 512 B × divisions (2048 here),
	 * so a 1200-byte request still rounds to 512 B steps. */
	assert_int_equal(vp_alloc_round_size(&d4, 1200), 1536);
	assert_int_equal(vp_alloc_round_size(&d4, 2049), 2560);
	assert_int_equal(vp_alloc_round_size(&d4, MiB + 1), MiB + MiB / 4);
	assert_int_equal(vp_alloc_round_size(&d4, 5 * MiB), 5 * MiB);
	assert_int_equal(vp_alloc_round_size(&d4, 5 * MiB + 1), 6 * MiB);
	/* Powers of two are unchanged. */
	assert_int_equal(vp_alloc_round_size(&d4, 4 * MiB), 4 * MiB);
	assert_int_equal(vp_alloc_round_size(&d4, 1ULL << 33), 1ULL << 33);
	assert_int_equal(vp_alloc_roundup_power2_next_division(4096, 8), 4096);
	/* Bands: 1 division (off) below 256 MiB, 8 from 512 MiB up. */
	c = conf_of("roundup_power2_divisions:[256:1,512:8]");
	assert_int_equal(vp_alloc_round_size(&c, 300 * MiB + 1),
	    300 * MiB + 512);
	assert_int_equal(vp_alloc_round_size(&c, 600 * MiB), 640 * MiB);
}

static void
segment_size(void **state)
{
	(void)state;
	assert_int_equal(vp_alloc_segment_size(512), 2 * MiB);
	assert_int_equal(vp_alloc_segment_size(MiB), 2 * MiB);
	assert_int_equal(vp_alloc_segment_size(MiB + 512), 20 * MiB);
	assert_int_equal(vp_alloc_segment_size(10 * MiB - 512), 20 * MiB);
	assert_int_equal(vp_alloc_segment_size(10 * MiB), 10 * MiB);
	/* 11 MiB + 1 rounds to 11 MiB + 512, then to 2 MiB steps. */
	assert_int_equal(vp_alloc_segment_size(11 * MiB + 512), 12 * MiB);
}

static void
should_split(void **state)
{
	struct vp_alloc_conf c, m = conf_of("max_split_size_mb:20"),
	    e = conf_of("expandable_segments:True");

	(void)state;
	vp_alloc_conf_init(&c);
	/* Large pool: the remainder must exceed 1 MiB strictly. */
	assert_false(vp_alloc_should_split(&c, 0, 9 * MiB, 8 * MiB));
	assert_true(vp_alloc_should_split(&c, 0, 9 * MiB + 512, 8 * MiB));
	/* Small pool: any remainder of 512 B or more. */
	assert_true(vp_alloc_should_split(&c, 1, 2 * MiB, 2 * MiB - 512));
	assert_false(vp_alloc_should_split(&c, 1, 1024, 1024));
	/* Requests at or above max_split_size are never split. */
	assert_true(vp_alloc_should_split(&m, 0, 40 * MiB, 19 * MiB));
	assert_false(vp_alloc_should_split(&m, 0, 40 * MiB, 20 * MiB));
	/* Expandable segments split large blocks like small ones. */
	assert_true(vp_alloc_should_split(&e, 0, 9 * MiB, 9 * MiB - 512));
}

/*
 * alloc 8 MiB three times: the first gets a 20 MiB segment (8 MiB is
 * under kMinLargeAlloc) split into 8 + 12; the second takes 8 of the 12
 * (best fit) and leaves 4 (> 1 MiB, split); the third finds no block of
 * 8 MiB and gets a second 20 MiB segment, split 8 + 12.  Freeing the
 * second merges it with the 4 MiB after it into 12 MiB; a 12 MiB request
 * then fits it exactly (the lower address wins the tie with the other
 * 12 MiB block), with no split and no new segment.
 */
static void
traced_scenario(void **state)
{
	struct vp_alloc_conf c;
	struct vp_alloc *a;
	const struct vp_alloc_stats *st;
	vp_alloc_handle h[3], x;
	struct vp_alloc_block bi;

	(void)state;
	vp_alloc_conf_init(&c);
	a = vp_alloc_new(&c, 0);
	st = vp_alloc_stats(a);
	for (int k = 0; k < 3; k++)
		h[k] = must_alloc(a, 8 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 40 * MiB);
	assert_int_equal(st->allocated_bytes.current, 24 * MiB);
	assert_int_equal(st->segments.current, 2);
	assert_int_equal(st->device_allocs, 2);
	snap_is(a, "large s0 0x0 20971520: A8388608 A8388608 F4194304\n"
	    "large s0 0x1400000 20971520: A8388608 F12582912\n");
	assert_int_equal(vp_alloc_deallocate(a, h[1]), VP_ALLOC_OK);
	snap_is(a, "large s0 0x0 20971520: A8388608 F12582912\n"
	    "large s0 0x1400000 20971520: A8388608 F12582912\n");
	x = must_alloc(a, 12 * MiB, 0);
	assert_int_equal(vp_alloc_block_info(a, x, &bi), VP_ALLOC_OK);
	assert_int_equal(bi.addr, 8 * MiB);
	assert_int_equal(bi.bytes, 12 * MiB);
	assert_int_equal(st->reserved_bytes.current, 40 * MiB);
	assert_int_equal(st->allocated_bytes.current, 28 * MiB);
	assert_int_equal(st->allocated_bytes.peak, 28 * MiB);
	assert_int_equal(st->device_allocs, 2);
	vp_alloc_free(a);
}

/* allocated counts block sizes, requested the requests. */
static void
small_pool_and_requested(void **state)
{
	struct vp_alloc_conf c;
	struct vp_alloc *a;
	const struct vp_alloc_stats *st;
	vp_alloc_handle h, g;

	(void)state;
	vp_alloc_conf_init(&c);
	a = vp_alloc_new(&c, 0);
	st = vp_alloc_stats(a);
	h = must_alloc(a, 1000, 0);
	g = must_alloc(a, 1, 0);
	assert_int_equal(st->allocated_bytes.current, 1024 + 512);
	assert_int_equal(st->requested_bytes.current, 1001);
	assert_int_equal(st->reserved_bytes.current, 2 * MiB);
	snap_is(a, "small s0 0x0 2097152: A1024 A512 F2095616\n");
	assert_int_equal(vp_alloc_deallocate(a, h), VP_ALLOC_OK);
	assert_int_equal(vp_alloc_deallocate(a, h), VP_ALLOC_BAD_HANDLE);
	assert_int_equal(vp_alloc_deallocate(a, 0), VP_ALLOC_OK);
	assert_int_equal(vp_alloc_deallocate(a, g), VP_ALLOC_OK);
	assert_int_equal(st->allocated_bytes.current, 0);
	assert_int_equal(st->requested_bytes.current, 0);
	assert_int_equal(st->allocated_bytes.peak, 1536);
	snap_is(a, "small s0 0x0 2097152: F2097152\n");
	vp_alloc_empty_cache(a);
	assert_int_equal(st->reserved_bytes.current, 0);
	assert_int_equal(st->reserved_bytes.peak, 2 * MiB);
	vp_alloc_reset_peaks(a);
	assert_int_equal(st->reserved_bytes.peak, 0);
	vp_alloc_free(a);
}

/* A block freed on stream 0 is not reused by stream 1. */
static void
streams(void **state)
{
	struct vp_alloc_conf c;
	struct vp_alloc *a;
	const struct vp_alloc_stats *st;
	vp_alloc_handle h;

	(void)state;
	vp_alloc_conf_init(&c);
	a = vp_alloc_new(&c, 0);
	st = vp_alloc_stats(a);
	h = must_alloc(a, 8 * MiB, 0);
	assert_int_equal(vp_alloc_deallocate(a, h), VP_ALLOC_OK);
	must_alloc(a, 8 * MiB, 1);
	assert_int_equal(st->reserved_bytes.current, 40 * MiB);
	must_alloc(a, 8 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 40 * MiB);
	snap_is(a, "large s0 0x0 20971520: A8388608 F12582912\n"
	    "large s1 0x1400000 20971520: A8388608 F12582912\n");
	vp_alloc_free(a);
}

/* A block used on stream 1 returns to the cache only when stream 1 has
 * synchronised; allocated drops at the free, active and requested at the
 * synchronisation. */
static void
recorded_streams(void **state)
{
	struct vp_alloc_conf c;
	struct vp_alloc *a;
	const struct vp_alloc_stats *st;
	vp_alloc_handle h;

	(void)state;
	vp_alloc_conf_init(&c);
	a = vp_alloc_new(&c, 0);
	st = vp_alloc_stats(a);
	h = must_alloc(a, 8 * MiB, 0);
	assert_int_equal(vp_alloc_record_stream(a, h, 1), VP_ALLOC_OK);
	assert_int_equal(vp_alloc_record_stream(a, h, 0), VP_ALLOC_OK);
	assert_int_equal(vp_alloc_deallocate(a, h), VP_ALLOC_OK);
	assert_int_equal(vp_alloc_record_stream(a, h, 2), VP_ALLOC_BAD_HANDLE);
	assert_int_equal(st->allocated_bytes.current, 0);
	assert_int_equal(st->active_bytes.current, 8 * MiB);
	assert_int_equal(st->requested_bytes.current, 8 * MiB);
	snap_is(a, "large s0 0x0 20971520: P8388608 F12582912\n");
	/* 16 MiB does not fit the 12 MiB left: a new 16 MiB segment. */
	must_alloc(a, 16 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 36 * MiB);
	vp_alloc_sync_stream(a, 2);	/* nothing recorded there */
	snap_is(a, "large s0 0x0 20971520: P8388608 F12582912\n"
	    "large s0 0x1400000 16777216: A16777216\n");
	vp_alloc_sync_stream(a, 1);
	assert_int_equal(st->active_bytes.current, 16 * MiB);
	snap_is(a, "large s0 0x0 20971520: F20971520\n"
	    "large s0 0x1400000 16777216: A16777216\n");
	/* Now the merged 20 MiB block serves 16 MiB, split 16 + 4. */
	must_alloc(a, 16 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 36 * MiB);
	assert_int_equal(st->sync_all_streams, 0);
	vp_alloc_free(a);
}

/* No room for a new segment: release every unsplit cached segment (any
 * stream, both pools), retry, else report OOM. */
static void
oom_retry(void **state)
{
	struct vp_alloc_conf c;
	struct vp_alloc *a;
	const struct vp_alloc_stats *st;
	vp_alloc_handle h, x;

	(void)state;
	vp_alloc_conf_init(&c);
	a = vp_alloc_new(&c, 50 * MiB);
	st = vp_alloc_stats(a);
	must_alloc(a, 8 * MiB, 0);
	h = must_alloc(a, 8 * MiB, 1);
	x = must_alloc(a, 1000, 2);
	assert_int_equal(vp_alloc_deallocate(a, h), VP_ALLOC_OK);
	assert_int_equal(vp_alloc_deallocate(a, x), VP_ALLOC_OK);
	assert_int_equal(st->reserved_bytes.current, 42 * MiB);
	/* 30 MiB: 42 + 30 > 50, so release stream 1's 20 MiB segment and
	 * stream 2's 2 MiB one, then 20 + 30 fits. */
	must_alloc(a, 30 * MiB, 0);
	assert_int_equal(st->alloc_retries, 1);
	assert_int_equal(st->sync_all_streams, 1);
	assert_int_equal(st->device_frees, 2);
	assert_int_equal(st->reserved_bytes.current, 50 * MiB);
	assert_int_equal(st->reserved_bytes.peak, 50 * MiB);
	assert_int_equal(st->ooms, 0);
	/* The split segment of stream 0 cannot be released: OOM. */
	assert_int_equal(vp_alloc_allocate(a, 30 * MiB, 0, &h), VP_ALLOC_OOM);
	assert_int_equal(h, 0);
	assert_int_equal(st->ooms, 1);
	assert_int_equal(st->alloc_retries, 2);
	assert_int_equal(st->last_oom_bytes, 30 * MiB);
	assert_int_equal(st->reserved_bytes.current, 50 * MiB);
	/* The rest of the 20 MiB segment still serves a fitting request. */
	must_alloc(a, 12 * MiB, 0);
	vp_alloc_free(a);
}

/* An OOM retry completes every pending event first. */
static void
oom_syncs_events(void **state)
{
	struct vp_alloc_conf c;
	struct vp_alloc *a;
	const struct vp_alloc_stats *st;
	vp_alloc_handle h;

	(void)state;
	vp_alloc_conf_init(&c);
	a = vp_alloc_new(&c, 40 * MiB);
	st = vp_alloc_stats(a);
	h = must_alloc(a, 30 * MiB, 0);
	assert_int_equal(vp_alloc_record_stream(a, h, 5), VP_ALLOC_OK);
	assert_int_equal(vp_alloc_deallocate(a, h), VP_ALLOC_OK);
	must_alloc(a, 30 * MiB, 1);
	assert_int_equal(st->alloc_retries, 1);
	assert_int_equal(st->device_frees, 1);
	assert_int_equal(st->reserved_bytes.current, 30 * MiB);
	vp_alloc_free(a);
}

static void
max_split_size(void **state)
{
	struct vp_alloc_conf c = conf_of("max_split_size_mb:20"), d;
	struct vp_alloc *a;
	const struct vp_alloc_stats *st;
	vp_alloc_handle h;
	struct vp_alloc_block bi;

	(void)state;
	/* Without the option, 8 MiB splits a cached 40 MiB block. */
	vp_alloc_conf_init(&d);
	a = vp_alloc_new(&d, 0);
	st = vp_alloc_stats(a);
	assert_int_equal(vp_alloc_deallocate(a, must_alloc(a, 40 * MiB, 0)), 0);
	must_alloc(a, 8 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 40 * MiB);
	vp_alloc_free(a);

	a = vp_alloc_new(&c, 0);
	st = vp_alloc_stats(a);
	assert_int_equal(vp_alloc_deallocate(a, must_alloc(a, 40 * MiB, 0)), 0);
	/* An oversize block does not serve a request under 20 MiB. */
	must_alloc(a, 8 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 60 * MiB);
	/* Nor a large one it exceeds by 20 MiB or more ... */
	must_alloc(a, 20 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 80 * MiB);
	/* ... but 21 MiB takes all 40, unsplit. */
	h = must_alloc(a, 21 * MiB, 0);
	assert_int_equal(vp_alloc_block_info(a, h, &bi), VP_ALLOC_OK);
	assert_int_equal(bi.bytes, 40 * MiB);
	assert_int_equal(st->reserved_bytes.current, 80 * MiB);
	assert_int_equal(st->allocated_bytes.current, 8 * MiB + 20 * MiB +
	    40 * MiB);
	assert_int_equal(st->requested_bytes.current, 49 * MiB);
	vp_alloc_free(a);

	/* release_available_cached_blocks: with the option, a failing
	 * cudaMalloc first frees just an oversize block of the stream. */
	a = vp_alloc_new(&c, 50 * MiB);
	st = vp_alloc_stats(a);
	assert_int_equal(vp_alloc_deallocate(a, must_alloc(a, 40 * MiB, 0)), 0);
	must_alloc(a, 8 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 20 * MiB);
	assert_int_equal(st->device_frees, 1);
	assert_int_equal(st->alloc_retries, 0);
	assert_int_equal(st->sync_all_streams, 0);
	vp_alloc_free(a);
}

static void
expandable(void **state)
{
	struct vp_alloc_conf c = conf_of("expandable_segments:True");
	struct vp_alloc *a;
	const struct vp_alloc_stats *st;
	vp_alloc_handle h[3], s;

	(void)state;
	a = vp_alloc_new(&c, 40 * MiB);
	st = vp_alloc_stats(a);
	/* One range per (stream, pool), mapped in 20 MiB pages (large). */
	for (int k = 0; k < 3; k++)
		h[k] = must_alloc(a, 8 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 40 * MiB);
	assert_int_equal(st->allocated_bytes.current, 24 * MiB);
	assert_int_equal(st->segments.current, 0);	/* no cudaMalloc */
	assert_int_equal(st->expandable_segments, 1);
	assert_int_equal(st->device_allocs, 2);		/* two maps */
	snap_is(a, "large s0 0x0 41943040: A8388608 A8388608 A8388608 "
	    "F16777216\n");
	assert_int_equal(vp_alloc_deallocate(a, h[1]), VP_ALLOC_OK);
	/* 12 MiB: the end block counts as the size it can grow to. */
	must_alloc(a, 12 * MiB, 0);
	snap_is(a, "large s0 0x0 41943040: A8388608 F8388608 A8388608 "
	    "A12582912 F4194304\n");
	/* No page is wholly free, and none can be mapped: OOM. */
	assert_int_equal(vp_alloc_allocate(a, 20 * MiB, 0, &s), VP_ALLOC_OOM);
	assert_int_equal(st->device_frees, 0);
	/* Small pool: 2 MiB pages, in a range of its own; no room left. */
	assert_int_equal(vp_alloc_allocate(a, 1000, 0, &s), VP_ALLOC_OOM);
	vp_alloc_free(a);

	a = vp_alloc_new(&c, 0);
	st = vp_alloc_stats(a);
	s = must_alloc(a, 1000, 0);
	h[0] = must_alloc(a, 30 * MiB, 0);
	assert_int_equal(st->reserved_bytes.current, 2 * MiB + 40 * MiB);
	assert_int_equal(st->expandable_segments, 2);
	snap_is(a, "small s0 0x0 2097152: A1024 F2096128\n"
	    "large s0 0x10000000000 41943040: A31457280 F10485760\n");
	/* Freed pages go back only at empty_cache (or an OOM). */
	assert_int_equal(vp_alloc_deallocate(a, h[0]), VP_ALLOC_OK);
	assert_int_equal(vp_alloc_deallocate(a, s), VP_ALLOC_OK);
	assert_int_equal(st->reserved_bytes.current, 42 * MiB);
	vp_alloc_empty_cache(a);
	assert_int_equal(st->reserved_bytes.current, 0);
	assert_int_equal(st->expandable_segments, 0);
	assert_int_equal(st->device_frees, 2);
	snap_is(a, "");
	vp_alloc_free(a);
}

/*
 * With a memory fraction and a threshold, a cache miss first frees
 * unsplit large segments that have waited at least the average number of
 * large-pool lookups, until reserved is under threshold × allowed.
 */
static void
garbage_collection(void **state)
{
	struct vp_alloc_conf c = conf_of("garbage_collection_threshold:0.5");
	const struct vp_alloc_stats *st;
	struct vp_alloc *a;
	vp_alloc_handle x, y, z;

	(void)state;
	for (int frac = 0; frac < 2; frac++) {
		a = vp_alloc_new(&c, 0);
		st = vp_alloc_stats(a);
		if (frac)
			vp_alloc_set_fraction(a, 1.0, 100 * MiB);
		x = must_alloc(a, 20 * MiB, 0);	/* lookup 1 */
		y = must_alloc(a, 20 * MiB, 0);	/* lookup 2 */
		assert_int_equal(vp_alloc_deallocate(a, x), 0);	/* age 0 at 2 */
		z = must_alloc(a, 20 * MiB, 1);	/* lookup 3 */
		assert_int_equal(vp_alloc_deallocate(a, y), 0);	/* at 3 */
		assert_int_equal(vp_alloc_deallocate(a, z), 0);	/* at 3 */
		/* Lookup 4: ages 2, 1, 1, average 4/3: only x goes. */
		must_alloc(a, 20 * MiB, 2);
		if (frac) {
			assert_int_equal(st->device_frees, 1);
			assert_int_equal(st->reserved_bytes.current, 60 * MiB);
			snap_is(a, "large s0 0x1400000 20971520: F20971520\n"
			    "large s1 0x2800000 20971520: F20971520\n"
			    "large s2 0x3c00000 20971520: A20971520\n");
		} else {
			assert_int_equal(st->device_frees, 0);
			assert_int_equal(st->reserved_bytes.current, 80 * MiB);
		}
		vp_alloc_free(a);
	}
}

/* The fraction caps reserved like a smaller device. */
static void
memory_fraction(void **state)
{
	struct vp_alloc_conf c;
	struct vp_alloc *a;
	vp_alloc_handle h;

	(void)state;
	vp_alloc_conf_init(&c);
	a = vp_alloc_new(&c, 0);
	vp_alloc_set_fraction(a, 0.5, 100 * MiB);
	must_alloc(a, 40 * MiB, 0);
	assert_int_equal(vp_alloc_allocate(a, 12 * MiB, 0, &h), VP_ALLOC_OOM);
	must_alloc(a, 10 * MiB, 0);
	vp_alloc_free(a);
}

static void
parse_err_is(const char *s, const char *want)
{
	struct vp_alloc_conf c, d;
	struct vp_buf err;

	vp_buf_init(&err);
	vp_alloc_conf_init(&c);
	c.expandable_segments = 7;	/* untouched on error */
	d = c;
	assert_int_equal(vp_alloc_conf_parse(&c, s, &err), -1);
	assert_string_equal(err.s, want);
	assert_memory_equal(&c, &d, sizeof c);
	vp_buf_free(&err);
}

static void
conf_errors(void **state)
{
	(void)state;
	parse_err_is("max_split_size_mb:10",
	    "'max_split_size_mb' value '10' is too small; allowed: a whole "
	    "number of MiB, at least 20");
	parse_err_is("max_split_size_mb:lots",
	    "'max_split_size_mb' value 'lots' is not a number; allowed: a "
	    "whole number of MiB, at least 20");
	parse_err_is("max_split_size_mb",
	    "'max_split_size_mb' needs a value after ':'; allowed: a whole "
	    "number of MiB, at least 20");
	parse_err_is("max_split_size_mb:,expandable_segments:True",
	    "'max_split_size_mb' needs a value after ':'; allowed: a whole "
	    "number of MiB, at least 20");
	parse_err_is("max_split_size:512",
	    "unknown option 'max_split_size'; did you mean "
	    "'max_split_size_mb'?");
	parse_err_is("colour:blue",
	    "unknown option 'colour'; allowed: max_split_size_mb, "
	    "roundup_power2_divisions, garbage_collection_threshold, "
	    "expandable_segments, max_non_split_rounding_mb, backend");
	parse_err_is("garbage_collection_threshold:1",
	    "'garbage_collection_threshold' value '1' is not allowed; "
	    "allowed: a number strictly between 0 and 1");
	parse_err_is("roundup_power2_divisions:3",
	    "'roundup_power2_divisions' value '3' is not a power of 2; "
	    "allowed: a power of 2, or a list [MiB:N,...,>:N] of power-of-2 "
	    "sizes in MiB and divisions that are 0 or a power of 2");
	parse_err_is("roundup_power2_divisions:[300:4]",
	    "'roundup_power2_divisions' interval '300' is not a power of 2; "
	    "allowed: a power of 2, or a list [MiB:N,...,>:N] of power-of-2 "
	    "sizes in MiB and divisions that are 0 or a power of 2");
	parse_err_is("roundup_power2_divisions:[256:4",
	    "'roundup_power2_divisions' list has no closing ']'");
	parse_err_is("roundup_power2_divisions:[256:4;>:8]",
	    "'roundup_power2_divisions' divisions '4;>' is not 0 or a power "
	    "of 2; allowed: a power of 2, or a list [MiB:N,...,>:N] of "
	    "power-of-2 sizes in MiB and divisions that are 0 or a power "
	    "of 2");
	parse_err_is("expandable_segments:true",
	    "'expandable_segments' value 'true' is not allowed; allowed: "
	    "True, False");
	parse_err_is("backend:cudaMalloc",
	    "'backend' value 'cudaMalloc' is not allowed; allowed: native, "
	    "cudaMallocAsync");
	parse_err_is("expandable_segments:True max_split_size_mb:64",
	    "'expandable_segments' value 'Truemax_split_size_mb' is not "
	    "allowed; allowed: True, False");
	parse_err_is("expandable_segments:True:x",
	    "expected ',' after 'True', not ':'");
	parse_err_is(",expandable_segments:True",
	    "expected an option name, not ','");
}

static void
format_is(const char *in, const char *want)
{
	struct vp_alloc_conf c = conf_of(in), back;
	struct vp_buf b;

	vp_buf_init(&b);
	vp_alloc_conf_format(&c, &b);
	assert_string_equal(b.s, want);
	if (!c.async_backend) {
		back = conf_of(b.s);
		assert_memory_equal(&back, &c, sizeof c);
	}
	vp_buf_free(&b);
}

static void
conf_format(void **state)
{
	struct vp_alloc_conf c;

	(void)state;
	format_is("", "defaults");
	format_is("backend:native,expandable_segments:False", "defaults");
	format_is(" expandable_segments : True , max_split_size_mb:512",
	    "max_split_size_mb:512,expandable_segments:True");
	format_is("roundup_power2_divisions:4,garbage_collection_threshold:0.6",
	    "roundup_power2_divisions:4,garbage_collection_threshold:0.6");
	format_is("max_non_split_rounding_mb:64,pinned_num_register_threads:8,"
	    "release_lock_on_cudamalloc:True", "max_non_split_rounding_mb:64");
	/* The first entry fills the bands below it; '>' fills from the last
	 * interval named, that one included (as the source does). */
	format_is("roundup_power2_divisions:[4:2,256:4,512:8,>:16]",
	    "roundup_power2_divisions:[1:2,2:2,4:2,256:4,512:16,1024:16,"
	    "2048:16,4096:16,8192:16,16384:16,32768:16]");
	c = conf_of("roundup_power2_divisions:[1:4,>:0]");
	assert_int_equal(c.roundup_power2_divisions[0], 0);
	format_is("backend:cudaMallocAsync",
	    "backend:cudaMallocAsync (not simulated)");
	c = conf_of("backend:cudaMallocAsync");
	assert_true(c.async_backend);
}

/*
 * A random trace on three streams, in both modes: allocated never
 * exceeds reserved nor reserved the capacity; when all is freed and the
 * streams have synchronised, the snapshot shows only free blocks, and
 * empty_cache returns every byte.
 */
static void
random_trace(void **state)
{
	static const uint64_t sizes[] = { 512, 3000, 700000, MiB + 1,
	    8 * MiB, 9 * MiB + 5, 24 * MiB, 100 * MiB };
	vp_alloc_handle live[256];
	uint32_t rng = 12345;
	size_t n;

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		struct vp_alloc_conf c = conf_of(mode ?
		    "expandable_segments:True" : "max_split_size_mb:64");
		struct vp_alloc *a = vp_alloc_new(&c, 2048 * MiB);
		const struct vp_alloc_stats *st = vp_alloc_stats(a);

		n = 0;
		for (int ev = 0; ev < 20000; ev++) {
			rng = rng * 1103515245u + 12345u;
			uint32_t r = rng >> 8;

			if (n > 0 && (r % 3 == 0 || n == 256)) {
				size_t k = r / 3 % n;

				if (r % 7 == 0)
					vp_alloc_record_stream(a, live[k],
					    (r >> 4) % 3);
				assert_int_equal(
				    vp_alloc_deallocate(a, live[k]), 0);
				live[k] = live[--n];
			} else {
				vp_alloc_handle h;
				uint64_t b = sizes[r % VP_NELEM(sizes)] +
				    (r >> 12) % 4096;

				if (vp_alloc_allocate(a, b, r / 8 % 3, &h) == 0)
					live[n++] = h;
			}
			if (ev % 97 == 0)
				vp_alloc_sync_stream(a, (uint32_t)ev % 3);
			assert_true(st->allocated_bytes.current <=
			    st->reserved_bytes.current);
			assert_true(st->reserved_bytes.current <= 2048 * MiB);
		}
		while (n > 0)
			assert_int_equal(vp_alloc_deallocate(a, live[--n]), 0);
		for (uint32_t k = 0; k < 3; k++)
			vp_alloc_sync_stream(a, k);
		{
			struct vp_buf b;

			vp_buf_init(&b);
			vp_alloc_snapshot(a, &b);
			assert_non_null(b.s);
			assert_null(strstr(b.s, " A"));
			assert_null(strstr(b.s, " P"));
			vp_buf_free(&b);
		}
		assert_int_equal(st->sync_all_streams > 0, 1);
		vp_alloc_empty_cache(a);
		assert_int_equal(st->allocated_bytes.current, 0);
		assert_int_equal(st->requested_bytes.current, 0);
		assert_int_equal(st->active_bytes.current, 0);
		assert_int_equal(st->reserved_bytes.current, 0);
		assert_int_equal(st->segments.current, 0);
		assert_int_equal(st->expandable_segments, 0);
		assert_true(st->reserved_bytes.peak > 0);
		snap_is(a, "");
		vp_alloc_free(a);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_size),
		cmocka_unit_test(segment_size),
		cmocka_unit_test(should_split),
		cmocka_unit_test(traced_scenario),
		cmocka_unit_test(small_pool_and_requested),
		cmocka_unit_test(streams),
		cmocka_unit_test(recorded_streams),
		cmocka_unit_test(oom_retry),
		cmocka_unit_test(oom_syncs_events),
		cmocka_unit_test(max_split_size),
		cmocka_unit_test(expandable),
		cmocka_unit_test(garbage_collection),
		cmocka_unit_test(memory_fraction),
		cmocka_unit_test(conf_errors),
		cmocka_unit_test(conf_format),
		cmocka_unit_test(random_trace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
