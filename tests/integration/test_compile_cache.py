"""The disk compile cache is safe in a shared directory, and AOT bytes use no pickle (issue 14 part 4)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import plugax as px
import plugax.numpy as pnp
from plugax.runtime import disk_cache, executable

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and symlinks")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("PLUGAX_COMPILATION_CACHE_DIR", str(d))
    executable.clear_compiled_cache()
    yield d
    executable.clear_compiled_cache()


def _run(scale):
    executable.clear_compiled_cache()
    return float(px.jit(lambda x: pnp.cos(x) * scale)(np.float32(0.)))


def _entry(cache):
    files = [p for p in cache.iterdir() if p.name.endswith(".xla")]
    assert len(files) == 1, files
    return files[0]


def test_directory_created_private(cache):
    assert _run(3.) == 3.0
    assert (cache.stat().st_mode & 0o777) == 0o700
    assert (_entry(cache).stat().st_mode & 0o077) == 0
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def test_symlink_at_entry_path_not_followed(cache, tmp_path):
    _run(3.)
    entry = _entry(cache)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    entry.unlink()
    entry.symlink_to(victim)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert _run(3.) == 3.0
    assert any(str(entry) in str(x.message) for x in w), [str(x.message) for x in w]
    assert victim.read_text() == "precious"
    assert not entry.is_symlink() and entry.stat().st_size > 100


def test_predictable_temp_paths_not_followed(cache, tmp_path):
    _run(5.)
    entry = _entry(cache)
    entry.unlink()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    # the old code wrote <entry>.<pid>.tmp: plant links at the names it could have used
    for name in (f"{entry}.{os.getpid()}.tmp", f"{entry}.tmp"):
        os.symlink(victim, name)
    assert _run(5.) == 5.0
    assert victim.read_text() == "precious"
    assert not entry.is_symlink() and disk_cache.read_entry(str(entry), "cpu") is not None


def test_directory_of_another_user_refused(cache, monkeypatch):
    cache.mkdir(mode=0o700)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(cache).st_uid + 1)
    with pytest.warns(disk_cache.CacheWarning, match="owned by uid"):
        assert _run(3.) == 3.0
    assert list(cache.iterdir()) == []


def test_foreign_platform_entry_refused():
    data = disk_cache.encode(b"payload", "cuda")
    assert disk_cache.decode(data, "cuda") == (b"payload", "")
    payload, why = disk_cache.decode(data, "cpu")
    assert payload is None and "platform 'cuda'" in why


def test_directory_writable_by_others_refused(cache):
    cache.mkdir()
    os.chmod(cache, 0o777)
    with pytest.warns(disk_cache.CacheWarning, match="writable by group or others"):
        assert _run(3.) == 3.0
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("damage", ["corrupt", "truncated", "header_version"])
def test_bad_entry_ignored_and_recompiled(cache, damage):
    _run(7.)
    entry = _entry(cache)
    data = bytearray(entry.read_bytes())
    if damage == "corrupt":
        data[-50] ^= 0xFF
    elif damage == "truncated":
        data = data[:len(data) // 2]
    else:
        data = data.replace(b'"format": 1', b'"format": 99')
    entry.write_bytes(bytes(data))
    with pytest.warns(disk_cache.CacheWarning, match=str(entry).replace("\\", ".")):
        assert _run(7.) == 7.0
    assert disk_cache.read_entry(str(entry), "cpu") is not None   # overwritten with a good one


def test_two_processes_write_the_same_entry(cache):
    script = ("import numpy as np, plugax as px, plugax.numpy as pnp\n"
              "print(float(px.jit(lambda x: pnp.cos(x) * 4.)(np.float32(0.))))\n")
    env = {**os.environ, "PLUGAX_COMPILATION_CACHE_DIR": str(cache)}
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == "4.0"
    entry = _entry(cache)
    assert disk_cache.read_entry(str(entry), "cpu") is not None
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def test_aot_round_trip_without_pickle():
    import plugax_xla_call.aot as aot
    assert not hasattr(aot, "pickle")
    compiled = px.jit(lambda x: (pnp.sin(x) * 2, {"k": [x]})).lower(
        np.ones(3, np.float32)).compile()
    restored = px.deserialize_compiled(compiled.serialize())
    x = np.arange(3, dtype=np.float32)
    out = restored(x)
    np.testing.assert_allclose(out[0], np.sin(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(out[1]["k"][0], x)


def test_aot_refuses_a_pickle():
    import pickle
    with pytest.raises(ValueError, match="bad magic"):
        px.deserialize_compiled(pickle.dumps((b"", [], [], None, ())))
    data = bytearray(px.jit(lambda x: x + 1).lower(np.float32(1)).compile().serialize())
    data[-10] ^= 0xFF
    with pytest.raises(ValueError, match="checksum"):
        px.deserialize_compiled(bytes(data))
