/*
 * decode's CPU reference: the same model as decode.cu in double precision,
 * teacher-forced with the tokens the device produced so that one near-tie
 * in an argmax cannot derail the comparison of everything after it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "decode.h"
#include "gs_wl.h"

void dec_layout_init(const dec_cfg_t *c, dec_layout_t *l)
{
	size_t D = (size_t)c->dim, F = DEC_MLP * D, V = (size_t)c->vocab, o = 0;

	l->ln1_g = o, o += D;
	l->ln1_b = o, o += D;
	l->wqkv = o, o += 3 * D * D;
	l->bqkv = o, o += 3 * D;
	l->wo = o, o += D * D;
	l->bo = o, o += D;
	l->ln2_g = o, o += D;
	l->ln2_b = o, o += D;
	l->w1 = o, o += F * D;
	l->b1 = o, o += F;
	l->w2 = o, o += D * F;
	l->b2 = o, o += D;
	l->layer = o;
	o *= (size_t)c->layers;
	l->emb = o, o += V * D;
	l->lnf_g = o, o += D;
	l->lnf_b = o, o += D;
	l->wlm = o, o += V * D;
	l->total = o;
}

static void dec_fill(gs_wl_rng_t *r, float *p, size_t n, float center, float scale)
{
	for (size_t i = 0; i < n; i++)
		p[i] = center + gs_wl_rng_float(r, scale);
}

void dec_weights_fill(const dec_cfg_t *c, const dec_layout_t *l, float *w)
{
	size_t D = (size_t)c->dim, F = DEC_MLP * D, V = (size_t)c->vocab;
	float sd = 1.0f / sqrtf((float)D), sf = 1.0f / sqrtf((float)F);
	gs_wl_rng_t r;

	gs_wl_rng_seed(&r, (uint64_t)c->seed, 2);
	for (long k = 0; k < c->layers; k++) {
		float *b = w + (size_t)k * l->layer;
		dec_fill(&r, b + l->ln1_g, D, 1.0f, 0.1f);
		dec_fill(&r, b + l->ln1_b, D, 0.0f, 0.1f);
		dec_fill(&r, b + l->wqkv, 3 * D * D, 0.0f, sd);
		dec_fill(&r, b + l->bqkv, 3 * D, 0.0f, 0.02f);
		dec_fill(&r, b + l->wo, D * D, 0.0f, sd);
		dec_fill(&r, b + l->bo, D, 0.0f, 0.02f);
		dec_fill(&r, b + l->ln2_g, D, 1.0f, 0.1f);
		dec_fill(&r, b + l->ln2_b, D, 0.0f, 0.1f);
		dec_fill(&r, b + l->w1, F * D, 0.0f, sd);
		dec_fill(&r, b + l->b1, F, 0.0f, 0.02f);
		dec_fill(&r, b + l->w2, D * F, 0.0f, sf);
		dec_fill(&r, b + l->b2, D, 0.0f, 0.02f);
	}
	dec_fill(&r, w + l->emb, V * D, 0.0f, 1.0f);
	dec_fill(&r, w + l->lnf_g, D, 1.0f, 0.1f);
	dec_fill(&r, w + l->lnf_b, D, 0.0f, 0.1f);
	dec_fill(&r, w + l->wlm, V * D, 0.0f, sd * 3.0f);
}

int dec_first_token(const dec_cfg_t *c, int thread)
{
	return (int)(((uint64_t)c->seed * 2654435761u + 7u * (uint64_t)thread) % (uint64_t)c->vocab);
}

/* The extra path of --branch. */
static void ref_branch(double *x, size_t D)
{
	for (size_t i = 0; i < D; i++)
		x[i] = (double)DEC_BRANCH_A * x[i] + (double)DEC_BRANCH_B;
}

bool dec_branch_next(const dec_cfg_t *c, int tok, long step)
{
	return c->branch && ((long)tok + step) % c->branch_k == 0;
}

static void ref_ln(double *h, const double *x, const float *g, const float *b, size_t D)
{
	double mean = 0, var = 0;
	for (size_t i = 0; i < D; i++)
		mean += x[i];
	mean /= (double)D;
	for (size_t i = 0; i < D; i++)
		var += (x[i] - mean) * (x[i] - mean);
	var /= (double)D;
	double rstd = 1.0 / sqrt(var + 1e-5);
	for (size_t i = 0; i < D; i++)
		h[i] = (x[i] - mean) * rstd * g[i] + b[i];
}

static void ref_matvec(double *y, const float *W, const double *x, const float *bias,
		       size_t rows, size_t cols)
{
	for (size_t r = 0; r < rows; r++) {
		double acc = 0;
		for (size_t k = 0; k < cols; k++)
			acc += (double)W[r * cols + k] * x[k];
		y[r] = acc + (bias != NULL ? bias[r] : 0.0);
	}
}

static double ref_maxabs_diff(const float *g, const double *r, size_t n, double *scale)
{
	double d = 0, s = 0;
	for (size_t i = 0; i < n; i++) {
		d = fmax(d, fabs((double)g[i] - r[i]));
		s = fmax(s, fabs(r[i]));
	}
	*scale = s;
	return d;
}

bool dec_ref_check(const dec_cfg_t *c, const dec_layout_t *l, const float *w, int thread,
		   const int *hist, const float *xg, const float *logits_g, FILE *log)
{
	size_t D = (size_t)c->dim, F = DEC_MLP * D, V = (size_t)c->vocab;
	size_t H = (size_t)c->heads, hd = D / H, ctx = (size_t)c->ctx, L = (size_t)c->layers;
	const double tol = 1e-3;
	double *x = calloc(D, sizeof(double)), *h = calloc(D, sizeof(double));
	double *qkv = calloc(3 * D, sizeof(double)), *att = calloc(D, sizeof(double));
	double *proj = calloc(D, sizeof(double)), *u = calloc(F, sizeof(double));
	double *logits = calloc(V, sizeof(double)), *p = calloc(ctx, sizeof(double));
	double *kc = calloc(L * ctx * D, sizeof(double)), *vc = calloc(L * ctx * D, sizeof(double));
	bool bad = false;
	long exact = 0;

	if (!x || !h || !qkv || !att || !proj || !u || !logits || !p || !kc || !vc) {
		fprintf(log, "decode --check: out of memory\n");
		exit(2);
	}
	for (long s = 0; s < c->steps && !bad; s++) {
		int tin = s == 0 ? dec_first_token(c, thread) : hist[s - 1];
		size_t pos = (size_t)s, T = pos + 1 < ctx ? pos + 1 : ctx, slot = pos % ctx;

		if (tin < 0 || (size_t)tin >= V) {
			fprintf(log, "decode --check: thread %d step %ld: token %d out of range\n",
				thread, s - 1, tin);
			bad = true;
			break;
		}
		for (size_t i = 0; i < D; i++)
			x[i] = w[l->emb + (size_t)tin * D + i];
		bool extra = s > 0 && dec_branch_next(c, hist[s - 1], s - 1);
		if (extra && !c->branch_late)
			ref_branch(x, D);
		for (size_t k = 0; k < L; k++) {
			const float *b = w + k * l->layer;
			double *kl = kc + k * ctx * D, *vl = vc + k * ctx * D;

			ref_ln(h, x, b + l->ln1_g, b + l->ln1_b, D);
			ref_matvec(qkv, b + l->wqkv, h, b + l->bqkv, 3 * D, D);
			for (size_t hh = 0; hh < H; hh++)
				for (size_t j = 0; j < hd / 2; j++) {
					double ang = (double)pos * pow(10000.0, -2.0 * (double)j / (double)hd);
					double sn = sin(ang), cs = cos(ang);
					for (size_t part = 0; part < 2; part++) {
						double *v = qkv + part * D + hh * hd;
						double a0 = v[j], b0 = v[j + hd / 2];
						v[j] = a0 * cs - b0 * sn;
						v[j + hd / 2] = a0 * sn + b0 * cs;
					}
				}
			for (size_t i = 0; i < D; i++) {
				kl[slot * D + i] = qkv[D + i];
				vl[slot * D + i] = qkv[2 * D + i];
			}
			for (size_t hh = 0; hh < H; hh++) {
				double m = -1e300, sum = 0;
				for (size_t t = 0; t < T; t++) {
					double acc = 0;
					for (size_t j = 0; j < hd; j++)
						acc += qkv[hh * hd + j] * kl[t * D + hh * hd + j];
					p[t] = acc / sqrt((double)hd);
					m = fmax(m, p[t]);
				}
				for (size_t t = 0; t < T; t++)
					sum += (p[t] = exp(p[t] - m));
				for (size_t j = 0; j < hd; j++) {
					double acc = 0;
					for (size_t t = 0; t < T; t++)
						acc += p[t] / sum * vl[t * D + hh * hd + j];
					att[hh * hd + j] = acc;
				}
			}
			ref_matvec(proj, b + l->wo, att, b + l->bo, D, D);
			for (size_t i = 0; i < D; i++)
				x[i] += proj[i];
			ref_ln(h, x, b + l->ln2_g, b + l->ln2_b, D);
			ref_matvec(u, b + l->w1, h, b + l->b1, F, D);
			for (size_t i = 0; i < F; i++) {
				double v = u[i];
				u[i] = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
			}
			ref_matvec(proj, b + l->w2, u, b + l->b2, D, F);
			for (size_t i = 0; i < D; i++)
				x[i] += proj[i];
		}
		ref_ln(h, x, w + l->lnf_g, w + l->lnf_b, D);
		if (extra && c->branch_late)
			ref_branch(h, D);
		ref_matvec(logits, w + l->wlm, h, NULL, V, D);
		size_t best = 0;
		for (size_t i = 1; i < V; i++)
			if (logits[i] > logits[best])
				best = i;
		int g = hist[s];
		if (g < 0 || (size_t)g >= V) {
			fprintf(log, "decode --check: thread %d step %ld: device token %d out of range\n",
				thread, s, g);
			bad = true;
		} else if ((size_t)g == best) {
			exact++;
		} else if (logits[g] < logits[best] - tol * fmax(1.0, fabs(logits[best]))) {
			fprintf(log, "decode --check: thread %d step %ld: device token %d (logit %.6g), "
				"reference %zu (logit %.6g)\n", thread, s, g, logits[g], best, logits[best]);
			bad = true;
		}
	}
	if (!bad) {
		double sx, sl;
		double dx = ref_maxabs_diff(xg, x, D, &sx), dl = ref_maxabs_diff(logits_g, logits, V, &sl);
		if (dx > tol * fmax(sx, 1e-30) || dl > tol * fmax(sl, 1e-30)) {
			fprintf(log, "decode --check: thread %d: final hidden max|diff| %.3g (scale %.3g), "
				"logits max|diff| %.3g (scale %.3g): beyond relative %g\n",
				thread, dx, sx, dl, sl, tol);
			bad = true;
		} else {
			fprintf(log, "decode --check: thread %d: %ld steps, %ld tokens exact, hidden rel %.2g, "
				"logits rel %.2g: ok\n", thread, c->steps, exact, dx / fmax(sx, 1e-30),
				dl / fmax(sl, 1e-30));
		}
	}
	free(x), free(h), free(qkv), free(att), free(proj), free(u);
	free(logits), free(p), free(kc), free(vc);
	return bad;
}
