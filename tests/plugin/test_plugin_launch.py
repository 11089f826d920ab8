"""The ranked configuration reaches pystencils: block size and folding of the generated kernel."""

from __future__ import annotations

import pytest

ps = pytest.importorskip("pystencils")

from pystencils_plugin import create_kernel, rank, star_stencil_assignments  # noqa: E402
from warpspeed.errors import KernelError  # noqa: E402

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


def _paper_2d_rule(n: int = 258):
    """The 2-D 4-point stencil of Ernst et al. (JPDC 2023), section 2: fields of n x n with one
    ghost layer, so (n - 2) x (n - 2) cells are updated."""
    src, dst = ps.fields(f"src, dst: double[{n}, {n}]")
    return [ps.Assignment(dst.center, (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]


def test_paper_2d_rule_ranks_with_default_arguments():
    ranking = rank(_paper_2d_rule(), "A100-SXM4-40GB")
    # 1024-thread power-of-two blocks with z = 1: (2^a, 2^(10-a), 1), a = 0..10; on 256 x 256
    # cells an extent may be at most 2 x 256 = 512, so a = 1..9: 9 blocks; foldings along the
    # axes a 2-D rule has: none and 2 in y -> 9 x 2 = 18 configurations
    configs = {(row.config.block, row.config.fold) for row in ranking.rows}
    assert len(configs) == 18
    assert {fold for _, fold in configs} == {(1, 1, 1), (1, 2, 1)}
    assert {block[2] for block, _ in configs} == {1}
    best = ranking.best()
    assert best.block_size[2] == 1 and best.fold[2] == 1


def test_paper_2d_rule_create_kernel_with_default_arguments():
    kernel = create_kernel(_paper_2d_rule(66))
    block = kernel.get_launch_configuration().default_block_size
    assert len(block) == 3 and block[2] == 1 and block[0] * block[1] == 1024


def test_1d_rule_ranks_with_default_arguments():
    a, b = ps.fields("a, b: double[1030]")
    ranking = rank([ps.Assignment(b.center, a[1] + a[-1])], "A100-SXM4-40GB")
    # 1028 cells along x: only (1024, 1, 1) keeps y = z = 1, and no folding axis exists but x
    assert [(row.config.block, row.config.fold) for row in ranking.rows] == [((1024, 1, 1), (1, 1, 1))]


def test_z_folding_of_a_2d_rule_is_a_clear_error():
    with pytest.raises(KernelError, match="folds axis z, but the kernel has only 2 spatial dimension"):
        rank(_paper_2d_rule(), "A100-SXM4-40GB", foldings=[(1, 1, 2)])
