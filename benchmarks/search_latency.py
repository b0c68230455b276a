"""Search latency of the two indexes of embedder=auto, with questions embedded by torch, by
the ONNX export under onnxruntime and by the same export under OpenVINO, in one run (a quiet
machine): `Assistant.search` p50/p95, the question's embedding alone, the memory the question
encoder adds to a fresh process, and retrieval quality on the same questions (so a speed-up
cannot hide a loss): 40 `heldout2` questions and the 30 `heldout4` paraphrases.

    python -m benchmarks.search_latency [--data-dir DIR]

The store is eval.context's (~/.cache/assistant/eval-store), its EmbeddingGemma index
built first if needed. A row whose encoder is not installed (`make install` makes the
exports and checks them under OpenVINO) says so instead of its figures.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from assistant import Assistant
from assistant.config import BUNDLED_EMBEDDER, DEFAULT_SEEDS
from assistant.errors import ConfigError
from eval.context import STORE
from eval.questions import SETS, Question, load_questions


def timed(fn, items: list[str]) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - t0)
    return sorted(out)


def quality(bot: Assistant, questions: list[Question]) -> tuple[float, float]:
    """R@1 and MRR@10 of the gold papers."""
    first = mrr = 0.0
    for q in questions:
        ids = [h.paper.id for h in bot.search(q.retrieval_text, k=10)]
        rank = next((i for i, pid in enumerate(ids) if pid in q.gold), None)
        first += rank == 0
        mrr += 1 / (rank + 1) if rank is not None else 0.0
    return first / len(questions), mrr / len(questions)


_MEMORY = """
import sys
from assistant import Settings
from assistant.corpus.strong_index import index_embedder
from benchmarks.scale_ingest import rss_mb as rss

name, encoder = sys.argv[1], sys.argv[2]
embedder = index_embedder(Settings(embedder=name, query_encoder=encoder, corpus=[]))
before = rss()
embedder.encode_query("Which paper compares sparse attention with linear attention?")
alone = rss() - before
embedder.encode(["An abstract about sparse attention. " * 30] * 4)
print(embedder.query_backend, round(alone), round(rss() - before))
"""


def encoder_memory(name: str, encoder: str) -> str:
    """MB of resident memory that loading the question encoder and embedding one question
    add to a fresh process (the runtimes' imports included: torch and onnxruntime in every
    row, which the export check imports), and then with the abstract encoder loaded too (a
    process that indexes: the app building its strong index, `ingest`)."""
    done = subprocess.run([sys.executable, "-c", _MEMORY, name, encoder], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"memory of {name} / {encoder} not measured: {done.stderr.strip()[-500:]}", file=sys.stderr)
        return "?"
    alone, both = done.stdout.split()[-2:]
    return f"{alone} / {both} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=STORE)
    args = parser.parse_args(argv)
    auto = Assistant(data_dir=args.data_dir, corpus=[DEFAULT_SEEDS], backend="extractive")
    if auto.index_status().problem is None:
        auto.build_index()
    papers = auto.catalogue.papers
    questions = [q.question for q in load_questions(SETS["heldout2"], papers)][:40]
    judged = [q for q in load_questions(SETS["heldout2"], papers) if q.answerable][:40]
    paraphrases = [q for q in load_questions(SETS["heldout4"], papers) if q.type == "paraphrase"]
    print(
        "| index | search p50 | search p95 | question embedding p50 | question encoder memory (+ abstract encoder) "
        f"| heldout2 R@1 / MRR@10 ({len(judged)}) | heldout4 paraphrases ({len(paraphrases)}) |"
        "\n|---|---|---|---|---|---|---|"
    )
    for embedder in ("auto", BUNDLED_EMBEDDER):
        for encoder in ("torch", "onnx", "openvino"):
            bot = Assistant(
                data_dir=args.data_dir,
                corpus=[DEFAULT_SEEDS],
                embedder=embedder,
                backend="extractive",
                query_encoder=encoder,
            )
            try:
                bot.search(questions[0])
            except ConfigError as exc:  # that encoder is not installed here
                print(f"| {embedder}, questions via {encoder}: not installed ({exc}) | | | | | | |")
                continue
            strong = bot.settings.strong()  # embedder=auto: its index answers (built above)
            answering = (strong or bot.settings).index_embedder
            searches = timed(bot.search, questions)
            embeddings = timed(bot._ready().embedder.encode_query, questions)
            r1, mrr = quality(bot, judged)
            p1, pmrr = quality(bot, paraphrases)
            print(
                f"| {bot.index_status().line()} | {statistics.median(searches) * 1000:.0f} ms "
                f"| {searches[int(0.95 * len(searches))] * 1000:.0f} ms "
                f"| {statistics.median(embeddings) * 1000:.0f} ms "
                f"| {encoder_memory(answering, encoder)} | {r1:.3f} / {mrr:.3f} "
                f"| {p1:.3f} / {pmrr:.3f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
