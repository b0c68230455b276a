"""Time to the sources, to the first model token and to the whole answer, against two
baselines measured in the same run on the same questions:

- the extractive backend's whole answer (the sources must come within 1.5× of it);
- the raw model's prompt processing of the very same prompt, from an empty cache
  (the first token must come within 1.2× of it).

    python -m benchmarks.answer_latency [--questions 8]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from assistant import Assistant
from assistant.answer.llms import chat_model
from assistant.answer.model_answer import answer_messages, build_context
from assistant.config import DEFAULT_SEEDS
from assistant.types import Answer, Sources, TextDelta
from eval.questions import SETS, load_questions


def timeline(bot: Assistant, question: str, backend: str) -> dict[str, float]:
    t0 = time.perf_counter()
    out: dict[str, float] = {}
    for event in bot.stream(question, backend=backend):
        now = time.perf_counter() - t0
        if isinstance(event, Sources):
            out["sources"] = now
        elif isinstance(event, TextDelta) and "first" not in out:
            out["first"] = now
        elif isinstance(event, Answer):
            out["total"] = now
            out["tokens"] = event.prompt_tokens
            out["model"] = 1.0 if event.model_text else 0.0
    return out


def raw_prompt_seconds(bot: Assistant, question: str) -> tuple[float, int]:
    """The model's prompt processing of the same prompt, from an empty KV cache."""
    plan = bot.plan(question)
    s = bot.settings
    context = build_context(plan.scored, plan.given(s), s)
    messages = answer_messages(plan.standalone.question, context, s)
    model = chat_model(s)
    llm = model._load()  # type: ignore[attr-defined]
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    tokens = llm.tokenize((text + "<|im_start|>assistant\n").encode(), add_bos=False, special=True)
    llm.reset()
    t0 = time.perf_counter()
    llm.eval(tokens)
    return time.perf_counter() - t0, len(tokens)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=8)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        bot = Assistant(data_dir=Path(tmp) / "data", corpus=[DEFAULT_SEEDS])
        questions = [
            q.question
            for q in load_questions(SETS["heldout"], bot.catalogue.papers)
            if q.type in ("paraphrase", "comparison") and q.answerable
        ][: args.questions]
        bot.ask(questions[0])  # load the model and the encoder
        rows = []
        for q in questions:
            extractive = timeline(bot, q, "extractive")
            default = timeline(bot, q, "llama-cpp")
            raw, tokens = raw_prompt_seconds(bot, q)
            bot.ask(q)  # leave the cache as a real session would (system prompt in it)
            rows.append((q, extractive, default, raw, tokens))
    print(
        "| question | extractive whole answer | sources | first token | raw prompt processing | answer total | prompt tokens |"
    )
    print("|---|---|---|---|---|---|---|")
    for q, ex, de, raw, tokens in rows:
        first = f"{de['first']:.2f} s" if de.get("model") else "– (no model call)"
        print(
            f"| {q[:50]}… | {ex['total']:.2f} s | {de['sources']:.2f} s | {first} | {raw:.2f} s | "
            f"{de['total']:.1f} s | {tokens} |"
        )
    used = [r for r in rows if r[2].get("model")]
    src = statistics.median(r[2]["sources"] / r[1]["total"] for r in rows)
    print(
        f"\nsources / extractive whole answer, median over {len(rows)} questions: {src:.2f}× (target ≤ 1.5×)"
    )
    if used:
        first = statistics.median(r[2]["first"] / r[3] for r in used)
        print(
            f"first token / raw prompt processing, median over {len(used)} model answers: {first:.2f}× "
            "(target ≤ 1.2×; below 1 because the system prompt stays in the model's cache)"
        )
        print(f"prompt tokens per answer, median: {statistics.median(r[4] for r in used):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
