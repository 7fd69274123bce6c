/* Legacy default stream implicit synchronization: an op on the legacy
 * stream waits for prior work of blocking streams, and an op on a blocking
 * stream waits for prior legacy work. */
#include "t_common.h"

int main(void)
{
	static t_gate_t g1 = T_GATE_INIT, g2 = T_GATE_INIT;
	static t_log_t log = { PTHREAD_MUTEX_INITIALIZER, { 0 }, 0 };
	t_logent_t a = { &log, 'a' }, b = { &log, 'b' }, c = { &log, 'c' }, d = { &log, 'd' };
	char out[64];
	CUstream s1, s2;
	t_setup();
	CHECK(cuStreamCreate(&s1, CU_STREAM_DEFAULT));
	CHECK(cuStreamCreate(&s2, CU_STREAM_DEFAULT));

	/* s1 blocked; legacy work must wait for it. */
	CHECK(cuLaunchHostFunc(s1, t_gate_fn, &g1));
	CHECK(cuLaunchHostFunc(s1, t_log_fn, &a));
	CHECK(cuLaunchHostFunc(NULL, t_log_fn, &b));
	t_sleep_ms(30);
	t_log_get(&log, out);
	EXPECT(strcmp(out, "") == 0);
	EXPECT_ERR(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
	t_gate_open(&g1);
	CHECK(cuStreamSynchronize(NULL));
	t_log_get(&log, out);
	EXPECT(strcmp(out, "ab") == 0);

	/* legacy blocked; s2 work must wait for it. */
	CHECK(cuLaunchHostFunc(CU_STREAM_LEGACY, t_gate_fn, &g2));
	CHECK(cuLaunchHostFunc(s2, t_log_fn, &c));
	t_sleep_ms(30);
	t_log_get(&log, out);
	EXPECT(strcmp(out, "ab") == 0);
	EXPECT_ERR(cuStreamQuery(s2), CUDA_ERROR_NOT_READY);
	CHECK(cuLaunchHostFunc(CU_STREAM_LEGACY, t_log_fn, &d));
	t_gate_open(&g2);
	CHECK(cuStreamSynchronize(s2));
	CHECK(cuCtxSynchronize());
	t_log_get(&log, out);
	EXPECT(out[0] == 'a' && out[1] == 'b' && strlen(out) == 4 && strchr(out + 2, 'c') && strchr(out + 2, 'd'));

	/* Data dependence through the legacy stream: fill on s1, add on legacy. */
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 16 * sizeof(int)));
	static t_gate_t g3 = T_GATE_INIT;
	CHECK(cuLaunchHostFunc(s1, t_gate_fn, &g3));
	CHECK(t_fill(s1, p, 7, 16));
	CHECK(t_add(NULL, p, 1, 16));
	CHECK(t_add(s2, p, 10, 16));   /* after the legacy add */
	t_gate_open(&g3);
	CHECK(cuStreamSynchronize(s2));
	EXPECT(t_read_int(p, 15) == 18);
	CHECK(cuMemFree(p));
	return 0;
}
