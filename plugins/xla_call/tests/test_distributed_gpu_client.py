"""The GPU client of a multi-process run, checked without a GPU: the PJRT plugin's
loading is replaced by stand-ins that record what plugax passes, which must be what
JAX passes its CUDA plugin (node_id, num_nodes, the distributed client, and the
visible devices from `local_device_ids`), while the CPU client keeps its gloo
collectives and gets no GPU-only option."""
from __future__ import annotations

import importlib.util
import types

import pytest

pytest.importorskip("jaxlib")
from plugax.runtime import client as rc  # noqa: E402


@pytest.fixture
def fake_plugin(monkeypatch, tmp_path):
    """A cuda PJRT plugin package on disk, and make_c_api_client recording its call."""
    (tmp_path / "pjrt_c_api_gpu_plugin.so").write_bytes(b"")
    spec = types.SimpleNamespace(submodule_search_locations=[str(tmp_path)])
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name: spec if name == "jax_plugins.xla_cuda13" else None)
    calls = {}
    monkeypatch.setattr(rc.xc, "load_pjrt_plugin_dynamically", lambda name, lib: "c_api")
    monkeypatch.setattr(rc, "_accept_gpu_kernels", lambda c_api: None)
    monkeypatch.setattr(rc, "_gpu_options", lambda: {"preallocate": False})

    def make_c_api_client(name, options, distributed_client):
        calls.update(name=name, options=options, distributed_client=distributed_client)
        return "client"
    monkeypatch.setattr(rc.xc, "make_c_api_client", make_c_api_client)
    yield calls
    rc._distributed.clear()


def test_single_process_gpu_client_has_no_distributed_options(fake_plugin):
    assert rc._make_plugin_client("cuda") == "client"
    assert fake_plugin == {"name": "cuda", "options": {"preallocate": False},
                           "distributed_client": None}


def test_gpu_client_of_a_run_gets_node_id_num_nodes_and_the_client(fake_plugin):
    rc._distributed.update(distributed_client="dc", node_id=1, num_nodes=2,
                           collectives="gloo", local_device_ids=[2, 3])
    rc._make_plugin_client("cuda")
    assert fake_plugin["distributed_client"] == "dc"
    assert fake_plugin["options"] == {"preallocate": False, "node_id": 1, "num_nodes": 2,
                                      "visible_devices": [2, 3]}


def test_all_local_devices_when_no_ids_are_given(fake_plugin):
    rc._distributed.update(distributed_client="dc", node_id=0, num_nodes=4,
                           collectives="gloo", local_device_ids=None)
    rc._make_plugin_client("cuda")
    assert "visible_devices" not in fake_plugin["options"]
    assert fake_plugin["options"]["num_nodes"] == 4


def test_cpu_client_of_a_run_gets_gloo_and_no_gpu_option():
    rc._distributed.update(distributed_client="dc", node_id=1, num_nodes=2,
                           collectives="gloo", local_device_ids=[0])
    try:
        assert rc._cpu_distributed_options() == {
            "distributed_client": "dc", "node_id": 1, "num_nodes": 2, "collectives": "gloo"}
    finally:
        rc._distributed.clear()
