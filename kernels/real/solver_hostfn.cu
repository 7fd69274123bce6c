/*
 * A time-stepped heat solver written as a CUDA C user writes an
 * asynchronous one, for the real-program suite: the host never waits inside
 * a step; each iteration's residual goes to pinned memory by an async copy
 * and, with --hostfn, a host function (cudaLaunchHostFunc) queued behind the
 * copy logs it, in stream order, while the GPU goes on.  One step is
 * --check iterations, then one stream synchronization and the step's log
 * read back.  One iteration, all on the program's own stream:
 *
 *   tick      <<<1, 1>>>         the device clock += 1 (the source's phase)
 *   source    <<<grid, 256>>>    f = sin(clock * dt) g  (g fixed, random)
 *   jacobi    <<<grid, 256>>>    --inner sweeps, ping-pong between u and v
 *   with --async-alloc: cudaMallocAsync a scratch grid, cudaMemsetAsync it,
 *             smooth u into it, blend it back into u, cudaFreeAsync
 *             (--scratch MODE: other ways to get that grid; --scratch-fill
 *             copy: fill it with a copy of g instead of the memset)
 *   resid     <<<blocks, 256>>>  per-block sums of (A u - f)^2
 *   reduce    <<<1, 256>>>       the blocks' sums in a fixed order (no
 *                                atomics: every run gets the same bits)
 *   cudaMemcpyAsync              the residual to pinned host memory
 *   with --hostfn: cudaLaunchHostFunc: the host function copies that
 *             pinned value into the step's log (reading it before the copy
 *             landed would log the previous step's value)
 *
 * --managed allocates u, v, f and g with cudaMallocManaged (initialised by
 * the host, prefetched to the GPU on the stream).  --graph captures one
 * step (host function, allocation and free included: a host node and
 * memory nodes) and launches it.  --out gets every step's log (with
 * --hostfn the host function's copies, else the pinned residuals the
 * copies left) and at the end u; --time prints a gs-wl line.
 */
#include <math.h>

#include "real_common.h"

#define SOLVER_BLOCK 256

/* --scratch: none; cudaMallocAsync/cudaFreeAsync every iteration (the
 * default of --async-alloc); cudaMalloc/cudaFree every iteration; one grid
 * from cudaMalloc, or from cudaMallocAsync, kept; two kept grids taken in
 * turn step by step (the pointer rotates). */
enum { SCRATCH_NONE, SCRATCH_ASYNC, SCRATCH_MALLOC, SCRATCH_FIXED, SCRATCH_POOL_FIXED, SCRATCH_ROTATE };
static const char *const scratch_names[] = { "none", "async", "malloc", "fixed", "pool-fixed", "rotate" };

static int scratch_mode(const char *v)
{
	for (int k = 0; k < (int)(sizeof(scratch_names) / sizeof(scratch_names[0])); k++)
		if (!strcmp(v, scratch_names[k]))
			return k;
	return -1;
}

struct solver {
	int n, inner, check, hostfn, managed;
	int scratch;              /* SCRATCH_*: where the scratch grid comes from */
	int fill_copy;            /* --scratch-fill copy: a copy of g, not a memset */
	unsigned long long issued; /* steps issued (rotate: which grid) */
	cudaStream_t s;
	float *u, *v, *f, *g;     /* n x n grids */
	float *partial;           /* per-block sums */
	float *fixed[2];          /* fixed, pool-fixed, rotate: allocated once */
	float *res_dev;           /* check residuals, one per iteration of a step */
	float *res_host;          /* pinned: where the copies land */
	float *log;               /* what the host function copied (the step's log) */
	int *clock;               /* the device clock */
	unsigned long long logged;
	int blocks;
};

__global__ void tick(int *clock)
{
	*clock += 1;
}

__global__ void source(float *f, const float *g, int m, const int *clock, float dt)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < m)
		f[i] = sinf((float)*clock * dt) * g[i];
}

/* One Jacobi sweep of (4 + h) u - neighbours = f, zero outside the grid. */
__global__ void jacobi(const float *in, float *out, const float *f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n * n)
		return;
	int r = i / n, c = i % n;
	float s = f[i];
	if (r > 0)
		s += in[i - n];
	if (r < n - 1)
		s += in[i + n];
	if (c > 0)
		s += in[i - 1];
	if (c < n - 1)
		s += in[i + 1];
	out[i] = 0.2f * in[i] + 0.8f * s / 4.25f;
}

__global__ void smooth(const float *u, float *tmp, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n * n)
		return;
	int c = i % n;
	float l = c > 0 ? u[i - 1] : u[i], r = c < n - 1 ? u[i + 1] : u[i];
	tmp[i] += 0.25f * l + 0.5f * u[i] + 0.25f * r;
}

__global__ void blend(float *u, const float *tmp, int m)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < m)
		u[i] = 0.9f * u[i] + 0.1f * tmp[i];
}

/* The block's sum of each thread's e, in a fixed order (a tree in shared
 * memory): every run gets the same bits.  Every thread gets the sum. */
__device__ static float block_sum(float e)
{
	__shared__ float sh[SOLVER_BLOCK];
	sh[threadIdx.x] = e;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k /= 2) {
		if ((int)threadIdx.x < k)
			sh[threadIdx.x] += sh[threadIdx.x + k];
		__syncthreads();
	}
	return sh[0];
}

__global__ void resid(const float *u, const float *f, int n, float *partial)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float e = 0.0f;
	if (i < n * n) {
		int r = i / n, c = i % n;
		float a = 4.25f * u[i];
		if (r > 0)
			a -= u[i - n];
		if (r < n - 1)
			a -= u[i + n];
		if (c > 0)
			a -= u[i - 1];
		if (c < n - 1)
			a -= u[i + 1];
		e = (a - f[i]) * (a - f[i]);
	}
	float sum = block_sum(e);
	if (threadIdx.x == 0)
		partial[blockIdx.x] = sum;
}

__global__ void reduce(const float *partial, int nb, float *res)
{
	float e = 0.0f;
	for (int i = (int)threadIdx.x; i < nb; i += blockDim.x)
		e += partial[i];
	float sum = block_sum(e);
	if (threadIdx.x == 0)
		*res = sqrtf(sum);
}

/* The host function: the residual the copy before it left in pinned memory
 * goes into the step's log.  Stream order puts it after that copy. */
static void CUDART_CB log_residual(void *p)
{
	struct solver *S = (struct solver *)p;
	int j = (int)(S->logged % (unsigned long long)S->check);
	S->log[j] = S->res_host[j];
	S->logged++;
}

static void iterate(struct solver *S, int j)
{
	int m = S->n * S->n;
	unsigned grid = (unsigned)S->blocks;
	tick<<<1, 1, 0, S->s>>>(S->clock);
	RC_CHECK(cudaGetLastError());
	source<<<grid, SOLVER_BLOCK, 0, S->s>>>(S->f, S->g, m, S->clock, 0.05f);
	RC_CHECK(cudaGetLastError());
	for (int k = 0; k < S->inner; k++) {
		const float *in = k % 2 ? S->v : S->u;
		float *out = k % 2 ? S->u : S->v;
		jacobi<<<grid, SOLVER_BLOCK, 0, S->s>>>(in, out, S->f, S->n);
		RC_CHECK(cudaGetLastError());
	}
	if (S->scratch != SCRATCH_NONE) {
		float *tmp = S->fixed[S->scratch == SCRATCH_ROTATE ? S->issued % 2 : 0];
		if (S->scratch == SCRATCH_MALLOC)
			RC_CHECK(cudaMalloc((void **)&tmp, (size_t)m * sizeof(float)));
		else if (S->scratch == SCRATCH_ASYNC)
			RC_CHECK(cudaMallocAsync((void **)&tmp, (size_t)m * sizeof(float), S->s));
		if (S->fill_copy)
			RC_CHECK(cudaMemcpyAsync(tmp, S->g, (size_t)m * sizeof(float), cudaMemcpyDeviceToDevice, S->s));
		else
			RC_CHECK(cudaMemsetAsync(tmp, 0, (size_t)m * sizeof(float), S->s));
		smooth<<<grid, SOLVER_BLOCK, 0, S->s>>>(S->u, tmp, S->n);
		RC_CHECK(cudaGetLastError());
		blend<<<grid, SOLVER_BLOCK, 0, S->s>>>(S->u, tmp, m);
		RC_CHECK(cudaGetLastError());
		if (S->scratch == SCRATCH_MALLOC)
			RC_CHECK(cudaFree(tmp));
		else if (S->scratch == SCRATCH_ASYNC)
			RC_CHECK(cudaFreeAsync(tmp, S->s));
	}
	resid<<<grid, SOLVER_BLOCK, 0, S->s>>>(S->u, S->f, S->n, S->partial);
	RC_CHECK(cudaGetLastError());
	reduce<<<1, SOLVER_BLOCK, 0, S->s>>>(S->partial, S->blocks, S->res_dev + j);
	RC_CHECK(cudaGetLastError());
	RC_CHECK(cudaMemcpyAsync(S->res_host + j, S->res_dev + j, sizeof(float), cudaMemcpyDeviceToHost,
				 S->s));
	if (S->hostfn)
		RC_CHECK(cudaLaunchHostFunc(S->s, log_residual, S));
}

static void issue(void *ctx)
{
	struct solver *S = (struct solver *)ctx;
	for (int j = 0; j < S->check; j++)
		iterate(S, j);
	S->issued++;
}

static float *grid_alloc(const struct solver *S, size_t bytes)
{
	float *p;
	if (S->managed)
		RC_CHECK(cudaMallocManaged((void **)&p, bytes, cudaMemAttachGlobal));
	else
		RC_CHECK(cudaMalloc((void **)&p, bytes));
	return p;
}

/* Fill a grid from the host (directly where it is managed). */
static void grid_fill(const struct solver *S, float *d, const float *h, size_t m)
{
	if (S->managed) {
		memcpy(d, h, m * sizeof(float));
		cudaMemLocation loc;
		int dev;
		RC_CHECK(cudaGetDevice(&dev));
		loc.type = cudaMemLocationTypeDevice;
		loc.id = dev;
		RC_CHECK(cudaMemPrefetchAsync(d, m * sizeof(float), loc, 0, S->s));
	} else {
		RC_CHECK(cudaMemcpyAsync(d, h, m * sizeof(float), cudaMemcpyHostToDevice, S->s));
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: solver_hostfn [--steps N] [--warmup W] [--n GRID] [--inner EVEN] "
			"[--check K] [--hostfn] [--managed] [--async-alloc] "
			"[--scratch none|async|malloc|fixed|pool-fixed|rotate] [--scratch-fill memset|copy] "
			"[--graph] [--seed S] "
			"[--out FILE] [--time]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct real_opts o;
	real_opts_init(&o, 100, 10);
	struct solver S;
	memset(&S, 0, sizeof(S));
	S.n = 256;
	S.inner = 4;
	S.check = 8;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (real_common_arg(&o, argc, argv, &i))
			continue;
		if (!strcmp(argv[i], "--n"))
			S.n = real_int_arg(argv[i], v, 4), i++;
		else if (!strcmp(argv[i], "--inner"))
			S.inner = real_int_arg(argv[i], v, 2), i++;
		else if (!strcmp(argv[i], "--check"))
			S.check = real_int_arg(argv[i], v, 1), i++;
		else if (!strcmp(argv[i], "--hostfn"))
			S.hostfn = 1;
		else if (!strcmp(argv[i], "--managed"))
			S.managed = 1;
		else if (!strcmp(argv[i], "--async-alloc"))
			S.scratch = SCRATCH_ASYNC;
		else if (!strcmp(argv[i], "--scratch") && v && scratch_mode(v) >= 0)
			S.scratch = scratch_mode(v), i++;
		else if (!strcmp(argv[i], "--scratch-fill") && v && (!strcmp(v, "memset") || !strcmp(v, "copy")))
			S.fill_copy = !strcmp(v, "copy"), i++;
		else
			usage();
	}
	if (S.inner % 2) {
		fprintf(stderr, "solver_hostfn: --inner must be even (the sweeps end in u)\n");
		exit(1);
	}
	if (o.graph && S.scratch == SCRATCH_MALLOC) {
		fprintf(stderr, "solver_hostfn: --graph cannot capture cudaMalloc (--scratch malloc)\n");
		exit(1);
	}
	if (S.n > 8192) {
		fprintf(stderr, "solver_hostfn: --n at most 8192\n");
		exit(1);
	}
	size_t m = (size_t)S.n * (size_t)S.n;
	S.blocks = (int)((m + SOLVER_BLOCK - 1) / SOLVER_BLOCK);
	RC_CHECK(cudaStreamCreateWithFlags(&S.s, cudaStreamNonBlocking));
	S.u = grid_alloc(&S, m * sizeof(float));
	S.v = grid_alloc(&S, m * sizeof(float));
	S.f = grid_alloc(&S, m * sizeof(float));
	S.g = grid_alloc(&S, m * sizeof(float));
	RC_CHECK(cudaMalloc((void **)&S.partial, (size_t)S.blocks * sizeof(float)));
	for (int k = 0; k < (S.scratch == SCRATCH_ROTATE ? 2 : 1); k++) {
		if (S.scratch == SCRATCH_POOL_FIXED)
			RC_CHECK(cudaMallocAsync((void **)&S.fixed[k], m * sizeof(float), S.s));
		else if (S.scratch == SCRATCH_FIXED || S.scratch == SCRATCH_ROTATE)
			RC_CHECK(cudaMalloc((void **)&S.fixed[k], m * sizeof(float)));
	}
	RC_CHECK(cudaMalloc((void **)&S.res_dev, (size_t)S.check * sizeof(float)));
	RC_CHECK(cudaMalloc((void **)&S.clock, sizeof(int)));
	RC_CHECK(cudaMemsetAsync(S.clock, 0, sizeof(int), S.s));
	RC_CHECK(cudaHostAlloc((void **)&S.res_host, (size_t)S.check * sizeof(float), cudaHostAllocDefault));
	S.log = (float *)real_calloc((size_t)S.check, sizeof(float));
	float *h = (float *)real_calloc(m, sizeof(float));
	for (size_t i = 0; i < m; i++)
		h[i] = real_hash_unit(o.seed, i);
	grid_fill(&S, S.g, h, m);
	memset(h, 0, m * sizeof(float));
	grid_fill(&S, S.u, h, m);
	grid_fill(&S, S.v, h, m);
	grid_fill(&S, S.f, h, m);
	RC_CHECK(cudaStreamSynchronize(S.s));
	free(h);

	FILE *out = real_out_open(o.out);
	cudaGraphExec_t exec;
	const void *logged = S.hostfn ? (const void *)S.log : (const void *)S.res_host;
	double *t = real_run_steps(&o, S.s, issue, &S, out, logged, (size_t)S.check * sizeof(float), &exec);
	float *u = (float *)real_calloc(m, sizeof(float));
	RC_CHECK(cudaMemcpy(u, S.u, m * sizeof(float), cudaMemcpyDeviceToHost));
	real_out_write(out, u, m * sizeof(float));
	real_out_close(out);
	if (S.hostfn && S.logged != (unsigned long long)(o.warmup + o.steps) * (unsigned long long)S.check) {
		fprintf(stderr, "solver_hostfn: the host function ran %llu times, not %llu\n", S.logged,
			(unsigned long long)(o.warmup + o.steps) * (unsigned long long)S.check);
		exit(2);
	}
	if (o.time) {
		double med, mean;
		real_stats(t, o.steps, &med, &mean);
		printf("gs-wl: solver_hostfn variant=%s n=%d inner=%d check=%d hostfn=%d managed=%d "
		       "scratch=%s fill=%s steps=%d warmup=%d median_us=%.3f mean_us=%.3f res=%.6e\n",
		       o.graph ? "graph" : "eager", S.n, S.inner, S.check, S.hostfn, S.managed,
		       scratch_names[S.scratch], S.fill_copy ? "copy" : "memset",
		       o.steps, o.warmup, med, mean, (double)S.res_host[S.check - 1]);
	}
	free(t);
	free(u);
	free(S.log);
	if (exec)
		RC_CHECK(cudaGraphExecDestroy(exec));
	RC_CHECK(cudaFreeHost(S.res_host));
	RC_CHECK(cudaFree(S.clock));
	RC_CHECK(cudaFree(S.res_dev));
	RC_CHECK(cudaFree(S.partial));
	for (int k = 0; k < 2; k++)
		if (S.fixed[k])
			RC_CHECK(cudaFree(S.fixed[k]));
	RC_CHECK(cudaFree(S.g));
	RC_CHECK(cudaFree(S.f));
	RC_CHECK(cudaFree(S.v));
	RC_CHECK(cudaFree(S.u));
	RC_CHECK(cudaStreamDestroy(S.s));
	return 0;
}
