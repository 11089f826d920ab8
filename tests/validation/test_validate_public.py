"""``warpspeed validate``: the model against the stored public measurements, within stated bounds.

The measured values come from the stored gpu-benches files (te42kyfo/gpu-benches); the bounds are
the named constants of :mod:`warpspeed.validation.public`. The committed ``docs/accuracy.md`` must
be what the command writes now.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main
from warpspeed.errors import FitError, WarpspeedError
from warpspeed.validation import public
from warpspeed.validation.public import DatasetAccuracy, PointError, public_accuracy, source_of
from warpspeed.validation.public_report import DOCS_PATH, accuracy_markdown
from warpspeed.validation import kernel_transfer, real_gpu
from tests.paths import ROOT

#: Slow (tens of seconds on 2 cores): run by `pytest -m slow` and in CI.
pytestmark = pytest.mark.slow

PUBLIC = ROOT / "fits" / "data" / "public"


@pytest.fixture(scope="module")
def datasets() -> tuple[DatasetAccuracy, ...]:
    return public_accuracy()


@pytest.fixture(scope="module")
def real():
    """The real GPU's comparison (the pystencils workloads; ptxas register counts where nvcc is
    installed, as for the committed page)."""
    pytest.importorskip("pystencils")
    return real_gpu.real_gpu_accuracy()


@pytest.fixture(scope="module")
def kernels():
    """The kernels the model was not fitted on (the pystencils workloads)."""
    pytest.importorskip("pystencils")
    return kernel_transfer.kernel_transfer()


def _data_rows(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines))


def test_every_dataset_within_its_stated_bound(datasets):
    out = [f"{d.name}: MAPE {d.mape_percent:.2f} % (bound {d.mape_bound_percent}), worst "
           f"{d.worst.error_percent:+.2f} % at {d.worst.label} (bound {d.worst_bound_percent})"
           for d in datasets if not d.within_bounds]
    assert not out, "\n".join(out)


def test_committed_accuracy_page_is_what_validate_writes(datasets, real, kernels):
    committed = (ROOT / DOCS_PATH).read_text()
    assert committed == accuracy_markdown(datasets, real, kernels), \
        "docs/accuracy.md is stale: run `warpspeed validate --write-docs` in the repository root"


def test_committed_figures_are_what_validate_writes(datasets, real, kernels):
    from warpspeed.validation.figures import REPO_PATH, figures_document, figures_text, update_readme

    doc = figures_document(datasets, real, kernels)
    assert (ROOT / REPO_PATH).read_text() == figures_text(doc), \
        f"{REPO_PATH} is stale: run `warpspeed validate --write-docs` in the repository root"
    from warpspeed.validation.figures import GENERATED_PAGES

    for page in GENERATED_PAGES:
        text = (ROOT / page).read_text()
        assert update_readme(text, doc) == text, f"{page}'s accuracy blocks are stale: run `warpspeed validate --write-docs`"


def test_every_stored_row_is_compared(datasets):
    # point counts from the stored files, read here with the csv module
    by_name = {d.name: d for d in datasets}
    strides = _data_rows(PUBLIC / "gpu-strides" / "a100.csv")
    assert len(strides) == 144
    for name in ("A100 cycles per warp load", "A100 data-pipe wavefronts per warp load",
                 "A100 tag-stage wavefronts per warp load"):
        assert len(by_name[name].points) == len(strides)
    stream_files = sorted((PUBLIC / "gpu-stream").glob("*.csv"))
    stream = [d for d in datasets if d.group == "DRAM"]
    assert len(stream) == 2 * len(stream_files)  # fitted and not-fitted kernels per measured part
    for f in stream_files:
        rows = _data_rows(f)
        mixed = [k for k in ("scale", "triad", "stencil1d3pt") if k in rows[0]]
        n = sum(len(d.points) for d in stream if d.sources == (source_of(f.read_text()),))
        assert n == len(rows) * len(mixed), f.name


def test_measured_values_are_the_stored_ones(datasets):
    by_name = {d.name: d for d in datasets}
    rows = _data_rows(PUBLIC / "gpu-strides" / "a100.csv")
    cycles = by_name["A100 cycles per warp load"].points
    assert [p.measured for p in cycles] == [float(r["cycles"]) for r in rows]
    data_pipe = by_name["A100 data-pipe wavefronts per warp load"].points
    assert [p.measured for p in data_pipe] == [float(r["data_pipe_wavefronts"]) for r in rows]
    # the measured stream bandwidths of the V100 stencil1d3pt column, in file order
    v100 = _data_rows(PUBLIC / "gpu-stream" / "v100.csv")
    fitted = by_name["V100-PCIe-32GB stream stencil1d3pt (fitted)"].points
    assert [p.measured for p in fitted] == [float(r["stencil1d3pt"]) for r in v100]


def test_data_pipe_counter_by_hand(datasets):
    # float stride 1: 32 consecutive 4 B words in 32 banks -> 1 wavefront; float stride 2: two words
    # per bank -> 2; double stride 0: all lanes one 8 B word, half-warp groups -> 2 (measured 2.00)
    by_label = {p.label: p for p in next(d for d in datasets if "data-pipe" in d.name).points}
    assert by_label["float, stride 1"].predicted == pytest.approx(1.0)
    assert by_label["float, stride 2"].predicted == pytest.approx(2.0)
    assert by_label["float, stride 32"].predicted == pytest.approx(32.0)


def test_mape_and_worst_by_hand():
    d = DatasetAccuracy("L1", "toy", "cycles", (PointError("a", 11.0, 10.0), PointError("b", 19.0, 20.0)),
                        (("gpu-strides/a100.txt", "0" * 40),), "two points", 8.0, 10.0)
    assert d.mape_percent == pytest.approx((10.0 + 5.0) / 2)
    assert d.worst.label == "a" and d.worst.error_percent == pytest.approx(10.0)
    assert d.within_bounds
    tight = DatasetAccuracy(*[getattr(d, f) for f in ("group", "name", "unit", "points", "sources", "note")],
                            7.0, 10.0)
    assert not tight.within_bounds  # MAPE 7.5 > 7


def test_source_line_names_path_and_commit():
    commit = "3088b3337998d1d9fff53c7af665f587af83a178"
    line = f"https://github.com/te42kyfo/gpu-benches (Dominik Ernst), file gpu-l2-cache/h200.txt, commit {commit}; x"
    assert source_of(line) == ("gpu-l2-cache/h200.txt", commit)
    with pytest.raises(FitError, match="commit"):
        source_of("measured somewhere")


def test_page_names_every_source_and_the_held_out_files(datasets, real):
    page = accuracy_markdown(datasets, real)
    for f in sorted(PUBLIC.glob("gpu-stream/*.csv")) + sorted(PUBLIC.glob("gpu-l2-cache/*.csv")):
        path, commit = source_of(f.read_text())
        assert f"path `{path}`, commit `{commit}`" in page, f.name
    assert "generated by `warpspeed validate`" in page
    assert re.search(r"H200 and A40, the double rows of the MI210", page) and "gpu-roofline" in page
    assert "not opened" in page
    # the MI210's float gpu-strides rows are used, and named with their file and commit
    header = " ".join(line.lstrip("# ") for line in (PUBLIC / "gpu-strides" / "mi210-float.csv").read_text().splitlines()
                      if line.startswith("#"))
    path, commit = source_of(header)
    assert f"path `{path}`, commit `{commit}`" in page


def test_cli_writes_page_and_json(tmp_path, monkeypatch, datasets, real, kernels):
    monkeypatch.setattr(public, "public_accuracy", lambda: datasets)
    monkeypatch.setattr(real_gpu, "real_gpu_accuracy", lambda: real)
    monkeypatch.setattr(kernel_transfer, "kernel_transfer", lambda: kernels)
    out = tmp_path / "sub" / "acc.md"
    result = CliRunner().invoke(main, ["validate", "--json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == accuracy_markdown(datasets, real, kernels)
    doc = json.loads(result.stdout)  # "wrote ..." goes to stderr
    records = doc["datasets"]
    assert doc["real_gpu"]["within_criteria"] is True
    assert [m["model"] for m in doc["real_gpu"]["models"]] == [m.model for m in real.models]
    assert [r["dataset"] for r in records] == [d.name for d in datasets]
    assert [k["kernel"] for k in doc["kernel_transfer"]["kernels"]] == [k.name for k in kernels.kernels]
    assert all(re.fullmatch(r"[0-9a-f]{40}", s["commit"]) for r in records for s in r["sources"])


def test_cli_exits_1_when_a_bound_is_exceeded(monkeypatch):
    bad = DatasetAccuracy("L2", "toy", "MiB", (PointError("x", 2.0, 1.0),), (("p", "0" * 40),), "one point",
                          1.0, 1.0)
    monkeypatch.setattr(public, "public_accuracy", lambda: (bad,))
    monkeypatch.setattr(real_gpu, "real_gpu_accuracy", lambda: (_ for _ in ()).throw(WarpspeedError("skipped")))
    monkeypatch.setattr(kernel_transfer, "kernel_transfer", lambda: (_ for _ in ()).throw(WarpspeedError("skipped")))
    result = CliRunner().invoke(main, ["validate"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "NO" in result.output


def test_readme_quotes_the_current_headline_numbers(datasets):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Accuracy"):readme.index("## How the model works")]
    by_name = {d.name: d for d in datasets}
    assert f"MAPE {by_name['A100 cycles per warp load'].mape_percent:.1f} %" in section
    assert f"MAPE {by_name['A100 tag-stage wavefronts per warp load'].mape_percent:.1f} %" in section
    assert by_name["A100 data-pipe wavefronts per warp load"].mape_percent == 0.0
    for kind in ("(fitted)", "(not fitted)"):
        mapes = [d.mape_percent for d in datasets if d.group == "DRAM" and d.name.endswith(kind)]
        assert f"MAPE {min(mapes):.1f}–{max(mapes):.1f} % per device" in section, kind
    capacity = by_name["effective L2 capacity: device file vs measured onset"]
    assert f"MAPE {capacity.mape_percent:.1f} %" in section
    assert "docs/accuracy.md" in section and "not opened" in section
