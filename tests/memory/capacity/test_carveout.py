"""The L1 a launch keeps: the unified L1/shared array minus the driver's carveout, per architecture.

Expected values from the CUDA C++ Programming Guide's tables (unified sizes 128/192/256 KB; shared
sizes 0, 8, 16, 32, 64, 96 KB on 7.0; 0 ... 164 KB on 8.0; 0 ... 228 KB on 9.0; 1 KB reserved
per block from 8.0) and the public L1 sweeps of gpu-benches, worked by hand here.
"""

import math

import pytest

from warpspeed.hardware.device import load_device
from warpspeed.measured.sustained import measured_part
from warpspeed.memory.capacity.carveout import carveout_bytes, l1_reuse_capacity
from warpspeed.memory.capacity.terms import L1_REUSE_SHARE, l1_oversubscription
from warpspeed.units import KIB


@pytest.mark.parametrize("device, blocks, kept_kib", [
    ("V100-PCIe-32GB", 1, 128), ("V100-PCIe-32GB", 32, 128),   # Volta: nothing reserved, no carveout
    ("A100-SXM4-40GB", 2, 184), ("A100-SXM4-40GB", 8, 184),     # 2-8 KB reserved -> 8 KB carveout
    ("A100-SXM4-40GB", 16, 176), ("A100-SXM4-40GB", 32, 160),   # 16 KB, 32 KB
    ("H200", 2, 248), ("H200", 32, 224),
    ("L40", 1, 120), ("A40", 6, 120),
])
def test_kept_l1_per_launch(device, blocks, kept_kib):
    assert l1_reuse_capacity(load_device(device).l1, blocks) == kept_kib * KIB


def test_shared_memory_of_the_kernel_moves_the_carveout():
    v100 = load_device("V100-PCIe-32GB").l1
    # two blocks of 20 KB each need 40 KB: the driver takes the 64 KB size, 64 KB of L1 stay
    assert carveout_bytes(v100, 2, 20 * KIB) == 64 * KIB
    assert l1_reuse_capacity(v100, 2, 20 * KIB) == 64 * KIB


def test_amd_first_levels_keep_their_size():
    mi210 = load_device("MI210").l1  # the LDS is a separate array on CDNA
    assert l1_reuse_capacity(mi210, 8) == mi210.bytes


def test_reference_definition_holds_on_the_a100():
    # the A100 curve's own oversubscription: allocation / sqrt(192 KiB x 128 KiB), for 1024-thread blocks
    alloc = 100 * KIB
    kept = l1_reuse_capacity(load_device("A100-SXM4-40GB").l1, 2)
    assert l1_oversubscription(alloc, kept) == pytest.approx(alloc / math.sqrt(192 * KIB * 128 * KIB), rel=1e-12)
    assert L1_REUSE_SHARE == pytest.approx(156.77 / 184, rel=1e-3)


@pytest.mark.parametrize("part, device, blocks", [("v100", "V100-PCIe-32GB", 8), ("l40", "L40", 8), ("a40", "A40", 6)])
def test_kept_l1_agrees_with_the_l1_sweeps(part, device, blocks):
    # gpu-cache runs one block of 256 threads per SM without shared memory, but the occupancy the
    # driver plans for is that kernel's (8 blocks of 256 threads; 6 on the A40's 1536 threads):
    # the measured 90 % onset lies within 10 % below the kept L1, never above it
    onset = measured_part(part).l1.onset_bytes
    kept = l1_reuse_capacity(load_device(device).l1, blocks)
    assert 0.9 * kept <= onset <= kept
