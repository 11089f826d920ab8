"""Compile CUDA source to SASS text (nvcc + cuobjdump), cached on disk and in memory.

``nvcc -cubin -arch=sm_XX`` compiles the kernel's source; ``cuobjdump -sass`` disassembles the
cubin. The listing is cached under the user's cache directory (``$WARPSPEED_CACHE_DIR``, else
``$XDG_CACHE_HOME/warpspeed``, else ``~/.cache/warpspeed``) in ``sass/<key>.sass``, the key being
the SHA-256 of the source, the architecture and the compiler's version line, so a ranking
compiles each folding's kernel once, and later runs not at all.

The same directory holds the other results of the compiler (register counts,
:mod:`pystencils_plugin.registers`, in ``registers/<key>.json``): :func:`cache_dir`,
:func:`cache_key` and :func:`write_cache_file` are the one place that decides where an entry lives,
how it is keyed and how it is written (atomically, so that concurrent processes never read half a
file).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import threading
from functools import lru_cache
from pathlib import Path

from warpspeed.errors import WarpspeedError
from warpspeed.sass.toolchain import compile_target, find_tool

#: Seconds before a compile or a disassembly is abandoned.
TIMEOUT_S = 120.0
#: Environment variable naming the cache directory.
CACHE_ENV = "WARPSPEED_CACHE_DIR"


class CompileError(WarpspeedError):
    """nvcc or cuobjdump failed (the message carries the tool's last lines)."""


def cache_dir() -> Path:
    """Where compiled SASS listings are kept (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warpspeed"


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


def write_cache_file(path: Path, text: str) -> None:
    """Write a cache entry atomically (a temporary file in the same directory, then a rename), so
    a concurrent reader sees the whole entry or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp_path.write_text(text)
    os.replace(tmp_path, path)


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
    return _cached_sass(source, target, include_dirs, str(cache or cache_dir()), nvcc, cuobjdump, version), version


@lru_cache(maxsize=256)
def _cached_sass(source: str, arch: str, include_dirs: tuple[str, ...], cache: str, nvcc: str, cuobjdump: str,
                 version: str) -> str:
    path = Path(cache) / "sass" / f"{_key(source, arch, version, include_dirs)}.sass"
    if path.is_file():
        return path.read_text()
    with tempfile.TemporaryDirectory(prefix="warpspeed_sass_") as tmp:
        cu, cubin = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "kernel.cubin")
        Path(cu).write_text(source)
        cmd = [nvcc, f"-arch={arch}", "-cubin", "-std=c++17", "-w", "-o", cubin, cu]
        for inc in include_dirs:
            cmd[1:1] = ["-I", inc]
        _run(cmd, f"nvcc -arch={arch}")
        listing = _run([cuobjdump, "-sass", cubin], "cuobjdump -sass")
    write_cache_file(path, listing)
    return listing
