"""The question sets: our seed questions and SciFact."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED_QUESTIONS = HERE / "questions" / "seeds.jsonl"
SCIFACT = HERE.parent.parent / "shared" / "benchmarks" / "scifact"


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    question: str
    gold: tuple[str, ...]
    facts: tuple[str, ...] = ()
    history: tuple[str, ...] = ()
    near_miss: str | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.gold)

    @property
    def retrieval_text(self) -> str:
        """What retrieval sees without an LLM: a follow-up borrows the previous question."""
        return f"{self.history[-1]} {self.question}" if self.history else self.question


def load_questions(path: Path = SEED_QUESTIONS) -> list[Question]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(
                Question(
                    id=d["id"],
                    type=d["type"],
                    question=d["question"],
                    gold=tuple(d.get("gold", ())),
                    facts=tuple(d.get("facts", ())),
                    history=tuple(d.get("history", ())),
                    near_miss=d.get("near_miss"),
                )
            )
    return out


@dataclass
class SciFact:
    corpus: Path
    queries: dict[str, str]
    qrels: dict[str, set[str]] = field(default_factory=dict)


def load_scifact(split: str = "test", root: Path = SCIFACT) -> SciFact:
    qrels: dict[str, set[str]] = {}
    with (root / "qrels" / f"{split}.tsv").open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            qrels.setdefault(row["query-id"], set()).add(row["corpus-id"])
    queries = {}
    for line in (root / "queries.jsonl").read_text().splitlines():
        d = json.loads(line)
        if d["_id"] in qrels:
            queries[d["_id"]] = d["text"]
    return SciFact(root / "corpus.jsonl", queries, qrels)
