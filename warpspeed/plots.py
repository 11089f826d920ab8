"""Figures: ranking bar chart and layer-condition scan.

The functions build :class:`matplotlib.figure.Figure` objects with their own Agg canvas
(:mod:`warpspeed.files.figure`) and never touch pyplot's global state, so the backend of a
notebook or application is left alone.

Colors follow Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during
Code Generation on Modern GPUs", Journal of Parallel and Distributed Computing, 2023, section
5.1: a block (x, y, z) maps to RGB (log x, log y, log z) / log(threads), so wide blocks are red,
tall green, deep blue, and mixed shapes mixed colors.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from warpspeed.files.figure import FIGURE_DPI, new_figure, save_figure
from warpspeed.models import MODELS
from warpspeed.levels import LIMITERS
from warpspeed.units import NANO

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from warpspeed.compare import Comparison
    from warpspeed.rank import Ranking
    from warpspeed.studies.scan import ScanPoint

#: Hatch pattern per limiter in the ranking chart.
LIMITER_HATCH = dict(zip(LIMITERS, ("xx", "..", "//", "")))
#: Widest ranking chart (inches); beyond ~150 bars the labels shrink instead.
MAX_RANK_WIDTH_IN = 22.0
#: Legend entries of the block-shape colors: (RGB, label).
BLOCK_SHAPE_LEGEND: tuple[tuple[tuple[float, float, float], str], ...] = (
    ((1.0, 0.0, 0.0), "wide (x)"), ((0.0, 1.0, 0.0), "tall (y)"), ((0.0, 0.0, 1.0), "deep (z)"))
#: Bar labels: font size up to this many bars, smaller beyond.
_MANY_BARS = 100


def block_color(block: Sequence[int]) -> tuple[float, float, float]:
    """RGB in [0, 1] for a block shape: (log2 x, log2 y, log2 z) / log2(threads)."""
    logs = [math.log2(max(1, b)) for b in block]
    total = sum(logs) or 1.0
    return tuple(v / total for v in logs)  # type: ignore[return-value]


def ranking_figure(ranking: "Ranking", top: int | None = None) -> "Figure":
    """Bar chart of predicted Glup/s per configuration, best first, limiter as hatch."""
    from matplotlib.patches import Patch

    rows = [r for r in ranking.rows if r.ok][: top or None]
    fig = new_figure(min(MAX_RANK_WIDTH_IN, max(6.0, 0.12 * len(rows) + 2)), 5.5)
    ax = fig.subplots()
    values = [r.lups_per_s * NANO for r in rows]
    bars = ax.bar(range(len(rows)), values,
                  color=[block_color(r.config.block) for r in rows], edgecolor="black", linewidth=0.4)
    bottom = bar_axis_start(values)
    for bar, row in zip(bars, rows):
        bar.set_hatch(LIMITER_HATCH.get(row.limiter, ""))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r.config.label for r in rows], rotation=90, fontsize=7 if len(rows) <= _MANY_BARS else 5)
    if bottom > 0:
        ax.set_ylim(bottom, max(values) + BAR_HEADROOM * (max(values) - bottom))
        ax.set_ylabel(f"predicted performance, Glup/s (axis starts at {bottom:.3g}, not 0)")
    else:
        ax.set_ylabel("predicted performance, Glup/s")
    ax.set_title(f"{ranking.kernel} on {ranking.device}: predicted ranking")
    handles = [Patch(facecolor="white", edgecolor="black", hatch=h, label=f"{k} limited")
               for k, h in LIMITER_HATCH.items() if any(r.limiter == k for r in rows)]
    handles += [Patch(color=c, label=lab) for c, lab in BLOCK_SHAPE_LEGEND]
    # outside the axes, right of the bars: inside, it covered the last (lowest) bars
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return self_rendering(fig)


#: Bars start at zero unless the smallest is above this share of the largest; then they start
#: below the smallest by ``BAR_MARGIN`` of the spread, so that a spread of a few per cent shows.
ZERO_BASED_BELOW = 0.5
BAR_MARGIN = 0.25
#: Room above the highest bar, as a share of the shown range.
BAR_HEADROOM = 0.05


def bar_axis_start(values: Sequence[float]) -> float:
    """Where a bar chart's value axis starts: 0, or, when every value lies within the upper half
    of the largest, a quarter of the spread below the smallest (the axis label says so)."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 0.0
    lo, hi = min(finite), max(finite)
    if hi <= 0 or lo < ZERO_BASED_BELOW * hi:
        return 0.0
    spread = hi - lo if hi > lo else BAR_MARGIN * hi
    return max(0.0, lo - BAR_MARGIN * spread)


def self_rendering(fig: "Figure") -> "Figure":
    """``fig`` with ``_repr_png_`` and ``_repr_html_`` of its own, so that a notebook cell ending in
    it shows the chart without ``%matplotlib inline`` (the figure is drawn when displayed; pyplot
    and the backend are not touched). Returns ``fig``."""
    import base64
    import io

    def png() -> bytes:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=FIGURE_DPI)
        return buffer.getvalue()

    def html() -> str:
        data = base64.b64encode(png()).decode("ascii")
        return f'<img src="data:image/png;base64,{data}" alt="{fig.axes[0].get_title() if fig.axes else "figure"}"/>'

    fig._repr_png_ = png  # type: ignore[attr-defined]
    fig._repr_html_ = html  # type: ignore[attr-defined]
    return fig


def plot_ranking(ranking: "Ranking", path: str | Path, top: int | None = None) -> Path:
    """Write :func:`ranking_figure` to ``path`` (format from the suffix); returns the path."""
    return save_figure(ranking_figure(ranking, top), path)


#: Marker and color of a model the registry does not know.
UNKNOWN_MODEL_STYLE = ("x", "gray")


def comparison_figure(comparison: "Comparison", top: int | None = None) -> "Figure":
    """Every compared model's predicted Glup/s per configuration (one marker series per model),
    configurations in the comparison's order (by the roofline's rate, best first)."""
    rows = [r for r in comparison.rows if any(x.ok for x in r.rates)][: top or None]
    fig = new_figure(min(MAX_RANK_WIDTH_IN, max(6.0, 0.12 * len(rows) + 2)), 5.5)
    ax = fig.subplots()
    x = np.arange(len(rows))
    for model in comparison.models:
        known = MODELS.get(model)
        marker, color, *face = known.about.style if known is not None else UNKNOWN_MODEL_STYLE
        ax.plot(x, [r.rate(model).lups_per_s * NANO for r in rows], linestyle="none", marker=marker,
                markersize=5, markerfacecolor=face[0] if face else color, color=color, label=model)
    ax.set_xticks(x)
    ax.set_xticklabels([r.config.label for r in rows], rotation=90, fontsize=7 if len(rows) <= _MANY_BARS else 5)
    ax.set_ylabel("predicted performance, Glup/s")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{comparison.kernel} on {comparison.device}: time models side by side")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def plot_comparison(comparison: "Comparison", path: str | Path, top: int | None = None) -> Path:
    """Write :func:`comparison_figure` to ``path`` (format from the suffix); returns the path."""
    return save_figure(comparison_figure(comparison, top), path)


def scan_figure(points: Sequence["ScanPoint"], title: str = "") -> "Figure":
    """DRAM volume per lup against the square plane edge, one line per block, and the kernel's
    minimum (every loaded field read once, every stored field written once per lattice update)."""
    from matplotlib import colormaps

    fig = new_figure(7.0, 4.5)
    ax = fig.subplots()
    blocks = sorted({p.block for p in points}, key=lambda b: b[2])
    colors = colormaps["viridis"](np.linspace(0.0, 0.9, len(blocks)))  # shallow -> deep
    for block, color in zip(blocks, colors):
        series = sorted((p for p in points if p.block == block), key=lambda p: p.plane)
        ax.plot([p.plane for p in series], [p.dram_bytes_per_lup for p in series], marker="o", markersize=3,
                color=color, label=f"block {'x'.join(map(str, block))} ({block[2]} deep)")
    minima = {p.dram_minimum_bytes_per_lup for p in points if math.isfinite(p.dram_minimum_bytes_per_lup)}
    for minimum in sorted(minima):
        ax.axhline(minimum, color="gray", linestyle=":", linewidth=1, label=f"minimum {minimum:g} B/lup")
    ax.set_xlabel("square xy plane edge n (domain n x n x nz, constant cell count)")
    ax.set_ylabel("predicted DRAM volume, B/lup (load + store)")
    ax.set_title(title or "layer-condition scan")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_scan(points: Sequence["ScanPoint"], path: str | Path, title: str = "") -> Path:
    """Write :func:`scan_figure` to ``path`` (format from the suffix); returns the path."""
    return save_figure(scan_figure(points, title), path)


__all__ = ["BLOCK_SHAPE_LEGEND", "UNKNOWN_MODEL_STYLE", "block_color", "comparison_figure", "new_figure", "plot_comparison", "plot_ranking", "plot_scan", "ranking_figure",
           "save_figure", "scan_figure"]
