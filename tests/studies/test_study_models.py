"""Studies with further models: the interval, pipeline and energy columns, the objective, resuming.

The model columns must be exactly what ``warpspeed rank --model interval|pipeline`` and
``rank --objective energy`` compute for the same configuration (:func:`warpspeed.rank.predict_configs`
with a :class:`~warpspeed.rank.Scoring`); two figures are derived by hand: energy per lup is
board power / rate, and a streaming copy's pipeline rate approaches the DRAM bandwidth divided
by the bytes it moves per lup.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import warpspeed.predict
from warpspeed.cli.main import main
from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import load_device
from warpspeed.interval.time_model import INTERVAL
from warpspeed.kernel import catalog
from warpspeed.launch.space import Config
from warpspeed.pipeline.time_model import PIPELINE
from warpspeed.power.energy_model import ENERGY
from warpspeed.rank import Scoring, predict_configs
from warpspeed.studies.models import STUDY_MODELS, study_columns
from warpspeed.studies.spec import study_from_dict
from warpspeed.studies.storage import COLUMNS
from warpspeed.studies.study import run_study

DEVICE = "A100-SXM4-40GB"
# star2d-r1 on a 3-D domain: a known kernel whose every configuration is an error row
SPEC = {"kernels": ["copy", "star3d-r1", "star2d-r1"], "devices": [DEVICE], "domains": [[32, 32, 32]],
        "threads": [128], "foldings": [[1, 1, 1], [1, 2, 1]], "max_block_z": 1}
ALL = list(STUDY_MODELS)

@pytest.fixture(autouse=True)
def _studies_write_in_the_working_directory(request, monkeypatch):
    """A study writes its relative output in the working directory: the study tests run in their
    own temporary one."""
    if "study" in request.node.name or request.node.name.startswith("test_cli"):
        monkeypatch.chdir(request.getfixturevalue("tmp_path"))



def _spec(directory: Path, output: str, **extra):
    return study_from_dict({**SPEC, "output": output, **extra}, directory)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> Path:
    """The study with every model, run once."""
    spec = _spec(tmp_path_factory.mktemp("models"), "all.csv", models=ALL, objective="energy")
    result = run_study(spec)
    assert result.computed == result.rows and result.refreshed == 0
    return spec.output


@pytest.fixture(scope="module")
def roofline(tmp_path_factory) -> Path:
    """The same study with the default models (today's columns)."""
    spec = _spec(tmp_path_factory.mktemp("roofline"), "roofline.csv")
    run_study(spec)
    return spec.output


def test_columns(full, roofline):
    # Today's columns are unchanged by default; each model inserts its columns before 'error'.
    assert list(_rows(roofline)[0]) == list(COLUMNS) and COLUMNS[-1] == "error"
    extra = ["overlap_lups_per_s", "overlap_explanation",
             "interval_lups_per_s", "interval_explanation", "pipeline_lups_per_s", "pipeline_explanation",
             "energy_watts", "energy_joules_per_lup", "energy_lups_per_s", "energy_clock_mhz"]
    assert list(_rows(full)[0]) == list(COLUMNS[:-1]) + extra + ["error"]
    # The roofline columns are the same whichever models are asked for.
    for a, b in zip(_rows(full), _rows(roofline), strict=True):
        assert {c: a[c] for c in COLUMNS} == b


def test_model_columns_are_ranks_figures(full):
    device = load_device(DEVICE)
    rows = [r for r in _rows(full) if not r["error"]]
    assert {r["kernel"] for r in rows} == {"copy", "star3d-r1"}
    for r in rows:
        config = Config(tuple(int(r[f"block_{d}"]) for d in "xyz"), tuple(int(r[f"fold_{d}"]) for d in "xyz"))
        kernel = catalog.resolve_kernel(r["kernel"], (32, 32, 32), fold=config.fold, device=device)
        overlap, interval, pipeline, energy = (
            predict_configs(kernel, device, [config], executor=None, scoring=scoring)[0]
            for scoring in (Scoring(model="overlap"), Scoring(model="interval"), Scoring(model="pipeline"),
                            Scoring(model="roofline", objective="energy")))
        assert float(r["overlap_lups_per_s"]) == overlap.lups_per_s
        assert r["overlap_explanation"] == overlap.explanation
        assert float(r["interval_lups_per_s"]) == interval.lups_per_s
        assert r["interval_explanation"] == interval.explanation
        assert float(r["pipeline_lups_per_s"]) == pipeline.lups_per_s
        assert r["pipeline_explanation"] == pipeline.explanation
        assert float(r["energy_watts"]) == energy.watts
        assert float(r["energy_lups_per_s"]) == energy.lups_per_s
        assert float(r["energy_joules_per_lup"]) == pytest.approx(1 / energy.lups_per_joule, rel=1e-12)
        # By hand: joules per lup = watts / (lups per second).
        assert float(r["energy_joules_per_lup"]) == pytest.approx(
            float(r["energy_watts"]) / float(r["energy_lups_per_s"]), rel=1e-12)
        # At the device's clock the power holds at the roofline's rate; above the board's power
        # limit the clock (and with it the rate) is lowered.
        clock = float(r["energy_clock_mhz"])
        if clock == device.clock_mhz:
            assert float(r["energy_lups_per_s"]) == pytest.approx(float(r["lups_per_s"]), rel=1e-12)
        else:
            assert clock < device.clock_mhz and float(r["energy_lups_per_s"]) < float(r["lups_per_s"])


def test_error_rows_have_empty_model_columns(full):
    bad = [r for r in _rows(full) if r["kernel"] == "star2d-r1"]
    assert bad and all("2 positive integers" in r["error"] for r in bad)
    assert all(r[c] == "" for r in bad for c in study_columns(ALL) if c.startswith(("overlap", "interval", "pipeline", "energy")))


def test_streaming_copy_pipeline_rate_is_the_dram_limit(tmp_path):
    """A copy of doubles moves 8 B in and 8 B out per lup: the DRAM limit is the A100's 1381 GB/s
    (its device file's dram_bandwidth_gb_s) / 16 B = 86.3125 Glup/s for every block whose warps
    read whole 32-B sectors (x extent >= 4 doubles). The pipeline model's global-memory pipeline is
    then saturated: its rate is that limit, less at most the fill and drain of one of the
    256*256*216 / 256 = 55296 blocks / (108 SMs x 8 blocks) = 64 waves, i.e. at most 1/64 lower."""
    spec = study_from_dict({"kernels": ["copy"], "devices": [DEVICE], "domains": [[256, 256, 216]],
                            "threads": [256], "foldings": [[1, 1, 1]], "max_block_z": 1, "output": "copy.csv",
                            "models": ["pipeline"], "objective": "pipeline"}, tmp_path)
    run_study(spec)
    limit = 1381e9 / 16
    rows = [r for r in _rows(spec.output) if int(r["block_x"]) >= 4]
    assert len(rows) == 7  # 4x64 .. 256x1
    for r in rows:
        assert float(r["dram_lups_per_s"]) == pytest.approx(limit, rel=1e-12)
        waves = 256 * 256 * 216 / 256 / (108 * int(r["blocks_per_sm"]))
        assert waves == 64
        assert limit * (1 - 1 / waves) <= float(r["pipeline_lups_per_s"]) <= limit


class _Counter:
    """Counts calls of a function (monkeypatched on a module or a model's class) and passes them on."""

    def __init__(self, monkeypatch, owner, name: str) -> None:
        self.calls = 0
        original = getattr(owner, name)

        def counting(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counting)


def _counters(monkeypatch) -> dict[str, _Counter]:
    return {"predict": _Counter(monkeypatch, warpspeed.predict.Predictor, "predict"),
            "interval": _Counter(monkeypatch, type(INTERVAL), "estimate"),
            "pipeline": _Counter(monkeypatch, type(PIPELINE), "estimate"),
            "energy": _Counter(monkeypatch, type(ENERGY), "estimate")}


def test_resume_computes_only_missing_rows(tmp_path, full, monkeypatch):
    spec = _spec(tmp_path, "cut.csv", models=ALL, objective="energy")
    lines = full.read_text().splitlines(keepends=True)
    keep = 1 + 9  # the header and 9 rows (copy rows, all predictable)
    spec.output.write_text("".join(lines[:keep]) + lines[keep][:40])  # ... and a line cut by a kill
    reference = _rows(full)
    missing_ok = sum(1 for r in reference[keep - 1:] if not r["error"])
    counts = _counters(monkeypatch)
    result = run_study(spec)
    assert result.resumed == keep - 1 and result.computed == len(reference) - (keep - 1)
    assert {name: c.calls for name, c in counts.items()} == {name: missing_ok for name in counts}
    assert spec.output.read_text() == full.read_text()


def test_adding_models_recomputes_removing_them_keeps_rows(tmp_path, full, roofline, monkeypatch):
    reference = _rows(full)
    errors = sum(1 for r in reference if r["error"])
    spec = _spec(tmp_path, "grow.csv")
    spec.output.write_text(roofline.read_text())
    # More models: every row lacks the new columns and is recomputed whole.
    grown = run_study(_spec(tmp_path, "grow.csv", models=ALL))
    assert grown.refreshed == grown.computed == len(reference) and grown.resumed == 0
    assert spec.output.read_text() == full.read_text()
    # Fewer models: successful rows keep their values, the other columns are dropped; error rows
    # (an error may have come from a dropped model) are recomputed. Nothing is predicted again.
    counts = _counters(monkeypatch)
    fewer = run_study(_spec(tmp_path, "grow.csv", models=["roofline", "interval"]))
    assert fewer.refreshed == fewer.computed == errors and fewer.resumed == len(reference) - errors
    assert counts["predict"].calls == counts["interval"].calls == 0
    columns = study_columns(["roofline", "interval"])
    assert _rows(spec.output) == [{c: r[c] for c in columns} for r in reference]
    # Back to the default: byte for byte today's output.
    run_study(spec)
    assert spec.output.read_text() == roofline.read_text()


def test_interrupted_model_change_never_mixes_columns(tmp_path, roofline):
    spec = _spec(tmp_path, "mix.csv", models=["roofline", "energy"])
    spec.output.write_text(roofline.read_text())

    def stop(done: int, total: int) -> None:
        if done >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_study(spec, progress=stop)
    assert spec.output.read_text() == roofline.read_text()  # the old output stays until replaced whole
    rows = _rows(spec.journal_path)
    assert len(rows) == 3 and list(rows[0]) == list(study_columns(["roofline", "energy"]))
    assert run_study(spec).resumed == 3


def test_parquet_with_models(tmp_path, full):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    spec = _spec(tmp_path, "all.parquet", models=ALL)
    run_study(spec)
    got = pd.read_parquet(spec.output)
    assert list(got.columns) == list(study_columns(ALL))
    want = pd.read_csv(full)
    assert got["energy_joules_per_lup"].equals(want["energy_joules_per_lup"])
    assert list(got["interval_explanation"].fillna("")) == list(want["interval_explanation"].fillna(""))
    # Resumed from the finished Parquet file with fewer models: nothing is recomputed but errors.
    result = run_study(_spec(tmp_path, "all.parquet", models=["pipeline"]))
    assert result.computed == int(want["error"].notna().sum())


def test_bad_models_and_objective_are_one_line_errors(tmp_path):
    cases = [({"models": ["roofline", "gpu-sim"]}, "unknown model(s) 'gpu-sim' in 'models'; allowed: roofline, "
                                                   "overlap, interval, pipeline, energy"),
             ({"models": "interval"}, "'models' must be a non-empty list"),
             ({"models": []}, "'models' must be a non-empty list"),
             ({"objective": "speed"}, "unknown objective 'speed'; allowed: roofline, overlap, interval, pipeline, energy"),
             ({"models": ["interval"], "objective": "energy"},
              "objective 'energy' is not among the study's models (roofline, interval); add it to 'models'")]
    for extra, message in cases:
        with pytest.raises(WarpspeedError) as err:
            _spec(tmp_path, "x.csv", **extra)
        assert message in str(err.value) and "\n" not in str(err.value)
    # The roofline is always computed: objective 'roofline' needs no entry in 'models'.
    assert _spec(tmp_path, "x.csv", models=["pipeline"], objective="roofline").models == ("roofline", "pipeline")


@pytest.mark.parametrize("model, device, table", [("energy", "MI100", "[power]"),
                                                  ("interval", "V100-PCIe-32GB", "[interval]")])
def test_model_without_device_parameters_stops_before_starting(tmp_path, model, device, table):
    spec = study_from_dict({**SPEC, "devices": [DEVICE, device], "output": "x.csv", "models": [model]}, tmp_path)
    with pytest.raises(WarpspeedError) as err:
        run_study(spec)
    assert f"model {model!r} cannot run on {device}" in str(err.value) and table in str(err.value)
    assert not spec.output.exists()


def test_cli_prints_the_best_row_by_objective(tmp_path, full):
    toml = tmp_path / "s.toml"
    toml.write_text('kernels = ["copy", "star3d-r1", "star2d-r1"]\ndevices = ["A100-SXM4-40GB"]\n'
                    'domains = [[32, 32, 32]]\nthreads = [128]\nfoldings = [[1, 1, 1], [1, 2, 1]]\n'
                    'max_block_z = 1\noutput = "out.csv"\n'
                    'models = ["roofline", "overlap", "interval", "pipeline", "energy"]\nobjective = "energy"\n')
    result = CliRunner().invoke(main, ["study", str(toml)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.csv").read_text() == full.read_text()
    assert "Best configuration per kernel, device and domain (lowest energy per lup)" in result.output
    for kernel in ("copy", "star3d-r1"):
        ok = [r for r in _rows(full) if r["kernel"] == kernel and not r["error"]]
        best = min(ok, key=lambda r: float(r["energy_joules_per_lup"]))
        line = next(line for line in result.output.splitlines() if f" {kernel} " in line)
        block = "x".join(best[f"block_{d}"] for d in "xyz")
        assert f" {block} " in line and f" {float(best['energy_joules_per_lup']) * 1e9:.2f} " in line
    assert "star2d-r1" not in result.output.split("Best configuration")[1]
    bad = tmp_path / "bad.toml"
    bad.write_text(toml.read_text().replace('objective = "energy"', 'objective = "edp"'))
    result = CliRunner().invoke(main, ["study", str(bad)])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "unknown objective 'edp'" in result.output


def test_default_study_prints_no_table(tmp_path):
    toml = tmp_path / "s.toml"
    toml.write_text('kernels = ["copy"]\ndevices = ["A100-SXM4-40GB"]\ndomains = [[32, 32, 32]]\n'
                    'threads = [32]\nfoldings = [[1, 1, 1]]\nmax_block_z = 1\noutput = "out.csv"\n')
    result = CliRunner().invoke(main, ["study", str(toml)])
    assert result.exit_code == 0 and result.output.strip().count("\n") == 0
    assert not math.isnan(float(_rows(tmp_path / "out.csv")[0]["lups_per_s"]))
