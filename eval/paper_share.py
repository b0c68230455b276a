"""Extractive answers at several values of one setting (`answer_paper_share` unless
told), in one run: how many answers cite a right abstract, and what share of the cited
papers are right ones.

    python -m eval.paper_share --sets heldout,heldout2,seeds --shares 0.6,0.85
    python -m eval.paper_share --setting answer_sentence_share --shares 0.7,0.8,0.9

The strong index is built once (as the app does), then each share answers every answerable,
non-catalogue question of each set with the extractive backend.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from assistant import Assistant
from assistant.config import DEFAULT_SEEDS
from eval.harness import ask_one, build_strong, summarise
from eval.questions import SETS, load_questions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="heldout,heldout2,seeds", help=f"question sets: {', '.join(SETS)}")
    parser.add_argument("--setting", default="answer_paper_share", help="the setting to vary")
    parser.add_argument("--shares", default="0.6,0.85", help="comma-separated values of the setting")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        build_strong(Assistant(data_dir=data, corpus=[DEFAULT_SEEDS]))
        print(
            f"| {args.setting} | set | n | answered right | cite precision | fact accuracy |\n|---|---|---|---|---|---|"
        )
        for share in (int(x) if x.strip().isdigit() else float(x) for x in args.shares.split(",")):
            bot = Assistant(data_dir=data, corpus=[DEFAULT_SEEDS], **{args.setting: share})
            papers = bot.catalogue.papers
            for name in args.sets.split(","):
                questions = [
                    q for q in load_questions(SETS[name], papers) if q.answerable and q.type != "catalogue"
                ]
                s = summarise([ask_one(bot, q, "extractive") for q in questions])
                print(
                    f"| {share} | {name} | {len(questions)} | {s['answered right']:.3f} | "
                    f"{s['cite prec']:.3f} | {s['fact acc']:.3f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
