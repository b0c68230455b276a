"""What a catalogue build's garbage-collector handling costs, and what it frees.

    python -m benchmarks.gc_pass                # 100,000 synthetic papers
    python -m benchmarks.gc_pass --n 20000      # a quick run

A catalogue is built with the collector off, and what exists afterwards is frozen
(`assistant.search.live._collector_paused`). Freezing alone kept every frozen cycle for
good: an assistant dropped after its build, with its models, was never freed. The build
now thaws and collects first. Printed: the time of the paused block with N papers loaded,
the freeze-only way against the thaw-collect-freeze way, and how much of a dropped,
cyclic 200 MB object each way gives back.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from assistant.corpus.records import record_to_paper
from assistant.search.live import _collector_paused
from benchmarks.synth import record


@contextmanager
def _freeze_only() -> Iterator[None]:
    """The way before: collector off, then everything frozen."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


class _Cyclic:
    """An object in a reference cycle holding 200 MB (as an assistant holds its models)."""

    def __init__(self) -> None:
        self.weights = np.ones(50_000_000, dtype=np.float32)
        self.me = self


def freed_mb(way: Callable[[], object]) -> float:
    """MB given back once a cyclic object alive at one build is dropped before the next."""
    held = _Cyclic()
    with way():  # type: ignore[attr-defined]
        pass
    before = rss_mb()
    del held
    with way():  # type: ignore[attr-defined]
        pass
    gc.collect()
    freed = before - rss_mb()
    gc.unfreeze()
    gc.collect()
    return freed


def paused_s(way: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        with way():  # type: ignore[attr-defined]
            pass
        times.append(time.perf_counter() - started)
    gc.unfreeze()
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="synthetic papers kept loaded")
    args = parser.parse_args(argv)
    rng = random.Random(0)
    started = time.perf_counter()
    papers = [record_to_paper(record(rng, i), "synthetic") for i in range(args.n)]
    print(
        f"{args.n:,} papers made in {time.perf_counter() - started:.1f} s; {len(gc.get_objects()):,} tracked objects"
    )
    ways = {"freeze only (before)": _freeze_only, "thaw, collect, freeze (now)": _collector_paused}
    print("| way | paused block, median of 5 | MB freed of a dropped 200 MB cycle |")
    print("|---|---|---|")
    for name, way in ways.items():
        print(f"| {name} | {paused_s(way) * 1000:.0f} ms | {freed_mb(way):.0f} |")
    del papers
    return 0


if __name__ == "__main__":
    sys.exit(main())
