"""A few papers added to a large library, then removed: how long each change takes, the
writing process's peak memory, and a fresh serving process's start and search right
after it, each step in a child process.

    python -m benchmarks.small_change DATA_DIR [--papers 3]

DATA_DIR is a store built by `benchmarks.million` (its `data` folder, e.g.
`~/.cache/assistant/bench/million-100000/data`). The store ends as it began: the papers
added are removed again. Before it changes anything the lexical index is made current
(on a store whose index predates the change digests, that step is a full rebuild,
reported as `prepare`), so the figures are those of a change to a library that is up to
date. Prints one JSON object per step.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.run import peak_mb

WORDS = ("urchin", "kelp", "holdfast", "sporophyte", "otter")


def _settings(data: Path) -> object:
    from assistant.config import Settings

    return Settings(data_dir=data, corpus=[], auto_ingest=False, backend="extractive")


def _papers(n: int) -> list[dict[str, str]]:
    return [
        {
            "id": f"small-change-{i}",
            "title": f"Sea urchin grazing in a {WORDS[i % len(WORDS)]} forest, site {i}",
            "abstract": (
                f"We count sea urchins at site {i} and find that holdfast damage by urchins "
                f"predicts kelp sporophyte loss; otters reverse it within {i + 2} seasons."
            ),
        }
        for i in range(n)
    ]


def step(name: str, data: Path, n: int) -> dict[str, object]:
    """One step, in this (child) process."""
    from assistant.config import Settings
    from assistant.corpus.ingest import ingest, save_lexical
    from assistant.corpus.removal import remove
    from assistant.corpus.strong_index import index_embedder
    from assistant.index import lexical
    from assistant.index.snapshot import Snapshot
    from assistant.index.store import VectorStore

    settings = _settings(data)
    started = time.perf_counter()
    out: dict[str, object] = {"step": name}
    if name == "prepare":
        save_lexical(settings, Snapshot(settings.snapshot_dir))  # type: ignore[arg-type,attr-defined]
    elif name == "add":
        corpus = data.parent / "small-change.jsonl"
        corpus.write_text("".join(json.dumps(p) + "\n" for p in _papers(n)))
        report = ingest([corpus], VectorStore(settings), index_embedder(Settings()), settings)  # type: ignore[arg-type]
        out["added"] = report.added
    elif name == "remove":
        report = remove(VectorStore(settings), settings, ids=[p["id"] for p in _papers(n)])  # type: ignore[arg-type,assignment]
        out["removed"] = len(report.removed)
    elif name == "serve":
        from assistant.api import Assistant

        bot = Assistant(settings)  # type: ignore[arg-type]
        result = bot.search("sea urchins damage the holdfast of kelp sporophytes", k=10, detect=False)
        out["cold_start_s"] = round(time.perf_counter() - started, 2)
        titles = [h.paper.title or "" for h in result.hits]
        out["new_papers_in_top_10"] = sum(t.startswith("Sea urchin grazing") for t in titles)
        out["papers"] = len(bot.live.retriever().catalogue)
    out["seconds"] = round(time.perf_counter() - started, 1)
    out["peak_mb"] = round(peak_mb())
    delta = getattr(lexical, "DELTA", None)  # None: code from before the change was kept beside
    out["change_kept_beside_the_index"] = bool(delta) and (settings.lexical_dir / delta).exists()  # type: ignore[attr-defined]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--papers", type=int, default=3)
    parser.add_argument("--step", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.step:
        print(json.dumps(step(args.step, args.data_dir, args.papers)))
        return 0
    for name in ("prepare", "add", "serve", "remove", "serve"):
        cmd = [sys.executable, "-m", "benchmarks.small_change", str(args.data_dir)]
        cmd += ["--papers", str(args.papers), "--step", name]
        done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
        print(done.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
