# Single entry point. `make demo` and `make test` bootstrap .venv on their own.
VENV ?= .venv
BIN := $(VENV)/bin
SEED ?= 2026

.PHONY: setup demo test lint bench docs clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/bootstrap.sh requirements/lock-cpu.txt
	VENV=$(VENV) bash scripts/bootstrap.sh

## The main job on a built-in example: deal a seeded deck, solve it exactly, show the optimal game.
demo: setup
	$(BIN)/pasur solve --seed $(SEED)

## The test suite (what CI runs): lint, then unit, property and doctests, one worker per core and
## one more (many tests wait on a browser, a server or a subprocess: on 2 cores, 3 workers ran the
## suite in 392 s where 2 took 446 s, results/test-suite/README.md), idle workers taking tests
## from busy ones (TEST_WORKERS=0 runs them in this process).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
test: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

## The documentation site (mkdocs.yml: docs/*.md and the API reference from the docstrings) into
## site/, in strict mode: a broken link, anchor or reference fails. Installs MkDocs and
## mkdocstrings into the venv the first time.
docs: setup
	@$(BIN)/python -c "import mkdocs, mkdocstrings, mkdocstrings_handlers.python" 2>/dev/null \
		|| $(BIN)/python -m pip install -q -e ".[docs]" -c requirements/lock-cpu.txt
	$(BIN)/python -m mkdocs build --strict -d site/

## The lock of exact versions (requirements/lock-cpu.txt) remade from .venv: pip freeze, less torch
## (pinned apart by scripts/bootstrap.sh) and pasur itself; keep its header.
.PHONY: lock
lock: setup
	{ grep '^#' requirements/lock-cpu.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -v -i '^torch=='; } \
		> requirements/lock-cpu.txt.new && mv requirements/lock-cpu.txt.new requirements/lock-cpu.txt

## The pip route of docs/install.md: build the wheel, install it into a clean venv (CPU torch first),
## check that no nvidia package came, then `pasur solve` and `pasur serve` from outside the checkout.
.PHONY: wheel-check
wheel-check:
	PYTHON=$(or $(PYTHON),python3) bash scripts/wheel_check.sh

## Speed figures on the reference decks (see docs/benchmarks.md): reference solver, tensor tree.
bench: setup
	$(BIN)/python benchmarks/bench_reference.py
	$(BIN)/python benchmarks/bench_tree.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
