"""The few global switches plugax has, all visible in one place.

There is deliberately no hidden configuration: every flag lives in `config`,
has a documented environment variable, and can be changed with
`plugax.config.update(name, value)`.
"""
from __future__ import annotations

import os
from typing import Any

__all__ = ["Config", "config"]


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


def _env_flag(name: str, default: bool = False) -> bool:
    """A boolean PLUGAX_* variable. Any other value is an error naming the variable
    and the accepted values: read silently as False, a typo (`PLUGAX_ENABLE_X64=ture`)
    would give float32 results the user did not ask for."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"environment variable {name}={raw!r} is not a boolean; accepted "
                     f"values: {', '.join(_TRUE)} (true) or {', '.join(_FALSE[:-1])} or "
                     f"empty (false)")


def _env_int(name: str, default: int, minimum: int = 1) -> int:
    """An integer PLUGAX_* variable of at least `minimum`; anything else is an error
    naming the variable (a typo must not silently fall back to the default)."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise ValueError(f"environment variable {name}={raw!r} is not valid; accepted "
                         f"values: an integer >= {minimum} (default {default})")
    return value


def _checked(name: str, value: Any) -> Any:
    """`value` for flag `name`, or a TypeError/ValueError naming the flag."""
    if name == "enable_x64":
        if not isinstance(value, (bool, int)) or value not in (0, 1):
            raise TypeError(f"config flag 'enable_x64' takes True or False, got {value!r}")
        return bool(value)
    if name == "num_cpu_devices":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"config flag 'num_cpu_devices' takes an integer >= 0, "
                             f"got {value!r}")
        return value
    if name == "jit_cache_size":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"config flag 'jit_cache_size' takes an integer >= 1, "
                             f"got {value!r}")
    return value


class Config:
    """Flags read by the kernel. `update` is the only way to change them."""

    _known = ("enable_x64", "jit_cache_size", "num_cpu_devices")

    def __init__(self) -> None:
        self.enable_x64: bool = _env_flag("PLUGAX_ENABLE_X64")
        # Traced-and-compiled signatures kept per jitted function (least recently used
        # dropped first); env PLUGAX_JIT_CACHE_SIZE.
        self.jit_cache_size: int = _env_int("PLUGAX_JIT_CACHE_SIZE", 4096)
        # CPU devices of the client made on first use (JAX's jax_num_cpu_devices); 0: as
        # XLA_FLAGS=--xla_force_host_platform_device_count says, else 1. Set before the
        # first computation: the client is made once. Env PLUGAX_NUM_CPU_DEVICES.
        self.num_cpu_devices: int = _env_int("PLUGAX_NUM_CPU_DEVICES", 0, minimum=0)
        self._listeners: list = []

    def update(self, name: str, value: Any) -> None:
        """Set a flag. JAX's spelling (`"jax_enable_x64"`) is accepted too, so ported
        programs run unchanged."""
        if name.startswith("jax_") and name[4:] in self._known:
            name = name[4:]
        if name not in self._known:
            raise AttributeError(
                f"plugax.config has no flag {name!r}; known flags: {', '.join(self._known)}")
        value = _checked(name, value)
        setattr(self, name, value)
        for listener in self._listeners:
            listener(name, value)

    def on_change(self, listener) -> None:
        """Register `listener(name, value)`; the dtype tables use it to refresh."""
        self._listeners.append(listener)


config = Config()
