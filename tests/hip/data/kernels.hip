// Kernels whose code objects the metadata tests read (tests/hip/test_hip.c
// checks offsets and sizes against these signatures).  Rebuild with
//   hipcc --genco --offload-arch=gfx90a kernels.hip -o kernels.co
// (Debian bookworm hipcc 5.2.3); kernels-gfx90a.elf is the amdgcn entry of
// that bundle, extracted with tests/hip/data/unbundle.
#include <hip/hip_runtime.h>

struct pair { double d; char c; };     // 16 bytes, 8-aligned
struct big { int v[33]; };             // 132 bytes, 4-aligned

extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

extern "C" __global__ void mixed(char c, pair s, short h, long long q, const int *p, float4 v)
{
	if (c)
		*(int *)p = (int)(s.d + h + q + v.x + s.c);
}

extern "C" __global__ void noargs(void)
{
}

extern "C" __global__ void bigarg(char c, big b, double *out)
{
	if (c)
		out[0] = b.v[0] + b.v[32];
}
