"""Volta's L1 curve from the pointer chase: the half-retention sizes read off the stored gpu-benches
rows by hand, the stretch of the A100 curve they give, and the Volta file that holds it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from warpspeed.calibration.l1_retention import (
    hit_share,
    l1_curve_stretch,
    retention,
    stretched_slope,
)
from warpspeed.errors import FitError
from warpspeed.memory.capacity.files import load_curves

KiB = 1024


def _half(d0: float, h0: float, d1: float, h1: float) -> float:
    return d0 + (h0 - 0.5) / (h0 - h1) * (d1 - d0)


def test_half_retention_sizes_by_hand():
    # gpu-latency/v100.txt @ a7dc559: L1 ~30 cycles (rows to 64 kB), L2 ~215 (rows from 196 kB);
    # 130 kB: 89.5 cycles, h = (215 - 89.5) / 185 = 0.678; 144 kB: 147.1, h = 0.367
    v_half = _half(130, (215 - 89.5) / 185, 144, (215 - 147.1) / 185)
    # gpu-latency/a100_40.txt @ a7dc559: L1 ~36.1 cycles, L2 ~213.0 (rows from 291 kB);
    # 160 kB: 79.5 cycles, h = 0.755; 177 kB: 153.2, h = 0.338
    a_half = _half(160, (213 - 79.5) / 176.9, 177, (213 - 153.2) / 176.9)
    assert (v_half, a_half) == pytest.approx((138.0, 170.4), abs=0.2)
    v, a = retention("v100"), retention("a100-40gb")
    assert v.half_bytes / KiB == pytest.approx(v_half, rel=0.003)
    assert a.half_bytes / KiB == pytest.approx(a_half, rel=0.003)
    # kept L1: the V100's whole 128 KiB, the A100's 192 - 8 KiB carveout
    assert (v.kept_l1_bytes, a.kept_l1_bytes) == (128 * KiB, 184 * KiB)
    assert v.ratio == pytest.approx(v_half / 128, rel=0.003) and v.ratio > 1
    assert a.ratio == pytest.approx(a_half / 184, rel=0.003) and a.ratio < 1


def test_stretch_and_the_volta_file():
    stretch = (138.0 / 128) / (170.4 / 184)  # 1.164, from the rows above
    assert l1_curve_stretch("v100") == pytest.approx(stretch, rel=0.003)
    volta, ampere = load_curves("nvidia-volta").l1_load, load_curves("nvidia-ampere").l1_load
    # the A100 curve (Ernst et al. 2023 reference code: a 0.66, b 6.77, c 1.45) keeps its a and b
    assert (ampere.a, ampere.b, ampere.c) == (0.66, 6.77, 1.45)
    assert (volta.a, volta.b) == (ampere.a, ampere.b)
    assert volta.c == pytest.approx(stretched_slope(ampere.c, l1_curve_stretch("v100")), abs=1e-4)
    assert volta.c == pytest.approx(1.45 / stretch, rel=0.003)
    # m_Volta(o) = m_A100(o / stretch): at o = stretch the Volta curve misses as the A100's at 1,
    # 0.66 exp(-6.77 exp(-1.45)) = 0.1349
    assert volta.miss_rate(l1_curve_stretch("v100")) == pytest.approx(0.66 * math.exp(-6.77 * math.exp(-1.45)),
                                                                      rel=1e-3)
    assert float(volta.miss_rate(1.0)) < float(ampere.miss_rate(1.0))


def test_hit_share_is_clipped():
    assert hit_share(np.array([10.0, 30.0, 120.0, 215.0, 300.0]), 30.0, 215.0).tolist() == \
        pytest.approx([1.0, 1.0, 95 / 185, 0.0, 0.0])


def test_a_part_without_rows_is_a_one_line_error():
    with pytest.raises(FitError, match="no gpu-latency-l1 data for part 'h200'"):
        retention("h200")


def test_the_other_families_by_hand():
    # gpu-latency/a100_80.txt @ a7dc559: L1 36.3, L2 ~210.7; 160 kB: 79.9 cycles, 177 kB: 149.4:
    # the second A100 repeats the first one's ratio (170.6 / 184 against 170.4 / 184)
    a80 = _half(160, (210.7 - 79.9) / (210.7 - 36.1), 177, (210.7 - 149.4) / (210.7 - 36.1))
    # gpu-latency/h100_pcie.txt @ a7dc559: L1 34.2, L2 ~265.7; 239 kB: 134.2, 264 kB: 205.8;
    # kept: 256 KiB less the 8 KiB carveout of the block's 1 KB reserved shared memory
    h100 = _half(239, (265.7 - 134.2) / (265.7 - 34.2), 264, (265.7 - 205.8) / (265.7 - 34.2))
    # gpu-latency/l40.txt @ 5ff059f: L1 36.1, L2 ~276.5; 95 kB: 116.6, 101 kB: 167.0; kept 128 - 8 KiB
    l40 = _half(95, (276.5 - 116.6) / (276.5 - 36.1), 101, (276.5 - 167.0) / (276.5 - 36.1))
    assert (a80, h100, l40) == pytest.approx((170.6, 244.5, 99.7), abs=0.2)
    for part, half, kept in (("a100-80gb", a80, 184), ("h100-pcie", h100, 248), ("l40", l40, 120)):
        r = retention(part)
        assert r.kept_l1_bytes == kept * KiB
        assert r.half_bytes / KiB == pytest.approx(half, rel=0.003)
    assert l1_curve_stretch("a100-80gb") == pytest.approx(1.0, abs=0.005)
    # the family files hold the A100 curve stretched by their part's chase
    for family, part, half, kept in (("nvidia-hopper", "h100-pcie", h100, 248), ("nvidia-ada", "l40", l40, 120)):
        curve = load_curves(family).l1_load
        stretch = (half / kept) / (170.4 / 184)
        assert (curve.a, curve.b) == (0.66, 6.77)
        assert curve.c == pytest.approx(1.45 / stretch, rel=0.004)
        assert curve.c == pytest.approx(stretched_slope(1.45, l1_curve_stretch(part)), abs=1e-4)
    # Hopper's L1 holds an overflowing chain longer than the A100's, Ada's shorter
    assert l1_curve_stretch("h100-pcie") > 1.03 and l1_curve_stretch("l40") < 0.93
