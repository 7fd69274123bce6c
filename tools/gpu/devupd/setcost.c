/*
 * What a launch of a graph with graphshim's updater costs the host, by the
 * size of the updater's parameters (tiers.cu): per tier and entry count, the
 * median host ns of one cuGraphExecKernelNodeSetParams of the updater node
 * and of the cuGraphLaunch after it, over interleaved blocks; a host patch of
 * one plain node for scale.  Every entry rewrites a node's pointer with the
 * value it has, so results stay checkable: the work nodes' sums are checked.
 *
 *   setcost WORK.cubin TIERS.cubin
 */
#define _GNU_SOURCE
#define PROBE_NAME "setcost"
#include <stdint.h>

#include "probe_util.h"

#define N 64    /* work nodes */
#define W 32    /* floats each adds to */
#define CAP 1360

struct entry {
	unsigned long long node;
	unsigned off, size;
	unsigned long long value;
};
static struct {
	unsigned n, pad;
	struct entry e[CAP];
} du;

static const struct {
	const char *fn;
	unsigned cap;
} tier[] = { { "gs_du_apply32", 32 }, { "gs_du_tier64", 64 }, { "gs_du_tier128", 128 },
	     { "gs_du_tier168", 168 }, { "gs_du_tier256", 256 }, { "gs_du_tier340", 340 },
	     { "gs_du_apply512", 512 }, { "gs_du_apply1360", 1360 } };
#define NT (int)(sizeof(tier) / sizeof(tier[0]))
static const unsigned counts[] = { 8, 32, 128, 160 };
#define NC (int)(sizeof(counts) / sizeof(counts[0]))

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: setcost WORK.cubin TIERS.cubin\n");
		return 2;
	}
	CUstream s = probe_start();
	CUmodule mw, mt;
	CUfunction fadd, fn[NT];
	CK(cuModuleLoad(&mw, argv[1]));
	CK(cuModuleGetFunction(&fadd, mw, "gs_probe_add"));
	CK(cuModuleLoad(&mt, argv[2]));
	for (int t = 0; t < NT; t++)
		CK(cuModuleGetFunction(&fn[t], mt, tier[t].fn));
	CUdeviceptr A;
	CK(cuMemAlloc(&A, N * W * sizeof(float)));
	CK(cuMemsetD32(A, 0, N * W));

	CUgraph g;
	CK(cuGraphCreate(&g, 0));
	CUgraphNode unode, nodes[N];
	unsigned long long handle[N];
	void *ukp[] = { &du };
	CUDA_KERNEL_NODE_PARAMS uk = knp(fn[NT - 1], 32, ukp); /* the largest: updates only shrink */
	CK(cuGraphAddKernelNode(&unode, g, NULL, 0, &uk));
	for (int j = 0; j < N; j++) {
		CUdeviceptr p = A + (CUdeviceptr)j * W * sizeof(float);
		void *kp[] = { &p };
		CUDA_KERNEL_NODE_PARAMS k = knp(fadd, W, kp);
		CUgraphNode dep = j ? nodes[j - 1] : unode;
		CK(cuGraphAddKernelNode(&nodes[j], g, &dep, 1, &k));
		handle[j] = probe_devnode(nodes[j]);
	}
	CUgraphExec x;
	CK(cuGraphInstantiate(&x, g, 0));
	CK(cuGraphUpload(x, s));

	/* Entries: node j % N, its pointer (8 bytes at 0) as it is; several a node where n > N. */
	enum { BLOCKS = 15, PER = 100 };
	static double ts[NT][NC][BLOCKS], tl[NT][NC][BLOCKS];
	long launches = 0;
	for (int b = 0; b < BLOCKS; b++)
		for (int c = 0; c < NC; c++)
			for (int tt = 0; tt < NT; tt++) {
				int t = (tt + b) % NT;
				unsigned n = counts[c];
				if (n > tier[t].cap) {
					ts[t][c][b] = tl[t][c][b] = -1;
					continue;
				}
				/* consecutive entries of a node: sorted by node */
				du.n = n;
				for (unsigned k = 0; k < n; k++) {
					unsigned j = (unsigned)((unsigned long long)k * N / n);
					du.e[k] = (struct entry){ handle[j], 0, 8,
								  A + (CUdeviceptr)j * W * sizeof(float) };
				}
				double set = 0, lau = 0;
				for (int it = 0; it < PER; it++) {
					unsigned bx = n < 1024 ? (n + 31) / 32 * 32 : 1024;
					CUDA_KERNEL_NODE_PARAMS k = knp(fn[t], bx, ukp);
					double t0 = now_ns();
					CK(cuGraphExecKernelNodeSetParams(x, unode, &k));
					double t1 = now_ns();
					CK(cuGraphLaunch(x, s));
					double t2 = now_ns();
					set += t1 - t0;
					lau += t2 - t1;
					launches++;
					if (it % 8 == 7)
						CK(cuStreamSynchronize(s));
				}
				CK(cuStreamSynchronize(s));
				ts[t][c][b] = set / PER;
				tl[t][c][b] = lau / PER;
			}
	/* The plain host patch for scale: one work node's pointer, as it is. */
	static double hp[BLOCKS];
	for (int b = 0; b < BLOCKS; b++) {
		double t0 = now_ns();
		for (int it = 0; it < PER; it++) {
			CUdeviceptr p = A + (CUdeviceptr)(it % N) * W * sizeof(float);
			void *kp[] = { &p };
			CUDA_KERNEL_NODE_PARAMS k = knp(fadd, W, kp);
			CK(cuGraphExecKernelNodeSetParams(x, nodes[it % N], &k));
		}
		hp[b] = (now_ns() - t0) / PER;
		CK(cuGraphUpload(x, s)); /* a host update of a device-updatable node: upload */
		CK(cuGraphLaunch(x, s));
		launches++;
		CK(cuStreamSynchronize(s));
	}
	qsort(hp, BLOCKS, sizeof(double), cmpd);
	/* Every launch added one to each float of every node. */
	static float h[N * W];
	CK(cuMemcpyDtoH(h, A, sizeof(h)));
	long bad = 0;
	for (int i = 0; i < N * W; i++)
		bad += h[i] != (float)launches;
	printf("setcost: %ld launches; work nodes' sums %s\n", launches, bad ? "WRONG" : "ok");
	printf("setcost: one host patch of a plain node: %.0f ns\n", hp[BLOCKS / 2]);
	printf("%-16s %7s", "updater", "bytes");
	for (int c = 0; c < NC; c++)
		printf("   set,launch n=%-4u", counts[c]);
	printf("\n");
	for (int t = 0; t < NT; t++) {
		printf("%-16s %7u", tier[t].fn, 8 + 24 * tier[t].cap);
		for (int c = 0; c < NC; c++) {
			if (ts[t][c][0] < 0) {
				printf("   %18s", "-");
				continue;
			}
			qsort(ts[t][c], BLOCKS, sizeof(double), cmpd);
			qsort(tl[t][c], BLOCKS, sizeof(double), cmpd);
			printf("   %8.0f,%-9.0f", ts[t][c][BLOCKS / 2], tl[t][c][BLOCKS / 2]);
		}
		printf("\n");
	}
	return bad != 0;
}
