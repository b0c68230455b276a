"""Does the gold fact reach the model? For every answerable question with facts that the
model would answer (content and comparison routes), whether each fact is in one of the
abstracts given to the model, and whether it is in the context actually sent to it
(`generate.build_context`), for one or more context settings side by side. No model runs.

    python -m eval.context --sets heldout,heldout2,heldout3 \\
        --variant old:context_top_sentences=3,context_sentences=3 --variant wider:context_tokens=500

A variant is NAME:SETTING=VALUE,...; the store is the default configuration's (with the
EmbeddingGemma index built when it is installed), kept in ~/.cache/assistant/eval-store.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from assistant import Assistant
from assistant.answer.model_answer import build_context
from assistant.config import DEFAULT_SEEDS
from eval.harness import build_strong
from eval.metrics import fact_hit, mean
from eval.questions import SETS, load_questions

STORE = Path.home() / ".cache" / "assistant" / "eval-store"


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    name, _, rest = text.partition(":")
    overrides: dict[str, Any] = {}
    for pair in filter(None, rest.split(",")):
        key, _, value = pair.partition("=")
        overrides[key.strip()] = value.strip()
    return name, overrides


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="heldout,heldout2", help=f"question sets: {', '.join(SETS)}")
    parser.add_argument("--variant", action="append", default=[], help="NAME:SETTING=VALUE,...")
    parser.add_argument("--data-dir", type=Path, default=STORE)
    args = parser.parse_args(argv)
    variants = [parse_variant(v) for v in args.variant] or [("default", {})]

    bot = Assistant(data_dir=args.data_dir, corpus=[DEFAULT_SEEDS], backend="extractive")
    build_strong(bot)
    print(bot.index_status().line())
    papers = bot.catalogue.papers
    questions = [q for name in args.sets.split(",") for q in load_questions(SETS[name], papers)]
    plans = []
    for q in questions:
        if not q.answerable or not q.facts:
            continue
        history = [(h, "") for h in q.history]
        plan = bot.plan(q.question, history=history)
        if plan.route.kind in ("content", "comparison") and plan.verdict.answerable:
            plans.append((q, plan))
    print(f"{len(plans)} questions with facts reach the model (content / comparison routes)\n")
    print(
        "| variant | gold paper given | fact in a given abstract | fact in the context | context chars (mean) |"
    )
    print("|---|---|---|---|---|")
    for name, overrides in variants:
        settings = bot.settings.replace(**overrides)
        given, in_abstracts, in_context, chars = [], [], [], []
        for q, plan in plans:
            hits = plan.given(settings)
            context = build_context(plan.scored, hits, settings)
            given.append(1.0 if any(h.paper.id in q.gold for h in hits) else 0.0)
            abstracts = " ".join(h.paper.abstract for h in hits)
            for fact in q.facts:
                if fact_hit(abstracts, fact):
                    in_abstracts.append(1.0)
                    in_context.append(1.0 if fact_hit(context.text, fact) else 0.0)
                else:
                    in_abstracts.append(0.0)
            chars.append(len(context.text))
        print(
            f"| {name} {overrides or ''} | {mean(given):.3f} | {mean(in_abstracts):.3f} "
            f"| {mean(in_context):.3f} ({int(sum(in_context))}/{len(in_context)}) | {mean(chars):.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
