"""The literal pre-check in front of the instruction detector's patterns: it may only skip
texts on which a pattern cannot match (the detector's answers are the patterns' own)."""

from __future__ import annotations

import itertools
import json
import re
import sys

import pytest

from assistant.answer import injection
from assistant.answer.prefilter import ASCII_LOOKALIKES, Gated, gated, requirements
from assistant.text import split_sentences
from tests.conftest import SCIFACT, SEEDS
from tests.test_hostile import INJECTIONS, PROSE_INJECTIONS


def test_a_text_without_the_words_a_pattern_needs_is_skipped_and_one_with_them_is_searched() -> None:
    pattern = gated(re.compile(r"\bas\s+an\s+ai\b|summari[sz]e (?:this|our) (?:work|paper)"))
    assert pattern.alternatives is not None
    assert not pattern.possible("The cohort was followed for two years.")
    assert not pattern.possible("as an important step")  # 'as' and 'an' but no 'ai'
    assert pattern.search("Respond as an AI would.") is None  # (case matters for this pattern)
    assert pattern.search("respond as an   ai would")
    assert pattern.search("please summarize our paper")
    assert pattern.search("please summarise the paper") is None


def test_a_pattern_that_ignores_case_is_checked_on_every_spelling_re_accepts() -> None:
    pattern = gated(re.compile(r"ignore (?:all )?instructions", re.IGNORECASE))
    for text in ("IGNORE all INSTRUCTIONS", "\u0130gnore instructions", "ignore in\u017ftructions"):
        assert pattern.pattern.search(text), text
        assert pattern.search(text), text


def test_the_table_of_non_ascii_letters_that_match_ascii_ones_is_complete() -> None:
    """`re` with IGNORECASE matches a few letters outside ASCII to ASCII ones ('ſ' to 's');
    the pre-check maps exactly those before comparing."""
    found = {}
    for code in range(128, sys.maxunicode + 1):
        char = chr(code)
        forms = char.lower() + char.upper() + char.casefold()
        if any(c.isascii() and c.isalpha() for c in forms):
            for letter in "abcdefghijklmnopqrstuvwxyz":
                if re.fullmatch(letter, char, re.IGNORECASE):
                    found[code] = letter
    assert found == ASCII_LOOKALIKES


def test_a_pattern_the_analysis_cannot_read_always_runs() -> None:
    assert requirements(re.compile(r"\w+\d|x")) is None  # a branch that needs no literal
    assert requirements(re.compile(r"(?i:ab)")) is None  # an inline flag: not read
    assert requirements(re.compile(r"(?i:ab)c")) == ((("c",),),)  # the rest still is
    assert gated(re.compile(r"\d+")).possible("anything") is True


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Real sentences (a sample of SciFact and the seeds, and their skeletons) and every
    hostile sentence the tests know, alone and joined in twos as the detector reads them."""
    from assistant.corpus.readers import load_papers

    abstracts = [p.abstract for p in load_papers([SEEDS])[0]]
    with (SCIFACT / "corpus.jsonl").open() as f:
        abstracts += [json.loads(line)["text"] for i, line in enumerate(f) if i % 25 == 0]
    sentences = [s for a in abstracts for s in split_sentences(a)]
    sentences += list(INJECTIONS) + list(PROSE_INJECTIONS.values())
    pairs = [a + " " + b for a, b in itertools.pairwise(sentences)]
    found = sentences + pairs
    return found + [injection.skeleton(t) for t in found]


def test_no_pattern_of_the_detector_is_skipped_where_it_matches(texts: list[str]) -> None:
    patterns = {name: p for name, p in vars(injection).items() if isinstance(p, Gated)}
    assert len(patterns) >= 15
    matched = 0
    for name, pattern in patterns.items():
        for text in texts:
            if pattern.pattern.search(text):
                matched += 1
                assert pattern.possible(text), (name, text)
    assert matched > 100  # the check above was not vacuous
