"""A library that changes, at scale: update, sync and remove on a large store.

    python -m benchmarks.library                 # 100,000 papers, 100 changes per step
    python -m benchmarks.library --n 5000        # a quick run

The store is built through the normal ingestion path with stand-in vectors (a hash of
the text: embedding 100k abstracts on a CPU takes hours, and no step here embeds more
than the changed abstracts); queries use the real bundled embedder. Each step is timed
against the no-op re-ingestion of the same file, measured in the same run, and prints
the process's peak memory. The last part measures how long a second, serving view of
the store keeps returning a paper after another writer removed it (it looks again every
`refresh_s`), like the live-ingest figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from assistant import Assistant
from assistant.config import Settings
from assistant.corpus.ingest import ingest
from assistant.corpus.removal import remove
from assistant.index.embed import Embedder
from assistant.index.store import VectorStore
from assistant.text import paper_id
from benchmarks.synth import write_corpus


class HashVectors:
    """Stand-in document vectors: a unit vector seeded by the text (benchmarks only)."""

    def __init__(self, real: Embedder, dim: int = 384) -> None:
        self.real, self.dim, self.profile = real, dim, real.profile

    def load(self) -> None:  # nothing to load
        pass

    def encode_documents(self, papers: list) -> np.ndarray:  # type: ignore[type-arg]
        out = np.empty((len(papers), self.dim), dtype=np.float32)
        for i, p in enumerate(papers):
            seed = int.from_bytes(hashlib.blake2b(p.abstract.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out

    def encode_query(self, text: str) -> np.ndarray:
        return self.real.encode_query(text)

    def encode_one(self, text: str) -> np.ndarray:
        return self.real.encode_one(text)

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.real.encode(texts)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rewrite(path: Path, change: dict[int, str | None]) -> None:
    """Line i gets a new abstract (a string) or is deleted (None)."""
    lines = path.read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        if i in change:
            if change[i] is None:
                continue
            record = json.loads(line)
            record["abstract"] = f"{record['abstract']} {change[i]}"
            line = json.dumps(record)
        out.append(line)
    path.write_text("\n".join(out) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="papers in the store")
    parser.add_argument("--changes", type=int, default=100, help="records changed per step")
    parser.add_argument("--trials", type=int, default=5, help="removals timed in the serving view")
    args = parser.parse_args(argv)
    n, m = args.n, args.changes
    print(
        f"# Library changes on {n:,} papers, {m} per step (`python -m benchmarks.library {' '.join(argv or sys.argv[1:])}`)\n"
    )
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        library = write_corpus(tmp / "library.jsonl", n)
        side = write_corpus(tmp / "side.jsonl", m, seed=1, start=n)
        settings = Settings(
            data_dir=tmp / "data",
            corpus=[],
            auto_ingest=False,
            store_batch_size=5000,
            backend="extractive",
            embedder="all-minilm-l6-v2",
            refresh_s=1.0,
        )
        store = VectorStore(settings)
        real = Embedder(settings.resolved_embedder_path(), 64, 0)
        vectors = HashVectors(real)
        rows: list[tuple[str, float, str]] = []

        def step(label: str, fn, check) -> None:  # type: ignore[no-untyped-def]
            t0 = time.perf_counter()
            result = fn()
            seconds = time.perf_counter() - t0
            rows.append((label, seconds, check(result)))
            print(f"{label}: {seconds:.1f} s, peak memory {peak_mb():,.0f} MB — {check(result)}", flush=True)

        step(
            "initial ingestion",
            lambda: ingest([library, side], store, vectors, settings),  # type: ignore[arg-type]
            lambda r: f"{r.added:,} added",
        )
        step(
            "re-ingest, unchanged (baseline)",
            lambda: ingest([library], store, vectors, settings),  # type: ignore[arg-type]
            lambda r: f"{r.added} added, {r.skipped:,} already stored",
        )
        rewrite(library, {i: f"Revised result {i}." for i in range(m)})
        step(
            f"re-ingest, {m} abstracts edited",
            lambda: ingest([library], store, vectors, settings),  # type: ignore[arg-type]
            lambda r: f"{r.updated} updated, {r.added} added",
        )
        rewrite(library, dict.fromkeys(range(m, 2 * m)))
        step(
            f"ingest --sync, {m} records deleted from the file",
            lambda: ingest([library], store, vectors, settings, sync=True),  # type: ignore[arg-type]
            lambda r: f"{r.removed} removed",
        )
        step(
            f"remove a file of {m} papers",
            lambda: remove(store, settings, paths=[side]),
            lambda r: f"{len(r.removed)} removed",
        )
        step(
            f"remove --id x {m}",
            lambda: remove(store, settings, ids=[f"syn-{i}" for i in range(3 * m, 4 * m)]),
            lambda r: f"{len(r.removed)} removed",
        )
        # A serving view (another Assistant, as the app holds one) and a writer.
        t0 = time.perf_counter()
        watcher = Assistant(settings)
        watcher._embedder = vectors  # type: ignore[assignment]
        watcher.search("warm up", k=1)
        print(f"serving view opened in {time.perf_counter() - t0:.1f} s")
        records = [json.loads(line) for line in library.read_text().splitlines()[5 * m : 5 * m + args.trials]]
        waits = []
        for record in records:
            query = record["abstract"][:300]
            pid = paper_id(record["abstract"])
            assert pid in watcher.catalogue.index
            remove(store, settings, ids=[record["id"]])
            t0 = time.perf_counter()
            while pid in watcher.catalogue.index:  # what the view searches (it looks again every refresh_s)
                watcher.search(query, k=10)
                time.sleep(0.05)
            waits.append(time.perf_counter() - t0)
            assert all(h.paper.id != pid for h in watcher.search(query, k=10))
        print(
            f"serving view drops a removed paper after: median {statistics.median(waits):.1f} s "
            f"(max {max(waits):.1f} s, refresh_s={settings.refresh_s}); peak memory {peak_mb():,.0f} MB"
        )
        base = rows[1][1]
        print("\n| step | seconds | × the no-op re-ingest | result |\n|---|---|---|---|")
        for label, seconds, what in rows:
            print(f"| {label} | {seconds:.1f} | {seconds / base:.2f} | {what} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
