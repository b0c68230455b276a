"""`make eval`: retrieval and answer quality on our question sets, and SciFact.

    python -m eval.run                                   # retrieval, extractive answers, SciFact
    python -m eval.run --models qwen2.5-coder-1.5b       # + the default local model, every question
    python -m eval.run --sets heldout --no-scifact --models qwen2.5-coder-1.5b

Prints one table per set, writes eval/reports/report.md, report.png and one JSON
line per answered question (answers-BACKEND.jsonl); exits non-zero if the run failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from assistant import Assistant
from assistant.config import DEFAULT_SEEDS
from eval.harness import (
    Table,
    answer_rows,
    answer_table,
    build_strong,
    retrieval_table,
    scifact_tables,
    weakest,
)
from eval.questions import SCIFACT, SETS, load_questions

REPORTS = Path(__file__).resolve().parent / "reports"


def chart(tables: list[Table], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(tables), 1, figsize=(11, 3.6 * len(tables)), squeeze=False)
    for ax, table in zip(axes[:, 0], tables):
        metrics = [
            c for c in table.columns if "ms" not in c and " s" not in c and c not in ("n", "prompt tok")
        ]
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
    parser.add_argument(
        "--sets",
        default="heldout,seeds",
        help="question sets: heldout, heldout2, ..., heldout9, seeds, offcorpus",
    )
    parser.add_argument(
        "--fast-index",
        action="store_true",
        help="with embedder=auto, measure the MiniLM index (what answers before EmbeddingGemma's is built)",
    )
    parser.add_argument("--types", default="", help="only these question types (comma-separated)")
    parser.add_argument("--no-extractive", action="store_true")
    parser.add_argument("--no-retrieval", action="store_true")
    parser.add_argument("--no-scifact", action="store_true")
    parser.add_argument("--out", type=Path, default=REPORTS)
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="a setting for the LLM runs"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tables: list[Table] = []
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        seeded = Assistant(data_dir=data / "seeds", corpus=[DEFAULT_SEEDS], backend="extractive")
        build_strong(seeded, args.fast_index)
        print(seeded.index_status().line(), flush=True)
        papers = seeded.catalogue.papers
        questions = [q for name in args.sets.split(",") for q in load_questions(SETS[name], papers)]
        if args.types:
            questions = [q for q in questions if q.type in args.types.split(",")]
        systems = {
            "hybrid (default)": {},
            "dense only": {"lexical_weight": 0.0},
            "BM25 only": {"dense_weight": 0.0},
        }
        if not args.no_retrieval:
            overview = None
            for name, overrides in systems.items():
                bot = Assistant(
                    data_dir=data / "seeds", corpus=[DEFAULT_SEEDS], backend="extractive", **overrides
                )
                table = retrieval_table(bot, questions, f"Retrieval: {name}")
                tables.append(table)
                print(table.markdown(), "\n", flush=True)
                overview = overview or Table("Retrieval (all answerable questions)", table.columns)
                overview.rows[name] = table.rows["all"]
            assert overview is not None
            tables.append(overview)

        runs: list[tuple[str, Assistant, str]] = []
        if not args.no_extractive:
            runs.append(("extractive", seeded, "extractive"))
        for model in [m for m in args.models.split(",") if m]:
            overrides = dict(kv.split("=", 1) for kv in args.set)
            bot = Assistant(data_dir=data / "seeds", corpus=[DEFAULT_SEEDS], llm_model=model, **overrides)
            runs.append((f"llama-cpp {model}", bot, "llama-cpp"))
        overview_answers = Table(f"Answers, all {len(questions)} questions", ())
        for label, bot, backend in runs:
            rows = answer_rows(bot, questions, backend, log=lambda line: print(line, flush=True))
            with (args.out / f"answers-{label.replace(' ', '-')}.jsonl").open("w") as f:
                for row in rows:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
            table = answer_table(rows, f"Answers: {label}")
            table.title += f" (weakest kind: {weakest(table)})"
            tables.append(table)
            overview_answers.columns = table.columns
            overview_answers.rows[label] = table.rows["all"]
            print(table.markdown(), "\n", flush=True)
            print(f"answers: {label} done ({time.perf_counter() - started:.0f}s)", flush=True)
        if runs:
            tables.append(overview_answers)

        if not args.no_scifact and (SCIFACT / "corpus.jsonl").exists():
            scifact, facts = scifact_tables(data, fast_index=args.fast_index)
            tables.append(scifact)
            print(scifact.markdown())
            print(
                f"SciFact ingestion: {facts['added']} abstracts in {facts['ingest_s']:.0f}s "
                f"({facts['added'] / facts['ingest_s']:.1f}/s); strong index built in {facts['strong_s']:.0f}s\n"
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
        [t for t in tables if t.title.startswith(("Retrieval (all", "Answers, all", "SciFact"))],
        args.out / "report.png",
    )
    print(f"wrote {args.out / 'report.md'} and {args.out / 'report.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
