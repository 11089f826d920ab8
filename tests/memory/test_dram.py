"""DRAM volumes (warpspeed.memory.dram) against hand calculations."""

from __future__ import annotations

import dataclasses
import math

import pytest

from warpspeed.memory.addresses import compile_kernel
from warpspeed.memory.capacity import CapacityCurves, GompertzCurve, Provenance
from warpspeed.hardware.device import load_device
from warpspeed.memory.dram import dram_volumes
from warpspeed.errors import KernelError
from warpspeed.launch.geometry import analyze_launch
from warpspeed.memory.wave import FieldWaveVolumes, PerDim, WaveVolumes, wave_volumes
from warpspeed.kernel.builtin import copy_kernel, star_stencil

A100 = load_device("A100-SXM4-40GB")
TEST_PROVENANCE = Provenance(source="test", date="2026", device="none", method="chosen by hand")
E = math.e


def curves(**overrides):
    """Curves with easy numbers: by default a = 0 (never miss) everywhere."""
    never = GompertzCurve(0.0, 1.0, 1.0)
    chosen = {name: overrides.get(name, never)
              for name in ("l1_load", "x_layer", "y_layer", "z_layer", "l2_load", "l2_store")}
    return CapacityCurves(family="test", provenance=TEST_PROVENANCE, **chosen)


def test_copy_kernel_by_hand():
    """Copy with 32-wide blocks: 8 B load + 8 B store per lup, no overlap, no redundancy."""
    device = dataclasses.replace(A100, sms=1)
    kernel = copy_kernel((64, 16, 8))
    info = analyze_launch(kernel, device, (32, 4, 1))
    wave = wave_volumes(compile_kernel(kernel), info, device)
    # Even with curves that always miss, nothing is redundant and nothing overlaps.
    always = GompertzCurve(1.0, 1e-6, 1.0)  # m(o) = exp(-1e-6 exp(-o)) ~ 1
    result = dram_volumes(wave, {"src": 8.0, "dst": 0.0}, {"src": 0.0, "dst": 8.0}, device,
                          curves(x_layer=always, y_layer=always, z_layer=always, l2_load=always,
                                 l2_store=always))
    assert result.load_bytes_per_lup == pytest.approx(8.0)
    assert result.store_bytes_per_lup == pytest.approx(8.0)
    assert result.total_bytes_per_lup == pytest.approx(16.0)
    assert result.capacity_miss_bytes_per_lup == 0 and result.partial_store_read_bytes_per_lup == 0
    assert result.field("src").load_bytes_per_lup == pytest.approx(8.0)
    assert result.field("dst").store_bytes_per_lup == pytest.approx(8.0)


def hand_wave():
    """A wave of 1000 lups, one field 'a' (loads) and one field 'b' (stores), numbers chosen
    by hand: 20 B/lup compulsory load, 6 B/lup z overlap, 2 B/lup y overlap, 8 B/lup store."""
    zero = PerDim(0.0, 0.0, 0.0)
    a = FieldWaveVolumes(
        field="a", address_space="nd", load_lines=625, store_lines=0,
        compulsory_load_bytes_per_lup=20.0, compulsory_store_bytes_per_lup=0.0,
        overlap_lines=PerDim(0, 62.5, 187.5), overlap_bytes_per_lup=PerDim(0.0, 2.0, 6.0),
        layer_lines=zero, layer_volume_bytes=zero)
    b = FieldWaveVolumes(
        field="b", address_space="nd", load_lines=0, store_lines=250,
        compulsory_load_bytes_per_lup=0.0, compulsory_store_bytes_per_lup=8.0,
        overlap_lines=zero, overlap_bytes_per_lup=zero,
        layer_lines=zero, layer_volume_bytes=zero)
    return WaveVolumes(
        fields=(a, b), lups=1000, blocks=10, first_block=100, previous_lups=PerDim(1, 100, 1000),
        address_space="nd", granularity_bytes=32, l2_effective_bytes=1000,
        compulsory_load_bytes_per_lup=20.0, compulsory_store_bytes_per_lup=8.0,
        overlap_bytes_per_lup=PerDim(0.0, 2.0, 6.0), layer_volume_bytes=PerDim(100.0, 500.0, 1000.0),
        oversubscription=PerDim(0.1, 0.5, 1.0), allocated_bytes=500, l2_oversubscription=0.5)


def test_layer_hits_capacity_misses_and_partial_stores_by_hand():
    # z layer: (1, e^2, 2) at o_z = 1: m = exp(-e^2 * e^-2) = 1/e, h = 1 - 1/e = 0.632121.
    # y layer: (0.5, 1e-6, 1): m = 0.5 * exp(-1e-6 * e^-0.5) = 0.5 (to 1e-6), h = 0.5.
    # L2 loads: (0.4, e, 2) at o_L2 = 0.5: m = 0.4 * exp(-e * e^-1) = 0.4 / e = 0.147152.
    # L2 stores: (0.3, e, 2) at o_L2 = 0.5: m = 0.3 / e = 0.110364.
    chosen = curves(z_layer=GompertzCurve(1.0, E ** 2, 2.0), y_layer=GompertzCurve(0.5, 1e-6, 1.0),
                    l2_load=GompertzCurve(0.4, E, 2.0), l2_store=GompertzCurve(0.3, E, 2.0))
    # L2 -> L1 loads of 'a': 25 B/lup, 5 B/lup above the wave's 20 B/lup compulsory volume.
    # L1 -> L2 stores of 'b': 10 B/lup, 2 B/lup above the 8 B/lup compulsory volume.
    result = dram_volumes(hand_wave(), {"a": 25.0, "b": 0.0}, {"a": 0.0, "b": 10.0}, A100, chosen)
    h_z, h_y = 1 - 1 / E, 0.5
    m_load, m_store = 0.4 / E, 0.3 / E
    assert result.layer_hit_rate.z == pytest.approx(h_z, rel=1e-12)
    assert result.layer_hit_rate.y == pytest.approx(h_y, rel=1e-5)
    assert result.layer_hit_bytes_per_lup.z == pytest.approx(6 * h_z, rel=1e-12)  # 3.792727
    assert result.layer_hit_bytes_per_lup.y == pytest.approx(2 * h_y, rel=1e-5)  # 1.0
    assert result.layer_hit_bytes_per_lup.x == 0
    assert result.l2_redundant_load_bytes_per_lup == pytest.approx(5.0)
    assert result.capacity_miss_bytes_per_lup == pytest.approx(5 * m_load, rel=1e-12)  # 0.735759
    assert result.l2_redundant_store_bytes_per_lup == pytest.approx(2.0)
    assert result.partial_store_read_bytes_per_lup == pytest.approx(2 * m_store, rel=1e-12)  # 0.220728
    # 20 - 3.792727 - 1.0 + 0.735759 + 0.220728 = 16.163760
    expected_load = 20 - 6 * h_z - 2 * h_y + 5 * m_load + 2 * m_store
    assert expected_load == pytest.approx(16.16376, abs=1e-5)
    assert result.load_bytes_per_lup == pytest.approx(expected_load, rel=1e-6)
    # stores: the 8 B/lup compulsory plus the evicted partial sectors written back, 0.220728
    # (the reference code's memStoreV2 = memStoreV1 + memStoreEvicts): 8.220728
    assert result.store_bytes_per_lup == pytest.approx(8.220728, abs=1e-6)
    assert result.field("a").store_bytes_per_lup == 0.0
    # per field: the partial-store reads belong to 'b', everything else to 'a'
    assert result.field("b").load_bytes_per_lup == pytest.approx(2 * m_store, rel=1e-12)
    assert result.field("a").load_bytes_per_lup == pytest.approx(expected_load - 2 * m_store, rel=1e-6)


def test_star_stencil_with_perfect_layer_hits():
    """With curves that never miss, DRAM load = compulsory - sum of overlaps: every line the
    wave shares with its previous-neighbour sets hits (the sets' overlaps are checked against
    brute force in wave/test_wave.py)."""
    device = dataclasses.replace(A100, sms=3)
    kernel = star_stencil(3, 1, (40, 30, 20))
    info = analyze_launch(kernel, device, (16, 4, 2))
    wave = wave_volumes(compile_kernel(kernel), info, device)
    load = {f.field: f.compulsory_load_bytes_per_lup for f in wave.fields}
    store = {f.field: f.compulsory_store_bytes_per_lup for f in wave.fields}
    result = dram_volumes(wave, load, store, device, curves())
    src = wave.field("src")
    assert result.load_bytes_per_lup == pytest.approx(
        (src.load_lines - sum(src.overlap_lines)) * 32 / wave.lups, rel=1e-12)
    assert result.store_bytes_per_lup == pytest.approx(wave.field("dst").store_lines * 32 / wave.lups)
    assert sum(src.overlap_lines) > 0


def test_default_curves_come_from_the_device_family():
    result = dram_volumes(hand_wave(), {"a": 20.0, "b": 0.0}, {"a": 0.0, "b": 8.0}, A100)
    assert result.curves_family == "nvidia-ampere"
    # published z-layer curve (1, 37.1, 3.2) at o = 1: m = exp(-37.1 e^-3.2) = exp(-1.512278)
    assert result.layer_hit_rate.z == pytest.approx(1 - math.exp(-37.1 * math.exp(-3.2)), rel=1e-12)


def test_bad_volumes_are_refused():
    wave = hand_wave()
    with pytest.raises(KernelError, match="missing field\\(s\\) b"):
        dram_volumes(wave, {"a": 20.0}, {"a": 0.0, "b": 8.0}, A100, curves())
    with pytest.raises(KernelError, match="unknown field\\(s\\) c"):
        dram_volumes(wave, {"a": 20.0, "b": 0.0, "c": 1.0}, {"a": 0.0, "b": 8.0}, A100, curves())
    with pytest.raises(KernelError, match="finite number >= 0"):
        dram_volumes(wave, {"a": -1.0, "b": 0.0}, {"a": 0.0, "b": 8.0}, A100, curves())


def test_grid_average_applies_the_equations_to_the_averaged_wave():
    """Two classes of waves with 1000 lups each: 3 waves like hand_wave() and 1 wave with 24 B/lup
    compulsory load, 10 B/lup z overlap and o_z = 2. Averages: compulsory load (3 x 20 + 24) / 4
    = 21 B/lup, z overlap (3 x 6 + 10) / 4 = 7 B/lup, o_z = (3 x 1 + 2) / 4 = 1.25. With the z
    curve (1, e^2.5, 2): m(1.25) = exp(-e^2.5 e^-2.5) = 1/e, so 7 (1 - 1/e) B/lup hit and the
    DRAM load is 21 - 7 (1 - 1/e) = 21 - 4.42485 = 16.57515 B/lup (the y overlap, 2 B/lup,
    practically never hits: a = 1, b = 1e-6)."""
    from warpspeed.memory.wave import GridWaveVolumes, WaveClass, WaveClassVolumes

    one = hand_wave()
    a = dataclasses.replace(one.fields[0], compulsory_load_bytes_per_lup=24.0,
                            overlap_bytes_per_lup=PerDim(0.0, 2.0, 10.0))
    two = dataclasses.replace(one, fields=(a, one.fields[1]), compulsory_load_bytes_per_lup=24.0,
                              overlap_bytes_per_lup=PerDim(0.0, 2.0, 10.0),
                              oversubscription=PerDim(0.1, 0.5, 2.0))
    grid = GridWaveVolumes((WaveClassVolumes(WaveClass(0, 1, 3, 100, 10), one),
                            WaveClassVolumes(WaveClass(1, None, 1, 200, 10), two)))
    assert grid.waves == 4
    assert grid.compulsory_load_bytes_per_lup == pytest.approx(21.0)
    assert grid.oversubscription.z == pytest.approx(1.25)
    chosen = curves(z_layer=GompertzCurve(1.0, E ** 2.5, 2.0), y_layer=GompertzCurve(1.0, 1e-6, 1.0))
    result = dram_volumes(grid, {"a": 21.0, "b": 0.0}, {"a": 0.0, "b": 8.0}, A100, chosen)
    assert result.layer_hit_rate.z == pytest.approx(1 - 1 / E, rel=1e-12)
    assert result.load_bytes_per_lup == pytest.approx(21 - 7 * (1 - 1 / E), abs=1e-5)
    assert result.load_bytes_per_lup == pytest.approx(16.57515, abs=1e-5)
    assert result.store_bytes_per_lup == pytest.approx(8.0)
