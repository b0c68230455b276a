"""A literal pre-check in front of a large regular expression.

The instruction detector runs a few dozen long alternations over every sentence of every
abstract it reads, alone and in windows of two and three, and Python's `re` tries each of
them at every position (~23 ms an abstract). Almost every sentence of a real abstract
holds none of the words the branches need. `requirements(pattern)` reads the pattern's
parse tree and lists, for each top-level branch, the stretches of literals every match of
it holds (the required factors code search engines index on); `gated(pattern)` runs the
pattern only on a text that meets one branch's list, found in one Aho-Corasick pass. The
answer is the pattern's own: the check only skips texts on which the pattern cannot
match. Where the analysis cannot tell (a branch that needs no literal, an inline flag),
the pattern simply always runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

try:  # Python 3.11+: the parser behind `re`, whose tree the analysis reads
    import re._constants as _c
    import re._parser as _parser
except ImportError:  # pragma: no cover - a Python without them gets no pre-check, same answers
    _parser = None  # type: ignore[assignment]
    _c = None  # type: ignore[assignment]

# The only letters outside ASCII that `re` matches to an ASCII letter when case is ignored
# ('İ', 'ı', 'ſ' and the Kelvin sign; a test checks the list against every code point).
ASCII_LOOKALIKES = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
_MAX_SET = 64  # exact strings tracked per node (a product of small sets stays below this)
_MAX_CHARSET = 10  # a character class of up to this many letters is tracked letter by letter


@dataclass(frozen=True)
class _Info:
    """What a node can match: `exact`, every string it matches (None: too many to list);
    `need`, strings one of which is inside every match (None: no such set is known)."""

    exact: frozenset[str] | None
    need: frozenset[str] | None

    def requirement(self) -> frozenset[str] | None:
        found = self.exact if self.exact is not None else self.need
        if not found or "" in found:
            return None
        return found


_EMPTY = _Info(frozenset({""}), None)
_UNKNOWN = _Info(None, None)


def _better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """The more selective of two requirements: longer shortest string, then fewer strings."""
    if a is None:
        return b
    if b is None:
        return a
    key_a = (min(map(len, a)), -len(a))
    key_b = (min(map(len, b)), -len(b))
    return a if key_a >= key_b else b


def _literal(code: int, fold: bool) -> _Info:
    char = chr(code)
    if fold:
        if not char.isascii():  # a non-ASCII letter may match other letters when case is ignored
            return _UNKNOWN
        char = char.lower()
    return _Info(frozenset({char}), None)


def _charset(items: Sequence[tuple[Any, Any]], fold: bool) -> _Info:
    chars: set[str] = set()
    for op, value in items:
        if op is not _c.LITERAL:
            return _UNKNOWN  # ranges, categories, negation: too many letters to list
        char = chr(value)
        if fold and not char.isascii():
            return _UNKNOWN
        chars.add(char.lower() if fold else char)
    if not chars or len(chars) > _MAX_CHARSET:
        return _UNKNOWN
    return _Info(frozenset(chars), None)


def _sequence(items: Iterable[tuple[Any, Any]], fold: bool) -> _Info:
    clauses, whole = _clauses(items, fold)
    best: frozenset[str] | None = None
    for clause in clauses:
        best = _better(best, clause)
    return _Info(whole, best)


def _clauses(
    items: Iterable[tuple[Any, Any]], fold: bool
) -> tuple[list[frozenset[str]], frozenset[str] | None]:
    """Every requirement of a sequence (a match meets each of them: one per stretch of
    literals, one per element that has its own) and its exact strings (None: too many)."""
    clauses: list[frozenset[str]] = []

    def keep(found: frozenset[str] | None) -> None:
        if found is not None and found not in clauses:
            clauses.append(found)

    run: frozenset[str] = frozenset({""})  # the exact strings of the current stretch
    whole: frozenset[str] | None = frozenset({""})  # the exact strings of the whole sequence
    for item in items:
        info = _node(item, fold)
        if info.exact is None:  # (exact strings are kept as part of their stretch)
            keep(info.requirement())
        if info.exact is not None and len(run) * len(info.exact) <= _MAX_SET:
            run = frozenset(a + b for a, b in product(run, info.exact))
        else:
            keep(_Info(run, None).requirement())
            run = info.exact if info.exact is not None else frozenset({""})
        if whole is not None and info.exact is not None and len(whole) * len(info.exact) <= _MAX_SET:
            whole = frozenset(a + b for a, b in product(whole, info.exact))
        else:
            whole = None
    keep(_Info(run, None).requirement())
    return clauses, whole


def _node(item: tuple[Any, Any], fold: bool) -> _Info:
    op, value = item
    if op is _c.LITERAL:
        return _literal(value, fold)
    if op is _c.IN:
        return _charset(value, fold)
    if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
        return _EMPTY  # zero-width: it adds nothing a match must hold
    if op is _c.SUBPATTERN:
        _group, add_flags, del_flags, body = value
        if add_flags or del_flags:
            return _UNKNOWN
        return _sequence(body, fold)
    if op is _c.BRANCH:
        branches = [_sequence(b, fold) for b in value[1]]
        exact: frozenset[str] | None = None
        if all(b.exact is not None for b in branches):
            union = frozenset().union(*(b.exact for b in branches if b.exact is not None))
            exact = union if len(union) <= _MAX_SET else None
        needs = [b.requirement() for b in branches]
        need = None if any(n is None for n in needs) else frozenset().union(*(n for n in needs if n))
        return _Info(exact, need)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        low, high, body = value
        inner = _sequence(body, fold)
        if low == 0:
            if high == 1 and inner.exact is not None:
                return _Info(inner.exact | {""}, None)
            return _EMPTY if high == 0 else _UNKNOWN
        if low == high == 1:
            return inner
        return _Info(None, inner.requirement())
    return _UNKNOWN  # any character, a category, a back-reference, …


Clause = tuple[str, ...]  # a text meets a clause when it holds one of its strings


def requirements(pattern: re.Pattern[str]) -> tuple[tuple[Clause, ...], ...] | None:
    """What every match of `pattern` holds: alternatives, each a set of clauses that a
    match of that alternative all meets (strings lower-cased when the pattern ignores
    case), or None when nothing is known."""
    if _parser is None or not isinstance(pattern.pattern, str):
        return None
    if pattern.flags & ~(re.IGNORECASE | re.UNICODE):
        return None  # MULTILINE, DOTALL, VERBOSE, …: not worth a case of their own here
    fold = bool(pattern.flags & re.IGNORECASE)
    try:
        tree = list(_parser.parse(pattern.pattern, pattern.flags))
    except Exception:  # whatever the parser does, the pattern still runs
        return None
    if len(tree) == 1 and tree[0][0] is _c.BRANCH:
        alternatives = tree[0][1][1]
    else:
        alternatives = [tree]
    found = []
    for alternative in alternatives:
        clauses, _ = _clauses(alternative, fold)
        if not clauses:
            return None  # this alternative needs no literal: every text may match
        ordered = sorted(clauses, key=lambda c: (-min(map(len, c)), len(c)))  # most selective first
        found.append(tuple(tuple(sorted(c, key=lambda s: (-len(s), s))) for c in ordered))
    return tuple(found)


class Gated:
    """A compiled pattern whose `search` first checks, in one Aho-Corasick pass over the
    text (pyahocorasick), that the text meets one alternative of the requirements every
    match meets; where it does not, the pattern cannot match and is not run."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.fold = bool(pattern.flags & re.IGNORECASE)
        alternatives = requirements(pattern)
        self.alternatives = (
            None
            if alternatives is None
            else tuple(tuple(frozenset(clause) for clause in alt) for alt in alternatives)
        )
        self._automaton: Any = None
        if self.alternatives is not None:
            import ahocorasick

            automaton = ahocorasick.Automaton()
            for needle in {n for alt in self.alternatives for clause in alt for n in clause}:
                automaton.add_word(needle, needle)
            automaton.make_automaton()
            self._automaton = automaton

    def possible(self, text: str) -> bool:
        """False only when the pattern cannot match `text`."""
        if self.alternatives is None:
            return True
        if self.fold:
            text = text.translate(ASCII_LOOKALIKES).lower()
        present = {needle for _, needle in self._automaton.iter(text)}
        if not present:
            return False
        return any(all(not present.isdisjoint(c) for c in alt) for alt in self.alternatives)

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.possible(text) else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text) if self.possible(text) else iter(())


def gated(pattern: re.Pattern[str]) -> Gated:
    """`pattern` behind its literal pre-check (see the module's docstring)."""
    return Gated(pattern)
