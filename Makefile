# h5sweep: `make sweep` runs the default sweep, `make test` runs the tests.
# Both create the virtual environment in .venv first (idempotent).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all

.PHONY: install sweep test lint format dry-run report bench plan

install: $(STAMP)

$(STAMP): requirements.txt requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "h5sweep needs Python >= 3.11 (set PYTHON=...)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt -c requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

sweep: install
	$(BIN)/snakemake --cores $(CORES)

dry-run: install
	$(BIN)/snakemake -n --cores $(CORES)

report: install
	$(BIN)/snakemake --cores 1 --report results/$$($(BIN)/python -c 'import yaml; print(yaml.safe_load(open("config/config.yaml"))["sweep"])')/report.html

test: install
	$(BIN)/python -m pytest

lint: install
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile rules
	$(BIN)/ruff check src tests workflow/scripts bench
	$(BIN)/ruff format --check src tests workflow/scripts bench

format: install
	$(BIN)/snakefmt Snakefile rules
	$(BIN)/ruff format src tests workflow/scripts bench

bench: install
	$(BIN)/python bench/run.py

plan: install
	$(BIN)/snakemake -n -q --configfile $(or $(CONFIG),config/config.yaml)
