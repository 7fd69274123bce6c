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
	CUfunction add = t_func("add_scalar");
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&p, 64));
	CHECK(cuMemsetD32(p, 0, 16));
	long rss0 = r_rss_kb(), rss_warm = rss0;
	unsigned n = 4;
	int one = 1;
	void *args[] = { &p, &one, &n };
	long total = 0;
	for (long i = 0; i < steps; i++) {
		/* Sequence k = i / 4: its length and grids make it distinct from
		 * every other (the simulator's kernels ignore the grid). */
		unsigned k = (unsigned)(i / 4), len = 4 + k % 5;
		for (unsigned j = 0; j < len; j++)
			CHECK(cuLaunchKernel(add, 1 + (k + j) % 1021, 1 + k / 1021 % 61, 1, 32, 1, 1, 0, s,
					     args, NULL));
		total += len;
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
