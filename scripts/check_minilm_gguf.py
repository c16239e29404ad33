"""Check a MiniLM GGUF served by llama-server against a numpy forward pass of the original weights.

    python scripts/check_minilm_gguf.py --url http://127.0.0.1:PORT [--model-dir DIR]

Needs numpy, gguf and tokenizers (the tier's model venv has them), not torch. For a few sentences
it compares (1) the token ids llama-server's WordPiece tokenizer produces (``/tokenize``) with the
Hugging Face tokenizer's, (2) each served embedding with the reference embedding (cosine), and
(3) the pairwise cosines. Prints the figures; exits 1 when a served vector is not the reference
one (cosine < 0.999) or tokens differ.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import urllib.request
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from minilm_to_gguf import package_model_dir, read_safetensors  # noqa: E402

SENTENCES = [
    "The printing press spread the Reformation through cheap pamphlets.",
    "Cheap printed pamphlets carried Reformation ideas across the cities.",
    "My cat sleeps on the warm windowsill every afternoon.",
    "How many pamphlets were printed in Wittenberg between 1517 and 1525?",
]
_erf = np.vectorize(math.erf)


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _layer(x: np.ndarray, t: dict[str, np.ndarray], i: int, heads: int, eps: float) -> np.ndarray:
    p = f"encoder.layer.{i}."

    def lin(name: str, v: np.ndarray) -> np.ndarray:
        return v @ t[p + name + ".weight"].T + t[p + name + ".bias"]

    n, d = x.shape
    dh = d // heads
    q, k, v = (
        lin(f"attention.self.{m}", x).reshape(n, heads, dh).transpose(1, 0, 2)
        for m in ("query", "key", "value")
    )
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    ctx = (scores / scores.sum(-1, keepdims=True)) @ v
    ctx = ctx.transpose(1, 0, 2).reshape(n, d)
    ln1 = p + "attention.output.LayerNorm."
    x = _layer_norm(x + lin("attention.output.dense", ctx), t[ln1 + "weight"], t[ln1 + "bias"], eps)
    h = lin("intermediate.dense", x)
    h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
    ln2 = p + "output.LayerNorm."
    return _layer_norm(x + lin("output.dense", h), t[ln2 + "weight"], t[ln2 + "bias"], eps)


def reference_embedding(
    ids: list[int], t: dict[str, np.ndarray], hp: dict[str, object]
) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence embedding, as sentence-transformers computes it."""
    eps = float(hp["layer_norm_eps"])  # type: ignore[arg-type]
    n = len(ids)
    x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:n]
    x = x + t["embeddings.token_type_embeddings.weight"][0]
    x = _layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], eps)
    for i in range(int(hp["num_hidden_layers"])):  # type: ignore[call-overload]
        x = _layer(x, t, i, int(hp["num_attention_heads"]), eps)  # type: ignore[call-overload]
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def _post(url: str, payload: dict[str, object]) -> dict[str, object]:
    req = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=60) as reply:
        return json.loads(reply.read())  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="llama-server base URL (no /v1)")
    parser.add_argument("--model-dir", type=Path, default=None)
    args = parser.parse_args()
    from tokenizers import Tokenizer

    model_dir = args.model_dir or package_model_dir()
    tensors = read_safetensors(model_dir / "model.safetensors")
    hp = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()  # the shipped tokenizer.json pads every input to 128 tokens
    served = _post(args.url + "/v1/embeddings", {"input": SENTENCES, "model": "minilm"})
    vectors = [np.array(d["embedding"]) for d in sorted(served["data"], key=lambda d: d["index"])]  # type: ignore[index, union-attr]
    ok = True
    refs = []
    for text, vec in zip(SENTENCES, vectors, strict=True):
        ids = tokenizer.encode(text).ids
        theirs = _post(args.url + "/tokenize", {"content": text, "add_special": True})["tokens"]
        ref = reference_embedding(ids, tensors, hp)
        refs.append(ref)
        cos = float(vec @ ref / (np.linalg.norm(vec) * np.linalg.norm(ref)))
        same = list(theirs) == ids  # type: ignore[call-overload]
        ok &= same and cos >= 0.999
        print(
            f"check_minilm_gguf: tokens {'same' if same else 'DIFFER'} ({len(ids)}), served·reference cosine {cos:.6f}: {text[:50]}"
        )
    for i, j in ((0, 1), (0, 2), (0, 3), (1, 2)):
        s = float(
            vectors[i] @ vectors[j] / (np.linalg.norm(vectors[i]) * np.linalg.norm(vectors[j]))
        )
        print(
            f"check_minilm_gguf: cosine s{i}·s{j}: served {s:.4f}, reference {float(refs[i] @ refs[j]):.4f}"
        )
    print("check_minilm_gguf: " + ("ok" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
