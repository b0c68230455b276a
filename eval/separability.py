"""How well do the evidence signals separate answerable questions from questions no
abstract answers? AUC of each signal, over our sets (never `heldout3`), for the index that
answers by default; and, cross-validated, the share of unanswerable questions refused at
5% false refusals for the current score and for EmbeddingGemma's top-vs-next-nine gap.

    python -m eval.separability
"""

from __future__ import annotations

import sys

from assistant import Assistant
from assistant.config import DEFAULT_SEEDS
from eval.calibrate import NEGATIVE_TYPES, SKIP_TYPES, cross_validate
from eval.context import STORE
from eval.harness import build_strong
from eval.questions import SETS, load_questions


def auc(rows: list[dict[str, float]], key: str) -> float:
    pos = [r[key] for r in rows if r["answerable"]]
    neg = [r[key] for r in rows if not r["answerable"]]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def main(argv: list[str] | None = None) -> int:
    bot = Assistant(data_dir=STORE, corpus=[DEFAULT_SEEDS], backend="extractive")
    build_strong(bot)
    print(bot.index_status().line())
    rows = []
    for name in ("heldout", "heldout2", "seeds", "offcorpus"):
        for q in load_questions(SETS[name], bot.catalogue.papers):
            if q.type in SKIP_TYPES or not (q.answerable or q.type in NEGATIVE_TYPES):
                continue
            plan = bot.plan(q.question, history=[(h, "") for h in q.history])
            if plan.verdict.missing:
                continue
            top = plan.result.dense_top
            rows.append(
                {
                    "answerable": float(q.answerable),
                    "evidence score": plan.verdict.score,
                    "top dense cosine": top[0] if top else 0.0,
                    "top vs next nine": top[0] - sum(top[:10]) / len(top[:10]) if top else 0.0,
                    "best sentence (MiniLM)": max((s.score for s in plan.scored), default=0.0),
                }
            )
    print(f"{len(rows)} questions, {int(sum(r['answerable'] for r in rows))} answerable\n")
    print("| signal | AUC | held-out unanswerable refused at ≤5% false refusals (5-fold) |\n|---|---|---|")
    for key in ("evidence score", "top dense cosine", "top vs next nine", "best sentence (MiniLM)"):
        pairs = [(r[key], bool(r["answerable"])) for r in rows]
        cv = cross_validate(pairs)
        print(f"| {key} | {auc(rows, key):.3f} | {cv['held-out unanswerable refused']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
