"""`assistant` command line: ingest, search, ask, stats, serve, eval.

User mistakes print one line and exit 2; failures of the store or a backend
exit 1. No tracebacks for either.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assistant.as_json import answer_json, search_json
from assistant.errors import EXIT_CODES, AssistantError, kind_of


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("venue", "year", "author", "topic"):
        value = getattr(args, key, None)
        if value:
            out[key] = value
    return out


def _add_filter_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--k", type=int, default=None, help="number of papers (default: setting k)")
    p.add_argument("--venue", help='e.g. "NeurIPS 2025" or ICLR')
    p.add_argument("--year", help="a year (2025) or a range (2024-2026)")
    p.add_argument("--author", help="full name, case- and accent-insensitive")
    p.add_argument("--topic", help='area or subarea, e.g. "Graph Neural Networks"')
    p.add_argument("--no-detect", action="store_true", help="do not read filters from the question")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assistant", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ingest", help="add or update papers from files or folders (resumable)")
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--strict", action="store_true", help="ingest nothing if any record is malformed")
    p.add_argument(
        "--sync",
        action="store_true",
        help="also remove the papers of these files that are no longer in them (a file that "
        "no longer exists counts as empty)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p = sub.add_parser(
        "remove", help="remove the papers of files (kept if also in another file), or papers by id"
    )
    p.add_argument("paths", nargs="*", type=Path, help="files whose papers to remove (need not exist)")
    p.add_argument(
        "--id",
        dest="ids",
        action="append",
        default=[],
        metavar="ID",
        help="a paper id, record id or BibTeX key, or DOI (repeat for more)",
    )
    p = sub.add_parser(
        "index", help="build the EmbeddingGemma index beside the fast one (embedder=auto; resumable)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p = sub.add_parser("search", help="find papers")
    p.add_argument("question")
    _add_filter_args(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p = sub.add_parser("ask", help="answer a question with citations")
    p.add_argument("question")
    _add_filter_args(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p = sub.add_parser("stats", help="papers per venue, year and topic")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("serve", help="start the chat app")
    p.add_argument("--host", default=None)
    p.add_argument("--port", type=int, default=None)
    sub.add_parser("repl", help="ask questions in the terminal")
    sub.add_parser("settings", help="every setting: its value now, where to set it, what it does")
    p = sub.add_parser("mcp", help="serve search / ask / stats to MCP clients (stdio, or --http PORT)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="passed to `python -m assistant.mcp_server`")
    p = sub.add_parser("eval", help="evaluate retrieval and answers (seed questions, SciFact)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="passed to `python -m eval.run`")
    p = sub.add_parser("bench", help="speed and scale benchmarks")
    p.add_argument("args", nargs=argparse.REMAINDER, help="passed to `python -m benchmarks.run`")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except AssistantError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CODES[kind_of(exc)]
    except KeyboardInterrupt:
        if args.command in ("ingest", "index"):
            print("interrupted: run the same command again to resume", file=sys.stderr)
        else:
            print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `assistant search ... | head -1`: the reader has all it wants
        _quiet_stdout()
        return 0


def _run(args: argparse.Namespace) -> int:
    from assistant.api import Assistant

    if args.command in ("eval", "bench"):
        try:
            module = __import__("eval.run" if args.command == "eval" else "benchmarks.run", fromlist=["main"])
        except ImportError:
            raise AssistantError(
                f"`assistant {args.command}` runs from a source checkout (make {args.command})"
            ) from None
        return int(module.main(list(args.args)))

    if args.command == "settings":
        return _settings()
    if args.command == "mcp":
        from assistant.mcp_server import main as mcp_main

        return int(mcp_main(list(args.args)) or 0)
    bot = Assistant()
    if args.command == "ingest":
        report = bot.ingest(args.paths, strict=args.strict, progress=not args.quiet, sync=args.sync)
        for problem in report.problems:
            print(f"{'note' if problem.kept else 'skipped'} {problem}", file=sys.stderr)
        for note in report.notes:
            print(f"note: {note}", file=sys.stderr)
        print(report.summary())
        print(bot.stats().line())
        print(bot.index_status().line())
        if report.refused_files:  # a whole file was not read: say so in the exit status too
            print(
                f"error: nothing was read from {len(report.refused_files)} file(s), listed above",
                file=sys.stderr,
            )
            return 1
        return 0
    if args.command == "remove":
        removal = bot.remove(paths=args.paths, ids=args.ids)
        for label in removal.removed:
            print(f"removed: {label}")
        print(removal.summary())
        print(bot.stats().line())
        return 2 if removal.unknown and not removal.removed else 0
    if args.command == "index":
        return _index(bot, quiet=args.quiet)
    if args.command == "search":
        result = bot.search(args.question, k=args.k, filters=_filters(args), detect=not args.no_detect)
        if args.json:
            print(json.dumps(search_json(result), ensure_ascii=False, indent=2))
            return 0
        if not result.filters.is_empty():
            print(f"filters: {result.filters.describe()}  ({result.matching} matching)")
        for note in result.notes:
            print(f"note: {note}")
        for hit in result:
            p = hit.paper
            print(f"{hit.rank:>2}. [{hit.score:.4f}] {p.label}")
            print(f"    {p.venue_year or 'no venue'} · {p.id} · {', '.join(p.sources)}")
        return 0
    if args.command == "ask":
        answer = bot.ask(args.question, k=args.k, filters=_filters(args))
        if args.json:
            print(json.dumps(answer_json(answer), ensure_ascii=False, indent=2))
            return 0
        print(answer.markdown())
        if answer.reason:
            print(f"\n({answer.reason})")
        return 0
    if args.command == "stats":
        stats = bot.stats()
        if args.json:
            print(json.dumps(stats.__dict__, ensure_ascii=False, indent=2, default=str))
            return 0
        print(stats.line())
        print(bot.index_status().line())
        for title, table in (("venues", stats.venues), ("years", stats.years), ("topics", stats.topics)):
            print(f"\n{title}:")
            for key, count in table.items():
                print(f"  {count:>6}  {key}")
        return 0
    if args.command == "repl":
        return _repl(bot)
    if args.command == "serve":
        from ui.app import serve

        serve(bot, host=args.host, port=args.port)
        return 0
    raise AssertionError(args.command)


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush is silent."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def _index(bot: Any, quiet: bool) -> int:
    import time

    from tqdm import tqdm

    status = bot.index_status()
    bar = None if quiet else tqdm(unit="papers", desc=f"indexing with {status.strong}", file=sys.stderr)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.refresh()

    started = time.perf_counter()
    added = bot.build_index(progress=progress)
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - started
    rate = f" ({added / seconds:.1f} papers/s)" if added and seconds else ""
    print(f"{added} papers added to the {status.strong} index in {seconds:.1f}s{rate}")
    print(bot.index_status().line())
    return 0


def _settings() -> int:
    from assistant.config import Settings

    settings = Settings.load()
    for name, field in Settings.model_fields.items():
        value = getattr(settings, name)
        print(f"{name} = {value!r}    (ASSISTANT_{name.upper()})")
        print(f"    {field.description}")
    return 0


def _repl(bot: Any) -> int:
    history: list[tuple[str, str]] = []
    print(bot.stats().line() + "  (empty line or Ctrl-D to quit)")
    interactive = sys.stdin is not None and sys.stdin.isatty()
    while True:
        try:
            question = (input("? ") if interactive else sys.stdin.readline()).strip()
        except (EOFError, RuntimeError, OSError, ValueError, AttributeError):  # Ctrl-D, stdin closed
            return 0
        if not question:
            return 0
        try:
            answer = bot.ask(question, history=history)
        except AssistantError as exc:
            print(f"error: {exc}")
            continue
        print(answer.markdown() + "\n")
        history.append((question, answer.text))


if __name__ == "__main__":
    sys.exit(main())
