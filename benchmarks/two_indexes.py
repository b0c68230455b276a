"""A BibTeX library through both indexes, as a user gets it: `ingest` (the MiniLM index;
search works when it returns), then `build_index` (the EmbeddingGemma index; search
switches to it when it is complete).

    python -m benchmarks.two_indexes --n 5000 [--baseline 200]

The library is SciFact's first N abstracts written as one `.bib` file (title, abstract,
a year). Both steps run with the default `document_encoder` (OpenVINO); the same steps on
the first `--baseline` papers with `document_encoder="torch"` (the path before) are
measured in the same run, so the rates can be compared. Prints papers/s, wall time and
the process's peak memory.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from assistant import Assistant
from benchmarks.run import peak_mb, say
from eval.questions import SCIFACT


def write_bib(path: Path, n: int) -> int:
    """SciFact's first `n` abstracts as BibTeX (braces and percent signs kept out)."""

    def clean(text: str) -> str:
        return " ".join(text.replace("{", "(").replace("}", ")").replace("%", " percent").split())

    written = 0
    with path.open("w") as out:
        for line in (SCIFACT / "corpus.jsonl").open():
            if written == n:
                break
            d = json.loads(line)
            if not d["text"].strip():
                continue
            out.write(
                f"@article{{sf{d['_id']},\n  title = {{{clean(d['title'])}}},\n"
                f"  abstract = {{{clean(d['text'])}}},\n  journal = {{SciFact}},\n"
                f"  year = {{{2000 + written % 25}}}\n}}\n\n"
            )
            written += 1
    return written


def run(library: Path, data: Path, n: int, encoder: str) -> tuple[float, float]:
    """Seconds for `ingest` and for `build_index` of `library` into a new data folder."""
    bot = Assistant(data_dir=data, corpus=[library], backend="extractive", document_encoder=encoder)
    t0 = time.perf_counter()
    report = bot.ingest([library])
    ingest_s = time.perf_counter() - t0
    assert bot.stats().papers == n, (bot.stats().papers, report)
    t0 = time.perf_counter()
    bot.build_index()
    build_s = time.perf_counter() - t0
    status = bot.index_status()
    assert status.complete, status.line()
    say(
        f"| {n:,} | {encoder} | {ingest_s:.0f} s ({n / ingest_s:.1f}/s) "
        f"| {build_s:.0f} s ({n / build_s:.2f}/s) | {peak_mb():,.0f} MB |"
    )
    return ingest_s, build_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000, help="papers in the library")
    parser.add_argument("--baseline", type=int, default=200, help="papers run through torch too (0: none)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        say(
            "| papers | abstracts through | `ingest` (MiniLM index; search works) | `build_index` (EmbeddingGemma index) | peak memory |"
        )
        say("|---|---|---|---|---|")
        rates = {}
        if args.baseline:
            small = root / "small.bib"
            k = write_bib(small, args.baseline)
            for encoder in ("torch", "auto"):
                ingest_s, build_s = run(small, root / f"small-{encoder}", k, encoder)
                rates[encoder] = (k / ingest_s, k / build_s)
            say(
                f"\nOn {k} papers, OpenVINO against torch: ingest ×{rates['auto'][0] / rates['torch'][0]:.2f}, "
                f"build ×{rates['auto'][1] / rates['torch'][1]:.2f}\n"
            )
        library = root / "library.bib"
        n = write_bib(library, args.n)
        run(library, root / "data", n, "auto")
    return 0


if __name__ == "__main__":
    sys.exit(main())
