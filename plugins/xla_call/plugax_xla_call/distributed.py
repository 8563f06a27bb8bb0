"""`plugax.distributed.initialize` / `shutdown`: one process per host, one program.

Why jaxlib's distributed runtime and nothing of our own: the processes must
agree on the global device list and exchange data in collectives, which is what
jaxlib's coordination service (started in process 0), its per-process client and
the gloo TCP collectives of the CPU client do. After `initialize`, this
process's device client is made over all processes' devices: `devices()` lists
every process's devices, `local_devices()` this one's, and a jit sharded over a
mesh of all of them runs as one program (each process places and reads only its
own shards).

Every wait is bounded (`initialization_timeout`, seconds): a coordinator that
cannot be reached, or processes that do not all arrive, give an error naming
the address and the counts instead of hanging.
"""
from __future__ import annotations

from typing import Any, Sequence

from plugax.extend import runtime

__all__ = ["initialize", "shutdown", "is_initialized"]

_state: dict = {"service": None, "client": None, "process_id": None, "num_processes": None}


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: Sequence[int] | None = None,
               *, initialization_timeout: int = 60, heartbeat_timeout_seconds: int = 30,
               shutdown_timeout_seconds: int = 30) -> None:
    """Join a run of `num_processes` processes coordinated at `coordinator_address`
    ("host:port"; process 0 serves it). Call it first thing, before any computation."""
    if _state["client"] is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    if coordinator_address is None or num_processes is None or process_id is None:
        raise ValueError("distributed.initialize needs coordinator_address, num_processes and "
                         "process_id (plugax does not detect clusters)")
    num_processes, process_id = int(num_processes), int(process_id)
    if not 0 <= process_id < num_processes:
        raise ValueError(f"distributed.initialize: process_id={process_id} is not in "
                         f"[0, num_processes={num_processes})")
    if runtime().client.backend_started():
        raise RuntimeError("distributed.initialize() must be called before any computation: "
                           "this process already made its device client")
    from jaxlib import _jax
    if process_id == 0:
        host, _, port = coordinator_address.rpartition(":")
        _state["service"] = _jax.get_distributed_runtime_service(
            f"[::]:{port}" if host not in ("127.0.0.1", "localhost") else coordinator_address,
            num_processes, heartbeat_timeout=heartbeat_timeout_seconds,
            shutdown_timeout=shutdown_timeout_seconds)
    client = _jax.get_distributed_runtime_client(
        coordinator_address, process_id, init_timeout=initialization_timeout,
        heartbeat_timeout=heartbeat_timeout_seconds, shutdown_timeout=shutdown_timeout_seconds,
        missed_heartbeat_callback=_peer_failed)
    try:
        client.connect()
    except Exception as err:
        _stop_service()
        raise RuntimeError(f"distributed.initialize: process {process_id} of {num_processes} "
                           f"could not join the coordinator at {coordinator_address}, or not "
                           f"all {num_processes} processes joined, within "
                           f"{initialization_timeout} s ({err}); is process 0 running, and do "
                           f"all processes pass the same address and num_processes?") from err
    host = coordinator_address.rpartition(":")[0] or "127.0.0.1"
    collectives = _jax.make_gloo_tcp_collectives(
        distributed_client=client,
        hostname="127.0.0.1" if host in ("127.0.0.1", "localhost") else None)
    _state.update(client=client, process_id=process_id, num_processes=num_processes)
    runtime().client.set_distributed(dict(
        distributed_client=client, node_id=process_id, num_nodes=num_processes,
        collectives=collectives,
        local_device_ids=None if local_device_ids is None else list(local_device_ids)))


def _peer_failed(status: Any) -> None:
    """jaxlib's default here aborts the process; a failed connect raises instead, and a
    peer lost later is reported on stderr (the next collective then fails)."""
    import sys
    print(f"plugax.distributed: the coordination service reported an error: {status}",
          file=sys.stderr)


def _stop_service() -> None:
    service = _state["service"]
    _state["service"] = None
    if service is not None:
        service.shutdown()


def shutdown() -> None:
    """Leave the run: the client first, then (in process 0) the service. The device
    client is dropped; a later computation makes a single-process one."""
    client = _state["client"]
    _state.update(client=None, process_id=None, num_processes=None)
    if client is not None:
        client.shutdown()
    _stop_service()
    runtime().client.set_distributed(None)


def is_initialized() -> bool:
    return _state["client"] is not None


def process_count() -> int:
    return _state["num_processes"] or 1
