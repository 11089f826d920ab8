"""L1 cycles: data-pipe bank conflicts and tag-stage lines (Ernst et al., JPDC 2023, figure 4),
hand-derived stencil cases, brute force, and the A100 gpu-strides measurements."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpspeed import Field, Kernel, load, load_linear
from warpspeed.memory.addresses import block_cells, compile_kernel
from warpspeed.kernel.description import X, Y, Z
from warpspeed.memory.l1 import l1_cycles
from warpspeed.memory.l1_stages import TAG_OVERHEAD_WAVEFRONTS, TAG_WAVEFRONTS_PER_LINE
from warpspeed.validation.strides import StrideRow, benchmark_kernel, read_strides_csv, strides_accuracy
from warpspeed.launch.geometry import make_launch
from warpspeed.kernel.builtin import star_stencil
from tests.paths import ROOT


def _cycles(kernel, device, block, fold=(1, 1, 1)):
    launch = make_launch(block, fold, kernel.domain)
    return l1_cycles(compile_kernel(kernel), block_cells(launch), device)


@pytest.mark.parametrize("stride, per_half_warp", [
    (1, 1),   # consecutive doubles: 16 distinct banks
    (2, 2),   # every other double: two words per bank
    (16, 16),  # 128 B stride: all 16 lanes in one bank
])
def test_paper_figure_4(a100, stride, per_half_warp):
    k = Kernel("fig4", (Field("A", 8, (1 << 20,)),), (load_linear("A", f"{stride} * x"),), (4096, 1, 1))
    result = _cycles(k, a100, (32, 1, 1))
    # one instruction, two half warps per warp, 32 lups per warp
    assert result.cycles_per_lup == pytest.approx(2 * per_half_warp / 32)


def test_four_byte_elements_use_full_warps(a100):
    k = Kernel("f32", (Field("A", 4, (1 << 20,)),), (load_linear("A", "x"),), (4096, 1, 1), dtype="float32")
    # 32 floats = 128 B = 32 words in 32 banks: one wavefront for the whole warp
    assert _cycles(k, a100, (32, 1, 1)).cycles_per_lup == pytest.approx(1 / 32)


@pytest.mark.parametrize("shift", [1, 4, 7, 16, 31])
def test_a_row_that_starts_inside_a_line_and_spans_two_costs_one_cycle(a100, shift):
    """32 consecutive floats starting ``4 shift`` bytes into a 128 B line touch two lines: 32
    distinct banks (one data-pipe wavefront) and two tags (one tag-stage wavefront). Measured on the
    A100 (gpu-strides, float stride 1, where 7 of a thread's 8 loads start 16-112 B into a line):
    1.02 cycles, 1.00 data-pipe and 1.00 tag wavefronts per warp load -- one cycle, not two."""
    k = Kernel("shifted", (Field("A", 4, (1 << 20,)),), (load_linear("A", f"x + {shift}"),), (4096, 1, 1),
               dtype="float32")
    assert _cycles(k, a100, (32, 1, 1)).cycles_per_lup * 32 == pytest.approx(1.02, rel=0.02)


def test_far_rows_in_different_banks_share_a_wavefront(a100):
    # Row pitch 1032 doubles = 8256 B = 2064 four-byte words, 2064 % 32 = 16: the two rows of 8
    # doubles in a half warp use banks 0-15 and 16-31, so one wavefront serves both although
    # they are far apart (the A100 measures 4 data-pipe wavefronts per warp for 1-wide double
    # columns 32 KiB apart, not 32). Tag stage: 4 rows x 64 B at a 64 B line offset -> 4 lines,
    # max(1, 0.46 + 0.28 * 4) = 1.58 < 2 wavefronts of the data pipe.
    f = Field("A", 8, (1032, 64))
    k = Kernel("far", (f,), (load("A", X, Y),), (1032, 64, 1))
    result = _cycles(k, a100, (8, 4, 1))
    assert result.cycles_per_lup == pytest.approx(2 * 1 / 32)


def test_five_point_stencil_by_hand(a100):
    # 5 loads + 1 store; row pitch 1040 doubles (8320 B, 65 lines).
    k = star_stencil(2, 1, (1038, 64))
    # (32,1,1): each half warp reads 16 consecutive doubles -> 1 wavefront; 6 instructions x 2
    assert _cycles(k, a100, (32, 1, 1)).cycles_per_lup == pytest.approx(6 * 2 / 32)
    # (16,2,1): each half warp is one row of 16 -> same
    assert _cycles(k, a100, (16, 2, 1)).cycles_per_lup == pytest.approx(6 * 2 / 32)
    # (8,4,1): each half warp spans two rows 8320 B = 2080 words apart, 2080 % 32 = 0: the rows
    # use the same banks -> 2 wavefronts per half warp, 4 per warp (tag stage: at most 4 rows x
    # 2 lines = 8 lines -> 0.46 + 0.28 * 8 = 2.7 < 4)
    assert _cycles(k, a100, (8, 4, 1)).cycles_per_lup == pytest.approx(6 * 4 / 32)


def _brute_l1(kernel, device, block, fold):
    """Independent reference: plain loops over the warps of the middle block.

    Per warp instruction: data pipe = sum over lane groups (16 lanes for doubles) of the largest
    number of distinct 4-byte words in one of 32 banks; tag stage = max(1, 0.46 + 0.28 * distinct
    128 B lines); cycles = the larger. A fold copy's load of a read-only field is dropped when
    another copy earlier in program order loads the same address in every thread.
    """
    launch = make_launch(block, fold, kernel.domain)
    bidx = [g // 2 for g in launch.grid]
    fields = {f.name: f for f in kernel.fields}
    stored = {a.field for a in kernel.accesses if a.is_store}
    threads = [(tx, ty, tz) for tz in range(block[2]) for ty in range(block[1]) for tx in range(block[0])]
    folds = [(jx, jy, jz) for jz in range(fold[2]) for jy in range(fold[1]) for jx in range(fold[0])]

    def cell(t, j):
        return [(bidx[d] * block[d] + t[d]) * fold[d] + j[d] for d in range(3)]

    def inside(c):
        return all(c[d] < kernel.domain[d] for d in range(3))

    def address(acc, c):
        f = fields[acc.field]
        strides, step = [0] * f.ndim, 1
        for pos in f.layout:
            strides[pos] = step
            step *= f.shape[pos]
        idx = [int(e.subs({X: c[0], Y: c[1], Z: c[2]})) for e in acc.index]
        return f.alignment_bytes + f.element_bytes * sum(i * s for i, s in zip(idx, strides))

    # program order: copy by copy; lanes of each issued instruction
    issued = []  # (element bytes, {thread: address}, lanes)
    seen = {}
    for j in folds:
        for acc in kernel.accesses:
            addrs = tuple(address(acc, cell(t, j)) for t in threads)
            lanes = {n for n, t in enumerate(threads) if inside(cell(t, j))}
            key = (acc.field, addrs)
            if not acc.is_store and acc.field not in stored and key in seen:
                seen[key][2].update(lanes)
                continue
            entry = (fields[acc.field].element_bytes, addrs, set(lanes))
            issued.append(entry)
            if not acc.is_store and acc.field not in stored:
                seen[key] = entry
    total = 0.0
    for elem, addrs, lanes in issued:
        group = min(32, 128 // elem)
        for w0 in range(0, len(threads), 32):
            warp = [n for n in range(w0, min(w0 + 32, len(threads))) if n in lanes]
            if not warp:
                continue
            data = 0
            for g0 in range(w0, w0 + 32, group):
                words = {addrs[n] // 4 + k for n in warp if g0 <= n < g0 + group for k in range(elem // 4)}
                if words:
                    data += max(sum(1 for w in words if w % 32 == b) for b in range(32))
            lines = {addrs[n] // 128 for n in warp} | {(addrs[n] + elem - 1) // 128 for n in warp}
            total += max(data, max(1.0, 0.46 + 0.28 * len(lines)))
    lups = sum(inside(cell(t, j)) for j in folds for t in threads)
    return total / lups


@pytest.mark.parametrize("kernel, block, fold", [
    (star_stencil(3, 1, (30, 20, 12)), (16, 4, 2), (1, 1, 1)),
    (star_stencil(3, 1, (30, 20, 12)), (12, 5, 3), (1, 2, 1)),
    (star_stencil(2, 2, (50, 21)), (8, 8, 1), (2, 1, 1)),
    (star_stencil(3, 2, (21, 13, 9)), (4, 4, 4), (1, 1, 2)),
])
def test_matches_brute_force(a100, kernel, block, fold):
    assert _cycles(kernel, a100, block, fold).cycles_per_lup == pytest.approx(_brute_l1(kernel, a100, block, fold))


@settings(max_examples=25, deadline=None)
@given(bx=st.sampled_from([1, 2, 4, 8, 16, 32, 64]), by=st.sampled_from([1, 2, 4, 8]),
       bz=st.sampled_from([1, 2, 4]), fy=st.sampled_from([1, 2]))
def test_at_least_one_wavefront_per_half_warp(a100, bx, by, bz, fy):
    # Lower bound: every 8-byte instruction costs at least one wavefront per half warp, i.e.
    # instructions / 16 cycles per lup when all lanes are active. The 7-point star has 7 loads
    # and 1 store per cell; folded 2 in y, the copies share 2 loads (y + 1 of the first cell is
    # the centre of the second, its centre the second's y - 1): (2 * 8 - 2) / 2 = 7 per lup.
    k = star_stencil(3, 1, (64, 32, 16))
    instructions_per_lup = {1: 8, 2: 7}[fy]
    result = _cycles(k, a100, (bx, by, bz), (1, fy, 1))
    assert result.cycles_per_lup >= instructions_per_lup / 16 - 1e-12
    assert result.cycles_per_lup == pytest.approx(sum(result.per_field.values()))


# --- the A100 gpu-strides measurements (fits/data/public/gpu-strides/a100.csv) -------------------------

_STRIDES_CSV = ROOT / "fits" / "data" / "public" / "gpu-strides" / "a100.csv"


def _row(precision, kind, arg, pitch=0):
    return StrideRow(precision=precision, kind=kind, arg=arg, pitch=pitch or arg, cycles=1.0,
                     data_pipe_wavefronts=0.0, tag_wavefronts=0.0)


def test_gpu_strides_a100_cycles_within_8_percent(a100):
    rows = read_strides_csv(_STRIDES_CSV)
    assert len(rows) == 144
    accuracy = strides_accuracy(rows, a100)
    assert accuracy.mape_percent <= 8.0


def test_gpu_strides_a100_data_pipe_counter_exact(a100):
    # the bank rule reproduces l1tex__data_pipe_lsu_wavefronts on every measured row
    for row in read_strides_csv(_STRIDES_CSV):
        kernel, block = benchmark_kernel(row)
        result = _cycles(kernel, a100, block)
        per_warp_load = result.data_pipe_wavefronts_per_lup * 32 / 8
        assert per_warp_load == pytest.approx(row.data_pipe_wavefronts, abs=0.011), row


def _tag(lines):
    return max(1.0, TAG_OVERHEAD_WAVEFRONTS + TAG_WAVEFRONTS_PER_LINE * lines)


@pytest.mark.parametrize("row, data, tags", [
    # 32 consecutive doubles = 256 B: 16 lanes x 2 words fill the 32 banks once per half warp ->
    # 2 wavefronts; at offsets 0..224 B in 32 B steps the 256 B span 2 lines (offsets 0, 128
    # mod 256) or 3 (the other 6): tag 1.02 or 1.30 < 2
    (_row("double", "stride", 1), 2, [_tag(2)] * 2 + [_tag(3)] * 6),
    # all lanes on one float: one word, one line
    (_row("float", "stride", 0), 1, [_tag(1)] * 8),
    # float stride 3: words 3 l, gcd(3, 32) = 1 -> 32 distinct banks, 1 wavefront; the 384 B span
    # covers 3 lines at offset 0 and 4 at the other 7 offsets (16 B steps): tag > data
    (_row("float", "stride", 3), 1, [_tag(3)] + [_tag(4)] * 7),
    # 1-wide double columns 4098 doubles (32784 B = 8196 words, 8196 % 32 = 4) apart: a half warp's
    # 16 rows use 8 bank pairs twice -> 2 wavefronts, 4 per warp; 32 rows -> 32 lines (9.42)
    (_row("double", "block", 1, 4098), 4, [_tag(32)] * 8),
])
def test_gpu_strides_hand_derived(a100, row, data, tags):
    kernel, block = benchmark_kernel(row)
    result = _cycles(kernel, a100, block)
    per_load = 32 / 8  # lups (threads) per warp load instruction of the 8-load loop body
    assert result.data_pipe_wavefronts_per_lup * per_load == pytest.approx(data)
    assert result.tag_wavefronts_per_lup * per_load == pytest.approx(sum(tags) / 8)
    assert result.cycles_per_lup * per_load == pytest.approx(sum(max(data, t) for t in tags) / 8)


def test_stride_one_double_warp_costs_two_wavefronts(a100):
    # hand-derived: a warp of 32 consecutive doubles (256 B-aligned) = two half warps of 128 B,
    # one wavefront each; 2 lines -> tag max(1, 0.46 + 0.56) = 1.02 < 2
    k = Kernel("s1", (Field("A", 8, (1 << 16,)),), (load_linear("A", "x"),), (4096, 1, 1))
    result = _cycles(k, a100, (32, 1, 1))
    assert result.cycles_per_lup * 32 == pytest.approx(2.0)
    assert result.tag_wavefronts_per_lup * 32 == pytest.approx(1.02)


def test_cdna_column_of_doubles_costs_one_clock_per_lane():
    from warpspeed.hardware.device import load_device

    mi210 = load_device("MI210")
    # doubles 2048 B apart (banked vector L1): every lane reads dword banks 0 and 1 of column 0 of its
    # own line, so each lane clashes with the one before -> 16 clocks per quarter-wave, 64 per wave64
    # (1 per lup); the 16 chunks' request stage (16 x 0.44) is lower. No separate tag stage.
    k = Kernel("col", (Field("A", 8, (1 << 20,)),), (load_linear("A", "256 * x"),), (4096, 1, 1))
    result = _cycles(k, mi210, (64, 1, 1))
    assert result.tag_wavefronts_per_lup == pytest.approx(0.0)
    assert result.data_pipe_wavefronts_per_lup == pytest.approx(1.0)
    assert result.cycles_per_lup == pytest.approx(1.0)
