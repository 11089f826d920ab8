"""The stored BabelStream runs (fits/data/public/babelstream/) are read as printed, in GB/s."""

from __future__ import annotations

import pytest

from warpspeed.errors import FitError
from warpspeed.measured import babelstream
from warpspeed.measured.babelstream import KERNEL_STREAMS, load_babelstream


def test_mi300a_run_as_printed():
    # the printed MBytes/sec of tests/run_BabelStream.sh @ aaaa72d4 (amd/HPCTrainingExamples) / 1000 (MB/s to GB/s)
    run = load_babelstream("mi300a")
    assert run.bandwidth_gb_s == pytest.approx({"copy": 3859.021370, "mul": 3789.464147, "add": 3719.009286,
                                                "triad": 3787.553768, "dot": 3105.050025})
    assert run.peak_gb_s == 5300.0
    assert "amd/HPCTrainingExamples" in run.source and "aaaa72d4dca9a9c3587be883deaf2d0f109fcbfb" in run.source


def test_kernel_streams():
    # BabelStream's kernels: copy c = a, mul b = s c (1 read + 1 write), add c = a + b, triad a = b + s c
    # (2 reads + 1 write), dot sum a b (2 reads)
    assert KERNEL_STREAMS == {"copy": 2, "mul": 2, "add": 3, "triad": 3, "dot": 2}


def test_missing_part_names_the_folder():
    with pytest.raises(FitError, match="no BabelStream run stored for part 'nope'"):
        load_babelstream("nope")


def test_malformed_run_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "public" / "babelstream"
    folder.mkdir(parents=True)
    header = "# source: x\n# part: y\n# units: MB/s\n# peak_gb_s: 100\n"
    (folder / "two.csv").write_text(header + "copy,mul\n1,2\n3,4\n")
    (folder / "odd.csv").write_text(header + "copy,stencil\n1,2\n")
    (folder / "nopeak.csv").write_text(header.replace("peak_gb_s: 100", "peak_gb_s: n/a") + "copy\n1\n")
    monkeypatch.setattr(babelstream, "stored_file", lambda *parts: tmp_path.joinpath(*parts))
    with pytest.raises(FitError, match="expected one row"):
        load_babelstream("two")
    with pytest.raises(FitError, match="got columns copy, stencil"):
        load_babelstream("odd")
    with pytest.raises(FitError, match="does not start with a number"):
        load_babelstream("nopeak")
