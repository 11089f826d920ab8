"""Refit of the capacity curves: derived hit rates by hand, recovery of known Gompertz
parameters from synthetic measurements, held-out evaluation, TOML output, CLI."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from warpspeed.validation import refit as rf
from warpspeed.memory.capacity import load_curves
from warpspeed.errors import FitError, WarpspeedError
from warpspeed.validation.measurement_csv import write_measurement_csv
from warpspeed.validation.schema import MeasurementTable
from warpspeed.cli.main import main
from tests.paths import ROOT

#: Ground truth of the synthetic campaign (not the published values).
TRUE_L1 = (0.5, 5.0, 1.2)
TRUE_Z = (0.9, 12.0, 2.0)


def miss(params, o):
    a, b, c = params
    return a * math.exp(-b * math.exp(-c * o))


def synthetic_rows(n=40):
    """Rows whose measured L2 and DRAM loads follow TRUE_L1 and TRUE_Z exactly.

    L2: compulsory 16, no-reuse L1 load 48 B/lup -> measured 16 + m_l1(o_l1) * 32.
    DRAM: compulsory 48 B/lup (>= any L2 load, so no redundant L2 loads), z overlap 8 B/lup
    -> measured 48 - 8 * (1 - m_z(o_z)). Oversubscriptions spread over 0..5 and 0.1..4.
    """
    rows = []
    for i, (o1, oz) in enumerate(zip(np.linspace(0.0, 5.0, n), np.linspace(0.1, 4.0, n)[::-1])):
        rows.append({
            "config": f"c{i}", "block_x": 2 ** (i % 11), "block_y": 1, "block_z": 1,
            "fold_x": 1, "fold_y": 1, "fold_z": 1, "error": "",
            "meas_l2_load_bytes_per_lup": 16 + miss(TRUE_L1, o1) * 32,
            "meas_dram_load_bytes_per_lup": 48 - 8 * (1 - miss(TRUE_Z, oz)),
            "meas_l2_store_bytes_per_lup": 8.0, "meas_dram_store_bytes_per_lup": 8.0,
            "meas_lups_per_s": 1e9,
            "pred_l1_oversubscription": float(o1), "pred_l1_load_bytes_per_lup": 48.0,
            "pred_l2_load_compulsory_bytes_per_lup": 16.0, "pred_l2_load_bytes_per_lup": 30.0,
            "pred_l2_store_bytes_per_lup": 8.0,
            "pred_dram_load_compulsory_bytes_per_lup": 48.0, "pred_dram_load_bytes_per_lup": 44.0,
            "pred_dram_store_bytes_per_lup": 8.0,
            "pred_l2_oversubscription": 0.5, "pred_l2_redundant_load_bytes_per_lup": 0.0,
            "pred_l2_redundant_store_bytes_per_lup": 0.0, "pred_dram_capacity_miss_bytes_per_lup": 0.0,
            "pred_dram_partial_store_read_bytes_per_lup": 0.0,
            "pred_x_overlap_bytes_per_lup": 0.0, "pred_y_overlap_bytes_per_lup": 0.0,
            "pred_z_overlap_bytes_per_lup": 8.0, "pred_z_oversubscription": float(oz), "pred_z_hit_rate": 0.5,
            "pred_fp_lups_per_s": math.inf, "pred_l1_lups_per_s": 1e12, "pred_l2_lups_per_s": 1e11,
            "pred_dram_lups_per_s": 2e10, "pred_lups_per_s": 2e10,
        })
    return rows


# ---------------------------------------------------------------------------- derived points by hand


def test_l1_point_by_hand():
    row = {"meas_l2_load_bytes_per_lup": 40.0, "pred_l2_load_compulsory_bytes_per_lup": 20.0,
           "pred_l1_load_bytes_per_lup": 100.0, "pred_l1_oversubscription": 1.5}
    # miss = (40 - 20) / (100 - 20) = 0.25
    assert rf.derive_point(row, "l1_load") == pytest.approx((1.5, 0.75))


def _dram_row(**kw):
    row = {"meas_dram_load_bytes_per_lup": 35.0, "pred_dram_load_compulsory_bytes_per_lup": 40.0,
           "pred_dram_capacity_miss_bytes_per_lup": 2.0, "pred_dram_partial_store_read_bytes_per_lup": 1.0,
           "pred_x_overlap_bytes_per_lup": 4.0, "pred_x_hit_rate": 0.5, "pred_x_oversubscription": 0.1,
           "pred_y_overlap_bytes_per_lup": 10.0, "pred_y_hit_rate": 0.9, "pred_y_oversubscription": 0.8,
           "pred_l2_redundant_load_bytes_per_lup": 10.0, "pred_l2_redundant_store_bytes_per_lup": 5.0,
           "pred_l2_oversubscription": 0.4}
    row.update(kw)
    return row


def test_layer_point_by_hand():
    # h_y = (compulsory 40 + capacity 2 + partial 1 - x hits 4 * 0.5 - measured 35) / overlap 10 = 0.6
    assert rf.derive_point(_dram_row(), "y_layer") == pytest.approx((0.8, 0.6))
    # h_x = (40 + 2 + 1 - y hits 10 * 0.9 - 35) / 4 = -0.25 -> clipped to 0
    assert rf.derive_point(_dram_row(), "x_layer") == pytest.approx((0.1, 0.0))
    assert rf.derive_point(_dram_row(), "z_layer") is None  # no z overlap


def test_l2_points_by_hand():
    # hits = 4 * 0.5 + 10 * 0.9 = 11
    # l2_load: m = (35 - 40 + 11 - partial 1) / 10 = 0.5
    assert rf.derive_point(_dram_row(), "l2_load") == pytest.approx((0.4, 0.5))
    # l2_store, from the measured DRAM stores (the article's figure 18): m = (measured 9 -
    # compulsory 8) / redundant 5 = 0.2, h = 0.8
    row = _dram_row(meas_dram_store_bytes_per_lup=9.0, pred_dram_store_compulsory_bytes_per_lup=8.0)
    assert rf.derive_point(row, "l2_store") == pytest.approx((0.4, 0.8))
    assert rf.derive_point(_dram_row(), "l2_store") is None  # no measured DRAM store


def test_small_volumes_are_not_used():
    # overlap 0.5 < 2 % of 35 B/lup measured
    assert rf.derive_point(_dram_row(pred_y_overlap_bytes_per_lup=0.5), "y_layer") is None
    assert rf.derive_point(_dram_row(meas_dram_load_bytes_per_lup=math.nan), "y_layer") is None
    with pytest.raises(FitError):
        rf.derive_point(_dram_row(), "l3_load")


# ---------------------------------------------------------------------------- split


def test_split_is_deterministic_every_kth():
    rows = [{"i": i} for i in range(10)]
    fit, held = rf.split_rows(rows, 4)
    assert [r["i"] for r in held] == [3, 7]
    assert [r["i"] for r in fit] == [0, 1, 2, 4, 5, 6, 8, 9]
    with pytest.raises(FitError):
        rf.split_rows(rows, 1)


# ---------------------------------------------------------------------------- reevaluation


def test_reevaluate_by_hand():
    base = load_curves("nvidia-ampere")
    row = {"pred_l2_load_compulsory_bytes_per_lup": 20.0, "pred_l1_load_bytes_per_lup": 100.0,
           "pred_l1_oversubscription": 1.0, "pred_l2_load_bytes_per_lup": 40.0, "pred_l2_store_bytes_per_lup": 8.0,
           "pred_l2_oversubscription": 0.5, "pred_dram_load_compulsory_bytes_per_lup": 15.0,
           "pred_dram_store_compulsory_bytes_per_lup": 6.0, "pred_dram_store_bytes_per_lup": 6.0,
           "pred_z_overlap_bytes_per_lup": 10.0, "pred_z_oversubscription": 0.9,
           "pred_dram_load_bytes_per_lup": 25.0,
           "pred_fp_lups_per_s": math.inf, "pred_l1_lups_per_s": 1e12, "pred_l2_lups_per_s": 1e11,
           "pred_dram_lups_per_s": 1e10}
    out = rf.reevaluate(row, base)
    # the reference constants of fits/nvidia-ampere.toml, evaluated by hand
    m_l1 = 0.66 * math.exp(-6.77 * math.exp(-1.45 * 1.0))
    l2 = 20 + m_l1 * (100 - 20)
    assert out["pred_l2_load_bytes_per_lup"] == pytest.approx(l2, rel=1e-12)
    h_z = 1 - 1.0 * math.exp(-37.1 * math.exp(-3.2 * 0.9))
    m_l2 = 0.2 * math.exp(-7.56 * math.exp(-0.67 * 0.5))
    m_store = 0.38 * math.exp(-3.79 * math.exp(-0.55 * 0.5))
    # compulsory - z hits + capacity misses of (L2 load - compulsory) + partial-store reads of (8 - 6)
    dram = 15 - 10 * h_z + m_l2 * (l2 - 15) + m_store * (8 - 6)
    assert out["pred_dram_load_bytes_per_lup"] == pytest.approx(dram, rel=1e-12)
    # stores: the 6 B/lup compulsory plus the evicted partial sectors written back, m_store x 2
    store = 6 + m_store * (8 - 6)
    # the L2 and DRAM limits scale with the inverse volume (loads + stores)
    assert out["pred_lups_per_s"] == pytest.approx(min(1e12, 1e11 * 48 / (l2 + 8), 1e10 * 31 / (dram + store)),
                                                   rel=1e-12)


def test_reevaluate_reproduces_the_predictor_with_any_curves():
    """A row written from a real prediction, re-evaluated with changed curves, gives what the
    predictor gives with those curves (and its own values with the curves it was made with)."""
    from warpspeed.hardware.device import load_device
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.memory.capacity import GompertzCurve
    from warpspeed.predict import Predictor
    from warpspeed.validation.schema import prediction_record, predicted_columns

    kernel, device = star_stencil(3, 2, (96, 64, 64)), load_device("A100-SXM4-40GB")
    base = load_curves("nvidia-ampere")
    changed = dataclasses.replace(
        base, l1_load=GompertzCurve(0.9, 2.0, 1.0), y_layer=GompertzCurve(0.6, 1.5, 0.5),
        z_layer=GompertzCurve(0.7, 3.0, 1.5), l2_load=GompertzCurve(0.6, 2.0, 1.0),
        l2_store=GompertzCurve(0.5, 1.0, 1.0))
    for block in ((32, 4, 2), (64, 2, 8)):
        old = Predictor(kernel, device).predict(block)
        row = predicted_columns(prediction_record(old), 96 * 64 * 64)
        new = Predictor(kernel, device, curves=changed).predict(block)
        for curves, p in ((base, old), (changed, new)):
            out = rf.reevaluate(row, curves)
            assert out["pred_l2_load_bytes_per_lup"] == pytest.approx(p.l2_load_bytes_per_lup, rel=1e-12)
            assert out["pred_dram_load_bytes_per_lup"] == pytest.approx(p.dram.load_bytes_per_lup, rel=1e-12)
            assert out["pred_lups_per_s"] == pytest.approx(p.roofline.lups_per_s, rel=1e-12)
        assert new.dram.load_bytes_per_lup != pytest.approx(old.dram.load_bytes_per_lup, rel=1e-3)


def test_reevaluate_uses_the_occupancy_dependent_dram_bandwidth():
    """At low occupancy (a 128 x 32 x 16 grid keeps at most 65 536 threads resident, below the
    bytes in flight that saturate the A100's DRAM) the predictor's DRAM bandwidth depends on the
    DRAM volume. Re-evaluating a row written from a prediction with unchanged curves gives the
    predictor's performance exactly, and with changed curves the performance the predictor gives
    with those curves, whose bandwidth differs from the row's."""
    from warpspeed.hardware.device import load_device
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.memory.capacity import GompertzCurve
    from warpspeed.predict import Predictor
    from warpspeed.validation.schema import prediction_record, predicted_columns

    domain = (128, 32, 16)
    kernel, device = star_stencil(3, 2, domain), load_device("A100-SXM4-40GB")
    base = load_curves("nvidia-ampere")
    changed = dataclasses.replace(base, z_layer=GompertzCurve(0.9, 1.0, 0.5), y_layer=GompertzCurve(0.9, 1.0, 0.5),
                                  l2_load=GompertzCurve(0.9, 1.0, 0.5))
    for block in ((32, 4, 2), (64, 2, 8), (32, 32, 1)):
        old = Predictor(kernel, device).predict(block)
        new = Predictor(kernel, device, curves=changed).predict(block)
        assert old.limiter == new.limiter == "dram"
        assert old.dram_bandwidth.achievable_gb_s < 0.9 * device.dram_bandwidth_gb_s
        assert new.dram_bandwidth.achievable_gb_s != pytest.approx(old.dram_bandwidth.achievable_gb_s, rel=1e-4)
        row = {**predicted_columns(prediction_record(old), math.prod(domain)),
               **dict(zip(("fold_x", "fold_y", "fold_z"), (1, 1, 1)))}
        assert row["pred_dram_resident_threads"] == old.launch.wave.blocks * math.prod(block)
        for curves, p in ((base, old), (changed, new)):
            out = rf.reevaluate(row, curves, device)
            assert out["pred_dram_load_bytes_per_lup"] == pytest.approx(p.dram.load_bytes_per_lup, rel=1e-12)
            assert out["pred_lups_per_s"] == pytest.approx(p.roofline.lups_per_s, rel=1e-12)
        # without the device the bandwidth of the row is kept: the limit then misses the change
        flat = rf.reevaluate(row, changed)["pred_lups_per_s"]
        assert flat != pytest.approx(new.lups_per_s, rel=1e-4)


def test_refit_needs_the_device_of_rows_with_launch_columns():
    """Rows that carry the launch columns of the DRAM bandwidth are re-evaluated on the table's
    device; a device_model that names no device is a clear error, unless the device is given."""
    from warpspeed.hardware.device import load_device

    rows = [{**r, "pred_dram_resident_threads": 65536.0, "pred_registers": 32.0} for r in synthetic_rows()]
    table = MeasurementTable({"kernel": "synthetic", "device_model": "no-such-gpu"}, tuple(rows))
    with pytest.raises(FitError, match="no-such-gpu"):
        rf.refit(table, "nvidia-ampere")
    result = rf.refit(table, "nvidia-ampere", device=load_device("A100-SXM4-40GB"))
    assert result.held_out_rows == 10


def _mape(pairs):
    return 100.0 * sum(abs(p - m) / m for p, m in pairs) / len(pairs)


def test_refit_before_and_after_follow_the_curves_exactly():
    """Change the base curves: the held-out accuracy before the refit follows them, and after
    the refit follows the fitted ones, each evaluated by hand with the Gompertz formula."""
    from warpspeed.memory.capacity import GompertzCurve

    base_l1, base_z = (0.3, 2.0, 0.8), (0.5, 3.0, 1.0)
    base = dataclasses.replace(load_curves("nvidia-ampere"), l1_load=GompertzCurve(*base_l1),
                               z_layer=GompertzCurve(*base_z))
    rows = synthetic_rows()
    result = rf.refit(MeasurementTable({"kernel": "synthetic"}, tuple(rows)), "nvidia-ampere", base=base)
    held = [r for i, r in enumerate(rows) if i % 4 == 3]
    for label, report, l1, z in (("before", result.before, base_l1, base_z),
                                 ("after", result.after, result.curves.l1_load.parameters,
                                  result.curves.z_layer.parameters)):
        # L2 load: compulsory 16 + m_l1 * (48 - 16); DRAM load: compulsory 48 - overlap 8 * h_z (the
        # L2 load stays below 48, so no redundant L2 loads; stores 8 = compulsory, no partial reads)
        l2 = [(16 + miss(l1, r["pred_l1_oversubscription"]) * 32, r["meas_l2_load_bytes_per_lup"]) for r in held]
        dram = [(48 - 8 * (1 - miss(z, r["pred_z_oversubscription"])), r["meas_dram_load_bytes_per_lup"])
                for r in held]
        assert report.metric("l2_load").mape_percent == pytest.approx(_mape(l2), rel=1e-12), label
        assert report.metric("dram_load").mape_percent == pytest.approx(_mape(dram), rel=1e-12), label
    assert result.before.metric("dram_load").mape_percent > 1.0


# ---------------------------------------------------------------------------- recovery


def test_refit_recovers_known_parameters():
    table = MeasurementTable({"kernel": "synthetic", "device_model": "test"}, tuple(synthetic_rows()))
    result = rf.refit(table, "nvidia-ampere")
    assert set(result.fitted) == {"l1_load", "z_layer"}
    assert result.curves.l1_load.parameters == pytest.approx(TRUE_L1, rel=1e-3)
    assert result.curves.z_layer.parameters == pytest.approx(TRUE_Z, rel=1e-3)
    # curves without data keep the published parameters
    # (the y curve of the reference code as of 2022: exp(-0.078 exp(1.03 (o - 0.2))), hit form)
    assert result.curves.y_layer.parameters == pytest.approx((1.0, 0.078 * math.exp(-1.03 * 0.2), 1.03), rel=1e-12)
    assert result.curves.y_layer.form == "hit"
    assert "usable point" in result.skipped["y_layer"]
    assert (result.fit_rows, result.held_out_rows) == (30, 10)
    # held-out rows: the refitted curves reproduce the synthetic measurements
    for metric in ("l2_load", "dram_load"):
        assert result.after.metric(metric).n == 10
        assert result.after.metric(metric).mape_percent < 0.01
        assert result.before.metric(metric).mape_percent > 1.0


def test_refit_needs_rows():
    table = MeasurementTable({}, ({"block_x": 1, "block_y": 1, "block_z": 1, "error": "failed"},))
    with pytest.raises(FitError, match="no usable rows"):
        rf.refit(table, "nvidia-ampere")


def test_write_refit_round_trip(tmp_path):
    table = MeasurementTable({"kernel": "synthetic"}, tuple(synthetic_rows()))
    result = rf.refit(table, "nvidia-ampere")
    path = rf.write_refit(result, tmp_path / "refit.toml", source="synthetic.csv", device="Test GPU",
                          date="2025-01-01")
    loaded = load_curves("nvidia-ampere", path)
    assert loaded.l1_load == result.curves.l1_load
    assert loaded.z_layer == result.curves.z_layer
    assert loaded.l2_store.parameters == (0.38, 3.79, 0.55)
    assert loaded.provenance.source == "synthetic.csv"
    assert loaded.provenance.device == "Test GPU"
    assert loaded.provenance.date == "2025-01-01"
    assert len(loaded.points["z_layer"]) == 30
    assert loaded.points["y_layer"] == ()


# ---------------------------------------------------------------------------- CLI


def test_refit_cli(tmp_path):
    from warpspeed.cli.validate import COMMANDS, refit as refit_cmd

    assert [c.name for c in COMMANDS] == ["measure", "accuracy", "refit"]
    csv_path = write_measurement_csv(tmp_path / "syn.csv", {"kernel": "synthetic", "gpu_name": "Test GPU"},
                                     synthetic_rows())
    out = tmp_path / "fit.toml"
    result = CliRunner().invoke(refit_cmd, [str(csv_path), "--family", "nvidia-ampere", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["fitted"]["z_layer"]["a"] == pytest.approx(TRUE_Z[0], rel=1e-3)
    assert load_curves("nvidia-ampere", out).provenance.device == "Test GPU"
    table = CliRunner().invoke(refit_cmd, [str(csv_path), "--family", "nvidia-ampere", "--out", str(out)])
    assert table.exit_code == 0 and "refitted" in table.output


def test_refit_cli_unknown_family(tmp_path):
    from warpspeed.cli.validate import refit as refit_cmd

    csv_path = write_measurement_csv(tmp_path / "syn.csv", {"kernel": "s"}, synthetic_rows(8))
    result = CliRunner().invoke(refit_cmd, [str(csv_path), "--family", "nvidia-kepler", "--out", str(tmp_path / "x.toml")])
    assert isinstance(result.exception, WarpspeedError)


# ---------------------------------------------------------------------------- nothing to fit, the README's example


def test_refit_with_nothing_to_fit_exits_non_zero_and_writes_nothing(tmp_path):
    # a campaign timed without ncu: rates but no measured volumes (as fits/data/H200/*.measure.csv)
    rows = [{k: v for k, v in r.items() if not k.startswith("meas_") or k == "meas_lups_per_s"}
            for r in synthetic_rows(12)]
    csv_path = write_measurement_csv(tmp_path / "timing.csv", {"kernel": "synthetic"}, rows)
    out = tmp_path / "fit.toml"
    result = CliRunner().invoke(main, ["refit", str(csv_path), "--family", "nvidia-ampere", "--out", str(out)])
    assert result.exit_code == 2 and "nothing to fit" in result.output
    assert not out.exists()


def test_readme_refit_example_fits_and_changes_the_file(tmp_path):
    # examples/refit-example.csv follows l1_load (0.6, 6.0, 1.3) and z_layer (0.95, 20.0, 2.5), as its header
    # says; the shipped Ampere curves are (0.66, 6.77, 1.45) and (1.0, 37.1, 3.2)
    out = tmp_path / "ampere.toml"
    result = CliRunner().invoke(main, ["refit", str(ROOT / "examples" / "refit-example.csv"), "--family",
                                       "nvidia-ampere", "--out", str(out)])
    assert result.exit_code == 0, result.output
    refitted, shipped = load_curves("nvidia-ampere", out), load_curves("nvidia-ampere")
    assert refitted.l1_load.parameters == pytest.approx((0.6, 6.0, 1.3), rel=1e-3)
    assert refitted.z_layer.parameters == pytest.approx((0.95, 20.0, 2.5), rel=1e-3)
    assert refitted.z_layer.parameters != shipped.z_layer.parameters
