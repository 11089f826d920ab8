"""The first touches of a block's loads (warpspeed.memory.first_touch) against a brute force that
walks every issuing lane of the block with Python sets, and the footprint they give."""

from __future__ import annotations

import pytest

from warpspeed import Field, Kernel, load, store
from warpspeed.kernel.builtin import star_stencil
from warpspeed.kernel.description import X, Y, Z
from warpspeed.launch.geometry import make_launch
from warpspeed.memory.addresses import block_addresses, block_cells, compile_kernel, instruction_lanes, merged_copies
from warpspeed.memory.first_touch import first_touches
from warpspeed.memory.footprint import block_footprint
from warpspeed.memory.warps import address_period, block_warp_rows

BLOCKS = [((32, 8, 4), (1, 1, 1)), ((8, 8, 16), (1, 2, 1)), ((1, 32, 32), (1, 1, 2)), ((256, 4, 1), (1, 1, 1)),
          ((16, 2, 32), (2, 1, 1))]


def _setup(kernel, device, block, fold):
    compiled = compile_kernel(kernel)
    cells = block_cells(make_launch(block, fold, kernel.domain))
    owner = merged_copies(compiled, cells.offsets)
    warps = block_warp_rows(compiled, cells, owner, device.warp_size, address_period(device))
    return compiled, cells, warps


def _brute_force(compiled, cells, granule):
    """Distinct granules of every byte every issuing load lane touches, per field."""
    addresses, lanes = block_addresses(compiled, cells), instruction_lanes(compiled, cells)
    touched: dict[str, set[int]] = {}
    for i, access in enumerate(compiled.accesses):
        if access.access.is_store:
            continue
        size = access.field.element_bytes
        for a in addresses[i][lanes[i]].tolist():
            touched.setdefault(access.field.name, set()).update(range(a // granule, (a + size - 1) // granule + 1))
    return {name: len(s) for name, s in touched.items()}


@pytest.mark.parametrize("block, fold", BLOCKS)
def test_distinct_sectors_and_lines_are_the_brute_force_ones(a100, block, fold):
    kernel = star_stencil(3, 2, (70, 40, 36))
    compiled, cells, warps = _setup(kernel, a100, block, fold)
    touches = first_touches(compiled, warps, 32)
    sectors, lines = _brute_force(compiled, cells, 32), _brute_force(compiled, cells, 128)
    field_id, _ = compiled.field_ids
    for name, loads, _ in compiled.field_accesses:
        if loads:
            assert touches.field_granules(int(field_id[loads[0]]), (32, 128)) == (sectors[name], lines[name])
    assert len(touches.keys) == sum(sectors.values())  # every distinct sector is touched first once


def test_elements_wider_than_a_sector_give_no_granule_counts(a100):
    """16-byte elements span two 8-byte sectors: the sectors of the lanes' first bytes are half of
    those the loads touch, so the first touches give no footprint counts (the footprint counts the
    granule runs instead); with 32-byte sectors they give the brute force's."""
    fields = (Field("src", 16, (300, 40, 8)), Field("dst", 16, (300, 40, 8)))
    kernel = Kernel("wide", fields, (load("src", X, Y, Z), load("src", X + 1, Y, Z), store("dst", X, Y, Z)), (298, 40, 8))
    compiled, cells, warps = _setup(kernel, a100, (32, 4, 2), (1, 1, 1))
    narrow = first_touches(compiled, warps, 8)
    assert not narrow.within_sectors and narrow.field_granules(0, (8, 128)) is None
    wide = first_touches(compiled, warps, 32)
    assert wide.field_granules(0, (32, 128)) == (_brute_force(compiled, cells, 32)["src"],
                                                 _brute_force(compiled, cells, 128)["src"])
    assert wide.field_granules(0, (48,)) is None  # not a multiple of the sector


@pytest.mark.parametrize("block, fold", BLOCKS)
def test_footprint_with_and_without_first_touches(a100, block, fold):
    kernel = star_stencil(3, 4, (90, 64, 72))
    compiled, cells, warps = _setup(kernel, a100, block, fold)
    touches = first_touches(compiled, warps, a100.l1.sector_bytes)
    assert touches.within_sectors
    assert (block_footprint(compiled, cells, a100, warps=warps, touches=touches)
            == block_footprint(compiled, cells, a100, warps=warps))


@pytest.mark.parametrize("block, fold", BLOCKS)
def test_each_instruction_misses_the_sectors_the_brute_force_walk_finds(a100, block, fold):
    """Walk the load instructions in program order (warp, fold copy, access) with a set of touched
    sectors per field: every instruction's count of first touches is the number of bits of its
    mask (neighbouring loads along x that touch the same sectors are repetitions: no bit)."""
    kernel = star_stencil(3, 4, (90, 64, 72))
    compiled, cells, warps = _setup(kernel, a100, block, fold)
    touches = first_touches(compiled, warps, 32)
    addresses, lanes = block_addresses(compiled, cells), instruction_lanes(compiled, cells)
    loads = [i for i, a in enumerate(compiled.accesses) if not a.access.is_store]
    n_acc, folds, threads = addresses.shape
    seen: dict[str, set[int]] = {}
    expected = []
    for w in range(-(-threads // 32)):
        for copy in range(folds):
            for i in loads:
                lane = slice(32 * w, 32 * (w + 1))
                sectors = {a // 32 for a in addresses[i, copy, lane][lanes[i, copy, lane]].tolist()}
                touched = seen.setdefault(compiled.accesses[i].field.name, set())
                expected.append(len(sectors - touched))
                touched |= sectors
    assert [bin(int(m)).count("1") for m in touches.masks] == expected
