"""L1 bank-conflict wavefronts: paper 001 figure 4, hand-derived stencil cases, brute force."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpspeed import Field, Kernel, load, load_linear
from warpspeed.memory.addresses import block_cells, compile_kernel
from warpspeed.kernel.description import X, Y, Z
from warpspeed.memory.l1 import l1_cycles
from warpspeed.launch.geometry import make_launch
from warpspeed.kernel.builtin import star_stencil


def _cycles(kernel, device, block, fold=(1, 1, 1)):
    launch = make_launch(block, fold, kernel.domain)
    return l1_cycles(compile_kernel(kernel), block_cells(launch), device)


@pytest.mark.parametrize("stride, per_half_warp", [
    (1, 1),   # consecutive doubles: 16 distinct banks
    (2, 2),   # every other double: two words per bank
    (16, 16),  # 128 B stride: all 16 lanes in one bank
])
def test_paper_figure_4(a100, stride, per_half_warp):
    k = Kernel("fig4", (Field("A", 8, (1 << 20,)),), (load_linear("A", f"{stride} * x"),), (4096, 1, 1))
    result = _cycles(k, a100, (32, 1, 1))
    # one instruction, two half warps per warp, 32 lups per warp
    assert result.cycles_per_lup == pytest.approx(2 * per_half_warp / 32)


def test_four_byte_elements_use_full_warps(a100):
    k = Kernel("f32", (Field("A", 4, (1 << 20,)),), (load_linear("A", "x"),), (4096, 1, 1), dtype="float32")
    # 32 floats = 128 B = 16 words in 16 banks: one wavefront for the whole warp
    assert _cycles(k, a100, (32, 1, 1)).cycles_per_lup == pytest.approx(1 / 32)


def test_far_addresses_do_not_pair(a100):
    # Two rows 8320 B apart: banks differ by (8320/8) % 16 = 0 -> conflict anyway; use a row
    # pitch of 1032 doubles (8256 B, bank shift 8): rows of 8 lanes fall into disjoint banks
    # but are more than 1024 B apart, so each half warp needs 2 wavefronts instead of 1.
    f = Field("A", 8, (1032, 64))
    k = Kernel("far", (f,), (load("A", X, Y),), (1032, 64, 1))
    result = _cycles(k, a100, (8, 4, 1))
    # two half warps x two wavefronts per warp of 32 lups (without the rule: 2 x 1)
    assert result.cycles_per_lup == pytest.approx(2 * 2 / 32)


def test_five_point_stencil_by_hand(a100):
    # 5 loads + 1 store; row pitch 1040 doubles (8320 B, 65 lines).
    k = star_stencil(2, 1, (1038, 64))
    # (32,1,1): each half warp reads 16 consecutive doubles -> 1 wavefront; 6 instructions x 2
    assert _cycles(k, a100, (32, 1, 1)).cycles_per_lup == pytest.approx(6 * 2 / 32)
    # (16,2,1): each half warp is one row of 16 -> same
    assert _cycles(k, a100, (16, 2, 1)).cycles_per_lup == pytest.approx(6 * 2 / 32)
    # (8,4,1): each half warp spans two rows 8320 B apart -> 2 wavefronts; 4 per warp
    assert _cycles(k, a100, (8, 4, 1)).cycles_per_lup == pytest.approx(6 * 4 / 32)


def _brute_l1(kernel, device, block, fold):
    """Independent reference: plain loops over lane groups of the middle block."""
    launch = make_launch(block, fold, kernel.domain)
    bidx = [g // 2 for g in launch.grid]
    fields = {f.name: f for f in kernel.fields}
    threads = [(tx, ty, tz) for tz in range(block[2]) for ty in range(block[1]) for tx in range(block[0])]
    folds = [(jx, jy, jz) for jz in range(fold[2]) for jy in range(fold[1]) for jx in range(fold[0])]
    total = 0
    lups = 0
    for acc in kernel.accesses:
        f = fields[acc.field]
        strides = [0] * f.ndim
        step = 1
        for pos in f.layout:
            strides[pos] = step
            step *= f.shape[pos]
        group = min(32, 128 // f.element_bytes)
        for j in folds:
            for g0 in range(0, len(threads), group):
                words = set()
                for t in threads[g0:g0 + group]:
                    cell = [(bidx[d] * block[d] + t[d]) * fold[d] + j[d] for d in range(3)]
                    if any(cell[d] >= kernel.domain[d] for d in range(3)):
                        continue
                    idx = [int(e.subs({X: cell[0], Y: cell[1], Z: cell[2]})) for e in acc.index]
                    addr = f.alignment_bytes + f.element_bytes * sum(i * s for i, s in zip(idx, strides))
                    words.add(addr // 8)
                ordered = sorted(words)
                clusters, current, start = [], [], None
                for w in ordered:
                    if start is not None and (w - start) * 8 > 1024:
                        clusters.append(current)
                        current, start = [], None
                    if start is None:
                        start = w
                    current.append(w)
                if current:
                    clusters.append(current)
                for c in clusters:
                    banks = [0] * 16
                    for w in c:
                        banks[w % 16] += 1
                    total += max(banks)
    for j in folds:
        for t in threads:
            cell = [(bidx[d] * block[d] + t[d]) * fold[d] + j[d] for d in range(3)]
            lups += all(cell[d] < kernel.domain[d] for d in range(3))
    return total / lups


@pytest.mark.parametrize("kernel, block, fold", [
    (star_stencil(3, 1, (30, 20, 12)), (16, 4, 2), (1, 1, 1)),
    (star_stencil(3, 1, (30, 20, 12)), (12, 5, 3), (1, 2, 1)),
    (star_stencil(2, 2, (50, 21)), (8, 8, 1), (2, 1, 1)),
    (star_stencil(3, 2, (21, 13, 9)), (4, 4, 4), (1, 1, 2)),
])
def test_matches_brute_force(a100, kernel, block, fold):
    assert _cycles(kernel, a100, block, fold).cycles_per_lup == pytest.approx(_brute_l1(kernel, a100, block, fold))


@settings(max_examples=25, deadline=None)
@given(bx=st.sampled_from([1, 2, 4, 8, 16, 32, 64]), by=st.sampled_from([1, 2, 4, 8]),
       bz=st.sampled_from([1, 2, 4]), fy=st.sampled_from([1, 2]))
def test_at_least_one_wavefront_per_half_warp(a100, bx, by, bz, fy):
    # Lower bound: every 8-byte instruction costs at least one wavefront per half warp, i.e.
    # instructions / 16 cycles per lup when all lanes are active.
    k = star_stencil(3, 1, (64, 32, 16))
    result = _cycles(k, a100, (bx, by, bz), (1, fy, 1))
    assert result.cycles_per_lup >= len(k.accesses) / 16 - 1e-12
    assert result.cycles_per_lup == pytest.approx(sum(result.per_field.values()))
