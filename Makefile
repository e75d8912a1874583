# Two commands: `make run` and `make test`. Everything else is their plumbing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SOURCES := $(shell find lakesuperior -name '*.py' -o -name '*.pyx' -o -name '*.pxd' -o -name '*.pyi' -o -name '*.html' -o -name '*.css') \
	setup.py pyproject.toml $(wildcard etc.defaults/*)
DATA_DIR ?= data
PORT ?= 8000

.PHONY: run test lint install bench clean

# Loopback only; `make run PORT=8001 DATA_DIR=/srv/lsup` for a second instance.
# On the first start the password of the administrator `admin` is written to
# $(DATA_DIR)/initial-admin-password (docs/security.md).
run: install
	$(BIN)/lsup-server --bind 127.0.0.1:$(PORT) --data-dir $(DATA_DIR)

# The events tests start a real ActiveMQ (Debian's package; the suite runs it on
# loopback ports with its own configuration, no system service) and compile a
# JMS client: installed here when missing (apt-get, as root).
ACTIVEMQ := /usr/share/activemq/bin/activemq.jar

test: install $(ACTIVEMQ)
	$(BIN)/pytest -q

$(ACTIVEMQ):
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		activemq default-jdk-headless || { apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		activemq default-jdk-headless; }

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
# Its compiled modules are then copied into the source tree (git-ignored), so
# that `python -c "import lakesuperior"` from this directory works too.
$(STAMP): $(VENV)/bin/python $(SOURCES)
	$(BIN)/pip install -q --no-build-isolation ".[test,bench,lint]"
	rm -rf build
	find lakesuperior -name '*.so' -delete
	cd $(VENV) && bin/python -c 'import lakesuperior, pathlib, shutil; \
		src = pathlib.Path(lakesuperior.__file__).parent; \
		[shutil.copy2(p, pathlib.Path("../lakesuperior") / p.relative_to(src)) \
		 for p in src.rglob("*.so")]'
	touch $(STAMP)

bench: install
	$(BIN)/python benchmarks/store_ingest.py --count 10000 --json store_ingest.json

clean:
	rm -rf $(VENV) build *.egg-info
	find lakesuperior -name '*.so' -delete
