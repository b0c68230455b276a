"""Serving a large store from a fresh process: cold start, resident memory after start and
after 100 questions, and `search` p50/p95 unfiltered and filtered, in one child process per
run so nothing of the ingestion that built the store is counted.

    python -m benchmarks.serving DATA_DIR [--questions 100]

`benchmarks.run` calls it for each size; run it alone against a store you kept. Prints one
JSON object. The questions are SciFact's test claims; the filters are the rarest author
that still has papers, a venue-and-year, and a topic, with the share of papers each keeps.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from eval.metrics import percentile
from eval.questions import SCIFACT


def rss_mb() -> float:
    """Resident memory now (not the peak): what the process holds while it serves."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(data_dir: Path, n_questions: int) -> dict[str, object]:
    from assistant.api import Assistant
    from assistant.config import Settings

    base = rss_mb()
    settings = Settings(data_dir=data_dir, corpus=[], auto_ingest=False, backend="extractive")
    t0 = time.perf_counter()
    bot = Assistant(settings)
    bot.search("warm up", k=1, detect=False)
    cold = time.perf_counter() - t0
    after_start = rss_mb()
    lines = (SCIFACT / "queries_test.jsonl").read_text().splitlines()
    questions = [json.loads(line)["text"] for line in lines][:n_questions]
    papers = bot.catalogue.papers
    n = len(papers)
    authors = Counter(a for p in papers for a in p.authors)
    venue_years = Counter((p.venue, p.year) for p in papers if p.venue and p.year)
    topics = Counter(p.area for p in papers if p.area)
    filters: dict[str, tuple[dict[str, object], int]] = {}
    if venue_years:
        (venue, year), count = venue_years.most_common()[-1]
        filters["venue+year"] = ({"venue": venue, "year": year}, count)
    if topics:
        topic, count = topics.most_common()[-1]
        filters["topic"] = ({"topic": topic}, count)
    if authors:
        author, count = max(authors.items(), key=lambda kv: (kv[1], kv[0]))
        filters["author"] = ({"author": author}, count)

    def timed(**kwargs: object) -> list[float]:
        out = []
        for q in questions:
            t = time.perf_counter()
            bot.search(q, k=10, detect=False, **kwargs)  # type: ignore[arg-type]
            out.append(time.perf_counter() - t)
        return out

    unfiltered = timed()
    result: dict[str, object] = {
        "papers": n,
        "questions": len(questions),
        "cold_start_s": round(cold, 2),
        "rss_before_mb": round(base),
        "rss_after_start_mb": round(after_start),
        "search_p50_ms": round(percentile(unfiltered, 0.5) * 1000, 1),
        "search_p95_ms": round(percentile(unfiltered, 0.95) * 1000, 1),
    }
    for name, (chosen, count) in filters.items():
        times = timed(filters=chosen)
        result[f"{name}_share"] = round(count / n, 3)
        result[f"{name}_p50_ms"] = round(percentile(times, 0.5) * 1000, 1)
        result[f"{name}_p95_ms"] = round(percentile(times, 0.95) * 1000, 1)
    result["rss_after_questions_mb"] = round(rss_mb())
    return result


def in_child(data_dir: Path, n_questions: int = 100, pythonpath: str | None = None) -> dict[str, object]:
    """`measure` in a fresh interpreter (optionally on another checkout of the code)."""
    import os

    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    cmd = [sys.executable, "-m", "benchmarks.serving", str(data_dir), "--questions", str(n_questions)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--questions", type=int, default=100)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.data_dir, args.questions)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
