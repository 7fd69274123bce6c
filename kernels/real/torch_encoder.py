#!/usr/bin/env python3
"""Sequence classification with PyTorch's own nn.TransformerEncoder, for the real-program suite.

What a user serving a classifier or an embedding model built from torch.nn
writes (the "text classification with nn.Transformer" tutorials, in-house
encoders): nn.Embedding plus a learned positional nn.Parameter, then

    layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0,
                                       activation="gelu", batch_first=True, norm_first=...)
    encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=...)

a mean-pool over the non-padded positions and an nn.Linear classifier;
random weights from --seed (nn.TransformerEncoder deep-copies the layer,
so its layers start equal, as they do for every user before training).
Served in model.eval() under torch.inference_mode(): per request the
tokenizer's batch (ids, attention mask) goes .to(device), the padding mask
is `attention_mask == 0` (True = pad) passed as src_key_padding_mask, and
logits.argmax(-1).cpu() and logits.cpu() are read back.

Under eval + no grad + batch_first + an even head count PyTorch takes its
"fast path" (torch/nn/modules/transformer.py):

  (default)      each layer is ONE native op, torch._transformer_encoder_layer_fwd
                 (qkv GEMM, attention, out projection, residuals, LayerNorms and
                 the GELU FFN in C++), and with a padding mask and
                 enable_nested_tensor=True the encoder first converts the
                 padded batch into a nested tensor (torch._nested_tensor_from_mask,
                 after a left-alignment check of the mask), runs the layers on
                 the packed tokens (on CUDA, as we read PyTorch's source, the
                 attention goes through SDPA's kernels on the nested q/k/v when
                 the head size is a multiple of 8; on the CPU it is bmm and
                 softmax on nested tensors) and pads back (to_padded_tensor):
                 synchronising reads of the mask and small host-to-device copies
                 of sequence offsets happen inside the forward pass.
  --no-nested    enable_nested_tensor=False: the same fused layer op on the padded
                 batch with the mask (bmm, masked softmax, bmm inside).
  --norm-first   pre-norm layers (and a final nn.LayerNorm, as pre-norm models
                 have).  PyTorch rules nested tensors out for norm_first (it
                 warns when asked, so users pass enable_nested_tensor=False), but
                 each layer STILL takes the fused op (norm_first is one of its
                 arguments): this is the fused padded path with pre-norm.
  --no-fastpath  torch.backends.mha.set_fastpath_enabled(False): the ordinary
                 modules, layer by layer (nn.MultiheadAttention ->
                 F.multi_head_attention_forward -> F.scaled_dot_product_attention
                 with the padding mask merged into a float mask, nn.Linear,
                 nn.LayerNorm, F.gelu): the slow path.
  --dtype float16  model.half() (the ids stay int64).

Requests cycle through --shapes, fixed (batch, padded length) pairs, with
per-row true lengths drawn once from --seed + 1, padded to the longest as a
tokenizer's padding=True does (right padding, pad id 0): every request
launches kernels of other shapes than the one before.  There is no --graph:
the shapes vary, as they do for a server of real text.  Defaults: 4 layers,
d_model 256, 4 heads, dim_feedforward 1024, a vocabulary of 8192, 8
classes, --shapes 4x32,8x16,2x64,4x48 (BATCHxLENGTH; 5.4M parameters),
20 warm-up and 200 timed requests.

Path to the driver (CUDA): PyTorch's kernels through cudaLaunchKernel,
cuBLAS/cuBLASLt for the GEMMs (on Hopper cuLaunchKernelEx), SDPA's or the
native MHA's attention kernels; per request two host-to-device copies (ids,
mask) and two synchronising device-to-host reads (argmax ids, logits); the
nested path adds the reads and copies named above.  An estimate from
reading PyTorch's source, NOT measured: about 15 kernels a layer and 10
more around them, so about 70 kernels a request at the defaults (4 layers)
on the fused padded path, somewhat more with nested tensors (conversions,
offset tables) and on the modules path.

--warmup W requests first, then --steps timed ones.  --out writes, per
request, the argmax ids (int32 little-endian) then the logits' raw bytes
([batch, classes], float32 or float16); --time prints one gs-wl line with
the median wall time of one request (its copies to the device, the forward
pass, the pooling and both read-backs).  Determinism: inference only, no
atomics-based reduction (SDPA's and the native attention's forward kernels,
masked softmax and cuBLAS are deterministic run to run), cuDNN benchmarking
off; torch.use_deterministic_algorithms is not turned on (it would fill
every torch.empty and change the kernels; nothing here needs it).
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn

DEFAULT_SHAPES = "4x32,8x16,2x64,4x48"
PAD = 0


class EncoderClassifier(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.dim, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(1, a.ctx, a.dim) * 0.02)
        layer = nn.TransformerEncoderLayer(a.dim, a.heads, a.ffn, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=a.norm_first)
        self.encoder = nn.TransformerEncoder(layer, a.layers, norm=nn.LayerNorm(a.dim) if a.norm_first else None,
                                             enable_nested_tensor=not (a.no_nested or a.norm_first))
        self.head = nn.Linear(a.dim, a.classes)

    def forward(self, ids, pad):
        x = self.embed(ids) + self.pos[:, :ids.shape[1]]
        h = self.encoder(x, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        pooled = (h * keep).sum(1) / keep.sum(1)  # the mean over the real tokens
        return self.head(pooled)


def make_requests(shapes, vocab, gen):
    """A tokenizer's output for padding=True: ids of random lengths, right-padded to the longest."""
    requests = []
    for batch, length in shapes:
        lens = torch.randint(max(1, length // 4), length + 1, (batch,), generator=gen)
        lens[torch.randint(0, batch, (1,), generator=gen)] = length  # the longest sets the padding
        ids = torch.randint(1, vocab, (batch, length), generator=gen)
        mask = (torch.arange(length)[None, :] < lens[:, None]).long()  # attention_mask: 1 = token
        requests.append((ids.masked_fill(mask == 0, PAD), mask))
    return requests


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed requests")
    ap.add_argument("--warmup", type=int, default=20, help="untimed requests first")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=256, help="d_model")
    ap.add_argument("--heads", type=int, default=4, help="nhead (even: the fast path needs it)")
    ap.add_argument("--ffn", type=int, default=1024, help="dim_feedforward")
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=512, help="positions")
    ap.add_argument("--classes", type=int, default=8)
    ap.add_argument("--norm-first", action="store_true", help="pre-norm layers (no nested tensors)")
    ap.add_argument("--no-nested", action="store_true", help="enable_nested_tensor=False")
    ap.add_argument("--no-fastpath", action="store_true",
                    help="torch.backends.mha.set_fastpath_enabled(False): the ordinary modules")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES,
                    help="the requests' BATCHxLENGTH pairs, cycled (default %s)" % DEFAULT_SHAPES)
    ap.add_argument("--dtype", choices=("float32", "float16"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    try:
        shapes = [tuple(int(x) for x in s.replace(":", "x").split("x")) for s in a.shapes.split(",")]
    except ValueError:
        ap.error("--shapes: BATCHxLENGTH pairs separated by commas")
    if any(len(s) != 2 or min(s) < 1 or s[1] > a.ctx for s in shapes):
        ap.error("--shapes: every pair BATCHxLENGTH, both >= 1, length <= --ctx")
    if a.dim % a.heads:
        ap.error("--dim must be a multiple of --heads")
    if a.steps < 1 or a.warmup < 0:
        ap.error("--steps must be >= 1 and --warmup >= 0")
    if a.dtype == "float16" and dev.type != "cuda":
        ap.error("--dtype float16 needs --device cuda")
    # The same kernels in every process: no timing-based algorithm choice.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    if a.no_fastpath:
        torch.backends.mha.set_fastpath_enabled(False)

    # Weights are drawn on the CPU, so every process gets the same ones.
    torch.manual_seed(a.seed)
    model = EncoderClassifier(a).eval().to(dev)
    if a.dtype == "float16":
        model.half()
    gen = torch.Generator().manual_seed(a.seed + 1)
    requests = make_requests(shapes, a.vocab, gen)

    results, times = [], []
    with torch.inference_mode():
        for i in range(a.warmup + a.steps):
            ids, mask = requests[i % len(requests)]
            t0 = time.perf_counter()
            ids, mask = ids.to(dev), mask.to(dev)  # the tokenizer's batch, .to(device)
            logits = model(ids, mask == 0)  # src_key_padding_mask: True = pad
            pred = logits.argmax(-1).cpu()  # the read-backs
            logits = logits.cpu()
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
            results.append(pred.numpy().astype("<i4").tobytes())
            results.append(logits.numpy().tobytes())
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        path = "modules" if a.no_fastpath else "fused-padded" if a.no_nested or a.norm_first else "fused-nested"
        print("gs-wl: torch_encoder variant=%s-%s device=%s dtype=%s layers=%d dim=%d heads=%d ffn=%d "
              "shapes=%d steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  "prenorm" if a.norm_first else "postnorm", path, dev.type, a.dtype, a.layers, a.dim, a.heads,
                  a.ffn, len(shapes), len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
