"""L1 misses in the data stage (warpspeed.memory.l1_misses): hand-derived warps and a brute-force
reference that walks every lane of a block in program order with Python sets."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from warpspeed import Field, Kernel, load, store
from warpspeed.kernel.builtin import star_stencil
from warpspeed.kernel.description import X, Y
from warpspeed.launch.geometry import make_launch
from warpspeed.memory.addresses import block_addresses, block_cells, compile_kernel, instruction_lanes, merged_copies
from warpspeed.memory.l1_misses import l1_miss_costs

N = 1 << 16


def _costs(kernel, device, block, fold=(1, 1, 1), rate=0.0):
    compiled = compile_kernel(kernel)
    cells = block_cells(make_launch(block, fold, kernel.domain))
    return l1_miss_costs(compiled, cells, device, block_addresses(compiled, cells),
                         instruction_lanes(compiled, cells), rate)


def _shifted_copy():
    """dst[x] = src[x] + src[x + 1]: one warp of 32 doubles, 256 B aligned (the fields' 256 B base)."""
    fields = (Field("src", 8, (N + 1,)), Field("dst", 8, (N,)))
    return Kernel("shifted", fields, (load("src", X), load("src", X + 1), store("dst", X)), (N, 1, 1))


def test_one_warp_by_hand(a100):
    """Load 1 touches bytes 0-255 of src: two lines, every lane misses; the bank rule gives one
    wavefront per half warp (2), the hit lanes none, so max(2, 0 + 2) = 2. Load 2 touches bytes
    8-263: lanes 0-30 hit (lines 0 and 1), lane 31 misses line 2: max(2, 2 + 1) = 3. The store:
    2 wavefronts, 2 lines written. Per lattice update (32 per warp): (2 + 3 + 2) / 32 wavefronts,
    (2 + 1 + 2) / 32 requests, first touches 8 sectors + 1 = 9 x 32 B / 32."""
    c = _costs(_shifted_copy(), a100, (32, 1, 1))
    assert c.data_wavefronts_per_lup == pytest.approx(7 / 32)
    assert c.requests_per_lup == pytest.approx(5 / 32)
    assert c.first_touch_load_bytes_per_lup == pytest.approx(9 * 32 / 32)


@pytest.mark.parametrize("p", [0.25, 0.5, 1.0])
def test_capacity_misses_by_hand(a100, p):
    """With capacity-miss rate p the two hit lines of load 2 miss with p each: expected missing
    lines 1 + 2p. Half warp 0 (lanes 0-15, bytes 8-135) has hit lines 0 and 1 and keeps its
    wavefront unless both miss, 1 - p^2; half warp 1 (bytes 136-255, line 1) keeps it with 1 - p.
    Load 2: max(2, (1 - p^2) + (1 - p) + 1 + 2p) = max(2, 3 + p - p^2); load 1 has no hit line."""
    c = _costs(_shifted_copy(), a100, (32, 1, 1), rate=p)
    load2 = max(2.0, 3 + p - p * p)
    assert c.data_wavefronts_per_lup == pytest.approx((2 + load2 + 2) / 32)
    assert c.requests_per_lup == pytest.approx((2 + 1 + 2 * p + 2) / 32)
    assert c.capacity_miss_rate == p


def _brute_force(kernel, device, block, fold):
    """Every lane of the block in order (warp by warp, copy by copy, access by access): a load lane
    misses when no earlier instruction touched its sector; per instruction the cost is
    max(bank rule over all lanes, bank rule over hit lanes + missing lines) and a store costs the
    bank rule; requests: missing lines of loads, lines of stores."""
    compiled = compile_kernel(kernel)
    cells = block_cells(make_launch(block, fold, kernel.domain))
    addr, lanes = block_addresses(compiled, cells), instruction_lanes(compiled, cells)
    n_acc, n_fold, threads = addr.shape
    warp, group = device.warp_size, 16  # 8-byte elements: half warps on 32 banks of 4 B

    def bank(lanes_addr):
        words = {}
        for a in lanes_addr:
            for w in (a // 4, a // 4 + 1):
                words.setdefault(w % 32, set()).add(w)
        return max((len(v) for v in words.values()), default=0)

    seen: set[tuple[str, int]] = set()
    data = requests = 0
    for w in range(-(-threads // warp)):
        for c in range(n_fold):
            for i, acc in enumerate(compiled.accesses):
                idx = [t for t in range(w * warp, min(threads, (w + 1) * warp)) if lanes[i, c, t]]
                if not idx:
                    continue
                name = acc.field.name
                groups = [[t for t in idx if (t - w * warp) // group == g] for g in range(warp // group)]
                b_all = sum(bank([int(addr[i, c, t]) for t in g]) for g in groups)
                if acc.access.is_store:
                    data += b_all
                    requests += len({int(addr[i, c, t]) // 128 for t in idx})
                    continue
                miss = {t for t in idx if (name, int(addr[i, c, t]) // 32) not in seen}
                b_hit = sum(bank([int(addr[i, c, t]) for t in g if t not in miss]) for g in groups)
                missing = len({int(addr[i, c, t]) // 128 for t in miss})
                data += max(b_all, b_hit + missing)
                requests += missing
                seen |= {(name, int(addr[i, c, t]) // 32) for t in idx}
    return data / cells.lups, requests / cells.lups, len(seen) * 32 / cells.lups


@pytest.mark.parametrize("kernel, block, fold", [
    (star_stencil(2, 1, (200, 120, 1)), (8, 8, 1), (1, 1, 1)),
    (star_stencil(2, 1, (200, 120, 1)), (4, 16, 1), (1, 2, 1)),
    (star_stencil(3, 1, (64, 40, 40)), (16, 2, 4), (1, 1, 2)),
    (star_stencil(3, 2, (64, 40, 40)), (32, 2, 2), (1, 1, 1)),
    (star_stencil(3, 2, (64, 40, 40)), (1, 32, 2), (1, 1, 1)),
])
def test_matches_brute_force(a100, kernel, block, fold):
    c = _costs(kernel, a100, block, fold)
    data, requests, first = _brute_force(kernel, a100, block, fold)
    assert c.data_wavefronts_per_lup == pytest.approx(data, rel=1e-12)
    assert c.requests_per_lup == pytest.approx(requests, rel=1e-12)
    assert c.first_touch_load_bytes_per_lup == pytest.approx(first, rel=1e-12)


@pytest.mark.parametrize("kernel, block", [
    (star_stencil(2, 4, (64, 256, 1)), (1, 128, 1)),
    (star_stencil(3, 4, (64, 256, 40)), (1, 256, 1)),
])
def test_wave64_instructions_with_more_than_53_sectors_match_brute_force(a100, kernel, block):
    """64-lane warps one cell wide in x: every lane its own sector, so an instruction's miss mask
    needs all 64 bits (more than a double's 53-bit mantissa holds) and does not fit the packed
    33-bit key. The A100 with 64-lane warps, against the same lane-by-lane reference. No NVIDIA
    device file may say 64 (the loader refuses it), so the what-if device is made past the
    loader's checks: the counting, not the device, is under test."""
    w64 = copy.copy(a100)
    object.__setattr__(w64, "warp_size", 64)
    c = _costs(kernel, w64, block)
    data, requests, first = _brute_force(kernel, w64, block, (1, 1, 1))
    assert c.data_wavefronts_per_lup == pytest.approx(data, rel=1e-12)
    assert c.requests_per_lup == pytest.approx(requests, rel=1e-12)
    assert c.first_touch_load_bytes_per_lup == pytest.approx(first, rel=1e-12)


def test_first_touch_is_the_compulsory_footprint(a100):
    """The sectors missed at their first touch are the block's unique load sectors (a set here)."""
    kernel = star_stencil(3, 2, (64, 40, 40))
    compiled = compile_kernel(kernel)
    cells = block_cells(make_launch((16, 4, 2), (1, 1, 1), kernel.domain))
    addr, lanes = block_addresses(compiled, cells), instruction_lanes(compiled, cells)
    loads = [i for i, a in enumerate(compiled.accesses) if not a.access.is_store]
    unique = {(compiled.accesses[i].field.name, int(a) // 32) for i in loads for a in addr[i][lanes[i]]}
    c = l1_miss_costs(compiled, cells, a100, addr, lanes, 0.0)
    assert c.first_touch_load_bytes_per_lup == pytest.approx(len(unique) * 32 / cells.lups)


def test_amd_first_levels_keep_the_roofline_cost():
    """No miss wavefronts on AMD: the data cost is the first level's cost of the roofline."""
    from warpspeed.hardware.device import load_device
    from warpspeed.memory.first_level import first_level
    from warpspeed.memory.l1 import l1_cycles

    mi210 = load_device("MI210")
    kernel = star_stencil(3, 1, (64, 40, 40))
    c = _costs(kernel, mi210, (64, 4, 1))
    compiled = compile_kernel(kernel)
    roofline = l1_cycles(compiled, block_cells(make_launch((64, 4, 1), (1, 1, 1), kernel.domain)), mi210)
    assert not first_level(mi210).models_misses and c.cycles_per_lup == pytest.approx(roofline.cycles_per_lup)


@pytest.mark.parametrize("device_name", ["A100-SXM4-40GB", "H200", "MI210"])
def test_blocks_sharing_representatives_cost_as_on_their_own(device_name):
    """Blocks whose warps have the same representatives share the counts of their kinds of
    instructions (a memo of the representatives): every block, at every capacity miss rate, costs
    what it costs with nothing shared."""
    from warpspeed.hardware.device import load_device
    from warpspeed.memo import BoundedMemo
    from warpspeed.memory.l1_misses import first_level_demand
    from warpspeed.memory.warps import address_period, block_warp_rows

    device = load_device(device_name)
    kernel = star_stencil(3, 2, (96, 64, 48))
    compiled = compile_kernel(kernel)
    shared = BoundedMemo(16)
    period = address_period(device)
    blocks = [((32, y, 1024 // 32 // y), fold) for y in (1, 2, 4, 8, 16, 32) for fold in ((1, 1, 1), (1, 2, 1))]
    blocks += [((8, 8, 16), (1, 1, 1)), ((8, 16, 8), (1, 1, 1)), ((64, 4, 4), (1, 1, 2))]
    for block, fold in blocks:
        cells = block_cells(make_launch(block, fold, kernel.domain))
        owner = merged_copies(compiled, cells.offsets)
        for rate in (0.0, 0.3, 1.0):
            together = block_warp_rows(compiled, cells, owner, device.warp_size, period, shared=shared)
            alone = block_warp_rows(compiled, cells, owner, device.warp_size, period)
            got = first_level_demand(compiled, together, cells.lups, device, rate, 4096.0)
            assert got == first_level_demand(compiled, alone, cells.lups, device, rate, 4096.0)
    assert shared.hits > 0  # the memo was used
