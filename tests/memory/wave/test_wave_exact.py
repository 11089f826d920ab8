"""The exact all-waves average (warpspeed.memory.wave.exact, WaveModel.grid_volumes(exact=True))
against a brute-force enumeration of every full wave.

The enumeration (all_waves of test_wave_classes.py, on the brute force of test_wave.py) lists
every cell of every full wave and of its previous-neighbour sets, forms line addresses from the
field strides and counts unique lines with numpy; it uses nothing of warpspeed.memory.wave. The
averages must agree to 1e-9 relative: per-lup volumes are the sums over all full waves divided
by their lattice updates, layer volumes the sums divided by the number of full waves.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.memory.wave.test_wave import A100, SECTOR, band_oversubscription, make_kernel
from tests.memory.wave.test_wave_classes import all_waves
from warpspeed.launch.geometry import analyze_launch
from warpspeed.memory.addresses import compile_kernel
from warpspeed.memory.wave import WaveModel
from warpspeed.memory.wave.exact import ROW_MARGIN_BOTTOM, ROW_MARGIN_TOP, ShiftInvariance, exact_wave_classes

# (kernel, domain, block, fold, SMs, blocks per SM). Waves inside planes and across plane
# boundaries, partial last block rows / columns / planes (domains that the blocks do not divide),
# folding, a 2-D kernel, LBM streaming, and an access with a linear index (no plane-shift
# invariance: every wave its own class).
GRIDS = [
    ("star3d_r4", (48, 48, 24), (8, 4, 2), (1, 1, 1), 3, 7),
    ("star3d_r4", (72, 40, 24), (8, 2, 4), (1, 1, 1), 5, 4),
    ("star3d_r1", (50, 30, 21), (8, 4, 2), (1, 1, 2), 2, 5),
    ("star3d_r1", (40, 30, 40), (16, 2, 1), (1, 2, 1), 4, 3),
    ("lbm_pull", (20, 12, 14), (8, 2, 2), (1, 1, 1), 2, 3),
    ("copy", (40, 26, 30), (8, 4, 4), (1, 1, 1), 3, 2),
    ("star3d_r1", (16, 8, 62), (8, 4, 4), (1, 1, 1), 3, 1),
    ("star2d_r1", (40, 30, 20), (16, 4, 1), (1, 1, 1), 3, 2),
    ("copy_linear", (32, 12, 10), (8, 4, 2), (1, 1, 1), 2, 2),
    # tall block planes: waves between the first and last rows, grouped by shifts by block rows
    ("star3d_r4", (32, 160, 12), (8, 2, 4), (1, 1, 1), 3, 3),
    ("lbm_pull", (16, 60, 8), (8, 2, 2), (1, 1, 1), 2, 2),
    ("star3d_r1", (24, 61, 9), (8, 2, 3), (1, 1, 1), 5, 1),
    ("star3d_r1", (20, 64, 8), (8, 2, 2), (1, 2, 1), 3, 1),
    ("copy", (24, 50, 6), (8, 2, 2), (1, 1, 1), 7, 1),
    ("star3d_r4", (24, 83, 8), (8, 2, 4), (1, 1, 1), 3, 2),
    ("star3d_r4", (24, 45, 12), (8, 1, 4), (1, 3, 1), 2, 2),
    # waves of 7 blocks over rows of 2 (a y band of 4 rows): the wave starting 3 rows into its
    # plane (first block 70) has its band cut at the plane's start, unlike the row shifts of it
    ("star3d_r1", (32, 64, 12), (16, 2, 2), (1, 1, 1), 7, 1),
]


def _setup(name, domain, block, fold, sms, per_sm):
    device = dataclasses.replace(A100, sms=sms, max_blocks_per_sm=per_sm)
    kernel = make_kernel(name, domain)
    if kernel.domain[2] == 1:
        block, fold = (block[0], block[1] * block[2], 1), (fold[0], fold[1] * fold[2], 1)
    return device, kernel, analyze_launch(kernel, device, block, fold)


@pytest.mark.slow
@pytest.mark.parametrize("name,domain,block,fold,sms,per_sm", GRIDS)
def test_exact_average_equals_every_wave(name, domain, block, fold, sms, per_sm):
    device, kernel, info = _setup(name, domain, block, fold, sms, per_sm)
    grid = WaveModel(compile_kernel(kernel)).grid_volumes(info, device, exact=True)
    every = all_waves(kernel, info)
    assert grid.waves == every["waves"] == info.launch.total_blocks // info.wave.blocks
    lups = every["lups"]
    assert grid.compulsory_load_bytes_per_lup == pytest.approx(every["load"] * SECTOR / lups, rel=1e-9)
    assert grid.compulsory_store_bytes_per_lup == pytest.approx(every["store"] * SECTOR / lups, rel=1e-9)
    assert tuple(grid.overlap_bytes_per_lup) == pytest.approx(tuple(every["overlap"] * SECTOR / lups), rel=1e-9)
    layer = every["layer"] * SECTOR / every["waves"]
    assert tuple(grid.layer_volume_bytes) == pytest.approx(tuple(layer), rel=1e-9)
    assert grid.band_volume_bytes == pytest.approx(every["band"] * SECTOR / every["waves"], rel=1e-9)
    # x and y: the mean over the waves of each wave's band oversubscription; z: layer / L2
    o_xy = np.mean([band_oversubscription(n * SECTOR, device.l2.effective_bytes) for n in every["band_lines"]])
    expected = (o_xy, o_xy, layer[2] / device.l2.effective_bytes)
    assert tuple(grid.oversubscription) == pytest.approx(expected, rel=1e-9)


def test_the_representative_classes_are_not_exact():
    """The first grid discriminates: the representative-class average differs from the
    enumeration (so the equality above is not a property of any weighting)."""
    device, kernel, info = _setup(*GRIDS[0])
    every = all_waves(kernel, info)
    model = WaveModel(compile_kernel(kernel))
    approx = model.grid_volumes(info, device)
    exact = model.grid_volumes(info, device, exact=True)
    assert len(approx.classes) <= 3 < len(exact.classes) < exact.waves
    truth = np.array(tuple(every["overlap"] * SECTOR / every["lups"]))
    assert np.max(np.abs(np.array(tuple(approx.overlap_bytes_per_lup)) / truth - 1)) > 1e-3


@pytest.mark.slow
def test_exact_budget_falls_back_to_the_classes():
    """With fewer evaluations allowed than the grid has distinct waves the classes are taken (and
    said so); with enough, or no budget, the exact average over every wave."""
    device, kernel, info = _setup(*GRIDS[0])
    every = all_waves(kernel, info)
    model = WaveModel(compile_kernel(kernel))
    distinct = len(model.grid_volumes(info, device, exact=True).classes)
    short = model.grid_volumes(info, device, exact=True, exact_budget=distinct - 1)
    assert short.method == "classes" and len(short.classes) <= 3
    for budget in (distinct, None):
        grid = model.grid_volumes(info, device, exact=True, exact_budget=budget)
        assert grid.method == "exact"
        assert grid.compulsory_load_bytes_per_lup == pytest.approx(every["load"] * SECTOR / every["lups"], rel=1e-9)


def test_shift_invariance_by_kernel():
    """Stencils and LBM streaming (x fastest, y and z shifted outer indices) are invariant under
    shifts by block planes and rows; the spread of the y offsets is 8 cells for the range-4 star
    (y - 4 .. y + 4), 2 for D3Q15 (y - 1 .. y + 1), 0 for the copy; an access with a linear
    element index is not box-preserving."""
    for name, planes, reach in (("star3d_r4", True, 8), ("lbm_pull", True, 2), ("copy", True, 0),
                                ("copy_linear", False, None)):
        model = WaveModel(compile_kernel(make_kernel(name, (32, 12, 10))))
        assert model.shift_invariance(SECTOR) == ShiftInvariance(planes, reach), name
        assert model.plane_shift_invariant(SECTOR) is planes


def test_row_shift_classes_by_hand():
    """Grid 2 x 12 x 3 blocks (planes of 24), waves of 3 blocks, reach 0 (no rows shared): 24
    full waves. The 8 waves of the first plane are classes of their own. In planes 1 and 2 the
    waves start at plane offsets 0, 3, ..., 21, i.e. rows 0, 1, 3, 4, 6, 7, 9, 10 and end in rows
    1, 2, 4, 5, 7, 8, 10, 11; those starting in row >= 2 (ROW_MARGIN_BOTTOM) and ending in row
    <= 11 - 3 = 8 (ROW_MARGIN_TOP) are offsets 6, 9, 12, 15: by column 0 (6, 12) and 1 (9, 15), 4
    waves each. Offsets 0, 3, 18, 21 stay classes of 2 (one per plane)."""
    from warpspeed.launch.geometry import Launch

    assert (ROW_MARGIN_BOTTOM, ROW_MARGIN_TOP) == (2, 3)
    launch = Launch(block=(8, 4, 4), fold=(1, 1, 1), domain=(16, 48, 12), grid=(2, 12, 3))
    classes = exact_wave_classes(launch, 3, ShiftInvariance(planes=True, row_spread_cells=0))
    assert [(c.first_block, c.waves) for c in classes] == (
        [(s, 1) for s in range(0, 24, 3)] + [(24, 2), (27, 2), (30, 4), (33, 4), (42, 2), (45, 2)])


def test_exact_classes_by_hand():
    """Grid 4 x 3 x 5 blocks (planes of 12 blocks), waves of 8 blocks: 60 blocks, 7 full waves
    starting at 0, 8, 16, 24, 32, 40, 48. The waves starting in the first plane (0, 8) are classes
    of their own; the others have plane offsets 4, 0, 8, 4, 0: classes {16, 40}, {24, 48} and
    {32}. Waves 8 and 32 cross a plane boundary, the others one row boundary. With a domain 18
    cells deep (blocks 4 cells deep: the last plane holds 2 cells) the wave that reaches the last
    plane (48) is a class of its own."""
    from warpspeed.launch.geometry import Launch

    def launch(nz):
        return Launch(block=(8, 4, 4), fold=(1, 1, 1), domain=(32, 12, nz), grid=(4, 3, 5))

    full = exact_wave_classes(launch(20), 8, True)
    assert [(c.first_block, c.waves) for c in full] == [(0, 1), (8, 1), (16, 2), (24, 2), (32, 1)]
    assert [(c.crossings, c.row_crossings) for c in full] == [(0, 1), (1, None), (0, 1), (0, 1), (1, None)]
    clipped = exact_wave_classes(launch(18), 8, True)
    assert [(c.first_block, c.waves) for c in clipped] == [(0, 1), (8, 1), (16, 2), (24, 1), (32, 1), (48, 1)]
    alone = exact_wave_classes(launch(20), 8, False)
    assert [(c.first_block, c.waves) for c in alone] == [(s, 1) for s in range(0, 56, 8)]


def test_paper_grid_exact_average():
    """25-point range-4 star, 640 x 512 x 512, block 16 x 2 x 32 on the A100 (216 blocks per
    wave, 758 full waves): the exact compulsory DRAM load is the 16.1245 B/lup of the explicit
    enumeration of every cell and access of every full wave (test_wave_classes.py, 15 minutes,
    not repeated here). Grouping by shifts by block rows as well as planes gives the same
    averages as grouping by shifts by planes alone (fewer, simpler equalities; 758 evaluations
    here)."""
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.memory.wave import GridWaveVolumes, WaveClassVolumes

    kernel = star_stencil(3, 4, (640, 512, 512))
    info = analyze_launch(kernel, A100, (16, 2, 32))
    model = WaveModel(compile_kernel(kernel))
    grouped = model.grid_volumes(info, A100, exact=True)
    assert grouped.waves == 758 and len(grouped.classes) < 200
    assert grouped.compulsory_load_bytes_per_lup == pytest.approx(16.1245, rel=5e-6)
    planes = exact_wave_classes(info.launch, info.wave.blocks, ShiftInvariance(planes=True, row_spread_cells=None))
    assert len(planes) == 758
    reference = GridWaveVolumes(tuple(WaveClassVolumes(c, model.volumes(info, A100, first_block=c.first_block))
                                      for c in planes))
    for get in (lambda g: g.compulsory_load_bytes_per_lup, lambda g: g.compulsory_store_bytes_per_lup,
                lambda g: tuple(g.overlap_bytes_per_lup), lambda g: tuple(g.layer_volume_bytes),
                lambda g: g.l2_oversubscription):
        assert get(grouped) == pytest.approx(get(reference), rel=1e-12)
