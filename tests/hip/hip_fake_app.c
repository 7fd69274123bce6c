/*
 * Drives graphshim's HIP backend against tests/hip/fake_hip.c: repeated
 * steps of `extra`-form launches (learned and replayed as graphs), then
 * hipExtModuleLaunchKernel with a global size that is not a multiple of
 * the local size, which must pass through at once with the caller's own
 * sizes, after the held work of its stream.  Exits non-zero on a mismatch.
 */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct fakehip_counts {
	long executed, direct, ext, graphs, graph_launches, patches;
	uint32_t last_ext_global_x;
} fakehip_counts_t;
extern fakehip_counts_t fakehip;
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
				    uint32_t ly, uint32_t lz, size_t shm, hipStream_t s, void **params,
				    void **extra, hipEvent_t a, hipEvent_t b, uint32_t flags);
void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
			   const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
			   void *blockDim, void *gridDim, int *wSize);

/*
 * hipFuncSetAttribute inside a step, as frameworks call it before a launch:
 * a dynamic shared memory limit that no held launch of the function
 * exceeds keeps the step's held launches held (they replay as one graph);
 * a lower one submits them first.  Returns non-zero on a mismatch.
 */
static int set_attribute_steps(hipStream_t s, long *issued, int held)
{
	const void *stub = (const void *)(uintptr_t)0x4000;
	__hipRegisterFunction(NULL, stub, "attn", "attn", 0, NULL, NULL, NULL, NULL, NULL);
	int bad = 0;
	for (int step = 0; step < 12; step++) {
		for (int k = 0; k < 6; k++) {
			unsigned char buf[16] = {(unsigned char)k};
			size_t n = sizeof(buf);
			void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &n,
					 HIP_LAUNCH_PARAM_END};
			hipFunction_t f = k == 3 ? (hipFunction_t)stub : (hipFunction_t)(uintptr_t)(0x2100 + k);
			if (k == 3) {
				/* A limit above the launch's 256 bytes, then (last steps) below. */
				long before = fakehip.executed;
				int limit = step < 10 ? 1024 : 128;
				bad |= hipFuncSetAttribute(stub, hipFuncAttributeMaxDynamicSharedMemorySize, limit) !=
				       hipSuccess;
				if (held && step >= 4 && step < 10 && fakehip.executed != before) {
					printf("step %d: a higher limit submitted %ld held launches\n", step,
					       fakehip.executed - before);
					bad = 1;
				}
				if (held && step >= 10 && fakehip.executed != *issued) {
					printf("step %d: a lower limit left %ld launches held\n", step,
					       *issued - fakehip.executed);
					bad = 1;
				}
			}
			bad |= hipModuleLaunchKernel(f, 4, 1, 1, 64, 1, 1, k == 3 ? 256 : 0, s, NULL, extra) !=
			       hipSuccess;
			(*issued)++;
		}
		bad |= hipStreamSynchronize(s) != hipSuccess;
		if (fakehip.executed != *issued) {
			printf("set-attribute step %d: executed %ld of %ld\n", step, fakehip.executed, *issued);
			bad = 1;
		}
	}
	return bad;
}

int main(void)
{
	hipStream_t s = (hipStream_t)(uintptr_t)0x1000;
	long issued = 0;
	int bad = 0;
	for (int step = 0; step < 12; step++) {
		for (int k = 0; k < 6; k++) {
			unsigned char buf[24] = {(unsigned char)k, (unsigned char)(step & 1)};
			size_t n = sizeof(buf);
			void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &n,
					 HIP_LAUNCH_PARAM_END};
			hipFunction_t f = (hipFunction_t)(uintptr_t)(0x2000 + k);
			bad |= hipModuleLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, s, NULL, extra) != hipSuccess;
			issued++;
		}
		bad |= hipStreamSynchronize(s) != hipSuccess;
		if (fakehip.executed != issued) {
			printf("step %d: executed %ld of %ld after synchronize\n", step, fakehip.executed, issued);
			bad = 1;
		}
	}
	/* Held work first, then the boundary itself, unchanged. */
	unsigned char buf[8] = {0};
	size_t n = sizeof(buf);
	void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &n, HIP_LAUNCH_PARAM_END};
	for (int k = 0; k < 3; k++, issued++)
		hipModuleLaunchKernel((hipFunction_t)(uintptr_t)(0x2000 + k), 4, 1, 1, 64, 1, 1, 0, s, NULL, extra);
	long ext0 = fakehip.ext;
	bad |= hipExtModuleLaunchKernel((hipFunction_t)0x3000, 1000, 1, 1, 256, 1, 1, 0, s, NULL, extra, NULL,
					NULL, 0) != hipSuccess;
	issued++;
	if (fakehip.ext != ext0 + 1 || fakehip.last_ext_global_x != 1000 || fakehip.executed != issued) {
		printf("non-multiple ext launch: ext %ld->%ld, global %u, executed %ld of %ld\n", ext0,
		       fakehip.ext, fakehip.last_ext_global_x, fakehip.executed, issued);
		bad = 1;
	}
	hipStreamSynchronize(s);
	long graph_launches = fakehip.graph_launches;
	bad |= set_attribute_steps(s, &issued, getenv("EXPECT_GRAPHS") != NULL);
	if (getenv("EXPECT_GRAPHS") && fakehip.graph_launches < graph_launches + 6) {
		printf("set-attribute steps: %ld graph launches (a flush at every step?)\n",
		       fakehip.graph_launches - graph_launches);
		bad = 1;
	}
	printf("issued %ld executed %ld direct %ld ext %ld graphs %ld graph_launches %ld patches %ld\n", issued,
	       fakehip.executed, fakehip.direct, fakehip.ext, fakehip.graphs, fakehip.graph_launches,
	       fakehip.patches);
	if (getenv("EXPECT_GRAPHS") && !fakehip.graph_launches) {
		printf("no graph was replayed\n");
		bad = 1;
	}
	if (getenv("EXPECT_REBUILD") && fakehip.graphs < 2) {
		printf("the patch limit did not rebuild the graph\n");
		bad = 1;
	}
	return bad;
}
