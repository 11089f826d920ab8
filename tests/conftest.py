"""Shared test helpers: an independent brute-force reference for block-level volumes.

Nothing here imports warpspeed's estimators; addresses come straight from field strides and
plain Python loops over every thread of a block, so agreement with the estimator is evidence.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

# Hypothesis keeps its example database and caches in .hypothesis/ of the working directory; the
# tests must leave the source tree as they found it, so both go to a temporary directory (set
# before Hypothesis first needs it) and the database is off.
_HYPOTHESIS_DIR = tempfile.mkdtemp(prefix="warpspeed-hypothesis-")
atexit.register(shutil.rmtree, _HYPOTHESIS_DIR, True)
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", _HYPOTHESIS_DIR)

# The test session starts from nothing a fresh machine lacks: compiled SASS, register counts and
# generated kernels go to a directory of this run, set before any test module is imported (a
# module that generates a kernel at import must not read the user's cache), and removed at the
# end. The variable is inherited by the CLI subprocesses and the notebook's kernel.
_CACHE_DIR = tempfile.mkdtemp(prefix="warpspeed-test-cache-")
atexit.register(shutil.rmtree, _CACHE_DIR, True)
os.environ["WARPSPEED_CACHE_DIR"] = _CACHE_DIR  # warpspeed.sass.compile.CACHE_ENV

from hypothesis import settings  # noqa: E402  (after the storage directory is set)

settings.register_profile("warpspeed", database=None)
settings.load_profile("warpspeed")


def strides_of(shape, layout):
    """Element strides per index for ``layout`` (index positions, contiguous first)."""
    strides = [0] * len(shape)
    step = 1
    for pos in layout:
        strides[pos] = step
        step *= shape[pos]
    return strides


def brute_force_block(domain, block, fold, block_index, accesses, warp_size=32):
    """Enumerate one block.

    ``accesses``: list of (field_name, kind, element_bytes, fn) where ``fn(x, y, z)`` returns the
    byte address of the element. Returns per field: set of load sectors (32 B), set of load
    lines (128 B), per-warp store sectors summed, per-warp load sectors summed, and lups.
    A fold copy's load of a field that is never stored is no instruction when a copy earlier in
    program order (copy by copy, accesses in order) loads the same address in every thread; the
    earlier load then serves the lanes of both.
    """
    bx, by, bz = block
    fx, fy, fz = fold
    threads = []
    for tz in range(bz):
        for ty in range(by):
            for tx in range(bx):
                threads.append((tx, ty, tz))
    folds = [(jx, jy, jz) for jz in range(fz) for jy in range(fy) for jx in range(fx)]

    def cell_of(t, j):
        return tuple((block_index[d] * block[d] + t[d]) * fold[d] + j[d] for d in range(3))

    def inside(cell):
        return all(cell[d] < domain[d] for d in range(3))

    stored = {name for name, kind, _, _ in accesses if kind == "store"}
    members = {}  # (access, copy) -> copies whose lanes it serves; absent: merged away
    first = {}
    for j in folds:
        for i, (name, kind, elem, fn) in enumerate(accesses):
            key = (name, tuple(fn(*cell_of(t, j)) for t in threads))
            if kind == "load" and name not in stored and key in first:
                members[first[key]].append(j)
                continue
            members[(i, j)] = [j]
            if kind == "load" and name not in stored:
                first[key] = (i, j)
    out = {}
    lups = 0
    for j in folds:
        for t in threads:
            if inside(cell_of(t, j)):
                lups += 1
    for i, (name, kind, elem, fn) in enumerate(accesses):
        rec = out.setdefault(name, {"load_sectors": set(), "load_lines": set(),
                                    "store_warp_sectors": 0, "load_warp_sectors": 0})
        for j in folds:
            if (i, j) not in members:
                continue
            for w0 in range(0, len(threads), warp_size):
                warp_sectors = set()
                for t in threads[w0:w0 + warp_size]:
                    if not any(inside(cell_of(t, m)) for m in members[(i, j)]):
                        continue
                    a = fn(*cell_of(t, j))
                    sec = {a // 32, (a + elem - 1) // 32}
                    warp_sectors |= sec
                    if kind == "load":
                        rec["load_sectors"] |= sec
                        rec["load_lines"] |= {a // 128, (a + elem - 1) // 128}
                if kind == "load":
                    rec["load_warp_sectors"] += len(warp_sectors)
                else:
                    rec["store_warp_sectors"] += len(warp_sectors)
    return out, lups


@pytest.fixture(scope="session")
def a100():
    from warpspeed.hardware.device import load_device

    return load_device("A100-SXM4-40GB")


@pytest.fixture(scope="session")
def brute_block():
    """The brute-force block enumerator (see :func:`brute_force_block`)."""
    return brute_force_block


@pytest.fixture(scope="session")
def field_strides():
    return strides_of


#: Notebooks of examples/ (nbmake items) take 20-30 s each: they run with the slow tests.
SLOW_SUFFIXES = (".ipynb",)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the notebooks slow, before ``-m`` selects by marks."""
    for item in items:
        if item.nodeid.split("::")[0].endswith(SLOW_SUFFIXES):
            item.add_marker(pytest.mark.slow)
