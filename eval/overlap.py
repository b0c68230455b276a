"""How lexically easy a question set is: the share of each paraphrase's words found in its
gold abstract.

A set whose questions reuse their abstract's words measures word matching (BM25 finds
those as well as any embedder); one whose questions share almost none measures
understanding. Words are runs of letters of four or more, without common function words;
the share is of the question's words (with repeats) that occur anywhere in the gold
abstract (title included). Prints each set's mean and maximum over its paraphrases.

    python -m eval.overlap --sets heldout3,heldout17
"""

from __future__ import annotations

import argparse
import re
import statistics

from assistant.config import DEFAULT_SEEDS
from assistant.corpus.readers import load_papers
from eval.questions import SETS, load_questions

_LETTERS = re.compile(r"[a-z]+")
_FUNCTION = frozenset(
    """what which does paper that with from this their have about much many when where while
    there these those them they then than into onto over under some such each only other more
    most been being were also would could should between both given after before same very
    just your whose did done doing having here will shall within upon using used make made
    makes like among across against""".split()
)


def words(text: str) -> list[str]:
    """The words of a text that can show overlap (see the module docstring)."""
    return [w for w in _LETTERS.findall(text.lower()) if len(w) >= 4 and w not in _FUNCTION]


def overlap(question: str, abstract: str) -> float:
    """The share of the question's words that occur in the abstract (0 when it has none)."""
    asked = words(question)
    present = set(_LETTERS.findall(abstract.lower()))
    return sum(w in present for w in asked) / len(asked) if asked else 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default=",".join(s for s in SETS if s.startswith("heldout")))
    args = parser.parse_args(argv)
    papers = load_papers([DEFAULT_SEEDS])[0]
    text = {p.id: f"{p.title or ''} {p.abstract}" for p in papers}
    print(f"{'set':<12} {'paraphrases':>11} {'mean':>6} {'max':>6}")
    for name in args.sets.split(","):
        shares = [
            overlap(q.question, text[q.gold[0]])
            for q in load_questions(SETS[name], papers)
            if q.type == "paraphrase" and q.gold
        ]
        if shares:
            print(f"{name:<12} {len(shares):>11} {statistics.mean(shares):>6.3f} {max(shares):>6.3f}")


if __name__ == "__main__":
    main()
