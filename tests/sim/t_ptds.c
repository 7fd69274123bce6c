/* Per-thread default streams: one per host thread, independent of each
 * other, but blocking-stream semantics towards the legacy stream. */
/* cuda.h in per-thread mode maps the API onto the _ptsz/_ptds exports. */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include "t_common.h"

static t_gate_t gate = T_GATE_INIT;
static CUcontext ctx;
static CUdeviceptr pa, pb;
static atomic_int a_queued;

static void *thread_a(void *arg)
{
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuLaunchHostFunc(NULL, t_gate_fn, &gate));
	int v = 1;
	unsigned n = 4;
	void *args[] = { &pa, &v, &n };
	CHECK(cuLaunchKernel(t_func("fill"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	atomic_store(&a_queued, 1);
	CHECK(cuStreamSynchronize(NULL));
	return NULL;
}

int main(void)
{
	pthread_t th;
	ctx = t_setup();
	CHECK(cuMemAlloc(&pa, 16));
	CHECK(cuMemAlloc(&pb, 16));
	pthread_create(&th, NULL, thread_a, NULL);
	while (!atomic_load(&a_queued))
		t_sleep_ms(1);
	/* This thread's per-thread stream is not held up by thread A's. */
	int v = 2;
	unsigned n = 4;
	void *args[] = { &pb, &v, &n };
	CHECK(cuLaunchKernel(t_func("fill"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CHECK(cuStreamSynchronize(NULL));
	CHECK(cuStreamQuery(CU_STREAM_PER_THREAD));
	int out;
	CHECK(cuMemcpyDtoH(&out, pb, sizeof(out)));
	EXPECT(out == 2);
	/* The legacy stream does wait for thread A's per-thread stream. */
	EXPECT_ERR(cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY);
	pthread_t op = t_gate_open_later(&gate);
	CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));
	CHECK(cuMemcpyDtoH(&out, pa, sizeof(out)));
	EXPECT(out == 1);
	pthread_join(op, NULL);
	pthread_join(th, NULL);
	CUstream h = NULL;
	unsigned flags;
	CHECK(cuStreamGetFlags(h, &flags));
	EXPECT(flags == CU_STREAM_DEFAULT);
	return 0;
}
