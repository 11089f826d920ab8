"""The trace's JSON Schema (``schema.json``, draft 2020-12) and validation against it.

Beyond the schema, a trace is data a model divides by and allocates from, so
:func:`validate_trace` also refuses every number that is not finite (``NaN``, ``Infinity``: JSON
has neither, Python's ``json`` module reads them) and every number outside its range:
:data:`TRACE_LIMITS` for the keys that size a launch or a device, :data:`MAX_TRACE_NUMBER` for the
others. :func:`parse_trace` reads a trace's JSON text with ``NaN`` and ``Infinity`` refused.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any, Iterator

import jsonschema

from warpspeed.errors import WarpspeedError
from warpspeed.files.stored import package_file

#: Where the JSON Schema of the trace is installed: package and file.
SCHEMA_PACKAGE, SCHEMA_FILE = "warpspeed.trace", "schema.json"


class TraceError(WarpspeedError):
    """A trace that does not follow the schema."""


@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The JSON Schema of ``warpspeed-trace`` version 1."""
    return json.loads(package_file(SCHEMA_PACKAGE, SCHEMA_FILE).read_text())


#: Largest magnitude of any number of a trace without its own limit (volumes, counts, rates).
MAX_TRACE_NUMBER = 1e15
#: Inclusive ranges of the numbers that size a device or a launch, by key path (``*``: any array
#: item). A device's are those of a device file (:mod:`warpspeed.hardware.ranges`: SMs, a clock of
#: 0.1 to 10 GHz, DRAM bandwidth 1 to 10^6 GB/s); a launch's those of CUDA and HIP (at most 1024
#: threads and 32 resident blocks per SM on every built-in device: 2048 leaves room) and of
#: :mod:`warpspeed.kernel.limits` (2^31 - 1 cells per axis, 2^34 cells, 64 cells per thread and axis).
TRACE_LIMITS: dict[str, tuple[float, float]] = {
    "device/sms": (1, 2**24), "device/clock_mhz": (100, 10_000), "device/warp_size": (1, 64),
    "kernel/domain/*": (1, 2**31 - 1), "kernel/lups": (1, 2**34),
    "launch/block/*": (1, 4096), "launch/fold/*": (1, 64), "launch/grid/*": (1, 2**31 - 1),
    "launch/threads_per_block": (1, 4096), "launch/warps_per_block": (1, 4096),
    "launch/cells_per_thread": (1, 64**3), "launch/blocks_per_sm": (1, 2048), "launch/active_sms": (1, 2**24),
    "launch/registers_per_thread": (1, 1024), "launch/active_lanes_per_warp": (0, 64),
    "roofline/dram_bandwidth_gb_s": (1, 1e6),
}


def _numbers(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], float]]:
    """Every number of a JSON document with its key path (array items as ``*``)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _numbers(value, (*path, str(key)))
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _numbers(value, (*path, "*"))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path, node


def check_numbers(trace: Any) -> None:
    """Raise :class:`TraceError` for the first number of ``trace`` that is not finite or lies
    outside its range (module docstring)."""
    try:
        for path, value in _numbers(trace):
            where = "/".join(path) or "(top level)"
            if not math.isfinite(value):
                raise TraceError(f"trace does not follow warpspeed-trace/1 at {where}: {value!r} is not a finite "
                                 "number; allowed: finite numbers (JSON has no NaN or Infinity)")
            low, high = TRACE_LIMITS.get(where, (-MAX_TRACE_NUMBER, MAX_TRACE_NUMBER))
            if not low <= value <= high:
                raise TraceError(f"trace does not follow warpspeed-trace/1 at {where}: {value!r} is out of range; "
                                 f"allowed: {low:g} to {high:g}")
    except RecursionError:
        raise TraceError("trace: nested too deeply; allowed: a document as warpspeed writes it") from None


def _refuse_constant(name: str) -> Any:
    raise TraceError(f"trace: {name} is not a JSON number; allowed: finite numbers")


def parse_trace(text: str) -> Any:
    """The JSON document of a trace's text, with ``NaN``, ``Infinity`` and deep nesting refused
    (one-line :class:`TraceError`); validate it with :func:`validate_trace`."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise TraceError(f"trace is not JSON: {exc}") from None
    except RecursionError:
        raise TraceError("trace: nested too deeply; allowed: a document as warpspeed writes it") from None


def validate_trace(trace: dict) -> None:
    """Raise :class:`TraceError` naming the first offending key path when ``trace`` does not
    follow the schema, or holds a number that is not finite or out of its range."""
    check_numbers(trace)
    validator = jsonschema.Draft202012Validator(load_schema())
    error = next(iter(sorted(validator.iter_errors(trace), key=lambda e: list(e.path))), None)
    if error is not None:
        where = "/".join(str(p) for p in error.path) or "(top level)"
        raise TraceError(f"trace does not follow warpspeed-trace/1 at {where}: {error.message}")
