"""The Assistant inside real LlamaIndex pipelines, with no hosted model anywhere."""

from __future__ import annotations

import anyio
import pytest
from llama_index.core import Settings
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers.no_text import NoText
from llama_index.core.schema import MetadataMode

from assistant.errors import FilterError
from assistant.llamaindex import AssistantQueryEngine, AssistantRetriever, as_query_engine, as_retriever
from tests.conftest import paper_id, remote

SEAL_TEXT = "we propose PrivateSeal, a watermarking framework"


def test_retriever_in_a_retriever_query_engine_with_a_postprocessor(bot, connections) -> None:
    retriever = as_retriever(bot, k=5)
    assert isinstance(retriever, AssistantRetriever)
    scores = [n.score for n in retriever.retrieve("What is PrivateSeal?")]
    assert len(scores) == 5 and scores == sorted(scores, reverse=True)
    cutoff = (scores[0] + scores[-1]) / 2
    engine = RetrieverQueryEngine.from_args(
        retriever,
        llm=MockLLM(),
        # from_args(response_mode="no_text") builds NoText without the llm and so falls
        # back to Settings.llm (OpenAI); a synthesizer given its llm avoids that.
        response_synthesizer=NoText(llm=MockLLM()),
        node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=cutoff)],
    )
    response = engine.query("What is PrivateSeal?")
    nodes = response.source_nodes
    assert 1 <= len(nodes) < 5 and all(n.score is not None and n.score >= cutoff for n in nodes)
    top = nodes[0].node
    seal = next(p for p in bot.catalogue.papers if p.id == paper_id(bot, SEAL_TEXT))
    assert top.node_id == seal.id
    assert "PrivateSeal" in top.get_content()
    meta = top.metadata
    assert (meta["paper_id"], meta["label"], meta["venue"], meta["year"]) == (
        seal.id,
        seal.label,
        seal.venue,
        seal.year,
    )
    assert meta["title"] == (seal.title or seal.label)
    assert meta["authors"] == list(seal.authors) and meta["topic"] == seal.topic
    assert meta["rank"] == 1 and isinstance(meta["dense_score"], float)
    assert remote(connections) == []
    assert Settings._llm is None and Settings._embed_model is None  # never set, never resolved


def test_a_synthesizing_pipeline_sees_citation_metadata_but_not_bookkeeping(bot, connections) -> None:
    engine = RetrieverQueryEngine.from_args(as_retriever(bot, k=2), llm=MockLLM(), response_mode="compact")
    response = engine.query("What is PrivateSeal?")
    prompt = str(response)  # MockLLM answers with the prompt it was given
    assert "PrivateSeal" in prompt
    node = response.source_nodes[0].node
    shown = node.get_content(metadata_mode=MetadataMode.LLM)
    assert (
        f"venue: {node.metadata['venue']}" in shown and "paper_id" not in shown and "dense_score" not in shown
    )
    assert remote(connections) == []
    assert Settings._llm is None


def test_filters_and_async_retrieval(bot) -> None:
    venue = next(p.venue_year for p in bot.catalogue.papers if p.venue and p.year)
    retriever = as_retriever(bot, k=3, filters={"venue": venue})
    nodes = anyio.run(retriever.aretrieve, "watermarking diffusion images")
    assert nodes and all(n.node.metadata["venue_year"] == venue for n in nodes)
    with pytest.raises(FilterError, match="unknown filter 'conference'"):
        as_retriever(bot, filters={"conference": "NeurIPS"})
    with pytest.raises(FilterError, match="unknown venue 'CVPR'"):
        as_retriever(bot, filters={"venue": "CVPR"}).retrieve("watermarks")


def test_query_engine_answers_with_citations(bot, connections) -> None:
    engine = as_query_engine(bot, backend="extractive")
    assert isinstance(engine, AssistantQueryEngine)
    response = engine.query("What is PrivateSeal?")
    assert "[1]" in str(response)
    seal_id = paper_id(bot, SEAL_TEXT)
    assert seal_id in [n.node.node_id for n in response.source_nodes]
    first = response.source_nodes[0].node
    assert first.metadata["citation"] == 1
    assert response.metadata is not None
    assert response.metadata["citations"][1] == first.node_id
    assert response.metadata["refused"] is False and response.metadata["backend"] == "extractive"
    assert response.metadata["answer"]["text"] == str(response)
    assert remote(connections) == []
    assert Settings._llm is None


def test_query_engine_refusal_has_no_sources(bot) -> None:
    response = anyio.run(
        as_query_engine(bot, backend="extractive").aquery, "What is the recipe for a good chocolate cake?"
    )
    assert response.metadata is not None and response.metadata["refused"] is True
    assert response.source_nodes == []
    assert str(response) == "I could not find this in the indexed abstracts."
