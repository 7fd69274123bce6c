#!/usr/bin/env python3
"""Hugging Face transformers encoder inference (embeddings, classification), for the real-program suite.

What a user serving a BERT-style encoder writes: a model in eval() mode
under torch.inference_mode(), one request a batch of sentences that a
tokenizer padded to the batch's longest (padding=True: input_ids and an
attention_mask of ones then zeros), moved to the GPU with .to(device), one
forward pass, the result read back to the host (.cpu()).  The model is
built from a config with random weights (nothing downloaded, no tokenizer:
token ids are random, padding is the config's pad_token_id).

  --arch bert|distilbert|roberta   BertConfig, DistilBertConfig or
                    RobertaConfig (sizes from --layers, --dim, --heads,
                    --vocab; the MLP is 4 --dim wide); the defaults are
                    all-MiniLM-L6-v2's shape (6 layers, 384 wide, 12 heads).
  --task embed      AutoModel, then sentence-transformers' mean pooling: the
                    last hidden state summed over the attention mask, divided
                    by the true lengths, L2-normalised (F.normalize).
  --task classify   AutoModelForSequenceClassification (--labels classes):
                    its logits.
  --attn sdpa|eager attn_implementation (sdpa: F.scaled_dot_product_attention
                    with the padding mask).
  --dtype float32|float16|bfloat16   the model's dtype (from_config(dtype=)).

Requests cycle through --shapes, fixed (batch, padded length) pairs: the
padded length changes from request to request, so every request launches
kernels of other shapes than the one before; each row has its own true
length (one of them the batch's longest, the rest shorter: padded).  There
is no --graph: the shapes vary, as they do for a server of real text.

--warmup W requests first, then --steps timed ones.  --out writes every
request's read-back (float32 bytes) in order; --time prints one gs-wl line
with the median wall time of one request (its copy to the device, the
forward pass, the pooling and the read-back).  Inference only: no atomics,
cuDNN benchmarking off, so every process computes the same bytes.
"""
import os

# Everything is built from configs: never reach for the hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModel, AutoModelForSequenceClassification  # noqa: E402

DEFAULT_SHAPES = "1:12,4:32,2:64,8:24,1:96,4:16,2:40,8:48"


def build_config(a):
    common = dict(vocab_size=a.vocab, max_position_embeddings=a.ctx, num_labels=a.labels)
    if a.arch == "distilbert":
        return transformers.DistilBertConfig(dim=a.dim, n_layers=a.layers, n_heads=a.heads, hidden_dim=4 * a.dim,
                                             pad_token_id=0, **common)
    cls = {"bert": transformers.BertConfig, "roberta": transformers.RobertaConfig}[a.arch]
    # RoBERTa counts positions from pad_token_id + 1 (its padding index, 1).
    extra = dict(pad_token_id=1, max_position_embeddings=a.ctx + 2) if a.arch == "roberta" else dict(pad_token_id=0)
    common.update(extra)
    return cls(hidden_size=a.dim, num_hidden_layers=a.layers, num_attention_heads=a.heads,
               intermediate_size=4 * a.dim, **common)


def make_requests(shapes, vocab, pad, gen):
    """A tokenizer's output for padding=True: ids of random lengths, padded to the longest."""
    requests = []
    for batch, length in shapes:
        lens = torch.randint(max(1, length // 4), length + 1, (batch,), generator=gen)
        lens[torch.randint(0, batch, (1,), generator=gen)] = length  # the longest sets the padding
        ids = torch.randint(3, vocab, (batch, length), generator=gen)  # no special ids (0-2) inside
        mask = (torch.arange(length)[None, :] < lens[:, None]).long()
        requests.append((ids.masked_fill(mask == 0, pad), mask))
    return requests


def mean_pooling(last_hidden_state, attention_mask):
    """sentence-transformers' mean pooling, as its model cards write it."""
    m = attention_mask.unsqueeze(-1).expand(last_hidden_state.size()).to(last_hidden_state.dtype)
    return torch.sum(last_hidden_state * m, 1) / torch.clamp(m.sum(1), min=1e-9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed requests")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--arch", choices=("bert", "distilbert", "roberta"), default="bert")
    ap.add_argument("--task", choices=("embed", "classify"), default="embed")
    ap.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa", help="attn_implementation")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=512, help="max positions")
    ap.add_argument("--labels", type=int, default=4, help="--task classify: classes")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES,
                    help="the requests' batch:padded-length pairs, cycled (default %s)" % DEFAULT_SHAPES)
    ap.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    try:
        shapes = [tuple(int(x) for x in s.split(":")) for s in a.shapes.split(",")]
    except ValueError:
        ap.error("--shapes: batch:length pairs separated by commas")
    if any(len(s) != 2 or min(s) < 1 or s[1] > a.ctx for s in shapes):
        ap.error("--shapes: every pair batch:length, both >= 1, length <= --ctx")
    if a.dim % a.heads:
        ap.error("--dim must be a multiple of --heads")
    dtype = getattr(torch, a.dtype)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    torch.manual_seed(a.seed)
    config = build_config(a)
    auto = AutoModelForSequenceClassification if a.task == "classify" else AutoModel
    model = auto.from_config(config, dtype=dtype, attn_implementation=a.attn).to(dev).eval()
    gen = torch.Generator().manual_seed(a.seed + 1)
    requests = make_requests(shapes, a.vocab, config.pad_token_id, gen)

    results, times = [], []
    with torch.inference_mode():
        for i in range(a.warmup + a.steps):
            ids, mask = requests[i % len(requests)]
            t0 = time.perf_counter()
            ids, mask = ids.to(dev), mask.to(dev)  # the tokenizer's batch, .to(device)
            out = model(input_ids=ids, attention_mask=mask)
            if a.task == "classify":
                res = out.logits
            else:
                res = F.normalize(mean_pooling(out.last_hidden_state, mask), p=2, dim=1)
            res = res.float().cpu()  # the read-back
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
            results.append(res.numpy().tobytes())
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        print("gs-wl: hf_encode variant=%s-%s device=%s dtype=%s attn=%s layers=%d dim=%d shapes=%d "
              "steps=%d warmup=%d transformers=%s median_us=%.3f mean_us=%.3f" % (
                  a.arch, a.task, dev.type, a.dtype, a.attn, a.layers, a.dim, len(shapes), len(times),
                  a.warmup, transformers.__version__, statistics.median(times) * 1e6,
                  statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
