"""Averages over all waves of the grid (warpspeed.memory.wave.classes / average) against an
explicit enumeration of every wave.

The enumeration uses the brute force of test_wave.py (every cell of a wave and of its
previous-neighbour sets, line addresses from field strides, unique lines with numpy), which uses
nothing of warpspeed.memory.wave; the class weights are checked against a plain loop over the
waves.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.memory.wave.test_wave import A100, SECTOR, brute_force, make_kernel
from warpspeed.kernel.builtin import star_stencil
from warpspeed.launch.geometry import Wave, analyze_launch
from warpspeed.memory.addresses import compile_kernel
from warpspeed.memory.wave import WaveModel, wave_classes

DIMS = ("x", "y", "z")


def crossings(first, blocks, grid):
    """(plane boundaries, row boundaries or None across a plane) inside blocks first..first+blocks-1."""
    gx, gy, _ = grid
    last = first + blocks - 1
    planes = last // (gx * gy) - first // (gx * gy)
    return (planes, None) if planes else (0, last // gx - first // gx)


@settings(max_examples=200, deadline=None)
@given(grid=st.tuples(st.integers(1, 12), st.integers(1, 9), st.integers(1, 7)), blocks=st.integers(1, 60))
def test_class_weights_count_every_full_wave(grid, blocks):
    """Every full wave is counted once, in the class of its crossings. Each representative is a
    full wave of its class whose first boundary (plane, else row) lies at the class's median
    position, and starts after the first block row of its plane when such a wave exists."""
    gx, gy, gz = grid
    plane, total = gx * gy, gx * gy * gz
    size = min(blocks, total)
    waves = list(range(0, total - size + 1, size))
    expected = Counter(crossings(s, size, grid) for s in waves)
    classes = wave_classes(grid, blocks)
    assert {(c.crossings, c.row_crossings): c.waves for c in classes} == dict(expected)
    for c in classes:
        key = (c.crossings, c.row_crossings)
        assert c.blocks == size and c.first_block in waves and crossings(c.first_block, size, grid) == key
        members = [s for s in waves if crossings(s, size, grid) == key]
        if c.crossings or c.row_crossings:
            unit = plane if c.crossings else gx
            before = sorted(unit - s % unit for s in members)
            median = before[(len(before) - 1) // 2]
            assert unit - c.first_block % unit == median
            members = [s for s in members if unit - s % unit == median]
        if any(s % plane >= gx for s in members):
            assert c.first_block % plane >= gx


def test_a_large_grid_counts_its_waves_from_one_period():
    """640 x 512 x 512 cells, blocks of 16 x 2 x 32 (grid 40 x 256 x 16), 216 blocks per wave:
    163 840 blocks = 758 full waves + 112 blocks. Plane boundaries lie at multiples of 10 240
    blocks; the boundary z * 10 240 lies inside a full wave unless 216 divides it
    (10 240 z / 216 = 1280 z / 27: never for 1 <= z <= 15): 15 crossing waves, 743 inside a plane.
    Rows of 40 blocks: a wave inside a plane starting at row offset r holds
    floor((r + 215) / 40) row boundaries: 5 for r <= 24, 6 for r >= 25; r = 216 k mod 40 takes
    the values 0, 16, 32, 8, 24 in turn, so one wave in five has 6 (r = 32)."""
    classes = {(c.crossings, c.row_crossings): c.waves for c in wave_classes((40, 256, 16), 216)}
    assert sum(classes.values()) == 758
    assert classes[(1, None)] == 15
    assert classes[(0, 5)] + classes[(0, 6)] == 743
    assert abs(classes[(0, 6)] - 758 / 5) < 5


def all_waves(kernel, info):
    """Brute-force sums over every full wave: lines loaded / stored, overlaps per dimension,
    layer lines per dimension, lattice updates and the number of waves."""
    total, size = info.launch.total_blocks, info.wave.blocks
    sums = {"load": 0, "store": 0, "overlap": np.zeros(3), "layer": np.zeros(3), "lups": 0, "waves": 0,
            "band": 0, "band_lines": []}
    for first in range(0, total - size + 1, size):
        r = brute_force(kernel, dataclasses.replace(info, wave=Wave(size, info.wave.count, first)))
        sums["lups"] += r["lups"]
        sums["waves"] += 1
        for f in r["fields"].values():
            sums["load"] += f["load"]
            sums["store"] += f["store"]
            sums["overlap"] += [f["overlap"][d] for d in DIMS]
            sums["layer"] += [f["layer"][d] for d in DIMS]
            sums["band"] += f["band"]
        sums["band_lines"].append(sum(f["band"] for f in r["fields"].values()))
    return sums


# (kernel, domain, block, SMs, blocks per SM): waves of 20-21 blocks over rows of 6-9 blocks,
# with waves across plane boundaries (first) and without (second).
SMALL_GRIDS = [
    ("star3d_r4", (48, 48, 24), (8, 4, 2), 3, 7),
    ("star3d_r4", (72, 40, 24), (8, 2, 4), 5, 4),
]


@pytest.mark.parametrize("name,domain,block,sms,per_sm", SMALL_GRIDS)
def test_the_average_weights_the_representatives_by_their_waves(name, domain, block, sms, per_sm):
    """The averages are the class-weighted means of the representatives' brute-forced counts:
    lattice-update weights for volumes per lup, wave weights for layer volumes."""
    device = dataclasses.replace(A100, sms=sms, max_blocks_per_sm=per_sm)
    kernel = make_kernel(name, domain)
    info = analyze_launch(kernel, device, block)
    grid = WaveModel(compile_kernel(kernel)).grid_volumes(info, device)
    load = lups = 0.0
    overlap, layer, waves = np.zeros(3), np.zeros(3), 0
    for c in grid.classes:
        r = brute_force(kernel, dataclasses.replace(info, wave=Wave(info.wave.blocks, 0, c.wave_class.first_block)))
        w = c.wave_class.waves
        load += w * sum(f["load"] for f in r["fields"].values())
        overlap += w * np.array([sum(f["overlap"][d] for f in r["fields"].values()) for d in DIMS])
        layer += w * np.array([sum(f["layer"][d] for f in r["fields"].values()) for d in DIMS])
        lups += w * r["lups"]
        waves += w
    assert grid.compulsory_load_bytes_per_lup == pytest.approx(load * SECTOR / lups, rel=1e-12)
    assert tuple(grid.overlap_bytes_per_lup) == pytest.approx(tuple(overlap * SECTOR / lups), rel=1e-12)
    assert tuple(grid.layer_volume_bytes) == pytest.approx(tuple(layer * SECTOR / waves), rel=1e-12)
    assert grid.oversubscription.z == pytest.approx(layer[2] * SECTOR / waves / device.l2.effective_bytes, rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name,domain,block,sms,per_sm", SMALL_GRIDS)
def test_the_average_is_close_to_every_wave(name, domain, block, sms, per_sm):
    """Against the enumeration of every full wave. Bounds, from the class structure
    (warpspeed.memory.wave.classes): compulsory volumes within 1 % (waves of one class differ
    only by the lines at their cuts); the total overlap within 5 % of the compulsory load plus
    1/gz of the z overlap, and the z layer volume within 5 % + 1/gz (the waves of the first
    block plane, 1/gz of all, have their z window cut at the grid's start and are not
    represented)."""
    device = dataclasses.replace(A100, sms=sms, max_blocks_per_sm=per_sm)
    kernel = make_kernel(name, domain)
    info = analyze_launch(kernel, device, block)
    grid = WaveModel(compile_kernel(kernel)).grid_volumes(info, device)
    every = all_waves(kernel, info)
    assert every["waves"] == grid.waves
    load = every["load"] * SECTOR / every["lups"]
    assert grid.compulsory_load_bytes_per_lup == pytest.approx(load, rel=0.01)
    assert grid.compulsory_store_bytes_per_lup == pytest.approx(every["store"] * SECTOR / every["lups"], rel=0.01)
    gz = info.launch.grid[2]
    assert abs(sum(grid.overlap_bytes_per_lup) - every["overlap"].sum() * SECTOR / every["lups"]) <= (
        0.05 * load + grid.overlap_bytes_per_lup.z / gz)
    assert grid.layer_volume_bytes.z == pytest.approx(every["layer"][2] * SECTOR / every["waves"], rel=0.05 + 1 / gz)


def test_paper_block_16x2x32_compulsory_load_is_the_all_wave_average():
    """25-point range-4 star, 640 x 512 x 512, block 16 x 2 x 32 on the A100 (216 blocks per
    wave): the middle wave of the grid straddles a block-plane boundary and loads 21.95 B/lup;
    the average over the 758 full waves of the grid, by explicit enumeration of every cell and
    access with the brute force of test_wave.py (15 minutes, not repeated here), is 16.1245
    B/lup (16.128 with the last, partial wave). The class average lies within 0.1 %."""
    kernel = star_stencil(3, 4, (640, 512, 512))
    info = analyze_launch(kernel, A100, (16, 2, 32))
    model = WaveModel(compile_kernel(kernel))
    assert model.volumes(info, A100).compulsory_load_bytes_per_lup == pytest.approx(21.95, abs=0.01)
    assert model.grid_volumes(info, A100).compulsory_load_bytes_per_lup == pytest.approx(16.1245, rel=1e-3)


def test_scan_domain_has_no_spikes_for_deep_blocks():
    """The layer-condition scan (constant cells, square plane n x n) for blocks 16 and 32 deep:
    the DRAM volume per lup rises with n to a plateau. With one wave from the middle of the grid
    the curve jumped by 10-50 % at every plane size where that wave straddled a block plane; the
    grid average has no point more than 2 % above the larger of its neighbours, and no drop of
    more than 2 % from one plane size to the next."""
    from warpspeed.studies.scan import scan_domain

    planes = list(range(256, 1025, 64))
    blocks = [(32, 2, 16), (16, 2, 32)]
    points = scan_domain(lambda d: star_stencil(3, 4, d), A100, planes, blocks=blocks)
    for block in blocks:
        v = [p.dram_bytes_per_lup for p in points if p.block == block]
        for i in range(1, len(v)):
            assert v[i] >= 0.98 * v[i - 1], (block, planes[i])
        for i in range(1, len(v) - 1):
            assert v[i] <= 1.02 * max(v[i - 1], v[i + 1]), (block, planes[i])


def brute_force_classes(grid, blocks):
    """Every full wave listed: {(cz, cy): (waves, representatives)} with the representatives the
    waves at the class's median first-boundary position (after the first block row of their plane
    when there are any) that lie nearest the middle wave."""
    gx, gy, gz = grid
    plane, total = gx * gy, gx * gy * gz
    size = min(blocks, total)
    full = total // size
    starts = [k * size for k in range(full)]
    result = {}
    for key in sorted({crossings(s, size, grid) for s in starts}, key=lambda c: (c[0], -1 if c[1] is None else c[1])):
        members = [s for s in starts if crossings(s, size, grid) == key]
        waves = len(members)
        if key[0] or key[1]:
            unit = plane if key[0] else gx
            median = sorted(unit - s % unit for s in members)[(waves - 1) // 2]
            members = [s for s in members if unit - s % unit == median]
        members = [s for s in members if s % plane >= gx] or members
        middle = (full - 1) / 2
        nearest = min(abs(s // size - middle) for s in members)
        result[key] = (waves, {s for s in members if abs(s // size - middle) == nearest})
    return result


@settings(max_examples=300, deadline=None)
@given(grid=st.tuples(st.integers(1, 40), st.integers(1, 30), st.integers(1, 12)), blocks=st.integers(1, 90))
def test_classes_from_residues_are_those_of_every_wave(grid, blocks):
    """Grids whose period holds more waves than classes.ENUMERATED_WAVES are counted from the
    residues of the waves (classes._residue_classes) instead of listing a period. Called here on
    small grids, its classes, weights and representatives are those of a plain loop over every
    full wave (the representative one of the waves nearest the middle), and the same as from the
    listed period."""
    import math

    from warpspeed.memory.wave import classes as module

    gx, gy, gz = grid
    plane, size = gx * gy, min(blocks, gx * gy * gz)
    full, period = gx * gy * gz // size, plane // math.gcd(size, plane)
    if size > plane:
        return  # waves longer than a plane are always listed
    found = module._residue_classes(gx, plane, size, full, period)
    if found is None:  # a search beyond SEARCH_STEPS: wave_classes lists the period instead
        return
    assert found == module._enumerated_classes(gx, plane, size, full, period)
    expected = brute_force_classes(grid, blocks)
    assert [(c.crossings, c.row_crossings) for c in found] == list(expected)
    for c in found:
        waves, representatives = expected[(c.crossings, c.row_crossings)]
        assert c.waves == waves and c.first_block in representatives


def test_a_long_period_is_counted_from_residues():
    """Grid 40 x 512 x 128, 216 blocks per wave (A100: 108 SMs x 2): a plane of 20 480 blocks and
    gcd(216, 20 480) = 8, so a period of 2560 waves, more than are listed; 2 621 440 blocks =
    12 136 full waves + 64 blocks. A plane boundary z * 20 480 lies inside a wave unless 216
    divides it (27 divides z: z = 27, 54, 81, 108), so 127 - 4 = 123 waves cross one. A wave
    inside a plane starting at row offset r = 216 k mod 40 (0, 16, 32, 8, 24 in turn) holds
    floor((r + 215) / 40) row boundaries: 6 for r = 32, else 5, so about one wave in five has 6. The
    weights and representatives are those of the plain loop over every wave."""
    from warpspeed.memory.wave import classes as module

    assert 2560 > module.ENUMERATED_WAVES
    classes = {(c.crossings, c.row_crossings): c for c in wave_classes((40, 512, 128), 216)}
    assert sum(c.waves for c in classes.values()) == 12136
    assert classes[(1, None)].waves == 123
    assert abs(classes[(0, 6)].waves - 12136 / 5) <= 123  # the waves across a plane leave any offset
    expected = brute_force_classes((40, 512, 128), 216)
    assert list(classes) == list(expected)
    for key, c in classes.items():
        assert c.waves == expected[key][0] and c.first_block in expected[key][1]
