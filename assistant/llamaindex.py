"""LlamaIndex adapters: the Assistant as a retriever and as a query engine.

`as_retriever(bot)` plugs the hybrid search into any LlamaIndex pipeline (node
postprocessors, fusion retrievers, a RetrieverQueryEngine with the caller's own LLM);
`as_query_engine(bot)` answers with the Assistant's own checked, cited answers. Each paper
is one TextNode: its id is the paper id, its text the abstract, its metadata what the
corpus knows about it.

Nothing here reads or sets `llama_index.core.Settings`: its defaults resolve to OpenAI, and
this assistant runs offline. A pipeline that needs an LLM is given one by its caller.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.response.schema import Response
from llama_index.core.callbacks import CallbackManager
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from assistant.as_json import answer_json
from assistant.types import Answer, Filters, Hit, Paper

# An LLM reading the nodes (and an embedder) sees what a citation needs: title, authors,
# venue, year, topic, url. Ids, sources and scores are bookkeeping for the caller.
_BOOKKEEPING = ["paper_id", "external_id", "sources", "rank", "dense_score", "lexical_score", "citation"]


def paper_node(paper: Paper, **extra: Any) -> TextNode:
    """One paper as a node: text = abstract, metadata = title, authors, venue, year, ..."""
    metadata: dict[str, Any] = {
        "paper_id": paper.id,
        "title": paper.title or paper.label,
        "label": paper.label,
        "authors": list(paper.authors),
        "venue": paper.venue,
        "year": paper.year,
        "venue_year": paper.venue_year,
        "topic": paper.topic,
        "url": paper.url,
        "doi": paper.doi,
        "external_id": paper.external_id,
        "sources": list(paper.sources),
        **extra,
    }
    hidden = [key for key in _BOOKKEEPING if key in metadata]
    return TextNode(
        id_=paper.id,
        text=paper.abstract,
        metadata=metadata,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
    )


def hit_node(hit: Hit) -> NodeWithScore:
    node = paper_node(
        hit.paper, rank=hit.rank, dense_score=_float(hit.dense_score), lexical_score=_float(hit.lexical_score)
    )
    return NodeWithScore(node=node, score=float(hit.score))


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


class AssistantRetriever(BaseRetriever):
    """`Assistant.search` as a LlamaIndex retriever: the k best papers for the query string,
    with the filters given here (and those the query names, as in `Assistant.search`)."""

    def __init__(
        self,
        bot: Any,
        k: int = 5,
        filters: Any = None,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        self._bot = bot
        self._k = k
        self._filters = Filters.from_mapping(filters)  # a bad filter fails here, not mid-pipeline
        super().__init__(callback_manager=callback_manager or CallbackManager([]))

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self._bot.search(query_bundle.query_str, k=self._k, filters=self._filters)
        return [hit_node(hit) for hit in result]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # Search is CPU-bound and synchronous: keep it off the event loop.
        return await asyncio.to_thread(self._retrieve, query_bundle)


class AssistantQueryEngine(CustomQueryEngine):
    """`Assistant.ask` as a LlamaIndex query engine. The Response text cites papers as [n];
    its source nodes are the cited papers, in citation order, each with metadata
    "citation" = n; `metadata` holds the whole answer in the CLI's JSON shape."""

    bot: Any
    k: int | None = None
    filters: Any = None
    backend: str | None = None

    def custom_query(self, query_str: str) -> Response:
        answer: Answer = self.bot.ask(query_str, k=self.k, filters=self.filters, backend=self.backend)
        return to_response(answer)

    async def acustom_query(self, query_str: str) -> Response:
        return await asyncio.to_thread(self.custom_query, query_str)


def to_response(answer: Answer) -> Response:
    nodes = [
        NodeWithScore(node=paper_node(c.paper, citation=c.number), score=float(c.score))
        for c in answer.citations
    ]
    data = answer_json(answer)
    metadata = {
        "citations": {c.number: c.paper.id for c in answer.citations},
        "refused": answer.refused,
        "reason": answer.reason,
        "backend": answer.backend,
        "answer": data,
    }
    return Response(response=answer.text, source_nodes=nodes, metadata=metadata)


def as_retriever(bot: Any, k: int = 5, filters: Any = None) -> AssistantRetriever:
    return AssistantRetriever(bot, k=k, filters=filters)


def as_query_engine(
    bot: Any, k: int | None = None, filters: Any = None, backend: str | None = None
) -> AssistantQueryEngine:
    return AssistantQueryEngine(bot=bot, k=k, filters=Filters.from_mapping(filters), backend=backend)
