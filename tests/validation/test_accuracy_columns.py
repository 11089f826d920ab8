"""The column reader and the column report against the row reader and the row report (the
reference implementations): the same rows, the same report, the same first-row errors."""

from __future__ import annotations

import csv
import math

import pytest

from warpspeed.hardware.device import load_device
from warpspeed.validation import accuracy as acc
from warpspeed.validation.measurement_csv import _read_rows, _split, read_measurement_columns
from warpspeed.validation.plan import MeasurementError
from tests.paths import DATA


def _rows_reference(path):
    metadata, body = _split(path.read_text(), repr(str(path)))
    return _read_rows(path, metadata, body)


def _variant(tmp_path, name, edit):
    """measured_small.csv with ``edit(header, rows)`` applied to its data rows."""
    lines = (DATA / "measured_small.csv").read_text().splitlines()
    comments = [ln for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if ln and not ln.startswith("#")]
    header, rows = body[0].split(","), [next(csv.reader([ln])) for ln in body[1:]]
    edit(header, rows)
    path = tmp_path / f"{name}.csv"
    path.write_text("\n".join(comments + [",".join(header)] + [",".join(r) for r in rows]) + "\n")
    return path


def _set(column, value, row=2):
    def edit(header, rows):
        rows[row][header.index(column)] = value
    return edit


def _nothing(header, rows):
    pass


def _ties(header, rows):  # every configuration measured and predicted at one rate: ties broken by label
    for r in rows:
        r[header.index("meas_lups_per_s")] = "1e10"
        r[header.index("pred_lups_per_s")] = "2e10"


@pytest.mark.parametrize("name, edit", [
    ("plain", _nothing), ("ties", _ties), ("empty_cell", _set("meas_l2_load_bytes_per_lup", "")),
    ("padded", _set("meas_l2_load_bytes_per_lup", " 3.5 ")), ("error_row", _set("error", "launch failed")),
    ("folded", _set("fold_y", "2", 0)),
])
def test_columns_give_the_rows_and_the_report_of_the_row_reader(tmp_path, name, edit):
    path = _variant(tmp_path, name, edit)
    table = _rows_reference(path)
    columns = read_measurement_columns(path)
    assert columns.table().rows == table.rows or all(
        a.keys() == b.keys() and all(x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
                                     for x, y in zip(a.values(), b.values()))
        for a, b in zip(columns.table().rows, table.rows))
    device = load_device("A100-SXM4-40GB")
    by_rows = acc.accuracy_report([r for r in table.rows], table.kernel, table.device, 3, device)
    by_columns = acc.columns_accuracy(columns, 3, device)
    assert by_columns.to_dict() == by_rows.to_dict()


@pytest.mark.parametrize("edit", [
    _set("meas_lups_per_s", "nan"), _set("meas_lups_per_s", "0"), _set("meas_dram_load_bytes_per_lup", "-1"),
    _set("block_x", "0"), _set("fold_x", "1.5"), _set("meas_l2_load_bytes_per_lup", "abc"),
    _set("meas_lups_per_s", "1e20"),
])
def test_a_bad_cell_gives_the_row_readers_error(tmp_path, edit):
    path = _variant(tmp_path, "bad", edit)
    with pytest.raises(MeasurementError) as reference:
        _rows_reference(path)
    with pytest.raises(MeasurementError) as by_columns:
        read_measurement_columns(path)
    assert str(by_columns.value) == str(reference.value)
    assert "data row 4" in str(by_columns.value)


def test_duplicates_are_named_as_by_the_row_report(tmp_path):
    path = _variant(tmp_path, "dup", lambda header, rows: rows.append(list(rows[1])))
    with pytest.raises(acc.AccuracyError, match="duplicate configuration") as reference:
        acc.ranking_quality(_rows_reference(path).rows)
    with pytest.raises(acc.AccuracyError) as by_columns:
        acc.columns_accuracy(read_measurement_columns(path))
    assert str(by_columns.value) == str(reference.value)
