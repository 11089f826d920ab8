"""``warpspeed calibrate --fit-only`` refuses tables it cannot fit well, names every number it
takes from ``--base``, takes ``--base`` as ``--device`` takes a device, and checks the device name
before fitting.

The tables are the public gpu-benches tables the project stores (fits/data/public/; D. Ernst,
https://github.com/te42kyfo/gpu-benches), damaged by hand: the expected answers follow from the
damage (a row count, a repeated row, two GPUs' part lines), not from the code.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main
from tests.paths import ROOT

PUBLIC = ROOT / "fits" / "data" / "public"


def _folder(tmp_path: Path, tables: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "gpu.calibration"
    folder.mkdir()
    for table, part in (tables or {"gpu-stream": "h200", "gpu-l2-cache": "h200"}).items():
        shutil.copy(PUBLIC / table / f"{part}.csv", folder / f"{table}.csv")
    return folder


def _lines(path: Path) -> tuple[list[str], list[str]]:
    lines = path.read_text().splitlines()
    head = [ln for ln in lines if ln.startswith("#")]
    return head, [ln for ln in lines if not ln.startswith("#")]


def _calibrate(tmp_path: Path, folder: Path, *extra: str, out: str = "gpu.toml"):
    return CliRunner().invoke(main, ["calibrate", "--fit-only", "--tables", str(folder), "--out",
                                     str(tmp_path / out), *extra])


def _one_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def test_a_stream_table_cut_to_one_row_is_refused(tmp_path):
    folder = _folder(tmp_path)
    head, body = _lines(folder / "gpu-stream.csv")
    (folder / "gpu-stream.csv").write_text("\n".join(head + body[:2]) + "\n")  # columns + one row
    _one_error(_calibrate(tmp_path, folder), "gpu-stream.csv", "1 row", "at least 6")
    assert not (tmp_path / "gpu.toml").exists()


def test_thirty_copies_of_one_row_are_refused(tmp_path):
    folder = _folder(tmp_path)
    head, body = _lines(folder / "gpu-stream.csv")
    (folder / "gpu-stream.csv").write_text("\n".join(head + body[:1] + body[5:6] * 30) + "\n")
    _one_error(_calibrate(tmp_path, folder), "gpu-stream.csv", "repeats")


@pytest.mark.parametrize("cell", ["nan", "inf", "0", "-5"])
def test_a_non_finite_or_non_positive_measurement_is_refused(tmp_path, cell):
    folder = _folder(tmp_path)
    head, body = _lines(folder / "gpu-l2-cache.csv")
    row = body[10].split(",")
    row[1] = cell
    body[10] = ",".join(row)
    (folder / "gpu-l2-cache.csv").write_text("\n".join(head + body) + "\n")
    _one_error(_calibrate(tmp_path, folder), "gpu-l2-cache.csv", "bandwidth_gb_s", "finite numbers above zero")


def test_another_gpus_table_in_the_folder_is_refused(tmp_path):
    folder = _folder(tmp_path, {"gpu-stream": "h200", "gpu-l2-cache": "l40"})
    _one_error(_calibrate(tmp_path, folder), "different GPUs", "NVIDIA H200", "NVIDIA L40")


def test_nvidia_tables_on_an_amd_base_are_refused(tmp_path):
    _one_error(_calibrate(tmp_path, _folder(tmp_path), "--base", "MI210"), "NVIDIA", "MI210", "vendor")


@pytest.mark.parametrize("base, expected", [("volta", "V100-PCIe-32GB"), ("V100", "V100-PCIe-32GB"),
                                            ("hopper", None)])
def test_base_takes_families_and_prefixes_as_device_does(tmp_path, base, expected):
    from warpspeed.hardware.device import load_device

    result = _calibrate(tmp_path, _folder(tmp_path, {"gpu-stream": "v100", "gpu-cache": "v100"}), "--base", base)
    if expected is None:  # ambiguous for --device: the same answer for --base
        direct = None
        try:
            load_device(base)
        except Exception as exc:  # noqa: BLE001 - the device lookup's own message
            direct = str(exc)
        _one_error(result, direct.split(";")[0])
        return
    assert result.exit_code == 0, result.output
    assert f"[calibration]\nbase = \"{expected}\"" in (tmp_path / "gpu.toml").read_text()


def test_a_query_value_that_is_no_number_is_named_as_taken_from_the_base(tmp_path):
    folder = _folder(tmp_path)
    (folder / "device-query.csv").write_text(
        "# source: typed by hand for this test\n# part: NVIDIA H200\n# units: bytes, MHz, threads, registers, W\n"
        "sms,clock_max_mhz,l2_bytes,shared_bytes_per_sm,shared_bytes_per_block,registers_per_sm,"
        "max_threads_per_sm,max_threads_per_block,max_blocks_per_sm,warp_size,power_limit_w\n"
        "nan,1980,52428800,0,232448,-65536,2048,1024,32,32,700\n")
    result = _calibrate(tmp_path, folder, "--base", "H200")
    assert result.exit_code == 0, result.output
    for column, value in (("sms", "nan"), ("shared_bytes_per_sm", "0"), ("registers_per_sm", "-65536")):
        assert f"  from H200: {column} (device-query.csv gives {value}, not a number above zero)" in result.output
    text = (tmp_path / "gpu.toml").read_text()
    assert "sms = 132" in text  # the H200's own count (NVIDIA H200 product brief: 132 SMs)


def test_an_output_name_with_a_space_gives_a_derived_device_name(tmp_path):
    result = _calibrate(tmp_path, _folder(tmp_path), "--base", "H200", out="my gpu.toml")
    assert result.exit_code == 0, result.output
    assert 'name = "my-gpu"' in (tmp_path / "my gpu.toml").read_text()


def test_a_bad_name_is_refused_before_the_fit(tmp_path):
    empty = tmp_path / "nothing"  # no tables at all: a fit would fail with another message
    empty.mkdir()
    _one_error(_calibrate(tmp_path, empty, "--name", "my gpu"), "--name", "my gpu")


def test_a_long_failure_record_still_writes_the_device_file(tmp_path):
    folder = _folder(tmp_path)
    (folder / "gpu-latency.failed").write_text("nvcc said: " + "x" * 5000 + "\n")
    result = _calibrate(tmp_path, folder, "--base", "H200")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "gpu.toml").read_text()
    assert "gpu-latency.csv: measurement failed: nvcc said:" in text and "x" * 600 not in text


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_table_that_is_a_pipe_or_endless_is_not_read(tmp_path, kind):
    import os

    folder = _folder(tmp_path)
    target = folder / "gpu-cache.csv"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    result = _calibrate(tmp_path, folder, "--base", "H200")
    assert result.exit_code == 0, result.output
    assert "from H200: L1 capacity (gpu-cache.csv: no table" in result.output


@pytest.mark.parametrize("cell", ["nan", "0"])
def test_validate_refuses_a_table_with_nan_or_zero(tmp_path, cell):
    folder = _folder(tmp_path, {"gpu-stream": "l40", "gpu-l2-cache": "l40"})
    head, body = _lines(folder / "gpu-stream.csv")
    row = body[3].split(",")
    row[3] = cell
    body[3] = ",".join(row)
    (folder / "gpu-stream.csv").write_text("\n".join(head + body) + "\n")
    result = CliRunner().invoke(main, ["validate", "--device", "L40", "--tables", str(folder)])
    _one_error(result, "gpu-stream.csv", "row 3", "finite numbers above zero")
    assert "nan" not in result.output.replace(f"{cell!r}", "")
