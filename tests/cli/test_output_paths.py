"""Files the commands write and read: a missing directory, an unwritable path, a full disk, an
unsupported plot format or an input file that is not text give one ``error:`` line and exit
status 2, before any work is done where that is possible, and never a traceback.

Tests run as root, for whom permission bits do not apply: an unwritable path is a path below a
regular file (``somefile/x.csv``) or the full device ``/dev/full``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main
from tests.paths import DATA

MEASURED = str(DATA / "measured_small.csv")
#: A small ranking (28 blocks x 3 foldings of a 64-cube) for the cases that must compute first.
RANK = ["rank", "--kernel", "star3d-r1", "--domain", "32,32,32", "--threads", "64", "--jobs", "1"]
#: A scan over one plane and one block.
SCAN = ["scan-domain", "--kernel", "star3d-r1", "--planes", "32", "--blocks", "32,4,8"]
#: Bytes that are not UTF-8 (a PNG header).
BINARY = b"\x89PNG\r\n\x1a\n\x00\xff\xfe"


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


@pytest.fixture()
def paths(tmp_path):
    regular = tmp_path / "somefile"
    regular.write_text("not a directory\n")
    binary = tmp_path / "binary.csv"
    binary.write_bytes(BINARY)
    return {"missing": str(tmp_path / "no-such-dir" / "out"), "under_file": str(regular / "out"),
            "binary": str(binary), "dir": tmp_path}


def _one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


@pytest.mark.parametrize("args, suffix", [
    (RANK + ["--csv"], ".csv"), (RANK + ["--plot"], ".png"), (SCAN + ["--plot"], ".png"),
    (["accuracy", MEASURED, "--plot"], ".png"), (["refit", MEASURED, "--family", "nvidia-ampere", "--out"], ".toml"),
])
def test_missing_directory(runner, paths, args, suffix):
    _one_line_error(runner.invoke(main, args + [paths["missing"] + suffix]), "no-such-dir", "does not exist")


@pytest.mark.parametrize("args, suffix", [
    (RANK + ["--csv"], ".csv"), (SCAN + ["--plot"], ".svg"), (["accuracy", MEASURED, "--plot"], ".pdf"),
])
def test_path_below_a_regular_file(runner, paths, args, suffix):
    _one_line_error(runner.invoke(main, args + [paths["under_file"] + suffix]), "somefile", "is not a directory")


def test_fit_output_checked_before_fitting(runner, paths, tmp_path):
    points = tmp_path / "points.csv"
    points.write_text("oversubscription,hit_rate\n0.1,0.9\n0.5,0.6\n1.0,0.3\n2.0,0.1\n")
    # fit creates a missing output directory (like measure); a path below a regular file cannot be made
    result = runner.invoke(main, ["fit", str(points), "--curve", "z_layer", "--out", paths["under_file"] + ".toml"])
    _one_line_error(result, "somefile", "is not a directory")


def test_study_output_directory_missing(runner, paths, tmp_path):
    toml = tmp_path / "s.toml"
    toml.write_text('kernels = ["copy"]\ndevices = ["A100-SXM4-40GB"]\ndomains = [[32, 32, 32]]\n'
                    'threads = [32]\nfoldings = [[1, 1, 1]]\nmax_block_z = 1\noutput = "out.csv"\n')
    _one_line_error(runner.invoke(main, ["study", str(toml), "--output", paths["missing"] + ".csv"]),
                    "does not exist")
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("args", [RANK + ["--plot"], SCAN + ["--plot"], ["accuracy", MEASURED, "--plot"]])
def test_unsupported_plot_format(runner, paths, args):
    _one_line_error(runner.invoke(main, args + [str(paths["dir"] / "plot.txt")]), "'txt'", "png")
    _one_line_error(runner.invoke(main, args + [str(paths["dir"] / "plot")]), "no format suffix")
    assert not (paths["dir"] / "plot.txt").exists()


@pytest.mark.parametrize("args", [
    ["accuracy", "{binary}"], ["refit", "{binary}", "--family", "nvidia-ampere", "--out", "{dir}/o.toml"],
    ["fit", "{binary}", "--curve", "z_layer", "--out", "{dir}/o.toml"], ["study", "{binary}"],
])
def test_input_that_is_not_utf8_text(runner, paths, args):
    argv = [a.format(**paths) for a in args]
    _one_line_error(runner.invoke(main, argv), "binary.csv", "not UTF-8 text")


def test_full_disk_for_an_output_file(runner):
    _one_line_error(runner.invoke(main, RANK + ["--csv", "/dev/full"]), "/dev/full", "the disk is full")


@pytest.mark.parametrize("args", [["devices", "--json"], ["devices"]])  # click.echo, a rich table
def test_full_disk_for_standard_output(args):
    """``warpspeed devices --json > /dev/full``: one error line on stderr, exit status 2, and no
    second complaint from the interpreter's final flush."""
    code = "import sys; from warpspeed.cli.main import main; sys.argv[0] = 'warpspeed'; main()"
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-c", code, *args], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == ["error: cannot write standard output: the disk is full"]


def test_atomic_write_keeps_permissions_and_links(tmp_path):
    """A replaced file keeps its permissions; a symbolic link stays a link to the new content; a
    write that fails leaves the old file and no temporary."""
    import os

    from warpspeed.files.atomic import atomic_output, write_text_atomic

    private = tmp_path / "private.csv"
    private.write_text("old")
    private.chmod(0o600)
    write_text_atomic(private, "new")
    assert private.read_text() == "new" and (private.stat().st_mode & 0o777) == 0o600
    link = tmp_path / "link.csv"
    link.symlink_to(private)
    write_text_atomic(link, "via link")
    assert link.is_symlink() and private.read_text() == "via link"
    with pytest.raises(RuntimeError):
        with atomic_output(private) as handle:
            handle.write("partial")
            raise RuntimeError("failed half-way")
    assert private.read_text() == "via link"
    assert sorted(os.listdir(tmp_path)) == ["link.csv", "private.csv"]
