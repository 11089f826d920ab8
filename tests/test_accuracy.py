"""Accuracy metrics on hand-made data with answers worked out by hand.

tests/data/measured_small.csv has 7 configurations (hand-made, not a GPU measurement):

    config     L1 wf meas/pred  L2 load meas/pred  DRAM load meas/pred  perf meas/pred (Glup/s)
    32x8x4     1.0 / 1.1        10 / 11            10 / 9               100 / 120
    64x4x4     2.0 / 1.8        20 / 18            12 / 12               90 / 130
    128x2x4    4.0 / 5.0        40 / 50            16 / 12               80 / 110
    16x16x4    1.0 / 1.0         8 /  8             9 /  9               95 / 100
    256x4x1    0.5 / 0.4         5 /  4            20 / 25               60 /  70
    1024x1x1   (none) / 2.0     50 / 60            40 / 30               40 /  90
    8x8x16     4.0 / 3.2        25 / 20            10 / 10               70 /  60
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from warpspeed.validation import accuracy as acc
from warpspeed.validation.measurement_csv import read_measurement_csv

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def report():
    return acc.load_accuracy(DATA / "measured_small.csv")


def test_mape_by_hand(report):
    # L1: 10 %, 10 %, 25 %, 0 %, 20 %, (skipped), 20 % -> 85 / 6
    l1 = report.metric("l1_wavefronts")
    assert l1.n == 6
    assert l1.mape_percent == pytest.approx(85 / 6)
    # L2 load: 10, 10, 25, 0, 20, 20, 20 -> 105 / 7 = 15
    assert report.metric("l2_load").mape_percent == pytest.approx(15.0)
    assert report.metric("l2_load").worst_config == "128x2x4"
    assert report.metric("l2_store").mape_percent == 0.0
    # DRAM load: 10, 0, 25, 0, 25, 25, 0 -> 85 / 7
    assert report.metric("dram_load").mape_percent == pytest.approx(85 / 7)
    assert report.metric("dram_store").mape_percent == 0.0
    perf = 100 / 7 * (20 / 100 + 40 / 90 + 30 / 80 + 5 / 95 + 10 / 60 + 50 / 40 + 10 / 70)
    assert report.metric("performance").mape_percent == pytest.approx(perf)
    assert report.metric("performance").max_ape_percent == pytest.approx(125.0)


def test_ranking_by_hand(report):
    r = report.ranking
    # measured ranks 1..7: 32x8x4, 16x16x4, 64x4x4, 128x2x4, 8x8x16, 256x4x1, 1024x1x1
    # predicted ranks:     64x4x4, 32x8x4, 128x2x4, 16x16x4, 1024x1x1, 256x4x1, 8x8x16
    # d = -1, 2, 1, -2, 0, 2, -2 -> sum d^2 = 18; rho = 1 - 6 * 18 / (7 * 48) = 19 / 28
    assert r.n == 7
    assert r.spearman == pytest.approx(19 / 28)
    assert r.best_predicted == "64x4x4"
    assert r.best_measured == "32x8x4"
    assert r.best_predicted_relative == pytest.approx(0.9)
    # measured top 5 {32x8x4, 16x16x4, 64x4x4, 128x2x4, 8x8x16}; predicted top 5 lacks 8x8x16
    assert r.top_k == 5
    assert r.top_k_overlap == 4


def test_top_k_parameter():
    rows = read_measurement_csv(DATA / "measured_small.csv").rows
    # top 2: measured {32x8x4, 16x16x4}, predicted {64x4x4, 32x8x4} -> 1
    assert acc.ranking_quality(rows, top_k=2).top_k_overlap == 1
    # top 7 = everything
    assert acc.ranking_quality(rows, top_k=10).top_k_overlap == 7


def _rows(pred, meas):
    return [{"block_x": 2**i, "block_y": 1, "block_z": 1, "pred_lups_per_s": p, "meas_lups_per_s": q}
            for i, (p, q) in enumerate(zip(pred, meas))]


def test_spearman_known_permutations():
    assert acc.ranking_quality(_rows([1, 2, 3, 4, 5], [10, 20, 30, 40, 50])).spearman == pytest.approx(1.0)
    assert acc.ranking_quality(_rows([1, 2, 3, 4, 5], [50, 40, 30, 20, 10])).spearman == pytest.approx(-1.0)
    # swap of two neighbours among 4: sum d^2 = 2 -> 1 - 6 * 2 / (4 * 15) = 0.8
    assert acc.ranking_quality(_rows([1, 2, 3, 4], [1, 3, 2, 4])).spearman == pytest.approx(0.8)


def test_mape_function():
    assert acc.mape([110, 90], [100, 100]) == pytest.approx(10.0)
    assert math.isnan(acc.mape([], []))
    with pytest.raises(acc.AccuracyError):
        acc.mape([1.0], [0.0])


def test_error_rows_and_missing_data_are_skipped():
    rows = _rows([1, 2], [1, 2]) + [{"block_x": 8, "block_y": 1, "block_z": 1, "pred_lups_per_s": 5.0,
                                     "meas_lups_per_s": 1.0, "error": "launch failed"}]
    rep = acc.accuracy_report(rows)
    assert rep.rows == 2
    assert rep.metric("performance").mape_percent == 0.0
    assert rep.metric("dram_load").n == 0 and math.isnan(rep.metric("dram_load").mape_percent)
    assert acc.ranking_quality(_rows([1], [1])) is None


def test_report_json_has_no_nan():
    import json

    rep = acc.accuracy_report(_rows([1, 2, 3], [1, 2, 3]))
    text = json.dumps(rep.to_dict(), allow_nan=False)
    assert '"performance"' in text


def test_block_color_is_log_fraction():
    # 32x8x4: log2 = 5, 3, 2 of 10
    assert acc.block_color((32, 8, 4)) == pytest.approx((0.5, 0.3, 0.2))
    assert acc.block_color((1024, 1, 1)) == pytest.approx((1.0, 0.0, 0.0))


def test_plot_writes_png(tmp_path):
    rows = read_measurement_csv(DATA / "measured_small.csv").rows
    out = acc.plot_accuracy(rows, tmp_path / "acc.png", "test")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out2 = acc.plot_accuracy(_rows([1, 2], [1, 2]), tmp_path / "empty.png")  # panels without data
    assert out2.stat().st_size > 0


def test_constant_performance_has_no_rank_correlation():
    assert math.isnan(acc.ranking_quality(_rows([1, 2, 3], [5, 5, 5])).spearman)


def test_accuracy_cli(tmp_path):
    import json

    from click.testing import CliRunner

    from warpspeed.cli.validate import accuracy as accuracy_cmd

    csv_path = str(DATA / "measured_small.csv")
    result = CliRunner().invoke(accuracy_cmd, [csv_path, "--json", "--plot", str(tmp_path / "p.png")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ranking"]["top_k_overlap"] == 4
    assert data["metrics"][1]["metric"] == "l2_load" and data["metrics"][1]["mape_percent"] == pytest.approx(15.0)
    assert (tmp_path / "p.png").stat().st_size > 0
    text = CliRunner().invoke(accuracy_cmd, [csv_path])
    assert text.exit_code == 0 and "Spearman rho 0.679" in text.output
