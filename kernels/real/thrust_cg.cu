/*
 * Conjugate gradients with Thrust, as a CUDA C++ user writes them, for the
 * real-program suite: the 2-D Poisson equation on an N x N grid (five-point
 * stencil, matrix-free), float32, every vector a thrust::device_vector and
 * every operation a Thrust algorithm on thrust::device (the legacy default
 * stream) or, with --stream, on a stream of the program's own
 * (thrust::cuda::par.on).  One step is one CG iteration:
 *
 *   Ap   = A p                      thrust::transform over a counting iterator
 *   pAp  = <p, Ap>                  thrust::inner_product: a reduction, its
 *                                   temporary storage allocated and freed by
 *                                   Thrust, the result copied back (a sync)
 *   x   += alpha p; r -= alpha Ap   thrust::transform (alpha a functor member:
 *                                   a kernel argument that changes every step)
 *   rr   = <r, r>                   thrust::inner_product (a sync)
 *   p    = r + beta p               thrust::transform
 *
 * The iteration never stops on a tolerance (every run issues the same
 * work).  --out gets each step's <r, r> (the host's double) and, at the end,
 * x; --time prints one gs-wl line with the median step time.
 */
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/inner_product.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include <vector>

#include "real_common.h"

/* y[i] = (A v)[i]: 4 v[i] minus its four neighbours, zero outside the grid. */
struct stencil {
	const float *v;
	int n;
	__host__ __device__ float operator()(int i) const
	{
		int r = i / n, c = i % n;
		float s = 4.0f * v[i];
		if (r > 0)
			s -= v[i - n];
		if (r < n - 1)
			s -= v[i + n];
		if (c > 0)
			s -= v[i - 1];
		if (c < n - 1)
			s -= v[i + 1];
		return s;
	}
};

/* a x + y */
struct axpy {
	float a;
	__host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};

struct cg {
	int n, use_stream;
	cudaStream_t stream;
	thrust::device_vector<float> x, r, p, ap;
	double rr; /* <r, r> of the last step, for --out */
};

template <typename Policy> static double dot(const Policy &pol, const thrust::device_vector<float> &a,
					      const thrust::device_vector<float> &b)
{
	return (double)thrust::inner_product(pol, a.begin(), a.end(), b.begin(), 0.0f);
}

template <typename Policy> static void cg_iter(struct cg *c, const Policy &pol)
{
	int m = c->n * c->n;
	thrust::transform(pol, thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(m),
			  c->ap.begin(), stencil{thrust::raw_pointer_cast(c->p.data()), c->n});
	double pap = dot(pol, c->p, c->ap);
	float alpha = pap != 0.0 ? (float)(c->rr / pap) : 0.0f;
	thrust::transform(pol, c->p.begin(), c->p.end(), c->x.begin(), c->x.begin(), axpy{alpha});
	thrust::transform(pol, c->ap.begin(), c->ap.end(), c->r.begin(), c->r.begin(), axpy{-alpha});
	double rr = dot(pol, c->r, c->r);
	float beta = c->rr != 0.0 ? (float)(rr / c->rr) : 0.0f;
	thrust::transform(pol, c->p.begin(), c->p.end(), c->r.begin(), c->p.begin(), axpy{beta});
	c->rr = rr;
}

static void issue(void *ctx)
{
	struct cg *c = (struct cg *)ctx;
	if (c->use_stream)
		cg_iter(c, thrust::cuda::par.on(c->stream));
	else
		cg_iter(c, thrust::device);
}

static void usage(void)
{
	fprintf(stderr, "usage: thrust_cg [--steps N] [--warmup W] [--n GRID] [--stream] [--seed S] "
			"[--out FILE] [--time]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct real_opts o;
	real_opts_init(&o, 400, 20);
	struct cg c;
	c.n = 128;
	c.use_stream = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (real_common_arg(&o, argc, argv, &i))
			continue;
		if (!strcmp(argv[i], "--n"))
			c.n = real_int_arg(argv[i], v, 2), i++;
		else if (!strcmp(argv[i], "--stream"))
			c.use_stream = 1;
		else
			usage();
	}
	if (o.graph) {
		fprintf(stderr, "thrust_cg: no --graph: each step reads its reductions back\n");
		exit(1);
	}
	int m = c.n * c.n;
	std::vector<float> b((size_t)m);
	for (int i = 0; i < m; i++)
		b[(size_t)i] = real_hash_unit(o.seed, (unsigned long long)i);
	RC_CHECK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
	c.x.assign((size_t)m, 0.0f);
	c.r.assign(b.begin(), b.end()); /* r = b - A 0 */
	c.p = c.r;
	c.ap.assign((size_t)m, 0.0f);
	c.rr = dot(thrust::device, c.r, c.r);
	RC_CHECK(cudaDeviceSynchronize());

	FILE *out = real_out_open(o.out);
	cudaGraphExec_t exec;
	cudaStream_t s = c.use_stream ? c.stream : (cudaStream_t)0;
	double *t = real_run_steps(&o, s, issue, &c, out, &c.rr, sizeof(c.rr), &exec);
	std::vector<float> x((size_t)m);
	thrust::copy(c.x.begin(), c.x.end(), x.begin());
	real_out_write(out, x.data(), x.size() * sizeof(float));
	real_out_close(out);
	if (o.time) {
		double med, mean;
		real_stats(t, o.steps, &med, &mean);
		printf("gs-wl: thrust_cg variant=eager n=%d stream=%s steps=%d warmup=%d "
		       "median_us=%.3f mean_us=%.3f rr=%.6e\n",
		       c.n, c.use_stream ? "own" : "legacy", o.steps, o.warmup, med, mean, c.rr);
	}
	free(t);
	c.x.clear();
	c.x.shrink_to_fit();
	c.r.clear();
	c.r.shrink_to_fit();
	c.p.clear();
	c.p.shrink_to_fit();
	c.ap.clear();
	c.ap.shrink_to_fit();
	RC_CHECK(cudaStreamDestroy(c.stream));
	return 0;
}
