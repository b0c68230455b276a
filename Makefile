# The README's commands. `make run` and `make test` install everything they need into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | sha256sum | cut -c1-12)

.PHONY: install run test lint format eval bench clean

$(STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

install: $(STAMP)

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
