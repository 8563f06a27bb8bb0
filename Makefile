# plugax developer commands. Needs only Python (3.10+) and make; everything else
# goes into .venv. Each stamp file reinstalls only when pyproject.toml changes, or the
# optional C accelerator (setup.py, framework/plugax/core/_eager.c: built in place).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet
PYTEST := PLUGAX_STRICT_PLUGINS=1 $(PY) -m pytest
BUILD  := pyproject.toml setup.py framework/plugax/core/_eager.c

.PHONY: demo test test-full bench tox plugins clean

demo: $(VENV)/.stamp-base
	$(PY) -m plugax demo

plugins: $(VENV)/.stamp-base
	$(PY) -m plugax plugins

# Kernel tests (tests/, toy primitives) run with no plugin loaded; the families'
# tests (plugins/*/tests), tests/integration and tests/composition (the matrix of
# composed transformations) run with every plugin. Both summaries print; make
# fails if either run fails ("no tests collected" passes).
# plugax-special and plugax-jet are separately installed distributions (the test
# stamp installs them): pyproject's norecursedirs keeps a bare `pytest plugins` from
# collecting their tests where they are not installed, so the plugin run names them.
#
# `make test` is the everyday run (budget: under 10 minutes on 2 cores; ~600 s of
# CPU time, down from ~810 s, spread over 2 processes): hypothesis examples are
# derandomized (the same on every run) and the composition matrix runs a fixed sample
# (every single transformation, about a quarter of the pairs covering every ordered
# pair and every program, 2 of 8 triples per program: tests/composition/harness.py,
# default_paths; the error-state matrix's deeper compositions at half of its sites).
# `make test-full` (PLUGAX_TEST_FULL=1; the composition matrix takes ~2.5x its
# sample's time) runs every case, and hypothesis draws new random examples each run.
# See conftest.py and README.md, "Testing".
# The plugin run is spread over TEST_WORKERS pytest-xdist processes (-n; 0 or 1: one
# process); the kernel run stays in one process (it is short: workers cost more than
# they save).
INTEGRATION := $(wildcard tests/integration)
COMPOSITION := $(wildcard tests/composition)
SPECIAL     := plugins/plugax-special
JET         := plugins/plugax-jet
# every plugax.numpy/plugax.lax function against NumPy and recorded JAX results
DIFFERENTIAL := $(wildcard tests/differential)
TEST_WORKERS ?= auto
XDIST := $(if $(filter-out 0 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --maxprocesses=8 --dist worksteal)

define RUN_TESTS
	@status=0; \
	echo "== kernel tests (tests/), no plugins loaded"; \
	PLUGAX_LOAD_PLUGINS= $(PYTEST) tests $(if $(INTEGRATION),--ignore=$(INTEGRATION)) \
		$(if $(DIFFERENTIAL),--ignore=$(DIFFERENTIAL)) \
		$(if $(COMPOSITION),--ignore=$(COMPOSITION)) \
		|| [ $$? -eq 5 ] || status=1; \
	echo "== plugin and integration tests, all plugins loaded"; \
	$(PYTEST) $(XDIST) plugins $(SPECIAL)/tests $(JET)/tests $(INTEGRATION) $(COMPOSITION) $(DIFFERENTIAL) || [ $$? -eq 5 ] || status=1; \
	if [ $$status -eq 0 ]; then echo "make $@: both runs passed"; \
	else echo "make $@: FAILED (see the summaries above)"; fi; \
	exit $$status
endef

test: $(VENV)/.stamp-test
	$(RUN_TESTS)

# Every generated case and fresh hypothesis examples: before a release, after changing
# a transformation's core, or nightly.
test-full: export PLUGAX_TEST_FULL = 1
test-full: $(VENV)/.stamp-test
	$(RUN_TESTS)

bench: $(VENV)/.stamp-bench
	$(PY) bench/bench.py

# Each family's tests with only it and the families it requires (see tox.ini).
# The envs hold editable installs, so recreate them when pyproject.toml changes.
# Then a package from `plugax new-plugin` runs its own tox env, which installs
# plugax (a copy) from this checkout: ~30 s and the package index, so not in
# `make test` (tests/integration/test_new_plugin.py, PLUGAX_TOX_TESTS=1).
tox: .tox/.stamp
	$(VENV)/bin/tox run-parallel -m plugins
	PLUGAX_TOX_TESTS=1 $(PYTEST) -q -p no:cacheprovider tests/integration/test_new_plugin.py \
		-k tox_env

.tox/.stamp: $(BUILD) $(SPECIAL)/pyproject.toml $(JET)/pyproject.toml tox.ini | $(VENV)/.stamp-test
	$(VENV)/bin/tox run-parallel -m plugins --recreate --notest
	@touch $@

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.stamp-base: $(BUILD) | $(PY)
	$(PIP) -e .
	@touch $@

$(VENV)/.stamp-test: $(BUILD) $(SPECIAL)/pyproject.toml $(JET)/pyproject.toml | $(PY)
	$(PIP) -e '.[test,examples]' -e ./$(SPECIAL) -e ./$(JET)
	@touch $@ $(VENV)/.stamp-base

$(VENV)/.stamp-bench: $(BUILD) | $(PY)
	$(PIP) -e '.[bench]'
	@touch $@ $(VENV)/.stamp-base

clean:
	rm -rf $(VENV) .tox .pytest_cache .hypothesis build
