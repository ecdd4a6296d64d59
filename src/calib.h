/*
 * calib.h — calibration: fit a profile's constants to measured training
 * steps, and the profile file's contents.
 *
 * vramplan calibrate measures a grid of configurations on the local device
 * (calib/calibrate.py, the PyTorch harness; calib/vramplan-probe on CUDA),
 * estimates each with the built-in profile, and fits by least squares:
 *
 *   allocated:  M_i = P_i + k_l A_i + k_t T_i + c     (weighted by 1 / M_i)
 *               P persistent terms (fixed), A activations + logits of
 *               lowering l, T transient buffers and optimizer temporaries,
 *               c allocations the model does not see;
 *   reserved:   R_i = M_i (1 + f), rounded to whole segments;
 *   device:     D_i = R_i + o + groups_i * nccl;
 *   time:       t_i = s_i / mfu   (s_i: the time model's step at MFU 1).
 *
 * Each fit is a small ridge regression towards the built-in values, so a
 * term the grid does not exercise keeps its default instead of wandering.
 * The residuals of the fitted model on the grid become the estimate's
 * error bars (the worst relative residual per level).
 *
 * Pure: points in, profile and residuals out; the YAML text of a profile
 * is formatted into a buffer.  Reading a profile is profile_read.c.
 */
#ifndef VP_CALIB_H
#define VP_CALIB_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu.h"
#include "mem.h"
#include "model.h"
#include "plan.h"
#include "util.h"

/* What kind of measurement a point is. */
enum vp_point_kind { VP_POINT_WEIGHTS, VP_POINT_STATES, VP_POINT_STEP,
	VP_POINT_KIND_COUNT };
extern const char *const vp_point_kind_names[VP_POINT_KIND_COUNT];

struct vp_calib_point {
	char *id;
	enum vp_point_kind kind;
	const struct vp_model *model;	/* borrowed */
	struct vp_plan plan;
	unsigned world;			/* GPUs in the measured job */
	/* Measured (NAN when the harness could not measure it). */
	double m_allocated, m_reserved, m_device, m_seconds;
	/* The uncalibrated estimate. */
	struct vp_mem est;
	double est_seconds_mfu1;	/* time model at MFU 1; NAN: no time */
	/* After the fit. */
	double f_allocated, f_reserved, f_device, f_seconds;
};

struct vp_residual {
	unsigned n;
	double max, rms;		/* relative; NAN when n == 0 */
};

struct vp_calib_fit {
	struct vp_profile prof;		/* the fitted profile */
	bool fitted_act[VP_LOWERINGS];	/* which lowerings the grid held */
	bool fitted_reserved, fitted_device, fitted_mfu, fitted_nccl;
	/* Cross-validation of the allocated corrections (leave one model
	 * out, or one point when the grid has one model): relative rms of
	 * the built-in model and of the fit on what was held out; declined
	 * when the fit does not predict better (the built-ins stay). */
	bool loo_checked, loo_by_model, declined;
	double loo_before, loo_after, loo_worst;
	struct vp_residual allocated, reserved, device, seconds;
	/* Before the fit, for comparison. */
	struct vp_residual allocated0, reserved0, device0;
};

/*
 * Estimate every point with base (the built-in profile of the card, or
 * of the cpu), fit, estimate again with the fitted profile and take the
 * residuals from those estimates.  Kind STEP points enter the fits;
 * WEIGHTS and STATES check the persistent terms and are only reported.
 * base's values are the priors and stay for every term the grid does not
 * measure.  gpu: the catalog card (for the time model; NULL on cpu).
 * -1 when there are fewer than two step points.
 */
int vp_calib_fit(struct vp_calib_point *pts, size_t n,
    const struct vp_profile *base, const struct vp_gpu *gpu,
    struct vp_calib_fit *out);
/* What a point's estimate is compared with: its allocated level. */
double vp_calib_point_allocated(const struct vp_calib_point *p,
    const struct vp_mem *m);

/* Where and when a profile was measured: its key. */
struct vp_profile_key {
	char *device;		/* "cuda" or "cpu" */
	char *gpu;		/* device name as the driver spells it */
	char *catalog_id;	/* the catalog card, or NULL */
	char *driver, *cuda, *framework;
	char *created;		/* ISO 8601 UTC */
	char *vramplan;		/* version that wrote it */
	char *probe;		/* the probe's record, verbatim YAML, or NULL */
};
void vp_profile_key_free(struct vp_profile_key *k);

#define VP_PROFILE_VERSION 1

/*
 * The profile file: key, constants, residuals and the points.  The file
 * name under the profile directory is vp_profile_file_name's.
 */
void vp_profile_format(const struct vp_profile_key *k,
    const struct vp_calib_fit *fit, const struct vp_calib_point *pts,
    size_t n, struct vp_buf *out);
/* "H200-141G-SXM--drv575.51.03--cuda12.8--torch2.7.0.yaml": the key
 * with every character outside [A-Za-z0-9._-] made '_'. */
void vp_profile_file_name(const struct vp_profile_key *k, struct vp_buf *out);

#endif
