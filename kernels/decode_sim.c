/*
 * decode's kernels for the CPU simulator: the same math as decode.cu, each
 * kernel running its whole grid in one call, in float as the GPU does.
 */
#include <math.h>
#include <stddef.h>

#include "gs_sim_args.h"

static int dec_pos(const int *pos, int pos_arg)
{
	return pos != NULL ? *pos : pos_arg;
}

static int dec_filled(int p, int ctx)
{
	return p + 1 < ctx ? p + 1 : ctx;
}

static void k_embed(const gs_sim_dim_t *dim, void **params)
{
	float *x = GS_SIM_PTR(float, 0);
	const float *E = GS_SIM_PTR(const float, 1);
	int t = *GS_SIM_PTR(const int, 2), vocab = GS_SIM_INT(3), D = GS_SIM_INT(4);

	if (t < 0 || t >= vocab)
		t = 0;
	for (int i = 0; i < D; i++)
		x[i] = E[(size_t)t * D + i];
}

static void k_ln_stats(const gs_sim_dim_t *dim, void **params)
{
	float *stats = GS_SIM_PTR(float, 0);
	const float *x = GS_SIM_PTR(const float, 1);
	int D = GS_SIM_INT(2);
	float s = 0.f, q = 0.f;

	for (int i = 0; i < D; i++)
		s += x[i];
	float mean = s / D;
	for (int i = 0; i < D; i++)
		q += (x[i] - mean) * (x[i] - mean);
	stats[0] = mean;
	stats[1] = 1.0f / sqrtf(q / D + 1e-5f);
}

static void k_ln_apply(const gs_sim_dim_t *dim, void **params)
{
	float *h = GS_SIM_PTR(float, 0);
	const float *x = GS_SIM_PTR(const float, 1), *st = GS_SIM_PTR(const float, 2);
	const float *g = GS_SIM_PTR(const float, 3), *b = GS_SIM_PTR(const float, 4);
	int D = GS_SIM_INT(5);

	for (int i = 0; i < D; i++)
		h[i] = (x[i] - st[0]) * st[1] * g[i] + b[i];
}

static void k_matvec(const gs_sim_dim_t *dim, void **params)
{
	float *y = GS_SIM_PTR(float, 0);
	const float *W = GS_SIM_PTR(const float, 1), *x = GS_SIM_PTR(const float, 2);
	const float *bias = GS_SIM_PTR(const float, 3);
	int rows = GS_SIM_INT(4), cols = GS_SIM_INT(5);

	for (int r = 0; r < rows; r++) {
		const float *w = W + (size_t)r * cols;
		float acc = 0.f;
		for (int c = 0; c < cols; c++)
			acc += w[c] * x[c];
		y[r] = acc + (bias != NULL ? bias[r] : 0.f);
	}
}

static void k_rope(const gs_sim_dim_t *dim, void **params)
{
	float *qkv = GS_SIM_PTR(float, 0);
	int p = dec_pos(GS_SIM_PTR(const int, 1), GS_SIM_INT(2));
	int heads = GS_SIM_INT(3), hd = GS_SIM_INT(4), half = hd / 2, D = heads * hd;

	for (int h = 0; h < heads; h++)
		for (int j = 0; j < half; j++) {
			float freq = powf(10000.0f, -2.0f * j / hd);
			float s = sinf((float)p * freq), c = cosf((float)p * freq);
			for (int part = 0; part < 2; part++) {
				float *v = qkv + part * D + h * hd;
				float a = v[j], b = v[j + half];
				v[j] = a * c - b * s;
				v[j + half] = a * s + b * c;
			}
		}
}

static void k_kv_append(const gs_sim_dim_t *dim, void **params)
{
	float *kc = GS_SIM_PTR(float, 0), *vc = GS_SIM_PTR(float, 1);
	const float *qkv = GS_SIM_PTR(const float, 2);
	int p = dec_pos(GS_SIM_PTR(const int, 3), GS_SIM_INT(4));
	int ctx = GS_SIM_INT(5), D = GS_SIM_INT(6);
	size_t slot = (size_t)(p % ctx);

	for (int i = 0; i < D; i++) {
		kc[slot * D + i] = qkv[D + i];
		vc[slot * D + i] = qkv[2 * D + i];
	}
}

static void k_att_scores(const gs_sim_dim_t *dim, void **params)
{
	float *sc = GS_SIM_PTR(float, 0);
	const float *qkv = GS_SIM_PTR(const float, 1), *kc = GS_SIM_PTR(const float, 2);
	int p = dec_pos(GS_SIM_PTR(const int, 3), GS_SIM_INT(4));
	int ctx = GS_SIM_INT(5), heads = GS_SIM_INT(6), hd = GS_SIM_INT(7), D = heads * hd;
	int T = dec_filled(p, ctx);

	for (int h = 0; h < heads; h++)
		for (int t = 0; t < T; t++) {
			const float *q = qkv + h * hd, *k = kc + (size_t)t * D + h * hd;
			float acc = 0.f;
			for (int j = 0; j < hd; j++)
				acc += q[j] * k[j];
			sc[h * ctx + t] = acc * (1.0f / sqrtf((float)hd));
		}
}

static void k_softmax(const gs_sim_dim_t *dim, void **params)
{
	float *sc = GS_SIM_PTR(float, 0);
	int p = dec_pos(GS_SIM_PTR(const int, 1), GS_SIM_INT(2));
	int ctx = GS_SIM_INT(3), T = dec_filled(p, ctx);

	for (unsigned h = 0; h < dim->grid[0]; h++) {
		float *row = sc + (size_t)h * ctx, m = -3.0e38f, s = 0.f;
		for (int t = 0; t < T; t++)
			m = fmaxf(m, row[t]);
		for (int t = 0; t < T; t++)
			s += (row[t] = expf(row[t] - m));
		for (int t = 0; t < T; t++)
			row[t] *= 1.0f / s;
	}
}

static void k_att_wsum(const gs_sim_dim_t *dim, void **params)
{
	float *o = GS_SIM_PTR(float, 0);
	const float *sc = GS_SIM_PTR(const float, 1), *vc = GS_SIM_PTR(const float, 2);
	int p = dec_pos(GS_SIM_PTR(const int, 3), GS_SIM_INT(4));
	int ctx = GS_SIM_INT(5), heads = GS_SIM_INT(6), hd = GS_SIM_INT(7);
	int accumulate = GS_SIM_INT(8), D = heads * hd, T = dec_filled(p, ctx);

	for (int h = 0; h < heads; h++)
		for (int j = 0; j < hd; j++) {
			float acc = 0.f;
			for (int t = 0; t < T; t++)
				acc += sc[(size_t)h * ctx + t] * vc[(size_t)t * D + h * hd + j];
			o[h * hd + j] = accumulate ? o[h * hd + j] + acc : acc;
		}
}

static void k_add(const gs_sim_dim_t *dim, void **params)
{
	float *out = GS_SIM_PTR(float, 0);
	const float *a = GS_SIM_PTR(const float, 1), *b = GS_SIM_PTR(const float, 2);
	int n = GS_SIM_INT(3);

	for (int i = 0; i < n; i++)
		out[i] = a[i] + b[i];
}

static void k_gelu(const gs_sim_dim_t *dim, void **params)
{
	float *u = GS_SIM_PTR(float, 0);
	int n = GS_SIM_INT(1);

	for (int i = 0; i < n; i++) {
		float x = u[i];
		u[i] = 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
	}
}

static void k_scale(const gs_sim_dim_t *dim, void **params)
{
	float *x = GS_SIM_PTR(float, 0);
	float a = GS_SIM_FLOAT(1), b = GS_SIM_FLOAT(2);
	int n = GS_SIM_INT(3);

	for (int i = 0; i < n; i++)
		x[i] = a * x[i] + b;
}

static void k_argmax(const gs_sim_dim_t *dim, void **params)
{
	int *tok = GS_SIM_PTR(int, 0), *hist = GS_SIM_PTR(int, 1);
	const float *logits = GS_SIM_PTR(const float, 2);
	int p = *GS_SIM_PTR(const int, 3), vocab = GS_SIM_INT(4), hist_len = GS_SIM_INT(5);
	int best = 0;

	for (int i = 1; i < vocab; i++)
		if (logits[i] > logits[best])
			best = i;
	*tok = best;
	if (p >= 0 && p < hist_len)
		hist[p] = best;
}

static void k_pos_inc(const gs_sim_dim_t *dim, void **params)
{
	*GS_SIM_PTR(int, 0) += 1;
}

const gs_sim_kernel_t gs_sim_kernels[] = {
	{ "k_embed", k_embed, 5, { 8, 8, 8, 4, 4 } },
	{ "k_ln_stats", k_ln_stats, 3, { 8, 8, 4 } },
	{ "k_ln_apply", k_ln_apply, 6, { 8, 8, 8, 8, 8, 4 } },
	{ "k_matvec", k_matvec, 6, { 8, 8, 8, 8, 4, 4 } },
	{ "k_rope", k_rope, 5, { 8, 8, 4, 4, 4 } },
	{ "k_kv_append", k_kv_append, 7, { 8, 8, 8, 8, 4, 4, 4 } },
	{ "k_att_scores", k_att_scores, 8, { 8, 8, 8, 8, 4, 4, 4, 4 } },
	{ "k_softmax", k_softmax, 4, { 8, 8, 4, 4 } },
	{ "k_att_wsum", k_att_wsum, 9, { 8, 8, 8, 8, 4, 4, 4, 4, 4 } },
	{ "k_add", k_add, 4, { 8, 8, 8, 4 } },
	{ "k_gelu", k_gelu, 2, { 8, 4 } },
	{ "k_scale", k_scale, 4, { 8, 4, 4, 4 } },
	{ "k_argmax", k_argmax, 6, { 8, 8, 8, 8, 4, 4 } },
	{ "k_pos_inc", k_pos_inc, 1, { 8 } },
	{ 0 }
};
