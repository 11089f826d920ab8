"""Bad input: every case ends with exit code 2 and one ``error:`` line naming the input and what is
allowed; nothing is evaluated, nothing is written where it should not be.

The command-line cases are the inputs reported against earlier versions (tracebacks, silently
accepted nonsense, unsafe names and index strings), each with the fragment its message must
name. The limits are checked at their boundaries with numbers derived by hand from the device
files and the documented bounds (2^31 - 1 cells per axis, 2^34 cells, 64 cells per thread, a
tenth of the maximum clock).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sympy
from click.testing import CliRunner

import warpspeed as ws
from warpspeed.cli.main import main
from warpspeed.errors import DeviceError, KernelError, LaunchError
from warpspeed.kernel.description import X, Y, Z
from tests.paths import ROOT

A100_FILE = ROOT / "warpspeed" / "hardware" / "devices" / "A100-SXM4-40GB.toml"
MEASURED = ROOT / "tests" / "data" / "measured_small.csv"
SMALL = ["--kernel", "copy", "--domain", "16,16,16"]

@pytest.fixture(autouse=True)
def _studies_write_in_the_working_directory(request, monkeypatch):
    """A study writes its relative output in the working directory: the study tests run in their
    own temporary one."""
    if "study" in request.node.name:
        monkeypatch.chdir(request.getfixturevalue("tmp_path"))



def run(args: list[str], cwd: Path | None = None, monkeypatch=None):
    """The command's result; with ``cwd`` it runs there."""
    if cwd is not None and monkeypatch is not None:
        monkeypatch.chdir(cwd)
    return CliRunner().invoke(main, args)


def assert_one_line_error(result, fragment: str) -> str:
    """Exit code 2, no traceback, standard error exactly one ``error:`` line holding ``fragment``."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment in lines[0], lines[0]
    return lines[0]


# --------------------------------------------------------------------------- files


def device_file(tmp_path: Path, replace: dict[str, str], name: str = "dev.toml") -> Path:
    """The A100 file with ``key = value`` lines replaced (value as TOML text); ``TABLE.key`` replaces
    the key in the ``[TABLE]`` table or the ``[[memory]]`` table named TABLE."""
    text = A100_FILE.read_text()
    for key, value in replace.items():
        level, _, key = key.rpartition(".")
        start = 0
        if level:
            table = f"[{level}]" if f"[{level}]" in text else f'[[memory]]\nname = "{level}"'
            start = text.index(table)
        tail, n = re.subn(rf"(?m)^{re.escape(key)} = [^#\n]*", f"{key} = {value} ", text[start:], count=1)
        text = text[:start] + tail
        assert n == 1, key
    path = tmp_path / name
    path.write_text(text)
    return path


def measurement_file(tmp_path: Path, column: str, value: str, row: int = 0, name: str = "m.csv") -> Path:
    """measured_small.csv with the cell of ``column`` in data row ``row`` replaced by ``value``."""
    lines = MEASURED.read_text().splitlines()
    header_at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    header = lines[header_at].split(",")
    cells = lines[header_at + 1 + row].split(",")
    cells[header.index(column)] = value
    lines[header_at + 1 + row] = ",".join(cells)
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def runs_file(tmp_path: Path, rows: list[tuple], name: str = "runs.csv") -> Path:
    path = tmp_path / name
    path.write_text("its,clock_mhz,watts\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


GOOD_RUNS = [(0, 1740, 206), (16, 1740, 290), (64, 1740, 300), (512, 1740, 220)]

# --------------------------------------------------------------------------- the command line


@pytest.mark.parametrize("args, fragment", [
    # the largest domain: 2^31 - 1 cells per axis, 2^34 cells
    (["predict", "--kernel", "copy", "--domain", "1000000000,1000000000,1000000000"], "too many cells"),
    (["predict", "--domain", "99999999999999999999,2,2"], "2147483647 (2^31 - 1) cells per axis"),
    (["predict", "--kernel", "copy", "--domain", "100000000,1000000,1"], "at most 17179869184 (2^34) cells"),
    (["rank", "--kernel", "copy", "--domain", "1000000000,1000000000,1000000000"], "too many cells"),
    (["dvfs", "--kernel", "copy", "--domain", "99999999999999999999,2,2"], "cells per axis"),
    (["trace", "--kernel", "copy", "--domain", "99999999999999999999,2,2"], "cells per axis"),
    (["compare", "--kernel", "copy", "--domain", "1000000000,1000000000,1000000000"], "too many cells"),
    (["measure", "--kernel", "copy", "--domain", "1000000000,1000000000,1000000000"], "too many cells"),
    (["scan-domain", "--kernel", "copy", "--planes", "1000000000"], "at most 131072"),
    (["scan-domain", "--kernel", "copy", "--planes", "64:1000000000:1"], "at most 1024 planes"),
    # triples: 1 to 3 ASCII integers, one separator
    (["predict", *SMALL[:2], "--domain", "64x64x64x"], "'64x64x64x'"),
    (["predict", *SMALL[:2], "--domain", "64,,64,,64"], "'64,,64,,64'"),
    (["predict", *SMALL[:2], "--domain", ""], "--domain"),
    (["predict", *SMALL[:2], "--domain", "+64,64,64"], "--domain"),
    (["predict", *SMALL[:2], "--domain", "\uff16\uff14,64,64"], "--domain"),  # full-width digits
    (["predict", *SMALL, "--block", "32.5,8,4"], "--block"),
    (["predict", *SMALL, "--fold", "1,1,100000"], "at most 64"),
    (["predict", *SMALL, "--fold", "99999999999,1,1"], "at most 64"),
    # the clock: a tenth of the A100's 1410 MHz to 1410 MHz
    (["predict", *SMALL, "--clock-mhz", "99999"], "141 to 1410 MHz"),
    (["predict", *SMALL, "--clock-mhz", "1e-9"], "141 to 1410 MHz"),
    (["predict", *SMALL, "--clock-mhz", "140"], "141 to 1410 MHz"),
    (["predict", *SMALL, "--clock-mhz", "1410.5"], "141 to 1410 MHz"),
    (["predict", *SMALL, "--clock-mhz", "nan"], "--clock-mhz"),
    (["predict", *SMALL, "--clock-mhz", "inf", "--json"], "--clock-mhz"),
    (["predict", *SMALL, "--clock-mhz", "-5"], "--clock-mhz"),
    (["predict", *SMALL, "--clock-mhz", "1000", "--device", "MI210"], "no power parameters"),
    (["rank", *SMALL, "--objective", "energy", "--clock-mhz", "nan"], "--clock-mhz"),
    (["rank", *SMALL, "--objective", "energy", "--clock-mhz", "5000"], "141 to 1410 MHz"),
    (["rank", *SMALL, "--clock-mhz", "1000"], "--objective energy or edp"),
    # click's usage errors as one line
    (["rank", *SMALL, "--top", "abc"], "--top"),
    (["rank", *SMALL, "--top", "-1"], "--top"),
    (["rank", *SMALL, "--jobs", "0"], "--jobs"),
    (["predict", *SMALL, "--model", "nope"], "--model"),
    (["predict", *SMALL, "--no-such-option"], "--no-such-option"),
    (["no-such-command"], "no-such-command"),
    (["fit", "no-such-file.csv", "--curve", "z_layer", "--out", "x.toml"], "no-such-file.csv"),
    (["predict", *SMALL, "--block"], "--block"),
    # options that belong to another model are refused before the prediction
    (["predict", *SMALL, "--plot", "cpi.png"], "--model interval"),
    (["predict", *SMALL, "--pipeline-out", "g.json"], "--model pipeline"),
    # names
    (["predict", "--kernel", "nope"], "unknown kernel 'nope'"),
    (["rank", "--kernel", "nope"], "unknown kernel 'nope'"),
    (["predict", *SMALL, "--device", "B200"], "unknown device 'B200'"),
    (["refit", str(MEASURED), "--family", "../../evil", "--out", "r.toml"], "--family is not a name"),
    (["fit", str(ROOT / "examples" / "points.csv"), "--curve", "z_layer", "--out", "f.toml", "--family", "a/b"],
     "--family is not a name"),
    (["compare", *SMALL, "--models", "roofline,,interval"], "--models"),
    (["study", str(ROOT / "examples" / "study.toml"), "--jobs", "0"], "--jobs"),
    (["study", str(ROOT / "examples" / "study.toml"), "--output", "results.xlsx"], "--output"),
])
def test_command_line_bad_input(args, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing a command might write lands in the source tree
    assert_one_line_error(run(args), fragment)
    assert not list(tmp_path.iterdir())  # refused before writing anything


@pytest.mark.parametrize("replace, fragment", [
    ({"clock_ghz": "inf"}, "clock_ghz"),
    ({"clock_ghz": "nan"}, "clock_ghz"),
    ({"clock_ghz": "1e-300"}, "clock_ghz"),
    ({"clock_ghz": "100.0"}, "clock_ghz"),
    ({"L1.bytes": "64"}, "at least one L1 line"),            # smaller than its 128-byte line
    ({"L2.effective_bytes": "64"}, "at least one L2 line"),
    ({"L1.line_bytes": "96"}, "a power of two"),
    ({"L2.sector_bytes": "3"}, "a power of two"),
    ({"L1.banks": "3"}, "a power of two"),
    ({"warp_size": "7"}, "32 or 64"),
    ({"sms": "100000000000"}, "sms"),
    ({"dram_bandwidth_gb_s": "1e308"}, "dram_bandwidth_gb_s"),
    ({"dram_curve_latency_ns": "1e300"}, "dram_curve_latency_ns"),
    ({"dram_curve_sharpness": "0.5"}, "dram_curve_sharpness"),
    ({"max_threads_per_sm": "1"}, "max_threads_per_sm"),
    ({"shared_bytes_per_sm": "1024"}, "shared_bytes_per_sm"),
    ({"vendor": '"intel"'}, "vendor"),
    ({"name": '"../../x"'}, "device name is not a name"),
    ({"name": '""'}, "device name is not a name"),
    ({"launch_overhead_part": '"../x"'}, "launch_overhead_part is not a name"),
    ({"power.family": '"../../evil"'}, "power family is not a name"),
    ({"power_limit_w": "inf"}, "power_limit_w"),
    ({"power_limit_w": "1e300"}, "power_limit_w"),
    ({"power_limit_w": "1e-300"}, "power_limit_w"),
    ({"reference_clock_mhz": "nan"}, "reference_clock_mhz"),
    ({"reference_clock_mhz": "1e300"}, "reference_clock_mhz"),
    ({"reference_clock_mhz": "1"}, "reference_clock_mhz"),
])
@pytest.mark.parametrize("command", ["predict", "dvfs"])
def test_device_file_values_out_of_range(tmp_path, replace, fragment, command):
    path = device_file(tmp_path, replace)
    assert_one_line_error(run([command, *SMALL, "--device", str(path)]), fragment)


@pytest.mark.parametrize("file, fragment", [
    ("\x00\xff binary", "not UTF-8"),
    ("", "missing column"),
    ("its,clock_mhz,watts\n", "too few runs (got 0)"),
    ("its,clock_mhz,watts\n8,1410,300\n8,1410,300\n8,1410,300\n", "do not determine the fit"),
    ("its,clock_mhz,watts\n1.5,1740,250\n4,1740,300\n16,1740,350\n", "line 2"),
    ("its,clock_mhz,watts\n-1,1740,250\n4,1740,300\n16,1740,350\n", "its"),
    ("its,clock_mhz,watts\n100000000000000,1740,250\n4,1740,300\n16,1740,350\n", "0 to 4096"),
    ("its,clock_mhz,watts\n1,1740,250,7\n4,1740,300\n16,1740,350\n", "cells"),
    *[(f"its,clock_mhz,watts\n1,1740,{w}\n4,1740,300\n16,1740,350\n", "watts") for w in ("nan", "inf", "0", "-5")],
    *[(f"its,clock_mhz,watts\n1,{c},250\n4,1740,300\n16,1740,350\n", "clock_mhz") for c in ("nan", "inf", "0", "-5")],
    # implausible for the A40 (1740 MHz, 300 W limit, 37.4 TFLOP/s FP32): clocks of 1 to 4 MHz, 1e300 W, 1e308 GFLOP/s
    *[(f"its,clock_mhz,watts\n0,{c},200\n16,{c},290\n64,{c},300\n512,{c},220\n", f"clock_mhz {c} ") for c in ("1", "4")],
    ("its,clock_mhz,watts\n0,1740,200\n16,1740,1e300\n64,1740,300\n512,1740,220\n", "watts 1e+300"),
    ("its,clock_mhz,watts\n0,1740,200\n16,1740,2\n64,1740,300\n512,1740,220\n", "allowed: 3 to 600 W"),
    ("its,clock_mhz,watts,gflop_s\n0,1740,200,1e308\n16,1740,290,\n64,1740,300,\n512,1740,220,\n", "gflop_s"),
    # a fit whose error exceeds the bound (watts that no activity explains)
    ("its,clock_mhz,watts\n0,1740,100\n16,1740,590\n64,1740,100\n512,1740,590\n8,1740,100\n", "does not follow"),
])
def test_power_fit_bad_runs(tmp_path, monkeypatch, file, fragment):
    data = tmp_path / "runs.csv"
    data.write_bytes(file.encode("latin-1"))
    monkeypatch.chdir(tmp_path)
    result = run(["power-fit", str(data), "--device", "A40", "--family", "mine"])
    assert_one_line_error(result, fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.csv"]  # no mine.toml
    assert "DLASCL" not in result.output  # LAPACK's own complaints never reach the terminal


def test_power_fit_family_is_a_name_not_a_path(tmp_path, monkeypatch):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    data = runs_file(tmp_path, GOOD_RUNS)
    monkeypatch.chdir(work)
    for family in ("../../evil", "a b", "", "sub/dir", ".hidden", "x" * 65):
        assert_one_line_error(run(["power-fit", str(data), "--device", "A40", "--family", family]), "--family")
    assert not list(tmp_path.rglob("*.toml"))
    # a name writes NAME.toml in the working directory; --out is the path
    result = run(["power-fit", str(data), "--device", "A40", "--family", "my-family_2.0"])
    assert result.exit_code == 0, result.output
    assert (work / "my-family_2.0.toml").is_file()
    result = run(["power-fit", str(data), "--device", "A40", "--family", "mine", "--out", str(tmp_path / "x.toml")])
    assert result.exit_code == 0 and (tmp_path / "x.toml").is_file()


@pytest.mark.parametrize("column, value, fragment", [
    ("block_x", "", "block_x"),            # int(NaN) before
    ("block_x", "inf", "block_x"),         # OverflowError before
    ("block_x", "32.5", "32.5"),           # truncated to 32 before
    ("block_x", "-32", "block_x"),
    ("block_x", "99999999999999999999", "1 to 1024"),
    ("fold_z", "0", "fold_z"),
    ("meas_lups_per_s", "0", "above zero"),   # the row vanished from the report before
    ("meas_lups_per_s", "-5e9", "above zero"),
    ("meas_lups_per_s", "inf", "finite"),
    ("meas_lups_per_s", "nan", "finite"),
    ("meas_dram_load_bytes_per_lup", "-1", "negative"),
    ("pred_lups_per_s", "abc", "not a number"),
    # implausible for the file's A100 (1.41e4 to 7.8e13 lup/s: warpspeed.hardware.ranges.plausible_lups_per_s)
    ("meas_lups_per_s", "1e308", "not a rate this device can have"),
    ("meas_lups_per_s", "5e-324", "not a rate this device can have"),
    ("meas_lups_per_s", "1e14", "not a rate this device can have"),
    ("pred_lups_per_s", "1000", "not a rate this device can have"),
])
@pytest.mark.parametrize("command", ["accuracy", "refit"])
def test_measurement_file_cells(tmp_path, column, value, fragment, command):
    path = measurement_file(tmp_path, column, value)
    extra = ["--family", "nvidia-ampere", "--out", str(tmp_path / "r.toml")] if command == "refit" else []
    assert_one_line_error(run([command, str(path), *extra]), fragment)
    assert not (tmp_path / "r.toml").exists()


def test_measurement_file_without_rows_or_with_short_rows(tmp_path):
    lines = MEASURED.read_text().splitlines()
    header_at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    (tmp_path / "header.csv").write_text("\n".join(lines[:header_at + 1]) + "\n")
    assert_one_line_error(run(["accuracy", str(tmp_path / "header.csv")]), "no data rows")
    short = lines[:header_at + 1] + [lines[header_at + 1][:20]] + lines[header_at + 2:]
    (tmp_path / "short.csv").write_text("\n".join(short) + "\n")
    assert_one_line_error(run(["accuracy", str(tmp_path / "short.csv")]), "fewer cells")


def test_accuracy_without_a_comparable_row(tmp_path):
    lines = MEASURED.read_text().splitlines()
    header_at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    header = lines[header_at].split(",")
    failed, unmeasured = lines[:header_at + 1], lines[:header_at + 1]
    for line in lines[header_at + 1:]:
        cells = line.split(",")
        failed.append(",".join(cells[:-1] + ["launch failed"]))  # error is the last column
        unmeasured.append(",".join(c if h in ("config", "error", "pred_limiter") or not h.startswith("meas_")
                                   else "" for h, c in zip(header, cells)))
    assert header[-1] == "error"
    (tmp_path / "failed.csv").write_text("\n".join(failed) + "\n")
    assert_one_line_error(run(["accuracy", str(tmp_path / "failed.csv")]), "every row has an error")
    (tmp_path / "unmeasured.csv").write_text("\n".join(unmeasured) + "\n")
    assert_one_line_error(run(["accuracy", str(tmp_path / "unmeasured.csv")]), "no row with a measured")


STUDY = ('kernels = {kernels}\ndevices = {devices}\ndomains = [[16, 16, 16]]\nthreads = [64]\nmax_block_z = 1\n'
         'foldings = [[1, 1, 1]]\noutput = "out.csv"\n')


@pytest.mark.parametrize("kernels, devices, fragment", [
    ('["copy", "nope"]', '["A100-SXM4-40GB"]', "unknown kernel 'nope'"),
    ('["copy"]', '["nope"]', "unknown device 'nope'"),
])
def test_study_with_unknown_names_stops_before_any_row(tmp_path, kernels, devices, fragment):
    toml = tmp_path / "s.toml"
    toml.write_text(STUDY.format(kernels=kernels, devices=devices))
    assert_one_line_error(run(["study", str(toml)]), fragment)
    assert not (tmp_path / "out.csv").exists()


def test_study_where_no_configuration_can_be_predicted(tmp_path):
    """2048 threads per block: more than any device allows, so every row is an error row."""
    toml = tmp_path / "s.toml"
    toml.write_text(STUDY.format(kernels='["copy"]', devices='["A100-SXM4-40GB"]').replace("[64]", "[2048]")
                    .replace("max_block_z = 1", "max_block_z = 64").replace("[[16, 16, 16]]", "[[64, 64, 64]]"))
    line = assert_one_line_error(run(["study", str(toml)]), "no configuration of the study could be predicted")
    assert "out.csv" in line


@pytest.mark.parametrize("corrupt, fragment", [
    (lambda cells, columns: cells.__setitem__(columns.index("lups_per_s"), "abc"), "lups_per_s 'abc'"),
    (lambda cells, columns: cells.__setitem__(columns.index("key"), "copy|X|1x1x1|1x1x1|1x1x1"), "does not match"),
    (lambda cells, columns: cells.__setitem__(columns.index("block_x"), "-8"), "block_x"),
    (lambda cells, columns: cells.__setitem__(columns.index("lups_per_s"), ""), "neither a rate nor an error"),
    (lambda cells, columns: cells.pop(), "cells for"),
    (lambda cells, columns: cells.__setitem__(columns.index("lups_per_s"), "0"), "lups_per_s '0' is not above zero"),
    (lambda cells, columns: cells.__setitem__(columns.index("lups_per_s"), "-5e9"), "not above zero"),
    (lambda cells, columns: cells.__setitem__(columns.index("lups_per_s"), "inf"), "not finite"),
    (lambda cells, columns: cells.__setitem__(columns.index("lups_per_s"), "1e308"), "not a rate A100-SXM4-40GB"),
    (lambda cells, columns: cells.__setitem__(columns.index("lups_per_s"), "5e-324"), "not a rate A100-SXM4-40GB"),
    (lambda cells, columns: cells.__setitem__(columns.index("dram_load_bytes_per_lup"), "-1"), "not above zero"),
])
def test_study_resume_refuses_corrupt_rows(tmp_path, corrupt, fragment):
    toml = tmp_path / "s.toml"
    toml.write_text(STUDY.format(kernels='["copy"]', devices='["A100-SXM4-40GB"]'))
    assert run(["study", str(toml)]).exit_code == 0
    out = tmp_path / "out.csv"
    lines = out.read_text().splitlines()
    columns, cells = lines[0].split(","), lines[2].split(",")
    corrupt(cells, columns)
    lines[2] = ",".join(cells)
    out.write_text("\n".join(lines) + "\n")
    before = out.read_text()
    line = assert_one_line_error(run(["study", str(toml)]), fragment)
    assert "line 3" in line and out.read_text() == before  # named, and the file is left as it was
    assert run(["study", str(toml), "--no-resume"]).exit_code == 0


def test_fit_of_identical_points_is_one_line(tmp_path):
    data = tmp_path / "p.csv"
    data.write_text("oversubscription,hit_rate\n0.1,0.5\n0.1,0.5\n0.1,0.5\n")
    assert_one_line_error(run(["fit", str(data), "--curve", "z_layer", "--out", str(tmp_path / "f.toml")]),
                          "undetermined")
    data.write_text("oversubscription,hit_rate\n1e308,0.5\n0.2,0.5\n0.3,0.4\n0.5,0.2\n")
    assert_one_line_error(run(["fit", str(data), "--curve", "z_layer", "--out", str(tmp_path / "f.toml")]),
                          "oversubscription is too large")


def test_json_output_has_no_nan_or_infinity():
    """The copy kernel has no flops: its FP limit is infinite, and JSON has no infinity."""
    result = run(["predict", *SMALL, "--json"])
    assert result.exit_code == 0

    def refuse(constant):
        raise AssertionError(f"{constant} in JSON output")

    doc = json.loads(result.stdout, parse_constant=refuse)
    assert doc["limiters"]["fp"] is None


# --------------------------------------------------------------------------- limits at their boundaries


def test_domain_limits_at_the_boundary():
    from warpspeed.kernel.builtin import builtin_kernel

    assert builtin_kernel("copy", (2**17, 2**17, 1)).domain == (2**17, 2**17, 1)  # 2^34 cells
    with pytest.raises(KernelError, match="too many cells"):
        builtin_kernel("copy", (2**17, 2**17, 2))
    assert builtin_kernel("copy", (2**31 - 1, 1, 1)).domain == (2**31 - 1, 1, 1)
    with pytest.raises(KernelError, match="cells per axis"):
        builtin_kernel("copy", (2**31, 1, 1))


def test_folding_limit_at_the_boundary():
    from warpspeed.kernel.builtin import builtin_kernel
    from warpspeed.predict import Predictor

    predictor = Predictor(builtin_kernel("copy", (64, 64, 64)), "A100-SXM4-40GB")
    assert predictor.predict((32, 1, 1), (1, 4, 16)).lups_per_s > 0  # 64 cells per thread
    with pytest.raises(LaunchError, match="65 cells per thread"):
        predictor.predict((32, 1, 1), (1, 1, 65))


def test_waves_beyond_the_listing_are_refused():
    """2^34 cells in blocks of one thread on the RX 5500 XT (22 CUs x 16 blocks = 352 blocks per
    wave): ceil(2^34 / 352) = 48 806 447 waves, more than 2^22."""
    from warpspeed.kernel.builtin import builtin_kernel
    from warpspeed.predict import Predictor

    with pytest.raises(LaunchError, match="got 48806447 waves of 352 blocks"):
        Predictor(builtin_kernel("copy", (2**17, 2**17, 1)), "RX5500XT").predict((1, 1, 1))


def test_clock_range_ends_are_allowed():
    """A100: clock_ghz = 1.41, so 141 to 1410 MHz; both ends predict at the clock asked for."""
    for clock in ("141", "1410"):
        result = run(["predict", *SMALL, "--clock-mhz", clock, "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["power"]["clock_mhz"] == pytest.approx(float(clock))


def test_built_in_devices_lie_well_inside_the_ranges():
    from warpspeed.hardware.device import all_devices
    from warpspeed.hardware.ranges import FLOAT_RANGES

    for device in all_devices():
        for key, (low, high) in FLOAT_RANGES.items():
            value = getattr(device, key)
            if value is None:
                continue
            assert value <= high / 3 and (value >= 3 * low or key == "dram_curve_sharpness"), (device.name, key)


# --------------------------------------------------------------------------- the Python API


@pytest.mark.parametrize("make, error, fragment", [
    (lambda: ws.Field("a", 3, (10,)), KernelError, "element_bytes"),
    (lambda: ws.Field("a", 8, (10,), alignment_bytes=4), KernelError, "alignment_bytes"),
    (lambda: ws.Field("a", 8, (2**60,)), KernelError, "too large"),
    (lambda: ws.Field("a", 8, None), KernelError, "shape"),
    (lambda: ws.FlopCounts(adds=math.inf), KernelError, "adds"),
    (lambda: ws.FlopCounts(fmas=math.nan), KernelError, "fmas"),
    (lambda: ws.FlopCounts(muls=True), KernelError, "muls"),
    (lambda: ws.Kernel("k", None, (ws.load("a", X),), (8, 1, 1)), KernelError, "fields must be a sequence"),
    (lambda: ws.Kernel(None, (ws.Field("a", 8, (8,)),), (ws.load("a", X),), (8, 1, 1)), KernelError, "name"),
    (lambda: ws.Kernel("k", (ws.Field("a", 8, (8,)),), (ws.load("a", X),), (10**9, 10**9, 10**9)),
     KernelError, "too many cells"),
])
def test_python_api_bad_values(make, error, fragment):
    with pytest.raises(error, match=fragment):
        make()


def test_predictor_refuses_wrong_types():
    from warpspeed.kernel.builtin import builtin_kernel
    from warpspeed.predict import Predictor

    with pytest.raises(KernelError):
        Predictor(None, "A100-SXM4-40GB")  # type: ignore[arg-type]
    with pytest.raises(DeviceError):
        Predictor(builtin_kernel("copy", (8, 8, 8)), None)  # type: ignore[arg-type]
    with pytest.raises(LaunchError):
        Predictor(builtin_kernel("copy", (8, 8, 8)), "A100-SXM4-40GB").predict(None)  # type: ignore[arg-type]


def test_energy_estimate_refuses_clocks_outside_the_range():
    from warpspeed.hardware.clock import ClockError
    from warpspeed.kernel.builtin import builtin_kernel
    from warpspeed.models import estimate_energy
    from warpspeed.predict import Predictor

    p = Predictor(builtin_kernel("copy", (16, 16, 16)), "A100-SXM4-40GB").predict((32, 4, 2))
    for clock in (math.nan, math.inf, -1.0, 0.0, 140.9, 1410.1, 1e9):
        with pytest.raises(ClockError, match="141 to 1410 MHz"):
            estimate_energy(p, clock_mhz=clock)
    assert estimate_energy(p, clock_mhz=705.0).clock_mhz == pytest.approx(705.0)


# --------------------------------------------------------------------------- index strings


HOSTILE = [
    "__import__('os').system('touch {marker}')",
    "__import__(\"pathlib\").Path(\"{marker}\").touch()",
    "open('{marker}', 'w')",
    "exec(\"open('{marker}', 'w')\")",
    "eval(\"open('{marker}', 'w')\")",
    "(lambda: open('{marker}', 'w'))()",
    "x.__class__.__base__.__subclasses__()",
    "().__class__.__bases__[0].__subclasses__()",
    "x + 1; open('{marker}', 'w')",
    "getattr(x, '__class__')",
    "Symbol('{marker}')",
    "x if open('{marker}', 'w') else y",
    "[open('{marker}', 'w') for _ in x]",
    "x @ y",
    "x ** 10 ** 10 ** 10",
    "\uff58 + 1",  # full-width x
    "x + 1" * 300,
    "(" * 150 + "x" + ")" * 150,
]


@pytest.mark.parametrize("template", HOSTILE)
def test_hostile_index_strings_are_not_evaluated(template, tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(KernelError) as info:
        ws.load("src", template.format(marker=marker), "y", "z")
    assert "\n" not in str(info.value)
    assert not marker.exists()
    assert list(tmp_path.iterdir()) == []


def test_index_strings_never_reach_a_python_evaluator(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("an index string reached a Python evaluator")

    import builtins

    import sympy.parsing.sympy_parser

    expected = sympy.floor(X / 2) + 10 * Y - sympy.Mod(Z, 4) + sympy.floor(X / 3) + sympy.Mod(Y, 5)
    monkeypatch.setattr(sympy, "parse_expr", forbidden)
    monkeypatch.setattr(sympy.parsing.sympy_parser, "parse_expr", forbidden)
    monkeypatch.setattr(sympy, "sympify", forbidden)
    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    access = ws.load_linear("a", "floor(x / 2) + 10 * y - Mod(z, 4) + x // 3 + y % 5")
    monkeypatch.undo()
    assert access.index[0] == expected


@pytest.mark.parametrize("text, expected", [
    ("x + 1", X + 1),
    ("2*(x + 3) - x", X + 6),
    ("-(x - 3)", 3 - X),
    ("+x", X),
    ("floor((x + 1) / 3) + 1", sympy.floor((X + 1) / 3) + 1),
    ("x // 2", sympy.floor(X / 2)),
    ("x % 4", sympy.Mod(X, 4)),
    ("Mod(3*x + y, 4)", sympy.Mod(3 * X + Y, 4)),
    ("  x\t+\n1  ", X + 1),
    ("7", sympy.Integer(7)),
])
def test_index_grammar_builds_the_expression(text, expected):
    assert ws.load_linear("a", text).index[0] == expected


@pytest.mark.parametrize("text, fragment", [
    ("x / y", "not affine"),
    ("x // 0", "non-zero integer"),
    ("Mod(x, y)", "not affine"),
    ("floor(x, 2)", "one argument"),
    ("", "cannot parse"),
    ("x + ", "cannot parse"),
    ("1.5 * x", "cannot parse"),
    ("sqrt(x)", "not affine"),
])
def test_index_grammar_refusals(text, fragment):
    with pytest.raises(KernelError, match=re.escape(fragment)):
        ws.load_linear("a", text)


# --------------------------------------------------------------------------- first-run defects


BLOCK_PYSTENCILS = """
import importlib.abc
import sys


class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("pystencils", "lbmpy"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Block())
for module in [m for m in sys.modules if m.split(".")[0] in ("pystencils", "lbmpy", "pystencils_plugin")]:
    del sys.modules[module]
from warpspeed.cli.main import main

main(sys.argv[1:], prog_name="warpspeed")
"""


def _without_pystencils(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK_PYSTENCILS, *args], capture_output=True, text=True,
                          timeout=300)


def test_built_in_kernels_work_without_pystencils():
    """pystencils and lbmpy cannot be imported (as when the extra is not installed): the plugin's
    own ImportError is recognised, built-in kernels predict, pystencils workloads say what to install."""
    done = _without_pystencils("predict", "--kernel", "copy", "--domain", "16,16,16", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kernel"] == "copy"
    star = _without_pystencils("predict", "--kernel", "star3d-r1", "--domain", "16,16,16", "--json")
    assert star.returncode == 0, star.stderr
    assert json.loads(star.stdout)["registers_source"] == "assumed"  # the built-in, not pystencils' code
    lbm = _without_pystencils("predict", "--kernel", "d3q19-srt")
    assert lbm.returncode == 2
    assert lbm.stderr.strip().splitlines() == [lbm.stderr.strip()]
    assert "install warpspeed[pystencils]" in lbm.stderr and "Traceback" not in lbm.stderr


def test_rank_with_interval_model_shows_the_models_own_explanation():
    args = ["rank", "--kernel", "copy", "--domain", "32,32,32", "--threads", "64", "--jobs", "1", "--model",
            "interval"]
    rows = json.loads(run(args + ["--json"]).stdout)["rows"]
    table = run(args + ["--wide"])
    assert table.exit_code == 0, table.output
    best, text = rows[0], " ".join(table.stdout.split())
    assert f"{best['lups_per_s'] / 1e9:.2f} Glup/s by the interval model, dominated by {best['explanation']}" in text
    assert "limited by" not in text
    assert "dominated by" in table.stdout and "roofline" in table.stdout


def test_readme_fit_example_runs_as_written(tmp_path, monkeypatch):
    """The README's fit line, run from a copy of the repository layout: it reads examples/points.csv
    and writes my-gpu.toml in the working directory, not into the package's fits/."""
    readme = (ROOT / "README.md").read_text()
    line = next(line for line in readme.splitlines() if line.startswith("warpspeed fit "))
    args = line.split("#")[0].split()[1:]
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "points.csv").write_text((ROOT / "examples" / "points.csv").read_text())
    fits_before = sorted(p.name for p in (ROOT / "fits").iterdir())
    monkeypatch.chdir(tmp_path)
    result = run(args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "my-gpu.toml").is_file()
    assert sorted(p.name for p in (ROOT / "fits").iterdir()) == fits_before


def test_readme_power_fit_example_names_a_shipped_file():
    from warpspeed.calibration.power import read_runs

    readme = (ROOT / "README.md").read_text()
    line = next(line for line in readme.splitlines() if line.startswith("warpspeed power-fit "))
    data = ROOT / line.split()[2]
    assert len(read_runs(data)) >= 3


def test_pytest_shows_its_summary_line():
    import tomllib

    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "-q" not in addopts.split()


# --------------------------------------------------------------------------- files a command writes


@pytest.mark.parametrize("content", ["my notes\n", "kernels = []\n", "a,b,c\n1,2,3\n", "\x00\xff"])
@pytest.mark.parametrize("resume", [True, False])
def test_study_never_replaces_a_foreign_file(tmp_path, content, resume):
    """An output that exists and is not a study's own output is refused with and without
    --no-resume, and left byte for byte as it was."""
    toml = tmp_path / "s.toml"
    toml.write_text(STUDY.format(kernels='["copy"]', devices='["A100-SXM4-40GB"]').replace("out.csv", "notes.txt"))
    notes = tmp_path / "notes.txt"
    notes.write_bytes(content.encode("latin-1"))
    line = assert_one_line_error(run(["study", str(toml), *([] if resume else ["--no-resume"])]), "notes.txt")
    assert "not the output of a warpspeed study" in line
    assert notes.read_bytes() == content.encode("latin-1")


@pytest.mark.parametrize("output", ["s.toml", "./s.toml", "{dir}/s.toml"])
def test_study_output_is_never_the_study_file(tmp_path, output):
    toml = tmp_path / "s.toml"
    text = STUDY.format(kernels='["copy"]', devices='["A100-SXM4-40GB"]').replace("out.csv", output.format(dir=tmp_path))
    toml.write_text(text)
    for extra in ([], ["--no-resume"]):
        assert_one_line_error(run(["study", str(toml), *extra]), "the study file itself")
        assert toml.read_text() == text
    toml.write_text(STUDY.format(kernels='["copy"]', devices='["A100-SXM4-40GB"]'))
    before = toml.read_text()
    copy = tmp_path / "s.csv"
    copy.write_text(before)  # --output naming a copy of a TOML file: foreign, refused
    assert_one_line_error(run(["study", str(toml), "--output", str(copy), "--no-resume"]), "not the output")
    assert toml.read_text() == before and copy.read_text() == before


def test_study_replaces_its_own_output(tmp_path):
    toml = tmp_path / "s.toml"
    toml.write_text(STUDY.format(kernels='["copy"]', devices='["A100-SXM4-40GB"]'))
    assert run(["study", str(toml)]).exit_code == 0
    first = (tmp_path / "out.csv").read_text()
    assert run(["study", str(toml), "--no-resume"]).exit_code == 0
    assert (tmp_path / "out.csv").read_text() == first


def _fail_midway(monkeypatch, module: str, name: str) -> None:
    """Make ``module.name`` raise after being called, as a failure half-way through a write."""
    import importlib

    target = importlib.import_module(module)
    original = getattr(target, name)

    def failing(*args, **kwargs):
        original(*args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(target, name, failing)


@pytest.mark.parametrize("args, out, fail", [
    (["rank", *SMALL, "--csv", "{out}"], "r.csv", ("warpspeed.files.rows", "write_rows")),
    (["rank", *SMALL, "--plot", "{out}"], "r.png", None),
    (["rank", *SMALL, "--traces", "{out}"], "t.jsonl", ("warpspeed.cli.rank", "json_text")),
    (["trace", *SMALL, "--out", "{out}"], "t.json", None),
    (["predict", *SMALL, "--model", "pipeline", "--pipeline-out", "{out}"], "p.json", None),
])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_other(tmp_path, monkeypatch, args, out, fail):
    """The old file stays byte for byte and nothing else (no temporary, no empty file) is left when
    writing fails half-way; the write replaces it whole when it succeeds."""
    target = tmp_path / out
    target.write_bytes(b"previous good output\n")
    argv = [a.format(out=target) for a in args]
    if fail is None:  # fail inside the atomic writer, after the content was written
        _fail_midway(monkeypatch, "os", "fsync")
    else:
        _fail_midway(monkeypatch, *fail)
    result = run(argv)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert target.read_bytes() == b"previous good output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [out]
    monkeypatch.undo()
    assert run(argv).exit_code == 0
    assert target.read_bytes() != b"previous good output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [out]


def test_a_device_as_output_is_written_not_replaced():
    """``--csv /dev/null`` writes to the device; it is never replaced by a regular file."""
    import stat

    assert run(["rank", *SMALL, "--csv", "/dev/null"]).exit_code == 0
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)


# --------------------------------------------------------------------------- the models' device tables


def table_file(tmp_path: Path, table: str, key: str, value: str) -> Path:
    """The A100 file with ``key = value`` in its ``[table]`` (replaced where the key exists, added
    otherwise; a missing table is added)."""
    text = A100_FILE.read_text()
    if f"[{table}]" in text and re.search(rf"(?m)^{key} = ", text[text.index(f"[{table}]"):]):
        return device_file(tmp_path, {f"{table}.{key}": value})
    text = text.replace(f"[{table}]\n", f"[{table}]\n{key} = {value}\n") if f"[{table}]" in text \
        else text + f"\n[{table}]\n{key} = {value}\n"
    path = tmp_path / "dev.toml"
    path.write_text(text)
    return path


#: (table, key, value as TOML text): each is refused with a line naming the key.
BAD_TABLE_VALUES = [
    *[("interval", key, "0") for key in ("issue_rate", "int_lanes_per_sm", "sfu_lanes_per_sm", "fp64_latency")],
    *[("interval", key, v) for key in ("int_latency", "mshrs") for v in ("1e300", "-1")],
    ("interval", "shared_load_latency", "1e-300"),
    ("interval", "sfu_lanes_per_sm", "[16, 16]"),
    ("interval", "issue_rate", "{ a = 1 }"),
    ("interval", "fp32_latency", '"4"'),
    ("interval", "tensor_cores_per_sm", "4.5"),
    ("interval", "tensor_fma_per_clock_f16", "inf"),
    ("interval", "launch_overhead_part", "1"),  # a device fact: [device], not a model's table
    ("interval", "no_such_key", "1"),
    ("overlap", "overlap_exponent", "0"),
    ("overlap", "overlap_exponent", "1e300"),
    ("overlap", "overlap_exponent", "0.5"),
    ("overlap", "miss_requests_per_cycle", "1e-300"),
    ("overlap", "l2_layer_bytes", "1e300"),  # device facts: the L2's [[memory]] table, [device]
    ("overlap", "latencies_from", '"MI210"'),
    ("power", "constant_w", "-5"),
    ("power", "dram_sector_j", "1"),
    ("power", "family", "[1, 2]"),
]


@pytest.mark.parametrize("table, key, value", BAD_TABLE_VALUES, ids=[f"{t}.{k}={v}" for t, k, v in BAD_TABLE_VALUES])
@pytest.mark.parametrize("command", ["predict", "devices-file"])
def test_model_table_values_out_of_range(tmp_path, table, key, value, command):
    """Each table is checked when the device loads, whatever the model: one line naming the key."""
    path = table_file(tmp_path, table, key, value)
    if command == "devices-file":
        with pytest.raises(DeviceError, match=re.escape(key)) as info:
            ws.load_device(path)
        assert "\n" not in str(info.value) and f"[{table}]" in str(info.value) or "not a name" in str(info.value)
        return
    assert_one_line_error(run(["predict", *SMALL, "--device", str(path)]), key)


@pytest.mark.parametrize("table, key, value", [
    ("interval", "mshrs", "0"), ("interval", "mshrs", "64"), ("overlap", "overlap_exponent", "1"),
    ("overlap", "overlap_exponent", "100"), ("power", "constant_w", "0"),
])
def test_model_table_range_ends_are_allowed(tmp_path, table, key, value):
    assert ws.load_device(table_file(tmp_path, table, key, value)).tables[table][key] == float(value)


@pytest.mark.parametrize("key, value", [("reference_clock_mhz", "100"), ("power_limit_w", "1")])
def test_board_range_ends_are_allowed(tmp_path, key, value):
    assert getattr(ws.load_device(device_file(tmp_path, {key: value})), key) == float(value)


def test_a_power_table_without_the_board_figures_is_an_error(tmp_path):
    """A device with a [power] table but no [device] power_limit_w: predict and dvfs name the key."""
    path = tmp_path / "dev.toml"
    path.write_text("\n".join(line for line in A100_FILE.read_text().splitlines()
                               if not line.startswith("power_limit_w = ")) + "\n")
    assert ws.load_device(path).power_limit_w is None
    assert_one_line_error(run(["dvfs", *SMALL, "--device", str(path)]), "no power_limit_w in [device]")


@pytest.mark.parametrize("keys", [("power_limit_w",), ("power_limit_w", "reference_clock_mhz")])
def test_board_figures_under_power_are_refused_with_where_they_go(tmp_path, keys):
    """The layout of older releases (the power limit and reference clock in ``[power]``): one line
    naming the keys and saying to move them to ``[device]``, from the CLI and the API."""
    lines = A100_FILE.read_text().splitlines()
    moved = [line for line in lines if line.startswith(tuple(f"{k} = " for k in keys))]
    assert len(moved) == len(keys)
    text = "\n".join(line for line in lines if line not in moved).replace("[power]\n", "[power]\n" + "\n".join(moved) + "\n")
    path = tmp_path / "old.toml"
    path.write_text(text + "\n")
    with pytest.raises(DeviceError, match=re.escape(f"[power] {', '.join(keys)}: ")) as info:
        ws.load_device(path)
    assert "move" in str(info.value) and "[device]" in str(info.value) and "\n" not in str(info.value)
    assert_one_line_error(run(["predict", *SMALL, "--device", str(path)]), "to the [device] table")


# --------------------------------------------------------------------------- traces


@pytest.fixture(scope="module")
def trace_document():
    from warpspeed.kernel.builtin import copy_kernel
    from warpspeed.trace import build_trace

    device = ws.load_device("A100-SXM4-40GB")
    kernel = copy_kernel((64, 32, 16))
    return build_trace(ws.Predictor(kernel, device).predict((32, 4, 2), (1, 1, 1))).as_json()


#: (key path, value): each refused with a line naming the path.
BAD_TRACE_NUMBERS = [
    (("launch", "blocks_per_sm"), 10**9),
    (("launch", "blocks_per_sm"), 1e9),
    (("launch", "registers_per_thread"), 10**6),
    (("roofline", "dram_bandwidth_gb_s"), 0),
    (("roofline", "dram_bandwidth_gb_s"), math.nan),
    (("roofline", "lups_per_s"), math.inf),
    (("device", "clock_mhz"), 1e-300),
    (("device", "clock_mhz"), 1e300),
    (("memory", "totals", "dram_load_bytes_per_lup"), math.nan),
    (("memory", "totals", "dram_load_bytes_per_lup"), 1e300),
    (("kernel", "flops", "adds"), -math.inf),
]


@pytest.mark.parametrize("path, value", BAD_TRACE_NUMBERS, ids=[f"{'/'.join(p)}={v}" for p, v in BAD_TRACE_NUMBERS])
def test_trace_numbers_are_finite_and_in_range(trace_document, path, value):
    import copy

    from warpspeed.trace import TraceError, trace_from_json, validate_trace

    document = copy.deepcopy(trace_document)
    node = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    for check in (validate_trace, trace_from_json):
        with pytest.raises(TraceError, match=re.escape("/".join(path))) as info:
            check(document)
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("text, fragment", [
    ('{"a": NaN}', "NaN"), ('{"a": Infinity}', "Infinity"), ('{"a": -Infinity}', "-Infinity"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"), ('{"a": ', "not JSON"),
])
def test_trace_text_refuses_nan_infinity_and_depth(text, fragment):
    from warpspeed.trace import TraceError, parse_trace

    with pytest.raises(TraceError, match=re.escape(fragment)):
        parse_trace(text)


def test_a_built_trace_reads_back(trace_document):
    from warpspeed.trace import parse_trace, trace_from_json

    assert trace_from_json(parse_trace(json.dumps(trace_document))).as_json() == trace_document


@pytest.mark.parametrize("value", ["1e308", "5e-324", "0"])
def test_measurement_resume_checks_rows_as_a_first_read(tmp_path, value):
    """A kept row of a file being resumed passes the checks of a first read (the same one-line error)."""
    from warpspeed.validation.measurement_csv import read_existing, read_measurement_csv
    from warpspeed.validation.plan import MeasurementError

    path = measurement_file(tmp_path, "meas_lups_per_s", value)
    with pytest.raises(MeasurementError) as first:
        read_measurement_csv(path)
    text = path.read_text()
    lines = text.splitlines()
    header_at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    from warpspeed.validation.schema import CSV_COLUMNS

    header = lines[header_at].split(",")
    rows = [dict(zip(header, line.split(","))) for line in lines[header_at + 1:]]
    lines[header_at] = ",".join(CSV_COLUMNS)
    lines[header_at + 1:] = [",".join(r.get(c, "") for c in CSV_COLUMNS) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(MeasurementError) as resumed:
        read_existing(path)
    assert str(first.value).split(": ", 1)[1] == str(resumed.value).split(": ", 1)[1]


# --------------------------------------------------------------------------- environment and Python API


def _cli(args: list[str], env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    """``warpspeed ARGS`` in a fresh interpreter of this source tree (streams and environment real)."""
    import os

    code = "import sys; from warpspeed.cli.main import main; sys.argv[0] = 'warpspeed'; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, timeout=300,
                          env={**os.environ, **(env or {})}, **kwargs)


def test_an_ascii_terminal_gets_the_table_not_a_traceback():
    done = _cli(["rank", *SMALL, "--top", "2"], env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert b"best: block" in done.stdout


@pytest.mark.parametrize("args", [["devices"], ["devices", "--json"], ["rank", *SMALL, "--top", "2"]])
def test_a_closed_standard_output_is_an_error(args):
    import os

    code = "import sys; from warpspeed.cli.main import main; sys.argv[0] = 'warpspeed'; main()"
    done = subprocess.run(f"{sys.executable} -c \"{code}\" {' '.join(args)} >&-", shell=True, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "standard output is closed" in done.stderr


def test_an_unusable_cache_directory_runs_without_it_with_one_warning(tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    done = _cli(["rank", "--kernel", "star2d-r1", "--domain", "64,32", "--top", "1"],
                env={"WARPSPEED_CACHE_DIR": str(blocker)}, text=True)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and warnings[0].startswith("warning: cache directory") and "without the cache" in warnings[0]
    assert blocker.read_text() == "a file where the cache directory should be"


def _four_d_rule():
    ps = pytest.importorskip("pystencils")
    src, dst = ps.fields("src, dst: double[4D]")
    return [ps.Assignment(dst.center, src.center)]


def _deep_sum(depth: int):
    expr = X
    for _ in range(depth):
        expr = sympy.Add(expr, 1, evaluate=False)
    return expr


@pytest.mark.parametrize("make, error, fragment", [
    (lambda: ws.FlopCounts(adds=10**400), KernelError, "adds"),
    (lambda: ws.FlopCounts(divs=1e300), KernelError, "divs"),
    (lambda: ws.load_device("A100-SXM4-40GB").with_level("device", bogus=1), DeviceError, "bogus"),
    (lambda: ws.load_device("A100-SXM4-40GB").with_level("device", bandwidth_gb_s="5000"), DeviceError,
     "bandwidth_gb_s"),
    (lambda: ws.load_device("A100-SXM4-40GB").with_level("device", bandwidth_gb_s=1e300), DeviceError,
     "bandwidth_gb_s"),
    (lambda: ws.load_device("A100-SXM4-40GB").with_level("cu", scope="device"), DeviceError, "scope"),
    (lambda: ws.load("a", _deep_sum(3000)), KernelError, "nested more than"),
    (lambda: __import__("pystencils_plugin.rank", fromlist=["rank"]).rank(_four_d_rule()), KernelError,
     "4 spatial dimensions"),
])
def test_python_api_errors_are_the_projects_own(make, error, fragment):
    with pytest.raises(error, match=fragment) as info:
        make()
    assert "\n" not in str(info.value)


def test_a_deeply_nested_toml_file_is_one_line(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert_one_line_error(run(["predict", *SMALL, "--device", str(path)]), "nested too deeply")
    study = tmp_path / "s.toml"
    study.write_text("kernels = " + "[" * 5000 + "]" * 5000 + "\n")
    assert_one_line_error(run(["study", str(study)]), "nested too deeply")


# --------------------------------------------------------------------------- study size


def test_a_study_counts_its_configurations_without_building_them(tmp_path):
    """count_points equals the number iter_points generates, duplicates of list entries counted once
    (a 2-D domain gets z = 1 blocks: 6 blocks of 32 threads x folding 1x1x1, 2 of them too wide for
    x = 8 ... counted by hand below)."""
    from warpspeed.studies.spec import study_from_dict

    spec = study_from_dict({"kernels": ["copy", "copy"], "devices": ["A100-SXM4-40GB", "H200"],
                            "domains": [[8, 64], [8, 64]], "threads": [32, 32], "foldings": [[1, 1, 1], [1, 2, 1]],
                            "output": "o.csv"}, tmp_path)
    # blocks of 32 threads with z = 1: 32x1, 16x2, 8x4, 4x8, 2x16, 1x32; x <= 2 * 8 = 16 drops 32x1;
    # folding 1x2x1 fits y = 64 as well: 5 blocks x 2 foldings x 2 devices
    assert spec.count_points() == len(spec.points()) == 5 * 2 * 2


def test_a_large_study_is_counted_before_any_point_is_built(tmp_path, monkeypatch):
    """A study has no size cap (rows stream to the output); its size is counted without building a
    point: 5000 domains (64+i) x 64 x 64 and blocks of 64 to 512 threads, z <= 64, none wider than
    twice the domain (128 along y and z, 2 (64 + i) along x)."""
    from itertools import product

    from warpspeed.studies import spec as spec_module
    from warpspeed.studies.spec import load_study

    toml = tmp_path / "s.toml"
    toml.write_text(STUDY.format(kernels='["copy"]', devices='["A100-SXM4-40GB"]')
                    .replace("[[16, 16, 16]]", "[" + ", ".join(f"[{64 + i}, 64, 64]" for i in range(5000)) + "]")
                    .replace("[64]", "[64, 128, 256, 512]").replace("max_block_z = 1", "max_block_z = 64"))
    # (2^a, 2^b, 2^c) with a + b + c = 6..9, 2^a <= 2 nx, 2^b <= 128, 2^c <= 64 (max_block_z)
    expected = sum(1 for i in range(5000) for a, b, c in product(range(10), repeat=3)
                   if 6 <= a + b + c <= 9 and 2**a <= 2 * (64 + i) and b <= 7 and c <= 6)

    def built(*args, **kwargs):
        raise AssertionError("a point was built")

    monkeypatch.setattr(spec_module, "StudyPoint", built)
    assert load_study(toml).count_points() == expected


@pytest.mark.parametrize("terminal", [True, False])
def test_a_study_says_how_many_configurations_it_evaluates(tmp_path, terminal):
    """On a terminal the count comes before the work (standard error); in a log only the summary."""
    import os
    import pty

    toml = tmp_path / "s.toml"
    toml.write_text(STUDY.format(kernels='["copy"]', devices='["A100-SXM4-40GB"]'))
    code = "import sys; from warpspeed.cli.main import main; sys.argv[0] = 'warpspeed'; main()"
    leader, follower = pty.openpty() if terminal else os.pipe()[::-1]
    try:
        done = subprocess.run([sys.executable, "-c", code, "study", str(toml)], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=follower, timeout=300, text=True, env={**os.environ, "COLUMNS": "200"})
        os.close(follower)
        err = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0, err
    # 64 threads, z = 1 (max_block_z): 64x1, 32x2, 16x4, 8x8, 4x16, 2x32, 1x64; x, y <= 32 keeps 5
    assert ("study: 5 configurations" in err.decode()) == terminal
    assert done.stdout.startswith("5 rows in")
    assert (tmp_path / "out.csv").read_text().count("\n") == 1 + 5


@pytest.mark.parametrize("table", ["pipeline", "overlpa", "Power"])
def test_a_table_no_model_reads_is_refused(tmp_path, table):
    path = table_file(tmp_path, table, "issue_rate", "1")
    assert_one_line_error(run(["predict", *SMALL, "--device", str(path)]), f"unknown table(s) [{table}]")


@pytest.mark.parametrize("command", ["dvfs", "predict"])
def test_a_board_that_cannot_run_within_its_power_limit_is_an_error(tmp_path, command):
    """1 W (inside [power]'s documented range) is less than the copy kernel draws at the A100's lowest
    clock (141 MHz): no optimum or throttled clock below the lowest clock is reported."""
    path = device_file(tmp_path, {"power_limit_w": "1"})
    args = [command, *SMALL, "--device", str(path)] + (["--clock-mhz", "1000"] if command == "predict" else [])
    assert_one_line_error(run(args), "even at the lowest clock, 141 MHz")


def test_a_home_that_is_not_a_directory_runs_the_pystencils_kernels(tmp_path):
    """No cache can be made under such a home (neither warpspeed's nor pystencils' own, which
    pystencils needs to be imported): the ranking runs without them, with one warning line."""
    import os

    home = tmp_path / "home"
    home.write_text("not a directory")
    env = {k: v for k, v in os.environ.items()
           if k not in ("WARPSPEED_CACHE_DIR", "XDG_CACHE_HOME", "PYSTENCILS_CACHE_DIR")}
    code = "import sys; from warpspeed.cli.main import main; sys.argv[0] = 'warpspeed'; main()"
    done = subprocess.run([sys.executable, "-c", code, "rank", "--kernel", "star2d-r1", "--domain", "64,32", "--top",
                           "1"], cwd=ROOT, capture_output=True, text=True, timeout=300, env={**env, "HOME": str(home)})
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: cache directory"), done.stderr
    assert home.read_text() == "not a directory"
