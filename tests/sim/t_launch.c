/* Launch forms and validation: kernelParams copied at call time, the
 * packed `extra` buffer, cuLaunchKernelEx, CUkernel handles from a
 * library, parameter layout queries (char, struct), launch errors. */
#include "t_common.h"

struct triple { int64_t a, b, c; };

int main(void)
{
	CUstream s;
	CUdeviceptr p, o;
	size_t off, size;
	t_setup();
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&p, 64 * sizeof(int)));
	CHECK(cuMemAlloc(&o, 3 * sizeof(int64_t)));
	CUfunction fill = t_func("fill"), trip = t_func("triple"), cp = t_func("charptr");

	/* Layout: triple(char, struct 24, ptr) -> 0, 8, 32. */
	CHECK(cuFuncGetParamInfo(trip, 0, &off, &size));
	EXPECT(off == 0 && size == 1);
	CHECK(cuFuncGetParamInfo(trip, 1, &off, &size));
	EXPECT(off == 8 && size == 24);
	CHECK(cuFuncGetParamInfo(trip, 2, &off, &size));
	EXPECT(off == 32 && size == 8);
	EXPECT_ERR(cuFuncGetParamInfo(trip, 3, &off, &size), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuFuncGetParamInfo(cp, 2, &off, &size));
	EXPECT(off == 16 && size == 2);
	const char *name;
	CHECK(cuFuncGetName(&name, fill));
	EXPECT(strcmp(name, "fill") == 0);

	/* kernelParams are copied at call time. */
	static t_gate_t g = T_GATE_INIT;
	CHECK(cuLaunchHostFunc(s, t_gate_fn, &g));
	int v = 11;
	unsigned n = 64;
	void *args[] = { &p, &v, &n };
	CHECK(cuLaunchKernel(fill, 2, 1, 1, 32, 1, 1, 0, s, args, NULL));
	v = 12;
	t_gate_open(&g);
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(p, 63) == 11);

	/* extra form with a packed buffer laid out by the param info. */
	unsigned char buf[40];
	char tag = 3;
	struct triple t = { 1, 2, 3 };
	memset(buf, 0, sizeof(buf));
	memcpy(buf + 0, &tag, 1);
	memcpy(buf + 8, &t, 24);
	memcpy(buf + 32, &o, 8);
	size_t bsz = sizeof(buf);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bsz,
			  CU_LAUNCH_PARAM_END };
	CHECK(cuLaunchKernel(trip, 1, 1, 1, 1, 1, 1, 0, s, NULL, extra));
	int64_t out[3];
	CHECK(cuMemcpyDtoHAsync(out, o, sizeof(out), s));
	EXPECT(out[0] == 3 && out[1] == 6 && out[2] == 9);
	bsz = 16;
	EXPECT_ERR(cuLaunchKernel(trip, 1, 1, 1, 1, 1, 1, 0, s, NULL, extra), CUDA_ERROR_INVALID_VALUE);

	/* cuLaunchKernelEx with an attribute; grid/block reach the kernel. */
	char c = 'x';
	short sh = -7;
	void *cargs[] = { &c, &p, &sh };
	CUlaunchAttribute attr;
	memset(&attr, 0, sizeof(attr));
	attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	attr.value.priority = 0;
	CUlaunchConfig cfg = { 4, 1, 1, 64, 1, 1, 0, s, &attr, 1 };
	CHECK(cuLaunchKernelEx(&cfg, cp, cargs, NULL));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(p, 0) == 'x' && t_read_int(p, 1) == -7 && t_read_int(p, 2) == 256);

	/* Cooperative launches: the grid must fit on the device at once
	 * (132 multiprocessors, 2048 threads each: 8 blocks of 256). */
	int per_sm = 0;
	CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cp, 256, 0));
	EXPECT(per_sm == 8);
	CHECK(cuLaunchCooperativeKernel(cp, 8 * 132, 1, 1, 256, 1, 1, 0, s, cargs));
	EXPECT_ERR(cuLaunchCooperativeKernel(cp, 8 * 132 + 1, 1, 1, 256, 1, 1, 0, s, cargs),
		   CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
	attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	attr.value.cooperative = 1;
	cfg.gridDimX = 8 * 132 + 1;
	cfg.blockDimX = 256;
	EXPECT_ERR(cuLaunchKernelEx(&cfg, cp, cargs, NULL), CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
	cfg.gridDimX = 4;
	CHECK(cuLaunchKernelEx(&cfg, cp, cargs, NULL));
	CHECK(cuStreamSynchronize(s));

	/* Library + CUkernel, launched directly as a CUfunction. */
	CUlibrary lib;
	CUkernel k;
	CUfunction kf;
	CHECK(cuLibraryLoadFromFile(&lib, GS_SIM_TESTKERN, NULL, NULL, 0, NULL, NULL, 0));
	CHECK(cuLibraryGetKernel(&k, lib, "add_scalar"));
	CHECK(cuKernelGetParamInfo(k, 1, &off, &size));
	EXPECT(off == 8 && size == 4);
	int one = 1;
	void *kargs[] = { &p, &one, &n };
	CHECK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, s, kargs, NULL));
	CHECK(cuKernelGetFunction(&kf, k));
	CHECK(cuLaunchKernel(kf, 1, 1, 1, 1, 1, 1, 0, s, kargs, NULL));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(p, 10) == 13);
	CHECK(cuLibraryUnload(lib));

	/* Module from an image naming the .so. */
	CUmodule m2;
	char img[512];
	snprintf(img, sizeof(img), "GSSIM:%.*s.sim.so", (int)(strlen(GS_SIM_TESTKERN) - 6), GS_SIM_TESTKERN);
	CHECK(cuModuleLoadData(&m2, img));
	CHECK(cuModuleUnload(m2));
	EXPECT_ERR(cuModuleUnload(m2), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_ERR(cuModuleLoadData(&m2, "\x7f" "ELF junk"), CUDA_ERROR_INVALID_IMAGE);
	EXPECT_ERR(cuModuleLoad(&m2, "/nonexistent/x.cubin"), CUDA_ERROR_FILE_NOT_FOUND);
	CUfunction nf;
	EXPECT_ERR(cuModuleGetFunction(&nf, t_mod, "nope"), CUDA_ERROR_NOT_FOUND);

	/* Launch validation. */
	EXPECT_ERR(cuLaunchKernel(fill, 0, 1, 1, 32, 1, 1, 0, s, args, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_ERR(cuLaunchKernel(fill, 1, 1, 1, 0, 1, 1, 0, s, args, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_ERR(cuLaunchKernel(fill, 1, 1, 1, 1025, 1, 1, 0, s, args, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_ERR(cuLaunchKernel(fill, 1, 1, 1, 32, 32, 2, 0, s, args, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_ERR(cuLaunchKernel((CUfunction)&v, 1, 1, 1, 1, 1, 1, 0, s, args, NULL), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_ERR(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, (CUstream)&v, args, NULL), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_ERR(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	return 0;
}
