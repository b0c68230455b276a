"""Encoder back-ends for each bundled embedder, in one run: sentence-transformers in torch
fp32 (what the assistant uses), the same network exported to ONNX (fp32), and that export
quantised to int8 by onnxruntime (`quantize_dynamic`, per-channel, MatMul only). For each:
abstracts/s on the same 200 SciFact abstracts and cosine agreement with torch fp32.

    pip install onnx onnxscript          # the exporter's needs (not the assistant's)
    python -m benchmarks.encoders [--n 200]

MiniLM is exported with torch's TorchScript exporter, EmbeddingGemma with the dynamo
exporter (the TorchScript one fails on Gemma 3's attention-mask code). The exports are
written to a temporary folder and deleted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from assistant.config import Settings
from assistant.index.embed import PROFILES
from assistant.model_files import embedder_path
from benchmarks.run import say
from eval.questions import SCIFACT


def export(model, path: Path, dynamo: bool) -> None:  # type: ignore[no-untyped-def]
    import torch

    class Hidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    sample = model.tokenizer(["a sentence to trace", "another one"], return_tensors="pt", padding=True)
    axes = {"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"}, "hidden": {0: "b", 1: "s"}}
    torch.onnx.export(
        Hidden(model[0].auto_model.eval()),
        (sample["input_ids"], sample["attention_mask"]),
        str(path),
        input_names=["input_ids", "attention_mask"],
        output_names=["hidden"],
        dynamic_axes=axes,
        opset_version=18 if dynamo else 17,
        dynamo=dynamo,
    )


def onnx_encode(model, session, texts: list[str], prompt: str, cap: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Tokenise as sentence-transformers does, run the exported network, then the model's own
    pooling / dense / normalise modules; longest texts first (less padding)."""
    import torch

    order = np.argsort([-len(t) for t in texts])
    out = []
    for start in range(0, len(texts), 16):
        batch = [prompt + texts[i] for i in order[start : start + 16]]
        tok = model.tokenizer(batch, padding=True, truncation=True, max_length=cap, return_tensors="np")
        feeds = {k: tok[k].astype(np.int64) for k in ("input_ids", "attention_mask")}
        hidden = session.run(None, feeds)[0]
        mask = tok["attention_mask"][..., None].astype(np.float32)
        features = {"sentence_embedding": torch.from_numpy((hidden * mask).sum(1) / mask.sum(1))}
        with torch.no_grad():
            for module in list(model)[2:]:
                features = module(features)
        vectors = features["sentence_embedding"].numpy()
        out.append(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    ordered = np.concatenate(out)
    result = np.empty_like(ordered)
    result[order] = ordered
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="SciFact abstracts to encode")
    args = parser.parse_args(argv)
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(2)
    texts = [json.loads(line)["text"] for line in (SCIFACT / "corpus.jsonl").open()][: args.n]
    models = {
        "all-minilm-l6-v2": (Settings.bundled_embedder_path(), False),
        "embeddinggemma-300m": (embedder_path("embeddinggemma-300m"), True),
    }
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    say(f"## Encoder back-ends ({args.n} SciFact abstracts, 2 threads)\n")
    say("| embedder | back-end | abstracts/s | × torch fp32 | cosine to fp32 mean | min |")
    say("|---|---|---|---|---|---|")
    reference_rate = None
    for name, (path, dynamo) in models.items():
        profile = PROFILES[name]
        cap = profile.max_tokens or 256
        prompt = profile.document_prompt.replace("{title}", "none")
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        model.max_seq_length = cap
        model.encode(texts[:8], prompt=prompt or None)
        t0 = time.perf_counter()
        ref = model.encode(texts, prompt=prompt or None, batch_size=16, normalize_embeddings=True)
        torch_s = time.perf_counter() - t0
        reference_rate = reference_rate or args.n / torch_s
        say(f"| {name} | torch fp32 | {args.n / torch_s:.1f} | 1.00 | 1.0000 | 1.0000 |")
        with tempfile.TemporaryDirectory() as tmp:
            fp32, int8 = Path(tmp) / "model.onnx", Path(tmp) / "model.int8.onnx"
            export(model, fp32, dynamo)
            quantize_dynamic(
                str(fp32),
                str(int8),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
            for label, file in (("onnx fp32", fp32), ("onnx int8", int8)):
                session = ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])
                onnx_encode(model, session, texts[:8], prompt, cap)
                t0 = time.perf_counter()
                vectors = onnx_encode(model, session, texts, prompt, cap)
                seconds = time.perf_counter() - t0
                cos = (vectors * ref).sum(1)
                say(
                    f"| {name} | {label} | {args.n / seconds:.1f} | {torch_s / seconds:.2f} "
                    f"| {cos.mean():.4f} | {cos.min():.4f} |"
                )
    say(f"\nReference (MiniLM, torch fp32): {reference_rate:.1f} abstracts/s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
