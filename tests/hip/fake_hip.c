/*
 * A recording stand-in for libamdhip64, just enough of it for
 * test-hip-fake: launches and graph calls "execute" by counting, so the
 * test can check that what ran equals what the program issued, in the
 * same number, whether graphshim held, replayed or passed it through.
 * Loaded by graphshim through GRAPHSHIM_HIP_LIBRARY.
 */
#include <hip/hip_runtime_api.h>
#include <stdlib.h>

#define FAKE __attribute__((visibility("default")))

typedef struct fakehip_counts {
	long executed;    /* kernels run, directly or as graph nodes */
	long direct;      /* hipModuleLaunchKernel calls */
	long ext;         /* hipExtModuleLaunchKernel calls */
	long graphs;      /* graphs instantiated */
	long graph_launches;
	long patches;
	uint32_t last_ext_global_x;
} fakehip_counts_t;

FAKE fakehip_counts_t fakehip;

struct ihipGraph { long nodes; };
struct hipGraphExec { long nodes; };

FAKE hipError_t hipGetDevice(int *d) { *d = 0; return hipSuccess; }
FAKE int hipGetStreamDeviceId(hipStream_t s) { (void)s; return 0; }
FAKE hipError_t hipStreamGetFlags(hipStream_t s, unsigned int *f) { (void)s; *f = 0; return hipSuccess; }
FAKE hipError_t hipPeekAtLastError(void) { return hipSuccess; }
FAKE hipError_t hipGetLastError(void) { return hipSuccess; }
FAKE hipError_t hipStreamSynchronize(hipStream_t s) { (void)s; return hipSuccess; }

FAKE hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
				      unsigned int bx, unsigned int by, unsigned int bz, unsigned int shm,
				      hipStream_t s, void **params, void **extra)
{
	fakehip.direct++;
	fakehip.executed++;
	return hipSuccess;
}

FAKE hipError_t hipFuncSetAttribute(const void *f, hipFuncAttribute a, int v)
{
	(void)f, (void)a, (void)v;
	return hipSuccess;
}

FAKE void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
				const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
				void *blockDim, void *gridDim, int *wSize)
{
}

FAKE hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
					 uint32_t ly, uint32_t lz, size_t shm, hipStream_t s, void **params,
					 void **extra, hipEvent_t a, hipEvent_t b, uint32_t flags)
{
	fakehip.ext++;
	fakehip.executed++;
	fakehip.last_ext_global_x = gx;
	return hipSuccess;
}

FAKE hipError_t hipGraphCreate(hipGraph_t *g, unsigned int flags)
{
	*g = calloc(1, sizeof(**g));
	return hipSuccess;
}

FAKE hipError_t hipGraphAddKernelNode(hipGraphNode_t *n, hipGraph_t g, const hipGraphNode_t *deps, size_t nd,
				      const hipKernelNodeParams *p)
{
	if (!p->extra && !p->kernelParams)
		return hipErrorInvalidValue;
	*n = (hipGraphNode_t)(uintptr_t)(++g->nodes);
	return hipSuccess;
}

FAKE hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *e, hipGraph_t g, unsigned long long flags)
{
	*e = calloc(1, sizeof(**e));
	(*e)->nodes = g->nodes;
	fakehip.graphs++;
	return hipSuccess;
}

FAKE hipError_t hipGraphLaunch(hipGraphExec_t e, hipStream_t s)
{
	fakehip.graph_launches++;
	fakehip.executed += e->nodes;
	return hipSuccess;
}

FAKE hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t e, hipGraphNode_t n, const hipKernelNodeParams *p)
{
	fakehip.patches++;
	return hipSuccess;
}

FAKE hipError_t hipGraphExecDestroy(hipGraphExec_t e) { free(e); return hipSuccess; }
FAKE hipError_t hipGraphDestroy(hipGraph_t g) { free(g); return hipSuccess; }
