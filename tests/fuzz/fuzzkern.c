/*
 * Kernels of the differential fuzzer (built as fuzzkern.sim.so for the CPU
 * simulator).  Each runs its whole grid serially.  Arithmetic is unsigned so
 * that random argument values never hit undefined behaviour, and add_scalar
 * folds grid, block and shared memory into its result, so a replay with a
 * stale launch shape changes memory, not only timing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gs_sim_kernel.h"
#include "fuzz_abi.h"

/* FUZZ_KDELAY=<us>: each kernel busy-waits up to that long (varying with
 * its arguments), so stream workers finish out of their usual order; a
 * race in a generated program then shows as a plain run that is not
 * reproducible. */
static long kdelay_us = -1; /* read once, by any stream's worker: atomic */

static void kdelay(uint32_t h)
{
	long max = __atomic_load_n(&kdelay_us, __ATOMIC_RELAXED);
	if (max < 0) {
		const char *e = getenv("FUZZ_KDELAY");
		max = e ? atol(e) : 0;
		__atomic_store_n(&kdelay_us, max, __ATOMIC_RELAXED);
	}
	if (max <= 0)
		return;
	struct timespec a, b;
	long us = (long)((h * 2654435761u) >> 8) % (max + 1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

#define ARG(T, i) (*(T *)params[i])
#define DEV(i) ((uint32_t *)(uintptr_t)ARG(uint64_t, i))

/* y[i] = a * x[i] + b */
static void k_axpb(const gs_sim_dim_t *d, void **params)
{
	uint32_t *y = DEV(0);
	const uint32_t *x = DEV(1);
	uint32_t a = ARG(uint32_t, 2), b = ARG(uint32_t, 3);
	unsigned n = ARG(unsigned, 4);
	kdelay(a + b + n);
	for (unsigned i = 0; i < n; i++)
		y[i] = a * x[i] + b;
}

/* dst[i] = s1[i] * 31 + (s2[i] ^ i) */
static void k_mix(const gs_sim_dim_t *d, void **params)
{
	uint32_t *dst = DEV(0);
	const uint32_t *s1 = DEV(1), *s2 = DEV(2);
	unsigned n = ARG(unsigned, 3);
	kdelay(n + (uint32_t)(uintptr_t)dst);
	for (unsigned i = 0; i < n; i++)
		dst[i] = s1[i] * 31u + (s2[i] ^ i);
}

/*
 * add_scalar's and sub_scalar's v: the argument plus the launch's geometry
 * and the launch attributes a replay must keep (zero without them), so a
 * stale shape or a lost attribute changes memory.
 */
static uint32_t scalar_v(const gs_sim_dim_t *d, void **params)
{
	uint32_t v = ARG(uint32_t, 1);
	v += 3u * d->grid[0] + d->block[0] + d->shmem;
	v += 5u * d->cluster[0] + 7u * (uint32_t)d->priority + 11u * (uint32_t)d->cooperative;
	kdelay(v + ARG(unsigned, 2));
	return v;
}

/* p[i] += v; a release store: the runner's host polls a pinned flag this bumps (mem_wait),
 * and what the stream did before is then visible to it, as on a GPU. */
static void k_add_scalar(const gs_sim_dim_t *d, void **params)
{
	uint32_t *p = DEV(0), v = scalar_v(d, params);
	unsigned n = ARG(unsigned, 2);
	for (unsigned i = 0; i < n; i++)
		__atomic_store_n(&p[i], p[i] + v, __ATOMIC_RELEASE);
}

/* add_scalar's layout, another result: p[i] = p[i] * 3 - v */
static void k_sub_scalar(const gs_sim_dim_t *d, void **params)
{
	uint32_t *p = DEV(0), v = scalar_v(d, params);
	unsigned n = ARG(unsigned, 2);
	for (unsigned i = 0; i < n; i++)
		p[i] = p[i] * 3u - v;
}

/* A struct parameter between a char and a pointer:
 * p[i] = p[i] * tag + s.a + s.b * i + s.c */
static void k_structk(const gs_sim_dim_t *d, void **params)
{
	unsigned char tag = ARG(unsigned char, 0);
	fz_kstruct_t s;
	memcpy(&s, params[1], sizeof(s));
	uint32_t *p = DEV(2);
	unsigned n = ARG(unsigned, 3);
	kdelay((uint32_t)s.a + n);
	for (unsigned i = 0; i < n; i++)
		p[i] = p[i] * tag + (uint32_t)s.a + (uint32_t)((uint64_t)s.b * i) + (uint32_t)s.c;
}

const gs_sim_kernel_t gs_sim_kernels[] = {
	{ "axpb", k_axpb, 5, { 8, 8, 4, 4, 4 } },
	{ "mix", k_mix, 4, { 8, 8, 8, 4 } },
	{ "add_scalar", k_add_scalar, 3, { 8, 4, 4 } },
	{ "sub_scalar", k_sub_scalar, 3, { 8, 4, 4 } },
	{ "structk", k_structk, 4, { 1, sizeof(fz_kstruct_t), 8, 4 } },
	{ NULL, NULL, 0, { 0 } },
};
