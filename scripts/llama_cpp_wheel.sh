#!/usr/bin/env bash
# Build llama-cpp-python once (it compiles llama.cpp: ~10 min on 2 cores) and
# keep the wheel in a cache outside the checkout, keyed by version and CPU
# flags, so later installs on the same machine take seconds.
# Usage: scripts/llama_cpp_wheel.sh PYTHON   -> prints the wheel's path
set -euo pipefail
PY="${1:-python3}"
VERSION="0.3.36"
CACHE="${ASSISTANT_WHEEL_CACHE:-$HOME/.cache/assistant/wheels}"
CPU_KEY="$( (grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m) | sha256sum | cut -c1-12)"
DEST="$CACHE/llama_cpp_python-$VERSION-$CPU_KEY"
mkdir -p "$DEST"
WHEEL="$(ls "$DEST"/llama_cpp_python-*.whl 2>/dev/null | head -n1 || true)"
if [ -z "$WHEEL" ]; then
  echo "building llama-cpp-python $VERSION (native CPU flags, one-off, ~10-30 min) into $DEST" >&2
  TMP="$(mktemp -d)"
  CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$PY" -m pip wheel --no-deps --no-cache-dir -w "$TMP" "llama-cpp-python==$VERSION" >&2
  mv "$TMP"/llama_cpp_python-*.whl "$DEST"/
  rm -rf "$TMP"
  WHEEL="$(ls "$DEST"/llama_cpp_python-*.whl | head -n1)"
fi
echo "$WHEEL"
