"""`make eval`: retrieval and answer quality on our seed questions, and SciFact.

    python -m eval.run                      # retrieval (seeds + SciFact) and extractive answers
    python -m eval.run --models qwen2.5-coder-1.5b,qwen2.5-coder-0.5b --answer-set subset

Prints one table per set, writes eval/reports/report.md and report.png, exits
non-zero if the run itself failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from assistant import Assistant
from assistant.config import DEFAULT_SEEDS
from eval.harness import ANSWER_METRICS, Table, answer_row, retrieval_table, scifact_tables
from eval.questions import SCIFACT, load_questions

REPORTS = Path(__file__).resolve().parent / "reports"

# A fixed, stratified subset for LLM answer runs (an LLM answer takes 5-30 s on 2 cores).
SUBSET = [
    "p01",
    "p03",
    "p09",
    "p14",
    "p20",
    "p26",
    "p33",
    "p40",
    "p47",
    "p53",
    "p60",
    "p66",
    "a01",
    "a03",
    "a04",
    "a08",
    "a11",
    "m01",
    "m02",
    "d01",
    "d03",
    "d04",
    "f01",
    "f03",
    "u01",
    "u02",
    "u03",
    "u04",
    "u06",
    "u08",
]


def chart(tables: list[Table], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(tables), 1, figsize=(11, 3.6 * len(tables)), squeeze=False)
    for ax, table in zip(axes[:, 0], tables):
        metrics = [c for c in table.columns if "ms" not in c and " s" not in c and c != "n"]
        names = list(table.rows)
        width = 0.8 / max(len(names), 1)
        for i, name in enumerate(names):
            values = [table.rows[name].get(m, float("nan")) for m in metrics]
            ax.bar([x + i * width for x in range(len(metrics))], values, width, label=name)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(metrics))], metrics)
        ax.set_ylim(0, 1.05)
        ax.set_title(table.title)
        ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="", help="comma-separated llama-cpp models to answer with")
    parser.add_argument("--answer-set", choices=("subset", "all"), default="subset")
    parser.add_argument("--no-scifact", action="store_true")
    parser.add_argument("--out", type=Path, default=REPORTS)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tables: list[Table] = []
    questions = load_questions()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        systems = {
            "hybrid (default)": {},
            "dense only": {"lexical_weight": 0.0},
            "BM25 only": {"dense_weight": 0.0},
        }
        seeded = Assistant(data_dir=data / "seeds", corpus=[DEFAULT_SEEDS], backend="extractive")
        seeded.stats()
        for name, overrides in systems.items():
            bot = Assistant(
                data_dir=data / "seeds", corpus=[DEFAULT_SEEDS], backend="extractive", **overrides
            )
            table = retrieval_table(bot, questions, f"Seed questions, retrieval: {name}")
            tables.append(table)
            print(table.markdown(), "\n", flush=True)
        overview = Table("Seed questions, retrieval (all types)", tables[0].columns)
        for name, table in zip(systems, tables):
            overview.rows[name] = table.rows["all"]
        tables.append(overview)

        chosen = questions if args.answer_set == "all" else [q for q in questions if q.id in SUBSET]
        answers = Table(
            f"Seed questions, answers ({len(chosen)} questions, {args.answer_set})", ANSWER_METRICS
        )
        answers.rows["extractive"] = answer_row(seeded, chosen, "extractive")
        print(f"answers: extractive done ({time.perf_counter() - started:.0f}s)", flush=True)
        for model in [m for m in args.models.split(",") if m]:
            bot = Assistant(data_dir=data / "seeds", corpus=[DEFAULT_SEEDS], llm_model=model)
            answers.rows[f"llama-cpp {model}"] = answer_row(bot, chosen, "llama-cpp")
            print(f"answers: {model} done ({time.perf_counter() - started:.0f}s)", flush=True)
        tables.append(answers)
        print(answers.markdown(), "\n")

        if not args.no_scifact and (SCIFACT / "corpus.jsonl").exists():
            scifact, facts = scifact_tables(data)
            tables.append(scifact)
            print(scifact.markdown())
            print(
                f"SciFact ingestion: {facts['added']} abstracts in {facts['ingest_s']:.0f}s "
                f"({facts['added'] / facts['ingest_s']:.1f}/s)\n"
            )
            published = (
                "Published SciFact nDCG@10: BM25 0.665, all-MiniLM-L6-v2 0.645, "
                "BM25 + MiniLM cross-encoder 0.688, bge-small-en-v1.5 0.713."
            )
            print(published)

    args.out.mkdir(parents=True, exist_ok=True)
    report = [
        "# Evaluation report",
        "",
        f"Command: `python -m eval.run {' '.join(argv or sys.argv[1:])}`",
        f"Wall time: {time.perf_counter() - started:.0f}s",
        "",
    ]
    report += [t.markdown() + "\n" for t in tables]
    (args.out / "report.md").write_text("\n".join(report))
    chart(
        [
            t
            for t in tables
            if t.title.startswith(("Seed questions, retrieval (all", "Seed questions, answers", "SciFact"))
        ],
        args.out / "report.png",
    )
    print(f"wrote {args.out / 'report.md'} and {args.out / 'report.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
