"""Where the project's own files are: the repository (model lock files) and the seed corpus."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SEEDS = REPO_ROOT / "seeds"
