/* Memory: memsets (1D/2D, sync/async), zeroed fresh allocations, pointer
 * classification, cuMemFree waiting for queued work, host registration. */
#include "t_common.h"

int main(void)
{
	CUdeviceptr p, base;
	CUstream s;
	size_t size;
	unsigned char b[64];
	unsigned mt;
	int page;
	t_setup();
	CHECK(cuStreamCreate(&s, 0));
	CHECK(cuMemAlloc(&p, 64));
	CHECK(cuMemcpyDtoH(b, p, 64));
	for (int i = 0; i < 64; i++)
		EXPECT(b[i] == 0);
	CHECK(cuMemsetD8(p, 0xab, 64));
	CHECK(cuMemsetD16(p, 0x1234, 4));
	CHECK(cuMemsetD32Async(p + 8, 0xdeadbeef, 2, s));
	CHECK(cuStreamSynchronize(s));
	CHECK(cuMemcpyDtoH(b, p, 64));
	EXPECT(b[0] == 0x34 && b[1] == 0x12 && b[7] == 0x12 && b[8] == 0xef && b[15] == 0xde && b[16] == 0xab);
	CHECK(cuMemsetD2D8(p, 16, 0x11, 4, 2)); /* 2 rows of 4 bytes, pitch 16 */
	CHECK(cuMemcpyDtoH(b, p, 64));
	EXPECT(b[3] == 0x11 && b[4] == 0x34 && b[8] == 0xef && b[16] == 0x11 && b[19] == 0x11 && b[20] == 0xab);
	EXPECT_ERR(cuMemsetD32(p + 1, 0, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_ERR(cuMemsetD8(p, 0, 65), CUDA_ERROR_INVALID_VALUE);

	CHECK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 5));
	EXPECT(mt == CU_MEMORYTYPE_DEVICE);
	CHECK(cuMemGetAddressRange(&base, &size, p + 5));
	EXPECT(base == p && size == 64);
	void *h;
	CHECK(cuMemHostAlloc(&h, 100, CU_MEMHOSTALLOC_PORTABLE));
	CHECK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)h + 10));
	EXPECT(mt == CU_MEMORYTYPE_HOST);
	unsigned fl;
	CHECK(cuMemHostGetFlags(&fl, h));
	EXPECT(fl == CU_MEMHOSTALLOC_PORTABLE);
	EXPECT_ERR(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)&page),
		   CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemHostRegister(&page, sizeof(page), 0));
	CHECK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)&page));
	EXPECT_ERR(cuMemHostRegister(&page, sizeof(page), 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	CHECK(cuMemHostUnregister(&page));
	EXPECT_ERR(cuMemHostUnregister(&page), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	CHECK(cuMemFreeHost(h));

	/* cuMemFree waits for work queued on the context's streams. */
	static t_gate_t g = T_GATE_INIT;
	static t_log_t log = { PTHREAD_MUTEX_INITIALIZER, { 0 }, 0 };
	t_logent_t e = { &log, 'k' };
	CUstream ns;
	CHECK(cuStreamCreate(&ns, CU_STREAM_NON_BLOCKING));
	CHECK(cuLaunchHostFunc(ns, t_gate_fn, &g));
	CHECK(t_fill(ns, p, 1, 16));
	CHECK(cuLaunchHostFunc(ns, t_log_fn, &e));
	pthread_t op = t_gate_open_later(&g);
	CHECK(cuMemFree(p));
	char out[8];
	t_log_get(&log, out);
	EXPECT(strcmp(out, "k") == 0);
	pthread_join(op, NULL);
	EXPECT_ERR(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);

	size_t fr, tot;
	CHECK(cuMemGetInfo(&fr, &tot));
	EXPECT(fr <= tot && tot > 0);
	return 0;
}
