"""Two outputs of one command on one file are refused before any work (the second would replace
the first), also when one path is a link to the other; devices such as /dev/null may take several."""

from __future__ import annotations

from click.testing import CliRunner

from warpspeed.cli.main import main

RANK = ["rank", "--kernel", "copy", "--domain", "64,64,64", "--threads", "64", "--jobs", "1"]


def _one_error(result, *fragments):
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def test_csv_and_traces_on_one_path_are_refused(tmp_path):
    out = tmp_path / "x.csv"
    _one_error(CliRunner().invoke(main, RANK + ["--csv", str(out), "--traces", str(out)]),
               "same file as another output", "x.csv")
    assert not out.exists()


def test_a_link_to_another_output_is_the_same_file(tmp_path):
    out = tmp_path / "x.csv"
    link = tmp_path / "link.csv"
    link.symlink_to(out)
    _one_error(CliRunner().invoke(main, RANK + ["--csv", str(out), "--traces", str(link)]), "same file")


def test_dev_null_may_take_several_outputs():
    result = CliRunner().invoke(main, RANK + ["--csv", "/dev/null", "--traces", "/dev/null"])
    assert result.exit_code == 0, result.output
