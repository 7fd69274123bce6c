#!/usr/bin/env python3
"""A PyTorch model with custom CuPy kernels inside its forward pass, for the real-program suite.

What a PyTorch user writes when an operation is missing or slow: a CuPy
kernel applied to PyTorch's tensors without a copy.  Tensors cross by
DLPack (cupy.from_dlpack on a torch tensor, in place) and CuPy launches on
PyTorch's current stream (cupy.cuda.ExternalStream of
torch.cuda.current_stream().cuda_stream), so the two libraries' launches
interleave on one stream: PyTorch's through the CUDA runtime, CuPy's
through the driver (cuLaunchKernel on kernels CuPy compiled with NVRTC and
loaded with cuModuleLoadData).

The model: --layers residual blocks of nn.LayerNorm, nn.Linear(dim, 2 dim),
a CuPy ElementwiseKernel (a fused "squared ReLU times gate" over the two
halves, written by hand), nn.Linear(dim, dim) and a CuPy RawKernel that
adds the residual scaled by a per-block float parameter (a scalar kernel
argument that is the same every step).  A step runs the model on the next
of --batches fixed input batches (their addresses rotate), and reads one
float32 checksum of the output back with .item().

--warmup W steps first (NVRTC compilation, cuBLAS), then --steps timed
ones.  --out writes every step's checksum; --time prints one gs-wl line
with the median step time, read-back included.  Weights come from the CPU
generator (--seed); every kernel here reduces in a fixed order.
"""
import argparse
import os
import statistics
import struct
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import cupy as cp  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

GATED = cp.ElementwiseKernel(
    "T a, T g", "T y",
    "T r = a > (T)0 ? a : (T)0; y = r * r * g",
    "gs_sqrelu_gate")

RESIDUAL = cp.RawKernel(r"""
extern "C" __global__ void gs_residual(const float *h, const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + alpha * h[i];
}
""", "gs_residual")


class Block(nn.Module):
    def __init__(self, dim, alpha):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 2 * dim)
        self.down = nn.Linear(dim, dim)
        self.alpha = alpha

    def forward(self, x):
        u = self.up(self.ln(x))
        a, g = u.chunk(2, dim=-1)
        a, g = a.contiguous(), g.contiguous()
        act = torch.empty_like(a)
        GATED(cp.from_dlpack(a), cp.from_dlpack(g), cp.from_dlpack(act))
        h = self.down(act)
        y = torch.empty_like(x)
        n = x.numel()
        RESIDUAL(((n + 255) // 256,), (256,),
                 (cp.from_dlpack(h), cp.from_dlpack(x), cp.from_dlpack(y), cp.float32(self.alpha), cp.int32(n)))
        return y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--batches", type=int, default=4, help="fixed input batches, used in turn")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("torch_cupy_mix.py: needs a CUDA device (CuPy has no CPU mode)")
    torch.use_deterministic_algorithms(True)
    dev = torch.device("cuda")
    torch.manual_seed(a.seed)
    model = nn.Sequential(*(Block(a.dim, 0.5 / (i + 1)) for i in range(a.layers))).eval().to(dev)
    g = torch.Generator().manual_seed(a.seed + 1)
    inputs = [torch.randn(a.batch, a.dim, generator=g).to(dev) for _ in range(a.batches)]

    sums, times = [], []
    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with torch.no_grad(), stream:
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            y = model(inputs[i % a.batches])
            sums.append(y.float().sum().item())
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%df" % len(sums), *sums))
    if a.time:
        print("gs-wl: torch_cupy_mix layers=%d dim=%d batch=%d steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
            a.layers, a.dim, a.batch, len(times), a.warmup, statistics.median(times) * 1e6,
            statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
