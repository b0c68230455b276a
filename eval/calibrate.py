"""Calibrate the refusal thresholds on evidence, cross-validated.

    python -m eval.calibrate                # our question sets and SciFact
    python -m eval.calibrate --no-scifact   # `heldout3` is never used: it stays blind

With embedder=auto the seeds' EmbeddingGemma index is built first, so the thresholds are
calibrated for the index that answers by default (`--fast-index`: the MiniLM one).

The evidence score (`assistant.answer.plan.evidence_score`) of every question is computed
with the default retrieval. Answerable questions are the positives; the negatives
are questions no abstract answers because no paper is about them (our off-corpus,
off-topic and unanswerable questions; SciFact's claims without evidence). Near-miss
questions are left out: they are on topic, and refused by the detail check.

- `refuse_below` is chosen, on the training folds, as the highest threshold that
  refuses at most 5% of the answerable questions; the held-out folds report the
  false-refusal rate and the share of unanswerable questions refused.
- `answer_above` is the lowest score above which at most 2% of the questions are
  unanswerable (there the evidence overrules a model that finds no answer).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from assistant import Assistant
from assistant.config import DEFAULT_SEEDS
from eval.harness import build_strong
from eval.questions import SCIFACT, SETS, load_questions

NEGATIVE_TYPES = ("offcorpus", "offtopic", "unanswerable")
SKIP_TYPES = ("near_miss", "catalogue", "metadata")  # refused by details / answered from the listing
MAX_FALSE_REFUSALS = 0.05
MAX_UNANSWERABLE_ABOVE = 0.02


def scores_of(bot: Assistant, items: list[tuple[str, tuple[str, ...], bool]]) -> list[tuple[float, bool]]:
    """(evidence score, answerable) for each (question, history, answerable)."""
    out = []
    for question, history, answerable in items:
        plan = bot.plan(question, history=[(h, "") for h in history])
        if plan.verdict.missing:  # refused by the detail check, whatever the score
            continue
        out.append((plan.verdict.score, answerable))
    return out


def refuse_threshold(pairs: list[tuple[float, bool]], max_fr: float = MAX_FALSE_REFUSALS) -> float:
    positives = sorted(s for s, a in pairs if a)
    if not positives:
        return 0.0
    index = int(max_fr * len(positives))  # refuse the lowest max_fr share at most
    return positives[index]


def overrule_threshold(pairs: list[tuple[float, bool]], max_share: float = MAX_UNANSWERABLE_ABOVE) -> float:
    for t in sorted({s for s, _ in pairs}):
        above = [a for s, a in pairs if s >= t]
        if above and sum(not a for a in above) / len(above) <= max_share:
            return t
    return max(s for s, _ in pairs) + 1e-6


def rates(pairs: list[tuple[float, bool]], t: float) -> tuple[float, float]:
    pos = [s for s, a in pairs if a]
    neg = [s for s, a in pairs if not a]
    fr = sum(s < t for s in pos) / len(pos) if pos else float("nan")
    rr = sum(s < t for s in neg) / len(neg) if neg else float("nan")
    return fr, rr


def cross_validate(pairs: list[tuple[float, bool]], folds: int = 5, seed: int = 0) -> dict[str, float]:
    rng = random.Random(seed)
    shuffled = pairs[:]
    rng.shuffle(shuffled)
    frs, rrs, ts = [], [], []
    for k in range(folds):
        test = shuffled[k::folds]
        train = [p for i, p in enumerate(shuffled) if i % folds != k]
        t = refuse_threshold(train)
        fr, rr = rates(test, t)
        frs.append(fr)
        rrs.append(rr)
        ts.append(t)
    return {
        "threshold (mean over folds)": sum(ts) / folds,
        "held-out false refusals": sum(frs) / folds,
        "held-out unanswerable refused": sum(rrs) / folds,
    }


def own_pairs(data: Path, sets: list[str], fast_index: bool = False) -> list[tuple[float, bool]]:
    bot = Assistant(data_dir=data / "seeds", corpus=[DEFAULT_SEEDS], backend="extractive")
    build_strong(bot, fast_index)
    print(bot.index_status().line())
    papers = bot.catalogue.papers
    items = []
    for name in sets:
        for q in load_questions(SETS[name], papers):
            if q.type in SKIP_TYPES:
                continue
            if q.answerable or q.type in NEGATIVE_TYPES:
                items.append((q.question, q.history, q.answerable))
    return scores_of(bot, items)


def scifact_pairs(data: Path) -> list[tuple[float, bool]]:
    bot = Assistant(data_dir=data / "scifact", corpus=[], auto_ingest=False, detect_filters=False)
    bot.ingest([SCIFACT / "corpus.jsonl"], progress=True)
    items = []
    for line in (SCIFACT / "queries.jsonl").read_text().splitlines():
        claim = json.loads(line)
        items.append((claim["text"], (), bool(claim.get("metadata"))))
    return scores_of(bot, items)


def report(name: str, pairs: list[tuple[float, bool]]) -> dict[str, float]:
    cv = cross_validate(pairs)
    t = refuse_threshold(pairs)
    fr, rr = rates(pairs, t)
    out = {
        "questions": len(pairs),
        "answerable": sum(a for _, a in pairs),
        **cv,
        "refuse_below (all data)": t,
        "answer_above (all data)": overrule_threshold(pairs),
        "in-sample false refusals": fr,
        "in-sample unanswerable refused": rr,
    }
    print(f"\n### {name}\n")
    for key, value in out.items():
        print(f"| {key} | {value:.3f} |" if isinstance(value, float) else f"| {key} | {value} |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-scifact", action="store_true")
    parser.add_argument("--sets", default="heldout,heldout2,seeds,offcorpus", help="our question sets")
    parser.add_argument("--fast-index", action="store_true", help="calibrate for the MiniLM index")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        report("our question sets", own_pairs(data, args.sets.split(","), args.fast_index))
        if not args.no_scifact:
            report("SciFact claims (evidence vs none)", scifact_pairs(data))
    print(f"\n({time.perf_counter() - started:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
