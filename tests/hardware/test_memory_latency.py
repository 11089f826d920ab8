"""One latency record per device, resolved once: the device's own pointer chase, else the part its
``latencies_from`` names (at this device's clock), else its architecture's latency file; and the
L2's layer capacity as a key of its ``[[memory]]`` table. Expected numbers are read from the TOML
files with ``tomllib`` and combined by hand."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from warpspeed.errors import DeviceError
from warpspeed.hardware.device import load_device, load_device_file
from warpspeed.hardware.memory_latency import architecture_latencies
from tests.paths import ROOT

HARDWARE = ROOT / "warpspeed" / "hardware"


def _toml(path: Path) -> dict:
    return tomllib.loads(path.read_text())


def _level(table: dict, scope: str) -> dict:
    return next(level for level in table["memory"] if level["scope"] == scope)


def test_own_pointer_chase_at_the_clock():
    """H100 PCIe: 19.5, 151.3 and 374.5 ns at its clock, as cycles and increments."""
    t = _toml(HARDWARE / "devices" / "H100-PCIe-80GB.toml")
    f = t["device"]["clock_ghz"]
    l1, l2, dram = _level(t, "cu")["latency_ns"], _level(t, "device")["latency_ns"], t["device"]["dram_latency_ns"]
    lat = load_device("H100-PCIe-80GB").latencies
    assert (lat.l1, lat.l2, lat.dram) == pytest.approx((l1 * f, (l2 - l1) * f, (dram - l2) * f))
    assert lat.dram_total == pytest.approx(dram * f)


def test_a_named_part_at_this_clock():
    """The H200 has no pointer chase of its own: the H100 PCIe's nanoseconds at the H200's clock."""
    donor = _toml(HARDWARE / "devices" / "H100-PCIe-80GB.toml")
    h200 = _toml(HARDWARE / "devices" / "H200.toml")
    assert h200["device"]["latencies_from"] == "H100-PCIe-80GB" and "latencies_from" not in h200.get("interval", {})
    lat = load_device("H200").latencies
    assert lat.dram_total == pytest.approx(donor["device"]["dram_latency_ns"] * h200["device"]["clock_ghz"])
    assert "H100-PCIe-80GB" in lat.source


def test_the_architecture_file_last():
    """The A100 files give no latency: the Ampere file's cycles (AMALI, ISCA 2025, Table 2: 37, 224, 290)."""
    lat = load_device("A100-SXM4-40GB").latencies
    assert (lat.l1, lat.l2, lat.dram) == (37, 224, 290) and "ampere" in lat.source
    # the Volta file is based on the Ampere one and keeps its memory table (the fallback of a Volta device
    # without a pointer chase: the built-in V100 has its own, gpu-benches gpu-latency/v100.txt)
    volta = architecture_latencies("volta")
    assert (volta.l1, volta.l2, volta.dram) == (37, 224, 290)
    assert "pointer chase" in load_device("V100").latencies.source


def test_every_model_reads_the_same_record():
    """The interval model, the pipeline model and the overlap model's wave-end latency read one record."""
    from warpspeed.interval.params import interval_params
    from warpspeed.overlap.params import overlap_params

    h200 = load_device("H200")
    lat = h200.latencies
    p = interval_params(h200)
    assert (p.l1_latency, p.l2_latency, p.dram_latency) == (lat.l1, lat.l2, lat.dram)
    assert overlap_params(h200).drain_cycles == lat.dram_total


def test_a_donor_without_latencies_is_a_one_line_error(tmp_path):
    text = (HARDWARE / "devices" / "A100-SXM4-40GB.toml").read_text()
    text = text.replace("[device]\n", '[device]\nlatencies_from = "A40"\n', 1)
    path = tmp_path / "d.toml"
    path.write_text(text)
    with pytest.raises(DeviceError, match="latencies_from names 'A40', which has no pointer-chase latencies") as err:
        load_device_file(path).latencies
    assert "\n" not in str(err.value)


def test_a_donor_that_is_not_a_name_is_refused_at_load(tmp_path):
    text = (HARDWARE / "devices" / "V100-PCIe-32GB.toml").read_text()
    path = tmp_path / "d.toml"
    path.write_text(text.replace("[device]\n", '[device]\nlatencies_from = "../x"\n', 1))
    with pytest.raises(DeviceError, match="latencies_from is not a name"):
        load_device_file(path)


def test_layer_capacity_of_the_l2():
    """The H200's L2 gives layer_bytes (35.5 MiB); a level without it uses its effective capacity."""
    h200_l2 = _level(_toml(HARDWARE / "devices" / "H200.toml"), "device")
    assert load_device("H200").l2.layer_capacity == h200_l2["layer_bytes"] == 35.5 * 2**20
    a100_l2 = _level(_toml(HARDWARE / "devices" / "A100-SXM4-40GB.toml"), "device")
    assert load_device("A100-SXM4-40GB").l2.layer_capacity == a100_l2["effective_bytes"]


def test_layer_capacity_out_of_range(tmp_path):
    text = (HARDWARE / "devices" / "H200.toml").read_text().replace("layer_bytes = 37224448", "layer_bytes = 64")
    path = tmp_path / "d.toml"
    path.write_text(text)
    with pytest.raises(DeviceError, match="layer_bytes is out of range"):
        load_device_file(path)
