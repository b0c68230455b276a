"""Settings are validated alike from keyword arguments, environment variables and
assistant.toml: a wrong value is a ConfigError naming the setting, its source and
what is valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant import Assistant, Settings
from assistant.errors import ConfigError

# (setting, bad value as text, fragment of the message)
BAD = [
    ("backend", "bogus", "not one of: extractive, llama-cpp, openai, ollama"),
    ("k", "-3", "greater than or equal to 1"),
    ("k", "many", "valid integer"),
    ("fusion", "max", "'convex' or 'rrf'"),
    ("refresh_s", "-1", "greater than or equal to 0"),
    ("dense_share", "1.5", "less than or equal to 1"),
    ("llm_model", "gpt-5", "'qwen2.5-coder-1.5b'"),
    ("collection", "ab", "at least 3 characters"),
    ("embedder", "bge-small", "'all-mpnet-base-v2' or 'embeddinggemma-300m'"),
    ("ui_port", "70000", "less than or equal to 65535"),
    ("llm_temperature", "hot", "valid number"),
    ("store_batch_size", "0", "greater than or equal to 1"),
    ("auto_ingest", "perhaps", "valid boolean"),
]


def _kwargs(name: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Assistant(Settings(), **{name: value})


def _env(name: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(f"ASSISTANT_{name.upper()}", value)
    Assistant()


def _toml(name: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "assistant.toml"
    path.write_text(f"{name} = {value!r}\n".replace("'", '"'))
    monkeypatch.setenv("ASSISTANT_CONFIG", str(path))
    Assistant()


SOURCES = {
    "keyword argument": _kwargs,
    "environment variable ASSISTANT_": _env,
    "assistant.toml": _toml,
}


@pytest.mark.parametrize(("name", "value", "message"), BAD, ids=[f"{b[0]}={b[1]}" for b in BAD])
@pytest.mark.parametrize("source", list(SOURCES))
def test_bad_setting_is_a_config_error_naming_it(
    source: str, name: str, value: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError) as caught:
        SOURCES[source](name, value, tmp_path, monkeypatch)
    text = str(caught.value)
    assert f"setting {name} = " in text and message in text
    assert source in text


def test_unknown_setting_suggests_the_close_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown setting 'colour' \(keyword argument\)"):
        Assistant(Settings(), colour="red")
    with pytest.raises(ConfigError, match="did you mean backend"):
        Assistant(backnd="extractive")
    path = tmp_path / "assistant.toml"
    path.write_text('colour = "red"\n')
    monkeypatch.setenv("ASSISTANT_CONFIG", str(path))
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        Assistant()


def test_good_overrides_are_converted_like_the_environment(tmp_path: Path) -> None:
    bot = Assistant(Settings(), data_dir=str(tmp_path / "x"), k="7", backend="extractive")
    assert bot.settings.data_dir == tmp_path / "x" and bot.settings.k == 7
    assert bot.settings.chroma_dir == tmp_path / "x" / "chroma"


def test_readme_documents_every_setting() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    missing = [name for name in Settings.model_fields if f"`{name}`" not in table]
    assert not missing, f"settings missing from the README's configuration table: {missing}"


def test_a_second_configuration_gets_its_own_chat_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process-wide chat-model cache keys on every setting the model is built from."""
    from assistant.answer.llms import chat_model

    base = {"backend": "openai", "openai_base_url": "http://127.0.0.1:9/v1", "openai_model": "m"}
    monkeypatch.setenv("KEY_A", "first")
    monkeypatch.setenv("KEY_B", "second")
    cold = chat_model(Settings(**base, llm_temperature=0.0))
    warm = chat_model(Settings(**base, llm_temperature=0.7))
    assert cold is not warm and (cold.temperature, warm.temperature) == (0.0, 0.7)  # type: ignore[attr-defined]
    a = chat_model(Settings(**base, openai_api_key_env="KEY_A"))
    b = chat_model(Settings(**base, openai_api_key_env="KEY_B"))
    assert a is not b and (a.client.api_key, b.client.api_key) == ("first", "second")  # type: ignore[attr-defined]
    assert chat_model(Settings(**base, openai_api_key_env="KEY_A")) is a
