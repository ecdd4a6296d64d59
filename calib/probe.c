/*
 * probe.c — vramplan-probe: measure one CUDA device for calibration and
 * print the result as one YAML record (probe_core.h describes it).
 *
 * The CUDA driver, NVML and cuBLAS are loaded with dlopen, never linked:
 * one binary runs on machines with and without a GPU, and on the second
 * kind says why it cannot measure (exit 5).  <cuda.h> and <cublas_v2.h>
 * are still included, for the types and constants and so that every
 * function-pointer type below is checked against the header's prototype
 * at compile time.  NVML has no header in the toolkit; its six entry
 * points are declared here.
 *
 * The steps run in a fixed order (steps[] below), because each one's
 * free-memory differences assume that only the previous steps' state is
 * held: NVML before any context, then the context, the allocation
 * granularity, cuBLAS, usable memory, copy bandwidth, GEMM throughput.
 * Every allocation is tracked, so that any failure can free it all,
 * destroy the cuBLAS handle and release the primary context.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cuda.h>
#include <cublas_v2.h>

#include "probe_core.h"
#include "util.h"

#ifndef VP_CUDA_LIBDIR
#define VP_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif

enum {
	PX_OK = 0,		/* measured */
	PX_USAGE = 2,		/* bad command line */
	PX_SYSTEM = 4,		/* output not written, or a CUDA call failed */
	PX_NOGPU = 5,		/* no driver, no device, no device N */
};

#define HINT "calibrate on a machine with an NVIDIA GPU and driver"
#define MIB ((size_t)1 << 20)
#define WARMUPS 2	/* runs before timing, at least */
#define WARM_MS 200	/* GPU time before timing, at least */
#define REPS 5		/* timed runs; we report their median */

#define STR(s) #s
#define XSTR(s) STR(s)

/*
 * Entry points as X(flags, return type, name, parameters).  The name goes
 * through the header's macros wherever it is not pasted, so cuMemAlloc
 * becomes cuMemAlloc_v2, the symbol whose prototype the header declares,
 * and dlsym asks for that.  Without REQ a symbol may be missing (its
 * pointer stays NULL).  OLD: when a driver older than the header lacks
 * the versioned symbol, the unversioned one will do; the header declares
 * both with the same prototype, and only the behaviour in corner cases
 * differs.  Never OLD for the _v2 memory calls, whose v1 took 32-bit sizes.
 */
#define REQ 1
#define OLD 2
#define CU_SYMS(X) \
	X(REQ, CUresult, cuGetErrorName, (CUresult, const char **)) \
	X(REQ, CUresult, cuInit, (unsigned int)) \
	X(REQ, CUresult, cuDriverGetVersion, (int *)) \
	X(REQ, CUresult, cuDeviceGetCount, (int *)) \
	X(REQ, CUresult, cuDeviceGet, (CUdevice *, int)) \
	X(REQ, CUresult, cuDeviceGetName, (char *, int, CUdevice)) \
	X(REQ, CUresult, cuDeviceTotalMem, (size_t *, CUdevice)) \
	X(REQ, CUresult, cuDeviceGetAttribute, \
	    (int *, CUdevice_attribute, CUdevice)) \
	X(OLD, CUresult, cuDeviceGetUuid, (CUuuid *, CUdevice)) \
	X(REQ, CUresult, cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice)) \
	X(REQ, CUresult, cuDevicePrimaryCtxRelease, (CUdevice)) \
	X(REQ, CUresult, cuCtxSetCurrent, (CUcontext)) \
	X(REQ, CUresult, cuCtxSynchronize, (void)) \
	X(REQ, CUresult, cuMemGetInfo, (size_t *, size_t *)) \
	X(0, CUresult, cuMemGetAllocationGranularity, (size_t *, \
	    const CUmemAllocationProp *, CUmemAllocationGranularity_flags)) \
	X(REQ, CUresult, cuMemAlloc, (CUdeviceptr *, size_t)) \
	X(REQ, CUresult, cuMemFree, (CUdeviceptr)) \
	X(REQ, CUresult, cuMemcpyHtoD, (CUdeviceptr, const void *, size_t)) \
	X(REQ, CUresult, cuMemcpyDtoD, (CUdeviceptr, CUdeviceptr, size_t)) \
	X(REQ, CUresult, cuEventCreate, (CUevent *, unsigned int)) \
	X(REQ, CUresult, cuEventDestroy, (CUevent)) \
	X(REQ, CUresult, cuEventRecord, (CUevent, CUstream)) \
	X(REQ, CUresult, cuEventSynchronize, (CUevent)) \
	X(REQ | OLD, CUresult, cuEventElapsedTime, (float *, CUevent, CUevent))

#define BLAS_SYMS(X) \
	X(REQ, cublasStatus_t, cublasGetProperty, \
	    (libraryPropertyType, int *)) \
	X(0, const char *, cublasGetStatusName, (cublasStatus_t)) \
	X(REQ, cublasStatus_t, cublasCreate, (cublasHandle_t *)) \
	X(REQ, cublasStatus_t, cublasDestroy, (cublasHandle_t)) \
	X(REQ, cublasStatus_t, cublasGemmEx, (cublasHandle_t, \
	    cublasOperation_t, cublasOperation_t, int, int, int, const void *, \
	    const void *, cudaDataType, int, const void *, cudaDataType, int, \
	    const void *, void *, cudaDataType, int, cublasComputeType_t, \
	    cublasGemmAlgo_t))

/* NVML, as nvml.h declares it (nvmlMemory_t is its version 1 layout). */
typedef int nvmlReturn_t;		/* an enum; NVML_SUCCESS is 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

#define NVML_SYMS(X) \
	X(REQ, nvmlReturn_t, nvmlInit_v2, (void)) \
	X(REQ, nvmlReturn_t, nvmlShutdown, (void)) \
	X(REQ, nvmlReturn_t, nvmlSystemGetDriverVersion, \
	    (char *, unsigned int)) \
	X(REQ, nvmlReturn_t, nvmlDeviceGetHandleByUUID, \
	    (const char *, nvmlDevice_t *)) \
	X(REQ, nvmlReturn_t, nvmlDeviceGetMemoryInfo, \
	    (nvmlDevice_t, nvmlMemory_t *))

/* The pointer types, and a compile-time check of each against the header:
 * _Generic picks 1 only when the types are compatible. */
#define TYPEDEF(fl, ret, f, args) typedef ret (*f##_fn) args;
#define CHECK(fl, ret, f, args) _Static_assert(_Generic(&f, \
	f##_fn: 1, default: 0), #f "_fn does not match the CUDA headers");
#define MEMBER(fl, ret, f, args) f##_fn f;
#define CU_ENTRY(fl, ret, f, args) \
	{ XSTR(f), #f, offsetof(struct cu_api, f), fl },
#define BLAS_ENTRY(fl, ret, f, args) \
	{ XSTR(f), #f, offsetof(struct blas_api, f), fl },
#define NVML_ENTRY(fl, ret, f, args) \
	{ XSTR(f), #f, offsetof(struct nvml_api, f), fl },

CU_SYMS(TYPEDEF)
CU_SYMS(CHECK)
BLAS_SYMS(TYPEDEF)
BLAS_SYMS(CHECK)
NVML_SYMS(TYPEDEF)

struct cu_api { CU_SYMS(MEMBER) };
struct blas_api { BLAS_SYMS(MEMBER) };
struct nvml_api { NVML_SYMS(MEMBER) };

struct sym {
	const char *name;	/* as the header spells it: cuMemAlloc_v2 */
	const char *base;	/* as written here: cuMemAlloc */
	size_t off;		/* of the pointer in its struct *_api */
	int flags;		/* REQ, OLD */
};
static const struct sym cu_syms[] = { CU_SYMS(CU_ENTRY) };
static const struct sym blas_syms[] = { BLAS_SYMS(BLAS_ENTRY) };
static const struct sym nvml_syms[] = { NVML_SYMS(NVML_ENTRY) };

/* POSIX lets dlsym's void * become a function pointer; we copy the bytes
 * rather than cast, which ISO C leaves undefined. */
_Static_assert(sizeof(void *) == sizeof(cuInit_fn),
    "function and object pointers differ in size");

struct probe {
	int ordinal;
	void *cuda_lib, *blas_lib, *nvml_lib;
	struct cu_api cu;
	struct blas_api bl;
	struct nvml_api nv;
	int nvml_up;		/* nvmlInit succeeded: nvmlShutdown owed */
	CUdevice dev;
	CUcontext ctx;		/* the retained primary context, or NULL */
	cublasHandle_t blas;	/* NULL when cuBLAS is not available */
	CUevent ev[2];
	CUdeviceptr *live;	/* every allocation not yet freed */
	size_t nlive, caplive;
	int status;		/* exit status once msg is set */
	char msg[512];		/* the first failure, one line */
	struct vp_probe rec;
};

/* ---- failures ---------------------------------------------------------- */

/* Record the first failure and return -1, so callers can return fail(). */
static int __attribute__((format(printf, 3, 4)))
fail(struct probe *p, int status, const char *fmt, ...)
{
	va_list ap;

	if (p->msg[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
		va_end(ap);
		p->status = status;
	}
	return -1;
}

static const char *
cu_name(const struct probe *p, CUresult r)
{
	const char *s = NULL;

	if (p->cu.cuGetErrorName == NULL ||
	    p->cu.cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL)
		return "unknown CUDA error";
	return s;
}

/* Results that mean there is no usable GPU rather than a GPU that failed;
 * they get exit 5 wherever they happen. */
static const CUresult nogpu_results[] = {
	CUDA_ERROR_NO_DEVICE, CUDA_ERROR_INVALID_DEVICE,
	CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_DEINITIALIZED,
	CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_DEVICE_UNAVAILABLE,
	CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
	CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
	CUDA_ERROR_DEVICE_NOT_LICENSED, CUDA_ERROR_SYSTEM_NOT_READY,
};

/* 0 when r is success, else fail() naming the call. */
static int
cu_ok(struct probe *p, CUresult r, const char *call)
{
	size_t i;

	if (r == CUDA_SUCCESS)
		return 0;
	for (i = 0; i < VP_NELEM(nogpu_results); i++)
		if (r == nogpu_results[i])
			return fail(p, PX_NOGPU, "%s failed: %s", call,
			    cu_name(p, r));
	return fail(p, PX_SYSTEM, "%s failed: %s", call, cu_name(p, r));
}

static int
blas_ok(struct probe *p, cublasStatus_t s, const char *call)
{
	const char *name = NULL;

	if (s == CUBLAS_STATUS_SUCCESS)
		return 0;
	if (p->bl.cublasGetStatusName != NULL)
		name = p->bl.cublasGetStatusName(s);
	if (name != NULL)
		return fail(p, PX_SYSTEM, "%s failed: %s", call, name);
	return fail(p, PX_SYSTEM, "%s failed: cuBLAS status %d", call, (int)s);
}

/* ---- libraries --------------------------------------------------------- */

/* Fill api from lib; the first required symbol that is missing, or NULL. */
static const char *
bind(void *lib, const struct sym *tab, size_t n, void *api)
{
	void *f;
	size_t i;

	for (i = 0; i < n; i++) {
		f = dlsym(lib, tab[i].name);
		if (f == NULL && (tab[i].flags & OLD))
			f = dlsym(lib, tab[i].base);
		if (f == NULL && (tab[i].flags & REQ))
			return tab[i].name;
		memcpy((char *)api + tab[i].off, &f, sizeof(f));
	}
	return NULL;
}

/* The first of names that loads, or NULL with the first name's error in
 * err: that one names the library a user should install. */
static void *
open_first(const char *const *names, size_t n, char *err, size_t errlen)
{
	void *lib;
	size_t i;

	err[0] = '\0';
	for (i = 0; i < n; i++) {
		if ((lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) != NULL)
			return lib;
		if (i == 0)
			snprintf(err, errlen, "%s", dlerror());
	}
	return NULL;
}

/* ---- device memory ----------------------------------------------------- */

/* cuMemAlloc that remembers the pointer for free_all.  Returns the result
 * so that callers can take out-of-memory as an answer. */
static CUresult
dev_alloc(struct probe *p, size_t n, CUdeviceptr *d)
{
	CUresult r;

	if (p->nlive == p->caplive) {
		p->caplive = p->caplive ? 2 * p->caplive : 64;
		p->live = xreallocarray(p->live, p->caplive,
		    sizeof(*p->live));
	}
	r = p->cu.cuMemAlloc(d, n);
	if (r == CUDA_SUCCESS)
		p->live[p->nlive++] = *d;
	return r;
}

/* Free every tracked allocation.  On a failed device cuMemFree can fail
 * too; there is nothing better to do than go on. */
static void
free_all(struct probe *p)
{
	while (p->nlive > 0)
		(void)p->cu.cuMemFree(p->live[--p->nlive]);
}

static int
free_now(struct probe *p, uint64_t *bytes)
{
	size_t f, t;

	if (cu_ok(p, p->cu.cuMemGetInfo(&f, &t), "cuMemGetInfo") != 0)
		return -1;
	*bytes = f;
	return 0;
}

/* ---- timing ------------------------------------------------------------ */

typedef int (*op_fn)(struct probe *p, const void *arg);

/* n runs of op between two events on the default stream, in ms. */
static int
timed(struct probe *p, op_fn op, const void *arg, int n, float *ms)
{
	int i;

	if (cu_ok(p, p->cu.cuEventRecord(p->ev[0], NULL),
	    "cuEventRecord") != 0)
		return -1;
	for (i = 0; i < n; i++)
		if (op(p, arg) != 0)
			return -1;
	if (cu_ok(p, p->cu.cuEventRecord(p->ev[1], NULL),
	    "cuEventRecord") != 0 ||
	    cu_ok(p, p->cu.cuEventSynchronize(p->ev[1]),
	    "cuEventSynchronize") != 0)
		return -1;
	return cu_ok(p, p->cu.cuEventElapsedTime(ms, p->ev[0], p->ev[1]),
	    "cuEventElapsedTime");
}

/*
 * Warm up with at least WARMUPS runs and WARM_MS of GPU time (kernels
 * load, cuBLAS picks its algorithm, and an idle GPU takes tens of
 * milliseconds to raise its clocks, while a 1 GiB copy on an H200 lasts
 * half of one), then time REPS runs one by one; the median, in seconds.
 */
static int
time_op(struct probe *p, op_fn op, const void *arg, double *seconds)
{
	double s[REPS], warm = 0;
	float ms;
	int i, n;

	for (n = WARMUPS; warm < WARM_MS && n <= 4096; n *= 2) {
		if (timed(p, op, arg, n, &ms) != 0)
			return -1;
		warm += ms;
	}
	for (i = 0; i < REPS; i++) {
		if (timed(p, op, arg, 1, &ms) != 0)
			return -1;
		s[i] = ms / 1e3;
	}
	*seconds = vp_probe_median(s, REPS);
	return 0;
}

/* ---- the steps --------------------------------------------------------- */

/* The driver, the device count and the device; everything here that goes
 * wrong means no usable GPU. */
static int
open_driver(struct probe *p)
{
	const char *missing;
	char ver[16];
	CUresult r;
	int n;

	p->cuda_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (p->cuda_lib == NULL)
		return fail(p, PX_NOGPU, "no CUDA driver: cannot load "
		    "libcuda.so.1 (%s); %s", dlerror(), HINT);
	missing = bind(p->cuda_lib, cu_syms, VP_NELEM(cu_syms), &p->cu);
	if (missing != NULL)
		return fail(p, PX_NOGPU, "CUDA driver too old: libcuda.so.1 "
		    "has no %s (the probe was built for CUDA %s)", missing,
		    vp_probe_cuda_version(CUDA_VERSION, ver, sizeof(ver)));
	if ((r = p->cu.cuInit(0)) != CUDA_SUCCESS)
		return fail(p, PX_NOGPU, "no usable CUDA device: cuInit "
		    "failed: %s; %s", cu_name(p, r), HINT);
	if (cu_ok(p, p->cu.cuDriverGetVersion(&p->rec.cuda_driver_version),
	    "cuDriverGetVersion") != 0 ||
	    cu_ok(p, p->cu.cuDeviceGetCount(&n), "cuDeviceGetCount") != 0)
		return -1;
	if (p->ordinal >= n)
		return fail(p, PX_NOGPU, "no CUDA device %d: the driver sees "
		    "%d (0 to %d)", p->ordinal, n, n - 1);
	return cu_ok(p, p->cu.cuDeviceGet(&p->dev, p->ordinal),
	    "cuDeviceGet");
}

static int
read_device(struct probe *p)
{
	const struct {
		CUdevice_attribute attr;
		int *dst;
	} attrs[] = {
		{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
		    &p->rec.cc_major },
		{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
		    &p->rec.cc_minor },
		{ CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		    &p->rec.multiprocessors },
	};
	const unsigned char *u;
	char *s;
	CUuuid uuid;
	size_t i, total;

	p->rec.index = p->ordinal;
	if (cu_ok(p, p->cu.cuDeviceGetName(p->rec.name,
	    (int)sizeof(p->rec.name), p->dev), "cuDeviceGetName") != 0 ||
	    cu_ok(p, p->cu.cuDeviceTotalMem(&total, p->dev),
	    "cuDeviceTotalMem") != 0)
		return -1;
	p->rec.memory_total_bytes = total;
	for (i = 0; i < VP_NELEM(attrs); i++)
		if (cu_ok(p, p->cu.cuDeviceGetAttribute(attrs[i].dst,
		    attrs[i].attr, p->dev), "cuDeviceGetAttribute") != 0)
			return -1;
	/* NVML's spelling of the UUID, which is also how we find the device
	 * there: NVML numbers devices by PCI bus, CUDA fastest first and
	 * after CUDA_VISIBLE_DEVICES, so the ordinals need not agree. */
	if (p->cu.cuDeviceGetUuid != NULL &&
	    p->cu.cuDeviceGetUuid(&uuid, p->dev) == CUDA_SUCCESS) {
		u = (const unsigned char *)uuid.bytes;
		s = p->rec.uuid + sprintf(p->rec.uuid, "GPU-");
		for (i = 0; i < 16; i++) {	/* 8-4-4-4-12 hex digits */
			if (i == 4 || i == 6 || i == 8 || i == 10)
				*s++ = '-';
			s += sprintf(s, "%02x", u[i]);
		}
	}
	return 0;
}

/*
 * NVML's free memory before this process has a context (cuInit creates
 * none), which is what makes context_bytes a difference of two readings.
 * Optional: without NVML, or when it does not know the UUID (a MIG
 * slice), the NVML fields stay null.
 */
static int
read_nvml(struct probe *p)
{
	nvmlDevice_t d;
	nvmlMemory_t m;

	if ((p->nvml_lib = dlopen("libnvidia-ml.so.1",
	    RTLD_NOW | RTLD_LOCAL)) == NULL)
		return 0;
	if (bind(p->nvml_lib, nvml_syms, VP_NELEM(nvml_syms), &p->nv) != NULL ||
	    p->nv.nvmlInit_v2() != 0)
		return 0;
	p->nvml_up = 1;
	if (p->nv.nvmlSystemGetDriverVersion(p->rec.driver,
	    sizeof(p->rec.driver)) != 0)
		p->rec.driver[0] = '\0';
	if (p->rec.uuid[0] == '\0' ||
	    p->nv.nvmlDeviceGetHandleByUUID(p->rec.uuid, &d) != 0 ||
	    p->nv.nvmlDeviceGetMemoryInfo(d, &m) != 0)
		return 0;
	p->rec.nvml_free_before_bytes = m.free;
	p->rec.nvml_used_before_bytes = m.used;
	p->rec.nvml_total_bytes = m.total;
	return 0;
}

static int
open_context(struct probe *p)
{
	CUcontext ctx;
	CUevent ev;
	uint64_t after;
	int i;

	if (cu_ok(p, p->cu.cuDevicePrimaryCtxRetain(&ctx, p->dev),
	    "cuDevicePrimaryCtxRetain") != 0)
		return -1;
	p->ctx = ctx;
	if (cu_ok(p, p->cu.cuCtxSetCurrent(p->ctx), "cuCtxSetCurrent") != 0)
		return -1;
	if (free_now(p, &after) != 0)
		return -1;
	p->rec.free_after_context_bytes = after;
	for (i = 0; i < 2; i++) {	/* for time_op */
		if (cu_ok(p, p->cu.cuEventCreate(&ev, CU_EVENT_DEFAULT),
		    "cuEventCreate") != 0)
			return -1;
		p->ev[i] = ev;
	}
	if (p->rec.nvml_free_before_bytes != VP_PROBE_UNKNOWN) {
		p->rec.context_bytes = vp_probe_drop(
		    p->rec.nvml_free_before_bytes, after);
		p->rec.context_basis =
		    "nvml free before - cuMemGetInfo free after";
	} else {
		/* Without a reading from before, all we know is what is
		 * missing now, other processes' memory included. */
		p->rec.context_bytes = vp_probe_drop(
		    p->rec.memory_total_bytes, after);
		p->rec.context_basis = "total - cuMemGetInfo free after "
		    "(no NVML: includes other processes' memory)";
	}
	return 0;
}

/*
 * The VMM API's granularity (what cuMemCreate rounds to), then how far
 * free memory drops for three cuMemAlloc sizes held at once: 1 byte,
 * just over 1 MiB and just over 2 MiB.  The drops are what a caching
 * allocator's cudaMalloc costs; vp_probe_granularity reads the step
 * off them.
 */
static int
probe_allocs(struct probe *p)
{
	static const size_t sizes[] = { 1, MIB + 1, 2 * MIB + 1 };
	CUmemAllocationProp prop;
	CUdeviceptr d;
	uint64_t before, after;
	size_t g, i;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = p->dev;
	if (p->cu.cuMemGetAllocationGranularity != NULL) {
		if (p->cu.cuMemGetAllocationGranularity(&g, &prop,
		    CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS)
			p->rec.gran_min_bytes = g;
		if (p->cu.cuMemGetAllocationGranularity(&g, &prop,
		    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) == CUDA_SUCCESS)
			p->rec.gran_recommended_bytes = g;
	}
	for (i = 0; i < VP_NELEM(sizes); i++) {
		if (free_now(p, &before) != 0 ||
		    cu_ok(p, dev_alloc(p, sizes[i], &d), "cuMemAlloc") != 0 ||
		    free_now(p, &after) != 0)
			return -1;
		p->rec.allocs[i].size_bytes = sizes[i];
		p->rec.allocs[i].free_drop_bytes =
		    (int64_t)before - (int64_t)after;
		p->rec.nallocs = i + 1;
	}
	free_all(p);
	return 0;
}

enum fill { FILL_F32, FILL_F16, FILL_BF16 };

/* What one GEMM multiplies. */
struct gemm {
	cudaDataType ab, c;		/* A and B's type, C's type */
	cublasComputeType_t compute;
	int n;				/* M = N = K */
	CUdeviceptr a, b, cc;
};

/* C = A B, column-major, no transposes; alpha and beta are floats
 * because every compute type we use is 32F. */
static int
run_gemm(struct probe *p, const void *arg)
{
	const struct gemm *g = arg;
	const float alpha = 1, beta = 0;

	return blas_ok(p, p->bl.cublasGemmEx(p->blas, CUBLAS_OP_N,
	    CUBLAS_OP_N, g->n, g->n, g->n, &alpha,
	    (const void *)(uintptr_t)g->a, g->ab, g->n,
	    (const void *)(uintptr_t)g->b, g->ab, g->n, &beta,
	    (void *)(uintptr_t)g->cc, g->c, g->n, g->compute,
	    CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
}

/*
 * cuBLAS is optional: without it the record still has the memory and
 * bandwidth, and the cuBLAS and GEMM fields are null (with a warning).
 * The handle's cost is the drop across cublasCreate; the workspace's is
 * the drop across the first GEMM, which also loads that GEMM's kernels
 * (CUDA loads modules lazily), as the first GEMM of a training run does.
 */
static int
open_blas(struct probe *p)
{
	static const char *const names[] = { "libcublas.so.13",
	    "libcublas.so.12", "libcublas.so.11", "libcublas.so",
	    VP_CUDA_LIBDIR "/libcublas.so." XSTR(CUBLAS_VER_MAJOR) };
	struct gemm g = { CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1024,
	    0, 0, 0 };
	size_t bytes = (size_t)g.n * g.n * 4;
	const char *missing;
	cublasHandle_t h;
	char err[256];
	uint64_t before, after;
	int v[3];

	if ((p->blas_lib = open_first(names, VP_NELEM(names), err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "vramplan-probe: warning: cannot load cuBLAS "
		    "(%s); the cuBLAS and GEMM fields are null\n", err);
		return 0;
	}
	if ((missing = bind(p->blas_lib, blas_syms, VP_NELEM(blas_syms),
	    &p->bl)) != NULL) {
		fprintf(stderr, "vramplan-probe: warning: cuBLAS has no %s; "
		    "the cuBLAS and GEMM fields are null\n", missing);
		return 0;
	}
	if (p->bl.cublasGetProperty(MAJOR_VERSION, &v[0]) == 0 &&
	    p->bl.cublasGetProperty(MINOR_VERSION, &v[1]) == 0 &&
	    p->bl.cublasGetProperty(PATCH_LEVEL, &v[2]) == 0)
		snprintf(p->rec.cublas_version, sizeof(p->rec.cublas_version),
		    "%d.%d.%d", v[0], v[1], v[2]);
	/* Handles and events go into the probe only once created, so that
	 * probe_close never destroys what a failed call left behind. */
	if (free_now(p, &before) != 0 ||
	    blas_ok(p, p->bl.cublasCreate(&h), "cublasCreate") != 0)
		return -1;
	p->blas = h;
	if (free_now(p, &after) != 0)
		return -1;
	p->rec.cublas_handle_bytes = vp_probe_drop(before, after);

	if (cu_ok(p, dev_alloc(p, bytes, &g.a), "cuMemAlloc") != 0 ||
	    cu_ok(p, dev_alloc(p, bytes, &g.b), "cuMemAlloc") != 0 ||
	    cu_ok(p, dev_alloc(p, bytes, &g.cc), "cuMemAlloc") != 0 ||
	    free_now(p, &before) != 0 || run_gemm(p, &g) != 0 ||
	    cu_ok(p, p->cu.cuCtxSynchronize(), "cuCtxSynchronize") != 0 ||
	    free_now(p, &after) != 0)
		return -1;
	p->rec.cublas_workspace_bytes = vp_probe_drop(before, after);
	free_all(p);
	return 0;
}

/*
 * What a process that already holds a context and a cuBLAS handle can
 * still allocate: 256 MiB blocks until one fails, then halves down to
 * 2 MiB.  Blocks rather than one search for the largest single buffer,
 * because a training process allocates many segments, and what matters
 * is their sum.
 */
static int
probe_usable(struct probe *p)
{
	size_t chunk = 256 * MIB;
	uint64_t sum = 0;
	CUdeviceptr d;
	CUresult r;

	while (chunk >= 2 * MIB) {
		r = dev_alloc(p, chunk, &d);
		if (r == CUDA_SUCCESS)
			sum += chunk;
		else if (r == CUDA_ERROR_OUT_OF_MEMORY)
			chunk /= 2;
		else
			return cu_ok(p, r, "cuMemAlloc");
	}
	p->rec.usable_bytes = sum;
	free_all(p);
	return 0;
}

struct copy {
	CUdeviceptr dst, src;
	size_t n;
};

static int
run_copy(struct probe *p, const void *arg)
{
	const struct copy *c = arg;

	return cu_ok(p, p->cu.cuMemcpyDtoD(c->dst, c->src, c->n),
	    "cuMemcpyDtoD");
}

/* One device-to-device copy of 1 GiB, or of 1/8 of free memory when that
 * is less, in whole 2 MiB; each copy reads n bytes and writes n, so the
 * rate is 2 n / t, the way memory bandwidth is quoted. */
static int
probe_bandwidth(struct probe *p)
{
	struct copy c;
	uint64_t fr;
	double s;

	if (free_now(p, &fr) != 0)
		return -1;
	c.n = (size_t)(fr / 8 < 1024 * MIB ? fr / 8 : 1024 * MIB);
	c.n -= c.n % (2 * MIB);
	if (c.n == 0)
		return 0;
	if (cu_ok(p, dev_alloc(p, c.n, &c.src), "cuMemAlloc") != 0 ||
	    cu_ok(p, dev_alloc(p, c.n, &c.dst), "cuMemAlloc") != 0 ||
	    time_op(p, run_copy, &c, &s) != 0)
		return -1;
	p->rec.d2d_copy_bytes = c.n;
	p->rec.d2d_bandwidth_gbs = vp_probe_gbs(2 * (uint64_t)c.n, s);
	free_all(p);
	return 0;
}

/*
 * Fill n bytes at d with random values: fp32 in [-1, 1), fp16 and bf16
 * of magnitude 0.25 to 1, made from their bits.  Random, not zero or
 * constant: tensor cores draw less power on such data, the clocks stay
 * higher, and the TFLOP/s would be more than a training run sees.  An
 * 8 MiB pattern is repeated.
 */
static int
fill_random(struct probe *p, CUdeviceptr d, size_t n, enum fill f)
{
	size_t len = n < 8 * MIB ? n : 8 * MIB, step = f == FILL_F32 ? 4 : 2;
	size_t i, off;
	uint32_t x = 2463534242u, e, m;
	unsigned char *h = xcalloc(1, len);
	uint16_t b;
	float v;
	int rc = 0;

	for (i = 0; i + step <= len; i += step) {
		x ^= x << 13;		/* xorshift32 */
		x ^= x >> 17;
		x ^= x << 5;
		if (f == FILL_F32) {
			v = (float)x / 2147483648.0f - 1;
			memcpy(h + i, &v, 4);
			continue;
		}
		/* sign, the exponent of 2^-2 or 2^-1 (biased by 15 in fp16,
		 * 127 in bf16), random mantissa bits */
		e = f == FILL_F16 ? 13 : 125;
		m = f == FILL_F16 ? 10 : 7;
		b = (uint16_t)((x >> 31) << 15 | (e + (x >> 30 & 1)) << m |
		    (x & ((1u << m) - 1)));
		memcpy(h + i, &b, 2);
	}
	for (off = 0; off < n && rc == 0; off += len)
		rc = cu_ok(p, p->cu.cuMemcpyHtoD(d + off, h,
		    n - off < len ? n - off : len), "cuMemcpyHtoD");
	free(h);
	return rc;
}

/* The GEMMs, in the order of enum vp_gemm.  FP8 needs cublasLt's scale
 * factors and layouts, which cublasGemmEx does not take, so it is listed
 * only to say so. */
static const struct gemm_kind {
	enum vp_gemm id;
	cudaDataType ab, c;
	cublasComputeType_t compute;
	enum fill fill;
	int min_cc;		/* 10 * major + minor */
	const char *why_not;	/* below min_cc, or always when min_cc < 0 */
} gemm_kinds[] = {
	{ VP_GEMM_FP32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
	    FILL_F32, 0, NULL },
	{ VP_GEMM_TF32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32,
	    FILL_F32, 80, "needs compute capability 8.0" },
	{ VP_GEMM_FP16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F,
	    FILL_F16, 53, "needs compute capability 5.3" },
	{ VP_GEMM_BF16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F,
	    FILL_BF16, 80, "needs compute capability 8.0" },
	{ VP_GEMM_FP8, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F,
	    FILL_F32, -1, "not measured: FP8 needs cublasLt" },
};

/*
 * Square GEMMs of 8192 (halved down to 1024 while three fp32 matrices
 * would take more than half of free memory), each kind the card supports,
 * median of REPS after WARMUPS.
 */
static int
probe_gemm(struct probe *p)
{
	const struct gemm_kind *k;
	struct gemm g;
	uint64_t fr;
	size_t i, bytes;
	double s;
	int cc = 10 * p->rec.cc_major + p->rec.cc_minor;

	for (i = 0; i < VP_GEMM_N; i++)
		p->rec.gemm_note[i] = "cuBLAS not available";
	if (p->blas == NULL)
		return 0;
	if (free_now(p, &fr) != 0)
		return -1;
	for (g.n = 8192; g.n > 1024 && 3 * 4 * (uint64_t)g.n * g.n > fr / 2;)
		g.n /= 2;
	bytes = (size_t)g.n * g.n * 4;
	if (3 * (uint64_t)bytes > fr / 2) {
		for (i = 0; i < VP_GEMM_N; i++)
			p->rec.gemm_note[i] = "not enough free memory";
		return 0;
	}
	if (cu_ok(p, dev_alloc(p, bytes, &g.a), "cuMemAlloc") != 0 ||
	    cu_ok(p, dev_alloc(p, bytes, &g.b), "cuMemAlloc") != 0 ||
	    cu_ok(p, dev_alloc(p, bytes, &g.cc), "cuMemAlloc") != 0)
		return -1;
	p->rec.gemm_n = g.n;
	for (k = gemm_kinds; k < gemm_kinds + VP_NELEM(gemm_kinds); k++) {
		if (k->min_cc < 0 || cc < k->min_cc) {
			p->rec.gemm_note[k->id] = k->why_not;
			continue;
		}
		g.ab = k->ab;
		g.c = k->c;
		g.compute = k->compute;
		if (fill_random(p, g.a, bytes, k->fill) != 0 ||
		    fill_random(p, g.b, bytes, k->fill) != 0 ||
		    time_op(p, run_gemm, &g, &s) != 0)
			return -1;
		p->rec.gemm_tflops[k->id] = vp_probe_tflops((uint64_t)g.n,
		    (uint64_t)g.n, (uint64_t)g.n, s);
	}
	free_all(p);
	return 0;
}

/* In this order; see the comment at the top. */
static int (*const steps[])(struct probe *) = {
	open_driver, read_device, read_nvml, open_context, probe_allocs,
	open_blas, probe_usable, probe_bandwidth, probe_gemm,
};

/*
 * Undo whatever the steps got to.  The libraries stay loaded: cuBLAS
 * carries its own CUDA runtime, whose exit handlers must still find its
 * code, and the process is about to end anyway.
 */
static void
probe_close(struct probe *p)
{
	int i;

	if (p->ctx != NULL) {
		free_all(p);
		for (i = 0; i < 2; i++)
			if (p->ev[i] != NULL)
				(void)p->cu.cuEventDestroy(p->ev[i]);
		if (p->blas != NULL)
			(void)p->bl.cublasDestroy(p->blas);
		(void)p->cu.cuDevicePrimaryCtxRelease(p->dev);
		p->ctx = NULL;
	}
	free(p->live);
	p->live = NULL;
	if (p->nvml_up)
		(void)p->nv.nvmlShutdown();
	p->nvml_up = 0;
}

/* ---- output and options ------------------------------------------------ */

/* Fail before measuring, not after, when FILE's directory is not
 * writable: a run takes tens of seconds of a GPU. */
static int
check_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int rc;

	if (slash == NULL)
		dir = xstrdup(".");
	else if (slash == path)
		dir = xstrdup("/");
	else {
		dir = xstrdup(path);
		dir[slash - path] = '\0';
	}
	rc = access(dir, W_OK | X_OK);
	if (rc != 0)
		fprintf(stderr, "vramplan-probe: cannot write '%s': %s\n", path,
		    strerror(errno));
	free(dir);
	return rc;
}

/* A temporary file beside path, synced, then renamed over it: readers see
 * the old file or the whole new one, never a part. */
static int
write_atomic(const char *path, const char *text)
{
	struct vp_buf tmp;
	size_t len = strlen(text);
	ssize_t w;
	mode_t mask;
	int fd, rc = -1;

	vp_buf_init(&tmp);
	vp_buf_printf(&tmp, "%s.tmpXXXXXX", path);
	if ((fd = mkstemp(tmp.s)) < 0) {
		fprintf(stderr, "vramplan-probe: cannot create '%s': %s\n",
		    tmp.s, strerror(errno));
		vp_buf_free(&tmp);
		return -1;
	}
	mask = umask(0);	/* mkstemp makes 0600; use the usual mode */
	umask(mask);
	(void)fchmod(fd, 0666 & ~mask);
	while (len > 0) {
		w = write(fd, text, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		text += w;
		len -= (size_t)w;
	}
	if (len == 0 && fsync(fd) == 0 && close(fd) == 0) {
		fd = -1;
		if (rename(tmp.s, path) == 0)
			rc = 0;
	}
	if (rc != 0) {
		fprintf(stderr, "vramplan-probe: cannot write '%s': %s\n", path,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp.s);
	}
	vp_buf_free(&tmp);
	return rc;
}

static const char usage_line[] = "usage: vramplan-probe [-d N] [-o FILE]\n";

static const char help[] =
"NAME\n"
"     vramplan-probe - measure a CUDA GPU for vramplan's calibration\n"
"\n"
"SYNOPSIS\n"
"     vramplan-probe [-d N] [-o FILE]\n"
"\n"
"DESCRIPTION\n"
"     Measures CUDA device N (default 0) and prints one YAML record: the\n"
"     memory a CUDA context and a cuBLAS handle and workspace take, the\n"
"     allocation granularity, how much memory cuMemAlloc still gives,\n"
"     the device-to-device copy bandwidth (bytes read plus written) and\n"
"     GEMM throughput in fp32, tf32, fp16 and bf16.  Run it on an idle\n"
"     GPU: other processes' allocations move the free-memory readings.\n"
"\n"
"     The CUDA driver (libcuda.so.1), NVML (libnvidia-ml.so.1) and\n"
"     cuBLAS are loaded at run time; without NVML or cuBLAS the fields\n"
"     they provide are null.\n"
"\n"
"OPTIONS\n"
"     -d, --device N\n"
"             the CUDA device ordinal, as CUDA_VISIBLE_DEVICES leaves them\n"
"     -o, --output FILE\n"
"             write the record to FILE (a temporary file beside it, then\n"
"             renamed) instead of standard output\n"
"     -h, --help\n"
"             print this help\n"
"     -V, --version\n"
"             print the version\n"
"\n"
"EXIT STATUS\n"
"     0  measured\n"
"     2  usage error\n"
"     4  system error: the output cannot be written, or a CUDA call failed\n"
"     5  no usable GPU: no CUDA driver, cuInit fails, or no device N\n";

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct probe p;
	struct vp_buf out;
	const char *outpath = NULL, *errstr;
	uint64_t dev = 0;
	size_t i;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "d:o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (vp_parse_u64(optarg, 0, INT_MAX, &dev,
			    &errstr) != 0) {
				fprintf(stderr, "vramplan-probe: device '%s' "
				    "is %s\n", optarg, errstr);
				return PX_USAGE;
			}
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			return fflush(stdout) == 0 ? PX_OK : PX_SYSTEM;
		case 'V':
			printf("vramplan-probe %s\n", PACKAGE_VERSION);
			return fflush(stdout) == 0 ? PX_OK : PX_SYSTEM;
		default:
			fputs(usage_line, stderr);
			return PX_USAGE;
		}
	}
	if (optind != argc) {
		fputs(usage_line, stderr);
		return PX_USAGE;
	}
	if (outpath != NULL && check_dir(outpath) != 0)
		return PX_SYSTEM;

	memset(&p, 0, sizeof(p));
	p.ordinal = (int)dev;
	vp_probe_init(&p.rec);
	for (i = 0; i < VP_NELEM(steps) && rc == 0; i++)
		rc = steps[i](&p);
	probe_close(&p);
	if (rc != 0) {
		fprintf(stderr, "vramplan-probe: %s\n", p.msg);
		return p.status != 0 ? p.status : PX_SYSTEM;
	}

	vp_buf_init(&out);
	vp_probe_yaml(&p.rec, &out);
	if (outpath != NULL)
		rc = write_atomic(outpath, out.s) != 0 ? PX_SYSTEM : PX_OK;
	else if (fputs(out.s, stdout) == EOF || fflush(stdout) != 0) {
		fprintf(stderr, "vramplan-probe: cannot write standard output: "
		    "%s\n", strerror(errno));
		rc = PX_SYSTEM;
	}
	vp_buf_free(&out);
	return rc;
}
