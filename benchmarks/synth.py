"""Synthetic abstracts for fault and scale tests: realistic length, vocabulary and metadata."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

TOPICS = [
    ("Deep Learning", "Graph Neural Networks"),
    ("Deep Learning", "Algorithms"),
    ("Theory", "Reinforcement Learning and Planning"),
    ("Social Aspects", "Fairness, Equity, Justice and Safety"),
    ("Applications", "Language, Speech and Dialog"),
    ("General Machine Learning", "Causality"),
]
VENUES = [
    ("NeurIPS", 2024),
    ("NeurIPS", 2025),
    ("ICLR", 2025),
    ("ICLR", 2026),
    ("ICML", 2025),
    ("AAAI", 2026),
]
WORDS = (
    "model learning network training data method results performance task approach propose show "
    "algorithm optimization gradient convergence bound regret policy reward agent graph node "
    "attention transformer language embedding representation generalization robustness privacy "
    "fairness causal inference estimator variance sample complexity theoretical empirical benchmark "
    "diffusion generative latent kernel spectral sparse pruning quantization distillation federated "
    "adversarial uncertainty bayesian posterior equilibrium game mechanism auction bandit exploration"
).split()
FIRST = (
    "Ana Ben Chen Dara Eli Fang Gita Hiro Ines Jun Kai Lena Mina Nils Omar Pia Ravi Sara Tomas Uma".split()
)
LAST = "Alvarez Brown Chen Dubois Evans Fischer Garcia Huang Ito Jensen Kim Lopez Muller Novak Okafor".split()


def abstract(rng: random.Random, n: int) -> str:
    sentences = []
    for _ in range(rng.randint(6, 10)):
        words = [rng.choice(WORDS) for _ in range(rng.randint(14, 26))]
        sentences.append(" ".join(words).capitalize() + ".")
    return f"Paper {n}: " + " ".join(sentences)


def record(rng: random.Random, n: int) -> dict[str, object]:
    venue, year = rng.choice(VENUES)
    area, sub = rng.choice(TOPICS)
    return {
        "id": f"syn-{n}",
        "title": f"Synthetic study {n} of {rng.choice(WORDS)} {rng.choice(WORDS)}",
        "abstract": abstract(rng, n),
        "authors": [f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(rng.randint(1, 6))],
        "venue": venue,
        "year": year,
        "topic": f"{area} · {sub}",
    }


def write_corpus(path: Path, n: int, seed: int = 0, start: int = 0) -> Path:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for i in range(start, start + n):
            f.write(json.dumps(record(rng, i)) + "\n")
    return path


def mixed_vectors(base: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """n realistic unit vectors from real embeddings: mixes of two plus noise, so the
    neighbourhood structure resembles real abstracts (random vectors would not)."""
    rng = np.random.default_rng(seed)
    a = base[rng.integers(0, len(base), n)]
    b = base[rng.integers(0, len(base), n)]
    mix = a + rng.uniform(0.2, 0.6, (n, 1)).astype(np.float32) * b
    mix += rng.normal(0, 0.02, mix.shape).astype(np.float32)
    mix /= np.linalg.norm(mix, axis=1, keepdims=True)
    return mix.astype(np.float32)
