"""The AMALI interval model: hand-derived cases (A100 parameters of AMALI's Table 2) and invariants.

Hand derivations (Cao et al., "AMALI", ISCA 2025, eqs 9-14, 24-29; GCoM for the interval
profiling):
- eq 14: II = 32 / (lanes per SM / 4 sub-cores): INT 64 -> 2, FP32 64 -> 2, FP64 32 -> 4, SFU 16 -> 8;
- tensor (eq 25): see ``test_tensor_core_intervals``;
- the warp ``LDG a; LDG b; DFMA c = a b + c; STG c`` with m1 = m2 = 1: loads complete after
  37 + 224 + 290 = 551 cycles, the DFMA (4 cycles) issues at 552, the store (37 + 224 = 261)
  completes at 556 + 261 = 817: intervals (2 instr., 550 long), (1, 3 wait), (1, 260 long);
- the same warp with 64 resident warps (8 B accesses: omega = 2, r = w = 8 sectors): see
  ``test_sixty_four_warps_by_hand``;
- guard-only warps, their dealing to SMs, batches and sub-cores, and the distribution term ID:
  the tests from ``test_batch_with_guard_warps_by_hand`` on.

The launch cost (KLL) is tested against the gpu-benches measurements in test_interval_launch.py.
"""

import math

import pytest

from warpspeed.hardware.device import load_device
from warpspeed.interval import interval_model, interval_params
from warpspeed.errors import WarpspeedError
from warpspeed.interval.dealing import deal_blocks
from warpspeed.interval.latency import COMPUTE_UNITS, LONG, WAIT, instruction_cost
from warpspeed.interval.cpi_stack import STACK_KEYS, distribution_idle
from warpspeed.interval.multiwarp import batch_stack
from warpspeed.interval.profile import Demand, Interval, profile
from warpspeed.trace.build import build_trace
from warpspeed.trace.document import FieldMemory, TotalMemory, TraceBlockKind, TraceMemory
from warpspeed.sass.instructions import Instruction


@pytest.fixture(scope="module")
def a100p():
    return interval_params(load_device("A100-SXM4-40GB"))


def _ins(opcode, dst=(), src=(), fu="int", space=None, field=None, shape=None, modifiers=()):
    return Instruction(opcode=opcode, dst=tuple(dst), src=tuple(src), fu=fu, space=space, field=field,
                       tensor_shape=shape, modifiers=tuple(modifiers))


def _memory(m1=1.0, m2=1.0, omega=2.0, r=8.0, w=8.0, dram_store=1.0):
    figures = dict(l1_wavefronts_per_instruction=omega, l1_miss_rate=m1, l2_miss_rate=m2,
                   l2_load_sectors_per_load=r, l2_store_sectors_per_store=w,
                   l2_store_bytes_per_lup=8.0, dram_store_bytes_per_lup=8.0 * dram_store, loads_per_thread=2,
                   stores_per_thread=1, l1_cycles_per_lup=0.0, l1_load_bytes_per_lup=0.0, l2_load_bytes_per_lup=0.0,
                   dram_load_bytes_per_lup=0.0)
    return TraceMemory("per_field", {"a": FieldMemory(**figures)}, TotalMemory(**figures))


WARP = [_ins("LDG", ["R2"], ["R10"], "global", "global", "a"), _ins("LDG", ["R4"], ["R10"], "global", "global", "a"),
        _ins("DFMA", ["R6"], ["R2", "R4", "R6"], "fp64"), _ins("STG", [], ["R12", "R6"], "global", "global", "a")]


def test_eq14_initiation_intervals(a100p):
    mem = _memory()
    assert [instruction_cost(_ins("X", fu=fu), mem, a100p, 1.0).ii for fu in ("int", "fp32", "fp64", "sfu")] == \
        [2, 2, 4, 8]


def test_tensor_core_intervals(a100p):
    """II = L = the warp's multiply-adds / the tensor core's per clock (eq 25, 26).

    A100 (256 FP16, 128 TF32, 16 FP64 per clock; INT8 512 and INT4 1024: the whitepaper's 624 and
    1248 TOPS are 2x and 4x its 312 FP16 TFLOPS): HMMA.16816.F32 16x8x16 = 2048 / 256 = 8;
    HMMA.1688.F32.TF32 1024 / 128 = 8; IMMA.16832.S8 16x8x32 = 4096 / 512 = 8; IMMA.8816.S8
    8x8x16 = 1024 / 512 = 2; IMMA.16864.S4 8192 / 1024 = 8; DMMA.884 256 / 16 = 16.
    H100 (512 FP16, 256 TF32, 1024 INT8 and FP8: 1978.9 TOPS = 2 x 989.4 TFLOPS): HMMA.16816
    2048 / 512 = 4; a warpgroup MMA's m n k is shared by its 4 warps: HGMMA.64x128x16.F32.BF16
    64 x 128 x 16 / 4 = 32768 / 512 = 64; HGMMA.64x8x8.F32.TF32 1024 / 256 = 4; IGMMA.64x8x32.S8
    4096 / 1024 = 4; QGMMA.64x8x32.F32.E4M3.E4M3 4096 / 1024 = 4. The instructions are parsed from
    SASS text as cuobjdump prints them."""
    from warpspeed.sass.parse import parse_instruction

    h100 = interval_params(load_device("H100-SXM5-80GB"))
    mem = _memory()

    def cost(line, params):
        ins = parse_instruction(0, line)
        assert ins.fu == "tensor"
        return instruction_cost(ins, mem, params, 1.0)

    a100_cases = {"HMMA.16816.F32.BF16 R12, R4, R16, RZ": 8, "HMMA.1688.F32.TF32 R12, R4, R16, R12": 8,
                  "IMMA.16832.S8.S8 R8, R4.ROW, R16.COL, RZ": 8, "IMMA.8816.S8.S8 R8, R4.ROW, R16.COL, R8": 2,
                  "IMMA.16864.S4.S4 R8, R4.ROW, R16.COL, R8": 8, "DMMA.884 R8, R16, R24, RZ": 16}
    for line, ii in a100_cases.items():
        c = cost(line, a100p)
        assert (c.ii, c.latency) == (ii, ii), line
    h100_cases = {"HMMA.16816.F32 R12, R4, R16, RZ": 4,
                  "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0": 64,
                  "HGMMA.64x8x8.F32.TF32 R24, gdesc[UR4], RZ, !UPT, gsb0": 4,
                  "IGMMA.64x8x32.S8.S8 R24, gdesc[UR4], RZ, !UPT, gsb0": 4,
                  "QGMMA.64x8x32.F32.E4M3.E4M3 R24, gdesc[UR4], RZ, !UPT, gsb0": 4}
    for line, ii in h100_cases.items():
        assert cost(line, h100).ii == ii, line
    with pytest.raises(WarpspeedError, match="no tensor-core throughput for fp8 inputs"):
        cost("QGMMA.64x8x32.F32.E4M3.E4M3 R24, gdesc[UR4], RZ, !UPT, gsb0", a100p)


def test_interval_profiling_by_hand(a100p):
    mem = _memory()
    costs = [instruction_cost(i, mem, a100p, 0.0) for i in WARP]
    assert [c.latency for c in costs] == [551, 551, 4, 261]
    intervals = profile(costs, [i.src for i in WARP], [i.dst for i in WARP])
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
    intervals = profile(costs, [i.src for i in WARP], [i.dst for i in WARP])
    s = batch_stack(intervals, 64, params, active_sms=108, dram_bandwidth_gb_s=1940.0, dram_writes=False)
    o_p = 15 * 4 / 817
    assert s["selected"] == 64
    assert s["stall_long_scoreboard"] == pytest.approx(550 - o_p + 260 - o_p)
    assert s["stall_wait"] == pytest.approx(3 - o_p)
    assert s["stall_lg_throttle"] == 224 + 112 and s["stall_math_pipe_throttle"] == 48
    tau_noc, tau_dram = 1.41e9 * 32 / 5000e9, 1.41e9 * 32 / 1940e9
    assert s["stall_mio_throttle"] == pytest.approx(0.5 * 108 * (1024 + 512) * tau_noc + 0.5 * 108 * 1024 * tau_dram)
    assert sum(s.values()) == pytest.approx(3295.33, abs=0.01)


def _trace(a100, block=(32, 8, 4), fold=(1, 1, 1), domain=(256, 128, 64)):
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.predict import predict

    return build_trace(predict(star_stencil(3, 1, domain), a100, block, fold))


def test_stack_sums_to_cycles_and_respects_the_bandwidth_bound(a100, a100p):
    t = _trace(a100)
    r = interval_model(t, a100p)
    assert set(r.cpi_stack) == set(STACK_KEYS)
    assert sum(r.cpi_stack.values()) == pytest.approx(r.cycles, rel=1e-9)
    assert r.lups_per_s <= t.roofline.lups_per_s * (1 + 1e-12)
    free = interval_model(t, a100p, floor=False)
    assert free.bandwidth_floor_cycles == 0 and sum(free.cpi_stack.values()) == pytest.approx(free.cycles)


def test_more_resident_warps_never_slow_the_latency_bound_part(a100p):
    """Per warp, the issue-and-stall cycles of a batch (selected + exposed stalls) do not grow
    with more resident warps: the others hide the stalls."""
    mem = _memory()
    costs = [instruction_cost(i, mem, a100p, 0.0) for i in WARP]
    intervals = profile(costs, [i.src for i in WARP], [i.dst for i in WARP])
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


#: A warp with a bounds guard: S2R R0; ISETP P0 = R0 < n; @P0 EXIT (the guard-exit path, 3
#: instructions), then the loads, the DFMA and the store of ``WARP``.
GUARDED = [_ins("S2R", ["R0"], [], "mio"), _ins("ISETP", ["P0"], ["R0"], "int"), _ins("EXIT", [], ["P0"], "control"),
           *WARP]


def test_batch_with_guard_warps_by_hand(a100p):
    """8 full and k = 8 guard-only warps in one batch (A100, m1 = m2 = 1, omega 2, r = w = 8).

    One warp's timeline: S2R at 0 (ready at 1), ISETP at 1 (4 cycles), EXIT waits until 5: stall
    3 (wait); LDGs at 6 and 7 (551 cycles), DFMA at 558: stall 550 (long); STG waits for the DFMA
    until 562: stall 3 (wait); the store completes at 823: drain 260 (long). Intervals (I, guard
    part): (2, 2), (3, 1: the EXIT), (1, 0), (1, 0); p = 7 / 823.

    Intervals 1 and 2 hold x = 16 warps (o = 3 others per sub-core), 3 and 4 only the 8 full ones
    (o = 1). selected = (2 x 8 + 2 x 8) / 4 + (3 x 8 + 1 x 8) / 4 + 8 / 4 + 8 / 4 = 20: the guard
    warps add I_guard x_g / 4 = 3 x 8 / 4 = 6 to the 14 of the full warps alone. Exposed stalls:
    3 - 3p, 550 - 3p, 3 - p, 260 - p. Structural: interval 1 INT 2 x 16 / 4 = 8 = base (no excess);
    interval 2 L1 2 x 2 x 8 = 32 wavefronts - base 8 = 24; interval 3 FP64 4 x 8 / 4 - 2 = 6;
    interval 4 L1 2 x 8 - 2 = 14. Sectors: 2 x 8 x 8 = 128 reads (all to DRAM), 8 x 8 = 64 writes."""
    params = a100p.__class__(**{**a100p.__dict__, "noc_bandwidth_gb_s": 5000.0})
    mem = _memory()
    costs = [instruction_cost(i, mem, params, 0.0) for i in GUARDED]
    intervals = profile(costs, [i.src for i in GUARDED], [i.dst for i in GUARDED], guard_instructions=3)
    assert [(k.instructions, k.guard.instructions, k.stall) for k in intervals] == \
        [(2, 2, 3), (3, 1, 550), (1, 0, 3), (1, 0, 260)]
    s = batch_stack(intervals, 8, params, active_sms=108, dram_bandwidth_gb_s=1940.0, dram_writes=False,
                    guard_warps=8)
    p = 7 / 823
    assert s["selected"] == pytest.approx(20)
    assert s["stall_wait"] == pytest.approx(3 - 3 * p + 3 - p)
    assert s["stall_long_scoreboard"] == pytest.approx(550 - 3 * p + 260 - p)
    assert s["stall_lg_throttle"] == pytest.approx(24 + 14) and s["stall_math_pipe_throttle"] == pytest.approx(6)
    tau_noc, tau_dram = 1.41e9 * 32 / 5000e9, 1.41e9 * 32 / 1940e9
    assert s["stall_mio_throttle"] == pytest.approx(0.5 * 108 * (128 + 64) * tau_noc + 0.5 * 108 * 128 * tau_dram)
    alone = batch_stack(intervals, 8, params, active_sms=108, dram_bandwidth_gb_s=1940.0, dram_writes=False)
    assert s["selected"] - alone["selected"] == pytest.approx(3 * 8 / 4)


def _brute_dealing(launch, sms, blocks_per_sm, i_full, i_guard, warp=32, sub_cores=4):
    """Every block by its index: thread-by-thread full/guard warps, SM ``b mod P``, batch
    ``(b div P) div M`` at position ``(b div P) mod M`` (its warps in SM slots from position x
    warps per block); per SM the Counter of batch compositions and per sub-core instructions."""
    import collections

    import numpy as np

    gx, gy, gz = launch.grid
    total = gx * gy * gz
    active = min(sms, total)
    batches = collections.defaultdict(lambda: [0, 0])
    sub_core = np.zeros((active, sub_cores))
    bx_, by_, bz_ = launch.block
    tz, ty, tx = np.meshgrid(np.arange(bz_), np.arange(by_), np.arange(bx_), indexing="ij")
    for b in range(total):
        g = (b % gx, (b // gx) % gy, b // (gx * gy))
        ok = np.ones(tx.size, dtype=bool)
        for d, t in enumerate((tx.ravel(), ty.ravel(), tz.ravel())):
            ok &= (g[d] * launch.block[d] + t) * launch.fold[d] < launch.domain[d]
        warps = math.ceil(ok.size / warp)
        full = [bool(ok[w * warp:(w + 1) * warp].any()) for w in range(warps)]
        s, j = b % active, b // active
        key = (s, j // blocks_per_sm)
        batches[key][0] += sum(full)
        batches[key][1] += warps - sum(full)
        for w, f in enumerate(full):
            sub_core[s, ((j % blocks_per_sm) * warps + w) % sub_cores] += i_full if f else i_guard
    per_sm = [collections.Counter() for _ in range(active)]
    for (s, _), comp in batches.items():
        per_sm[s][tuple(comp)] += 1
    return per_sm, sub_core


@pytest.mark.parametrize("block, fold, domain, sms, per_sm", [
    ((32, 4, 2), (1, 2, 1), (40, 13, 5), 5, 3),     # ragged in x, y (folded) and z
    ((8, 4, 4), (1, 1, 2), (20, 9, 7), 7, 2),       # warps span rows and planes
    ((1, 64, 1), (1, 1, 1), (3, 40, 2), 4, 2),      # half of the last block's warps guard-only
    ((32, 3, 1), (1, 1, 1), (64, 8, 3), 3, 3),      # 3-warp blocks: slots shift by 3 per position
])
def test_dealing_equals_enumeration(block, fold, domain, sms, per_sm):
    import collections

    from warpspeed.launch.geometry import make_launch
    from warpspeed.trace.warps import block_kinds

    launch = make_launch(block, fold, domain)
    kinds = block_kinds(launch, 32)
    w_b = math.ceil(math.prod(block) / 32)
    d = deal_blocks(launch.grid, kinds, w_b, per_sm, sms, 4, 100, 7)
    expected, sub_core = _brute_dealing(launch, sms, per_sm, 100, 7)
    got = [collections.Counter({comp: int(n) for comp, n in zip(d.compositions, row) if n}) for row in d.batch_counts]
    assert got == expected
    assert d.sub_core_instructions.tolist() == sub_core.tolist()
    assert d.blocks.sum() == math.prod(launch.grid)


def test_distribution_idle_by_hand(a100p):
    """ID (eq 29) = the busiest sub-core's instructions / IR - the issue cycles charged (S_selected).

    3-warp blocks, 2 resident on one SM, 1000 instructions, no stall: SM warp slots 0-2 and 3-5,
    sub-core = slot mod 4: [2000, 2000, 1000, 1000]; the issue term charges 1000 x 6 / 4 = 1500
    per sub-core (eq 9), the busiest needs 2000: ID = 500. (AMALI's reference, the
    representative's sub-core, gives 0 with the representative on sub-core 0 or 1 and 1000 on 2
    or 3; the issue term already charged 1500 of either.) 4-warp blocks whose last warp is
    guard-only (100 instructions): [2000, 2000, 2000, 200], issue (6 x 1000 + 2 x 100) / 4 =
    1550, ID = 450. 8-warp blocks: [4000] x 4 = 8000 x 2 / 4: ID 0."""
    full3 = [TraceBlockKind(1, (False, True, True), (True,) * 3), TraceBlockKind(1, (True, True, True), (True,) * 3)]
    d = deal_blocks((2, 1, 1), full3, 3, 2, 1, 4, 1000, 100)
    assert d.sub_core_instructions.tolist() == [[2000, 2000, 1000, 1000]] and d.compositions == ((6, 0),)
    one = Interval(instructions=1000, guard=Demand(instructions=100))
    s = batch_stack([one], 6, a100p, active_sms=1, dram_bandwidth_gb_s=1940.0)
    assert s["selected"] == 1500
    assert distribution_idle(d.sub_core_instructions, [s["selected"]], 1.0).tolist() == [500]
    guard4 = [TraceBlockKind(1, (x, True, True), (True, True, True, False)) for x in (False, True)]
    d = deal_blocks((2, 1, 1), guard4, 4, 2, 1, 4, 1000, 100)
    assert d.sub_core_instructions.tolist() == [[2000, 2000, 2000, 200]] and d.compositions == ((6, 2),)
    s = batch_stack([one], 6, a100p, active_sms=1, dram_bandwidth_gb_s=1940.0, guard_warps=2)
    assert s["selected"] == 1550
    assert distribution_idle(d.sub_core_instructions, [s["selected"]], 1.0).tolist() == [450]
    assert distribution_idle([[4000] * 4], [8000 * 2 / 4], 1.0).tolist() == [0]


def test_dealing_rejects_kinds_that_do_not_match_the_grid():
    with pytest.raises(WarpspeedError, match="count 1 blocks; the grid 2x1x1 has 2"):
        deal_blocks((2, 1, 1), [TraceBlockKind(1, (True, True, True), (True,))], 1, 1, 4, 4, 10, 2)
    with pytest.raises(WarpspeedError, match="lacks a kind"):
        deal_blocks((2, 1, 1), [TraceBlockKind(2, (True, True, True), (True,))], 1, 1, 4, 4, 10, 2)


def _star_trace(a100, block, domain, fold=(1, 1, 1)):
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.predict import predict

    return build_trace(predict(star_stencil(3, 4, domain), a100, block, fold))


def test_guard_only_warps_cost_their_guard_path_only(a100, a100p):
    """star3d-r4 in 1x1024x1 blocks: on 640x512x512 each block's y extent (1024 threads) is twice
    the domain's, so every block has 16 full and 16 guard-only warps; on 640x1024x256 none is
    guard-only. Same lattice updates, so the kernel must take about as long: before guard-only
    warps were charged the full path, 640x512x512 came out at half the rate (2.78 against 5.14
    Glup/s for the pystencils kernel). The domains still differ in their DRAM volume (a 640x1024
    plane is twice a 640x512 one, so fewer of the stencil's 9 planes stay in the L2: the
    roofline's DRAM limit is 25 against 14 Glup/s), which the model's DRAM queueing sees: within
    8 %. With the trace's memory figures made equal the guard grid is slower only by the guard
    path and the latency its halved occupancy exposes: by 0 to 4 %."""
    import dataclasses

    guard = _star_trace(a100, (1, 1024, 1), (640, 512, 512))
    plain = _star_trace(a100, (1, 1024, 1), (640, 1024, 256))
    assert guard.launch.guard_warps == guard.launch.full_warps and plain.launch.guard_warps == 0
    r_guard, r_plain = interval_model(guard, a100p), interval_model(plain, a100p)
    assert r_guard.lups_per_s == pytest.approx(r_plain.lups_per_s, rel=0.08)
    assert (r_guard.full_warps_per_batch, r_guard.guard_warps_per_batch) == (32, 32)
    same = dataclasses.replace(guard, memory=plain.memory, roofline=plain.roofline)
    r_same = interval_model(same, a100p)
    assert 0.96 * r_plain.lups_per_s <= r_same.lups_per_s <= r_plain.lups_per_s


def test_l1_term_charges_the_roofline_wavefronts(a100, a100p):
    """The L1 structural demand of a batch is its warps' wavefronts at one per cycle (eq 11 with
    B_L1 = 1): summed over the intervals it equals the roofline's L1 cycles per lup x the lups of
    the batch's warps, so the L1 term neither rounds nor multiplies them (selected + lg_throttle
    >= that demand, = where the L1 bounds every interval)."""
    t = _star_trace(a100, (8, 4, 32), (640, 512, 512), fold=(1, 1, 2))
    mem, stream = t.memory, t.instructions.stream
    costs = [instruction_cost(i, mem, a100p, 1.0) for i in stream]
    intervals = profile(costs, [i.src for i in stream], [i.dst for i in stream])
    lups_per_warp = 32 * t.launch.cells_per_thread
    assert sum(k.wavefronts for k in intervals) == pytest.approx(mem.totals.l1_cycles_per_lup * lups_per_warp)
    s = batch_stack(intervals, 64, a100p, active_sms=108, dram_bandwidth_gb_s=1381.0)
    demand = 64 * mem.totals.l1_cycles_per_lup * lups_per_warp
    assert s["selected"] + s["stall_lg_throttle"] >= demand - 1e-6


def test_sms_combine_by_hand():
    """Two SMs whose work is 1000 and 3000 cycles (all issue), the costliest batch 500: the mean
    2000 + 500 = 2500 is below the slowest SM, so the kernel takes 2500 (blocks go to whichever SM
    frees a slot); with 1000 and 1900 the bound is 1450 + 500 = 1950, and the slowest SM, 1900,
    is taken."""
    import numpy as np

    from warpspeed.interval.cpi_stack import combine_sms
    from warpspeed.interval.multiwarp import BATCH_KEYS

    def rows(*selected):
        out = np.zeros((len(selected), len(BATCH_KEYS)))
        out[:, 0] = selected
        return out

    c = combine_sms(rows(1000, 3000), np.zeros(2), np.array([2.0, 6.0]), rows(500, 250))
    assert (c.work.sum(), c.blocks, c.rule) == (2500, 4.0, "SM mean + one batch")
    c = combine_sms(rows(1000, 1900), np.zeros(2), np.array([2.0, 5.0]), rows(500, 250))
    assert (c.work.sum(), c.blocks, c.rule) == (1900, 5.0, "slowest SM")
