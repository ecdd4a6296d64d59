/*
 * test_gpu.c — unit tests of the GPU catalog: reading (gpu_read.c),
 * lookups and `--gpus NxNAME` parsing (gpu.c), the default profiles, and
 * a sanity pass over the shipped models/gpus.yaml.
 *
 * The shipped-catalog test reads $VRAMPLAN_DATA/gpus.yaml (set by `make
 * check`); without the variable it is skipped.
 *
 * Tests named bug_* guard defects that were found in src/ and fixed (the
 * comment above each says what was wrong).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpu_read.h"
#include "ydoc.h"

/*
 * A small catalog.  Line numbers matter for the position checks below:
 * card 1 starts on line 1, card 2 on line 14, card 3 on line 18, card 4
 * on line 22.
 */
static const char small[] =
    "- id: A100-80G-SXM\n"			/* 1 */
    "  aliases: [A100, A100-80G]\n"		/* 2 */
    "  vendor: NVIDIA\n"			/* 3 */
    "  memory_gb: 80\n"				/* 4 */
    "  usable_memory_mib: 81116\n"		/* 5 */
    "  family: ampere\n"			/* 6 */
    "  bf16_tflops_dense: 312\n"		/* 7 */
    "  fp8_tflops_dense: null\n"		/* 8 */
    "  memory_bandwidth_gbs: 2039\n"		/* 9 */
    "  interconnect: {gpu_to_gpu: NVLink, gpu_to_gpu_gbs: 300, "
    "host_gbs: 32}\n"				/* 10 */
    "  cloud_prices:\n"				/* 11 */
    "    - {provider: acme, usd_per_gpu_hour: 1.5, date: '2024-01'}\n"
    "    - {provider: other, usd_per_gpu_hour: null}\n"	/* 13 */
    "- id: H100-80G-SXM\n"			/* 14 */
    "  aliases: [H100]\n"
    "  usable_memory_mib: 81559\n"
    "  family: hopper\n"
    "- id: RTX4090-24G\n"			/* 18 */
    "  aliases: [RTX4090, '4090']\n"
    "  usable_memory_mib: 24564\n"
    "  family: ada-consumer\n"
    "- id: MI250X-128G\n"			/* 22 */
    "  aliases: [MI250X]\n"
    "  memory_gb: 128\n"
    "  usable_memory_mib: 65208\n"
    "  devices_per_card: 2\n"
    "  family: cdna2\n";

/* Parse text as a catalog; -2 when the YAML itself failed. */
static int
load_cat(const char *text, struct vp_catalog *c, struct vp_diags *d)
{
	struct ydoc *doc = ydoc_parse("gpus.yaml", text, strlen(text), d);
	int rc;

	memset(c, 0, sizeof *c);
	if (doc == NULL)
		return -2;
	rc = vp_catalog_from_doc(doc, c, d);
	ydoc_free(doc);
	return rc;
}

static const struct vp_diag *
find(const struct vp_diags *d, const char *sub)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (strstr(d->v[i].msg, sub) != NULL)
			return &d->v[i];
	return NULL;
}

static void
expect_error_at(const struct vp_diags *d, const char *sub, int line, int col)
{
	const struct vp_diag *g = find(d, sub);

	if (g == NULL) {
		struct vp_buf b;
		vp_buf_init(&b);
		vp_diags_format(d, &b);
		fail_msg("no error containing \"%s\"; got:\n%s", sub, b.s);
	}
	assert_int_equal(g->level, VP_ERROR);
	assert_int_equal(g->line, line);
	if (col)
		assert_int_equal(g->col, col);
}

static void
load_small(struct vp_catalog *c)
{
	struct vp_diags d = { 0 };

	if (load_cat(small, c, &d) != 0) {
		struct vp_buf b;
		vp_buf_init(&b);
		vp_diags_format(&d, &b);
		fail_msg("small catalog did not load:\n%s", b.s);
	}
	assert_int_equal(d.n, 0);
	vp_diags_clear(&d);
}

/* ---- reading ---------------------------------------------------------- */

static void
read_fields(void **state)
{
	struct vp_catalog c;
	const struct vp_gpu *g;

	(void)state;
	load_small(&c);
	assert_int_equal(c.n, 4);
	g = &c.v[0];
	assert_string_equal(g->id, "A100-80G-SXM");
	assert_int_equal(g->naliases, 2);
	assert_string_equal(g->aliases[0], "A100");
	assert_string_equal(g->aliases[1], "A100-80G");
	assert_string_equal(g->vendor, "NVIDIA");
	assert_int_equal(g->family, VP_GPU_FAM_AMPERE);
	assert_float_equal(g->memory_gb, 80.0, 0);
	/* 81116 MiB = 81116 * 2^20 = 85056290816 bytes. */
	assert_true(g->usable_bytes == 85056290816ULL);
	assert_int_equal(g->devices_per_card, 1);
	assert_float_equal(g->bf16_tflops, 312.0, 0);
	assert_float_equal(g->bandwidth_gbs, 2039.0, 0);
	assert_float_equal(g->link_gbs, 300.0, 0);
	assert_float_equal(g->host_gbs, 32.0, 0);
	/* null and absent numbers read as NAN, never as 0. */
	assert_true(isnan(g->fp8_tflops));
	assert_true(isnan(g->fp32_tflops));
	assert_true(isnan(g->tdp_w));
	assert_true(isnan(g->launch_price_usd));
	assert_int_equal(g->nprices, 2);
	assert_string_equal(g->prices[0].provider, "acme");
	assert_string_equal(g->prices[0].date, "2024-01");
	assert_float_equal(g->prices[0].usd_per_gpu_hour, 1.5, 0);
	assert_true(isnan(g->prices[1].usd_per_gpu_hour));
	assert_null(g->prices[1].date);
	/* A card without interconnect: link speeds unknown. */
	g = &c.v[1];
	assert_true(isnan(g->link_gbs) && isnan(g->host_gbs));
	assert_true(isnan(g->memory_gb));
	assert_null(g->vendor);
	/* MI250X: two devices per card, usable memory per device:
	 * 65208 MiB = 65208 * 2^20 = 65208 * 10^6 + 65208 * 48576
	 * = 65208000000 + 3167543808 = 68375543808 bytes. */
	g = &c.v[3];
	assert_int_equal(g->devices_per_card, 2);
	assert_true(g->usable_bytes == 68375543808ULL);
	vp_catalog_free(&c);
	assert_int_equal(c.n, 0);
	vp_catalog_free(NULL);
}

/* ---- lookup ----------------------------------------------------------- */

static void
find_by_id_and_alias(void **state)
{
	struct vp_catalog c;

	(void)state;
	load_small(&c);
	assert_ptr_equal(vp_catalog_find(&c, "A100-80G-SXM"), &c.v[0]);
	/* Case-insensitive, ids and aliases alike. */
	assert_ptr_equal(vp_catalog_find(&c, "a100-80g-sxm"), &c.v[0]);
	assert_ptr_equal(vp_catalog_find(&c, "A100"), &c.v[0]);
	assert_ptr_equal(vp_catalog_find(&c, "a100-80g"), &c.v[0]);
	assert_ptr_equal(vp_catalog_find(&c, "h100"), &c.v[1]);
	assert_ptr_equal(vp_catalog_find(&c, "rtx4090"), &c.v[2]);
	assert_ptr_equal(vp_catalog_find(&c, "4090"), &c.v[2]);
	assert_ptr_equal(vp_catalog_find(&c, "Mi250x"), &c.v[3]);
	/* Prefixes and near misses are not matches. */
	assert_null(vp_catalog_find(&c, "A10"));
	assert_null(vp_catalog_find(&c, "A100-80"));
	assert_null(vp_catalog_find(&c, ""));
	vp_catalog_free(&c);
}

static void
suggest(void **state)
{
	struct vp_catalog c;
	const char *near[3];
	size_t n;

	(void)state;
	load_small(&c);
	/*
	 * "A1000", distance to each card's nearest name:
	 *   A100-80G-SXM via "A100": one deletion            = 1
	 *   H100-80G-SXM via "H100": H→A, one deletion        = 2
	 *   RTX4090-24G via "4090": drop A, 1→4, 0→9          = 3
	 *   MI250X-128G via "MI250X": 4 substitutions + 1 del = 5
	 */
	n = vp_catalog_suggest(&c, "A1000", near, 3);
	assert_int_equal(n, 3);
	assert_string_equal(near[0], "A100-80G-SXM");
	assert_string_equal(near[1], "H100-80G-SXM");
	assert_string_equal(near[2], "RTX4090-24G");
	/* max = 1 keeps only the best. */
	n = vp_catalog_suggest(&c, "H10", near, 1);
	assert_int_equal(n, 1);
	assert_string_equal(near[0], "H100-80G-SXM");
	vp_catalog_free(&c);
}

/* ---- --gpus NxNAME ---------------------------------------------------- */

static void
gpuset_ok(void **state)
{
	struct vp_catalog c;
	struct vp_gpuset s;
	struct vp_buf msg;

	(void)state;
	load_small(&c);
	vp_buf_init(&msg);

	assert_int_equal(vp_gpuset_parse(&c, "2xA100", &s, &msg), 0);
	assert_ptr_equal(s.gpu, &c.v[0]);
	assert_int_equal(s.count, 2);
	assert_true(s.via_alias);
	assert_string_equal(s.typed, "A100");
	vp_gpuset_free(&s);

	/* A bare name means one GPU. */
	assert_int_equal(vp_gpuset_parse(&c, "A100", &s, &msg), 0);
	assert_ptr_equal(s.gpu, &c.v[0]);
	assert_int_equal(s.count, 1);
	vp_gpuset_free(&s);

	/* The id itself (any case) is not an alias. */
	assert_int_equal(vp_gpuset_parse(&c, "8xh100-80g-sxm", &s, &msg), 0);
	assert_ptr_equal(s.gpu, &c.v[1]);
	assert_int_equal(s.count, 8);
	assert_false(s.via_alias);
	vp_gpuset_free(&s);

	/* Capital X; the 'X' inside RTX4090 is not a separator. */
	assert_int_equal(vp_gpuset_parse(&c, "4XRTX4090", &s, &msg), 0);
	assert_ptr_equal(s.gpu, &c.v[2]);
	assert_int_equal(s.count, 4);
	vp_gpuset_free(&s);
	assert_int_equal(vp_gpuset_parse(&c, "RTX4090", &s, &msg), 0);
	assert_int_equal(s.count, 1);
	vp_gpuset_free(&s);
	/* A name ending in X: MI250X, and 16 of them. */
	assert_int_equal(vp_gpuset_parse(&c, "16xMI250X", &s, &msg), 0);
	assert_ptr_equal(s.gpu, &c.v[3]);
	assert_int_equal(s.count, 16);
	vp_gpuset_free(&s);
	/* An all-digit alias after a count: 2 x "4090". */
	assert_int_equal(vp_gpuset_parse(&c, "2x4090", &s, &msg), 0);
	assert_ptr_equal(s.gpu, &c.v[2]);
	assert_int_equal(s.count, 2);
	vp_gpuset_free(&s);
	/* The range ends are inclusive: 1 and 65536. */
	assert_int_equal(vp_gpuset_parse(&c, "1xA100", &s, &msg), 0);
	assert_int_equal(s.count, 1);
	vp_gpuset_free(&s);
	assert_int_equal(vp_gpuset_parse(&c, "65536xA100", &s, &msg), 0);
	assert_int_equal(s.count, 65536);
	vp_gpuset_free(&s);

	assert_int_equal(msg.len, 0);
	vp_buf_free(&msg);
	vp_catalog_free(&c);
}

static void
gpuset_errors(void **state)
{
	struct vp_catalog c;
	struct vp_gpuset s;
	struct vp_buf msg;

	(void)state;
	load_small(&c);

	vp_buf_init(&msg);
	assert_int_equal(vp_gpuset_parse(&c, "0xA100", &s, &msg), -1);
	assert_string_equal(msg.s, "GPU count in '0xA100' is too small "
	    "(expected 1 to 65536)");
	vp_buf_free(&msg);

	vp_buf_init(&msg);
	/* 70000 > 65536. */
	assert_int_equal(vp_gpuset_parse(&c, "70000xA100", &s, &msg), -1);
	assert_string_equal(msg.s, "GPU count in '70000xA100' is too large "
	    "(expected 1 to 65536)");
	vp_buf_free(&msg);

	vp_buf_init(&msg);
	/* 30 digits: too long to even parse. */
	assert_int_equal(vp_gpuset_parse(&c,
	    "123456789012345678901234567890xA100", &s, &msg), -1);
	assert_non_null(strstr(msg.s, "is too large"));
	vp_buf_free(&msg);

	vp_buf_init(&msg);
	/* Suggestions as worked out in suggest(): 1, 2 and 3 edits. */
	assert_int_equal(vp_gpuset_parse(&c, "A1000", &s, &msg), -1);
	assert_string_equal(msg.s, "unknown GPU 'A1000'; closest: "
	    "A100-80G-SXM, H100-80G-SXM, RTX4090-24G (see 'vramplan gpus')");
	vp_buf_free(&msg);

	vp_buf_init(&msg);
	/* The name after the count is what is unknown. */
	assert_int_equal(vp_gpuset_parse(&c, "3xH1OO", &s, &msg), -1);
	assert_non_null(strstr(msg.s, "unknown GPU 'H1OO'; closest: "
	    "H100-80G-SXM"));
	vp_buf_free(&msg);

	vp_catalog_free(&c);
}

/* ---- catalog errors --------------------------------------------------- */

static void
duplicate_id(void **state)
{
	struct vp_catalog c;
	struct vp_diags d = { 0 };

	(void)state;
	/* Ids compare case-insensitively; the error is at the second card
	 * (line 3; its mapping starts after "- ", column 3). */
	assert_int_equal(load_cat("- id: A100-80G-SXM\n"
	    "  usable_memory_mib: 1\n"
	    "- id: a100-80g-sxm\n"
	    "  usable_memory_mib: 2\n", &c, &d), -1);
	expect_error_at(&d, "duplicate card id 'a100-80g-sxm'", 3, 3);
	assert_int_equal(c.n, 0);
	assert_null(c.v);
	vp_diags_clear(&d);
}

static void
alias_is_another_id(void **state)
{
	struct vp_catalog c;
	struct vp_diags d = { 0 };

	(void)state;
	assert_int_equal(load_cat("- id: A100-80G-SXM\n"
	    "  usable_memory_mib: 1\n"
	    "- id: A100-80G-PCIE\n"
	    "  aliases: [A100-PCIE, a100-80g-sxm]\n"
	    "  usable_memory_mib: 2\n", &c, &d), -1);
	expect_error_at(&d, "alias 'a100-80g-sxm' of 'A100-80G-PCIE' is the "
	    "id of card 'A100-80G-SXM'", 3, 3);
	assert_int_equal(c.n, 0);
	vp_diags_clear(&d);
}

static void
unknown_card_key(void **state)
{
	struct vp_catalog c;
	struct vp_diags d = { 0 };

	(void)state;
	assert_int_equal(load_cat("- id: X1\n"
	    "  memroy_gb: 80\n"			/* line 2, key at col 3 */
	    "  usable_memory_mib: 1\n"
	    "  interconnect: {gpu_to_gpu_gb: 5}\n"	/* line 4, col 18 */
	    , &c, &d), -1);
	expect_error_at(&d, "unknown key 'memroy_gb' in card 'X1'; did you "
	    "mean 'memory_gb'?", 2, 3);
	expect_error_at(&d, "unknown key 'gpu_to_gpu_gb' in 'interconnect' of "
	    "'X1'; did you mean 'gpu_to_gpu_gbs'?", 4, 18);
	vp_diags_clear(&d);

	/* Documentation-only keys are accepted. */
	assert_int_equal(load_cat("- id: X1\n  usable_memory_mib: 1\n"
	    "  sources: [a, b]\n  notes: anything\n  estimated: true\n"
	    "  launch_year: 2020\n", &c, &d), 0);
	assert_int_equal(d.n, 0);
	vp_catalog_free(&c);
}

static void
card_errors(void **state)
{
	struct vp_catalog c;
	struct vp_diags d = { 0 };

	(void)state;
	assert_int_equal(load_cat("- usable_memory_mib: 1\n", &c, &d), -1);
	expect_error_at(&d, "card has no 'id'", 1, 3);
	vp_diags_clear(&d);

	assert_int_equal(load_cat("- id: X1\n  memory_gb: 8\n", &c, &d), -1);
	expect_error_at(&d, "card 'X1' has no 'usable_memory_mib'", 1, 3);
	vp_diags_clear(&d);

	assert_int_equal(load_cat("- id: X1\n  usable_memory_mib: 0\n", &c,
	    &d), -1);
	expect_error_at(&d, "'usable_memory_mib' must be a whole number from 1 to 4294967296, not '0'", 2, 22);
	vp_diags_clear(&d);

	assert_int_equal(load_cat("- id: X1\n  usable_memory_mib: 1\n"
	    "  tdp_w: hot\n", &c, &d), -1);
	expect_error_at(&d, "'tdp_w' must be a number", 3, 10);
	vp_diags_clear(&d);

	assert_int_equal(load_cat("- id: X1\n  usable_memory_mib: 1\n"
	    "  aliases: X\n", &c, &d), -1);
	expect_error_at(&d, "'aliases' must be a list, not 'X'", 3, 12);
	vp_diags_clear(&d);

	assert_int_equal(load_cat("id: X1\n", &c, &d), -1);
	expect_error_at(&d, "a GPU catalog must be a list of cards", 1, 1);
	vp_diags_clear(&d);

	assert_int_equal(load_cat("", &c, &d), -1);
	expect_error_at(&d, "a GPU catalog must be a list of cards", 1, 1);
	vp_diags_clear(&d);
}

/*
 * FIXED BUG (gpu_read.c vp_catalog_from_doc): the uniqueness check ("Names
 * must be unique across ids and aliases") compares ids with ids and ids
 * with aliases, never an alias with another card's alias.  Two cards that
 * both claim the alias "A100" load fine, and vp_catalog_find silently
 * returns the first.  (It also reports an alias equal to the card's OWN id
 * as "the id of another card", since the loop does not skip i == j.)
 * Fix: also compare every alias of card i with every alias of card j > i,
 * case-insensitively, and skip i == j in the alias-vs-id loop (or word
 * that case separately).
 */
static void
bug_duplicate_alias_across_cards(void **state)
{
	struct vp_catalog c;
	struct vp_diags d = { 0 };

	(void)state;
	assert_int_equal(load_cat("- id: A100-80G-SXM\n"
	    "  aliases: [A100]\n"
	    "  usable_memory_mib: 1\n"
	    "- id: A100-40G-SXM\n"
	    "  aliases: [a100]\n"
	    "  usable_memory_mib: 2\n", &c, &d), -1);
	vp_catalog_free(&c);
	vp_diags_clear(&d);
}

/* ---- profiles --------------------------------------------------------- */

static void
profiles(void **state)
{
	struct vp_catalog c;
	struct vp_profile p;

	(void)state;
	load_small(&c);
	/* Generic CUDA: 400 MiB context = 419430400, the pre-Hopper cuBLAS
	 * workspace 2 x 4 MiB + 8 x 16 KiB = 8519680. */
	vp_profile_default(NULL, &p);
	assert_true(p.context_bytes == 419430400ULL);
	assert_true(p.cublas_workspace_bytes == 8519680ULL);
	assert_true(p.nccl_bytes_per_group == 268435456ULL);
	assert_true(p.alloc_round_bytes == 512);
	assert_true(p.large_segment_bytes == 2097152ULL);
	assert_float_equal(p.frag_share, 0.05, 0);
	assert_float_equal(p.mfu, 0.40, 0);
	/* Ampere = generic. */
	vp_profile_default(&c.v[0], &p);
	assert_true(p.context_bytes == 419430400ULL);
	/* Hopper: 500 MiB = 524288000, 32 MiB = 33554432. */
	vp_profile_default(&c.v[1], &p);
	assert_true(p.context_bytes == 524288000ULL);
	assert_true(p.cublas_workspace_bytes == 33554432ULL);
	/* Consumer cards: lower MFU. */
	vp_profile_default(&c.v[2], &p);
	assert_float_equal(p.mfu, 0.35, 0);
	vp_catalog_free(&c);
}

/* ---- the shipped catalog ---------------------------------------------- */

static void
shipped_catalog(void **state)
{
	const char *dir = getenv("VRAMPLAN_DATA");
	struct vp_catalog c;
	struct vp_diags d = { 0 };
	struct vp_buf path;
	const struct vp_gpu *g;
	size_t i, j, k, a, b;

	(void)state;
	if (dir == NULL || *dir == '\0') {
		skip();
		return;
	}
	vp_buf_init(&path);
	vp_buf_printf(&path, "%s/gpus.yaml", dir);
	if (vp_catalog_load(path.s, &c, &d) != 0) {
		struct vp_buf b2;
		vp_buf_init(&b2);
		vp_diags_format(&d, &b2);
		fail_msg("%s did not load:\n%s", path.s, b2.s);
	}
	assert_int_equal(vp_diags_count(&d, VP_ERROR), 0);
	assert_int_equal(c.n, 36);

	for (i = 0; i < c.n; i++) {
		g = &c.v[i];
		/*
		 * What one process can allocate never exceeds the marketed
		 * memory: usable * devices <= memory_gb * 1024 MiB * 2^20
		 * (MI250X: 2 devices of 65208 MiB = 130416 MiB <= 131072).
		 */
		if (isnan(g->memory_gb))
			fail_msg("card %s has no memory_gb", g->id);
		if ((double)g->usable_bytes * g->devices_per_card >
		    g->memory_gb * 1024.0 * 1048576.0)
			fail_msg("card %s: usable %llu B x %u > %g GB marketed",
			    g->id, (unsigned long long)g->usable_bytes,
			    g->devices_per_card, g->memory_gb);
		if (g->usable_bytes == 0 || g->family == VP_GPU_FAM_GENERIC)
			fail_msg("card %s lacks usable memory or family",
			    g->id);
		/* Every name, id or alias, names one card only. */
		for (j = i + 1; j < c.n; j++) {
			const struct vp_gpu *h = &c.v[j];

			if (vp_strcaseeq(g->id, h->id))
				fail_msg("id %s twice", g->id);
			for (a = 0; a < g->naliases; a++) {
				if (vp_strcaseeq(g->aliases[a], h->id))
					fail_msg("alias %s = id", g->aliases[a]);
				for (b = 0; b < h->naliases; b++)
					if (vp_strcaseeq(g->aliases[a],
					    h->aliases[b]))
						fail_msg("alias %s on %s and %s",
						    g->aliases[a], g->id, h->id);
			}
			for (b = 0; b < h->naliases; b++)
				if (vp_strcaseeq(h->aliases[b], g->id))
					fail_msg("alias %s = id", h->aliases[b]);
		}
		/*
		 * Issue 16: consumer and workstation cards are sold for one
		 * node; a card that can be networked and states NICs states
		 * its node size too; a measured matmul rate never exceeds
		 * the dense peak it is measured against.
		 */
		if (g->segment != NULL && (strcmp(g->segment, "consumer") ==
		    0 || strcmp(g->segment, "workstation") == 0) &&
		    g->scale_out)
			fail_msg("card %s: a %s card with scale_out", g->id,
			    g->segment);
		if (g->nics_per_node > 0 && (g->gpus_per_node == 0 ||
		    !(g->nic_gbps > 0)))
			fail_msg("card %s: NICs without a node size or rate",
			    g->id);
		if (g->gemm_bf16_tflops > g->bf16_tflops ||
		    g->gemm_fp8_tflops > g->fp8_tflops)
			fail_msg("card %s: measured matmul rate over peak",
			    g->id);
		/* Every price says who sells what, when, from where. */
		for (k = 0; k < g->nprices; k++) {
			const struct vp_price *pr = &g->prices[k];

			if (pr->provider == NULL || pr->offering == NULL ||
			    pr->date == NULL || pr->source == NULL ||
			    !(pr->usd_per_gpu_hour > 0) || pr->unit_gpus < 1)
				fail_msg("a price of %s lacks provider, "
				    "offering, date, source, rate or unit",
				    g->id);
		}
		/* And a card's aliases are distinct from each other. */
		for (a = 0; a < g->naliases; a++)
			for (k = a + 1; k < g->naliases; k++)
				if (vp_strcaseeq(g->aliases[a], g->aliases[k]))
					fail_msg("alias %s twice on %s",
					    g->aliases[a], g->id);
	}
	/* Bare family names resolve to the documented cards. */
	g = vp_catalog_find(&c, "A100");
	assert_non_null(g);
	assert_string_equal(g->id, "A100-80G-SXM");
	g = vp_catalog_find(&c, "h100");
	assert_non_null(g);
	assert_string_equal(g->id, "H100-80G-SXM");
	/* Device names as the driver and PyTorch spell them. */
	{
		static const struct { const char *name; uint64_t mib;
		    const char *id; } dev[] = {
			{ "NVIDIA H100 80GB HBM3", 81559, "H100-80G-SXM" },
			{ "NVIDIA H100 PCIe", 81559, "H100-80G-PCIE" },
			{ "NVIDIA H100 NVL", 95830, "H100-94G-NVL" },
			{ "NVIDIA H200", 143771, "H200-141G-SXM" },
			{ "NVIDIA A100-SXM4-80GB", 81920, "A100-80G-SXM" },
			{ "NVIDIA A100-SXM4-40GB", 40960, "A100-40G-SXM" },
			{ "NVIDIA A100 80GB PCIe", 81920, "A100-80G-PCIE" },
			{ "NVIDIA A10G", 23028, "A10G-24G" },
			{ "NVIDIA A10", 23028, "A10-24G" },
			{ "NVIDIA GeForce RTX 4090", 24564, "RTX4090-24G" },
			{ "NVIDIA RTX 6000 Ada Generation", 49140,
			    "RTX6000ADA-48G" },
			{ "NVIDIA L4", 23034, "L4-24G" },
			{ "NVIDIA L40S", 46068, "L40S-48G" },
			{ "Tesla T4", 15360, "T4-16G" },
			{ "Tesla V100-SXM2-32GB", 32768, "V100-32G-SXM2" },
		};

		for (i = 0; i < VP_NELEM(dev); i++) {
			g = vp_catalog_match_device(&c, dev[i].name,
			    dev[i].mib << 20);
			if (g == NULL || strcmp(g->id, dev[i].id) != 0)
				fail_msg("'%s' matched %s, not %s", dev[i].name,
				    g ? g->id : "nothing", dev[i].id);
		}
		assert_null(vp_catalog_match_device(&c, "NVIDIA Foo 9000",
		    0));
		assert_null(vp_catalog_match_device(&c, "", 0));
	}
	/* The HGX H100 network of issue 16: 8 GPUs, 8 x 400 Gb/s. */
	g = vp_catalog_find(&c, "H100");
	assert_int_equal(g->gpus_per_node, 8);
	assert_int_equal(g->nics_per_node, 8);
	assert_true(g->nic_gbps == 400 && g->scale_out);
	assert_false(vp_catalog_find(&c, "RTX4090")->scale_out);
	/* MI250X: 128 GB card = 2 devices; 65208 MiB each <= 64 GiB. */
	g = vp_catalog_find(&c, "MI250X");
	assert_non_null(g);
	assert_int_equal(g->devices_per_card, 2);
	assert_true(g->usable_bytes <= 64ULL << 30);
	vp_catalog_free(&c);
	vp_diags_clear(&d);
	vp_buf_free(&path);
}

/*
 * The network and achievable blocks: read when given, strict keys, and
 * without scale_out a consumer card is one node only, a datacenter one
 * not.
 */
static void
network_block(void **state)
{
	static const char text[] =
	    "- id: BOX-24G\n"
	    "  segment: consumer\n"
	    "  usable_memory_mib: 24000\n"
	    "- id: DC-80G\n"
	    "  segment: datacenter\n"
	    "  usable_memory_mib: 80000\n"
	    "  network:\n"
	    "    gpus_per_node: 8\n"
	    "    intra_busbw_gbs: 370.8\n"
	    "    nics_per_node: 8\n"
	    "    nic_gbps: 400\n"
	    "    source: test\n"
	    "  achievable: {gemm_bf16_tflops: 794.5, gemm_fp8_tflops: null}\n"
	    "- id: NET-1G\n"
	    "  segment: consumer\n"
	    "  usable_memory_mib: 1000\n"
	    "  network: {scale_out: true}\n";
	static const char bad[] =
	    "- id: X-1G\n"
	    "  usable_memory_mib: 1000\n"
	    "  network: {nics: 8}\n";
	struct vp_catalog c;
	struct vp_diags d = { 0 };
	const struct vp_gpu *g;

	(void)state;
	assert_int_equal(load_cat(text, &c, &d), 0);
	g = vp_catalog_find(&c, "BOX-24G");
	assert_false(g->scale_out);
	assert_int_equal(g->gpus_per_node, 0);
	assert_true(isnan(g->nic_gbps) && isnan(g->gemm_bf16_tflops));
	g = vp_catalog_find(&c, "DC-80G");
	assert_true(g->scale_out);
	assert_int_equal(g->gpus_per_node, 8);
	assert_int_equal(g->nics_per_node, 8);
	assert_true(g->nic_gbps == 400 && g->intra_busbw_gbs == 370.8);
	assert_true(g->gemm_bf16_tflops == 794.5 &&
	    isnan(g->gemm_fp8_tflops));
	assert_true(vp_catalog_find(&c, "NET-1G")->scale_out);
	vp_catalog_free(&c);
	vp_diags_clear(&d);
	assert_int_not_equal(load_cat(bad, &c, &d), 0);
	expect_error_at(&d, "nics", 3, 0);
	vp_diags_clear(&d);
}

/*
 * family is a validated name: a typo is an error at its position with
 * the valid list (it fell through to the generic profile before), and
 * the cards of other stacks say they have no measured constants only in
 * gpu.c's table, not by inheriting CUDA's silently.
 */
static void
family_names(void **state)
{
	struct vp_catalog c;
	struct vp_diags d = { 0 };
	struct vp_profile pr;

	(void)state;
	assert_int_equal(load_cat("- id: X1\n"
	    "  usable_memory_mib: 1\n"
	    "  family: hoper\n", &c, &d), -1);
	expect_error_at(&d, "unknown family 'hoper'; did you mean 'hopper'? "
	    "(one of: volta, turing, ampere,", 3, 11);
	assert_null(find(&d, "generic"));
	vp_diags_clear(&d);
	vp_catalog_free(&c);

	assert_int_equal(load_cat("- id: X1\n  usable_memory_mib: 1\n"
	    "- id: X2\n  usable_memory_mib: 1\n  family: gaudi\n", &c, &d),
	    0);
	assert_int_equal(c.v[0].family, VP_GPU_FAM_GENERIC);
	assert_int_equal(c.v[1].family, VP_GPU_FAM_GAUDI);
	/* Gaudi keeps the generic placeholders (goldens unchanged). */
	vp_profile_default(&c.v[1], &pr);
	assert_int_equal(pr.context_bytes, 400ULL << 20);
	vp_catalog_free(&c);
}

/*
 * What compare charges (vp_gpu_job_price): whole units of sale, one
 * machine (a node, or the unit when larger) unless the offering is
 * multi-node, dated prices before undated ones unless asked.
 */
static void
job_price(void **state)
{
	static const char text[] =
	    "- id: X-80G\n"
	    "  memory_gb: 80\n"
	    "  usable_memory_mib: 81000\n"
	    "  family: hopper\n"
	    "  cloud_prices:\n"
	    "  - {provider: pod, usd_per_gpu_hour: 2.0, unit_gpus: 1, "
	    "covers: instance, date: '2026-09-25'}\n"
	    "  - {provider: cluster, usd_per_gpu_hour: 1.5, unit_gpus: 8, "
	    "multi_node: true, date: '2026-10'}\n"
	    "  - {provider: market, usd_per_gpu_hour: 0.5, unit_gpus: 2, "
	    "covers: gpu, date: unknown (a snapshot)}\n";
	struct vp_catalog c;
	struct vp_diags d = { 0 };
	const struct vp_price *p;
	double usd;
	unsigned paid;

	(void)state;
	assert_int_equal(load_cat(text, &c, &d), 0);
	assert_true(c.v[0].prices[0].dated && c.v[0].prices[1].dated);
	assert_false(c.v[0].prices[2].dated);
	assert_true(c.v[0].prices[2].gpu_only && !c.v[0].prices[0].gpu_only);
	/* One GPU: the pod (2.0) beats a whole unit of 8 (12.0); the
	 * cheaper market is undated, so it comes after. */
	p = vp_gpu_job_price(&c.v[0], 1, 8, false, &usd, &paid);
	assert_string_equal(p->provider, "pod");
	assert_true(usd == 2.0 && paid == 1);
	/* Asked to rank them together, the market's unit of 2 wins. */
	p = vp_gpu_job_price(&c.v[0], 1, 8, true, &usd, &paid);
	assert_string_equal(p->provider, "market");
	assert_true(usd == 1.0 && paid == 2);
	/* Six GPUs: one unit of 8 at 1.5 (12.0) beats 6 pods (12.0)? No:
	 * equal, the first listed stays. */
	p = vp_gpu_job_price(&c.v[0], 6, 8, false, &usd, &paid);
	assert_string_equal(p->provider, "pod");
	assert_true(usd == 12.0 && paid == 6);
	/* Seven: the cluster's unit of 8 (12.0) beats 7 pods (14.0). */
	p = vp_gpu_job_price(&c.v[0], 7, 8, false, &usd, &paid);
	assert_string_equal(p->provider, "cluster");
	assert_true(usd == 12.0 && paid == 8);
	/* Beyond one node only the multi-node offering rents the job. */
	p = vp_gpu_job_price(&c.v[0], 20, 8, true, &usd, &paid);
	assert_string_equal(p->provider, "cluster");
	assert_true(usd == 1.5 * 24 && paid == 24);
	c.v[0].prices[1].multi_node = false;
	assert_null(vp_gpu_job_price(&c.v[0], 20, 8, true, &usd, &paid));
	assert_true(isnan(usd) && paid == 0);
	vp_catalog_free(&c);
	vp_diags_clear(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(job_price),
		cmocka_unit_test(read_fields),
		cmocka_unit_test(find_by_id_and_alias),
		cmocka_unit_test(suggest),
		cmocka_unit_test(gpuset_ok),
		cmocka_unit_test(gpuset_errors),
		cmocka_unit_test(duplicate_id),
		cmocka_unit_test(alias_is_another_id),
		cmocka_unit_test(unknown_card_key),
		cmocka_unit_test(card_errors),
		cmocka_unit_test(bug_duplicate_alias_across_cards),
		cmocka_unit_test(profiles),
		cmocka_unit_test(shipped_catalog),
		cmocka_unit_test(network_block),
		cmocka_unit_test(family_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
