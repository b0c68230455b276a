"""Score other settings on recorded model answers, without running the model.

The local model answers at temperature 0, so the same prompt gives the same text. The
`replay` backend returns, for each question, the model text an earlier `eval.run`
recorded (its answers-*.jsonl); every setting that does not change the prompt (the
citation check, refusal thresholds, detail rules, `echo_margin`) can then be scored on
every question in about two minutes instead of an hour. A question that reaches the
model now but has no recording is counted; its answer is a refusal, so look at the
count before trusting a figure. A recording made under another prompt (before
`context_order` became `closest-first`, say) still scores the checks exactly, but on what
that prompt made the model say, not on what the model says now.

    python -m eval.replay eval/reports/answers-llama-cpp-qwen2.5-coder-1.5b.jsonl \\
        --sets heldout,heldout2 --set support_threshold=0.55
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assistant import Assistant
from assistant.answer.llms import Message
from assistant.answer.prompts import RELEVANCE_SYSTEM
from assistant.answerers import register
from assistant.config import DEFAULT_SEEDS, Settings
from assistant.types import REFUSAL
from eval.harness import answer_table, ask_one, build_strong
from eval.questions import SETS, load_questions

BACKEND = "replay"


class Recorded:
    """A chat model that says what the recorded model said for the current question."""

    name = BACKEND

    def __init__(self, texts: dict[str, str | None]) -> None:
        self.texts = texts
        self.current = ""
        self.missing: list[str] = []
        self.last_prompt_tokens = 0

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        if messages[0]["content"] == RELEVANCE_SYSTEM:  # not recorded: never a no
            yield "yes"
            return
        text = self.texts.get(self.current)
        if text is None:
            self.missing.append(self.current)
            text = REFUSAL
        for i in range(0, len(text), 7):
            yield text[i : i + 7]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recorded", type=Path, help="an answers-*.jsonl written by eval.run for a model")
    parser.add_argument("--sets", default="heldout,seeds", help=f"question sets: {', '.join(SETS)}")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting")
    parser.add_argument("--fast-index", action="store_true", help="answer from the MiniLM index")
    parser.add_argument("--out", type=Path, help="write the replayed answers here (JSON lines)")
    args = parser.parse_args(argv)
    rows_before = [json.loads(line) for line in args.recorded.read_text(encoding="utf-8").splitlines()]
    model = Recorded({r["id"]: r.get("model_text") for r in rows_before})
    register(BACKEND, lambda settings: _same(model, settings))
    before = {r["id"]: r for r in rows_before}
    overrides: dict[str, Any] = dict(kv.split("=", 1) for kv in args.set)
    with tempfile.TemporaryDirectory() as tmp:
        bot = Assistant(data_dir=Path(tmp), corpus=[DEFAULT_SEEDS], backend=BACKEND, **overrides)
        build_strong(bot, args.fast_index)  # the default configuration, as eval.run records it
        papers = bot.catalogue.papers
        questions = [q for name in args.sets.split(",") for q in load_questions(SETS[name], papers)]
        rows = []
        for q in questions:
            model.current = q.id
            rows.append(ask_one(bot, q, BACKEND, history_backend="extractive"))  # earlier turns: not recorded
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    changed = [
        r["id"]
        for r in rows
        if r["id"] in before
        and (r["refused"], r["cited"]) != (before[r["id"]]["refused"], before[r["id"]]["cited"])
    ]
    print(
        answer_table(
            rows, f"Answers replayed from {args.recorded.name} with {args.set or 'the defaults'}"
        ).markdown()
    )
    print(f"\nrefusal or citations changed against the recording: {len(changed)} {changed}")
    print(
        f"reached the model without a recording (counted as refusals): {len(model.missing)} {model.missing}"
    )
    return 0


def _same(model: Recorded, settings: Settings) -> Recorded:
    return model


if __name__ == "__main__":
    sys.exit(main())
