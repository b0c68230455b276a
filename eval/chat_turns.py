"""Retrieval when each question is the next turn of a chat, not the first.

    python -m eval.chat_turns                       # every set but the follow-up questions
    python -m eval.chat_turns --sets heldout12 --fast-index

In the app every question after the first comes with the chat's history; `eval.run` gives
history only to follow-up questions, so a question misread as a follow-up of the previous
turn never shows there. Here each answerable question that has no history of its own is
planned twice (no model): alone, and as the turn after the question before it in its set,
whose answer cited a paper. Printed per set: how many were read as follow-ups, and the right
paper first (R@1) alone and as the next turn.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from itertools import pairwise
from pathlib import Path

from eval.harness import seeds_bot
from eval.questions import SETS, load_questions

CATALOGUE_TYPES = ("catalogue", "metadata")
PREVIOUS_ANSWER = "The paper reports this result [1]."  # an answer that cites a paper


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(s for s in SETS if s != "offcorpus"))
    parser.add_argument("--fast-index", action="store_true", help="skip building the EmbeddingGemma index")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        bot = seeds_bot(Path(tmp) / "seeds", args.fast_index)
        print("| set | questions | read as follow-ups | right paper first, alone | as the next turn |")
        print("|---|---|---|---|---|")
        totals = [0, 0, 0, 0]
        for name in args.sets.split(","):
            questions = load_questions(SETS[name])
            counts = [0, 0, 0, 0]
            for previous, q in pairwise(questions):
                if q.history or not q.answerable or not q.gold or q.type in CATALOGUE_TYPES:
                    continue
                alone = bot.plan(q.question)
                turn = bot.plan(q.question, history=[(previous.question, PREVIOUS_ANSWER)])
                first = [p.hits[0].paper.id in q.gold if p.hits else False for p in (alone, turn)]
                for i, value in enumerate((1, turn.standalone.rewritten, *first)):
                    counts[i] += int(value)
            totals = [t + c for t, c in zip(totals, counts)]
            print(_row(name, counts))
        print(_row("**all**", totals))
        print(f"\n({time.perf_counter() - started:.0f}s)")
    return 0


def _row(name: str, c: list[int]) -> str:
    n = max(c[0], 1)
    return f"| {name} | {c[0]} | {c[1]} | {c[2] / n:.3f} | {c[3] / n:.3f} |"


if __name__ == "__main__":
    raise SystemExit(main())
