/*
 * cublas_bias: a small-batch MLP step the way cuBLAS users write it, for the
 * real-program suite.  Each step runs --layers cuBLASLt matmuls with a bias
 * epilogue (RELU_BIAS, the last one BIAS) on a non-default stream, then a
 * cublasGemmEx projection and one small kernel of our own that squashes the
 * result (tanh) into the next step's input, and reads the projection back
 * into pinned memory with a stream sync.  Every step depends on the one
 * before, so any reordering shows in the bytes read back.
 *
 * What it exercises: cuBLAS and cuBLASLt carry their own statically linked
 * CUDA runtime and, on Hopper, launch through cuLaunchKernelEx with launch
 * attributes (bf16/tf32 tensor-core kernels use clusters); our kernel goes
 * through this program's cudaLaunchKernel.  --graph captures one step with
 * cudaStreamBeginCapture and replays it with cudaGraphLaunch, the
 * hand-written alternative to graphshim.
 *
 *   cublas_bias [--steps 300] [--warmup 20] [--batch 8] [--dim 512]
 *               [--layers 4] [--dtype bf16|tf32|f32] [--seed S]
 *               [--out FILE] [--time] [--graph]
 *
 * Determinism: the cuBLASLt algorithm comes from the heuristic with split-K
 * reductions excluded (CUBLASLT_REDUCTION_SCHEME_NONE; where no algorithm is
 * left it says so and allows them), the workspace is fixed, and cuBLAS
 * gives bitwise-identical results on one GPU model, so the same seed reads
 * back the same bytes in every process.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <math.h>

#include "real_common.h"

#define BL_CHECK(call)                                                              \
	do {                                                                        \
		cublasStatus_t bl_s_ = (call);                                      \
		if (bl_s_ != CUBLAS_STATUS_SUCCESS) {                               \
			fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,\
				#call, cublasGetStatusName(bl_s_));                 \
			exit(2);                                                    \
		}                                                                   \
	} while (0)

enum dtype { DT_BF16, DT_TF32, DT_F32 };

/* Fill n elements with seeded values in [-scale, scale) (+ center). */
template <typename T>
__global__ void init_kernel(T *p, size_t n, unsigned long long seed, float scale, float center)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = (T)(center + scale * real_hash_unit(seed, i));
}

/*
 * The step's last kernel: y is the projection (column-major dim x batch);
 * the next input is tanh(y / 4) (bounded, so a long run stays finite), and
 * y is also copied as float for the read-back.
 */
template <typename T>
__global__ void feedback_kernel(const T *y, T *x, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = (float)y[i];
		out[i] = v;
		x[i] = (T)tanhf(v * 0.25f);
	}
}

struct net {
	int batch, dim, layers;
	enum dtype dt;
	size_t esize;
	cudaDataType_t ctype;
	cublasComputeType_t lt_compute;
	cublasLtHandle_t lt;
	cublasHandle_t bl;
	cudaStream_t stream;
	void *ws;
	size_t ws_size;
	void **w, **b, **act; /* layers weights and biases; layers + 1 activations */
	void *wout, *y;
	float *out_dev, *out_host;
	cublasLtMatmulDesc_t *desc;
	cublasLtMatrixLayout_t lw, lx;
	cublasLtMatmulAlgo_t *algo;
};

static void *dev_alloc_init(struct net *n, size_t count, unsigned long long seed, float scale,
			    float center)
{
	void *p;
	unsigned blocks = (unsigned)((count + 255) / 256);
	RC_CHECK(cudaMalloc(&p, count * n->esize));
	if (n->dt == DT_BF16)
		init_kernel<__nv_bfloat16><<<blocks, 256, 0, n->stream>>>((__nv_bfloat16 *)p, count, seed,
									 scale, center);
	else
		init_kernel<float><<<blocks, 256, 0, n->stream>>>((float *)p, count, seed, scale, center);
	RC_CHECK(cudaGetLastError());
	return p;
}

static void net_init(struct net *n, unsigned long long seed)
{
	const int D = n->dim, B = n->batch;
	n->esize = n->dt == DT_BF16 ? 2 : 4;
	n->ctype = n->dt == DT_BF16 ? CUDA_R_16BF : CUDA_R_32F;
	n->lt_compute = n->dt == DT_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
	RC_CHECK(cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking));
	BL_CHECK(cublasLtCreate(&n->lt));
	BL_CHECK(cublasCreate(&n->bl));
	BL_CHECK(cublasSetStream(n->bl, n->stream));
	/* A workspace of our own: cuBLAS would otherwise allocate one during a
	 * capture, and a fixed size keeps the algorithm choice fixed. */
	n->ws_size = 32u << 20;
	RC_CHECK(cudaMalloc(&n->ws, n->ws_size));
	BL_CHECK(cublasSetWorkspace(n->bl, n->ws, n->ws_size));
	BL_CHECK(cublasSetMathMode(n->bl, n->dt == DT_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));

	n->w = (void **)real_calloc((size_t)n->layers, sizeof(void *));
	n->b = (void **)real_calloc((size_t)n->layers, sizeof(void *));
	n->act = (void **)real_calloc((size_t)n->layers + 1, sizeof(void *));
	n->desc = (cublasLtMatmulDesc_t *)real_calloc((size_t)n->layers, sizeof(*n->desc));
	n->algo = (cublasLtMatmulAlgo_t *)real_calloc((size_t)n->layers, sizeof(*n->algo));
	/* He-uniform weights keep the ReLU layers' scale; the input is in [-1, 1). */
	float ws = sqrtf(6.0f / (float)D);
	for (int l = 0; l < n->layers; l++) {
		n->w[l] = dev_alloc_init(n, (size_t)D * D, seed * 1000 + 2 * l, ws, 0);
		n->b[l] = dev_alloc_init(n, (size_t)D, seed * 1000 + 2 * l + 1, 0.1f, 0.02f);
	}
	for (int l = 0; l <= n->layers; l++)
		n->act[l] = dev_alloc_init(n, (size_t)D * B, seed * 1000 + 500 + l, 1.0f, 0);
	n->wout = dev_alloc_init(n, (size_t)D * D, seed * 1000 + 900, sqrtf(3.0f / (float)D), 0);
	n->y = dev_alloc_init(n, (size_t)D * B, seed * 1000 + 901, 0, 0);
	RC_CHECK(cudaMalloc((void **)&n->out_dev, (size_t)D * B * sizeof(float)));
	RC_CHECK(cudaMallocHost((void **)&n->out_host, (size_t)D * B * sizeof(float)));
	RC_CHECK(cudaStreamSynchronize(n->stream));

	/* Column-major: W is D x D, activations D x B (a column a sample). */
	BL_CHECK(cublasLtMatrixLayoutCreate(&n->lw, n->ctype, D, D, D));
	BL_CHECK(cublasLtMatrixLayoutCreate(&n->lx, n->ctype, D, B, D));
	cublasLtMatmulPreference_t pref;
	BL_CHECK(cublasLtMatmulPreferenceCreate(&pref));
	BL_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						      &n->ws_size, sizeof(n->ws_size)));
	cublasLtMatmulPreference_t any;
	BL_CHECK(cublasLtMatmulPreferenceCreate(&any));
	BL_CHECK(cublasLtMatmulPreferenceSetAttribute(any, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						      &n->ws_size, sizeof(n->ws_size)));
	/* Split-K excluded: its partial sums are combined across thread blocks
	 * (in the workspace or by a second kernel); without it each output is
	 * summed by one block in a fixed order. */
	uint32_t red = CUBLASLT_REDUCTION_SCHEME_NONE;
	BL_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
						      &red, sizeof(red)));
	cudaDataType_t bias_type = n->ctype;
	for (int l = 0; l < n->layers; l++) {
		cublasLtEpilogue_t epi = l + 1 < n->layers ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
		BL_CHECK(cublasLtMatmulDescCreate(&n->desc[l], n->lt_compute, CUDA_R_32F));
		BL_CHECK(cublasLtMatmulDescSetAttribute(n->desc[l], CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
							sizeof(epi)));
		BL_CHECK(cublasLtMatmulDescSetAttribute(n->desc[l], CUBLASLT_MATMUL_DESC_BIAS_POINTER,
							&n->b[l], sizeof(n->b[l])));
		BL_CHECK(cublasLtMatmulDescSetAttribute(n->desc[l], CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
							&bias_type, sizeof(bias_type)));
		cublasLtMatmulHeuristicResult_t res;
		int found = 0;
		BL_CHECK(cublasLtMatmulAlgoGetHeuristic(n->lt, n->desc[l], n->lw, n->lx, n->lx, n->lx, pref,
							1, &res, &found));
		if (found < 1) {
			/* Rather a run that says it may vary than no run. */
			fprintf(stderr, "cublas_bias: layer %d: no algorithm without split-K; allowing it "
					"(results may differ between runs)\n", l);
			BL_CHECK(cublasLtMatmulAlgoGetHeuristic(n->lt, n->desc[l], n->lw, n->lx, n->lx, n->lx,
								any, 1, &res, &found));
		}
		if (found < 1) {
			fprintf(stderr, "cublasLtMatmulAlgoGetHeuristic: no algorithm for layer %d\n", l);
			exit(2);
		}
		n->algo[l] = res.algo;
	}
	BL_CHECK(cublasLtMatmulPreferenceDestroy(pref));
	BL_CHECK(cublasLtMatmulPreferenceDestroy(any));
}

/* One step's GPU work, all on n->stream (captured as is by --graph). */
static void net_issue(void *ctx)
{
	struct net *n = (struct net *)ctx;
	const int D = n->dim, B = n->batch;
	const float one = 1.0f, zero = 0.0f;
	for (int l = 0; l < n->layers; l++)
		BL_CHECK(cublasLtMatmul(n->lt, n->desc[l], &one, n->w[l], n->lw, n->act[l], n->lx, &zero,
					n->act[l + 1], n->lx, n->act[l + 1], n->lx, &n->algo[l], n->ws,
					n->ws_size, n->stream));
	BL_CHECK(cublasGemmEx(n->bl, CUBLAS_OP_N, CUBLAS_OP_N, D, B, D, &one, n->wout, n->ctype, D,
			      n->act[n->layers], n->ctype, D, &zero, n->y, n->ctype, D, n->lt_compute,
			      CUBLAS_GEMM_DEFAULT));
	int count = D * B;
	if (n->dt == DT_BF16)
		feedback_kernel<__nv_bfloat16><<<(count + 255) / 256, 256, 0, n->stream>>>(
			(const __nv_bfloat16 *)n->y, (__nv_bfloat16 *)n->act[0], n->out_dev, count);
	else
		feedback_kernel<float><<<(count + 255) / 256, 256, 0, n->stream>>>(
			(const float *)n->y, (float *)n->act[0], n->out_dev, count);
	RC_CHECK(cudaGetLastError());
	RC_CHECK(cudaMemcpyAsync(n->out_host, n->out_dev, (size_t)count * sizeof(float),
				 cudaMemcpyDeviceToHost, n->stream));
}

static void usage(void)
{
	fprintf(stderr, "usage: cublas_bias [--steps N] [--warmup W] [--batch B] [--dim D] [--layers L]\n"
			"                   [--dtype bf16|tf32|f32] [--seed S] [--out FILE] [--time] [--graph]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct real_opts o;
	struct net n;
	const char *dts = "bf16";
	real_opts_init(&o, 300, 20);
	memset(&n, 0, sizeof(n));
	n.batch = 8;
	n.dim = 512;
	n.layers = 4;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (real_common_arg(&o, argc, argv, &i))
			continue;
		if (!strcmp(argv[i], "--batch"))
			n.batch = real_int_arg(argv[i], v, 1), i++;
		else if (!strcmp(argv[i], "--dim"))
			n.dim = real_int_arg(argv[i], v, 8), i++;
		else if (!strcmp(argv[i], "--layers"))
			n.layers = real_int_arg(argv[i], v, 1), i++;
		else if (!strcmp(argv[i], "--dtype") && v)
			dts = v, i++;
		else
			usage();
	}
	if (!strcmp(dts, "bf16"))
		n.dt = DT_BF16;
	else if (!strcmp(dts, "tf32"))
		n.dt = DT_TF32;
	else if (!strcmp(dts, "f32"))
		n.dt = DT_F32;
	else
		usage();
	if (n.dim % 8) {
		fprintf(stderr, "--dim must be a multiple of 8 (cuBLASLt alignment)\n");
		exit(1);
	}

	net_init(&n, o.seed);
	/* With --graph one step is captured once; replays read back through the
	 * same pinned buffer. */
	FILE *out = real_out_open(o.out);
	cudaGraphExec_t exec;
	double *t = real_run_steps(&o, n.stream, net_issue, &n, out, n.out_host,
				   (size_t)n.dim * n.batch * sizeof(float), &exec);
	real_out_close(out);
	if (o.time) {
		double med, mean;
		real_stats(t, o.steps, &med, &mean);
		printf("gs-wl: cublas_bias variant=%s dtype=%s batch=%d dim=%d layers=%d steps=%d "
		       "warmup=%d gemms=%d median_us=%.3f mean_us=%.3f\n",
		       o.graph ? "graph" : "eager", dts, n.batch, n.dim, n.layers, o.steps, o.warmup,
		       n.layers + 1, med, mean);
	}
	free(t);
	if (exec)
		RC_CHECK(cudaGraphExecDestroy(exec));
	for (int l = 0; l < n.layers; l++)
		BL_CHECK(cublasLtMatmulDescDestroy(n.desc[l]));
	BL_CHECK(cublasLtMatrixLayoutDestroy(n.lw));
	BL_CHECK(cublasLtMatrixLayoutDestroy(n.lx));
	BL_CHECK(cublasDestroy(n.bl));
	BL_CHECK(cublasLtDestroy(n.lt));
	RC_CHECK(cudaStreamDestroy(n.stream));
	return 0;
}
