/*
 * Helpers shared by the reliability programs (r_*.c): a learned step (a
 * fixed run of add_scalar launches), polling simulated device memory
 * without any driver call, and the simulator's live-handle count.  Built on
 * tests/sim/t_common.h (CHECK, EXPECT, t_setup).
 */
#ifndef GS_R_COMMON_H
#define GS_R_COMMON_H

#include "t_common.h"
#include "sim_core.h" /* GS_SIM_H_* handle kinds */

#include <stdint.h>

#define R_STEP 8 /* launches a step: at least GRAPHSHIM_MIN_SEQ, one chunk */

/* Launches k of a step: each adds 1 to the n ints at p. */
static inline void r_launches(CUfunction add, CUstream s, CUdeviceptr p, unsigned n, int k)
{
	int one = 1;
	void *args[] = { &p, &one, &n };
	for (int i = 0; i < k; i++)
		CHECK(cuLaunchKernel(add, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
}

/*
 * Simulated device memory is host memory: read it without a driver call,
 * which would be a boundary and submit held work itself.  Waits up to
 * `ms` for p[0] to reach `want`; returns the last value seen.
 */
/* The read races with the simulated kernel's plain stores, as a host read
 * of mapped memory races with a GPU: by design, so ThreadSanitizer is told
 * to leave this function alone (results are checked after a sync too). */
__attribute__((no_sanitize("thread"))) static inline int r_poll(CUdeviceptr p, int want, int ms)
{
	volatile int *v = (volatile int *)(uintptr_t)p;
	double end = t_now_ms() + ms;
	int got;
	while ((got = *v) != want && t_now_ms() < end)
		usleep(1000);
	return got;
}

/* Live handles of a kind in the simulator (GS_SIM_H_GRAPH, _EXEC...). */
static inline int r_count(int kind)
{
	int (*count)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "gs_sim_count_handles");
	if (!count) {
		fprintf(stderr, "FAIL: the simulator lacks gs_sim_count_handles\n");
		exit(1);
	}
	return count(kind);
}

/* Is libgraphshim.so in the process? */
static inline int r_shimmed(void)
{
	return dlsym(RTLD_DEFAULT, "graphshim_version") != NULL;
}

#endif /* GS_R_COMMON_H */
