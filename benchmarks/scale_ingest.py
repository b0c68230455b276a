"""A large library embedded for real: the fast (MiniLM) index of N papers built through
`ingest`, as a user's `assistant ingest` builds it, then served from a fresh process.

    python -m benchmarks.scale_ingest --n 100000       # about an hour here
    python -m benchmarks.scale_ingest --n 20000        # a quicker run

The library is SciFact's 5,183 abstracts plus N − 5,183 others, each made of the first
half of one SciFact abstract's sentences and the second half of another's (real
vocabulary and length; mixes copy sentences, so they are hard distractors for the
SciFact claims). Nothing is precomputed: every abstract goes through the default
`document_encoder`. In the same run, SciFact alone (5,183) is ingested the same way as
the baseline, so the rate at scale can be compared with the rate at 5k, and SciFact's
300 test claims are searched against both stores (nDCG@10: what the distractors cost).

Prints, for each store: ingest time and rate, size on disk, the ingesting process's peak
memory; and from a fresh serving process: cold start (first search included), resident
memory after it and after the claims, search p50 / p95.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from assistant import Assistant
from assistant.text import split_sentences
from benchmarks.run import peak_mb, say
from eval.metrics import mean, ndcg_at, percentile
from eval.questions import SCIFACT, load_scifact


def write_library(path: Path, n: int, seed: int = 0) -> None:
    """SciFact's corpus, then mixes of its abstracts up to `n` records (SciFact's JSONL shape)."""
    rows = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").open()]
    rows = [r for r in rows if r["text"].strip()]
    split = [split_sentences(r["text"]) for r in rows]
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for r in rows[:n]:
            out.write(json.dumps({"_id": r["_id"], "title": r["title"], "text": r["text"]}) + "\n")
        seen = {r["text"] for r in rows}  # the same text is the same paper: every mix is new
        i = 0
        while i < n - len(rows):
            a, b = rng.randrange(len(rows)), rng.randrange(len(rows))
            first, second = split[a], split[b]
            text = " ".join(first[: max(1, len(first) // 2)] + second[len(second) // 2 :])
            if a == b or text in seen:
                continue
            seen.add(text)
            title = f"{rows[a]['title']} (mix {i})"
            out.write(json.dumps({"_id": f"mix{i}", "title": title, "text": text}) + "\n")
            i += 1


def disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def build(library: Path, data: Path, n: int) -> dict[str, float]:
    bot = Assistant(data_dir=data, corpus=[], auto_ingest=False, backend="extractive")
    t0 = time.perf_counter()
    report = bot.ingest([library], progress=True)
    seconds = time.perf_counter() - t0
    papers = bot.stats().papers
    if papers != n:  # identity text is normalised: two mixes may still be one paper
        print(f"{n} records, {papers} papers stored: {report}", file=sys.stderr)
    return {
        "papers": papers,
        "ingest_s": seconds,
        "rate": papers / seconds,
        "disk_mb": disk_mb(data),
        "peak_mb": peak_mb(),
    }


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def serve(data: Path) -> dict[str, object]:
    """In a fresh process: open the store, search every SciFact test claim."""
    sf = load_scifact("test")
    t0 = time.perf_counter()
    bot = Assistant(data_dir=data, corpus=[], auto_ingest=False, backend="extractive", detect_filters=False)
    claims = list(sf.queries.items())
    bot.search(claims[0][1], k=10)
    cold = time.perf_counter() - t0
    rss_start = rss_mb()
    by_external = {p.id: p.external_id for p in bot.catalogue.papers}
    lat, ndcg = [], []
    for qid, text in claims:
        s0 = time.perf_counter()
        hits = bot.search(text, k=10)
        lat.append(time.perf_counter() - s0)
        ndcg.append(ndcg_at([by_external[h.paper.id] or "" for h in hits], sf.qrels[qid], 10))
    return {
        "cold_s": cold,
        "rss_start_mb": rss_start,
        "rss_after_mb": rss_mb(),
        "p50_ms": percentile(lat, 0.5) * 1000,
        "p95_ms": percentile(lat, 0.95) * 1000,
        "ndcg10": mean(ndcg),
        "claims": len(claims),
        "index": bot.index_status().line(),
    }


def serve_in_child(data: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.scale_ingest", "--serve", str(data)],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="papers in the large library")
    parser.add_argument("--baseline", type=int, default=5183, help="papers in the baseline library")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the child's part
    args = parser.parse_args(argv)
    if args.serve:
        print(json.dumps(serve(args.serve)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows = []
        for name, n in (
            (f"{min(args.baseline, 5183):,} SciFact abstracts (baseline)", args.baseline),
            (f"{args.n:,} papers", args.n),
        ):
            library = root / f"library-{n}.jsonl"
            write_library(library, n)
            # Each build in its own process, so its peak memory is its own.
            child = subprocess.run(
                [sys.executable, "-c", _BUILD, str(library), str(root / f"data-{n}"), str(n)],
                check=True,
                stdout=subprocess.PIPE,
                text=True,
            )
            built = json.loads(child.stdout.strip().splitlines()[-1])
            served = serve_in_child(root / f"data-{n}")
            rows.append((name, built, served))
            say(f"{name}: {json.dumps(built)} {json.dumps(served)}")
        say()
        say(
            "| store | ingest | abstracts/s | on disk | peak memory, ingesting | cold start | "
            "resident after start / after the claims | search p50 / p95 | SciFact test nDCG@10 |"
        )
        say("|---|---|---|---|---|---|---|---|---|")
        for name, b, s in rows:
            say(
                f"| {name} | {b['ingest_s']:,.0f} s | {b['rate']:.1f} | {b['disk_mb']:,.0f} MB "
                f"| {b['peak_mb']:,.0f} MB | {s['cold_s']:.1f} s | {s['rss_start_mb']:,.0f} / "
                f"{s['rss_after_mb']:,.0f} MB | {s['p50_ms']:.0f} / {s['p95_ms']:.0f} ms | {s['ndcg10']:.3f} |"
            )
        base, large = rows[0][1], rows[1][1]
        say(
            f"\nRate at {args.n:,} against {rows[0][1]['papers']:,} in the same run: ×{large['rate'] / base['rate']:.2f}"
        )
        say(f"Index answering: {rows[1][2]['index']}")
    return 0


_BUILD = (
    "import json, sys; from pathlib import Path; from benchmarks.scale_ingest import build; "
    "print(json.dumps(build(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))))"
)


if __name__ == "__main__":
    sys.exit(main())
