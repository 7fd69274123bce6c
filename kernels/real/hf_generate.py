#!/usr/bin/env python3
"""Hugging Face transformers model.generate(), greedy or sampling, for the real-program suite.

A small causal LM is built from a config with random weights
(AutoModelForCausalLM.from_config: nothing downloaded, no tokenizer; input
ids are fed directly), then generate() runs greedily the way users call it.
Generation never stops early: there is no end-of-sequence token, so every
call produces exactly --tokens new tokens.

  --arch gpt2|llama|qwen2|mistral|opt|neox|phi|gemma
                    the model family (sizes from --layers, --dim, --heads,
                    --vocab): OPT's learned positions and ReLU MLP, GPT-NeoX's
                    parallel residual and partial rotary, Phi's partial rotary
                    and GELU MLP beside attention, Gemma's tanh-GELU gated MLP,
                    RMSNorm and scaled embeddings
  --arch falcon|bloom|gptj|phi3|starcoder2
                    more families: Falcon's multi-query parallel attention,
                    BLOOM's ALiBi biases (no rotary), GPT-J's interleaved
                    rotary, Phi-3's fused qkv and gate-up projections,
                    StarCoder2's biased layers and LayerNorm
  --arch gemma2     Gemma 2: logit soft-capping, sliding-window layers every
                    other layer and the cache transformers picks for it
  --arch mamba      a state-space model (MambaConfig), no attention: each
                    layer a causal convolution and a selective scan whose
                    states (fixed size, updated in place every token) are
                    the cache; without the mamba-ssm kernels transformers
                    runs its PyTorch path, many small launches a layer
  --arch qwen2moe   Qwen2-MoE: --experts routed experts (4 chosen a token)
                    and a shared expert behind a sigmoid gate, every layer
  --arch mixtral    a sparse mixture of experts (MixtralConfig: --experts
                    experts, 2 chosen per token by a router, each a SwiGLU MLP
                    of half the dense width): transformers routes each token
                    with topk and runs only the experts it chose, so which
                    weights a step reads, and with --batch > 1 how many rows
                    each expert gets, change from token to token
  --arch t5|bart    an encoder-decoder instead (AutoModelForSeq2SeqLM.from_config,
                    t5-small's or bart-base's shape; --layers encoder and --layers
                    decoder layers): generate() encodes a source of --prompt
                    random ids once, then decodes --tokens tokens after the
                    decoder start token, with cross-attention over the encoder's
                    output (an EncoderDecoderCache: self-attention and
                    cross-attention caches, dynamic or static).
  --sample          generate(do_sample=True, top_k=--top-k, top_p=--top-p,
                    temperature=--temperature), the way users sample: logits
                    warpers (top-k, then a sort, softmax and cumsum for top-p)
                    and torch.multinomial every token.  torch.manual_seed(
                    --seed + call index) before every call makes each process
                    draw the same tokens (PyTorch's Philox generator; its
                    offset advances every token).
  --beams N         beam search: generate(num_beams=N, do_sample=False,
                    early_stopping=False), the best beam of each prompt
                    returned.  transformers' vectorised beam search keeps
                    2N candidates per prompt (log_softmax, topk over N x
                    vocab, gathers), calls the stopping criteria on the
                    batch * 2N candidate sequences, reorders the KV cache
                    by the chosen beams (index_select per layer) and reads
                    its stopping flag back every token; with no
                    end-of-sequence token every beam runs to --tokens.
                    The model runs on batch * N rows.  Greedy only, dynamic
                    cache only.
  --assistant L     assisted generation (speculative decoding as transformers
                    does it): generate(assistant_model=draft), the draft the
                    same architecture with the target's first L layers, its
                    final norm and head (the target's weights: an early-exit
                    draft, so some of its guesses are accepted).  Every
                    iteration the draft proposes up to num_assistant_tokens
                    tokens one by one (transformers' "heuristic" schedule
                    grows it by 2 when all were accepted, shrinks it by 1
                    otherwise), the target checks them in one forward of a
                    length that changes with that number, and both caches
                    are cropped to what was accepted: shapes change from
                    iteration to iteration.  Greedy, batch 1, decoder-only.
                    The time of a token is a call's wall time over --tokens
                    (the stopping criteria run once an iteration, not a
                    token).
  --cache dynamic   transformers' DynamicCache: keys and values grow by
                    torch.cat every token (new shapes every token).
  --cache static    cache_implementation="static": transformers then compiles
                    the decoding forward with torch.compile(mode=
                    "reduce-overhead") and replays it through CUDA graphs by
                    itself (on cuda; on cpu it runs uncompiled).

--compile         model.forward = torch.compile(model.forward) (Inductor's
                    default mode, the dynamic cache's shapes growing every
                    token: recompiled with dynamic shapes after the first
                    tokens), as users speed up generate() without a static
                    cache; on cpu it runs uncompiled.

--warmup W generate() calls come first (W >= 1 with a static cache: that is
where it compiles and captures), then --rounds timed calls.  The time of a
token is measured between consecutive calls of a StoppingCriteria (once per
decoding step, after the token is chosen; generate() reads a flag back to
the host every step); the first interval of a call (the prefill) is left out.
With an encoder-decoder the first interval holds the encoder's run too.
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
from transformers import (AutoModelForCausalLM, AutoModelForSeq2SeqLM, GenerationConfig,  # noqa: E402
                          StoppingCriteria, StoppingCriteriaList)


class TokenClock(StoppingCriteria):
    """Never stops anything; notes the time of every decoding step."""

    def __init__(self, rows, device):
        self.stamps = []
        self.false = torch.zeros(rows, dtype=torch.bool, device=device)

    def __call__(self, input_ids, scores, **kwargs):
        self.stamps.append(time.perf_counter())
        if self.false.shape[0] != input_ids.shape[0]:  # a beam search's candidate count, if not foreseen
            self.false = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        return self.false

    def __deepcopy__(self, memo):
        # generate() deep-copies its stopping criteria; the stamps must land here.
        return self


SEQ2SEQ = ("t5", "bart")


def build_config(a):
    common = dict(vocab_size=a.vocab, bos_token_id=None, eos_token_id=None, pad_token_id=0)
    if a.arch == "t5":  # t5-small's shape: ReLU MLP 4x wide, tied embeddings
        return transformers.T5Config(d_model=a.dim, d_kv=a.dim // a.heads, d_ff=4 * a.dim, num_layers=a.layers,
                                     num_decoder_layers=a.layers, num_heads=a.heads, feed_forward_proj="relu",
                                     decoder_start_token_id=0, **common)
    if a.arch == "bart":
        return transformers.BartConfig(d_model=a.dim, encoder_layers=a.layers, decoder_layers=a.layers,
                                       encoder_attention_heads=a.heads, decoder_attention_heads=a.heads,
                                       encoder_ffn_dim=4 * a.dim, decoder_ffn_dim=4 * a.dim,
                                       max_position_embeddings=a.ctx, decoder_start_token_id=0,
                                       forced_bos_token_id=None, forced_eos_token_id=None,
                                       tie_word_embeddings=False, **common)
    inter = (a.dim * 8 // 3 + 63) // 64 * 64  # the llama-style MLP width
    if a.arch == "gpt2":
        return transformers.GPT2Config(n_positions=a.ctx, n_embd=a.dim, n_layer=a.layers, n_head=a.heads,
                                       **common)
    if a.arch == "opt":
        return transformers.OPTConfig(hidden_size=a.dim, num_hidden_layers=a.layers, ffn_dim=4 * a.dim,
                                      num_attention_heads=a.heads, max_position_embeddings=a.ctx,
                                      word_embed_proj_dim=a.dim, **common)
    if a.arch == "neox":
        return transformers.GPTNeoXConfig(hidden_size=a.dim, num_hidden_layers=a.layers,
                                          num_attention_heads=a.heads, intermediate_size=4 * a.dim,
                                          max_position_embeddings=a.ctx, rotary_pct=0.25,
                                          use_parallel_residual=True, tie_word_embeddings=False, **common)
    if a.arch == "phi":
        return transformers.PhiConfig(hidden_size=a.dim, intermediate_size=4 * a.dim, num_hidden_layers=a.layers,
                                      num_attention_heads=a.heads, max_position_embeddings=a.ctx,
                                      partial_rotary_factor=0.5, tie_word_embeddings=False, **common)
    if a.arch == "gemma":
        return transformers.GemmaConfig(hidden_size=a.dim, intermediate_size=inter, num_hidden_layers=a.layers,
                                        num_attention_heads=a.heads, num_key_value_heads=1,
                                        head_dim=a.dim // a.heads, max_position_embeddings=a.ctx, **common)
    if a.arch == "mixtral":
        return transformers.MixtralConfig(hidden_size=a.dim, intermediate_size=inter // 2,
                                          num_hidden_layers=a.layers, num_attention_heads=a.heads,
                                          num_key_value_heads=max(1, a.heads // 2), num_local_experts=a.experts,
                                          num_experts_per_tok=2, max_position_embeddings=a.ctx,
                                          tie_word_embeddings=False, **common)
    if a.arch == "falcon":
        return transformers.FalconConfig(hidden_size=a.dim, num_hidden_layers=a.layers, num_attention_heads=a.heads,
                                         multi_query=True, parallel_attn=True, new_decoder_architecture=False,
                                         alibi=False, bias=False, max_position_embeddings=a.ctx, **common)
    if a.arch == "bloom":
        return transformers.BloomConfig(hidden_size=a.dim, n_layer=a.layers, n_head=a.heads, **common)
    if a.arch == "gptj":
        return transformers.GPTJConfig(n_embd=a.dim, n_layer=a.layers, n_head=a.heads, n_positions=a.ctx,
                                       rotary_dim=a.dim // a.heads // 2, tie_word_embeddings=False, **common)
    if a.arch == "phi3":
        return transformers.Phi3Config(hidden_size=a.dim, intermediate_size=inter, num_hidden_layers=a.layers,
                                       num_attention_heads=a.heads, num_key_value_heads=max(1, a.heads // 2),
                                       max_position_embeddings=a.ctx, original_max_position_embeddings=a.ctx,
                                       tie_word_embeddings=False, **common)
    if a.arch == "starcoder2":
        return transformers.Starcoder2Config(hidden_size=a.dim, intermediate_size=4 * a.dim,
                                             num_hidden_layers=a.layers, num_attention_heads=a.heads,
                                             num_key_value_heads=max(1, a.heads // 2),
                                             max_position_embeddings=a.ctx, use_bias=True, **common)
    if a.arch == "gemma2":
        return transformers.Gemma2Config(hidden_size=a.dim, intermediate_size=inter, num_hidden_layers=a.layers,
                                         num_attention_heads=a.heads, num_key_value_heads=max(1, a.heads // 2),
                                         head_dim=a.dim // a.heads, max_position_embeddings=a.ctx,
                                         sliding_window=64, **common)
    if a.arch == "mamba":
        return transformers.MambaConfig(hidden_size=a.dim, num_hidden_layers=a.layers, state_size=16,
                                        conv_kernel=4, expand=2, use_mambapy=False, **common)
    if a.arch == "qwen2moe":
        return transformers.Qwen2MoeConfig(hidden_size=a.dim, intermediate_size=inter,
                                           moe_intermediate_size=inter // 4,
                                           shared_expert_intermediate_size=inter, num_experts=a.experts,
                                           num_experts_per_tok=4, num_hidden_layers=a.layers,
                                           num_attention_heads=a.heads, num_key_value_heads=max(1, a.heads // 2),
                                           max_position_embeddings=a.ctx, tie_word_embeddings=False, **common)
    cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config,
           "mistral": transformers.MistralConfig}[a.arch]
    return cls(hidden_size=a.dim, intermediate_size=inter, num_hidden_layers=a.layers,
               num_attention_heads=a.heads, num_key_value_heads=max(1, a.heads // 2),
               max_position_embeddings=a.ctx, tie_word_embeddings=False, **common)


def make_model(auto, a, dtype):
    """The model from its config, with --attn where the family has it (Mamba has no attention)."""
    if a.arch == "mamba":
        return auto.from_config(build_config(a), dtype=dtype)
    return auto.from_config(build_config(a), dtype=dtype, attn_implementation=a.attn)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", "--steps", dest="tokens", type=int, default=64,
                    help="new tokens of every generate() call")
    ap.add_argument("--warmup", type=int, default=1, help="untimed generate() calls first")
    ap.add_argument("--rounds", type=int, default=2, help="timed generate() calls")
    ap.add_argument("--arch", choices=("gpt2", "llama", "qwen2", "mistral", "opt", "neox", "phi", "gemma", "mixtral",
                                       "falcon", "bloom", "gptj", "phi3", "starcoder2", "gemma2", "mamba",
                                       "qwen2moe") + SEQ2SEQ, default="llama")
    ap.add_argument("--cache", choices=("dynamic", "static"), default="dynamic")
    ap.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa", help="attn_implementation")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=1024, help="max positions")
    ap.add_argument("--prompt", type=int, default=16, help="prompt length (t5, bart: the source's)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"), default="auto",
                    help="auto: bfloat16 on cuda, float32 on cpu")
    ap.add_argument("--sample", action="store_true", help="do_sample=True (default: greedy)")
    ap.add_argument("--top-k", type=int, default=50, help="--sample: top_k")
    ap.add_argument("--top-p", type=float, default=0.9, help="--sample: top_p")
    ap.add_argument("--temperature", type=float, default=0.8, help="--sample: temperature")
    ap.add_argument("--experts", type=int, default=8, help="--arch mixtral: experts per layer")
    ap.add_argument("--beams", type=int, default=1, help="beam search with N beams (greedy, dynamic cache)")
    ap.add_argument("--assistant", type=int, default=0, metavar="L",
                    help="assisted generation with the target's first L layers as the draft")
    ap.add_argument("--compile", action="store_true", help="model.forward = torch.compile(model.forward)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.prompt + a.tokens > a.ctx:
        ap.error("--prompt + --tokens must fit in --ctx")
    if a.arch == "mixtral" and a.experts < 2:
        ap.error("--experts must be >= 2 (two are chosen per token)")
    if a.arch == "qwen2moe" and a.experts < 4:
        ap.error("--arch qwen2moe: --experts must be >= 4 (four are chosen per token)")
    if a.tokens < 2 or a.rounds < 1:
        ap.error("--tokens must be >= 2 and --rounds >= 1")
    if a.beams < 1 or (a.beams > 1 and (a.sample or a.cache != "dynamic")):
        ap.error("--beams N: N >= 1; beam search is greedy (no --sample) with --cache dynamic")
    if a.assistant and (a.assistant >= a.layers or a.arch in SEQ2SEQ or a.batch != 1 or a.sample
                        or a.beams > 1 or a.cache != "dynamic"):
        ap.error("--assistant L: 1 <= L < --layers, a decoder-only --arch, --batch 1, greedy, --cache dynamic")
    dtype = {"auto": torch.bfloat16 if dev.type == "cuda" else torch.float32,
             "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[a.dtype]
    if a.compile and (a.cache != "dynamic" or a.assistant):
        ap.error("--compile: with --cache dynamic and no --assistant")
    if a.cache == "static" or a.compile:
        # No on-device benchmarking that could pick different kernels (and
        # so different bits) in different processes.
        import torch._inductor.config as inductor_config
        inductor_config.deterministic = True

    seq2seq = a.arch in SEQ2SEQ
    torch.manual_seed(a.seed)
    auto = AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM
    model = make_model(auto, a, dtype)
    if a.arch == "t5":
        # T5 initialises its (tied) embedding with std 1, far above its layers'
        # outputs: a fresh model only repeats the decoder's start token.  With
        # GPT-2's and Llama's std 0.02 the tokens depend on the source and on
        # everything decoded before.
        with torch.no_grad():
            model.shared.weight.normal_(0.0, 0.02)
    model = model.to(dev).eval()
    if a.compile and dev.type == "cuda":
        model.forward = torch.compile(model.forward)
    if a.assistant:
        full = a.layers
        a.layers = a.assistant
        draft = make_model(auto, a, dtype)
        a.layers = full
        # Every key of the draft is the target's (its first layers, norm and head).
        missing, _ = draft.load_state_dict(model.state_dict(), strict=False)
        if missing:
            raise SystemExit("hf_generate.py: the draft's %s are not the target's" % missing[:3])
        draft = draft.to(dev).eval()
        extra_call = dict(assistant_model=draft)
    else:
        extra_call = {}
    gen = torch.Generator().manual_seed(a.seed + 1)
    input_ids = torch.randint(1, a.vocab, (a.batch, a.prompt), generator=gen).to(dev)
    attention_mask = torch.ones_like(input_ids)
    extra = dict(decoder_start_token_id=0) if seq2seq else {}
    if a.sample:
        extra.update(do_sample=True, top_k=a.top_k, top_p=a.top_p, temperature=a.temperature)
    else:
        extra.update(do_sample=False)
    if a.beams > 1:
        extra.update(early_stopping=False)
    gcfg = GenerationConfig(max_new_tokens=a.tokens, num_beams=a.beams,
                            pad_token_id=0, bos_token_id=None, eos_token_id=None,
                            cache_implementation="static" if a.cache == "static" else None, **extra)
    # generate() returns the prompt and the new tokens; an encoder-decoder's
    # output is the decoder's sequence: its start token, then the new ones.
    skip = 1 if seq2seq else a.prompt
    # The stopping criteria see every candidate sequence: batch rows, or with
    # beams batch * 2N (transformers keeps twice the beams when no
    # end-of-sequence token is set); TokenClock adapts if that changes.
    rows = a.batch if a.beams == 1 else a.batch * 2 * a.beams

    tokens, per_token = [], []
    with torch.no_grad():
        for r in range(a.warmup + a.rounds):
            clock = TokenClock(rows, dev)
            if a.sample:
                torch.manual_seed(a.seed + r)  # every call draws the same tokens in every process
            t0 = time.perf_counter()
            out = model.generate(input_ids, attention_mask=attention_mask, generation_config=gcfg,
                                 stopping_criteria=StoppingCriteriaList([clock]), **extra_call)
            new = out[:, skip:].to(torch.int32).cpu()
            if new.shape[1] != a.tokens:
                raise SystemExit("hf_generate.py: generate() made %d tokens, not %d" % (new.shape[1], a.tokens))
            tokens += new.view(-1).tolist()
            if r >= a.warmup and a.assistant:
                per_token.append((time.perf_counter() - t0) / a.tokens)
            elif r >= a.warmup:
                per_token += [t1 - t0 for t0, t1 in zip(clock.stamps, clock.stamps[1:])]
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time:
        variant = a.cache + ("-sample" if a.sample else "") + ("-beam%d" % a.beams if a.beams > 1 else "")
        variant += "-assist%d" % a.assistant if a.assistant else ""
        variant += "-compile" if a.compile else ""
        print("gs-wl: hf_generate variant=%s-%s device=%s dtype=%s layers=%d dim=%d batch=%d tokens=%d "
              "rounds=%d steps=%d warmup=%d transformers=%s median_us=%.3f mean_us=%.3f" % (
                  a.arch, variant, dev.type, str(dtype).split(".")[-1],
                  a.layers, a.dim, a.batch, a.tokens,
                  a.rounds, len(per_token), a.warmup, transformers.__version__,
                  statistics.median(per_token) * 1e6, statistics.mean(per_token) * 1e6), flush=True)


if __name__ == "__main__":
    main()
