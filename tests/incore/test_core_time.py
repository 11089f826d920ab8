"""The in-core time against hand calculations from the documented throughputs (whitepapers, CUDA
C++ Programming Guide throughput table, AMALI Table 2) and the one fitted constant."""

import math

import pytest

from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import load_device
from warpspeed.hardware.instruction_facts import load_family
from warpspeed.incore.core_time import core_cycles, core_time
from warpspeed.incore.limit import load_latency
from warpspeed.incore.mix import InstructionMix, description_mix
from warpspeed.kernel.description import Field, FlopCounts, Kernel, X, Y, load, store


def _mix(**counts) -> InstructionMix:
    base = dict(fp=0.0, precision="float32", integer=0.0, sfu=0.0, loads=0.0, stores=0.0, other=0.0,
                operand_reads=0.0, fp_chain=0.0, cells_per_thread=1)
    return InstructionMix(**{**base, **counts})


def test_issue_slots_four_schedulers_one_instruction_each():
    """128 thread instructions per update = 4 warp instructions; 4 schedulers x 1 per cycle -> 1 cycle."""
    a100 = load_device("A100-SXM4-40GB")
    t = core_cycles(_mix(other=128.0), a100, load_family("ampere"), warps_per_sm=64)
    assert t.terms["issue"] == pytest.approx(1.0)


def test_ga102_shares_fp32_lanes_with_integer_work():
    """GA102 (whitepaper): 64 FP32-only lanes + 64 FP32-or-INT32 lanes per SM. 64 FFMA and 64 integer
    instructions per update: FP32 alone 64/128 = 0.5, INT alone 64/64 = 1, together (64+64)/128 = 1;
    with 128 FFMA and 64 INT: (128+64)/128 = 1.5 cycles, more than either pipe alone."""
    a40 = load_device("A40")
    t = core_cycles(_mix(fp=128.0, integer=64.0), a40, load_family("ampere-ga102"), warps_per_sm=48)
    assert (t.terms["fp"], t.terms["int"], t.terms["fp_int_shared"]) == pytest.approx((1.0, 1.0, 1.5))
    a100 = load_device("A100-SXM4-40GB")
    t100 = core_cycles(_mix(fp=128.0, integer=64.0), a100, load_family("ampere"), warps_per_sm=64)
    assert t100.terms["fp_int_shared"] == 0.0 and t100.terms["fp"] == pytest.approx(2.0)  # 64 FP32 lanes


def test_lsu_lanes_ga102_half_of_ga100():
    """One load and one store per update: GA100's 32 LD/ST units take 2/32, GA102's 16 take 2/16."""
    mix = _mix(loads=1.0, stores=1.0)
    assert core_cycles(mix, load_device("A100-SXM4-40GB"), load_family("ampere"), 64).terms["lsu"] == pytest.approx(1 / 16)
    assert core_cycles(mix, load_device("A40"), load_family("ampere-ga102"), 48).terms["lsu"] == pytest.approx(1 / 8)


def test_latency_littles_law_and_folding_ilp():
    """A chain of 100 dependent FP32 instructions (4 cycles each, AMALI Table 2) behind an L1 hit:
    (100 x 4 + L1) cycles per thread; 8 warps of 32 threads overlap them; two cells per thread
    are two chains, halving the time per update."""
    h200 = load_device("H200")
    l1 = h200.latencies.l1
    one = core_cycles(_mix(fp=100.0, fp_chain=100.0, loads=1.0), h200, load_family("hopper"), warps_per_sm=8)
    two = core_cycles(_mix(fp=100.0, fp_chain=100.0, loads=1.0, cells_per_thread=2), h200, load_family("hopper"),
                      warps_per_sm=8)
    assert one.terms["latency"] == pytest.approx(400 / (32 * 8))
    assert one.load_wait == pytest.approx(l1 / (32 * 8))
    assert one.limiter == "latency" and one.cycles_per_lup == pytest.approx((400 + l1) / (32 * 8))
    assert two.terms["latency"] == pytest.approx(one.terms["latency"] / 2)
    assert two.load_wait == pytest.approx(one.load_wait / 2)


def test_load_wait_adds_to_the_binding_term():
    """128 FFMA per update on the A100 (64 FP32 lanes per SM): 2 FP-pipe cycles. Loads served from a
    level 1024 cycles away, 64 resident warps: 1024 / (32 x 64) = 0.5 cycles of waiting per update
    beside them, 2.5 in all; without loads nothing is waited for."""
    a100 = load_device("A100-SXM4-40GB")
    t = core_cycles(_mix(fp=128.0, loads=2.0), a100, load_family("ampere"), 64, load_latency=1024.0)
    assert t.limiter == "fp" and t.load_wait == pytest.approx(0.5) and t.cycles_per_lup == pytest.approx(2.5)
    assert core_cycles(_mix(fp=128.0), a100, load_family("ampere"), 64, load_latency=1024.0).cycles_per_lup == 2.0
    with pytest.raises(WarpspeedError, match="load_latency"):
        core_cycles(_mix(fp=128.0, loads=2.0), a100, load_family("ampere"), 64, load_latency=-1.0)


def test_load_latency_is_the_farthest_serving_level():
    """The H200's pointer-chase latencies (the H100 PCIe's at 1.98 GHz): L1 19.5 ns, L2 151.3 ns, DRAM
    374.5 ns (gpu-benches gpu-latency/h100_pcie.txt) are 38.6, 299.6 and 741.5 cycles."""
    h200 = load_device("H200")
    assert load_latency(h200, 8.0, 4.0) == pytest.approx(374.5 * 1.98, rel=1e-3)
    assert load_latency(h200, 8.0, 0.0) == pytest.approx(151.3 * 1.98, rel=1e-3)
    assert load_latency(h200, 0.0, 0.0) == pytest.approx(19.5 * 1.98, rel=1e-3)


def test_register_reads_bind_ffma_on_32_lane_partitions_only():
    """FFMA-only code: on the H200 (32 FP32 lanes per partition) three reads per FFMA at the fitted 1.95
    reads per cycle give 1.95/3 = 65 % of the FP32 peak; on the A100 (16 lanes) the lanes bind (100 %)."""
    mix = _mix(fp=1280.0, operand_reads=3 * 1280.0)
    h = core_cycles(mix, load_device("H200"), load_family("hopper"), 64)
    assert h.limiter == "register_reads"
    assert h.terms["fp"] / h.cycles_per_lup == pytest.approx(1.95 / 3)
    a = core_cycles(mix, load_device("A100-SXM4-40GB"), load_family("ampere"), 64)
    assert a.limiter == "fp" and a.cycles_per_lup == pytest.approx(1280 / 64)


def _star(fold_y: int = 1):
    k = Kernel(name="star2d", fields=(Field("a", 4, (1030, 1030)), Field("b", 4, (1030, 1030))),
               accesses=(load("a", X + 1, Y + 1), load("a", X, Y + 1), load("a", X + 2, Y + 1), load("a", X + 1, Y),
                         load("a", X + 1, Y + 2), store("b", X + 1, Y + 1)),
               domain=(1024, 1024, 1), flops=FlopCounts(adds=4, muls=1), dtype="float32")
    return k


def test_description_mix_counts_by_hand():
    """2-D five-point star, float: per thread 2 dims x (IMAD + ISETP) + 2 fields x IMAD.WIDE = 6 integer,
    2 x 2 S2R + EXIT = 5 issue-only; 5 loads, 1 store, 5 FP. Folded 2 in y the thread loads 5 + 5 - 2
    (rows y+1 and y+2 of the first cell are rows y and y+1 of the second) = 8: 4 per update."""
    k = _star()
    m = description_mix(k, 1, 5)
    assert (m.integer, m.other, m.loads, m.stores, m.fp) == (6, 5, 5, 1, 5)
    assert m.operand_reads == 4 * 2 + 1 * 2 + 5 * 1 + 1 * 2 + (2 * (3 + 2) + 2 * 3)
    m2 = description_mix(k, 2, 8)
    assert (m2.integer, m2.loads, m2.cells_per_thread) == (3, 4, 2)


def test_amd_devices_have_no_core_time():
    assert core_time(_mix(fp=1.0), load_device("MI210"), 16) is None


def test_chain_term_is_zero_without_fp():
    t = core_cycles(_mix(loads=1.0), load_device("H200"), load_family("hopper"), 64)
    assert t.terms["latency"] == 0.0 and math.isfinite(t.cycles_per_lup)


def test_thread_loads_merge_fold_copies():
    """Folded 2 in y, the star's thread issues 8 distinct loads (hand count above)."""
    import numpy as np

    from warpspeed.memory.addresses import compile_kernel, merged_copies
    from warpspeed.incore.mix import thread_loads
    compiled = compile_kernel(_star())
    owner = merged_copies(compiled, ((0, 0, 0), (0, 1, 0)))
    rows = np.array([not a.access.is_store for a in compiled.accesses])
    assert thread_loads(rows, owner) == 8
    assert thread_loads(rows, merged_copies(compiled, ((0, 0, 0),))) == 5
