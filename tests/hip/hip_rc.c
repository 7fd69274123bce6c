/*
 * Calls a fixed list of HIP entry points, linked against the real
 * libamdhip64, and prints each return code.  test-hip-preload runs it with
 * and without LD_PRELOAD=libgraphshim.so and requires identical output: on
 * a machine without an AMD GPU every call fails, and graphshim must hand
 * back the runtime's own codes and exit cleanly.
 */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define RC(call) printf("%-40s %d\n", #call, (int)(call))

int main(int argc, char **argv)
{
	const char *co = argc > 1 ? argv[1] : "kernels.co";
	int n = -1, dev = -1;
	void *d = NULL, *h = NULL;
	hipStream_t s = NULL;
	hipModule_t m = NULL;
	hipFunction_t f = NULL;
	hipEvent_t e = NULL;
	float a = 2.0f;
	int cnt = 16;
	void *params[] = {&a, &d, &d, &cnt};
	char buf[32] = {0};
	size_t bsz = sizeof(buf);
	void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &bsz,
			 HIP_LAUNCH_PARAM_END};

	/* First, a call whose wrapper must resolve the runtime itself. */
	void *pa = NULL;
	RC(hipMallocAsync(&pa, 256, NULL));
	RC(hipFreeAsync(pa, NULL));
	RC(hipGetDeviceCount(&n));
	RC(hipGetDevice(&dev));
	RC(hipMalloc(&d, 1024));
	RC(hipHostMalloc(&h, 1024, 0));
	RC(hipStreamCreate(&s));
	RC(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
	RC(hipEventCreate(&e));
	RC(hipModuleLoad(&m, co));
	RC(hipModuleGetFunction(&f, m, "axpy"));
	RC(hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, s, params, NULL));
	RC(hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, 0, NULL, extra));
	RC(hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, hipStreamPerThread, params, NULL));
	RC(hipMemcpyAsync(d, h, 64, hipMemcpyHostToDevice, s));
	RC(hipMemcpyAsync(d, buf, 64, hipMemcpyHostToDevice, s));
	RC(hipMemsetAsync(d, 7, 64, s));
	RC(hipMemsetD32Async(d, 7, 16, 0));
	RC(hipEventRecord(e, s));
	RC(hipStreamWaitEvent(s, e, 0));
	RC(hipStreamQuery(s));
	RC(hipStreamSynchronize(s));
	RC(hipEventSynchronize(e));
	RC(hipMemcpy(h, d, 64, hipMemcpyDeviceToHost));
	RC(hipDeviceSynchronize());
	RC(hipGetLastError());
	RC(hipPeekAtLastError());
	RC(hipStreamDestroy(s));
	RC(hipModuleUnload(m));
	RC(hipFree(d));
	RC(hipHostFree(h));
	RC(hipDeviceReset());
	printf("%-40s %s\n", "hipGetErrorName(hipErrorNoDevice)", hipGetErrorName(hipErrorNoDevice));
	return 0;
}
