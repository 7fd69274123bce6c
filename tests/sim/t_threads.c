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

int main(void)
{
	pthread_t th[NT];
	ctx = t_setup();
	for (intptr_t i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	CHECK(cuCtxSynchronize());
	return 0;
}
