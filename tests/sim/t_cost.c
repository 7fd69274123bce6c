/* GS_SIM_LAUNCH_US: each launch costs host time; a graph of the same
 * kernels costs the host one launch. */
#include "t_common.h"

int main(void)
{
	setenv("GS_SIM_LAUNCH_US", "200", 1);
	setenv("GS_SIM_NODE_US", "1", 1);
	CUstream s;
	CUdeviceptr p;
	CUgraph g;
	CUgraphExec x;
	const int N = 50;
	t_setup();
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&p, 64));
	double t0 = t_now_ms();
	for (int i = 0; i < N; i++)
		CHECK(t_add(s, p, 1, 16));
	double eager = t_now_ms() - t0;
	CHECK(cuStreamSynchronize(s));
	EXPECT(eager >= N * 0.2 * 0.95);

	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	for (int i = 0; i < N; i++)
		CHECK(t_add(s, p, 1, 16));
	CHECK(cuStreamEndCapture(s, &g));
	CHECK(cuGraphInstantiate(&x, g, 0));
	/* The fastest of a few launches: one launch timed once took 4.9 ms in
	 * a sanitizer build on a loaded two-core CI machine (a preemption). */
	double graph = 1e9;
	const int G = 5;
	for (int k = 0; k < G; k++) {
		t0 = t_now_ms();
		CHECK(cuGraphLaunch(x, s));
		double dt = t_now_ms() - t0;
		graph = dt < graph ? dt : graph;
	}
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(p, 0) == (1 + G) * N);
	printf("eager host %.2f ms, graph host %.2f ms\n", eager, graph);
	EXPECT(graph < eager / 5);
	return 0;
}
