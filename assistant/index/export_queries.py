"""Export the bundled embedders' question encoders to ONNX (`make install` runs this).

    python -m assistant.index.export_queries all-minilm-l6-v2 embeddinggemma-300m

Each export is made from the installed, verified weights (nothing is downloaded), checked
against torch, and kept in `<models dir>/onnx/NAME`; an export that is already current is
left alone. Each is then checked under OpenVINO, which embeds abstracts and questions with
it (`openvino_documents`), unless it already was under this OpenVINO version. An embedder
that cannot be exported keeps embedding questions (or abstracts) with torch: the failure
is reported and the command still succeeds (`--strict` makes it fail).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from assistant.config import BUNDLED_EMBEDDER, Settings
from assistant.errors import ConfigError
from assistant.index.embed import PROFILES
from assistant.index.onnx_queries import QueryExport, build, export_for
from assistant.index.openvino_documents import verified, verify
from assistant.model_files import embedder_path, models_dir


def ensure(name: str) -> QueryExport:
    """The current export of the bundled embedder `name`, made if missing or stale, and
    checked under OpenVINO if it was not (a failed check leaves abstracts on torch and
    questions on onnxruntime)."""
    if name not in PROFILES:
        raise ConfigError(f"unknown embedder {name!r}; choose one of: {', '.join(PROFILES)}")
    folder: Path = Settings.bundled_embedder_path() if name == BUNDLED_EMBEDDER else embedder_path(name)
    export = export_for(folder, name, models_dir())
    cap = PROFILES[name].max_tokens
    if verified(export, cap):
        return export
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    if not export.current(cap):
        build(model, export, cap)
    try:
        verify(model, export, cap)
    except Exception as exc:  # questions still go through onnxruntime
        print(f"{name}: not checked under OpenVINO: {exc}", file=sys.stderr)
    return export


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", help=f"embedders: {', '.join(PROFILES)}")
    parser.add_argument("--strict", action="store_true", help="fail when an export fails")
    args = parser.parse_args(argv)
    failed = 0
    for name in args.names:
        started = time.perf_counter()
        try:
            export = ensure(name)
        except Exception as exc:  # any failure leaves questions on torch
            failed += 1
            print(f"{name}: not exported, questions stay on torch: {exc}", file=sys.stderr)
            continue
        print(f"{name}: {export.onnx} ({time.perf_counter() - started:.0f} s)")
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
