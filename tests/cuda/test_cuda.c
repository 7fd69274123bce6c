/*
 * Unit tests of the CUDA backend against stub driver functions and a stub
 * engine (cu_engine_stub.c): name matching, the legacy/per-thread stream
 * mapping, records filled from kernelParams and from the `extra` form,
 * boundaries, pass-through with the caller's own arguments, and the class
 * each kind of hook applies.
 */
#include <criterion/criterion.h>
#include <pthread.h>

#include "cu_engine_stub.h"
#include "gs_self.h"
#include "gs_stats.h"

#define FN_A ((CUfunction)0x100)    /* (int, double, int) */
#define FN_KERN ((CUfunction)0x200) /* a CUkernel: (void *) */
#define FN_B ((CUfunction)0x300)    /* same layout as FN_A */
#define FN_BAD ((CUfunction)0x999)  /* no layout to be had */
#define CTX ((CUcontext)0x1000)
#define S_NB ((CUstream)0x5000)  /* non-blocking */
#define S_BLK ((CUstream)0x6000) /* blocking */

static int getflags_calls;
static struct {
	int calls, pt;
	CUfunction f;
	unsigned grid[3], block[3], shmem;
	CUstream s;
	void **kp, **extra;
	unsigned char image[64];
} L;
static CUresult launch_status;
static unsigned char pinned[4096];
static int real_calls;

static CUresult s_ctx_get(CUcontext *c) { *c = CTX; return CUDA_SUCCESS; }

static CUresult s_stream_flags(CUstream s, unsigned int *f)
{
	getflags_calls++;
	if (s == S_NB) { *f = CU_STREAM_NON_BLOCKING; return CUDA_SUCCESS; }
	if (s == S_BLK) { *f = 0; return CUDA_SUCCESS; }
	return CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_func_param(CUfunction f, size_t i, size_t *off, size_t *size)
{
	static const size_t o[] = { 0, 8, 16 }, z[] = { 4, 8, 4 };
	if (f != FN_A && f != FN_B)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= 3)
		return CUDA_ERROR_INVALID_VALUE;
	*off = o[i];
	*size = z[i];
	return CUDA_SUCCESS;
}

static CUresult s_kern_param(CUkernel k, size_t i, size_t *off, size_t *size)
{
	if ((CUfunction)k != FN_KERN)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= 1)
		return CUDA_ERROR_INVALID_VALUE;
	*off = 0;
	*size = 8;
	return CUDA_SUCCESS;
}

static CUresult s_func_attr(int *v, CUfunction_attribute a, CUfunction f)
{
	*v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 49152;
	return CUDA_SUCCESS;
}

static void record_launch(int pt, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			  unsigned bx, unsigned by, unsigned bz, unsigned sh, CUstream s,
			  void **kp, void **extra)
{
	L.calls++;
	L.pt = pt;
	L.f = f;
	L.grid[0] = gx, L.grid[1] = gy, L.grid[2] = gz;
	L.block[0] = bx, L.block[1] = by, L.block[2] = bz;
	L.shmem = sh;
	L.s = s;
	L.kp = kp;
	L.extra = extra;
	if (kp && f == FN_A) {
		memcpy(L.image, kp[0], 4);
		memcpy(L.image + 8, kp[1], 8);
		memcpy(L.image + 16, kp[2], 4);
	}
}

static CUresult s_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			 unsigned by, unsigned bz, unsigned sh, CUstream s, void **kp,
			 void **extra)
{
	record_launch(0, f, gx, gy, gz, bx, by, bz, sh, s, kp, extra);
	return launch_status;
}

static CUresult s_launch_pt(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			    unsigned by, unsigned bz, unsigned sh, CUstream s, void **kp,
			    void **extra)
{
	record_launch(1, f, gx, gy, gz, bx, by, bz, sh, s, kp, extra);
	return launch_status;
}

static CUresult s_launch_coop(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			      unsigned by, unsigned bz, unsigned sh, CUstream s, void **kp)
{
	record_launch(0, f, gx, gy, gz, bx, by, bz, sh, s, kp, NULL);
	return launch_status;
}

/* A device of 4 multiprocessors, 2 blocks of any function on each: a
 * cooperative grid of up to 8 blocks fits. */
static CUresult s_occupancy(int *n, CUfunction f, int threads, size_t shmem)
{
	*n = 2;
	return CUDA_SUCCESS;
}

static CUresult s_ctx_device(CUdevice *d)
{
	*d = 0;
	return CUDA_SUCCESS;
}

static CUresult s_dev_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	if (a != CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 4;
	return CUDA_SUCCESS;
}

static CUresult s_launch_ex(const CUlaunchConfig *c, CUfunction f, void **kp, void **extra)
{
	record_launch(0, f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
		      c->blockDimZ, c->sharedMemBytes, c->hStream, kp, extra);
	return launch_status;
}

/* Two allocations: `pinned` (host) and [0xd0000000, 0xe0000000) (device). */
static CUresult s_ptr_attr(void *data, CUpointer_attribute a, CUdeviceptr p)
{
	uintptr_t b = (uintptr_t)pinned, start, size;
	unsigned type;
	if (p >= b && p < b + sizeof(pinned))
		type = CU_MEMORYTYPE_HOST, start = b, size = sizeof(pinned);
	else if (p >= 0xd0000000u && p < 0xe0000000u)
		type = CU_MEMORYTYPE_DEVICE, start = 0xd0000000u, size = 0x10000000u;
	else
		return CUDA_ERROR_INVALID_VALUE;
	switch (a) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = type;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = start;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = size;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = CTX;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult s_htod(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
	real_calls++;
	return CUDA_SUCCESS;
}

static CUresult s_generic_stream(CUstream s) { real_calls++; return CUDA_SUCCESS; }
static CUresult s_event_record(CUevent e, CUstream s) { real_calls++; return CUDA_SUCCESS; }
static CUresult s_event(CUevent e) { real_calls++; return CUDA_SUCCESS; }
static CUresult s_count(int *n) { real_calls++; *n = 3; return CUDA_SUCCESS; }
static CUstream pool_stream;
static CUdeviceptr pool_freed;
static CUresult s_alloc_async(CUdeviceptr *p, size_t n, CUstream s)
{
	real_calls++;
	pool_stream = s;
	*p = 0x7000;
	return CUDA_SUCCESS;
}
static CUresult s_free_async(CUdeviceptr p, CUstream s)
{
	real_calls++;
	pool_stream = s;
	pool_freed = p;
	return CUDA_SUCCESS;
}
static CUresult s_capturing(CUstream s, CUstreamCaptureStatus *st)
{
	*st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	return CUDA_SUCCESS;
}
static CUresult s_end_capture(CUstream s, CUgraph *g) { real_calls++; return CUDA_SUCCESS; }
static CUresult s_set_attr(CUfunction f, CUfunction_attribute a, int v) { return CUDA_SUCCESS; }
static CUresult s_kern_set_attr(CUfunction_attribute a, int v, CUkernel k, CUdevice d)
{
	return CUDA_SUCCESS;
}
/* FN_KERN's function in the current context is FN_B. */
static CUresult s_kern_func(CUfunction *f, CUkernel k)
{
	if ((CUfunction)k != FN_KERN)
		return CUDA_ERROR_INVALID_HANDLE;
	*f = FN_B;
	return CUDA_SUCCESS;
}
static CUresult s_begin_capture(CUstream s, CUstreamCaptureMode m)
{
	real_calls++;
	return s == S_BLK ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_STATE;
}

static void setup(void)
{
	gs_stub_reset();
	memset(&gs_stats, 0, sizeof(gs_stats));
	memset(&gs_cu_real, 0, sizeof(gs_cu_real));
	memset(&L, 0, sizeof(L));
	launch_status = CUDA_SUCCESS;
	getflags_calls = real_calls = 0;
	gs_cu_real.cuCtxGetCurrent = s_ctx_get;
	gs_cu_real.cuStreamGetFlags = s_stream_flags;
	gs_cu_real.cuFuncGetParamInfo = s_func_param;
	gs_cu_real.cuKernelGetParamInfo = s_kern_param;
	gs_cu_real.cuFuncGetAttribute = s_func_attr;
	gs_cu_real.cuLaunchKernel = s_launch;
	gs_cu_real.cuLaunchKernel_ptsz = s_launch_pt;
	gs_cu_real.cuLaunchKernelEx = s_launch_ex;
	gs_cu_real.cuLaunchCooperativeKernel = s_launch_coop;
	gs_cu_real.cuOccupancyMaxActiveBlocksPerMultiprocessor = s_occupancy;
	gs_cu_real.cuCtxGetDevice = s_ctx_device;
	gs_cu_real.cuDeviceGetAttribute = s_dev_attr;
	gs_cu_real.cuPointerGetAttribute = s_ptr_attr;
	gs_cu_real.cuMemcpyHtoDAsync_v2 = s_htod;
	gs_cu_real.cuStreamSynchronize = s_generic_stream;
	gs_cu_real.cuStreamQuery = s_generic_stream;
	gs_cu_real.cuStreamSynchronize_ptsz = s_generic_stream;
	gs_cu_real.cuEventRecord = s_event_record;
	gs_cu_real.cuEventRecord_ptsz = s_event_record;
	gs_cu_real.cuEventSynchronize = s_event;
	gs_cu_real.cuDeviceGetCount = s_count;
	gs_cu_real.cuMemAllocAsync = s_alloc_async;
	gs_cu_real.cuMemFreeAsync = s_free_async;
	gs_cu_real.cuStreamIsCapturing = s_capturing;
	gs_cu_real.cuStreamEndCapture = s_end_capture;
	gs_cu_real.cuStreamBeginCapture_v2 = s_begin_capture;
	gs_cu_real.cuFuncSetAttribute = s_set_attr;
	gs_cu_real.cuKernelSetAttribute = s_kern_set_attr;
	gs_cu_real.cuKernelGetFunction = s_kern_func;
	gs_cu_lane_fill();
	gs_stub.ops = &gs_cu_ops;
	gs_cu_forget();
	gs_cu_lane.state = GS_CU_ON;
}

TestSuite(cuda, .init = setup);

Test(cuda, name_matching)
{
	cr_expect(gs_cu_name_is_cu("cuLaunchKernel"));
	cr_expect(gs_cu_name_is_cu("cuInit"));
	cr_expect(gs_cu_name_is_cu("cuGetProcAddress_v2"));
	cr_expect(!gs_cu_name_is_cu("cudnnCreate"));
	cr_expect(!gs_cu_name_is_cu("cublasSgemm_v2"));
	cr_expect(!gs_cu_name_is_cu("cufftPlan1d"));
	cr_expect(!gs_cu_name_is_cu("cudaMalloc"));
	cr_expect(!gs_cu_name_is_cu("cu"));
	cr_expect(!gs_cu_name_is_cu("cu_"));
	cr_expect(!gs_cu_name_is_cu("hipInit"));
	cr_expect(!gs_cu_name_is_cu(NULL));
}

Test(cuda, legacy_and_per_thread_streams)
{
	gs_cu_sref_t r;
	gs_cu_stream_ref(NULL, 0, &r); /* 0 in a plain entry point: legacy */
	cr_expect_eq(r.handle, (uintptr_t)CU_STREAM_LEGACY);
	cr_expect_eq(r.sflags, GS_STREAM_LEGACY);
	cr_expect_eq(r.rflags, 0);
	gs_cu_stream_ref(CU_STREAM_LEGACY, 1, &r); /* explicit legacy in _ptsz */
	cr_expect_eq(r.handle, (uintptr_t)CU_STREAM_LEGACY);
	cr_expect_eq(r.sflags, GS_STREAM_LEGACY);

	gs_cu_sref_t p0, p1;
	gs_cu_stream_ref(NULL, 1, &p0); /* 0 in a _ptsz entry point: per-thread */
	gs_cu_stream_ref(CU_STREAM_PER_THREAD, 0, &p1);
	cr_expect_eq(p0.handle, p1.handle);
	cr_expect_eq(p0.sflags, GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING);
	cr_expect_eq(p0.rflags, GS_CU_RF_PERTHREAD);
	cr_expect_neq(p0.handle, (uintptr_t)CU_STREAM_PER_THREAD);
	cr_expect_eq(gs_cu_stream_of(p0.handle, p0.rflags), CU_STREAM_PER_THREAD);
	cr_expect_eq(gs_cu_stream_of((uintptr_t)CU_STREAM_LEGACY, 0), CU_STREAM_LEGACY);
}

Test(cuda, stream_flags_cached_and_forgotten)
{
	gs_cu_sref_t r;
	gs_cu_stream_ref(S_NB, 0, &r);
	cr_expect_eq(r.sflags, 0);
	cr_expect_eq(r.handle, (uintptr_t)S_NB);
	gs_cu_stream_ref(S_NB, 1, &r);
	cr_expect_eq(getflags_calls, 1, "flags are queried once per stream");
	gs_cu_stream_ref(S_BLK, 0, &r);
	cr_expect_eq(r.sflags, GS_STREAM_BLOCKING);
	gs_cu_stream_forget(S_NB);
	gs_cu_stream_ref(S_NB, 0, &r);
	cr_expect_eq(getflags_calls, 3);
	gs_cu_stream_ref((CUstream)0x7000, 0, &r); /* the driver rejects it */
	cr_expect_eq(r.sflags, GS_STREAM_PASSTHRU);
}

Test(cuda, record_from_kernel_params)
{
	int a = 7, c = -3;
	double b = 2.5;
	void *kp[] = { &a, &b, &c };
	cr_assert_eq(cuLaunchKernel(FN_A, 2, 3, 4, 32, 2, 1, 128, S_NB, kp, NULL), CUDA_SUCCESS);
	cr_assert_eq(gs_stub.launches, 1);
	cr_expect_eq(L.calls, 0, "held, not launched");
	const gs_rec_t *r = gs_stub.last;
	cr_expect_eq(r->kind, GS_REC_KERNEL);
	cr_expect_eq(r->func, (void *)FN_A);
	cr_expect_eq(r->ctx, (void *)CTX);
	cr_expect_eq(gs_stub.handle, (uintptr_t)S_NB);
	cr_expect_eq(gs_stub.sflags, 0);
	cr_expect_eq(r->grid[2], 4);
	cr_expect_eq(r->block[0], 32);
	cr_expect_eq(r->shmem, 128);
	cr_expect_eq(r->flags, 0);
	cr_assert_not_null(r->layout);
	cr_expect_eq(r->layout->nargs, 3);
	cr_expect_eq(r->layout->total, 20);
	cr_expect_eq(r->nbytes, 20);
	int ra, rc;
	double rb;
	memcpy(&ra, r->args, 4);
	memcpy(&rb, r->args + 8, 8);
	memcpy(&rc, r->args + 16, 4);
	cr_expect(ra == 7 && rb == 2.5 && rc == -3);
	static const unsigned char zero[4];
	cr_expect(!memcmp(r->args + 4, zero, 4), "padding is zero");
}

Test(cuda, layouts_are_interned)
{
	const gs_cu_fn_t *a = gs_cu_fn_get(FN_A), *b = gs_cu_fn_get(FN_B);
	cr_assert(a && b && a->layout);
	cr_expect_eq(a->layout, b->layout);
	cr_expect_eq(gs_cu_fn_get(FN_A), a, "cached per handle");
	cr_expect_eq(a->max_threads, 1024);
}

Test(cuda, record_from_extra_buffer)
{
	unsigned char buf[24];
	for (int i = 0; i < 24; i++)
		buf[i] = (unsigned char)(i * 3 + 1);
	size_t size = sizeof(buf);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
			  &size, CU_LAUNCH_PARAM_END };
	cr_assert_eq(cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, S_BLK, NULL, extra), CUDA_SUCCESS);
	cr_assert_eq(gs_stub.launches, 1);
	const gs_rec_t *r = gs_stub.last;
	cr_expect_null(r->layout);
	cr_expect_eq(r->flags & GS_CU_RF_EXTRA, GS_CU_RF_EXTRA);
	cr_expect_eq(r->nbytes, 24);
	cr_expect(!memcmp(r->args, buf, 24));
	cr_expect_eq(gs_stub.sflags, GS_STREAM_BLOCKING);

	/* Submitting the held record rebuilds the extra array. */
	gs_rec_t *held = gs_stub.last;
	held->orig = NULL;
	cr_expect_eq(gs_cu_ops.submit(held, gs_stub.handle), CUDA_SUCCESS);
	cr_assert_eq(L.calls, 1);
	cr_expect_null(L.kp);
	cr_assert_not_null(L.extra);
	cr_expect_eq(L.extra[0], CU_LAUNCH_PARAM_BUFFER_POINTER);
	cr_expect(!memcmp(L.extra[1], buf, 24));
	cr_expect_eq(*(size_t *)L.extra[3], 24);
	cr_expect_eq(L.s, S_BLK);
}

/*
 * A launch that records an event through its attributes is a use of that
 * event: a stream holding a record of it (or a wait on it) submits first,
 * or its older record would reach the driver after the launch's (a
 * reviewer's simulator program: cuEventSynchronize returned before the
 * launch had run, adopted, by default).
 */
Test(cuda, a_launch_recording_an_event_uses_it_first)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	CUlaunchAttribute attr[2] = { { .id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT },
				      { .id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT } };
	attr[0].value.programmaticEvent.event = (CUevent)0x7301;
	attr[1].value.launchCompletionEvent.event = (CUevent)0x7302;
	CUlaunchConfig cfg = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 1,
			       .blockDimY = 1, .blockDimZ = 1, .hStream = S_NB,
			       .attrs = attr, .numAttrs = 2 };
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.nused, 2, "both events used");
	cr_expect_eq(gs_stub.used[0], 0x7301);
	cr_expect_eq(gs_stub.used[1], 0x7302);
	cr_expect_eq(gs_stub.why, GS_FLUSH_ATTR, "and the launch is a boundary");
	cr_expect_eq(L.calls, 1);
}

Test(cuda, extra_with_unknown_option_passes_through)
{
	void *extra[] = { (void *)0x77, NULL, CU_LAUNCH_PARAM_END };
	void *b;
	size_t n;
	cr_expect(gs_cu_extra_parse(extra, &b, &n));
	cr_expect_eq(cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, S_NB, NULL, extra), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.launches, 0);
	cr_expect_eq(gs_stub.flush_stream, 1);
	cr_expect_eq(gs_stub.why, GS_FLUSH_ATTR);
	cr_expect_eq(L.calls, 1);
	cr_expect_eq(L.extra, extra, "the caller's own array");
}

Test(cuda, held_record_resubmits_from_image)
{
	int a = 11, c = 12;
	double b = -1.25;
	void *kp[] = { &a, &b, &c };
	cuLaunchKernel(FN_A, 5, 1, 1, 64, 1, 1, 0, NULL, kp, NULL);
	cr_assert_eq(gs_stub.launches, 1);
	cr_expect_eq(gs_stub.handle, (uintptr_t)CU_STREAM_LEGACY);
	cr_expect_eq(gs_stub.sflags, GS_STREAM_LEGACY);
	a = 0, b = 0, c = 0; /* callers reuse their arrays: the record kept copies */
	gs_rec_t *held = gs_stub.last;
	held->orig = NULL;
	cr_expect_eq(gs_cu_ops.submit(held, gs_stub.handle), CUDA_SUCCESS);
	cr_assert_eq(L.calls, 1);
	cr_expect_eq(L.s, CU_STREAM_LEGACY);
	cr_expect_eq(L.grid[0], 5);
	int ra, rc;
	double rb;
	memcpy(&ra, L.image, 4);
	memcpy(&rb, L.image + 8, 8);
	memcpy(&rc, L.image + 16, 4);
	cr_expect(ra == 11 && rb == -1.25 && rc == 12);
}

Test(cuda, pass_through_uses_callers_arguments_and_status)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	gs_stub.passthru = true;
	launch_status = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	cr_expect_eq(cuLaunchKernel_ptsz(FN_A, 1, 1, 1, 1, 1, 1, 0, NULL, kp, NULL),
		     CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	cr_assert_eq(L.calls, 1);
	cr_expect_eq(L.pt, 1, "the _ptsz entry point the caller used");
	cr_expect_eq(L.kp, kp);
	cr_expect_null(L.s);
	cr_expect_eq(gs_stub.sflags, GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING);
	cr_expect_eq(gs_stub.last->flags & GS_CU_RF_PERTHREAD, GS_CU_RF_PERTHREAD);
}

/* ---- adopted side streams (cu_adopt.c) ---- */

#define EV_APP ((CUevent)0x7100)
#define EV_JOIN ((CUevent)0x7700)
static struct {
	int records, waits, syncs;
	CUstream rec_s, wait_s, sync_s;
	CUevent rec_e, wait_e;
	CUresult record_rc; /* what a record returns (CUDA_SUCCESS unless a test says) */
} A;
static CUresult a_record(CUevent e, CUstream s)
{
	A.records++, A.rec_s = s, A.rec_e = e;
	return A.record_rc;
}
static CUresult a_wait(CUstream s, CUevent e, unsigned f)
{
	A.waits++, A.wait_s = s, A.wait_e = e;
	return CUDA_SUCCESS;
}
static CUresult a_sync(CUstream s)
{
	A.syncs++, A.sync_s = s;
	return CUDA_SUCCESS;
}
static CUresult a_create(CUevent *e, unsigned f)
{
	*e = EV_JOIN;
	return CUDA_SUCCESS;
}
static CUresult a_destroy(CUevent e) { return CUDA_SUCCESS; }
static CUresult a_wait_value(CUstream s, CUdeviceptr p, cuuint32_t v, unsigned f)
{
	A.syncs++, A.sync_s = s;
	return CUDA_SUCCESS;
}

static void adopt_setup(void)
{
	setup();
	memset(&A, 0, sizeof(A));
	gs_config.adopt = true;
	gs_config.adopt_grace_us = 0;
	gs_cu_lane.adopt = true;
	gs_cu_real.cuEventRecord = a_record;
	gs_cu_real.cuStreamWaitEvent = a_wait;
	gs_cu_real.cuStreamSynchronize = a_sync;
	gs_cu_real.cuStreamWaitValue32_v2 = a_wait_value;
	gs_cu_real.cuEventCreate = a_create;
	gs_cu_real.cuEventDestroy_v2 = a_destroy;
	gs_stub.passthru = true; /* marks and launches reach the driver through the ops */
}

static void adopt_teardown(void)
{
	gs_cu_adopt_forget();
	gs_config.adopt = false;
	gs_cu_lane.adopt = false;
}

/* The application's wait of t on EV_APP, last recorded on `origin`; true when t was adopted. */
static bool adopt_wait(CUstream t, CUstream origin)
{
	uint64_t before = gs_stats.adopted;
	gs_stub.origin = (uintptr_t)origin;
	gs_stub.origin_ctx = CTX;
	cr_assert_eq(cuStreamWaitEvent(t, EV_APP, 0), CUDA_SUCCESS);
	return gs_stats.adopted > before;
}

/* A fork of t from `origin` joined again before `origin` did anything else, then a fork again. */
static bool adopt_fork(CUstream t, CUstream origin)
{
	bool a = adopt_wait(t, origin);
	return a || (!adopt_wait(origin, t) && adopt_wait(t, origin));
}

Test(cuda, a_side_stream_is_adopted_into_the_stream_it_waits_on, .init = adopt_setup,
     .fini = adopt_teardown)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	cr_expect_not(adopt_wait(S_NB, S_BLK), "a first fork is only noted");
	cr_expect_not(adopt_wait(S_BLK, S_NB), "and its join, with no work of the root's between");
	cr_expect_eq(gs_stub.absorbs, 0);
	cr_assert(adopt_wait(S_NB, S_BLK), "the next fork of a non-blocking stream from a blocking one");
	cr_expect_eq(gs_stub.absorbs, (uintptr_t)S_BLK, "the root absorbs its sides' marks from now on");
	cr_expect_eq(A.records, 1, "its work so far is joined: an event of graphshim's on it...");
	cr_expect_eq(A.rec_s, S_NB);
	cr_expect_eq(A.rec_e, EV_JOIN);
	cr_expect_eq(A.waits, 4, "...which the root waits on; then the application's wait");
	cr_expect_eq(A.wait_s, S_BLK, "the application's wait is made on the root");
	cr_expect_eq(A.wait_e, EV_APP);
	cr_expect_eq(gs_stub.handle, (uintptr_t)S_BLK, "the engine saw it on the root");

	cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(gs_stub.handle, (uintptr_t)S_BLK, "a launch on the side stream is the root's");
	cr_expect_eq(L.s, S_BLK, "and reaches the driver there");
	CUlaunchConfig cfg = { .gridDimX = 5, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
			       .blockDimY = 1, .blockDimZ = 1, .hStream = S_NB };
	cuLaunchKernelEx(&cfg, FN_A, kp, NULL);
	cr_expect_eq(L.s, S_BLK, "cuLaunchKernelEx's too");
	cr_expect_eq(cfg.hStream, S_NB, "the caller's configuration is left as it was");
	cuEventRecord(EV_APP, S_NB);
	cr_expect_eq(A.rec_s, S_BLK, "a record on it is made on the root");
	cuStreamSynchronize(S_NB);
	cr_expect_eq(A.sync_s, S_BLK, "a synchronization of it waits for the root");
	cr_expect_not(adopt_wait(S_NB, S_BLK), "adopted once");

	cuStreamWaitValue32_v2(S_NB, 0xd0000000u, 1, 0);
	cr_expect_eq(A.rec_s, S_BLK, "a wait on a value: the root records its tail...");
	cr_expect_eq(A.wait_s, S_NB, "...which the side stream waits on, taking its work back");
	cr_expect_eq(A.sync_s, S_NB, "and the wait on the value is made on the side stream");
	cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(L.s, S_NB, "its launches are its own again");
}

Test(cuda, an_adopted_stream_takes_its_work_back_when_its_root_goes_or_a_capture_begins,
     .init = adopt_setup, .fini = adopt_teardown)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	gs_cu_real.cuStreamDestroy_v2 = s_generic_stream;
	cr_assert(adopt_fork(S_NB, S_BLK));
	cr_expect_eq(cuStreamDestroy_v2(S_BLK), CUDA_SUCCESS);
	cr_expect_eq(A.rec_s, S_BLK, "the root's tail recorded before it goes");
	cr_expect_eq(A.wait_s, S_NB, "and waited on by the side stream");
	cr_expect_eq(gs_stub.last_call, 'd',
		     "the engine drops the root's state after the join flushed it, not before "
		     "(a flush after made a new state, with the root's flags, for its handle's next stream)");
	cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(L.s, S_NB);

	cr_assert(adopt_fork(S_NB, S_BLK));
	cr_expect_eq(cuStreamBeginCapture_v2(S_BLK, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	cr_expect_eq(A.wait_s, S_NB, "a capture sees the streams as the program made them");
	cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(L.s, S_NB);
	cr_expect_not(adopt_fork(S_NB, S_BLK), "nothing is adopted during a capture");
}

static CUresult a_ctx_destroy(CUcontext c) { return CUDA_SUCCESS; }

/* A context's teardown destroys its streams with no cuStreamDestroy, and a
 * handle may come back as another stream's: adopted streams are joined
 * back while the context lives. */
Test(cuda, a_contexts_teardown_gives_adopted_streams_their_work_back, .init = adopt_setup,
     .fini = adopt_teardown)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	gs_cu_real.cuCtxDestroy_v2 = a_ctx_destroy;
	cr_assert(adopt_fork(S_NB, S_BLK));
	A.records = A.waits = 0;
	cr_expect_eq(cuCtxDestroy_v2(CTX), CUDA_SUCCESS);
	cr_expect_eq(A.records, 1, "the root's tail recorded before the context goes");
	cr_expect_eq(A.rec_s, S_BLK);
	cr_expect_eq(A.wait_s, S_NB, "and waited on by the side stream");
	cr_expect_eq(gs_stub.last_call, 'a', "before the engine forgets every stream, not after");
	cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(L.s, S_NB, "a stream of that handle is its own");
	cr_expect_not(adopt_wait(S_NB, S_BLK), "and its forks are seen anew");
}

/* At exit the driver shuts down at the primary context's last release, and
 * a join there fails with CUDA_ERROR_DEINITIALIZED: the entry goes quietly
 * (no warning on every adopting program's stderr).  Another failure keeps
 * the entry: the side's work goes on going to its root, which is correct. */
Test(cuda, a_join_the_driver_refuses_at_exit_drops_the_entry_another_keeps_it, .init = adopt_setup,
     .fini = adopt_teardown)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	cr_assert(adopt_fork(S_NB, S_BLK));
	A.record_rc = CUDA_ERROR_INVALID_VALUE;
	gs_cu_adopt_release(S_NB, "test");
	cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(L.s, S_BLK, "a join that failed otherwise leaves the side adopted");
	A.record_rc = CUDA_ERROR_DEINITIALIZED;
	gs_cu_adopt_release(S_NB, "test");
	cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(L.s, S_NB, "the driver shutting down: the entry is dropped");
}

Test(cuda, a_stream_is_adopted_only_where_no_ordering_is_lost, .init = adopt_setup,
     .fini = adopt_teardown)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	cr_expect_not(adopt_fork(S_BLK, S_NB),
		      "a blocking stream into a non-blocking one would lose the legacy stream's order");
	cr_expect_not(adopt_fork(CU_STREAM_LEGACY, S_NB), "the default streams are never adopted");
	cr_expect_not(adopt_fork(CU_STREAM_PER_THREAD, S_NB));
	cr_expect_not(adopt_fork(S_NB, S_NB), "nor a stream into itself");
	gs_cu_adopt_forget();
	gs_stub.origin_ctx = (void *)0x2000;
	gs_stub.origin = (uintptr_t)S_BLK;
	for (int i = 0; i < 3; i++) {
		cuStreamWaitEvent(S_NB, EV_APP, 0);
		gs_stub.origin = (uintptr_t)(i % 2 ? S_BLK : S_NB);
	}
	cr_expect_eq(gs_stats.adopted, 0, "nor across contexts");
	gs_cu_adopt_forget();
	cr_expect_not(adopt_wait(S_NB, S_BLK));
	cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_BLK, kp, NULL);
	cr_expect_not(adopt_wait(S_BLK, S_NB), "the root worked while its side did: spoilt");
	cr_expect_not(adopt_fork(S_NB, S_BLK), "a stream that works beside its root stays apart");
	gs_cu_adopt_forget();
	cr_expect(adopt_fork(S_NB, S_BLK));
	cr_expect_not(adopt_fork(S_BLK, CU_STREAM_LEGACY), "a stream others are adopted into is not adopted");
	gs_cu_adopt_forget();
	cr_expect(adopt_fork(S_NB, CU_STREAM_LEGACY), "a non-blocking stream into the legacy one");
	gs_config.adopt = false;
	gs_cu_adopt_forget();
	cr_expect_not(adopt_fork(S_BLK, CU_STREAM_LEGACY), "off: nothing");
}

/*
 * Adoption arms at the first wait of one stream on another's event: until
 * then launches keep the cold lane and nothing is counted; that wait is
 * not noted as a fork, nor any until the grace after it is over (here at
 * once: GRAPHSHIM_ADOPT_GRACE_US 0, and no other thread).
 */
Test(cuda, adoption_arms_at_the_first_wait_across_streams, .init = adopt_setup,
     .fini = adopt_teardown)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	gs_cu_lane.adopt = false;
	gs_stub_lane_open((uintptr_t)S_NB, NULL);
	cr_expect_eq(cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_stub_lane.len, 2, "not armed: the cold lane takes launches");
	cr_expect_not(adopt_wait(S_NB, S_NB), "a stream's wait on its own record");
	cr_expect_not(gs_cu_lane.adopt, "arms nothing");
	cr_expect_not(adopt_wait(S_NB, S_BLK));
	cr_expect(gs_cu_lane.adopt, "a wait across streams arms it");
	cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(gs_stub_lane.len, 2, "armed: the lane takes nothing");
	cr_expect_not(adopt_wait(S_BLK, S_NB), "had the arming wait been a fork, this closed it");
	cr_expect_not(adopt_wait(S_NB, S_BLK), "not adopted: this fork is the first noted");
	cr_expect_not(adopt_wait(S_BLK, S_NB), "and its join, closed");
	cr_expect(adopt_wait(S_NB, S_BLK), "adopted at the fork after");
}

/* Another thread, which launches once each time it is asked (`ask`), until -1. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int ask, done;
} O = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };

static void *other_calls(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&O.mu);
	for (;;) {
		while (O.ask == O.done)
			pthread_cond_wait(&O.cv, &O.mu);
		if (O.ask < 0)
			break;
		pthread_mutex_unlock(&O.mu);
		int a = 1, c = 2;
		double b = 3;
		void *kp[] = { &a, &b, &c };
		cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL);
		pthread_mutex_lock(&O.mu);
		O.done++;
		pthread_cond_broadcast(&O.cv);
	}
	pthread_mutex_unlock(&O.mu);
	return NULL;
}

static void other_thread_calls(void)
{
	pthread_mutex_lock(&O.mu);
	int want = ++O.ask;
	pthread_cond_broadcast(&O.cv);
	while (O.done < want)
		pthread_cond_wait(&O.cv, &O.mu);
	pthread_mutex_unlock(&O.mu);
}

/*
 * The grace after arming: no fork is noted until every other thread that
 * made stream calls before arming has made more (its count three past the
 * one at arming: the call it had under way then has returned; a launch
 * counts twice), or GRAPHSHIM_ADOPT_GRACE_US has passed.
 */
Test(cuda, adoption_waits_for_other_threads_calls_after_arming, .init = adopt_setup,
     .fini = adopt_teardown)
{
	gs_config.adopt_grace_us = 60000000; /* a minute */
	gs_cu_lane.adopt = false;
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, other_calls, NULL), 0);
	other_thread_calls(); /* a thread with a slot, that may have a call under way */
	cr_expect_not(adopt_wait(S_NB, S_BLK), "arms");
	for (int i = 0; i < 3; i++)
		cr_expect_not(adopt_wait(S_BLK, S_NB) || adopt_wait(S_NB, S_BLK),
			      "in the grace: the other thread has not called since");
	other_thread_calls();
	cr_expect_not(adopt_wait(S_BLK, S_NB) || adopt_wait(S_NB, S_BLK), "one launch is not enough");
	other_thread_calls();
	cr_expect_not(adopt_wait(S_BLK, S_NB) || adopt_wait(S_NB, S_BLK), "a fork noted after two");
	cr_expect_not(adopt_wait(S_BLK, S_NB), "closed");
	pthread_mutex_lock(&O.mu);
	O.ask = -1;
	pthread_cond_broadcast(&O.cv);
	pthread_mutex_unlock(&O.mu);
	pthread_join(th, NULL);
	cr_expect(adopt_wait(S_NB, S_BLK), "adopted");
	gs_config.adopt = false;
	gs_cu_lane.adopt = false;
	gs_cu_adopt_forget();
	for (int i = 0; i < 4; i++)
		cr_expect_not(adopt_wait(S_NB, S_BLK) || adopt_wait(S_BLK, S_NB), "off: nothing");
	cr_expect_not(gs_cu_lane.adopt, "and nothing armed");
}

/*
 * Work on a third stream between a fork and its join is not the root's: the
 * counts of work are kept per stream exactly.  Z is picked to share the
 * root's slot of the direct-mapped table they were once kept in, where
 * Z's launch spoilt the fork (rnn-lstm went unadopted in some runs).
 */
Test(cuda, another_streams_work_never_spoils_a_fork, .init = adopt_setup, .fini = adopt_teardown)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	uintptr_t z = 0x9100;
	while (((gs_mix64(z) ^ gs_mix64((uintptr_t)S_BLK)) & 255) != 0)
		z += 0x10;
	cr_expect_not(adopt_wait(S_NB, S_BLK), "a first fork is only noted");
	cr_expect_eq(cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, (CUstream)z, kp, NULL), CUDA_SUCCESS);
	cr_expect_not(adopt_wait(S_BLK, S_NB), "its join");
	cr_expect(adopt_wait(S_NB, S_BLK), "closed: the third stream's launch was not the root's work");
}

Test(cuda, cold_streams_pass_the_callers_call_with_no_record)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	cr_expect_eq(cuLaunchKernel(FN_A, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.cold_calls, 1, "every kernel launch offers itself to a cold stream");
	cr_expect_eq(gs_stub.launches, 1, "a warm stream gets the record");
	uint64_t k3 = gs_stub.cold_key;
	gs_stub.cold = true;
	launch_status = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	cr_expect_eq(cuLaunchKernel(FN_A, 4, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL),
		     CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "the driver's status comes back");
	cr_expect_eq(gs_stub.launches, 1, "no record for a cold launch");
	cr_expect_eq(L.calls, 1, "the driver called once (the stub held the first)");
	cr_expect_eq(L.kp, kp, "the caller's own parameter array");
	cr_expect_eq(L.grid[0], 4);
	cr_expect_eq(L.s, S_NB);
	cr_expect_eq(gs_stub.handle, (uintptr_t)S_NB);
	cr_expect_eq(gs_stub.cold_key, k3, "the key is the function's: a grid is an operand");
	cuLaunchKernel(FN_A, 3, 1, 1, 64, 1, 1, 16, S_NB, kp, NULL);
	cr_expect_eq(gs_stub.cold_key, k3, "so are the block and the shared memory");
	cuLaunchKernel(FN_B, 3, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_neq(gs_stub.cold_key, k3, "another function is another key");
}

Test(cuda, the_cold_lane_forwards_the_callers_call_on_ordinary_streams)
{
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	gs_stub_lane_open((uintptr_t)S_NB, NULL);
	launch_status = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	cr_expect_eq(cuLaunchKernel(FN_A, 4, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL),
		     CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "the driver's status comes back");
	cr_expect_eq(gs_stub_lane.len, 2, "counted into the stream's cold segment");
	cr_expect_eq(gs_stub.cold_calls + gs_stub.launches, 0, "nothing else of the engine");
	cr_expect_eq(getflags_calls, 0, "no driver call of ours");
	cr_expect_eq(L.calls, 1);
	cr_expect_eq(L.pt, 0);
	cr_expect_eq(L.kp, kp, "the caller's own parameter array");
	cr_expect_eq(L.grid[0], 4);
	cr_expect_eq(L.block[0], 32);
	cr_expect_eq(L.s, S_NB);
	uint64_t h = gs_stub_lane.hash;
	gs_stub_lane.cold = false;
	cuLaunchKernel(FN_A, 4, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(gs_stub.cold_calls, 1, "a stream that is not cold takes the full path");
	cr_expect_eq(gs_hash_step(0, gs_stub.cold_key), h, "whose key is the lane's");
	gs_stub_lane.cold = true;
	cuLaunchKernel_ptsz(FN_A, 4, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(L.pt, 1, "the per-thread entry point the caller used");
	cr_expect_eq(gs_stub_lane.len, 3);
	CUlaunchConfig cfg = { .gridDimX = 5, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
			       .blockDimY = 1, .blockDimZ = 1, .hStream = S_NB };
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	cr_expect_eq(gs_stub_lane.len, 4);
	cr_expect_eq(L.grid[0], 5);
	cr_expect_eq(gs_stub.launches, 1, "only the one launch the lane refused was recorded");
	gs_stub_lane.len = 0;
	cuLaunchKernel(FN_A, 4, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(gs_stub.launches, 2, "a segment's first launch takes the full path");
	cuLaunchKernel(FN_A, 4, 1, 1, 32, 1, 1, 0, (CUstream)0x6000, kp, NULL);
	cr_expect_eq(gs_stub.launches, 3, "and so does a stream that is not the thread's last");
}

Test(cuda, the_legacy_stream_takes_the_lane_in_the_current_context)
{
	void *p = (void *)0xabc;
	void *kp[] = { &p, &p, &p };
	gs_stub_lane_open((uintptr_t)CU_STREAM_LEGACY, CTX);
	cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, NULL, kp, NULL);
	cr_expect_eq(gs_stub_lane.len, 2, "0 in a plain entry point");
	cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_LEGACY, kp, NULL);
	cr_expect_eq(gs_stub_lane.len, 3);
	cr_expect_eq(gs_stub.launches, 0);
	gs_stub_lane_open((uintptr_t)CU_STREAM_LEGACY, (CUcontext)0x2000);
	cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, NULL, kp, NULL);
	cr_expect_eq(gs_stub_lane.len, 1, "its handle is every context's: another one's is not it");
	cr_expect_eq(gs_stub.launches, 1, "recorded (and held, by the stub)");
	cr_expect_eq(L.calls, 2);
}

Test(cuda, the_per_thread_stream_nested_calls_and_attributes_never_take_the_lane)
{
	void *p = (void *)0xabc;
	void *kp[] = { &p, &p, &p };
	gs_stub.passthru = true;
	gs_stub_lane_open((uintptr_t)CU_STREAM_PER_THREAD, NULL);
	cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_PER_THREAD, kp, NULL);
	cuLaunchKernel_ptsz(FN_A, 1, 1, 1, 1, 1, 1, 0, NULL, kp, NULL);
	cr_expect_eq(gs_stub_lane.len, 1, "nothing is ever held on it");
	cr_expect_eq(gs_stub.launches, 2);
	gs_stub_lane_open((uintptr_t)S_NB, NULL);
	gs_cu_depth++;
	cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL);
	gs_cu_depth--;
	cr_expect_eq(gs_stub_lane.len, 1, "graphshim's own calls go straight to the driver");
	CUlaunchAttribute attr = { .id = CU_LAUNCH_ATTRIBUTE_PRIORITY };
	CUlaunchConfig cfg = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 1,
			       .blockDimY = 1, .blockDimZ = 1, .hStream = S_NB,
			       .attrs = &attr, .numAttrs = 1 };
	cuLaunchKernelEx(&cfg, FN_A, kp, NULL);
	cr_expect_eq(gs_stub_lane.len, 1, "a launch with attributes is a boundary");
	gs_hot.capturing = 1;
	cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL);
	gs_hot.capturing = 0;
	cr_expect_eq(gs_stub_lane.len, 1, "nor during an application's capture");
	gs_hot.generation++;
	cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(gs_stub_lane.len, 1, "nor once a stream was forgotten");
	gs_stub_lane_open((uintptr_t)S_NB, NULL);
	gs_cu_lane.state = GS_CU_OFF;
	cuLaunchKernel(FN_A, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(gs_stub_lane.len, 1, "nor while the engine is off");
	cr_expect_eq(L.calls, 7, "every launch reached the driver");
}

Test(cuda, kernel_handles_use_kernel_param_info)
{
	void *p = (void *)0xabc;
	void *kp[] = { &p };
	cuLaunchKernel(FN_KERN, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL);
	cr_assert_eq(gs_stub.launches, 1);
	cr_expect_eq(gs_stub.last->flags & GS_CU_RF_KERNEL, GS_CU_RF_KERNEL);
	cr_expect_eq(gs_stub.last->nbytes, 8);
}

/* Stands for a graph launch inside the engine's handling of a launch call. */
static void selftime_graph(void)
{
	gs_self_drv_end(gs_self_drv_begin(), GS_SELF_GRAPH);
}

/*
 * GRAPHSHIM_SELFTIME: each launch call is counted by what it did (held,
 * eager, a chunk's graph) and the driver's calls inside it apart; with the
 * setting off nothing is counted.
 */
Test(cuda, selftime_counts_each_launch_call_by_what_it_did)
{
	void *p = (void *)0xabc;
	void *kp[] = { &p };
	memset(&gs_stats, 0, sizeof(gs_stats));
	cuLaunchKernel(FN_KERN, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(gs_stats.host_held_calls + gs_stats.host_eager_calls + gs_stats.host_submits, 0);
	gs_config.selftime = true;
	cuLaunchKernel(FN_KERN, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL); /* held */
	cr_expect_eq(gs_stats.host_held_calls, 1);
	cr_expect_eq(gs_stats.host_eager_calls, 0);
	cr_expect_eq(gs_stats.host_submits, 0);
	gs_stub.passthru = true; /* submitted at once */
	cuLaunchKernel(FN_KERN, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL);
	cr_expect_eq(gs_stats.host_eager_calls, 1);
	cr_expect_eq(gs_stats.host_submits, 1);
	cr_expect_eq(L.calls, 1);
	gs_stub.passthru = false;
	gs_stub.during = selftime_graph; /* the call launches a chunk's graph */
	CUlaunchConfig cfg = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 1,
			       .blockDimY = 1, .blockDimZ = 1, .hStream = S_NB };
	cuLaunchKernelEx(&cfg, FN_KERN, kp, NULL);
	cr_expect_eq(gs_stats.host_chunk_calls, 1);
	cr_expect_eq(gs_stats.host_graph_launches, 1);
	cr_expect_eq(gs_stats.host_held_calls, 1);
	cr_expect_eq(gs_stub.launches, 4);
	cr_expect_eq(gs_self_tl.depth, 0);
	gs_stub.during = NULL;
	gs_config.selftime = false;
}

Test(cuda, unknown_layout_is_a_boundary)
{
	void *kp[] = { NULL };
	cr_expect_eq(cuLaunchKernel(FN_BAD, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.launches, 0);
	cr_expect_eq(gs_stub.flush_stream, 1);
	cr_expect_eq(gs_stub.handle, (uintptr_t)S_NB);
	cr_expect_eq(L.calls, 1);
	cr_expect_eq(L.kp, kp);
}

Test(cuda, invalid_launch_reaches_driver_now)
{
	int a = 0, c = 0;
	double b = 0;
	void *kp[] = { &a, &b, &c };
	cuLaunchKernel(FN_A, 1, 1, 1, 2048, 1, 1, 0, S_NB, kp, NULL); /* > 1024 threads */
	cuLaunchKernel(FN_A, 0, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL);   /* empty grid */
	cuLaunchKernel(FN_A, 1, 1, 1, 32, 1, 1, 1 << 20, S_NB, kp, NULL); /* shmem */
	cr_expect_eq(gs_stub.launches, 0);
	cr_expect_eq(L.calls, 3);
}

/*
 * Frameworks set a kernel's dynamic shared memory limit before each of its
 * launches (PyTorch's flash attention): a limit no held launch exceeds
 * leaves the held work held; a lower one, or another attribute, submits it.
 */
Test(cuda, a_shared_memory_limit_no_held_launch_exceeds_does_not_flush)
{
	int a = 0, c = 0;
	double b = 0;
	void *kp[] = { &a, &b, &c };
	const CUfunction_attribute dyn = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
	cuLaunchKernel(FN_A, 1, 1, 1, 32, 1, 1, 4096, S_NB, kp, NULL);
	cr_assert_eq(gs_stub.launches, 1);
	cr_expect_eq(cuFuncSetAttribute(FN_A, dyn, 4096), CUDA_SUCCESS);
	cr_expect_eq(cuFuncSetAttribute(FN_A, dyn, 8192), CUDA_SUCCESS);
	cr_expect_eq(cuFuncSetAttribute(FN_A, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50),
		     CUDA_SUCCESS);
	cr_expect_eq(gs_stub.flush_all, 0);
	cr_expect_eq(cuFuncSetAttribute(FN_A, dyn, 2048), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.flush_all, 1, "a limit below a held launch's shared memory");
	cr_expect_eq(cuFuncSetAttribute(FN_A, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2),
		     CUDA_SUCCESS);
	cr_expect_eq(gs_stub.flush_all, 2, "any other attribute");
	/* Another function's limit: nothing of it is held. */
	cr_expect_eq(cuFuncSetAttribute(FN_B, dyn, 0), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.flush_all, 2);
}

Test(cuda, a_kernels_limit_covers_its_function_and_a_functions_every_kernel)
{
	void *p = (void *)0xabc;
	void *kp1[] = { &p };
	int a = 0, c = 0;
	double b = 0;
	void *kp[] = { &a, &b, &c };
	const CUfunction_attribute dyn = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
	/* FN_B, FN_KERN's function here, holds a launch of 4096 bytes. */
	cuLaunchKernel(FN_B, 1, 1, 1, 32, 1, 1, 4096, S_NB, kp, NULL);
	cr_expect_eq(cuKernelSetAttribute(dyn, 4096, (CUkernel)FN_KERN, 0), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.flush_all, 0);
	cr_expect_eq(cuKernelSetAttribute(dyn, 1024, (CUkernel)FN_KERN, 0), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.flush_all, 1, "below what the kernel's function holds");
	/* A launch of the kernel handle itself: any function may be the kernel's. */
	cuLaunchKernel(FN_KERN, 1, 1, 1, 1, 1, 1, 8192, S_NB, kp1, NULL);
	cr_expect_eq(cuKernelSetAttribute(dyn, 8192, (CUkernel)FN_KERN, 0), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.flush_all, 1);
	cr_expect_eq(cuFuncSetAttribute(FN_A, dyn, 6000), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.flush_all, 2, "a function's limit below a kernel's held launch");
	/* A kernel whose function here cannot be had: submit first. */
	cr_expect_eq(cuKernelSetAttribute(dyn, 1 << 20, (CUkernel)FN_BAD, 0), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.flush_all, 3);
}

/* Launch attributes the stub driver saw in the last cuLaunchKernelEx. */
static CUlaunchAttribute ex_attrs[GS_CU_MAX_ATTRS + 1];
static unsigned ex_nattrs;

static CUresult s_launch_ex_attrs(const CUlaunchConfig *c, CUfunction f, void **kp, void **extra)
{
	ex_nattrs = c->numAttrs;
	memcpy(ex_attrs, c->attrs, c->numAttrs * sizeof(*c->attrs));
	return s_launch_ex(c, f, kp, extra);
}

/* A copy of the stub's last record that outlives the next launch (orig cleared, as held). */
static gs_rec_t *rec_dup(const gs_rec_t *r)
{
	gs_rec_t *d = malloc(gs_rec_size(r->nbytes));
	cr_assert_not_null(d);
	memcpy(d, r, gs_rec_size(r->nbytes));
	d->orig = NULL;
	return d;
}

static CUlaunchConfig ex_config(CUlaunchAttribute *at, unsigned n)
{
	CUlaunchConfig cfg = { .gridDimX = 4, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
			       .blockDimY = 1, .blockDimZ = 1, .hStream = S_NB,
			       .attrs = at, .numAttrs = n };
	return cfg;
}

Test(cuda, launch_ex_attributes_a_node_carries_are_part_of_the_record)
{
	int a = 0, c = 0;
	double b = 0;
	void *kp[] = { &a, &b, &c };
	CUlaunchConfig cfg = ex_config(NULL, 0);
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_assert_eq(gs_stub.launches, 1, "no attributes: an element");
	cr_expect_eq(gs_stub.last->aux[GS_CU_AUX_ATTRS], 0);

	CUlaunchAttribute at[3];
	memset(at, 0xa5, sizeof(at)); /* garbage in the unused bytes of each value */
	at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	at[0].value.clusterDim.x = 2, at[0].value.clusterDim.y = 1, at[0].value.clusterDim.z = 1;
	at[1].id = CU_LAUNCH_ATTRIBUTE_IGNORE;
	at[2].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
	at[2].value.programmaticStreamSerializationAllowed = 1;
	cfg = ex_config(at, 3);
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_assert_eq(gs_stub.launches, 2, "carried attributes: still an element");
	cr_expect_eq(gs_stub.flush_stream, 0);
	const gs_cu_attrs_t *s1 = gs_cu_rec_attrs(gs_stub.last);
	cr_assert_not_null(s1);
	cr_expect_eq(s1->n, 1, "IGNORE dropped, serialization kept as a flag");
	cr_expect_eq(s1->pss, 1);
	cr_expect_eq(s1->a[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
	cr_expect_eq(s1->a[0].value.clusterDim.x, 2);
	cr_expect_eq(s1->a[0].value.pad[12], 0, "only the meaningful bytes are kept");

	/* Equal attributes with other garbage: the same interned set, the same shape. */
	memset(&at[0].value.pad[12], 0x3c, 16);
	memset(&at[2].value.pad[4], 0x77, 8);
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_cu_rec_attrs(gs_stub.last), s1);
	/* A different cluster: another set. */
	at[0].value.clusterDim.x = 4;
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_expect_neq(gs_cu_rec_attrs(gs_stub.last), s1);
	/* Only entries that change nothing: a plain launch. */
	at[0].id = CU_LAUNCH_ATTRIBUTE_IGNORE;
	at[2].value.programmaticStreamSerializationAllowed = 0;
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.last->aux[GS_CU_AUX_ATTRS], 0);
	cr_expect_eq(L.calls, 0, "all held");
}

Test(cuda, a_longer_set_after_a_shorter_one_is_its_own)
{
	int a = 0, c = 0;
	double b = 0;
	void *kp[] = { &a, &b, &c };
	CUlaunchAttribute at[2];
	memset(at, 0, sizeof(at));
	at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	at[0].value.priority = -2;
	at[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	at[1].value.cooperative = 1;
	CUlaunchConfig cfg = ex_config(at, 1);
	cr_assert_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_cu_rec_attrs(gs_stub.last)->n, 1);
	/* The thread's cached set is the shorter one: it is not compared past its end. */
	cfg = ex_config(at, 2);
	cr_assert_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_cu_rec_attrs(gs_stub.last)->n, 2);
	cfg = ex_config(at, 1);
	cr_assert_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_cu_rec_attrs(gs_stub.last)->n, 1);
}

/*
 * cuLaunchCooperativeKernel is a boundary, but a kernel launch all the
 * same: counted, so that the statistics' kernels are a profiler's.
 */
Test(cuda, a_cooperative_launch_is_a_counted_boundary)
{
	int a = 0, c = 0;
	double b = 0;
	void *kp[] = { &a, &b, &c };
	cr_expect_eq(cuLaunchCooperativeKernel(FN_A, 4, 1, 1, 64, 1, 1, 0, S_NB, kp), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.launches, 0, "not held");
	cr_expect_eq(gs_stub.flush_stream, 1);
	cr_expect_eq(gs_stub.why, GS_FLUSH_ATTR);
	cr_expect_str_eq(gs_stub.api, "cuLaunchCooperativeKernel");
	cr_expect_eq(L.calls, 1, "passed through as the application made it");
	cr_expect_eq(L.f, FN_A);
	cr_expect_eq(L.grid[0], 4);
	cr_expect_eq(L.block[0], 64);
	cr_expect_eq(L.s, S_NB);
	cr_expect_eq(L.kp, kp);
	cr_expect_eq(gs_stats.boundary_launches, 1);
	cr_expect_eq(gs_stats.kernels, 1);
	launch_status = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	cr_expect_eq(cuLaunchCooperativeKernel(FN_A, 4096, 1, 1, 64, 1, 1, 0, S_NB, kp),
		     CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "the driver's answer, at the call");
}

/* With GRAPHSHIM_COOPERATIVE, a launch with the cooperative attribute, held. */
Test(cuda, a_cooperative_launch_is_held_with_the_attribute_where_it_fits)
{
	int a = 0, c = 0;
	double b = 0;
	void *kp[] = { &a, &b, &c };
	gs_config.cooperative = true;
	cr_expect_eq(cuLaunchCooperativeKernel(FN_A, 8, 1, 1, 64, 1, 1, 0, S_NB, kp), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.launches, 1, "held");
	cr_expect_eq(L.calls, 0);
	const gs_cu_attrs_t *at = gs_cu_rec_attrs(gs_stub.last);
	cr_assert_not_null(at);
	cr_expect_eq(at->n, 1);
	cr_expect_eq(at->a[0].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
	cr_expect_eq(at->a[0].value.cooperative, 1);
	/* The same launch through cuLaunchKernelEx is the same record's shape. */
	CUlaunchAttribute x;
	memset(&x, 0, sizeof(x));
	x.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	x.value.cooperative = 1;
	CUlaunchConfig cfg = ex_config(&x, 1);
	cfg.gridDimX = 8;
	cfg.blockDimX = 64;
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_cu_rec_attrs(gs_stub.last), at, "one interned set");
	/* Nine blocks do not fit on the device at once: the driver says so, at the call. */
	launch_status = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	cr_expect_eq(cuLaunchCooperativeKernel(FN_A, 9, 1, 1, 64, 1, 1, 0, S_NB, kp),
		     CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
	cr_expect_eq(L.calls, 1);
	cfg.gridDimX = 9;
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
		     "the same through cuLaunchKernelEx");
	cr_expect_eq(L.calls, 2);
	cr_expect_eq(gs_stats.boundary_launches, 2);
	/* Where the driver cannot say (no occupancy query), a boundary. */
	launch_status = CUDA_SUCCESS;
	gs_cu_real.cuOccupancyMaxActiveBlocksPerMultiprocessor = NULL;
	cr_expect_eq(cuLaunchCooperativeKernel(FN_A, 2, 1, 1, 64, 1, 1, 0, S_NB, kp), CUDA_SUCCESS);
	cr_expect_eq(L.calls, 3);
	cr_expect_eq(gs_stub.launches, 2, "the two held above only");
	gs_config.cooperative = false;
}

Test(cuda, launch_ex_with_an_event_attribute_is_a_boundary)
{
	int a = 0, c = 0;
	double b = 0;
	void *kp[] = { &a, &b, &c };
	CUlaunchAttribute at[2];
	memset(at, 0, sizeof(at));
	at[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	at[0].value.cooperative = 1;
	at[1].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
	CUlaunchConfig cfg = ex_config(at, 2);
	cr_expect_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.launches, 0);
	cr_expect_eq(gs_stub.flush_stream, 1);
	cr_expect_eq(gs_stub.why, GS_FLUSH_ATTR);
	cr_expect_str_eq(gs_stub.api, "cuLaunchKernelEx[PROGRAMMATIC_EVENT]");
	cr_expect_eq(L.calls, 1, "passed through as the application made it");
	cr_expect_eq(gs_stats.boundary_launches, 1);
	cr_expect_eq(gs_stats.kernels, 1);
}

Test(cuda, a_held_launch_with_attributes_is_submitted_with_them)
{
	int a = 5, c = 6;
	double b = 1.5;
	void *kp[] = { &a, &b, &c };
	CUlaunchAttribute at[2];
	memset(at, 0, sizeof(at));
	at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	at[0].value.priority = -1;
	at[1].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
	at[1].value.programmaticStreamSerializationAllowed = 1;
	CUlaunchConfig cfg = ex_config(at, 2);
	gs_cu_real.cuLaunchKernelEx = s_launch_ex_attrs;
	cr_assert_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	gs_rec_t *held = rec_dup(gs_stub.last); /* a held record has no caller any more */
	cr_expect_eq(gs_cu_ops.submit(held, gs_stub.handle), CUDA_SUCCESS);
	cr_expect_eq(L.calls, 1);
	cr_expect_eq(L.grid[0], 4);
	cr_expect_eq(memcmp(L.image, held->args, 20), 0);
	cr_assert_eq(ex_nattrs, 2);
	cr_expect_eq(ex_attrs[0].id, CU_LAUNCH_ATTRIBUTE_PRIORITY);
	cr_expect_eq(ex_attrs[0].value.priority, -1);
	cr_expect_eq(ex_attrs[1].id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
	cr_expect_eq(ex_attrs[1].value.programmaticStreamSerializationAllowed, 1);
	free(held);
}

/* A stub graph: nodes are numbered, attributes and edges are logged. */
static struct {
	int nodes, nattr, nedge;
	CUlaunchAttributeID attr_id[8];
	CUgraphNode attr_node[8];
	CUgraphNode edge_from[8], edge_to[8];
	int edge_type[8];
	CUgraphNode dep_of[8];
	int refuse; /* 1 + the index of the node add that fails (0: none) */
} G;

static CUresult s_graph_create(CUgraph *g, unsigned f) { *g = (CUgraph)0x9000; return CUDA_SUCCESS; }
static CUresult s_graph_destroy(CUgraph g) { return CUDA_SUCCESS; }
static CUresult s_exec_destroy(CUgraphExec x) { return CUDA_SUCCESS; }
static CUresult s_instantiate(CUgraphExec *x, CUgraph g, unsigned long long f)
{
	*x = (CUgraphExec)0x9100;
	return CUDA_SUCCESS;
}
static CUresult s_instantiate_fails(CUgraphExec *x, CUgraph g, unsigned long long f)
{
	return CUDA_ERROR_INVALID_VALUE;
}
static CUresult s_instantiate_params(CUgraphExec *x, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	p->hErrNode_out = (CUgraphNode)0xa002; /* the third node added */
	p->result_out = CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED;
	return CUDA_ERROR_INVALID_VALUE;
}
static CUresult s_add_kernel(CUgraphNode *out, CUgraph g, const CUgraphNode *dep, size_t nd,
			     const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (G.refuse && G.nodes + 1 == G.refuse)
		return CUDA_ERROR_INVALID_VALUE;
	int i = G.nodes++;
	*out = (CUgraphNode)(uintptr_t)(0xa000 + i);
	G.dep_of[i] = nd ? dep[0] : NULL;
	return CUDA_SUCCESS;
}
static CUresult s_node_attr(CUgraphNode n, CUkernelNodeAttrID id, const CUkernelNodeAttrValue *v)
{
	G.attr_node[G.nattr] = n;
	G.attr_id[G.nattr++] = id;
	return CUDA_SUCCESS;
}
static CUresult s_add_deps(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
			   const CUgraphEdgeData *e, size_t n)
{
	G.edge_from[G.nedge] = from[0];
	G.edge_to[G.nedge] = to[0];
	G.edge_type[G.nedge++] = e ? (int)e->type : -1;
	return CUDA_SUCCESS;
}

/* A fresh stub graph: creation, instantiation and destruction succeed. */
static void s_graph_stubs(void)
{
	memset(&G, 0, sizeof(G));
	gs_cu_real.cuGraphCreate = s_graph_create;
	gs_cu_real.cuGraphDestroy = s_graph_destroy;
	gs_cu_real.cuGraphExecDestroy = s_exec_destroy;
	gs_cu_real.cuGraphInstantiateWithFlags = s_instantiate;
	gs_cu_real.cuGraphInstantiateWithParams = NULL;
}

Test(cuda, graph_nodes_carry_attributes_and_programmatic_edges)
{
	s_graph_stubs();
	gs_cu_real.cuGraphAddKernelNode_v2 = s_add_kernel;
	gs_cu_real.cuGraphKernelNodeSetAttribute = s_node_attr;
	gs_cu_real.cuGraphAddDependencies_v2 = s_add_deps;
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	CUlaunchAttribute at[2];
	memset(at, 0, sizeof(at));
	at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	at[0].value.clusterDim.x = 2, at[0].value.clusterDim.y = 1, at[0].value.clusterDim.z = 1;
	at[1].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
	at[1].value.programmaticStreamSerializationAllowed = 1;
	/* Record 0: plain; 1: cluster + serialization; 2: serialization only. */
	gs_rec_t *r[3];
	CUlaunchConfig cfg = ex_config(NULL, 0);
	cr_assert_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	r[0] = rec_dup(gs_stub.last);
	cfg = ex_config(at, 2);
	cr_assert_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	r[1] = rec_dup(gs_stub.last);
	cfg = ex_config(&at[1], 1);
	cr_assert_eq(cuLaunchKernelEx(&cfg, FN_A, kp, NULL), CUDA_SUCCESS);
	r[2] = rec_dup(gs_stub.last);

	void *graph = NULL;
	size_t refused = 0;
	cr_assert_eq(gs_cu_ops.graph_build((const gs_rec_t *const *)r, 3, &graph, &refused, NULL),
		     CUDA_SUCCESS);
	cr_expect_eq(G.nodes, 3);
	cr_expect_eq(G.nattr, 1, "the cluster dimension on node 1, nothing else");
	cr_expect_eq(G.attr_node[0], (CUgraphNode)0xa001);
	cr_expect_eq(G.attr_id[0], CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
	/* Node 0 has no dependency; 1 and 2 hang on their predecessor by a programmatic edge. */
	cr_expect_null(G.dep_of[0]);
	cr_expect_null(G.dep_of[1]);
	cr_expect_null(G.dep_of[2]);
	cr_assert_eq(G.nedge, 2);
	cr_expect_eq(G.edge_from[0], (CUgraphNode)0xa000);
	cr_expect_eq(G.edge_to[0], (CUgraphNode)0xa001);
	cr_expect_eq(G.edge_type[0], CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
	cr_expect_eq(G.edge_from[1], (CUgraphNode)0xa001);
	cr_expect_eq(G.edge_to[1], (CUgraphNode)0xa002);
	gs_cu_ops.graph_destroy(graph);

	/* A node the driver will not add is named, so the core can run it eagerly. */
	memset(&G, 0, sizeof(G));
	G.refuse = 2;
	graph = NULL;
	cr_expect_eq(gs_cu_ops.graph_build((const gs_rec_t *const *)r, 3, &graph, &refused, NULL),
		     CUDA_ERROR_INVALID_VALUE);
	cr_expect_null(graph);
	cr_expect_eq(refused, 1);
	/* A failure that is no node's (instantiation) names none: refused is n. */
	memset(&G, 0, sizeof(G));
	gs_cu_real.cuGraphInstantiateWithFlags = s_instantiate_fails;
	cr_expect_eq(gs_cu_ops.graph_build((const gs_rec_t *const *)r, 3, &graph, &refused, NULL),
		     CUDA_ERROR_INVALID_VALUE);
	cr_expect_eq(refused, 3);
	gs_cu_real.cuGraphInstantiateWithFlags = s_instantiate;
	/* One the driver added, then would not instantiate: WithParams names it. */
	memset(&G, 0, sizeof(G));
	gs_cu_real.cuGraphInstantiateWithParams = s_instantiate_params;
	cr_expect_eq(gs_cu_ops.graph_build((const gs_rec_t *const *)r, 3, &graph, &refused, NULL),
		     CUDA_ERROR_INVALID_VALUE);
	cr_expect_eq(refused, 2);
	gs_cu_real.cuGraphInstantiateWithParams = NULL;
	for (int i = 0; i < 3; i++)
		free(r[i]);
}

/* The device updater's module: it will not load (a driver whose JIT refuses its PTX). */
static int du_loads;
static CUresult s_module_load_fails(CUmodule *m, const void *image)
{
	du_loads++;
	return CUDA_ERROR_INVALID_IMAGE;
}
static CUresult s_any_node_attr(CUgraphNode n, CUkernelNodeAttrID id, CUkernelNodeAttrValue *v)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult s_node_enable(CUgraphExec x, CUgraphNode n, unsigned on) { return CUDA_SUCCESS; }
static CUresult s_upload(CUgraphExec x, CUstream s) { return CUDA_SUCCESS; }
static CUresult s_exec_set(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	return CUDA_SUCCESS;
}
static CUresult s_get_function(CUfunction *f, CUmodule m, const char *name)
{
	return CUDA_ERROR_NOT_FOUND;
}

Test(cuda, a_graph_built_with_its_drift_in_view_and_no_updater_asks_for_no_second_build)
{
	s_graph_stubs();
	gs_cu_real.cuGraphAddKernelNode_v2 = s_add_kernel;
	gs_cu_real.cuGraphKernelNodeSetAttribute = s_node_attr;
	gs_cu_real.cuGraphKernelNodeGetAttribute = s_any_node_attr;
	gs_cu_real.cuModuleLoadData = s_module_load_fails;
	gs_cu_real.cuModuleGetFunction = s_get_function;
	gs_cu_real.cuGraphNodeSetEnabled = s_node_enable;
	gs_cu_real.cuGraphUpload = s_upload;
	gs_cu_real.cuGraphExecKernelNodeSetParams_v2 = s_exec_set;
	gs_config.device_patch = true;
	int a = 1, c = 2;
	double b = 3;
	void *kp[] = { &a, &b, &c };
	cr_assert_eq(cuLaunchKernel(FN_A, 1, 1, 1, 32, 1, 1, 0, S_NB, kp, NULL), CUDA_SUCCESS);
	gs_rec_t *r = rec_dup(gs_stub.last);
	const gs_rec_t *const recs[] = { r };
	void *graph = NULL;
	size_t refused = 0;

	/* Built before any drift: plain, and a drift of its parameters asks for a build again. */
	cr_assert_eq(gs_cu_ops.graph_build(recs, 1, &graph, &refused, NULL), CUDA_SUCCESS);
	cr_expect_eq(du_loads, 0, "nothing drifts: the updater is not even loaded");
	cr_expect_eq(gs_cu_ops.graph_node_patching(graph, 0, r), GS_PATCH_CAN);
	gs_cu_ops.graph_destroy(graph);

	/* Built again with the drift in view, the updater would not load: from the host, for good. */
	r->drift = GS_DRIFT_ARGS;
	graph = NULL;
	cr_assert_eq(gs_cu_ops.graph_build(recs, 1, &graph, &refused, NULL), CUDA_SUCCESS);
	cr_expect_eq(du_loads, 1);
	cr_expect_eq(gs_cu_ops.graph_node_patching(graph, 0, r), GS_PATCH_HOST);
	gs_cu_ops.graph_destroy(graph);
	gs_config.device_patch = false;
	free(r);
}

Test(cuda, an_unreadable_layout_is_counted_and_passes_through)
{
	int a = 0;
	void *kp[] = { &a };
	cr_expect_eq(cuLaunchKernel(FN_BAD, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.launches, 0);
	cr_expect_eq(L.calls, 1);
	cr_expect_eq(gs_stats.layouts_unreadable, 1);
	cr_expect_eq(gs_stats.boundary_launches, 1);
	cr_expect_eq(cuLaunchKernel(FN_BAD, 1, 1, 1, 1, 1, 1, 0, S_NB, kp, NULL), CUDA_SUCCESS);
	cr_expect_eq(gs_stats.layouts_unreadable, 1, "counted once per kernel");
	cr_expect_eq(gs_stats.boundary_launches, 2);
}

/* Node adds that check their pointers as the driver does: into no allocation is refused. */
static CUDA_MEMSET_NODE_PARAMS s_set_seen;
static CUDA_MEMCPY3D s_copy_seen;
static int s_allocs;
static bool s_live(CUdeviceptr p)
{
	unsigned t;
	return s_ptr_attr(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) == CUDA_SUCCESS;
}
/* Nodes offered to the driver on device memory that is gone: graphshim asks
 * first and offers none (an H100's driver could spin in cuGraphInstantiate
 * after such a refusal). */
static unsigned s_dead_offered;
static CUresult s_add_memset(CUgraphNode *out, CUgraph g, const CUgraphNode *dep, size_t nd,
			     const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	if (!s_live(p->dst)) {
		s_dead_offered++;
		return CUDA_ERROR_INVALID_VALUE;
	}
	s_set_seen = *p;
	*out = (CUgraphNode)(uintptr_t)(0xa000 + G.nodes++);
	return CUDA_SUCCESS;
}
static CUresult s_add_memcpy(CUgraphNode *out, CUgraph g, const CUgraphNode *dep, size_t nd,
			     const CUDA_MEMCPY3D *c, CUcontext ctx)
{
	if ((c->dstMemoryType == CU_MEMORYTYPE_DEVICE && !s_live(c->dstDevice)) ||
	    (c->srcMemoryType == CU_MEMORYTYPE_DEVICE && !s_live(c->srcDevice)))
		s_dead_offered++;
	if (!s_live(c->dstMemoryType == CU_MEMORYTYPE_HOST ? (CUdeviceptr)(uintptr_t)c->dstHost
							   : c->dstDevice) ||
	    !s_live(c->srcMemoryType == CU_MEMORYTYPE_HOST ? (CUdeviceptr)(uintptr_t)c->srcHost
							   : c->srcDevice))
		return CUDA_ERROR_INVALID_VALUE;
	s_copy_seen = *c;
	*out = (CUgraphNode)(uintptr_t)(0xa000 + G.nodes++);
	return CUDA_SUCCESS;
}
static CUresult s_mem_alloc(CUdeviceptr *p, size_t n)
{
	s_allocs++;
	*p = 0xd8000000u; /* in the stub's device allocation */
	return CUDA_SUCCESS;
}

/*
 * A memset or copy on memory the program freed after its pass (a library's
 * workspace) is made on graphshim's stand-in memory and named as such, so
 * the core patches it before the graph's first launch; without stand-ins,
 * or with a dead host pointer, the driver's refusal stands.
 */
Test(cuda, a_node_on_freed_memory_is_made_on_a_stand_in)
{
	s_graph_stubs();
	gs_cu_real.cuGraphAddMemsetNode = s_add_memset;
	gs_cu_real.cuGraphAddMemcpyNode = s_add_memcpy;
	gs_cu_real.cuMemAlloc_v2 = s_mem_alloc;
	cr_assert_eq(cuMemsetD8Async(0xd0001000u, 7, 4096, S_NB), CUDA_SUCCESS);
	cr_assert_eq(gs_stub.launches, 1);
	gs_rec_t *r[2] = { rec_dup(gs_stub.last), NULL };
	cr_assert_eq(r[0]->kind, GS_REC_SET);
	uint64_t dead = 0xc0000000u; /* freed since: no allocation now */
	memcpy(r[0]->args, &dead, 8);

	void *graph = NULL;
	size_t refused = 9;
	uint8_t stand[2] = { 0, 0 };
	cr_assert_eq(gs_cu_ops.graph_build((const gs_rec_t *const *)r, 1, &graph, &refused, stand),
		     CUDA_SUCCESS);
	cr_expect_eq(stand[0], 1);
	cr_expect_eq(s_set_seen.dst, 0xd8000000u, "made on the stand-in");
	cr_expect_eq(s_set_seen.value, 7);
	cr_expect_eq(s_set_seen.width, 4096);
	cr_expect_eq(s_set_seen.elementSize, 1);
	cr_expect_eq(s_allocs, 1);
	gs_cu_ops.graph_destroy(graph);
	/* The context's block serves the next one. */
	stand[0] = 0;
	cr_assert_eq(gs_cu_ops.graph_build((const gs_rec_t *const *)r, 1, &graph, &refused, stand),
		     CUDA_SUCCESS);
	cr_expect_eq(stand[0], 1);
	cr_expect_eq(s_allocs, 1);
	gs_cu_ops.graph_destroy(graph);
	/* Without stand-ins the driver's refusal names the node. */
	graph = NULL;
	cr_expect_eq(gs_cu_ops.graph_build((const gs_rec_t *const *)r, 1, &graph, &refused, NULL),
		     CUDA_ERROR_INVALID_VALUE);
	cr_expect_null(graph);
	cr_expect_eq(refused, 0);

	/* A device-to-host copy: a dead device source stands in, a dead host destination cannot. */
	cr_assert_eq(cuMemcpyDtoHAsync_v2(pinned + 16, 0xd0000100u, 256, S_NB), CUDA_SUCCESS);
	r[1] = rec_dup(gs_stub.last);
	cr_assert_eq(r[1]->kind, GS_REC_COPY);
	memcpy(r[1]->args + 8, &dead, 8);
	stand[0] = 0;
	cr_assert_eq(gs_cu_ops.graph_build((const gs_rec_t *const *)r + 1, 1, &graph, &refused, stand),
		     CUDA_SUCCESS);
	cr_expect_eq(stand[0], 1);
	cr_expect_eq(s_copy_seen.dstHost, pinned + 16, "the live host side is kept");
	cr_expect_geq(s_copy_seen.srcDevice, 0xd8000000u);
	gs_cu_ops.graph_destroy(graph);
	uint64_t dead_host = 0x10;
	memcpy(r[1]->args, &dead_host, 8);
	stand[0] = 0;
	graph = NULL;
	cr_expect_eq(gs_cu_ops.graph_build((const gs_rec_t *const *)r + 1, 1, &graph, &refused, stand),
		     CUDA_ERROR_INVALID_VALUE);
	cr_expect_eq(stand[0], 0);
	cr_expect_null(graph);
	cr_expect_eq(s_dead_offered, 0, "%u nodes on freed device memory reached the driver", s_dead_offered);
	free(r[0]);
	free(r[1]);
}

static CUresult s_ctx_gone(CUcontext c, unsigned int *v) { return CUDA_ERROR_INVALID_CONTEXT; }
static CUresult s_ctx_here(CUcontext c, unsigned int *v) { *v = 3020; return CUDA_SUCCESS; }

/* A context's stand-in block is dropped once the context is gone, and a
 * context made later gets its own (gs_cu_stand_forget). */
Test(cuda, a_destroyed_context_takes_its_stand_in_block)
{
	gs_cu_real.cuMemAlloc_v2 = s_mem_alloc;
	gs_cu_real.cuCtxGetApiVersion = s_ctx_here;
	gs_cu_stand_ensure(CTX);
	cr_expect_eq(s_allocs, 1);
	cr_expect_eq(gs_cu_stand_mem(CTX, 4096), 0xd8000000u);
	cr_expect_eq(gs_cu_stand_mem(CTX, GS_CU_STAND_SIZE + 1), 0, "no larger than the block");
	gs_cu_stand_ensure(CTX);
	cr_expect_eq(s_allocs, 1, "once a context");
	gs_cu_stand_forget(); /* a call that destroyed some other context */
	cr_expect_eq(gs_cu_stand_mem(CTX, 4096), 0xd8000000u, "a live context keeps its block");
	gs_cu_real.cuCtxGetApiVersion = s_ctx_gone;
	gs_cu_stand_forget(); /* this one destroyed */
	cr_expect_eq(gs_cu_stand_mem(CTX, 4096), 0);
	gs_cu_real.cuCtxGetApiVersion = s_ctx_here; /* a new context with its handle */
	gs_cu_stand_ensure(CTX);
	cr_expect_eq(s_allocs, 2);
	cr_expect_eq(gs_cu_stand_mem(CTX, 4096), 0xd8000000u);
}

Test(cuda, pinned_copy_is_an_element_pageable_is_not)
{
	static char pageable[64];
	cr_expect_eq(cuMemcpyHtoDAsync_v2(0xd0000100u, pinned + 16, 256, S_NB), CUDA_SUCCESS);
	cr_assert_eq(gs_stub.launches, 1);
	const gs_rec_t *r = gs_stub.last;
	cr_expect_eq(r->kind, GS_REC_COPY);
	cr_expect_eq(r->aux[0], 256);
	cr_expect_eq(r->aux[1], GS_CU_COPY_HTOD);
	uint64_t d, s;
	memcpy(&d, r->args, 8);
	memcpy(&s, r->args + 8, 8);
	cr_expect_eq(d, 0xd0000100u);
	cr_expect_eq(s, (uintptr_t)(pinned + 16));
	cr_expect_eq(real_calls, 0);

	cuMemcpyHtoDAsync_v2(0xd0000100u, pageable, sizeof(pageable), S_NB);
	cr_expect_eq(gs_stub.launches, 1);
	cr_expect_eq(gs_stub.flush_stream, 1);
	cr_expect_eq(gs_stub.why, GS_FLUSH_COPY);
	cr_expect_eq(real_calls, 1);
}

/*
 * A held copy returns success at once, so one the driver would refuse
 * (past the end of its allocation) must reach the driver now, as it came:
 * its size and pointers drift from one pass to the next.
 */
Test(cuda, a_copy_past_its_allocation_is_a_boundary)
{
	cr_expect_eq(cuMemcpyHtoDAsync_v2(0xd0000100u, pinned + 16, sizeof(pinned) - 16, S_NB),
		     CUDA_SUCCESS);
	cr_expect_eq(gs_stub.launches, 1, "to the last byte: an element");
	cuMemcpyHtoDAsync_v2(0xd0000100u, pinned + 16, sizeof(pinned) - 15, S_NB);
	cr_expect_eq(gs_stub.launches, 1, "one byte past the end: a boundary");
	cr_expect_eq(gs_stub.flush_stream, 1);
	cr_expect_eq(real_calls, 1);
	cuMemcpyHtoDAsync_v2(0xdffffff0u, pinned, 32, S_NB);
	cr_expect_eq(gs_stub.launches, 1, "past the device allocation: a boundary");
	cr_expect_eq(real_calls, 2);
}

/* The engine answers another thread's query of held work: the driver is not asked. */
Test(cuda, a_query_the_engine_answers_does_not_reach_the_driver)
{
	gs_stub.query_busy = true;
	cr_expect_eq(cuStreamQuery(S_NB), CUDA_ERROR_NOT_READY);
	cr_expect_eq(real_calls, 0);
	cr_expect_eq(gs_stub.flush_stream, 0);
	gs_stub.query_busy = false;
	cr_expect_eq(cuStreamQuery(S_NB), CUDA_SUCCESS);
	cr_expect_eq(real_calls, 1);
	cr_expect_eq(gs_stub.why, GS_FLUSH_QUERY);
}

Test(cuda, classes_reach_the_engine)
{
	int n;
	cr_expect_eq(cuDeviceGetCount(&n), CUDA_SUCCESS); /* harmless */
	cr_expect_eq(n, 3);
	cr_expect_eq(gs_stub.flush_all + gs_stub.flush_stream, 0);
	cuStreamQuery(S_BLK);
	cr_expect_eq(gs_stub.flush_all, 0, "a query: its stream only (and its ties)");
	cr_expect_eq(gs_stub.flush_stream, 1);
	cr_expect_eq(gs_stub.handle, (uintptr_t)S_BLK);
	cr_expect_eq(gs_stub.why, GS_FLUSH_QUERY);
	cuStreamSynchronize(S_NB);
	cr_expect_eq(gs_stub.flush_all, 0, "a synchronization: its stream only (and its ties)");
	cr_expect_eq(gs_stub.flush_stream, 2);
	cr_expect_eq(gs_stub.handle, (uintptr_t)S_NB);
	cr_expect_eq(gs_stub.why, GS_FLUSH_SYNC);
	cuEventSynchronize((CUevent)0x5);
	cr_expect_eq(gs_stub.flush_all + gs_stub.flush_stream, 2, "an event's: where its record is");
	cr_expect_eq(gs_stub.nused, 1);
	cr_expect_eq(gs_stub.used[0], 0x5);
	cr_expect_eq(gs_stub.why, GS_FLUSH_EVENT);
	cuStreamSynchronize_ptsz(NULL);
	cr_expect_eq(gs_stub.flush_stream, 3, "the per-thread stream's: ties to the legacy stream");
	cr_expect_eq(gs_stub.sflags, GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING);
	gs_stub.passthru = true; /* the engine submits a mark at its own call */
	cuEventRecord((CUevent)0x1, S_BLK);
	cr_expect_eq(gs_stub.launches, 1, "an event record is a mark of its stream's step");
	cr_expect_eq(gs_stub.last->kind, GS_REC_MARK);
	cr_expect_eq(gs_stub.handle, (uintptr_t)S_BLK);
	cr_expect_eq(gs_stub.flush_stream, 3);
	gs_stub.passthru = false;
	cuEventRecord_ptsz((CUevent)0x1, NULL);
	cr_expect_eq(gs_stub.flush_stream, 4, "on the per-thread stream: a boundary");
	cr_expect_eq(gs_stub.why, GS_FLUSH_EVENT);
	cr_expect_eq(gs_stub.sflags, GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING);
	cr_expect_eq(real_calls, 7);
	/* No real function: an error, never a call through NULL. */
	cr_expect_neq(cuCtxSynchronize(), CUDA_SUCCESS);
}

/*
 * Stream-ordered allocation: an allocation submits nothing and ends no
 * segment; a free is a mark of its stream (the engine holds it with what
 * the stream holds), submitted as the free it was.
 */
Test(cuda, pool_allocation_flushes_nothing_and_a_free_is_a_mark)
{
	CUdeviceptr p = 0;
	cr_expect_eq(cuMemAllocAsync(&p, 256, S_BLK), CUDA_SUCCESS);
	cr_expect_eq(p, 0x7000);
	cr_expect_eq(pool_stream, S_BLK);
	cr_expect_eq(gs_stub.flush_all + gs_stub.flush_stream + gs_stub.launches, 0,
		     "an allocation is neither a boundary nor a record");
	gs_stub.passthru = true; /* the engine submits the mark at once */
	cr_expect_eq(cuMemFreeAsync(p, S_NB), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.launches, 1, "a free is a mark of its stream's step");
	cr_expect_eq(gs_stub.last->kind, GS_REC_MARK);
	cr_expect_eq(gs_stub.last->aux[3], GS_MARK_FREE);
	cr_expect_eq(gs_rec_u64(gs_stub.last, 0), 0x7000);
	cr_expect_eq(gs_stub.handle, (uintptr_t)S_NB);
	cr_expect_eq(gs_stub.flush_stream + gs_stub.flush_all, 0);
	cr_expect_eq(pool_freed, 0x7000, "the submitted mark frees the block");
	cr_expect_eq(pool_stream, S_NB);
	cr_expect_eq(gs_stub.free_begins, 1, "no graph is built while the block goes back");
	/* Rebuilt from the record (a held free the engine submits later, inside
	 * another hook): the same call, under the builder's lock too. */
	pool_freed = 0;
	pool_stream = NULL;
	gs_cu_depth++;
	cr_expect_eq(gs_cu_ops.submit(gs_stub.last, (uintptr_t)S_NB), 0);
	gs_cu_depth--;
	cr_expect_eq(pool_freed, 0x7000);
	cr_expect_eq(pool_stream, S_NB);
	cr_expect_eq(gs_stub.free_begins, 2, "a held free waits for a build in progress as any free");
	gs_stub.passthru = false;
	cr_expect_eq(real_calls, 3);
}

Test(cuda, capture_begin_and_end_balance)
{
	CUgraph g;
	cr_expect_eq(cuStreamBeginCapture_v2(S_NB, CU_STREAM_CAPTURE_MODE_GLOBAL),
		     CUDA_ERROR_ILLEGAL_STATE);
	cr_expect_eq(gs_stub.captures, 0, "a failed begin is undone");
	cr_expect_eq(cuStreamBeginCapture_v2(S_BLK, CU_STREAM_CAPTURE_MODE_GLOBAL),
		     CUDA_SUCCESS);
	cr_expect_eq(gs_stub.captures, 1);
	cr_expect_eq(gs_stub.why, GS_FLUSH_CAPTURE);
	cr_expect_eq(cuStreamEndCapture(S_BLK, &g), CUDA_SUCCESS);
	cr_expect_eq(gs_stub.captures, 0);
}

Test(cuda, reentrant_calls_bypass_the_engine)
{
	gs_cu_depth++;
	cuStreamSynchronize(S_NB);
	gs_cu_depth--;
	cr_expect_eq(gs_stub.flush_all + gs_stub.flush_stream, 0);
	cr_expect_eq(real_calls, 1);
}
