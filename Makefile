# The two commands of the README are `make run` and `make test`; everything else here serves them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: venv lint typecheck check test unit plan run bench clean manifests

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,dev]'
	touch $@

venv: $(STAMP)

lint: venv
	$(BIN)/ruff check spa tests bench hack
	$(BIN)/ruff format --check spa tests bench hack
	$(BIN)/lint-imports

typecheck: venv
	$(BIN)/mypy spa

check: lint typecheck

unit: venv
	$(BIN)/pytest tests/unit $(PYTEST_ARGS)

test: check testenv
	$(BIN)/pytest $(PYTEST_ARGS)

# The CRDs are generated from spa/api and the install.yaml files rendered by kubectl kustomize.
manifests: venv
	$(BIN)/python hack/generate_manifests.py

plan: venv
	$(BIN)/spa plan -f config/samples

run: plan

bench: venv
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .import_linter_cache

# Targets of the local control plane (testenv, cluster, cluster-down) live beside their scripts.
-include hack/testenv/testenv.mk
testenv:
