"""``warpspeed compare`` and the time-model datasets of ``warpspeed validate``.

Expected numbers come from the device files (read here with tomllib), the stored measurement
files (read here with the csv module), hand arithmetic, and, for consistency, ``rank``'s rows.
"""

from __future__ import annotations

import csv
import json
import math
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from warpspeed.cli.common import rank_space
from warpspeed.cli.main import main
from warpspeed.compare import compare_configs, spearman
from warpspeed.hardware.device import load_device
from warpspeed.rank import Scoring, rank_per_fold
from warpspeed.validation import public_models
from tests.paths import ROOT

PUBLIC = ROOT / "fits" / "data" / "public"
DEVICES = ROOT / "warpspeed" / "hardware" / "devices"
#: A small space: the 7-point stencil on 64^3 cells with blocks of 128 threads.
SMALL = ("star3d-r1", "64,64,64", "A100-SXM4-40GB", None, 128)


@pytest.fixture(scope="module")
def small_space():
    return rank_space(*SMALL)


@pytest.fixture(scope="module")
def small_comparison(small_space):
    return compare_configs(small_space.kernels, small_space.device, small_space.blocks)


def _data_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(line for line in path.read_text().splitlines() if line and not line.startswith("#")))


def _find(table: dict, key: str):
    """``key`` in a TOML document, at the top or in one of its tables."""
    if key in table:
        return table[key]
    return next(v[key] for v in table.values() if isinstance(v, dict) and key in v)


def test_rows_equal_what_rank_gives_for_each_model(small_space, small_comparison):
    for model in ("overlap", "roofline", "interval", "pipeline"):
        ranking = rank_per_fold(small_space.kernels, small_space.device, small_space.blocks, executor=None,
                                scoring=Scoring(model=model))
        by_config = {r.config: r for r in ranking.rows}
        assert len(by_config) == len(small_comparison.rows)
        for row in small_comparison.rows:
            assert row.rate(model).lups_per_s == by_config[row.config].lups_per_s
        assert small_comparison.summary(model).best == ranking.best().config


def test_rows_follow_the_default_ranking_and_ratios_divide(small_space, small_comparison):
    ranking = rank_per_fold(small_space.kernels, small_space.device, small_space.blocks, executor=None)
    assert [r.config for r in small_comparison.rows] == [r.config for r in ranking.rows]
    row = small_comparison.rows[0]
    assert row.ratio("interval") == pytest.approx(row.rate("interval").lups_per_s / row.rate("overlap").lups_per_s)
    s = small_comparison.summary("interval")
    ratios = [r.ratio("interval") for r in small_comparison.rows]
    assert (s.ratio_min, s.ratio_max) == (min(ratios), max(ratios))


def test_dram_bound_copy_runs_at_dram_bandwidth_over_16_bytes():
    # copy of doubles: 8 B loaded + 8 B stored per lattice update, full occupancy: the roofline
    # rate is the device file's sustained DRAM bandwidth / 16 B
    space = rank_space("copy", "256,256,256", "A100-SXM4-40GB", None, 256)
    comparison = compare_configs({(1, 1, 1): space.kernels[(1, 1, 1)]}, space.device, lambda k: [(32, 8, 1)])
    bandwidth = _find(tomllib.loads((DEVICES / "A100-SXM4-40GB.toml").read_text()), "dram_bandwidth_gb_s")
    roofline = comparison.rows[0].rate("roofline")
    assert roofline.explanation == "dram"
    assert roofline.lups_per_s == pytest.approx(bandwidth * 1e9 / 16, rel=1e-3)


def test_spearman_of_identical_and_reversed_lists():
    values = [3.0, 1.0, 4.0, 1.5, 9.0]
    assert spearman(values, values) == pytest.approx(1.0)
    assert spearman(values, [-v for v in values]) == pytest.approx(-1.0)
    # ranks (2,1,3) vs (1,2,3): d^2 = 1 + 1 + 0, rho = 1 - 6 * 2 / (3 * 8) = 0.5
    assert spearman([2.0, 1.0, 3.0], [1.0, 2.0, 3.0]) == pytest.approx(0.5)
    assert math.isnan(spearman([1.0], [1.0]))


def test_stream_kernel_runs_two_blocks_per_sm():
    # the gpu-stream files state two resident blocks per SM at every block size
    for _, name in public_models.STREAM_PARTS:
        device = load_device(name)
        pad = public_models.padding_bytes(device, 2)
        assert 2 * pad <= device.shared_bytes_per_sm < 3 * pad


def test_time_model_datasets_take_the_stored_measurements():
    datasets = {d.name: d for d in public_models.stream_datasets()}
    rows = _data_rows(PUBLIC / "gpu-stream" / "a100-40gb.csv")
    points = datasets["roofline: gpu-stream scale, A100-SXM4-40GB"].points
    assert [p.measured for p in points[:3]] == [float(r["scale"]) for r in rows[:3]] == [151.0, 291.0, 406.0]
    ds = datasets["interval: gpu-stream scale, A100-SXM4-40GB"]
    by_hand = 100 * sum(abs(p.predicted - p.measured) / p.measured for p in ds.points) / len(ds.points)
    assert ds.mape_percent == pytest.approx(by_hand)
    # the interval model has no A40 or V100 parameters: no dataset, not a failure
    assert "interval: gpu-stream scale, A40" not in datasets
    assert "roofline: gpu-stream scale, A40" in datasets


def test_fluidx3d_points_are_the_published_rates():
    published = {r["device"]: float(r["mlups"]) for r in _data_rows(PUBLIC / "fluidx3d" / "d3q19.csv")}
    assert published["A100-SXM4-40GB"] == 8522.0
    for ds in public_models.fluidx3d_datasets():
        assert ds.repository == "ProjectPhysX/FluidX3D"
        for p in ds.points:
            assert p.measured == published[p.label]
        a100 = next(p for p in ds.points if p.label == "A100-SXM4-40GB")
        assert abs(a100.error_percent) == pytest.approx(100 * abs(a100.predicted - 8522) / 8522)


def test_cli_json_csv_and_plot(tmp_path):
    args = ["compare", "--kernel", SMALL[0], "--domain", SMALL[1], "--threads", str(SMALL[4])]
    result = CliRunner().invoke(main, [*args, "--json", "--csv", str(tmp_path / "c.csv"),
                                       "--plot", str(tmp_path / "c.png")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["models"] == ["overlap", "roofline", "interval", "pipeline"]
    assert len(doc["summary"]["spearman"]) == 6  # every pair of four models
    first = doc["rows"][0]
    assert first["interval"]["ratio_to_overlap"] == pytest.approx(
        first["interval"]["lups_per_s"] / first["overlap"]["lups_per_s"])
    with open(tmp_path / "c.csv", newline="") as handle:
        records = list(csv.DictReader(handle))
    assert len(records) == len(doc["rows"])
    assert (tmp_path / "c.png").stat().st_size > 1000
    table = CliRunner().invoke(main, [*args, "--models", "pipeline,roofline", "--top", "3"])
    assert table.exit_code == 0, table.output
    assert "Spearman rank correlation roofline vs pipeline" in table.output


@pytest.mark.parametrize("models", ["roofline,warp", "roofline"])
def test_cli_bad_models_one_line_error(models):
    result = CliRunner().invoke(main, ["compare", "--models", models])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "roofline, interval, pipeline" in lines[0]


def test_a_model_without_parameters_for_the_device_is_left_out():
    # the A40 device file has no [interval] table: the interval model predicts nothing there
    space = rank_space("star3d-r1", "64,64,64", "A40", None, 128)
    comparison = compare_configs({(1, 1, 1): space.kernels[(1, 1, 1)]}, space.device, space.blocks)
    assert comparison.models == ("overlap", "roofline", "pipeline")
    assert "A40" in comparison.dropped["interval"]
    assert set(comparison.spearman) == {("overlap", "roofline"), ("overlap", "pipeline"), ("roofline", "pipeline")}
    result = CliRunner().invoke(main, ["compare", "--device", "A40", "--kernel", "star3d-r1", "--domain", "64,64,64",
                                       "--threads", "128", "--models", "interval,roofline"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and result.output.startswith("error: interval:")
