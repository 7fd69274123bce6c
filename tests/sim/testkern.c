/*
 * Test kernels for the simulator (built as testkern.sim.so).  Each runs its
 * whole grid serially; parameters arrive as kernelParams-style pointers.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gs_sim_kernel.h"

#define ARG(T, i) (*(T *)params[i])
#define DEV(T, i) ((T *)(uintptr_t)ARG(uint64_t, i))

static void k_fill(const gs_sim_dim_t *d, void **params)
{
	int *p = DEV(int, 0);
	int v = ARG(int, 1);
	unsigned n = ARG(unsigned, 2);
	for (unsigned i = 0; i < n; i++)
		p[i] = v;
}

static void k_axpy(const gs_sim_dim_t *d, void **params)
{
	float *y = DEV(float, 0);
	const float *x = DEV(const float, 1);
	float a = ARG(float, 2);
	unsigned n = ARG(unsigned, 3);
	for (unsigned i = 0; i < n; i++)
		y[i] += a * x[i];
}

static void k_add_scalar(const gs_sim_dim_t *d, void **params)
{
	int *p = DEV(int, 0);
	int v = ARG(int, 1);
	unsigned n = ARG(unsigned, 2);
	for (unsigned i = 0; i < n; i++)
		p[i] += v;
}

static void k_copy(const gs_sim_dim_t *d, void **params)
{
	int *dst = DEV(int, 0);
	const int *src = DEV(const int, 1);
	unsigned n = ARG(unsigned, 2);
	for (unsigned i = 0; i < n; i++)
		dst[i] = src[i];
}

/* A 24-byte struct parameter: out[0..2] = {a, b, c} scaled by k. */
struct tk_triple {
	int64_t a, b, c;
};

static void k_triple(const gs_sim_dim_t *d, void **params)
{
	char tag = ARG(char, 0);
	struct tk_triple t;
	memcpy(&t, params[1], sizeof(t));
	int64_t *out = DEV(int64_t, 2);
	out[0] = t.a * tag;
	out[1] = t.b * tag;
	out[2] = t.c * tag;
}

/* char, then a pointer: the pointer lands at offset 8. */
static void k_charptr(const gs_sim_dim_t *d, void **params)
{
	char c = ARG(char, 0);
	int *p = DEV(int, 1);
	short s = ARG(short, 2);
	p[0] = c;
	p[1] = s;
	p[2] = (int)(d->grid[0] * d->block[0]);
}

const gs_sim_kernel_t gs_sim_kernels[] = {
	{ "fill", k_fill, 3, { 8, 4, 4 } },
	{ "axpy", k_axpy, 4, { 8, 8, 4, 4 } },
	{ "add_scalar", k_add_scalar, 3, { 8, 4, 4 } },
	{ "copy", k_copy, 3, { 8, 8, 4 } },
	{ "triple", k_triple, 3, { 1, 24, 8 } },
	{ "charptr", k_charptr, 3, { 1, 8, 2 } },
	{ NULL, NULL, 0, { 0 } },
};
