#!/usr/bin/env python3
"""A loop of @triton.jit kernels, for the real-program suite.

A step runs --layers rounds of three Triton kernels over a [rows, dim]
activation, each a program per row, the way Triton tutorials write them:
  layernorm   fused mean/variance/normalise/scale+shift (weights per round),
  softmax     a numerically stable row softmax,
  residual    x += alpha * gelu(dim * s - 1) (GELU as x * sigmoid(1.702 x)),
then one row-sum kernel whose result is read back to the host (.cpu()).
Kernels are launched through Triton's own launcher (cuLaunchKernelEx from
its generated C launcher over dlopen'ed libcuda) on PyTorch's current stream;
tensors are PyTorch's.  Compiled kernels are cached on disk
(TRITON_CACHE_DIR).

  --matmul  each round's softmax and residual replaced by one GEMM kernel,
            x += alpha * gelu(layernorm(x) @ W) (a [dim, dim] weight per
            round), written as Triton's matmul tutorial writes it and
            wrapped in @triton.autotune over six tile and warp
            configurations: the first call of each shape benchmarks them
            (Triton's do_bench: CUDA events, a synchronize, an L2-clearing
            memset per timing), later calls launch the chosen one.  Every
            configuration reduces along K in the same order (BLOCK_K fixed,
            tl.dot in IEEE float32), so whichever wins, every process
            writes the same bytes.
  --graph   the step's kernels captured once in a torch.cuda.CUDAGraph and
            replayed every step (the read-back stays outside).

--device cpu runs the same kernels in Triton's interpreter (TRITON_INTERPRET=1,
set here before Triton is imported), for checking the program without a GPU.

--warmup W steps first (compilation), then --steps timed ones.  --out writes
every step's row sums (float32) and then the final activation's bytes;
--time prints one gs-wl line with the median wall time of one step,
read-back included.  Every reduction runs within one program in a fixed
order, so every process writes the same bytes.
"""
import argparse
import os
import statistics
import sys
import time

# The interpreter is chosen when triton is imported, and the kernels below
# are defined at import: look for --device cpu first.
if "--device=cpu" in sys.argv or any(
        x == "--device" and y == "cpu" for x, y in zip(sys.argv, sys.argv[1:])):
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def layernorm_kernel(X, Y, W, B, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X + row * stride + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / N
    w = tl.load(W + offs, mask=mask, other=0.0)
    b = tl.load(B + offs, mask=mask, other=0.0)
    tl.store(Y + row * stride + offs, d * (1.0 / tl.sqrt(var + eps)) * w + b, mask=mask)


@triton.jit
def softmax_kernel(X, Y, stride, N, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X + row * stride + offs, mask=mask, other=-float("inf")).to(tl.float32) * scale
    e = tl.exp(x - tl.max(x, axis=0))
    e = tl.where(mask, e, 0.0)
    tl.store(Y + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def residual_kernel(X, S, stride, N, alpha, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X + row * stride + offs, mask=mask, other=0.0)
    s = tl.load(S + row * stride + offs, mask=mask, other=0.0) * N - 1.0
    g = s * tl.sigmoid(1.702 * s)
    tl.store(X + row * stride + offs, x + alpha * g, mask=mask)


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w)
             for bm, bn, w in ((16, 64, 2), (16, 128, 4), (32, 64, 4), (32, 128, 4), (64, 64, 4), (64, 128, 8))],
    key=["M", "N", "K"], restore_value=["X"])  # timing runs it in place: X is put back
@triton.jit
def matmul_residual_kernel(H, W, X, M, N, K, stride_h, stride_w, stride_x, alpha,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(H + rm[:, None] * stride_h + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(W + (k0 + rk)[:, None] * stride_w + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    g = acc * tl.sigmoid(1.702 * acc)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    ptr = X + rm[:, None] * stride_x + rn[None, :]
    x = tl.load(ptr, mask=mask, other=0.0)
    tl.store(ptr, x + alpha * g, mask=mask)


@triton.jit
def rowsum_kernel(X, OUT, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + offs, mask=offs < N, other=0.0)
    tl.store(OUT + row, tl.sum(x, axis=0))


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=300, help="timed steps")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--matmul", action="store_true", help="an autotuned GEMM a round instead of softmax + residual")
    ap.add_argument("--graph", action="store_true", help="replay a torch.cuda.CUDAGraph per step")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("cuda", "cpu"), default=None,
                    help="default cuda; cpu runs Triton's interpreter")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    return ap.parse_args()


def main():
    a = parse()
    if a.device is None:
        a.device = "cuda" if torch.cuda.is_available() else "cpu"
        if a.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
            raise SystemExit("triton_loop.py: no GPU; run with --device cpu (the interpreter)")
    if a.graph and a.device != "cuda":
        raise SystemExit("triton_loop.py: --graph needs --device cuda")
    dev = torch.device(a.device)

    R, D, L = a.rows, a.dim, a.layers
    block = triton.next_power_of_2(D)
    warps = 4 if block <= 2048 else 8
    gen = torch.Generator().manual_seed(a.seed)
    x0 = torch.randn(R, D, generator=gen).to(dev)
    ws = [(1.0 + 0.1 * torch.randn(D, generator=gen)).to(dev) for _ in range(L)]
    bs = [(0.1 * torch.randn(D, generator=gen)).to(dev) for _ in range(L)]
    mats = [(torch.randn(D, D, generator=gen) / D ** 0.5).to(dev) for _ in range(L)] if a.matmul else []
    x = x0.clone()
    h = torch.empty_like(x)
    s = torch.empty_like(x)
    sums = torch.empty(R, device=dev)

    def step():
        for l in range(L):
            layernorm_kernel[(R,)](x, h, ws[l], bs[l], x.stride(0), D, 1e-5, BLOCK=block, num_warps=warps)
            if a.matmul:
                grid = lambda meta: (triton.cdiv(R, meta["BLOCK_M"]), triton.cdiv(D, meta["BLOCK_N"]))  # noqa: E731
                matmul_residual_kernel[grid](h, mats[l], x, R, D, D, h.stride(0), mats[l].stride(0), x.stride(0),
                                             0.05 * (1 + l % 3), BLOCK_K=32)
                continue
            softmax_kernel[(R,)](h, s, x.stride(0), D, 1.0, BLOCK=block, num_warps=warps)
            residual_kernel[(R,)](x, s, x.stride(0), D, 0.05 * (1 + l % 3), BLOCK=block, num_warps=warps)
        rowsum_kernel[(R,)](x, sums, x.stride(0), D, BLOCK=block, num_warps=warps)

    run = step
    if a.graph:
        # Compile and warm up outside the capture, then start over.
        s_side = torch.cuda.Stream()
        s_side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s_side):
            step()
        torch.cuda.current_stream().wait_stream(s_side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        x.copy_(x0)
        run = graph.replay

    results, times = [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        run()
        host = sums.cpu()  # the read-back
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
        results.append(host.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
            f.write(x.cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    if a.time:
        print("gs-wl: triton_loop variant=%s%s device=%s rows=%d dim=%d layers=%d launches_per_step=%d "
              "steps=%d warmup=%d triton=%s median_us=%.3f mean_us=%.3f" % (
                  "graph" if a.graph else "eager", "-matmul" if a.matmul else "", dev.type, R, D, L,
                  (2 if a.matmul else 3) * L + 1, len(times), a.warmup,
                  triton.__version__, statistics.median(times) * 1e6, statistics.mean(times) * 1e6),
              flush=True)


if __name__ == "__main__":
    main()
