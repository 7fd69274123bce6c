/* Fault injection: GS_SIM_FAIL_<KIND>=N fails the Nth call of that kind,
 * N+ every call from the Nth on. */
#include "t_common.h"

int main(void)
{
	setenv("GS_SIM_FAIL_ALLOC", "2", 1);
	setenv("GS_SIM_FAIL_INSTANTIATE", "1", 1);
	setenv("GS_SIM_FAIL_GRAPH_LAUNCH", "2", 1);
	setenv("GS_SIM_FAIL_NODE_PATCH", "1", 1);
	setenv("GS_SIM_FAIL_PARAM_INFO", "2+", 1);
	setenv("GS_SIM_FAIL_GRAPH_BUILD", "1", 1);
	CUdeviceptr p, q;
	CUgraph g;
	CUgraphExec x;
	CUgraphNode n;
	CUstream s;
	size_t off, sz;
	t_setup();
	CHECK(cuStreamCreate(&s, 0));
	CHECK(cuMemAlloc(&p, 64));
	EXPECT_ERR(cuMemAlloc(&q, 64), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(cuMemAlloc(&q, 64));

	CHECK(cuFuncGetParamInfo(t_func("fill"), 0, &off, &sz));
	EXPECT_ERR(cuFuncGetParamInfo(t_func("fill"), 0, &off, &sz), CUDA_ERROR_INVALID_VALUE);
	EXPECT_ERR(cuFuncGetParamInfo(t_func("fill"), 1, &off, &sz), CUDA_ERROR_INVALID_VALUE);

	CHECK(cuGraphCreate(&g, 0));
	EXPECT_ERR(cuGraphAddEmptyNode(&n, g, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	int v = 1;
	unsigned cnt = 16;
	void *args[] = { &p, &v, &cnt };
	CUDA_KERNEL_NODE_PARAMS kp;
	memset(&kp, 0, sizeof(kp));
	kp.func = t_func("fill");
	kp.gridDimX = kp.gridDimY = kp.gridDimZ = kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
	kp.kernelParams = args;
	CHECK(cuGraphAddKernelNode(&n, g, NULL, 0, &kp));
	EXPECT_ERR(cuGraphInstantiate(&x, g, 0), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(cuGraphInstantiate(&x, g, 0));
	CHECK(cuGraphLaunch(x, s));
	EXPECT_ERR(cuGraphLaunch(x, s), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(cuGraphLaunch(x, s));
	EXPECT_ERR(cuGraphExecKernelNodeSetParams(x, n, &kp), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuGraphExecKernelNodeSetParams(x, n, &kp));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(p, 3) == 1);
	return 0;
}
