"""Records derived from dataclass fields: JSON keys, CSV columns and cell types of results."""

from __future__ import annotations

import math
from dataclasses import dataclass

from warpspeed.files.records import csv_columns, csv_record, csv_types, json_record, recorded
from warpspeed.launch.space import CONFIG_COLUMNS, Config
from warpspeed.rank import RANK_COLUMNS, RankRow


@dataclass(frozen=True)
class _Inner:
    a: int
    b: float = recorded(key="bee")


@dataclass(frozen=True)
class _Outer:
    where: _Inner = recorded(flatten=True, identity=True)
    xyz: tuple[int, int, int] = recorded(axes=("x", "y", "z"), identity=True)
    rates: dict[str, float] = recorded(names=("p", "q"), pattern="{}_rate")
    note: str = recorded(default="", csv=False, json_if=lambda r: r.note != "")
    error: str | None = recorded(default=None, failure=True)


def test_json_and_csv_follow_the_fields():
    ok = _Outer(_Inner(1, 2.5), (4, 5, 6), {"p": 1.0})
    assert json_record(ok) == {"a": 1, "bee": 2.5, "xyz": [4, 5, 6], "rates": {"p": 1.0}, "error": None}
    assert json_record(_Outer(_Inner(1, 2.5), (4, 5, 6), {}, note="n"))["note"] == "n"
    assert csv_columns(_Outer) == ("a", "bee", "xyz_x", "xyz_y", "xyz_z", "p_rate", "q_rate", "error")
    assert csv_record(ok) == {"a": 1, "bee": 2.5, "xyz_x": 4, "xyz_y": 5, "xyz_z": 6, "p_rate": 1.0,
                              "q_rate": None, "error": None}
    failed = csv_record(_Outer(_Inner(1, 2.5), (4, 5, 6), {"p": 1.0}, error="boom"))
    assert failed == {"a": 1, "bee": 2.5, "xyz_x": 4, "xyz_y": 5, "xyz_z": 6, "p_rate": "", "q_rate": "",
                      "error": "boom"}
    assert csv_types(_Outer) == {"a": int, "bee": float, "xyz_x": int, "xyz_y": int, "xyz_z": int,
                                 "p_rate": float, "q_rate": float, "error": str}


@dataclass(frozen=True)
class _Converted:
    seconds: float = recorded(key="milliseconds", value=lambda s: s * 1000)
    total: float = recorded(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", 2 * self.seconds)


def test_a_json_value_may_change_unit_and_a_field_be_filled_in_when_made():
    """0.25 s is 250 ms; a field filled in by the record itself (not an argument) is recorded too."""
    assert json_record(_Converted(0.25)) == {"milliseconds": 250.0, "total": 0.5}
    assert csv_record(_Converted(0.25)) == {"milliseconds": 0.25, "total": 0.5}  # the value is JSON only


def test_rank_row_record_is_the_documented_file_format():
    """The ranking CSV header and JSON keys as docs/README describe them (written out here)."""
    assert CONFIG_COLUMNS == ("block_x", "block_y", "block_z", "fold_x", "fold_y", "fold_z")
    assert RANK_COLUMNS == (
        *CONFIG_COLUMNS, "lups_per_s", "limiter", "fp_lups_per_s", "l1_lups_per_s", "l2_lups_per_s",
        "dram_lups_per_s", "l1_cycles_per_lup", "l2_load_bytes_per_lup", "l2_store_bytes_per_lup",
        "dram_load_bytes_per_lup", "dram_store_bytes_per_lup", "blocks_per_sm", "occupancy_limiter", "registers",
        "error")
    row = RankRow(Config((32, 4, 2)), 1e9, "dram", {"fp": 4e9, "l1": 3e9, "l2": 2e9, "dram": 1e9}, 1.0, 2.0, 3.0,
                  4.0, 5.0, 2, "warps", 64, model="roofline")
    # the roofline's row is any model's: its model and explanation are in the JSON object too
    assert list(json_record(row)) == ["block", "fold", "lups_per_s", "limiter", "limiters", "l1_cycles_per_lup",
                                      "l2_load_bytes_per_lup", "l2_store_bytes_per_lup", "dram_load_bytes_per_lup",
                                      "dram_store_bytes_per_lup", "blocks_per_sm", "occupancy_limiter", "registers",
                                      "error", "model", "explanation"]
    by_model = json_record(RankRow(**{**row.__dict__, "model": "overlap", "explanation": "dram",
                                      "watts": 300.0, "lups_per_joule": 1e7}))
    assert list(by_model)[-4:] == ["model", "explanation", "watts", "lups_per_joule"]
    failed = csv_record(RankRow.failed(Config((2048, 1, 1)), "too\nmany"))
    assert failed["error"] == "too many" and failed["block_x"] == 2048 and failed["blocks_per_sm"] == ""
    assert math.isnan(RankRow.failed(Config((1, 1, 1)), "x").lups_per_s)
