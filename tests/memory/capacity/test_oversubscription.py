"""Oversubscription factors, each by the definition of the code its capacity curve comes from
(te42kyfo/warpspeed, warpspeed/predict_metrics.py, DerivedMetrics, commit 2ad0722c; the x and
y curve: commit c214074), worked by hand for a copy kernel on the A100.

Copy ``dst[x, y, z] = src[x, y, z]`` of doubles on 64 x 16 x 8 cells, block 32 x 4 x 1 (grid
2 x 4 x 8, a block plane P = 8 blocks). Both fields start 256 B into their allocation and a row
holds 64 doubles = 512 B = 16 sectors of 32 B, so a block row of 32 cells is 256 B: two 128 B
lines or eight sectors, aligned. One SM with at most 4 blocks per SM: 4 blocks per wave, half a
plane; 64 blocks = 16 waves, none across a plane, each across one row boundary (one class).
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from warpspeed.hardware.device import load_device
from warpspeed.kernel.builtin import copy_kernel
from warpspeed.memory.capacity.terms import (
    band_oversubscription,
    l1_oversubscription,
    l2_oversubscription,
    layer_oversubscription,
)
from warpspeed.predict import predict

A100 = load_device("A100-SXM4-40GB")
DEVICE = dataclasses.replace(A100, sms=1, max_blocks_per_sm=4)
KIB, MIB = 1024, 1024 * 1024
L1 = 192 * KIB  # A100 L1 (A100-SXM4-40GB.toml)
L2 = 20 * MIB  # A100 effective L2


@pytest.fixture(scope="module")
def prediction():
    return predict(copy_kernel((64, 16, 8)), DEVICE, (32, 4, 1))


def test_l1_oversubscription_is_one_block_over_the_geometric_mean(prediction):
    """One block loads 4 src rows of 256 B = 8 lines of 128 B = 1024 B. Reference definition:
    1024 / sqrt(192 KiB x 128 KiB) = 1024 / (2^16.5 sqrt(3)) = 0.0063789; the blocks per SM do
    not enter (the earlier definition, 4 blocks x 1024 B / 192 KiB = 0.0208, was 3.27x larger).
    The four resident blocks reserve 4 KB of shared memory, so the driver carves out 8 KB and the
    launch keeps 184 KiB of L1: the function takes that kept L1."""
    assert prediction.footprint.l1_alloc_bytes_per_block == 1024
    expected = 1024 / (2 ** 16.5 * math.sqrt(3))
    assert expected == pytest.approx(0.0063789, rel=1e-4)
    assert prediction.l1_oversubscription == pytest.approx(expected, rel=1e-12)
    assert l1_oversubscription(1024, L1 - 8 * KIB) == pytest.approx(expected, rel=1e-12)


def test_layer_oversubscriptions_are_previous_set_plus_wave_loads(prediction):
    """The representative wave is blocks 28..31: plane z = 3, rows y = 8..15, all x (the wave
    nearest the middle that starts after the first row of its plane). Its loads L(W): 8 src
    rows x 16 sectors = 128 sectors.

    * P_z = blocks 20..27: plane 2 rows 8..15 and plane 3 rows 0..7, 16 rows of src and dst:
      512 sectors, none of them in L(W): |A(P_z) ∪ L(W)| = 640 sectors = 20 480 B,
      o_z = 20 480 / 20 MiB = 1/1024 (the z curve's definition, commit 2ad0722).
    * P_y = blocks 26, 27: plane 3 rows 4..7, 4 rows x 2 fields x 16 = 128 sectors:
      256 sectors = 8192 B; P_x = block 27: plane 3 rows 4..7, x 32..63: 4 x 2 x 8 = 64
      sectors: 192 sectors = 6144 B (the layer volumes, reported, no longer an oversubscription).
    * The x and y curve (the 2022 y curve) takes the y band: the wave spans w_y = ceil(4 / 2)
      = 2 block rows, so the band is the 4 blocks 24..27 before it (plane 3 rows 0..7), and
      there is no x band (the wave fills its rows). It loads 8 src rows x 16 = 128 sectors and
      stores 8 dst rows x 16 = 128 sectors: 256 sectors = 8192 B, 8192 / 20 MiB = 1/2560 =
      3.9e-4, below the source's lower bound 0.01: o_x = o_y = 0.01."""
    wave = prediction.wave
    assert len(wave.classes) == 1 and wave.classes[0].wave_class.first_block == 28
    assert tuple(wave.layer_volume_bytes) == (6144.0, 8192.0, 20480.0)
    assert wave.band_volume_bytes == 8192.0
    assert tuple(wave.cached_bytes) == (8192.0, 8192.0, 20480.0)
    assert wave.oversubscription.z == pytest.approx(1 / 1024, rel=1e-12)
    assert wave.oversubscription.y == wave.oversubscription.x == 0.01
    assert layer_oversubscription(20480, L2) == pytest.approx(1 / 1024, rel=1e-12)


def test_band_oversubscription_is_bounded_as_in_its_source():
    """min(10, max(0.01, V / 20 MiB)) and 0.1 for an empty band (te42kyfo/warpspeed,
    predict_metrics.py, rover0, commit c214074): 1 MiB -> 0.05, 100 KiB -> 0.01 (0.00488
    clamped), 400 MiB -> 10 (20 clamped), 0 -> 0.1."""
    assert band_oversubscription(MIB, L2) == pytest.approx(0.05, rel=1e-12)
    assert band_oversubscription(100 * KIB, L2) == 0.01
    assert band_oversubscription(400 * MIB, L2) == 10.0
    assert band_oversubscription(0, L2) == 0.1


def test_l2_oversubscription_is_the_wave_volume_over_the_geometric_mean(prediction):
    """The wave's 4 blocks x 128 cells load 4096 B and store 4096 B: 8192 B over
    sqrt(20 MiB x 4 MiB) = sqrt(80) MiB = 9 378 954 B gives 8.7344e-4 (the earlier definition,
    the wave's 128 B lines over 20 MiB, gave 3.9e-4)."""
    expected = 8192 / (math.sqrt(80) * MIB)
    assert expected == pytest.approx(8.7344e-4, rel=1e-4)
    assert prediction.wave.l2_oversubscription == pytest.approx(expected, rel=1e-12)
    assert prediction.dram.l2_oversubscription == pytest.approx(expected, rel=1e-12)
    assert l2_oversubscription(8192, L2) == pytest.approx(expected, rel=1e-12)
