/*
 * gpu_read.c — the GPU catalog reader (see gpu_read.h).
 *
 * Every card key the catalog documents is known here; an unknown key is an
 * error with a "did you mean", so a typo in a user catalog cannot silently
 * drop a number.  Keys that only document (sources, notes) are accepted
 * and not read.
 */
#include "gpu_read.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const card_keys[] = {
	"id", "aliases", "vendor", "name", "segment", "architecture",
	"launch_year", "form_factor", "memory_gb", "memory_unit_note",
	"memory_type", "usable_memory_mib", "usable_memory_basis",
	"devices_per_card", "family", "reported_total_memory",
	"memory_bandwidth_gbs", "fp32_tflops", "tf32_tflops_dense",
	"fp16_tflops_dense", "bf16_tflops_dense", "fp8_tflops_dense",
	"fp4_tflops_dense", "fp16_acc16_tflops_dense", "fp8_acc16_tflops_dense",
	"tflops_notes", "tdp_w", "interconnect", "launch_price_usd",
	"launch_price_note", "cloud_prices", "estimated", "estimated_fields",
	"sources", "notes", "network", "achievable",
};
static const char *const link_keys[] = { "gpu_to_gpu", "host",
	"gpu_to_gpu_gbs", "host_gbs" };
static const char *const network_keys[] = { "gpus_per_node",
	"intra_busbw_gbs", "nics_per_node", "nic_gbps", "scale_out", "source" };
static const char *const achievable_keys[] = { "gemm_bf16_tflops",
	"gemm_fp8_tflops", "source" };
static const char *const price_keys[] = { "provider", "offering",
	"usd_per_gpu_hour", "unit_gpus", "covers", "multi_node", "region",
	"date", "source", "note" };
static const char *const covers_names[] = { "instance", "gpu" };

/*
 * What a price buys: unit_gpus (default 1), covers (instance, the
 * default, or gpu), multi_node (default false); whether its date is a
 * calendar date ("2026-09-25", "2026-06 (us-east-1)") rather than
 * "unknown (...)" or "undated (...)".
 */
static int
price_terms(const struct ynode *p, const char *file, struct vp_price *pr,
    struct vp_diags *d)
{
	const struct ynode *n;
	uint64_t u = 1;
	int cov = 0, rc = 0;
	bool mn = false;
	const char *s = pr->date;

	if ((n = ynode_get(p, "unit_gpus")) != NULL && !ynode_is_null(n))
		rc |= ynode_u64(n, file, "unit_gpus", 1, 1024, &u, d);
	if ((n = ynode_get(p, "covers")) != NULL && !ynode_is_null(n))
		rc |= ynode_enum(n, file, "covers", covers_names,
		    (int)VP_NELEM(covers_names), &cov, d);
	if ((n = ynode_get(p, "multi_node")) != NULL && !ynode_is_null(n))
		rc |= ynode_bool(n, file, "multi_node", &mn, d);
	pr->unit_gpus = (unsigned)u;
	pr->gpu_only = cov == 1;
	pr->multi_node = mn;
	pr->dated = s != NULL && strlen(s) >= 7 && isdigit((unsigned char)s[0])
	    && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) &&
	    isdigit((unsigned char)s[3]) && s[4] == '-' &&
	    isdigit((unsigned char)s[5]) && isdigit((unsigned char)s[6]);
	return rc;
}

/* Optional number: NAN when absent or null. */
static int
opt_num(const struct ynode *map, const char *file, const char *key,
    double max, double *out, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(map, key);

	*out = NAN;
	if (n == NULL || ynode_is_null(n))
		return 0;
	return ynode_double(n, file, key, 0, max, out, d);
}

/* A whole count in [0, max]: 0 when absent or null. */
static int
opt_count(const struct ynode *map, const char *file, const char *key,
    uint64_t max, unsigned *out, struct vp_diags *d)
{
	const struct ynode *n = ynode_get(map, key);
	uint64_t u;

	*out = 0;
	if (n == NULL || ynode_is_null(n))
		return 0;
	if (ynode_u64(n, file, key, 1, max, &u, d) != 0)
		return -1;
	*out = (unsigned)u;
	return 0;
}

/*
 * The `network` and `achievable` blocks (issue 16).  Without a network
 * block, or without its scale_out, a consumer or workstation card is one
 * node only and any other card can be networked.
 */
static int
read_network(const struct ynode *c, const char *file, struct vp_gpu *g,
    struct vp_diags *d)
{
	const struct ynode *n, *v;
	char what[96];
	int rc = 0;

	g->intra_busbw_gbs = g->nic_gbps = NAN;
	g->gemm_bf16_tflops = g->gemm_fp8_tflops = NAN;
	g->scale_out = !(g->segment != NULL &&
	    (strcmp(g->segment, "consumer") == 0 ||
	    strcmp(g->segment, "workstation") == 0));
	if ((n = ynode_get(c, "network")) != NULL && !ynode_is_null(n)) {
		if (ynode_want(n, YN_MAP, file, "network", d) != 0)
			return -1;
		snprintf(what, sizeof what, "'network' of '%.60s'", g->id);
		rc |= ynode_check_keys(n, file, what, network_keys,
		    VP_NELEM(network_keys), d);
		rc |= opt_count(n, file, "gpus_per_node", 4096,
		    &g->gpus_per_node, d);
		rc |= opt_count(n, file, "nics_per_node", 4096,
		    &g->nics_per_node, d);
		rc |= opt_num(n, file, "intra_busbw_gbs", 1e6,
		    &g->intra_busbw_gbs, d);
		rc |= opt_num(n, file, "nic_gbps", 1e5, &g->nic_gbps, d);
		if ((v = ynode_get(n, "scale_out")) != NULL &&
		    !ynode_is_null(v) &&
		    ynode_bool(v, file, "scale_out", &g->scale_out, d) != 0)
			rc = -1;
	}
	if ((n = ynode_get(c, "achievable")) != NULL && !ynode_is_null(n)) {
		if (ynode_want(n, YN_MAP, file, "achievable", d) != 0)
			return -1;
		snprintf(what, sizeof what, "'achievable' of '%.60s'", g->id);
		rc |= ynode_check_keys(n, file, what, achievable_keys,
		    VP_NELEM(achievable_keys), d);
		rc |= opt_num(n, file, "gemm_bf16_tflops", 1e6,
		    &g->gemm_bf16_tflops, d);
		rc |= opt_num(n, file, "gemm_fp8_tflops", 1e6,
		    &g->gemm_fp8_tflops, d);
	}
	return rc ? -1 : 0;
}

static int
read_card(const struct ynode *c, const char *file, struct vp_gpu *g,
    struct vp_diags *d)
{
	const struct ynode *n, *link, *prices;
	char what[96];
	uint64_t u;
	double x;
	size_t i;
	int rc = 0;

	memset(g, 0, sizeof *g);
	if (ynode_want(c, YN_MAP, file, "card", d) != 0)
		return -1;
	rc |= ynode_opt_string(c, file, "id", &g->id, d);
	if (g->id == NULL) {
		vp_diag_add(d, file, c->pos, VP_ERROR,
		    "card has no 'id' (e.g. id: H100-80G-SXM)");
		return -1;
	}
	snprintf(what, sizeof what, "card '%.60s'", g->id);
	rc |= ynode_check_keys(c, file, what, card_keys, VP_NELEM(card_keys), d);
	if ((n = ynode_get(c, "aliases")) != NULL && !ynode_is_null(n)) {
		if (ynode_want(n, YN_SEQ, file, "aliases", d) != 0)
			return -1;
		g->aliases = xcalloc(n->nkids, sizeof *g->aliases);
		for (i = 0; i < n->nkids; i++) {
			const char *s;
			if (ynode_string(n->kids[i], file, "alias", &s, d) != 0)
				return -1;
			g->aliases[g->naliases++] = xstrdup(s);
		}
	}
	rc |= ynode_opt_string(c, file, "vendor", &g->vendor, d);
	rc |= ynode_opt_string(c, file, "name", &g->name, d);
	rc |= ynode_opt_string(c, file, "segment", &g->segment, d);
	/* A known family or an error listing them: a typo must not fall
	 * through to the generic profile.  The first name, "generic", is
	 * what no key means, not a value to write. */
	g->family = VP_GPU_FAM_GENERIC;
	if ((n = ynode_get(c, "family")) != NULL) {
		int fam;

		if (ynode_enum(n, file, "family", vp_gpu_family_names + 1,
		    VP_GPU_FAM_COUNT - 1, &fam, d) != 0)
			rc = -1;
		else
			g->family = (enum vp_gpu_family)(fam + 1);
	}
	rc |= ynode_opt_string(c, file, "memory_type", &g->memory_type, d);
	rc |= ynode_opt_string(c, file, "usable_memory_basis", &g->usable_basis, d);
	rc |= opt_num(c, file, "memory_gb", 1e6, &g->memory_gb, d);
	if ((n = ynode_get(c, "usable_memory_mib")) == NULL) {
		vp_diag_add(d, file, c->pos, VP_ERROR,
		    "card '%s' has no 'usable_memory_mib' (what one process "
		    "can allocate, in MiB)", g->id);
		return -1;
	}
	if (ynode_u64(n, file, "usable_memory_mib", 1, 1ULL << 32, &u, d) != 0)
		return -1;
	g->usable_bytes = u << 20;
	g->devices_per_card = 1;
	if ((n = ynode_get(c, "devices_per_card")) != NULL) {
		if (ynode_u64(n, file, "devices_per_card", 1, 16, &u, d) != 0)
			return -1;
		g->devices_per_card = (unsigned)u;
	}
	rc |= opt_num(c, file, "memory_bandwidth_gbs", 1e6, &g->bandwidth_gbs, d);
	rc |= opt_num(c, file, "fp32_tflops", 1e6, &g->fp32_tflops, d);
	rc |= opt_num(c, file, "tf32_tflops_dense", 1e6, &g->tf32_tflops, d);
	rc |= opt_num(c, file, "fp16_tflops_dense", 1e6, &g->fp16_tflops, d);
	rc |= opt_num(c, file, "bf16_tflops_dense", 1e6, &g->bf16_tflops, d);
	rc |= opt_num(c, file, "fp8_tflops_dense", 1e6, &g->fp8_tflops, d);
	rc |= opt_num(c, file, "tdp_w", 1e5, &g->tdp_w, d);
	rc |= opt_num(c, file, "launch_price_usd", 1e9, &g->launch_price_usd, d);
	g->link_gbs = g->host_gbs = NAN;
	if ((link = ynode_get(c, "interconnect")) != NULL &&
	    !ynode_is_null(link)) {
		if (ynode_want(link, YN_MAP, file, "interconnect", d) != 0)
			return -1;
		snprintf(what, sizeof what, "'interconnect' of '%.60s'", g->id);
		rc |= ynode_check_keys(link, file, what, link_keys,
		    VP_NELEM(link_keys), d);
		rc |= opt_num(link, file, "gpu_to_gpu_gbs", 1e6, &g->link_gbs, d);
		rc |= opt_num(link, file, "host_gbs", 1e6, &g->host_gbs, d);
	}
	rc |= read_network(c, file, g, d);
	if ((prices = ynode_get(c, "cloud_prices")) != NULL &&
	    !ynode_is_null(prices)) {
		if (ynode_want(prices, YN_SEQ, file, "cloud_prices", d) != 0)
			return -1;
		g->prices = xcalloc(prices->nkids, sizeof *g->prices);
		for (i = 0; i < prices->nkids; i++) {
			const struct ynode *p = prices->kids[i];
			struct vp_price *pr = &g->prices[g->nprices++];

			if (ynode_want(p, YN_MAP, file, "price", d) != 0)
				return -1;
			snprintf(what, sizeof what, "a price of '%.60s'", g->id);
			rc |= ynode_check_keys(p, file, what, price_keys,
			    VP_NELEM(price_keys), d);
			rc |= ynode_opt_string(p, file, "provider", &pr->provider, d);
			rc |= ynode_opt_string(p, file, "offering", &pr->offering, d);
			rc |= ynode_opt_string(p, file, "date", &pr->date, d);
			rc |= ynode_opt_string(p, file, "source", &pr->source, d);
			rc |= opt_num(p, file, "usd_per_gpu_hour", 1e6, &x, d);
			pr->usd_per_gpu_hour = x;
			rc |= price_terms(p, file, pr, d);
		}
	}
	return rc ? -1 : 0;
}

int
vp_catalog_from_doc(const struct ydoc *doc, struct vp_catalog *c,
    struct vp_diags *d)
{
	const struct ynode *root = ydoc_root(doc);
	const char *file = ydoc_name(doc);
	size_t i, j;
	int rc = 0;

	memset(c, 0, sizeof *c);
	if (root == NULL || root->kind != YN_SEQ) {
		vp_diag_add(d, file, root ? root->pos :
		    (struct vp_srcpos){ 1, 1 }, VP_ERROR,
		    "a GPU catalog must be a list of cards");
		return -1;
	}
	c->v = xcalloc(root->nkids, sizeof *c->v);
	for (i = 0; i < root->nkids; i++) {
		if (read_card(root->kids[i], file, &c->v[c->n], d) != 0)
			rc = -1;
		c->n++;
		if (rc)
			break;
	}
	/*
	 * Names must be unique: ids among ids, an alias never another card's
	 * id nor another card's alias (a lookup would silently pick one).
	 * O(names^2) over a catalog of a few hundred names.
	 */
	for (i = 0; rc == 0 && i < c->n; i++)
		for (j = i + 1; j < c->n; j++) {
			const struct vp_gpu *a = &c->v[i], *b = &c->v[j];
			size_t ka, kb;

			if (vp_strcaseeq(a->id, b->id)) {
				vp_diag_add(d, file, root->kids[j]->pos,
				    VP_ERROR, "duplicate card id '%s'", b->id);
				rc = -1;
			}
			for (kb = 0; kb < b->naliases; kb++)
				if (vp_strcaseeq(a->id, b->aliases[kb])) {
					vp_diag_add(d, file, root->kids[j]->pos,
					    VP_ERROR, "alias '%s' of '%s' is "
					    "the id of card '%s'", b->aliases[kb],
					    b->id, a->id);
					rc = -1;
				}
			for (ka = 0; ka < a->naliases; ka++) {
				if (vp_strcaseeq(b->id, a->aliases[ka])) {
					vp_diag_add(d, file, root->kids[i]->pos,
					    VP_ERROR, "alias '%s' of '%s' is "
					    "the id of card '%s'", a->aliases[ka],
					    a->id, b->id);
					rc = -1;
				}
				for (kb = 0; kb < b->naliases; kb++)
					if (vp_strcaseeq(a->aliases[ka],
					    b->aliases[kb])) {
						vp_diag_add(d, file,
						    root->kids[j]->pos, VP_ERROR,
						    "alias '%s' names both '%s' "
						    "and '%s'", b->aliases[kb],
						    a->id, b->id);
						rc = -1;
					}
			}
		}
	if (rc)
		vp_catalog_free(c);
	return rc;
}

int
vp_catalog_load(const char *path, struct vp_catalog *c, struct vp_diags *d)
{
	struct ydoc *doc = ydoc_load_as(path, "GPU catalog", d);
	int rc;

	memset(c, 0, sizeof *c);
	if (doc == NULL)
		return -1;
	rc = vp_catalog_from_doc(doc, c, d);
	ydoc_free(doc);
	return rc;
}
