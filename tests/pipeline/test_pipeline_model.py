"""The pipeline model on warpspeed's predictions: graphs checked by hand, the memory latencies,
agreement with the roofline's memory limiter at full occupancy, occupancy, errors, the CLI."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main as cli
from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import load_device
from warpspeed.kernel.catalog import resolve_kernel
from warpspeed.models import estimate_time
from warpspeed.pipeline import build_graph, estimate, simulate
from warpspeed.pipeline.graph import operations_from_stream
from warpspeed.pipeline.latency import MemoryLatency, attach_latencies, load_latencies
from warpspeed.pipeline.launch_time import guard_shares
from warpspeed.pipeline.simulate import SELECTIONS
from warpspeed.predict import Predictor
from warpspeed.sass import full_warp_stream, parse_listing
from tests.paths import DATA

A100 = "A100-SXM4-40GB"
LISTING = DATA / "sass" / "star3d_r1_sm80.sass"


@pytest.fixture(scope="module")
def a100():
    return load_device(A100)


@pytest.fixture(scope="module")
def star_r4(a100):
    return Predictor(resolve_kernel("star3d-r4", device=a100), a100)


def test_sass_graph_of_the_7_point_stencil():
    """The pystencils 7-point stencil compiled for sm_80 (the checked-in listing): 7 loads of one
    address register, one DMUL and six DFMA, each reading the previous result, one store."""
    ops = operations_from_stream(full_warp_stream(parse_listing(LISTING.read_text())))
    loads = [i for i, op in enumerate(ops) if op.kind == "load"]
    fp = [i for i, op in enumerate(ops) if op.precision == "float64"]
    stores = [i for i, op in enumerate(ops) if op.kind == "store"]
    assert len(loads) == 7 and len(stores) == 1
    assert [ops[i].label for i in fp] == ["DMUL"] + ["DFMA"] * 6
    assert len({ops[i].inputs for i in loads}) == 1  # every load reads the same address register
    for previous, current in zip(fp, fp[1:]):
        assert previous in ops[current].inputs  # the accumulation chain
    assert fp[-1] in ops[stores[0]].inputs
    # each FP operation reads exactly one load that no other FP operation reads
    read = [j for i in fp for j in ops[i].inputs if j in loads]
    assert sorted(read) == loads


def test_ast_graph_of_the_7_point_stencil_by_hand(a100):
    """pystencils' 7-point stencil: 3 counters, 3 guard comparisons read by nothing, 7 loads of
    the counters, 0.1 a + 0.1 b + ... contracted to 1 mul and 6 fma (the extractor's counts), one
    store. One warp with int (0.5, 4), fp64 (1, 4) and memory (2, 100): the counters issue at 0,
    0.5, 1 and complete at 5 the latest; the loads issue 5, 7, ..., 17; the mul waits for the
    second load (107), each fma 4 more, the last at 131 completes at 135; the store issues at
    135 and, being final, completes 2 later: 137."""
    ps = pytest.importorskip("pystencils")
    from pystencils_plugin.extract import extract_kernel
    from pystencils_plugin.graph import kernel_operations

    src, dst = ps.fields("src, dst: double[3D]", layout="fzyx")
    taps = src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0] + src[0, 0, 1] + src[0, 0, -1]
    kernel = ps.create_kernel(ps.Assignment(dst.center, taps * 0.1 + 0.4 * src.center),
                              ps.CreateKernelConfig(target=ps.Target.CUDA))
    ops = kernel_operations(kernel)
    kinds = [op.kind for op in ops]
    assert kinds.count("index") == 3 and kinds.count("compare") == 3
    assert kinds.count("load") == 7 and kinds.count("store") == 1
    assert (kinds.count("mul"), kinds.count("fma"), kinds.count("add")) == (1, 6, 0)
    extracted = extract_kernel(kernel, compile_registers=False, shapes={"src": (66, 66, 66), "dst": (66, 66, 66)})
    flops = extracted.kernel.flops
    assert (flops.muls, flops.fmas, flops.adds) == (1, 6, 0)
    assert extracted.kernel.code.operations == ops
    compares = [i for i, k in enumerate(kinds) if k == "compare"]
    assert not any(c in op.inputs for op in ops for c in compares)
    graph = attach_latencies(ops, load_latencies("ampere"), a100, MemoryLatency("global", 2, 100, {}), "ast")
    assert simulate(graph, 1, 1, 1).cycles == 137
    # the dependence-only longest path: counter 4 + load 100 + mul and 6 fma x 4 + store 2
    assert sum(c for _, c in graph.critical_path()) == 4 + 100 + 7 * 4 + 2


def test_derived_graph_of_the_builtin_7_point_stencil(a100):
    """Without generated code the graph comes from the description: 7 loads and 1 store per
    cell, the FP nodes of Kernel.flops, cells per thread copies for a folded launch."""
    kernel = resolve_kernel("star3d-r1", device=a100)
    predictor = Predictor(kernel, a100)
    for fold, cells in (((1, 1, 1), 1), ((1, 2, 1), 2)):
        graph, memory, prologue = build_graph(predictor.predict((32, 8, 4), fold), source="derived")
        assert graph.source == "derived"
        fp = sum(1 for n in graph.nodes if n.pipeline == "fp64")
        assert fp == round(kernel.flops.instructions * cells)
        assert graph.count("store") == cells
        # loads of the same address in one thread merge: 7 per cell, minus the 2 a y-fold shares
        assert graph.count("load") == {1: 7, 2: 12}[cells]
        assert 0 < prologue < len(graph.nodes)


def test_memory_latencies_from_the_prediction(star_r4, a100):
    """lambda_mem = the binding level's cycles per memory node (L1 cycles, L2 or DRAM bytes over
    the per-SM bytes per cycle) and Lambda_mem = L1 + m1 L2 + m1 m2 DRAM with AMALI's A100 latencies."""
    p = star_r4.predict((32, 8, 4), (1, 1, 1))
    graph, memory, _ = build_graph(p)
    n = graph.count("load") + graph.count("store")
    per_node = 32 * 1 / n  # lups per memory node of a warp
    cycles_per_s = a100.sms * a100.clock_ghz * 1e9
    l1 = p.l1.cycles_per_lup * per_node
    l2 = (p.l2_load_bytes_per_lup + p.l2_store_bytes_per_lup) * per_node / (a100.l2.bandwidth_gb_s * 1e9 / cycles_per_s)
    dram = ((p.dram.load_bytes_per_lup + p.dram.store_bytes_per_lup) * per_node
            / (p.roofline.dram_bandwidth_gb_s * 1e9 / cycles_per_s))
    assert memory["issue_cycles"] == pytest.approx(max(l1, l2, dram))
    m1 = p.l2_load_bytes_per_lup / p.footprint.l1_load_bytes_per_lup
    m2 = p.dram.load_bytes_per_lup / p.l2_load_bytes_per_lup
    assert memory["completion_cycles"] == pytest.approx(37 + m1 * 224 + m1 * m2 * 290)
    # a warp's memory nodes occupy the pipeline for the roofline's memory time per warp
    memory_limit = min(p.roofline.l1_lups_per_s, p.roofline.l2_lups_per_s, p.roofline.dram_lups_per_s)
    assert n * memory["issue_cycles"] == pytest.approx(32 * cycles_per_s / memory_limit, rel=1e-9)


@pytest.mark.parametrize("block, fold", [((32, 8, 4), (1, 1, 1)), ((64, 4, 4), (1, 2, 1)),
                                         ((16, 8, 8), (1, 1, 2)), ((1, 1024, 1), (1, 2, 1))])
def test_agrees_with_the_roofline_at_full_occupancy(star_r4, block, fold):
    """64 resident warps hide the latencies of the bandwidth-bound 25-point stencil: the
    simulation runs at the roofline's memory limit within 2 % and is never faster."""
    p = star_r4.predict(block, fold)
    assert p.launch.occupancy.warps_per_block * p.launch.occupancy.blocks_per_sm == 64
    assert p.roofline.limiter in ("l1", "l2", "dram")
    e = estimate(p)
    assert e.lups_per_s <= p.roofline.lups_per_s * (1 + 1e-12)
    assert e.lups_per_s == pytest.approx(p.roofline.lups_per_s, rel=0.02)
    assert e.details["limiter"] == "global"


def test_fewer_resident_blocks_never_faster(star_r4):
    """The same launch with fewer blocks resident per SM (the occupancy a larger register or
    shared-memory demand would allow): never faster (to rounding), and slower at one 4-warp
    block, whose ~26 independent loads per warp no longer cover the memory latency."""
    p = star_r4.predict((32, 2, 2), (1, 1, 1))
    graph, _, prologue = build_graph(p)
    warps = p.launch.occupancy.warps_per_block
    groups = math.ceil(p.launch.launch.total_blocks / 108)
    times = [simulate(graph, warps, groups, m, sub_partitions=2).cycles for m in (16, 8, 4, 2, 1)]
    assert all(a <= b * (1 + 1e-9) for a, b in zip(times, times[1:]))
    assert times[-1] > 1.2 * times[0]


def test_model_dispatch_and_details(star_r4):
    p = star_r4.predict((32, 8, 4), (1, 1, 1))
    e = estimate_time("pipeline", p)
    assert e.model == "pipeline"
    assert e.seconds == pytest.approx(e.cycles / (p.clock_ghz * 1e9))
    assert e.lups_per_s == pytest.approx(math.prod(p.launch.launch.domain) / e.seconds)
    d = e.details
    assert d["cycles"] == e.cycles and d["lups_per_s"] == e.lups_per_s
    assert d["critical_path_cycles"] == pytest.approx(sum(step["cycles"] for step in d["critical_path"]))
    assert d["critical_path"][-1]["instruction"].startswith("store")
    assert d["critical_path"][-1]["pipeline"] == "global"
    assert d["graph"]["source"] == "ast" 
    json.dumps(d)


def test_errors_name_what_is_allowed(a100, star_r4):
    p = star_r4.predict((32, 8, 4), (1, 1, 1))
    with pytest.raises(WarpspeedError, match="choose one of auto, ast, sass, derived"):
        estimate(p, source="magic")
    copy = Predictor(resolve_kernel("copy", device=a100), a100).predict((32, 8, 4), (1, 1, 1))
    with pytest.raises(WarpspeedError, match="carries no source-level operations"):
        estimate(copy, source="ast")
    assert estimate(copy).details["graph"]["source"] == "derived"
    mi100 = load_device("MI100")
    pm = Predictor(resolve_kernel("star3d-r1", device=mi100), mi100).predict((64, 4, 2), (1, 1, 1))
    with pytest.raises(WarpspeedError, match="no pipeline-model latencies for architecture 'cdna1'; available: "):
        estimate(pm)


def test_latency_files_based_on_ampere():
    """The Volta file replaces the FP64 row (8 cycles) and keeps the A100's other rows and memory
    latencies; the Hopper and Ada files are the A100's values throughout."""
    from warpspeed.pipeline.latency import load_latencies

    ampere, volta = load_latencies("ampere"), load_latencies("volta")
    assert volta.unit("fp64").completion == 8.0 and ampere.unit("fp64").completion == 4.0
    assert volta.unit("sfu") == ampere.unit("sfu") and volta.memory == ampere.memory
    for name in ("hopper", "ada"):
        table = load_latencies(name)
        assert (table.architecture, table.units, table.memory) == (name, ampere.units, ampere.memory)


def test_volta_latencies():
    """V100: the 7-point stencil's critical path charges 8 cycles per dependent FP64 instruction and 4
    per integer one (Accel-Sim's GV100 configuration: DP add/mul/mad 8, INT add/mul 4), twice the
    A100's FP64 latency of 4."""
    v100 = load_device("V100-PCIe-32GB")
    p = Predictor(resolve_kernel("star3d-r1", device=v100), v100).predict((32, 8, 4), (1, 1, 1))
    details = estimate(p).details
    assert details["graph"]["latencies"] == "volta"
    cycles = {(step["pipeline"], step["cycles"]) for step in details["critical_path"] if step["pipeline"] != "global"}
    assert cycles == {("fp64", 8.0), ("int", 4.0)}


def test_cli_predict_pipeline():
    runner = CliRunner()
    result = runner.invoke(cli, ["predict", "--kernel", "star3d-r1", "--model", "pipeline", "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.output)["pipeline"]
    assert {"cycles", "lups_per_s", "critical_path", "pipeline_busy"} <= set(d)
    assert d["rules"] == {"selection": "fifo", "issue": "event"}  # the defaults, which reproduce Eq. 1
    result = runner.invoke(cli, ["predict", "--kernel", "star3d-r1", "--model", "pipeline", "--json",
                                 "--pipeline-selection", "oldest", "--pipeline-issue", "cycle"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["pipeline"]["rules"] == {"selection": "oldest", "issue": "cycle"}
    result = runner.invoke(cli, ["predict", "--kernel", "star3d-r1", "--pipeline-selection", "oldest"])
    assert result.exit_code == 2 and "add --model pipeline" in result.output
    result = runner.invoke(cli, ["predict", "--help"])
    for choice in SELECTIONS:
        assert choice in result.output
    result = runner.invoke(cli, ["predict", "--kernel", "star3d-r1", "--model", "pipeline"])
    assert result.exit_code == 0, result.output
    assert "critical path" in result.output and "load src" in result.output
    result = runner.invoke(cli, ["predict", "--kernel", "star3d-r1", "--device", "MI210", "--block", "64,4,2",
                                 "--model", "pipeline"])
    assert result.exit_code == 2 and "error: no pipeline-model latencies" in result.output


def test_cli_pipeline_out_document(tmp_path):
    """The 7-point stencil on 256^3 with 32x8x4 blocks on the A100: 8 x 32 x 64 = 16384 blocks,
    ceil(16384 / 108) = 152 on the busiest SM, 32 warps each; the graph has the kinds counted by
    hand in test_ast_graph_of_the_7_point_stencil_by_hand (3 index, 3 compare, 7 loads, 1 mul,
    6 fma, 1 store), source-level, so not issued in program order; every edge runs forward."""
    out = tmp_path / "graph.json"
    result = CliRunner().invoke(cli, ["predict", "--kernel", "star3d-r1", "--model", "pipeline",
                                      "--pipeline-out", str(out)])
    assert result.exit_code == 0, result.output
    d = json.loads(out.read_text())
    assert (d["format"], d["version"], d["source"], d["in_order"]) == ("warpspeed-pipeline", 1, "ast", False)
    kinds = [n["op"] for n in d["nodes"]]
    assert {k: kinds.count(k) for k in set(kinds)} == {"index": 3, "compare": 3, "load": 7, "mul": 1, "fma": 6,
                                                       "store": 1}
    assert all(a < b for a, b in d["edges"])
    assert d["launch"]["total_blocks"] == 16384 and d["launch"]["blocks_per_sm"] == 152
    assert d["launch"]["warps_per_block"] == 32 and d["launch"]["sms"] == 108
    result = CliRunner().invoke(cli, ["predict", "--kernel", "star3d-r1", "--pipeline-out", str(out)])
    assert result.exit_code == 2 and "add --model pipeline" in result.output


@pytest.mark.slow
def test_kinds_of_blocks_of_a_partial_grid(a100):
    """640 = 2.5 x 256: 256x1x4 blocks on 640x64x64 form 3 blocks along x. Two of three are interior
    (32 full warps, every processing block 8 full warps: no guard-only warp). The last has threads
    512..767 along x, so in each of its 4 rows of 8 warps, warps 4-7 lie outside: warp i goes to
    processing block i mod 4, which holds warps j, j+4, ..., j+28 and of them the 4 in the first half
    of a row, so it is simulated with 8 - 4 = 4 guard-only warps per processing block, 16 per block."""
    kernel = resolve_kernel("star3d-r1", domain=(640, 64, 64), device=a100)
    p = Predictor(kernel, a100).predict((256, 1, 4), (1, 1, 1))
    shares = guard_shares(p, 4)
    assert [guard for _, guard in shares] == [0, 16]
    assert [share for share, _ in shares] == pytest.approx([2 / 3, 1 / 3])
    assert estimate(p).details["launch"]["block_kinds"] == [{"share": pytest.approx(2 / 3), "guard_warps": 0},
                                                           {"share": pytest.approx(1 / 3), "guard_warps": 16}]
