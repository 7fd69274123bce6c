#!/usr/bin/env python3
"""LoRA adapters with Hugging Face peft (generation and training), for the real-program suite.

What a peft user writes: a causal LM (here a small Llama built from a
LlamaConfig with random weights: nothing downloaded, no tokenizer, token
ids random) wrapped with peft.get_peft_model(model, LoraConfig(r=--rank,
lora_alpha=2 * --rank, target_modules=..., lora_dropout=0.0,
task_type="CAUSAL_LM")).  peft inits the B matrices to zero, so a fresh
adapter changes nothing; init_lora_weights=False keeps nn.Linear's random
init for A and B instead (drawn on the host from --seed), so the adapters
change every output.  The adapters stay unmerged: every targeted nn.Linear
runs its base matmul, then lora_B(lora_A(x)) * scaling and an add.
peft keeps adapter weights in float32 when the base model is in bfloat16
(autocast_adapter_dtype), casting the input to them in every adapted layer.

  --targets qv      target_modules=["q_proj", "v_proj"] (peft's default for
                    Llama): two adapters a layer.
  --targets all     target_modules="all-linear": every nn.Linear but the
                    LM head (q, k, v, o, gate, up, down: seven a layer).
  --task generate   model.generate() (the PeftModelForCausalLM's, which
                    hands over to transformers') greedy with the dynamic
                    cache (DynamicCache: keys and values grow by torch.cat
                    every token), no end-of-sequence token, so every call
                    makes --tokens tokens; --warmup W untimed calls, then
                    --rounds timed ones.  The time of a token is measured
                    between consecutive calls of a StoppingCriteria (once
                    per decoding step; generate() reads a flag back to the
                    host every step), the prefill's interval left out, as
                    hf_generate.py does.  --out writes every call's new
                    token ids (int32 little-endian).
  --task train      the loop of peft's custom-training examples: model.train(),
                    torch.optim.AdamW over the trainable (LoRA) parameters
                    only (foreach), outputs = model(input_ids=, attention_mask=,
                    labels=) (transformers' causal-LM loss: labels shifted,
                    cross entropy in float32), loss.backward(), opt.step(),
                    opt.zero_grad(set_to_none=True) and loss.item() every
                    step; --batches fixed random batches of --batch x --seq
                    tokens, cycled.  Gradients flow through the frozen base
                    (its matmuls' input gradients, attention's backward) to
                    the adapters; the base weights get none.  --warmup W
                    steps, then --steps timed ones.  --out writes every
                    loss (float32), then every LoRA parameter's final bytes
                    (float32).  Determinism: CUBLAS_WORKSPACE_CONFIG set
                    before torch is imported and
                    torch.use_deterministic_algorithms(True) (strict: under
                    warn_only, SDPA's flash and memory-efficient backward
                    keep their non-deterministic reductions).

What it exercises: PyTorch's kernels (cudaLaunchKernel) and cuBLAS(Lt)
for the base model, and per adapted layer two more skinny GEMMs (rank
--rank), a cast, a scale and an add; generate: the dynamic cache's
torch.cat and a flag read back every token; train: the backward pass
through the frozen base, AdamW's multi-tensor-apply kernels over the
adapters and loss.item() every step.

--steps N / --tokens N (one option): the tokens of every generate() call
(default 64) or the timed training steps (default 30).  Options: --layers
--dim --heads --vocab --ctx (the Llama's size; MLP width 8/3 --dim rounded
to 64, --heads / 2 key-value heads), --rank, --prompt --batch (generate),
--batch --seq --batches --lr (train), --dtype auto|float32|bfloat16 (auto:
bfloat16 on cuda, float32 on cpu), --attn sdpa|eager, --seed, --device
cuda|cpu, --out, --time (one gs-wl line: the median wall time of one token,
or of one training step with its loss.item()).
"""
import os

# Everything is built from configs: never reach for the hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# cuBLAS is deterministic only with a fixed workspace configuration, which
# it reads when torch first initialises it: set it before importing torch.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402

import peft  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from peft import LoraConfig, get_peft_model  # noqa: E402
from transformers import AutoModelForCausalLM, GenerationConfig, StoppingCriteriaList  # noqa: E402

from hf_generate import TokenClock  # noqa: E402  (the per-token clock of the suite's generate programs)

TARGETS = {"qv": ["q_proj", "v_proj"], "all": "all-linear"}


def build_model(a, dtype):
    inter = (a.dim * 8 // 3 + 63) // 64 * 64  # the llama-style MLP width
    config = transformers.LlamaConfig(hidden_size=a.dim, intermediate_size=inter, num_hidden_layers=a.layers,
                                      num_attention_heads=a.heads, num_key_value_heads=max(1, a.heads // 2),
                                      max_position_embeddings=a.ctx, tie_word_embeddings=False,
                                      vocab_size=a.vocab, bos_token_id=None, eos_token_id=None, pad_token_id=0)
    torch.manual_seed(a.seed)
    model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation=a.attn)
    lora = LoraConfig(r=a.rank, lora_alpha=2 * a.rank, target_modules=TARGETS[a.targets], lora_dropout=0.0,
                      init_lora_weights=False, task_type="CAUSAL_LM")
    # The adapters are drawn here, on the host, from the global generator
    # seeded above; then everything moves to the device.
    return get_peft_model(model, lora)


def generate(a, model, dev):
    gen = torch.Generator().manual_seed(a.seed + 1)
    input_ids = torch.randint(1, a.vocab, (a.batch, a.prompt), generator=gen).to(dev)
    attention_mask = torch.ones_like(input_ids)
    gcfg = GenerationConfig(max_new_tokens=a.tokens, do_sample=False, num_beams=1,
                            pad_token_id=0, bos_token_id=None, eos_token_id=None)
    model.eval()
    tokens, times = [], []
    with torch.no_grad():
        for r in range(a.warmup + a.rounds):
            clock = TokenClock(a.batch, dev)
            out = model.generate(input_ids=input_ids, attention_mask=attention_mask, generation_config=gcfg,
                                 stopping_criteria=StoppingCriteriaList([clock]))
            new = out[:, a.prompt:].to(torch.int32).cpu()
            if new.shape[1] != a.tokens:
                raise SystemExit("hf_peft.py: generate() made %d tokens, not %d" % (new.shape[1], a.tokens))
            tokens += new.view(-1).tolist()
            if r >= a.warmup:
                times += [t1 - t0 for t0, t1 in zip(clock.stamps, clock.stamps[1:])]
    return struct.pack("<%di" % len(tokens), *tokens), times


def train(a, model, dev):
    params = [p for p in model.parameters() if p.requires_grad]  # the adapters: peft froze the rest
    opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=0.01, foreach=True)
    gen = torch.Generator().manual_seed(a.seed + 1)
    batches = [torch.randint(1, a.vocab, (a.batch, a.seq), generator=gen) for _ in range(a.batches)]
    mask = torch.ones(a.batch, a.seq, dtype=torch.long)
    model.train()
    losses, times = [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        ids = batches[i % a.batches].to(dev)
        outputs = model(input_ids=ids, attention_mask=mask.to(dev), labels=ids)
        loss = outputs.loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())  # the per-step read-back
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    out = [struct.pack("<%df" % len(losses), *losses)]
    for p in params:
        out.append(p.detach().float().cpu().contiguous().numpy().astype("<f4").tobytes())
    return b"".join(out), times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--task", choices=("generate", "train"), default="generate")
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=None,
                    help="generate: new tokens of every generate() call (default 64); train: timed steps (default 30)")
    ap.add_argument("--warmup", type=int, default=None,
                    help="untimed generate() calls (default 1) or training steps (default 3) first")
    ap.add_argument("--rounds", type=int, default=2, help="generate: timed generate() calls")
    ap.add_argument("--targets", choices=tuple(TARGETS), default="qv", help="LoRA target_modules")
    ap.add_argument("--rank", type=int, default=8, help="LoRA r (lora_alpha = 2 r)")
    ap.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa", help="attn_implementation")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=1024, help="max positions")
    ap.add_argument("--prompt", type=int, default=16, help="generate: prompt length")
    ap.add_argument("--batch", type=int, default=None, help="rows (default: generate 1, train 4)")
    ap.add_argument("--seq", type=int, default=128, help="train: tokens a row")
    ap.add_argument("--batches", type=int, default=4, help="train: random batches, cycled")
    ap.add_argument("--lr", type=float, default=1e-3, help="train: AdamW's learning rate")
    ap.add_argument("--dtype", choices=("auto", "float32", "bfloat16"), default="auto",
                    help="the base model's dtype (auto: bfloat16 on cuda, float32 on cpu)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    training = a.task == "train"
    if a.warmup is None:
        a.warmup = 3 if training else 1
    if a.batch is None:
        a.batch = 4 if training else 1
    if a.steps is None:
        a.steps = 30 if training else 64
    a.tokens = a.steps
    if a.dim % a.heads:
        ap.error("--dim must be a multiple of --heads")
    if training and (a.steps < 1 or a.seq < 2 or a.seq > a.ctx or a.batches < 1):
        ap.error("--task train: --steps >= 1, 2 <= --seq <= --ctx, --batches >= 1")
    if not training and (a.tokens < 2 or a.rounds < 1 or a.prompt + a.tokens > a.ctx):
        ap.error("--task generate: --tokens >= 2, --rounds >= 1, --prompt + --tokens <= --ctx")
    dev = torch.device(a.device)
    dtype = {"auto": torch.bfloat16 if dev.type == "cuda" else torch.float32,
             "float32": torch.float32, "bfloat16": torch.bfloat16}[a.dtype]
    torch.backends.cudnn.benchmark = False
    if training:
        torch.use_deterministic_algorithms(True)

    model = build_model(a, dtype).to(dev)
    data, times = (train if training else generate)(a, model, dev)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(data)
    if a.time:
        work = "steps=%d" % len(times)
        if not training:
            work = "tokens=%d rounds=%d %s" % (a.tokens, a.rounds, work)
        print("gs-wl: hf_peft variant=%s-%s device=%s dtype=%s rank=%d layers=%d dim=%d batch=%d %s warmup=%d "
              "peft=%s transformers=%s median_us=%.3f mean_us=%.3f" % (
                  a.task, a.targets, dev.type, str(dtype).split(".")[-1], a.rank, a.layers, a.dim, a.batch,
                  work, a.warmup, peft.__version__, transformers.__version__,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
