"""How fast each bundled embedder indexes abstracts, and whether the fast path changes search.

    python -m benchmarks.encoders [--n 200]

In one run, on the same SciFact abstracts (those relevant to the first test claims, with
their titles and the embedder's document prompt):

- the reference: bare sentence-transformers all-MiniLM-L6-v2, torch fp32, 2 threads, batch
  16, in a child process without the assistant's settings (the issue's fixed reference);
- for each bundled embedder, the assistant's `Embedder` with `document_encoder="torch"`
  (the path before OpenVINO; the assistant sets `OMP_WAIT_POLICY=PASSIVE` for llama.cpp,
  which costs torch here) and with the default (`auto`: OpenVINO, `openvino_documents`).

Each row: abstracts/s, × the reference, cosine to the torch vectors (mean / min), and
SciFact test nDCG@10 of dense search over these abstracts (questions embedded by torch for
every row, so only the abstract vectors differ).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from assistant.config import BUNDLED_EMBEDDER, Settings
from assistant.corpus.strong_index import index_embedder
from benchmarks.run import say
from eval.metrics import ndcg_at
from eval.questions import load_scifact

REFERENCE = """
import json, sys, time, torch
from sentence_transformers import SentenceTransformer
torch.set_num_threads(2)
texts = json.load(open(sys.argv[2]))
model = SentenceTransformer(sys.argv[1], device="cpu", local_files_only=True)
model.encode(texts[:8], batch_size=16)
t0 = time.perf_counter()
model.encode(texts, batch_size=16, normalize_embeddings=True)
print(len(texts) / (time.perf_counter() - t0))
"""


def reference_rate(texts: list[str]) -> float:
    """Abstracts/s of bare sentence-transformers MiniLM in a clean child process."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(texts, f)
        f.flush()
        path = str(Settings.bundled_embedder_path())
        done = subprocess.run(
            [sys.executable, "-c", REFERENCE, path, f.name],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="SciFact abstracts to encode")
    parser.add_argument("--embedders", default=f"{BUNDLED_EMBEDDER},embeddinggemma-300m")
    args = parser.parse_args(argv)

    scifact = load_scifact("test")
    wanted = sorted({d for docs in scifact.qrels.values() for d in docs}, key=int)[: args.n]
    keep = set(wanted)
    docs = {}
    for line in scifact.corpus.open():
        d = json.loads(line)
        if d["_id"] in keep:
            docs[d["_id"]] = (d["title"], d["text"])
    ids = [i for i in wanted if i in docs]
    claims = {q: t for q, t in scifact.queries.items() if scifact.qrels[q] <= keep}

    reference = reference_rate([docs[i][1] for i in ids])
    say(f"## Indexing encoders ({len(ids)} SciFact abstracts, {len(claims)} test claims, 2 threads)\n")
    say(
        f"Reference (sentence-transformers all-MiniLM-L6-v2, torch fp32, clean process): {reference:.1f} abstracts/s\n"
    )
    say(
        "| embedder | abstracts through | abstracts/s | × reference | cosine to torch, mean / min | nDCG@10 |"
    )
    say("|---|---|---|---|---|---|")
    for name in args.embedders.split(","):
        torch_side = index_embedder(Settings(embedder=name, document_encoder="torch", torch_threads=2))
        fast = index_embedder(Settings(embedder=name, torch_threads=2))
        template = torch_side.profile.document_prompt
        texts = [
            (template.replace("{title}", " ".join(docs[i][0].split()) or "none") if template else "")
            + docs[i][1]
            for i in ids
        ]
        questions = list(claims)
        queries = torch_side.encode([torch_side.profile.query_prompt + claims[q] for q in questions])
        truth = None
        for label, embedder in (("torch", torch_side), (fast.document_backend, fast)):
            embedder.encode(texts[:4])  # loads and warms
            t0 = time.perf_counter()
            vectors = embedder.encode(texts)
            rate = len(texts) / (time.perf_counter() - t0)
            truth = vectors if truth is None else truth
            cosine = (vectors * truth).sum(1)
            order = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
            ndcg = np.mean(
                [ndcg_at([ids[j] for j in order[n]], scifact.qrels[q]) for n, q in enumerate(questions)]
            )
            say(
                f"| {name} | {label} | {rate:.2f} | {rate / reference:.2f} "
                f"| {cosine.mean():.5f} / {cosine.min():.5f} | {ndcg:.3f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
