"""The bundled embedder against the optional all-mpnet-base-v2, in one run: quality on
SciFact (a subset of the corpus) and our paraphrased questions, and the cost of each
(index time, query time, dense scan at 5k and 100k).

    python -m benchmarks.embedders                 # 1,000-abstract SciFact subset (≈ 25 min)
    python -m benchmarks.embedders --subset 300    # quicker, noisier

Embedding all 5,183 SciFact abstracts with mpnet takes about 1.5 hours on 2 cores, so
SciFact is scored against a subset: every abstract relevant to a test claim plus random
others (seed 0), the same subset for both embedders. Vectors are cached per embedder in
~/.cache/assistant/bench. Prints markdown tables and appends them to
benchmarks/results/embedders.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

from assistant.config import DEFAULT_SEEDS, Settings
from assistant.corpus.readers import load_papers
from assistant.errors import ConfigError
from assistant.index.embed import Embedder
from assistant.index.lexical import LexicalIndex
from assistant.model_files import EMBEDDERS, embedder_path
from assistant.search.retrieve import Fusion, candidates, fuse
from benchmarks.run import CACHE, LINES, RESULTS, say
from eval.metrics import mean, mrr_at, ndcg_at, percentile, recall_at
from eval.questions import SCIFACT, SETS, load_questions, load_scifact


def embedders() -> dict[str, Embedder]:
    out = {"all-minilm-l6-v2 (bundled)": Embedder(Settings.bundled_embedder_path(), 64, 0)}
    for name in EMBEDDERS:
        try:
            out[name] = Embedder(embedder_path(name), 16, 0)
        except ConfigError as exc:  # not installed: say so and measure the bundled one alone
            say(f"({name} skipped: {exc})")
    return out


def cached(embedder: Embedder, key: str, texts: list[str]) -> tuple[np.ndarray, float]:
    """Vectors of `texts`, and the seconds per text it took to embed them (cached)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"emb-{key}-{len(texts)}-{embedder.name}.npz"
    if path.exists():
        data = np.load(path)
        return data["vectors"], float(data["seconds"])
    t0 = time.perf_counter()
    vectors = embedder.encode(texts)
    seconds = (time.perf_counter() - t0) / max(len(texts), 1)
    np.savez(path, vectors=vectors, seconds=seconds)
    return vectors, seconds


def ranked(dense: np.ndarray, lexical: np.ndarray, ids: list[str], share: float | None) -> list[str]:
    rows = np.arange(len(ids))
    got = candidates(dense, lexical, rows, 100)
    fused = dict(got.dense) if share is None else fuse(got, Fusion("convex", share))
    return [ids[i] for i in sorted(fused, key=lambda i: -fused[i])[:100]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", type=int, default=1000, help="SciFact abstracts to index")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    share = Settings().dense_share

    papers, _ = load_papers([SCIFACT / "corpus.jsonl"])
    test = load_scifact("test")
    gold = set().union(*test.qrels.values())
    keep = [p for p in papers if p.external_id in gold]
    others = [p for p in papers if p.external_id not in gold]
    random.Random(0).shuffle(others)
    subset = keep + others[: max(0, args.subset - len(keep))]
    sf_ids = [p.external_id or "" for p in subset]
    sf_lexical = LexicalIndex.build(subset)
    claims = list(test.queries.items())

    seeds = load_papers([DEFAULT_SEEDS])[0]
    seed_ids = [p.id for p in seeds]
    seed_lexical = LexicalIndex.build(seeds)
    questions = [q for q in load_questions(SETS["heldout"], seeds) if q.answerable]
    paraphrases = [q for q in questions if q.type == "paraphrase"]

    quality: list[str] = []
    cost: list[str] = []
    for label, embedder in embedders().items():
        vectors, per_abstract = cached(embedder, "scifact", [p.abstract for p in subset])
        qv = embedder.encode([text for _, text in claims])
        t0 = time.perf_counter()
        for _, text in claims[:50]:
            embedder.encode_one(text)
        query_ms = (time.perf_counter() - t0) / 50 * 1000
        seed_vectors, _ = cached(embedder, "seeds", [p.abstract for p in seeds])
        pv = embedder.encode([q.retrieval_text for q in paraphrases])
        for name, s in (("dense", None), (f"hybrid {share}", share)):
            sf = [ranked(vectors @ v, sf_lexical.scores(text), sf_ids, s) for v, (_, text) in zip(qv, claims)]
            own = [
                ranked(seed_vectors @ v, seed_lexical.scores(q.retrieval_text), seed_ids, s)
                for v, q in zip(pv, paraphrases)
            ]
            quality.append(
                f"| {label} | {name} "
                f"| {mean([ndcg_at(r, test.qrels[qid], 10) for r, (qid, _) in zip(sf, claims)]):.3f} "
                f"| {mean([recall_at(r, test.qrels[qid], 100) for r, (qid, _) in zip(sf, claims)]):.3f} "
                f"| {mean([mrr_at(r, set(q.gold), 10) for r, q in zip(own, paraphrases)]):.3f} |"
            )
        dim = vectors.shape[1]
        scans = []
        for n in (5183, 100_000):
            matrix = np.random.default_rng(0).standard_normal((n, dim)).astype(np.float32)
            times = []
            for v in qv[:30]:
                t0 = time.perf_counter()
                np.argpartition(-(matrix @ v), 10)[:10]
                times.append(time.perf_counter() - t0)
            scans.append(percentile(times, 0.5) * 1000)
        cost.append(
            f"| {label} | {dim} | {1 / per_abstract:.2f} | {5183 * per_abstract / 60:.0f} min "
            f"| {100_000 * per_abstract / 3600:.1f} h | {query_ms:.0f} ms | {scans[0]:.1f} ms "
            f"| {scans[1]:.1f} ms | {100_000 * dim * 4 / 2**20:.0f} MB |"
        )

    say(f"## Embedders ({len(subset)} SciFact abstracts: all {len(keep)} relevant to a test claim + random)")
    say("")
    say(
        f"| embedder | search | SciFact test nDCG@10 (subset) | R@100 (subset) "
        f"| held-out paraphrase MRR@10 ({len(paraphrases)}) |"
    )
    say("|---|---|---|---|---|")
    for line in quality:
        say(line)
    say("")
    say(
        "| embedder | dim | abstracts/s | index 5,183 | index 100k | query embedding "
        "| dense scan 5k | dense scan 100k | vectors at 100k |"
    )
    say("|---|---|---|---|---|---|---|---|---|")
    for line in cost:
        say(line)
    say(f"\n({time.perf_counter() - started:.0f} s; index times extrapolated from the subset's rate)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    with (RESULTS / "embedders.md").open("a", encoding="utf-8") as f:
        f.write("\n".join(["", f"`python -m benchmarks.embedders --subset {args.subset}`", "", *LINES]))
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
