/*
 * fwstep: the kernels of a step shaped like a framework's decode step (see
 * fwstep.c).  Everything is 32-bit unsigned arithmetic, which wraps: sums
 * are exact whatever order the threads, blocks or atomics add in, so a run
 * is reproducible bit for bit on the GPU, while the mixing (rotations,
 * multiplications, xors) makes every output depend on the order of the
 * launches and on every argument.  fwstep_sim.c is the same math for the
 * CPU simulator.  Blocks are FW_BLOCK (256) threads; every kernel loops
 * over its range, so any grid computes the same result.
 */

#define FW_BLOCK 256
/* Golden-ratio constants: odd multipliers that spread the bits. */
#define FW_G1 0x9e3779b1u
#define FW_G2 0x85ebca6bu

__device__ static unsigned fw_rotl(unsigned v, unsigned r)
{
	r &= 31;
	return r ? (v << r) | (v >> (32 - r)) : v;
}

/* The sum over the block of v (blockDim.x == FW_BLOCK); every thread gets it. */
__device__ static unsigned fw_block_sum(unsigned v)
{
	__shared__ unsigned part[FW_BLOCK];
	part[threadIdx.x] = v;
	__syncthreads();
	for (unsigned s = FW_BLOCK / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			part[threadIdx.x] += part[threadIdx.x + s];
		__syncthreads();
	}
	unsigned r = part[0];
	__syncthreads();
	return r;
}

/* A weighted sum of x, so that moving a value changes it. */
__device__ static unsigned fw_digest(const unsigned *x, int D)
{
	unsigned s = 0;
	for (int i = threadIdx.x; i < D; i += blockDim.x)
		s += x[i] * (2u * (unsigned)i + 1u);
	return fw_block_sum(s);
}

/* Norm-like, one block: h = mix(x, digest(x)); y = 0 for the attention's sums. */
extern "C" __global__ void k_norm(unsigned *h, unsigned *y, const unsigned *x, int D)
{
	unsigned s = fw_digest(x, D) * FW_G2;
	for (int i = threadIdx.x; i < D; i += blockDim.x) {
		h[i] = (x[i] ^ (s >> 7)) * FW_G1 + s;
		y[i] = 0;
	}
}

/* Matvec-like: t = W h, W is D x D row-major (a layer's weights); a thread a row. */
extern "C" __global__ void k_matvec(unsigned *t, const unsigned *W, const unsigned *h, int D)
{
	for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < D; r += gridDim.x * blockDim.x) {
		const unsigned *w = W + (size_t)r * D;
		unsigned acc = 0;
		for (int c = 0; c < D; c++)
			acc += w[c] * h[c];
		t[r] = acc ^ (acc >> 16);
	}
}

/* The new cache entry: kv[pos] = t (kv is the layer's cache of D-word slots). */
extern "C" __global__ void k_append(unsigned *kv, const unsigned *t, int pos, int D)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < D; i += gridDim.x * blockDim.x)
		kv[(size_t)pos * D + i] = t[i];
}

/*
 * Attention-like: y += sum over positions p = 0..pos of
 * (t + rotl(kv[p], p)) * ((kv[p][0] ^ p) | 1), the positions cut into
 * chunks of `chunk`, block b taking chunks b, b + grid, ...: correct for
 * any grid.  Block 0 also adds grid x FW_G1 + chunk x FW_G2, as the rounding
 * of a real split reduction depends on its split: a replay with a stale
 * grid or chunk changes the output.
 */
extern "C" __global__ void k_attn(unsigned *y, const unsigned *t, const unsigned *kv, int pos,
				  int chunk, int D)
{
	for (int i = threadIdx.x; i < D; i += blockDim.x) {
		unsigned acc = blockIdx.x == 0 ? gridDim.x * FW_G1 + (unsigned)chunk * FW_G2 : 0u;
		for (int c = blockIdx.x; c * chunk <= pos; c += gridDim.x)
			for (int p = c * chunk; p < (c + 1) * chunk && p <= pos; p++) {
				const unsigned *k = kv + (size_t)p * D;
				acc += (t[i] + fw_rotl(k[i], (unsigned)p)) * ((k[0] ^ (unsigned)p) | 1u);
			}
		atomicAdd(&y[i], acc);
	}
}

/* The residual: x += y. */
extern "C" __global__ void k_residual(unsigned *x, const unsigned *y, int D)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < D; i += gridDim.x * blockDim.x)
		x[i] += y[i];
}

/* --variant-every (fwstep.c): the same sum as k_residual; the last argument,
 * unused, makes another parameter layout, as a framework's kernel variant has. */
extern "C" __global__ void k_residual_v(unsigned *x, const unsigned *y, int D, int unused)
{
	(void)unused;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < D; i += gridDim.x * blockDim.x)
		x[i] += y[i];
}

/* --wide-args (fwstep.c's fw_wide): x += a digest of the 95 words after the
 * first, which points to the scratch buffer t, and t.  The pointer's bits
 * stay out of the digest: they differ from run to run. */
#define FW_WIDE 96
struct fw_wide {
	unsigned long long w[FW_WIDE];
};
extern "C" __global__ void k_wide(unsigned *x, const fw_wide m, int D)
{
	const unsigned *t = (const unsigned *)m.w[0];
	unsigned s = 0;
	for (int k = 1; k < FW_WIDE; k++)
		s += (unsigned)(m.w[k] ^ (m.w[k] >> 32)) * (2u * (unsigned)k + 1u);
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < D; i += gridDim.x * blockDim.x)
		x[i] += (s ^ (unsigned)i) + t[i];
}

/* The value a host check reads back (.item()): a digest of x, one block. */
extern "C" __global__ void k_flag(unsigned *flag, const unsigned *x, int D)
{
	unsigned s = fw_digest(x, D);
	if (threadIdx.x == 0)
		*flag = (s ^ (s >> 15)) * FW_G2;
}

/*
 * The token, one block: tok = argmax of x[0, vocab) (lowest index on ties),
 * then x = E[tok] ^ rotl(x, 13), the next step's input.
 */
extern "C" __global__ void k_token(unsigned *tok, unsigned *x, const unsigned *E, int vocab, int D)
{
	__shared__ unsigned bv[FW_BLOCK];
	__shared__ int bi[FW_BLOCK];
	unsigned best = 0;
	int idx = 0x7fffffff;
	for (int i = threadIdx.x; i < vocab; i += blockDim.x)
		if (idx == 0x7fffffff || x[i] > best)
			best = x[i], idx = i;
	bv[threadIdx.x] = best;
	bi[threadIdx.x] = idx;
	__syncthreads();
	for (int s = FW_BLOCK / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) {
			unsigned v = bv[threadIdx.x + s];
			int j = bi[threadIdx.x + s];
			if (j != 0x7fffffff &&
			    (bi[threadIdx.x] == 0x7fffffff || v > bv[threadIdx.x] ||
			     (v == bv[threadIdx.x] && j < bi[threadIdx.x]))) {
				bv[threadIdx.x] = v;
				bi[threadIdx.x] = j;
			}
		}
		__syncthreads();
	}
	int t = bi[0];
	if (threadIdx.x == 0)
		*tok = (unsigned)t;
	for (int i = threadIdx.x; i < D; i += blockDim.x)
		x[i] = E[(size_t)t * D + i] ^ fw_rotl(x[i], 13);
}
