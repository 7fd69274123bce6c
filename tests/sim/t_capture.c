/* Stream capture: work on a capturing stream becomes graph nodes (not
 * executed), fork/join through events, capture info, illegal syncs. */
#include "t_common.h"

int main(void)
{
	CUstream s, s2;
	CUgraph g;
	CUgraphExec x;
	CUevent fork, join;
	CUdeviceptr p, q;
	CUstreamCaptureStatus st;
	cuuint64_t id;
	size_t nd;
	const CUgraphNode *deps;
	t_setup();
	CHECK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
	CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
	CHECK(cuMemAlloc(&p, 16 * sizeof(int)));
	CHECK(cuMemAlloc(&q, 16 * sizeof(int)));

	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CHECK(cuStreamIsCapturing(s, &st));
	EXPECT(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	CHECK(t_fill(s, p, 1, 16));
	CHECK(cuEventRecord(fork, s));
	CHECK(cuStreamWaitEvent(s2, fork, 0));       /* s2 joins the capture */
	CHECK(cuStreamIsCapturing(s2, &st));
	EXPECT(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	CHECK(cuMemsetD32Async(q, 5, 16, s2));
	CHECK(cuEventRecord(join, s2));
	CHECK(t_add(s, p, 2, 16));
	CHECK(cuStreamWaitEvent(s, join, 0));
	CHECK(cuMemcpyDtoDAsync(q, p, 8 * sizeof(int), s));
	CHECK(cuStreamGetCaptureInfo(s, &st, &id, NULL, &deps, NULL, &nd));
	EXPECT(st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && nd == 1);
	CHECK(cuStreamEndCapture(s, &g));
	EXPECT(t_read_int(p, 0) == 0); /* nothing ran while capturing */
	CHECK(cuStreamIsCapturing(s2, &st));
	EXPECT(st == CU_STREAM_CAPTURE_STATUS_NONE);
	size_t nn;
	CHECK(cuGraphGetNodes(g, NULL, &nn));
	EXPECT(nn == 4);
	CHECK(cuGraphInstantiate(&x, g, 0));
	CHECK(cuGraphLaunch(x, s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(q, 0) == 3 && t_read_int(q, 7) == 3 && t_read_int(q, 8) == 5);

	/* Synchronizing a capturing stream fails and invalidates the capture. */
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CHECK(t_fill(s, p, 1, 16));
	EXPECT_ERR(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CHECK(cuStreamIsCapturing(s, &st));
	EXPECT(st == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	CUgraph g2;
	EXPECT_ERR(cuStreamEndCapture(s, &g2), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* Legacy-stream work during a global capture of a blocking stream. */
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_ERR(t_fill(NULL, p, 1, 16), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	EXPECT_ERR(cuStreamEndCapture(s, &g2), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_ERR(cuStreamEndCapture(s, &g2), CUDA_ERROR_ILLEGAL_STATE);
	EXPECT_ERR(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
		   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);

	/* Pageable copies cannot be captured. */
	int host[4];
	CHECK(cuStreamBeginCapture(s2, CU_STREAM_CAPTURE_MODE_RELAXED));
	EXPECT_ERR(cuMemcpyHtoDAsync(p, host, sizeof(host), s2), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CHECK(cuStreamEndCapture(s2, &g2));
	CHECK(cuGraphDestroy(g2));
	CHECK(cuGraphExecDestroy(x));
	CHECK(cuGraphDestroy(g));
	return 0;
}
