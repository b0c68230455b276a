"""`make bench`: speed and scale, each figure against a baseline measured in the same run.

    python -m benchmarks.run                    # 87 seeds, 5,183 SciFact, 100,000 synthetic
    python -m benchmarks.run --sizes 87,5183    # skip the 100k part (about 6 minutes)

Embedding 100k abstracts on a CPU takes hours, so the 100k store is built through the
normal ingestion path with precomputed vectors (mixtures of real SciFact embeddings);
the encoder is measured on a sample. Prints a table per part and writes
benchmarks/results/bench.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from assistant import Assistant
from assistant.config import DEFAULT_SEEDS, Settings
from assistant.corpus.ingest import ingest
from assistant.corpus.readers import load_papers
from assistant.corpus.strong_index import index_embedder
from assistant.index.embed import Embedder
from assistant.index.store import VectorStore
from benchmarks import serving
from benchmarks.servers import start_chroma, stop
from benchmarks.synth import mixed_vectors, record
from eval.metrics import percentile
from eval.questions import SCIFACT

RESULTS = Path(__file__).resolve().parent / "results"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "assistant" / "bench"
LINES: list[str] = []


def say(line: str = "") -> None:
    print(line, flush=True)
    LINES.append(line)


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Lookup:
    """An embedder that returns precomputed vectors for known texts (benchmarks only)."""

    def __init__(self, table: dict[str, np.ndarray], real: Embedder) -> None:
        self.table, self.real = table, real
        self.profile = real.profile

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts])

    def load(self) -> None:  # nothing to load: the vectors are precomputed
        pass

    def encode_documents(self, papers: list) -> np.ndarray:
        return self.encode([p.abstract for p in papers])

    def encode_one(self, text: str) -> np.ndarray:
        return self.real.encode_one(text)

    def encode_query(self, text: str) -> np.ndarray:
        return self.real.encode_query(text)


def scifact_vectors(embedder: Embedder, first: int = 0) -> tuple[list, np.ndarray]:
    """SciFact's 5,183 abstracts embedded as the index would (document prompt, token cap),
    cached; a long run saves its progress every 256 abstracts and resumes from there.
    `first`: only the first `first` abstracts plus every abstract relevant to a train or
    test claim (a subset for embedders too slow for the whole corpus on 2 cores)."""
    papers, _ = load_papers([SCIFACT / "corpus.jsonl"])
    CACHE.mkdir(parents=True, exist_ok=True)
    profile = embedder.profile
    route = embedder.document_route  # torch and OpenVINO vectors are cached apart
    key = f"{profile.document_prompt}|{profile.max_tokens}" + ("" if route == "torch" else f"|{route}")
    tag = hashlib.sha256(key.encode()).hexdigest()[:8]
    full = CACHE / f"scifact-{len(papers)}-{embedder.name}-{tag}.npy"
    partial = full.with_suffix(".partial.npy")
    if first:
        relevant: set[str] = set()
        for split in ("train", "test"):
            with (SCIFACT / "qrels" / f"{split}.tsv").open() as f:
                relevant |= {line.split("\t")[1] for line in f.read().splitlines()[1:] if line.strip()}
        rest = [p for p in papers[first:] if p.external_id in relevant]
        path = CACHE / f"scifact-first{first}-{embedder.name}-{tag}.npy"
        if path.exists():
            return papers[:first] + rest, np.load(path)
        if full.exists():
            head = np.load(full)[:first]
        elif partial.exists() and len(np.load(partial)) >= first:
            head = np.load(partial)[:first]
        else:
            head = embedder.encode_documents(papers[:first])
        say(f"(embedding {len(rest)} relevant SciFact abstracts beyond the first {first}; cached in {path})")
        vectors = np.concatenate([head, embedder.encode_documents(rest)])
        np.save(path, vectors)
        return papers[:first] + rest, vectors
    if full.exists():
        return papers, np.load(full)
    done = np.load(partial) if partial.exists() else np.zeros((0, embedder.dim), dtype=np.float32)
    say(f"(embedding {len(papers) - len(done)} SciFact abstracts once; cached in {full})")
    for start in range(len(done), len(papers), 256):
        done = np.concatenate([done, embedder.encode_documents(papers[start : start + 256])])
        np.save(partial, done)
    np.save(full, done)
    partial.unlink(missing_ok=True)
    return papers, done


def encoder_part(tmp: Path, embedder: Embedder, texts: list[str]) -> None:
    say("## Ingestion against the raw encoder (same 256 SciFact abstracts)")
    embedder.encode(texts[:16])  # warm up
    raw = timed(lambda: embedder.encode(texts), 1)[0]
    corpus = tmp / "sample.jsonl"
    corpus.write_text("".join(json.dumps({"abstract": t}) + "\n" for t in texts))
    settings = Settings(data_dir=tmp / "enc", corpus=[], auto_ingest=False)
    store = VectorStore(settings)
    first = ingest([corpus], store, embedder, settings)
    again = ingest([corpus], store, embedder, settings)
    say("| | seconds | abstracts/s | ratio |")
    say("|---|---|---|---|")
    say(
        f"| raw `Embedder.encode` ({embedder.document_backend}) | {raw:.1f} | {len(texts) / raw:.1f} | 1.00 |"
    )
    say(
        f"| `assistant ingest` (parse, embed, store) | {first.seconds:.1f} | {first.rate:.1f} | "
        f"{(len(texts) / raw) and first.rate / (len(texts) / raw):.2f} of raw |"
    )
    say(f"| of which embedding / store | {first.embed_seconds:.1f} / {first.store_seconds:.1f} | | |")
    say(f"| re-ingest unchanged | {again.seconds:.2f} | | {again.seconds / first.seconds:.3f} of first |")
    say()


def size_part(
    label: str,
    tmp: Path,
    papers: list,
    vectors: np.ndarray,
    embedder: Embedder,
    queries: list[str],
    server: str | None = None,
) -> None:
    data = tmp / label
    corpus = data.parent / f"{label}.jsonl"
    with corpus.open("w") as f:
        for p in papers:
            f.write(
                json.dumps(
                    {
                        "abstract": p.abstract,
                        "title": p.title,
                        "authors": list(p.authors),
                        "venue": p.venue,
                        "year": p.year,
                        "id": p.external_id,
                    }
                )
                + "\n"
            )
    table = {p.abstract.strip(): v for p, v in zip(papers, vectors)}
    settings = Settings(
        data_dir=data,
        corpus=[],
        auto_ingest=False,
        store_batch_size=5000,
        backend="extractive",
        chroma_url=server,
    )
    store = VectorStore(settings)
    rss0 = peak_mb()
    report = ingest([corpus], store, Lookup(table, embedder), settings)  # type: ignore[arg-type]
    # Cold start: a new Assistant loads the snapshot (and the saved lexical index).
    t0 = time.perf_counter()
    bot = Assistant(settings)
    bot._embedder = embedder
    bot.search("warm up", k=1)
    cold = time.perf_counter() - t0
    # Baseline: what a start cost before the snapshot, reading every record back from Chroma.
    t0 = time.perf_counter()
    with store.session() as session:
        records = sum(len(papers) for papers, _ in session.batches())
    read_back = time.perf_counter() - t0
    assert records == len(bot.catalogue)
    qv = embedder.encode(queries)
    search = [timed(lambda q=q: bot.search(q, k=10, detect=False), 1)[0] for q in queries]
    one = np.ascontiguousarray(vectors)

    def brute(v: np.ndarray) -> np.ndarray:
        s = one @ v
        return np.argpartition(-s, 10)[:10] if len(s) > 10 else np.argsort(-s)

    exact = [timed(lambda v=v: brute(v), 1)[0] for v in qv]
    cat = bot.catalogue
    with store.session() as session:
        col = session.collection

        def hnsw_query(v: np.ndarray, where: dict | None = None) -> list[str]:
            kwargs = {"where": where} if where else {}
            return col.query(query_embeddings=[v.tolist()], n_results=10, include=["distances"], **kwargs)[
                "ids"
            ][0]

        hnsw = [timed(lambda v=v: hnsw_query(v), 1)[0] for v in qv]
        recall = []
        for v in qv[:100]:
            truth = (
                {cat.papers[i].id for i in np.argsort(-(cat.vectors @ v))[:10]}
                if cat.vectors is not None
                else set()
            )
            recall.append(len(truth & set(hnsw_query(v))) / 10 if truth else float("nan"))
        years = sorted({p.year for p in papers if p.year})
        filtered = {}
        if years:
            year = years[len(years) // 2]
            share = float(np.mean([p.year == year for p in papers]))
            rows = np.flatnonzero(np.array([p.year == year for p in cat.papers]))
            ours = [
                timed(lambda q=q: bot.search(q, k=10, filters={"year": year}, detect=False), 1)[0]
                for q in queries[:50]
            ]
            via_chroma = [timed(lambda v=v: hnsw_query(v, {"year": year}), 1)[0] for v in qv[:50]]
            scan = (
                [timed(lambda v=v: np.argsort(-(cat.vectors[rows] @ v))[:10], 1)[0] for v in qv[:50]]
                if cat.vectors is not None
                else [float("nan")]
            )
            filtered = {"year": year, "share": share, "ours": ours, "chroma": via_chroma, "scan": scan}
    ms = 1000
    say(
        f"## {label}: {len(papers):,} abstracts"
        + (f" (Chroma server {server})" if server else " (embedded store)")
    )
    say("| measure | value | baseline | ratio |")
    say("|---|---|---|---|")
    say(f"| store ingest (precomputed vectors) | {report.added / report.seconds:.0f} papers/s | | |")
    say(
        f"| cold start `Assistant()` → first search (snapshot) | {cold:.1f} s | "
        f"reading every record back from Chroma {read_back:.1f} s | {cold / read_back:.2f}× |"
    )
    p50, p95 = percentile(search, 0.5) * ms, percentile(search, 0.95) * ms
    e50 = percentile(exact, 0.5) * ms
    say(
        f"| `search` end-to-end p50 / p95 (embed + dense + BM25 + fusion) | {p50:.1f} / {p95:.1f} ms | "
        f"exact numpy dense scan p50 {e50:.2f} ms | {p50 / e50:.1f}× |"
    )
    say(
        f"| dense: exact scan p50 (what search uses) | {e50:.2f} ms | Chroma HNSW query "
        f"{percentile(hnsw, 0.5) * ms:.2f} ms | {percentile(exact, 0.5) / percentile(hnsw, 0.5):.2f}× |"
    )
    say(f"| HNSW recall@10 against the exact scan | {np.nanmean(recall):.3f} | 1.000 | |")
    if filtered:
        f50 = percentile(filtered["ours"], 0.5) * ms
        c50 = percentile(filtered["chroma"], 0.5) * ms
        s50 = percentile(filtered["scan"], 0.5) * ms
        say(
            f"| filtered `search` year={filtered['year']} ({filtered['share']:.0%} of rows) p50 | {f50:.1f} ms | "
            f"Chroma `where` query alone {c50:.1f} ms | {f50 / c50:.2f}× |"
        )
        say(f"| (dense part: exact scan of the kept rows) | {s50:.2f} ms | | |")
    say(
        f"| peak RSS of this process (ingest and serving) | {peak_mb():.0f} MB (was {rss0:.0f} MB before) | | |"
    )
    if not server:
        del bot, cat
        child = serving.in_child(data)
        say(
            f"| serving alone (`python -m benchmarks.serving`, a fresh process): cold start | "
            f"{child['cold_start_s']} s | | |"
        )
        say(
            f"| resident memory after start / after {child['questions']} questions | "
            f"{child['rss_after_start_mb']} / {child['rss_after_questions_mb']} MB | | |"
        )
        say(f"| search p50 / p95 | {child['search_p50_ms']} / {child['search_p95_ms']} ms | | |")
        for name in ("author", "venue+year", "topic"):
            if f"{name}_p50_ms" in child:
                say(
                    f"| filtered by {name} ({child[f'{name}_share']:.1%} of papers) p50 / p95 | "
                    f"{child[f'{name}_p50_ms']} / {child[f'{name}_p95_ms']} ms | | |"
                )
    say()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="87,5183,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-server", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    # The default's encoders: abstracts and questions through the checked export (OpenVINO
    # or onnxruntime) when `make install` made it, torch otherwise; the table says which.
    embedder = index_embedder(Settings())
    sf_papers, sf_vectors = scifact_vectors(embedder)
    queries = [json.loads(line)["text"] for line in (SCIFACT / "queries_test.jsonl").read_text().splitlines()]
    queries = queries[: args.queries]
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        say(
            f"# Benchmarks ({os.cpu_count()} CPUs; `python -m benchmarks.run {' '.join(argv or sys.argv[1:])}`)\n"
        )
        encoder_part(tmp, embedder, [p.abstract for p in sf_papers[:256]])
        if 87 in sizes:
            seeds, _ = load_papers([DEFAULT_SEEDS])
            size_part("seeds", tmp, seeds, embedder.encode([p.abstract for p in seeds]), embedder, queries)
        if 5183 in sizes:
            size_part("scifact", tmp, sf_papers, sf_vectors, embedder, queries)
            if not args.no_server:
                proc, url = start_chroma(tmp / "server-db")
                try:
                    size_part("scifact-server", tmp, sf_papers, sf_vectors, embedder, queries, server=url)
                finally:
                    stop(proc)
        big = [s for s in sizes if s > 10_000]
        for n in big:
            import random

            from assistant.corpus.records import record_to_paper

            rng = random.Random(0)
            papers = [record_to_paper(record(rng, i), f"synthetic:{i}") for i in range(n)]
            vectors = mixed_vectors(sf_vectors, n)
            size_part(f"synthetic-{n // 1000}k", tmp, papers, vectors, embedder, queries)
            shutil.rmtree(tmp / f"synthetic-{n // 1000}k", ignore_errors=True)
    say(f"Total benchmark time: {time.perf_counter() - started:.0f} s")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench.md").write_text("\n".join(LINES) + "\n")
    print(f"wrote {RESULTS / 'bench.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
