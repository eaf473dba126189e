# acpgen developer tasks. `make help` lists them.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: help install build check test docs fuzz bench snapshots typecheck mutate mutate-again clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

install: $(BIN)/acpgen ## create .venv with acpgen and its dev dependencies

$(BIN)/acpgen: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $@

build: install ## generate every target of acpgen.toml into generated/
	$(BIN)/acpgen build

check: install ## exit 1 when generated/ differs from what build would write
	$(BIN)/acpgen check

test: install ## run the whole test suite
	$(BIN)/python -m pytest -q

docs: install ## build acpgen's documentation site (docs/, mkdocs.yml) into site/, strict
	$(BIN)/mkdocs build --strict

fuzz: install ## long property and loader-fuzzing run (Hypothesis profile `fuzz`)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q tests/test_properties.py tests/test_fuzz.py \
		tests/test_referee_corpus.py tests/render/test_sibling_unions.py tests/render/test_lenient_required.py tests/render/test_enum_tagged.py \
		tests/render/test_exclusive_unions.py

bench: install ## benchmark against datamodel-code-generator and acp.schema -> bench/results.json
	$(BIN)/python bench/run.py

snapshots: install ## accept changed golden snapshots (review the diff first)
	$(BIN)/python -m pytest -q tests/test_snapshots.py --snapshot-update

PKG ?= normalise
MINUTES ?= 30
ONLY ?=
mutate: install ## mutation testing: make mutate PKG=normalise|diff|runtime [ONLY=module,...] [MINUTES=30]
	MINUTES=$(MINUTES) ONLY=$(ONLY) $(BIN)/python tools/mutate.py $(PKG)

mutate-again: install ## mutants of the last make mutate against the current tests: make mutate-again PKG=runtime MUTANTS='acpgen.runtime._router.*' TESTS='tests/runtime/test_router.py' [K=...] [ALL=1]
	MUTANTS="$(MUTANTS)" TESTS="$(TESTS)" K="$(K)" ALL="$(ALL)" $(BIN)/python tools/mutate_again.py $(PKG)

typecheck: install ## mypy --strict on acpgen itself
	$(BIN)/mypy

clean: ## remove caches
	rm -rf .pytest_cache .mypy_cache
