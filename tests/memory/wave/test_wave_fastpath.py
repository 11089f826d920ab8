"""The box-union fast path of the wave model gives exactly the ISL counts."""

import dataclasses

import pytest

from warpspeed.memory.addresses import compile_kernel
from warpspeed.memory.wave.boxmaps import box_map
from warpspeed.launch.geometry import analyze_launch
from warpspeed.memory.wave import WaveModel
from warpspeed.kernel.builtin import copy_kernel, lbm_pull, star_stencil
from warpspeed import Field, Kernel, load, load_linear, store
from warpspeed.kernel.description import X, Y, Z

CASES = [
    (star_stencil(3, 4, (640, 512, 512)), (32, 8, 4), (1, 2, 1)),
    (star_stencil(3, 4, (640, 512, 512)), (1024, 1, 1), (1, 1, 1)),
    (star_stencil(3, 4, (640, 512, 512)), (8, 8, 16), (1, 1, 2)),
    (star_stencil(3, 4, (300, 200, 100)), (16, 2, 32), (1, 2, 1)),
    (star_stencil(3, 1, (100, 70, 50)), (24, 4, 3), (1, 1, 2)),
    (star_stencil(2, 1, (1000, 1000)), (64, 4, 1), (2, 1, 1)),
    (lbm_pull(domain=(64, 64, 64)), (32, 4, 2), (1, 1, 1)),
    (lbm_pull(domain=(50, 40, 30)), (16, 8, 4), (1, 2, 1)),
    (copy_kernel((96, 50, 40)), (16, 16, 4), (1, 1, 1)),
]


@pytest.mark.parametrize("kernel, block, fold", CASES)
@pytest.mark.parametrize("sms", [108, 3])
def test_fast_path_equals_isl(a100, kernel, block, fold, sms):
    device = dataclasses.replace(a100, sms=sms)
    compiled = compile_kernel(kernel)
    info = analyze_launch(kernel, device, block, fold)
    fast = WaveModel(compiled, fast=True)
    slow = WaveModel(compiled, fast=False)
    assert fast.fast_fields == tuple(f.name for f in kernel.fields)
    assert fast.volumes(info, device) == slow.volumes(info, device)


def test_non_box_accesses_fall_back_to_isl(a100):
    # a transposed access (x and y swapped between target coordinates) is still a box map,
    # but a diagonal one (x feeds two coordinates) and a linear index are not
    f = Field("a", 8, (64, 64, 64))
    g = Field("b", 8, (64 * 64 * 64,))
    kernel = Kernel("mixed", (f, g), (load("a", X, X, Z), load_linear("b", X + 64 * Y), store("a", X, Y, Z)),
                    (60, 60, 60))
    compiled = compile_kernel(kernel)
    assert box_map(compiled.accesses[0], 32) is None
    assert box_map(compiled.accesses[1], 32) is None
    model = WaveModel(compiled, fast=True)
    assert model.fast_fields == ()
    info = analyze_launch(kernel, a100, (32, 4, 2))
    assert model.volumes(info, a100) == WaveModel(compiled, fast=False).volumes(info, a100)


def test_both_counters_return_the_same_line_counts(a100):
    """The box counter and the ISL counter return one result type with equal integers."""
    import islpy as isl

    from warpspeed.memory.wave import FieldLineCounts
    from warpspeed.memory.wave.box_counts import box_field_counts, field_stacks
    from warpspeed.memory.wave.boxmaps import field_box_maps
    from warpspeed.memory.wave.geometry import wave_cells
    from warpspeed.memory.wave.isl_counts import field_maps, isl_cell_set, isl_field_counts, line_map

    kernel = star_stencil(3, 2, (100, 70, 50))
    compiled = compile_kernel(kernel)
    info = analyze_launch(kernel, a100, (16, 4, 2), (1, 2, 1))
    cells = wave_cells(info.launch, info.wave.first_block, info.wave.blocks)
    ctx = isl.Context()
    wave = isl_cell_set(cells.wave, ctx)
    previous = {d: isl_cell_set(b, ctx) if b else None for d, b in cells.previous.items()}
    for fm in field_maps(compiled, False, ctx):
        accesses = [a for a in compiled.accesses if a.field.name == fm.field]

        def stacks(line):
            return field_stacks(field_box_maps([a for a in accesses if not a.access.is_store], line),
                                field_box_maps([a for a in accesses if a.access.is_store], line), fm.rank)

        fast = box_field_counts(stacks(32), cells.wave, cells.previous)
        slow = isl_field_counts(fm, line_map(fm.rank, 32, ctx), wave, previous)
        assert isinstance(fast, FieldLineCounts) and isinstance(slow, FieldLineCounts)
        assert fast == slow
        assert slow.load > 0 or slow.store > 0
