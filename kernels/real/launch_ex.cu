/*
 * launch_ex: Hopper launch features through the CUDA runtime, for the
 * real-program suite.  A step is --pairs pairs of kernels on one
 * non-blocking stream, each launched with cudaLaunchKernelEx:
 *   mix:    thread-block clusters (cudaLaunchAttributeClusterDimension); each
 *           block sums its slice, the cluster exchanges the sums through
 *           distributed shared memory (cooperative_groups map_shared_rank,
 *           cluster.sync) and every element is mixed with its cluster's mean;
 *   smooth: programmatic dependent launch
 *           (cudaLaunchAttributeProgrammaticStreamSerialization): it may start
 *           while mix is still running, does its independent preamble, then
 *           waits in cudaGridDependencySynchronize() before reading mix's
 *           output; both kernels call cudaTriggerProgrammaticLaunchCompletion()
 *           once their writes are issued, so the next launch may start early.
 * With --coop, a cooperative kernel follows the pairs (cudaLaunchCooperativeKernel):
 * each block sums its slice, the grid synchronizes (cooperative_groups
 * grid.sync) and every element is moved towards the grid's mean, as the
 * semi-persistent normalization kernels of cuDNN do.
 * Then a plain <<<>>> launch sums each cluster's slice and the sums are read
 * back into pinned memory with a stream sync.  What graphshim sees: the
 * runtime's cuLaunchKernelEx with cluster and programmatic-serialization
 * attributes, cuLaunchKernel, and a pinned DtoH copy, from a statically
 * linked CUDA runtime (nvcc's default) that finds the driver through
 * cuGetProcAddress.  --graph captures one step (cudaStreamBeginCapture) and
 * replays it with cudaGraphLaunch; captured PDL launches become programmatic
 * edges of the graph.
 *
 *   launch_ex [--steps 300] [--warmup 20] [--blocks 128] [--cluster 4]
 *             [--pairs 8] [--no-pdl] [--coop] [--seed S] [--out FILE] [--time] [--graph]
 *
 * --out: every step's cluster sums (float32), then the final state.  The
 * reductions run in a fixed order, so every process writes the same bytes.
 */
#include <cooperative_groups.h>
#include <math.h>

#include "real_common.h"

namespace cg = cooperative_groups;

#define THREADS 256

/* Sum over the block, in a fixed order (warp shuffles, then warp 0). */
__device__ static float block_sum(float v)
{
	__shared__ float warp_sums[THREADS / 32];
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		warp_sums[threadIdx.x >> 5] = v;
	__syncthreads();
	float t = 0;
	for (int w = 0; w < THREADS / 32; w++)
		t += warp_sums[w];
	return t;
}

__global__ void __launch_bounds__(THREADS) mix_kernel(const float *x, float *y, float a)
{
	cg::cluster_group cluster = cg::this_cluster();
	__shared__ float part;
	unsigned rank = cluster.block_rank();
	/* Preamble that needs nothing from the previous kernel. */
	float bias = 0.001f * (float)rank;
	cudaGridDependencySynchronize();
	int i = blockIdx.x * THREADS + threadIdx.x;
	float v = x[i];
	float s = block_sum(v);
	if (threadIdx.x == 0)
		part = s;
	cluster.sync();
	float total = 0;
	for (unsigned r = 0; r < cluster.num_blocks(); r++)
		total += *cluster.map_shared_rank(&part, r);
	/* Our shared memory must outlive the other blocks' reads of it. */
	cluster.sync();
	y[i] = a * v + (1.0f - a) * total / (float)(THREADS * cluster.num_blocks()) + bias;
	cudaTriggerProgrammaticLaunchCompletion();
}

__global__ void __launch_bounds__(THREADS) smooth_kernel(const float *y, float *x, int n, float w)
{
	int i = blockIdx.x * THREADS + threadIdx.x;
	/* Independent preamble: this element's weight. */
	float wi = w * (1.0f + 0.125f * (float)(i & 7));
	cudaGridDependencySynchronize();
	float l = y[i > 0 ? i - 1 : n - 1], c = y[i], r = y[i + 1 < n ? i + 1 : 0];
	x[i] = tanhf(0.25f * l + 0.5f * c + 0.25f * r + wi * c);
	cudaTriggerProgrammaticLaunchCompletion();
}

__global__ void __launch_bounds__(THREADS) cluster_sums_kernel(const float *x, float *sums, int per)
{
	/* One block a cluster's slice of per elements. */
	float v = 0;
	for (int i = threadIdx.x; i < per; i += THREADS)
		v += x[(size_t)blockIdx.x * per + i];
	float s = block_sum(v);
	if (threadIdx.x == 0)
		sums[blockIdx.x] = s;
}

/* The whole grid's mean, after a grid-wide barrier: a cooperative launch. */
__global__ void __launch_bounds__(THREADS) center_kernel(float *x, float *part, float a)
{
	cg::grid_group grid = cg::this_grid();
	int i = blockIdx.x * THREADS + threadIdx.x;
	float v = x[i];
	float s = block_sum(v);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
	grid.sync();
	float total = 0;
	for (unsigned b = 0; b < gridDim.x; b++) /* the same order in every block */
		total += part[b];
	x[i] = v - a * total / (float)(gridDim.x * THREADS);
}

__global__ void init_kernel(float *x, int n, unsigned long long seed)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = real_hash_unit(seed, (unsigned long long)i);
}

struct prog {
	int blocks, cluster, pairs, pdl, coop, n;
	cudaStream_t stream;
	float *x, *y, *sums, *sums_host, *part;
};

static void launch_pair(struct prog *p, int k)
{
	cudaLaunchAttribute attr[2] = {};
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = dim3((unsigned)p->blocks);
	cfg.blockDim = dim3(THREADS);
	cfg.stream = p->stream;
	cfg.attrs = attr;

	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = (unsigned)p->cluster;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attr[1].val.programmaticStreamSerializationAllowed = 1;
	/* The step's first mix follows a plain launch and a copy: no PDL. */
	cfg.numAttrs = p->pdl && k > 0 ? 2 : 1;
	RC_CHECK(cudaLaunchKernelEx(&cfg, mix_kernel, (const float *)p->x, p->y, 0.5f + 0.03125f * (float)k));

	attr[0] = attr[1];
	cfg.numAttrs = p->pdl ? 1 : 0;
	RC_CHECK(cudaLaunchKernelEx(&cfg, smooth_kernel, (const float *)p->y, p->x, p->n,
				    0.0625f * (float)(k + 1)));
}

static void issue_step(void *ctx)
{
	struct prog *p = (struct prog *)ctx;
	int clusters = p->blocks / p->cluster;
	for (int k = 0; k < p->pairs; k++)
		launch_pair(p, k);
	if (p->coop) {
		float a = 0.25f;
		void *args[] = {&p->x, &p->part, &a};
		RC_CHECK(cudaLaunchCooperativeKernel((const void *)center_kernel, dim3((unsigned)p->blocks),
						     dim3(THREADS), args, 0, p->stream));
	}
	cluster_sums_kernel<<<clusters, THREADS, 0, p->stream>>>(p->x, p->sums, p->cluster * THREADS);
	RC_CHECK(cudaGetLastError());
	RC_CHECK(cudaMemcpyAsync(p->sums_host, p->sums, (size_t)clusters * sizeof(float),
				 cudaMemcpyDeviceToHost, p->stream));
}

static void usage(void)
{
	fprintf(stderr, "usage: launch_ex [--steps N] [--warmup W] [--blocks B] [--cluster C] [--pairs P]\n"
			"                 [--no-pdl] [--coop] [--seed S] [--out FILE] [--time] [--graph]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct real_opts o;
	struct prog p;
	real_opts_init(&o, 300, 20);
	memset(&p, 0, sizeof(p));
	p.blocks = 128;
	p.cluster = 4;
	p.pairs = 8;
	p.pdl = 1;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (real_common_arg(&o, argc, argv, &i))
			continue;
		if (!strcmp(argv[i], "--blocks"))
			p.blocks = real_int_arg(argv[i], v, 1), i++;
		else if (!strcmp(argv[i], "--cluster"))
			p.cluster = real_int_arg(argv[i], v, 1), i++;
		else if (!strcmp(argv[i], "--pairs"))
			p.pairs = real_int_arg(argv[i], v, 1), i++;
		else if (!strcmp(argv[i], "--no-pdl"))
			p.pdl = 0;
		else if (!strcmp(argv[i], "--coop"))
			p.coop = 1;
		else
			usage();
	}
	if (p.cluster > 8 || p.blocks % p.cluster) {
		fprintf(stderr, "--cluster must be 1-8 (portable sizes) and divide --blocks\n");
		exit(1);
	}
	p.n = p.blocks * THREADS;
	int clusters = p.blocks / p.cluster;

	int dev, cc_major;
	RC_CHECK(cudaGetDevice(&dev));
	RC_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, dev));
	if (cc_major < 9) {
		fprintf(stderr, "launch_ex: clusters and programmatic launch need compute capability 9.0+\n");
		exit(2);
	}
	if (p.coop) {
		int coop = 0, sms = 0, per_sm = 0;
		RC_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
		RC_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
		RC_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, center_kernel, THREADS, 0));
		if (!coop || p.blocks > sms * per_sm) {
			fprintf(stderr, "launch_ex: --coop needs cooperative launch and --blocks at most %d\n",
				sms * per_sm);
			exit(2);
		}
		RC_CHECK(cudaMalloc((void **)&p.part, (size_t)p.blocks * sizeof(float)));
	}
	RC_CHECK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
	RC_CHECK(cudaMalloc((void **)&p.x, (size_t)p.n * sizeof(float)));
	RC_CHECK(cudaMalloc((void **)&p.y, (size_t)p.n * sizeof(float)));
	RC_CHECK(cudaMalloc((void **)&p.sums, (size_t)clusters * sizeof(float)));
	RC_CHECK(cudaMallocHost((void **)&p.sums_host, (size_t)clusters * sizeof(float)));
	init_kernel<<<(p.n + 255) / 256, 256, 0, p.stream>>>(p.x, p.n, o.seed);
	RC_CHECK(cudaGetLastError());
	RC_CHECK(cudaMemsetAsync(p.y, 0, (size_t)p.n * sizeof(float), p.stream));
	RC_CHECK(cudaStreamSynchronize(p.stream));

	FILE *out = real_out_open(o.out);
	cudaGraphExec_t exec;
	double *t = real_run_steps(&o, p.stream, issue_step, &p, out, p.sums_host,
				   (size_t)clusters * sizeof(float), &exec);
	/* The final state, every element. */
	float *fin = (float *)real_calloc((size_t)p.n, sizeof(float));
	RC_CHECK(cudaMemcpy(fin, p.x, (size_t)p.n * sizeof(float), cudaMemcpyDeviceToHost));
	real_out_write(out, fin, (size_t)p.n * sizeof(float));
	real_out_close(out);
	free(fin);
	if (o.time) {
		double med, mean;
		real_stats(t, o.steps, &med, &mean);
		printf("gs-wl: launch_ex variant=%s blocks=%d cluster=%d pairs=%d pdl=%d coop=%d steps=%d "
		       "warmup=%d kernels_per_step=%d median_us=%.3f mean_us=%.3f\n",
		       o.graph ? "graph" : "eager", p.blocks, p.cluster, p.pairs, p.pdl, p.coop, o.steps,
		       o.warmup, 2 * p.pairs + 1 + p.coop, med, mean);
	}
	free(t);
	if (exec)
		RC_CHECK(cudaGraphExecDestroy(exec));
	if (p.part)
		RC_CHECK(cudaFree(p.part));
	RC_CHECK(cudaStreamDestroy(p.stream));
	return 0;
}
