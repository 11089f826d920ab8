"""The rows a resumed study already holds, by key, on disk: memory independent of their number.

A study resumes from its journal, whose rows may be in any order (completion order under an
executor, another study file's order when the file changed). The output is written in the
study's order, so each configuration's stored row must be found by key. :class:`RowIndex`
keeps them in an SQLite database (Python's standard :mod:`sqlite3`) in a temporary file beside
the output, created exclusively with an unpredictable name (:func:`tempfile.mkstemp`) and
removed by :meth:`RowIndex.close` whatever happens. SQLite's page cache is bounded
(:data:`CACHE_KIB`), so resuming takes memory independent of the number of rows stored.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

Row = dict[str, str]

#: Rows inserted per transaction while the index is built (~1 kB each as key and JSON text).
INSERT_BATCH = 1000
#: SQLite page cache of the index, KiB (about SQLite's own default of 2000 KiB): the most of the
#: index held in memory. A cache of 8192 KiB resumed 10^5 rows 30 % faster at 6 MiB more peak
#: memory (benchmarks/bench_study_memory.py); a real prediction (6-230 ms a row) outweighs both.
CACHE_KIB = 2048


class RowIndex:
    """Stored rows of a study (``columns``) by key, and the keys of stored rows that are discarded
    (stored under another model set and to be recomputed). The first row stored under a key wins.
    Use as a context manager, or call :meth:`close`."""

    def __init__(self, directory: Path, columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        fd, name = tempfile.mkstemp(dir=directory, prefix=".warpspeed-study-", suffix=".index.tmp")
        os.close(fd)
        self._path = Path(name)
        self._rows: list[tuple[str, str]] = []
        self._discarded: list[tuple[str]] = []
        self._empty = True
        try:
            self._db = sqlite3.connect(name)
            self._db.execute("PRAGMA journal_mode = OFF")
            self._db.execute("PRAGMA synchronous = OFF")
            self._db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
            self._db.execute("CREATE TABLE rows (key TEXT PRIMARY KEY, cells TEXT NOT NULL) WITHOUT ROWID")
            self._db.execute("CREATE TABLE discarded (key TEXT PRIMARY KEY) WITHOUT ROWID")
        except BaseException:
            self._path.unlink(missing_ok=True)
            raise

    def __enter__(self) -> "RowIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, row: Row) -> None:
        """Store ``row`` under its key (ignored when the key is stored already)."""
        self._rows.append((row["key"], json.dumps([row[c] for c in self.columns])))
        self._empty = False
        if len(self._rows) >= INSERT_BATCH:
            self._flush()

    def discard(self, key: str) -> None:
        """Remember ``key`` as a stored row that cannot be reused."""
        self._discarded.append((key,))
        self._empty = False
        if len(self._discarded) >= INSERT_BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self._rows and not self._discarded:
            return
        with self._db:
            self._db.executemany("INSERT OR IGNORE INTO rows VALUES (?, ?)", self._rows)
            self._db.executemany("INSERT OR IGNORE INTO discarded VALUES (?)", self._discarded)
        self._rows.clear()
        self._discarded.clear()

    @property
    def empty(self) -> bool:
        """Whether nothing was stored or discarded."""
        return self._empty

    def get(self, key: str) -> Row | None:
        """The stored row of ``key``, or None."""
        if self._empty:
            return None
        self._flush()
        found = self._db.execute("SELECT cells FROM rows WHERE key = ?", (key,)).fetchone()
        return None if found is None else dict(zip(self.columns, json.loads(found[0])))

    def __contains__(self, key: object) -> bool:
        if self._empty:
            return False
        self._flush()
        return self._db.execute("SELECT 1 FROM rows WHERE key = ?", (key,)).fetchone() is not None

    def is_discarded(self, key: str) -> bool:
        """Whether ``key`` was discarded and no row of it is stored."""
        if self._empty:
            return False
        self._flush()
        return (self._db.execute("SELECT 1 FROM discarded WHERE key = ?", (key,)).fetchone() is not None
                and key not in self)

    def __len__(self) -> int:
        if self._empty:
            return 0
        self._flush()
        return int(self._db.execute("SELECT count(*) FROM rows").fetchone()[0])

    def close(self) -> None:
        """Close the database and remove its file."""
        try:
            self._db.close()
        finally:
            self._path.unlink(missing_ok=True)


def count_stored(index: RowIndex, keys: Iterable[str]) -> tuple[int, int, int]:
    """(resumed, dropped, refreshed) of a study whose keys are ``keys`` (each once): stored rows
    the study wants, stored rows it no longer contains, and keys it wants whose stored rows were
    discarded."""
    if index.empty:
        return 0, 0, 0
    resumed = refreshed = 0
    for key in keys:
        if key in index:
            resumed += 1
        elif index.is_discarded(key):
            refreshed += 1
    return resumed, len(index) - resumed, refreshed
