"""Warp instructions grouped by translation (warpspeed.memory.warps): the block-level counts taken
from the groups against brute-force enumeration and against costing every instruction."""

import numpy as np
import pytest

from tests.memory.test_footprint import _address_fn
from warpspeed.hardware.device import load_device
from warpspeed.kernel.builtin import copy_kernel, lbm_pull, star_stencil
from warpspeed.launch.geometry import make_launch
from warpspeed.memory.addresses import block_addresses, block_cells, compile_kernel, instruction_lanes, merged_copies
from warpspeed.memory.footprint import block_footprint
from warpspeed.memory.l1 import l1_cycles
from warpspeed.memory.warps import address_period, block_warp_rows, warp_plan, warp_rows

CASES = [
    (star_stencil(3, 4, (40, 30, 20)), (32, 4, 2), (1, 1, 1)),
    (star_stencil(3, 4, (40, 30, 20)), (24, 4, 3), (1, 2, 1)),
    (star_stencil(3, 1, (33, 17, 9)), (16, 8, 2), (1, 1, 2)),
    (star_stencil(2, 1, (70, 45)), (64, 4, 1), (2, 1, 1)),
    (star_stencil(3, 4, (130, 70, 50)), (1, 32, 32), (1, 2, 1)),
    (copy_kernel((50, 20, 10)), (32, 2, 2), (1, 1, 1)),
    (lbm_pull(domain=(20, 12, 10)), (8, 4, 2), (1, 1, 1)),
]


def _grouped(kernel, device, block, fold, block_index=None):
    compiled = compile_kernel(kernel)
    cells = block_cells(make_launch(block, fold, kernel.domain), block_index)
    owner = merged_copies(compiled, cells.offsets)
    warps = block_warp_rows(compiled, cells, owner, device.warp_size, address_period(device),
                            warp_plan(compiled, owner))
    return compiled, cells, warps


@pytest.mark.parametrize("kernel, block, fold", CASES)
@pytest.mark.parametrize("last", [False, True])
def test_grouped_footprint_matches_brute_force(a100, brute_block, kernel, block, fold, last):
    """The middle block and the last (overhanging) block of the grid, counted by enumerating every
    thread (tests/conftest.py) and from the groups."""
    launch = make_launch(block, fold, kernel.domain)
    index = tuple(g - 1 for g in launch.grid) if last else tuple(g // 2 for g in launch.grid)
    fields = {f.name: f for f in kernel.fields}
    accesses = [(a.field, a.kind, fields[a.field].element_bytes, _address_fn(fields[a.field], a.index))
                for a in kernel.accesses]
    ref, lups = brute_block(kernel.domain, block, fold, index, accesses)
    compiled, cells, warps = _grouped(kernel, a100, block, fold, index)
    fp = block_footprint(compiled, cells, a100, warps=warps)
    assert fp.lups_per_block == lups
    for name, r in ref.items():
        got = fp.per_field[name]
        assert got.l2_load_bytes_per_lup == pytest.approx(len(r["load_sectors"]) * 32 / lups, rel=1e-12)
        assert got.l1_alloc_bytes_per_block == len(r["load_lines"]) * 128
        assert got.l2_store_bytes_per_lup == pytest.approx(r["store_warp_sectors"] * 32 / lups, rel=1e-12)
        assert got.l1_load_bytes_per_lup == pytest.approx(r["load_warp_sectors"] * 32 / lups, rel=1e-12)


@pytest.mark.parametrize("device_name", ["A100-SXM4-40GB", "A40", "MI210", "RX6900XT"])
@pytest.mark.parametrize("kernel, block, fold", CASES)
def test_grouped_equals_every_instruction(device_name, kernel, block, fold):
    """Costing one instruction per group gives the integers and sums of costing every instruction
    (the L1 stages and footprints of tests/memory/test_l1.py and tests/memory/test_footprint.py)."""
    device = load_device(device_name)
    compiled, cells, warps = _grouped(kernel, device, block, fold)
    assert l1_cycles(compiled, cells, device, warps=warps) == l1_cycles(compiled, cells, device)
    assert block_footprint(compiled, cells, device, warps=warps) == block_footprint(compiled, cells, device)


def test_translation_by_the_period_changes_no_count(a100):
    """The premise of the grouping: moving every address of the block by a multiple of the period
    changes no L1 cost and no footprint."""
    kernel, block, fold = CASES[1]
    compiled = compile_kernel(kernel)
    cells = block_cells(make_launch(block, fold, kernel.domain))
    addr, lanes = block_addresses(compiled, cells), instruction_lanes(compiled, cells)
    elem = [a.field.element_bytes for a in compiled.accesses]
    period = address_period(a100)
    assert period == 128
    one = warp_rows(addr, lanes, elem, a100.warp_size, period)
    moved = warp_rows(addr + 7 * period, lanes, elem, a100.warp_size, period)
    assert np.array_equal(one.addresses, moved.addresses) and np.array_equal(one.inverse, moved.inverse)
    issuing = one.lanes[one.inverse].any(axis=-1)  # merged fold copies issue nothing and are not moved
    assert np.all((moved.shift - one.shift)[issuing] == 7 * period) and np.all(moved.shift[~issuing] == 0)
    assert one.union_granules(range(len(elem) - 1), (32, 128)) == moved.union_granules(range(len(elem) - 1), (32, 128))


def test_groups_are_few(a100):
    """A block of power-of-two dimensions runs one lane pattern in every warp: the 25-point
    stencil's 1664 instructions of a 32 x 8 x 4 block folded 2 in y fall into a few dozen groups."""
    kernel = star_stencil(3, 4, (640, 512, 512))
    _, _, warps = _grouped(kernel, a100, (32, 8, 4), (1, 2, 1))
    assert warps.inverse.size == 26 * 2 * 32
    assert warps.addresses.shape[0] < 64
