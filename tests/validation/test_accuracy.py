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

import pytest

from warpspeed.validation import accuracy as acc
from warpspeed.validation.measurement_csv import read_measurement_csv
from tests.paths import DATA


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


# ------------------------------------------------------------------------------------------
# the phenomenological variant: the roofline fed with the measured volumes (Ernst et al. 2023, 5.8)
#
# A100-SXM4-40GB (its device file): 108 SMs x 1.41 GHz = 152.28e9 L1 wavefronts/s, L2 5402.9 GB/s,
# DRAM 1381 GB/s sustained (the rows of measured_small.csv have no launch columns, so the DRAM
# limit takes the sustained bandwidth). Measured L2 and DRAM stores are 8 B/lup in every row.
#
#   config    L1 wf   L1 limit   L2 B/lup  L2 limit   DRAM B/lup  DRAM limit   phenomenological
#   32x8x4    1.0     152.28     18        300.16     18          76.722       76.722  dram
#   64x4x4    2.0      76.14     28        192.96     20          69.05        69.05   dram
#   128x2x4   4.0      38.07     48        112.56     24          57.542       38.07   l1
#   16x16x4   1.0     152.28     16        337.68     17          81.235       81.235  dram
#   256x4x1   0.5     304.56     13        415.61     28          49.321       49.321  dram
#   1024x1x1  (no measured L1 wavefronts: left out)
#   8x8x16    4.0      38.07     33        163.72     18          76.722       38.07   l1
#   (Glup/s)
PHENO_BY_HAND = {"32x8x4": (1381 / 18, "dram"), "64x4x4": (1381 / 20, "dram"), "128x2x4": (152.28 / 4, "l1"),
                 "16x16x4": (1381 / 17, "dram"), "256x4x1": (1381 / 28, "dram"), "8x8x16": (152.28 / 4, "l1")}
MEASURED = {"32x8x4": 100, "64x4x4": 90, "128x2x4": 80, "16x16x4": 95, "256x4x1": 60, "8x8x16": 70}


def test_phenomenological_rates_by_hand():
    from warpspeed.hardware.device import load_device

    rows = acc.with_phenomenological(read_measurement_csv(DATA / "measured_small.csv").rows,
                                     load_device("A100-SXM4-40GB"))
    got = {r["config"]: (r[acc.PHENOMENOLOGICAL_COLUMN], r[acc.PHENOMENOLOGICAL_LIMITER_COLUMN]) for r in rows}
    assert math.isnan(got.pop("1024x1x1")[0])
    for config, (glups, limiter) in PHENO_BY_HAND.items():
        assert got[config][0] == pytest.approx(glups * 1e9, rel=1e-12), config
        assert got[config][1] == limiter, config


def test_phenomenological_report_by_hand(report):
    p = report.phenomenological
    assert p.n == 6
    assert dict(p.limiters) == {"l1": 2, "dram": 4} and [name for name, _ in p.limiters] == ["l1", "dram"]
    mape = 100 / 6 * sum(abs(PHENO_BY_HAND[c][0] - m) / m for c, m in MEASURED.items())
    assert mape == pytest.approx(29.478, abs=1e-3)
    assert p.performance.mape_percent == pytest.approx(mape, rel=1e-12)
    assert p.performance.worst_config == "128x2x4"  # 38.07 against 80: 52.4 %
    # ranks (ascending) of the phenomenological rates, ties averaged: 128x2x4 and 8x8x16 1.5,
    # 256x4x1 3, 64x4x4 4, 32x8x4 5, 16x16x4 6; measured: 256x4x1 1, 8x8x16 2, 128x2x4 3,
    # 64x4x4 4, 16x16x4 5, 32x8x4 6. Pearson of the ranks: deviations from 3.5
    # (-2, -2, -0.5, 0.5, 1.5, 2.5) and (-0.5, -1.5, -2.5, 0.5, 2.5, 1.5) in that order:
    # sum of products 13, sums of squares 17 and 17.5, rho = 13 / sqrt(297.5) = 0.753702
    assert p.ranking.spearman == pytest.approx(13 / math.sqrt(17 * 17.5), rel=1e-9)
    assert p.ranking.best_predicted == "16x16x4" and p.ranking.best_predicted_relative == pytest.approx(0.95)


def test_phenomenological_fp_limit_is_the_predictions(tmp_path):
    """FP work is not measured: the predicted FP limit joins the minimum. One row with L1
    2 wavefronts/lup (76.14 Glup/s), L2 10 + 10 B/lup (270.1 Glup/s), DRAM 20 + 0 B/lup
    (69.05 Glup/s) and a predicted FP limit of 50 Glup/s: 50 Glup/s, FP-bound."""
    from warpspeed.hardware.device import load_device

    row = {"block_x": 32, "block_y": 8, "block_z": 4, "fold_x": 1, "fold_y": 1, "fold_z": 1,
           "meas_l1_wavefronts_per_lup": 2.0, "meas_l2_load_bytes_per_lup": 10.0, "meas_l2_store_bytes_per_lup": 10.0,
           "meas_dram_load_bytes_per_lup": 20.0, "meas_dram_store_bytes_per_lup": 0.0, "pred_fp_lups_per_s": 50e9}
    roof = acc.phenomenological_roofline(row, load_device("A100-SXM4-40GB"))
    assert roof.limiter == "fp" and roof.lups_per_s == 50e9
    assert roof.l1_lups_per_s == pytest.approx(76.14e9, rel=1e-12)
    assert roof.l2_lups_per_s == pytest.approx(270.145e9, rel=1e-12)
    assert roof.dram_lups_per_s == pytest.approx(69.05e9, rel=1e-12)
    without_fp = acc.phenomenological_roofline({**row, "pred_fp_lups_per_s": math.nan}, load_device("A100-SXM4-40GB"))
    assert without_fp.limiter == "dram"
    assert acc.phenomenological_roofline({**row, "meas_l2_store_bytes_per_lup": math.nan},
                                         load_device("A100-SXM4-40GB")) is None


def test_phenomenological_needs_a_device(tmp_path):
    from warpspeed.validation.schema import MeasurementTable

    rows = read_measurement_csv(DATA / "measured_small.csv").rows
    with pytest.raises(acc.AccuracyError, match="names no device_model.*--device"):
        acc.table_accuracy(MeasurementTable({"kernel": "k"}, rows))
    with pytest.raises(acc.AccuracyError, match="cannot load the device 'no-such-gpu'"):
        acc.table_accuracy(MeasurementTable({"kernel": "k", "device_model": "no-such-gpu"}, rows))
    # without measured volumes there is nothing to feed the roofline: no variant, no device needed
    timing_only = [{k: v for k, v in r.items() if not k.startswith("meas_") or k == "meas_lups_per_s"} for r in rows]
    assert acc.table_accuracy(MeasurementTable({"kernel": "k"}, tuple(timing_only))).phenomenological is None
    # the refit's before/after reports have no device: no variant
    assert acc.accuracy_report(rows).phenomenological is None


def test_accuracy_cli_reports_the_phenomenological_variant():
    import json

    from click.testing import CliRunner

    from warpspeed.cli.validate import accuracy as accuracy_cmd

    csv_path = str(DATA / "measured_small.csv")
    data = json.loads(CliRunner().invoke(accuracy_cmd, [csv_path, "--json"]).output)
    assert data["phenomenological"]["n"] == 6
    assert data["phenomenological"]["performance"]["mape_percent"] == pytest.approx(29.478, abs=1e-3)
    text = CliRunner().invoke(accuracy_cmd, [csv_path])
    assert "MAPE 29.5 % over 6 configurations" in text.output and "l1 2, dram 4" in text.output
    bad = CliRunner().invoke(accuracy_cmd, [csv_path, "--device", "no-such-gpu"])
    # (the command alone raises; the warpspeed group prints the WarpspeedError as one line)
    assert isinstance(bad.exception, acc.AccuracyError) and "cannot load the device 'no-such-gpu'" in str(bad.exception)
