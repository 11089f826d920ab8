"""One row schema and one CSV writer for ranking, study and measurement tables; one JSON-safe helper."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main
from warpspeed.errors import WarpspeedError
from warpspeed.files.jsonsafe import json_safe
from warpspeed.files.records import csv_record
from warpspeed.files.rows import cell, write_rows
from warpspeed.launch.space import Config
from warpspeed.rank import RANK_COLUMNS, RankRow
from warpspeed.studies.storage import COLUMNS as STUDY_COLUMNS
from warpspeed.validation.schema import CSV_COLUMNS as MEASUREMENT_COLUMNS


def test_rank_study_and_measurement_share_the_configuration_columns(tmp_path):
    out = tmp_path / "rank.csv"
    result = CliRunner().invoke(main, ["rank", "--kernel", "copy", "--domain", "32,32,32", "--threads", "32",
                                       "--jobs", "1", "--csv", str(out)])
    assert result.exit_code == 0, result.output
    with out.open(newline="") as fh:
        header, *rows = list(csv.reader(fh))
    assert header == ["rank", *RANK_COLUMNS]
    assert STUDY_COLUMNS[-len(RANK_COLUMNS):] == RANK_COLUMNS
    block_fold = ["block_x", "block_y", "block_z", "fold_x", "fold_y", "fold_z"]
    assert list(MEASUREMENT_COLUMNS[1:7]) == block_fold == list(RANK_COLUMNS[:6])
    # 32 threads: (2^a, 2^b, 2^c) with a + b + c = 5: C(7, 2) = 21 blocks, times 3 foldings.
    assert [int(r[0]) for r in rows] == list(range(1, 21 * 3 + 1))
    assert all(r[header.index("fp_lups_per_s")] == "inf" for r in rows)  # copy does no arithmetic


def test_cells():
    assert cell(0.1) == "0.1" and float(cell(1 / 3)) == 1 / 3  # exact round trip
    assert (cell(math.inf), cell(-math.inf), cell(math.nan), cell(None), cell(7)) == ("inf", "-inf", "", "", "7")


def test_failed_row_has_empty_numbers():
    bad = RankRow(Config((2048, 1, 1)), math.nan, "", {}, *[math.nan] * 5, 0, "", 0, error="too\nmany")
    record = csv_record(bad)
    assert record["error"] == "too many" and record["block_x"] == 2048
    assert all(record[c] == "" for c in RANK_COLUMNS if c not in ("error",) and not c.startswith(("block", "fold")))


def test_writer_comments_and_unknown_columns():
    buf = io.StringIO()
    write_rows(buf, ("a", "b"), [{"a": 1.5, "b": math.nan}], comments=["format 1", "k: v"])
    assert buf.getvalue() == "# format 1\n# k: v\na,b\n1.5,\n"
    with pytest.raises(WarpspeedError, match="unknown column"):
        write_rows(io.StringIO(), ("a",), [{"c": 1}])


def test_json_safe():
    value = {"x": [1.0, math.inf, (math.nan, 2)], "y": {"z": -math.inf}, "s": "inf"}
    assert json_safe(value) == {"x": [1.0, None, [None, 2]], "y": {"z": None}, "s": "inf"}
    json.dumps(json_safe(value), allow_nan=False)
