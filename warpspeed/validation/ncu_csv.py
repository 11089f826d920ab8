"""Reading Nsight Compute's raw CSV page (``ncu --csv --page raw``): units, numbers, launch records.

The raw page is a header row of column names, a row of units and one row per profiled launch
(Nsight Compute CLI documentation, "Command Line Options", ``--csv``, ``--page raw`` and
``--print-units``). Nsight Compute 2025.3 puts about 290 columns there: identification columns
(``ID``, ``Kernel Name``, ``Block Size``, ...), device attributes, launch statistics and the
requested metrics. Other columns hold text (``No-CC``, ``PolicySpread``, ``(256, 4, 1)``) and units
(``cluster``, ``register/thread``, ``byte/block``, ``pass``, ...), so :func:`parse_ncu_csv`
reads only the identification columns and the metrics it is asked for.

Numbers carry thousands separators (``1,694,240``); units are converted to base units: seconds for
time (``ns``, ``us``, ``ms``, ``s``, ``nsecond``, ...), hertz for frequencies (``hz``, ``Mhz``, or a
count per time unit such as ``cycle/nsecond``), and plain counts for everything counted (``byte``,
``sector``, ``cycle``, ``warp``, ``block``, ``SM``, ... with the prefixes K, M, G, T, Ki, Mi, Gi, Ti
that ``--print-units auto`` adds), ``%`` as printed.
"""

from __future__ import annotations

import csv
import io
import math
import re
from typing import Any, Mapping, Sequence

from warpspeed.validation.plan import MeasurementError

#: Prefixes Nsight Compute puts before a counted unit with ``--print-units auto`` (decimal SI and
#: binary; case-sensitive: ``M`` is mega, and no counted unit takes milli).
UNIT_PREFIXES: dict[str, float] = {
    "": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40,
}
#: Time units, in seconds (short and long spellings; ncu's ``gpu__time_duration`` prints ``ns``).
TIME_UNITS: dict[str, float] = {
    "s": 1.0, "second": 1.0, "ms": 1e-3, "msecond": 1e-3, "us": 1e-6, "usecond": 1e-6,
    "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ns": 1e-9, "nsecond": 1e-9,
}
#: Frequency units, in hertz (matched without regard to case: ``hz``, ``Mhz``, ``GHz``).
FREQUENCY_UNITS: dict[str, float] = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
#: Counted units (matched without regard to case, singular or plural): what ncu counts.
COUNT_UNITS: frozenset[str] = frozenset({
    "byte", "bit", "sector", "cycle", "wavefront", "request", "inst", "instruction", "warp", "thread",
    "block", "cluster", "register", "pass", "sm", "tpc", "gpc", "transaction", "sample", "fbp", "ltc",
    "lts", "slice", "channel", "packet", "tag", "access", "miss", "hit", "event",
})
#: Units of ratios and plain numbers.
DIMENSIONLESS_UNITS: frozenset[str] = frozenset({"", "%"})
#: Cells that mean "not available" (ncu could not collect the value).
NOT_AVAILABLE = frozenset({"n/a", "(!) n/a", "(!)n/a", "-", ""})

#: Identification columns of ncu's raw page, and the keys :func:`parse_ncu_csv` gives them.
ID_COLUMNS: dict[str, str] = {
    "ID": "id", "Kernel Name": "kernel_name", "Block Size": "block_size", "Grid Size": "grid_size",
    "Device": "device", "Process ID": "process_id", "Process Name": "process_name", "Stream": "stream",
    "CC": "cc", "Context": "context", "Host Name": "host_name",
}
_TRIPLE_KEYS = ("block_size", "grid_size")
_INT_KEYS = ("id", "process_id")
#: Thousands separators and spaces removed from a number before ``float`` reads it.
_SEPARATORS = re.compile(r"[,\s\u00a0\u202f']")


def _single_unit_scale(unit: str) -> float | None:
    """Factor from one unit (no ``/``) to its base unit; None when it is not understood."""
    if unit in DIMENSIONLESS_UNITS:
        return 1.0
    if unit in TIME_UNITS:
        return TIME_UNITS[unit]
    if unit.lower() in FREQUENCY_UNITS:
        return FREQUENCY_UNITS[unit.lower()]
    for prefix in sorted(UNIT_PREFIXES, key=len, reverse=True):
        if not unit.startswith(prefix):
            continue
        base = unit[len(prefix):].lower()
        if base in COUNT_UNITS or (base.endswith("s") and base[:-1] in COUNT_UNITS):
            return UNIT_PREFIXES[prefix]
    return None


def unit_scale(unit: str) -> float | None:
    """Factor from ``unit`` to its base unit (seconds, hertz, counts); None when not understood.

    A rate ``a/b`` scales as ``a`` over ``b``: ``cycle/nsecond`` gives 1e9 (cycles per second),
    ``Gbyte/second`` 1e9, ``register/thread`` 1.
    """
    u = unit.strip()
    if "/" in u:
        num, den = (part.strip() for part in u.split("/", 1))
        scale_num, scale_den = unit_scale(num), unit_scale(den)
        return None if scale_num is None or not scale_den else scale_num / scale_den
    return _single_unit_scale(u)


def parse_ncu_number(text: str) -> float:
    """A number as ncu prints it (thousands separators allowed); ``n/a`` is NaN.

    Raises :class:`MeasurementError` for text that is not a number.
    """
    t = text.strip()
    if t.lower() in NOT_AVAILABLE:
        return math.nan
    try:
        return float(_SEPARATORS.sub("", t))
    except ValueError:
        raise MeasurementError(f"ncu value {text!r} is not a number") from None


def _table_rows(text: str) -> list[list[str]]:
    """The CSV rows from the header (``"ID",...``) on, without ``==PROF==``/``==WARNING==`` lines
    and blank lines."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') or line.startswith("ID,")), None)
    if start is None:
        messages = [line.strip() for line in lines if line.startswith("==ERROR==")]
        detail = f"; ncu said: {' '.join(messages)[:600]}" if messages else ""
        raise MeasurementError("no ncu CSV table found (expected a header row starting with \"ID\"; "
                               f"was ncu run with --csv --page raw, and did it profile a launch?){detail}")
    body = [line for line in lines[start:] if line.strip() and not line.startswith("==")]
    return list(csv.reader(io.StringIO("\n".join(body))))


def _id_value(key: str, text: str) -> Any:
    if key in _TRIPLE_KEYS:
        return tuple(int(v) for v in re.findall(r"\d+", text))
    if key in _INT_KEYS:
        value = parse_ncu_number(text)
        if not math.isfinite(value):
            raise MeasurementError(f"ncu column {key!r} value {text!r} is not an integer")
        return int(value)
    return text.strip()


def _metric_value(metric: str, text: str, scale: float) -> tuple[float, str]:
    """(value in base units, problem text or "") of one requested metric's cell."""
    try:
        value = parse_ncu_number(text)
    except MeasurementError:
        return math.nan, f"metric {metric} has the value {text.strip()!r}, which is not a number"
    if math.isnan(value):
        return value, f"ncu reported no value ({text.strip() or 'empty'!s}) for metric {metric}"
    return value * scale, ""


def parse_ncu_csv(text: str, metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Parse ``ncu --csv --page raw`` output: one dict per profiled launch.

    Lines before and after the table (``==PROF==`` and ``==WARNING==`` messages, program output)
    are ignored. Each dict has the identification columns (``id`` and ``process_id`` as ints,
    ``block_size`` and ``grid_size`` as tuples, ``kernel_name``, ``device``, ... as text), every
    metric of ``metrics`` as a float in base units (see the module docstring), and ``problems``:
    metric -> why its value is missing (``n/a``, not a number; the value is then NaN). Other
    columns are not read.

    Raises :class:`MeasurementError` when there is no table, a requested metric has no column,
    or its unit is not understood.
    """
    if not metrics:
        raise MeasurementError("parse_ncu_csv needs at least one metric to read")
    header, *rows = _table_rows(text)
    header = [h.strip() for h in header]
    index = {h: i for i, h in enumerate(header)}
    missing = [m for m in metrics if m not in index]
    if missing:
        raise MeasurementError(f"ncu output has no column for the requested metric(s) {', '.join(missing)}; "
                               "was it run with --metrics naming them?")
    if "ID" not in index:
        raise MeasurementError("ncu CSV header has no \"ID\" column")
    ids = [(index[c], key) for c, key in ID_COLUMNS.items() if c in index]
    scales = {m: 1.0 for m in metrics}
    records: list[dict[str, Any]] = []
    for n, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise MeasurementError(f"ncu CSV row {n} has {len(row)} cells, the header {len(header)}: {row[:3]}")
        if not row[index["ID"]].strip():  # the units row
            for m in metrics:
                scale = unit_scale(row[index[m]])
                if scale is None:
                    raise MeasurementError(f"ncu metric {m} has the unit {row[index[m]]!r}, which is not understood; "
                                           "known: time (ns, us, ms, s), hz, %, counts (byte, sector, cycle, warp, "
                                           "block, SM, ...) with K/M/G/T prefixes, and rates a/b of these")
                scales[m] = scale
            continue
        record: dict[str, Any] = {key: _id_value(key, row[i]) for i, key in ids}
        problems: dict[str, str] = {}
        for m in metrics:
            record[m], problem = _metric_value(m, row[index[m]], scales[m])
            if problem:
                problems[m] = problem
        record["problems"] = problems
        records.append(record)
    return records


def kernel_base_name(name: str) -> str:
    """A kernel name without its parameter list (``ws_k(double *, ...)`` -> ``ws_k``)."""
    return name.split("(")[0].strip()


def counters_for_kernel(records: Sequence[Mapping[str, Any]], function_name: str,
                        metrics: Sequence[str]) -> dict[str, float]:
    """The metrics of the last profiled launch of ``function_name`` (a name or a ``name(...)``
    signature in ncu's ``Kernel Name`` column).

    Raises :class:`MeasurementError` naming the kernel when ncu profiled no launch of it, and
    naming the metric when its value is missing or not a number.
    """
    matching = [r for r in records if kernel_base_name(str(r.get("kernel_name", ""))) == function_name]
    if not matching:
        names = sorted({str(r.get("kernel_name", "")) for r in records}) or ["(none)"]
        raise MeasurementError(f"ncu profiled no launch of {function_name!r}; kernels seen: {', '.join(names)}")
    last = matching[-1]
    missing = [m for m in metrics if m not in last]
    if missing:
        raise MeasurementError(f"ncu output lacks metric(s) {', '.join(missing)} for {function_name!r}")
    problems = last.get("problems", {})
    bad = [problems[m] for m in metrics if m in problems]
    if bad:
        raise MeasurementError(f"ncu profile of {function_name!r}: {'; '.join(bad)}")
    return {m: float(last[m]) for m in metrics}
