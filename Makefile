# Two commands: `make run` and `make test`. Everything else is their plumbing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SOURCES := $(shell find lakesuperior -name '*.py' -o -name '*.pyx' -o -name '*.pxd' -o -name '*.pyi' -o -name '*.html' -o -name '*.css') \
	setup.py pyproject.toml etc.defaults/application.yml
DATA_DIR ?= data

.PHONY: run test install bench clean

run: install
	LSUP_DATA_DIR=$(DATA_DIR) $(BIN)/lsup-server

test: install
	$(BIN)/pytest -q

install: $(STAMP)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "setuptools>=68" wheel "Cython>=3.0"

# A regular (not editable) install: the tests import the built, compiled package.
$(STAMP): $(VENV)/bin/python $(SOURCES)
	$(BIN)/pip install -q --no-build-isolation ".[test,bench]"
	rm -rf build
	touch $(STAMP)

bench: install
	$(BIN)/python benchmarks/store_ingest.py --count 10000 --json store_ingest.json

clean:
	rm -rf $(VENV) build *.egg-info
