/* Several host threads launching, copying and syncing concurrently on
 * their own streams and the shared legacy stream (a ThreadSanitizer
 * target), with deterministic results. */
#include "t_common.h"

#define NT 4
#define ITER 200

static CUcontext ctx;

static void *worker(void *arg)
{
	intptr_t id = (intptr_t)arg;
	CUstream s;
	CUdeviceptr p;
	CUevent e;
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuStreamCreate(&s, id % 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
	CHECK(cuEventCreate(&e, 0));
	CHECK(cuMemAlloc(&p, 32 * sizeof(int)));
	CHECK(t_fill(s, p, (int)id, 32));
	for (int i = 0; i < ITER; i++) {
		CHECK(t_add(s, p, 1, 32));
		if (i % 50 == 0) {
			CHECK(cuEventRecord(e, s));
			CHECK(cuStreamWaitEvent(NULL, e, 0));
		}
	}
	int out;
	CHECK(cuMemcpyDtoHAsync(&out, p + 31 * sizeof(int), sizeof(int), s));
	EXPECT(out == (int)id + ITER);
	CHECK(cuMemFree(p));
	CHECK(cuEventDestroy(e));
	CHECK(cuStreamDestroy(s));
	return NULL;
}

/*
 * Stream-ordered blocks freed and taken on a stream two threads share (the
 * legacy stream): a block another thread takes on the freeing stream must
 * be behind its free there.  The simulator marked a freed block reusable
 * before it queued the free's work (which poisons the block), so another
 * thread's allocation could take it and queue its work first, and the
 * poison landed on the new owner's data: the fuzzer's plain runs differed
 * about once in 175,000 programs.  GS_SIM_POOL_FREE_US (set in main)
 * widens that window on every free.
 */
#define POOL_N 256 /* ints a block */
#define POOL_ITER 150
static atomic_int pool_stop;

static void *pool_freer(void *arg)
{
	(void)arg;
	CHECK(cuCtxSetCurrent(ctx));
	while (!atomic_load(&pool_stop)) {
		CUdeviceptr p;
		CHECK(cuMemAllocAsync(&p, POOL_N * sizeof(int), NULL));
		CHECK(cuMemsetD32Async(p, 7, POOL_N, NULL));
		CHECK(cuMemFreeAsync(p, NULL));
	}
	return NULL;
}

static void pool_order(void)
{
	pthread_t th;
	pthread_create(&th, NULL, pool_freer, NULL);
	int out[POOL_N];
	for (int i = 0; i < POOL_ITER; i++) {
		CUdeviceptr q;
		CHECK(cuMemAllocAsync(&q, POOL_N * sizeof(int), NULL));
		CHECK(cuMemsetD32Async(q, (unsigned)(1000 + i), POOL_N, NULL));
		usleep(300); /* a free marked before the allocation is queued meanwhile */
		CHECK(cuMemcpyDtoH(out, q, sizeof(out)));
		for (int k = 0; k < POOL_N; k++)
			EXPECT(out[k] == 1000 + i);
		CHECK(cuMemFreeAsync(q, NULL));
	}
	atomic_store(&pool_stop, 1);
	pthread_join(th, NULL);
}

int main(void)
{
	pthread_t th[NT];
	setenv("GS_SIM_POOL_FREE_US", "200", 0);
	ctx = t_setup();
	for (intptr_t i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	CHECK(cuCtxSynchronize());
	pool_order();
	CHECK(cuCtxSynchronize());
	return 0;
}
