"""Reading every stored id back from Chroma: in one call (what `Session.ids()` does) against
a page of 5,000 at a time by OFFSET (what it did until stop 50), on one store.

    python -m benchmarks.read_ids DATA_DIR [--chroma-url URL]

Prints one JSON object: the seconds each way and whether both gave the same ids. At a
million papers the paged read takes minutes (each page walks every row before it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--chroma-url", default=None)
    args = parser.parse_args(argv)
    from assistant.config import Settings
    from assistant.index.store import PAGE, VectorStore

    settings = Settings(data_dir=args.data, corpus=[], auto_ingest=False, chroma_url=args.chroma_url)
    with VectorStore(settings).session() as session:
        count = session.count()
        t = time.perf_counter()
        one = session.ids()
        one_s = time.perf_counter() - t
        t = time.perf_counter()
        paged: set[str] = set()
        for offset in range(0, count, PAGE):
            paged.update(session.collection.get(include=[], limit=PAGE, offset=offset)["ids"])
        paged_s = time.perf_counter() - t
    print(
        json.dumps(
            {
                "papers": count,
                "one_call_s": round(one_s, 1),
                "offset_pages_s": round(paged_s, 1),
                "same_ids": one == paged,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
