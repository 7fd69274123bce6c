/* cuGetProcAddress: unversioned names resolve to the versioned exports,
 * per-thread flag picks the _ptsz/_ptds variant, versions gate. */
#include "t_common.h"

static void *sym(const char *n)
{
	void *p = dlsym(RTLD_DEFAULT, n);
	if (!p) {
		fprintf(stderr, "FAIL: %s not exported\n", n);
		exit(1);
	}
	return p;
}

static void expect_pa(const char *name, int ver, cuuint64_t flags, const char *want)
{
	void *fn = NULL;
	CUdriverProcAddressQueryResult st;
	CUresult r = cuGetProcAddress(name, &fn, ver, flags, &st);
	if (r != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS || fn != sym(want)) {
		fprintf(stderr, "FAIL: %s@%d flags %llu: want %s (r=%d)\n", name, ver,
			(unsigned long long)flags, want, (int)r);
		exit(1);
	}
}

int main(void)
{
	const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	void *fn;
	CUdriverProcAddressQueryResult st;
	t_setup();
	expect_pa("cuMemAlloc", 13000, 0, "cuMemAlloc_v2");
	expect_pa("cuLaunchKernel", 13000, 0, "cuLaunchKernel");
	expect_pa("cuLaunchKernel", 13000, PT, "cuLaunchKernel_ptsz");
	expect_pa("cuMemcpyHtoD", 12000, PT, "cuMemcpyHtoD_v2_ptds");
	expect_pa("cuMemcpyHtoDAsync", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuMemcpyHtoDAsync_v2");
	expect_pa("cuStreamDestroy", 12000, 0, "cuStreamDestroy_v2");
	expect_pa("cuCtxCreate", 13000, 0, "cuCtxCreate_v4");
	expect_pa("cuCtxCreate", 12000, 0, "cuCtxCreate_v2");
	expect_pa("cuGraphInstantiate", 12000, 0, "cuGraphInstantiateWithFlags");
	expect_pa("cuGraphAddKernelNode", 12000, 0, "cuGraphAddKernelNode_v2");
	expect_pa("cuGraphAddKernelNode", 11000, 0, "cuGraphAddKernelNode");
	expect_pa("cuGraphExecKernelNodeSetParams", 12000, 0, "cuGraphExecKernelNodeSetParams_v2");
	expect_pa("cuGraphLaunch", 12000, PT, "cuGraphLaunch_ptsz");
	expect_pa("cuStreamGetCaptureInfo", 12030, PT, "cuStreamGetCaptureInfo_v3_ptsz");
	expect_pa("cuStreamGetCaptureInfo", 12000, 0, "cuStreamGetCaptureInfo_v2");
	expect_pa("cuStreamBeginCapture", 12000, PT, "cuStreamBeginCapture_v2_ptsz");
	expect_pa("cuEventElapsedTime", 13000, 0, "cuEventElapsedTime_v2");
	expect_pa("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
	expect_pa("cuMemsetD32Async", 12000, PT, "cuMemsetD32Async_ptsz");
	expect_pa("cuMemcpy", 12000, PT, "cuMemcpy_ptds");
	expect_pa("cuMemAlloc", 13000, PT, "cuMemAlloc_v2"); /* no variant: itself */

	EXPECT_ERR(cuGetProcAddress("cuNoSuchThing", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
	EXPECT(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && fn == NULL);
	EXPECT_ERR(cuGetProcAddress("cuLaunchKernelEx", &fn, 11000, 0, &st), CUDA_ERROR_NOT_FOUND);
	EXPECT(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

	/* The resolved pointer works: launch through it on the per-thread stream. */
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);
	CHECK(cuGetProcAddress("cuLaunchKernel", (void **)&launch, 13000, PT, NULL));
	CUdeviceptr p;
	int v = 9;
	unsigned n = 4;
	CHECK(cuMemAlloc(&p, 16));
	void *args[] = { &p, &v, &n };
	CHECK(launch(t_func("fill"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CUresult (*sync_pt)(CUstream);
	CHECK(cuGetProcAddress("cuStreamSynchronize", (void **)&sync_pt, 13000, PT, NULL));
	CHECK(sync_pt(NULL));
	EXPECT(t_read_int(p, 3) == 9);
	return 0;
}
