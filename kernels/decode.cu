/*
 * decode: the kernels of a transformer-like decode step (one token through
 * L layers with a KV cache), about 16 launches a layer, as an LLM generate
 * loop issues them.  The current position lives in device memory (pos) and
 * is read by the kernels that need it, so one step's launches are identical
 * every step; --pos-arg passes it by value instead (pos == NULL), so the
 * arguments change every step.  The KV cache is a ring of ctx slots.
 * decode_sim.c is the same math for the CPU simulator; decode_ref.c the
 * double-precision reference.
 */

__device__ static int dec_pos(const int *pos, int pos_arg)
{
	return pos != nullptr ? *pos : pos_arg;
}

/* Sum over the block (blockDim.x a multiple of 32, at most 1024). */
__device__ static float dec_block_sum(float v)
{
	__shared__ float part[32];
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	__syncthreads();
	if (lane == 0)
		part[warp] = v;
	__syncthreads();
	int nw = blockDim.x >> 5;
	v = threadIdx.x < nw ? part[threadIdx.x] : 0.f;
	if (warp == 0)
		for (int o = 16; o > 0; o >>= 1)
			v += __shfl_down_sync(0xffffffffu, v, o);
	__syncthreads();
	if (threadIdx.x == 0)
		part[0] = v;
	__syncthreads();
	return part[0];
}

__device__ static float dec_block_max(float v)
{
	__shared__ float part[32];
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
	__syncthreads();
	if (lane == 0)
		part[warp] = v;
	__syncthreads();
	int nw = blockDim.x >> 5;
	v = threadIdx.x < nw ? part[threadIdx.x] : -3.0e38f;
	if (warp == 0)
		for (int o = 16; o > 0; o >>= 1)
			v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
	__syncthreads();
	if (threadIdx.x == 0)
		part[0] = v;
	__syncthreads();
	return part[0];
}

/* x = E[tok] */
extern "C" __global__ void k_embed(float *x, const float *E, const int *tok, int vocab, int D)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int t = *tok;
	if (t < 0 || t >= vocab)
		t = 0;
	if (i < D)
		x[i] = E[(size_t)t * D + i];
}

/* stats = { mean, 1/sqrt(var + eps) } of x; one block. */
extern "C" __global__ void k_ln_stats(float *stats, const float *x, int D)
{
	float s = 0.f;
	for (int i = threadIdx.x; i < D; i += blockDim.x)
		s += x[i];
	float mean = dec_block_sum(s) / D;
	float q = 0.f;
	for (int i = threadIdx.x; i < D; i += blockDim.x) {
		float d = x[i] - mean;
		q += d * d;
	}
	float var = dec_block_sum(q) / D;
	if (threadIdx.x == 0) {
		stats[0] = mean;
		stats[1] = 1.0f / sqrtf(var + 1e-5f);
	}
}

/* h = (x - mean) * rstd * g + b */
extern "C" __global__ void k_ln_apply(float *h, const float *x, const float *stats,
				      const float *g, const float *b, int D)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < D)
		h[i] = (x[i] - stats[0]) * stats[1] * g[i] + b[i];
}

/* y = W x (+ bias); W is rows x cols, row-major; one warp a row. */
extern "C" __global__ void k_matvec(float *y, const float *W, const float *x,
				    const float *bias, int rows, int cols)
{
	int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	int lane = threadIdx.x & 31;
	if (row >= rows)
		return; /* whole warps leave together */
	const float *w = W + (size_t)row * cols;
	float acc = 0.f;
	for (int c = lane; c < cols; c += 32)
		acc += w[c] * x[c];
	for (int o = 16; o > 0; o >>= 1)
		acc += __shfl_down_sync(0xffffffffu, acc, o);
	if (lane == 0)
		y[row] = acc + (bias != nullptr ? bias[row] : 0.f);
}

/* Rotary embedding of q (qkv[0, D)) and k (qkv[D, 2D)) at the position. */
extern "C" __global__ void k_rope(float *qkv, const int *pos, int pos_arg, int heads, int hd)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int half = hd / 2;
	if (i >= heads * half)
		return;
	int h = i / half, j = i % half;
	float p = (float)dec_pos(pos, pos_arg);
	float freq = powf(10000.0f, -2.0f * j / hd);
	float s, c;
	sincosf(p * freq, &s, &c);
	int D = heads * hd;
	for (int part = 0; part < 2; part++) {
		float *v = qkv + part * D + h * hd;
		float a = v[j], b = v[j + half];
		v[j] = a * c - b * s;
		v[j + half] = a * s + b * c;
	}
}

/* Append k and v at slot pos % ctx. */
extern "C" __global__ void k_kv_append(float *kc, float *vc, const float *qkv,
				       const int *pos, int pos_arg, int ctx, int D)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= D)
		return;
	size_t slot = (size_t)(dec_pos(pos, pos_arg) % ctx);
	kc[slot * D + i] = qkv[D + i];
	vc[slot * D + i] = qkv[2 * D + i];
}

/* sc[h][t] = q_h . k_h[t] / sqrt(hd) for the t < min(pos + 1, ctx) filled slots; a warp each. */
extern "C" __global__ void k_att_scores(float *sc, const float *qkv, const float *kc,
					const int *pos, int pos_arg, int ctx, int heads, int hd)
{
	int h = blockIdx.y;
	int t = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
	int lane = threadIdx.x & 31;
	int p = dec_pos(pos, pos_arg);
	int T = p + 1 < ctx ? p + 1 : ctx;
	if (t >= T)
		return;
	int D = heads * hd;
	const float *q = qkv + h * hd, *k = kc + (size_t)t * D + h * hd;
	float acc = 0.f;
	for (int j = lane; j < hd; j += 32)
		acc += q[j] * k[j];
	for (int o = 16; o > 0; o >>= 1)
		acc += __shfl_down_sync(0xffffffffu, acc, o);
	if (lane == 0)
		sc[h * ctx + t] = acc * rsqrtf((float)hd);
}

/* Softmax of each head's filled scores; a block a head. */
extern "C" __global__ void k_softmax(float *sc, const int *pos, int pos_arg, int ctx)
{
	float *row = sc + (size_t)blockIdx.x * ctx;
	int p = dec_pos(pos, pos_arg);
	int T = p + 1 < ctx ? p + 1 : ctx;
	float m = -3.0e38f;
	for (int t = threadIdx.x; t < T; t += blockDim.x)
		m = fmaxf(m, row[t]);
	m = dec_block_max(m);
	float s = 0.f;
	for (int t = threadIdx.x; t < T; t += blockDim.x) {
		float e = expf(row[t] - m);
		row[t] = e;
		s += e;
	}
	s = dec_block_sum(s);
	float inv = 1.0f / s;
	for (int t = threadIdx.x; t < T; t += blockDim.x)
		row[t] *= inv;
}

/* o_h = (accumulate ? o_h : 0) + sum_t p[h][t] v_h[t]; a block a head, a thread a dimension. */
extern "C" __global__ void k_att_wsum(float *o, const float *sc, const float *vc,
				      const int *pos, int pos_arg, int ctx, int heads, int hd,
				      int accumulate)
{
	int h = blockIdx.x, j = threadIdx.x;
	if (j >= hd)
		return;
	int p = dec_pos(pos, pos_arg);
	int T = p + 1 < ctx ? p + 1 : ctx;
	int D = heads * hd;
	const float *pr = sc + (size_t)h * ctx;
	float acc = 0.f;
	for (int t = 0; t < T; t++)
		acc += pr[t] * vc[(size_t)t * D + h * hd + j];
	o[h * hd + j] = accumulate ? o[h * hd + j] + acc : acc;
}

/* out = a + b */
extern "C" __global__ void k_add(float *out, const float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = a[i] + b[i];
}

/* u = gelu(u), tanh form */
extern "C" __global__ void k_gelu(float *u, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float x = u[i];
		u[i] = 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
	}
}

/* x = a*x + b: the extra path of --branch */
extern "C" __global__ void k_scale(float *x, float a, float b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = a * x[i] + b;
}

/* tok = argmax(logits) (lowest index on ties); hist[pos] = tok; one block. */
extern "C" __global__ void k_argmax(int *tok, int *hist, const float *logits, const int *pos,
				    int vocab, int hist_len)
{
	__shared__ float bv[1024];
	__shared__ int bi[1024];
	float best = -3.0e38f;
	int idx = 0x7fffffff;
	for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
		float v = logits[i];
		if (v > best) {
			best = v;
			idx = i;
		}
	}
	bv[threadIdx.x] = best;
	bi[threadIdx.x] = idx;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) {
			float v = bv[threadIdx.x + s];
			int j = bi[threadIdx.x + s];
			if (v > bv[threadIdx.x] || (v == bv[threadIdx.x] && j < bi[threadIdx.x])) {
				bv[threadIdx.x] = v;
				bi[threadIdx.x] = j;
			}
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		int t = bi[0] < vocab ? bi[0] : 0;
		*tok = t;
		int p = *pos;
		if (p >= 0 && p < hist_len)
			hist[p] = t;
	}
}

/* pos += 1 */
extern "C" __global__ void k_pos_inc(int *pos)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		*pos += 1;
}
