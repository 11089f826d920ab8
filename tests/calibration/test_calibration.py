"""Which part each device's fitted constants come from, and the one line predict and rank print.

The expected parts are read here from the stored data and the files' own source notes (which
gpu-strides measurements exist, the provenance of each capacity-curve file, the rule named in a
device file's DRAM comment), not from the module under test."""

import json
import re
import tomllib
from importlib import resources

import pytest
from click.testing import CliRunner

from warpspeed.calibration import calibration
from warpspeed.cli.main import main
from warpspeed.hardware.device import load_device
from tests.paths import ROOT

DEVICES = sorted(p.name[:-5] for p in resources.files("warpspeed.hardware.devices").iterdir()
                 if p.name.endswith(".toml"))


def _component(cal, what):
    return next(c for c in cal.components if c.what.startswith(what))


def _device_text(name: str) -> str:
    return (resources.files("warpspeed.hardware.devices") / f"{name}.toml").read_text()


def test_strided_l1_data_exist_only_for_the_parts_named_as_sources():
    # gpu-strides holds an A100 (a100.csv), an RX 6900 XT (rdna2.csv) and the MI210's float and
    # double rows (mi210-float.csv, mi210-double.csv): every NVIDIA tag stage is fitted on the first,
    # every AMD one with a tag stage on the second, the banked CDNA vector L1 on the MI210's float
    # rows (its double rows fit nothing: they check the wide-element rule).
    stored = sorted(p.name for p in (ROOT / "fits/data/public/gpu-strides").glob("*.csv"))
    assert stored == ["a100.csv", "mi210-double.csv", "mi210-float.csv", "rdna2.csv"]
    for name in DEVICES:
        dev = load_device(name)
        c = _component(calibration(dev), "L1")
        if dev.vendor == "nvidia":
            assert c.source == "A100-SXM4-40GB" and c.own == (name == "A100-SXM4-40GB")
        elif dev.l1.tag_wavefronts_per_line is not None:
            assert c.source == "RX6900XT" and c.own == (name == "RX6900XT")
        else:  # CDNA's banked vector L1: measured on the MI210's float rows, borrowed by MI100 and MI300X
            assert dev.l1.family == "cdna-vl1d-banked"
            assert c.source == "MI210" and c.own == (name == "MI210") and not c.documented


@pytest.mark.parametrize("name", DEVICES)
def test_capacity_curves_name_the_device_of_their_file(name):
    dev = load_device(name)
    c = _component(calibration(dev), "capacity curves")
    data = tomllib.loads((ROOT / "fits" / f"{c.family}.toml").read_text())
    assert data["family"] == c.family
    assert c.source == data["provenance"]["device"]
    assert c.own == (data["provenance"]["device"] == name)


def test_unmeasured_device_borrows_its_dram_from_the_part_its_file_names():
    # H100-SXM5-80GB.toml: "estimate by rule: vendor peak 3350 GB/s x H100-PCIe-80GB sustained/peak"
    line = next(l for l in _device_text("H100-SXM5-80GB").splitlines() if l.startswith("dram_bandwidth_gb_s"))
    ref = re.search(r"x (\S+) sustained/peak", line).group(1)
    cal = calibration(load_device("H100-SXM5-80GB"))
    mem = _component(cal, "DRAM")
    assert (mem.source, mem.own) == (ref, False)
    assert "no measurements of its own" in cal.line()


def test_launch_cost_comes_from_the_part_the_fit_file_names():
    fit = tomllib.loads((ROOT / "fits/kernel-launch.toml").read_text())
    for name in DEVICES:
        dev = load_device(name)
        part = tomllib.loads(_device_text(name))["device"].get("launch_overhead_part")
        if part is None:
            assert all(c.what != "launch cost" for c in calibration(dev).components)
            continue
        c = _component(calibration(dev), "launch cost")
        assert c.source == fit["parts"][part]["device"]
        assert c.own == (fit["parts"][part]["device"] == name)


def test_a_device_file_outside_the_catalog_says_its_figures_are_unchecked(tmp_path):
    text = _device_text("A100-SXM4-40GB").replace('name = "A100-SXM4-40GB"', 'name = "my-a100"')
    path = tmp_path / "my-a100.toml"
    path.write_text(text)
    cal = calibration(load_device(str(path)))
    mem = _component(cal, "DRAM")
    assert not mem.own and "not checked" in mem.family
    assert "my-a100 borrows DRAM and L2 figures from the device file" in cal.line()


def test_an_unknown_power_family_is_named_not_raised(tmp_path):
    # rank does not use the power model by default: the line must not fail where it would not
    head, power, tail = _device_text("A100-SXM4-40GB").partition("\n[power]")
    text = head + power + tail.replace('family = "ampere-ga100"', 'family = "no-such-family"', 1)
    path = tmp_path / "a100-other-power.toml"
    path.write_text(text)
    power = _component(calibration(load_device(str(path))), "power")
    assert (power.source, power.own) == ("an unknown family", False) and "no-such-family" in power.family


def test_predict_and_rank_print_the_line_and_json_carries_it():
    runner = CliRunner()
    out = runner.invoke(main, ["predict", "--kernel", "star3d-r1", "--domain", "64,64,64", "--device", "H200"])
    assert out.exit_code == 0, out.output
    line = next(l for l in out.output.splitlines() if l.startswith("calibration:"))
    assert "H200 borrows L1 tag stage from A100-SXM4-40GB" in line
    out = runner.invoke(main, ["rank", "--kernel", "star2d-r1", "--domain", "256,256", "--device", "W6800",
                               "--top", "2", "--jobs", "1", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    mem = next(c for c in doc["calibration"]["components"] if c["what"].startswith("DRAM"))
    assert mem["source"] == "RX6900XT" and mem["own"] is False
