"""Shared test helpers: an independent brute-force reference for block-level volumes.

Nothing here imports warpspeed's estimators; addresses come straight from field strides and
plain Python loops over every thread of a block, so agreement with the estimator is evidence.
"""

from __future__ import annotations


import pytest


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
    """
    bx, by, bz = block
    fx, fy, fz = fold
    threads = []
    for tz in range(bz):
        for ty in range(by):
            for tx in range(bx):
                threads.append((tx, ty, tz))
    folds = [(jx, jy, jz) for jz in range(fz) for jy in range(fy) for jx in range(fx)]
    out = {}
    lups = 0
    for j in folds:
        for t in threads:
            cell = tuple((block_index[d] * block[d] + t[d]) * fold[d] + j[d] for d in range(3))
            if all(cell[d] < domain[d] for d in range(3)):
                lups += 1
    for name, kind, elem, fn in accesses:
        rec = out.setdefault(name, {"load_sectors": set(), "load_lines": set(),
                                    "store_warp_sectors": 0, "load_warp_sectors": 0})
        for j in folds:
            for w0 in range(0, len(threads), warp_size):
                warp_sectors = set()
                for t in threads[w0:w0 + warp_size]:
                    cell = tuple((block_index[d] * block[d] + t[d]) * fold[d] + j[d] for d in range(3))
                    if not all(cell[d] < domain[d] for d in range(3)):
                        continue
                    a = fn(*cell)
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
