"""The per-kernel trace: schema, warp counts by brute force, the derived stream counted by hand."""

import json
import math

import numpy as np
import pytest

from warpspeed.kernel.builtin import BUILTIN_KERNELS, builtin_kernel, star_stencil
from warpspeed.launch.geometry import make_launch
from warpspeed.predict import predict
from warpspeed.trace import build_trace, validate_trace
from warpspeed.sass.derived import derived_stream
from warpspeed.trace.schema import TraceError
from warpspeed.trace.warps import warp_counts


def _brute_warps(block, fold, domain, warp=32):
    """Every thread of every block: valid if its first cell is inside the domain in x, y and z."""
    grid = [math.ceil(d / (b * f)) for d, b, f in zip(domain, block, fold)]
    full = guard = valid = 0
    tz, ty, tx = np.meshgrid(*(np.arange(block[d]) for d in (2, 1, 0)), indexing="ij")
    lin = [tx.ravel(), ty.ravel(), tz.ravel()]
    for gz in range(grid[2]):
        for gy in range(grid[1]):
            for gx in range(grid[0]):
                g = (gx, gy, gz)
                ok = np.ones(lin[0].size, dtype=bool)
                for d in range(3):
                    ok &= (g[d] * block[d] + lin[d]) * fold[d] < domain[d]
                for w in range(0, ok.size, warp):
                    if ok[w:w + warp].any():
                        full += 1
                    else:
                        guard += 1
                valid += int(ok.sum())
    return full, guard, valid


@pytest.mark.parametrize("block, fold, domain", [
    ((32, 8, 4), (1, 1, 1), (64, 16, 8)),       # no ragged edge: every warp full
    ((32, 4, 2), (1, 2, 1), (40, 13, 5)),       # ragged in x, y (folded) and z
    ((8, 4, 4), (1, 1, 2), (20, 9, 7)),         # warps span rows and planes
    ((48, 3, 1), (2, 1, 1), (70, 5, 3)),        # 144 threads: last warp half padded
])
def test_warp_counts_equal_brute_force(block, fold, domain):
    counts = warp_counts(make_launch(block, fold, domain), 32)
    assert (counts.full_warps, counts.guard_warps, counts.valid_threads) == _brute_warps(block, fold, domain)


def test_warp_counts_by_hand():
    """Block 32x4x1 over 40x6x1 cells: grid 2x2. Along x the second block has 8 valid threads;
    along y the second block 2 valid rows. Valid threads = 40 x 6 = 240. Warps are rows: block
    (0,0) 4 full, (1,0) 4 full (8 lanes each), (0,1) 2 full + 2 guard, (1,1) 2 full + 2 guard:
    12 full, 4 guard, 240 / 12 = 20 active lanes per full warp."""
    c = warp_counts(make_launch((32, 4, 1), (1, 1, 1), (40, 6, 1)), 32)
    assert (c.full_warps, c.guard_warps, c.valid_threads) == (12, 4, 240)
    assert c.active_lanes_per_warp == 20


def test_block_kinds_by_hand():
    """Block 32x4x1 over 40x6x1 cells (grid 2x2, see test_warp_counts_by_hand): interior (0,0) 4
    full warps; last along x (1,0) 4 full (8 lanes each); last along y (0,1) and (1,1): rows 0-1
    full, 2-3 guard-only. z has one block, the last."""
    from warpspeed.trace.warps import block_kinds

    kinds = {k.last: (k.count, k.full) for k in block_kinds(make_launch((32, 4, 1), (1, 1, 1), (40, 6, 1)), 32)}
    assert kinds == {(False, False, True): (1, (True,) * 4), (True, False, True): (1, (True,) * 4),
                     (False, True, True): (1, (True, True, False, False)),
                     (True, True, True): (1, (True, True, False, False))}


def test_derived_stream_of_the_7_point_star_by_hand():
    """7-point star in double: 7 loads, 6 DFMA + 1 DMUL (c0 u0 + sum c_i u_i), 1 store per
    cell. Folded 2 in y, the copies' loads of (y+1) and (y) coincide: 14 - 2 = 12 loads,
    12 DFMA, 2 DMUL, 2 stores. Prefix: 3 dims x (2 S2R + 1 IMAD) + 3 ISETP + predicated EXIT
    = 13 instructions, then one IMAD.WIDE per field (2)."""
    k = star_stencil(3, 1, (64, 32, 16))
    one = derived_stream(k, (1, 1, 1)).opcode_counts()
    assert (one["LDG"], one["DFMA"], one["DMUL"], one["STG"]) == (7, 6, 1, 1)
    s = derived_stream(k, (1, 2, 1))
    two = s.opcode_counts()
    assert (two["LDG"], two["DFMA"], two["DMUL"], two["STG"]) == (12, 12, 2, 2)
    assert s.guard_exit_instructions == 13
    assert s.full_path_instructions == 13 + 2 + 12 + 14 + 2 + 1
    assert s.instructions[12].opcode == "EXIT" and s.instructions[12].predicate == "P0"


def test_derived_dependences_chain_the_arithmetic():
    """Each FP result feeds the next operation and the store reads the last result."""
    s = derived_stream(star_stencil(3, 1, (64, 32, 16)), (1, 1, 1))
    fp = [i for i in s.instructions if i.fu == "fp64"]
    for prev, ins in zip(fp, fp[1:]):
        assert prev.dst[0] in ins.src
    store = next(i for i in s.instructions if i.opcode == "STG")
    assert fp[-1].dst[0] in store.src


@pytest.mark.parametrize("name", sorted(BUILTIN_KERNELS))
def test_every_builtin_trace_follows_the_schema(name, a100):
    k = builtin_kernel(name, (96, 40, 20) if name != "star2d-r1" else None)
    p = predict(k, a100, (32, 4, 2) if k.domain[2] > 1 else (32, 8, 1))
    trace = build_trace(p).as_json()
    validate_trace(trace)
    json.dumps(trace, allow_nan=False)


def test_trace_memory_figures_by_hand(a100):
    """omega, r and w follow from the per-lup volumes: lups per warp = 32 x 2 (fold); the
    source field's 12 loads per thread (see above); its L2 load bytes x 64 / 32 B / 12."""
    p = predict(star_stencil(3, 1, (256, 128, 64)), a100, (32, 8, 4), (1, 2, 1))
    t = build_trace(p).as_json()
    src = t["memory"]["fields"]["src"]
    assert src["loads_per_thread"] == 12 and src["stores_per_thread"] == 0
    assert src["l2_load_sectors_per_load"] == pytest.approx(p.l2_load_per_field["src"] * 64 / 32 / 12)
    assert src["l1_wavefronts_per_instruction"] == pytest.approx(p.l1.per_field["src"] * 64 / 12)
    dst = t["memory"]["fields"]["dst"]
    assert dst["l2_store_sectors_per_store"] == pytest.approx(p.footprint.l2_store_bytes_per_lup * 64 / 32 / 2)
    assert t["memory"]["mapping"] == "per_field"
    assert t["launch"]["full_warps"] == 256 * 64 * 64 // 32 and t["launch"]["guard_warps"] == 0


def test_a_broken_trace_names_the_key(a100):
    t = build_trace(predict(star_stencil(3, 1, (64, 32, 16)), a100, (32, 4, 2))).as_json()
    t["launch"]["blocks_per_sm"] = 0
    with pytest.raises(TraceError, match="at launch/blocks_per_sm"):
        validate_trace(t)


@pytest.mark.slow
@pytest.mark.parametrize("model, objective", [("overlap", "time"), ("interval", "energy")])
def test_rank_traces_are_the_traces_of_the_ranked_predictions(tmp_path, model, objective):
    """``rank --traces`` writes one valid document per ranked configuration, in ranking order,
    equal to the trace built afresh from a new prediction of that configuration (the built-in
    copy kernel: its registers are the kernel's own)."""
    from click.testing import CliRunner

    from warpspeed.cli.main import main
    from warpspeed.hardware.device import load_device
    from warpspeed.predict import Predictor

    path = tmp_path / "t.jsonl"
    result = CliRunner().invoke(main, ["rank", "--kernel", "copy", "--domain", "64,64,64", "--threads", "128",
                                       "--jobs", "1", "--model", model, "--objective", objective,
                                       "--traces", str(path), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    docs = [json.loads(line) for line in path.read_text().splitlines()]
    # 128 = 2^a 2^b 2^c, a + b + c = 7: C(9, 2) = 36 blocks, less z = 128 (above 64); three foldings
    assert len(docs) == len(rows) == 3 * 35
    a100 = load_device("A100-SXM4-40GB")
    kernel = builtin_kernel("copy", (64, 64, 64))
    for row, doc in zip(rows, docs):
        validate_trace(doc)
        block, fold = tuple(row["block"]), tuple(row["fold"])
        assert (tuple(doc["launch"]["block"]), tuple(doc["launch"]["fold"])) == (block, fold)
        assert doc == build_trace(Predictor(kernel, a100).predict(block, fold)).as_json()
