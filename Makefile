# Two commands: `make run` and `make test`. Everything else is their plumbing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SOURCES := $(shell find lakesuperior -name '*.py' -o -name '*.pyx' -o -name '*.pxd' -o -name '*.pyi' -o -name '*.html' -o -name '*.css') \
	setup.py pyproject.toml etc.defaults/application.yml
DATA_DIR ?= data

.PHONY: run test lint install bench clean

run: install
	LSUP_DATA_DIR=$(DATA_DIR) $(BIN)/lsup-server

test: install
	$(BIN)/pytest -q

# The gate CI runs before the tests: ruff, mypy, cython-lint, and stubtest for
# every compiled module (its .pyi must match what the extension exports).
COMPILED := $(subst /,.,$(patsubst %.pyx,%,$(shell find lakesuperior -name '*.pyx' | sort)))
lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/cython-lint lakesuperior
	cd $(VENV) && bin/python -m mypy.stubtest --concise --allowlist ../stubtest-allowlist.txt $(COMPILED)

install: $(STAMP)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "setuptools>=68" wheel "Cython>=3.0"

# A regular (not editable) install: the tests import the built, compiled package.
$(STAMP): $(VENV)/bin/python $(SOURCES)
	$(BIN)/pip install -q --no-build-isolation ".[test,bench,lint]"
	rm -rf build
	touch $(STAMP)

bench: install
	$(BIN)/python benchmarks/store_ingest.py --count 10000 --json store_ingest.json

clean:
	rm -rf $(VENV) build *.egg-info
