"""The MCP server, driven by the official SDK's own client: over stdio as a real
subprocess (as Claude Desktop and IDEs launch it), and over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp_types import CallToolResult

from assistant.errors import FilterError, QuestionError
from tests.conftest import ROOT, SEEDS, free_port, paper_id

SEAL_TEXT = "we propose PrivateSeal, a watermarking framework"
TIMEOUT_S = 300  # the server loads torch and the embedder on its first call; the machine is shared


def server_env(data: Path) -> dict[str, str]:
    return {
        "ASSISTANT_DATA_DIR": str(data),
        "ASSISTANT_BACKEND": "extractive",
        "ASSISTANT_CORPUS": json.dumps([str(SEEDS)]),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }


@pytest.fixture(scope="module")
def data_copy(seeded_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("mcp") / "data"
    shutil.copytree(seeded_dir, data)
    return data


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def session_calls(client: Client) -> dict[str, Any]:
    """Every call the tests check, made in one session (one server start)."""
    return {
        "tools": (await client.list_tools()).tools,
        "search": await client.call_tool("search", {"query": "What is PrivateSeal?", "k": 3}),
        "ask": await client.call_tool("ask", {"question": "What is PrivateSeal?"}),
        "follow_up": await client.call_tool(
            "ask",
            {
                "question": "How is it evaluated?",
                "history": [["What is PrivateSeal?", "PrivateSeal is a watermarking framework [1]."]],
            },
        ),
        "bad_venue": await client.call_tool("search", {"query": "watermarks", "filters": {"venue": "CVPR"}}),
        "empty_question": await client.call_tool("ask", {"question": "   "}),
        "bad_k": await client.call_tool("search", {"query": "watermarks", "k": 0}),
        "stats": await client.call_tool("stats", {}),
        "k_as_word": await client.call_tool("search", {"query": "watermarks", "k": "five"}),
        "query_as_list": await client.call_tool("search", {"query": ["a", "b"]}),
        "no_question": await client.call_tool("ask", {}),
        "long_history": await client.call_tool(
            "ask", {"question": "How is it evaluated?", "history": [["word " * 200_000, "an answer"]]}
        ),
    }


@pytest.fixture(scope="module")
def stdio_calls(data_copy: Path) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "assistant.mcp_server"],
        env=server_env(data_copy),
        cwd=str(ROOT),
    )

    async def run() -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT_S):
            async with Client(params) as client:
                return await session_calls(client)

    return anyio.run(run)


def test_lists_the_three_tools(stdio_calls) -> None:
    tools = {t.name: t for t in stdio_calls["tools"]}
    assert set(tools) == {"search", "ask", "stats"}
    assert set(tools["search"].input_schema["properties"]) == {"query", "k", "filters"}
    assert tools["search"].input_schema["required"] == ["query"]
    assert set(tools["ask"].input_schema["properties"]) == {"question", "filters", "history"}
    assert all(t.output_schema is not None and t.output_schema["type"] == "object" for t in tools.values())


def test_search_returns_papers_as_structured_content(stdio_calls, bot) -> None:
    result = stdio_calls["search"]
    assert not result.is_error
    data = result.structured_content
    assert data["query"] == "What is PrivateSeal?"
    assert len(data["hits"]) == 3
    first = data["hits"][0]
    assert "PrivateSeal" in first["paper"]["abstract"]
    assert first["paper"]["id"] == paper_id(bot, SEAL_TEXT)
    assert first["rank"] == 1 and isinstance(first["score"], float)
    assert {"title", "authors", "venue", "year", "topic", "url", "label"} <= set(first["paper"])
    assert json.loads(text_of(result)) == data  # the same JSON as text, for text-only clients


def test_ask_returns_cited_text_and_the_cited_papers(stdio_calls, bot) -> None:
    data = stdio_calls["ask"].structured_content
    assert not stdio_calls["ask"].is_error and not data["refused"]
    assert "[1]" in data["text"]
    assert data["backend"] == "extractive"
    first = data["citations"][0]
    assert first["number"] == 1
    assert first["paper"]["id"] == paper_id(bot, SEAL_TEXT)
    assert first["paper"]["venue"] and first["paper"]["year"]
    assert all(c["number"] == i for i, c in enumerate(data["citations"], start=1))
    assert data["sentences"] and all(isinstance(s["citations"], list) for s in data["sentences"])


def test_history_makes_a_follow_up_stand_alone(stdio_calls) -> None:
    data = stdio_calls["follow_up"].structured_content
    assert "PrivateSeal" in (data["standalone_question"] or "")


def test_user_mistakes_are_tool_errors_with_the_cli_message(stdio_calls, bot) -> None:
    with pytest.raises(FilterError) as venue:
        bot.search("watermarks", filters={"venue": "CVPR"})
    with pytest.raises(QuestionError) as empty:
        bot.search("   ")
    with pytest.raises(FilterError) as k:
        bot.search("watermarks", k=0)
    for name, exc in (("bad_venue", venue.value), ("empty_question", empty.value), ("bad_k", k.value)):
        result = stdio_calls[name]
        assert result.is_error, name
        assert text_of(result) == str(exc), name  # what the CLI prints after "error: "
        assert result.structured_content == {"error": str(exc), "kind": "user"}, name
    assert "unknown venue 'CVPR'" in text_of(stdio_calls["bad_venue"])


def test_wrong_argument_types_get_one_line_messages(stdio_calls) -> None:
    for name, fragment in (
        ("k_as_word", "search: k: must be a valid integer"),
        ("query_as_list", "search: query: must be a valid string"),
        ("no_question", "ask: question is required"),
    ):
        result = stdio_calls[name]
        text = text_of(result)
        assert result.is_error and fragment in text, (name, text)
        assert "\n" not in text and "pydantic" not in text and "https://" not in text, text
        assert result.structured_content == {"error": text, "kind": "user"}


def test_a_long_earlier_question_is_not_blamed_on_the_short_one(stdio_calls) -> None:
    """A 1 MB earlier question in `history`: the short follow-up is answered; the earlier
    turn is cut, and the answer says so."""
    result = stdio_calls["long_history"]
    assert not result.is_error, text_of(result)
    assert "previous question has 999,999 characters; only its first 2,000 were read" in json.dumps(
        result.structured_content
    )


def test_stats(stdio_calls, bot) -> None:
    data = stdio_calls["stats"].structured_content
    assert data["papers"] == 87
    assert data["line"].startswith("87 abstracts")
    assert data["venues"] == bot.stats().venues
    assert data["years"] == {str(y): n for y, n in bot.stats().years.items()}


# --- streamable HTTP ---------------------------------------------------------------


@pytest.fixture()
def http_server(data_copy: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant.mcp_server", "--http", "--port", str(port)],
        cwd=ROOT,
        env={**get_default_environment(), **server_env(data_copy)},  # as the stdio client does
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the server exited: {(tmp_path / 'server.log').read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("the HTTP server did not start in 120 s")
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_streamable_http_on_loopback(http_server: str) -> None:
    async def run() -> tuple[CallToolResult, CallToolResult]:
        with anyio.fail_after(TIMEOUT_S):
            async with Client(http_server) as client:
                return await client.call_tool("stats", {}), await client.call_tool(
                    "search", {"query": "What is PrivateSeal?", "k": 1}
                )

    stats, search = anyio.run(run)
    assert stats.structured_content["papers"] == 87
    assert "PrivateSeal" in search.structured_content["hits"][0]["paper"]["abstract"]
