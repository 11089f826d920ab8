"""The models' tables of a device file (``[overlap]``, ``[interval]``, ``[power]``, ...), checked when
the device is loaded.

Each model declares the table it reads beside its own code: the file :data:`SCHEMA_FILE` in its
package (``warpspeed/<package>/device_table.toml``) names every key the table ``[<package>]`` may
hold, its kind (:class:`TableKey`) and its range. This module finds those files without importing
the models (they sit in higher layers, ``docs/architecture.md``) and checks every table of a
device file against them when the :class:`~warpspeed.hardware.device.Device` is built, like
``[[memory]]``: every key known, of its kind (a number, a whole number, a name, a text) and inside
its range, so that a zero lane count, a latency of 10^300 cycles or an array where a number
belongs is a one-line error naming the table and the key, never a ZeroDivisionError or an
overflow inside a model; a table no model declares (a misspelt ``[overlpa]``) is refused rather
than silently ignored. The models then read their tables without checking them again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Mapping

from warpspeed.errors import DeviceError
from warpspeed.files.names import check_name
from warpspeed.files.stored import subpackage_files
from warpspeed.files.toml import read_toml

#: The file in a model's package that declares its device-file table (the table's name is the
#: package's).
SCHEMA_FILE = "device_table.toml"
#: The package whose subpackages declare tables.
ROOT_PACKAGE = "warpspeed"
#: Kinds of key: a finite number, a whole number, a name (:mod:`warpspeed.files.names`), one line
#: of text, a list of such lines.
KINDS = ("number", "whole", "name", "text", "texts")
#: Longest text of a ``"text"`` key (a record, never read as a number or a path).
MAX_TEXT = 1000
#: Most lines of a ``"texts"`` key.
MAX_TEXTS = 1000


@dataclass(frozen=True)
class TableKey:
    """What one key of a model table may hold: ``kind`` ``"number"`` (finite, ``low`` to ``high``
    inclusive, in ``unit``), ``"whole"`` (an integer in that range), ``"name"`` (a name, see
    :mod:`warpspeed.files.names`), ``"text"`` (one line of at most :data:`MAX_TEXT` characters) or
    ``"texts"`` (a list of such lines). ``zero``: 0 is also allowed (a documented special value)."""

    kind: str
    low: float = 0.0
    high: float = 0.0
    unit: str = ""
    zero: bool = False

    def allowed(self) -> str:
        if self.kind == "name":
            return "a name (letters, digits, '.', '-', '_')"
        if self.kind in ("text", "texts"):
            return f"{'a list of ' if self.kind == 'texts' else ''}one-line text of at most {MAX_TEXT} characters"
        what = "a whole number" if self.kind == "whole" else "a number"
        unit = f" {self.unit}" if self.unit else ""
        return f"{what} from {self.low:g} to {self.high:g}{unit}" + (" (or 0)" if self.zero else "")


def _schema(package: str, document: Mapping[str, Any]) -> Mapping[str, TableKey]:
    """The keys of one schema file (of ``package``); a one-line error for a malformed entry."""
    where = f"{ROOT_PACKAGE}/{package}/{SCHEMA_FILE}"
    keys = document.get("keys")
    if not isinstance(keys, dict) or set(document) != {"keys"}:
        raise DeviceError(f"{where}: expected one [keys] table")
    allowed = {f.name for f in fields(TableKey)}
    out = {}
    for key, spec in keys.items():
        if not isinstance(spec, dict) or not set(spec) <= allowed or spec.get("kind") not in KINDS:
            raise DeviceError(f"{where}: {key} must be an inline table of {', '.join(sorted(allowed))} with kind one "
                              f"of {', '.join(KINDS)}")
        out[key] = TableKey(**spec)
    return MappingProxyType(out)


@lru_cache(maxsize=1)
def table_schemas() -> Mapping[str, Mapping[str, TableKey]]:
    """Table name -> its keys, for every model package that declares a table (:data:`SCHEMA_FILE`),
    read once (the package's files do not change while it runs)."""
    return MappingProxyType({package: _schema(package, read_toml(path, "table schema", DeviceError))
                             for package, path in subpackage_files(ROOT_PACKAGE, SCHEMA_FILE)})


def check_table(device_name: str, table_name: str, table: Any) -> None:
    """One model table of a device file against its schema (a one-line
    :class:`~warpspeed.errors.DeviceError` naming the table and the key)."""
    schema = table_schemas()[table_name]
    where = f"device {device_name!r} [{table_name}]"
    if not isinstance(table, dict):
        raise DeviceError(f"{where} is not a table (got {type(table).__name__}); write it as one [{table_name}] table")
    unknown = sorted(set(table) - set(schema))
    if unknown:
        raise DeviceError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(schema)}")
    for key, value in table.items():
        spec = schema[key]
        if spec.kind == "name":
            check_name(value, f"device {device_name!r}: {table_name} {key}", DeviceError)
            continue
        if spec.kind in ("text", "texts"):
            lines = value if spec.kind == "texts" and isinstance(value, list) else [value]
            if (spec.kind == "texts" and not isinstance(value, list)) or len(lines) > MAX_TEXTS or not all(
                    isinstance(v, str) and len(v) <= MAX_TEXT and "\n" not in v for v in lines):
                raise DeviceError(f"{where}: {key} is not valid (got {type(value).__name__}); allowed: {spec.allowed()}")
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if spec.kind == "whole":
            number = number and isinstance(value, int)
        inside = number and math.isfinite(value) and (spec.low <= value <= spec.high or (spec.zero and value == 0))
        if not inside:
            shown = value if number or isinstance(value, str) else type(value).__name__
            raise DeviceError(f"{where}: {key} is out of range (got {shown!r}); allowed: {spec.allowed()}")


def check_tables(device: Any) -> None:
    """Every model table of ``device`` (the :class:`~warpspeed.hardware.device.Device` being built);
    a table no model declares is refused rather than silently ignored."""
    schemas = table_schemas()
    unknown = sorted(set(device.tables) - set(schemas))
    if unknown:
        raise DeviceError(f"device {device.name!r}: unknown table(s) {', '.join(f'[{t}]' for t in unknown)}; allowed: "
                          f"[device], [[memory]], {', '.join(f'[{t}]' for t in schemas)}")
    for name, table in device.tables.items():
        check_table(device.name, name, table)
