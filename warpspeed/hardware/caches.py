"""The cache hierarchy of a device as an ordered list of levels.

Every device has a first level private to an SM / compute unit and a device-wide L2, given by
the ``l1_*`` and ``l2_*`` fields of its file (:class:`~warpspeed.hardware.device.Device`). A
device file may add further levels as ``[[cache]]`` tables; they are placed by the unit that
shares them, from the SIMDs outwards: ``cu`` (the first level), ``shader_array`` (RDNA's graphics
L1, shared by the compute units of a shader array), ``device`` (the L2) and ``memory_side`` (the
Infinity Cache in front of DRAM). NVIDIA devices have the two base levels only, so their
predictions do not depend on this module.

A ``[[cache]]`` table has ``name``, ``scope`` (``shader_array`` or ``memory_side``), ``bytes`` per
instance, ``line_bytes``, ``fill_bytes`` (the granule it requests from the next level), ``write``
(``through``, ``evict`` or ``back``), ``instances`` and optionally ``bandwidth_gb_s`` (all instances
together, GB/s), ``latency_ns`` and, for ``shader_array``, ``dispatch`` (how the blocks of a wave
are spread over the instances: ``round_robin``, consecutive blocks to different instances, or
``contiguous``, each instance a run of consecutive blocks). Each number carries its source in a
comment of the device file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.errors import DeviceError

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: Sharing units, from the SIMDs outwards.
SCOPES = ("cu", "shader_array", "device", "memory_side")
#: Scopes a ``[[cache]]`` table may add (the ``cu`` and ``device`` levels come from the base fields).
EXTRA_SCOPES = ("shader_array", "memory_side")
#: Write policies.
WRITE_POLICIES = ("through", "evict", "back")
#: How the blocks of a wave are spread over the instances of a shader-array level.
DISPATCHES = ("round_robin", "contiguous")
#: The dispatch a shader-array level takes when its table names none: AMD does not document the
#: assignment of work-groups to shader arrays; round robin is the conservative choice (little
#: halo sharing between the blocks of one shader array).
DEFAULT_DISPATCH = "round_robin"
_REQUIRED = ("name", "scope", "bytes", "line_bytes", "fill_bytes", "write", "instances")
_OPTIONAL = ("bandwidth_gb_s", "latency_ns", "dispatch")


@dataclass(frozen=True)
class CacheLevel:
    """One cache level. ``bytes`` per instance; ``bandwidth_gb_s`` for all instances together
    (GB/s, None where unknown: the level then imposes no limit and is reported as not modelled);
    ``dispatch`` only for shader-array levels."""

    name: str
    scope: str
    bytes: int
    line_bytes: int
    fill_bytes: int
    write: str
    instances: int
    bandwidth_gb_s: float | None = None
    latency_ns: float | None = None
    dispatch: str | None = None


def _positive(table: Mapping[str, Any], key: str, where: str, integer: bool) -> Any:
    value = table.get(key)
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value <= 0:
        raise DeviceError(f"{where}: {key} must be a positive {'integer' if integer else 'number'}, got {value!r}")
    return value


def _choice(table: Mapping[str, Any], key: str, allowed: tuple[str, ...], where: str) -> str:
    value = table.get(key)
    if value not in allowed:
        raise DeviceError(f"{where}: {key} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def parse_level(table: Mapping[str, Any], device_name: str, index: int) -> CacheLevel:
    """One ``[[cache]]`` table, checked; a one-line :class:`DeviceError` names the key."""
    where = f"device {device_name!r} [[cache]] #{index + 1}"
    if not isinstance(table, Mapping):
        raise DeviceError(f"{where}: must be a table")
    unknown = sorted(set(table) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise DeviceError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(_REQUIRED + _OPTIONAL)}")
    name = table.get("name")
    if not isinstance(name, str) or not name:
        raise DeviceError(f"{where}: name must be a non-empty string, got {name!r}")
    scope = _choice(table, "scope", EXTRA_SCOPES, where)
    dispatch = None
    if scope == "shader_array":
        dispatch = _choice({"dispatch": table.get("dispatch", DEFAULT_DISPATCH)}, "dispatch", DISPATCHES, where)
    elif "dispatch" in table:
        raise DeviceError(f"{where}: dispatch applies to shader_array levels only")
    optional = {k: float(_positive(table, k, where, False)) for k in ("bandwidth_gb_s", "latency_ns") if k in table}
    return CacheLevel(name=name, scope=scope, bytes=_positive(table, "bytes", where, True),
                      line_bytes=_positive(table, "line_bytes", where, True),
                      fill_bytes=_positive(table, "fill_bytes", where, True),
                      write=_choice(table, "write", WRITE_POLICIES, where),
                      instances=_positive(table, "instances", where, True), dispatch=dispatch, **optional)


def first_level_name(device: "Device") -> str:
    """``L0`` on RDNA (its L0 vector cache; the L1 is the shader array's), else ``L1``."""
    return "L0" if device.architecture.startswith("rdna") else "L1"


def cache_levels(device: "Device") -> tuple[CacheLevel, ...]:
    """The device's cache levels from the SIMDs outwards (module docstring)."""
    first = CacheLevel(name=first_level_name(device), scope="cu", bytes=device.l1_bytes,
                       line_bytes=device.l1_line_bytes, fill_bytes=device.l1_sector_bytes, write="through",
                       instances=device.sms, latency_ns=device.l1_latency_ns)
    l2 = CacheLevel(name="L2", scope="device", bytes=device.l2_bytes, line_bytes=device.l2_line_bytes,
                    fill_bytes=device.l2_sector_bytes, write="back", instances=1,
                    bandwidth_gb_s=device.l2_bandwidth_gb_s, latency_ns=device.l2_latency_ns)
    tables = device.tables.get("cache", [])
    if not isinstance(tables, list):
        raise DeviceError(f"device {device.name!r}: cache must be an array of tables ([[cache]])")
    extra = [parse_level(t, device.name, i) for i, t in enumerate(tables)]
    for scope in EXTRA_SCOPES:
        if sum(1 for level in extra if level.scope == scope) > 1:
            raise DeviceError(f"device {device.name!r}: at most one [[cache]] level with scope {scope!r}")
    levels = sorted([first, l2, *extra], key=lambda level: SCOPES.index(level.scope))
    names = [level.name for level in levels]
    if len(set(names)) != len(names):
        raise DeviceError(f"device {device.name!r}: cache level names must differ, got {', '.join(names)}")
    return tuple(levels)


def level(device: "Device", scope: str) -> CacheLevel | None:
    """The device's level of ``scope``, if it has one."""
    return next((lv for lv in cache_levels(device) if lv.scope == scope), None)
