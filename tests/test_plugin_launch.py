"""The ranked configuration reaches pystencils: block size and folding of the generated kernel."""

from __future__ import annotations

import pytest

ps = pytest.importorskip("pystencils")

from pystencils_plugin import create_kernel, rank, star_stencil_assignments  # noqa: E402

DOMAIN = (32, 16, 8)


@pytest.fixture(autouse=True)
def no_nvcc(monkeypatch):
    monkeypatch.setattr("pystencils_plugin.registers.find_nvcc", lambda: None)


def test_best_config_kernel_carries_the_ranked_block():
    assignments = star_stencil_assignments(3, 1, DOMAIN)
    ranking = rank(assignments, "A100-SXM4-40GB", blocks=[(32, 2, 1), (16, 4, 2)], foldings=[(1, 2, 1)])
    best = ranking.best()
    kernel = best.create_kernel()
    launch = kernel.get_launch_configuration()
    assert launch.default_block_size == best.block_size != (8, 8, 4)
    # fold 1x2x1: every thread updates 2 cells along y, so the grid has half the blocks along y
    block, grid = launch.evaluate()
    assert block == best.block_size
    assert grid == (32 // block[0], 16 // (2 * block[1]), 8 // block[2])


def test_create_kernel_ranks_and_configures():
    assignments = star_stencil_assignments(3, 1, DOMAIN)
    kernel = create_kernel(assignments, device="A100-SXM4-40GB", blocks=[(64, 2, 1)], foldings=[(1, 1, 2)])
    launch = kernel.get_launch_configuration()
    assert launch.default_block_size == (64, 2, 1)
    assert launch.evaluate() == ((64, 2, 1), (1, 8, 4))  # 32/64 -> 1, 16/2 = 8, 8/(2*1) = 4


def test_create_kernel_keeps_the_callers_options():
    assignments = star_stencil_assignments(3, 1, DOMAIN)
    config = ps.CreateKernelConfig(target=ps.Target.HIP, function_name="my_star")
    kernel = create_kernel(assignments, config, device="MI210", blocks=[(64, 1, 1)], foldings=[(1, 1, 1)])
    assert kernel.name == "my_star" and kernel.target == ps.Target.HIP
    assert kernel.get_launch_configuration().default_block_size == (64, 1, 1)
    assert config.gpu.default_block_size is None  # the caller's config is not changed
