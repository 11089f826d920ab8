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
#: The environment variable matplotlib reads its configuration and cache directory from.
MPL_CONFIG_ENV = "MPLCONFIGDIR"


def prepare_matplotlib() -> None:
    """Before matplotlib is first imported: where its configuration directory
    (``$MPLCONFIGDIR``, else ``$XDG_CONFIG_HOME/matplotlib``, else ``~/.config/matplotlib``)
    cannot be made (a read-only home), point it at a temporary directory for this process (removed
    when it ends) instead of letting matplotlib print two lines about it on every plot."""
    import os
    import sys

    from warpspeed.files.tool_dirs import ensure_tool_dir

    if "matplotlib" in sys.modules:
        return
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    default = os.path.join(xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".config"),
                           "matplotlib")
    ensure_tool_dir(MPL_CONFIG_ENV, default, "warpspeed-matplotlib-")


def new_figure(width_in: float, height_in: float) -> "Figure":
    """A figure of the given size (inches) on its own Agg canvas (pyplot is not involved)."""
    prepare_matplotlib()
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
