"""The AMALI interval model: hand-derived cases (A100 parameters of AMALI's Table 2) and invariants.

Hand derivations (Cao et al., "AMALI", ISCA 2025, eqs 9-14, 24-29; GCoM for the interval
profiling):
- eq 14: II = 32 / (lanes per SM / 4 sub-cores): INT 64 -> 2, FP32 64 -> 2, FP64 32 -> 4, SFU 16 -> 8;
- tensor (eq 25): HMMA.16816 = 2048 FMAs / 256 per clock = 8, HMMA.1688 = 1024 / 256 = 4 on A100;
  512 FMAs per clock on H100: 4 and 2;
- launch latency, BS in warps: s(4) = 0.0036 x 16 + 0.0366 x 4 + 1.1891 = 1.3931, s(8) = 1.7123,
  s(32) = 6.0467; 1000 blocks of 8 warps -> 1712.3 cycles;
- the warp ``LDG a; LDG b; DFMA c = a b + c; STG c`` with m1 = m2 = 1: loads complete after
  37 + 224 + 290 = 551 cycles, the DFMA (4 cycles) issues at 552, the store (37 + 224 = 261)
  completes at 556 + 261 = 817: intervals (2 instr., 550 long), (1, 3 wait), (1, 260 long);
- the same warp with 64 resident warps (8 B accesses: omega = 2, r = w = 8 sectors): see
  ``test_sixty_four_warps_by_hand``.
"""

import math

import pytest

from warpspeed.hardware.device import load_device
from warpspeed.interval import interval_model, interval_params
from warpspeed.interval.latency import COMPUTE_UNITS, LONG, WAIT, instruction_cost, tensor_ii
from warpspeed.interval.model import STACK_KEYS, blocks_on_busiest_sm, distribution_idle, launch_latency
from warpspeed.interval.multiwarp import batch_stack
from warpspeed.interval.profile import Interval, profile


@pytest.fixture(scope="module")
def a100p():
    return interval_params(load_device("A100-SXM4-40GB"))


def _ins(opcode, dst=(), src=(), fu="int", space=None, field=None, shape=None, modifiers=()):
    return {"opcode": opcode, "dst": list(dst), "src": list(src), "fu": fu, "space": space, "field": field,
            "tensor_shape": shape, "modifiers": list(modifiers)}


def _memory(m1=1.0, m2=1.0, omega=2.0, r=8.0, w=8.0, dram_store=1.0):
    entry = {"l1_wavefronts_per_instruction": omega, "l1_miss_rate": m1, "l2_miss_rate": m2,
             "l2_load_sectors_per_load": r, "l2_store_sectors_per_store": w,
             "l2_store_bytes_per_lup": 8.0, "dram_store_bytes_per_lup": 8.0 * dram_store}
    return {"fields": {"a": entry}, "totals": entry}


WARP = [_ins("LDG", ["R2"], ["R10"], "global", "global", "a"), _ins("LDG", ["R4"], ["R10"], "global", "global", "a"),
        _ins("DFMA", ["R6"], ["R2", "R4", "R6"], "fp64"), _ins("STG", [], ["R12", "R6"], "global", "global", "a")]


def test_eq14_initiation_intervals(a100p):
    mem = _memory()
    assert [instruction_cost(_ins("X", fu=fu), mem, a100p, 1.0).ii for fu in ("int", "fp32", "fp64", "sfu")] == \
        [2, 2, 4, 8]


def test_tensor_core_intervals(a100p):
    h100 = interval_params(load_device("H100-SXM5-80GB"))
    mem = _memory()
    hmma = lambda shape: _ins("HMMA", ["R4"], ["R8"], "tensor", shape=shape, modifiers=["F32"])  # noqa: E731
    assert instruction_cost(hmma((16, 8, 16)), mem, a100p, 1.0).ii == 8
    assert instruction_cost(hmma((16, 8, 8)), mem, a100p, 1.0).ii == 4
    assert instruction_cost(hmma((16, 8, 16)), mem, h100, 1.0).ii == 4
    assert instruction_cost(hmma((16, 8, 8)), mem, h100, 1.0).latency == 2
    assert tensor_ii((8, 8, 4), 256) == 1


def test_launch_latency_by_hand(a100p):
    from dataclasses import replace

    a100p = replace(a100p, kll_k=0.0)  # the published constants; k is fitted separately
    assert launch_latency(1, 4, a100p) == pytest.approx(1.3931, abs=1e-4)
    assert launch_latency(1, 8, a100p) == pytest.approx(1.7123, abs=1e-4)
    assert launch_latency(1, 32, a100p) == pytest.approx(6.0467, abs=1e-4)
    assert launch_latency(1000, 8, a100p) == pytest.approx(1712.3, abs=0.05)


def test_interval_profiling_by_hand(a100p):
    mem = _memory()
    costs = [instruction_cost(i, mem, a100p, 0.0) for i in WARP]
    assert [c.latency for c in costs] == [551, 551, 4, 261]
    intervals = profile(costs, [i["src"] for i in WARP], [i["dst"] for i in WARP])
    assert [(k.instructions, k.stall, k.flag) for k in intervals] == [(2, 550, LONG), (1, 3, WAIT), (1, 260, LONG)]
    issued = sum(k.instructions for k in intervals)
    assert issued / (issued + sum(k.stall for k in intervals)) == pytest.approx(4 / 817)


def test_structural_stalls_by_hand(a100p):
    """I_k = 10 with 4 DFMA (II 4) and 6 wavefronts, x = 8: n_act 4, C_base 20, C_fp64 32,
    C_L1 48 -> lg_throttle 28, math_pipe_throttle 0."""
    k = Interval(instructions=10, stall=0.0, flag=WAIT, wavefronts=6.0)
    k.unit_ii.update(dict.fromkeys(COMPUTE_UNITS, 0.0), fp64=16.0)
    s = batch_stack([k], 8, a100p, active_sms=108, dram_bandwidth_gb_s=1940.0)
    assert s["selected"] == 20 and s["stall_lg_throttle"] == 28 and s["stall_math_pipe_throttle"] == 0


def test_sixty_four_warps_by_hand(a100p):
    """x = 64: n_act 4, o 15, p = 4/817 (LRR): base 64; exposed stalls 550 - 15 x 4/817 = 549.927,
    3 - .073 = 2.927, 260 - .073 = 259.927; lg_throttle (4 x 64 - 32) + (2 x 64 - 16) = 224 + 112;
    math_pipe (4 x 64 / 4 - 16) = 48; NoC tau = 1.41e9 x 32 / 5000e9 = 0.009024 cycles per sector:
    0.5 x 108 x 1024 x tau = 498.99 and 0.5 x 108 x 512 x tau = 249.50; DRAM tau = 1.41e9 x 32 /
    1940e9: 0.5 x 108 x 1024 x tau = 1286.06; without DRAM writes (GCoM's write-back L2)."""
    params = a100p.__class__(**{**a100p.__dict__, "noc_bandwidth_gb_s": 5000.0})
    mem = _memory()
    costs = [instruction_cost(i, mem, params, 0.0) for i in WARP]
    intervals = profile(costs, [i["src"] for i in WARP], [i["dst"] for i in WARP])
    s = batch_stack(intervals, 64, params, active_sms=108, dram_bandwidth_gb_s=1940.0, dram_writes=False)
    o_p = 15 * 4 / 817
    assert s["selected"] == 64
    assert s["stall_long_scoreboard"] == pytest.approx(550 - o_p + 260 - o_p)
    assert s["stall_wait"] == pytest.approx(3 - o_p)
    assert s["stall_lg_throttle"] == 224 + 112 and s["stall_math_pipe_throttle"] == 48
    tau_noc, tau_dram = 1.41e9 * 32 / 5000e9, 1.41e9 * 32 / 1940e9
    assert s["stall_mio_throttle"] == pytest.approx(0.5 * 108 * (1024 + 512) * tau_noc + 0.5 * 108 * 1024 * tau_dram)
    assert sum(s.values()) == pytest.approx(3295.33, abs=0.01)


def test_cta_distribution_by_hand():
    """655,360 blocks on 108 SMs: 6068.1 -> the busiest SM runs 6069 blocks."""
    assert blocks_on_busiest_sm(655_360, 108) == (108, 6069)
    assert blocks_on_busiest_sm(50, 108) == (50, 1)


def test_warp_distribution_by_hand(a100p):
    """Warp w of a block on sub-core w mod 4, representative = warp 0. 3-warp blocks, 2 blocks,
    1000 instructions: sub-cores [2000, 2000, 2000, 0] -> ID 0; 5-warp blocks: [4000, 2000, 2000,
    2000] -> ID 0. With this mapping warp 0's sub-core always carries the most warps, so ID is 0;
    it would not be with another representative, e.g. 5 warps and the representative on sub-core 1:
    4000 - 2000 = 2000 (computed here from the per-sub-core counts)."""
    assert distribution_idle(3, 2, 1000, a100p) == 0
    assert distribution_idle(5, 2, 1000, a100p) == 0
    counts = [sum(2 * 1000 for w in range(5) if w % 4 == s) for s in range(4)]
    assert counts == [4000, 2000, 2000, 2000] and max(counts) - counts[1] == 2000


def _trace(a100, block=(32, 8, 4), fold=(1, 1, 1), domain=(256, 128, 64)):
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.predict import predict

    return predict(star_stencil(3, 1, domain), a100, block, fold).trace()


def test_stack_sums_to_cycles_and_respects_the_bandwidth_bound(a100, a100p):
    t = _trace(a100)
    r = interval_model(t, a100p)
    assert set(r.cpi_stack) == set(STACK_KEYS)
    assert sum(r.cpi_stack.values()) == pytest.approx(r.cycles, rel=1e-9)
    assert r.lups_per_s <= t["roofline"]["lups_per_s"] * (1 + 1e-12)
    free = interval_model(t, a100p, floor=False)
    assert free.bandwidth_floor_cycles == 0 and sum(free.cpi_stack.values()) == pytest.approx(free.cycles)


def test_more_resident_warps_never_slow_the_latency_bound_part(a100p):
    """Per warp, the issue-and-stall cycles of a batch (selected + exposed stalls) do not grow
    with more resident warps: the others hide the stalls."""
    mem = _memory()
    costs = [instruction_cost(i, mem, a100p, 0.0) for i in WARP]
    intervals = profile(costs, [i["src"] for i in WARP], [i["dst"] for i in WARP])
    keys = ("selected", "stall_wait", "stall_long_scoreboard", "stall_short_scoreboard")
    per_warp = []
    for x in (1, 2, 4, 8, 16, 32, 64):
        s = batch_stack(intervals, x, a100p, active_sms=108, dram_bandwidth_gb_s=1381.0)
        per_warp.append(sum(s[k] for k in keys) / x)
    assert all(b <= a + 1e-9 for a, b in zip(per_warp, per_warp[1:]))


def test_devices_without_parameters_say_so():
    from warpspeed.interval import IntervalParameterError

    with pytest.raises(IntervalParameterError, match="no interval-model parameters for V100"):
        interval_params(load_device("V100-PCIe-32GB"))


def test_measured_latencies_become_increments():
    """L40: pointer chase 14.5 / 111.0 / 253.8 ns at 2.49 GHz -> 36.1, 240.3, 355.6 cycles."""
    p = interval_params(load_device("L40"))
    assert (p.l1_latency, p.l2_latency, p.dram_latency) == pytest.approx((14.5 * 2.49, 96.5 * 2.49, 142.8 * 2.49))
    assert math.isinf(p.mshrs) is False and p.unlimited_mshrs


@pytest.mark.parametrize("part, first_row_gb_s", [("a100-80", 25), ("h200", 27), ("l40", 40)])
def test_launch_overhead_fit_against_the_measurements(part, first_row_gb_s):
    """The smallest launch moves 4096 x 16 B = 65,536 B; at its best block size it ran at the
    stored GB/s (A100 80 GB: 25, H200: 27, L40: 40), i.e. 65,536 / (GB/s x 1e9) s per launch,
    almost all of it overhead (the data takes ~15 ns at L2 bandwidth). The fitted overhead must
    agree within 10 %, and the fitted line must reproduce every fitted row within 10 %."""
    from warpspeed.interval.launch_fit import fit_launch, measured_times

    fit = fit_launch(part)
    smallest = 65_536 / (first_row_gb_s * 1e9)
    assert fit.overhead_s == pytest.approx(smallest, rel=0.10)
    assert fit.max_rel_error < 0.10 and fit.rows >= 50
    volume, seconds = measured_times(part)[0]
    assert volume == 65_536 and seconds == pytest.approx(smallest)


def test_launch_constant_is_the_overhead_at_the_clock():
    from warpspeed.interval.launch_fit import fit_launch

    assert interval_params(load_device("H200")).kll_k == pytest.approx(fit_launch("h200").overhead_s * 1.98e9)
