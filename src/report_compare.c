/* report_compare.c — card comparison output (see report_compare.h). */
#include "report_compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "svg.h"

/* User text (the model's name, a user catalog's cards and offerings) in
 * the text report goes through this (util.h: vp_esc). */
#define ESC(s, buf) vp_esc((s), (buf), sizeof(buf))

/* The cards whose own calibrated profile was used, when any. */
static void
calibrated_note(const struct vp_compare_report *r, struct vp_buf *o)
{
	size_t i, n = 0;
	char e1[VP_ESC_LEN];

	for (i = 0; i < r->n; i++)
		if (r->cards[i].calibrated)
			vp_buf_printf(o, "%s%s", n++ ? ", " : "Calibrated "
			    "profiles (vramplan calibrate) used for: ",
			    ESC(r->cards[i].gpu->id, e1));
	if (n)
		vp_buf_add(o, "; the others use the built-in defaults.\n");
}

/* The cheapest and the fastest fitting cards (indexes, -1: none); the
 * picture can only place cards with a price. */
static bool
cheaper(const struct vp_card_result *a, const struct vp_card_result *b)
{
	/* As compare ranks them: a dated price before an undated one. */
	if (a->undated_last && a->price->dated != b->price->dated)
		return a->price->dated;
	return a->at[0].cost_usd < b->at[0].cost_usd;
}

static void
extremes(const struct vp_compare_report *r, long *cheap, long *fast,
    bool priced_only)
{
	size_t i;

	*cheap = *fast = -1;
	for (i = 0; i < r->n; i++) {
		const struct vp_card_result *c = &r->cards[i];

		if (!c->fits || !c->meets || isnan(c->at[0].hours) ||
		    (priced_only && isnan(c->at[0].cost_usd)))
			continue;
		if (!isnan(c->at[0].cost_usd) && (*cheap < 0 ||
		    cheaper(c, &r->cards[*cheap])))
			*cheap = (long)i;
		if (*fast < 0 || c->at[0].hours < r->cards[*fast].at[0].hours)
			*fast = (long)i;
	}
}

void
vp_compare_text(const struct vp_compare_report *r, struct vp_buf *o)
{
	char b1[32], b2[32], b3[32], b4[32];
	char e1[VP_ESC_LEN], e2[VP_ESC_LEN], e3[VP_ESC_LEN], e4[VP_ESC_LEN];
	long cheap, fast;
	size_t i;

	vp_buf_printf(o, "Training %s on %.3g tokens", ESC(r->model->name, e1),
	    r->job->tokens);
	if (!isnan(r->job->deadline_hours))
		vp_buf_printf(o, " within %s", vp_report_hours(b1, sizeof b1,
		    r->job->deadline_hours));
	if (!isnan(r->job->budget_usd))
		vp_buf_printf(o, " for at most %s", vp_report_usd(b1,
		    sizeof b1, r->job->budget_usd));
	if (r->job->global_batch)
		vp_buf_printf(o, ", %llu sequences a step",
		    (unsigned long long)r->job->global_batch);
	vp_buf_printf(o, ": every card of the catalog, sorted by %s\n",
	    r->sort);
	vp_buf_printf(o, "%-17s %5s %-30s %10s %10s %10s %10s %10s\n", "CARD",
	    "GPUS", "PLAN", "TOKENS/S", "TIME", "COST", "$/B TOK", "BUY");
	for (i = 0; i < r->n; i++) {
		const struct vp_card_result *c = &r->cards[i];
		struct vp_buf lay;

		if (!c->fits) {
			vp_buf_printf(o, "%-17s %5s %s\n", ESC(c->gpu->id, e1),
			    "-", c->why[0] ? ESC(c->why, e2) : "does not fit");
			continue;
		}
		if (!c->meets || isnan(c->at[0].cand.tokens_per_second)) {
			vp_buf_printf(o, "%-17s %5u fits, but %s\n",
			    ESC(c->gpu->id, e1), c->at[0].gpus,
			    ESC(c->why, e2));
			continue;
		}
		vp_buf_init(&lay);
		vp_report_layout(&lay, &c->at[0].cand.plan);
		if (c->at[0].cand.plan.recompute != VP_RECOMP_NONE)
			vp_buf_printf(&lay, ", rc %s",
			    vp_recomp_names[c->at[0].cand.plan.recompute]);
		vp_buf_printf(o, "%-17s %5u %-30.30s %10.0f %10s %10s %10s %10s%s%s"
		    "\n", ESC(c->gpu->id, e1), c->at[0].gpus, lay.s,
		    c->at[0].cand.tokens_per_second,
		    vp_report_hours(b1, sizeof b1, c->at[0].hours),
		    vp_report_usd(b2, sizeof b2, c->at[0].cost_usd),
		    vp_report_usd(b3, sizeof b3, c->usd_per_billion_tokens),
		    vp_report_usd(b4, sizeof b4, c->purchase_usd),
		    c->at[0].cand.bandwidth_bound ? "  bandwidth-bound" : "",
		    c->price != NULL && !c->price->dated ? "  undated price" :
		    c->price == NULL && c->gpu->nprices > 0 ? "  no offering "
		    "rents this many" : "");
		if (c->fp16_fallback)
			vp_buf_printf(o, "%-17s %5s %s, no bf16 on this card\n",
			    "", "", vp_prec_names[c->at[0].cand.plan.precision]);
		vp_buf_free(&lay);
	}
	extremes(r, &cheap, &fast, false);
	if (cheap >= 0) {
		const struct vp_card_result *c = &r->cards[cheap];

		vp_buf_printf(o, "\nCheapest: %u x %s for %s in %s, at $%.2f per "
		    "GPU-hour (%s, %s, %s)", c->at[0].gpus, ESC(c->gpu->id, e1),
		    vp_report_usd(b1, sizeof b1, c->at[0].cost_usd),
		    vp_report_hours(b2, sizeof b2, c->at[0].hours), c->usd_per_hour,
		    c->price->provider ? ESC(c->price->provider, e2) : "?",
		    c->price->offering ? ESC(c->price->offering, e3) : "",
		    c->price->date ? ESC(c->price->date, e4) : "undated");
		if (c->at[0].gpus_paid != c->at[0].gpus)
			vp_buf_printf(o, ", %u GPUs paid for (sold %u at a time)",
			    c->at[0].gpus_paid, c->price->unit_gpus);
		vp_buf_printf(o, ".  Cost = hours x GPUs paid for x price; "
		    "hours = tokens / (tokens per second of the best plan on "
		    "the count shown: %s).\n", !isnan(r->job->deadline_hours) ?
		    "the fewest GPUs that finish in time" :
		    !isnan(r->job->budget_usd) ? "the fastest within the "
		    "budget" : "the fewest GPUs that fit");
		if (c->nat > 1)
			vp_buf_printf(o, "With %u of them: %s, %s.\n",
			    c->at[1].gpus, vp_report_hours(b1, sizeof b1,
			    c->at[1].hours), vp_report_usd(b2, sizeof b2,
			    c->at[1].cost_usd));
	}
	if (fast >= 0)
		vp_buf_printf(o, "Fastest on the fewest cards: %u x %s in %s.\n",
		    r->cards[fast].at[0].gpus, ESC(r->cards[fast].gpu->id, e1),
		    vp_report_hours(b1, sizeof b1, r->cards[fast].at[0].hours));
	vp_buf_add(o, "Prices: each card's cheapest offering in the catalog (or "
	    "--price) that rents the count as one job, paid in whole units "
	    "of sale; a listing, pod or single VM is one machine, so a job "
	    "beyond one node needs a multi-node offering.  Cards without a "
	    "price are ranked last by cost, and undated prices after dated "
	    "ones (--undated-prices ranks them together).\n");
	for (i = 0; i < r->n && !r->cards[i].fp16_fallback; i++)
		;
	if (i < r->n)
		vp_buf_add(o, "Cards without bf16 tensor cores (the catalog lists "
		    "no bf16 rate) are planned in fp16 with a loss scaler; "
		    "--precision keeps bf16 on every card, untimed where it "
		    "has no rate.\n");
	calibrated_note(r, o);
}

/* One card: the fewest GPUs it needs, the plan there, time and money,
 * the price's source, and the same at 2x and 4x the GPUs. */
static void
json_card(struct vp_json *j, const struct vp_card_result *c)
{
	const struct vp_plan *p = &c->at[0].cand.plan;
	unsigned k;

	vp_json_object(j, NULL, VP_JSON_INLINE);
	vp_json_str(j, "gpu", c->gpu->id);
	vp_json_bool(j, "fits", c->fits);
	vp_json_bool(j, "calibrated", c->calibrated);
	if (!c->fits) {
		vp_json_str(j, "why", c->why);
		vp_json_end(j);
		return;
	}
	vp_json_u64(j, "gpus_needed", c->gpus_needed);
	vp_json_bool(j, "meets", c->meets);
	if (!c->meets) {
		vp_json_str(j, "why", c->why);
		vp_json_end(j);
		return;
	}
	vp_json_u64(j, "gpus", c->at[0].gpus);
	vp_json_object(j, "plan", VP_JSON_INLINE);
	vp_json_str(j, "precision", vp_prec_names[p->precision]);
	if (c->fp16_fallback)
		vp_json_str(j, "precision_note", "no bf16 tensor cores on this "
		    "card: planned in its fp16 twin");
	vp_report_json_layout(j, p);
	vp_json_u64(j, "micro_batch", p->micro_batch);
	vp_json_u64(j, "grad_accum", p->grad_accum);
	vp_json_end(j);
	vp_json_u64(j, "device_peak_bytes", c->at[0].cand.device_peak);
	vp_json_num(j, "tokens_per_second", c->at[0].cand.tokens_per_second);
	vp_json_num(j, "hours", c->at[0].hours);
	vp_json_num(j, "cost_usd", c->at[0].cost_usd);
	vp_json_num(j, "usd_per_billion_tokens", c->usd_per_billion_tokens);
	vp_json_num(j, "usd_per_gpu_hour", c->usd_per_hour);
	vp_json_num(j, "purchase_usd", c->purchase_usd);
	vp_json_bool(j, "bandwidth_bound", c->at[0].cand.bandwidth_bound);
	vp_json_str(j, "price_source", c->price ? c->price->source : NULL);
	vp_json_str(j, "price_date", c->price ? c->price->date : NULL);
	if (c->price != NULL) {
		vp_json_str(j, "price_offering", c->price->offering);
		vp_json_bool(j, "price_dated", c->price->dated);
		vp_json_u64(j, "price_unit_gpus", c->price->unit_gpus);
		vp_json_str(j, "price_covers", c->price->gpu_only ? "gpu" :
		    "instance");
		vp_json_u64(j, "gpus_paid", c->at[0].gpus_paid);
	}
	/* Every figure that is null, with its reason. */
	if (isnan(c->at[0].cand.tokens_per_second) || isnan(c->at[0].cost_usd) ||
	    isnan(c->purchase_usd)) {
		vp_json_object(j, "why_missing", VP_JSON_INLINE);
		if (isnan(c->at[0].cand.tokens_per_second))
			vp_json_str(j, "tokens_per_second", c->why[0] ?
			    c->why : "no time model for this plan");
		if (isnan(c->at[0].cost_usd))
			vp_json_str(j, "cost_usd", c->gpu->nprices == 0 ?
			    "the catalog has no rental price for this card "
			    "(--price CARD=USD sets one)" : c->price == NULL ?
			    "no offering in the catalog rents this many GPUs "
			    "as one job: its listings are single machines" :
			    "no time, so no cost");
		if (isnan(c->purchase_usd))
			vp_json_str(j, "purchase_usd", "the catalog has no "
			    "launch price for this card");
		vp_json_end(j);
	}
	vp_json_array(j, "scaling", VP_JSON_INLINE);
	for (k = 0; k < c->nat; k++) {
		vp_json_object(j, NULL, VP_JSON_INLINE);
		vp_json_u64(j, "gpus", c->at[k].gpus);
		vp_json_num(j, "tokens_per_second",
		    c->at[k].cand.tokens_per_second);
		vp_json_num(j, "hours", c->at[k].hours);
		vp_json_num(j, "cost_usd", c->at[k].cost_usd);
		vp_json_end(j);
	}
	vp_json_end(j);
	vp_json_end(j);
}

/* One object; the cards one a line, in the sorted order. */
void
vp_compare_json(const struct vp_compare_report *r, struct vp_buf *o)
{
	struct vp_json j;
	size_t i;

	vp_json_init(&j, o);
	vp_json_object(&j, NULL, VP_JSON_INLINE);
	vp_json_str(&j, "schema_version", VP_COMPARE_SCHEMA_VERSION);
	vp_json_str(&j, "model", r->model->name);
	vp_json_fixed(&j, "tokens", r->job->tokens, 0);
	vp_json_str(&j, "sort", r->sort);
	if (!isnan(r->job->deadline_hours))
		vp_json_num(&j, "deadline_hours", r->job->deadline_hours);
	if (!isnan(r->job->budget_usd))
		vp_json_num(&j, "budget_usd", r->job->budget_usd);
	if (r->job->global_batch)
		vp_json_u64(&j, "global_batch", r->job->global_batch);
	vp_json_array(&j, "cards", VP_JSON_BLOCK);
	for (i = 0; i < r->n; i++)
		json_card(&j, &r->cards[i]);
	vp_json_end(&j);
	vp_json_end(&j);
}

void
vp_compare_csv(const struct vp_compare_report *r, struct vp_buf *o)
{
	size_t i;
	char e1[VP_ESC_LEN], e2[VP_ESC_LEN];

	vp_buf_add(o, "gpu,fits,gpus_needed,tp,pp,dp,recompute,"
	    "tokens_per_second,hours,cost_usd,usd_per_billion_tokens,"
	    "usd_per_gpu_hour,purchase_usd,price_date,meets,gpus\n");
	for (i = 0; i < r->n; i++) {
		const struct vp_card_result *c = &r->cards[i];
		const struct vp_plan *p = &c->at[0].cand.plan;

		if (!c->fits) {
			vp_buf_printf(o, "%s,false,,,,,,,,,,,,,,\n",
			    ESC(c->gpu->id, e1));
			continue;
		}
		if (!c->meets) {
			vp_buf_printf(o, "%s,true,%u,,,,,,,,,,,,false,\n",
			    ESC(c->gpu->id, e1), c->gpus_needed);
			continue;
		}
		vp_buf_printf(o, "%s,true,%u,%u,%u,%u,%s,%.1f,%.3f,%.2f,%.2f,"
		    "%.4g,%.0f,%s,true,%u\n", ESC(c->gpu->id, e1),
		    c->gpus_needed, p->tp,
		    p->pp, p->dp, vp_recomp_names[p->recompute],
		    c->at[0].cand.tokens_per_second, c->at[0].hours,
		    c->at[0].cost_usd, c->usd_per_billion_tokens,
		    c->usd_per_hour, c->purchase_usd,
		    c->price && c->price->date ? ESC(c->price->date, e2) : "",
		    c->at[0].gpus);
	}
}

void
vp_compare_svg(const struct vp_compare_report *r, struct vp_buf *o)
{
	const double W = 960, PH = 460, L = 90, R = 30, T = 50, B = 60;
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
	size_t i, nfit = 0, k;
	long cheap, fast;
	double bars_h, H;

	for (i = 0; i < r->n; i++) {
		const struct vp_card_result *c = &r->cards[i];

		if (!c->fits || !c->meets)
			continue;
		nfit++;
		if (isnan(c->at[0].hours) || isnan(c->at[0].cost_usd))
			continue;
		xmin = fmin(xmin, c->at[0].hours);
		xmax = fmax(xmax, c->at[0].hours);
		ymin = fmin(ymin, c->at[0].cost_usd);
		ymax = fmax(ymax, c->at[0].cost_usd);
	}
	if (!(xmin < INFINITY)) {
		xmin = ymin = 1;
		xmax = ymax = 10;
	}
	/* Log axes with a margin. */
	xmin = log10(xmin) - 0.1;
	xmax = log10(xmax) + 0.1;
	ymin = log10(ymin) - 0.1;
	ymax = log10(ymax) + 0.1;
	bars_h = 22.0 * (double)nfit + 80;
	H = PH + bars_h;
	extremes(r, &cheap, &fast, true);
	vp_svg_open(o, W, H);
	vp_buf_add(o, "<text x=\"20\" y=\"28\" font-size=\"16\">Cost against "
	    "time: ");
	vp_svg_text(o, r->model->name);
	vp_buf_printf(o, ", %.3g tokens</text>\n", r->job->tokens);
	vp_buf_printf(o, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
	    "stroke=\"black\"/>\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" "
	    "y2=\"%.0f\" stroke=\"black\"/>\n", L, PH - B, W - R, PH - B, L, T,
	    L, PH - B);
	vp_buf_printf(o, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">"
	    "time to train (hours, log scale)</text>\n", (L + W - R) / 2,
	    PH - 20);
	vp_buf_printf(o, "<text x=\"20\" y=\"%.0f\" transform=\"rotate(-90 20 "
	    "%.0f)\" text-anchor=\"middle\">cloud cost (USD, log scale)"
	    "</text>\n", (T + PH - B) / 2, (T + PH - B) / 2);
	/* Decade ticks. */
	for (k = 0; k < 2; k++) {
		double lo = k ? ymin : xmin, hi = k ? ymax : xmax, d;

		for (d = ceil(lo); d <= hi; d++) {
			double v = k ? PH - B - (d - ymin) / (ymax - ymin) *
			    (PH - B - T) : L + (d - xmin) / (xmax - xmin) *
			    (W - R - L);

			if (k)
				vp_buf_printf(o, "<text x=\"%.0f\" y=\"%.0f\" "
				    "text-anchor=\"end\">%g</text>\n", L - 6,
				    v + 4, pow(10, d));
			else
				vp_buf_printf(o, "<text x=\"%.0f\" y=\"%.0f\" "
				    "text-anchor=\"middle\">%g</text>\n", v,
				    PH - B + 16, pow(10, d));
		}
	}
	for (i = 0; i < r->n; i++) {
		const struct vp_card_result *c = &r->cards[i];
		double x, y;
		const char *fill = "#4a7bd0";

		if (!c->fits || !c->meets || isnan(c->at[0].hours) ||
		    isnan(c->at[0].cost_usd))
			continue;
		x = L + (log10(c->at[0].hours) - xmin) / (xmax - xmin) *
		    (W - R - L);
		y = PH - B - (log10(c->at[0].cost_usd) - ymin) / (ymax - ymin) *
		    (PH - B - T);
		if ((long)i == cheap)
			fill = "#2a9d3a";
		else if ((long)i == fast)
			fill = "#d0462a";
		vp_buf_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
		    "fill=\"%s\"/>\n<text x=\"%.1f\" y=\"%.1f\">", x, y, fill,
		    x + 7, y - 5);
		vp_svg_text(o, c->gpu->id);
		vp_buf_printf(o, " x%u%s</text>\n", c->at[0].gpus,
		    (long)i == cheap ? " (cheapest)" : (long)i == fast ?
		    " (fastest)" : "");
	}
	/* Stacked memory bars: the needed plan's peak per GPU by term,
	 * against the card's usable memory. */
	vp_buf_printf(o, "<text x=\"20\" y=\"%.0f\" font-size=\"14\">Memory per "
	    "GPU at the plan shown (share of usable memory)</text>\n", PH + 20);
	{
		static const enum vp_cat seg[] = { VP_CAT_WEIGHTS,
			VP_CAT_GRADS, VP_CAT_OPTIM, VP_CAT_MASTER, VP_CAT_ACT,
			VP_CAT_LOGITS, VP_CAT_TRANSIENT, VP_CAT_CAST };
		double y = PH + 36, bw = W - 260;

		/* Legend: one swatch per term. */
		vp_svg_legend(o, 20, PH + 28, seg, VP_NELEM(seg));
		y += 16;

		for (i = 0; i < r->n; i++) {
			const struct vp_card_result *c = &r->cards[i];
			double x = 200, cap = (double)c->gpu->usable_bytes;
			size_t s;

			if (!c->fits || !c->meets)
				continue;
			vp_buf_printf(o, "<text x=\"20\" y=\"%.0f\">", y + 12);
			vp_svg_text(o, c->gpu->id);
			vp_buf_printf(o, " x%u</text>\n", c->at[0].gpus);
			for (s = 0; s < VP_NELEM(seg); s++) {
				double wdt = (double)c->mem.term[seg[s]] /
				    cap * bw;

				if (wdt <= 0)
					continue;
				vp_buf_printf(o, "<rect x=\"%.1f\" y=\"%.0f\" "
				    "width=\"%.1f\" height=\"14\" fill=\"%s\"/>\n",
				    x, y, wdt, vp_svg_term_color(seg[s]));
				x += wdt;
			}
			vp_buf_printf(o, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" "
			    "y2=\"%.0f\" stroke=\"red\"/>\n", 200 + bw, y - 2,
			    200 + bw, y + 16);
			y += 22;
		}
	}
	vp_svg_close(o);
}
