"""Search latency of the two indexes of embedder=auto, in one run (a quiet machine):
`Assistant.search` p50/p95 and the question's embedding alone, over 40 `heldout2` questions.

    python -m benchmarks.search_latency [--data-dir DIR]

The store is eval.context's (~/.cache/assistant/eval-store), its EmbeddingGemma index
built first if needed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from assistant import Assistant
from assistant.config import BUNDLED_EMBEDDER, DEFAULT_SEEDS
from eval.context import STORE
from eval.questions import SETS, load_questions


def timed(fn, items: list[str]) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - t0)
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=STORE)
    args = parser.parse_args(argv)
    auto = Assistant(data_dir=args.data_dir, corpus=[DEFAULT_SEEDS], backend="extractive")
    if auto.index_status().problem is None:
        auto.build_index()
    fast = Assistant(data_dir=args.data_dir, corpus=[DEFAULT_SEEDS], embedder=BUNDLED_EMBEDDER)
    questions = [q.question for q in load_questions(SETS["heldout2"], auto.catalogue.papers)][:40]
    print("| index | search p50 | search p95 | question embedding p50 |\n|---|---|---|---|")
    for bot in (auto, fast):
        bot.search(questions[0])
        searches = timed(bot.search, questions)
        embedder = bot._ready().embedder
        embeddings = timed(embedder.encode_query, questions)
        print(
            f"| {bot.index_status().line()} | {statistics.median(searches) * 1000:.0f} ms "
            f"| {searches[int(0.95 * len(searches))] * 1000:.0f} ms "
            f"| {statistics.median(embeddings) * 1000:.0f} ms |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
