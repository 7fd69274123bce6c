/* Non-blocking streams are exempt from legacy-stream synchronization. */
#include "t_common.h"

int main(void)
{
	static t_gate_t g = T_GATE_INIT, g2 = T_GATE_INIT;
	CUstream ns;
	CUdeviceptr p;
	t_setup();
	CHECK(cuStreamCreate(&ns, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&p, 16 * sizeof(int)));
	CHECK(cuLaunchHostFunc(ns, t_gate_fn, &g));
	/* Legacy work runs and completes while ns is still blocked. */
	CHECK(t_fill(NULL, p, 3, 16));
	CHECK(cuStreamSynchronize(NULL));
	EXPECT(t_read_int(p, 0) == 3);
	EXPECT_ERR(cuStreamQuery(ns), CUDA_ERROR_NOT_READY);
	t_gate_open(&g);
	CHECK(cuStreamSynchronize(ns));

	/* And ns work does not wait for a blocked legacy stream. */
	CHECK(cuLaunchHostFunc(NULL, t_gate_fn, &g2));
	CHECK(t_add(ns, p, 1, 16));
	CHECK(cuStreamSynchronize(ns));
	EXPECT_ERR(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
	t_gate_open(&g2);
	CHECK(cuCtxSynchronize());
	EXPECT(t_read_int(p, 0) == 4);
	return 0;
}
