"""Extracted workload kernels kept on disk, so that a ranking of a workload seen before skips
pystencils' code generation and the extraction (about 0.4 s for the three foldings of the 25-point
stencil, most of a warm ``warpspeed rank``).

An entry is the :class:`~pystencils_plugin.extract.ExtractedKernel` of one (workload, domain,
precision, folding, target, register architecture), pickled, in the directory of the compile
cache (:func:`warpspeed.sass.compile.cache_dir`: ``$WARPSPEED_CACHE_DIR``, else
``$XDG_CACHE_HOME/warpspeed``, else ``~/.cache/warpspeed``), under ``kernels/``. The key also holds
the versions of Python, sympy, pystencils and (for its workloads) lbmpy, the version of the nvcc that counted the
registers (or that there was none) and a digest of the plugin's and the kernel description's
source files, so an entry is never read by code that would generate something else. Only kernels
whose register count is the one the toolchain gives are kept: a failed compile, whose count fell
back to the estimate, is tried again next time. The directory is the user's own, like Python's ``__pycache__``: entries are written there
atomically and only read back from there. An entry that cannot be read is a miss.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from pystencils_plugin.workloads import LBMPY_WORKLOADS
from warpspeed.sass.compile import cache_dir, cache_key

if TYPE_CHECKING:
    from pystencils_plugin.extract import ExtractedKernel

#: Sub-directory of the cache directory with the extracted kernels.
SUBDIR = "kernels"
#: Format of an entry; a change makes every older entry a miss.
FORMAT = "extracted-kernel-1"


def generator_versions(name: str) -> tuple[str, ...]:
    """The versions of what derives and generates workload ``name``: sympy and pystencils, and
    lbmpy for the workloads it derives (lbmpy is imported only for those)."""
    import pystencils
    import sympy

    versions = [f"sympy={sympy.__version__}", f"pystencils={pystencils.__version__}"]
    if name in LBMPY_WORKLOADS:
        import lbmpy

        versions.append(f"lbmpy={lbmpy.__version__}")
    return tuple(versions)


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """SHA-256 of the plugin's modules and of the kernel description (what an entry's contents
    come from), read once per process."""
    import warpspeed.kernel.description as description

    h = hashlib.sha256()
    paths = sorted(Path(__file__).parent.glob("*.py")) + [Path(description.__file__)]
    for path in paths:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def entry_key(name: str, domain: tuple[int, ...] | None, dtype: str, fold: tuple[int, int, int], hip: bool,
              arch: str, toolchain: str) -> str:
    """The name of the entry of one extracted kernel (see the module docstring); ``toolchain``
    names what counted the registers (the compiler's version line, or that there is none)."""
    return cache_key(FORMAT, sys.version, *generator_versions(name), _code_digest(), name, repr(domain), dtype, repr(fold),
                     "hip" if hip else "cuda", arch, toolchain)


def _path(key: str) -> Path:
    return cache_dir() / SUBDIR / f"{key}.pickle"


def load(key: str) -> "ExtractedKernel | None":
    """The entry ``key``, or ``None`` when there is none or it cannot be read."""
    path = _path(key)
    try:
        with open(path, "rb") as handle:
            return pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None


def store(key: str, extracted: "ExtractedKernel") -> None:
    """Write the entry ``key`` atomically; a cache that cannot be written is skipped."""
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(extracted, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        try:
            os.unlink(tmp)  # type: ignore[possibly-undefined]
        except (OSError, NameError):
            pass
