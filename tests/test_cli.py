"""The command line, run as a user would (in-process through main())."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.cli import main
from tests.conftest import SEEDS


@pytest.fixture()
def env(seeded_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import shutil

    data = tmp_path / "data"
    shutil.copytree(seeded_dir, data)
    monkeypatch.setenv("ASSISTANT_DATA_DIR", str(data))
    monkeypatch.setenv("ASSISTANT_CORPUS", json.dumps([str(SEEDS)]))
    monkeypatch.setenv("ASSISTANT_BACKEND", "extractive")
    return data


def test_search_json(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "Shapley values", "--k", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["hits"]) == 3 and "Shapley" in out["hits"][0]["paper"]["abstract"]


def test_search_with_filters_prints_them(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "bandits", "--venue", "ICLR", "--year", "2026"]) == 0
    out = capsys.readouterr().out
    assert "filters: venue=ICLR, year=2026" in out


def test_ask_and_stats(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "How does GRAPE unify positional encodings?"]) == 0
    out = capsys.readouterr().out
    assert "[1]" in out and "References" in out
    assert main(["stats"]) == 0
    assert "87 abstracts · 5 venues · 2024–2026" in capsys.readouterr().out


def test_user_errors_are_one_line(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "x", "--venue", "CVPR"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown venue 'CVPR'") and "Traceback" not in err
    assert main(["ingest", "/no/such/file.jsonl"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["ask", "   "]) == 2


def test_ingest_reports_problems(env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"abstract": "' + "Word " * 60 + '"}\n{oops\n')
    assert main(["ingest", "--quiet", str(bad)]) == 0
    captured = capsys.readouterr()
    assert "1 added" in captured.out and "bad.jsonl:2" in captured.err
