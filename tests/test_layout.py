"""The library's import graph: no cycle (imports inside functions count too), the
subpackages layered in pipeline order, and the library never reaches into the app, the
evaluation harness or the benchmarks (only the CLI may start the app)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "assistant"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """Every module this file imports, wherever the import statement is. `from pkg import
    mod` imports the submodule `pkg.mod`; `from pkg.mod import name` imports `pkg.mod`."""
    found: set[str] = set()
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base]).strip(".")
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return found


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    names = set(modules)
    return {
        name: {m for m in imports(path, names) if m in modules and m != name}
        for name, path in modules.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_library_has_no_import_cycle() -> None:
    edges = graph()
    assert (
        "assistant.corpus.readers" in edges and "assistant.corpus.records" in edges["assistant.corpus.bibtex"]
    )
    assert cycles(edges) == []


# Pipeline order: a subpackage imports only the foundation and the subpackages before it.
# The foundation (settings, errors, text, typed values, model files) imports no subpackage;
# the entry points (api, answerers, cli, mcp_server, llamaindex, as_json) import any.
LAYERS = ("index", "corpus", "search", "answer")
FOUNDATION = ("config", "errors", "text", "types", "paths", "backends", "model_files")


def layer(module: str) -> int | None:
    """-1 for the foundation, the layer's position for a subpackage, None for an entry point."""
    part = module.split(".")[1] if "." in module else ""
    if part in FOUNDATION:
        return -1
    return LAYERS.index(part) if part in LAYERS and module.count(".") >= 1 else None


def test_the_subpackages_follow_the_pipeline() -> None:
    edges = graph()
    assert {m.split(".")[1] for m in edges if m.count(".") == 2} == set(LAYERS)
    wrong = [
        f"{a} -> {b}"
        for a, targets in edges.items()
        for b in targets
        if (la := layer(a)) is not None and ((lb := layer(b)) is None or lb > la)
    ]
    assert wrong == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_library_does_not_import_the_app_the_harness_or_the_benchmarks() -> None:
    for path in PACKAGE.rglob("*.py"):
        found = imports(path, set())
        outside = {m for m in found if m.split(".")[0] in ("ui", "eval", "benchmarks", "tests")}
        if module_name(path) == "assistant.cli":
            outside -= {"ui.app"}  # `assistant serve` starts the app
        assert not outside, f"{path.relative_to(ROOT)} imports {sorted(outside)}"
