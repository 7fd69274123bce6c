/*
 * Secure-execution mode (run by t-secure.sh).  Linked directly against
 * libgraphshim.so (ahead of libcuda.so.1, by absolute rpath), because the
 * loader ignores LD_PRELOAD paths for setuid/setgid programs.  Prints
 * whether the kernel set AT_SECURE and how many executable graphs exist
 * after a learned step has run: graphshim at work makes some, graphshim
 * off (GRAPHSHIM_ENABLE=0 honoured) makes none.  With the argument "hip" it
 * then makes one HIP call through graphshim's HIP hooks (when the library
 * has them), which starts the HIP backend: GRAPHSHIM_HIP_LIBRARY names the
 * library it opens, and must not be read in secure-execution mode.
 */
#include "r_common.h"

#include <sys/auxv.h>

int main(int argc, char **argv)
{
	CUstream s;
	CUdeviceptr p;
	t_setup();
	CUfunction add = t_func("add_scalar");
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&p, 64));
	CHECK(cuMemsetD32(p, 0, 16));
	/* With the background builder (its default) graphs appear a little
	 * later: keep stepping until they do, or long enough to be sure. */
	int execs = 0;
	for (int i = 0; i < 2000 && !execs; i++) {
		r_launches(add, s, p, 4, R_STEP);
		CHECK(cuStreamSynchronize(s));
		execs = r_count(GS_SIM_H_EXEC);
		if (i > 20 && !execs)
			usleep(1000);
	}
	int hip = -1;
	if (argc > 1 && !strcmp(argv[1], "hip")) {
		int (*count)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "hipGetDeviceCount");
		int n = 0;
		hip = count ? (count(&n), 1) : 0;
	}
	printf("secure=%lu execs=%d shim=%d hip=%d\n", getauxval(AT_SECURE), execs, r_shimmed(), hip);
	return 0;
}
