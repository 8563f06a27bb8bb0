"""Two processes on loopback, 2 CPU devices each: one program over the 4 devices
(jaxlib's distributed runtime and gloo collectives), checked against NumPy in both."""
import json
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np
import pytest

WORKER = pathlib.Path(__file__).parent / "distributed_worker.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reference_grad(x, w, y):
    a = x / 16
    h = np.tanh(a @ w)
    return a.T @ (2 * (h - y) * (1 - h ** 2)) / y.size


def test_two_processes_run_one_program():
    address = f"127.0.0.1:{_free_port()}"
    env = dict(os.environ, PLUGAX_NUM_CPU_DEVICES="2", TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("XLA_FLAGS", None)
    procs = [subprocess.Popen([sys.executable, str(WORKER), address, str(pid)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for pid in range(2)]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=90)
            outs.append((p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    x = np.arange(16, dtype=np.float64).reshape(8, 2)
    ref = _reference_grad(x, np.full((2, 3), 0.1), np.ones((8, 3)))
    for pid, (rc, out, err) in enumerate(outs):
        lines = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
        assert rc == 0 and lines, f"process {pid} failed ({rc}):\n{out[-2000:]}\n{err[-3000:]}"
        r = json.loads(lines[-1][len("RESULT "):])
        assert (r["devices"], r["local"], r["process_index"], r["process_count"]) == (4, 2, pid, 2)
        assert r["total"] == float((x * x).sum())
        assert r["local_total"] == float((x * x).sum())   # from each process's half
        np.testing.assert_allclose(np.array(r["grad"]), ref, rtol=1e-4, atol=1e-6)
        # each process holds the rows of its own two devices (mesh positions 2pid, 2pid+1)
        assert sorted(k for k, _ in r["shards"]) == [2 * pid, 2 * pid + 1], r["shards"]
        for k, data in r["shards"]:
            np.testing.assert_array_equal(np.array(data), x[2 * k: 2 * k + 2])
        assert not r["fully_addressable"]
        assert "other processes" in r["partial_error"]


ALONE = """
import sys, plugax
try:
    plugax.distributed.initialize(sys.argv[1], num_processes=2, process_id=int(sys.argv[2]),
                                  initialization_timeout=1)
except RuntimeError as err:
    print("ERROR", err)
"""


@pytest.mark.parametrize("pid", [1, 0], ids=["no coordinator", "the other process missing"])
def test_a_run_that_cannot_form_is_an_error_not_a_hang(pid):
    address = f"127.0.0.1:{_free_port()}"     # process 1: nobody serves it; 0: nobody joins
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([sys.executable, "-c", ALONE, address, str(pid)], capture_output=True,
                         text=True, env=env, timeout=60).stdout
    assert "ERROR" in out and "could not join the coordinator" in out and address in out, out
    assert f"process {pid} of 2" in out, out


def test_initialize_checks_its_arguments():
    import plugax
    with pytest.raises(ValueError, match="process_id=2"):
        plugax.distributed.initialize("127.0.0.1:1", num_processes=2, process_id=2)
    with pytest.raises(ValueError, match="coordinator_address"):
        plugax.distributed.initialize()
