"""The headline accuracy figures: one generated file, every copy rendered from it.

``warpspeed validate --write-docs`` writes ``warpspeed/validation/accuracy_figures.json``, the
README's generated blocks and ``docs/accuracy.md``; each time model's ``--help`` quotes the file.
These fast tests check that every copy agrees with the committed file, reading the figures back
out of the Markdown and the help text with their own patterns (the slow test in
``test_validate_public.py`` regenerates the file itself).
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main
from warpspeed.validation import figures
from tests.paths import ROOT

FIGURES = json.loads((ROOT / figures.REPO_PATH).read_text())


def _docs_real_gpu_rows() -> dict[str, tuple[str, str, str, str]]:
    """model -> (MAPE, median, Spearman, best share) from docs/accuracy.md's real-GPU table."""
    text = (ROOT / "docs" / "accuracy.md").read_text()
    section = text[text.index("## Real GPU"):text.index("## Kernels the model")]
    out = {}
    for line in section.splitlines():
        m = re.match(r"\| (overlap|roofline|interval|pipeline) \| ([\d.]+) % \| ([\d.]+) \(.*?\) \| ([\d.]+) \| .*? \| "
                     r"([\d.]+) % \|", line)
        if m:
            out[m.group(1)] = m.group(2, 3, 4, 5)
    return out


def test_the_file_is_the_installed_one():
    assert figures.load_figures() == FIGURES
    assert set(FIGURES["real_gpu"]["models"]) == {"overlap", "roofline", "interval", "pipeline"}


def test_docs_accuracy_page_agrees_with_the_file():
    rows = _docs_real_gpu_rows()
    assert set(rows) == set(FIGURES["real_gpu"]["models"])
    for model, (mape, median, rho, share) in rows.items():
        f = FIGURES["real_gpu"]["models"][model]
        assert (float(mape), float(median), float(rho), float(share)) == \
            (f["mape_percent"], f["median_ratio"], f["spearman"], f["best_share_percent"]), model


def test_readme_tables_agree_with_the_file():
    readme = (ROOT / "README.md").read_text()
    assert figures.update_readme(readme, FIGURES) == readme, \
        "README's accuracy blocks are stale: run `warpspeed validate --write-docs` in the repository root"
    # read back with an independent pattern: the README table's rows
    for model, f in FIGURES["real_gpu"]["models"].items():
        m = re.search(rf"\| {model}[^|]*\| ([\d.]+) % \| ([\d.]+) \| ([\d.]+) \|", readme)
        assert m and (float(m.group(1)), float(m.group(2)), float(m.group(3))) == \
            (f["mape_percent"], f["median_ratio"], f["spearman"]), model
    for name, k in FIGURES["kernels"].items():
        assert f"{k['left_out_mape_percent']:.1f} % ({name})" in readme


@pytest.mark.parametrize("page", figures.GENERATED_PAGES)
def test_every_generated_page_agrees_with_the_file(page):
    text = (ROOT / page).read_text()
    assert "<!-- generated: " in text
    assert figures.update_readme(text, FIGURES) == text, f"{page} is stale: run `warpspeed validate --write-docs`"


def test_compare_table_agrees_with_accuracy_page():
    # docs/compare.md's MAPE per model and dataset against docs/accuracy.md's summary rows
    summary = {}
    for line in (ROOT / "docs" / "accuracy.md").read_text().splitlines():
        m = re.match(r"\| Time models \| (\w+): (.*?) \| \d+ \| ([\d.]+) \|", line)
        if m:
            summary[(m.group(2), m.group(1))] = float(m.group(3))
    compare = (ROOT / "docs" / "compare.md").read_text()
    block = compare[compare.index("<!-- generated: compare-public -->"):]
    block = block[:block.index("<!-- end generated -->")]
    checked = 0
    for line in block.splitlines()[3:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for model, cell in zip(("overlap", "roofline", "interval", "pipeline"), cells[2:]):
            if cell != "—":
                assert abs(float(cell) - summary[(cells[1], model)]) <= 0.051, (cells[1], model)  # 2 vs 1 decimals
                checked += 1
    assert checked == len(summary)


def test_no_stale_real_gpu_figure_in_readme():
    # every "N % (MAPE)" / "N % MAPE" the README states about the H200 timings is one of the file's
    readme = (ROOT / "README.md").read_text()
    known = {f"{m['mape_percent']:.1f}" for m in FIGURES["real_gpu"]["models"].values()}
    quoted = set(re.findall(r"within ([\d.]+) % \(MAPE\) of the \d+ timed", readme))
    assert quoted and quoted <= known


@pytest.mark.parametrize("command", ["rank", "predict", "compare"])
def test_help_quotes_the_files_figures(command):
    out = CliRunner().invoke(main, [command, "--help"], terminal_width=400).output
    text = " ".join(out.split())
    for model, f in FIGURES["real_gpu"]["models"].items():
        assert re.search(rf"{model}: .*?timed on an H200 {f['mape_percent']:.1f} % MAPE", text), (command, model)
    # no figure the file does not hold: every "N % MAPE" of the help is the file's
    stated = set(re.findall(r"H200 ([\d.]+) % MAPE", text))
    assert stated == {f"{m['mape_percent']:.1f}" for m in FIGURES["real_gpu"]["models"].values()}


def test_figures_document_by_hand():
    def model(name, ratios, share):
        pts = tuple((((32, 1, 1), (1, 1, 1)), r, 1.0) for r in ratios)
        return SimpleNamespace(model=name, points=pts, mape_percent=100 * sum(abs(r - 1) for r in ratios) / len(ratios),
                               median_ratio=sorted(ratios)[1], spearman=0.5, best_share=share)

    real = SimpleNamespace(kernel="k", device="GPU", registers="ptxas",
                           models=(model("overlap", [0.9, 1.0, 1.2], 0.97), model("roofline", [1.5, 1.2, 1.3], 0.88)))
    ds = [SimpleNamespace(group="Time models", name="overlap: gpu-stream scale, A", mape_percent=2.04),
          SimpleNamespace(group="Time models", name="overlap: gpu-stream scale, B", mape_percent=7.26),
          SimpleNamespace(group="Time models", name="roofline: gpu-small-kernels, A", mape_percent=60.0),
          SimpleNamespace(group="DRAM", name="overlap: gpu-stream scale, C", mape_percent=99.0)]
    doc = figures.figures_document(ds, real, None)
    # overlap: |0.9-1| + 0 + |1.2-1| = 0.3 over 3 -> 10.0 %; roofline: 0.5 + 0.2 + 0.3 -> 33.3 %
    assert doc["real_gpu"]["models"]["overlap"]["mape_percent"] == 10.0
    assert doc["real_gpu"]["models"]["roofline"]["mape_percent"] == 33.3
    assert doc["real_gpu"]["models"]["roofline"]["median_ratio"] == 1.3
    assert doc["public_models"] == {"overlap": {"stream": [2.0, 7.3]}, "roofline": {"small": [60.0, 60.0]}}
    help_text = figures.model_help("overlap", doc)
    assert "10.0 % MAPE" in help_text and "2.0-7.3 % on streaming kernels" in help_text
    assert figures.model_help("roofline", doc).endswith("60.0 % on launch-bound small kernels (docs/accuracy.md)")
    assert figures.model_help("overlap", None) == ""
    text = "a\n<!-- generated: accuracy-real-gpu -->\nold\n<!-- end generated -->\nb\n"
    new = figures.update_readme(text, doc)
    assert "old" not in new and "| roofline | 33.3 % | 1.30 |" in new and new.endswith("b\n")
    assert figures.update_readme(new, doc) == new
