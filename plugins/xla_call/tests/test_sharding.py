"""Sharded arrays and SPMD jit on 8 CPU devices.

The checks run in one subprocess (sharding_checks.py) started with
XLA_FLAGS=--xla_force_host_platform_device_count=8: jaxlib's client, and so the
device count, is made once per process, and this test process may have one
already. Each check is reported here as its own test.
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
CHECKS = ["devices", "device_put_shards", "visualize", "elementwise",
          "matmul_batch_and_column_sharded", "data_parallel_mlp_step", "sharding_constraint",
          "lowering_text_and_compile", "composes_with_grad_and_vmap", "composes_with_scan",
          "errors", "committed_inputs_keep_their_sharding", "shard_map_collectives",
          "shard_map_matmul_in_jit", "shard_map_jvp_vmap_and_grad_inside", "shard_map_grad",
          "make_array_from_callback", "shard_map_check_vma_errors",
          "shard_map_check_vma_valid", "shard_map_check_vma_false", "shard_map_pcast",
          "shard_map_axis_index_groups", "grad_of_the_shard_map_is_refused",
          "groups_must_cover_the_axis", "no_jax_import"]


def _run(script: list, env_extra: dict, timeout: int = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **env_extra)
    if "XLA_FLAGS" not in env_extra:   # the device count comes from the checked option only
        env.pop("XLA_FLAGS", None)
    return subprocess.run([sys.executable, *script], capture_output=True, text=True,
                          env=env, timeout=timeout)


@pytest.fixture(scope="module")
def results():
    proc = _run([str(HERE / "sharding_checks.py")],
                {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"})
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULTS ")]
    assert lines, f"the checks did not finish:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULTS "):])


@pytest.mark.parametrize("name", CHECKS)
def test_on_8_cpu_devices(results, name):
    ok, detail = results[name]
    assert ok, detail


def test_every_check_is_listed(results):
    assert sorted(results) == sorted(CHECKS)


CONFIG_SCRIPT = """
import plugax
plugax.config.update("num_cpu_devices", 4)
print(plugax.device_count(), len(plugax.make_mesh((2, 2), ("a", "b")).devices.flat))
"""


def test_num_cpu_devices_config_option():
    proc = _run(["-c", CONFIG_SCRIPT], {})
    assert proc.stdout.split() == ["4", "4"], proc.stderr[-2000:]


def test_num_cpu_devices_environment_variable():
    proc = _run(["-c", "import plugax; print(plugax.device_count())"],
                {"PLUGAX_NUM_CPU_DEVICES": "3"})
    assert proc.stdout.split() == ["3"], proc.stderr[-2000:]


def test_num_cpu_devices_refuses_a_negative_count():
    import plugax
    with pytest.raises(ValueError, match="num_cpu_devices"):
        plugax.config.update("num_cpu_devices", -1)
