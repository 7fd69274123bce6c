// The device-update probe's worker (probe.c): adds one to 32 floats.
extern "C" __global__ void gs_probe_add(float *p)
{
	p[threadIdx.x] += 1.0f;
}
