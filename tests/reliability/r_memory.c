/*
 * Bounded memory (run by t-memory.sh, with and without graphshim): one
 * stream sees an endless series of distinct sequences, each repeated four
 * times (learned, armed and built, replayed), so graphshim keeps learning,
 * building and evicting.  Prints the resident set size (from
 * /proc/self/statm) before the first launch, after a warm-up that fills
 * graphshim's caches, and at the end, in KiB.
 *
 *   r_memory [steps] [warm-up steps]     (default 100000, 6000)
 */
#include "r_common.h"

static long r_rss_kb(void)
{
	long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%ld %ld", &size, &res) != 2) {
		fprintf(stderr, "FAIL: cannot read /proc/self/statm\n");
		exit(1);
	}
	fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? atol(argv[1]) : 100000, warm = argc > 2 ? atol(argv[2]) : 6000;
	CUstream s;
	CUdeviceptr p;
	t_setup();
	/* Three kernels of three parameter layouts: copy and axpy leave p as it is. */
	CUfunction add = t_func("add_scalar"), cpy = t_func("copy"), axpy = t_func("axpy");
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&p, 64));
	CHECK(cuMemsetD32(p, 0, 16));
	CUdeviceptr y;
	CHECK(cuMemAlloc(&y, 64));
	CHECK(cuMemsetD32(y, 0, 16));
	long rss0 = r_rss_kb(), rss_warm = rss0;
	unsigned n = 4;
	int one = 1;
	float zero = 0;
	void *args[] = { &p, &one, &n }, *cargs[] = { &p, &p, &n }, *aargs[] = { &y, &p, &zero, &n };
	long total = 0;
	for (long i = 0; i < steps; i++) {
		/*
		 * Sequence k = i / 4: its length and the kernel at each position
		 * (three layouts: 9801 sequences of 4 to 8) make it another shape
		 * than its neighbours; it returns only long after the cache let it
		 * go.  (The grid is an operand, patched, so it would not do.)
		 */
		unsigned k = (unsigned)(i / 4), len = 4 + k % 5, code = k / 5;
		for (unsigned j = 0; j < len; j++, code /= 3) {
			unsigned which = code % 3;
			CHECK(cuLaunchKernel(which == 0 ? add : which == 1 ? cpy : axpy, 1, 1, 1, 32, 1, 1,
					     0, s, which == 0 ? args : which == 1 ? cargs : aargs, NULL));
			total += which == 0;
		}
		CHECK(cuStreamSynchronize(s));
		if (i + 1 == warm)
			rss_warm = r_rss_kb();
	}
	int v;
	CHECK(cuMemcpyDtoH(&v, p, sizeof(v)));
	EXPECT(v == total);
	printf("rss_kb start=%ld warm=%ld end=%ld launches=%ld\n", rss0, rss_warm, r_rss_kb(), total);
	return 0;
}
