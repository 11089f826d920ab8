"""A name is a name, a path is a path: a device argument is a path only when it holds a path
separator or ends in ``.toml``; a file of a device's name in the working directory changes
nothing. Also the device file's own checks of this round: ``latencies_from`` names a built-in
device, an NVIDIA warp has 32 threads, and keys outside the file's tables are refused.
"""

from __future__ import annotations

import re
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from click.testing import CliRunner

from warpspeed.errors import DeviceError, WarpspeedError
from warpspeed.files.names import looks_like_path
from warpspeed.hardware.device import device_text, load_device, load_device_file


def _text(name: str) -> str:
    return (resources.files("warpspeed.hardware.devices") / f"{name}.toml").read_text()


@pytest.mark.parametrize("text, is_path", [
    ("H200", False), ("V100", False), ("volta", False), ("A100-SXM4-40GB", False), ("my.gpu", False),
    ("./H200", True), ("gpus/mine", True), ("mine.toml", True), ("MINE.TOML", True), ("/abs/x", True),
])
def test_a_path_is_told_from_a_name_by_its_look(text, is_path):
    assert looks_like_path(text) is is_path


def test_a_file_named_like_a_device_does_not_shadow_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "H200").write_text("not a device file\n")
    (tmp_path / "V100").write_text(_text("A100-SXM4-40GB"))  # a valid device file, but named V100
    assert load_device("H200").name == "H200"
    assert load_device("V100").name == "V100-PCIe-32GB"
    assert device_text("V100") == _text("V100-PCIe-32GB")
    assert load_device("./V100").name == "A100-SXM4-40GB"  # with a separator it is a path
    result = CliRunner().invoke(__import__("warpspeed.cli.main", fromlist=["main"]).main,
                                ["predict", "--kernel", "copy", "--domain", "64,64,64", "--block", "32,8,1",
                                 "--device", "V100"])
    assert result.exit_code == 0 and "V100-PCIe-32GB" in result.output, result.output


@pytest.mark.parametrize("bad", [None, 3, 2.5, ["H200"]])
def test_a_device_argument_of_another_type_is_a_type_error(bad):
    with pytest.raises(TypeError, match="device must be a device name or a device-file path"):
        load_device(bad)


def _with(tmp_path, replace: tuple[str, str] | None = None, prepend: str = "", append: str = "",
          base: str = "A100-SXM4-40GB"):
    text = _text(base)
    if replace:
        assert re.search(replace[0], text, flags=re.M), replace[0]
        text = re.sub(replace[0], replace[1], text, count=1, flags=re.M)
    path = tmp_path / "user.toml"
    path.write_text(prepend + text + append)
    return path


def test_latencies_from_never_loads_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lat.toml").write_text(_text("H100-PCIe-80GB"))
    path = _with(tmp_path, (r"^latencies_from = .*$", 'latencies_from = "lat.toml"'), base="H200")
    with pytest.raises(DeviceError, match="latencies_from names a built-in device, not a file"):
        load_device_file(path)
    path = _with(tmp_path, (r"^latencies_from = .*$", 'latencies_from = "nosuchgpu"'), base="H200")
    with pytest.raises(DeviceError, match="latencies_from: unknown device 'nosuchgpu'"):
        load_device_file(path)


def test_an_nvidia_warp_has_32_threads(tmp_path):
    path = _with(tmp_path, (r"^warp_size = 32", "warp_size = 64"))
    with pytest.raises(DeviceError, match=r"warp_size is out of range \(got 64\); allowed: 32 on an NVIDIA GPU"):
        load_device_file(path)


def test_a_key_before_the_device_table_is_refused(tmp_path):
    with pytest.raises(DeviceError, match="sms stand outside any table"):
        load_device_file(_with(tmp_path, prepend="sms = 5\n"))


def test_a_model_table_given_as_a_value_is_refused(tmp_path):
    with pytest.raises(DeviceError, match=r"overlap must be a table \(\[overlap\] with its keys\), not a value"):
        load_device_file(_with(tmp_path, prepend="overlap = 3\n"))


def test_a_study_listing_one_device_under_several_names_is_refused(tmp_path):
    from warpspeed.studies.spec import StudySpec
    from warpspeed.studies.study import run_study

    spec = StudySpec(kernels=("copy",), devices=("V100", "V100-PCIe-32GB", "volta"), domains=((64, 64, 64),),
                     threads=(32,), output=tmp_path / "s.csv")
    with pytest.raises(WarpspeedError, match="devices 'V100' and 'V100-PCIe-32GB' name one device"):
        run_study(spec)
    assert not (tmp_path / "s.csv").exists()


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_a_derived_device_name_is_always_a_name(text):
    from warpspeed.calibration.calibrate import as_name
    from warpspeed.files.names import is_name

    name = as_name(text)
    assert name == "" or is_name(name)
    if is_name(text) and not text.endswith(("-", ".", "_")):
        assert name == text  # a name stays as it is
