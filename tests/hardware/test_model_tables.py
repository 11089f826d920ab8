"""The models' device-file tables: each declared beside its model (``warpspeed/<package>/device_table.toml``),
found and checked by the device loader without importing the models, and read by the model
with exactly the keys it declares."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import pytest

from tests.paths import ROOT
from warpspeed.errors import DeviceError
from warpspeed.hardware.model_tables import SCHEMA_FILE, _schema, table_schemas


def test_each_table_is_declared_in_the_package_of_its_model():
    assert set(table_schemas()) == {"calibration", "interval", "overlap", "power"}
    for name in table_schemas():
        assert (ROOT / "warpspeed" / name / SCHEMA_FILE).is_file()
    assert not (ROOT / "warpspeed" / "hardware" / SCHEMA_FILE).exists()


def test_loading_a_device_checks_the_tables_without_importing_a_model():
    code = ("import sys; from warpspeed.hardware.device import all_devices; all_devices(); "
            "print(sorted(m for m in sys.modules if m.split('.')[1:2] in "
            "(['overlap'], ['interval'], ['power'], ['calibration'])))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_the_overlap_table_declares_only_constants_of_the_overlap_model():
    from warpspeed.overlap.params import OverlapParams

    assert set(table_schemas()["overlap"]) <= {f.name for f in fields(OverlapParams)}


def test_the_interval_table_declares_what_the_interval_model_reads():
    from warpspeed.interval.params import FACT_KEYS, REQUIRED_KEYS, TENSOR_PREFIX

    keys = set(table_schemas()["interval"])
    assert set(REQUIRED_KEYS) | set(FACT_KEYS) | {"tensor_cores_per_sm"} <= keys
    assert all(k.startswith(TENSOR_PREFIX) for k in keys - set(REQUIRED_KEYS) - set(FACT_KEYS) - {"tensor_cores_per_sm"})


@pytest.mark.parametrize("document", [
    {"keys": {"a": {"kind": "float"}}},
    {"keys": {"a": {"kind": "number", "lowest": 1}}},
    {"keys": {"a": 3}},
    {"table": {}},
])
def test_a_malformed_schema_is_a_one_line_error(document):
    with pytest.raises(DeviceError, match="x/device_table.toml") as info:
        _schema("x", document)
    assert "\n" not in str(info.value)
