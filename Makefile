# Two commands: `make run` and `make test`. Everything else is their plumbing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SOURCES := $(shell find lakesuperior -name '*.py' -o -name '*.pyx' -o -name '*.pxd' -o -name '*.pyi' -o -name '*.html' -o -name '*.css' -o -name '*.js') \
	setup.py pyproject.toml $(wildcard etc.defaults/*)
DATA_DIR ?= data
PORT ?= 8000

.PHONY: run test lint install bench clean interop-ocfl perf-check

# Loopback only; `make run PORT=8001 DATA_DIR=/srv/lsup` for a second instance.
# On the first start the password of the administrator `admin` is written to
# $(DATA_DIR)/initial-admin-password (docs/security.md).
run: install
	$(BIN)/lsup-server --bind 127.0.0.1:$(PORT) --data-dir $(DATA_DIR)

# The events tests start a real ActiveMQ (Debian's package; the suite runs it on
# loopback ports with its own configuration, no system service) and compile a
# JMS client: installed here when missing (apt-get, as root).
ACTIVEMQ := /usr/share/activemq/bin/activemq.jar
CHROMIUM := /usr/bin/chromium

# Three pytest workers (pytest-xdist), each test file on one of them, the files
# with slow tests first (tests/conftest.py): much of the suite waits on disks,
# servers, brokers and a browser, so a third worker fills the two cores' idle time.
# The test modules as pytest rewrites them (for its assertion messages) are kept
# in __pycache__ even where PYTHONDONTWRITEBYTECODE is set: otherwise each worker
# rewrites all of them again at every run (about 6 s of CPU each).
test: install $(ACTIVEMQ) $(CHROMIUM)
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -n 3 --dist loadfile

$(ACTIVEMQ):
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		activemq default-jdk-headless || { apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		activemq default-jdk-headless; }

# The browser tests (tests/browser) drive Debian's Chromium headless with Playwright
# (Playwright's own browser download is not used): installed here when missing.
$(CHROMIUM):
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y \
		--no-install-recommends chromium; }

# Interoperability with the real Fedora 6.1.0 (docs/ocfl.md): Fedora rebuilds from
# an export and serves it; a storage root Fedora wrote imports here. Its war and
# jetty-runner come from Maven Central (cached in ~/.m2); Java 17 runs them on
# 127.0.0.1. About a minute: not part of `make test`, .ci/run runs it.
FCREPO_WAR := $(HOME)/.m2/repository/org/fcrepo/fcrepo-webapp/6.1.0/fcrepo-webapp-6.1.0.war
JETTY_RUNNER := $(HOME)/.m2/repository/org/eclipse/jetty/jetty-runner/9.4.53.v20231009/jetty-runner-9.4.53.v20231009.jar

interop-ocfl: install $(FCREPO_WAR) $(JETTY_RUNNER)
	$(BIN)/pytest -q interop/test_fedora_ocfl.py

$(FCREPO_WAR):
	mvn -q dependency:get -Dartifact=org.fcrepo:fcrepo-webapp:6.1.0:war -Dtransitive=false

$(JETTY_RUNNER):
	mvn -q dependency:get -Dartifact=org.eclipse.jetty:jetty-runner:9.4.53.v20231009 \
		-Dtransitive=false

# A short form of benchmarks/compare.py (2 rounds of 150 requests): fails when a
# ratio to the request floor (1 client's PUT and GET, 8 clients' PUT/s and GET/s)
# is more than 30% worse than benchmarks/compare-baseline.json in each of 3
# sessions, so a change that doubles the cost of a request cannot land unnoticed.
# About a minute; .ci/run runs it after the tests.
perf-check: install
	$(BIN)/python benchmarks/compare.py --rounds 2 --count 150 \
		--check benchmarks/compare-baseline.json

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
