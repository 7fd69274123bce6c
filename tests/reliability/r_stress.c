/*
 * Threads under graphshim (run by t-threads.sh, with and without it): six
 * host threads launch a learned step over and over, four on streams of
 * their own (blocking and non-blocking) and two on one shared stream, with
 * stream syncs, events, queries, cross-thread syncs of the shared stream
 * and now and then a step on the legacy default stream.  One argument of
 * the step drifts (patching and mismatches).  A seventh thread's steps
 * never repeat (no-op kernels of another layout inserted at random), so its stream goes
 * cold and its launches take the cold lane, while an eighth thread
 * synchronizes the whole context over and over, ending that stream's cold
 * segments from outside.  Every worker adds to its own slice of one
 * buffer, so the result is fixed whatever the interleaving: the program
 * checks it and prints it, and the script compares the output with a run
 * without graphshim.  A watchdog fails the run if it does not finish (a
 * deadlock).
 *
 *   r_stress [iterations]     (default 1500)
 */
#include "r_common.h"

#define NT 7 /* workers; the last one's steps never repeat */
#define N 32

static CUcontext ctx;
static CUfunction add;
static CUdeviceptr buf;
static CUstream shared;
static int iters = 1500;
static atomic_int done;

static void r_add_block(CUstream s, CUdeviceptr p, int v, unsigned n, unsigned block)
{
	void *args[] = { &p, &v, &n };
	CHECK(cuLaunchKernel(add, 1, 1, 1, block, 1, 1, 0, s, args, NULL));
}

static void r_add(CUstream s, CUdeviceptr p, int v, unsigned n)
{
	r_add_block(s, p, v, n, 32);
}

/*
 * The cold worker: the same sums, in steps no two of which share their
 * structure: between its adds, a random number of no-op copies (p to
 * itself), another kernel of another parameter layout.  (A block size that
 * changes would not do: it is an operand, which a replay patches.)
 */
static void cold_steps(CUstream s, CUdeviceptr p)
{
	unsigned h = 1;
	CUfunction cpy = t_func("copy");
	unsigned n = N;
	void *cargs[] = { &p, &p, &n };
	for (int i = 0; i < iters; i++) {
		for (int k = 0; k < 7; k++) {
			h = h * 1103515245u + 12345u;
			for (unsigned c = (h >> 16) % 3; c > 0; c--)
				CHECK(cuLaunchKernel(cpy, 1, 1, 1, 32, 1, 1, 0, s, cargs, NULL));
			int v = k < 6 ? 1 : i % 3;
			r_add_block(s, k < 6 ? p : p + N / 2 * sizeof(int), v, k < 6 ? N : N / 2,
				    1 + (h >> 20) % 64);
		}
		CHECK(cuStreamSynchronize(s));
	}
}

/* Synchronize the context until every worker is done. */
static void *syncer(void *arg)
{
	(void)arg;
	CHECK(cuCtxSetCurrent(ctx));
	while (atomic_load(&done) < NT) {
		CHECK(cuCtxSynchronize());
		usleep(200);
	}
	return NULL;
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	CUstream own, s;
	CUevent ev;
	CUdeviceptr p = buf + (CUdeviceptr)id * N * sizeof(int);
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuStreamCreate(&own, id % 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
	CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	s = id == 4 || id == 5 ? shared : own;
	if (id == 6)
		cold_steps(s, p);
	for (int i = 0; i < iters && id != 6; i++) {
		/* Now and then a step on the legacy stream, tied to blocking
		 * streams.  Not for thread 1: its non-blocking stream, synced only
		 * every tenth step, would run concurrently with it on the same
		 * memory (a race in the program, on a GPU too). */
		CUstream st = (i % 97 == 13 && id < 4 && id != 1) ? NULL : s;
		for (int k = 0; k < 6; k++)
			r_add(st, p, 1, N);
		r_add(st, p + N / 2 * sizeof(int), i % 3, N / 2); /* drifts */
		switch (id) {
		case 0:
		case 3:
			CHECK(cuStreamSynchronize(st));
			break;
		case 1:
			if (i % 10 == 9) {
				CHECK(cuEventRecord(ev, st));
				CHECK(cuEventSynchronize(ev));
			}
			break;
		case 2:
			if (i % 25 == 0) {
				CUresult q = cuStreamQuery(st);
				EXPECT(q == CUDA_SUCCESS || q == CUDA_ERROR_NOT_READY);
			}
			if (i % 50 == 49) {
				/* Another stream waits on ours; the legacy stream joins. */
				CHECK(cuEventRecord(ev, st));
				CHECK(cuStreamWaitEvent(NULL, ev, 0));
			}
			break;
		default:
			/* The shared stream, synced by both its threads. */
			if (i % 7 == id - 4)
				CHECK(cuStreamSynchronize(shared));
			break;
		}
	}
	CHECK(cuStreamSynchronize(s));
	CHECK(cuEventDestroy(ev));
	CHECK(cuStreamDestroy(own));
	atomic_fetch_add(&done, 1);
	return NULL;
}

static void *watchdog(void *arg)
{
	int secs = (int)(intptr_t)arg;
	for (int i = 0; i < secs * 10; i++) {
		if (atomic_load(&done) == NT)
			return NULL;
		usleep(100000);
	}
	fprintf(stderr, "FAIL: %d of %d threads finished in %d s: deadlock?\n", atomic_load(&done),
		NT, secs);
	_exit(3);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iters = atoi(argv[1]);
	const char *wd = getenv("R_WATCHDOG_S");
	pthread_t th[NT], dog, sy;
	ctx = t_setup();
	add = t_func("add_scalar");
	CHECK(cuMemAlloc(&buf, NT * N * sizeof(int)));
	CHECK(cuMemsetD32(buf, 0, NT * N));
	CHECK(cuStreamCreate(&shared, CU_STREAM_NON_BLOCKING));
	pthread_create(&dog, NULL, watchdog, (void *)(intptr_t)(wd ? atoi(wd) : 100));
	for (intptr_t i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	pthread_create(&sy, NULL, syncer, NULL);
	for (int i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	pthread_join(sy, NULL);
	pthread_join(dog, NULL);
	CHECK(cuCtxSynchronize());
	int out[NT * N];
	CHECK(cuMemcpyDtoH(out, buf, sizeof(out)));
	long drift = 0;
	for (int i = 0; i < iters; i++)
		drift += i % 3;
	int bad = 0;
	for (int t = 0; t < NT; t++) {
		for (int j = 0; j < N; j++) {
			long want = 6L * iters + (j >= N / 2 ? drift : 0);
			if (out[t * N + j] != want && bad++ < 5)
				fprintf(stderr, "FAIL: thread %d [%d] = %d, want %ld\n", t, j,
					out[t * N + j], want);
			printf("%d%c", out[t * N + j], j == N - 1 ? '\n' : ' ');
		}
	}
	CHECK(cuStreamDestroy(shared));
	CHECK(cuMemFree(buf));
	return bad ? 1 : 0;
}
