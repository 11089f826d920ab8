"""Checks of the arguments of the notebook API (:func:`pystencils_plugin.rank.rank`,
:meth:`~pystencils_plugin.rank.PystencilsRanking.plot`) before any work.

A wrong type is a :class:`TypeError`, a value out of range a :class:`ValueError`, each naming the
argument, what it got and what is allowed, instead of a traceback from deep inside the predictor,
pystencils or matplotlib. Integers may be Python's or numpy's (``np.int64(256)``); booleans are
not integers here. A plot's path is checked like every output file
(:func:`warpspeed.files.output.check_output_path`: an existing, writable directory and a format
matplotlib writes), as a :class:`~warpspeed.files.output.OutputError`.
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any, Sequence

from warpspeed.kernel.limits import MAX_CELLS_PER_THREAD
from warpspeed.rank import check_executor

#: The precisions a workload name is generated in.
DTYPES = ("double", "float")


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def positive_int(value: object, what: str) -> int:
    """``value`` as a Python int when it is an integer above zero; else TypeError/ValueError naming ``what``."""
    if not _is_int(value):
        raise TypeError(f"{what} must be a positive integer, got {type(value).__name__} {value!r}")
    if int(value) < 1:  # type: ignore[call-overload]
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)  # type: ignore[call-overload]


def triple(value: object, what: str) -> tuple[int, int, int]:
    """1 to 3 positive integers (x[, y[, z]]) as a triple padded with 1."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) and not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be 1 to 3 positive integers (x[, y[, z]]), got {type(value).__name__} "
                        f"{value!r}")
    values = tuple(value)  # type: ignore[arg-type]
    if not 1 <= len(values) <= 3:
        raise ValueError(f"{what} must be 1 to 3 positive integers (x[, y[, z]]), got {values!r}")
    ints = tuple(positive_int(v, what) for v in values)
    return ints + (1,) * (3 - len(ints))  # type: ignore[return-value]


def triples(value: object, what: str) -> list[tuple[int, int, int]] | None:
    """None, or a non-empty sequence of :func:`triple`\\ s."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be a list of (x, y, z) triples or None, got {type(value).__name__} {value!r}")
    items = [triple(v, f"each entry of {what}") for v in value]  # type: ignore[union-attr]
    if not items:
        raise ValueError(f"{what} is empty; give at least one (x, y, z) entry, or None for the default")
    return items


def check_rank_arguments(device: object, domain: object, blocks: object, foldings: object, threads: object,
                         executor: object, progress: object, dtype: object, curves: object) -> None:
    """Every argument of :func:`pystencils_plugin.rank.rank` but the source, checked (module docstring)."""
    import os

    from warpspeed.hardware.device import Device
    from warpspeed.memory.capacity import CapacityCurves

    if not isinstance(device, (Device, str, os.PathLike)):
        raise TypeError(f"device must be a Device, a built-in device name or a device-file path, got "
                        f"{type(device).__name__} {device!r}")
    if domain is not None:
        triple(domain, "domain")
    triples(blocks, "blocks")
    folds = triples(foldings, "foldings")
    for fold in folds or ():
        cells = fold[0] * fold[1] * fold[2]
        if cells > MAX_CELLS_PER_THREAD:
            raise ValueError(f"foldings: {fold} folds {cells} cells into one thread; at most {MAX_CELLS_PER_THREAD}")
    if threads is not None:
        n = positive_int(threads, "threads")
        if n & (n - 1):
            raise ValueError(f"threads must be a power of two (threads per block of the default space), got {n}")
    check_executor(executor)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or a function of the number of configurations done, got "
                        f"{type(progress).__name__}")
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"dtype must be None or one of {', '.join(DTYPES)}, got {dtype!r}")
    if curves is not None and not isinstance(curves, CapacityCurves):
        raise TypeError(f"curves must be None or a CapacityCurves, got {type(curves).__name__}")


def check_top(top: object) -> int | None:
    """``top`` of a plot: None (every row) or a positive integer."""
    return None if top is None else positive_int(top, "top (rows to plot; None: all)")


def check_plot_path(path: object) -> Path | None:
    """``path`` of a plot: None, or a file path whose directory exists and whose suffix is a format
    matplotlib writes."""
    import os

    from warpspeed.files.output import check_output_path, plot_formats

    if path is None:
        return None
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be None or a file path, got {type(path).__name__} {path!r}")
    return check_output_path(path, "plot", plot_formats())
