"""Every command driven with random numbers, strings and files (Hypothesis).

Whatever the input, a command ends with exit code 0 or 2 and never a traceback; exit code 2
comes with exactly one ``error:`` line on standard error; every JSON it prints parses without
NaN or Infinity and holds only finite numbers. The domains are kept small (a few thousand cells)
and each command gets a few examples, so the file runs in seconds; the expensive paths (pystencils
code generation, worker pools, ``warpspeed validate``) are left out.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from warpspeed.cli.main import main
from tests.paths import ROOT

MEASURED = ROOT / "tests" / "data" / "measured_small.csv"
A100_FILE = ROOT / "warpspeed" / "hardware" / "devices" / "A100-SXM4-40GB.toml"

#: Few examples per command, no deadline (a prediction's time varies), the same examples every run.
FAST = settings(max_examples=20, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# --------------------------------------------------------------------------- strategies

#: Integers as text: mostly small, some zero, negative or huge.
small_int = st.integers(min_value=1, max_value=24)
any_int = st.one_of(small_int, st.integers(-3, 0), st.integers(2**31 - 2, 2**80))
#: Numbers as text as a user might type them, good or bad.
number_text = st.one_of(
    any_int.map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e-9", "1e400", "", " ", "abc", "0x10", "1_000", "１２", "1,5", "--1"]),
)
#: Random text, unicode included (no NUL: it cannot be a command-line argument).
junk = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


@st.composite
def wild_triple(draw, small=small_int):
    """1 to 4 entries joined by a separator, often malformed."""
    entries = draw(st.lists(st.one_of(small.map(str), number_text), min_size=1, max_size=4))
    separator = draw(st.sampled_from([",", "x", ",,", "x,", " "]))
    return separator.join(entries) + draw(st.sampled_from(["", ",", "x"]))


def good_triple(small=small_int):
    """Three positive integers, the form a 3-D kernel takes."""
    return st.tuples(small, small, small).map(lambda t: ",".join(map(str, t)))


#: Kernels that need no code generation (the pystencils workloads are generated, seconds each).
GOOD_KERNELS = st.sampled_from(["copy", "copy", "d3q15-pull"])
GOOD_DEVICES = st.sampled_from(["A100-SXM4-40GB", "A100-SXM4-40GB", "V100-PCIe-32GB", "MI210"])
#: An SM clock inside the A100's range (141 to 1410 MHz; the V100's is 138 to 1380 MHz).
GOOD_CLOCK = st.integers(150, 1380).map(str)


def option(data, valid: bool, good, wild):
    """A value of an option: from ``good`` when the example is a valid one, else from either (so
    that invalid examples mix good and bad options)."""
    return data.draw(good if valid else st.one_of(good, wild))


def json_numbers(value):
    """Every number in a parsed JSON document."""
    if isinstance(value, dict):
        for v in value.values():
            yield from json_numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from json_numbers(v)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield value


def check(args: list[str], json_out: bool = False) -> None:
    """Run ``args``: exit code 0 or 2, no traceback, one error line on 2, finite JSON on 0."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(main, args)
    shown = [w for w in caught if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    assert not shown, (args, [str(w.message) for w in shown])  # a warning would be printed beside the output
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert result.exit_code in (0, 2), (args, result.exit_code, result.output)
    assert "Traceback" not in result.output, (args, result.output)
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
        return
    if json_out:
        def refuse(constant):
            raise AssertionError(f"{constant} in the JSON of {args}")

        doc = json.loads(result.stdout, parse_constant=refuse)
        assert all(math.isfinite(v) for v in json_numbers(doc)), args


# --------------------------------------------------------------------------- commands

#: Whether an example draws only good option values (about half of them, so that the model's
#: whole path and its JSON are exercised, not only the option checks).
VALID = st.booleans()


@FAST
@given(data=st.data(), valid=VALID)
def test_predict(data, valid):
    args = ["predict", "--kernel", option(data, valid, GOOD_KERNELS, junk),
            "--domain", option(data, valid, good_triple(st.integers(1, 20)), wild_triple()),
            "--block", option(data, valid, good_triple(st.sampled_from([1, 2, 4, 8])), wild_triple()),
            "--fold", option(data, valid, good_triple(st.integers(1, 2)), wild_triple()),
            "--device", option(data, valid, GOOD_DEVICES, junk),
            "--model", option(data, valid, st.sampled_from(["roofline", "roofline", "interval", "pipeline"]), junk),
            "--json"]
    clock = option(data, valid, st.one_of(st.none(), GOOD_CLOCK), number_text)
    check(args + (["--clock-mhz", clock] if clock is not None else []), json_out=True)


@FAST
@given(data=st.data(), valid=VALID)
def test_rank(data, valid):
    objective = option(data, valid, st.sampled_from(["time", "energy", "edp"]), junk)
    args = ["rank", "--kernel", option(data, valid, GOOD_KERNELS, junk),
            "--domain", option(data, valid, good_triple(st.integers(2, 16)), wild_triple()),
            "--threads", option(data, valid, st.sampled_from(["8", "16", "32"]), number_text),
            "--top", option(data, valid, st.integers(0, 5).map(str), number_text),
            "--model", option(data, valid, st.sampled_from(["roofline", "interval"]), junk),
            "--objective", objective, "--jobs", "1", "--json"]
    clock = option(data, valid, st.none() if objective == "time" else st.one_of(st.none(), GOOD_CLOCK), number_text)
    check(args + (["--clock-mhz", clock] if clock is not None else []), json_out=True)


@FAST
@given(data=st.data(), valid=VALID)
def test_compare(data, valid):
    check(["compare", "--kernel", "copy",
           "--domain", option(data, valid, good_triple(st.integers(2, 12)), wild_triple()),
           "--threads", option(data, valid, st.sampled_from(["8", "16"]), number_text),
           "--models", option(data, valid, st.sampled_from(["roofline,interval", "interval,roofline"]), junk),
           "--json"], json_out=True)


@FAST
@given(data=st.data(), valid=VALID)
def test_dvfs_and_trace(data, valid):
    common = ["--kernel", option(data, valid, GOOD_KERNELS, junk),
              "--domain", option(data, valid, good_triple(st.integers(1, 16)), wild_triple()),
              "--block", option(data, valid, good_triple(st.sampled_from([1, 2, 4, 8])), wild_triple()),
              "--fold", option(data, valid, good_triple(st.integers(1, 2)), wild_triple()),
              "--device", option(data, valid, GOOD_DEVICES, junk)]
    check(["dvfs", *common, "--json"], json_out=True)
    check(["trace", *common], json_out=True)


@FAST
@given(data=st.data(), valid=VALID)
def test_scan_domain(data, valid):
    good_planes = st.lists(st.integers(16, 128).map(str), min_size=1, max_size=2).map(",".join)
    wild_planes = st.one_of(st.lists(st.integers(-2, 200).map(str), min_size=1, max_size=3).map(",".join),
                            st.tuples(*[st.integers(-2, 300)] * 3).map(lambda t: ":".join(map(str, t))), junk)
    good_blocks = st.one_of(st.none(), st.lists(good_triple(st.sampled_from([2, 4, 8])), min_size=1,
                                                max_size=2).map(";".join))
    wild_blocks = st.lists(wild_triple(st.integers(1, 64)), min_size=1, max_size=2).map(";".join)
    blocks = option(data, valid, good_blocks, wild_blocks)
    check(["scan-domain", "--kernel", "copy", "--planes", option(data, valid, good_planes, wild_planes), "--json"]
          + (["--blocks", blocks] if blocks is not None else []), json_out=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """Bad files every file-reading command is also given: binary, empty, a directory, not there."""
    d = tmp_path_factory.mktemp("files")
    (d / "binary.csv").write_bytes(bytes(range(256)))
    (d / "empty.csv").write_text("")
    (d / "dir.csv").mkdir()
    return d


def bad_file(files: Path):
    return st.sampled_from([str(files / n) for n in ("binary.csv", "empty.csv", "dir.csv", "missing.csv")])


@FAST
@given(data=st.data(), valid=VALID)
def test_fit(files, tmp_path_factory, data, valid):
    good_rows = st.lists(st.tuples(st.floats(0, 3).map(repr), st.floats(0, 1).map(repr)), min_size=3, max_size=8)
    wild_rows = st.lists(st.tuples(number_text, number_text), max_size=6)
    rows = option(data, valid, good_rows, wild_rows)
    path = tmp_path_factory.mktemp("fit") / "points.csv"
    path.write_text("oversubscription,hit_rate\n" + "".join(f"{o},{h}\n" for o, h in rows))
    family = option(data, valid, st.sampled_from([None, "nvidia-ampere", "amd-cdna"]), junk)
    args = ["fit", option(data, valid, st.just(str(path)), bad_file(files)),
            "--curve", option(data, valid, st.sampled_from(["z_layer", "l2_load", "l1_load"]), junk),
            "--out", str(path.parent / "out.toml")]
    check(args + (["--family", family] if family is not None else []))


def measurement_variant(draw, directory: Path, valid: bool) -> str:
    """measured_small.csv; unless ``valid``, with up to three cells replaced by random text and
    sometimes cut after the header."""
    lines = MEASURED.read_text().splitlines()
    header_at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    header = lines[header_at].split(",")
    if not valid:
        for _ in range(draw(st.integers(0, 3))):
            row = draw(st.integers(header_at + 1, len(lines) - 1))
            cells = lines[row].split(",")
            cells[draw(st.integers(0, len(header) - 1))] = draw(st.one_of(number_text, junk)).replace(",", ";")
            lines[row] = ",".join(cells)
        lines = lines[:draw(st.integers(header_at + 1, len(lines)))]
    path = directory / "measured.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@FAST
@given(data=st.data(), valid=VALID)
def test_accuracy(files, tmp_path_factory, data, valid):
    path = measurement_variant(data.draw, tmp_path_factory.mktemp("accuracy"), valid)
    check(["accuracy", option(data, valid, st.just(path), bad_file(files)),
           "--top", option(data, valid, st.integers(1, 8).map(str), number_text), "--json"], json_out=True)


@FAST
@given(data=st.data(), valid=VALID)
def test_refit(files, tmp_path_factory, data, valid):
    directory = tmp_path_factory.mktemp("refit")
    path = measurement_variant(data.draw, directory, valid)
    check(["refit", option(data, valid, st.just(path), bad_file(files)),
           "--family", option(data, valid, st.sampled_from(["nvidia-ampere", "amd-cdna"]), junk),
           "--out", str(directory / "r.toml"),
           "--holdout-every", option(data, valid, st.integers(2, 5).map(str), number_text), "--json"], json_out=True)


@FAST
@given(data=st.data(), valid=VALID)
def test_power_fit(files, tmp_path_factory, data, valid):
    directory = tmp_path_factory.mktemp("power")
    its = option(data, valid, st.just(st.integers(0, 64).map(str)), st.just(number_text))
    clock = option(data, valid, st.just(st.integers(1000, 1740).map(str)), st.just(number_text))
    watts = option(data, valid, st.just(st.integers(150, 350).map(str)), st.just(number_text))
    rows = data.draw(st.lists(st.tuples(its, clock, watts), min_size=3 if valid else 0, max_size=5))
    path = directory / "runs.csv"
    path.write_text("its,clock_mhz,watts\n" + "".join(",".join(r) + "\n" for r in rows))
    family = option(data, valid, st.sampled_from(["mine", "my-family.2"]), st.sampled_from(["../../evil", "a b", ""]))
    check(["power-fit", option(data, valid, st.just(str(path)), bad_file(files)),
           "--device", option(data, valid, st.sampled_from(["A40", "A100-SXM4-40GB"]), junk),
           "--family", family, "--out", str(directory / "f.toml")])
    assert not list(directory.parent.glob("evil.toml")) and not list(directory.parent.parent.glob("evil.toml"))


def toml_value(data, valid: bool, kind: str) -> str:
    """A TOML value for a study key: of the right shape when ``valid``, else sometimes not."""
    names = {"kernels": (["copy", "d3q15-pull"], ["nope", ""]), "devices": (["A100-SXM4-40GB", "MI210"], ["nope"])}
    if kind in names:
        good, bad = names[kind]
        entries = option(data, valid, st.lists(st.sampled_from(good), min_size=1, max_size=2),
                         st.lists(st.one_of(st.sampled_from(good + bad), junk), max_size=2))
    elif kind in ("domains", "foldings"):
        small = st.integers(1, 12) if kind == "domains" else st.integers(1, 2)
        entries = option(data, valid, st.lists(st.lists(small, min_size=2, max_size=3), min_size=1, max_size=2),
                         st.lists(st.lists(st.one_of(small, st.integers(-1, 0), st.integers(2**31, 2**40)),
                                           min_size=1, max_size=4), max_size=2))
    else:
        entries = option(data, valid, st.lists(st.sampled_from([8, 16]), min_size=1, max_size=2),
                         st.lists(st.one_of(st.sampled_from([8, 16, 2048]), st.integers(-2, 40)), max_size=2))
    return json.dumps(entries)


@FAST
@given(data=st.data(), valid=VALID)
def test_study(tmp_path_factory, data, valid):
    directory = tmp_path_factory.mktemp("study")
    keys = ("kernels", "devices", "domains", "threads", "foldings")
    # the output by its full path: a relative one is written in the working directory
    text = ("".join(f"{k} = {toml_value(data, valid, k)}\n" for k in keys)
            + f"max_block_z = 1\noutput = {json.dumps(str(directory / 'out.csv'))}\n")
    study = directory / "study.toml"
    study.write_text(text)
    if not valid and data.draw(st.booleans()):  # a stored output to resume from: a header and a random line
        from warpspeed.studies.storage import COLUMNS

        (directory / "out.csv").write_text(",".join(COLUMNS) + "\n" + data.draw(junk).replace("\n", " ") + "\n")
    jobs = option(data, valid, st.just("1"), st.sampled_from(["0", "-1", "abc", "nan", "", "99999", "1.5"]))
    check(["study", str(study), "--jobs", jobs] + (["--no-resume"] if data.draw(st.booleans()) else []))


#: Domains no command accepts (measure is given one, so that it never starts measuring on a GPU).
BAD_DOMAINS = st.sampled_from(["0,1,1", "64x64x64x", "64,,64", "", "1e9", "-1", "3000000000,1,1", "99999,99999,99999"])


@FAST
@given(data=st.data())
def test_measure(tmp_path_factory, data):
    """Bad options are reported before anything is measured (a bad domain always among them)."""
    out = tmp_path_factory.mktemp("measure") / "m.csv"
    check(["measure", "--kernel", data.draw(st.one_of(GOOD_KERNELS, junk)), "--domain", data.draw(BAD_DOMAINS),
           "--threads", data.draw(st.one_of(st.sampled_from(["32", "64"]), number_text)),
           "--device", data.draw(st.one_of(GOOD_DEVICES, junk)),
           "--no-ncu", "--repeats", "1", "--warmup", "0", "--out", str(out)])
    assert not out.exists()


@FAST
@given(data=st.data())
def test_device_files(tmp_path_factory, data):
    """A device file with one number replaced by a random value."""
    import re

    text = A100_FILE.read_text()
    keys = re.findall(r"(?m)^([a-z0-9_]+) = [0-9]", text)
    key = data.draw(st.sampled_from(keys))
    value = data.draw(st.one_of(any_int.map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr),
                                st.sampled_from(["nan", "inf", "-inf", "0", "-1", "1e308", "1e-308", "3", '"x"'])))
    path = tmp_path_factory.mktemp("device") / "dev.toml"
    path.write_text(re.sub(rf"(?m)^{key} = [^#\n]*", f"{key} = {value} ", text, count=1))
    check(["predict", "--kernel", "copy", "--domain", "16,16,16", "--device", str(path), "--json"], json_out=True)


def test_devices_json_is_finite():
    check(["devices", "--json"], json_out=True)
