"""The power model: hand-derived powers, invariants, the calibration on public measurements."""

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from warpspeed.hardware.device import load_device
from warpspeed.power import activity, board_power, power_at, power_params
from warpspeed.power.calibrate import Run, design, fit_family, read_runs
from warpspeed.power.model import Activity, active_sms
from warpspeed.power.params import PowerParameterError, PowerParams

PARAMS = PowerParams(device="test", family="test", sms=100, reference_clock_mhz=1000.0, power_limit_w=400.0,
                     lane_op_j=10e-12, dram_sector_j=2e-9, l2_sector_j=1e-9, l1_sector_j=0.2e-9,
                     first_lane_w=20.0, add_lane_w=1.0, idle_sm_w=0.5, constant_w=30.0, v_min_rel=0.0,
                     provenance={})
ACT = Activity(lane_ops=50.0, l1_sectors=4.0, l2_sectors=2.0, dram_sectors=0.5, active_lanes=32.0, active_sms=100.0)


def test_power_by_hand():
    """R = 1e11 lups/s at the reference clock: compute 1e11 x 50 x 10 pJ = 50 W; L1 1e11 x 4 x 0.2 nJ
    = 80 W; L2 1e11 x 2 x 1 nJ = 200 W; DRAM 1e11 x 0.5 x 2 nJ = 100 W; static 20 + 31 x 1 = 51 W;
    no idle SM; constant 30 W: 511 W."""
    b = power_at(ACT, PARAMS, 1e11, 1000.0)
    assert b.components == pytest.approx({"compute": 50, "l1": 80, "l2": 200, "dram": 100, "static": 51,
                                          "idle_sm": 0, "constant": 30})
    assert b.watts == pytest.approx(511) and b.lups_per_joule == pytest.approx(1e11 / 511)


def test_half_the_clock_by_hand():
    """At 500 MHz, s = 0.5: core energies x 0.25, static and idle x 0.5, DRAM and constant as they
    are: 12.5 + 20 + 50 + 100 + 25.5 + 0 + 30 = 238 W at the same rate."""
    assert power_at(ACT, PARAMS, 1e11, 500.0).watts == pytest.approx(238.0)


def test_idle_sms_draw_idle_power_only():
    """A grid that occupies 40 of 100 SMs: static x 0.4 = 20.4 W, 60 idle SMs x 0.5 W = 30 W."""
    b = power_at(replace(ACT, active_sms=40.0), PARAMS, 1e11, 1000.0)
    assert b.components["static"] == pytest.approx(20.4) and b.components["idle_sm"] == pytest.approx(30.0)
    idle = power_at(replace(ACT, active_sms=0.0), PARAMS, 1e-30, 1000.0)
    assert idle.watts == pytest.approx(30.0 + 100 * 0.5)


def test_active_sms_by_hand():
    """1000 blocks, 2 per SM, 108 SMs: 4 full waves of 216 and a last wave of 136 blocks on 68 SMs:
    (4 x 108 + 68) / 5 = 100."""
    assert active_sms(1000, 2, 108) == pytest.approx(100.0)
    assert active_sms(50, 2, 108) == 25


def test_invariants():
    limits = {"fp": 3e11, "l1": 3e11, "l2": 3e11, "dram": 1e11}
    watts = [board_power(ACT, PARAMS, 1e11, limits, 1000.0, f).watts for f in (400, 600, 800, 1000)]
    assert watts == sorted(watts)  # lower clock, lower power
    more_dram = replace(ACT, dram_sectors=1.0)
    assert power_at(more_dram, PARAMS, 1e11, 1000.0).watts > power_at(ACT, PARAMS, 1e11, 1000.0).watts


def test_power_limit_throttles_the_clock():
    """FP-bound at 1000 MHz with 511 W > a 300 W limit: the clock drops until the power is 300 W."""
    limits = {"fp": 1e11, "l1": 5e11, "l2": 5e11, "dram": 5e11}
    b = board_power(ACT, replace(PARAMS, power_limit_w=300.0), 1e11, limits, 1000.0)
    assert b.throttled and b.watts == pytest.approx(300.0, rel=1e-6) and b.clock_mhz < 1000
    assert b.lups_per_s == pytest.approx(1e11 * b.clock_mhz / 1000)


def test_memory_bound_rate_holds_at_lower_clocks():
    limits = {"fp": 4e11, "l1": 4e11, "l2": 4e11, "dram": 1e11}
    assert board_power(ACT, PARAMS, 1e11, limits, 1000.0, 500.0).lups_per_s == pytest.approx(1e11)
    assert board_power(ACT, PARAMS, 1e11, limits, 1000.0, 200.0).lups_per_s == pytest.approx(0.8e11)


def test_fit_recovers_known_parameters(a100):
    """Synthetic runs from known energies (8 pJ per lane op, 1.5 nJ per sector, 60 W static, 40 W
    constant) over inner loops and two clocks; the fit returns them."""
    runs = [Run(its, f, 0.0, None) for its in (0, 8, 24, 56, 120, 400) for f in (1410.0, 1100.0)]
    a = design(a100, runs)
    truth = np.array([8e-12, 1.5e-9, 60.0, 40.0])
    runs = [replace(r, watts=float(w)) for r, w in zip(runs, a @ truth)]
    fit = fit_family(a100, runs, "synthetic")
    assert fit.family["dynamic"]["lane_op_j"] == pytest.approx(8e-12, rel=1e-3)
    assert fit.family["dynamic"]["dram_sector_j"] == pytest.approx(1.5e-9, rel=1e-3)
    assert fit.family["static"]["constant_w"] == pytest.approx(40.0, rel=1e-3)
    assert fit.max_error < 1e-3


@pytest.mark.parametrize("device, part", [("A100-SXM4-40GB", "a100-40"), ("A40", "a40"), ("L40", "l40")])
def test_calibration_error_per_point(device, part):
    """Every stored run of the public measurements within 10 % of the fitted model."""
    runs = read_runs(Path(__file__).resolve().parent.parent / "fits" / "data" / "public" / "gpu-roofline" / f"{part}.csv")
    fit = fit_family(load_device(device), runs, part)
    assert fit.max_error <= 0.10 and len(runs) >= 100


def test_a100_shape_memory_bound_balance_fp_bound(a100):
    """The A100 at 1410 MHz draws about 230 W memory-bound, about 300 W near the balance point and
    about 200 W FP-bound (gpu-benches gpu-roofline/alex_a100_40.txt: 227-239 W at 0 FMAs,
    284-309 W at 40-56, 181-200 W at 400-464)."""
    from warpspeed.models import estimate_energy
    from warpspeed.power.benchmark import roofline_benchmark
    from warpspeed.predict import predict

    watts = {its: estimate_energy(predict(roofline_benchmark(its), a100, (256, 1, 1))).watts for its in (0, 48, 440)}
    assert 210 <= watts[0] <= 250 and 280 <= watts[48] <= 330 and 175 <= watts[440] <= 215
    assert watts[48] > watts[0] > watts[440]


def test_trace_activity(a100):
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.predict import predict

    p = predict(star_stencil(3, 1, (256, 128, 64)), a100, (32, 8, 4), (1, 2, 1))
    act = activity(p.trace())
    assert act.dram_sectors == pytest.approx((p.dram.load_bytes_per_lup + p.dram.store_bytes_per_lup) / 32)
    assert act.lane_ops == pytest.approx(44 / 2)  # the derived stream: 44 instructions for 2 cells
    # 8 x 8 x 16 = 1024 blocks, 2 per SM: 4 waves of 216 on 108 SMs, then 160 blocks on 80 SMs
    assert act.active_lanes == 32 and math.isclose(act.active_sms, (4 * 108 + 80) / 5)


def test_devices_without_power_parameters_say_so():
    with pytest.raises(PowerParameterError, match="no power-model parameters for V100"):
        power_params(load_device("V100-PCIe-32GB"))
