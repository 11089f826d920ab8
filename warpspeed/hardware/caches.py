"""The memory levels of a device: one ordered list of cache levels, from the SIMDs outwards.

A device file lists its levels as ``[[memory]]`` tables (as kerncraft's machine files list their
memory hierarchy), each placed by the unit that shares it: ``cu`` (the first level, one per SM or
compute unit), ``shader_array`` (RDNA's graphics L1, shared by the compute units of a shader
array), ``device`` (the L2) and ``memory_side`` (the Infinity Cache in front of DRAM). Every device
has exactly one ``cu`` and one ``device`` level; NVIDIA devices have those two only. The tables
are parsed once, when the device is loaded (:func:`parse_memory`), into :class:`CacheLevel`
records; :mod:`warpspeed.hardware.ranges` checks their numbers.

Every level has ``name``, ``scope``, ``bytes`` per instance, ``line_bytes`` (the allocation
granule), ``sector_bytes`` (the granule it requests from the next level) and ``write``
(``through``, ``evict`` or ``back``); optionally ``latency_ns`` (idle pointer-chase latency) and
``bandwidth_gb_s`` (all instances together, GB/s; without it a level beyond the L2 imposes no limit
and is reported as not modelled). By scope:

* ``cu``: ``banks`` and ``bank_bytes`` of the data array; optionally ``store_granule_bytes`` (the
  granule in which stores leave it; default: the sector); where the first level shares its data
  array with shared memory (NVIDIA since Volta), ``unified_bytes`` (the combined L1/shared array),
  ``shared_carveouts_kib`` (the shared-memory sizes the driver may configure, ascending) and
  ``reserved_shared_bytes`` (shared memory the system reserves per resident block), from which
  :mod:`warpspeed.memory.capacity.carveout` derives the L1 a launch keeps; and its pipeline: the first-level
  ``family`` and, where a part's loads were measured, ``tag_overhead_wavefronts``,
  ``tag_wavefronts_per_line`` and ``wide_bytes_per_cycle``, and for the banked CDNA vector L1
  ``column_bytes``, ``request_cycles`` and optionally ``tag_banks`` and ``capacity_miss_fraction``
  (:mod:`warpspeed.memory.first_level`);
* ``device``: ``effective_bytes`` (the capacity usable for reuse, half the nominal on split-L2
  parts) and ``bandwidth_gb_s`` (sustained L2 -> L1 at full occupancy, required); optionally
  ``layer_bytes``, the capacity the layer conditions and the DRAM capacity misses see where it was
  measured to differ from ``effective_bytes`` (:attr:`CacheLevel.layer_capacity`);
* ``shader_array`` and ``memory_side``: ``instances``, and for ``shader_array`` the ``dispatch``
  of a wave's blocks over the instances (``round_robin``: consecutive blocks to different
  instances, or ``contiguous``: each instance a run of consecutive blocks).

Each number carries its source in a comment of the device file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from warpspeed.errors import DeviceError

#: Sharing units, from the SIMDs outwards.
SCOPES = ("cu", "shader_array", "device", "memory_side")
#: Scopes a device must have exactly once: the first level and the L2.
BASE_SCOPES = ("cu", "device")
#: Write policies.
WRITE_POLICIES = ("through", "evict", "back")
#: How the blocks of a wave are spread over the instances of a shader-array level.
DISPATCHES = ("round_robin", "contiguous")
#: The dispatch a shader-array level takes when its table names none: AMD does not document the
#: assignment of work-groups to shader arrays; round robin is the conservative choice (little
#: halo sharing between the blocks of one shader array).
DEFAULT_DISPATCH = "round_robin"
#: Keys of every level table, and per scope the further required and optional keys.
COMMON_KEYS = ("name", "scope", "bytes", "line_bytes", "sector_bytes", "write")
SCOPE_REQUIRED: Mapping[str, tuple[str, ...]] = {
    "cu": ("banks", "bank_bytes"),
    "shader_array": ("instances",),
    "device": ("effective_bytes", "bandwidth_gb_s"),
    "memory_side": ("instances",),
}
SCOPE_OPTIONAL: Mapping[str, tuple[str, ...]] = {
    "cu": ("latency_ns", "store_granule_bytes", "unified_bytes", "shared_carveouts_kib", "reserved_shared_bytes",
           "family", "tag_overhead_wavefronts", "tag_wavefronts_per_line",
           "wide_bytes_per_cycle", "column_bytes", "request_cycles", "tag_banks", "capacity_miss_fraction"),
    "shader_array": ("bandwidth_gb_s", "latency_ns", "dispatch"),
    "device": ("latency_ns", "layer_bytes"),
    "memory_side": ("bandwidth_gb_s", "latency_ns"),
}
#: Integer keys (the others but the text keys are numbers).
INTEGER_KEYS = ("bytes", "line_bytes", "sector_bytes", "instances", "effective_bytes", "layer_bytes", "banks",
                "bank_bytes", "unified_bytes", "reserved_shared_bytes",
                "store_granule_bytes", "wide_bytes_per_cycle", "column_bytes", "tag_banks")
#: Text keys.
TEXT_KEYS = ("name", "scope", "write", "dispatch", "family")
#: Number keys that may be zero (a fitted tag overhead).
NON_NEGATIVE_KEYS = ("tag_overhead_wavefronts", "reserved_shared_bytes")
#: List keys: ascending non-negative integers.
LIST_KEYS = ("shared_carveouts_kib",)


@dataclass(frozen=True)
class CacheLevel:
    """One memory level (see the module docstring for the keys and their units). ``instances``
    is None on the ``cu`` and ``device`` levels of a device file (one per SM/CU, one);
    :meth:`Device.levels <warpspeed.hardware.device.Device.levels>` fills it in."""

    name: str
    scope: str
    bytes: int
    line_bytes: int
    sector_bytes: int
    write: str
    instances: int | None = None
    bandwidth_gb_s: float | None = None
    latency_ns: float | None = None
    dispatch: str | None = None
    effective_bytes: int | None = None
    layer_bytes: int | None = None
    banks: int | None = None
    bank_bytes: int | None = None
    store_granule_bytes: int | None = None
    family: str | None = None
    tag_overhead_wavefronts: float | None = None
    tag_wavefronts_per_line: float | None = None
    wide_bytes_per_cycle: int | None = None
    column_bytes: int | None = None
    request_cycles: float | None = None
    tag_banks: int | None = None
    capacity_miss_fraction: float | None = None
    unified_bytes: int | None = None
    shared_carveouts_kib: tuple[int, ...] | None = None
    reserved_shared_bytes: int | None = None

    @property
    def bytes_per_cycle(self) -> int:
        """Bytes the data array delivers per cycle (banks x bank width; first level)."""
        return (self.banks or 0) * (self.bank_bytes or 0)

    @property
    def store_granule(self) -> int:
        """Bytes in which stores leave the level: ``store_granule_bytes``, else the sector."""
        return self.store_granule_bytes if self.store_granule_bytes is not None else self.sector_bytes

    @property
    def reuse_bytes(self) -> int:
        """The capacity usable for reuse: ``effective_bytes``, else ``bytes``."""
        return self.effective_bytes if self.effective_bytes is not None else self.bytes

    @property
    def layer_capacity(self) -> int:
        """The capacity the layer conditions and the capacity-miss curves of the wave see (bytes):
        ``layer_bytes`` where the device file gives it, else :attr:`reuse_bytes`."""
        return self.layer_bytes if self.layer_bytes is not None else self.reuse_bytes


def _positive(table: Mapping[str, Any], key: str, where: str) -> Any:
    value = table[key]
    integer = key in INTEGER_KEYS
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not (value >= 0 if key in NON_NEGATIVE_KEYS
                                                                          else value > 0):
        kind = "integer" if integer else "number"
        raise DeviceError(f"{where}: {key} must be a {'non-negative' if key in NON_NEGATIVE_KEYS else 'positive'} "
                          f"{kind}, got {value!r}")
    return value if integer else float(value)


def _ascending(value: Any, key: str, where: str) -> tuple[int, ...]:
    """A list key: a non-empty list of ascending non-negative integers, as a tuple."""
    if (not isinstance(value, (list, tuple)) or not value
            or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value)
            or list(value) != sorted(set(value))):
        raise DeviceError(f"{where}: {key} must be a non-empty list of ascending non-negative integers, got {value!r}")
    return tuple(value)


def checked_changes(level: "CacheLevel", changes: Mapping[str, Any], device_name: str) -> dict[str, Any]:
    """``changes`` to ``level`` (a what-if device), each value of the type a device file must give
    (:func:`parse_level`); the scope and the name stay. A one-line :class:`DeviceError` names the key."""
    where = f"device {device_name!r} [[memory]] {level.name}"
    out: dict[str, Any] = {}
    for key, value in changes.items():
        if key in ("name", "scope", "instances"):
            raise DeviceError(f"{where}: {key} cannot be changed; allowed: the level's sizes, bandwidth, latency "
                              "and policies")
        if key == "write":
            out[key] = _choice(value, key, WRITE_POLICIES, where)
        elif key == "dispatch":
            out[key] = _choice(value, key, DISPATCHES, where)
        elif key == "family":
            if not isinstance(value, str) or not value:
                raise DeviceError(f"{where}: family must be a non-empty string, got {value!r}")
            out[key] = value
        elif key in LIST_KEYS:
            out[key] = _ascending(value, key, where)
        else:
            out[key] = _positive(changes, key, where)
    return out


def _choice(value: Any, key: str, allowed: Sequence[str], where: str) -> str:
    if value not in allowed:
        raise DeviceError(f"{where}: {key} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def parse_level(table: Mapping[str, Any], device_name: str, index: int) -> CacheLevel:
    """One ``[[memory]]`` table, its keys and their types checked; a one-line :class:`DeviceError`
    names the level and the key."""
    where = f"device {device_name!r} [[memory]] #{index + 1}"
    if not isinstance(table, Mapping):
        raise DeviceError(f"{where}: must be a table")
    name = table.get("name")
    if not isinstance(name, str) or not name:
        raise DeviceError(f"{where}: name must be a non-empty string, got {name!r}")
    where = f"device {device_name!r} [[memory]] {name}"
    scope = _choice(table.get("scope"), "scope", SCOPES, where)
    allowed = (*COMMON_KEYS, *SCOPE_REQUIRED[scope], *SCOPE_OPTIONAL[scope])
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise DeviceError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed for scope {scope}: "
                          f"{', '.join(allowed)}")
    missing = [k for k in (*COMMON_KEYS, *SCOPE_REQUIRED[scope]) if k not in table]
    if missing:
        raise DeviceError(f"{where}: missing key(s) {', '.join(missing)}")
    values: dict[str, Any] = {"name": name, "scope": scope,
                              "write": _choice(table["write"], "write", WRITE_POLICIES, where)}
    if scope == "shader_array":
        values["dispatch"] = _choice(table.get("dispatch", DEFAULT_DISPATCH), "dispatch", DISPATCHES, where)
    if "family" in table:
        if not isinstance(table["family"], str) or not table["family"]:
            raise DeviceError(f"{where}: family must be a non-empty string, got {table['family']!r}")
        values["family"] = table["family"]
    for key in table:
        if key in LIST_KEYS:
            values[key] = _ascending(table[key], key, where)
        elif key not in TEXT_KEYS:
            values[key] = _positive(table, key, where)
    return CacheLevel(**values)


def parse_memory(tables: Any, device_name: str) -> tuple[CacheLevel, ...]:
    """The ``[[memory]]`` tables of a device file, parsed (:func:`parse_level`) in file order."""
    if not isinstance(tables, list) or not tables:
        raise DeviceError(f"device {device_name!r}: memory must be a non-empty array of tables ([[memory]]), "
                          f"one per level from the SIMDs outwards")
    return tuple(parse_level(t, device_name, i) for i, t in enumerate(tables))


def check_hierarchy(levels: Sequence[CacheLevel], device_name: str) -> None:
    """One ``cu`` and one ``device`` level, at most one of each further scope, listed from the
    SIMDs outwards, with distinct names."""
    where = f"device {device_name!r} [[memory]]"
    for scope in SCOPES:
        count = sum(1 for level in levels if level.scope == scope)
        if scope in BASE_SCOPES and count != 1:
            raise DeviceError(f"{where}: needs exactly one level with scope {scope!r}, got {count}")
        if count > 1:
            raise DeviceError(f"{where}: at most one level with scope {scope!r}, got {count}")
    order = [SCOPES.index(level.scope) for level in levels]
    if order != sorted(order):
        raise DeviceError(f"{where}: levels must be listed from the SIMDs outwards ({', '.join(SCOPES)}), got "
                          f"{', '.join(level.scope for level in levels)}")
    names = [level.name for level in levels]
    if len(set(names)) != len(names):
        raise DeviceError(f"{where}: level names must differ, got {', '.join(names)}")


def with_instances(levels: Sequence[CacheLevel], sms: int) -> tuple[CacheLevel, ...]:
    """``levels`` with the instances of the ``cu`` (``sms``) and ``device`` (one) levels filled in."""
    fixed = {"cu": sms, "device": 1}
    return tuple(replace(level, instances=fixed[level.scope]) if level.scope in fixed else level
                 for level in levels)

