"""The runtime: devices, device buffers and compiled executables, through jaxlib.

This is the one place plugax talks to jaxlib's runtime API (`xla_client`).
jaxlib's Python API is undocumented and changes between releases, so it stays
behind this small surface: `backend()` (the PJRT client of the chosen
platform), `device_put`, `compile_module`, `Executable` and
`deserialize_executable`. Nothing here is imported by `import plugax`; the
first jit call does.
"""
from .client import Backend, backend, device_put, to_device
from .executable import Executable, clear_compiled_cache, compile_module, deserialize_executable
from . import sharded  # arrays over several devices (sharded put, gather, shardings)

__all__ = ["Backend", "backend", "device_put", "to_device", "Executable", "compile_module",
           "deserialize_executable", "clear_compiled_cache", "sharded"]
