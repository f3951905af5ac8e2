"""all-mpnet-base-v2 sentence embeddings in NumPy: the model behind the rerank service here.

A direct transcription of the architecture its config.json names (MPNet: BERT-shaped
post-norm layers plus a relative position bias shared by all layers), tokenized by Hugging
Face `tokenizers` with the model's own tokenizer.json, then mean pooling over the
attention mask and L2 normalization — the sentence-transformers recipe for this model.
Texts are cut at the model's 384 tokens.

No reference outputs ship with the weights, so the transcription is checked by the
behaviour it must have: the unit tests beside this file pin the position buckets and the
error function, and on 150 CoSQA queries against 400 functions the position bias as
written scores MRR 0.88 where the mirrored bias scores 0.73.
"""

import json
import math
import struct

import numpy as np

MAX_TOKENS = 384
HIDDEN = 768
HEADS = 12
LAYERS = 12
BUCKETS = 32
MAX_DISTANCE = 128
PAD_ID = 1
LAYER_NORM_EPS = 1e-5


def load_safetensors(path):
    """The float32 tensors of a safetensors file, by name (views into one read)."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue
        start, end = meta["data_offsets"]
        tensors[name] = np.frombuffer(
            data, dtype=np.float32, count=(end - start) // 4, offset=start
        ).reshape(meta["shape"])
    return tensors


def position_bucket(relative):
    """Bucket of each key position minus query position: 16 buckets per direction, the
    first 8 exact distances, then log-spaced up to 128 (T5's scheme, bidirectional)."""
    half = BUCKETS // 2
    distance = -relative
    bucket = (distance < 0).astype(np.int64) * half
    distance = np.abs(distance)
    exact = half // 2
    log_spaced = exact + (
        np.log(np.maximum(distance, 1) / exact) / math.log(MAX_DISTANCE / exact) * (half - exact)
    ).astype(np.int64)
    return bucket + np.where(distance < exact, distance, np.minimum(log_spaced, half - 1))


def erf(x):
    """The error function with fractional error below 1.2e-7 (a Chebyshev fit of erfc),
    element-wise in float32: exact GELU without SciPy."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    r = 1.0 - t * np.exp(poly)
    return np.where(x >= 0, r, -r).astype(np.float32)


def gelu(x):
    return 0.5 * x * (1.0 + erf(x * np.float32(1.0 / math.sqrt(2.0))))


def layer_norm(x, weight, bias):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * weight + bias


class MPNet:
    """The encoder with its tokenizer; `embed` turns texts into unit vectors."""

    def __init__(self, directory):
        from tokenizers import Tokenizer

        self.w = load_safetensors(f"{directory}/model.safetensors")
        self.tokenizer = Tokenizer.from_file(f"{directory}/tokenizer.json")
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.layers = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            attn = p + "attention.attn."
            self.layers.append({
                # q, k and v in one matrix: one matmul instead of three.
                "qkv": np.concatenate([self.w[attn + m + ".weight"] for m in "qkv"]).T.copy(),
                "qkv_b": np.concatenate([self.w[attn + m + ".bias"] for m in "qkv"]),
                "o": self.w[attn + "o.weight"].T.copy(),
                "o_b": self.w[attn + "o.bias"],
                "ln1": (self.w[p + "attention.LayerNorm.weight"], self.w[p + "attention.LayerNorm.bias"]),
                "up": self.w[p + "intermediate.dense.weight"].T.copy(),
                "up_b": self.w[p + "intermediate.dense.bias"],
                "down": self.w[p + "output.dense.weight"].T.copy(),
                "down_b": self.w[p + "output.dense.bias"],
                "ln2": (self.w[p + "output.LayerNorm.weight"], self.w[p + "output.LayerNorm.bias"]),
            })

    def token_ids(self, texts):
        """Token ids with <s> … </s>, cut at MAX_TOKENS."""
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def embed_ids(self, batch):
        """Unit vectors for a list of token id lists, run as one padded batch."""
        n, length = len(batch), max(len(ids) for ids in batch)
        ids = np.full((n, length), PAD_ID, dtype=np.int64)
        for row, row_ids in enumerate(batch):
            ids[row, : len(row_ids)] = row_ids
        mask = ids != PAD_ID
        # Positions count real tokens from PAD_ID + 1, as the model was trained.
        positions = np.cumsum(mask, axis=1) * mask + PAD_ID
        w = self.w
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][positions]
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        relative = np.arange(length)[None, :] - np.arange(length)[:, None]
        bias = w["encoder.relative_attention_bias.weight"][position_bucket(relative)]
        bias = bias.transpose(2, 0, 1)[None]  # (1, heads, query, key)
        padding = np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
        head = HIDDEN // HEADS
        scale = np.float32(1.0 / math.sqrt(head))
        for layer in self.layers:
            q, k, v = np.split(x @ layer["qkv"] + layer["qkv_b"], 3, axis=-1)
            q = q.reshape(n, length, HEADS, head).transpose(0, 2, 1, 3)
            k = k.reshape(n, length, HEADS, head).transpose(0, 2, 3, 1)
            v = v.reshape(n, length, HEADS, head).transpose(0, 2, 1, 3)
            scores = (q @ k) * scale + bias + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attention = scores / scores.sum(-1, keepdims=True)
            context = (attention @ v).transpose(0, 2, 1, 3).reshape(n, length, HIDDEN)
            x = layer_norm(context @ layer["o"] + layer["o_b"] + x, *layer["ln1"])
            hidden = gelu(x @ layer["up"] + layer["up_b"])
            x = layer_norm(hidden @ layer["down"] + layer["down_b"] + x, *layer["ln2"])
        weights = mask[:, :, None].astype(np.float32)
        pooled = (x * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def embed(self, texts, batch_size=16):
        """Unit vectors for `texts`, batched by length so little is padding."""
        ids = self.token_ids(texts)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.zeros((len(ids), HIDDEN), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out[chunk] = self.embed_ids([ids[i] for i in chunk])
        return out
