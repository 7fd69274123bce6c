/* Init, device, contexts, error names: the non-stream basics. */
#include "t_common.h"

int main(void)
{
	int n, v;
	char name[64];
	const char *s;
	CUcontext c, c2, cur;
	CUdevice dev;

	EXPECT_ERR(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
	CHECK(cuDriverGetVersion(&v));
	EXPECT(v == 13000);
	c = t_setup();
	CHECK(cuDeviceGetCount(&n));
	EXPECT(n == 1);
	EXPECT_ERR(cuDeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
	CHECK(cuDeviceGetName(name, sizeof(name), 0));
	EXPECT(strlen(name) > 0);
	CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
	EXPECT(v == 1024);
	CHECK(cuCtxGetCurrent(&cur));
	EXPECT(cur == c);

	/* A created context is pushed; pop returns to the primary one. */
	CHECK(cuCtxCreate(&c2, NULL, 0, 0));
	CHECK(cuCtxGetCurrent(&cur));
	EXPECT(cur == c2);
	CHECK(cuCtxSynchronize());
	CHECK(cuCtxPopCurrent(&cur));
	EXPECT(cur == c2);
	CHECK(cuCtxGetCurrent(&cur));
	EXPECT(cur == c);
	CHECK(cuCtxPushCurrent(c2));
	CHECK(cuCtxGetDevice(&dev));
	EXPECT(dev == 0);
	CHECK(cuCtxDestroy(c2));
	CHECK(cuCtxGetCurrent(&cur));
	EXPECT(cur == c);
	EXPECT_ERR(cuCtxDestroy(c2), CUDA_ERROR_INVALID_CONTEXT);

	CHECK(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s));
	EXPECT(strcmp(s, "CUDA_ERROR_INVALID_VALUE") == 0);
	CHECK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
	EXPECT(s && *s);
	EXPECT_ERR(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuDevicePrimaryCtxRelease(0));
	return 0;
}
