/*
 * Whether CUPTI is loaded in the process (a profiler's or a counter's:
 * injected with CUDA_INJECTION64_PATH, which the driver loads at cuInit, or
 * loaded when PyTorch's profiler starts).  While it is, no memset is made a
 * graph node (cu_ops.c, gs_cu_add_node): on an H200 (driver 580, CUDA
 * 13.0, CUPTI 13.0) with CUPTI's activity records on, graph launches
 * crashed inside CUPTI's callback (a read on the host of an address that
 * is none) in every run of a step that allocates memory, memsets it and
 * frees it again (kernels/real/solver_hostfn.cu --scratch async|malloc),
 * with and without device updates, stand-ins or the builder thread; with a
 * copy in the memset's place, the memory kept, or memsets not made nodes,
 * none did (fifty-fifth session in docs/performance.md; the fault's cause
 * inside the driver or CUPTI was not found).
 *
 * The loaded objects are listed (dl_iterate_phdr) on the application's
 * thread only, in its memset calls before graphshim takes any lock of its
 * own, at most every GS_CU_CUPTI_POLL_NS until CUPTI is found: the list
 * takes the loader's lock, which a builder must never wait for (a thread
 * in dlclose holds it while a library's destructor unloads a module, and
 * an unload waits for the build in progress: cu_stand.c).  A memset held
 * within that interval of CUPTI's loading may still become a node.  Once
 * found, CUPTI is taken to stay.
 */
#include <link.h>
#include <string.h>

#include "cu_internal.h"
#include "gs_clock.h"

#define GS_CU_CUPTI_POLL_NS 100000000ULL /* 100 ms */

static bool gs_cu_cupti;
static uint64_t gs_cu_cupti_next;

/* dl_iterate_phdr's visitor: stops at the first object named libcupti*. */
static int gs_cu_cupti_visit(struct dl_phdr_info *info, size_t size, void *found)
{
	(void)size;
	const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
	base = base ? base + 1 : name;
	if (base && !strncmp(base, "libcupti", 8)) {
		*(bool *)found = true;
		return 1;
	}
	return 0;
}

void gs_cu_cupti_poll(void)
{
	if (__atomic_load_n(&gs_cu_cupti, __ATOMIC_RELAXED))
		return;
	uint64_t now = gs_clock_ns();
	if (now < __atomic_load_n(&gs_cu_cupti_next, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&gs_cu_cupti_next, now + GS_CU_CUPTI_POLL_NS, __ATOMIC_RELAXED);
	bool found = false;
	dl_iterate_phdr(gs_cu_cupti_visit, &found);
	if (found && !__atomic_exchange_n(&gs_cu_cupti, true, __ATOMIC_RELEASE))
		gs_log(GS_LOG_INFO, "cuda: CUPTI is loaded (a profiler or counter): memsets run eagerly "
				    "at their places from now on, not as graph nodes");
}

bool gs_cu_cupti_seen(void)
{
	return __atomic_load_n(&gs_cu_cupti, __ATOMIC_ACQUIRE);
}
