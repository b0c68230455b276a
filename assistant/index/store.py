"""The Chroma store of record (embedded on disk, or a server).

Papers are stored one vector each, with their metadata and abstract, written with
chromadb's own `collection.add` (see the README for why not through LlamaIndex).
The collection has no embedding function (Chroma's default would try a download).

The embedded store is opened for one piece of work at a time (`session()`) and
closed after it: an embedded client that stays open keeps segment state that goes
stale when another process writes, and may later write it back. Searching never
reads Chroma: it uses the snapshot (`assistant.index.snapshot`).

Every metadata field is bounded (`bounded_metadata`): one record whose metadata
exceeds what Chroma's log accepts (about 150 KB) makes an embedded store
unreadable for good.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from filelock import FileLock

from assistant.config import Settings
from assistant.errors import ConfigError, StoreError
from assistant.index import server_changes
from assistant.text import fold
from assistant.types import Paper, merge

log = logging.getLogger(__name__)

PAGE = 5000  # Chroma's largest batch is 5461

# Bounds on what one record may put in the metadata (characters / entries).
MAX_AUTHORS = 300
MAX_SOURCES = 20
MAX_FIELD = {"title": 1000, "label": 300, "venue": 200, "area": 200, "subarea": 200, "comment": 2000}
MAX_FIELD.update({"url": 2000, "external_id": 300, "author": 200, "source": 300, "doi": 300})


def _cut(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def bounded(paper: Paper) -> Paper:
    """The paper with every field cut to the bounds the store accepts."""
    authors = tuple(_cut(a, MAX_FIELD["author"]) or "" for a in paper.authors)
    sources = tuple(_cut(s, MAX_FIELD["source"]) or "" for s in paper.sources)
    keys = tuple(k for k in paper.keys if len(k) <= MAX_FIELD["source"])[: 2 * MAX_SOURCES]
    if len(sources) > MAX_SOURCES:
        sources = (*sources[: MAX_SOURCES - 1], f"… and {len(sources) - MAX_SOURCES + 1} more sources")
    cut: dict[str, Any] = {
        name: _cut(getattr(paper, name), limit) for name, limit in MAX_FIELD.items() if hasattr(paper, name)
    }
    return paper.replace(authors=authors, sources=sources, keys=keys, **cut)


def paper_metadata(paper: Paper) -> dict[str, Any]:
    """Flat, bounded metadata Chroma can filter on. Lists hold strings; None is left out.
    Author lists longer than MAX_AUTHORS keep their first MAX_AUTHORS names and the total
    (large collaborations list thousands)."""
    paper = bounded(paper)
    authors = list(paper.authors[:MAX_AUTHORS])
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
        "authors": authors or None,
        "authors_fold": [fold(a) for a in authors] or None,
        "authors_total": len(paper.authors) if len(paper.authors) > MAX_AUTHORS else None,
        "sources": json.dumps(list(paper.sources)),
        "doi": paper.doi,
        "keys": json.dumps(list(paper.keys)) if paper.keys else None,
    }
    return {k: v for k, v in meta.items() if v is not None}


def paper_from_record(pid: str, document: str, meta: dict[str, Any]) -> Paper:
    authors = meta.get("authors") or ()
    try:
        sources = tuple(json.loads(meta.get("sources", "[]")))
        keys = tuple(json.loads(meta.get("keys", "[]")))
    except (TypeError, json.JSONDecodeError):
        sources, keys = (), ()
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
        doi=meta.get("doi"),
        keys=keys,
    )


def fill(stored: Paper, seen: Paper) -> Paper:
    """The stored paper with the sources of `seen` added and its empty fields filled from it."""
    merged = merge(stored, seen.replace(id=stored.id))
    if merged.title and not stored.title:
        merged = merged.replace(label=merged.title)
    return merged


def _disk_full(folder: Path) -> bool:
    """Less than 16 MB free where the store lives: the likely cause of an odd failure."""
    import shutil

    path = folder
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free < 16 * 2**20
    except OSError:
        return False


OPEN_LOCK_TIMEOUT_S = 120.0  # opening takes well under a second


def _open_lock(path: Path) -> FileLock | None:
    """The lock that serialises opening the embedded store, held; None where it cannot be
    taken (a read-only folder, a holder stuck for OPEN_LOCK_TIMEOUT_S): open without it."""
    try:
        lock = FileLock(str(path))
        lock.acquire(timeout=OPEN_LOCK_TIMEOUT_S)
        return lock
    except OSError:  # filelock's Timeout is an OSError too
        return None


class Session:
    """One open collection: reads and (under the write lock) writes."""

    def __init__(self, store: VectorStore, collection: Any) -> None:
        self.store = store
        self.collection = collection
        self.wrote = False  # anything written (or tried: a failed call may have written part)
        self.updated: set[str] = set()  # ids whose metadata was changed in place

    @property
    def store_id(self) -> str:
        return str(self.collection.id)

    def count(self) -> int:
        return int(self.store.call("cannot be read", self.collection.count))

    def ids(self) -> set[str]:
        return set(self._ids())

    def _ids(self) -> list[str]:
        """Every stored id, in the store's order, in one read. Chroma pages by OFFSET, which
        walks every row before the page: at a million papers the last page of 5,000 took
        2.6 s and all 200 pages about four minutes, one read of every id 3.7 s."""
        return list(self.store.call("cannot be read", self.collection.get, include=[])["ids"])

    def batches(self, ids: Sequence[str] | None = None) -> Iterator[tuple[list[Paper], np.ndarray]]:
        """Stored papers with their vectors, a page at a time (all, or these ids). Pages are
        read by id, never by offset (see `_ids`)."""
        include = ["documents", "metadatas", "embeddings"]
        wanted = self._ids() if ids is None else ids
        chunks = [list(wanted[i : i + PAGE]) for i in range(0, len(wanted), PAGE)]
        pages = (
            self.store.call("cannot be read", self.collection.get, ids=c, include=include) for c in chunks
        )
        for page in pages:
            if not page["ids"]:
                continue
            papers = [
                paper_from_record(i, d, m or {})
                for i, d, m in zip(page["ids"], page["documents"], page["metadatas"])
            ]
            yield papers, np.asarray(page["embeddings"], dtype=np.float32)

    def add(self, papers: Sequence[Paper], vectors: np.ndarray) -> None:
        self.wrote = True
        self.store.call(
            "could not be written",
            self.collection.add,
            ids=[p.id for p in papers],
            embeddings=np.asarray(vectors, dtype=np.float32),
            documents=[p.abstract for p in papers],
            metadatas=[paper_metadata(p) for p in papers],
        )

    def enrich(self, seen: dict[str, Paper]) -> tuple[list[Paper], np.ndarray]:
        """Stored papers seen again (id -> the record seen): record the further sources, and
        fill the fields the stored record lacks (a title, authors, a DOI from a .bib).
        Reads only those papers. Returns the papers that changed, as now stored, with
        their vectors."""
        changed: list[Paper] = []
        vectors: list[np.ndarray] = []
        ids = list(seen)
        for papers, vecs in self.batches(ids) if ids else ():
            update_ids, metas = [], []
            for paper, vector in zip(papers, vecs):
                updated = bounded(fill(paper, seen[paper.id]))
                if updated == paper:
                    continue
                update_ids.append(paper.id)
                metas.append(paper_metadata(updated))
                changed.append(updated)
                vectors.append(vector)
            if update_ids:
                self._update(update_ids, metas)
        return changed, (np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32))

    def update(self, papers: Sequence[Paper]) -> None:
        """Store these papers' metadata in place (their abstracts and vectors stay)."""
        for start in range(0, len(papers), PAGE):
            page = papers[start : start + PAGE]
            self._update([p.id for p in page], [paper_metadata(p) for p in page])

    def _update(self, ids: list[str], metadatas: list[dict[str, Any]]) -> None:
        self.wrote = True
        self.updated.update(ids)
        self.store.call("could not be written", self.collection.update, ids=ids, metadatas=metadatas)

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self.wrote = True
            self.store.call("could not be written", self.collection.delete, ids=list(ids))

    def changes_since(self, since: float) -> list[server_changes.Change]:
        """A Chroma server's change entries since `since` (see `server_changes`)."""
        return list(
            self.store.call(
                "cannot be read",
                server_changes.read_since,
                self.store.client(),
                self.store.settings.collection_name,
                since,
            )
        )


class VectorStore:
    """One Chroma collection of papers."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.location = settings.chroma_url or str(settings.chroma_dir)
        self._server: Any = None
        if settings.chroma_url:
            self._check_url(settings.chroma_url)

    # --- sessions ----------------------------------------------------------------
    @contextmanager
    def session(self) -> Iterator[Session]:
        """The collection, open for one piece of work (embedded: closed afterwards)."""
        client = self._server_client() if self.settings.chroma_url else self._embedded_client()
        try:
            collection = self.call(
                "cannot open the collection",
                client.get_or_create_collection,
                self.settings.collection_name,
                embedding_function=None,
                metadata={"hnsw:space": "cosine"},
            )
            session = Session(self, collection)
            try:
                yield session
            except BaseException:
                if session.wrote and self.settings.chroma_url:
                    try:  # a session cut short may have written part: followers look again
                        self._record_change(session, published=False)
                    except Exception:
                        log.warning("could not record the change on the Chroma server", exc_info=True)
                raise
            if session.wrote and self.settings.chroma_url:
                self._record_change(session, published=True)
        finally:
            if not self.settings.chroma_url:
                try:
                    client.close()
                except Exception:  # closing never hides the real error
                    log.debug("closing the embedded Chroma client failed", exc_info=True)

    def client(self) -> Any:
        """The server's client (a session is open: only then is it made)."""
        assert self._server is not None
        return self._server

    def _record_change(self, session: Session, published: bool) -> None:
        """Tell followers of the server that `session` wrote (`server_changes`). `published`:
        the session ended normally, so this folder's snapshot holds what it wrote."""
        written = self.call(
            "could not be written",
            server_changes.record,
            self.client(),
            self.settings.collection_name,
            session.updated,
        )
        if published:
            applied = server_changes.Applied.load(self.settings.server_changes_path)
            applied.own(session.store_id, written)

    def _check_url(self, url: str) -> None:
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigError(f"ASSISTANT_CHROMA_URL={url!r} is not a URL; write e.g. http://127.0.0.1:8000")

    def _server_client(self) -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        if self._server is None:
            parsed = urlparse(self.settings.chroma_url or "")
            try:
                self._server = chromadb.HttpClient(
                    host=parsed.hostname or "127.0.0.1",
                    port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                    ssl=parsed.scheme == "https",
                    settings=ChromaSettings(anonymized_telemetry=False),
                )
            except Exception as exc:
                raise self.error("did not answer", exc) from exc
        try:
            self._server.heartbeat()
        except Exception as exc:
            raise self.error("did not answer", exc) from exc
        return self._server

    def _embedded_client(self) -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        try:
            self.settings.chroma_dir.mkdir(parents=True, exist_ok=True)
            # Two processes opening a new folder at once both create Chroma's tables, and one
            # fails ("table collections already exists"): opening is serialised, briefly.
            lock = _open_lock(self.settings.data_dir / "chroma-open.lock")
            try:
                return chromadb.PersistentClient(
                    path=str(self.settings.chroma_dir), settings=ChromaSettings(anonymized_telemetry=False)
                )
            finally:
                if lock is not None:
                    lock.release()
        except Exception as exc:
            # A client that failed half-way (a full disk) stays cached by path and poisons every
            # later one in this process ("Could not connect to tenant"): drop it.
            from chromadb.api.shared_system_client import SharedSystemClient

            for key in [
                k for k in SharedSystemClient._identifier_to_system if str(self.settings.chroma_dir) in k
            ]:
                SharedSystemClient._identifier_to_system.pop(key, None)
                SharedSystemClient._identifier_to_refcount.pop(key, None)
            raise self.error("cannot be opened", exc) from exc

    # --- errors --------------------------------------------------------------------
    def error(self, what: str, exc: BaseException) -> StoreError:
        if self.settings.chroma_url:
            return StoreError(
                f"Chroma server at {self.settings.chroma_url} {what} ({type(exc).__name__}: "
                f"{exc}). Start it with `chroma run --path DIR --host 127.0.0.1 --port PORT`, "
                "or unset ASSISTANT_CHROMA_URL to use the embedded store."
            )
        detail = f"{type(exc).__name__}: {exc}"
        if (
            (isinstance(exc, OSError) and exc.errno == 28)
            or "space" in detail.lower()
            or _disk_full(self.settings.data_dir)
        ):
            fix = "The disk is full: free space, then run the same command again."
        elif (
            isinstance(exc, PermissionError) or "readonly" in detail.lower() or "read-only" in detail.lower()
        ):
            fix = "The folder must be writable (set ASSISTANT_DATA_DIR to a writable folder)."
        else:
            fix = (
                "If the folder is writable and the disk has space, the store may be damaged: "
                "move it aside and ingest again, or set ASSISTANT_DATA_DIR to another folder."
            )
        return StoreError(f"Chroma store in {self.settings.chroma_dir} {what} ({detail}). {fix}")

    def call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StoreError:
            raise
        except Exception as exc:
            raise self.error(what, exc) from exc

    # --- one-off reads (each opens its own session) ----------------------------------
    def count(self) -> int:
        with self.session() as s:
            return s.count()

    def ids(self) -> set[str]:
        with self.session() as s:
            return s.ids()

    def papers(self) -> list[Paper]:
        with self.session() as s:
            return [p for papers, _ in s.batches() for p in papers]
