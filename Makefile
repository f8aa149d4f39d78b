# From a fresh clone, two commands (the README leads with them):
#   make demo   set up .venv, then run the main demo (eqc lever)
#   make test   set up .venv, then run what CI runs: ruff, mypy, the tests, the slow property suites
#   make docs   set up the docs extra in .venv, build the site into site/ with warnings as errors, and check
#               that it works opened from disk (tests/test_site.py; in a headless chromium where there is one)
# Set-up happens once: a stamp file in the virtualenv records it, and it is redone only when
# pyproject.toml changes or the virtualenv is deleted. eqc is installed editable, so code edits
# need no new set-up.
#
# Variables (override as `make test PYTHON=python3.12`):
#   PYTHON  the interpreter that creates the virtualenvs (>= 3.11)
#   TORCH   what pip installs when the virtualenv has no importable torch. The default is PyTorch
#           2.13.0; on this project's machines pip finds the CPU build on local disk. Elsewhere
#           add PyTorch's CPU wheel index (`TORCH="torch==2.13.0 --index-url <its URL>"`) to get
#           the CPU build instead of a CUDA one. A torch already in the virtualenv is kept.

PYTHON ?= python3
TORCH ?= torch==2.13.0
# hanabi-learning-environment 0.0.4 builds with CMake; CMake 4 needs this to accept its old CMakeLists.
export CMAKE_POLICY_VERSION_MINIMUM := 3.5

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.eqc-setup-done
DOCS_STAMP := $(VENV)/.eqc-docs-setup-done
# escnn (the optional bridge) in its own virtualenv: it needs gfortran and pulls numpy < 2.
ESCNN_VENV := .venv-escnn
ESCNN_PY := $(ESCNN_VENV)/bin/python
ESCNN_STAMP := $(ESCNN_VENV)/.eqc-setup-done

.PHONY: setup demo test lint typecheck test-fast test-slow docs setup-docs setup-escnn test-escnn bench clean-venv

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q $(TORCH)
	$(PY) -m pip install -q -e ".[dev,hanabi,ray,pettingzoo]"
	@touch $@

demo: setup
	$(VENV)/bin/eqc lever --seeds 0-7 --out runs/lever

test: lint test-fast test-slow

lint: setup typecheck
	$(VENV)/bin/ruff check eqc tests benchmarks

# mypy over eqc/ with the configuration in pyproject.toml (strict for the core subpackages).
typecheck: setup
	$(VENV)/bin/mypy

test-fast: setup
	$(PY) -m pytest -q -n 2

test-slow: setup
	$(PY) -m pytest -q -n 2 --runslow -m slow

# The documentation site: the docs extra on top of setup, then mkdocs build --strict (mkdocs.yml), then
# tests/test_site.py on the built site/: every link opens a file from disk, search works without a server.
# Its checks in a real browser need Debian's chromium: installed here when missing and apt-get can (as root,
# in CI), else skipped; EQC_REQUIRE_BROWSER=1 (.ci/run) makes a missing browser fail them.
setup-docs: $(DOCS_STAMP)

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install -q -e ".[docs]"
	@touch $@

docs: setup-docs
	$(VENV)/bin/mkdocs build --strict
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; } >/dev/null 2>&1 \
		|| echo "no chromium (apt-get install chromium): the site's checks in a browser are skipped" >&2
	EQC_SITE_DIR=site $(PY) -m pytest -q -p no:xdist tests/test_site.py

setup-escnn: $(ESCNN_STAMP)

$(ESCNN_STAMP): pyproject.toml
	@command -v gfortran >/dev/null || { apt-get update -qq && apt-get install -y -qq gfortran; } \
		|| { echo "escnn's py3nj needs a Fortran compiler: apt-get install -y gfortran" >&2; exit 1; }
	@test -x $(ESCNN_PY) || $(PYTHON) -m venv $(ESCNN_VENV)
	@$(ESCNN_PY) -c "import torch" 2>/dev/null || $(ESCNN_PY) -m pip install -q $(TORCH)
	$(ESCNN_PY) -m pip install -q -e ".[dev,escnn]"
	@touch $@

# Only the escnn-marked tests (in the files that mention escnn: this virtualenv has no HLE), with
# escnn required: a skip for want of escnn fails the run, and so does a run where none passed.
test-escnn: setup-escnn
	EQC_REQUIRE_ESCNN=1 $(ESCNN_PY) -m pytest -q -p no:xdist -m escnn $$(grep -rl --include='test_*.py' escnn tests benchmarks)

bench: setup
	$(PY) benchmarks/symmetrizer.py
	$(PY) benchmarks/batched_hanabi.py
	$(PY) benchmarks/hle_throughput.py

clean-venv:
	rm -rf $(VENV) $(ESCNN_VENV)
