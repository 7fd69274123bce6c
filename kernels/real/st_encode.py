#!/usr/bin/env python3
"""sentence-transformers SentenceTransformer.encode() on batches of sentences, for the real-program suite.

What a user embedding text with sentence-transformers writes, the model
assembled from modules as its documentation shows (models.Transformer, then
models.Pooling(mean)) and model.encode(sentences, batch_size=...,
convert_to_numpy=True, normalize_embeddings=True) per request.  Nothing is
downloaded: models.Transformer loads from a path, so the program first
writes one to a temporary directory, a BertModel with random weights from
--seed (all-MiniLM-L6-v2's shape by default: 6 layers, 384 wide, 12 heads)
saved with save_pretrained, and a BertTokenizerFast made from a generated
WordPiece vocabulary (every one- and two-syllable word of 15 consonants and
5 vowels, "##" syllable pieces, punctuation: 5,783 entries).  The sentences
are seeded synthetic text in those syllables (one- to three-syllable words,
three-syllable ones split into two word pieces, commas, a full stop or a
question mark), --sets lists of --sentences sentences of 3 to --max-words
words, one list a request, cycled.

What encode() does per request: sorts the sentences by length, and for each
batch of --batch-size tokenises it on the host (padding to the batch's
longest, truncation at --max-seq-length), copies input_ids, token_type_ids
and attention_mask to the device, runs the BERT forward (SDPA attention with
the padding mask), mean pooling over the mask, F.normalize, and .cpu() the
batch's embeddings (a synchronising read-back a batch); then restores the
order and stacks them into one NumPy array.  The padded length changes from
batch to batch and request to request, as it does for real text.

--warmup W requests first, then --steps timed ones.  --out writes every
request's embeddings (float32, [--sentences, --dim]) in order; --time
prints one gs-wl line with the median wall time of one encode() call.
Inference only, float32, no atomics, cuDNN benchmarking off: every process
computes the same bytes.
"""
import os

# Everything is built here: never reach for the hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import sentence_transformers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402
from transformers import BertConfig, BertModel, BertTokenizerFast  # noqa: E402

try:
    # sentence-transformers 5.4 moved the modules here; the old path still
    # works there with a DeprecationWarning.
    from sentence_transformers.sentence_transformer import modules as models  # noqa: E402
except ImportError:
    from sentence_transformers import models  # noqa: E402

CONSONANTS = "bdfghklmnprstvz"
VOWELS = "aeiou"
SYLLABLES = [c + v for c in CONSONANTS for v in VOWELS]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def vocabulary():
    """A WordPiece vocabulary: specials, punctuation, one- and two-syllable words, '##' syllables."""
    words = SYLLABLES + [a + b for a in SYLLABLES for b in SYLLABLES]
    return SPECIALS + [".", ",", "?"] + words + ["##" + s for s in SYLLABLES]


def sentence(rng, max_words):
    words = []
    for k in range(int(rng.integers(3, max_words + 1))):
        syllables = int(rng.choice(3, p=(0.3, 0.5, 0.2))) + 1
        word = "".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), syllables))
        words.append(word.capitalize() if k == 0 else word)
        if rng.random() < 0.08:
            words[-1] += ","
    return " ".join(words) + ("?" if rng.random() < 0.2 else ".")


def build_model(a, root):
    """Writes a random BERT and its tokenizer to root, then assembles the SentenceTransformer from it."""
    with open(os.path.join(root, "vocab.txt"), "w") as f:
        f.write("\n".join(vocabulary()) + "\n")
    tokenizer = BertTokenizerFast.from_pretrained(root, model_max_length=a.max_seq_length)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=a.dim, num_hidden_layers=a.layers,
                        num_attention_heads=a.heads, intermediate_size=4 * a.dim,
                        max_position_embeddings=max(512, a.max_seq_length), pad_token_id=0)
    torch.manual_seed(a.seed)
    BertModel(config).save_pretrained(root)
    tokenizer.save_pretrained(root)
    word = models.Transformer(root, max_seq_length=a.max_seq_length)
    pool = models.Pooling(a.dim, pooling_mode="mean")
    return SentenceTransformer(modules=[word, pool], device=a.device)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=100, help="timed encode() calls")
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--sentences", type=int, default=64, help="sentences an encode() call")
    ap.add_argument("--batch-size", type=int, default=32, help="encode(batch_size=)")
    ap.add_argument("--sets", type=int, default=4, help="sentence lists, cycled")
    ap.add_argument("--max-words", type=int, default=40, help="words a sentence, at most")
    ap.add_argument("--max-seq-length", type=int, default=128, help="models.Transformer(max_seq_length=)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.dim % a.heads:
        ap.error("--dim must be a multiple of --heads")
    if min(a.steps, a.sentences, a.batch_size, a.sets) < 1 or a.max_words < 3 or a.max_seq_length < 8:
        ap.error("--steps, --sentences, --batch-size, --sets >= 1; --max-words >= 3; --max-seq-length >= 8")
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    # save_pretrained and from_pretrained draw progress bars by default.
    transformers.utils.logging.disable_progress_bar()

    rng = np.random.default_rng(a.seed + 1)
    sets = [[sentence(rng, a.max_words) for _ in range(a.sentences)] for _ in range(a.sets)]
    with tempfile.TemporaryDirectory(prefix="st_encode.") as root:
        model = build_model(a, root)

    results, times = [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        emb = model.encode(sets[i % a.sets], batch_size=a.batch_size, convert_to_numpy=True,
                           normalize_embeddings=True, show_progress_bar=False)
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
        results.append(emb.astype("<f4").tobytes())
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        print("gs-wl: st_encode variant=bert-l%d-d%d device=%s layers=%d dim=%d sentences=%d batch_size=%d sets=%d "
              "steps=%d warmup=%d sentence_transformers=%s transformers=%s median_us=%.3f mean_us=%.3f" % (
                  a.layers, a.dim, torch.device(a.device).type, a.layers, a.dim, a.sentences, a.batch_size,
                  a.sets, len(times), a.warmup, sentence_transformers.__version__, transformers.__version__,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
