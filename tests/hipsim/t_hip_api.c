/*
 * The HIP front of the simulator, call by call: last-error rules, devices,
 * memory kinds (what graphshim's pointer probe sees), copies and memsets,
 * modules (.hsaco -> .sim.so, GSSIM: images), the three launch forms
 * (kernelParams, the packed extra buffer, hipExtModuleLaunchKernel under
 * 5.2's C++ name with events), parameter layouts, null-stream ordering,
 * callbacks, events, graphs with patching, capture, an injected
 * instantiate failure, and host stubs from a fat binary (hipLaunchKernel,
 * _spt, a stub as a graph node's func, unregistering).  Linked against tests/sim/hiplib/libamdhip64.so.5.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hip/hip_runtime_api.h>

#define HIPSIM_OK_EXIT 1
#include "hipsim_test.h"
#include "gs_sim_kernel.h"

static int failures;

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                \
		}                                                                  \
	} while (0)

/* Offered by the simulator (ROCm 7.2's name for the same query). */
hipError_t hipFuncGetParamInfo(hipFunction_t f, size_t i, size_t *off, size_t *size);

/* Fat binaries: what clang emits calls to (no header declares them). */
void **__hipRegisterFatBinary(const void *data);
void __hipUnregisterFatBinary(void **modules);
void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
			   const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
			   void *blockDim, void *gridDim, int *wSize);

/* The fat binary's CPU twin: fill(int *p, int v, unsigned n). */
static void twin_fill(const gs_sim_dim_t *dim, void **params)
{
	int *p = (int *)(uintptr_t)*(uint64_t *)params[0];
	for (unsigned i = 0; i < *(unsigned *)params[2]; i++)
		p[i] = *(int *)params[1];
}
static const gs_sim_kernel_t twins[] = { { "fill", twin_fill, 3, { 8, 4, 4 } }, { NULL, NULL, 0, { 0 } } };
static char stub_fill, stub_nosuch;

static int order[8], norder;

static void host_fn(void *ud)
{
	order[norder++] = (int)(intptr_t)ud;
}

static void stream_cb(hipStream_t s, hipError_t st, void *ud)
{
	(void)s;
	order[norder++] = st == hipSuccess ? (int)(intptr_t)ud : -1;
}

/* Blocks its stream until *gate is set: lets a test see what waits. */
static volatile int gate;
static void wait_gate(void *ud)
{
	(void)ud;
	while (!gate)
		usleep(100);
}

int main(void)
{
	/* The 2nd instantiate fails (read once, on the first fault check). */
	setenv("GS_SIM_FAIL_INSTANTIATE", "2", 1);
	CHECK(dlsym(RTLD_DEFAULT, "gs_sim_is_simulator") != NULL);

	/* ---- devices, versions, last error ---- */
	int n = 0, dev = -1, v = 0;
	OK(hipGetDeviceCount(&n));
	CHECK(n == 1);
	OK(hipInit(0));
	CHECK(hipSetDevice(1) == hipErrorInvalidDevice);
	CHECK(hipPeekAtLastError() == hipErrorInvalidDevice);
	OK(hipSetDevice(0)); /* a success leaves the last error alone */
	CHECK(hipGetLastError() == hipErrorInvalidDevice);
	CHECK(hipGetLastError() == hipSuccess);
	OK(hipGetDevice(&dev));
	CHECK(dev == 0);
	OK(hipRuntimeGetVersion(&v));
	CHECK(v >= 50200000);
	OK(hipDriverGetVersion(&v));
	CHECK(!strcmp(hipGetErrorName(hipErrorNotReady), "hipErrorNotReady"));
	CHECK(!strcmp(hipGetErrorString(hipErrorInvalidValue), "invalid argument"));

	/* ---- memory kinds ---- */
	void *d = NULL, *pin = NULL, *z = (void *)1;
	int pageable[64];
	hipPointerAttribute_t a;
	OK(hipMalloc(&d, 256));
	OK(hipMalloc(&z, 0));
	CHECK(z == NULL);
	OK(hipHostMalloc(&pin, 256, 0));
	OK(hipPointerGetAttributes(&a, d));
	CHECK(a.memoryType == hipMemoryTypeDevice && a.devicePointer == d && !a.isManaged);
	OK(hipPointerGetAttributes(&a, (char *)pin + 8));
	CHECK(a.memoryType == hipMemoryTypeHost && a.hostPointer == (char *)pin + 8);
	CHECK(hipPointerGetAttributes(&a, pageable) == hipErrorInvalidValue);
	CHECK(hipGetLastError() == hipErrorInvalidValue);

	/* ---- copies and memsets ---- */
	int src[64], dst[64];
	for (int i = 0; i < 64; i++)
		src[i] = i * 3;
	OK(hipMemcpy(d, src, sizeof(src), hipMemcpyHostToDevice));
	memset(dst, 0, sizeof(dst));
	OK(hipMemcpy(dst, d, sizeof(dst), hipMemcpyDefault));
	CHECK(!memcmp(src, dst, sizeof(src)));
	CHECK(hipMemcpy(dst, d, sizeof(dst), (hipMemcpyKind)7) == hipErrorInvalidMemcpyDirection);
	CHECK(hipMemcpyHtoD(d, src, 1024) == hipErrorInvalidValue); /* past the allocation */
	OK(hipMemsetD32(d, 7, 64));
	OK(hipMemsetD16((char *)d + 4, 0x0102, 2));
	OK(hipMemset((char *)d + 8, 0x1ff, 4)); /* sets bytes of (unsigned char)value */
	OK(hipMemcpyDtoH(dst, d, sizeof(dst)));
	CHECK(dst[0] == 7 && dst[1] == 0x01020102 && dst[2] == -1 && dst[3] == 7);
	OK(hipMemsetD8Async(d, 0, 256, NULL));
	OK(hipMemcpyAsync(pin, d, 256, hipMemcpyDeviceToHost, NULL));
	OK(hipStreamSynchronize(NULL));
	CHECK(((int *)pin)[5] == 0);

	/* ---- modules ---- */
	hipModule_t mod, mod2;
	hipFunction_t fill, add, charptr, f2;
	CHECK(hipModuleLoad(&mod, GS_HIP_TESTKERN_DIR "/nosuch.hsaco") == hipErrorFileNotFound);
	OK(hipModuleLoad(&mod, GS_HIP_TESTKERN_DIR "/testkern.hsaco"));
	OK(hipModuleLoadData(&mod2, "GSSIM:" GS_HIP_TESTKERN_DIR "/testkern.sim.so"));
	CHECK(hipModuleLoadData(&mod2, "\177ELF") == hipErrorInvalidImage);
	OK(hipModuleGetFunction(&fill, mod, "fill"));
	OK(hipModuleGetFunction(&add, mod, "add_scalar"));
	OK(hipModuleGetFunction(&charptr, mod, "charptr"));
	OK(hipModuleGetFunction(&f2, mod2, "fill"));
	CHECK(hipModuleGetFunction(&f2, mod, "nosuch") == hipErrorNotFound);
	size_t off = 0, sz = 0;
	OK(hipFuncGetParamInfo(charptr, 1, &off, &sz));
	CHECK(off == 8 && sz == 8);
	OK(hipFuncGetParamInfo(charptr, 2, &off, &sz));
	CHECK(off == 16 && sz == 2);
	CHECK(hipFuncGetParamInfo(charptr, 3, &off, &sz) == hipErrorInvalidValue);
	(void)hipGetLastError();

	/* ---- launches: kernelParams, extra, ext with events ---- */
	hipStream_t s, nb;
	OK(hipStreamCreate(&s));
	OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
	unsigned fl = 9;
	OK(hipStreamGetFlags(nb, &fl));
	CHECK(fl == hipStreamNonBlocking);
	OK(hipStreamGetFlags(s, &fl));
	CHECK(fl == hipStreamDefault);
	int val = 5;
	unsigned cnt = 64;
	void *args[] = { &d, &val, &cnt };
	OK(hipModuleLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, s, args, NULL));
	struct { void *p; int v; unsigned n; } packed = { d, 2, 64 };
	size_t psize = sizeof(packed);
	void *extra[] = { HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &psize,
			  HIP_LAUNCH_PARAM_END };
	OK(hipModuleLaunchKernel(add, 1, 1, 1, 64, 1, 1, 0, s, NULL, extra));
	CHECK(hipModuleLaunchKernel(add, 1, 1, 1, 64, 1, 1, 0, s, args, extra) == hipErrorInvalidValue);
	CHECK(hipModuleLaunchKernel(add, 0, 1, 1, 64, 1, 1, 0, s, args, NULL) == hipErrorInvalidValue);
	hipEvent_t e0, e1, ent;
	OK(hipEventCreate(&e0));
	OK(hipEventCreateWithFlags(&e1, hipEventDefault));
	OK(hipEventCreateWithFlags(&ent, hipEventDisableTiming));
	char c = 3;
	short sh = -4;
	void *cargs[] = { &c, &pin, &sh };
	/* 100 work-items in groups of 32: 4 groups (the last one partial on a GPU). */
	OK(ext_launch(charptr, 100, 1, 1, 32, 1, 1, 0, s, cargs, NULL, e0, e1, 0));
	OK(hipEventSynchronize(e1));
	OK(hipEventQuery(e1));
	float ms = -1;
	OK(hipEventElapsedTime(&ms, e0, e1));
	CHECK(ms >= 0);
	CHECK(((int *)pin)[0] == 3 && ((int *)pin)[1] == -4 && ((int *)pin)[2] == 128);
	OK(hipEventRecord(ent, s));
	CHECK(hipEventElapsedTime(&ms, e0, ent) == hipErrorInvalidHandle);
	OK(hipMemcpyDtoH(dst, d, sizeof(dst)));
	CHECK(dst[0] == 7 && dst[63] == 7);

	/* ---- null-stream ordering, host functions, callbacks ---- */
	CHECK(hipGetLastError() == hipErrorInvalidHandle); /* the elapsed-time check */
	gate = 0;
	norder = 0;
	OK(hipLaunchHostFunc(s, wait_gate, NULL));
	OK(hipLaunchHostFunc(NULL, host_fn, (void *)1)); /* waits for s (blocking) */
	OK(hipLaunchHostFunc(nb, host_fn, (void *)2));   /* does not */
	OK(hipStreamSynchronize(nb));
	CHECK(norder == 1 && order[0] == 2);
	CHECK(hipStreamQuery(NULL) == hipErrorNotReady);
	CHECK(hipGetLastError() == hipSuccess); /* not-ready is not an error */
	gate = 1;
	OK(hipStreamAddCallback(s, stream_cb, (void *)3, 0));
	OK(hipDeviceSynchronize());
	CHECK(norder == 3 && order[1] == 1 && order[2] == 3);
	OK(hipStreamQuery(s));
	/* The per-thread stream. */
	OK(hipMemsetD32Async(d, 11, 64, hipStreamPerThread));
	OK(hipStreamSynchronize(hipStreamPerThread));
	OK(hipMemcpyDtoH(dst, d, 4));
	CHECK(dst[0] == 11);
	/* Events order streams. */
	OK(hipModuleLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, s, args, NULL));
	OK(hipEventRecord(e0, s));
	OK(hipStreamWaitEvent(nb, e0, 0));
	OK(hipMemcpyAsync(pin, d, 256, hipMemcpyDefault, nb));
	OK(hipStreamSynchronize(nb));
	CHECK(((int *)pin)[0] == 5 && ((int *)pin)[63] == 5);

	/* ---- graphs ---- */
	hipGraph_t g;
	hipGraphNode_t kn, cn, mn, nodes[4];
	hipGraphExec_t x, x2;
	OK(hipGraphCreate(&g, 0));
	hipKernelNodeParams kp;
	memset(&kp, 0, sizeof(kp));
	kp.func = (void *)fill;
	kp.gridDim = (dim3){ 1, 1, 1 };
	kp.blockDim = (dim3){ 64, 1, 1 };
	kp.kernelParams = args;
	val = 21;
	OK(hipGraphAddKernelNode(&kn, g, NULL, 0, &kp));
	val = 0; /* arguments were copied at the call */
	hipMemsetParams mp = { .dst = (char *)d + 4, .elementSize = 4, .height = 1, .value = 99, .width = 1 };
	OK(hipGraphAddMemsetNode(&mn, g, &kn, 1, &mp));
	OK(hipGraphAddMemcpyNode1D(&cn, g, &mn, 1, pin, d, 256, hipMemcpyDeviceToHost));
	size_t nn = 4;
	OK(hipGraphGetNodes(g, nodes, &nn));
	CHECK(nn == 3 && nodes[0] == kn);
	hipGraphNode_t errnode = kn;
	char log[16] = "x";
	OK(hipGraphInstantiate(&x, g, &errnode, log, sizeof(log)));
	CHECK(errnode == NULL && log[0] == '\0');
	CHECK(hipGraphInstantiateWithFlags(&x2, g, 0) == hipErrorOutOfMemory); /* injected */
	OK(hipGraphInstantiateWithFlags(&x2, g, 0));
	OK(hipGraphLaunch(x, s));
	OK(hipStreamSynchronize(s));
	CHECK(((int *)pin)[0] == 21 && ((int *)pin)[1] == 99 && ((int *)pin)[2] == 21);
	val = 40;
	OK(hipGraphExecKernelNodeSetParams(x, kn, &kp));
	mp.value = 77;
	OK(hipGraphExecMemsetNodeSetParams(x, mn, &mp));
	OK(hipGraphExecMemcpyNodeSetParams1D(x, cn, dst, d, 12, hipMemcpyDeviceToHost));
	memset(dst, 0, sizeof(dst));
	OK(hipGraphLaunch(x, NULL));
	OK(hipDeviceSynchronize());
	CHECK(dst[0] == 40 && dst[1] == 77 && dst[2] == 40 && dst[3] == 0);
	OK(hipGraphLaunch(x2, s)); /* the second exec kept the original parameters */
	OK(hipStreamSynchronize(s));
	CHECK(((int *)pin)[0] == 21 && ((int *)pin)[1] == 99);
	OK(hipGraphExecDestroy(x));
	OK(hipGraphExecDestroy(x2));
	OK(hipGraphDestroy(g));

	/* ---- capture ---- */
	hipStreamCaptureStatus st;
	CHECK(hipStreamBeginCapture(NULL, hipStreamCaptureModeGlobal) == hipErrorStreamCaptureUnsupported);
	OK(hipStreamBeginCapture(nb, hipStreamCaptureModeThreadLocal));
	OK(hipStreamIsCapturing(nb, &st));
	CHECK(st == hipStreamCaptureStatusActive);
	val = 8;
	OK(hipModuleLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, nb, args, NULL));
	OK(hipMemcpyAsync(pin, d, 256, hipMemcpyDeviceToHost, nb));
	OK(hipStreamEndCapture(nb, &g));
	OK(hipStreamIsCapturing(nb, &st));
	CHECK(st == hipStreamCaptureStatusNone);
	CHECK(hipStreamEndCapture(nb, &g) == hipErrorIllegalState);
	(void)hipGetLastError();
	((int *)pin)[0] = 0;
	OK(hipGraphInstantiateWithFlags(&x, g, 0));
	OK(hipGraphLaunch(x, nb));
	OK(hipStreamSynchronize(nb));
	CHECK(((int *)pin)[0] == 8);
	OK(hipGraphExecDestroy(x));
	OK(hipGraphDestroy(g));

	/* ---- host stubs from a fat binary ---- */
	{
		static const char bundle[] = "__CLANG_OFFLOAD_BUNDLE__"; /* not read by the simulator */
		struct { uint32_t magic, version; const void *binary, *twins; }
			bad = { 0x12345678, 1, bundle, twins }, w = { 0x48495046, 1, bundle, twins };
		CHECK(__hipRegisterFatBinary(&bad) == NULL);
		void **fb = __hipRegisterFatBinary(&w);
		CHECK(fb != NULL);
		__hipRegisterFunction(fb, &stub_fill, "fill", "fill", (unsigned)-1, NULL, NULL, NULL, NULL, NULL);
		__hipRegisterFunction(fb, &stub_nosuch, "nosuch", "nosuch", (unsigned)-1, NULL, NULL, NULL, NULL,
				      NULL);
		int *p, host[4];
		int v = 5;
		unsigned n4 = 4;
		void *fa[] = { &p, &v, &n4 };
		OK(hipMalloc((void **)&p, sizeof(host)));
		OK(hipLaunchKernel(&stub_fill, (dim3){ 1, 1, 1 }, (dim3){ 4, 1, 1 }, fa, 0, NULL));
		OK(hipMemcpy(host, p, sizeof(host), hipMemcpyDeviceToHost));
		CHECK(host[0] == 5 && host[3] == 5);
		/* A name the twin lacks, a stub never registered: invalid device function. */
		CHECK(hipLaunchKernel(&stub_nosuch, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL) ==
		      hipErrorInvalidDeviceFunction);
		CHECK(hipGetLastError() == hipErrorInvalidDeviceFunction);
		CHECK(hipLaunchKernel(&order, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL) ==
		      hipErrorInvalidDeviceFunction);
		(void)hipGetLastError();
		CHECK(hipLaunchKernel(&stub_fill, (dim3){ 0, 1, 1 }, (dim3){ 4, 1, 1 }, fa, 0, NULL) ==
		      hipErrorInvalidValue);
		(void)hipGetLastError();
		/* _spt: stream 0 is the calling thread's own stream. */
		v = 6;
		OK(hipLaunchKernel_spt(&stub_fill, (dim3){ 1, 1, 1 }, (dim3){ 4, 1, 1 }, fa, 0, NULL));
		OK(hipStreamSynchronize(hipStreamPerThread));
		OK(hipMemcpy(host, p, sizeof(host), hipMemcpyDeviceToHost));
		CHECK(host[0] == 6 && host[3] == 6);
		/* A stub as a kernel node's func, as HIP's own graphs have it. */
		hipGraph_t sg;
		hipGraphNode_t sn;
		hipGraphExec_t sx;
		hipKernelNodeParams sp;
		memset(&sp, 0, sizeof(sp));
		sp.func = &stub_fill;
		sp.gridDim = (dim3){ 1, 1, 1 };
		sp.blockDim = (dim3){ 4, 1, 1 };
		sp.kernelParams = fa;
		v = 7;
		OK(hipGraphCreate(&sg, 0));
		OK(hipGraphAddKernelNode(&sn, sg, NULL, 0, &sp));
		OK(hipGraphInstantiateWithFlags(&sx, sg, 0));
		OK(hipGraphLaunch(sx, NULL));
		OK(hipMemcpy(host, p, sizeof(host), hipMemcpyDeviceToHost));
		CHECK(host[0] == 7 && host[3] == 7);
		/* Unregistered: its stubs are unknown; the graph keeps the old code. */
		__hipUnregisterFatBinary(fb);
		CHECK(hipLaunchKernel(&stub_fill, (dim3){ 1, 1, 1 }, (dim3){ 4, 1, 1 }, fa, 0, NULL) ==
		      hipErrorInvalidDeviceFunction);
		(void)hipGetLastError();
		CHECK(hipGraphAddKernelNode(&sn, sg, NULL, 0, &sp) == hipErrorInvalidDeviceFunction);
		(void)hipGetLastError();
		OK(hipMemset(p, 0, sizeof(host)));
		OK(hipGraphLaunch(sx, NULL));
		OK(hipMemcpy(host, p, sizeof(host), hipMemcpyDeviceToHost));
		CHECK(host[0] == 7 && host[3] == 7);
		OK(hipGraphExecDestroy(sx));
		OK(hipGraphDestroy(sg));
		OK(hipFree(p));
	}

	/* ---- teardown ---- */
	OK(hipEventDestroy(e0));
	OK(hipEventDestroy(e1));
	OK(hipEventDestroy(ent));
	OK(hipStreamDestroy(s));
	OK(hipStreamDestroy(nb));
	CHECK(hipStreamDestroy(s) == hipErrorInvalidHandle);
	OK(hipModuleUnload(mod));
	OK(hipModuleUnload(mod2));
	OK(hipHostFree(pin));
	CHECK(hipHostFree(pageable) == hipErrorInvalidValue);
	OK(hipFree(d));
	OK(hipFree(NULL));
	CHECK(hipFree(d) == hipErrorInvalidValue);
	if (failures) {
		fprintf(stderr, "%d checks failed\n", failures);
		return 1;
	}
	printf("t_hip_api: all checks passed\n");
	return 0;
}
