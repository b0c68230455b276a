"""What a catalogue build's garbage-collector handling costs, and what it frees.

    python -m benchmarks.gc_pass                # 100,000 synthetic papers a build
    python -m benchmarks.gc_pass --n 20000      # a quick run

A catalogue is built with the collector off, and what exists afterwards is frozen
(`assistant.search.live._collector_paused`). Freezing alone kept every frozen cycle for
good: an assistant dropped after its build, with its models, was never freed. The build
now thaws and collects what earlier builds froze before it begins. Printed, for three ways
(freeze only; thaw and collect after the build; thaw and collect before it, the one used):
the time the way itself adds to a first build (a start) and to a second one beside the
first's papers (a reload), each making N papers inside the block as a snapshot's
decoding does (their author and source tuples are new objects the collector tracks), and how much of a dropped, cyclic
200 MB object the next build gives back.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import numpy as np

from assistant.corpus.records import record_to_paper
from assistant.search.live import _collector_paused
from assistant.types import Paper
from benchmarks.serving import rss_mb
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


@contextmanager
def _collect_after() -> Iterator[None]:
    """Thaw and collect once the build is done: the pass walks what the build made."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        if enabled:
            gc.enable()


Way = Callable[[], AbstractContextManager[None]]


class _Cyclic:
    """An object in a reference cycle holding 200 MB (as an assistant holds its models)."""

    def __init__(self) -> None:
        self.weights = np.ones(50_000_000, dtype=np.float32)
        self.me = self


def papers(n: int, seed: int) -> list[Paper]:
    rng = random.Random(seed)
    return [record_to_paper(record(rng, i), "synthetic") for i in range(n)]


def overhead_s(way: Way, made: Callable[[], object]) -> tuple[float, object]:
    """Seconds the way spends entering and leaving its block (the build inside not counted)."""
    block = way()
    started = time.perf_counter()
    block.__enter__()
    entered = time.perf_counter()
    result = made()
    building = time.perf_counter()
    block.__exit__(None, None, None)
    return (entered - started) + (time.perf_counter() - building), result


def builds(way: Way, n: int) -> tuple[float, float]:
    """The way's own time at a first build and at a second one beside the first's papers."""
    first_s, first = overhead_s(way, lambda: papers(n, 0))
    second_s, second = overhead_s(way, lambda: papers(n, 1))
    del first, second
    gc.unfreeze()
    gc.collect()
    return first_s, second_s


def freed_mb(way: Way) -> float:
    """MB given back once a cyclic object alive at one build is dropped before the next."""
    held = _Cyclic()
    with way():
        pass
    before = rss_mb()
    del held
    with way():
        pass
    freed = before - rss_mb()
    gc.unfreeze()
    gc.collect()
    return freed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="synthetic papers made by each build")
    args = parser.parse_args(argv)
    ways: dict[str, Way] = {
        "freeze only (before)": _freeze_only,
        "thaw and collect after the build": _collect_after,
        "thaw and collect before the build (used)": _collector_paused,
    }
    print(f"{args.n:,} papers a build")
    print(
        "| way | its time at a first build | at a second, beside the first's papers | MB freed of a dropped 200 MB cycle |"
    )
    print("|---|---|---|---|")
    for name, way in ways.items():
        first_s, second_s = builds(way, args.n)
        print(f"| {name} | {first_s * 1000:.0f} ms | {second_s * 1000:.0f} ms | {freed_mb(way):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
