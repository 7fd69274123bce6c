/*
 * What graphshim's updater node costs under conditions like a real
 * program's, where kmeans' chunks (docs/performance.md, fifty-eighth
 * session) spent 19 us of host time setting it against setcost.c's 1.2 us
 * in a warm loop.  One graph as graphshim builds it: the updater
 * (tiers.cubin's gs_du_apply32/512), then a chain of N work nodes
 * (work.cubin's gs_probe_wadd: a pointer and 256 bytes), all
 * device-updatable.  An iteration sets the updater (or disables it),
 * launches the graph and synchronizes: host ns of the set, host ns of the
 * launch, and the GPU's ns of the graph (events around it), medians.
 *
 *   updcost WORK.cubin TIERS.cubin
 *
 * Scenarios, interleaved in blocks:
 *   off     the updater disabled (nothing to write): the graph alone
 *   warm    72 entries (12 nodes, 6 words each) through gs_du_apply512, the same each time
 *   thrash  warm, with 32 MB of the host's memory written before each set
 *           (an interpreter between two graph launches)
 *   alt     72 entries (gs_du_apply512) and 24 (gs_du_apply32) in turn
 *   toggle  72 entries, then nothing (the node disabled), in turn: the enabled ones
 *   spread  72 entries over all 24 nodes (3 words each)
 *   few     12 entries (12 nodes, 1 word each), gs_du_apply32
 *   run6    12 entries, each a run of 6 words (48 bytes) written by one call (gs_du_apply512)
 *   run32   12 entries, each a run of 32 words (256 bytes, the longest)
 *   host12  12 host patches of work nodes (no updater), then the upload they need
 *   plain12 12 host patches on a graph of plain nodes (not device-updatable): no upload
 * Every entry and patch writes a node's words as they are, so the work
 * nodes' sums say whether every launch ran: checked.
 */
#define _GNU_SOURCE
#define PROBE_NAME "updcost"
#include <stdbool.h>
#include <stdint.h>

#include "probe_util.h"

#define N 24  /* work nodes */
#define W 32  /* floats each adds to */
#define CAP 512
#define PADW 32 /* the worker's words besides its pointer */

struct entry {
	unsigned long long node;
	unsigned off, size;
	unsigned long long value;
};
static struct {
	unsigned n, pad;
	struct entry e[1360];
} du;
struct pad {
	unsigned long long w[PADW];
};

enum { S_OFF, S_WARM, S_THRASH, S_ALT, S_TOGGLE, S_SPREAD, S_FEW, S_RUN6, S_RUN32, S_HOST, S_PLAIN, NS };
static const char *sname[NS] = { "off",  "warm", "thrash", "alt",  "toggle", "spread",
				 "few",  "run6", "run32",  "host12", "plain12" };

static CUfunction fadd, fsmall, fbig;
static CUdeviceptr A, B;
static struct pad zero;
static CUgraphNode unode, nu[N], np[N];
static unsigned long long handle[N];

static CUDA_KERNEL_NODE_PARAMS work(CUdeviceptr *p, void **kp)
{
	kp[0] = p;
	kp[1] = &zero;
	return knp(fadd, W, kp);
}

/* Entries: `nodes` nodes spread over the chain, `words` pad words each. */
static void fill(unsigned nodes, unsigned words)
{
	du.n = 0;
	for (unsigned j = 0; j < nodes; j++)
		for (unsigned w = 0; w < words; w++)
			du.e[du.n++] = (struct entry){ handle[j * N / nodes], 8 + 8 * w, 8, 0 };
}

/* Entries: `nodes` nodes, one run of `bytes` of pad words each, its bytes after the entries. */
static void fill_runs(unsigned nodes, unsigned bytes)
{
	du.n = nodes;
	for (unsigned j = 0; j < nodes; j++)
		du.e[j] = (struct entry){ handle[j * N / nodes], 8, bytes, (unsigned long long)j * bytes };
	memset(&du.e[nodes], 0, (size_t)nodes * bytes);
}

static CUgraphExec build(CUdeviceptr base, bool updatable, CUgraphNode *nodes)
{
	CUgraph g;
	CK(cuGraphCreate(&g, 0));
	CUgraphNode prev = NULL;
	if (updatable) {
		void *ukp[] = { &du };
		du.n = 0;
		CUDA_KERNEL_NODE_PARAMS uk = knp(fbig, 32, ukp);
		CK(cuGraphAddKernelNode(&unode, g, NULL, 0, &uk));
		prev = unode;
	}
	for (int j = 0; j < N; j++) {
		CUdeviceptr p = base + (CUdeviceptr)j * W * sizeof(float);
		void *kp[2];
		CUDA_KERNEL_NODE_PARAMS k = work(&p, kp);
		CK(cuGraphAddKernelNode(&nodes[j], g, prev ? &prev : NULL, prev ? 1 : 0, &k));
		prev = nodes[j];
		if (updatable)
			handle[j] = probe_devnode(nodes[j]);
	}
	CUgraphExec x;
	CK(cuGraphInstantiate(&x, g, 0));
	return x;
}

static void set_updater(CUgraphExec x, CUfunction f)
{
	void *ukp[] = { &du };
	CUDA_KERNEL_NODE_PARAMS k = knp(f, 32, ukp);
	CK(cuGraphExecKernelNodeSetParams(x, unode, &k));
}

static void host_patches(CUgraphExec x, CUgraphNode *nodes, CUdeviceptr base)
{
	for (int j = 0; j < 12; j++) {
		CUdeviceptr p = base + (CUdeviceptr)(2 * j) * W * sizeof(float);
		void *kp[2];
		CUDA_KERNEL_NODE_PARAMS k = work(&p, kp);
		CK(cuGraphExecKernelNodeSetParams(x, nodes[2 * j], &k));
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: updcost WORK.cubin TIERS.cubin\n");
		return 2;
	}
	CUstream s = probe_start();
	CUmodule mw, mt;
	CK(cuModuleLoad(&mw, argv[1]));
	CK(cuModuleGetFunction(&fadd, mw, "gs_probe_wadd"));
	CK(cuModuleLoad(&mt, argv[2]));
	CK(cuModuleGetFunction(&fsmall, mt, "gs_du_apply32"));
	CK(cuModuleGetFunction(&fbig, mt, "gs_du_apply512"));
	CK(cuMemAlloc(&A, N * W * sizeof(float)));
	CK(cuMemAlloc(&B, N * W * sizeof(float)));
	CK(cuMemsetD32(A, 0, N * W));
	CK(cuMemsetD32(B, 0, N * W));
	CUgraphExec xu = build(A, true, nu), xp = build(B, false, np);
	CK(cuGraphUpload(xu, s));
	CK(cuGraphUpload(xp, s));
	CUevent e0, e1;
	CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
	size_t tsz = 32u << 20;
	unsigned char *junk = malloc(tsz);
	if (!junk)
		return 1;

	enum { BLOCKS = 9, PER = 40 };
	static double tset[NS][BLOCKS * PER], tlau[NS][BLOCKS * PER], tgpu[NS][BLOCKS * PER];
	int cnt[NS] = { 0 };
	long la = 0, lb = 0;
	bool on = true;
	for (int b = 0; b < BLOCKS; b++)
		for (int ss = 0; ss < NS; ss++) {
			int sc = (ss + b) % NS;
			for (int it = 0; it < PER; it++) {
				bool plain = sc == S_PLAIN, enabled = true;
				CUgraphExec x = plain ? xp : xu;
				if (sc == S_THRASH)
					memset(junk, it & 0xff, tsz);
				double t0 = now_ns();
				switch (sc) {
				case S_OFF:
					enabled = false;
					break;
				case S_WARM:
				case S_THRASH:
					fill(12, 6);
					set_updater(x, fbig);
					break;
				case S_ALT:
					if (it & 1) {
						fill(12, 2);
						set_updater(x, fsmall);
					} else {
						fill(12, 6);
						set_updater(x, fbig);
					}
					break;
				case S_TOGGLE:
					enabled = !(it & 1);
					if (enabled) {
						fill(12, 6);
						set_updater(x, fbig);
					}
					break;
				case S_SPREAD:
					fill(24, 3);
					set_updater(x, fbig);
					break;
				case S_FEW:
					fill(12, 1);
					set_updater(x, fsmall);
					break;
				case S_RUN6:
					fill_runs(12, 48);
					set_updater(x, fbig);
					break;
				case S_RUN32:
					fill_runs(12, 256);
					set_updater(x, fbig);
					break;
				case S_HOST:
					enabled = false;
					host_patches(x, nu, A);
					break;
				case S_PLAIN:
					host_patches(x, np, B);
					break;
				}
				if (!plain && enabled != on) {
					CK(cuGraphNodeSetEnabled(x, unode, enabled));
					on = enabled;
				}
				if (sc == S_HOST)
					CK(cuGraphUpload(x, s));
				double t1 = now_ns();
				CK(cuEventRecord(e0, s));
				double t2 = now_ns();
				CK(cuGraphLaunch(x, s));
				double t3 = now_ns();
				CK(cuEventRecord(e1, s));
				CK(cuStreamSynchronize(s));
				float ms = 0;
				CK(cuEventElapsedTime(&ms, e0, e1));
				*(plain ? &lb : &la) += 1;
				if (sc == S_TOGGLE && !enabled)
					continue;
				int k = cnt[sc]++;
				tset[sc][k] = t1 - t0;
				tlau[sc][k] = t3 - t2;
				tgpu[sc][k] = ms * 1e6;
			}
		}
	static float h[N * W];
	long bad = 0;
	CK(cuMemcpyDtoH(h, A, sizeof(h)));
	for (int i = 0; i < N * W; i++)
		bad += h[i] != (float)la;
	CK(cuMemcpyDtoH(h, B, sizeof(h)));
	for (int i = 0; i < N * W; i++)
		bad += h[i] != (float)lb;
	printf("updcost: %ld + %ld launches; work nodes' sums %s\n", la, lb, bad ? "WRONG" : "ok");
	printf("%-8s %10s %10s %10s   (medians, ns; %d iterations each, toggle's enabled half)\n", "scenario",
	       "set", "launch", "gpu", BLOCKS * PER);
	for (int sc = 0; sc < NS; sc++) {
		int n = cnt[sc];
		qsort(tset[sc], n, sizeof(double), cmpd);
		qsort(tlau[sc], n, sizeof(double), cmpd);
		qsort(tgpu[sc], n, sizeof(double), cmpd);
		printf("%-8s %10.0f %10.0f %10.0f\n", sname[sc], tset[sc][n / 2], tlau[sc][n / 2], tgpu[sc][n / 2]);
	}
	free(junk);
	return bad != 0;
}
