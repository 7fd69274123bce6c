/*
 * Device-side node updates, measured: can graphshim move a replayed chunk's
 * argument patches from the host (one cuGraphExecKernelNodeSetParams each,
 * about 2 us plus about 1 us of upload at the launch in real programs) to one
 * small kernel launched before the graph, which writes the new arguments
 * into device-updatable nodes (cudaGraphKernelNodeSetParam, CUDA 12.4)?
 *
 *   probe WORK.cubin UPDATER-IMAGE... [--devrt libcudadevrt.a UPDATER.ptx]
 *
 * Prints which updater images load, checks every mode's results against
 * what its pointers say, and the host time of a step of 32 small kernels
 * (eager, graph, graph with host patches, graph with the updater).
 */
#define _GNU_SOURCE
#define PROBE_NAME "probe"
#include <stdint.h>

#include "probe_util.h"

#define N 32   /* nodes a step */
#define W 32   /* floats a node adds to */
#define MAXE 160

struct entry {
	unsigned long long node;
	unsigned offset, size;
	unsigned long long value;
};
struct du_args {
	unsigned n, pad;
	struct entry e[MAXE];
};

static CUstream s;
static CUfunction fadd, fupd;
static CUdeviceptr A, B;
static CUgraphExec xplain, xdev, xin;
static CUgraphNode nplain[N], ndev[N], nin[N], nupd;
static unsigned long long devnode[N], innode[N];
static int upd_on;

static CUdeviceptr ptr(int it, int j)
{
	return ((it & 1) ? B : A) + (CUdeviceptr)j * W * sizeof(float);
}

static struct du_args du;

/* devupd: 0 plain, 1 device-updatable nodes, 2 those behind an updater node of the graph's own */
static CUgraphExec build(CUgraphNode *nodes, int devupd, unsigned long long *handles)
{
	CUgraph g;
	CK(cuGraphCreate(&g, 0));
	CUgraphNode head = NULL;
	if (devupd == 2) {
		memset(&du, 0, sizeof(du));
		void *kp[] = {&du};
		CUDA_KERNEL_NODE_PARAMS k = knp(fupd, MAXE, kp);
		CK(cuGraphAddKernelNode(&nupd, g, NULL, 0, &k));
		head = nupd;
	}
	for (int j = 0; j < N; j++) {
		CUdeviceptr p = ptr(0, j);
		void *kp[] = {&p};
		CUDA_KERNEL_NODE_PARAMS k = knp(fadd, W, kp);
		CUgraphNode dep = j ? nodes[j - 1] : head;
		CK(cuGraphAddKernelNode(&nodes[j], g, dep ? &dep : NULL, dep ? 1 : 0, &k));
		if (devupd)
			handles[j] = probe_devnode(nodes[j]);
	}
	CUgraphExec x;
	CK(cuGraphInstantiate(&x, g, 0));
	if (devupd == 2) {
		CK(cuGraphNodeSetEnabled(x, nupd, 0));
		upd_on = 0;
	}
	CK(cuGraphUpload(x, s));
	CK(cuStreamSynchronize(s));
	return x;
}

static void host_patch(int it, int j)
{
	CUdeviceptr p = ptr(it, j);
	void *kp[] = {&p};
	CUDA_KERNEL_NODE_PARAMS k = knp(fadd, W, kp);
	CK(cuGraphExecKernelNodeSetParams(xplain, nplain[j], &k));
}

/* GS_PROBE_SPLIT=1: each node's pointer as two 4-byte entries and a grid
 * entry (1,1,1), consecutive, as graphshim's updater takes them. */
static int split;

static void fill(int it, int npatch, const unsigned long long *handles)
{
	unsigned k = 0;
	for (int j = 0; j < npatch; j++) {
		unsigned long long v = ptr(it, j);
		if (!split) {
			du.e[k++] = (struct entry){handles[j], 0, 8, v};
			continue;
		}
		du.e[k++] = (struct entry){handles[j], 1, 0, 1ull | 1ull << 32};
		du.e[k++] = (struct entry){handles[j], 0, 4, v & 0xffffffffu};
		du.e[k++] = (struct entry){handles[j], 4, 4, v >> 32};
	}
	du.n = k;
}

static void dev_update(int it, int npatch)
{
	fill(it, npatch, devnode);
	void *kp[] = {&du};
	unsigned threads = (du.n + 31) / 32 * 32;
	CK(cuLaunchKernel(fupd, 1, 1, 1, threads, 1, 1, 0, s, kp, NULL));
}

/* The in-graph updater: its node's parameters set to this launch's updates. */
static void in_update(int it, int npatch)
{
	if (!npatch) {
		if (upd_on)
			CK(cuGraphNodeSetEnabled(xin, nupd, 0));
		upd_on = 0;
		CK(cuGraphLaunch(xin, s));
		return;
	}
	fill(it, npatch, innode);
	void *kp[] = {&du};
	CUDA_KERNEL_NODE_PARAMS k = knp(fupd, (du.n + 31) / 32 * 32, kp);
	CK(cuGraphExecKernelNodeSetParams(xin, nupd, &k));
	if (!upd_on)
		CK(cuGraphNodeSetEnabled(xin, nupd, 1));
	upd_on = 1;
	CK(cuGraphLaunch(xin, s));
}

/* One step of mode m at iteration it. */
static void step(int m, int it)
{
	switch (m) {
	case 0: /* eager */
		for (int j = 0; j < N; j++) {
			CUdeviceptr p = ptr(it, j);
			void *kp[] = {&p};
			CK(cuLaunchKernel(fadd, 1, 1, 1, W, 1, 1, 0, s, kp, NULL));
		}
		break;
	case 1: CK(cuGraphLaunch(xplain, s)); break;
	case 2: for (int j = 0; j < N; j++) host_patch(it, j);
		CK(cuGraphLaunch(xplain, s)); break;
	case 3: for (int j = 0; j < 4; j++) host_patch(it, j);
		CK(cuGraphLaunch(xplain, s)); break;
	case 4: host_patch(it, 0); CK(cuGraphLaunch(xplain, s)); break;
	case 5: CK(cuGraphLaunch(xdev, s)); break;
	case 6: dev_update(it, N); CK(cuGraphLaunch(xdev, s)); break;
	case 7: dev_update(it, 4); CK(cuGraphLaunch(xdev, s)); break;
	case 8: dev_update(it, 1); CK(cuGraphLaunch(xdev, s)); break;
	case 9: in_update(it, N); break;
	case 10: in_update(it, 4); break;
	case 11: in_update(it, 1); break;
	case 12: in_update(it, 0); break;
	case 13: in_update(it, (it % 4) ? 0 : N); break;
	}
}

static const char *mname[] = {"eager (32 launches)", "graph", "graph, 32 host patches",
			      "graph, 4 host patches", "graph, 1 host patch",
			      "dev graph", "dev graph, updater 32", "dev graph, updater 4",
			      "dev graph, updater 1", "in-graph updater 32",
			      "in-graph updater 4", "in-graph updater 1", "in-graph, disabled",
			      "in-graph, 32 every 4th"};
/* patched nodes of each mode (the others keep the baked pointer, A's) */
static const int mpatch[] = {N, 0, N, 4, 1, 0, N, 4, 1, N, 4, 1, 0, -1};

static void reset(void)
{
	CK(cuStreamSynchronize(s));
	CK(cuMemsetD32(A, 0, N * W));
	CK(cuMemsetD32(B, 0, N * W));
	CK(cuCtxSynchronize());
}

/* Run I (even) iterations of m from a state whose nodes hold A's pointers; check. */
static int check(int m, int I)
{
	reset();
	for (int it = 0; it < I; it++)
		step(m, it);
	/* one more at an even iteration puts the nodes back to A's pointers */
	step(m, I);
	CK(cuStreamSynchronize(s));
	static float a[N * W], b[N * W];
	CK(cuMemcpyDtoH(a, A, sizeof(a)));
	CK(cuMemcpyDtoH(b, B, sizeof(b)));
	int bad = 0;
	for (int j = 0; j < N; j++)
		for (int t = 0; t < W; t++) {
			int patched = j < mpatch[m];
			float wa = patched ? I / 2 + 1 : I + 1, wb = patched ? I / 2 : 0;
			if (mpatch[m] < 0) /* updates at iterations 0 mod 4 only: always A's */
				wa = I + 1, wb = 0;
			if (a[j * W + t] != wa || b[j * W + t] != wb)
				bad++;
		}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: probe WORK.cubin UPDATER-IMAGE... [--devrt LIB PTX]\n");
		return 2;
	}
	const char *fn_name = getenv("GS_PROBE_FN") ? getenv("GS_PROBE_FN") : "gs_du_apply";
	split = getenv("GS_PROBE_SPLIT") && atoi(getenv("GS_PROBE_SPLIT"));
	int quick = getenv("GS_PROBE_QUICK") && atoi(getenv("GS_PROBE_QUICK"));
	s = probe_start();
	CUmodule mk;
	CK(cuModuleLoad(&mk, argv[1]));
	CK(cuModuleGetFunction(&fadd, mk, "gs_probe_add"));
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--devrt") && i + 2 < argc) {
			CUlinkState ls;
			void *out;
			size_t outsz;
			CUresult a = cuLinkCreate(0, NULL, NULL, &ls), b = CUDA_SUCCESS, c = CUDA_SUCCESS,
				 d = CUDA_SUCCESS, e = CUDA_SUCCESS;
			if (a == CUDA_SUCCESS)
				b = cuLinkAddFile(ls, CU_JIT_INPUT_LIBRARY, argv[i + 1], 0, NULL, NULL);
			if (a == CUDA_SUCCESS && b == CUDA_SUCCESS)
				c = cuLinkAddFile(ls, CU_JIT_INPUT_PTX, argv[i + 2], 0, NULL, NULL);
			if (a == CUDA_SUCCESS && b == CUDA_SUCCESS && c == CUDA_SUCCESS)
				d = cuLinkComplete(ls, &out, &outsz);
			CUmodule m;
			CUfunction f = NULL;
			if (a == CUDA_SUCCESS && b == CUDA_SUCCESS && c == CUDA_SUCCESS && d == CUDA_SUCCESS) {
				e = cuModuleLoadData(&m, out);
				if (e == CUDA_SUCCESS)
					e = cuModuleGetFunction(&f, m, fn_name);
			}
			printf("image: ptx linked with %s: create %d addlib %d addptx %d complete %d load %d\n",
			       argv[i + 1], a, b, c, d, e);
			if (f && !fupd)
				fupd = f;
			i += 2;
			continue;
		}
		CUmodule m;
		CUfunction f = NULL;
		CUresult st = cuModuleLoad(&m, argv[i]);
		if (st == CUDA_SUCCESS)
			st = cuModuleGetFunction(&f, m, fn_name);
		const char *nm = "?";
		cuGetErrorName(st, &nm);
		printf("image: %s: %s\n", argv[i], nm);
		if (f && !fupd)
			fupd = f;
	}
	size_t off = 99, sz = 99;
	CK(cuFuncGetParamInfo(fadd, 0, &off, &sz));
	printf("gs_probe_add parameter 0: offset %zu size %zu\n", off, sz);
	CK(cuMemAlloc(&A, N * W * sizeof(float)));
	CK(cuMemAlloc(&B, N * W * sizeof(float)));
	xplain = build(nplain, 0, NULL);
	int nmodes = 5;
	if (fupd) {
		xdev = build(ndev, 1, devnode);
		xin = build(nin, 2, innode);
		nmodes = 14;
	} else {
		printf("no updater image loaded: device-updatable modes skipped\n");
	}
	for (int m = 0; m < nmodes; m++)
		printf("check %-26s %s\n", mname[m], check(m, 200) ? "WRONG" : "ok");

	/* Mixing: nodes device-updated to B's pointers, then one host update and an upload. */
	if (fupd) {
		reset();
		dev_update(1, N);
		CK(cuGraphLaunch(xdev, s));
		CK(cuStreamSynchronize(s));
		CUdeviceptr p = ptr(0, 5);
		void *kp[] = {&p};
		CUDA_KERNEL_NODE_PARAMS k = knp(fadd, W, kp);
		CUresult hs = cuGraphExecKernelNodeSetParams(xdev, ndev[5], &k);
		CUresult us = cuGraphUpload(xdev, s);
		reset();
		CK(cuGraphLaunch(xdev, s));
		CK(cuStreamSynchronize(s));
		static float a[N * W], b[N * W];
		CK(cuMemcpyDtoH(a, A, sizeof(a)));
		CK(cuMemcpyDtoH(b, B, sizeof(b)));
		int onA = 0, onB = 0;
		for (int j = 0; j < N; j++)
			if (j != 5) {
				onA += a[j * W] == 1.0f;
				onB += b[j * W] == 1.0f;
			}
		printf("mixing: host update %d, upload %d; node 5 on %s; of the other 31 nodes "
		       "%d kept their device update (B), %d went back to the host's (A)\n",
		       hs, us, a[5 * W] == 1.0f ? "A (host's)" : b[5 * W] == 1.0f ? "B" : "neither",
		       onB, onA);
		/* put xdev back in a known state: all nodes A */
		dev_update(0, N);
		CK(cuGraphLaunch(xdev, s));
		CK(cuStreamSynchronize(s));
	}

	if (quick)
		return 0;
	/* Host time of a step, mode by mode interleaved, median over blocks. */
	enum { BLOCKS = 15, PER = 200 };
	static double t[14][BLOCKS];
	CUevent e0, e1;
	CK(cuEventCreate(&e0, 0));
	CK(cuEventCreate(&e1, 0));
	static double gpu[14][BLOCKS];
	for (int b = 0; b < BLOCKS; b++)
		for (int mm = 0; mm < nmodes; mm++) {
			int m = (mm + b) % nmodes;
			for (int it = 0; it < 20; it++)
				step(m, it);
			CK(cuStreamSynchronize(s));
			CK(cuEventRecord(e0, s));
			double t0 = now_ns();
			for (int it = 0; it < PER; it++)
				step(m, it);
			double t1 = now_ns();
			CK(cuEventRecord(e1, s));
			CK(cuStreamSynchronize(s));
			float ms;
			CK(cuEventElapsedTime(&ms, e0, e1));
			t[m][b] = (t1 - t0) / PER;
			gpu[m][b] = ms * 1e6 / PER;
		}
	printf("\n%-28s %12s %12s\n", "mode (32 nodes a step)", "host ns", "GPU ns");
	for (int m = 0; m < nmodes; m++) {
		qsort(t[m], BLOCKS, sizeof(double), cmpd);
		qsort(gpu[m], BLOCKS, sizeof(double), cmpd);
		printf("%-28s %12.0f %12.0f\n", mname[m], t[m][BLOCKS / 2], gpu[m][BLOCKS / 2]);
	}
	return 0;
}
