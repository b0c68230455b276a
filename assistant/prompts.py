"""Prompts as named constants. Each can be replaced through settings
(`system_prompt`, `answer_prompt`, `condense_prompt`)."""

from __future__ import annotations

SYSTEM_PROMPT = (
    "You answer questions about research papers using only the numbered sources given. "
    "Write two to four short sentences of plain prose. End every sentence with the number of "
    "the source that supports it in square brackets, like [1] or [2]. Use only the numbers of "
    "the sources given. If the sources do not answer the question, reply exactly: "
    "I could not find this in the indexed abstracts."
)

# {context}: numbered sources; {question}: the standalone question.
ANSWER_PROMPT = "Sources:\n{context}\n\nQuestion: {question}\nAnswer with citations:"

# {history}: earlier turns; {question}: the follow-up.
CONDENSE_PROMPT = (
    "Rewrite the follow-up question as one standalone question that names what 'it', 'they' "
    "or 'this' refer to, using the conversation. Reply with the question only.\n\n"
    "Conversation:\n{history}\n\nFollow-up question: {question}\nStandalone question:"
)

REFUSAL_MARKERS = (
    "could not find this",
    "cannot find",
    "can't find",
    "could not find",
    "not in the indexed abstracts",
    "do not contain",
    "does not contain",
    "don't contain",
    "no information",
    "not mentioned",
    "cannot answer",
    "can't answer",
    "not provided",
)
