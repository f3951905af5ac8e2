"""Computes tests/vectors/static-embeddings.json: the edge model's vectors for the same texts
as the transformer's reference (scripts/reference/embeddings.py), computed independently of
engram — NumPy over the table written by scripts/distill-static.py and Hugging Face
`tokenizers` with the model's tokenizer.json: mean of the word pieces' dequantized rows (the
[CLS] row for a text without pieces), L2-normalized. engram must reach cosine >= 0.99.

Usage: python3 scripts/reference/static_embeddings.py STATIC_DIR OUT_JSON
"""

import hashlib
import json
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).parent))
from embeddings import TEXTS  # noqa: E402


def main():
    static_dir, out_path = Path(sys.argv[1]), Path(sys.argv[2])
    data = (static_dir / "model.bin").read_bytes()
    assert data[:4] == b"EGST"
    version, vocab, dims = struct.unpack("<III", data[4:16])
    scales = np.frombuffer(data[16 : 16 + 4 * vocab], dtype="<f4").astype(np.float64)
    table = np.frombuffer(data[16 + 4 * vocab :], dtype=np.int8).reshape(vocab, dims) * scales[:, None]
    tokenizer = Tokenizer.from_file(str(static_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    cls = tokenizer.token_to_id("[CLS]")
    records = []
    for text in TEXTS:
        ids = tokenizer.encode(text, add_special_tokens=False).ids or [cls]
        vector = table[ids].mean(0)
        vector /= np.linalg.norm(vector)
        records.append({"text": text, "pieces": len(ids), "embedding": [round(float(v), 7) for v in vector]})
    out = {
        "about": "Reference vectors of engram's static edge model (scripts/distill-static.py), computed with NumPy and HF tokenizers by scripts/reference/static_embeddings.py.",
        "model": "static-minilm-256-int8",
        "tableSha256": hashlib.sha256(data).hexdigest(),
        "dims": dims,
        "texts": records,
    }
    out_path.write_text(json.dumps(out, ensure_ascii=False, indent=0))
    print(f"{len(records)} texts, {dims} dims")


if __name__ == "__main__":
    main()
