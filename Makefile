# smpref: `make run` and `make test` each set everything up on a fresh machine.
#
# The project is installed into .venv as a wheel (not editable): tests and the CLI run against
# what users install, so spec/ and grammar/ must really be in the package data.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
SOURCES := $(shell find smpref spec grammar vectors -type f -not -path '*/__pycache__/*') pyproject.toml README.md
export SPARK_LOCAL_IP ?= 127.0.0.1
# mkdocs-material prints a banner about its successor on every build; the build is what we check.
export NO_MKDOCS_2_WARNING := 1

.PHONY: run test lint typecheck unit vectors docs types bench mutate mutate-conformance mutate-fidelity mutate-citations clean

# The pip that venv brings is enough (pip 22.3 or newer: test_installed uses --python);
# upgrading it first cost about 7 s of every fresh clone's set-up.
$(PY):
	$(PYTHON) -m venv $(VENV)

# Dependencies change rarely: installed once per pyproject.toml change. Every extra (spark:
# PySpark; testing: Hypothesis) and the dev tools, since `run` runs a campaign and `test` all.
$(VENV)/.deps: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet hatchling ".[dev,spark,testing]"
	touch $@

# The project itself: rebuilt and reinstalled whenever a source, spec or grammar file changes.
$(VENV)/.installed: $(VENV)/.deps $(SOURCES)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation --force-reinstall .
	touch $@

run: $(VENV)/.installed
	$(BIN)/smpref run --reports reports --vectors vectors

# Lint, mypy, the vectors' check and the generated docs pages run beside the suite, which
# leaves part of a core idle (docs/testing.md, "Speed"). No test reads the pages `docs` writes:
# tests/test_docs_site.py builds its own, and tests/test_doc_commands.py skips them.
test: $(VENV)/.installed
	$(MAKE) --no-print-directory -j2 lint typecheck unit vectors docs

lint: $(VENV)/.installed
	$(BIN)/ruff check smpref tests bench mutation

typecheck: $(VENV)/.installed
	$(BIN)/mypy smpref

unit: $(VENV)/.installed
	$(BIN)/pytest

# The committed vectors verify with the published key only; the signing key is not needed.
vectors: $(VENV)/.installed
	$(BIN)/smpref vectors verify vectors > /dev/null

docs: $(VENV)/.installed
	$(BIN)/smpref docs cli --out docs/reference/cli.md
	$(BIN)/smpref docs reference --out docs/reference/commands.md
	$(BIN)/smpref docs rules --out docs/reference/rules.md
	$(BIN)/smpref docs client-checks --out docs/reference/client-checks.md
	$(BIN)/smpref spec coverage --markdown --out docs/reference/coverage.md
	$(BIN)/smpref docs vectors --out docs/vectors/sets > /dev/null
	$(BIN)/mkdocs build --strict --site-dir .site

# smpref/wire/messages.py and smpref/notation/parsed_commands.py are generated from
# spec/commands.smpn and committed; tests fail on drift.
types: $(VENV)/.installed
	$(BIN)/smpref docs types --out smpref/wire/messages.py
	$(BIN)/smpref docs parsed-notation --out smpref/notation/parsed_commands.py

bench: $(VENV)/.installed
	$(PY) bench/codec.py
	if command -v valgrind > /dev/null; then $(PY) bench/counts.py; fi
	$(PY) bench/model.py
	$(PY) bench/vectors.py
	$(PY) bench/store.py
	$(PY) bench/server.py
	$(PY) bench/campaign.py

# Mutation testing (cosmic-ray) of the model's rules, the ratchet, the journal and the dispatch,
# against the state machines and rule tests; long (see docs/testing.md), so not part of `test`.
$(VENV)/.mutate: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet ".[mutate]"
	touch $@

mutate: $(VENV)/.installed $(VENV)/.mutate
	$(PY) mutation/run.py --out reports/mutation

# The conformance runner's power at each version whose transport differs (18, 10, 6): what
# `smpref conform` alone kills of the mutants of what a deployed server answers (issue 42).
mutate-conformance: $(VENV)/.installed $(VENV)/.mutate
	$(PY) mutation/run.py --out reports/conformance-mutation --only conformance \
		--only "conformance v10" --only "conformance v6"

# A planted deviation per row of spec/deployed-fidelity.md, each judged by the checks its row
# cites (mutation/fidelity.py); about ten minutes, so not part of `test` either.
mutate-fidelity: $(VENV)/.installed
	$(PY) mutation/fidelity.py --out reports/fidelity

# Each sampled requirement's deviations, judged by the tests that cite it (mutation/citations.py,
# issue 44); records tests/citation_kills.json, which the coverage matrix reads. About an hour.
mutate-citations: $(VENV)/.installed
	$(PY) mutation/citations.py --out reports/citations --record

clean:
	rm -rf $(VENV) .site build dist docs/reference/commands.md docs/reference/rules.md docs/reference/coverage.md .hypothesis .mypy_cache .ruff_cache
