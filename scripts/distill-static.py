"""Distills engram's edge model: a static (bag-of-tokens) embedding table from all-MiniLM-L6-v2.

Cloudflare Workers have 128 MB of memory and a 10 MB compressed bundle; the transformer needs
~90 MB of fp32 weights at run time. The edge model keeps MiniLM's tokenizer and replaces the
network with a lookup table, the Model2Vec recipe written out here:

1. Every vocabulary entry is run through the fp32 model alone, as `[CLS] token [SEP]`, and
   its output is mean-pooled: one 384-d vector per token.
2. PCA (centered) to DIMS dimensions, which also removes the direction all tokens share.
3. Each row is weighted by smooth inverse frequency, a / (a + p(token)), with p from Zipf's
   law over the vocabulary order (BERT's WordPiece vocabulary is roughly frequency-ordered);
   frequent tokens ("the", "##s") count little.
4. Rows are quantized to int8 with one f32 scale per row.

A text's embedding is then the mean of its word pieces' rows (no special tokens), L2
normalized — see `engram_embed::StaticEmbedder`. It ignores word order; the CoSQA figures
in docs/embeddings.md ("Edge model") say what that costs.

File layout (little-endian): b"EGST", u32 version (1), u32 vocab, u32 dims,
vocab x f32 row scales, vocab x dims int8.

Usage: python3 scripts/distill-static.py MODEL_DIR OUT_FILE   (MODEL_DIR holds
model.safetensors and tokenizer.json; its run time is in docs/npm-package.md)
"""

import json
import math
import struct
import sys
from pathlib import Path

import numpy as np

DIMS = 256
SIF_A = 1e-4
BATCH = 2048


def load_safetensors(path: Path) -> dict:
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(data[base + start : base + end], dtype="<f4").reshape(info["shape"])
    return out


def erf(x):
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), vectorized; NumPy has no erf.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def bert_batch(w: dict, ids: np.ndarray, heads: int = 12, layers: int = 6) -> np.ndarray:
    """Hidden states for a batch of equal-length sequences: (B, n) -> (B, n, 384)."""
    b, n = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    hidden = x.shape[-1]
    dh = hidden // heads

    def linear(t, name):
        # As one (B·n, d) product: NumPy runs a 3-D @ 2-D product as B small ones.
        flat = t.reshape(-1, t.shape[-1]) @ w[f"{name}.weight"].T + w[f"{name}.bias"]
        return flat.reshape(*t.shape[:-1], -1)

    for i in range(layers):
        p = f"encoder.layer.{i}"
        split = lambda t: t.reshape(b, n, heads, dh).transpose(0, 2, 1, 3)  # noqa: E731
        q = split(linear(x, f"{p}.attention.self.query"))
        k = split(linear(x, f"{p}.attention.self.key"))
        v = split(linear(x, f"{p}.attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
        scores -= scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, n, hidden)
        x = layer_norm(linear(ctx, f"{p}.attention.output.dense") + x, w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"])
        inter = linear(x, f"{p}.intermediate.dense")
        inter = 0.5 * inter * (1.0 + erf(inter / math.sqrt(2.0)))  # float32 throughout
        x = layer_norm(linear(inter, f"{p}.output.dense") + x, w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"])
    return x


def main():
    model_dir, out_path = Path(sys.argv[1]), Path(sys.argv[2])
    weights = load_safetensors(model_dir / "model.safetensors")
    vocab = json.loads((model_dir / "tokenizer.json").read_text())["model"]["vocab"]
    size = len(vocab)
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    token_vectors = np.zeros((size, 384), dtype=np.float32)
    for start in range(0, size, BATCH):
        ids = np.arange(start, min(start + BATCH, size))
        seq = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        token_vectors[ids] = bert_batch(weights, seq).mean(1)
        print(f"\rdistilling: {min(start + BATCH, size)}/{size} tokens", end="", file=sys.stderr)
    print(file=sys.stderr)
    centered = token_vectors - token_vectors.mean(0)
    _, _, components = np.linalg.svd(centered.astype(np.float64), full_matrices=False)
    reduced = centered @ components[:DIMS].T.astype(np.float32)
    ranks = np.arange(1, size + 1, dtype=np.float64)
    p = (1.0 / ranks) / (1.0 / ranks).sum()
    reduced *= (SIF_A / (SIF_A + p)).astype(np.float32)[:, None]
    scales = np.abs(reduced).max(1) / 127.0
    scales[scales == 0] = 1.0
    quantized = np.clip(np.round(reduced / scales[:, None]), -127, 127).astype(np.int8)
    with open(out_path, "wb") as f:
        f.write(b"EGST")
        f.write(struct.pack("<III", 1, size, DIMS))
        f.write(scales.astype("<f4").tobytes())
        f.write(quantized.tobytes())
    print(f"static model: {size} tokens x {DIMS} dims -> {out_path} ({out_path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
