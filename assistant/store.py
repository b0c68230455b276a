"""The Chroma vector store (embedded on disk, or a server), through LlamaIndex.

Papers are stored one vector each, with their metadata, so that the store alone
can rebuild the catalogue and the lexical index. Vectors are passed in: the
collection has no embedding function (Chroma's default would try a download).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import numpy as np

from assistant.config import Settings
from assistant.errors import ConfigError, StoreError
from assistant.types import Paper

log = logging.getLogger(__name__)

PAGE = 5000  # Chroma's largest batch is 5461


def paper_metadata(paper: Paper) -> dict[str, Any]:
    """Flat metadata Chroma can filter on. Lists hold strings; None is left out."""
    from assistant.text import fold

    meta: dict[str, Any] = {
        "label": paper.label,
        "title": paper.title,
        "venue": paper.venue,
        "venue_fold": fold(paper.venue) if paper.venue else None,
        "year": paper.year,
        "area": paper.area,
        "subarea": paper.subarea,
        "topic_fold": fold(paper.topic) if paper.topic else None,
        "area_fold": fold(paper.area) if paper.area else None,
        "subarea_fold": fold(paper.subarea) if paper.subarea else None,
        "comment": paper.comment,
        "url": paper.url,
        "external_id": paper.external_id,
        "authors": list(paper.authors) or None,
        "authors_fold": [fold(a) for a in paper.authors] or None,
        "sources": json.dumps(list(paper.sources)),
    }
    return {k: v for k, v in meta.items() if v is not None}


def paper_from_record(pid: str, document: str, meta: dict[str, Any]) -> Paper:
    authors = meta.get("authors") or ()
    try:
        sources = tuple(json.loads(meta.get("sources", "[]")))
    except (TypeError, json.JSONDecodeError):
        sources = ()
    year = meta.get("year")
    return Paper(
        id=pid,
        label=str(meta.get("label") or pid),
        abstract=document or "",
        title=meta.get("title"),
        authors=tuple(authors),
        venue=meta.get("venue"),
        year=int(year) if isinstance(year, (int, float)) else None,
        area=meta.get("area"),
        subarea=meta.get("subarea"),
        comment=meta.get("comment"),
        url=meta.get("url"),
        external_id=meta.get("external_id"),
        sources=sources,
    )


@dataclass(frozen=True)
class Match:
    id: str
    score: float  # cosine similarity


class VectorStore:
    """One Chroma collection of papers."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.location = settings.chroma_url or str(settings.chroma_dir)
        self._client = self._connect()
        try:
            self._collection = self._client.get_or_create_collection(
                settings.collection,
                embedding_function=None,
                metadata={"hnsw:space": "cosine"},
            )
        except Exception as exc:  # chromadb raises many types
            raise self._error("cannot open the collection", exc) from exc
        from llama_index.vector_stores.chroma import ChromaVectorStore

        self._li = ChromaVectorStore(chroma_collection=self._collection)
        # Author lists are stored as Chroma string arrays (filterable with $contains);
        # the constructor drops this flag, so it is set afterwards.
        self._li.flat_metadata = False

    # --- connection ----------------------------------------------------------
    def _connect(self) -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False)
        url = self.settings.chroma_url
        if url:
            parsed = urlparse(url)
            if parsed.scheme not in ("http", "https") or not parsed.hostname:
                raise ConfigError(
                    f"ASSISTANT_CHROMA_URL={url!r} is not a URL; write e.g. http://127.0.0.1:8000"
                )
            try:
                client = chromadb.HttpClient(
                    host=parsed.hostname,
                    port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                    ssl=parsed.scheme == "https",
                    settings=chroma_settings,
                )
                client.heartbeat()
            except Exception as exc:
                raise self._error("did not answer", exc) from exc
            return client
        try:
            self.settings.chroma_dir.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(self.settings.chroma_dir), settings=chroma_settings)
        except Exception as exc:
            raise self._error("cannot be opened", exc) from exc

    def _error(self, what: str, exc: BaseException) -> StoreError:
        if self.settings.chroma_url:
            return StoreError(
                f"Chroma server at {self.settings.chroma_url} {what} ({type(exc).__name__}: "
                f"{exc}). Start it with `chroma run --path DIR --host 127.0.0.1 --port PORT`, "
                "or unset ASSISTANT_CHROMA_URL to use the embedded store."
            )
        return StoreError(
            f"Chroma store in {self.settings.chroma_dir} {what} ({type(exc).__name__}: {exc}). "
            "Check that the folder is writable and the disk has space, or set "
            "ASSISTANT_DATA_DIR to another folder."
        )

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StoreError:
            raise
        except Exception as exc:
            raise self._error(what, exc) from exc

    # --- reading -------------------------------------------------------------
    def count(self) -> int:
        return int(self._call("cannot be read", self._collection.count))

    def ids(self) -> set[str]:
        out: set[str] = set()
        for offset in range(0, self.count(), PAGE):
            page = self._call("cannot be read", self._collection.get, include=[], limit=PAGE, offset=offset)
            out.update(page["ids"])
        return out

    def iter_records(
        self, with_embeddings: bool = False
    ) -> Iterator[tuple[list[str], list[str], list[dict[str, Any]], np.ndarray | None]]:
        include = ["documents", "metadatas"] + (["embeddings"] if with_embeddings else [])
        total = self.count()
        for offset in range(0, total, PAGE):
            page = self._call(
                "cannot be read", self._collection.get, include=include, limit=PAGE, offset=offset
            )
            emb = np.asarray(page["embeddings"], dtype=np.float32) if with_embeddings else None
            yield page["ids"], page["documents"], page["metadatas"], emb

    def papers(self) -> list[Paper]:
        return self.papers_and_vectors(with_vectors=False)[0]

    def papers_and_vectors(self, with_vectors: bool = True) -> tuple[list[Paper], np.ndarray | None]:
        """Every stored paper, and (optionally) their vectors in the same order."""
        out: list[Paper] = []
        blocks: list[np.ndarray] = []
        for ids, docs, metas, emb in self.iter_records(with_embeddings=with_vectors):
            out.extend(paper_from_record(i, d, m or {}) for i, d, m in zip(ids, docs, metas))
            if emb is not None and len(emb):
                blocks.append(emb)
        if not with_vectors:
            return out, None
        vectors = np.concatenate(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)
        return out, vectors

    def query(self, vector: np.ndarray, n: int, where: dict[str, Any] | None = None) -> list[Match]:
        """Nearest papers by cosine, optionally filtered inside Chroma.

        Asks Chroma for ids and distances only: documents and metadata are already in
        the catalogue, and fetching them (as LlamaIndex's query does) costs more than
        the search itself at 100k papers.
        """
        kwargs: dict[str, Any] = {"include": ["distances"]}
        if where:
            kwargs["where"] = where
        try:
            result = self._collection.query(query_embeddings=[vector.tolist()], n_results=max(1, n), **kwargs)
        except Exception as exc:
            if "n_results" in str(exc) or "contigious" in str(exc) or "contiguous" in str(exc):
                return self.query(vector, max(1, min(n, self.count())), where)
            raise self._error("could not be searched", exc) from exc
        ids = result["ids"][0] if result["ids"] else []
        distances = result["distances"][0] if result.get("distances") else []
        return [Match(i, 1.0 - float(d)) for i, d in zip(ids, distances)]

    # --- writing (callers hold the ingest lock) ------------------------------
    def add(self, papers: Sequence[Paper], vectors: np.ndarray) -> None:
        from llama_index.core.schema import TextNode

        nodes = [
            TextNode(
                id_=p.id,
                text=p.abstract,
                metadata=paper_metadata(p),
                embedding=v.tolist(),
                excluded_llm_metadata_keys=list(paper_metadata(p)),
                excluded_embed_metadata_keys=list(paper_metadata(p)),
            )
            for p, v in zip(papers, vectors)
        ]
        self._call("could not be written", self._li.add, nodes)

    def add_sources(self, seen: dict[str, tuple[str, ...]]) -> int:
        """Record further sources of stored papers; reads only those papers' metadata.
        Returns how many papers gained a source."""
        ids = list(seen)
        changed = 0
        for start in range(0, len(ids), PAGE):
            page = ids[start : start + PAGE]
            current = self._call("cannot be read", self._collection.get, ids=page, include=["metadatas"])
            update_ids, metas = [], []
            for pid, meta in zip(current["ids"], current["metadatas"]):
                meta = dict(meta or {})
                known = tuple(json.loads(meta.get("sources", "[]")))
                new = tuple(s for s in seen[pid] if s not in known)
                if new:
                    meta["sources"] = json.dumps(list(known + new))
                    update_ids.append(pid)
                    metas.append(meta)
            if update_ids:
                self._call("could not be written", self._collection.update, ids=update_ids, metadatas=metas)
                changed += len(update_ids)
        return changed

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._call("could not be written", self._collection.delete, ids=list(ids))
