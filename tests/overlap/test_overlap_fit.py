"""The fit of the overlap model's two fitted constants across kernels (warpspeed.calibration.overlap_fit)
and the kernels it was not fitted on (warpspeed.validation.kernel_transfer)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from warpspeed.calibration.overlap_fit import EXPONENTS, REQUEST_RATES, fit_overlap, leave_one_kernel_out, mape_percent
from warpspeed.errors import WarpspeedError
from warpspeed.overlap.combine import OverlapResult, combine
from warpspeed.overlap.params import CORE_OVERLAP_EXPONENT


def _components(wavefronts: float, requests: float, dram_s: float, exponent: float = 3.0,
                rate: float = 0.7) -> OverlapResult:
    """A configuration whose L1 time is ``max(wavefronts, requests / rate)`` cycles at 1 Hz x 1 SM."""
    return OverlapResult(fp=0.0, l2=0.0, further=(), dram=dram_s, l1_wavefront_cycles=wavefronts, l1_requests_per_lup=requests,
                         drain_cycles_per_lup=0.0, requests_limited=True, dispatch_seconds_per_lup=0.0, sm_hz=1.0,
                         launch_overhead_s=0.0, lups=1, l1_data_wavefronts_per_lup=wavefronts, l1_capacity_miss_rate=0.0,
                         l2_load_bytes_per_lup=0.0, l2_store_bytes_per_lup=0.0, dram_load_bytes_per_lup=0.0,
                         dram_store_bytes_per_lup=0.0, dram_sector_cost=1.0, dram_bandwidth_gb_s=1.0,
                         overlap_exponent=exponent, core_exponent=CORE_OVERLAP_EXPONENT, miss_requests_per_cycle=rate)


def test_combine_by_hand():
    """L1 3 cycles vs 4 / 0.5 = 8 request cycles: 8 s; DRAM 6 s; smooth max p = 2: 10 s."""
    seconds, t, l1_cycles, limiter = combine(_components(3.0, 4.0, 6.0), 2.0, 0.5)
    assert l1_cycles == 8.0 and t["l1"] == 8.0 and seconds == pytest.approx(10.0) and limiter == "l1_requests"
    made = _components(3.0, 4.0, 6.0, 2.0, 0.5)  # the record combines its own constants when made
    assert made.l1_cycles_per_lup == 8.0 and made.lups_per_s == pytest.approx(0.1) and made.limiter == "l1_requests"


def test_the_details_are_the_fields_in_their_order():
    """as_dict: every field under its name (the inputs of combine alone left out), the time
    components as rates and per 10^9 lups, dispatch per 10^9 lups; L1 4 / 0.5 = 8 s, DRAM 6 s."""
    d = _components(3.0, 4.0, 6.0, 2.0, 0.5).as_dict()
    assert list(d) == ["lups_per_s", "limiter", "limits", "seconds_per_glup", "l1_data_wavefronts_per_lup",
                       "l1_requests_per_lup", "l1_cycles_per_lup", "drain_cycles_per_lup", "l1_capacity_miss_rate",
                       "l2_load_bytes_per_lup", "l2_store_bytes_per_lup", "dram_load_bytes_per_lup",
                       "dram_store_bytes_per_lup", "overlap_exponent", "core_exponent", "dram_sector_cost",
                       "dispatch_seconds_per_glup", "launch_overhead_s", "dram_bandwidth_gb_s"]
    assert d["limits"] == {"fp": math.inf, "l1": 1 / 8, "l2": math.inf, "dram": 1 / 6}
    assert d["seconds_per_glup"] == {"fp": 0.0, "l1": 8e9, "l2": 0.0, "dram": 6e9}
    assert d["l1_requests_per_lup"] == 4.0 and d["dispatch_seconds_per_glup"] == 0.0


def _kernel(p: float, rate: float, n: int, seed: int) -> list[tuple[OverlapResult, float]]:
    """Configurations "measured" with known constants: the rate the model gives with them."""
    out = []
    for i in range(n):
        c = _components(1.0 + (i * 7 + seed) % 5, 0.5 + (i * 3 + seed) % 4, 2.0 + (i * 5 + seed) % 6)
        out.append((c, 1.0 / combine(c, p, rate)[0]))
    return out


def test_the_fit_finds_the_constants_that_made_the_data():
    p, r = EXPONENTS[2], REQUEST_RATES[3]
    kernels = {f"k{s}": _kernel(p, r, 12, s) for s in range(4)}
    fit = fit_overlap(kernels)
    assert (fit.exponent, fit.requests_per_cycle) == (p, r)
    assert all(v == pytest.approx(0.0, abs=1e-9) for v in fit.mape_percent.values())
    fit_all, left = leave_one_kernel_out(kernels)
    assert fit_all == fit and all(lo.left_out_percent == pytest.approx(0.0, abs=1e-9) for lo in left)


def test_a_kernel_left_out_gets_the_others_constants():
    """Two kernels made with one pair, a third with another: leaving the third out fits the first
    pair, and the third's left-out error is its error under that pair (not zero)."""
    a, b = (EXPONENTS[1], REQUEST_RATES[1]), (EXPONENTS[4], REQUEST_RATES[5])
    kernels = {"a1": _kernel(*a, 10, 1), "a2": _kernel(*a, 10, 2), "b": _kernel(*b, 10, 3)}
    _, left = leave_one_kernel_out(kernels)
    third = next(lo for lo in left if lo.kernel == "b")
    assert (third.left_out_exponent, third.left_out_requests_per_cycle) == a
    assert third.left_out_percent == pytest.approx(mape_percent(kernels["b"], *a)) and third.left_out_percent > 1.0


def test_too_few_kernels_are_refused():
    with pytest.raises(WarpspeedError, match="at least two kernels"):
        fit_overlap({"one": _kernel(3.0, 0.7, 3, 0)})
    with pytest.raises(WarpspeedError, match="at least three kernels"):
        leave_one_kernel_out({"a": _kernel(3.0, 0.7, 3, 0), "b": _kernel(3.0, 0.7, 3, 1)})


@pytest.fixture(scope="module")
def transfer():
    from warpspeed.validation.kernel_transfer import kernel_transfer

    return kernel_transfer()


def test_the_shipped_constants_are_the_fit_on_the_six_kernels(transfer):
    assert (transfer.exponent, transfer.requests_per_cycle) == (transfer.fitted_exponent,
                                                                transfer.fitted_requests_per_cycle)
    assert len(transfer.kernels) == 6 and all(len(k.points) >= 20 for k in transfer.kernels)


def test_the_kernels_and_the_mechanisms_within_their_stated_errors(transfer):
    """The paper's workload within 10 % / 0.95 / 97 % (also left out); every other stencil within
    20 % MAPE left out; the two mechanism checks within 10 % (docs/overlap.md)."""
    by_name = {k.name: k for k in transfer.kernels}
    r4 = by_name["star3d-r4"]
    assert r4.mape_percent <= 10 and r4.spearman >= 0.95 and r4.best_share >= 0.97 and r4.left_out_percent <= 10
    for name in ("star3d-r4 float", "star3d-r1", "star2d-r1", "box3d-r1"):
        assert by_name[name].left_out_percent <= 20, name
    assert all(c.mape_percent <= 10 for c in transfer.checks)
