/*
 * What graphshim's cost rule weighs, measured on this machine's driver:
 * the host time of one eager launch, of patching one node of an
 * instantiated graph (cuGraphExecKernelNodeSetParams: a scalar argument, a
 * grid, nothing changed), and of launching a graph of 8, 32 and 256 nodes;
 * and the wall time of a 256-launch step (issue, then synchronize) eager,
 * replayed, and replayed after patching every node or one in eight.  The
 * rule patches a chunk of n launches with d changed when
 * GRAPHSHIM_GRAPH_COST + d x GRAPHSHIM_PATCH_COST < n, both in eager
 * launches (docs/performance.md, "Cost rule"); the last lines print the
 * two ratios measured here.  Then a read-back step as frameworks end one
 * (two launches and a 16-byte copy to pinned memory whose destination
 * alternates, as a caching host allocator hands it out): eager, as a graph
 * of three nodes, and the same after patching its copy node
 * (cuGraphExecMemcpyNodeSetParams, what graphshim does when the
 * destination moved).  Last, eight iterations of 8 launches each followed
 * by a host function, eager and with each iteration's launches one graph;
 * and the same with the GPU the bottleneck (8 launches of a kernel that
 * spins 8 us each), bare, with a 4-byte copy to pinned memory (a node of
 * the graph, or eager after it), then a host function or a synchronize:
 * whether the driver makes a graph behind a host function or a read-back
 * cost more than eager launches (on an H200 it did not: docs/performance.md,
 * fifty-sixth session).  Then the GPU-bound host-function step, graph
 * and eager, where the host waits for each host function to have run
 * before it issues the next iteration (as if it were behind): whether
 * what costs is work queued behind a host function that has not run yet
 * (fifty-eighth session).  Driver API only, the kernels JIT-compiled from
 * PTX; every call checked.  Run by tools/gpu/all.sh (stage costs); not a
 * test.
 *
 *   costs [--steps N] [--reps R]   N launches a step (256), R steps a figure (31)
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                  \
	do {                                                                      \
		CUresult rc_ = (call);                                            \
		if (rc_ != CUDA_SUCCESS) {                                        \
			const char *e_ = "?";                                     \
			cuGetErrorName(rc_, &e_);                                 \
			fprintf(stderr, "costs: %s: %s (%d)\n", #call, e_, rc_); \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

/* One thread a block writes v to p[blockIdx.x]. */
static const char PTX[] = ".version 8.0\n"
			  ".target sm_90\n"
			  ".address_size 64\n"
			  ".visible .entry k(.param .u64 p, .param .u32 v)\n"
			  "{\n"
			  "  .reg .b64 %rd<5>;\n"
			  "  .reg .b32 %r<3>;\n"
			  "  ld.param.u64 %rd1, [p];\n"
			  "  ld.param.u32 %r1, [v];\n"
			  "  mov.u32 %r2, %ctaid.x;\n"
			  "  cvta.to.global.u64 %rd2, %rd1;\n"
			  "  mul.wide.u32 %rd3, %r2, 4;\n"
			  "  add.s64 %rd4, %rd2, %rd3;\n"
			  "  st.global.u32 [%rd4], %r1;\n"
			  "  ret;\n"
			  "}\n"
			  /* spin: waits ns nanoseconds on the GPU's global timer */
			  ".visible .entry spin(.param .u64 ns)\n"
			  "{\n"
			  "  .reg .b64 %sd<4>;\n"
			  "  .reg .pred %sp;\n"
			  "  ld.param.u64 %sd1, [ns];\n"
			  "  mov.u64 %sd2, %globaltimer;\n"
			  "SPIN:\n"
			  "  mov.u64 %sd3, %globaltimer;\n"
			  "  sub.u64 %sd3, %sd3, %sd2;\n"
			  "  setp.lt.u64 %sp, %sd3, %sd1;\n"
			  "  @%sp bra SPIN;\n"
			  "  ret;\n"
			  "}\n";

enum { MAX_N = 4096, MAX_R = 1001, GRID_MAX = 2 };

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long arg(int argc, char **argv, int *i, long lo, long hi)
{
	char *end = NULL;
	if (*i + 1 >= argc) {
		fprintf(stderr, "costs: %s needs a value\n", argv[*i]);
		exit(2);
	}
	long v = strtol(argv[++*i], &end, 10);
	if (!*argv[*i] || *end || v < lo || v > hi) {
		fprintf(stderr, "costs: %s: %s is not a whole number in [%ld, %ld]\n", argv[*i - 1],
			argv[*i], lo, hi);
		exit(2);
	}
	return v;
}

static CUfunction fn;
static CUdeviceptr buf;
static CUstream st;
static int n = 256, reps = 31;
static unsigned val; /* a new argument value for every launch or patch */
static CUdeviceptr rb_src;  /* the read-back step's source (16 bytes) */
static void *rb_host[2];    /* its pinned destinations, in turn */
static unsigned rb_turn;

typedef struct graph {
	int n;
	CUgraph g;
	CUgraphExec x;
	CUgraphNode node[MAX_N];
	unsigned v[MAX_N]; /* each node's argument */
	CUdeviceptr p;
} graph_t;

static CUDA_KERNEL_NODE_PARAMS params(void **kp, unsigned grid)
{
	CUDA_KERNEL_NODE_PARAMS p;
	memset(&p, 0, sizeof(p));
	p.func = fn;
	p.gridDimX = grid;
	p.gridDimY = p.gridDimZ = 1;
	p.blockDimX = 32;
	p.blockDimY = p.blockDimZ = 1;
	p.kernelParams = kp;
	return p;
}

/* A copy node's parameters: bytes from device memory at `from` to host memory `to`. */
static CUDA_MEMCPY3D d2h_copy(void *to, CUdeviceptr from, size_t bytes)
{
	CUDA_MEMCPY3D c;
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = from;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = to;
	c.WidthInBytes = bytes;
	c.Height = 1;
	c.Depth = 1;
	return c;
}

static void graph_make(graph_t *g, int nodes)
{
	g->n = nodes;
	g->p = buf;
	CK(cuGraphCreate(&g->g, 0));
	for (int i = 0; i < nodes; i++) {
		g->v[i] = val++;
		void *kp[] = {&g->p, &g->v[i]};
		CUDA_KERNEL_NODE_PARAMS p = params(kp, 1);
		CK(cuGraphAddKernelNode(&g->node[i], g->g, i ? &g->node[i - 1] : NULL, i ? 1 : 0, &p));
	}
	CK(cuGraphInstantiate(&g->x, g->g, 0));
	CK(cuGraphUpload(g->x, st));
	CK(cuStreamSynchronize(st));
}

/* Patch every k-th node of g: a new argument value, or (grid) the other grid, or
 * (same) nothing changed.  Host ns a patch. */
static double graph_patch(graph_t *g, int k, char what)
{
	static unsigned grid = 1; /* every node's grid, as patched last */
	if (what == 'g')
		grid = grid == 1 ? GRID_MAX : 1;
	int done = 0;
	double t0 = now_ns();
	for (int i = 0; i < g->n; i += k) {
		if (what == 'a')
			g->v[i] = val++;
		void *kp[] = {&g->p, &g->v[i]};
		CUDA_KERNEL_NODE_PARAMS p = params(kp, grid);
		CK(cuGraphExecKernelNodeSetParams(g->x, g->node[i], &p));
		done++;
	}
	return (now_ns() - t0) / done;
}

/* Host ns of one cuGraphLaunch of x; *wall: with the synchronize after it. */
static double graph_launch(CUgraphExec x, double *wall)
{
	double t0 = now_ns();
	CK(cuGraphLaunch(x, st));
	double t1 = now_ns();
	CK(cuStreamSynchronize(st));
	*wall = now_ns() - t0;
	return t1 - t0;
}

/* k eager launches of the kernel on st, each with a new argument value. */
static void launch_eager(int k)
{
	for (int i = 0; i < k; i++) {
		unsigned v = val++;
		void *kp[] = {&buf, &v};
		CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, st, kp, NULL));
	}
}

/* Host ns of one eager launch, over a step of n; *wall: the step with its synchronize. */
static double eager_step(double *wall)
{
	double t0 = now_ns();
	launch_eager(n);
	double t1 = now_ns();
	CK(cuStreamSynchronize(st));
	*wall = now_ns() - t0;
	return (t1 - t0) / n;
}

/* The host function of the host-function steps: counts its calls. */
static unsigned hf_calls;
static void CUDA_CB hostfn_count(void *p)
{
	__atomic_add_fetch((unsigned *)p, 1, __ATOMIC_RELEASE);
}

/*
 * Iterations of 8 launches then a host function (cuLaunchHostFunc),
 * synchronized once at the end (hf_step, below): each iteration's launches
 * eager, or one launch of an 8-node graph.  A solver that logs every
 * iteration from a host function ran slower replayed than eager, and so
 * did its own graph (docs/limits.md): this says whether a graph launched
 * behind a host function is what costs.
 */
#define HF_ITERS 8
static void tiny8(void)
{
	launch_eager(8);
}

/*
 * The same with the GPU the bottleneck: each launch spins SPIN_NS on the
 * GPU, so the host's launches are queued ahead and what the stream waits
 * for between iterations shows in the wall time.  Per iteration: 8 spins,
 * eager or one graph of them, then (copy) 4 bytes to pinned memory, eager
 * or as the graph's last node, or eager after the graph of spins (split);
 * then a host function, or (sync) a synchronize, as a read-back ends a
 * step.  A solver's iteration replayed so (spins, a copy node, a host
 * function) left the GPU idle about twice as long before the next
 * iteration as eager did (docs/performance.md, fifty-sixth session).
 */
#define SPIN_NS 8000ull
enum { SPIN_NOCOPY, SPIN_COPY, SPIN_SPLIT };
static CUfunction spin_fn;
static CUdeviceptr spin_src;
static void *spin_host;

static void spin_copy(void)
{
	CK(cuMemcpyDtoHAsync(spin_host, spin_src, 4, st));
}

static CUgraphExec spin_graph(int nodes, bool copy, CUcontext ctx)
{
	static unsigned long long ns = SPIN_NS;
	CUgraph g;
	CUgraphExec x;
	CUgraphNode prev = NULL, node;
	CK(cuGraphCreate(&g, 0));
	for (int i = 0; i < nodes; i++) {
		void *kp[] = {&ns};
		CUDA_KERNEL_NODE_PARAMS p = params(kp, 1);
		p.func = spin_fn;
		CK(cuGraphAddKernelNode(&node, g, prev ? &prev : NULL, prev ? 1 : 0, &p));
		prev = node;
	}
	if (copy) {
		CUDA_MEMCPY3D c = d2h_copy(spin_host, spin_src, 4);
		CK(cuGraphAddMemcpyNode(&node, g, &prev, 1, &c, ctx));
	}
	CK(cuGraphInstantiate(&x, g, 0));
	CK(cuGraphDestroy(g));
	CK(cuGraphUpload(x, st));
	CK(cuStreamSynchronize(st));
	return x;
}

static void spin8(void)
{
	unsigned long long ns = SPIN_NS;
	void *kp[] = {&ns};
	for (int i = 0; i < 8; i++)
		CK(cuLaunchKernel(spin_fn, 1, 1, 1, 32, 1, 1, 0, st, kp, NULL));
}

/* Wall ns of HF_ITERS iterations: x (or eager8's 8 eager launches), the
 * copy as `copy` says (x then has it as a node where SPIN_COPY), then a
 * host function or (sync) a synchronize; one synchronize at the end.
 * With `wait`, each iteration after the first begins once the host
 * function before it has run (the host spins on its count). */
static double hf_step_wait(CUgraphExec x, void (*eager8)(void), int copy, bool sync, bool wait)
{
	double t0 = now_ns();
	unsigned want = __atomic_load_n(&hf_calls, __ATOMIC_ACQUIRE);
	for (int it = 0; it < HF_ITERS; it++) {
		while (wait && __atomic_load_n(&hf_calls, __ATOMIC_ACQUIRE) != want)
			;
		want++;
		if (x)
			CK(cuGraphLaunch(x, st));
		else
			eager8();
		if (copy == SPIN_SPLIT || (!x && copy == SPIN_COPY))
			spin_copy();
		if (sync)
			CK(cuStreamSynchronize(st));
		else
			CK(cuLaunchHostFunc(st, hostfn_count, &hf_calls));
	}
	CK(cuStreamSynchronize(st));
	return now_ns() - t0;
}

static double hf_step(CUgraphExec x, void (*eager8)(void), int copy, bool sync)
{
	return hf_step_wait(x, eager8, copy, sync, false);
}

/* A read-back step's copy: 16 bytes from rb_src to the pinned buffer `to`. */
static CUDA_MEMCPY3D rb_copy(void *to)
{
	return d2h_copy(to, rb_src, 16);
}

typedef struct rb_graph {
	CUgraph g;
	CUgraphExec x;
	CUgraphNode k[2], copy;
	unsigned v[2];
	CUcontext ctx;
} rb_graph_t;

static void rb_make(rb_graph_t *r, CUcontext ctx)
{
	r->ctx = ctx;
	CK(cuGraphCreate(&r->g, 0));
	for (int i = 0; i < 2; i++) {
		r->v[i] = val++;
		void *kp[] = {&buf, &r->v[i]};
		CUDA_KERNEL_NODE_PARAMS p = params(kp, 1);
		CK(cuGraphAddKernelNode(&r->k[i], r->g, i ? &r->k[0] : NULL, i ? 1 : 0, &p));
	}
	CUDA_MEMCPY3D c = rb_copy(rb_host[0]);
	CK(cuGraphAddMemcpyNode(&r->copy, r->g, &r->k[1], 1, &c, ctx));
	CK(cuGraphInstantiate(&r->x, r->g, 0));
	CK(cuGraphUpload(r->x, st));
	CK(cuStreamSynchronize(st));
}

/* Host ns of the read-back step eager: two launches and the copy. */
static double rb_eager(void)
{
	double t0 = now_ns();
	launch_eager(2);
	CK(cuMemcpyDtoHAsync(rb_host[rb_turn++ & 1], rb_src, 16, st));
	double t1 = now_ns();
	CK(cuStreamSynchronize(st));
	return t1 - t0;
}

/* Host ns of patching the copy node to the other destination. */
static double rb_patch(rb_graph_t *r)
{
	CUDA_MEMCPY3D c = rb_copy(rb_host[rb_turn++ & 1]);
	double t0 = now_ns();
	CK(cuGraphExecMemcpyNodeSetParams(r->x, r->copy, &c, r->ctx));
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--steps"))
			n = (int)arg(argc, argv, &i, 8, MAX_N);
		else if (!strcmp(argv[i], "--reps"))
			reps = (int)arg(argc, argv, &i, 3, MAX_R);
		else {
			fprintf(stderr, "usage: costs [--steps N (8-%d)] [--reps R (3-%d)]\n", MAX_N, MAX_R);
			return 2;
		}
	}
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	char name[128] = "?";
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, PTX));
	CK(cuModuleGetFunction(&fn, mod, "k"));
	CK(cuMemAlloc(&buf, 4 * GRID_MAX));
	CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc(&rb_src, 16));
	CK(cuMemsetD8(rb_src, 7, 16));
	for (int i = 0; i < 2; i++)
		CK(cuMemHostAlloc(&rb_host[i], 16, 0));

	static graph_t g8, g32, gn;
	static rb_graph_t rb;
	graph_make(&g8, 8);
	graph_make(&g32, 32);
	graph_make(&gn, n);
	rb_make(&rb, ctx);
	CK(cuModuleGetFunction(&spin_fn, mod, "spin"));
	CK(cuMemAlloc(&spin_src, 4));
	CK(cuMemsetD8(spin_src, 3, 4));
	CK(cuMemHostAlloc(&spin_host, 4, 0));
	CUgraphExec spin8x = spin_graph(8, false, ctx), spin8c = spin_graph(8, true, ctx);

	enum { LAUNCH, GL8, GL32, GLN, P_ARG, P_GRID, P_SAME, GL_AFTER, W_EAGER, W_GRAPH, W_ALL, W_EIGHTH,
	       RB_EAGER, RB_GRAPH, RB_PATCH, RB_AFTER, HF_EAGER, HF_GRAPH, HS_EAGER, HS_GRAPH, HC_EAGER,
	       HC_GRAPH, HC_SPLIT, SC_EAGER, SC_GRAPH, SC_SPLIT, HW_EAGER, HW_GRAPH, HWC_EAGER, HWC_GRAPH,
	       HFW_EAGER, HFW_GRAPH, NF };
	static const char *const what[NF] = {
		"eager launch (host, a launch)",
		"graph launch, 8 nodes (host)",
		"graph launch, 32 nodes (host)",
		"graph launch, N nodes (host)",
		"patch a node: scalar argument (host)",
		"patch a node: grid (host)",
		"patch a node: nothing changed (host)",
		"graph launch, N nodes, every node patched (host)",
		"step of N, eager (wall, with sync)",
		"step of N, replayed (wall, with sync)",
		"step of N, every node patched, replayed (wall)",
		"step of N, one node in 8 patched, replayed (wall)",
		"read-back step (2 launches, a copy), eager (host)",
		"read-back step, a graph of 3 nodes (host)",
		"patch the read-back's copy node (host)",
		"read-back graph launched after that patch (host)",
		"8 x (8 launches, a host function), eager (wall)",
		"8 x (8-node graph, a host function) (wall)",
		"8 x (8 spins of 8 us, a host function), eager (wall)",
		"8 x (8-spin graph, a host function) (wall)",
		"8 x (8 spins, a D2H copy, a host function), eager",
		"8 x (graph: 8 spins, a D2H copy; a host function)",
		"8 x (8-spin graph, eager D2H copy, a host function)",
		"8 x (8 spins, a D2H copy, synchronize), eager",
		"8 x (graph: 8 spins, a D2H copy; synchronize)",
		"8 x (8-spin graph, eager D2H copy, synchronize)",
		"8 x (8 spins, a host function), host waits, eager",
		"8 x (8-spin graph, a host function), host waits",
		"8 x (8 spins, D2H copy, host fn), host waits, eager",
		"8 x (graph: 8 spins, D2H copy; host fn), host waits",
		"8 x (8 launches, a host function), host waits, eager",
		"8 x (8-node graph, a host function), host waits",
	};
	static double v[NF][MAX_R];
	double w;
	for (int r = -3; r < reps; r++) { /* three warm-up rounds, then interleaved */
		double f[NF];
		f[LAUNCH] = eager_step(&f[W_EAGER]);
		f[GL8] = graph_launch(g8.x, &w);
		f[GL32] = graph_launch(g32.x, &w);
		f[GLN] = graph_launch(gn.x, &f[W_GRAPH]);
		double t0 = now_ns();
		f[P_ARG] = graph_patch(&gn, 1, 'a');
		double patch = now_ns() - t0;
		f[GL_AFTER] = graph_launch(gn.x, &w);
		f[W_ALL] = w + patch;
		t0 = now_ns();
		graph_patch(&gn, 8, 'a');
		patch = now_ns() - t0;
		graph_launch(gn.x, &w);
		f[W_EIGHTH] = w + patch;
		f[P_GRID] = graph_patch(&gn, 1, 'g');
		graph_launch(gn.x, &w);
		f[P_SAME] = graph_patch(&gn, 1, 's');
		graph_launch(gn.x, &w);
		f[RB_EAGER] = rb_eager();
		f[RB_GRAPH] = graph_launch(rb.x, &w);
		f[RB_PATCH] = rb_patch(&rb);
		f[RB_AFTER] = graph_launch(rb.x, &w);
		f[HF_EAGER] = hf_step(NULL, tiny8, SPIN_NOCOPY, false);
		f[HF_GRAPH] = hf_step(g8.x, tiny8, SPIN_NOCOPY, false);
		f[HS_EAGER] = hf_step(NULL, spin8, SPIN_NOCOPY, false);
		f[HS_GRAPH] = hf_step(spin8x, spin8, SPIN_NOCOPY, false);
		f[HC_EAGER] = hf_step(NULL, spin8, SPIN_COPY, false);
		f[HC_GRAPH] = hf_step(spin8c, spin8, SPIN_COPY, false);
		f[HC_SPLIT] = hf_step(spin8x, spin8, SPIN_SPLIT, false);
		f[SC_EAGER] = hf_step(NULL, spin8, SPIN_COPY, true);
		f[SC_GRAPH] = hf_step(spin8c, spin8, SPIN_COPY, true);
		f[SC_SPLIT] = hf_step(spin8x, spin8, SPIN_SPLIT, true);
		f[HW_EAGER] = hf_step_wait(NULL, spin8, SPIN_NOCOPY, false, true);
		f[HW_GRAPH] = hf_step_wait(spin8x, spin8, SPIN_NOCOPY, false, true);
		f[HWC_EAGER] = hf_step_wait(NULL, spin8, SPIN_COPY, false, true);
		f[HWC_GRAPH] = hf_step_wait(spin8c, spin8, SPIN_COPY, false, true);
		f[HFW_EAGER] = hf_step_wait(NULL, tiny8, SPIN_NOCOPY, false, true);
		f[HFW_GRAPH] = hf_step_wait(g8.x, tiny8, SPIN_NOCOPY, false, true);
		if (r >= 0)
			for (int k = 0; k < NF; k++)
				v[k][r] = f[k];
	}
	double m[NF];
	printf("costs: %s, N = %d, medians of %d rounds (ns)\n", name, n, reps);
	for (int k = 0; k < NF; k++) {
		m[k] = median(v[k], reps);
		printf("costs: %-50s %10.0f\n", what[k], m[k]);
	}
	printf("costs: a patch in eager launches (GRAPHSHIM_PATCH_COST, default 0.25): scalar %.2f, grid "
	       "%.2f\n",
	       m[P_ARG] / m[LAUNCH], m[P_GRID] / m[LAUNCH]);
	printf("costs: a graph launch in eager launches (GRAPHSHIM_GRAPH_COST, default 1): 8 nodes %.2f, "
	       "32 nodes %.2f, %d nodes %.2f\n",
	       m[GL8] / m[LAUNCH], m[GL32] / m[LAUNCH], n, m[GLN] / m[LAUNCH]);
	printf("costs: behind host functions, an iteration's 8 launches as a graph take %.2f of eager's "
	       "wall time (%u host functions ran)\n",
	       m[HF_GRAPH] / m[HF_EAGER], hf_calls);
	printf("costs: GPU-bound (8 spins), an iteration replayed less eager (us): a host function %.1f; "
	       "a copy, a host function: the copy a node %.1f, eager after the graph %.1f; a copy, a "
	       "synchronize: a node %.1f, eager after %.1f\n",
	       (m[HS_GRAPH] - m[HS_EAGER]) / HF_ITERS / 1e3, (m[HC_GRAPH] - m[HC_EAGER]) / HF_ITERS / 1e3,
	       (m[HC_SPLIT] - m[HC_EAGER]) / HF_ITERS / 1e3, (m[SC_GRAPH] - m[SC_EAGER]) / HF_ITERS / 1e3,
	       (m[SC_SPLIT] - m[SC_EAGER]) / HF_ITERS / 1e3);
	printf("costs: behind host functions, the host waiting for each to have run before the next "
	       "iteration, an iteration less without waiting (us): GPU-bound eager %.1f, graph %.1f; "
	       "with a copy eager %.1f, graph %.1f; 8 launches eager %.1f, graph %.1f\n",
	       (m[HW_EAGER] - m[HS_EAGER]) / HF_ITERS / 1e3, (m[HW_GRAPH] - m[HS_GRAPH]) / HF_ITERS / 1e3,
	       (m[HWC_EAGER] - m[HC_EAGER]) / HF_ITERS / 1e3, (m[HWC_GRAPH] - m[HC_GRAPH]) / HF_ITERS / 1e3,
	       (m[HFW_EAGER] - m[HF_EAGER]) / HF_ITERS / 1e3, (m[HFW_GRAPH] - m[HF_GRAPH]) / HF_ITERS / 1e3);
	CK(cuGraphExecDestroy(spin8x));
	CK(cuGraphExecDestroy(spin8c));
	CK(cuMemFreeHost(spin_host));
	CK(cuMemFree(spin_src));
	graph_t *gs[] = {&g8, &g32, &gn};
	for (int i = 0; i < 3; i++) {
		CK(cuGraphExecDestroy(gs[i]->x));
		CK(cuGraphDestroy(gs[i]->g));
	}
	CK(cuGraphExecDestroy(rb.x));
	CK(cuGraphDestroy(rb.g));
	for (int i = 0; i < 2; i++)
		CK(cuMemFreeHost(rb_host[i]));
	CK(cuMemFree(rb_src));
	CK(cuStreamDestroy(st));
	CK(cuMemFree(buf));
	CK(cuModuleUnload(mod));
	CK(cuDevicePrimaryCtxRelease(dev));
	return 0;
}
