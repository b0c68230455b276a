"""A claim that asserts what its abstract sentence denies.

A cosine cannot tell "these bounds do not grow with n at a polynomial rate" from "their
regret bounds grow polynomially with the number of followers": the words are the same
but one. The model wrote the second, cited to the first (`heldout19`, a yes/no follow-up
answered "Yes"). Here the test is narrow on purpose: the abstract's sentence puts a
negation right before a word ("do not grow", "never converges", "requires no
retraining", "fails to converge"), the claim uses that word and another of the few after it ("with n at a
polynomial rate"), and has no negation of its own. A claim that says
the same in other words ("requires no retraining" for "does not need retraining") keeps
its own negation, "not only … but also", "whether or not", "no more than" deny nothing, and
a sentence that denies it of other methods ("Existing samplers do not converge …") is not
about the paper's own.
"""

from __future__ import annotations

import re

from assistant.text import content_terms, fold

# "do not grow", "cannot be learned", "doesn't scale", "never converges", "requires no retraining",
# "fails to converge"
_DENIED = re.compile(
    r"(?:(?:\b(?:not|never|cannot|no)|n['’]t)\s+"
    r"(?:(?:be|been|being|have|has|had|do|does|did|always|necessarily|significantly|substantially"
    r"|even|yet)\s+)?"
    # "fails to converge", "are unable to capture"
    r"|\b(?:fails?|failed|failing|unable)\s+to\s+(?:be\s+)?)([A-Za-z][\w-]*)",
    re.IGNORECASE,
)
_NOT_A_DENIAL = re.compile(
    r"\bnot\s+(?:only|just|merely|necessarily|always|all|every|least)\b|\bwhether\s+or\s+not\b"
    r"|\bif\s+not\b|\bno\s+(?:longer|more|less|fewer|matter|doubt|other)\b|\bnot\s+to\s+mention\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|never|cannot|no|none|neither|nor|without|fails?|failed|failing|unable|inability|lacks?|absent"
    r"|unlike|rather\s+than"
    r"|instead\s+of)\b|n['’]t\b",
    re.IGNORECASE,
)
# Before the negation: the sentence denies it of other methods ("Existing samplers do not
# converge …", "Unlike prior methods, which do not scale …"), not of the paper's own.
_OTHERS = re.compile(
    r"\b(?:existing|prior|previous|earlier|conventional|traditional|standard|classical|baselines?|other"
    r"|competing|unlike|whereas|while|however|most|many|current|state-of-the-art|sota|they|these\s+methods)\b",
    re.IGNORECASE,
)
STEM = 5  # letters compared: "grows" asserts "grow", "converged" "converges"
WINDOW = 6  # words from the denied one on that say what is denied ("grow with n at a polynomial rate")
SHARED = 2  # of which the claim must use this many, the denied word first


def denied(sentence: str, claim: str) -> str | None:
    """The word `sentence` denies that `claim` asserts ("grow"), or None: the claim uses the
    denied word and another of the words after it ("polynomially"), without a negation."""
    if _NEGATION.search(claim):
        return None
    asserted = {w[:STEM] for w in content_terms(claim)}
    text = _NOT_A_DENIAL.sub(" ", sentence)
    for m in _DENIED.finditer(text):
        word = fold(m.group(1)).split(" ")[0]
        if len(word) < 4 or word[:STEM] not in asserted or _OTHERS.search(text[: m.start()]):
            continue
        window = " ".join(text[m.start(1) :].split()[:WINDOW])
        if len({w[:STEM] for w in content_terms(window)} & asserted) >= SHARED:
            return word
    return None
