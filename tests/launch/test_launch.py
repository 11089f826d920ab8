"""Grid, occupancy and waves against hand-computed cases (CUDA occupancy-calculator rules)."""

import dataclasses
from itertools import product

import pytest

from warpspeed import LaunchError
from warpspeed.launch.geometry import make_launch, occupancy, wave
from warpspeed.launch.space import configuration_space, domain_space, paper_space


@pytest.mark.parametrize("block, regs, expected", [
    # 1024 threads x 32 regs: 32 x 32 = 1024 regs per warp; a sub-partition (16384 regs) holds
    # 16 warps -> 64 per SM -> 2 blocks of 32 warps; the thread limit 2048/1024 also gives 2.
    ((1024, 1, 1), 32, 2),
    # 256 threads x 255 regs: 255 x 32 = 8160 -> 8192 per warp (unit 256); 16384 / 8192 = 2
    # warps per sub-partition -> 8 per SM -> one block of 8 warps.
    ((32, 8, 1), 255, 1),
    # 1024 threads x 64 regs: 2048 per warp -> 8 warps per sub-partition -> 32 per SM -> 1 block.
    ((32, 32, 1), 64, 1),
    # 64 threads x 32 regs: the 32 blocks per SM limit wins (2048 threads would allow 32 too).
    ((64, 1, 1), 32, 32),
    # 96 threads x 40 regs: 40 x 32 = 1280 per warp; 16384 // 1280 = 12 warps per partition ->
    # 48 per SM -> 48 / 3 = 16 blocks; threads 2048 // 96 = 21; so registers limit at 16.
    ((96, 1, 1), 40, 16),
])
def test_blocks_per_sm(a100, block, regs, expected):
    occ = occupancy(make_launch(block, 1, (512, 512, 512)), a100, regs)
    assert occ.blocks_per_sm == expected


def test_default_registers_are_reported_as_estimate(a100):
    occ = occupancy(make_launch((256, 1, 1), 1, (512, 512, 1)), a100, None)
    assert occ.registers_estimated and occ.registers_per_thread == 32


def test_grid_rounds_up_with_folding():
    launch = make_launch((32, 8, 4), (1, 2, 1), (640, 510, 511))
    # x: 640 / 32 = 20; y: 510 / 16 = 31.9 -> 32; z: 511 / 4 -> 128
    assert launch.grid == (20, 32, 128)
    assert launch.total_blocks == 20 * 32 * 128


@pytest.mark.parametrize("block, regs, waves, wave_blocks, first_block", [
    # 32 x 8 x 4 = 1024 threads x 32 regs: 2 blocks per SM (thread limit 2048 / 1024; registers:
    # 1024 per warp, 16 warps per sub-partition, 64 per SM = 2 blocks of 32 warps) -> 216 blocks
    # per wave on 108 SMs. Grid 640/32 x 512/8 x 512/4 = 20 x 64 x 128 = 163840 blocks ->
    # 163840 = 758 x 216 + 112, so 759 waves; the middle wave is number 379: first block 81864.
    ((32, 8, 4), 32, 759, 216, 379 * 216),
    # 96 x 1 x 1 threads x 40 regs: 16 blocks per SM (registers, see test_blocks_per_sm) -> 1728
    # per wave. Grid ceil(640/96) x 512 x 512 = 7 x 512 x 512 = 1835008 blocks = 1061 x 1728 +
    # 1600 -> 1062 waves; middle wave 531: first block 917568.
    ((96, 1, 1), 40, 1062, 1728, 531 * 1728),
])
def test_wave_from_occupancy_by_hand(a100, block, regs, waves, wave_blocks, first_block):
    launch = make_launch(block, 1, (640, 512, 512))
    occ = occupancy(launch, a100, regs)
    w = wave(launch, occ.blocks_per_sm, a100)
    assert (w.count, w.blocks, w.first_block) == (waves, wave_blocks, first_block)


def test_middle_wave_of_an_even_count_is_a_full_wave(a100):
    # 32 x 1 x 1 blocks on 32 x 432 x 1 cells: 432 blocks; 2 per SM -> 216 per wave, 2 waves;
    # the middle one (number 1) starts at block 216.
    launch = make_launch((32, 1, 1), 1, (32, 432, 1))
    w = wave(launch, 2, a100)
    assert (w.count, w.blocks, w.first_block) == (2, 216, 216)


def test_small_grid_is_one_wave(a100):
    launch = make_launch((32, 1, 1), 1, (64, 2, 1))
    w = wave(launch, 32, a100)
    assert (w.blocks, w.count, w.first_block) == (4, 1, 0)


@pytest.mark.parametrize("block, regs, message", [
    ((1025, 1, 1), 32, "1025 threads; A100-SXM4-40GB allows at most 1024"),
    # CUDA allows z <= 64 (CUDA C++ Programming Guide, "Compute Capabilities")
    ((1, 1, 128), 32, r"z extent 128 exceeds the A100-SXM4-40GB limit \(x <= 1024, y <= 1024, z <= 64\)"),
    ((8, 1, 65), 32, "z extent 65 exceeds"),
    ((0, 1, 1), 32, "entries must be positive"),
    ((32, 1, 1), 256, "allows 1 to 255"),
    ((1.5, 1, 1), 32, "must be integers"),
])
def test_impossible_launches(a100, block, regs, message):
    with pytest.raises(LaunchError, match=message):
        occupancy(make_launch(block, 1, (64, 64, 64)), a100, regs)


def test_registers_that_fit_no_block(a100):
    small = dataclasses.replace(a100, registers_per_sm=32768)
    # 1024 threads x 255 regs need 32 warps x 8192 regs; the file holds 32768 regs.
    with pytest.raises(LaunchError, match="do not fit one block"):
        occupancy(make_launch((1024, 1, 1), 1, (64, 64, 64)), small, 255)


def test_shared_memory_limit(a100):
    occ = occupancy(make_launch((128, 1, 1), 1, (64, 64, 64)), a100, 32, shared_bytes_per_block=48 * 1024)
    # 167936 // 49152 = 3 blocks
    assert occ.blocks_per_sm == 3 and occ.limiter == "shared"
    with pytest.raises(LaunchError, match="shared memory per block"):
        occupancy(make_launch((128, 1, 1), 1, (64, 64, 64)), a100, 32, shared_bytes_per_block=200_000)


def test_block_z_up_to_the_limit(a100):
    # z = 64 is allowed: 16 x 1 x 64 = 1024 threads, 2048 / 1024 = 2 blocks per SM.
    assert occupancy(make_launch((16, 1, 64), 1, (64, 64, 64)), a100, 32).blocks_per_sm == 2


def test_amd_allows_deep_blocks():
    # HIP: 1024 threads per dimension; 1 x 1 x 128 is a legal block on MI210 (2 waves of 64).
    from warpspeed.hardware.device import load_device

    occ = occupancy(make_launch((1, 1, 128), 1, (64, 64, 256)), load_device("MI210"), 32)
    assert occ.warps_per_block == 2


# ---------------------------------------------------------------------------------------------
# configuration spaces follow the kernel's domain
# ---------------------------------------------------------------------------------------------

def _pow2_blocks(threads, max_z, limits):
    """Power-of-two blocks by brute force over exponents, each extent within ``limits``."""
    return {(2**a, 2**b, 2**c) for a, b, c in product(range(11), repeat=3)
            if 2**(a + b + c) == threads and 2**c <= max_z
            and all(e <= m for e, m in zip((2**a, 2**b, 2**c), limits))}


def test_two_d_kernel_gets_two_d_configurations():
    from warpspeed.kernel.builtin import builtin_kernel

    space = configuration_space(builtin_kernel("star2d-r1"))  # 4096 x 4096 x 1
    # 1024 = 2^a x 2^b: 11 blocks, times the foldings without z: none and 2 in y.
    assert {c.block for c in space} == _pow2_blocks(1024, 1, (4096, 4096, 1))
    assert len(space) == 11 * 2
    assert all(c.block[2] == 1 and c.fold[2] == 1 for c in space)


def test_the_papers_3d_space_is_unchanged():
    from warpspeed.kernel.builtin import builtin_kernel

    # 640 x 512 x 512: no axis limits a 1024-thread block (1024 <= 2 x 512), so all 56 x 3.
    assert configuration_space(builtin_kernel("star3d-r4")) == paper_space(1024)
    assert len(paper_space(1024)) == 168


def test_blocks_wider_than_twice_the_domain_are_left_out():
    # 64 x 64 x 64: extents up to 128; 1024 = 2^10 with a, b <= 7, c <= 6.
    space = domain_space((64, 64, 64), 1024)
    expected = _pow2_blocks(1024, 64, (128, 128, 128))
    assert {c.block for c in space} == expected and len(space) == 3 * len(expected)
    assert (1024, 1, 1) not in {c.block for c in space}
    # 100 x 100 x 1 with 256 threads: x, y <= 200 (so <= 128), z = 1; foldings without z.
    small = domain_space((100, 100, 1), 256)
    assert {c.block for c in small} == _pow2_blocks(256, 1, (200, 200, 1)) == {(2, 128, 1), (4, 64, 1),
                                                                                (8, 32, 1), (16, 16, 1),
                                                                                (32, 8, 1), (64, 4, 1),
                                                                                (128, 2, 1)}
    assert {c.fold for c in small} == {(1, 1, 1), (1, 2, 1)}


def test_no_block_fits_is_an_error():
    with pytest.raises(LaunchError, match=r"no block of 1024 threads fits the domain \(8, 8, 1\)"):
        domain_space((8, 8, 1), 1024)


def test_rank_defaults_to_the_kernels_space(a100):
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.rank import rank

    ranking = rank(star_stencil(2, 1, (64, 64)), a100, executor=None)
    # 1024 threads on 64 x 64: x, y <= 128 -> 2^a x 2^b with 3 <= a <= 7: 5 blocks x 2 foldings
    assert len(ranking.rows) == 5 * 2
    assert all(r.config.block[2] == 1 and r.config.fold[2] == 1 for r in ranking.rows)


@pytest.mark.parametrize("block, fold, domain, share", [
    ((512, 2, 1), (1, 1, 1), (640, 512, 512), 640 / 1024),  # 2 blocks per row, the second 128 of 512
    ((256, 1, 4), (1, 1, 1), (632, 504, 504), 632 / 768 * 504 / 504),  # 3 x 256 threads for 632 cells
    ((32, 4, 2), (1, 2, 1), (64, 30, 8), 15 / 16),  # y: 30 cells folded 2 need 15 threads; 4 blocks of 4 = 16
    ((32, 8, 4), (1, 1, 1), (256, 256, 256), 1.0),  # a multiple of the block: no idle thread
    ((32, 8, 1), (1, 1, 2), (64, 64, 5), 3 / 3),  # z: 3 threads for 5 cells folded 2 (the third has one), 3 blocks of 1
])
def test_active_thread_share_by_hand(block, fold, domain, share):
    assert make_launch(block, fold, domain).active_thread_share == pytest.approx(share)


@pytest.mark.parametrize("block, fold, domain, per_block", [
    ((512, 2, 1), (1, 1, 1), (640, 512, 512), 640 * 2 / 2),  # a row of 640 cells in 2 blocks of 512 x 2 rows
    ((256, 1, 1), (1, 1, 2), (768, 4, 6), 256 * 2),  # whole blocks: threads x cells per thread
    ((32, 4, 1), (1, 2, 1), (32, 12, 1), 32 * 12 / 2),  # y: 12 cells in blocks of 4 x 2 = 8 -> 2 blocks
])
def test_mean_cells_per_block_by_hand(block, fold, domain, per_block):
    assert make_launch(block, fold, domain).mean_cells_per_block == pytest.approx(per_block)
