/*
 * band.h — how well an uncalibrated estimate is known: the band each
 * level is known to within, from the measured residuals on published
 * GPU runs (tests/published_gpu.py) by level and by technique family,
 * and the three-way verdict it gives against a card's capacity.
 *
 * A calibrated profile's error bars (the fit's residuals on this card)
 * replace the band.  Pure.
 */
#ifndef VP_BAND_H
#define VP_BAND_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

#define VP_LVL_LIST(X) X(ALLOCATED, "allocated") X(RESERVED, "reserved") \
	X(DEVICE, "device")
#define X(e, s) VP_LVL_##e,
enum vp_lvl { VP_LVL_LIST(X) VP_LVL_COUNT };
#undef X
extern const char *const vp_lvl_names[VP_LVL_COUNT];

/* What kind of training the residuals were measured on. */
#define VP_TECH_LIST(X) X(FULL, "full") X(LORA, "lora") X(QLORA, "qlora")
#define X(e, s) VP_TECH_##e,
enum vp_tech { VP_TECH_LIST(X) VP_TECH_COUNT };
#undef X
extern const char *const vp_tech_names[VP_TECH_COUNT];

/*
 * The truth lies in [estimate x (1 - below), estimate x (1 + above)]:
 * `above` is how far the estimate has been low, `below` how far it has
 * been high.  source says where the band comes from.
 */
struct vp_band {
	double below, above;
	const char *source;
};

enum vp_tech vp_plan_tech(const struct vp_plan *p);
/* The band of a level for a plan without a calibrated profile. */
void vp_band_builtin(const struct vp_plan *p, enum vp_lvl lvl,
    struct vp_band *out);
/* A calibrated profile's symmetric error bar as a band. */
void vp_band_calibrated(double err, struct vp_band *out);

/* FITS: the whole band is within the capacity; TIGHT: the band crosses
 * it; DOES NOT FIT: the whole band is over it. */
#define VP_VERDICT_LIST(X) X(FITS, "fits") X(TIGHT, "tight") \
	X(NOFIT, "does_not_fit")
#define X(e, s) VP_VERDICT_##e,
enum vp_verdict { VP_VERDICT_LIST(X) VP_VERDICT_COUNT };
#undef X
extern const char *const vp_verdict_names[VP_VERDICT_COUNT];
enum vp_verdict vp_band_verdict(uint64_t estimate, const struct vp_band *b,
    uint64_t capacity);
/* The band's ends in bytes. */
uint64_t vp_band_low(uint64_t estimate, const struct vp_band *b);
uint64_t vp_band_high(uint64_t estimate, const struct vp_band *b);

#endif
