/* Streams really run asynchronously: while a host function blocks the
 * stream, the host keeps enqueuing, queries say NOT_READY, and the queued
 * work runs in FIFO order once the gate opens. */
#include "t_common.h"

int main(void)
{
	static t_gate_t gate = T_GATE_INIT;
	CUstream s;
	CUdeviceptr d;
	t_setup();
	CHECK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
	CHECK(cuMemAlloc(&d, 64 * sizeof(int)));
	CHECK(cuLaunchHostFunc(s, t_gate_fn, &gate));
	double t0 = t_now_ms();
	for (int i = 0; i < 100; i++)
		CHECK(i == 0 ? t_fill(s, d, 5, 64) : t_add(s, d, 1, 64));
	EXPECT(t_now_ms() - t0 < 1000); /* enqueuing did not wait */
	t_sleep_ms(20);
	EXPECT_ERR(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	EXPECT(atomic_load(&gate.entered) == 1);
	t_gate_open(&gate);
	CHECK(cuStreamSynchronize(s));
	CHECK(cuStreamQuery(s));
	EXPECT(t_read_int(d, 63) == 5 + 99);

	unsigned flags;
	int prio;
	CUcontext ctx, cur;
	CHECK(cuStreamGetFlags(s, &flags));
	EXPECT(flags == CU_STREAM_DEFAULT);
	CHECK(cuStreamGetCtx(s, &ctx));
	CHECK(cuCtxGetCurrent(&cur));
	EXPECT(ctx == cur);
	CUstream sp;
	CHECK(cuStreamCreateWithPriority(&sp, CU_STREAM_NON_BLOCKING, -1));
	CHECK(cuStreamGetPriority(sp, &prio));
	EXPECT(prio == -1);
	CHECK(cuStreamGetFlags(sp, &flags));
	EXPECT(flags == CU_STREAM_NON_BLOCKING);

	/* Destroy lets queued work complete. */
	static t_gate_t g2 = T_GATE_INIT;
	t_gate_open(&g2);
	CHECK(cuLaunchHostFunc(sp, t_gate_fn, &g2));
	CHECK(t_add(sp, d, 1, 64));
	CHECK(cuStreamDestroy(sp));
	EXPECT(t_read_int(d, 0) == 105);
	EXPECT_ERR(cuStreamQuery(sp), CUDA_ERROR_INVALID_HANDLE);
	CHECK(cuStreamDestroy(s));
	CHECK(cuMemFree(d));
	return 0;
}
