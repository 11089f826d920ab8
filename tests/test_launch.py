"""Grid, occupancy and waves against hand-computed cases (CUDA occupancy-calculator rules)."""

import dataclasses

import pytest

from warpspeed import LaunchError
from warpspeed.launch.geometry import make_launch, occupancy, wave


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


def test_wave_is_blocks_per_sm_times_sms(a100):
    launch = make_launch((1024, 1, 1), 1, (640, 512, 512))
    w = wave(launch, 2, a100)
    assert w.blocks == 216  # 2 x 108 SMs
    total = 1 * 512 * 512
    assert w.count == -(-total // 216)
    assert w.first_block == (w.count // 2) * 216


def test_small_grid_is_one_wave(a100):
    launch = make_launch((32, 1, 1), 1, (64, 2, 1))
    w = wave(launch, 32, a100)
    assert (w.blocks, w.count, w.first_block) == (4, 1, 0)


@pytest.mark.parametrize("block, regs, message", [
    ((1025, 1, 1), 32, "1025 threads; A100-SXM4-40GB allows at most 1024"),
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
