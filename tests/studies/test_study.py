"""Studies: streaming, interrupt + resume, error rows, row order, Parquet, the CLI.

Row counts and the row order are derived independently (nested loops over exponents), and an
interrupted-then-resumed study must reproduce the uninterrupted file exactly.
"""

from __future__ import annotations

import csv
from dataclasses import replace
from itertools import product
from pathlib import Path

import pytest
from click.testing import CliRunner

import warpspeed.predict
from warpspeed.errors import WarpspeedError
from warpspeed.rank import process_pool
from warpspeed.studies.spec import load_study, study_from_dict
from warpspeed.studies.storage import COLUMNS
from warpspeed.studies.study import run_study
from warpspeed.cli.study import COMMANDS, study as study_command
from tests.paths import ROOT

KERNELS = ["star3d-r1", "copy"]
DEVICES = ["A100-SXM4-40GB", "V100-PCIe-32GB"]
DOMAIN = [32, 32, 32]
THREADS = [64, 2048]  # 2048: more than the 1024 threads per block any device here allows
FOLDS = [[1, 1, 1], [1, 2, 1]]
MAX_Z = 2
INTERRUPT_AFTER = 37

SPEC = {"kernels": KERNELS, "devices": DEVICES, "domains": [DOMAIN], "threads": THREADS,
        "foldings": FOLDS, "max_block_z": MAX_Z}


def _blocks(threads: int) -> list[tuple[int, int, int]]:
    """Power-of-two blocks of ``threads`` with z <= MAX_Z and no extent above twice the
    domain's (32 cells: at most 64), by brute force over exponents."""
    return sorted((2**a, 2**b, 2**c) for a, b, c in product(range(12), repeat=3)
                  if 2**(a + b + c) == threads and 2**c <= MAX_Z and max(2**a, 2**b, 2**c) <= 2 * 32)


def _expected_keys() -> list[str]:
    keys = []
    for k in KERNELS:
        for d in DEVICES:
            for t in THREADS:
                for b in _blocks(t):
                    for f in FOLDS:
                        keys.append("|".join([k, d, "x".join(map(str, DOMAIN)), "x".join(map(str, b)),
                                              "x".join(map(str, f))]))
    return keys


def _spec(directory: Path, output: str, **extra):
    return study_from_dict({**SPEC, "output": output, **extra}, directory)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


class _StopAfter:
    """Progress callback raising KeyboardInterrupt once ``n`` rows were written in this run."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.start: int | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.start is None:
            self.start = done
        if done - self.start >= self.n:
            raise KeyboardInterrupt


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The uninterrupted serial study."""
    spec = _spec(tmp_path_factory.mktemp("ref"), "ref.csv")
    result = run_study(spec)
    assert result.rows == result.computed == len(_expected_keys())
    return spec.output


def test_row_count_and_order(reference):
    # 64 threads, z <= 2: a + b + c = 6, c <= 1: 7 + 6 = 13 (none wider than 64); 2048 threads
    # with x, y <= 64 (a, b <= 6): c = 0: a + b = 11 -> 2; c = 1: a + b = 10 -> 3; 5 in all.
    assert len(_blocks(64)) == 13 and len(_blocks(2048)) == 5
    rows = _rows(reference)
    assert len(rows) == len(KERNELS) * len(DEVICES) * (13 + 5) * len(FOLDS)
    assert [r["key"] for r in rows] == _expected_keys()
    assert list(rows[0]) == list(COLUMNS)


def test_failed_rows_carry_their_error(reference):
    rows = _rows(reference)
    too_big = [r for r in rows if r["threads"] == "2048"]
    assert len(too_big) == 2 * len(DEVICES) * 5 * len(FOLDS)
    assert all("2048 threads" in r["error"] and "1024" in r["error"] for r in too_big)
    assert all(r["lups_per_s"] == "" and r["limiter"] == "" for r in too_big)
    ok = [r for r in rows if not r["error"]]
    assert len(ok) == 2 * len(DEVICES) * 13 * len(FOLDS)
    assert all(float(r["lups_per_s"]) > 0 and r["limiter"] in ("fp", "l1", "l2", "dram") for r in ok)
    # The limiter is the smallest of the four limits.
    for r in ok:
        limits = {name: float(r[f"{name}_lups_per_s"]) for name in ("fp", "l1", "l2", "dram")}
        assert float(r["lups_per_s"]) == min(limits.values()) == limits[r["limiter"]]


def test_interrupt_leaves_no_output_a_whole_journal_and_resume_completes(tmp_path, reference, monkeypatch):
    spec = _spec(tmp_path, "study.csv")
    with pytest.raises(KeyboardInterrupt):
        run_study(spec, progress=_StopAfter(INTERRUPT_AFTER))
    assert not spec.output.exists()  # the output is whole or absent
    assert sorted(p.name for p in tmp_path.iterdir()) == [spec.journal_path.name]  # no temporary left
    text = spec.journal_path.read_text()
    assert text.endswith("\n")
    partial = _rows(spec.journal_path)
    assert len(partial) == INTERRUPT_AFTER
    assert all(None not in r and len(r) == len(COLUMNS) for r in partial)
    assert [r["key"] for r in partial] == _expected_keys()[:INTERRUPT_AFTER]  # serial: study order

    # Resuming predicts exactly the configurations not yet in the file.
    calls = []
    original = warpspeed.predict.Predictor.predict

    def counting(self, block, fold=(1, 1, 1)):
        calls.append((tuple(block), tuple(fold)))
        return original(self, block, fold)

    monkeypatch.setattr(warpspeed.predict.Predictor, "predict", counting)
    result = run_study(spec)
    assert result.resumed == INTERRUPT_AFTER and result.computed == result.rows - INTERRUPT_AFTER
    finished_keys = {r["key"] for r in partial}
    finished_ok = [r for r in partial if not r["error"]]
    assert len(calls) == sum(1 for r in _rows(reference) if r["key"] not in finished_keys)
    assert finished_ok  # the interrupted part did include predictable rows
    assert spec.output.read_text() == reference.read_text()
    assert not spec.journal_path.exists()
    # A second resume has nothing left to do.
    again = run_study(spec)
    assert again.computed == 0 and again.resumed == again.rows
    assert spec.output.read_text() == reference.read_text()


@pytest.mark.slow
def test_interrupted_process_pool_resumes_serially(tmp_path, reference):
    spec = _spec(tmp_path, "pool.csv")
    with process_pool(2) as pool, pytest.raises(KeyboardInterrupt):
        run_study(spec, executor=pool, progress=_StopAfter(INTERRUPT_AFTER), chunk_size=5)
    assert not spec.output.exists()
    partial = _rows(spec.journal_path)
    assert len(partial) == INTERRUPT_AFTER
    assert set(r["key"] for r in partial) <= set(_expected_keys())
    run_study(spec)
    assert spec.output.read_text() == reference.read_text()


@pytest.mark.parametrize("where", ["journal", "output"])
def test_hard_kill_mid_line_is_discarded(tmp_path, reference, where):
    """A journal cut by a hard kill, or a partial CSV output as earlier versions left one."""
    spec = _spec(tmp_path, "killed.csv")
    lines = reference.read_text().splitlines(keepends=True)
    keep = len(lines) - 5  # the header and all rows but the last 5 (cheap error rows)
    cut = "".join(lines[:keep]) + lines[keep][:25]  # ... and a cut line
    (spec.journal_path if where == "journal" else spec.output).write_text(cut)
    result = run_study(spec)
    assert result.resumed == keep - 1 and result.computed == 5
    assert spec.output.read_text() == reference.read_text()
    assert not spec.journal_path.exists()


def test_no_resume_recomputes_and_stale_rows_are_dropped(tmp_path, reference):
    spec = replace(_spec(tmp_path, "again.csv"), kernels=("copy",))
    spec.output.write_text(reference.read_text())
    result = run_study(spec)
    assert result.computed == 0 and result.dropped == len(_expected_keys()) - result.rows
    copy_keys = [k for k in _expected_keys() if k.startswith("copy|")]
    assert [r["key"] for r in _rows(spec.output)] == copy_keys
    assert run_study(spec, resume=False).computed == len(copy_keys)
    assert spec.output.read_text().splitlines()[1:] == [
        line for line in reference.read_text().splitlines() if line.startswith("copy|")]


def test_foreign_file_is_not_overwritten(tmp_path):
    spec = _spec(tmp_path, "foreign.csv")
    spec.output.write_text("a,b\n1,2\n")
    for resume in (True, False):
        with pytest.raises(WarpspeedError, match="not the output of a warpspeed study"):
            run_study(spec, resume=resume)
    assert spec.output.read_text() == "a,b\n1,2\n"


def test_parquet_output(tmp_path, reference):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    spec = _spec(tmp_path, "study.parquet")
    assert spec.format == "parquet"
    with pytest.raises(KeyboardInterrupt):
        run_study(spec, progress=_StopAfter(INTERRUPT_AFTER))
    assert not spec.output.exists()  # whole or absent
    assert len(_rows(spec.journal_path)) == INTERRUPT_AFTER
    run_study(spec)
    assert not spec.journal_path.exists()
    got = pd.read_parquet(spec.output)
    want = pd.read_csv(reference, keep_default_na=False, na_values={c: [""] for c in COLUMNS if c != "error"})
    assert list(got.columns) == list(COLUMNS)
    got["error"] = got["error"].fillna("")
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    # Extending a finished Parquet study resumes from the Parquet file itself.
    wider = replace(spec, kernels=spec.kernels + ("star2d-r1",))  # a 2-D kernel on a 3-D domain: error rows
    result = run_study(wider)
    assert result.resumed == len(want) and result.rows == len(want) * 3 // 2


def test_spec_validation(tmp_path):
    with pytest.raises(WarpspeedError, match="unknown key"):
        study_from_dict({**SPEC, "output": "x.csv", "kernel": ["copy"]}, tmp_path)
    with pytest.raises(WarpspeedError, match="power"):
        study_from_dict({**SPEC, "output": "x.csv", "threads": [96]}, tmp_path)
    with pytest.raises(WarpspeedError, match="format"):
        study_from_dict({**SPEC, "output": "x.csv", "format": "xlsx"}, tmp_path)
    with pytest.raises(WarpspeedError, match="output"):
        study_from_dict(SPEC, tmp_path)


def test_example_study_loads(tmp_path, monkeypatch):
    # the output is written in the working directory, never beside the study file (examples/)
    monkeypatch.chdir(tmp_path)
    spec = load_study(ROOT / "examples" / "study.toml")
    assert len(spec.kernels) == len(spec.devices) == len(spec.domains) == 2
    assert spec.output == tmp_path / "study-results.csv"


def test_cli(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative output is written in the working directory
    assert COMMANDS == [study_command]
    toml = tmp_path / "s.toml"
    toml.write_text('kernels = ["copy", "star2d-r1"]\ndevices = ["A100-SXM4-40GB"]\ndomains = [[32, 32, 32]]\n'
                    'threads = [32]\nfoldings = [[1, 1, 1]]\nmax_block_z = 1\noutput = "out.csv"\n')
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(study_command, [str(toml)])
    assert result.exit_code == 0, result.output
    # 32 threads, z = 1: blocks (2^a, 2^(5-a), 1), a = 5..0, for each of the two kernels.
    blocks = [(2**a, 2**(5 - a), 1) for a in range(5, -1, -1)]
    rows = _rows(out)
    assert [r["key"] for r in rows] == [f"{k}|A100-SXM4-40GB|32x32x32|{'x'.join(map(str, b))}|1x1x1"
                                        for k in ("copy", "star2d-r1") for b in sorted(blocks)]
    copy, flat = rows[:6], rows[6:]
    assert all(r["error"] == "" and float(r["lups_per_s"]) > 0 and r["limiter"] in ("fp", "l1", "l2", "dram")
               for r in copy)
    assert all("2 positive integers" in r["error"] and r["lups_per_s"] == "" for r in flat)  # 2-D kernel, 3-D domain
    assert f"12 rows in {out} (12 computed, 0 resumed)." in result.output
    assert "6 configuration(s) could not be predicted" in result.output
    again = CliRunner().invoke(study_command, [str(toml)])
    assert again.exit_code == 0 and f"12 rows in {out} (0 computed, 12 resumed)." in again.output
    assert _rows(out) == rows
    bad = CliRunner().invoke(study_command, [str(toml), "--jobs", "2", "--dask", "tcp://localhost:1"])
    assert bad.exit_code != 0 and "exclusive" in bad.output


@pytest.mark.parametrize("text", [",".join(COLUMNS)[:17], "key", "my notes without a newline"])
def test_part_of_a_header_is_foreign_and_kept(tmp_path, text):
    """The journal's header is written whole (one writer, renamed into place), so a kill never
    leaves a part of one: a file holding a part of a header (a user's 3-byte file ``key``) is not a
    study's output and is left as it is."""
    foreign = _spec(tmp_path, "notes.csv", kernels=["copy"], threads=[2048])
    foreign.output.write_text(text)
    with pytest.raises(WarpspeedError, match="not the output of a warpspeed study"):
        run_study(foreign)
    assert foreign.output.read_text() == text


def test_fresh_journal_header_is_written_whole(tmp_path):
    """A new journal appears with its whole header line (never an empty or partial file)."""
    from warpspeed.studies.storage import Journal

    journal = Journal(tmp_path / "j.csv", COLUMNS)
    journal.close()
    assert (tmp_path / "j.csv").read_text() == ",".join(COLUMNS) + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.csv"]


def test_cli_bad_study_file_is_one_line_error(tmp_path):
    from warpspeed.cli.main import main

    toml = tmp_path / "bad.toml"
    toml.write_text('kernels = ["copy"]\nkernel = ["typo"]\n')
    result = CliRunner().invoke(main, ["study", str(toml)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: study: unknown key(s) kernel; allowed: devices, domains, foldings, format, kernels, max_block_z, "
        "models, objective, output, threads"]
