# h5sweep: `make sweep` runs the default sweep, `make test` runs the tests.
# Both create the virtual environment in .venv first (idempotent).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all
# Wheels of every pinned package (requirements.lock), kept between installs like pip's cache:
# an environment is installed from them without asking an index, which is most of pip's time
# (it weighs every file of every release on the index); a pin they lack fills them again.
WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/h5sweep/wheels
# install the pins of $(2) (files) into the environment $(1), without their dependencies (the
# lock pins them all); filling the wheels takes the whole lock, so that one environment's fill serves both
define install_pinned
	$(1)/bin/python -m pip install --quiet --no-index --find-links $(WHEELS) --no-deps $(foreach f,$(2),-r $(f)) 2>/dev/null \
		|| { echo "filling $(WHEELS)"; $(1)/bin/python -m pip wheel --quiet --no-deps -w $(WHEELS) $(foreach f,$(sort requirements.lock $(2)),-r $(f)) \
		&& $(1)/bin/python -m pip install --quiet --no-index --find-links $(WHEELS) --no-deps $(foreach f,$(2),-r $(f)); }
endef

.PHONY: install install-mpi bytecode sweep sweep-held s3-start s3-stop test test-fast lint format dry-run report bench bench-findings bench-plan bench-calibration bench-mpiio bench-s3readers plan studies-plan docs

install: $(STAMP)

$(STAMP): requirements.txt requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "h5sweep needs Python >= 3.11 (set PYTHON=...)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(call install_pinned,$(VENV),requirements.lock)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m pip check
	touch $(STAMP)

# Parallel HDF5 for the MPI-IO case: h5py built from source against the system's parallel
# HDF5 (its C extensions compiled on every core; pip keeps the wheel it built in its cache,
# and the check below refuses one without MPI), in its own environment (.venv-mpi); the
# default install stays pip-only.
MPI_VENV := .venv-mpi
MPI_STAMP := $(MPI_VENV)/.installed
HDF5_MPI_DIR ?= /usr/lib/x86_64-linux-gnu/hdf5/openmpi
MPI_PACKAGES := libhdf5-openmpi-dev openmpi-bin libopenmpi-dev

install-mpi: $(MPI_STAMP)

$(MPI_STAMP): requirements.txt requirements.lock requirements-mpi.txt pyproject.toml
	@command -v mpicc >/dev/null || { echo "make install-mpi needs MPI and parallel HDF5; on Debian/Ubuntu: apt-get install -y --no-install-recommends $(MPI_PACKAGES)"; exit 1; }
	@test -d $(HDF5_MPI_DIR) || { echo "no parallel HDF5 in $(HDF5_MPI_DIR) (set HDF5_MPI_DIR=...; Debian: apt-get install -y --no-install-recommends $(MPI_PACKAGES))"; exit 1; }
	test -x $(MPI_VENV)/bin/python || $(PYTHON) -m venv $(MPI_VENV)
	$(MPI_VENV)/bin/python -m pip install --quiet --upgrade pip
	grep -v '^h5py==' requirements.lock > $(MPI_VENV)/lock.txt
	$(call install_pinned,$(MPI_VENV),requirements-mpi.txt $(MPI_VENV)/lock.txt)
	printf '[build_ext]\nparallel = %s\n' "$$(nproc)" > $(MPI_VENV)/build.cfg
	HDF5_MPI=ON H5PY_SETUP_REQUIRES=0 CC=mpicc HDF5_DIR=$(HDF5_MPI_DIR) DIST_EXTRA_CONFIG=$(CURDIR)/$(MPI_VENV)/build.cfg \
		$(MPI_VENV)/bin/python -m pip install --quiet --no-build-isolation --no-binary=h5py -c requirements.lock h5py
	$(MPI_VENV)/bin/python -m pip install --quiet --no-deps -e .
	$(MPI_VENV)/bin/python -m pip check
	$(MPI_VENV)/bin/python -c 'import h5py, sys; sys.exit(0 if h5py.get_config().mpi else "h5py in $(MPI_VENV) is not built for MPI")'
	touch $(MPI_STAMP)

sweep: install bytecode
	$(BIN)/snakemake --cores $(CORES)

# the same, with a virtual machine's freed pages held while it runs (root; the delay is put
# back afterwards, see h5sweep.host and the plan's warning)
sweep-held: install bytecode
	$(BIN)/python -m h5sweep.host run $(BIN)/snakemake --cores $(CORES)

# a local S3 server (SeaweedFS's weed mini) on 127.0.0.1:$(S3_PORT), storing under
# ~/.cache/h5sweep/seaweedfs; it takes the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY it starts with
S3_PORT ?= 8333
s3-start: install
	$(BIN)/python -m h5sweep.host.seaweed start --port $(S3_PORT)

s3-stop: install
	$(BIN)/python -m h5sweep.host.seaweed stop

dry-run: install
	$(BIN)/snakemake -n --cores $(CORES)

report: install
	$(BIN)/snakemake --cores 1 --report results/$$($(BIN)/python -c 'import yaml; print(yaml.safe_load(open("config/config.yaml"))["sweep"])')/report.html

# The tests run in TEST_WORKERS processes side by side (pytest-xdist; the modules that share a
# sweep or the SLURM cluster each on one of them, tests/conftest.py), then those marked serial
# one at a time, alone on the machine: what they assert (which of two stores is faster, a
# disk's free space) other work would change.
# three more than the cores: the SLURM tests mostly wait for the cluster, the others for their jobs
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 3 )))
PYTEST := $(BIN)/python -m pytest -n $(TEST_WORKERS)
PYTEST_ALONE := $(BIN)/python -m pytest -p no:xdist

# h5sweep's modules compiled before the jobs start: where Python writes no bytecode itself
# (PYTHONDONTWRITEBYTECODE), every job's Python would compile them again
bytecode: install
	$(BIN)/python -m compileall -q src

# every kind of figure the suite's sweeps draw and check, for tests/test_figcheck.py
FIGURE_LOG := $(CURDIR)/results/scratch/figures-checked.tsv

# the modules that hold tests marked serial (tests/test_suite.py checks a test is marked so only
# there, by its decorator or module mark): the serial phase collects these alone, not the suite
SERIAL_MODULES = $(shell grep -l "mark\.serial" tests/test_*.py)

test: install bytecode
	mkdir -p results/scratch && rm -f $(FIGURE_LOG)
	H5SWEEP_FIGURE_LOG=$(FIGURE_LOG) $(PYTEST) -m "not serial" --durations=30
	H5SWEEP_FIGURE_LOG=$(FIGURE_LOG) $(PYTEST_ALONE) -m serial --durations=10 $(SERIAL_MODULES)

# the inner loop (at most 3 minutes): every test but those that run Snakemake or SLURM for real
# (minutes; tests/test_suite.py checks that every test starting Snakemake is marked so) and the
# heavy ones (seconds of CPU each: real mpirun ranks, a local object store serving hundreds of
# requests, data of tens of MB; pyproject.toml's markers)
# one worker a core: its tests wait little (no cluster, few servers), and each worker's start
# (importing and collecting the suite, 11 s of CPU) is paid once a core (5 workers: 190 s, 2: 143 s)
FAST_WORKERS ?= $(shell nproc)
test-fast: install bytecode
	$(BIN)/python -m pytest -n $(FAST_WORKERS) -m "not workflow and not slurm and not serial and not heavy" --durations=15
	$(PYTEST_ALONE) -m "serial and not workflow and not slurm" --durations=5 $(SERIAL_MODULES)

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

# the findings at the studies' size: the OpenMSI chunking study on this disk, each finding's
# verdict beside the study's sentence (about an hour here)
bench-findings: install
	$(BIN)/python bench/findings.py

# the plan's goals alone: planned over measured wall and job time (part of `make bench`)
bench-plan: install
	$(BIN)/python bench/run.py --plan-only

# the intervals' calibration alone: four runs of the default sweep back to back (part of `make bench`)
bench-calibration: install
	$(BIN)/python bench/run.py --calibration-only

# the parallel passes' goal: a collective read pass against bare MPI-IO on the same bytes
bench-mpiio: install-mpi
	mpirun $$( [ "$$(id -u)" = 0 ] && echo --allow-run-as-root ) --oversubscribe -n 2 $(MPI_VENV)/bin/python bench/mpiio.py results/scratch/bench-mpiio

# Zarr's readers on the local object store (make s3-start first), side by side
bench-s3readers: install
	cd bench && ../$(BIN)/python s3readers.py

# the plan alone, without starting Snakemake (python -m h5sweep.sweep; a dry run prints the same)
plan: install bytecode
	$(BIN)/python -m h5sweep.sweep --configfile $(or $(CONFIG),config/config.yaml) --cores $(CORES)

# the plan of every study config (config/studies/): the studies at their size, one sweep each
studies-plan: install bytecode
	@for c in config/studies/*/*.yaml; do echo "== $$c"; $(BIN)/python -m h5sweep.sweep --configfile $$c --cores $(CORES) -q || exit 1; done

# regenerate config/README.md's key table from config/schema.yaml
docs: install
	$(BIN)/python -m h5sweep.sweep.config config/README.md
