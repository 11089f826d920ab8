"""The power model: hand-derived powers, invariants, the calibration on public measurements."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from warpspeed.hardware.device import load_device
from warpspeed.errors import WarpspeedError
from warpspeed.power import activity, board_power, power_at, power_params, static_category, static_power
from warpspeed.calibration.power import Run, clock_power_fit, design, fit_family, read_runs
from warpspeed.power.board import Activity, active_sms
from warpspeed.power.params import CORE_COMPONENTS, PowerParameterError, PowerParams
from warpspeed.trace.build import build_trace
from tests.paths import ROOT

ZERO_CORE = dict.fromkeys(CORE_COMPONENTS, 0.0)
PARAMS = PowerParams(device="test", family="test", sms=100, reference_clock_mhz=1000.0, power_limit_w=400.0,
                     core_j={**ZERO_CORE, "fp64": 10e-12}, dram_sector_j=2e-9, l2_sector_j=1e-9, l1_sector_j=0.2e-9,
                     static_w={"int_fp_dp": (20.0, 1.0)}, static_model="linear", idle_sm_w=0.5, constant_w=30.0,
                     v_min_rel=0.0, provenance={})
ACT = Activity(core={**ZERO_CORE, "fp64": 50.0}, l1_sectors=4.0, l2_sectors=2.0, dram_sectors=0.5, active_lanes=32.0,
               active_sms=100.0, category="int_fp_dp")


def test_power_by_hand():
    """R = 1e11 lups/s at the reference clock: FP64 1e11 x 50 x 10 pJ = 50 W; L1 1e11 x 4 x 0.2 nJ
    = 80 W; L2 1e11 x 2 x 1 nJ = 200 W; DRAM 1e11 x 0.5 x 2 nJ = 100 W; static 20 + 31 x 1 = 51 W;
    no idle SM; constant 30 W: 511 W."""
    b = power_at(ACT, PARAMS, 1e11, 1000.0)
    assert b.components == pytest.approx({**ZERO_CORE, "fp64": 50, "l1": 80, "l2": 200, "dram": 100, "static": 51,
                                          "idle_sm": 0, "constant": 30})
    assert b.watts == pytest.approx(511) and b.lups_per_joule == pytest.approx(1e11 / 511)


def test_half_the_clock_by_hand():
    """At 500 MHz, s = 0.5: core energies x 0.25, static and idle x 0.5, DRAM and constant as they
    are: 12.5 + 20 + 50 + 100 + 25.5 + 0 + 30 = 238 W at the same rate."""
    assert power_at(ACT, PARAMS, 1e11, 500.0).watts == pytest.approx(238.0)


def test_idle_sms_draw_idle_power_only():
    """A grid that occupies 40 of 100 SMs: static x 0.4 = 20.4 W, 60 idle SMs x 0.5 W = 30 W. With
    no SM active the board draws its constant power only."""
    b = power_at(replace(ACT, active_sms=40.0), PARAMS, 1e11, 1000.0)
    assert b.components["static"] == pytest.approx(20.4) and b.components["idle_sm"] == pytest.approx(30.0)
    idle = power_at(replace(ACT, active_sms=0.0), PARAMS, 1e-30, 1000.0)
    assert idle.watts == pytest.approx(30.0)


def test_volta_static_floor_by_hand():
    """AccelWattch's Quadro GV100 values (artifact), linear model, int+FP+DP at 32 lanes: 80 SMs
    19.10017723 + 31 x 0.726863055 = 41.6329 W; 40 SMs half of it, 20.8165 W, and 40 idle SMs x
    0.28279166 = 11.3117 W; with the constant 32.32522272 W at 80 SMs 73.9582 W. The geometric-mean
    category at 32 lanes: 17.21745077 + 31 x 0.650630555 = 37.3870 W. No SM active: 32.3252 W."""
    v100 = power_params(load_device("V100-PCIe-32GB"))  # 80 SMs, the family's reference clock
    act = Activity(core=dict(ZERO_CORE), l1_sectors=0, l2_sectors=0, dram_sectors=0, active_lanes=32.0,
                   active_sms=80.0, category="int_fp_dp")
    f = v100.reference_clock_mhz
    assert power_at(act, v100, 1.0, f).components["static"] == pytest.approx(41.6329, abs=1e-4)
    half = power_at(replace(act, active_sms=40.0), v100, 1.0, f).components
    assert half["static"] == pytest.approx(20.8165, abs=1e-4) and half["idle_sm"] == pytest.approx(11.3117, abs=1e-4)
    assert power_at(act, v100, 1e-30, f).watts == pytest.approx(73.9582, abs=1e-4)
    assert static_power(v100, "geomean", 32) == pytest.approx(37.3870, abs=1e-4)
    assert power_at(replace(act, active_sms=0.0), v100, 1e-30, f).watts == pytest.approx(32.3252, abs=1e-4)


@pytest.mark.parametrize("lanes, half_warp, linear", [(16, 40.0, 24.516), (17, 25.0, None), (24, 32.0, None),
                                                      (32, 40.0, 40.0), (1, 10.0, 10.0)])
def test_half_warp_and_linear_static(lanes, half_warp, linear):
    """First lane 10 W, 32 lanes 40 W (add 30 / 31 per lane). Half-warp model (eq 5, add_hw = 30 / 15
    = 2): y <= 16: 10 + 2 (y - 1), so 40 at 16; y > 16: 10 + 2 (y / 2 - 1): 25 at 17, 32 at 24, 40 at 32.
    Linear (eq 4): 10 + 15 x 30 / 31 = 24.516 at 16."""
    params = replace(PARAMS, static_w={"int_fp": (10.0, 30.0 / 31)})
    assert static_power(replace(params, static_model="half_warp"), "int_fp", lanes) == pytest.approx(half_warp)
    if linear is not None:
        assert static_power(params, "int_fp", lanes) == pytest.approx(linear, abs=1e-3)


def test_energy_per_lup_by_hand_and_ranking():
    """Per lup: 25 FP64 lanes at 20 pJ, 10 integer lanes at 2 pJ, 35/32 warp instructions at 100 pJ,
    2 L1 sectors at 50 pJ, 36 B of L2 (1.125 sectors at 640 pJ = 20 pJ/B), 24.2 B of DRAM (0.75625
    sectors at 1600 pJ = 50 pJ/B): 500 + 20 + 109.375 + 100 + 720 + 1210 = 2659.375 pJ. With a 100 W
    floor (constant) at R = 5e10: + 2000 pJ = 4659.375 pJ/lup, 232.97 W, 214.62 Mlup/J.
    Configuration B moves 17.5 B of DRAM (875 pJ) but runs at 4e10: 2324.375 + 2500 = 4824.375 pJ:
    A, with more traffic, needs less energy per update."""
    params = replace(PARAMS, core_j={**ZERO_CORE, "fp64": 20e-12, "int": 2e-12, "issue": 100e-12},
                     l1_sector_j=50e-12, l2_sector_j=640e-12, dram_sector_j=1600e-12, static_w={"int_fp_dp": (0.0, 0.0)},
                     idle_sm_w=0.0, constant_w=100.0)
    a = Activity(core={**ZERO_CORE, "fp64": 25.0, "int": 10.0, "issue": 35 / 32}, l1_sectors=2.0,
                 l2_sectors=36 / 32, dram_sectors=24.2 / 32, active_lanes=32.0, active_sms=100.0, category="int_fp_dp")
    pa = power_at(a, params, 5e10, 1000.0)
    assert 1e12 / pa.lups_per_joule == pytest.approx(4659.375)
    assert pa.watts == pytest.approx(232.96875) and pa.lups_per_joule / 1e6 == pytest.approx(214.62, abs=0.01)
    pb = power_at(replace(a, dram_sectors=17.5 / 32), params, 4e10, 1000.0)
    assert 1e12 / pb.lups_per_joule == pytest.approx(4824.375)
    assert pa.lups_per_joule > pb.lups_per_joule


def test_dvfs_energy_by_hand():
    """E_dyn 2 nJ/lup of core energy, static 40 W, constant 30 W, R = 5e10 held: at 0.8 of the
    reference clock 2 x 0.64 + (40 x 0.8 + 30) / 5e10 = 1.28 + 1.24 = 2.52 nJ; at 1.0 2 + 1.4 = 3.40 nJ."""
    params = replace(PARAMS, core_j={**ZERO_CORE, "fp64": 2e-9}, static_w={"int_fp_dp": (40.0, 0.0)}, idle_sm_w=0.0)
    act = replace(ACT, core={**ZERO_CORE, "fp64": 1.0}, l1_sectors=0, l2_sectors=0, dram_sectors=0)
    assert 1e9 / power_at(act, params, 5e10, 800.0).lups_per_joule == pytest.approx(2.52)
    assert 1e9 / power_at(act, params, 5e10, 1000.0).lups_per_joule == pytest.approx(3.40)


@pytest.mark.parametrize("used, category", [
    ({}, "light"), ({"int": 3}, "int_add"), ({"int_mul": 2}, "int_mul"), ({"int": 3, "int_mul": 2}, "int"),
    ({"int": 1, "fp32": 4}, "int_fp"), ({"int_mul": 1, "fp32": 4}, "int_fp"),
    ({"int": 1, "fp32": 4, "fp64": 2}, "int_fp_dp"), ({"int": 1, "fp32": 4, "sfu": 1}, "int_fp_sfu"),
    ({"int": 1, "fp32": 4, "tensor_fma": 64}, "int_fp_tensor"), ({"int": 1, "fp64": 25}, "geomean"),
    ({"fp32": 4}, "geomean"), ({"int": 1, "fp32": 1, "fp64": 1, "sfu": 1}, "geomean"),
])
def test_static_category(used, category):
    """AccelWattch's categories by the units a kernel uses; an FP64 stencil (integer + FP64, no FP32)
    and any other mix take the geometric mean."""
    assert static_category(used) == category


def test_clock_fit_recovers_eq3():
    """P = 2 f^3 + 10 f + 30 at 0.6, 0.9, 1.2, 1.5 GHz (36.432, 40.458, 45.456, 51.75 W): (2, 10, 30)."""
    beta, tau, constant = clock_power_fit([0.6, 0.9, 1.2, 1.5], [36.432, 40.458, 45.456, 51.75])
    assert (beta, tau, constant) == pytest.approx((2.0, 10.0, 30.0))
    with pytest.raises(WarpspeedError, match="at least 3"):
        clock_power_fit([1.0, 1.2], [10.0, 12.0])


def test_every_family_file_parses():
    """Every built-in family loads for the devices that name it; the Volta anchors are the artifact's."""
    for name in ("A100-SXM4-40GB", "A40", "L40", "V100-PCIe-32GB", "H100-SXM5-80GB", "H100-PCIe-80GB", "H200"):
        p = power_params(load_device(name))
        assert p.power_limit_w > 0 and set(p.core_j) == set(CORE_COMPONENTS)
    v = power_params(load_device("V100-PCIe-32GB"))
    assert v.static_w["int_fp"] == pytest.approx((18.6179906, 0.645228013))
    assert v.idle_sm_w == pytest.approx(0.28279166) and v.constant_w == pytest.approx(32.32522272)


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
    """Synthetic runs from known energies (8 pJ per FP32 FMA lane, 1.5 nJ per sector, 60 W static, 40 W
    constant) over inner loops and two clocks; the fit returns them."""
    runs = [Run(its, f, 0.0, None) for its in (0, 8, 24, 56, 120, 400) for f in (1410.0, 1100.0)]
    a = design(a100, runs)
    truth = np.array([8e-12, 1.5e-9, 60.0, 40.0])
    runs = [replace(r, watts=float(w)) for r, w in zip(runs, a @ truth)]
    fit = fit_family(a100, runs, "synthetic")
    assert fit.family["dynamic"]["fp32_lane_j"] == pytest.approx(8e-12, rel=1e-3)
    assert fit.family["dynamic"]["dram_sector_j"] == pytest.approx(1.5e-9, rel=1e-3)
    assert fit.family["static"]["constant_w"] == pytest.approx(40.0, rel=1e-3)
    assert fit.max_error < 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("device, part", [("A100-SXM4-40GB", "a100-40"), ("A40", "a40"), ("L40", "l40")])
def test_calibration_error_per_point(device, part):
    """Every stored run of the public measurements within 10 % of the fitted model."""
    runs = read_runs(ROOT / "fits" / "data" / "public" / "gpu-roofline" / f"{part}.csv")
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
    """The derived stream of the 7-point stencil folded twice in y (counted in test_trace): 44
    instructions per thread for 2 cells, so 44 / (2 x 32) warp instructions per lup; of them 12 DFMA
    and 2 DMUL, 7 FP64 lane operations per lup."""
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.predict import predict

    p = predict(star_stencil(3, 1, (256, 128, 64)), a100, (32, 8, 4), (1, 2, 1))
    act = activity(build_trace(p))
    assert act.dram_sectors == pytest.approx((p.dram.load_bytes_per_lup + p.dram.store_bytes_per_lup) / 32)
    assert act.core["issue"] == pytest.approx(44 / (2 * 32))
    assert act.core["fp64"] == pytest.approx(14 / 2)
    # 8 x 8 x 16 = 1024 blocks, 2 per SM: 4 waves of 216 on 108 SMs, then 160 blocks on 80 SMs
    assert act.active_lanes == 32 and math.isclose(act.active_sms, (4 * 108 + 80) / 5)


def test_devices_without_power_parameters_say_so():
    with pytest.raises(PowerParameterError, match="no power-model parameters for MI210.*devices with them: A100"):
        power_params(load_device("MI210"))


def test_daxpy_sass_activity(tmp_path):
    """``y[i] = a * x[i] + y[i]`` in double, compiled for sm_80: per thread one DFMA (one FP64 lane
    operation), two 8 B global loads and one 8 B store. The DFMA reads x[i] and y[i] from registers
    and ``a`` from the constant bank: 3 register operands of 64 bits, 6 register accesses. Each
    global access moves one 8 B value (2 registers) and reads a 64-bit address (2): 12 more."""
    from warpspeed.sass import compile as sass_compile
    from warpspeed.sass import full_warp_stream, parse_listing
    from warpspeed.sass.toolchain import find_tool
    from warpspeed.trace.activity import _register_accesses, thread_activity

    if find_tool("nvcc") is None or find_tool("cuobjdump") is None:
        pytest.skip("nvcc/cuobjdump not installed (pip install 'warpspeed[cuda]')")
    source = ('extern "C" __global__ void daxpy(int n, double a, const double *__restrict__ x, double *y) {\n'
              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + y[i];\n}\n")
    listing, _ = sass_compile.compile_sass(source, "sm_80", cache=tmp_path)
    stream = full_warp_stream(parse_listing(listing))
    ops = stream.opcode_counts()
    assert (ops.get("DFMA"), ops.get("LDG"), ops.get("STG")) == (1, 2, 1)
    act = thread_activity(stream)
    assert act.fp64 == 1 and act.issue == len(stream.instructions)
    dfma = next(i for i in stream.instructions if i.opcode == "DFMA")
    assert _register_accesses(dfma) == 6
    assert sum(_register_accesses(i) for i in stream.instructions if i.opcode in ("LDG", "STG")) == 12


def test_voltage_frequency_table():
    """A table (500 MHz, 0.7), (1000 MHz, 1.0): at 750 MHz V = 0.85 by interpolation, clamped beyond
    its ends; without a table V follows the clock down to the floor. A malformed table is one line."""
    from warpspeed.power.board import voltage_ratio
    from warpspeed.power.params import params_from

    table = ((500.0, 0.7), (1000.0, 1.0))
    assert voltage_ratio(750.0, 1000.0, 0.0, table) == pytest.approx(0.85)
    assert voltage_ratio(300.0, 1000.0, 0.0, table) == pytest.approx(0.7)
    assert voltage_ratio(300.0, 1000.0, 0.5) == pytest.approx(0.5) and voltage_ratio(800.0, 1000.0, 0.5) == 0.8
    # static 51 W x 0.85 and FP64 50 W x 0.85^2 at the same rate
    b = power_at(ACT, replace(PARAMS, vf_table=table), 1e11, 750.0)
    assert b.components["static"] == pytest.approx(51 * 0.85) and b.components["fp64"] == pytest.approx(50 * 0.85**2)
    device = load_device("A100-SXM4-40GB")
    family = {"dynamic": {"fp32_lane_j": 1e-12, "dram_sector_j": 1e-9, "l2_sector_j": 1e-9, "l1_sector_j": 1e-10},
              "static": {"first_lane_w": 1, "add_lane_w": 0.1, "idle_sm_w": 0.1, "constant_w": 30, "reference_sms": 108},
              "clock": {"v_min_rel": 0, "vf_table": [[1000, 1.0], [500, 0.7]]}}
    with pytest.raises(PowerParameterError, match="vf_table clocks must increase"):
        params_from(device, device.tables["power"], family, "t")
    family["clock"]["vf_table"] = [[500, "x"]]
    with pytest.raises(PowerParameterError, match=r"\[MHz, relative voltage\] pairs"):
        params_from(device, device.tables["power"], family, "t")


def test_idle_sm_power_eqs_6_to_8():
    """Constant 30 W. Benchmark 1: 190 W on 80 SMs (2 W per active SM), 130 W on 40: 130 - 30 - 80 =
    20 W for 40 idle SMs, 0.5 W each. Benchmark 2: 270 W on 80 (3 W per SM), 130 W on 20: 40 W for 60
    idle SMs, 0.6667 W. Geometric mean 0.57735 W."""
    from warpspeed.power.solve import idle_sm_power

    assert idle_sm_power(30.0, [(190.0, 80, 130.0, 40), (270.0, 80, 130.0, 20)]) == pytest.approx(0.57735, abs=1e-5)
    with pytest.raises(WarpspeedError, match="fewer than all"):
        idle_sm_power(30.0, [(190.0, 80, 130.0, 80)])


def test_constrained_energies_eqs_13_14():
    """Two benchmarks, each one unit at 1e9 activities/s, dynamic 2 W (ALU) and 1 W (FPU):
    unconstrained 2 and 1 nJ; with E_ALU <= E_FPU both 1.5 nJ (the mean); weighted by 1 / P (relative
    errors) both e with (e - 2)/4 + (e - 1) = 0, e = 1.2 nJ."""
    from warpspeed.power.solve import constrained_energies

    a, b = np.diag([1e9, 1e9]), np.array([2.0, 1.0])
    assert constrained_energies(a, b) * 1e9 == pytest.approx([2.0, 1.0], abs=1e-6)
    assert constrained_energies(a, b, order=[(0, 1)]) * 1e9 == pytest.approx([1.5, 1.5], abs=1e-5)
    assert constrained_energies(a, b, order=[(0, 1)], relative=True) * 1e9 == pytest.approx([1.2, 1.2], abs=1e-5)


@pytest.mark.slow
def test_dvfs_command_reports_the_requested_and_the_throttled_clock():
    """`warpspeed dvfs --model roofline --json` sweeps 30 % to 100 % of the A100's 1410 MHz in steps of
    5 % (423, 493.5, ..., 1410 MHz). A point the 400 W board limit throttles runs below the clock asked for,
    at 400 W; the others run at it; the best clock is the point with the most lups per joule."""
    from click.testing import CliRunner

    from warpspeed.cli.main import main

    result = CliRunner().invoke(main, ["dvfs", "--kernel", "star3d-r4", "--domain", "320,256,256", "--block", "8,4,32",
                                       "--model", "roofline", "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.output)
    points = d["points"]
    assert points[-1]["throttled"] and not points[0]["throttled"]  # the 25-point stencil's power exceeds 400 W at 1410
    assert [p["requested_mhz"] for p in points] == pytest.approx([1410 * (0.30 + 0.05 * k) for k in range(15)])
    for p in points:
        if p["throttled"]:
            assert p["clock_mhz"] < p["requested_mhz"] and p["watts"] == pytest.approx(400.0, rel=1e-6)
        else:
            assert p["clock_mhz"] == pytest.approx(p["requested_mhz"]) and p["watts"] < 400.0
    opt = d["optimum"]  # the A100's floor is assumed: a range over the plausible floors, no single clock
    assert "best_clock_mhz" not in d and opt["v_min_status"] == "assumed" and opt["v_min_rel"] == [0.6, 0.9]
    low, high = opt["clock_mhz"]
    assert low < high and opt["lups_per_joule"][0] < opt["lups_per_joule"][1]
    assert [f["v_min_rel"] for f in opt["per_floor"]][::6] == pytest.approx([0.6, 0.75, 0.9])


def _by_hand_optimum(floor: float, clocks: np.ndarray) -> tuple[float, float, float]:
    """The model equation written out for PARAMS/ACT with rate R = min(2e11 f / 1000 MHz, 1e11) (FP
    limit with the clock, DRAM limit fixed): per lup FP64 50 x 10 pJ + L1 4 x 0.2 nJ + L2 2 x 1 nJ =
    3.3 nJ x s^2 and DRAM 0.5 x 2 nJ = 1 nJ, so P = R (3.3 nJ s^2 + 1 nJ) + 51 W s + 30 W with
    s = max(f / 1000 MHz, floor); returns (lowest clock, highest clock, lups/J) of the most lups per
    joule over ``clocks``."""
    s = np.maximum(clocks / 1000.0, floor)
    rate = np.minimum(2e11 * clocks / 1000.0, 1e11)
    watts = rate * ((50 * 10e-12 + 4 * 0.2e-9 + 2 * 1e-9) * s**2 + 0.5 * 2e-9) + 51.0 * s + 30.0
    eff = rate / watts
    best = eff >= eff.max() * (1 - 1e-9)
    return float(clocks[best].min()), float(clocks[best].max()), float(eff.max())


def test_dvfs_optimum_is_a_range_over_the_assumed_floors():
    """DRAM-bound above 500 MHz (FP limit 2e11 lups/s at 1000 MHz, DRAM 1e11). Below the clock 1000 v
    where the voltage reaches its floor v, power and rate stay: the optimum is the plateau 500 MHz ..
    1000 v, at 1e11 / (330 W v^2 + 100 W + 51 W v + 30 W): v = 0.6: 279.4 W, 357.91 Mlup/J; v = 0.9:
    443.2 W, 225.63 Mlup/J. Over floors 0.6-0.9 the range is 500-900 MHz, 225.63-357.91 Mlup/J, and
    it brackets the optimum of every floor in between found by brute force over a 0.1 MHz grid."""
    from warpspeed.power.dvfs import optimum

    params = replace(PARAMS, power_limit_w=1e4, v_min_status="assumed", v_min_range=(0.6, 0.9))
    limits = {"fp": 2e11, "dram": 1e11}
    opt = optimum(ACT, params, 1e11, limits, 1000.0)
    assert opt.v_min_status == "assumed" and opt.v_min_rel == (0.6, 0.9)
    assert opt.clock_mhz == pytest.approx((500.0, 900.0))
    assert np.array(opt.lups_per_joule) / 1e6 == pytest.approx([225.63, 357.91], abs=0.01)
    grid = np.arange(100.0, 1000.05, 0.1)
    for floor in (0.6, 0.66, 0.71, 0.8, 0.87, 0.9):
        low, high, eff = _by_hand_optimum(floor, grid)
        assert opt.clock_mhz[0] <= low + 1e-6 and high <= opt.clock_mhz[1] + 1e-6
        assert opt.lups_per_joule[0] * (1 - 1e-9) <= eff <= opt.lups_per_joule[1] * (1 + 1e-9)
    known = optimum(ACT, replace(params, v_min_rel=0.7, v_min_status="fitted", v_min_range=None), 1e11, limits, 1000.0)
    assert known.v_min_rel == (0.7, 0.7) and known.clock_mhz == pytest.approx((500.0, 700.0))
    assert known.lups_per_joule[0] == known.lups_per_joule[1] == pytest.approx(_by_hand_optimum(0.7, grid)[2])


def test_voltage_floor_fitted_only_without_a_tie():
    """Costs 3, 2, 1, 2 at floors 0, 0.5, 0.7, 0.95: 0.7 alone fits best, fitted. Costs 1, 1, 1, 2:
    floors 0-0.7 tie (runs all above 0.7 of the reference clock), assumed over the plausible floors
    cut to the tie: 0.6-0.7, point floor its middle 0.65. All four tied: the plausible 0.6-0.9,
    point floor 0.75 (never the tied 0.0 the scan met first, which lies outside the range)."""
    from warpspeed.calibration.power import voltage_floor

    floors = (0.0, 0.5, 0.7, 0.95)
    assert voltage_floor(floors, (3, 2, 1, 2), 0.7) == {"v_min_rel": 0.7, "v_min_status": "fitted"}
    cut = voltage_floor(floors, (1, 1, 1, 2), 0.0)
    assert cut["v_min_range"] == [0.6, 0.7] and cut["v_min_rel"] == pytest.approx(0.65)
    assert voltage_floor(floors, (1, 1, 1, 1), 0.0) == {"v_min_rel": 0.75, "v_min_status": "assumed",
                                                         "v_min_range": [0.6, 0.9]}


def test_family_voltage_floor_fields():
    """The A100 family's floor is assumed (its runs are all at 1410 MHz), the L40's fitted; an
    assumed floor without a valid range is a one-line error."""
    from warpspeed.power.params import params_from

    a100 = power_params(load_device("A100-SXM4-40GB"))
    assert a100.v_min_status == "assumed" and a100.v_min_bounds == (0.6, 0.9)
    l40 = power_params(load_device("L40"))
    assert l40.v_min_status == "fitted" and l40.v_min_bounds == (0.875, 0.875)
    device = load_device("A100-SXM4-40GB")
    family = {"dynamic": {"fp32_lane_j": 1e-12, "dram_sector_j": 1e-9, "l2_sector_j": 1e-9, "l1_sector_j": 1e-10},
              "static": {"first_lane_w": 1, "add_lane_w": 0.1, "idle_sm_w": 0.1, "constant_w": 30, "reference_sms": 108},
              "clock": {"v_min_rel": 0, "v_min_status": "assumed", "v_min_range": [0.9, 0.6]}}
    with pytest.raises(PowerParameterError, match="v_min_range"):
        params_from(device, device.tables["power"], family, "t")
    family["clock"] = {"v_min_rel": 0, "v_min_status": "guessed"}
    with pytest.raises(PowerParameterError, match="v_min_status must be one of"):
        params_from(device, device.tables["power"], family, "t")


# --- Hopper from published facts -----------------------------------------------------------------

#: By hand from the sources in hopper-gh100.toml: the process factor 0.95 (fitted on the H200 soaks,
#: checked by test_h200_soaks_within_ten_percent); HBM3 core 1.1 V against HBM2e 1.2 V; transistors per
#: SM of the full dies, GH100 80e9 / 144 and GA100 54.2e9 / 128; board limits 700 W (H100 SXM, H200),
#: 350 W (H100 PCIe), 400 W (A100).
PROCESS = 0.95
HBM3 = (1.1 / 1.2) ** 2          # 0.840278
PER_SM = (80 / 144) / (54.2 / 128)  # 1.312013


def test_hopper_family_is_ga100_by_published_facts():
    """Every constant of hopper-gh100 equals the rule applied to the ampere-ga100 file: core, L1, L2
    x 0.95; DRAM x 0.840278; static of 132 SMs = GA100's per SM x 1.312013 x 132; idle per SM x
    1.312013; constant 33.947 W / 400 W x 700 W = 59.41 W; the H100 PCIe (HBM2e, 350 W) keeps GA100's
    DRAM sector energy and 29.70 W."""
    from warpspeed.power.params import load_family

    ga, gh = load_family("ampere-ga100"), load_family("hopper-gh100")
    assert PER_SM == pytest.approx(1.312013, abs=1e-6) and HBM3 == pytest.approx(0.840278, abs=1e-6)
    for key in ("fp32_lane_j", "l2_sector_j", "l1_sector_j"):
        assert gh["dynamic"][key] == pytest.approx(ga["dynamic"][key] * PROCESS, rel=1e-9)
    assert gh["dynamic"]["dram_sector_j"] == pytest.approx(ga["dynamic"]["dram_sector_j"] * HBM3, rel=1e-9)
    for key in ("first_lane_w", "add_lane_w"):
        assert gh["static"][key] == pytest.approx(ga["static"][key] / 108 * PER_SM * 132, rel=1e-9)
    assert gh["static"]["idle_sm_w"] == pytest.approx(ga["static"]["idle_sm_w"] * PER_SM, rel=1e-9)
    assert gh["static"]["constant_w"] == pytest.approx(ga["static"]["constant_w"] / 400 * 700, rel=1e-9)
    assert gh["static"]["constant_w"] == pytest.approx(59.41, abs=0.01)
    assert gh["clock"]["v_min_status"] == "assumed"
    pcie = power_params(load_device("H100-PCIe-80GB"))
    assert pcie.dram_sector_j == pytest.approx(ga["dynamic"]["dram_sector_j"], rel=1e-9)
    assert pcie.constant_w == pytest.approx(ga["static"]["constant_w"] / 400 * 350, rel=1e-6)
    assert power_params(load_device("H200")).dram_sector_j == pytest.approx(gh["dynamic"]["dram_sector_j"])


def test_transfer_rules_by_hand():
    """Source: 2 pJ lane, 2 nJ DRAM, 1 nJ L2, 0.2 nJ L1, static 10 + 0.5/lane W for 100 SMs, idle
    0.2 W, constant 40 W of a 400 W board, 50e9 transistors / 100 SMs. Target: process 0.5, memory
    1.5, 90e9 / 120 SMs (1.5 x per SM), 110 SMs, 600 W: 1 pJ, 3 nJ, 0.5 nJ, 0.1 nJ; static x 1.5 x
    1.1 = 16.5 + 0.825/lane W; idle 0.3 W; constant 60 W."""
    from warpspeed.power.transfer import ChipFacts, transfer_family

    source = {"dynamic": {"fp32_lane_j": 2e-12, "dram_sector_j": 2e-9, "l2_sector_j": 1e-9, "l1_sector_j": 0.2e-9},
              "static": {"first_lane_w": 10.0, "add_lane_w": 0.5, "idle_sm_w": 0.2, "constant_w": 40.0,
                         "reference_sms": 100}}
    f = transfer_family(source, ChipFacts("s", 50.0, 100, 100, 400.0),
                        ChipFacts("t", 90.0, 120, 110, 600.0, process_energy=0.5, dram_energy=1.5))
    assert f["dynamic"] == pytest.approx({"fp32_lane_j": 1e-12, "dram_sector_j": 3e-9, "l2_sector_j": 0.5e-9,
                                          "l1_sector_j": 0.1e-9})
    st = f["static"]
    assert (st["first_lane_w"], st["add_lane_w"], st["idle_sm_w"], st["constant_w"]) == pytest.approx((16.5, 0.825, 0.3, 60.0))
    assert st["reference_sms"] == 110 and f["clock"]["v_min_status"] == "assumed"


def _h200_gpu_roofline(its: int, clock_mhz: float | None = None):
    from warpspeed.models import estimate_energy
    from warpspeed.power.benchmark import roofline_benchmark
    from warpspeed.predict import predict

    p = predict(roofline_benchmark(its), load_device("H200"), (256, 1, 1))
    return p, estimate_energy(p, clock_mhz=clock_mhz)


def test_benchmark_keeps_one_loop_trip_in_flight():
    """gpu-roofline's loop (gpu-benches gpu-roofline/main.cu) loads a and b of two rows per trip: 4
    floats, 16 B per thread in flight; per update (one trip, two element pairs) 16 B of DRAM, 0.5
    sectors; 2 subtractions, 2 additions and 2 its FMAs: 4 + 4 its flops."""
    p, _ = _h200_gpu_roofline(0)
    assert p.dram_bandwidth.bytes_per_thread == pytest.approx(16.0)
    assert activity(build_trace(p)).dram_sectors == pytest.approx(16 / 32)
    from warpspeed.power.benchmark import roofline_benchmark

    assert roofline_benchmark(10).flops.flops == 4 + 4 * 10


@pytest.mark.parametrize("its", [0, 512])
def test_h200_memory_and_fp_bound_below_the_board_limit(its):
    """Memory-bound (0 FMAs) and FP-bound (512 FMAs) on the H200 at its 1980 MHz: under its 700 W
    board limit, so not throttled, and running at the clock asked for."""
    _, e = _h200_gpu_roofline(its)
    assert not e.details["throttled"] and e.watts < 700.0 and e.clock_mhz == pytest.approx(1980.0)


def test_clock_is_honoured_and_the_throttle_binds_only_above_the_limit():
    """At 1500 MHz the memory-bound run keeps its DRAM-bound rate and saves, with s = 1500 / 1980,
    (core + L1 + L2) (1 - s^2) + (static + idle SMs) (1 - s) of the 1980 MHz power (DRAM and
    constant stay).
    64 FMAs at a forced 2600 MHz would exceed 700 W: throttled to the clock where it draws 700 W;
    at 1980 MHz it is not throttled. 2600 MHz lies above the H200's range (1980 MHz at most), so
    the public estimate refuses it and the throttle is checked on the model function itself."""
    _, full = _h200_gpu_roofline(0)
    _, low = _h200_gpu_roofline(0, 1500.0)
    c, s = full.details["components_w"], 1500.0 / 1980.0
    dynamic = sum(v for k, v in c.items() if k not in ("dram", "static", "idle_sm", "constant"))
    assert low.lups_per_s == pytest.approx(full.lups_per_s) and low.clock_mhz == pytest.approx(1500.0)
    floor = c["static"] + c["idle_sm"]
    assert low.watts == pytest.approx(full.watts - dynamic * (1 - s * s) - floor * (1 - s), rel=1e-9)
    from warpspeed.hardware.clock import ClockError
    from warpspeed.power import activity, board_power, power_params

    p64, at_max = _h200_gpu_roofline(64)
    fast = board_power(activity(build_trace(p64)), power_params(p64.device), p64.roofline.lups_per_s,
                       p64.roofline.limits, 1980.0, 2600.0)
    assert fast.throttled and fast.watts == pytest.approx(700.0, rel=1e-6) and fast.clock_mhz < 2600.0
    assert not at_max.details["throttled"]
    with pytest.raises(ClockError, match="1980"):
        _h200_gpu_roofline(64, 2600.0)


@pytest.mark.slow
def test_validate_has_the_transfer_row():
    """`warpspeed validate` compares the L40 with the family transferred from the A100's by the
    Hopper rules, labelled not fitted, on the runs at 0.9 of the L40's 2490 MHz or above."""
    from warpspeed.validation.public_power import transfer_dataset

    d = transfer_dataset()
    assert "not fitted" in d.name and d.points
    assert all(float(p.label.split(", ")[1].split()[0]) >= 0.9 * 2490 for p in d.points)


@pytest.mark.slow
def test_dvfs_json_with_a_fitted_floor():
    """The L40's floor is fitted (0.875): `dvfs --json` reports one floor, status fitted, and the
    table's rows at that floor."""
    from click.testing import CliRunner

    from warpspeed.cli.main import main

    result = CliRunner().invoke(main, ["dvfs", "--kernel", "star3d-r4", "--domain", "320,256,256", "--device", "L40",
                                       "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.output)
    opt = d["optimum"]
    assert opt["v_min_status"] == "fitted" and opt["v_min_rel"] == [0.875, 0.875] and len(opt["per_floor"]) == 1
    assert opt["lups_per_joule"][0] == opt["lups_per_joule"][1] and d["points_v_min_rel"] == 0.875
