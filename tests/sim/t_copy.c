/* Copy timing semantics: pageable async HtoD is staged at call time,
 * pinned async copies happen at execution, async DtoH to pageable memory
 * completes before returning, synchronous copies order after stream work. */
#include "t_common.h"

int main(void)
{
	static t_gate_t g1 = T_GATE_INIT, g2 = T_GATE_INIT, g3 = T_GATE_INIT;
	CUstream s;
	CUdeviceptr d;
	int page[4] = { 1, 2, 3, 4 }, *pin, out[4];
	t_setup();
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&d, 4 * sizeof(int)));
	CHECK(cuMemAllocHost((void **)&pin, 4 * sizeof(int)));

	/* Pageable source: later host writes are not seen. */
	CHECK(cuLaunchHostFunc(s, t_gate_fn, &g1));
	CHECK(cuMemcpyHtoDAsync(d, page, sizeof(page), s));
	page[0] = 100;
	t_gate_open(&g1);
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(d, 0) == 1);

	/* Pinned source: read when the stream gets there. */
	pin[0] = 10;
	pin[1] = 2;
	pin[2] = 3;
	pin[3] = 4;
	CHECK(cuLaunchHostFunc(s, t_gate_fn, &g2));
	CHECK(cuMemcpyHtoDAsync(d, pin, 4 * sizeof(int), s));
	pin[0] = 20;
	t_gate_open(&g2);
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(d, 0) == 20);

	/* Pinned destination: written at execution, not at call. */
	pin[1] = -1;
	CHECK(cuLaunchHostFunc(s, t_gate_fn, &g3));
	CHECK(cuMemcpyDtoHAsync(pin, d, 4 * sizeof(int), s));
	t_sleep_ms(20);
	EXPECT(pin[1] == -1);
	t_gate_open(&g3);
	CHECK(cuStreamSynchronize(s));
	EXPECT(pin[0] == 20 && pin[1] == 2);

	/* Pageable destination: complete on return, after prior stream work. */
	CHECK(t_fill(s, d, 42, 4));
	memset(out, 0, sizeof(out));
	CHECK(cuMemcpyDtoHAsync(out, d, sizeof(out), s));
	EXPECT(out[3] == 42);

	/* Synchronous copies wait for blocking-stream work via the legacy stream. */
	CUstream b;
	static t_gate_t g4 = T_GATE_INIT;
	CHECK(cuStreamCreate(&b, CU_STREAM_DEFAULT));
	CHECK(cuLaunchHostFunc(b, t_gate_fn, &g4));
	CHECK(t_fill(b, d, 9, 4));
	pthread_t th = t_gate_open_later(&g4);
	CHECK(cuMemcpyDtoH(out, d, sizeof(out)));
	pthread_join(th, NULL);
	EXPECT(out[0] == 9);

	/* DtoD, unified cuMemcpy, and an out-of-range copy. */
	CUdeviceptr d2;
	CHECK(cuMemAlloc(&d2, 4 * sizeof(int)));
	CHECK(cuMemcpyDtoD(d2, d, 4 * sizeof(int)));
	CHECK(cuMemcpy((CUdeviceptr)(uintptr_t)out, d2, sizeof(out)));
	EXPECT(out[2] == 9);
	CHECK(cuMemcpyDtoDAsync(d2, d, 4 * sizeof(int), s));
	CHECK(cuMemcpyAsync(d2, (CUdeviceptr)(uintptr_t)page, sizeof(page), s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(d2, 0) == 100);
	EXPECT_ERR(cuMemcpyHtoD(d, page, 5 * sizeof(int)), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemFreeHost(pin));
	return 0;
}
