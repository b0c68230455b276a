#!/usr/bin/env bash
# Build llama-cpp-python once (it compiles llama.cpp: ~10 min on 2 cores) and
# keep the wheel in a cache outside the checkout, keyed by version and CPU
# flags, so later installs on the same machine take seconds.
# Usage: scripts/llama_cpp_wheel.sh PYTHON   -> prints the wheel's path
set -euo pipefail
PY="${1:-python3}"
VERSION="0.3.36"
CACHE="${ASSISTANT_WHEEL_CACHE:-$HOME/.cache/assistant/wheels}"
# AVX2/FMA/F16C, no AVX-512/AMX: a -march=native build (GGML_NATIVE=ON) emitted AMX
# code that dies with a general protection fault on this kind of VM.
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
CPU_KEY="$( (echo "$CMAKE_FLAGS"; uname -m) | sha256sum | cut -c1-12)"
DEST="$CACHE/llama_cpp_python-$VERSION-$CPU_KEY"
mkdir -p "$DEST"
WHEEL="$(ls "$DEST"/llama_cpp_python-*.whl 2>/dev/null | head -n1 || true)"
if [ -z "$WHEEL" ]; then
  echo "building llama-cpp-python $VERSION (AVX2, one-off, ~5-30 min) into $DEST" >&2
  TMP="$(mktemp -d)"
  CMAKE_ARGS="$CMAKE_FLAGS" \
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$PY" -m pip wheel --no-deps --no-cache-dir -w "$TMP" "llama-cpp-python==$VERSION" >&2
  mv "$TMP"/llama_cpp_python-*.whl "$DEST"/
  rm -rf "$TMP"
  WHEEL="$(ls "$DEST"/llama_cpp_python-*.whl | head -n1)"
fi
echo "$WHEEL"
