"""Running the question sets: retrieval metrics, answer metrics, SciFact."""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant import Answer, Assistant
from eval.metrics import fact_hit, mean, mrr_at, ndcg_at, percentile, recall_at
from eval.questions import Question, load_scifact

RETRIEVAL_METRICS = ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10")


@dataclass
class Table:
    """Rows of metric values keyed by a group name (question type, system, model)."""

    title: str
    columns: tuple[str, ...]
    rows: dict[str, dict[str, float]] = field(default_factory=dict)

    def markdown(self) -> str:
        head = "| | " + " | ".join(self.columns) + " |"
        sep = "|---" * (len(self.columns) + 1) + "|"
        lines = [f"### {self.title}", "", head, sep]
        for name, values in self.rows.items():
            cells = [_fmt(values.get(c)) for c in self.columns]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def _fmt(value: float | None) -> str:
    if value is None or value != value:
        return "–"
    return f"{value:.3f}" if abs(value) < 100 else f"{value:.0f}"


def retrieval_table(bot: Assistant, questions: list[Question], title: str, k: int = 10) -> Table:
    per_type: dict[str, list[dict[str, float]]] = defaultdict(list)
    latencies: list[float] = []
    for q in questions:
        if not q.answerable:
            continue
        t0 = time.perf_counter()
        ranked = [h.paper.id for h in bot.search(q.retrieval_text, k=k)]
        latencies.append(time.perf_counter() - t0)
        gold = set(q.gold)
        per_type[q.type].append(
            {
                "R@1": recall_at(ranked, gold, 1),
                "R@5": recall_at(ranked, gold, 5),
                "R@10": recall_at(ranked, gold, 10),
                "MRR@10": mrr_at(ranked, gold, 10),
                "nDCG@10": ndcg_at(ranked, gold, 10),
            }
        )
    table = Table(title, (*RETRIEVAL_METRICS, "n", "p50 ms", "p95 ms"))
    everything = [row for rows in per_type.values() for row in rows]
    for name, rows in [*sorted(per_type.items()), ("all", everything)]:
        table.rows[name] = {m: mean([r[m] for r in rows]) for m in RETRIEVAL_METRICS}
        table.rows[name]["n"] = len(rows)
    table.rows["all"]["p50 ms"] = percentile(latencies, 0.5) * 1000
    table.rows["all"]["p95 ms"] = percentile(latencies, 0.95) * 1000
    return table


ANSWER_METRICS = (
    "fact acc",
    "cite prec",
    "cite recall",
    "sent support",
    "refusal acc",
    "false refusal",
    "fallback",
    "TTFT p50 s",
    "total p50 s",
    "total p95 s",
)


def answer_row(bot: Assistant, questions: list[Question], backend: str, **overrides: Any) -> dict[str, float]:
    """Ask every question through `stream` and score the answers."""
    facts, precision, recall, support, ttft, total = [], [], [], [], [], []
    refusal_right, false_refusal, fallbacks = [], [], []
    for q in questions:
        history = [(h, "") for h in q.history]
        t0 = time.perf_counter()
        first = None
        answer: Answer | None = None
        for item in bot.stream(q.question, history=history, backend=backend):
            if isinstance(item, Answer):
                answer = item
            elif first is None:
                first = time.perf_counter() - t0
        total.append(time.perf_counter() - t0)
        ttft.append(first if first is not None else total[-1])
        assert answer is not None
        cited = {c.paper.id for c in answer.citations}
        if not q.answerable:
            refusal_right.append(1.0 if answer.refused else 0.0)
            continue
        false_refusal.append(1.0 if answer.refused else 0.0)
        fallbacks.append(1.0 if answer.fallback else 0.0)
        gold = set(q.gold)
        precision.append(len(cited & gold) / len(cited) if cited else 0.0)
        recall.append(len(cited & gold) / len(gold))
        if q.facts:
            facts.append(mean([1.0 if fact_hit(answer.text, f) else 0.0 for f in q.facts]))
        if answer.sentences:
            support.append(mean([1.0 if s.supported else 0.0 for s in answer.sentences]))
    return {
        "fact acc": mean(facts),
        "cite prec": mean(precision),
        "cite recall": mean(recall),
        "sent support": mean(support),
        "refusal acc": mean(refusal_right),
        "false refusal": mean(false_refusal),
        "fallback": mean(fallbacks),
        "TTFT p50 s": percentile(ttft, 0.5),
        "total p50 s": percentile(total, 0.5),
        "total p95 s": percentile(total, 0.95),
    }


def scifact_tables(data_root: Path, split: str = "test") -> tuple[Table, dict[str, float]]:
    """SciFact through the normal ingestion path; hybrid against dense-only and BM25-only."""
    sf = load_scifact(split)
    data = data_root / "scifact"
    bot = Assistant(data_dir=data, corpus=[], auto_ingest=False, detect_filters=False)
    t0 = time.perf_counter()
    report = bot.ingest([sf.corpus], progress=True)
    ingest_s = time.perf_counter() - t0
    papers = bot.catalogue.papers
    by_external = {p.id: p.external_id for p in papers}
    systems = {
        "hybrid (default)": {},
        "dense only": {"lexical_weight": 0.0},
        "BM25 only": {"dense_weight": 0.0},
    }
    table = Table(
        f"SciFact {split} ({len(sf.queries)} claims, {len(papers)} abstracts)",
        ("nDCG@10", "R@100", "MRR@10", "p50 ms"),
    )
    for name, overrides in systems.items():
        system = Assistant(
            data_dir=data, corpus=[], auto_ingest=False, detect_filters=False, candidates=100, **overrides
        )
        ndcg, r100, mrr, lat = [], [], [], []
        for qid, text in sf.queries.items():
            s0 = time.perf_counter()
            hits = system.search(text, k=100)
            lat.append(time.perf_counter() - s0)
            ranked = [by_external[h.paper.id] or "" for h in hits]
            gold = sf.qrels[qid]
            ndcg.append(ndcg_at(ranked, gold, 10))
            r100.append(recall_at(ranked, gold, 100))
            mrr.append(mrr_at(ranked, gold, 10))
        table.rows[name] = {
            "nDCG@10": mean(ndcg),
            "R@100": mean(r100),
            "MRR@10": mean(mrr),
            "p50 ms": percentile(lat, 0.5) * 1000,
        }
    facts = {"ingest_s": ingest_s, "added": report.added, "papers": len(papers)}
    return table, facts
