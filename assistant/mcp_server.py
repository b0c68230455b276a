"""An MCP server over the Assistant: `search`, `ask` and `stats` as tools for MCP clients
(Claude Desktop, IDE agents, any client of the official SDK).

Results are structured content in the same JSON shapes the CLI prints with --json
(`assistant.as_json`), so a script that reads one reads the other. A user mistake (an
unknown venue, an empty question, k out of range) is a tool error whose text is exactly the
one-line message the CLI prints after "error: ", with its kind ("user", "store", "backend")
in the structured content: the calling model can read it and correct its call.

    python -m assistant.mcp_server                # stdio, for a client that launches it
    python -m assistant.mcp_server --http --port 8765   # streamable HTTP on 127.0.0.1

Settings come from the ASSISTANT_* environment variables and assistant.toml, as for the
CLI; the answering backend is the configured one (ASSISTANT_BACKEND).
"""

# No `from __future__ import annotations`: the SDK reads the tool signatures at runtime
# to build their input and output schemas.

import argparse
import json
import logging
import sys
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from assistant.api import Assistant
from assistant.as_json import answer_json, search_json
from assistant.errors import EXIT_CODES, AssistantError, kind_of

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
INSTRUCTIONS = (
    "Search and question answering over an index of research-paper abstracts. `search` "
    "returns the best-matching papers with their metadata; `ask` answers from the abstracts "
    "and cites them as [n], where n is a citation number in the result; `stats` says what is "
    "indexed (venues, years, topics). Filters: venue (e.g. 'NeurIPS 2025'), year ('2024' or "
    "'2023-2025'), year_from, year_to, author, topic."
)

# The structured content is a JSON object in the CLI's --json shape.
Result = Annotated[CallToolResult, dict[str, Any]]


class _Server(MCPServer):
    """Arguments of the wrong type or shape get the same one-line message as every other
    mistake (the SDK would send pydantic's multi-line dump, with a documentation URL)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            message = argument_error(name, exc.__cause__)
            return CallToolResult(
                content=[TextContent(type="text", text=message)],
                structured_content={"error": message, "kind": "user"},
                is_error=True,
            )


def argument_error(tool: str, error: ValidationError) -> str:
    """ "k must be an integer (got 'five')" — one line per tool call, naming each bad argument."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ()) if p != "args") or "arguments"
        got = item.get("input")
        text = repr(got)
        shown = text if len(text) <= 40 else f"a {type(got).__name__} of {len(text):,} characters"
        if item.get("type") == "missing":
            parts.append(f"{where} is required")
        else:
            what = str(item.get("msg", "is invalid")).replace("Input should be", "must be")
            parts.append(f"{where}: {what[:1].lower()}{what[1:]} (got {shown})")
    return f"{tool}: " + "; ".join(parts)


def build_server(bot: Assistant) -> MCPServer:
    """An MCP server whose tools call `bot`; each call runs on a worker thread (the SDK runs
    synchronous tools that way), and the Assistant guards its own shared state."""
    server = _Server(
        name="research-assistant",
        title="Research-paper assistant",
        instructions=INSTRUCTIONS,
        lifespan=_warm_up(bot),
    )

    @server.tool(
        title="Search papers",
        description="The k papers whose abstracts best match the query (hybrid dense + lexical "
        "search), each with title, authors, venue, year, topic, url and abstract. Filters narrow "
        "the papers searched; filters named in the query itself are detected too.",
    )
    def search(query: str, k: int = 5, filters: dict[str, Any] | None = None) -> Result:
        return _call(lambda: search_json(bot.search(query, k=k, filters=filters)))

    @server.tool(
        title="Ask a question",
        description="Answer a question from the indexed abstracts only. The text cites papers "
        "as [n]; `citations` gives each number's paper. A question the abstracts do not answer "
        "gets a refusal (refused: true) rather than a guess. `history` holds earlier "
        "[question, answer] pairs, so a follow-up such as 'how is it evaluated?' is understood.",
    )
    def ask(
        question: str,
        filters: dict[str, Any] | None = None,
        history: list[list[str]] | None = None,
    ) -> Result:
        return _call(lambda: answer_json(bot.ask(question, filters=filters, history=history)))

    @server.tool(
        title="Index statistics",
        description="How many abstracts are indexed, and how many per venue, year and topic: "
        "the valid values for the filters of `search` and `ask`.",
    )
    def stats() -> Result:
        return _call(lambda: _stats_json(bot))

    return server


def _call(produce: Callable[[], dict[str, Any]]) -> CallToolResult:
    """Run a tool body: its JSON as structured content (and as text, for clients that read
    only text), or an AssistantError as a tool error carrying the CLI's message."""
    try:
        data = _plain(produce())
    except AssistantError as exc:
        message = str(exc)
        return CallToolResult(
            content=[TextContent(type="text", text=message)],
            structured_content={"error": message, "kind": kind_of(exc)},
            is_error=True,
        )
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
        structured_content=data,
    )


def _plain(data: dict[str, Any]) -> dict[str, Any]:
    """JSON-safe: numpy scalars (scores) become numbers, int keys (years) strings."""
    return json.loads(json.dumps(data, ensure_ascii=False, default=_json_default))  # type: ignore[no-any-return]


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalar
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _stats_json(bot: Assistant) -> dict[str, Any]:
    stats = bot.stats()
    return {**stats.__dict__, "line": stats.line(), "notes": list(bot.notes)}


def _warm_up(bot: Assistant) -> Callable[[MCPServer], Any]:
    """Load the embedder and the index in the background once the server is up, so the
    first tool call does not wait for torch (clients time out slow calls). Started from
    the lifespan, when the stdio transport already keeps stray output off the wire."""

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        threading.Thread(target=_warm, args=(bot,), name="warm-up", daemon=True).start()
        yield

    return lifespan


def _warm(bot: Assistant) -> None:
    try:
        bot.search("warm up", k=1)
    except Exception as exc:  # the first real call reports it, with its message
        log.debug("warm-up failed: %s", exc)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m assistant.mcp_server",
        description="Serve search, ask and stats over the Model Context Protocol.",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    args = parser.parse_args(argv)
    try:
        bot = Assistant()
    except AssistantError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CODES[kind_of(exc)]
    server = build_server(bot)
    try:
        if args.http:
            # Loopback only: the server has no authentication.
            server.run("streamable-http", host="127.0.0.1", port=args.port)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
