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
from warpspeed.launch.space import default_block, default_threads

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


# The default block of a single configuration: 32 threads wide, 8 high on a 3-D domain, the rest in
# the last axis the domain has (threads from the register rule above).
@pytest.mark.parametrize("registers, domain, block", [
    (None, (64, 64, 64), (32, 8, 4)),  # 1024 = 32 x 8 x 4
    (80, (64, 64, 64), (32, 8, 2)),  # 512 = 32 x 8 x 2
    (255, (64, 64, 64), (32, 8, 1)),  # 256 = 32 x 8 x 1
    (None, (256, 256), (32, 32, 1)),  # 2-D: 1024 = 32 x 32
    (128, (256, 256), (32, 16, 1)),  # 2-D, 512 = 32 x 16
    (None, (4096,), (1024, 1, 1)),  # one row: all threads in x
])
def test_default_block(registers, domain, block):
    kernel = replace(star_stencil(max(2, len(domain)), 1, domain + (64,) * (2 - len(domain))), registers=registers)
    if len(domain) == 1:  # the same stencil over one row of its field
        kernel = replace(kernel, domain=(domain[0], 1, 1))
    assert default_block(kernel, load_device("A100-SXM4-40GB")) == block
    assert block[0] * block[1] * block[2] == default_threads(kernel, load_device("A100-SXM4-40GB"))
