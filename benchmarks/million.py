"""A million abstracts on one machine: the store built through `ingest` (precomputed
vectors), then served from fresh processes, each part in a child so that no figure counts
what another part holds.

    python -m benchmarks.million --n 1000000     # about an hour here (ingest 49 min); kept, resumable
    python -m benchmarks.million --n 20000       # a quick run of the same steps
    python -m benchmarks.million --n 200000 --batch 1000   # 200 batches: compactions as at 1M

The papers are `benchmarks.synth` records (realistic metadata: venues, years, topics,
1–6 authors each); the vectors are mixtures of real SciFact embeddings
(`synth.mixed_vectors`), written once to a `.npy` file the ingesting process reads
memory-mapped, so it never holds them all. Everything goes to `--dir` (default
`~/.cache/assistant/bench/million-N`) and is kept: run it again and it resumes the
ingestion where it stopped (the normal `ingest` resume), then measures again.

Prints one table: ingest rate and the ingesting process's peak memory, on-disk size,
then from a fresh serving process cold start, resident memory after start and after the
questions, `search` p50/p95 unfiltered and under three filters; and, from another fresh
process, Chroma's HNSW query time and its recall@10 against the exact scan. Writes
benchmarks/results/million-N.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.run import CACHE, RESULTS, peak_mb
from benchmarks.synth import mixed_vectors, write_corpus

_NUMBER = re.compile(r"Paper (\d+):")
CHUNK = 100_000  # vectors are made and written this many at a time


class Indexed:
    """An embedder that returns the precomputed vector of a synthetic abstract, found by
    the number its text starts with ("Paper 12:"); questions go to the real embedder."""

    def __init__(self, vectors: np.ndarray, real: object) -> None:
        self.vectors, self.real = vectors, real
        self.profile = real.profile  # type: ignore[attr-defined]

    def load(self) -> None:  # nothing to load: the vectors are precomputed
        pass

    def encode(self, texts: list[str]) -> np.ndarray:
        rows = [int(m.group(1)) if (m := _NUMBER.match(t)) else -1 for t in texts]
        if min(rows) < 0:
            raise ValueError("not a synthetic abstract: no 'Paper N:' at its start")
        return np.asarray(self.vectors[rows], dtype=np.float32)

    def encode_documents(self, papers: list) -> np.ndarray:
        return self.encode([p.abstract for p in papers])

    def encode_one(self, text: str) -> np.ndarray:
        return self.real.encode_one(text)  # type: ignore[attr-defined,no-any-return]

    def encode_query(self, text: str) -> np.ndarray:
        return self.real.encode_query(text)  # type: ignore[attr-defined,no-any-return]


def prepare(folder: Path, n: int) -> tuple[Path, Path]:
    """The corpus (JSON lines) and its vectors, made once."""
    from assistant.config import Settings
    from assistant.corpus.strong_index import index_embedder
    from benchmarks.run import scifact_vectors

    folder.mkdir(parents=True, exist_ok=True)
    corpus, vectors = folder / "corpus.jsonl", folder / "vectors.npy"
    if not corpus.exists():
        write_corpus(corpus.with_suffix(".partial"), n).rename(corpus)
    if not vectors.exists():
        _, base = scifact_vectors(index_embedder(Settings()))
        partial = vectors.with_suffix(".partial.npy")
        out = np.lib.format.open_memmap(partial, mode="w+", dtype=np.float32, shape=(n, base.shape[1]))
        for start in range(0, n, CHUNK):
            stop = min(n, start + CHUNK)
            out[start:stop] = mixed_vectors(base, stop - start, seed=start)
        out.flush()
        del out
        partial.rename(vectors)
    return corpus, vectors


def settings_for(data: Path, batch: int = 5000) -> object:
    from assistant.config import Settings

    return Settings(data_dir=data, corpus=[], auto_ingest=False, store_batch_size=batch, backend="extractive")


def ingest_child(folder: Path, batch: int = 5000) -> dict[str, object]:
    """Runs in a child: ingest the corpus (resuming), report rate and peak memory."""
    from assistant.config import Settings
    from assistant.corpus.ingest import ingest
    from assistant.corpus.strong_index import index_embedder
    from assistant.index.store import VectorStore

    settings = settings_for(folder / "data", batch)
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    embedder = Indexed(vectors, index_embedder(Settings()))
    store = VectorStore(settings)  # type: ignore[arg-type]
    report = ingest([folder / "corpus.jsonl"], store, embedder, settings, progress=True)  # type: ignore[arg-type]
    return {
        "added": report.added,
        "skipped": report.skipped,
        "seconds": round(report.seconds, 1),
        "rate": round(report.added / report.seconds, 1) if report.seconds else 0.0,
        "peak_mb": round(peak_mb()),
    }


def hnsw_child(folder: Path, n_questions: int) -> dict[str, object]:
    """Runs in a child: Chroma's HNSW query against the exact scan of the same vectors."""
    from assistant.config import Settings
    from assistant.corpus.strong_index import index_embedder
    from assistant.index.store import VectorStore
    from eval.metrics import percentile
    from eval.questions import SCIFACT

    lines = (SCIFACT / "queries_test.jsonl").read_text().splitlines()[:n_questions]
    embedder = index_embedder(Settings())
    questions = np.stack([embedder.encode_query(json.loads(line)["text"]) for line in lines])
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    t0 = time.perf_counter()
    exact = []
    for start in range(0, len(vectors), CHUNK):  # the scan, a chunk at a time
        part = np.asarray(vectors[start : start + CHUNK]) @ questions.T
        exact.append(part)
    scores = np.concatenate(exact)
    scan_s = (time.perf_counter() - t0) / len(questions)
    truth = [set(np.argsort(-scores[:, q])[:10].tolist()) for q in range(len(questions))]
    del scores, exact
    settings = settings_for(folder / "data")
    store = VectorStore(settings)  # type: ignore[arg-type]
    times, recall = [], []
    t0 = time.perf_counter()
    with store.session() as session:
        col = session.collection
        opened = time.perf_counter() - t0
        col.query(query_embeddings=[questions[0].tolist()], n_results=10)  # loads the index
        loaded = time.perf_counter() - t0
        for q, want in zip(questions, truth, strict=True):
            t = time.perf_counter()
            got = col.query(query_embeddings=[q.tolist()], n_results=10, include=["documents"])
            times.append(time.perf_counter() - t)
            rows = {int(m.group(1)) for d in got["documents"][0] if (m := _NUMBER.match(d or ""))}
            recall.append(len(rows & want) / 10)
    return {
        "exact_scan_ms_per_question": round(scan_s * 1000, 1),
        "chroma_open_s": round(opened, 1),
        "hnsw_first_query_s": round(loaded, 1),
        "hnsw_p50_ms": round(percentile(times, 0.5) * 1000, 1),
        "hnsw_p95_ms": round(percentile(times, 0.95) * 1000, 1),
        "hnsw_recall_at_10": round(float(np.mean(recall)), 3),
        "peak_mb": round(peak_mb()),
    }


def child(part: str, folder: Path, n_questions: int, batch: int = 5000) -> dict[str, object]:
    cmd = [sys.executable, "-m", "benchmarks.million", "--child", part, "--dir", str(folder)]
    cmd += ["--questions", str(n_questions), "--batch", str(batch)]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def du_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument(
        "--batch",
        type=int,
        default=5000,
        help="papers per store batch (1000 at 200k: as many compactions as at 1M)",
    )
    parser.add_argument("--child", choices=["ingest", "hnsw"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    folder = args.dir or CACHE / f"million-{args.n}"
    if args.child:
        result = (
            ingest_child(folder, args.batch) if args.child == "ingest" else hnsw_child(folder, args.questions)
        )
        print(json.dumps(result), flush=True)
        return 0
    from benchmarks import serving

    started = time.perf_counter()
    t0 = time.perf_counter()
    prepare(folder, args.n)
    made = time.perf_counter() - t0
    print(f"corpus and vectors ready in {made:.0f} s ({folder})", flush=True)
    ingested = child("ingest", folder, args.questions, args.batch)
    print(f"ingest: {ingested}", flush=True)
    size = du_mb(folder / "data")
    served = serving.in_child(folder / "data", args.questions)
    print(f"serving: {served}", flush=True)
    hnsw = child("hnsw", folder, args.questions)
    print(f"hnsw: {hnsw}", flush=True)
    lines = [
        f"# {args.n:,} synthetic abstracts (`python -m benchmarks.million --n {args.n}`, {os.cpu_count()} CPUs)",
        "",
        "| measure | value |",
        "|---|---|",
        f"| store ingest, precomputed vectors (this run: {ingested['added']:,} added, "
        f"{ingested['skipped']:,} already stored) | {ingested['rate']} papers/s, {ingested['seconds']} s |",
        f"| peak memory of the ingesting process | {ingested['peak_mb']:,} MB |",
        f"| on disk (Chroma, snapshot, lexical index) | {size:,.0f} MB |",
        f"| cold start, fresh process → first search | {served['cold_start_s']} s |",
        f"| resident memory after start / after {served['questions']} questions | "
        f"{served['rss_after_start_mb']:,} / {served['rss_after_questions_mb']:,} MB |",
        f"| `search` p50 / p95, unfiltered | {served['search_p50_ms']} / {served['search_p95_ms']} ms |",
    ]
    for name in ("author", "venue+year", "topic"):
        if f"{name}_p50_ms" in served:
            lines.append(
                f"| filtered by {name} ({served[f'{name}_share']:.1%} of papers) p50 / p95 | "
                f"{served[f'{name}_p50_ms']} / {served[f'{name}_p95_ms']} ms |"
            )
    lines += [
        f"| exact dense scan, chunked from the memory-mapped vectors (all questions at once), per question | "
        f"{hnsw['exact_scan_ms_per_question']} ms |",
        f"| Chroma HNSW: open / first query (loads the index) | {hnsw['chroma_open_s']} / "
        f"{hnsw['hnsw_first_query_s']} s (peak {hnsw['peak_mb']:,} MB) |",
        f"| Chroma HNSW query p50 / p95; recall@10 against the exact scan | {hnsw['hnsw_p50_ms']} / "
        f"{hnsw['hnsw_p95_ms']} ms; {hnsw['hnsw_recall_at_10']} |",
        "",
        f"Total: {time.perf_counter() - started:.0f} s (making the corpus and vectors: {made:.0f} s)",
    ]
    print("\n".join(lines))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"million-{args.n}.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
