#!/usr/bin/env python3
"""Two-tower retrieval served with explicit CUDA streams, for the real-program suite.

What a recommendation user serving a two-tower model writes (YouTube's and
TorchRec's two-tower retrieval, written with plain torch.nn), with the
stream overlap that performance-minded PyTorch users add: a user tower and
an item tower, each an nn.EmbeddingBag(mode="mean") per id feature
(--features: feature 0 the user's or item's own id, a bag of one; the
others bags of 1 .. --bag hashed ids), the bags' outputs concatenated and
an nn.Sequential of nn.Linear, nn.LayerNorm, nn.ReLU down to --dim, then
F.normalize (cosine scores).  Random weights from --seed.  Every request
scores a batch of users against the catalog of --items items, whose tower
runs again every request (no cache: a first version, or a server whose
item features and weights are refreshed online):

    s_user.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s_user):
        u = user_tower(request_feats)
    s_item.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s_item):
        v = item_tower(catalog_feats)
    torch.cuda.current_stream().wait_stream(s_user)
    torch.cuda.current_stream().wait_stream(s_item)
    u.record_stream(torch.cuda.current_stream())   # made on a side stream,
    v.record_stream(torch.cuda.current_stream())   # used on this one
    top = torch.topk(u @ v.T, k, dim=1)
    ids, scores = top.indices.cpu(), top.values.cpu()

The two side streams are made once with torch.cuda.Stream().  A request's
id bags (per feature a flat index tensor and an offsets tensor) live in
pinned host memory and are copied with .to(device, non_blocking=True) on a
third, copy stream one request ahead, like a data loader's prefetcher:
before use the current stream waits on the copy stream and the copies are
record_stream()ed to it (the tower that reads them runs on s_user, which
waits on the current stream; the current stream waits on s_user before the
copies are freed).  The catalog's bags are on the device from the start.
Requests cycle through --batches (users per request, default 16,32,8,32)
over a pool of 8 requests drawn from --seed + 1.

  --no-streams  everything on the default stream, the copies too (still
                non_blocking, one request ahead): the same program without
                the overlap, for comparison.

On --device cpu there is no pinning, no stream (the torch.cuda calls are
skipped) and .to() hands the host tensors back as they are.

The path to the driver: PyTorch's kernels (embedding_bag, cat, LayerNorm,
ReLU, the norm and division of F.normalize, topk's radix select and sort)
through cudaLaunchKernel, cuBLAS/cuBLASLt for the linears and the scores
(on Hopper cuLaunchKernelEx with attributes; the user tower's and the
scores' GEMM shapes change with the batch), cudaMemcpyAsync from pinned
memory on the copy stream (6 small copies at 3 features) and two
synchronising device-to-host copies for the read-back; between streams,
each wait_stream is a cudaEventRecord on the waited stream and a
cudaStreamWaitEvent on the waiting one (5 a request; torch makes a new
torch.cuda.Event for each: created at its record, destroyed when
collected), and record_stream (8 a request) makes the caching allocator
record an event on the recorded stream when the tensor is freed and query
it (cudaEventQuery) before reusing the block.
An estimate, not measured: about 13-16 kernels a tower (1-2 an
EmbeddingBag), so 30-40 kernels, 8 copies and 5 event record/wait pairs a
request at the defaults; small and launch-bound (likely 0.3-1 ms a
request eager).

--warmup W requests first, then --steps timed ones.  --out writes, for
every request in order, its top-k item ids (int64 little-endian, [batch,
k]) and then its top-k scores' raw bytes (float32); --time prints one gs-wl
line with the median wall time of one request (from taking its prefetched
copies to the read-back).  Determinism: CUBLAS_WORKSPACE_CONFIG is set
before torch is imported (cuBLAS runs on several streams); EmbeddingBag's
mean forward sums each bag in order (no atomics; no backward here); cuDNN
is not used.
"""
import os

# cuBLAS is deterministic on several streams only with a fixed workspace
# configuration, which it reads when torch first initialises it.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DEFAULT_BATCHES = "16,32,8,32"
POOL = 8  # distinct requests, cycled


class Tower(nn.Module):
    def __init__(self, rows, features, dim):
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="mean") for _ in range(features))
        self.mlp = nn.Sequential(nn.Linear(features * dim, 4 * dim), nn.LayerNorm(4 * dim), nn.ReLU(),
                                 nn.Linear(4 * dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))

    def forward(self, feats):  # feats: per feature (flat ids, offsets)
        x = torch.cat([bag(ids, offsets) for bag, (ids, offsets) in zip(self.bags, feats)], dim=1)
        return F.normalize(self.mlp(x), dim=-1)


def make_bags(n, rows, features, bag, gen, own_ids=None):
    """Per feature the (flat ids, offsets) of n bags: feature 0 one id a bag
    (own_ids where given: the catalog's items), the others 1 .. bag ids."""
    feats = []
    for f in range(features):
        lens = torch.ones(n, dtype=torch.long) if f == 0 else torch.randint(1, bag + 1, (n,), generator=gen)
        if f == 0 and own_ids is not None:
            ids = own_ids
        else:
            ids = torch.randint(0, rows, (int(lens.sum()),), generator=gen)
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lens.cumsum(0)[:-1]])
        feats.append((ids, offsets))
    return feats


class RequestPrefetcher:
    """The next request's bags copied to the device on a side stream while
    the current one is served (a data loader's prefetcher)."""

    def __init__(self, requests, device, stream):
        self.requests, self.device, self.stream, self.i = requests, device, stream, 0
        self.preload()

    def preload(self):
        req = self.requests[self.i % len(self.requests)]
        self.i += 1
        with torch.cuda.stream(self.stream) if self.stream is not None else contextlib.nullcontext():
            self.next_feats = [(ids.to(self.device, non_blocking=True), offs.to(self.device, non_blocking=True))
                               for ids, offs in req]

    def next(self):
        if self.stream is not None:
            main = torch.cuda.current_stream()
            main.wait_stream(self.stream)
            for ids, offs in self.next_feats:
                # Allocated on the copy stream, used after this one: tell the
                # allocator, so it does not reuse them before this stream is done.
                ids.record_stream(main)
                offs.record_stream(main)
        feats = self.next_feats
        self.preload()
        return feats


def tensor_bytes(t):
    """A tensor's raw bytes, C order (the host is little-endian).  Not
    bytes(storage): a storage has no buffer protocol, and bytes() then reads
    it one Python call a byte (tens of seconds for a model's parameters)."""
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=500, help="timed requests")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--users", type=int, default=50000, help="rows of every user-feature table")
    ap.add_argument("--items", type=int, default=4096, help="the catalog's items (rows of every item-feature table)")
    ap.add_argument("--dim", type=int, default=64, help="embedding and output width")
    ap.add_argument("--features", type=int, default=3, help="id features a tower")
    ap.add_argument("--bag", type=int, default=8, help="most ids in a bag")
    ap.add_argument("--k", type=int, default=10, help="items returned a user")
    ap.add_argument("--batches", default=DEFAULT_BATCHES,
                    help="users a request, cycled (default %s)" % DEFAULT_BATCHES)
    ap.add_argument("--no-streams", action="store_true", help="everything on the default stream")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    try:
        batches = [int(b) for b in a.batches.split(",")]
    except ValueError:
        ap.error("--batches: numbers separated by commas")
    if min(batches) < 1 or a.features < 1 or a.bag < 1 or a.steps < 1 or not 1 <= a.k <= a.items:
        ap.error("--batches, --features, --bag, --steps must be >= 1 and --k in [1, --items]")
    cuda = dev.type == "cuda"
    streams = cuda and not a.no_streams
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    # Weights and bags are drawn on the CPU, so every process gets the same ones.
    torch.manual_seed(a.seed)
    user_tower = Tower(a.users, a.features, a.dim).eval().to(dev)
    item_tower = Tower(a.items, a.features, a.dim).eval().to(dev)
    gen = torch.Generator().manual_seed(a.seed + 1)
    catalog = make_bags(a.items, a.items, a.features, a.bag, gen, own_ids=torch.arange(a.items))
    catalog = [(ids.to(dev), offs.to(dev)) for ids, offs in catalog]  # on the device once
    requests = [make_bags(batches[i % len(batches)], a.users, a.features, a.bag, gen) for i in range(POOL)]
    if cuda:
        requests = [[(ids.pin_memory(), offs.pin_memory()) for ids, offs in req] for req in requests]

    # Made once: the towers' side streams and the copy stream.
    s_user = torch.cuda.Stream() if streams else None
    s_item = torch.cuda.Stream() if streams else None
    s_copy = torch.cuda.Stream() if streams else None

    def serve(feats):
        if streams:
            main = torch.cuda.current_stream()
            s_user.wait_stream(main)
            with torch.cuda.stream(s_user):
                u = user_tower(feats)
            s_item.wait_stream(main)
            with torch.cuda.stream(s_item):
                v = item_tower(catalog)
            main.wait_stream(s_user)
            main.wait_stream(s_item)
            u.record_stream(main)
            v.record_stream(main)
        else:
            u = user_tower(feats)
            v = item_tower(catalog)
        top = torch.topk(u @ v.T, a.k, dim=1)
        return top.indices.cpu(), top.values.cpu()  # the read-back

    results, times = [], []
    with torch.inference_mode():
        prefetcher = RequestPrefetcher(requests, dev, s_copy)
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            ids, scores = serve(prefetcher.next())
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
            results.append(tensor_bytes(ids) + tensor_bytes(scores))
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        print("gs-wl: torch_twotower variant=%s device=%s users=%d items=%d dim=%d features=%d bag=%d k=%d "
              "batches=%s steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  "default-stream" if a.no_streams else "streams", dev.type, a.users, a.items, a.dim, a.features,
                  a.bag, a.k, a.batches, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
