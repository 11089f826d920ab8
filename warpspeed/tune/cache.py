"""Kernel Tuner cache files: read and verify one, write one.

A Kernel Tuner cache (``kernel_tuner.util.process_cache`` describes it) is a JSON object with
``device_name``, ``kernel_name``, ``problem_size``, ``tune_params_keys`` (the tune parameters in
order), ``tune_params`` (each parameter's values), ``objective`` and ``cache``: one entry per
measured configuration, keyed by its parameter values joined with commas (``"32,8,4,1,2,1"``),
holding those values and the measured ``time`` in milliseconds per launch (more keys: ``times``,
``compile_time``, ``timestamp``, ...). A configuration that failed holds the name of Kernel
Tuner's error class instead of a number (``"CompilationFailedConfig"``, ``"RuntimeFailedConfig"``,
``"InvalidConfig"``), as a value of ``time`` or of ``__error__``. A cache Kernel Tuner was still
writing ends without its closing brackets; Kernel Tuner reads it as closed, and so does
:func:`read_cache`.

:func:`read_cache` takes what Kernel Tuner and other tools write: parameter values as numbers or
as their text (``"32"``), times as numbers or numeric text, extra tune parameters, extra keys.
What it returns is verified data: every value a finite number or an error name, every time
finite and above zero; an entry that is neither (a corrupted entry) is dropped and counted, never
guessed. The file is parsed as JSON only (never evaluated). :func:`write_cache` writes a closed
cache whole or not at all, in Kernel Tuner's layout, so Kernel Tuner's ``tune_cache`` and its
dashboard read it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.atomic import write_text_atomic

#: Kernel Tuner's error classes (``kernel_tuner.util.ErrorConfig`` and its subclasses), as a cache names them.
ERROR_NAMES = ("ErrorConfig", "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig")
#: The objective Kernel Tuner minimises by default: milliseconds per launch.
TIME_KEY = "time"
#: Largest cache read (bytes): a cache of a million configurations is about 500 MB; more is a mistake.
MAX_CACHE_BYTES = 1 << 30


class TuneError(WarpspeedError):
    """A tuning input (cache file, mapping, kernel, GPU) that cannot be used."""


Value = int | float | str


@dataclass(frozen=True)
class CacheEntry:
    """One configuration of a cache: its parameter values (in the cache's parameter order) and the
    measured milliseconds per launch, or the Kernel Tuner error class that replaced them."""

    values: tuple[Value, ...]
    time_ms: float | None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.error == "" and self.time_ms is not None


@dataclass(frozen=True)
class KernelTunerCache:
    """A verified Kernel Tuner cache (module docstring).

    ``params``: the tune parameter names in order; ``values``: each parameter's values as the
    cache lists them (numbers where the text was a number); ``entries``: the verified entries;
    ``dropped``: entries that could not be read (corrupted, or parameters that do not match)."""

    device_name: str
    kernel_name: str
    problem_size: tuple[int, ...] | None
    params: tuple[str, ...]
    values: Mapping[str, tuple[Value, ...]]
    entries: tuple[CacheEntry, ...]
    dropped: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def valid(self) -> tuple[CacheEntry, ...]:
        """The entries with a measured time."""
        return tuple(e for e in self.entries if e.ok)

    def best_ms(self) -> float:
        """The shortest measured time (ms per launch)."""
        return min(e.time_ms for e in self.valid)  # type: ignore[type-var]

    def as_kernel_tuner(self) -> dict[str, Any]:
        """The cache as Kernel Tuner writes it, with the verified entries only and numeric values as
        numbers (the keys ``tune_cache`` looks configurations up by)."""
        entries: dict[str, Any] = {}
        for e in self.entries:
            record: dict[str, Any] = dict(zip(self.params, e.values))
            if e.ok:
                record[TIME_KEY] = e.time_ms
            else:
                record[TIME_KEY] = e.error or "RuntimeFailedConfig"
                record["__error__"] = e.error or "RuntimeFailedConfig"
            entries[",".join(str(v) for v in e.values)] = record
        values = {p: list(self.values[p]) for p in self.params}
        return {"device_name": self.device_name, "kernel_name": self.kernel_name,
                "problem_size": list(self.problem_size) if self.problem_size is not None else [1],
                "tune_params_keys": list(self.params), "tune_params": values, "objective": TIME_KEY,
                **dict(self.extra), "cache": entries}


def _number(value: Any) -> Value | None:
    """A parameter value: an int, a finite float, or numeric text as its number; other text stays
    text (a parameter may be a name); anything else (lists, objects, NaN, booleans) is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() else value
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            return text if text and len(text) <= 100 else None
        return _number(number)
    return None


def _time(record: Mapping[str, Any]) -> tuple[float | None, str]:
    """(milliseconds, error name) of an entry; (None, "") when it holds neither."""
    for key in ("__error__", TIME_KEY):
        value = record.get(key)
        if isinstance(value, str) and value.strip() in ERROR_NAMES:
            return None, value.strip()
    value = record.get(TIME_KEY)
    if isinstance(value, str):
        value = _number(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, ""
    if not math.isfinite(value) or value <= 0:
        return None, ""
    return float(value), ""


def _close(text: str) -> str:
    """The text of a cache Kernel Tuner was still writing, closed as Kernel Tuner closes it
    (``kernel_tuner.util.correct_open_cache``: a trailing comma dropped, ``}\\n}`` added)."""
    stripped = text.strip()
    if stripped and stripped[-3:] not in ("}\n}", "}}}"):
        try:
            json.loads(stripped)
            return stripped
        except ValueError:
            return stripped.rstrip(",") + "}\n}"
    return stripped


def read_cache(path: str | Path) -> KernelTunerCache:
    """Read and verify a Kernel Tuner cache (module docstring); raises :class:`TuneError` with one
    line naming the problem when the file cannot be read or holds no usable configuration."""
    p = Path(path)
    where = f"Kernel Tuner cache {str(p)!r}"
    try:
        if p.stat().st_size > MAX_CACHE_BYTES:
            raise TuneError(f"{where} is larger than {MAX_CACHE_BYTES >> 20} MiB; allowed: a Kernel Tuner cache file")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TuneError(f"{where} does not exist; allowed: a Kernel Tuner cache file (JSON)") from None
    except IsADirectoryError:
        raise TuneError(f"{where} is a directory; allowed: a Kernel Tuner cache file (JSON)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TuneError(f"{where} cannot be read ({exc.__class__.__name__}: {exc}); allowed: a Kernel Tuner "
                        "cache file (JSON, UTF-8)") from None
    try:
        doc = json.loads(_close(text), parse_constant=lambda name: None)
    except ValueError as exc:
        raise TuneError(f"{where} is not JSON ({exc}); allowed: a Kernel Tuner cache file") from None
    return parse_cache(doc, where)


def _names(doc: Mapping[str, Any], where: str) -> tuple[str, ...]:
    keys = doc.get("tune_params_keys")
    if keys is None and isinstance(doc.get("tune_params"), dict):
        keys = list(doc["tune_params"])
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
        raise TuneError(f"{where} has no list of tune parameter names ('tune_params_keys'); allowed: a Kernel "
                        "Tuner cache file")
    if len(set(keys)) != len(keys):
        raise TuneError(f"{where} names a tune parameter twice in 'tune_params_keys' ({keys})")
    return tuple(keys)


def _problem_size(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, (int, str)):
        value = [value]
    if not isinstance(value, list) or not 1 <= len(value) <= 3:
        return None
    numbers = [_number(v) for v in value]
    if not all(isinstance(v, int) and v > 0 for v in numbers):
        return None
    return tuple(numbers)  # type: ignore[arg-type]


def parse_cache(doc: Any, where: str = "Kernel Tuner cache") -> KernelTunerCache:
    """Verify a parsed cache document (see :func:`read_cache`)."""
    if not isinstance(doc, dict):
        raise TuneError(f"{where} is not a JSON object; allowed: a Kernel Tuner cache file")
    if not isinstance(doc.get("cache"), dict):
        raise TuneError(f"{where} has no 'cache' object of measured configurations; allowed: a Kernel Tuner "
                        "cache file")
    names = _names(doc, where)
    entries: list[CacheEntry] = []
    dropped = 0
    seen: set[tuple[Value, ...]] = set()
    for record in doc["cache"].values():
        if not isinstance(record, dict) or not all(n in record for n in names):
            dropped += 1
            continue
        values = tuple(_number(record[n]) for n in names)
        time_ms, error = _time(record)
        if any(v is None for v in values) or (time_ms is None and not error) or values in seen:
            dropped += 1
            continue
        seen.add(values)  # type: ignore[arg-type]
        entries.append(CacheEntry(values, time_ms, error))  # type: ignore[arg-type]
    if not any(e.ok for e in entries):
        raise TuneError(f"{where} holds no configuration with a measured time ({len(doc['cache'])} entries, "
                        f"{dropped} unreadable); allowed: entries with 'time' in ms > 0")
    listed = doc.get("tune_params") if isinstance(doc.get("tune_params"), dict) else {}
    values: dict[str, tuple[Value, ...]] = {}
    for i, name in enumerate(names):
        found = list(dict.fromkeys(e.values[i] for e in entries))
        given = listed.get(name) if isinstance(listed.get(name), list) else []
        given_numbers = [v for v in (_number(g) for g in given) if v is not None]
        values[name] = tuple(dict.fromkeys([*given_numbers, *found]))
    device = doc.get("device_name")
    kernel = doc.get("kernel_name")
    extra = {k: v for k, v in doc.items() if k == "warpspeed" and isinstance(v, dict)}
    return KernelTunerCache(device_name=device if isinstance(device, str) else "", kernel_name=kernel if
                            isinstance(kernel, str) else "", problem_size=_problem_size(doc.get("problem_size")),
                            params=names, values=values, entries=tuple(entries), dropped=dropped, extra=extra)


def cache_text(cache: KernelTunerCache) -> str:
    """The cache as the JSON text of a closed Kernel Tuner cache (one entry a line, as Kernel Tuner
    writes them)."""
    doc = cache.as_kernel_tuner()
    entries = doc.pop("cache")
    head = json.dumps(doc, indent="", allow_nan=False)[:-2]
    lines = [json.dumps({k: v}, allow_nan=False)[1:-1] for k, v in entries.items()]
    return head + ',\n"cache": {\n' + ",\n".join(lines) + "}\n}\n"


def write_cache(cache: KernelTunerCache, path: str | Path) -> Path:
    """Write ``cache`` as a closed Kernel Tuner cache, whole or not at all."""
    return write_text_atomic(path, cache_text(cache))


def make_cache(device_name: str, kernel_name: str, problem_size: Sequence[int], params: Sequence[str],
               rows: Sequence[tuple[Sequence[Value], float | None, str]],
               extra: Mapping[str, Any] | None = None) -> KernelTunerCache:
    """A cache from rows of (parameter values, ms per launch or None, error name or "")."""
    entries = tuple(CacheEntry(tuple(v), t, e) for v, t, e in rows)
    values = {p: tuple(sorted(dict.fromkeys(e.values[i] for e in entries))) for i, p in enumerate(params)}
    return KernelTunerCache(device_name, kernel_name, tuple(problem_size), tuple(params), values, entries,
                            extra=dict(extra or {}))
