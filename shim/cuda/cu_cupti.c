/*
 * Whether a CUPTI tool is injected into the process (CUDA_INJECTION64_PATH:
 * the variable through which the driver loads a profiler's or counter's
 * library at cuInit: Nsight Systems, Nsight Compute, the suite's counter
 * tools/cupti/gs_cupti.c).  While one is, no memset is made a graph node
 * (cu_ops.c, gs_cu_add_node): on an H200 (driver 580, CUDA 13.0, CUPTI
 * 13.0) with the counter's activity records on, graph launches crashed
 * inside CUPTI's callback (a read on the host of an address that is none)
 * in every run of a step that allocates memory, memsets it and frees it
 * again (kernels/real/solver_hostfn.cu --scratch async|malloc), with and
 * without device updates, stand-ins or the builder thread; with a copy in
 * the memset's place, the memory kept, or memsets not made nodes, none did
 * (fifty-fifth session in docs/performance.md; the fault's cause inside
 * the driver or CUPTI was not found).
 *
 * Not the library's presence: every PyTorch process has libcupti loaded
 * (libtorch_cuda needs it for its profiler) whether or not anything
 * subscribes, and refusing memsets there cost sparse-cg a tenth of its
 * steady coverage (0.926 against 1.000).  A profiler that starts CUPTI
 * itself in the process (torch.profiler's Kineto) is not seen: its graphs
 * keep their memset nodes (docs/limits.md).  Read once, when the backend
 * starts (gs_cu_init), on the application's thread.
 */
#include <stdlib.h>

#include "cu_internal.h"

static bool gs_cu_cupti;

void gs_cu_cupti_init(void)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj) {
		__atomic_store_n(&gs_cu_cupti, true, __ATOMIC_RELEASE);
		gs_log(GS_LOG_WARN, "cuda: a CUPTI tool is injected (CUDA_INJECTION64_PATH): memsets run "
				    "eagerly at their places, not as graph nodes");
	}
}

bool gs_cu_cupti_seen(void)
{
	return __atomic_load_n(&gs_cu_cupti, __ATOMIC_ACQUIRE);
}
