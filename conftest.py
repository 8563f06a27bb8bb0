"""Test-suite mode, shared by every test folder of this checkout (tests/, plugins/*/tests,
tox envs: all run from this directory).

`make test` (PLUGAX_TEST_FULL unset) is the everyday run and must stay under the
project's time budget: hypothesis tests are *derandomized* (the same examples on every
run and on every machine, so a failure reproduces), and the largest generated matrices
run a deterministic sample (tests/composition: see harness.in_default_sample).

`make test-full` (PLUGAX_TEST_FULL=1) runs every generated case, and hypothesis draws
fresh random examples on each run (its example database in .hypothesis/ replays the
failures it found).
"""
from __future__ import annotations

import os

FULL = os.environ.get("PLUGAX_TEST_FULL", "") not in ("", "0")

try:
    from hypothesis import settings
except ImportError:  # hypothesis is in the test extra; a bare pytest run may lack it
    settings = None

if settings is not None:
    # deadline=None: a shared 2-core CI machine makes per-example deadlines flaky.
    # Test modules build their @settings(...) at import, after this has run, so they
    # inherit these values (their own max_examples etc. still win).
    settings.register_profile("plugax-ci", derandomize=True, database=None, deadline=None)
    settings.register_profile("plugax-full", derandomize=False, deadline=None)
    settings.load_profile("plugax-full" if FULL else "plugax-ci")


def pytest_report_header(config):
    if FULL:
        return ("plugax tests: FULL mode (PLUGAX_TEST_FULL=1): every generated case, "
                "random hypothesis examples")
    return ("plugax tests: default mode: deterministic hypothesis examples, sampled "
            "composition matrix (PLUGAX_TEST_FULL=1 or `make test-full` runs everything)")
