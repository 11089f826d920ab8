"""Figure files: a matplotlib figure on its own Agg canvas, and writing it in the format of a suffix.

The figures never touch pyplot's global state, so the backend of a notebook or application is
left alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Resolution of the figures written as raster images, dots per inch.
FIGURE_DPI = 130


def new_figure(width_in: float, height_in: float) -> "Figure":
    """A figure of the given size (inches) on its own Agg canvas (pyplot is not involved)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in))
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: "Figure", path: str | Path, dpi: int = FIGURE_DPI) -> Path:
    """Write ``fig`` to ``path`` in the format of its suffix, whole or not at all
    (:mod:`warpspeed.files.atomic`); returns the path."""
    from warpspeed.files.atomic import atomic_output

    out = Path(path)
    with atomic_output(out, "wb") as handle:
        fig.savefig(handle, format=out.suffix.lstrip(".").lower() or None, dpi=dpi)
    return out
