"""plugax.first_use, the switch every first use goes through, on a stand-in loader.

The real loader runs once per process (tests/integration/test_lazy_import.py starts
fresh interpreters for it); here a stand-in is deferred for one test, so the switch's
promises are checked in this process: the loader runs once, a failed load is tried
again by the next use, the loading thread's own first uses return at once, another
thread waits for the load, and the first-use operators of a class call what the load
installed and are gone afterwards.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

from plugax import first_use
from plugax.errors import PluginError


@contextmanager
def deferred(loader):
    """`loader` as the pending first-use loader for the block; this process's own
    plugins are loaded first, so nothing is pending afterwards."""
    first_use.load()
    first_use.defer(loader)
    try:
        yield
    finally:
        first_use._loader = None


def test_the_loader_runs_once_and_a_failed_load_is_tried_again():
    calls = []

    def loader():
        calls.append(first_use.load())      # the loading thread's own first use
        if len(calls) == 1:
            raise PluginError("strict mode refused a plugin")

    with deferred(loader):
        with pytest.raises(PluginError, match="refused a plugin"):
            first_use.load()
        assert first_use.pending()          # still pending: the next use tries again
        assert first_use.load() is True
        assert not first_use.pending() and first_use.load() is False
    assert calls == [False, False]


def test_another_thread_waits_for_the_load_and_then_sees_it_done():
    started, release = threading.Event(), threading.Event()
    seen = []

    def loader():
        started.set()
        assert release.wait(30)

    def use(name):
        seen.append((name, first_use.load(), first_use.pending()))

    with deferred(loader):
        loading = threading.Thread(target=use, args=("loader",))
        loading.start()
        assert started.wait(30)
        waiting = threading.Thread(target=use, args=("waiter",))
        waiting.start()
        waiting.join(0.2)
        assert waiting.is_alive() and seen == []    # it waits while the load runs
        release.set()
        loading.join(30)
        waiting.join(30)
    assert sorted(seen) == [("loader", True, False), ("waiter", True, False)]


class Thing:
    """Stands in for Array: one attribute of its own, operators installed by a 'plugin'."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __getattr__(self, name):
        raise AttributeError(f"'Thing' object has no attribute '{name}'")


def test_trampolines_call_what_the_load_installs_and_are_removed():
    def loader():   # what the registry's publish does for Array
        Thing.__add__ = lambda self, other: Thing(self.value + other)
        Thing.double = lambda self: Thing(2 * self.value)
        first_use.remove_trampolines(Thing)

    with deferred(loader):
        first_use.install_trampolines(Thing)
        assert first_use.is_trampoline(Thing.__dict__["__sub__"])
        assert not hasattr(Thing(1), "_private")     # a private name is no first use
        assert first_use.pending()
        assert (Thing(1) + 2).value == 3            # loads, then calls the new __add__
    assert not first_use.pending()
    assert Thing(5).double().value == 10
    assert not any(first_use.is_trampoline(v) for v in vars(Thing).values())
    with pytest.raises(TypeError, match="unsupported operand"):
        Thing(1) - 1                                # no plugin gave it: as before
    with pytest.raises(AttributeError, match="no attribute 'triple'"):
        Thing(1).triple


def test_a_trampoline_nobody_replaces_answers_like_the_missing_operator():
    class Bare:
        __slots__ = ()

    with deferred(lambda: None):
        first_use.install_trampolines(Bare)
        with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*"):
            Bare() * 2
    with pytest.raises(TypeError, match="bad operand type for unary -: 'Bare'"):
        -Bare()
    with pytest.raises(TypeError, match="'Bare' object is not subscriptable"):
        Bare()[0]
