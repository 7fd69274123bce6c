/*
 * fwstep's kernels for the CPU simulator: the same math as fwstep.cu (32-bit
 * unsigned, wrapping), each kernel running its whole grid in one call.  The
 * sums the GPU forms by blocks and atomics are exact, so adding in another
 * order gives the same bits.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gs_sim_args.h"

#define FW_G1 0x9e3779b1u
#define FW_G2 0x85ebca6bu

static unsigned fw_rotl(unsigned v, unsigned r)
{
	r &= 31;
	return r ? (v << r) | (v >> (32 - r)) : v;
}

static unsigned fw_digest(const unsigned *x, int D)
{
	unsigned s = 0;
	for (int i = 0; i < D; i++)
		s += x[i] * (2u * (unsigned)i + 1u);
	return s;
}

static void k_norm(const gs_sim_dim_t *dim, void **params)
{
	unsigned *h = GS_SIM_PTR(unsigned, 0), *y = GS_SIM_PTR(unsigned, 1);
	const unsigned *x = GS_SIM_PTR(const unsigned, 2);
	int D = GS_SIM_INT(3);
	unsigned s = fw_digest(x, D) * FW_G2;

	for (int i = 0; i < D; i++) {
		h[i] = (x[i] ^ (s >> 7)) * FW_G1 + s;
		y[i] = 0;
	}
}

static void k_matvec(const gs_sim_dim_t *dim, void **params)
{
	unsigned *t = GS_SIM_PTR(unsigned, 0);
	const unsigned *W = GS_SIM_PTR(const unsigned, 1), *h = GS_SIM_PTR(const unsigned, 2);
	int D = GS_SIM_INT(3);

	for (int r = 0; r < D; r++) {
		const unsigned *w = W + (size_t)r * D;
		unsigned acc = 0;
		for (int c = 0; c < D; c++)
			acc += w[c] * h[c];
		t[r] = acc ^ (acc >> 16);
	}
}

static void k_append(const gs_sim_dim_t *dim, void **params)
{
	unsigned *kv = GS_SIM_PTR(unsigned, 0);
	const unsigned *t = GS_SIM_PTR(const unsigned, 1);
	int pos = GS_SIM_INT(2), D = GS_SIM_INT(3);

	for (int i = 0; i < D; i++)
		kv[(size_t)pos * D + i] = t[i];
}

static void k_attn(const gs_sim_dim_t *dim, void **params)
{
	unsigned *y = GS_SIM_PTR(unsigned, 0);
	const unsigned *t = GS_SIM_PTR(const unsigned, 1), *kv = GS_SIM_PTR(const unsigned, 2);
	int pos = GS_SIM_INT(3), chunk = GS_SIM_INT(4), D = GS_SIM_INT(5);

	/* Every chunk of every block, in one loop: the blocks' split of the
	 * positions only reorders an exact sum; the split's term is block 0's. */
	for (int i = 0; i < D; i++) {
		unsigned acc = dim->grid[0] * FW_G1 + (unsigned)chunk * FW_G2;
		for (int p = 0; p <= pos; p++) {
			const unsigned *k = kv + (size_t)p * D;
			acc += (t[i] + fw_rotl(k[i], (unsigned)p)) * ((k[0] ^ (unsigned)p) | 1u);
		}
		y[i] += acc;
	}
}

static void k_residual(const gs_sim_dim_t *dim, void **params)
{
	unsigned *x = GS_SIM_PTR(unsigned, 0);
	const unsigned *y = GS_SIM_PTR(const unsigned, 1);
	int D = GS_SIM_INT(2);

	for (int i = 0; i < D; i++)
		x[i] += y[i];
}

/* --variant-every: the same sum as k_residual, another parameter layout. */
static void k_residual_v(const gs_sim_dim_t *dim, void **params)
{
	k_residual(dim, params);
}

/* --wide-args: as fwstep.cu's k_wide. */
#define FW_WIDE 96
static void k_wide(const gs_sim_dim_t *dim, void **params)
{
	unsigned *x = GS_SIM_PTR(unsigned, 0);
	unsigned long long m[FW_WIDE];
	memcpy(m, params[1], sizeof(m));
	const unsigned *t = (const unsigned *)(uintptr_t)m[0];
	int D = GS_SIM_INT(2);
	unsigned s = 0;
	for (int k = 1; k < FW_WIDE; k++)
		s += (unsigned)(m[k] ^ (m[k] >> 32)) * (2u * (unsigned)k + 1u);
	for (int i = 0; i < D; i++)
		x[i] += (s ^ (unsigned)i) + t[i];
}

static void k_flag(const gs_sim_dim_t *dim, void **params)
{
	unsigned *flag = GS_SIM_PTR(unsigned, 0);
	unsigned s = fw_digest(GS_SIM_PTR(const unsigned, 1), GS_SIM_INT(2));

	*flag = (s ^ (s >> 15)) * FW_G2;
}

static void k_token(const gs_sim_dim_t *dim, void **params)
{
	unsigned *tok = GS_SIM_PTR(unsigned, 0), *x = GS_SIM_PTR(unsigned, 1);
	const unsigned *E = GS_SIM_PTR(const unsigned, 2);
	int vocab = GS_SIM_INT(3), D = GS_SIM_INT(4), best = 0;

	for (int i = 1; i < vocab; i++)
		if (x[i] > x[best])
			best = i;
	*tok = (unsigned)best;
	for (int i = 0; i < D; i++)
		x[i] = E[(size_t)best * D + i] ^ fw_rotl(x[i], 13);
}

const gs_sim_kernel_t gs_sim_kernels[] = {
	{ "k_norm", k_norm, 4, { 8, 8, 8, 4 } },
	{ "k_matvec", k_matvec, 4, { 8, 8, 8, 4 } },
	{ "k_append", k_append, 4, { 8, 8, 4, 4 } },
	{ "k_attn", k_attn, 6, { 8, 8, 8, 4, 4, 4 } },
	{ "k_residual", k_residual, 3, { 8, 8, 4 } },
	{ "k_residual_v", k_residual_v, 4, { 8, 8, 4, 4 } },
	{ "k_flag", k_flag, 3, { 8, 8, 4 } },
	{ "k_token", k_token, 5, { 8, 8, 8, 4, 4 } },
	{ "k_wide", k_wide, 3, { 8, 8 * FW_WIDE, 4 } },
	{ 0 }
};
