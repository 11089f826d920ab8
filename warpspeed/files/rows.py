"""The one row schema and CSV writer of ranking, study and measurement tables.

A ranking row (:class:`warpspeed.rank.RankRow`) becomes the columns :data:`RANK_COLUMNS`:
configuration (:data:`CONFIG_COLUMNS`), predicted rate and limiters (lattice updates per second,
lup/s), L1 cycles and L2/DRAM volumes per lattice update (bytes/lup), occupancy and error. A
ranking CSV prefixes the rank, a study CSV its row key, kernel, device, domain and threads; a
measurement CSV has its own measured and predicted columns after the configuration.

Cells are written by :func:`cell`: floats with ``repr`` (they read back exactly with ``float``),
``inf`` as ``inf``, NaN and missing values as an empty cell.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import IO, Any, Iterable, Mapping, Sequence

from warpspeed.errors import WarpspeedError

#: Launch configuration: threads per block and cells per thread (folding) along x, y, z.
CONFIG_COLUMNS: tuple[str, ...] = ("block_x", "block_y", "block_z", "fold_x", "fold_y", "fold_z")

#: The four limiters of the roofline, in column order.
LIMITERS: tuple[str, ...] = ("fp", "l1", "l2", "dram")

#: Columns of one ranked configuration. Rates in lup/s, L1 in cycles per lup, volumes in bytes
#: per lup; numeric cells are empty in error rows.
RANK_COLUMNS: tuple[str, ...] = (
    *CONFIG_COLUMNS,
    "lups_per_s", "limiter", *(f"{name}_lups_per_s" for name in LIMITERS),
    "l1_cycles_per_lup", "l2_load_bytes_per_lup", "l2_store_bytes_per_lup",
    "dram_load_bytes_per_lup", "dram_store_bytes_per_lup",
    "blocks_per_sm", "occupancy_limiter", "registers", "error",
)


def config_record(block: Sequence[int], fold: Sequence[int]) -> dict[str, int]:
    """The :data:`CONFIG_COLUMNS` of a block and a folding."""
    return {**{f"block_{d}": int(v) for d, v in zip("xyz", block)},
            **{f"fold_{d}": int(v) for d, v in zip("xyz", fold)}}


def rank_row_record(row: Any) -> dict[str, Any]:
    """The :data:`RANK_COLUMNS` of a :class:`~warpspeed.rank.RankRow` (numbers empty when it failed)."""
    record: dict[str, Any] = {c: "" for c in RANK_COLUMNS}
    record.update(config_record(row.config.block, row.config.fold))
    if row.error is not None:
        record["error"] = error_text(row.error)
        return record
    record.update({
        "lups_per_s": row.lups_per_s, "limiter": row.limiter,
        **{f"{name}_lups_per_s": row.limits.get(name, math.nan) for name in LIMITERS},
        "l1_cycles_per_lup": row.l1_cycles_per_lup,
        "l2_load_bytes_per_lup": row.l2_load_bytes_per_lup, "l2_store_bytes_per_lup": row.l2_store_bytes_per_lup,
        "dram_load_bytes_per_lup": row.dram_load_bytes_per_lup,
        "dram_store_bytes_per_lup": row.dram_store_bytes_per_lup,
        "blocks_per_sm": int(row.blocks_per_sm), "occupancy_limiter": row.occupancy_limiter,
        "registers": int(row.registers),
    })
    return record


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
    """Write a table (see :func:`write_rows`) to ``path``; returns the path."""
    p = Path(path)
    with p.open("w", newline="", encoding="utf-8") as fh:
        write_rows(fh, columns, records, comments)
    return p
