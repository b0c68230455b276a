"""Results as JSON, the same shape for the CLI (--json), the app's /ask endpoint and the
MCP server."""

from __future__ import annotations

from typing import Any

from assistant.types import Answer, SearchResult


def search_json(result: SearchResult) -> dict[str, Any]:
    return {
        "query": result.query,
        "filters": result.filters.to_dict(),
        "detected": result.detected.to_dict(),
        "boosts": list(result.boosts),
        "matching": result.matching,
        "notes": list(result.notes),
        "hits": [
            {
                "rank": h.rank,
                "score": h.score,
                "dense_score": h.dense_score,
                "lexical_score": h.lexical_score,
                "paper": h.paper.to_dict(),
            }
            for h in result
        ],
    }


def answer_json(answer: Answer) -> dict[str, Any]:
    return {
        "question": answer.question,
        "standalone_question": answer.standalone_question,
        "text": answer.text,
        "refused": answer.refused,
        "reason": answer.reason,
        "backend": answer.backend,
        "filters": answer.filters.to_dict(),
        "matching": answer.matching,
        "notes": list(answer.notes),
        "citations": [
            {"number": c.number, "score": c.score, "paper": c.paper.to_dict()} for c in answer.citations
        ],
        "sentences": [s.__dict__ | {"citations": list(s.citations)} for s in answer.sentences],
    }
