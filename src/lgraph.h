/*
 * lgraph.h — layer-graph models: a model described as a sequence of
 * layers (conv2d, batchnorm2d, pooling, linear, residual groups...)
 * instead of a transformer stack (vramplan-model(5), LAYER GRAPHS).
 *
 * The reader (lgraph_read.c) fills a struct vp_lgraph hanging off the
 * model (vp_model.lg); this module says what each layer does to the shape
 * of its input, counts parameters and buffers, checks the graph at an
 * input resolution and counts forward FLOPs.  graph.c lowers the layers
 * to ops (lower_lgraph) with the same shape rules.  Shapes are per sample:
 * channels x height x width, or a flat feature vector after flatten.
 *
 * Pure.  Ownership: the graph owns its layer arrays; vp_lgraph_free
 * releases them (and the struct), vp_lgraph_free(NULL) is a no-op.
 */
#ifndef VP_LGRAPH_H
#define VP_LGRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"

/* Layer kinds (the names of the schema).  Residual is a group. */
#define VP_LTYPE_LIST(X) \
	X(CONV2D, "conv2d") X(BATCHNORM2D, "batchnorm2d") \
	X(LAYERNORM, "layernorm") X(GROUPNORM, "groupnorm") \
	X(LINEAR, "linear") X(RELU, "relu") X(GELU, "gelu") X(SILU, "silu") \
	X(TANH, "tanh") X(SIGMOID, "sigmoid") X(MAXPOOL2D, "maxpool2d") \
	X(AVGPOOL2D, "avgpool2d") X(ADAPTIVE_AVGPOOL2D, "adaptive-avgpool2d") \
	X(FLATTEN, "flatten") X(DROPOUT, "dropout") X(RESIDUAL, "residual")
#define X(e, s) VP_L_##e,
enum vp_ltype { VP_LTYPE_LIST(X) VP_L_COUNT };
#undef X
extern const char *const vp_ltype_names[VP_L_COUNT];

/* The losses a layer graph can end with. */
#define VP_LLOSS_LIST(X) X(CROSS_ENTROPY, "cross-entropy")
#define X(e, s) VP_LLOSS_##e,
enum vp_lloss { VP_LLOSS_LIST(X) VP_LLOSS_COUNT };
#undef X
extern const char *const vp_lloss_names[VP_LLOSS_COUNT];

struct vp_layer;
struct vp_lseq {
	struct vp_layer *v;
	size_t n;
};

struct vp_layer {
	enum vp_ltype type;
	struct vp_srcpos pos;
	/* conv2d: out channels; linear: out features; adaptive pool: the
	 * output side (1 = global average) */
	uint64_t out;
	/* conv2d and pooling (torch.nn's defaults: stride 1 for conv2d,
	 * the kernel for pooling; padding 0, dilation 1, groups 1) */
	uint32_t kernel, stride, padding, dilation, groups;
	bool bias;		/* conv2d, linear (default true, as torch.nn) */
	bool affine;		/* the norms' weight and bias (default true) */
	bool inplace;		/* relu: nn.ReLU(inplace=True) */
	uint32_t ngroups;	/* groupnorm */
	double p;		/* dropout */
	/* residual: `repeat` copies of body, with the shortcut (empty:
	 * identity) added to its output, then `after` */
	uint32_t repeat;
	struct vp_lseq body, shortcut, after;
};

struct vp_lgraph {
	struct vp_lseq layers;
	uint64_t channels;	/* input channels (3) */
	uint64_t image;		/* default input resolution (square) */
	enum vp_lloss loss;
};

/* A per-sample shape: c x h x w, or c features when flat. */
struct vp_lshape {
	uint64_t c, h, w;
	bool flat;
};

void vp_lgraph_free(struct vp_lgraph *lg);

/* The shape after one layer (not a residual); -1 with a message in
 * err (size n) when the layer cannot take the input. */
int vp_layer_shape(const struct vp_layer *l, struct vp_lshape in,
    struct vp_lshape *out, char *err, size_t n);
/*
 * Check the graph at resolution `image`: every layer takes its input,
 * residual bodies and shortcuts agree, the output is flat logits.  0, or
 * -1 with a diagnostic at the layer's position in file.
 */
int vp_lgraph_check(const struct vp_lgraph *lg, uint64_t image, const char *file,
    struct vp_diags *d);
/* Parameters (exact, as torch.nn lays them out). */
uint64_t vp_lgraph_params(const struct vp_lgraph *lg);
/* Elements of the floating buffers (BatchNorm's running mean and
 * variance) and the count of int64 ones (num_batches_tracked). */
void vp_lgraph_buffers(const struct vp_lgraph *lg, uint64_t *float_elems,
    uint64_t *int64_count);
/* Forward multiply-adds of one sample at `image` (convolutions and
 * linears), 0 when the graph does not check. */
double vp_lgraph_macs(const struct vp_lgraph *lg, uint64_t image);
/* Layers of a kind, residual groups expanded (for the report). */
uint64_t vp_lgraph_count(const struct vp_lgraph *lg, enum vp_ltype t);

#endif
