"""The measurement campaign without a GPU: chunked ncu runs, rows written as they are measured,
--resume, --sample / --configs, and power sampling.

Stand-ins: a fake ``ncu`` and a fake ``nvidia-smi`` executable written into tmp_path (they emit
recorded output: the raw pages ncu 2025.3.1 printed on an H200, tests/data/ncu/, and
nvidia-smi's ``timestamp, power.draw, clocks.sm`` lines), a fake runner instead of cupy and a
fake code generator or pystencils itself. Expected numbers come from those recorded files or are
computed here by hand.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from warpspeed.launch.space import Config
from warpspeed.validation.measure import chunks, child_main, measure
from warpspeed.validation.measurement_csv import (
    MeasurementWriter,
    check_resumable,
    read_existing,
    read_measurement_csv,
)
from warpspeed.validation.ncu import NcuProfiler, write_plans
from warpspeed.validation.plan import LaunchPlan, MeasurementError, kernel_function_name
from warpspeed.validation.power_sampling import (
    PowerReading,
    PowerSample,
    PowerSampler,
    parse_power_samples,
    power_query,
    summarize_power,
)
from warpspeed.validation.schema import CSV_COLUMNS, GpuInfo, Soak, Timing
from warpspeed.validation.selection import parse_config_list, remaining_configs, sample_configs
from tests.paths import DATA

RAW = DATA / "ncu"
DOMAIN = (640, 512, 512)
LUPS = 640 * 512 * 512
#: The three recorded profiles: configuration -> (raw page, hand-read L1 wavefronts, DRAM bytes read).
RECORDED = {
    Config((8, 4, 32), (1, 1, 2)): ("ncu_star3d-r4_8x4x32_f1x1x2.csv", 381_069_271, 1_553_976_320),
    Config((32, 32, 1), (1, 1, 1)): ("ncu_star3d-r4_32x32x1_f1x1x1.csv", 338_450_165, 1_880_976_640),
    Config((256, 4, 1), (1, 2, 1)): ("ncu_star3d-r4_256x4x1_f1x2x1.csv", 280_870_771, 1_937_205_504),
}

# ---------------------------------------------------------------------------- fake executables

FAKE_NCU = '''
    """Fake ncu: answers --version; otherwise prints a raw page with one row per plan of the
    child's plans file whose function the --kernel-name regex selects, the row of a recorded H200
    page (by configuration, else the first page's) with the ID and kernel name replaced. A plan
    whose function name contains 'b1024' fails in the "child": an error line on stderr, no row.
    Each call is appended to calls.jsonl."""
    import csv, io, json, re, sys
    from pathlib import Path
    here = Path(__file__).parent
    argv = sys.argv[1:]
    if argv == ["--version"]:
        print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0 (build 36398880) (public-release)")
        sys.exit(0)
    with open(here / "calls.jsonl", "a") as fh:
        fh.write(json.dumps(argv) + "\\n")
    pattern = re.compile(argv[argv.index("--kernel-name") + 1].removeprefix("regex:"))
    child = argv[argv.index("-m") + 1:]
    plans = json.loads(Path(child[1]).read_text())
    pages = json.loads(Path(here / "pages.json").read_text())
    header = units = None
    rows = []
    print("==PROF== Connected to process 4242 (python3)")
    for i, plan in enumerate(plans):
        fn = plan["function_name"]
        if not pattern.search(fn):
            continue
        if "b1024" in fn:
            print(f"error: {fn}: CUDARuntimeError: cudaErrorLaunchOutOfResources", file=sys.stderr)
            continue
        key = "x".join(map(str, plan["block"])) + "_f" + "x".join(map(str, plan["fold"]))
        text = pages.get(key, pages["default"])
        header, units, row = list(csv.reader(l for l in text.splitlines() if l.startswith('"')))
        row[header.index("ID")] = str(len(rows))
        row[header.index("Kernel Name")] = fn
        rows.append(row)
    print("==PROF== Disconnected from process 4242")
    if rows:
        out = io.StringIO()
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\\n").writerows([header, units, *rows])
        sys.stdout.write(out.getvalue())
'''

FAKE_SMI = '''
    """Fake nvidia-smi: every -lms milliseconds a 'timestamp, watts, MHz' line; 80 W at 345 MHz for
    its first 0.3 s (idle board), then 675 W at 1980 MHz; stops on SIGINT."""
    import datetime, signal, sys, time
    signal.signal(signal.SIGINT, lambda *a: sys.exit(0))
    interval = int(sys.argv[sys.argv.index("-lms") + 1]) / 1000
    start = time.time()
    while True:
        now = time.time()
        watts, mhz = (80.0, 345) if now - start < 0.3 else (675.25, 1980)
        stamp = datetime.datetime.fromtimestamp(now).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        print(f"{stamp}, {watts}, {mhz}", flush=True)
        time.sleep(interval)
'''


def _executable(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


@pytest.fixture
def fake_ncu(tmp_path):
    """The fake ncu's path; its calls are read back with ``_ncu_calls``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    pages = {"default": (RAW / RECORDED[Config((8, 4, 32), (1, 1, 2))][0]).read_text()}
    for config, (name, _, _) in RECORDED.items():
        pages["x".join(map(str, config.block)) + "_f" + "x".join(map(str, config.fold))] = (RAW / name).read_text()
    (folder / "pages.json").write_text(json.dumps(pages))
    return _executable(folder / "ncu", FAKE_NCU)


def _ncu_calls(ncu: Path) -> list[list[str]]:
    log = ncu.parent / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


# ---------------------------------------------------------------------------- fakes of the GPU side


class FakeRunner:
    """Times nothing: 1.5 ms per launch; a soak of ``soak_s`` wall seconds counts 1000 launches in 1.5 s."""

    def __init__(self, device_id=0, soak_s=0.0, stop_at=None):
        self.timed = []
        self.soaked = []
        self.device_id = device_id
        self.soak_s = soak_s
        self.stop_at = stop_at

    def info(self):
        return GpuInfo(name="NVIDIA H200", driver="580.159.04", sm_clock_mhz=1980.0, sms=132)

    def time(self, plan, gpu_kernel, warmup, repeats):
        if plan.config == self.stop_at:
            raise KeyboardInterrupt  # the campaign is stopped here
        self.timed.append(plan.config)
        return Timing((1.5e-3,) * repeats)

    def soak(self, plan, gpu_kernel, seconds):
        self.soaked.append((plan.config, seconds))
        time.sleep(self.soak_s)
        return Soak(1000, 1.5)


def fake_planner(kernel, config, domain, dtype="double"):
    """A plan without pystencils: grid = domain / (block x fold); blocks of 1024 along x fail to generate."""
    if config.block[0] == 2048:
        raise MeasurementError("pystencils trimmed block (2048, 1, 1)")
    grid = tuple(-(-d // (b * f)) for d, b, f in zip(domain, config.block, config.fold))
    plan = LaunchPlan(kernel, tuple(domain), config.block, config.fold, grid,
                      kernel_function_name(kernel, config, dtype), math.prod(domain), dtype=dtype)
    return plan, None


class FakePredictor:
    """A fixed prediction: 100 Glup/s, DRAM-bound (the shape of warpspeed.summary.prediction_record)."""

    def predict(self, block, fold):
        rec = {"lups_per_s": 1e11, "limiter": "dram", "limiters": {"fp": None, "l1": 2e11, "l2": 1.5e11, "dram": 1e11},
               "l1_cycles_per_lup": 2.0, "l1_load_bytes_per_lup": 72.0, "l2_load_compulsory_bytes_per_lup": 30.0,
               "l2_load_bytes_per_lup": 40.0, "l2_store_bytes_per_lup": 8.0,
               "dram_load_compulsory_bytes_per_lup": 8.0, "dram_store_compulsory_bytes_per_lup": 8.0,
               "dram_load_bytes_per_lup": 10.0, "dram_store_bytes_per_lup": 8.0, "blocks_per_sm": 2}
        terms = {"l2_oversubscription": 0.5, "l2_redundant_load_bytes_per_lup": 2.0, "l2_redundant_store_bytes_per_lup": 0.0,
                 "capacity_miss_bytes_per_lup": 0.0, "partial_store_read_bytes_per_lup": 0.0}
        return SimpleNamespace(record=rec, dram=SimpleNamespace(curves_family="nvidia-hopper", **terms))


@pytest.fixture(autouse=True)
def _fake_summaries(monkeypatch):
    """The summary of a fake prediction is its fixed record (real predictions keep theirs)."""
    import warpspeed.summary

    real = warpspeed.summary.prediction_record
    monkeypatch.setattr(warpspeed.summary, "prediction_record",
                        lambda prediction: dict(prediction.record) if hasattr(prediction, "record") else real(prediction))


CONFIGS = [Config((8, 4, 32), (1, 1, 2)), Config((32, 32, 1)), Config((256, 4, 1), (1, 2, 1)),
           Config((1024, 1, 1)), Config((64, 16, 1))]


def _campaign(runner, profiler=None, configs=CONFIGS, **kwargs):
    return measure("star3d-r4", SimpleNamespace(name="H200"), configs, runner, profiler, domain=DOMAIN,
                   warmup=2, repeats=3, predictor=FakePredictor(), planner=fake_planner, **kwargs)


# ---------------------------------------------------------------------------- chunked ncu runs


def test_one_ncu_run_per_chunk_and_the_recorded_counters_in_the_rows(fake_ncu):
    """Five configurations in chunks of two: three ncu runs, each selecting exactly its chunk's
    functions with --kernel-name regex and --launch-count; each row carries the counters of its own
    recorded page; the configuration whose child launch failed gets the child's error line."""
    rows = []
    table = _campaign(FakeRunner(), NcuProfiler(ncu=str(fake_ncu)), chunk=2, on_row=rows.append)
    calls = _ncu_calls(fake_ncu)
    assert len(calls) == 3
    names = [kernel_function_name("star3d-r4", c) for c in CONFIGS]
    assert [c[c.index("--kernel-name") + 1] for c in calls] == [
        f"regex:^({'|'.join(sorted(names[0:2]))})$", f"regex:^({'|'.join(sorted(names[2:4]))})$", f"regex:^({names[4]})$"]
    assert [c[c.index("--launch-count") + 1] for c in calls] == ["2", "2", "1"]
    assert all(c[c.index("--launch-skip") + 1] == "0" for c in calls)
    assert [r["config"] for r in rows] == [r["config"] for r in table.rows] == [
        "8x4x32_fold_1x1x2", "32x32x1", "256x4x1_fold_1x2x1", "1024x1x1", "64x16x1"]
    for config, row in zip(CONFIGS[:3], rows):
        _, wavefronts, dram_read = RECORDED[config]
        assert row["error"] == ""
        assert row["ncu_l1_wavefronts"] == wavefronts
        assert row["ncu_dram_read_bytes"] == dram_read
        assert row["meas_l1_wavefronts_per_lup"] == pytest.approx(wavefronts / LUPS)
    assert rows[2]["ncu_duration_s"] == pytest.approx(1_488_416e-9)  # "ns" in the 256x4x1 page
    assert rows[3]["error"].startswith("ncu: the profiled child failed: CUDARuntimeError")
    assert rows[3]["time_median_s"] == 1.5e-3  # the timing is kept
    assert rows[4]["ncu_l1_wavefronts"] == 381_069_271  # the fake's default page
    assert table.metadata["ncu"].startswith("Version 2025.3.1.0")


def test_a_failed_ncu_run_is_the_error_of_its_chunk_only(tmp_path):
    runs = []

    def run(cmd, **kwargs):
        runs.append(cmd)
        if len(runs) == 1:
            return SimpleNamespace(returncode=1, stdout="==ERROR== ERR_NVGPUCTRPERM - no permission\n", stderr="")
        raise __import__("subprocess").TimeoutExpired(cmd, 5)

    version = SimpleNamespace(returncode=0, stdout="Version 1\n", stderr="")
    profiler = NcuProfiler(ncu="ncu", run=lambda cmd, **kw: version if cmd[1:] == ["--version"] else run(cmd, **kw))
    table = _campaign(FakeRunner(), profiler, configs=CONFIGS[:3], chunk=2)
    assert [("ERR_NVGPUCTRPERM" in r["error"], "did not finish" in r["error"]) for r in table.rows] == [
        (True, False), (True, False), (False, True)]
    assert all(r["time_median_s"] == 1.5e-3 for r in table.rows)


def test_chunks():
    assert chunks(CONFIGS, 2) == [CONFIGS[0:2], CONFIGS[2:4], CONFIGS[4:]]
    assert chunks(CONFIGS, 32) == [CONFIGS]
    with pytest.raises(MeasurementError):
        chunks(CONFIGS, 0)


# ---------------------------------------------------------------------------- the child


def test_child_builds_and_launches_every_plan_of_its_chunk(tmp_path):
    """One child process for a chunk: every plan built and launched once; a plan that fails says
    so in one line naming its function, and the others still run (exit status 3)."""
    plans = [fake_planner("star3d-r4", c, DOMAIN)[0] for c in CONFIGS[:3]]
    launched, lines = [], []

    class Runner:
        def __init__(self, device_id):
            self.device_id = device_id

        def launch(self, plan, gpu_kernel, count):
            if plan.block == (32, 32, 1):
                raise MeasurementError("running failed: cudaErrorLaunchOutOfResources")
            launched.append((self.device_id, plan.function_name, count))

    plans_file = write_plans(plans, tmp_path / "plans.json")
    status = child_main([str(plans_file), "1", "2"], plan_launch=fake_planner, runner_factory=Runner, err=lines.append)
    assert status == 3
    assert launched == [(2, plans[0].function_name, 1), (2, plans[2].function_name, 1)]
    assert lines == [f"error: {plans[1].function_name}: running failed: cudaErrorLaunchOutOfResources\n"]


# ---------------------------------------------------------------------------- rows as they are measured, --resume


def _metadata(**changes):
    meta = {"kernel": "star3d-r4", "dtype": "double", "domain": "640x512x512", "device_model": "H200", "date": "now"}
    return {**meta, **changes}


def test_rows_are_on_disk_when_the_campaign_is_stopped_and_resume_measures_the_rest(tmp_path):
    """Stopped while timing the 4th configuration (chunks of 2): the first chunk's two rows are in
    the file, complete. Resuming measures only the other three and keeps the first two rows verbatim."""
    out = tmp_path / "m.csv"
    writers = []

    def open_writer(meta, kept=()):
        writers.append(MeasurementWriter(out, meta, kept))

    with pytest.raises(KeyboardInterrupt):
        _campaign(FakeRunner(stop_at=CONFIGS[3]), chunk=2, on_metadata=open_writer,
                  on_row=lambda row: writers[-1].write(row))
    writers[-1].close()
    existing = read_existing(out)
    assert existing.configs == tuple(CONFIGS[:2]) and existing.errors == ("", "")
    assert not existing.dropped_partial_line
    first_lines = existing.lines

    todo = remaining_configs(CONFIGS, existing.done())
    assert todo == CONFIGS[2:]
    runner = FakeRunner()

    def reopen(meta):
        check_resumable(existing, meta, out)
        open_writer({**existing.metadata, "resumed": meta["date"]}, existing.lines)

    _campaign(runner, configs=todo, chunk=2, on_metadata=reopen, on_row=lambda row: writers[-1].write(row))
    writers[-1].close()
    assert runner.timed == CONFIGS[2:]
    table = read_measurement_csv(out)
    assert [r["config"] for r in table.rows] == ["8x4x32_fold_1x1x2", "32x32x1", "256x4x1_fold_1x2x1", "1024x1x1",
                                                  "64x16x1"]
    assert read_existing(out).lines[:2] == first_lines
    assert "resumed" in table.metadata and table.metadata["kernel"] == "star3d-r4"


def test_a_truncated_last_line_is_dropped_and_measured_again(tmp_path):
    out = tmp_path / "m.csv"
    with MeasurementWriter(out, _metadata()) as w:
        for row in _campaign(FakeRunner(), configs=CONFIGS[:3]).rows:
            w.write(row)
    text = out.read_text()
    out.write_text(text[: len(text) - 40])  # the last row cut off mid-line
    existing = read_existing(out)
    assert existing.dropped_partial_line
    assert existing.configs == tuple(CONFIGS[:2])
    assert remaining_configs(CONFIGS[:3], existing.done()) == [CONFIGS[2]]


def test_rows_with_errors_are_measured_again(tmp_path):
    out = tmp_path / "m.csv"
    with MeasurementWriter(out, _metadata()) as w:
        for row in _campaign(FakeRunner(), configs=[CONFIGS[0], Config((2048, 1, 1))]).rows:
            w.write(row)
    existing = read_existing(out)
    assert existing.errors[0] == "" and "trimmed" in existing.errors[1]
    assert existing.done() == {CONFIGS[0]}


@pytest.mark.parametrize("change", [{"dtype": "float"}, {"domain": "256x256x256"}, {"kernel": "star3d-r1"},
                                    {"device_model": "A100-SXM4-40GB"}])
def test_resume_refuses_another_campaigns_file(tmp_path, change):
    out = tmp_path / "m.csv"
    MeasurementWriter(out, _metadata()).close()
    key = next(iter(change))
    with pytest.raises(MeasurementError, match=f"other settings: {key}"):
        check_resumable(read_existing(out), _metadata(**change), out)


def test_resume_of_a_file_without_dtype_means_double(tmp_path):
    out = tmp_path / "m.csv"
    meta = _metadata()
    del meta["dtype"]
    MeasurementWriter(out, meta).close()
    check_resumable(read_existing(out), _metadata(), out)
    with pytest.raises(MeasurementError, match="dtype"):
        check_resumable(read_existing(out), _metadata(dtype="float"), out)


def test_resume_refuses_other_columns(tmp_path):
    out = tmp_path / "old.csv"
    out.write_text("# warpspeed-measurement 1\n# kernel: star3d-r4\nconfig,block_x,block_y,block_z,fold_x,fold_y,fold_z\n")
    with pytest.raises(MeasurementError, match="other columns"):
        check_resumable(read_existing(out), _metadata(), out)


def test_writer_flushes_each_row(tmp_path):
    """Each row is on disk as soon as it is written (read back while the writer is open)."""
    out = tmp_path / "m.csv"
    rows = _campaign(FakeRunner(), configs=CONFIGS[:2]).rows
    with MeasurementWriter(out, _metadata()) as w:
        w.write(rows[0])
        assert len(read_existing(out).lines) == 1
        w.write(rows[1])
        assert len(read_existing(out).lines) == 2
    with open(out, newline="") as fh:
        header = next(r for r in csv.reader(fh) if not r[0].startswith("#"))
    assert tuple(header) == CSV_COLUMNS


# ---------------------------------------------------------------------------- --configs, --sample


def test_parse_config_list():
    assert parse_config_list("8x4x32:1x1x2,32x32x1:1x1x1, 256x4x1") == [
        Config((8, 4, 32), (1, 1, 2)), Config((32, 32, 1)), Config((256, 4, 1))]
    assert parse_config_list("32x32x1,32x32x1:1x1x1") == [Config((32, 32, 1))]


@pytest.mark.parametrize("text, named", [("8x4:1x1x2", "'8x4:1x1x2'"), ("8x4x32:1x1", "fold '1x1'"), ("", "empty"),
                                         ("8x4x32,,32x32x1", "empty"), ("0x4x32", "block '0x4x32'"),
                                         ("8*4*32", "'8\\*4\\*32'")])
def test_parse_config_list_names_the_bad_entry(text, named):
    with pytest.raises(MeasurementError, match=named):
        parse_config_list(text)


def test_sample_is_reproducible_and_in_campaign_order():
    from warpspeed.launch.space import paper_space

    space = paper_space()
    a = sample_configs(space, 24, seed=7)
    assert a == sample_configs(space, 24, seed=7)
    assert len(a) == len(set(a)) == 24
    assert a == [c for c in space if c in set(a)]  # the space's order
    assert a != sample_configs(space, 24, seed=8)
    assert sample_configs(space, len(space)) == space
    with pytest.raises(MeasurementError, match="1 <= N <= 168"):
        sample_configs(space, 169)


# ---------------------------------------------------------------------------- power


def _stamp(t):
    import datetime

    return datetime.datetime.fromtimestamp(t).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]


def test_power_samples_parse_and_summarize():
    t0 = 1_790_000_000.0
    text = "\n".join([f"{_stamp(t0 + 0.1 * i)}, {80.0 if i < 10 else 650.0 + i}, {345 if i < 10 else 1980}"
                      for i in range(40)] + [f"{_stamp(t0)}, [N/A], 1980", "Failed to initialize NVML"])
    samples = parse_power_samples(text)
    assert len(samples) == 40
    assert samples[12] == PowerSample(pytest.approx(t0 + 1.2, abs=1e-3), 662.0, 1980.0)
    # the work ran from t0 to t0 + 3.95 s; samples from t0 + 1 s on: i = 10..39, watts 660..689
    reading = summarize_power(samples, t0, t0 + 3.95, settle_s=1.0)
    assert reading.samples == 30
    assert reading.watts == pytest.approx((674 + 675) / 2)
    assert reading.sm_clock_mhz == 1980
    assert reading.window_s == pytest.approx(2.9, abs=1e-3)
    with pytest.raises(MeasurementError, match="no power sample"):
        summarize_power(samples, t0 + 10, t0 + 12)


def test_power_query():
    assert power_query(1, 100) == ["nvidia-smi", "--query-gpu=timestamp,power.draw,clocks.sm",
                                   "--format=csv,noheader,nounits", "-lms", "100", "-i", "1"]
    with pytest.raises(MeasurementError):
        power_query(-1)


def test_power_sampler_with_a_fake_nvidia_smi(tmp_path):
    """The sampler starts nvidia-smi, runs the work, stops it, and keeps only the samples after
    settling: the fake's idle 80 W of its first 0.3 s are dropped, 675.25 W at 1980 MHz remain."""
    smi = _executable(tmp_path / "nvidia-smi", FAKE_SMI)
    sampler = PowerSampler(device_id=0, interval_ms=50, settle_s=0.8, smi=str(smi))
    result, reading = sampler.sample_during(lambda: time.sleep(2.0) or "done")
    assert result == "done"
    assert reading.watts == 675.25 and reading.sm_clock_mhz == 1980
    assert reading.samples >= 5


def test_power_sampler_without_nvidia_smi(tmp_path):
    sampler = PowerSampler(smi=str(tmp_path / "missing-nvidia-smi"))
    with pytest.raises(MeasurementError, match="cannot start nvidia-smi"):
        sampler.sample_during(lambda: None)


def test_power_columns_of_a_soak():
    """1000 launches of 640x512x512 updates in 1.5 s at a median 675 W: 111.8 Glup/s, 6.04 nJ per update."""

    class Sampler:
        command = ["nvidia-smi", "..."]

        def sample_during(self, work):
            return work(), PowerReading(watts=675.0, sm_clock_mhz=1980.0, samples=38, window_s=3.9)

    runner = FakeRunner()
    table = _campaign(runner, configs=CONFIGS[:2], power=Sampler(), power_seconds=4.0)
    assert runner.soaked == [(CONFIGS[0], 4.0), (CONFIGS[1], 4.0)]
    row = table.rows[0]
    rate = 1000 * LUPS / 1.5
    assert row["power_lups_per_s"] == pytest.approx(rate)
    assert row["power_lups_per_s"] == pytest.approx(111.85e9, rel=1e-4)
    assert row["power_watts"] == 675.0 and row["power_sm_clock_mhz"] == 1980.0 and row["power_samples"] == 38
    assert row["meas_joules_per_lup"] == pytest.approx(675.0 / rate)
    assert row["meas_joules_per_lup"] == pytest.approx(6.035e-9, rel=1e-3)
    assert table.metadata["power"].startswith("nvidia-smi (nvidia-smi ...), 4 s back to back")


def test_a_failed_power_reading_keeps_the_timing():
    class Sampler:
        command = ["nvidia-smi"]

        def sample_during(self, work):
            work()
            raise MeasurementError("nvidia-smi gave no power sample")

    row = _campaign(FakeRunner(), configs=CONFIGS[:1], power=Sampler()).rows[0]
    assert row["error"] == "power: nvidia-smi gave no power sample"
    assert row["time_median_s"] == 1.5e-3 and math.isnan(row["power_watts"])


# ---------------------------------------------------------------------------- the command


def _cli_env(monkeypatch, tmp_path, fake_ncu, runner):
    from warpspeed.validation import runners

    smi = _executable(fake_ncu.parent / "nvidia-smi", FAKE_SMI)
    assert smi.exists()
    monkeypatch.setenv("PATH", f"{fake_ncu.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(runners, "CupyRunner", lambda device_id=0: runner)


@pytest.mark.slow
def test_measure_command_end_to_end_with_recorded_ncu_output(monkeypatch, tmp_path, fake_ncu):
    """``warpspeed measure --configs ... --power`` on the paper stencil with pystencils generating the
    kernels, the fake ncu printing the recorded H200 pages and the fake nvidia-smi: the CSV has the
    hand-read counters, the power columns, and the H200 model's predictions; ``--resume`` then
    measures only the configuration that was not in the file."""
    from click.testing import CliRunner

    from warpspeed.cli.main import main

    runner = FakeRunner(soak_s=1.6)
    _cli_env(monkeypatch, tmp_path, fake_ncu, runner)
    out = tmp_path / "star.csv"
    first = "8x4x32:1x1x2,32x32x1"
    args = ["measure", "--kernel", "star3d-r4", "--device", "H200", "--repeats", "3", "--warmup", "1",
            "--power", "--power-seconds", "2", "--out", str(out)]
    result = CliRunner().invoke(main, [*args, "--configs", first])
    assert result.exit_code == 0, result.output
    table = read_measurement_csv(out)
    assert [r["error"] for r in table.rows] == ["", ""]
    for row, config in zip(table.rows, list(RECORDED)[:2]):
        assert row["ncu_l1_wavefronts"] == RECORDED[config][1]
        assert row["ncu_dram_read_bytes"] == RECORDED[config][2]
        assert row["power_watts"] == 675.25 and row["power_sm_clock_mhz"] == 1980
        assert row["pred_lups_per_s"] > 0
    assert table.metadata["device_model"] == "H200" and table.metadata["dtype"] == "double"
    assert len(_ncu_calls(fake_ncu)) == 1  # both configurations in one ncu run

    runner.timed.clear()
    args.remove("--power")
    result = CliRunner().invoke(main, [*args, "--configs", first + ",256x4x1:1x2x1", "--resume"])
    assert result.exit_code == 0, result.output
    assert runner.timed == [Config((256, 4, 1), (1, 2, 1))]
    table = read_measurement_csv(out)
    assert [r["ncu_l1_wavefronts"] for r in table.rows] == [381_069_271, 338_450_165, 280_870_771]
    assert "resumed" in table.metadata

    result = CliRunner().invoke(main, [*args, "--configs", first, "--resume"])
    assert result.exit_code == 0 and "nothing to resume" in result.output


def test_measure_command_sample_and_bad_lists(monkeypatch, tmp_path, fake_ncu):
    from click.testing import CliRunner

    from warpspeed.cli.main import main

    runner = FakeRunner()
    _cli_env(monkeypatch, tmp_path, fake_ncu, runner)
    out = tmp_path / "s.csv"
    result = CliRunner().invoke(main, ["measure", "--kernel", "star2d-r1", "--device", "H200", "--no-ncu",
                                       "--repeats", "1", "--sample", "3", "--seed", "5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    from warpspeed.kernel.catalog import resolve_kernel
    from warpspeed.hardware.device import load_device
    from warpspeed.launch.space import configuration_space

    space = configuration_space(resolve_kernel("star2d-r1", device=load_device("H200")), 1024)
    assert runner.timed == sample_configs(space, 3, seed=5)
    assert all(c.block[2] == 1 and c.fold[2] == 1 for c in runner.timed)  # the 2-D space
    bad = CliRunner().invoke(main, ["measure", "--configs", "8x4", "--no-ncu", "--out", str(out)])
    assert bad.exit_code == 2 and "error: configuration '8x4'" in bad.output
