"""Checks of raw tables before they are fitted or compared: enough rows, no repeated rows, finite
positive measurements, one GPU of one vendor.

Used by ``warpspeed calibrate`` (:mod:`warpspeed.calibration.own_figures`) and ``warpspeed
validate --device`` (:mod:`warpspeed.validation.own_tables`), so a table that one refuses the
other refuses too. The rules are in :mod:`warpspeed.calibration.own_figures`' docstring.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Mapping

from warpspeed.measured.raw_tables import RawTable

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: The sweeps the rules fit, and the column of each that is swept (its points must be distinct).
SWEEP_TABLES = {"gpu-stream": "threads_per_block", "gpu-l2-cache": "data_set_kb", "gpu-cache": "data_set_kb",
                "gpu-latency": "data_set_kb", "gpu-small-kernels": "elements"}
#: Fewest rows of a fitted sweep: twice the three parameters of the achievable-DRAM curve (peak,
#: latency, sharpness; :mod:`warpspeed.measured.stream_curve`), and enough for the cache-step and
#: latency rules to see a plateau on each side of a step. The shortest sweep ``warpspeed
#: calibrate --quick`` makes has 16 rows (gpu-stream, 64 to 1024 threads per block in steps of 64).
MIN_SWEEP_ROWS = 6
#: Tables whose empty or ``nan`` cells mean "not measured" (a launch count the benchmark skipped).
NAN_ALLOWED = frozenset({"gpu-small-kernels", "gpu-roofline", "gpu-strides", "device-query"})
#: Words of a ``part`` line that name the vendor or the product line, not the GPU model.
_VENDOR_WORDS = frozenset({"nvidia", "amd", "tesla", "geforce", "quadro", "rtx", "instinct", "radeon"})


def _numeric_rows(table: RawTable) -> tuple[list[str], list[list[str]]]:
    lines = [ln for ln in table.text.splitlines() if ln.strip() and not ln.startswith("#")]
    if not lines:
        return [], []
    return [c.strip() for c in lines[0].split(",")], [[c.strip() for c in ln.split(",")] for ln in lines[1:]]


def _gpu_model(part: str) -> str:
    """The GPU model of a ``part`` line: its first word after the vendor's (``NVIDIA A100 SXM4 40GB``
    -> ``a100``), lower case."""
    words = [w for w in part.split("(")[0].replace("-", " ").split() if w.lower() not in _VENDOR_WORDS]
    return words[0].lower() if words else ""


def _vendor(part: str) -> str | None:
    first = part.split()[0].lower() if part.split() else ""
    return first if first in ("nvidia", "amd") else None


def table_problem(table: RawTable) -> str | None:
    """Why ``table`` cannot be fitted well (module docstring), or None."""
    columns, rows = _numeric_rows(table)
    seen: set[tuple[str, ...]] = set()
    for number, row in enumerate(rows, 1):
        if tuple(row) in seen:
            return f"row {number} repeats an earlier row ({','.join(row)[:80]}); allowed: each measurement once"
        seen.add(tuple(row))
    sweep = SWEEP_TABLES.get(table.name)
    if sweep is None:
        return None
    if len(rows) < MIN_SWEEP_ROWS:
        return (f"{len(rows)} row{'s' if len(rows) != 1 else ''}; a fit needs at least {MIN_SWEEP_ROWS} rows of "
                "the sweep (a table cut short, or not a whole sweep)")
    if sweep in columns:
        points = [row[columns.index(sweep)] for row in rows if len(row) == len(columns)]
        if len(set(points)) < len(points):
            return f"the sweep column {sweep} repeats points; allowed: each point once"
    for number, row in enumerate(rows, 1):
        for column, text in zip(columns, row):
            try:
                value = float(text)
            except ValueError:
                continue  # a word (a kernel name): the table's reader says what it expects
            if math.isnan(value) and table.name in NAN_ALLOWED:
                continue
            if not math.isfinite(value) or value <= 0:
                return (f"row {number}: {column} is {text!r}; allowed: finite numbers above zero (a measurement "
                        "that failed is not a row)")
    return None


def tables_problem(tables: Mapping[str, RawTable], base: "Device") -> str | None:
    """Why the tables are not one GPU's of the base's vendor (module docstring), or None."""
    uuids = {name: t.value("gpu_uuid") for name, t in tables.items() if t.value("gpu_uuid")}
    if len(set(uuids.values())) > 1:
        listed = ", ".join(f"{name}.csv {uuid}" for name, uuid in uuids.items())
        return f"the tables come from different GPUs (gpu_uuid: {listed}); allowed: one GPU's tables"
    parts = {name: t.value("part") or "" for name, t in tables.items()}
    models = {name: _gpu_model(part) for name, part in parts.items() if _gpu_model(part)}
    if len(set(models.values())) > 1 and len(uuids) < len(tables):
        listed = ", ".join(f"{name}.csv {parts[name]!r}" for name in models)
        return f"the tables come from different GPUs (part: {listed}); allowed: one GPU's tables"
    for name, part in parts.items():
        vendor = _vendor(part)
        if vendor is not None and vendor != base.vendor.lower():
            return (f"{name}.csv was measured on {part!r}, an {vendor.upper()} GPU, but the base device "
                    f"{base.name} is {base.vendor.upper()}'s; allowed: a base of the measured GPU's vendor")
    return None
