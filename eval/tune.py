"""Tune fusion with the retriever's own code, cross-validated.

    python -m eval.tune                                  # the bundled all-MiniLM-L6-v2
    python -m eval.tune --embedder embeddinggemma-300m --scifact-first 1536   # a subset: ~2,000 abstracts

Dense and BM25 candidates come from `assistant.search.retrieve.candidates` and are combined
by `assistant.search.retrieve.fuse`, exactly as `Assistant.search` does (the top
`candidates` of each side, min-max normalised over them). Two pools of questions
are used: SciFact's train claims (5,183 abstracts) and our own answerable questions
over the seeds (`heldout`, `heldout2` and `seeds`: paraphrases, follow-ups...; never
`heldout3`, which stays blind). Five folds over both
pools: a configuration is picked on four folds (equal weight to each pool) and scored
on the fifth. SciFact's test split is scored once, at the end, with the configuration
picked on everything else.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from assistant.config import DEFAULT_SEEDS, Settings
from assistant.corpus.readers import load_papers
from assistant.corpus.strong_index import index_embedder
from assistant.index.embed import Embedder
from assistant.index.lexical import LexicalIndex
from assistant.search.retrieve import Fusion, candidates, fuse
from benchmarks.run import scifact_vectors
from eval.metrics import mean, mrr_at, ndcg_at, recall_at
from eval.questions import SETS, load_questions, load_scifact

N = Settings().candidates


@dataclass
class Query:
    pool: str  # "scifact" or "own"
    dense: np.ndarray
    lexical: np.ndarray
    gold: set[str]
    ids: list[str]
    kind: str = ""  # our questions: the question's type (paraphrase, ...)


def ranking(q: Query, f: Fusion, k: int = 100) -> list[str]:
    rows = np.arange(len(q.ids))
    fused = fuse(candidates(q.dense, q.lexical, rows, N), f)
    return [q.ids[i] for i in sorted(fused, key=lambda i: -fused[i])[:k]]


def score(queries: list[Query], f: Fusion) -> dict[str, float]:
    out: dict[str, float] = {}
    for pool in ("scifact", "own"):
        mine = [q for q in queries if q.pool == pool]
        if mine:
            ranked = [ranking(q, f) for q in mine]
            out[f"{pool} nDCG@10"] = mean([ndcg_at(r, q.gold, 10) for r, q in zip(ranked, mine)])
            out[f"{pool} MRR@10"] = mean([mrr_at(r, q.gold, 10) for r, q in zip(ranked, mine)])
            out[f"{pool} R@100"] = mean([recall_at(r, q.gold, 100) for r, q in zip(ranked, mine)])
            para = [r for r, q in zip(ranked, mine) if q.kind == "paraphrase"]
            gold = [q.gold for q in mine if q.kind == "paraphrase"]
            if para:
                out[f"{pool} paraphrase R@1"] = mean([recall_at(r, g, 1) for r, g in zip(para, gold)])
                out[f"{pool} paraphrase MRR@10"] = mean([mrr_at(r, g, 10) for r, g in zip(para, gold)])
    return out


def objective(s: dict[str, float]) -> float:
    """Equal weight to SciFact (nDCG@10) and our own questions (MRR@10)."""
    parts = [s[k] for k in ("scifact nDCG@10", "own MRR@10") if k in s]
    return sum(parts) / len(parts)


GRID: dict[str, Fusion] = {
    **{
        f"convex share={a}": Fusion("convex", a) for a in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
    },
    **{
        f"rrf wd={wd} k={k}": Fusion("rrf", dense_weight=wd, lexical_weight=1.0, rrf_k=k)
        for wd in (0.75, 1.0, 1.5, 2.0)
        for k in (10, 60)
    },
    "dense only": Fusion("rrf", dense_weight=1.0, lexical_weight=0.0),
    "BM25 only": Fusion("rrf", dense_weight=0.0, lexical_weight=1.0),
}


OWN = ("heldout", "heldout2", "seeds")


def build(
    embedder: Embedder, first: int = 0, own_sets: tuple[str, ...] = OWN
) -> tuple[list[Query], list[Query]]:
    """(tuning pool: SciFact train + our questions, SciFact test)."""
    papers, vectors = scifact_vectors(embedder, first)
    lexical = LexicalIndex.build(papers)
    ext = [p.external_id or "" for p in papers]
    pools: dict[str, list[Query]] = {}
    for split in ("train", "test"):
        sf = load_scifact(split)
        qv = np.stack([embedder.encode_query(text) for text in sf.queries.values()])
        pools[split] = [
            Query("scifact", vectors @ v, lexical.scores(text), sf.qrels[qid], ext)
            for v, (qid, text) in zip(qv, sf.queries.items())
        ]
    seeds = load_papers([DEFAULT_SEEDS])[0]
    seed_vectors = embedder.encode_documents(seeds)
    seed_lexical = LexicalIndex.build(seeds)
    own = [
        q
        for name in own_sets
        for q in load_questions(SETS[name], seeds)
        if q.answerable and q.type not in ("catalogue", "metadata")
    ]
    qv = np.stack([embedder.encode_query(q.retrieval_text) for q in own])
    ids = [p.id for p in seeds]
    pools["own"] = [
        Query("own", seed_vectors @ v, seed_lexical.scores(q.retrieval_text), set(q.gold), ids, q.type)
        for v, q in zip(qv, own)
    ]
    return pools["train"] + pools["own"], pools["test"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="all-minilm-l6-v2", help="the index's embedder")
    parser.add_argument(
        "--scifact-first",
        type=int,
        default=0,
        help="SciFact subset: the first N abstracts + every relevant one (0: all 5,183)",
    )
    parser.add_argument(
        "--own",
        default=",".join(OWN),
        help="our question sets in the pool (comma-separated; leave out the sets you report on)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    embedder = index_embedder(Settings(embedder=args.embedder))
    tuning, test = build(embedder, args.scifact_first, tuple(args.own.split(",")))
    print(
        f"SciFact corpus: {len(test[0].ids)} abstracts; our questions: {sum(q.pool == 'own' for q in tuning)}"
    )
    rng = random.Random(0)
    order = tuning[:]
    rng.shuffle(order)
    folds = 5
    held: list[dict[str, float]] = []
    picked: list[str] = []
    for k in range(folds):
        train = [q for i, q in enumerate(order) if i % folds != k]
        fold = order[k::folds]
        scores: dict[str, dict[str, float]] = {name: score(train, f) for name, f in GRID.items()}
        best = max(scores, key=lambda n: objective(scores[n]))
        picked.append(best)
        held.append(score(fold, GRID[best]))
    print("| fold | picked on the other folds | held-out SciFact nDCG@10 | held-out own MRR@10 |")
    print("|---|---|---|---|")
    for k, (name, s) in enumerate(zip(picked, held)):
        print(f"| {k + 1} | {name} | {s['scifact nDCG@10']:.4f} | {s['own MRR@10']:.4f} |")
    cv_sf = mean([s["scifact nDCG@10"] for s in held])
    cv_own = mean([s["own MRR@10"] for s in held])
    print(f"| mean | | {cv_sf:.4f} | {cv_own:.4f} |\n")
    everything = {name: score(tuning, f) for name, f in GRID.items()}
    best = max(everything, key=lambda n: objective(everything[n]))
    show: Callable[[str], str] = lambda n: (  # noqa: E731
        f"| {n} | {everything[n]['scifact nDCG@10']:.4f} | {everything[n]['own MRR@10']:.4f} | "
        f"{everything[n].get('own paraphrase R@1', 0):.4f} | {everything[n].get('own paraphrase MRR@10', 0):.4f} | "
        f"{score(test, GRID[n])['scifact nDCG@10']:.4f} | {score(test, GRID[n])['scifact R@100']:.4f} |"
    )
    print(
        "| fusion | SciFact train nDCG@10 | own MRR@10 | own paraphrases R@1 | own paraphrases MRR@10 "
        "| SciFact test nDCG@10 | SciFact test R@100 |"
    )
    print("|---|---|---|---|---|---|---|")
    top = sorted(everything, key=lambda n: -objective(everything[n]))[:6]
    for name in dict.fromkeys([*top, "convex share=0.8", "dense only", "BM25 only"]):
        print(show(name))
    print(f"\npicked on all tuning questions: {best} ({time.perf_counter() - started:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
