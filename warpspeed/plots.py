"""Figures (matplotlib, Agg backend): ranking bar chart and layer-condition scan.

Colors follow Ernst et al., JPDC 2023, 5.1: a block (x, y, z) maps to RGB (log x, log y, log z) / log(threads),
so wide blocks are red, tall green, deep blue, and mixed shapes mixed colors.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from warpspeed.studies.scan import ScanPoint
from warpspeed.rank import Ranking

#: Hatch pattern per limiter in the ranking chart.
LIMITER_HATCH = {"fp": "xx", "l1": "..", "l2": "//", "dram": ""}
#: Widest ranking chart (inches); beyond ~150 bars the labels shrink instead.
MAX_RANK_WIDTH_IN = 22.0


def block_color(block: Sequence[int]) -> tuple[float, float, float]:
    """RGB in [0, 1] for a block shape (Ernst et al., JPDC 2023, 5.1)."""
    logs = [math.log2(max(1, b)) for b in block]
    total = sum(logs) or 1.0
    return tuple(v / total for v in logs)  # type: ignore[return-value]


def _figure(width: float, height: float):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt, plt.subplots(figsize=(width, height))


def plot_ranking(ranking: Ranking, path: str | Path, top: int | None = None) -> Path:
    """Bar chart of predicted Glup/s per configuration, best first, limiter as hatch."""
    rows = [r for r in ranking.rows if r.ok][: top or None]
    plt, (fig, ax) = _figure(min(MAX_RANK_WIDTH_IN, max(6.0, 0.12 * len(rows) + 2)), 5.5)
    values = [r.lups_per_s / 1e9 for r in rows]
    bars = ax.bar(range(len(rows)), values, color=[block_color(r.config.block) for r in rows],
                  edgecolor="black", linewidth=0.4)
    for bar, row in zip(bars, rows):
        bar.set_hatch(LIMITER_HATCH.get(row.limiter, ""))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r.config.label for r in rows], rotation=90, fontsize=7 if len(rows) <= 100 else 5)
    ax.set_ylabel("predicted performance, Glup/s")
    ax.set_title(f"{ranking.kernel} on {ranking.device}: predicted ranking")
    from matplotlib.patches import Patch

    handles = [Patch(facecolor="white", edgecolor="black", hatch=h, label=f"{k} limited")
               for k, h in LIMITER_HATCH.items() if any(r.limiter == k for r in rows)]
    handles += [Patch(color=c, label=lab) for c, lab in (((1, 0, 0), "wide (x)"), ((0, 1, 0), "tall (y)"),
                                                         ((0, 0, 1), "deep (z)"))]
    ax.legend(handles=handles, fontsize=8, loc="upper right")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=130)
    plt.close(fig)
    return out


def plot_scan(points: Sequence[ScanPoint], path: str | Path, title: str = "") -> Path:
    """DRAM volume per lup against the square plane edge, one line per block."""
    plt, (fig, ax) = _figure(7.0, 4.5)
    blocks = sorted({p.block for p in points}, key=lambda b: b[2])
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.9, len(blocks)))  # shallow -> deep
    for block, color in zip(blocks, colors):
        series = sorted((p for p in points if p.block == block), key=lambda p: p.plane)
        ax.plot([p.plane for p in series], [p.dram_bytes_per_lup for p in series], marker="o", markersize=3,
                color=color, label=f"block {'x'.join(map(str, block))} ({block[2]} deep)")
    ax.axhline(16, color="gray", linestyle=":", linewidth=1, label="minimum 16 B/lup")
    ax.set_xlabel("square xy plane edge n (domain n x n x nz, constant cell count)")
    ax.set_ylabel("predicted DRAM volume, B/lup (load + store)")
    ax.set_title(title or "layer-condition scan")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=130)
    plt.close(fig)
    return out
