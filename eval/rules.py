"""The record of the hand-written rules: how often each detail rule and each route fires on
every question set and on SciFact's claims, and how often a firing is wrong.

    python -m eval.rules                      # heldout, heldout2, heldout3, seeds, offcorpus + SciFact
    python -m eval.rules --sets heldout3 --no-scifact --fast-index

Two views of the detail rules ("What learning rate does X use?" is refused when the closest
abstract reports no learning rate):

- on the gold abstract, retrieval aside: a firing on an answerable question is wrong when
  the rule would refuse even with the right paper first; on a near-miss it is right when it
  refuses on the paper the question is about;
- through the whole pipeline (default configuration): answerable questions refused by a
  detail or name rule (wrong), near-misses refused by one (right).

Routes: a catalogue question (set type `catalogue` or `metadata`) is answered from the
listing or as several papers, never from one abstract's content; a paraphrase, near-miss or
off-corpus question is never answered from the listing. (Follow-ups may be either.)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from assistant.answer.asked import asked_kind, gives, names_a_kind
from assistant.answer.evidence import DETAILS, detail_reported, requested_details
from assistant.index.lexical import LexicalIndex
from assistant.search.retrieve import unknown_names
from assistant.text import split_sentences
from assistant.types import Paper
from eval.harness import seeds_bot
from eval.questions import SCIFACT, SETS, Question, load_questions

CATALOGUE_TYPES = ("catalogue", "metadata")


def scifact_claims(root: Path = SCIFACT) -> list[tuple[str, list[str]]]:
    """Every claim with relevance judgments (train and test), with its relevant abstracts."""
    relevant: dict[str, set[str]] = defaultdict(set)
    for split in ("train", "test"):
        for line in (root / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]:
            query, doc, *_ = line.split("\t")
            relevant[query].add(doc)
    wanted = {d for docs in relevant.values() for d in docs}
    texts = {}
    with (root / "corpus.jsonl").open() as f:
        for line in f:
            d = json.loads(line)
            if d["_id"] in wanted:
                texts[d["_id"]] = d["text"]
    claims = {}
    for line in (root / "queries.jsonl").read_text().splitlines():
        d = json.loads(line)
        if d["_id"] in relevant:
            claims[d["_id"]] = d["text"]
    return [
        (claims[q], [texts[d] for d in docs if d in texts]) for q, docs in relevant.items() if q in claims
    ]


def scifact_papers(root: Path = SCIFACT) -> list[Paper]:
    """The SciFact corpus as papers (title and abstract), for its word index."""
    papers = []
    with (root / "corpus.jsonl").open() as f:
        for line in f:
            d = json.loads(line)
            papers.append(Paper(id=d["_id"], label=d["_id"], abstract=d["text"], title=d.get("title")))
    return papers


def _misrouted(q: Question, kind: str) -> bool:
    if q.type in CATALOGUE_TYPES:
        return kind == "content"
    return q.type in ("paraphrase", "near_miss", "offcorpus") and kind == "catalogue"


def on_gold(questions: list[Question], abstracts: dict[str, str]) -> dict[str, Counter[str]]:
    """Per detail rule: fires, and the firings' outcome on the gold (or closest) abstract."""
    record: dict[str, Counter[str]] = {d.name: Counter() for d in DETAILS}
    for q in questions:
        for detail in requested_details(q.question):
            c = record[detail.name]
            if q.answerable:
                c["fires on answerable"] += 1
                if not any(detail_reported(q.question, detail, abstracts[g]) for g in q.gold):
                    c["refuses answerable (wrong)"] += 1
                    c[f"wrong: {q.set}/{q.id}"] += 1
            elif q.closest:
                c["fires on near-miss"] += 1
                if not detail_reported(q.question, detail, abstracts[q.closest]):
                    c["refuses near-miss (right)"] += 1
            else:
                c["fires on other unanswerable"] += 1
    return record


def _as_written(fact: str, text: str) -> str:
    """A gold fact as the abstract writes it (facts are matched ignoring case: "mnist")."""
    at = text.casefold().find(fact.casefold())
    return text[at : at + len(fact)] if at >= 0 else fact


def asked_on_gold(questions: list[Question], abstracts: dict[str, str]) -> dict[str, Counter[str]]:
    """Per kind `asked_kind` reads from a question (a figure, names): how often it fires, and
    whether a right answer gives that kind (a gold fact does: else the rule would refuse a
    right answer), or, on a near-miss, whether the abstract's sentences give it at all."""
    record: dict[str, Counter[str]] = {"figure": Counter(), "name": Counter()}
    for q in questions:
        kind = asked_kind(q.question)
        if kind is None:
            continue
        c = record[kind]
        if q.answerable and q.facts:
            c["fires on answerable"] += 1
            text = " ".join(abstracts[g] for g in q.gold)
            facts = [_as_written(alt, text) for fact in q.facts for alt in fact.split("|")]
            if not any(gives(kind, f"The answer is {fact}.", q.question, text) for fact in facts):
                c["right answer gives no such (wrong)"] += 1
                c[f"wrong: {q.set}/{q.id}"] += 1
        elif q.closest:
            c["fires on near-miss"] += 1
            sentences = split_sentences(abstracts[q.closest])
            if kind == "name":
                stated = any(names_a_kind(t, q.question) for t in sentences)
            else:
                stated = any(gives(kind, t, q.question, t) for t in sentences)
            c["near-miss abstract gives one somewhere"] += stated
        elif not q.answerable:
            c["fires on other unanswerable"] += 1
    return record


def _print_record(
    label: str, record: dict[str, Counter[str]], columns: list[str], total: bool = False
) -> None:
    """A record as a table: one row per rule, its counts, the questions it was wrong on."""
    print(f"| {label} | " + " | ".join(columns) + " | wrong on |")
    print("|---|" + "---|" * (len(columns) + 1))
    for name, c in record.items():
        wrong = ", ".join(k.split(": ", 1)[1] for k in c if k.startswith("wrong: "))
        print(f"| {name} | " + " | ".join(str(c[col]) for col in columns) + f" | {wrong} |")
    if total:
        summed = sum(record.values(), Counter())
        print("| **all** | " + " | ".join(str(summed[col]) for col in columns) + " | |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--no-scifact", action="store_true")
    parser.add_argument("--fast-index", action="store_true", help="skip building the EmbeddingGemma index")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        bot = seeds_bot(Path(tmp) / "seeds", args.fast_index)
        abstracts = {p.id: p.abstract for p in bot.catalogue.papers}
        questions = [q for name in args.sets.split(",") for q in load_questions(SETS[name])]

        print("\n## Detail rules on the gold abstract (retrieval aside)\n")
        record = on_gold(questions, abstracts)
        _print_record(
            "rule",
            record,
            [
                "fires on answerable",
                "refuses answerable (wrong)",
                "fires on near-miss",
                "refuses near-miss (right)",
                "fires on other unanswerable",
            ],
            total=True,
        )

        print("\n## What a question asks for by its head noun (`asked.asked_kind`), on the gold abstract\n")
        _print_record(
            "kind",
            asked_on_gold(questions, abstracts),
            [
                "fires on answerable",
                "right answer gives no such (wrong)",
                "fires on near-miss",
                "near-miss abstract gives one somewhere",
                "fires on other unanswerable",
            ],
        )

        if not args.no_scifact:
            claims = scifact_claims()
            kinds = Counter(k for claim, _ in claims if (k := asked_kind(claim)))
            print(f"\nSciFact claims read as asking for a kind (`asked_kind`): {dict(kinds) or 0}")
            fired = wrong = 0
            for claim, docs in claims:
                for detail in requested_details(claim):
                    fired += 1
                    wrong += not any(detail_reported(claim, detail, d) for d in docs)
            print(
                f"\nSciFact claims with judgments (train + test): {len(claims)}; detail rules fire on "
                f"{fired}, refuse with a relevant abstract given: {wrong}"
            )
            lexical = LexicalIndex.build(scifact_papers())
            unknown = [(claim, u) for claim, _ in claims if (u := unknown_names(claim, lexical))]
            print(
                f"The unknown-name rule finds a name no SciFact abstract mentions in {len(unknown)} "
                "claims (refused only when the evidence is below answer_above), e.g. "
                + "; ".join(f"{', '.join(u)} ({claim[:60]})" for claim, u in unknown[:5])
            )

        print("\n## Through the pipeline (default configuration, extractive planning)\n")
        by_set: dict[str, Counter[str]] = defaultdict(Counter)
        routes: dict[str, Counter[str]] = defaultdict(Counter)
        examples: list[str] = []
        for q in questions:
            plan = bot.plan(q.question, history=[(h, "") for h in q.history] or None)
            c = by_set[q.set]
            rule = plan.verdict.missing is not None
            if q.answerable:
                c["answerable"] += 1
                if rule:
                    c["answerable refused by a rule (wrong)"] += 1
                    examples.append(f"{q.set}/{q.id}: {q.question} -> {plan.verdict.reason}")
            elif q.closest:
                c["near-miss"] += 1
                c["near-miss refused by a rule"] += rule
                c["near-miss refused"] += not plan.verdict.answerable
            routes[q.type or "untyped"][plan.route.kind] += 1
            if _misrouted(q, plan.route.kind):
                c["route wrong"] += 1
                examples.append(f"{q.set}/{q.id} [{q.type}] routed {plan.route.kind}: {q.question}")
        columns = [
            "answerable",
            "answerable refused by a rule (wrong)",
            "near-miss",
            "near-miss refused by a rule",
            "near-miss refused",
            "route wrong",
        ]
        print("| set | " + " | ".join(columns) + " |")
        print("|---|" + "---|" * len(columns))
        for name, c in by_set.items():
            print(f"| {name} | " + " | ".join(str(c[col]) for col in columns) + " |")
        print(
            "\nRoutes by question type: "
            + "; ".join(
                f"{t}: " + ", ".join(f"{k} {n}" for k, n in sorted(r.items()))
                for t, r in sorted(routes.items())
            )
        )
        print("\nWrong firings and wrong routes:")
        for line in examples:
            print(" -", line)
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
