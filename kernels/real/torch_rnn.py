#!/usr/bin/env python3
"""Character-level generation with an nn.LSTM or nn.GRU, for the real-program suite.

What a user of a char-RNN (PyTorch's char-rnn tutorials, karpathy's
char-rnn ports) writes: nn.Embedding -> nn.LSTM (--layers 2, batch_first)
-> nn.Linear over a character vocabulary, random weights from --seed, and a
greedy generation loop that feeds one character at a time and carries the
hidden state from call to call:

    logits, state = model(prompt)                 # the prompt, one call
    for _ in range(n):
        tok = logits.argmax(-1, keepdim=True)     # [batch, 1]
        chars.append(tok.item())                  # .tolist() for a batch
        logits, state = model(tok, state)

Every token is read back to the host (.item() for --batch 1, .tolist() for
a batch), as a loop that prints the text or looks for a newline does: one
synchronising device-to-host copy a token.

  --cell lstm  (default) nn.LSTM: the state is (h, c)
  --cell gru   nn.GRU: the state is h

On the GPU the recurrent layers run in cuDNN (the weights flattened into
one buffer by the module, cudnnRNNForward over all layers of a step: its
GEMMs and its fused cell kernels), with an index_select for the embedding,
cuBLAS for the head and an argmax kernel: the same kernels every token
(the state's addresses rotate through the caching allocator); CUPTI on the
H100 machine (torch 2.11, cuDNN 9.19) counted 9 kernels and one
device-to-host copy a token for the LSTM, 12 kernels for the GRU at
--batch 4.  PyTorch builds the cuDNN descriptors on the host every call:
about 180-370 us a token there (host-bound).

--warmup W: a whole generation of W tokens first (cuDNN's and cuBLAS's
initialisation, the allocator), then the timed generation of --tokens, both
from the same prompt of --prompt random characters (from --seed + 1).
--out writes every generated token id of both (int32 little-endian); --time
prints one gs-wl line with the median wall time of one token, read-back
included.  Determinism: cuDNN benchmarking off, its deterministic mode on;
no dropout, no sampling.
"""
import argparse
import statistics
import struct
import time

import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, vocab, embed, hidden, layers, cell):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        rnn = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn(embed, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.rnn(self.embed(x), state)
        return self.head(out[:, -1]), state  # the last position's logits


def read_tokens(tok):
    """The per-token read-back: .item() for one sequence, a list for a batch."""
    return [tok.item()] if tok.numel() == 1 else tok.view(-1).tolist()


def generate(model, prompt, n, times):
    logits, state = model(prompt)
    tok = logits.argmax(-1, keepdim=True)
    out = read_tokens(tok)
    for _ in range(n - 1):
        t0 = time.perf_counter()
        logits, state = model(tok, state)
        tok = logits.argmax(-1, keepdim=True)
        out += read_tokens(tok)
        times.append(time.perf_counter() - t0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", "--steps", dest="tokens", type=int, default=400,
                    help="tokens of the timed generation")
    ap.add_argument("--warmup", type=int, default=50, help="tokens of the warm-up generation")
    ap.add_argument("--cell", choices=("lstm", "gru"), default="lstm")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--embed", type=int, default=64, help="embedding width")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--vocab", type=int, default=128, help="characters")
    ap.add_argument("--prompt", type=int, default=32, help="prompt characters")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dtype", choices=("float32", "float16"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.tokens < 2:
        ap.error("--tokens must be >= 2")
    if a.dtype == "float16" and dev.type != "cuda":
        ap.error("--dtype float16 needs --device cuda")
    dtype = getattr(torch, a.dtype)
    # The same kernels in every process: no timing-based algorithm choice.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    # Weights are drawn on the CPU, so every process gets the same ones.
    torch.manual_seed(a.seed)
    model = CharRNN(a.vocab, a.embed, a.hidden, a.layers, a.cell).eval().to(device=dev, dtype=dtype)
    g = torch.Generator().manual_seed(a.seed + 1)
    prompt = torch.randint(0, a.vocab, (a.batch, a.prompt), generator=g).to(dev)

    tokens, times = [], []
    with torch.no_grad():
        if a.warmup > 0:
            tokens += generate(model, prompt, a.warmup, [])
        tokens += generate(model, prompt, a.tokens, times)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time:
        print("gs-wl: torch_rnn variant=%s device=%s dtype=%s layers=%d hidden=%d batch=%d steps=%d warmup=%d "
              "cudnn=%s median_us=%.3f mean_us=%.3f" % (
                  a.cell, dev.type, a.dtype, a.layers, a.hidden, a.batch, len(times), a.warmup,
                  torch.backends.cudnn.version() if dev.type == "cuda" else "-",
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
