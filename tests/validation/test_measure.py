"""The validation runner's offline parts: ncu command and parsing, rows, CSV, no-GPU errors.

Expected numbers are read off the hand-written fixtures in tests/data/ or computed here by hand.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pystencils_plugin.measure_kernels import plan_launch
from warpspeed.validation import ncu as ncu_module
from warpspeed.summary import prediction_record
from warpspeed.validation.measure import measure
from warpspeed.validation.measurement_csv import default_output_path, read_measurement_csv, write_measurement_csv
from warpspeed.validation.ncu import (
    NcuProfiler,
    child_command,
    counters_for_kernel,
    kernel_name_filter,
    ncu_command,
    parse_ncu_csv,
    read_plans,
    write_plans,
)
from warpspeed.validation.plan import FieldAllocation, LaunchPlan, MeasurementError, allocation_elements
from warpspeed.validation.runners import CupyRunner, parse_nvidia_smi
from warpspeed.validation.schema import (
    CSV_COLUMNS,
    GpuInfo,
    Timing,
    assemble_row,
    measured_columns,
    predicted_columns,
)
from warpspeed.errors import WarpspeedError
from warpspeed.launch.space import Config
from tests.paths import DATA


#: The counters the comparison needs, named as in the Nsight Compute Kernel Profiling Guide
#: ("Metrics Reference") and Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance
#: Estimation during Code Generation on Modern GPUs", Journal of Parallel and Distributed
#: Computing, 2023, sections 5.4-5.5: L1 wavefronts, L2 sectors read and written by L1, DRAM
#: bytes read and written, elapsed cycles and the SM clock; and the profiled launch's duration.
REQUIRED_METRICS = {
    "l1tex__data_pipe_lsu_wavefronts.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "gpc__cycles_elapsed.max",
    "sm__cycles_elapsed.avg.per_second",
    "gpu__time_duration.sum",
}
#: The metrics of the hand-written fixtures (written before the duration was collected).
FIXTURE_METRICS = tuple(sorted(REQUIRED_METRICS - {"gpu__time_duration.sum"}))

#: One launch's counters as a fake ncu prints them, with the units it prints (scaled on purpose).
FAKE_NCU_COUNTERS = {
    "l1tex__data_pipe_lsu_wavefronts.sum": ("wavefront", "3,000"),
    "lts__t_sectors_srcunit_tex_op_read.sum": ("sector", "500"),
    "lts__t_sectors_srcunit_tex_op_write.sum": ("sector", "250"),
    "dram__bytes_read.sum": ("Kbyte", "9"),
    "dram__bytes_write.sum": ("byte", "8000"),
    "gpc__cycles_elapsed.max": ("cycle", "1234"),
    "sm__cycles_elapsed.avg.per_second": ("cycle/nsecond", "1.41"),
    "gpu__time_duration.sum": ("usecond", "1,250.5"),
}


def _fake_ncu(calls):
    """A stand-in for ncu: prints the raw CSV page with exactly the metrics its command asks for,
    for the one function its ``--kernel-name regex:^(name)$`` selects; records the command and
    the plans the child would build."""

    def run(cmd, **kwargs):
        child = cmd[cmd.index("-m") + 1:]
        calls.append((cmd, kwargs, read_plans(child[1])))
        metrics = cmd[cmd.index("--metrics") + 1].split(",")
        name = cmd[cmd.index("--kernel-name") + 1].removeprefix("regex:^(").removesuffix(")$")
        known = [m for m in metrics if m in FAKE_NCU_COUNTERS]
        header = ",".join(f'"{h}"' for h in ["ID", "Kernel Name", *known])
        units = ",".join(f'"{u}"' for u in ["", "", *(FAKE_NCU_COUNTERS[m][0] for m in known)])
        values = ",".join(f'"{v}"' for v in ["0", name, *(FAKE_NCU_COUNTERS[m][1] for m in known)])
        return SimpleNamespace(returncode=0, stdout=f"==PROF== Disconnected\n{header}\n{units}\n{values}\n",
                               stderr="")

    return run


# ---------------------------------------------------------------------------- ncu command


def test_ncu_command_asks_for_every_counter_the_rows_need():
    """The profiler's command, the parser and the row conversion agree: with a fake ncu that
    prints only the metrics the command asks for, every measured column is the hand-computed
    value (a metric missing from the command would leave a column NaN or fail the lookup)."""
    calls = []
    plan = LaunchPlan("star3d-r1", (10, 10, 10), (32, 4, 2), (1, 1, 1), (1, 3, 5), "ws_k", 1000)
    counters = NcuProfiler(ncu="ncu", run=_fake_ncu(calls)).profile(plan)
    assert set(counters) >= REQUIRED_METRICS
    cols = measured_columns(1000, Timing((2e-6,)), counters)
    assert cols["meas_l1_wavefronts_per_lup"] == pytest.approx(3000 / 1000)
    assert cols["meas_l2_load_bytes_per_lup"] == pytest.approx(500 * 32 / 1000)  # 32-byte sectors
    assert cols["meas_l2_store_bytes_per_lup"] == pytest.approx(250 * 32 / 1000)
    assert cols["meas_dram_load_bytes_per_lup"] == pytest.approx(9e3 / 1000)  # Kbyte -> bytes
    assert cols["meas_dram_store_bytes_per_lup"] == pytest.approx(8000 / 1000)
    assert cols["ncu_cycles_elapsed"] == 1234
    assert cols["ncu_sm_clock_hz"] == pytest.approx(1.41e9)  # cycles per nanosecond -> Hz
    assert cols["ncu_duration_s"] == pytest.approx(1250.5e-6)  # usecond -> s
    assert all(math.isfinite(v) for v in cols.values())


def test_ncu_child_runs_on_the_timed_gpu(monkeypatch, tmp_path):
    """``--gpu N``: the profiled child process launches the kernel on CUDA device N."""
    from warpspeed.validation import measure as measure_module
    from warpspeed.validation import runners

    calls = []
    plan, _ = plan_launch("star3d-r1", Config((8, 4, 2)), (16, 8, 4))
    NcuProfiler(ncu="ncu", run=_fake_ncu(calls), device_id=3).profile(plan)
    cmd, _, plans = calls[0]
    assert plans == [plan]
    child = cmd[cmd.index("-m") + 1:]
    assert child[0] == "warpspeed.validation.measure"
    assert child[2:] == ["1", "3"]  # one launch, device 3
    launched = []

    class FakeRunner:
        def __init__(self, device_id=0):
            self.device_id = device_id

        def launch(self, plan, gpu_kernel, count=1):
            launched.append((self.device_id, plan.function_name, count))

    monkeypatch.setattr(runners, "CupyRunner", FakeRunner)
    plans_file = write_plans(plans, tmp_path / "plans.json")
    assert measure_module.child_main([str(plans_file), *child[2:]]) == 0
    assert launched == [(3, plan.function_name, 1)]


def test_measure_cli_gpu_option_reaches_runner_and_profiler(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from warpspeed.cli.validate import measure as measure_cmd
    from warpspeed.validation import ncu, runners

    seen = {}

    class FakeRunner:
        def __init__(self, device_id=0):
            seen["runner"] = device_id

    class FakeProfiler:
        def __init__(self, *args, device_id=0, **kwargs):
            seen["profiler"] = device_id
            raise MeasurementError("stop here")

    monkeypatch.setattr(runners, "CupyRunner", FakeRunner)
    monkeypatch.setattr(ncu, "NcuProfiler", FakeProfiler)
    result = CliRunner().invoke(measure_cmd, ["--kernel", "star3d-r1", "--gpu", "2", "--out", str(tmp_path / "m.csv")])
    assert isinstance(result.exception, MeasurementError)
    assert seen == {"runner": 2, "profiler": 2}


def test_ncu_command_shape():
    cmd = ncu_command(["python", "-m", "x"], kernel_name="ws_k", ncu="/opt/ncu")
    assert cmd[0] == "/opt/ncu"
    assert cmd[-3:] == ["python", "-m", "x"]
    assert "--csv" in cmd
    assert cmd[cmd.index("--page") + 1] == "raw"
    assert cmd[cmd.index("--kernel-name") + 1] == "ws_k"
    assert cmd[cmd.index("--launch-count") + 1] == "1"
    assert cmd[cmd.index("--clock-control") + 1] == "none"


@pytest.mark.parametrize("kwargs", [{"clock_control": "turbo"}, {"launch_count": 0}, {"metrics": ()}])
def test_ncu_command_rejects_bad_options(kwargs):
    with pytest.raises(MeasurementError):
        ncu_command(["python"], **kwargs)


def test_child_command_and_plans_file_round_trip(tmp_path):
    plan = LaunchPlan("star3d-r1", (64, 32, 16), (32, 4, 2), (1, 2, 1), (2, 4, 8), "ws_x", 32768,
                        (FieldAllocation("src", (66, 34, 18), (1, 66, 2244), "float64"),), ("omega",))
    other = LaunchPlan("star3d-r1", (64, 32, 16), (64, 2, 1), (1, 1, 1), (1, 16, 16), "ws_y", 32768,
                       dtype="float")
    plans_file = write_plans([plan, other], tmp_path / "p.json")
    argv = child_command(plans_file, launches=2, device_id=5, python="py")
    assert argv == ["py", "-m", "warpspeed.validation.measure", str(plans_file), "2", "5"]
    assert read_plans(argv[3]) == [plan, other]
    with pytest.raises(MeasurementError, match="non-empty JSON list"):
        read_plans(write_plans([], tmp_path / "empty.json"))


def test_kernel_name_filter_selects_exactly_the_chunk():
    assert kernel_name_filter(["ws_b", "ws_a"]) == "regex:^(ws_a|ws_b)$"
    with pytest.raises(MeasurementError, match="not C identifiers"):
        kernel_name_filter(["ws_a", "ws.*"])


# ---------------------------------------------------------------------------- ncu parsing


def test_parse_base_units_fixture():
    records = parse_ncu_csv((DATA / "ncu_raw_base_units.csv").read_text(), FIXTURE_METRICS)
    assert [r["id"] for r in records] == [0, 1, 2, 3]
    assert records[0]["kernel_name"] == "cupy_fill"
    r1 = records[1]
    assert r1["block_size"] == (32, 8, 4)
    assert r1["grid_size"] == (8, 32, 64)
    assert r1["dram__bytes_read.sum"] == 142_606_336
    assert r1["lts__t_sectors_srcunit_tex_op_read.sum"] == 12_582_912
    assert r1["sm__cycles_elapsed.avg.per_second"] == 1_410_000_000
    assert records[3]["gpc__cycles_elapsed.max"] == 240_500


def test_counters_take_the_last_launch_of_the_kernel():
    records = parse_ncu_csv((DATA / "ncu_raw_base_units.csv").read_text(), FIXTURE_METRICS)
    c = counters_for_kernel(records, "ws_star3d_r1_b32x8x4_f1x1x1", FIXTURE_METRICS)
    assert set(c) == set(FIXTURE_METRICS)
    assert c["lts__t_sectors_srcunit_tex_op_read.sum"] == 12_582_913  # launch ID 2, not ID 1
    assert c["gpc__cycles_elapsed.max"] == 171_234
    assert c["sm__cycles_elapsed.avg.per_second"] == 1_395_000_000
    with pytest.raises(MeasurementError, match="cupy_fill"):
        counters_for_kernel(records, "ws_missing", FIXTURE_METRICS)


def test_parse_scaled_units_and_signatures():
    records = parse_ncu_csv((DATA / "ncu_raw_scaled_units.csv").read_text(), FIXTURE_METRICS)
    assert len(records) == 2
    r = records[0]
    assert r["dram__bytes_read.sum"] == pytest.approx(1_234.5e6)  # Mbyte, thousands separator
    assert r["dram__bytes_write.sum"] == pytest.approx(987_250)  # Kbyte
    assert r["lts__t_sectors_srcunit_tex_op_read.sum"] == pytest.approx(2.5e6)  # Msector
    assert r["lts__t_sectors_srcunit_tex_op_write.sum"] == pytest.approx(125e3)  # Ksector
    assert r["sm__cycles_elapsed.avg.per_second"] == pytest.approx(1.98e9)  # cycle/nsecond
    assert r["l1tex__data_pipe_lsu_wavefronts.sum"] == 3_250_000
    assert math.isnan(records[1]["dram__bytes_read.sum"])  # n/a
    assert "no value (n/a) for metric dram__bytes_read.sum" in records[1]["problems"]["dram__bytes_read.sum"]
    c = counters_for_kernel(records[:1], "ws_d3q19_srt_b64x4x2_f1x1x1", FIXTURE_METRICS)  # name(signature)
    assert c["gpc__cycles_elapsed.max"] == 1_500_000
    with pytest.raises(MeasurementError, match="n/a.*dram__bytes_read.sum"):  # the last launch has n/a
        counters_for_kernel(records, "ws_d3q19_srt_b64x4x2_f1x1x1", FIXTURE_METRICS)


def test_parse_errors():
    with pytest.raises(MeasurementError, match="no ncu CSV table"):
        parse_ncu_csv("==PROF== nothing profiled\n", FIXTURE_METRICS)
    bad_unit = '"ID","Kernel Name","dram__bytes_read.sum"\n"","","furlong"\n"0","k","1"\n'
    with pytest.raises(MeasurementError, match="furlong"):
        parse_ncu_csv(bad_unit, ["dram__bytes_read.sum"])
    assert issubclass(MeasurementError, WarpspeedError)


def test_parse_nvidia_smi():
    d = parse_nvidia_smi("NVIDIA A100-SXM4-40GB, 535.104.05, 1410, 1410, 1215\n")
    assert d == {"name": "NVIDIA A100-SXM4-40GB", "driver": "535.104.05", "sm_clock_mhz": "1410",
                 "sm_clock_max_mhz": "1410", "memory_clock_mhz": "1215"}


# ---------------------------------------------------------------------------- rows and CSV


def test_timing_statistics():
    t = Timing((3e-3, 1e-3, 2e-3, 10e-3))
    assert t.median_s == pytest.approx(2.5e-3)
    assert (t.min_s, t.max_s, t.repeats) == (1e-3, 10e-3, 4)
    with pytest.raises(MeasurementError):
        Timing(())


def test_measured_columns_per_lup():
    counters = {"l1tex__data_pipe_lsu_wavefronts.sum": 3000.0, "lts__t_sectors_srcunit_tex_op_read.sum": 500.0,
                "lts__t_sectors_srcunit_tex_op_write.sum": 250.0, "dram__bytes_read.sum": 9000.0,
                "dram__bytes_write.sum": 8000.0, "gpc__cycles_elapsed.max": 1234.0,
                "sm__cycles_elapsed.avg.per_second": 1.41e9}
    cols = measured_columns(1000, Timing((2e-6, 2e-6, 4e-6)), counters)
    assert cols["meas_l1_wavefronts_per_lup"] == pytest.approx(3.0)
    assert cols["meas_l2_load_bytes_per_lup"] == pytest.approx(500 * 32 / 1000)
    assert cols["meas_l2_store_bytes_per_lup"] == pytest.approx(8.0)
    assert cols["meas_dram_load_bytes_per_lup"] == pytest.approx(9.0)
    assert cols["meas_dram_store_bytes_per_lup"] == pytest.approx(8.0)
    assert cols["meas_lups_per_s"] == pytest.approx(1000 / 2e-6)
    assert cols["ncu_cycles_elapsed"] == 1234.0
    no_ncu = measured_columns(1000, Timing((1e-3,)), None)
    assert math.isnan(no_ncu["meas_dram_load_bytes_per_lup"])


def _record():
    """A hand-made prediction record (the shape of warpspeed.summary.prediction_record + dram_terms)."""
    return {
        "lups_per_s": 5e10, "limiter": "dram", "limiters": {"fp": None, "l1": 9e10, "l2": 7e10, "dram": 5e10},
        "l1_cycles_per_lup": 1.5, "l1_load_bytes_per_lup": 100.0, "l2_load_compulsory_bytes_per_lup": 20.0,
        "l2_load_bytes_per_lup": 30.0, "l2_store_bytes_per_lup": 8.0,
        "dram_load_compulsory_bytes_per_lup": 16.0, "dram_store_compulsory_bytes_per_lup": 8.0,
        "dram_load_bytes_per_lup": 10.0, "dram_store_bytes_per_lup": 8.0, "blocks_per_sm": 2,
        "l1_oversubscription": 0.7,
        "layer_conditions": {"z": {"overlap_bytes_per_lup": 8.0, "hit_rate": 0.75, "oversubscription": 1.2}},
        "dram_terms": {"l2_oversubscription": 0.3, "l2_redundant_load_bytes_per_lup": 14.0,
                       "l2_redundant_store_bytes_per_lup": 0.0, "capacity_miss_bytes_per_lup": 0.0,
                       "partial_store_read_bytes_per_lup": 0.0},
    }


def test_predicted_columns_units_and_totals():
    cols = predicted_columns(_record(), lups=1000)
    assert cols["pred_fp_lups_per_s"] == math.inf  # JSON null = unlimited
    assert cols["pred_l1_wavefronts_per_lup"] == 1.5
    assert cols["pred_l1_wavefronts"] == pytest.approx(1500)
    assert cols["pred_dram_load_bytes"] == pytest.approx(10_000)
    assert cols["pred_l2_store_bytes"] == pytest.approx(8_000)
    assert cols["pred_z_overlap_bytes_per_lup"] == 8.0
    assert cols["pred_y_overlap_bytes_per_lup"] == 0.0


def test_csv_round_trip(tmp_path):
    row = assemble_row(Config((32, 4, 2), (1, 2, 1)), (2, 4, 8), 1000, Timing((1e-3, 3e-3, 2e-3)), None, _record())
    bad = assemble_row(Config((1024, 1, 1)), (0, 0, 0), 1000, None, None, None, error="pystencils refused")
    path = write_measurement_csv(tmp_path / "a" / "k.csv", {"kernel": "star3d-r1", "gpu_name": "X"}, [row, bad])
    text = path.read_text()
    assert text.startswith("# warpspeed-measurement 1\n# kernel: star3d-r1\n")
    table = read_measurement_csv(path)
    assert table.metadata["gpu_name"] == "X"
    assert table.kernel == "star3d-r1"
    a, b = table.rows
    assert (a["block_x"], a["block_y"], a["block_z"], a["fold_y"]) == (32, 4, 2, 2)
    assert a["grid_z"] == 8
    assert a["time_median_s"] == pytest.approx(2e-3)
    assert a["meas_lups_per_s"] == pytest.approx(1000 / 2e-3)
    assert a["pred_limiter"] == "dram"
    assert a["pred_fp_lups_per_s"] == math.inf
    assert math.isnan(a["meas_dram_load_bytes_per_lup"])
    assert b["error"] == "pystencils refused"
    assert list(text.splitlines()[3].split(",")) == list(CSV_COLUMNS)


def test_read_errors(tmp_path):
    with pytest.raises(MeasurementError, match="does not exist"):
        read_measurement_csv(tmp_path / "none.csv")
    p = tmp_path / "x.csv"
    p.write_text("block_x,block_y\n1,2\n")
    with pytest.raises(MeasurementError, match="missing column"):
        read_measurement_csv(p)


def test_default_output_path():
    assert default_output_path("A100-SXM4-40GB", "star3d-r4") == Path("fits/data/A100-SXM4-40GB/star3d-r4.csv")


# ---------------------------------------------------------------------------- kernel generation (no GPU)


def test_plan_launch_geometry_and_fields():
    plan, gpu_kernel = plan_launch("star3d-r1", Config((32, 4, 2), (1, 2, 1)), (64, 32, 16))
    # grid = domain / (block * fold) per axis: 64/32, 32/(4*2), 16/2
    assert plan.grid == (2, 4, 8)
    assert plan.block == (32, 4, 2)
    assert plan.lups == 64 * 32 * 16
    assert gpu_kernel.name == plan.function_name == "ws_star3d_r1_b32x4x2_f1x2x1"
    fields = {f.name: f for f in plan.fields}
    assert set(fields) == {"src", "dst"}
    # one ghost layer per side, x contiguous
    assert fields["src"].shape == (66, 34, 18)
    assert fields["src"].strides == (1, 66, 66 * 34)
    assert fields["src"].buffer_elements == 66 * 34 * 18


def test_plan_launch_rejects_unknown_and_trimmed():
    with pytest.raises(MeasurementError, match="no pystencils workload"):
        plan_launch("copy", Config((32, 8, 4)))
    with pytest.raises(MeasurementError, match="trimmed"):
        plan_launch("star3d-r1", Config((1024, 1, 1)), (64, 32, 16))


def test_allocation_elements():
    assert allocation_elements((4, 3), (1, 4)) == 12
    assert allocation_elements((4, 3, 2), (1, 5, 20)) == 1 + 3 + 10 + 20
    with pytest.raises(MeasurementError):
        allocation_elements((4,), (1, 2))


# ---------------------------------------------------------------------------- GPU parts without a GPU


def test_no_cupy_raises_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    with pytest.raises(MeasurementError, match="cupy"):
        CupyRunner()


def test_no_ncu_raises_clear_error(monkeypatch):
    monkeypatch.setattr(ncu_module.shutil, "which", lambda name: None)
    with pytest.raises(MeasurementError, match="--no-ncu"):
        NcuProfiler()


def test_ncu_profiler_with_canned_output():
    text = (DATA / "ncu_raw_base_units.csv").read_text()
    calls = []

    def run(cmd, **kwargs):
        calls.append(cmd)
        return SimpleNamespace(returncode=0, stdout=text, stderr="")

    prof = NcuProfiler(ncu="/usr/local/cuda/bin/ncu", run=run, metrics=FIXTURE_METRICS)
    plan = LaunchPlan("star3d-r1", (256, 256, 256), (32, 8, 4), (1, 1, 1), (8, 32, 64),
                        "ws_star3d_r1_b32x8x4_f1x1x1", 256**3)
    counters = prof.profile(plan)
    assert counters["dram__bytes_read.sum"] == 142_671_872
    assert calls[0][0] == "/usr/local/cuda/bin/ncu"
    assert calls[0][calls[0].index("--kernel-name") + 1] == f"regex:^({plan.function_name})$"
    failing = NcuProfiler(ncu="ncu", run=lambda cmd, **kw: SimpleNamespace(returncode=1, stdout="", stderr="ERR_NVGPUCTRPERM"))
    with pytest.raises(MeasurementError, match="ERR_NVGPUCTRPERM"):
        failing.profile(plan)


class _FakeRunner:
    def __init__(self):
        self.planned = []

    def info(self):
        return GpuInfo(name="Fake GPU", driver="1.0", sm_clock_mhz=1000.0)

    def time(self, plan, gpu_kernel, warmup, repeats):
        self.planned.append((plan.block, plan.fold, warmup, repeats))
        return Timing((1e-3,) * repeats)


class _FakeProfiler:
    def profile_many(self, plans):
        return {p.function_name: {k: 1000.0 for k in REQUIRED_METRICS} for p in plans}

    def version(self):
        return "fake ncu"


class _FakePredictor:
    def predict(self, block, fold):
        if block == (64, 1, 1):
            from warpspeed.errors import LaunchError

            raise LaunchError("too few registers")
        rec = _record()
        dram = SimpleNamespace(curves_family="test-family", **rec["dram_terms"])
        return SimpleNamespace(record={k: v for k, v in rec.items() if k != "dram_terms"}, dram=dram)


def test_measure_orchestration_with_fakes(monkeypatch):
    import warpspeed.summary

    monkeypatch.setattr(warpspeed.summary, "prediction_record", lambda prediction: dict(prediction.record))
    runner = _FakeRunner()
    configs = [Config((32, 2, 1)), Config((16, 4, 1), (1, 2, 1)), Config((64, 1, 1))]
    table = measure("star3d-r1", SimpleNamespace(name="Model"), configs, runner, _FakeProfiler(),
                      domain=(64, 32, 16), warmup=2, repeats=3, predictor=_FakePredictor())
    assert table.metadata["gpu_name"] == "Fake GPU"
    assert table.metadata["device_model"] == "Model"
    assert table.metadata["ncu"] == "fake ncu"
    assert table.metadata["repeats"] == "3"
    assert runner.planned == [((32, 2, 1), (1, 1, 1), 2, 3), ((16, 4, 1), (1, 2, 1), 2, 3), ((64, 1, 1), (1, 1, 1), 2, 3)]
    r0, r1, r2 = table.rows
    assert r0["lups"] == 64 * 32 * 16
    assert r0["meas_lups_per_s"] == pytest.approx(64 * 32 * 16 / 1e-3)
    assert r0["meas_dram_load_bytes_per_lup"] == pytest.approx(1000 / (64 * 32 * 16))
    assert r0["pred_dram_load_bytes_per_lup"] == 10.0
    assert (r1["grid_x"], r1["grid_y"], r1["grid_z"]) == (4, 4, 16)  # 64/16, 32/(4*2), 16/1
    assert r2["error"].startswith("prediction: too few registers")
    assert r2["meas_lups_per_s"] > 0  # measured anyway


def test_measure_cli_without_gpu_names_what_is_missing(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from warpspeed.cli.validate import measure as measure_cmd

    monkeypatch.setitem(sys.modules, "cupy", None)
    result = CliRunner().invoke(measure_cmd, ["--kernel", "star3d-r1", "--out", str(tmp_path / "x.csv")])
    assert isinstance(result.exception, MeasurementError)
    assert "cupy" in str(result.exception)
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.slow
def test_measure_with_the_real_predictor_matches_and_reevaluates():
    """Rows from the real Predictor: the CSV columns equal the prediction summary, and the refit's
    re-evaluation from those columns with the same curves reproduces the predicted volumes."""
    from warpspeed.kernel.catalog import resolve_kernel
    from warpspeed.predict import Predictor
    from warpspeed.validation.refit import reevaluate

    domain = (640, 512, 512)
    configs = [Config((32, 8, 4)), Config((64, 16, 1), (1, 2, 1)), Config((8, 8, 16), (1, 1, 2))]
    predictor = Predictor(resolve_kernel("star3d-r4", domain), "A100-SXM4-40GB")
    table = measure("star3d-r4", predictor.device, configs, _FakeRunner(), None, domain=domain,
                      warmup=0, repeats=1, predictor=predictor)
    assert table.metadata["ncu"] == "not used"
    lups = 640 * 512 * 512
    for config, row in zip(configs, table.rows):
        assert row["error"] == ""
        d = prediction_record(predictor.predict(config.block, config.fold))
        assert row["pred_dram_load_bytes_per_lup"] == d["dram_load_bytes_per_lup"]
        assert row["pred_dram_load_bytes"] == pytest.approx(d["dram_load_bytes_per_lup"] * lups)
        assert row["pred_l1_wavefronts_per_lup"] == d["l1_cycles_per_lup"]
        assert row["pred_z_oversubscription"] == d["layer_conditions"]["z"]["oversubscription"]
        again = reevaluate(row, predictor.curves)
        assert again["pred_l2_load_bytes_per_lup"] == pytest.approx(row["pred_l2_load_bytes_per_lup"], rel=1e-9)
        assert again["pred_dram_load_bytes_per_lup"] == pytest.approx(row["pred_dram_load_bytes_per_lup"], rel=1e-6)
        assert again["pred_lups_per_s"] == pytest.approx(row["pred_lups_per_s"], rel=1e-6)


def test_child_entry_point_runs_as_a_module():
    """``python -m warpspeed.validation.measure`` (what ncu runs) answers bad arguments with one line."""
    import subprocess

    done = subprocess.run([sys.executable, "-m", "warpspeed.validation.measure"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: usage: python -m warpspeed.validation.measure PLANS_FILE [LAUNCHES [DEVICE]]"
