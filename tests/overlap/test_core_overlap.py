"""The in-core time joined to the memory time by a smooth maximum (warpspeed.overlap.combine) and
the fit of its exponent on the gpu-roofline runs (warpspeed.calibration.core_overlap_fit)."""

from __future__ import annotations

import math

import pytest

from warpspeed.calibration.core_overlap_fit import EXPONENTS, at_clock, errors_percent, fit_stored, leave_one_part_out
from warpspeed.errors import WarpspeedError
from warpspeed.overlap.combine import OverlapResult, combine
from warpspeed.overlap.params import CORE_OVERLAP_EXPONENT


def _components(l1_cycles: float, dram_s: float, sm_s: float, fp_s: float = 0.0) -> OverlapResult:
    """One SM at 1 Hz: the first level's cycles are its seconds; no requests, drain or dispatch."""
    return OverlapResult(fp=fp_s, l2=0.0, further=(("sm", sm_s),), dram=dram_s, l1_wavefront_cycles=l1_cycles,
                         l1_data_wavefronts_per_lup=l1_cycles, l1_requests_per_lup=0.0, drain_cycles_per_lup=0.0,
                         l1_capacity_miss_rate=0.0, requests_limited=False, dispatch_seconds_per_lup=0.0,
                         sm_hz=1.0, launch_overhead_s=0.0, lups=1, l2_load_bytes_per_lup=0.0,
                         l2_store_bytes_per_lup=0.0, dram_load_bytes_per_lup=0.0, dram_store_bytes_per_lup=0.0,
                         overlap_exponent=3.0, core_exponent=CORE_OVERLAP_EXPONENT, miss_requests_per_cycle=1.0,
                         dram_sector_cost=1.0, dram_bandwidth_gb_s=1.0)


def test_equal_memory_and_core_times_by_hand():
    """DRAM 2 s, no L1, SM 2 s: memory (0^3 + 2^3)^(1/3) = 2; with r = 2: sqrt(2^2 + 2^2) = 2 sqrt 2."""
    seconds, t, _, limiter = combine(_components(0.0, 2.0, 2.0), 3.0, 1.0, 2.0)
    assert seconds == pytest.approx(2.0 * math.sqrt(2.0))
    assert t["sm"] == 2.0 and t["dram"] == 2.0


def test_l1_dram_and_core_by_hand():
    """L1 3, DRAM 4, p = 2: memory 5; SM 12, r = 2: 13 (two Pythagorean triples)."""
    assert combine(_components(3.0, 4.0, 12.0), 2.0, 1.0, 2.0)[0] == pytest.approx(13.0)


def test_infinite_exponent_is_the_plain_maximum():
    assert combine(_components(0.0, 2.0, 2.0), 3.0, 1.0, math.inf)[0] == pytest.approx(2.0)
    assert combine(_components(0.0, 2.0, 5.0), 3.0, 1.0, math.inf)[0] == pytest.approx(5.0)


def test_fp_level_stays_outside_the_smooth_maximum():
    """The FP pipes' own level (t_FP) joins by the plain maximum: 7 s beside memory 2 and SM 1."""
    c = _components(0.0, 2.0, 1.0, fp_s=7.0)
    assert combine(c, 3.0, 1.0, 2.0)[0] == pytest.approx(7.0)


def test_a_part_without_an_in_core_time_is_unchanged():
    c = _components(3.0, 4.0, 0.0)
    assert combine(c, 2.0, 1.0, 2.0)[0] == pytest.approx(5.0)


def test_at_clock_scales_the_clocked_times_only():
    c = _components(6.0, 4.0, 2.0, fp_s=1.0)
    half = at_clock(c, 0.5)
    assert (half.fp, dict(half.further)["sm"], half.dram, half.sm_hz) == (2.0, 4.0, 4.0, 0.5)
    assert combine(half, 50.0, 1.0, 50.0)[2] == 6.0  # first-level cycles do not change, their seconds do
    assert combine(half, 50.0, 1.0, 50.0)[1]["l1"] == pytest.approx(12.0)


def _part(r: float, seed: int) -> list[tuple[int, OverlapResult, float]]:
    """Loop lengths "measured" with exponent r: the rate the model gives with it."""
    out = []
    for i in range(10):
        c = _components(0.5, 2.0 + seed * 0.1, 0.4 * (i + 1))
        out.append((i, c, 1.0 / combine(c, 3.0, 1.0, r)[0]))
    return out


def test_the_fit_finds_the_exponent_that_made_the_data():
    r = EXPONENTS[10]
    fit = leave_one_part_out({f"p{s}": _part(r, s) for s in range(3)}, 3.0, 1.0)
    assert fit.exponent == r
    assert all(p.left_out_exponent == r and p.left_out_percent == pytest.approx(0.0, abs=1e-9) for p in fit.parts)
    assert all(p.max_percent > 1.0 for p in fit.parts)  # the plain maximum is off where the times meet


def test_leaving_one_out_needs_three_parts():
    with pytest.raises(WarpspeedError, match="at least three parts"):
        leave_one_part_out({"a": _part(4.0, 0), "b": _part(4.0, 1)}, 3.0, 1.0)
    with pytest.raises(WarpspeedError, match="no loop lengths"):
        errors_percent([], 3.0, 4.0, 1.0)


def test_the_shipped_exponent_is_the_fit_on_the_stored_runs():
    """The constant is what the documented fit gives, and with each part left out the other parts'
    exponent predicts them better on the mean than the plain maximum (the gpu-roofline runs of the
    A100, A40, L40; the A40 alone is predicted better by the maximum: 1.7 against 2.1 %)."""
    fit = fit_stored()
    assert fit.exponent == CORE_OVERLAP_EXPONENT
    left_out = sum(p.left_out_percent for p in fit.parts) / len(fit.parts)
    assert left_out < sum(p.max_percent for p in fit.parts) / len(fit.parts)


def test_the_first_level_and_the_fp_pipes_overlap_on_the_a100(a100):
    """gpu-strides on the A100: where the loop's FMAs need a quarter or more of a load's cycles
    (float and double rows of one wavefront per half or whole warp), the measured cycles are the
    larger of the measured L1 counters and the FP cycles, not their sum (which is 25 % too slow)."""
    from warpspeed.validation.strides import predict_row, read_strides_csv
    from tests.paths import ROOT

    rows = read_strides_csv(ROOT / "fits" / "data" / "public" / "gpu-strides" / "a100.csv")
    checked = 0
    for row in rows:
        fp = predict_row(row, a100).fp_cycles
        l1 = max(row.data_pipe_wavefronts, row.tag_wavefronts)
        if fp < 0.2 * row.cycles:
            continue
        checked += 1
        assert max(l1, fp) == pytest.approx(row.cycles, rel=0.03)
        assert (l1 + fp) / row.cycles > 1.2
    assert checked >= 9
