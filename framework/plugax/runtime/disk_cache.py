"""The on-disk compile cache (PLUGAX_COMPILATION_CACHE_DIR), safe in a shared directory.

A cache directory may be reachable by other users (a shared /tmp, a team
scratch disk), so everything read from it is untrusted until checked and nothing
is written through a path someone else could have prepared:

- the directory is created 0o700; one owned by another user or writable by
  group/others is refused (with a warning) and compiling goes on without it;
- entries are written to a fresh temporary file made by `mkstemp` (exclusive,
  unpredictable name, 0o600) in the same directory, then `os.replace`d into
  place, so a reader sees a whole entry or none and a planted symlink is
  replaced, never written through;
- entries are opened with O_NOFOLLOW and must be regular files;
- an entry is a versioned header (magic, format version, jaxlib version,
  platform, plugax version, a fingerprint of the loaded plugins) and a SHA-256
  of the payload, then the executable's bytes. No pickle. Anything that does not
  match (corrupt, truncated, another version or platform) is ignored with a
  warning naming the file, and the caller recompiles and overwrites it.

Deserializing an executable runs whatever code it holds, so the checks above
keep other users from feeding us one; they do not make foreign bytes safe.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import tempfile
import warnings

__all__ = ["CacheWarning", "usable_dir", "entry_path", "read_entry", "write_entry", "header_fields"]

MAGIC = b"PLUGAXC\x00"
FORMAT_VERSION = 1
_LEN = struct.Struct("<I")      # header length
_MAX_HEADER = 1 << 16


class CacheWarning(UserWarning):
    """An on-disk compile cache directory or entry was refused; plugax compiles instead."""


def header_fields(platform: str) -> dict:
    """What an entry must match to be used: versions, platform, and the loaded plugins.

    The plugin fingerprint is names + distribution versions (stable across
    processes, unlike the registry's per-process rebuild counter)."""
    import jaxlib
    from .. import __version__
    return {"format": FORMAT_VERSION, "jaxlib": jaxlib.__version__, "platform": platform,
            "plugax": __version__, "plugins": _plugin_fingerprint()}


def _plugin_fingerprint() -> str:
    try:
        from ..loader.registry import registry
        parts = sorted(f"{r.name}={r.distribution}:{r.version}"
                       for r in registry.records.values() if r.status == "loaded")
    except Exception:  # no registry yet: still a stable value
        parts = []
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def usable_dir(cache_dir: str) -> bool:
    """Create the directory private to this user; False (with a warning) if it is not safe."""
    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        st = os.lstat(cache_dir)
    except OSError as err:
        warnings.warn(f"PLUGAX_COMPILATION_CACHE_DIR={cache_dir!r} cannot be used ({err}); "
                      f"compiling without the disk cache", CacheWarning, stacklevel=4)
        return False
    problem = None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        problem = "it is not a directory (or is a symlink)"
    elif hasattr(os, "getuid") and st.st_uid != os.getuid():
        problem = f"it is owned by uid {st.st_uid}, not by you (uid {os.getuid()})"
    elif os.name == "posix" and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = (f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):o}); "
                   f"`chmod 700` it")
    if problem:
        warnings.warn(f"PLUGAX_COMPILATION_CACHE_DIR={cache_dir!r} refused: {problem}, so "
                      f"another user could plant executables there; compiling without the "
                      f"disk cache", CacheWarning, stacklevel=4)
        return False
    return True


def entry_path(cache_dir: str, text: str, platform: str) -> str:
    fields = header_fields(platform)
    key = hashlib.sha256(json.dumps(fields, sort_keys=True).encode() + b"\n"
                         + text.encode()).hexdigest()
    return os.path.join(cache_dir, f"plugax-{key[:32]}.xla")


def encode(payload: bytes, platform: str) -> bytes:
    header = dict(header_fields(platform), sha256=hashlib.sha256(payload).hexdigest(),
                  size=len(payload))
    raw = json.dumps(header, sort_keys=True).encode()
    return MAGIC + _LEN.pack(len(raw)) + raw + payload


def decode(data: bytes, platform: str) -> tuple[bytes | None, str]:
    """The payload, or None and why the entry is refused."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _LEN.size:
        return None, "not a plugax cache entry (bad magic)"
    (n,) = _LEN.unpack_from(data, len(MAGIC))
    start = len(MAGIC) + _LEN.size
    if n > _MAX_HEADER or start + n > len(data):
        return None, "truncated header"
    try:
        header = json.loads(data[start:start + n])
        if not isinstance(header, dict):
            raise ValueError("header is not an object")
    except ValueError as err:
        return None, f"corrupt header ({err})"
    expected = header_fields(platform)
    for key, want in expected.items():
        if header.get(key) != want:
            return None, f"written for {key} {header.get(key)!r}, this is {want!r}"
    payload = data[start + n:]
    if header.get("size") != len(payload):
        return None, f"truncated ({len(payload)} of {header.get('size')} bytes)"
    if header.get("sha256") != hashlib.sha256(payload).hexdigest():
        return None, "checksum mismatch (corrupt)"
    return payload, ""


def read_entry(path: str, platform: str) -> bytes | None:
    """The checked executable bytes at `path`, or None (missing, or refused with a warning)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as err:   # ELOOP: a symlink planted at the entry path
        _warn_entry(path, f"cannot be opened without following links ({err})")
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            _warn_entry(path, "is not a regular file")
            return None
        data = f.read()
    payload, why = decode(data, platform)
    if payload is None:
        _warn_entry(path, why)
    return payload


def write_entry(path: str, payload: bytes, platform: str) -> None:
    """Write atomically: a fresh exclusive temp file in the same directory, then replace."""
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".plugax-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(encode(payload, platform))
        os.replace(tmp, path)   # replaces a planted symlink itself, never its target
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _warn_entry(path: str, why: str) -> None:
    warnings.warn(f"compile cache entry {path} ignored: {why}; recompiling and overwriting it",
                  CacheWarning, stacklevel=5)
