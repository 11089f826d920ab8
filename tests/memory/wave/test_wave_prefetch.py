"""Wave volumes of many launches counted together (WaveModel.prefetch, box_counts_many's batches)
equal those of ISL, one launch at a time.

The reference is the ISL counter (``WaveModel(..., fast=False)``), which shares no code with the
box unions; the launches mix grids, wave sizes and foldings so that one batch holds requests of
different sizes and a batch too large for the joint grid is split.
"""

from __future__ import annotations

import dataclasses

import pytest

from warpspeed.kernel.builtin import lbm_pull, star_stencil
from warpspeed.launch.geometry import analyze_launch
from warpspeed.memory.addresses import compile_kernel
from warpspeed.memory.wave import WaveModel, wave_classes
from warpspeed.memory.wave import box_counts
from warpspeed.memory.wave.geometry import wave_cells
from warpspeed.predict import Predictor

LAUNCHES = [((32, 8, 4), (1, 1, 1)), ((8, 8, 16), (1, 2, 1)), ((256, 4, 1), (1, 1, 2)), ((4, 16, 16), (1, 1, 1)),
            ((64, 2, 8), (1, 2, 1)), ((1024, 1, 1), (1, 1, 1))]


@pytest.mark.parametrize("kernel", [star_stencil(3, 2, (90, 60, 40)), lbm_pull(domain=(40, 36, 30))])
def test_prefetched_grids_equal_isl_one_at_a_time(a100, kernel):
    device = dataclasses.replace(a100, sms=5)  # a few blocks per wave: several classes of waves
    compiled = compile_kernel(kernel)
    infos = [analyze_launch(kernel, device, block, fold) for block, fold in LAUNCHES]
    fast = WaveModel(compiled)
    fast.prefetch(infos, device)
    slow = WaveModel(compiled, fast=False)
    assert sum(len(wave_classes(i.launch.grid, i.wave.blocks)) for i in infos) > len(infos)
    for info in infos:
        assert fast.grid_volumes(info, device) == slow.grid_volumes(info, device)


def test_batches_split_when_the_joint_grid_is_too_large(a100, monkeypatch):
    kernel = star_stencil(3, 2, (90, 60, 40))
    compiled = compile_kernel(kernel)
    model = WaveModel(compiled)
    field = compiled.kernel.fields[0]
    stacks = model._field_stacks(next(fm for fm in model.layouts if fm.field == field.name), 32)
    requests = []
    for block, fold in LAUNCHES:
        info = analyze_launch(kernel, a100, block, fold)
        cells = wave_cells(info.launch, info.wave.first_block, info.wave.blocks)
        requests.append((stacks, cells.wave, cells.previous, cells.bands))
    one_by_one = [box_counts.box_field_counts(*r) for r in requests]
    tried = []
    count_together = box_counts._count_together

    def small_joint_grid(batch):
        tried.append(len(batch))
        return None if len(batch) > 1 else count_together(batch)

    monkeypatch.setattr(box_counts, "_count_together", small_joint_grid)
    assert box_counts.box_counts_many(requests) == one_by_one
    assert tried[0] == len(requests) and max(tried[1:]) < len(requests)  # split, then counted


def test_predictions_with_and_without_prefetch_are_equal(a100):
    kernel = star_stencil(3, 4, (96, 64, 48))
    configs = [((32, 8, 4), (1, 1, 1)), ((16, 16, 4), (1, 2, 1)), ((8, 8, 16), (1, 1, 2)), ((4096, 1, 1), (1, 1, 1))]
    prepared = Predictor(kernel, a100)
    prepared.prefetch(configs)  # the last block cannot be launched: left to predict
    plain = Predictor(kernel, a100)
    for block, fold in configs[:3]:
        assert prepared.predict(block, fold) == plain.predict(block, fold)


def test_predictors_of_one_ranking_share_what_their_kernels_share(a100):
    """Kernels that differ in their registers only (a code generator's foldings) share their
    compiled accesses, curves and wave volumes through SharedModels; every prediction is the one a
    predictor of its own makes."""
    from warpspeed.predict import SharedModels

    base = star_stencil(3, 2, (96, 64, 48))
    kernels = [dataclasses.replace(base, registers=r) for r in (32, 40, 64)]
    shared = SharedModels()
    predictors = [Predictor(k, a100, shared=shared) for k in kernels]
    assert predictors[1].compiled.accesses is predictors[0].compiled.accesses
    assert predictors[1].compiled.kernel is kernels[1] and predictors[1].curves is predictors[0].curves
    for predictor, kernel in zip(predictors, kernels):
        for block, fold in (((32, 8, 4), (1, 2, 1)), ((64, 16, 1), (1, 1, 1))):
            assert predictor.predict(block, fold) == Predictor(kernel, a100).predict(block, fold)
