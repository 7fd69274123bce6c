/*
 * The clock: CLOCK_MONOTONIC in nanoseconds, for what the engine measures
 * on the host (a segment's time per launch, arming, building) and for the
 * trace's timestamps.  A module of its own so that none of them needs
 * another for the time.
 */
#ifndef GS_CLOCK_H
#define GS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t gs_clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* GS_CLOCK_H */
