"""Running the question sets: retrieval metrics, answer metrics, SciFact."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant import Answer, Assistant
from assistant.config import DEFAULT_SEEDS
from assistant.types import Sources, TextDelta
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
        per_type[f"{q.set}/{q.type}"].append(
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
    "answered right",
    "false refusal",
    "refused right",
    "cite prec",
    "cite recall",
    "fact acc",
    "fallback",
    "sources p50 s",
    "TTFT p50 s",
    "total p50 s",
    "prompt tok",
    "n",
)


def ask_one(bot: Assistant, q: Question, backend: str, history_backend: str | None = None) -> dict[str, Any]:
    """Ask one question through `stream`; time the events; score the answer. A follow-up's
    earlier turns are asked first, as a person would have (by `history_backend`, else the
    same backend), and their answers go with the history: a follow-up's "it" may name what
    the previous answer was about. Only the last question is timed and scored."""
    history: list[tuple[str, str]] = []
    for earlier in q.history:
        history.append((earlier, bot.ask(earlier, history=history, backend=history_backend or backend).text))
    t0 = time.perf_counter()
    sources_s = first_s = None
    answer: Answer | None = None
    for event in bot.stream(q.question, history=history, backend=backend):
        now = time.perf_counter() - t0
        if isinstance(event, Sources):
            sources_s = now
        elif isinstance(event, TextDelta) and first_s is None:
            first_s = now
        elif isinstance(event, Answer):
            answer = event
    total = time.perf_counter() - t0
    assert answer is not None
    cited = [c.paper.id for c in answer.citations]
    gold = set(q.gold)
    row: dict[str, Any] = {
        "id": q.id,
        "set": q.set,
        "type": q.type,
        "question": q.question,
        "answerable": q.answerable,
        "refused": answer.refused,
        "kind": answer.kind,
        "fallback": answer.fallback,
        "text": answer.text,
        "reason": answer.reason,
        "notes": list(answer.notes),
        "cited": cited,
        "gold": sorted(gold),
        "sources_s": sources_s if sources_s is not None else total,
        "first_s": first_s if first_s is not None else total,
        "total_s": total,
        "prompt_tokens": answer.prompt_tokens,
        "evidence": answer.evidence,
        "model_text": answer.model_text,
    }
    if q.answerable:
        right = len(set(cited) & gold)
        row["answered_right"] = float(not answer.refused and right > 0)
        row["cite_prec"] = right / len(cited) if cited else None
        row["cite_recall"] = right / len(gold)
        row["fact_acc"] = (
            mean([1.0 if fact_hit(answer.text, f) else 0.0 for f in q.facts]) if q.facts else None
        )
    return row


def answer_rows(
    bot: Assistant, questions: list[Question], backend: str, log: Any = None
) -> list[dict[str, Any]]:
    rows = []
    for i, q in enumerate(questions, 1):
        row = ask_one(bot, q, backend)
        rows.append(row)
        if log is not None:
            mark = (
                "R"
                if row["refused"]
                else ("✓" if row.get("answered_right") else ("·" if not q.answerable else "✗"))
            )
            log(f"[{i}/{len(questions)}] {mark} {q.id} {row['total_s']:.1f}s {q.question[:70]}")
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]

    def m(key: str, among: list[dict[str, Any]]) -> float:
        return mean([r[key] for r in among if r.get(key) is not None])

    return {
        "answered right": m("answered_right", ans),
        "false refusal": mean([1.0 if r["refused"] else 0.0 for r in ans]),
        "refused right": mean([1.0 if r["refused"] else 0.0 for r in una]),
        "cite prec": m("cite_prec", [r for r in ans if not r["refused"]]),
        "cite recall": m("cite_recall", ans),
        "fact acc": m("fact_acc", ans),
        "fallback": mean([1.0 if r["fallback"] else 0.0 for r in ans]),
        "sources p50 s": percentile([r["sources_s"] for r in rows], 0.5),
        "TTFT p50 s": percentile([r["first_s"] for r in rows], 0.5),
        "total p50 s": percentile([r["total_s"] for r in rows], 0.5),
        "prompt tok": mean([r["prompt_tokens"] for r in rows if r["prompt_tokens"]]),
        "n": len(rows),
    }


def answer_table(rows: list[dict[str, Any]], title: str) -> Table:
    """One row per question type, then all; the weakest answerable type is named in the title."""
    table = Table(title, ANSWER_METRICS)
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_type[f"{r['set']}/{r['type']}"].append(r)
    for name in sorted(by_type):
        table.rows[name] = summarise(by_type[name])
    table.rows["all"] = summarise(rows)
    return table


def weakest(table: Table) -> str:
    """The kind with the lowest success rate: answered right for answerable kinds, refused
    right for the others (an off-corpus kind refused 16% of the time is the weakest, not a
    paraphrase kind answered right 93% of the time)."""
    scored = []
    for kind, row in table.rows.items():
        if kind == "all":
            continue
        for metric in ("answered right", "refused right"):
            value = row[metric]
            if value == value:  # not NaN
                scored.append((value, f"{kind} ({metric} {value:.3f})"))
                break
    return min(scored)[1] if scored else "–"


def scifact_tables(
    data_root: Path, split: str = "test", fast_index: bool = False
) -> tuple[Table, dict[str, float]]:
    """SciFact through the normal ingestion path; hybrid against dense-only and BM25-only.
    With embedder=auto the strong index is built too (the default configuration as it
    answers once the build is done) unless `fast_index`."""
    sf = load_scifact(split)
    data = data_root / "scifact"
    bot = Assistant(data_dir=data, corpus=[], auto_ingest=False, detect_filters=False)
    t0 = time.perf_counter()
    report = bot.ingest([sf.corpus], progress=True)
    ingest_s = time.perf_counter() - t0
    strong_s = build_strong(bot, fast_index, progress=_every_minute())
    line = bot.index_status().line()
    papers = bot.catalogue.papers
    by_external = {p.id: p.external_id for p in papers}
    systems = {
        "hybrid (default)": {},
        "dense only": {"lexical_weight": 0.0},
        "BM25 only": {"dense_weight": 0.0},
    }
    table = Table(
        f"SciFact {split} ({len(sf.queries)} claims, {len(papers)} abstracts; {line})",
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
    facts = {"ingest_s": ingest_s, "strong_s": strong_s, "added": report.added, "papers": len(papers)}
    return table, facts


def build_strong(
    bot: Assistant, fast_index: bool = False, progress: Callable[[int, int], None] | None = None
) -> float:
    """With embedder=auto, build the strong index (the default configuration as it answers
    once the build is done) unless `fast_index`; the seconds it took (0: nothing built)."""
    if fast_index or bot.strong is None or bot.index_status().problem is not None:
        return 0.0
    t0 = time.perf_counter()
    bot.build_index(progress=progress)
    return time.perf_counter() - t0


def seeds_bot(data_dir: Path, fast_index: bool = False) -> Assistant:
    """The seeds in a fresh store under `data_dir`, answered extractively, with the strong
    index built unless `fast_index` (the default configuration as it answers once built);
    prints which index answers."""
    bot = Assistant(data_dir=data_dir, corpus=[DEFAULT_SEEDS], backend="extractive")
    build_strong(bot, fast_index)
    print(bot.index_status().line(), flush=True)
    return bot


def _every_minute() -> Callable[[int, int], None]:
    """A build progress printer: at most one line a minute, and the last one."""
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if done == total or now - last[0] >= 60:
            last[0] = now
            print(f"strong index: {done:,}/{total:,}", flush=True)

    return report
