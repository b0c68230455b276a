"""The citation check: every [n] must name a given source that supports its sentence.

Each answer sentence is compared (bundled embedder, cosine) with every sentence
of every given abstract. A supported sentence keeps its citation; one better
supported by another source is re-cited to it; one that no source supports is
marked unsupported. Citation numbers are renumbered in order of first use, so
the answer's citations are exactly the numbers in its text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from assistant.embed import Embedder
from assistant.extractive import cite
from assistant.text import split_sentences
from assistant.types import Citation, Hit, SentenceSupport

MARKER = re.compile(r"\s*\[(\d+(?:\s*[,;]\s*\d+)*)\]")
PARTIAL_MARKER = re.compile(r"\[[\d,;\s]*$")


def markers(text: str) -> tuple[list[int], str]:
    """'A claim [1, 3].' -> ([1, 3], 'A claim.')"""
    numbers = [int(n) for m in MARKER.finditer(text) for n in re.split(r"[,;]", m.group(1))]
    return numbers, MARKER.sub("", text).strip()


@dataclass
class Checker:
    """Checks one answer's sentences against the sources it was given (numbered 1..len)."""

    sources: list[Hit]
    embedder: Embedder
    threshold: float
    margin: float
    _vectors: list[np.ndarray] = field(default_factory=list)
    _sentences: list[list[str]] = field(default_factory=list)
    numbering: dict[int, int] = field(default_factory=dict)  # given number -> answer number
    results: list[SentenceSupport] = field(default_factory=list)
    removed: int = 0
    recited: int = 0

    def __post_init__(self) -> None:
        self._sentences = [split_sentences(h.paper.abstract) or [h.paper.abstract] for h in self.sources]
        flat = [s for group in self._sentences for s in group]
        vectors = self.embedder.encode(flat) if flat else np.zeros((0, 1), dtype=np.float32)
        start = 0
        for group in self._sentences:
            self._vectors.append(vectors[start : start + len(group)])
            start += len(group)

    def check(self, raw_sentence: str) -> str:
        """The sentence with checked, renumbered citations (markers before the final stop)."""
        given, body = markers(raw_sentence)
        if not body:
            return ""
        valid = [n for n in dict.fromkeys(given) if 1 <= n <= len(self.sources)]
        self.removed += len(given) - len(valid)
        vector = self.embedder.encode_one(body)
        support = [float(np.max(v @ vector)) if len(v) else -1.0 for v in self._vectors]
        best = int(np.argmax(support)) if support else -1
        kept = [n for n in valid if support[n - 1] >= self.threshold]
        note = None
        if (
            best >= 0
            and support[best] >= self.threshold
            and (not kept or support[best] > max(support[n - 1] for n in kept) + self.margin)
        ):
            if valid and (best + 1) not in kept:
                self.recited += 1
                note = f"re-cited from {valid} to [{best + 1}]"
            elif not valid:
                note = f"citation [{best + 1}] added"
            kept = [best + 1]
        supported = bool(kept)
        if not supported:
            kept = []
            note = "no given abstract supports this sentence" + (
                f" (the model cited {valid})" if valid else ""
            )
        numbers = tuple(self._number(n) for n in kept)
        score = max((support[n - 1] for n in kept), default=max(support, default=0.0))
        evidence_source = kept[0] - 1 if kept else best
        evidence = None
        if evidence_source >= 0 and len(self._vectors[evidence_source]):
            idx = int(np.argmax(self._vectors[evidence_source] @ vector))
            evidence = self._sentences[evidence_source][idx]
        self.results.append(SentenceSupport(body, numbers, round(score, 4), evidence, supported, note))
        return cite(body, numbers)

    def _number(self, given: int) -> int:
        if given not in self.numbering:
            self.numbering[given] = len(self.numbering) + 1
        return self.numbering[given]

    def citations(self) -> tuple[Citation, ...]:
        return tuple(
            Citation(number, self.sources[given - 1].paper, self.sources[given - 1].score)
            for given, number in sorted(self.numbering.items(), key=lambda kv: kv[1])
        )

    @property
    def supported_share(self) -> float:
        if not self.results:
            return 0.0
        return sum(r.supported for r in self.results) / len(self.results)
