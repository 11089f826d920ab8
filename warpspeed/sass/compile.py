"""Compile CUDA source to SASS text (nvcc + cuobjdump), cached on disk and in memory.

``nvcc -cubin -arch=sm_XX`` compiles the kernel's source; ``cuobjdump -sass`` disassembles the
cubin. The listing is cached under the user's cache directory (``$WARPSPEED_CACHE_DIR``, else
``$XDG_CACHE_HOME/warpspeed``, else ``~/.cache/warpspeed``) in ``sass/<key>.json``, the key being
the SHA-256 of the source, the architecture and the compiler's version line, so a ranking
compiles each folding's kernel once, and later runs not at all. An entry is a verified JSON entry
(:mod:`warpspeed.files.cache_entry`: format, key and SHA-256 of the listing); one that does not
verify is a miss, compiled again and replaced.

The same directory holds the other results of the compiler (register counts,
:mod:`pystencils_plugin.registers`, in ``registers/<key>.json``): :func:`cache_dir`,
:func:`writable_cache_dir` and :func:`cache_key` are the one place that decides where an entry
lives and how it is keyed. A cache directory that cannot be made or written means running without
the cache, with one :class:`~warpspeed.errors.CacheWarning`.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path

from warpspeed.errors import CacheWarning, WarpspeedError
from warpspeed.files.cache_entry import read_entry, write_entry
from warpspeed.sass.toolchain import compile_target, find_tool

#: Seconds before a compile or a disassembly is abandoned.
TIMEOUT_S = 120.0
#: Environment variable naming the cache directory.
CACHE_ENV = "WARPSPEED_CACHE_DIR"
#: Format of a SASS entry; a change makes every older entry a miss.
SASS_FORMAT = "sass-listing-1"


class CompileError(WarpspeedError):
    """nvcc or cuobjdump failed (the message carries the tool's last lines)."""


def cache_dir() -> Path:
    """Where compiled SASS listings are kept (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    # the XDG Base Directory Specification ignores a relative XDG_CACHE_HOME
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warpspeed"


def writable_cache_dir(cache: Path | None = None) -> Path | None:
    """``cache`` (default :func:`cache_dir`), made if missing, when entries can be written there;
    else None and one :class:`~warpspeed.errors.CacheWarning` naming the directory and the reason
    (the warnings module shows a message once per process)."""
    path = cache if cache is not None else cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
        reason = "" if os.access(path, os.W_OK | os.X_OK) else "permission denied"
    except FileExistsError:
        reason = "it is not a directory"
    except OSError as exc:
        reason = exc.strerror or str(exc)
    if not reason:
        return path
    warnings.warn(CacheWarning(f"cache directory {str(path)!r} cannot be used ({reason}); running without the cache "
                               f"(set {CACHE_ENV} to a writable directory to keep compiled and generated kernels)"),
                  stacklevel=1)  # one location: the message is shown once per process, whoever asks
    return None


@lru_cache(maxsize=4)
def compiler_version(nvcc: str) -> str:
    """The last line of ``nvcc --version`` (e.g. ``Build cuda_13.0.r13.0/compiler.36424714_0``)."""
    proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if lines else "unknown"


def _run(cmd: list[str], what: str) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise CompileError(f"{what} timed out after {TIMEOUT_S:g} s") from None
    except OSError as exc:
        raise CompileError(f"{what} could not be run: {exc}") from None
    if proc.returncode != 0:
        tail = " ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])[:300]
        raise CompileError(f"{what} failed (exit {proc.returncode}): {tail}")
    return proc.stdout


def cache_key(*parts: str) -> str:
    """The SHA-256 (hex) of ``parts``, each followed by a NUL byte: the name of a cache entry.
    Entries of compiled code are keyed by the source, the architecture, the compiler's version
    line (:func:`compiler_version`) and the include directories."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _key(source: str, arch: str, version: str, include_dirs: tuple[str, ...]) -> str:
    return cache_key(source, arch, version, *include_dirs)


def compile_sass(source: str, arch: str, include_dirs: tuple[str, ...] = (),
                 cache: Path | None = None) -> tuple[str, str]:
    """``(listing, compiler)``: the ``cuobjdump -sass`` listing of ``source`` compiled for ``arch``
    (``"sm_80"``) and the compiler's version line. Raises :class:`CompileError` when nvcc or
    cuobjdump is missing or fails."""
    nvcc, cuobjdump = find_tool("nvcc"), find_tool("cuobjdump")
    if nvcc is None or cuobjdump is None:
        raise CompileError("SASS needs nvcc and cuobjdump (pip install 'warpspeed[cuda]')")
    version = compiler_version(nvcc)
    target, _ = compile_target(nvcc, arch)
    root = writable_cache_dir(cache)
    return _cached_sass(source, target, include_dirs, "" if root is None else str(root), nvcc, cuobjdump,
                        version), version


@lru_cache(maxsize=256)
def _cached_sass(source: str, arch: str, include_dirs: tuple[str, ...], cache: str, nvcc: str, cuobjdump: str,
                 version: str) -> str:
    key = _key(source, arch, version, include_dirs)
    path = Path(cache) / "sass" / f"{key}.json" if cache else None
    stored = None if path is None else read_entry(path, SASS_FORMAT, key)
    if isinstance(stored, str) and stored:
        return stored
    with tempfile.TemporaryDirectory(prefix="warpspeed_sass_") as tmp:
        cu, cubin = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "kernel.cubin")
        Path(cu).write_text(source)
        cmd = [nvcc, f"-arch={arch}", "-cubin", "-std=c++17", "-w", "-o", cubin, cu]
        for inc in include_dirs:
            cmd[1:1] = ["-I", inc]
        _run(cmd, f"nvcc -arch={arch}")
        listing = _run([cuobjdump, "-sass", cubin], "cuobjdump -sass")
    if path is not None:
        write_entry(path, SASS_FORMAT, key, listing)
    return listing
