#!/usr/bin/env python3
"""A thread-pool decode server in plain PyTorch, for the real-program suite.

What a small inference service does when it answers several requests at
once without a batching scheduler: one model (torch_nn_decode.py's GPT,
nn modules, random weights from --seed) shared by --threads worker
threads, each generating its own request token by token with a dynamic KV
cache (torch.cat), .item() a token.  The interpreter's lock interleaves
the workers' launches at random, so the order of launches on the GPU
differs from run to run while each request's result does not.

  --streams own      each worker issues on a torch.cuda.Stream of its own
                     (torch.cuda.stream(s) around its loop), as serving code
                     that wants overlap writes it
  --streams default  every worker on the current (legacy default) stream, as
                     code that never mentions streams does: the workers'
                     launches interleave on ONE stream
  --readback item    each token read with .item() (a copy, then the stream's
                     synchronization)
  --readback event   copied into a pinned buffer (non_blocking), an event
                     recorded after it and synchronized, as servers that
                     overlap output processing write it
  --readback query   the same copy, then the worker polls its stream
                     (stream.query()) until it is done
  --monitor MS       a monitor thread polls every worker's stream
                     (stream.query()) each MS milliseconds while the
                     server runs, as a health check or a load report
                     does: the polls fall anywhere in the workers' steps

A round hands every worker one request (its prompt drawn from --seed, the
round and the worker) and waits for all of them; --warmup rounds come
first, untimed.  --out writes every token of every request, in round and
worker order (int32 little-endian); --time prints one gs-wl line whose
median_us is the median wall time of a round divided by --tokens (a token
of every worker, read-backs included).
"""
import argparse
import os
import statistics
import struct
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_nn_decode import GPT, DynamicDecoder, DynamicKV, read_tokens  # noqa: E402


class Decoder(DynamicDecoder):
    """DynamicDecoder whose token read-back is --readback's."""

    def __init__(self, model, a, dev):
        super().__init__(model, a, dev, None)  # greedy: no sampler
        self.read = read_tokens
        if a.readback != "item" and dev.type == "cuda":
            self.host = torch.empty(1, dtype=torch.long, pin_memory=True)
            self.ev = torch.cuda.Event()
            self.read = self.read_event if a.readback == "event" else self.read_query

    def read_event(self, tok):
        self.host.copy_(tok.view(-1), non_blocking=True)
        self.ev.record()
        self.ev.synchronize()
        return self.host.tolist()

    def read_query(self, tok):
        self.host.copy_(tok.view(-1), non_blocking=True)
        s = torch.cuda.current_stream()
        while not s.query():
            pass
        return self.host.tolist()

    def generate(self, prompt, n, times):
        kvs = [DynamicKV() for _ in self.model.blocks]
        p = prompt.shape[1]
        logits = self.model(prompt, torch.arange(p, device=self.dev), kvs)
        tok = logits.argmax(-1, keepdim=True)
        out = self.read(tok)
        for i in range(n - 1):
            logits = self.model(tok, torch.arange(p + i, p + i + 1, device=self.dev), kvs)
            tok = logits.argmax(-1, keepdim=True)
            out += self.read(tok)
        return out


class Worker(threading.Thread):
    """Generates the request of each round between the two barriers."""

    def __init__(self, wid, model, a, dev, start, done, results):
        super().__init__(daemon=True)
        self.wid, self.model, self.a, self.dev = wid, model, a, dev
        self.start_b, self.done_b, self.results = start, done, results
        self.error = None
        self.stream = None  # the stream it issues on, once running (cuda only)

    def prompt(self, rnd):
        g = torch.Generator().manual_seed(self.a.seed * 1000003 + rnd * 101 + self.wid)
        return torch.randint(0, self.a.vocab, (1, self.a.prompt), generator=g).to(self.dev)

    def serve(self):
        try:
            dec = Decoder(self.model, self.a, self.dev)
        except Exception as e:  # reported by main, as below: a thread that dies hangs the barriers
            self.error = e
        for rnd in range(self.a.warmup + self.a.requests):
            self.start_b.wait()
            try:
                if self.error is None:
                    self.results[rnd][self.wid] = dec.generate(self.prompt(rnd), self.a.tokens, [])
            except Exception as e:  # reported by main; the barriers must still be met
                self.error = e
            self.done_b.wait()

    def run(self):
        with torch.inference_mode():  # grad mode is per thread
            if self.dev.type == "cuda" and self.a.streams == "own":
                with torch.cuda.stream(torch.cuda.Stream(device=self.dev)):
                    self.stream = torch.cuda.current_stream()
                    self.serve()
            else:
                if self.dev.type == "cuda":
                    self.stream = torch.cuda.current_stream()
                self.serve()


class Monitor(threading.Thread):
    """Polls the workers' streams every `period` seconds until stopped."""

    def __init__(self, workers, period):
        super().__init__(daemon=True)
        self.workers, self.period = workers, period
        self.stop = threading.Event()
        self.polls = self.busy = 0

    def run(self):
        while not self.stop.is_set():
            for w in self.workers:
                s = w.stream
                if s is not None:
                    self.polls += 1
                    self.busy += not s.query()
            self.stop.wait(self.period)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--streams", choices=("own", "default"), default="own")
    ap.add_argument("--readback", choices=("item", "event", "query"), default="item")
    ap.add_argument("--monitor", type=float, default=0, metavar="MS",
                    help="a monitor thread polls every worker's stream each MS milliseconds (0: none)")
    ap.add_argument("--requests", "--steps", dest="requests", type=int, default=12,
                    help="timed rounds (a request per worker each)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed rounds first")
    ap.add_argument("--tokens", type=int, default=24, help="tokens a request")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--ctx", type=int, default=128, help="position table size")
    ap.add_argument("--prompt", type=int, default=12)
    ap.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"), default="auto",
                    help="auto: bfloat16 on cuda, float32 on cpu")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.threads < 1 or a.requests < 1 or a.tokens < 1 or a.warmup < 0 or a.monitor < 0:
        sys.exit("torch_threads.py: --threads, --requests and --tokens must be at least 1, "
                 "--warmup and --monitor at least 0")
    if a.dim % a.heads:
        sys.exit("torch_threads.py: --dim must be a multiple of --heads")
    if a.prompt + a.tokens > a.ctx:
        sys.exit("torch_threads.py: --prompt + --tokens must fit in --ctx")
    dtype = {"auto": torch.bfloat16 if dev.type == "cuda" else torch.float32,
             "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[a.dtype]
    a.batch = 1  # (what GPT and the decoder read of the arguments)

    torch.manual_seed(a.seed)  # weights drawn on the CPU: the same in every process
    model = GPT(a).eval().to(device=dev, dtype=dtype)
    rounds = a.warmup + a.requests
    results = [[None] * a.threads for _ in range(rounds)]
    start, done = threading.Barrier(a.threads + 1), threading.Barrier(a.threads + 1)
    workers = [Worker(w, model, a, dev, start, done, results) for w in range(a.threads)]
    for w in workers:
        w.start()
    monitor = Monitor(workers, a.monitor / 1000) if a.monitor > 0 else None
    if monitor is not None:
        monitor.start()
    times = []
    for rnd in range(rounds):
        t0 = time.perf_counter()
        start.wait()
        done.wait()
        if rnd >= a.warmup:
            times.append((time.perf_counter() - t0) / a.tokens)
    if monitor is not None:
        monitor.stop.set()
        monitor.join()
    for w in workers:
        w.join()
        if w.error is not None:
            sys.exit("torch_threads.py: worker %d: %r" % (w.wid, w.error))
    tokens = [t for per_round in results for per_worker in per_round for t in per_worker]
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time:
        print("gs-wl: torch_threads variant=%s-streams-%s%s threads=%d device=%s dtype=%s layers=%d dim=%d "
              "steps=%d warmup=%d median_us=%.3f mean_us=%.3f%s" % (
                  a.streams, a.readback, "" if monitor is None else "-monitor%g" % a.monitor,
                  a.threads, dev.type, str(dtype).split(".")[-1], a.layers, a.dim,
                  len(times), a.warmup, statistics.median(times) * 1e6,
                  statistics.mean(times) * 1e6,
                  "" if monitor is None else " polls=%d busy=%d" % (monitor.polls, monitor.busy)), flush=True)


if __name__ == "__main__":
    main()
