#!/usr/bin/env python3
"""Hugging Face transformers model.generate(), greedy, for the real-program suite.

A small causal LM is built from a config with random weights
(AutoModelForCausalLM.from_config: nothing downloaded, no tokenizer; input
ids are fed directly), then generate() runs greedily the way users call it.
Generation never stops early: there is no end-of-sequence token, so every
call produces exactly --tokens new tokens.

  --arch gpt2|llama|qwen2|mistral   the model family (sizes from --layers,
                                    --dim, --heads, --vocab)
  --cache dynamic   transformers' DynamicCache: keys and values grow by
                    torch.cat every token (new shapes every token).
  --cache static    cache_implementation="static": transformers then compiles
                    the decoding forward with torch.compile(mode=
                    "reduce-overhead") and replays it through CUDA graphs by
                    itself (on cuda; on cpu it runs uncompiled).

--warmup W generate() calls come first (W >= 1 with a static cache: that is
where it compiles and captures), then --rounds timed calls.  The time of a
token is measured between consecutive calls of a StoppingCriteria (once per
decoding step, after the token is chosen; generate() reads a flag back to
the host every step); the first interval of a call (the prefill) is left out.
--out writes every call's new token ids (int32 little-endian); --time prints
one gs-wl line with the median time of one token.
"""
import os

# Everything is built from configs: never reach for the hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM, GenerationConfig, StoppingCriteria, StoppingCriteriaList  # noqa: E402


class TokenClock(StoppingCriteria):
    """Never stops anything; notes the time of every decoding step."""

    def __init__(self, batch, device):
        self.stamps = []
        self.false = torch.zeros(batch, dtype=torch.bool, device=device)

    def __call__(self, input_ids, scores, **kwargs):
        self.stamps.append(time.perf_counter())
        return self.false

    def __deepcopy__(self, memo):
        # generate() deep-copies its stopping criteria; the stamps must land here.
        return self


def build_config(a):
    common = dict(vocab_size=a.vocab, bos_token_id=None, eos_token_id=None, pad_token_id=0)
    inter = (a.dim * 8 // 3 + 63) // 64 * 64  # the llama-style MLP width
    if a.arch == "gpt2":
        return transformers.GPT2Config(n_positions=a.ctx, n_embd=a.dim, n_layer=a.layers, n_head=a.heads,
                                       **common)
    cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config,
           "mistral": transformers.MistralConfig}[a.arch]
    return cls(hidden_size=a.dim, intermediate_size=inter, num_hidden_layers=a.layers,
               num_attention_heads=a.heads, num_key_value_heads=max(1, a.heads // 2),
               max_position_embeddings=a.ctx, tie_word_embeddings=False, **common)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", "--steps", dest="tokens", type=int, default=64,
                    help="new tokens of every generate() call")
    ap.add_argument("--warmup", type=int, default=1, help="untimed generate() calls first")
    ap.add_argument("--rounds", type=int, default=2, help="timed generate() calls")
    ap.add_argument("--arch", choices=("gpt2", "llama", "qwen2", "mistral"), default="llama")
    ap.add_argument("--cache", choices=("dynamic", "static"), default="dynamic")
    ap.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa", help="attn_implementation")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=1024, help="max positions")
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"), default="auto",
                    help="auto: bfloat16 on cuda, float32 on cpu")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.prompt + a.tokens > a.ctx:
        ap.error("--prompt + --tokens must fit in --ctx")
    if a.tokens < 2 or a.rounds < 1:
        ap.error("--tokens must be >= 2 and --rounds >= 1")
    dtype = {"auto": torch.bfloat16 if dev.type == "cuda" else torch.float32,
             "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[a.dtype]
    if a.cache == "static":
        # No on-device benchmarking that could pick different kernels (and
        # so different bits) in different processes.
        import torch._inductor.config as inductor_config
        inductor_config.deterministic = True

    torch.manual_seed(a.seed)
    model = AutoModelForCausalLM.from_config(build_config(a), dtype=dtype, attn_implementation=a.attn)
    model = model.to(dev).eval()
    gen = torch.Generator().manual_seed(a.seed + 1)
    input_ids = torch.randint(1, a.vocab, (a.batch, a.prompt), generator=gen).to(dev)
    attention_mask = torch.ones_like(input_ids)
    gcfg = GenerationConfig(max_new_tokens=a.tokens, do_sample=False, num_beams=1,
                            pad_token_id=0, bos_token_id=None, eos_token_id=None,
                            cache_implementation="static" if a.cache == "static" else None)

    tokens, per_token = [], []
    with torch.no_grad():
        for r in range(a.warmup + a.rounds):
            clock = TokenClock(a.batch, dev)
            out = model.generate(input_ids, attention_mask=attention_mask, generation_config=gcfg,
                                 stopping_criteria=StoppingCriteriaList([clock]))
            new = out[:, a.prompt:].to(torch.int32).cpu()
            if new.shape[1] != a.tokens:
                raise SystemExit("hf_generate.py: generate() made %d tokens, not %d" % (new.shape[1], a.tokens))
            tokens += new.view(-1).tolist()
            if r >= a.warmup:
                per_token += [t1 - t0 for t0, t1 in zip(clock.stamps, clock.stamps[1:])]
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time:
        print("gs-wl: hf_generate variant=%s-%s device=%s dtype=%s layers=%d dim=%d batch=%d tokens=%d "
              "rounds=%d steps=%d warmup=%d transformers=%s median_us=%.3f mean_us=%.3f" % (
                  a.arch, a.cache, dev.type, str(dtype).split(".")[-1], a.layers, a.dim, a.batch, a.tokens,
                  a.rounds, len(per_token), a.warmup, transformers.__version__,
                  statistics.median(per_token) * 1e6, statistics.mean(per_token) * 1e6), flush=True)


if __name__ == "__main__":
    main()
