"""The CPI stack as a stacked bar (one bar, segments by stall reason, cycles on the axis)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from warpspeed.files.figure import new_figure, save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Figure size of the CPI-stack bar, inches.
FIGURE_SIZE_IN = (6.0, 4.5)
#: Colormap of the stack's segments.
COLORMAP = "tab10"


def cpi_stack_figure(stack: Mapping[str, float], title: str = "") -> "Figure":
    """A stacked bar of ``stack`` (entry -> cycles); empty entries are left out of the legend."""
    from matplotlib import colormaps

    fig = new_figure(*FIGURE_SIZE_IN)
    ax = fig.add_subplot(1, 1, 1)
    colors = colormaps[COLORMAP]
    bottom = 0.0
    for i, (name, cycles) in enumerate(stack.items()):
        if cycles <= 0:
            continue
        ax.bar([0], [cycles], bottom=bottom, color=colors(i % colors.N), label=name, width=0.5)
        bottom += cycles
    ax.set_xticks([])
    ax.set_xlim(-0.6, 1.8)
    ax.set_ylabel("SM cycles")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper right", fontsize=8)
    return fig


def plot_cpi_stack(stack: Mapping[str, float], path: str | Path, title: str = "") -> Path:
    """Write :func:`cpi_stack_figure` to ``path`` (format from the suffix)."""
    return save_figure(cpi_stack_figure(stack, title), path)
