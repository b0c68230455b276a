"""Tune fusion on SciFact's train split, report on its test split (same run).

    python -m eval.tune

Dense scores are exact cosines over all abstracts (what HNSW returns at this size);
BM25 is the project's lexical index. Prints the grid's best on train and its test score.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from assistant.config import Settings
from assistant.embed import Embedder
from assistant.lexical import LexicalIndex
from benchmarks.run import scifact_vectors
from eval.metrics import mean, ndcg_at, recall_at
from eval.questions import load_scifact


def rrf(dense: np.ndarray, lex: np.ndarray, wd: float, wl: float, k: int, n: int = 100) -> np.ndarray:
    fused = np.zeros_like(dense)
    for weight, scores in ((wd, dense), (wl, lex)):
        top = np.argsort(-scores)[:n]
        top = top[scores[top] > (0 if scores is lex else -2)]
        fused[top] += weight / (k + np.arange(1, len(top) + 1))
    return fused


def convex(dense: np.ndarray, lex: np.ndarray, alpha: float) -> np.ndarray:
    def norm(x: np.ndarray) -> np.ndarray:
        top = np.sort(x)[-100:]
        lo, hi = top[0], top[-1]
        return np.clip((x - lo) / (hi - lo + 1e-9), 0, None)

    return alpha * norm(dense) + (1 - alpha) * norm(lex)


def main() -> int:
    started = time.perf_counter()
    embedder = Embedder(Settings().resolved_embedder_path(), 64, 0)
    papers, vectors = scifact_vectors(embedder)
    lexical = LexicalIndex.build(papers)
    ext = [p.external_id for p in papers]
    splits = {s: load_scifact(s) for s in ("train", "test")}
    cache: dict[str, list[tuple[np.ndarray, np.ndarray, set[str]]]] = {}
    for split, sf in splits.items():
        qv = embedder.encode(list(sf.queries.values()))
        cache[split] = [
            (vectors @ v, lexical.scores(text), sf.qrels[qid])
            for v, (qid, text) in zip(qv, sf.queries.items())
        ]

    def score(split: str, fuse) -> tuple[float, float]:  # type: ignore[no-untyped-def]
        nd, rc = [], []
        for dense, lex, gold in cache[split]:
            order = np.argsort(-fuse(dense, lex))[:100]
            ranked = [ext[i] for i in order]
            nd.append(ndcg_at(ranked, gold, 10))
            rc.append(recall_at(ranked, gold, 100))
        return mean(nd), mean(rc)

    grid = {}
    for wd in (0.5, 0.75, 1.0, 1.25, 1.5, 2.0):
        for k in (10, 30, 60, 100):
            grid[f"rrf wd={wd} wl=1 k={k}"] = lambda d, x, wd=wd, k=k: rrf(d, x, wd, 1.0, k)
    for alpha in (0.3, 0.4, 0.5, 0.6, 0.7):
        grid[f"convex alpha={alpha}"] = lambda d, x, a=alpha: convex(d, x, a)
    results = {name: score("train", fn) for name, fn in grid.items()}
    best = max(results, key=lambda n: results[n][0])
    base = "rrf wd=1.0 wl=1 k=60"
    print("| fusion | train nDCG@10 | test nDCG@10 | test R@100 |")
    print("|---|---|---|---|")
    for name in sorted({best, base, *sorted(results, key=lambda n: -results[n][0])[:5]}):
        test = score("test", grid[name])
        print(f"| {name} | {results[name][0]:.4f} | {test[0]:.4f} | {test[1]:.4f} |")
    print(
        f"dense only test: {score('test', lambda d, x: d)[0]:.4f}; BM25 only test: {score('test', lambda d, x: x)[0]:.4f}"
    )
    print(f"best on train: {best}  ({time.perf_counter() - started:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
