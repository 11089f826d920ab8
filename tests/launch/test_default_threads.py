"""One register-based rule for the threads per block of the ranked space.

Expected values are derived by hand from the register files in the device files:
A100: 65536 registers per SM in 4 partitions, allocated per warp of 32 in units of 256.
MI210: 131072 registers per CU in 4 SIMDs, allocated per wave of 64 in units of 512.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from warpspeed.errors import LaunchError
from warpspeed.hardware.device import load_device
from warpspeed.kernel.builtin import star_stencil
from warpspeed.launch.space import default_threads

KERNEL = star_stencil(3, 1, (64, 64, 64))


@pytest.mark.parametrize("registers, threads", [
    # 32 x 1024 = 32768 <= 65536
    (None, 1024),  # warpspeed's 32-register assumption
    (64, 1024),  # 64 x 32 = 2048 per warp, 8 warps per partition, 32 warps = 1024 threads
    (80, 512),  # 80 x 1024 = 81920 > 65536; 2560 per warp -> 6 warps per partition -> 24 warps < 32
    (128, 512),  # 4096 per warp -> 4 per partition -> 16 warps = 512 threads
    (255, 256),  # 255 x 32 = 8160 -> 8192 per warp -> 2 per partition -> 8 warps = 256 threads
])
def test_a100(registers, threads):
    assert default_threads(replace(KERNEL, registers=registers), load_device("A100-SXM4-40GB")) == threads


@pytest.mark.parametrize("registers, threads", [
    (128, 1024),  # 128 x 64 = 8192 per wave, 32768 per SIMD -> 4 waves per SIMD -> 16 waves = 1024
    (136, 512),  # 8704 per wave -> 3 per SIMD -> 12 waves < 16; 512 threads = 8 waves fit
    (512, 256),  # 32768 per wave -> 1 per SIMD -> 4 waves = 256 threads
])
def test_mi210(registers, threads):
    assert default_threads(replace(KERNEL, registers=registers), load_device("MI210")) == threads


def test_too_many_registers_is_a_launch_error():
    with pytest.raises(LaunchError, match="registers"):
        default_threads(replace(KERNEL, registers=300), load_device("A100-SXM4-40GB"))
