"""Figures: the files are written, the axes carry their labels, the scan shows the kernel's own
minimum, and no function switches matplotlib's backend (a notebook's stays as it was)."""

from __future__ import annotations

import math

import matplotlib
import pytest

from warpspeed.launch.space import Config
from warpspeed.plots import block_color, plot_ranking, plot_scan, ranking_figure, scan_figure
from warpspeed.rank import RankRow, Ranking
from warpspeed.studies.scan import ScanPoint
from warpspeed.validation import accuracy

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _row(block, lups, limiter="dram"):
    limits = {"fp": 9e10, "l1": 8e10, "l2": 7e10, "dram": lups}
    return RankRow(Config(block), lups, limiter, limits, 1.0, 10.0, 8.0, 8.0, 8.0, 2, "warps", 32)


RANKING = Ranking("k", "dev", (_row((32, 8, 4), 6e10), _row((1024, 1, 1), 3e10, "l1"),
                                RankRow(Config((2048, 1, 1)), math.nan, "", {}, *[math.nan] * 5, 0, "", 0,
                                        error="too many threads")))


def _scan_points(minimum):
    return [ScanPoint(plane, (plane, plane, 4), block, 10.0 + plane / 100, 8.0, 16.0, 0.5, minimum)
            for plane in (64, 128) for block in ((256, 4, 1), (32, 4, 8))]


def test_ranking_figure_axes():
    fig = ranking_figure(RANKING)
    (ax,) = fig.axes
    # 60 and 30 Glup/s: the lowest is half the highest, so the axis starts a quarter of the spread
    # below it, 30 - 30 / 4 = 22.5, and says so
    assert ax.get_ylabel() == "predicted performance, Glup/s (axis starts at 22.5, not 0)"
    assert ax.get_ylim()[0] == pytest.approx(22.5)
    assert ax.get_title() == "k on dev: predicted ranking"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["32x8x4", "1024x1x1"]  # failed row left out
    heights = [bar.get_height() for bar in ax.patches[:2]]
    assert heights == pytest.approx([60.0, 30.0])  # Glup/s
    assert ax.patches[0].get_facecolor()[:3] == pytest.approx(block_color((32, 8, 4)))


def test_scan_figure_draws_the_kernels_minimum():
    fig = scan_figure(_scan_points(240.0), "title")
    (ax,) = fig.axes
    assert ax.get_xlabel().startswith("square xy plane edge n")
    assert ax.get_ylabel() == "predicted DRAM volume, B/lup (load + store)"
    minimum = [line for line in ax.get_lines() if line.get_label().startswith("minimum")]
    assert len(minimum) == 1 and minimum[0].get_label() == "minimum 240 B/lup"
    assert list(minimum[0].get_ydata()) == [240.0, 240.0]
    assert len(ax.get_lines()) == 2 + 1  # one line per block, plus the minimum


@pytest.mark.parametrize("suffix, magic", [("png", PNG_MAGIC), ("pdf", b"%PDF"), ("svg", b"<?xml")])
def test_files_are_written_in_the_suffixs_format(tmp_path, suffix, magic):
    ranking = plot_ranking(RANKING, tmp_path / f"r.{suffix}")
    scan = plot_scan(_scan_points(16.0), tmp_path / f"s.{suffix}")
    assert ranking.read_bytes().startswith(magic) and scan.read_bytes().startswith(magic)


def testaccuracy_figure_axes():
    rows = [{"block_x": bx, "block_y": 1, "block_z": 1, "fold_x": 1, "fold_y": 1, "fold_z": 1, "error": "",
             "meas_lups_per_s": m, "pred_lups_per_s": p} for bx, m, p in ((32, 1e10, 2e10), (64, 2e10, 2e10))]
    fig = accuracy.accuracy_figure(rows, "acc")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    # the rows measure the rate alone (a campaign timed without ncu): one panel, no empty ones
    assert [ax.get_title() for ax in visible] == ["performance"]
    perf = visible[-1]
    assert perf.get_xlabel() == "measured, Glup/s" and perf.get_ylabel() == "predicted, Glup/s"
    with_dram = [{**r, "meas_dram_load_bytes_per_lup": 10.0, "pred_dram_load_bytes_per_lup": 11.0} for r in rows]
    visible = [ax for ax in accuracy.accuracy_figure(with_dram, "acc").axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["DRAM load", "performance"]
    # rows that measure nothing: every panel, each saying so
    empty = [{**r, "meas_lups_per_s": ""} for r in rows]
    visible = [ax for ax in accuracy.accuracy_figure(empty, "acc").axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == list(accuracy.METRIC_LABELS.values())
    assert all(any(t.get_text() == "no measured data" for t in ax.texts) for ax in visible)


def test_plots_leave_the_backend_alone(tmp_path):
    before = matplotlib.get_backend()
    matplotlib.use("pdf")
    try:
        plot_ranking(RANKING, tmp_path / "r.png")
        plot_scan(_scan_points(16.0), tmp_path / "s.png")
        accuracy.plot_accuracy([], tmp_path / "a.png")
        assert matplotlib.get_backend() == "pdf"
    finally:
        matplotlib.use(before)
