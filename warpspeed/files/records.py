"""Records: the JSON objects and CSV rows of results, derived from their dataclass fields.

A result is a frozen dataclass; its JSON object has one key per field (in field order) and its
CSV row one column per field, so a record layout is written once, as the dataclass. A field's
``metadata`` may say how it is recorded (:func:`recorded`, :class:`FieldFormat`): under another
key, only when a condition on the result holds, flattened into its parent (a nested dataclass),
split into one CSV column per axis (a block's x, y, z) or per name of a mapping (the limiters),
or left out of one of the two forms. :func:`from_json` reads a JSON object back into its type.

JSON values are the fields' values with nested dataclasses as objects, tuples as lists and
mappings as objects; :func:`warpspeed.files.jsonsafe.json_text` turns non-finite floats into
``null`` when the record is written. CSV cells are written by :func:`warpspeed.files.rows.cell`.
"""

from __future__ import annotations

import collections.abc
import dataclasses
from dataclasses import dataclass, fields, is_dataclass
from functools import lru_cache
from types import UnionType
from typing import Any, Callable, Mapping, Union, get_args, get_origin, get_type_hints

#: Key of a field's metadata that holds its :class:`FieldFormat`.
RECORD = "warpspeed.record"


@dataclass(frozen=True)
class FieldFormat:
    """How one dataclass field is recorded.

    ``key``: JSON key and CSV column name (default: the field name). ``json``/``csv``: whether the
    field is in that form. ``json_if``: a condition on the whole result (the field is in the JSON
    object only when it holds). ``flatten``: the value is a dataclass whose fields take this
    field's place. ``axes``: CSV only, a sequence value written as one column per axis
    (``<key>_<axis>``). ``names`` and ``pattern``: CSV only, a mapping value written as one column
    per name (``pattern.format(name)``; a missing name is an empty cell). ``cell``: CSV only, how
    the value becomes a cell value. ``value``: JSON only, how the value becomes the JSON value (a
    change of unit; :func:`from_json` does not undo it). ``identity``: kept in the CSV row of a failed result.
    ``failure``: the field holding a result's error; when it is set, the CSV row holds only the
    ``identity`` fields and the error.
    """

    key: str | None = None
    json: bool = True
    json_if: Callable[[Any], bool] | None = None
    csv: bool = True
    flatten: bool = False
    axes: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    pattern: str = "{}"
    cell: Callable[[Any], Any] | None = None
    value: Callable[[Any], Any] | None = None
    identity: bool = False
    failure: bool = False


_PLAIN = FieldFormat()


def recorded(*, default: Any = dataclasses.MISSING, default_factory: Any = dataclasses.MISSING,
             compare: bool = True, repr: bool = True, init: bool = True, **form: Any) -> Any:
    """A dataclass field with its record format (the keyword arguments of :class:`FieldFormat`)."""
    return dataclasses.field(default=default, default_factory=default_factory, compare=compare, repr=repr, init=init,
                             metadata={RECORD: FieldFormat(**form)})


def field_format(f: dataclasses.Field) -> FieldFormat:
    """The :class:`FieldFormat` of a dataclass field (the plain one unless it was given)."""
    return f.metadata.get(RECORD, _PLAIN)


_SCALARS = frozenset({float, int, str, bool, type(None)})


def _json_value(value: Any) -> Any:
    if type(value) in _SCALARS:  # the common case, checked first: a plain number or text is itself
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return json_record(value)
    if isinstance(value, (tuple, list)):
        return [_json_value(v) for v in value]
    if isinstance(value, collections.abc.Mapping):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def json_record(result: Any) -> dict[str, Any]:
    """The JSON object of a dataclass instance: one key per recorded field, in field order."""
    out: dict[str, Any] = {}
    for f, form in _formats(type(result)):
        if not form.json or (form.json_if is not None and not form.json_if(result)):
            continue
        value = getattr(result, f.name)
        if form.flatten:
            out.update(json_record(value))
        else:
            out[form.key or f.name] = _json_value(value if form.value is None else form.value(value))
    return out


def from_json(cls: type, data: Mapping[str, Any]) -> Any:
    """The instance of dataclass ``cls`` whose :func:`json_record` is ``data`` (nested dataclasses,
    tuples and mappings rebuilt from the field types; keys that are no field are ignored, fields
    without a key take their default)."""
    hints = _field_types(cls)
    values = {}
    for f in fields(cls):
        form = field_format(f)
        key = form.key or f.name
        if form.flatten:
            values[f.name] = from_json(hints[f.name], data)
        elif form.json and key in data:
            values[f.name] = _from_json_value(hints[f.name], data[key])
    return cls(**values)


def _from_json_value(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        return _from_json_value(next(a for a in args if a is not type(None)), value)
    if is_dataclass(hint):
        return from_json(hint, value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from_json_value(args[0], v) for v in value)
        return tuple(_from_json_value(a, v) for a, v in zip(args, value))
    if origin in (dict, collections.abc.Mapping):
        return {k: _from_json_value(args[1], v) for k, v in value.items()}
    return value


@lru_cache(maxsize=None)
def _formats(cls: type) -> tuple[tuple[dataclasses.Field, FieldFormat], ...]:
    """Each field of dataclass ``cls`` with its :class:`FieldFormat`, in field order (read once per class)."""
    return tuple((f, field_format(f)) for f in fields(cls))


@lru_cache(maxsize=None)
def _field_types(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def csv_columns(cls: type) -> tuple[str, ...]:
    """The CSV columns of a dataclass type, in field order (nested ``flatten`` fields expanded)."""
    columns: list[str] = []
    for f in fields(cls):
        form = field_format(f)
        if not form.csv:
            continue
        if form.flatten:
            columns.extend(csv_columns(_field_types(cls)[f.name]))
        else:
            columns.extend(_columns_of(f.name, form))
    return tuple(columns)


def _element(hint: Any, form: FieldFormat) -> Any:
    """The type of one CSV cell of a field annotated ``hint``."""
    if form.cell is int:
        return int
    args = [a for a in get_args(hint) if a is not type(None)]
    if form.axes and args:
        return args[0]
    if form.names and len(args) == 2:
        return args[1]
    return args[0] if get_origin(hint) in (Union, UnionType) and len(args) == 1 else hint


def csv_types(cls: type) -> dict[str, Any]:
    """The type of every CSV column of a dataclass type (column -> ``int``, ``float``, ``str``, ...)."""
    types: dict[str, Any] = {}
    hints = _field_types(cls)
    for f in fields(cls):
        form = field_format(f)
        if not form.csv:
            continue
        if form.flatten:
            types.update(csv_types(hints[f.name]))
            continue
        element = _element(hints[f.name], form)
        types.update(dict.fromkeys(_columns_of(f.name, form), element))
    return types


def _columns_of(name: str, form: FieldFormat) -> tuple[str, ...]:
    key = form.key or name
    if form.axes:
        return tuple(f"{key}_{axis}" for axis in form.axes)
    if form.names:
        return tuple(form.pattern.format(n) for n in form.names)
    return (key,)


def csv_record(result: Any, failed: bool | None = None) -> dict[str, Any]:
    """The CSV row of a dataclass instance: column -> cell value (see :func:`csv_columns`).

    A result whose ``failure`` field is set (or ``failed``) keeps its ``identity`` fields and the
    error; its other columns are empty."""
    if failed is None:
        failed = any(field_format(f).failure and getattr(result, f.name) is not None for f in fields(result))
    out: dict[str, Any] = {}
    for f in fields(result):
        form = field_format(f)
        if not form.csv:
            continue
        key = form.key or f.name
        value = getattr(result, f.name)
        keep = not failed or form.identity or form.failure
        if form.flatten:
            out.update(csv_record(value, failed=failed and not form.identity))
        elif form.axes:
            out.update({f"{key}_{axis}": (_cell(form, v) if keep else "") for axis, v in zip(form.axes, value)})
        elif form.names:
            out.update({form.pattern.format(name): (_cell(form, value.get(name)) if keep else "")
                        for name in form.names})
        else:
            out[key] = _cell(form, value) if keep else ""
    return out


def _cell(form: FieldFormat, value: Any) -> Any:
    if value is None:
        return None
    return form.cell(value) if form.cell is not None else value
