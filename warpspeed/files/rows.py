"""The CSV writer of ranking, study and measurement tables.

The columns of a table come from its records (:mod:`warpspeed.files.records`): a ranking row
(:class:`warpspeed.rank.RankRow`) becomes :data:`warpspeed.rank.RANK_COLUMNS`, a configuration
:data:`warpspeed.launch.space.CONFIG_COLUMNS`. A ranking CSV prefixes the rank, a study CSV its
row key, kernel, device, domain and threads; a measurement CSV has its own measured and
predicted columns after the configuration.

Cells are written by :func:`cell`: floats with ``repr`` (they read back exactly with ``float``),
``inf`` as ``inf``, NaN and missing values as an empty cell.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import IO, Any, Iterable, Mapping, Sequence

from warpspeed.errors import WarpspeedError


def error_text(message: str) -> str:
    """An error message as one CSV cell on one line (never empty)."""
    return message.replace("\r", " ").replace("\n", " ") or "error"


def cell(value: Any) -> str:
    """One CSV cell: floats exactly (``repr``), ``inf``/``-inf``, NaN and None as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(float(value))
    return str(value)


def record_cells(columns: Sequence[str], record: Mapping[str, Any]) -> list[str]:
    """The cells of ``record`` in ``columns`` order (missing columns empty); unknown keys are an error."""
    unknown = sorted(set(record) - set(columns))
    if unknown:
        raise WarpspeedError(f"row has unknown column(s) {', '.join(unknown)}; columns: {', '.join(columns)}")
    return [cell(record.get(c)) for c in columns]


def write_rows(fh: IO[str], columns: Sequence[str], records: Iterable[Mapping[str, Any]],
               comments: Iterable[str] = ()) -> None:
    """Write ``# comment`` lines, the header and one line per record to an open text file."""
    for line in comments:
        fh.write(f"# {line}\n")
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        writer.writerow(record_cells(columns, record))


def write_table_csv(path: str | Path, columns: Sequence[str], records: Iterable[Mapping[str, Any]],
                    comments: Iterable[str] = ()) -> Path:
    """Write a table (see :func:`write_rows`) to ``path``, whole or not at all
    (:mod:`warpspeed.files.atomic`); returns the path."""
    from warpspeed.files.atomic import atomic_output

    p = Path(path)
    with atomic_output(p, "w", newline="") as fh:
        write_rows(fh, columns, records, comments)
    return p
