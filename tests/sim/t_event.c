/* Events: record/query/synchronize, cross-stream waits order work,
 * elapsed time, disabled timing. */
#include "t_common.h"

int main(void)
{
	static t_gate_t g = T_GATE_INIT;
	CUstream s1, s2;
	CUevent e, e0, enot;
	CUdeviceptr p;
	float ms;
	t_setup();
	CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&e, CU_EVENT_DEFAULT));
	CHECK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
	CHECK(cuEventCreate(&enot, CU_EVENT_DISABLE_TIMING));
	CHECK(cuMemAlloc(&p, 16 * sizeof(int)));
	CHECK(cuEventQuery(e)); /* never recorded: complete */

	CHECK(cuEventRecord(e0, s1));
	CHECK(cuLaunchHostFunc(s1, t_gate_fn, &g));
	CHECK(t_fill(s1, p, 5, 16));
	CHECK(cuEventRecord(e, s1));
	CHECK(cuEventRecord(enot, s1));
	CHECK(cuStreamWaitEvent(s2, e, 0));
	CHECK(t_add(s2, p, 1, 16)); /* must see the fill */
	t_sleep_ms(20);
	EXPECT_ERR(cuEventQuery(e), CUDA_ERROR_NOT_READY);
	EXPECT_ERR(cuStreamQuery(s2), CUDA_ERROR_NOT_READY);
	EXPECT_ERR(cuEventElapsedTime(&ms, e0, e), CUDA_ERROR_NOT_READY);
	t_gate_open(&g);
	CHECK(cuStreamSynchronize(s2));
	EXPECT(t_read_int(p, 0) == 6);
	CHECK(cuEventSynchronize(e));
	CHECK(cuEventQuery(e));
	CHECK(cuEventElapsedTime(&ms, e0, e));
	EXPECT(ms >= 15.0f && ms < 10000.0f);
	EXPECT_ERR(cuEventElapsedTime(&ms, e0, enot), CUDA_ERROR_INVALID_HANDLE);

	/* Re-record moves the event; destroy with a record pending is safe. */
	static t_gate_t g2 = T_GATE_INIT;
	CHECK(cuLaunchHostFunc(s2, t_gate_fn, &g2));
	CHECK(cuEventRecordWithFlags(e, s2, 0));
	EXPECT_ERR(cuEventQuery(e), CUDA_ERROR_NOT_READY);
	CHECK(cuEventDestroy(e));
	EXPECT_ERR(cuEventQuery(e), CUDA_ERROR_INVALID_HANDLE);
	t_gate_open(&g2);
	CHECK(cuStreamSynchronize(s2));

	/* Callbacks get the stream handle and success. */
	CHECK(cuEventDestroy(e0));
	CHECK(cuEventDestroy(enot));
	return 0;
}
