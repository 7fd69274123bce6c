/*
 * A tiny stand-in for libcuda.so.1 (built with that soname for tests only):
 * enough of the driver for the interposition test to see which entry point
 * was reached and with which argument.  Kernel "execution" appends the
 * first int parameter to a log, eagerly or when a graph node runs.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define FAKE_FUNC ((CUfunction)0x100)
#define FAKE_CTX ((CUcontext)0x1000)

/* The log the test reads back: one entry per kernel run. */
typedef struct fake_entry {
	int value;
	int how; /* 0 eager, 1 eager _ptsz, 2 graph node */
} fake_entry_t;
static fake_entry_t fake_log[100000];
static int fake_n;

int fake_log_count(void);
int fake_log_count(void) { return fake_n; }
const void *fake_log_entry(int i);
const void *fake_log_entry(int i) { return &fake_log[i]; }

static void fake_run(void **kp, void **extra, int how)
{
	int v = -1;
	if (kp)
		memcpy(&v, kp[0], sizeof(v));
	else if (extra && extra[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
		memcpy(&v, extra[1], sizeof(v));
	if (fake_n < (int)(sizeof(fake_log) / sizeof(fake_log[0])))
		fake_log[fake_n++] = (fake_entry_t){ v, how };
}

CUresult cuInit(unsigned int f) { return CUDA_SUCCESS; }
CUresult cuCtxGetCurrent(CUcontext *c) { *c = FAKE_CTX; return CUDA_SUCCESS; }
CUresult cuCtxGetDevice(CUdevice *d) { *d = 0; return CUDA_SUCCESS; }
CUresult cuCtxPushCurrent_v2(CUcontext c) { return CUDA_SUCCESS; }
CUresult cuCtxPopCurrent_v2(CUcontext *c) { *c = FAKE_CTX; return CUDA_SUCCESS; }
CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) { return CUDA_SUCCESS; }
/* bench_hook e's side streams (0x6000-0x6fff) are non-blocking, as cuDNN's are. */
CUresult cuStreamGetFlags(CUstream s, unsigned int *f)
{
	uintptr_t h = (uintptr_t)s;
	*f = h >= 0x6000 && h < 0x7000 ? CU_STREAM_NON_BLOCKING : 0;
	return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream s) { return CUDA_SUCCESS; }
/* bench_hook t's temporary storage and read-backs: nothing is allocated or copied. */
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)0x70000000; return CUDA_SUCCESS; }
CUresult cuMemFree_v2(CUdeviceptr p) { return CUDA_SUCCESS; }
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) { return CUDA_SUCCESS; }
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int f) { return CUDA_SUCCESS; }
CUresult cuPointerGetAttribute(void *d, CUpointer_attribute a, CUdeviceptr p)
{
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
	/* FAKE_FUNC takes one int, the next two handles two and three; the
	 * fourth one struct of 656 bytes (a PyTorch elementwise kernel's). */
	uintptr_t k = (uintptr_t)f - (uintptr_t)FAKE_FUNC;
	if (k > 3)
		return CUDA_ERROR_INVALID_HANDLE;
	if (k == 3) {
		if (i > 0)
			return CUDA_ERROR_INVALID_VALUE;
		*off = 0;
		*size = 656;
		return CUDA_SUCCESS;
	}
	if (i > k)
		return CUDA_ERROR_INVALID_VALUE;
	*off = i * sizeof(int);
	*size = sizeof(int);
	return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
	*v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 49152;
	return CUDA_SUCCESS;
}

/*
 * FAKE_CUDA_TOUCH_KB=N: every launch writes a byte in each cache line of an
 * N KB buffer, as a real driver's launch evicts its caller's data from the
 * first-level cache; under cachegrind this counts the lines graphshim's
 * pass-through misses per launch (docs/performance.md, "Pass-through cost").
 */
static unsigned char *fake_touch;
static size_t fake_touch_n;
static int fake_touch_init;

/*
 * FAKE_CUDA_CODE_KB=N (x86-64 only, at most 1024): every launch also runs
 * N KB of code, one jump per 64-byte line, as a real launch's thousands of
 * instructions evict the caller's code from the first-level instruction
 * cache (and its branches from the predictors).
 */
#if defined(__x86_64__)
#define FAKE_CODE_LINES 16384
__asm__(".text\n"
	".p2align 6\n"
	".globl fake_code_sweep\n"
	".hidden fake_code_sweep\n"
	".type fake_code_sweep, @function\n"
	"fake_code_sweep:\n"
	".rept 16384\n"
	"jmp 1f\n"
	".p2align 6\n"
	"1:\n"
	".endr\n"
	"ret\n"
	".size fake_code_sweep, . - fake_code_sweep\n");
extern char fake_code_sweep[];
#else
#define FAKE_CODE_LINES 0
#endif
static void (*fake_code_entry)(void);

static void fake_sweep(void)
{
	if (!fake_touch_init) {
		const char *v = getenv("FAKE_CUDA_TOUCH_KB");
		fake_touch_n = v ? (size_t)strtoul(v, NULL, 10) * 1024 : 0;
		if (fake_touch_n && !(fake_touch = calloc(1, fake_touch_n)))
			fake_touch_n = 0;
#if FAKE_CODE_LINES
		v = getenv("FAKE_CUDA_CODE_KB");
		size_t lines = v ? (size_t)strtoul(v, NULL, 10) * 1024 / 64 : 0;
		if (lines > FAKE_CODE_LINES)
			lines = FAKE_CODE_LINES;
		if (lines)
			fake_code_entry = (void (*)(void))(void *)(fake_code_sweep +
								    (FAKE_CODE_LINES - lines) * 64);
#endif
		fake_touch_init = 1;
	}
	for (size_t i = 0; i < fake_touch_n; i += 64)
		fake_touch[i]++;
	if (fake_code_entry)
		fake_code_entry();
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned sh, CUstream s, void **kp,
			void **extra)
{
	fake_sweep();
	fake_run(kp, extra, 0);
	return CUDA_SUCCESS;
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			     unsigned bx, unsigned by, unsigned bz, unsigned sh, CUstream s,
			     void **kp, void **extra)
{
	fake_run(kp, extra, 1);
	return CUDA_SUCCESS;
}

/* Graphs: a chain of kernel nodes, each keeping its int argument. */
typedef struct fake_graph {
	int n;
	int value[4096];
} fake_graph_t;

CUresult cuGraphCreate(CUgraph *g, unsigned int f)
{
	*g = (CUgraph)calloc(1, sizeof(fake_graph_t));
	return CUDA_SUCCESS;
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
				 size_t ndeps, const CUDA_KERNEL_NODE_PARAMS *p)
{
	fake_graph_t *G = (fake_graph_t *)g;
	if (G->n >= 4096 || !p->kernelParams)
		return CUDA_ERROR_NOT_SUPPORTED;
	memcpy(&G->value[G->n], p->kernelParams[0], sizeof(int));
	*node = (CUgraphNode)(uintptr_t)(G->n + 1);
	G->n++;
	return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *x, CUgraph g, unsigned long long f)
{
	fake_graph_t *X = malloc(sizeof(*X));
	memcpy(X, g, sizeof(*X));
	*x = (CUgraphExec)X;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode node,
					   const CUDA_KERNEL_NODE_PARAMS *p)
{
	fake_graph_t *X = (fake_graph_t *)x;
	memcpy(&X->value[(uintptr_t)node - 1], p->kernelParams[0], sizeof(int));
	return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec x, CUstream s)
{
	fake_graph_t *X = (fake_graph_t *)x;
	for (int i = 0; i < X->n; i++)
		fake_run((void *[]){ &X->value[i] }, NULL, 2);
	return CUDA_SUCCESS;
}

/*
 * The device updater's entry points (shim/cuda/cu_devupd.c), for
 * bench_hook's drifting step: the module loads only with FAKE_DEVUPD=1
 * (elsewhere graphshim patches from the host, as before), and a kernel
 * node's device handle is the node itself.  The updater's entries are not
 * applied: nothing run against this driver checks results that way.
 */
CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	const char *e = getenv("FAKE_DEVUPD");
	if (!e || strcmp(e, "1"))
		return CUDA_ERROR_NOT_SUPPORTED;
	*m = (CUmodule)0x600;
	return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	*f = (CUfunction)((uintptr_t)0x700 + strlen(name));
	return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeSetAttribute(CUgraphNode n, CUkernelNodeAttrID a, const CUkernelNodeAttrValue *v)
{
	return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetAttribute(CUgraphNode n, CUkernelNodeAttrID a, CUkernelNodeAttrValue *v)
{
	if (a == CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE)
		v->deviceUpdatableKernelNode.devNode = (CUgraphDeviceNode)n;
	return CUDA_SUCCESS;
}

CUresult cuGraphNodeSetEnabled(CUgraphExec x, CUgraphNode n, unsigned int on) { return CUDA_SUCCESS; }
CUresult cuGraphUpload(CUgraphExec x, CUstream s) { return CUDA_SUCCESS; }

CUresult cuGraphExecDestroy(CUgraphExec x) { free(x); return CUDA_SUCCESS; }
CUresult cuGraphDestroy(CUgraph g) { free(g); return CUDA_SUCCESS; }

static const struct {
	const char *name;
	void *fn, *fn_ptsz;
} fake_table[] = {
	{ "cuInit", (void *)cuInit, NULL },
	{ "cuCtxSynchronize", (void *)cuCtxSynchronize, NULL },
	{ "cuStreamSynchronize", (void *)cuStreamSynchronize, NULL },
	{ "cuEventRecord", (void *)cuEventRecord, NULL },
	{ "cuMemAlloc", (void *)cuMemAlloc_v2, NULL },
	{ "cuMemFree", (void *)cuMemFree_v2, NULL },
	{ "cuMemcpyDtoHAsync", (void *)cuMemcpyDtoHAsync_v2, NULL },
	{ "cuStreamWaitEvent", (void *)cuStreamWaitEvent, NULL },
	{ "cuLaunchKernel", (void *)cuLaunchKernel, (void *)cuLaunchKernel_ptsz },
};

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *st);
CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *st)
{
	if (!strcmp(sym, "cuGetProcAddress")) {
		*pfn = (void *)cuGetProcAddress_v2;
		return CUDA_SUCCESS;
	}
	for (size_t i = 0; i < sizeof(fake_table) / sizeof(fake_table[0]); i++) {
		if (strcmp(sym, fake_table[i].name))
			continue;
		*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
				       fake_table[i].fn_ptsz
			       ? fake_table[i].fn_ptsz
			       : fake_table[i].fn;
		if (st)
			*st = CU_GET_PROC_ADDRESS_SUCCESS;
		return CUDA_SUCCESS;
	}
	*pfn = NULL;
	if (st)
		*st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}
