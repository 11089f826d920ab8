"""GPU description: the frozen :class:`Device` and its TOML loader.

One TOML file per GPU lives in ``warpspeed/hardware/devices/``; every number in it carries its source
in a comment. Users may pass the path of their own file anywhere a device name is accepted.

Terminology is NVIDIA's; on AMD GPUs an "SM" is a compute unit (CU; on RDNA a work-group
processor in WGP mode counts as two CUs), "warp" is a wavefront, and the first level ("L1") is the
cache closest to the SIMDs (the vector L1 on CDNA, the L0 on RDNA). The caches are one list of
memory levels (``[[memory]]`` tables, :mod:`warpspeed.hardware.caches`), parsed at load.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

from warpspeed.errors import DeviceError
from warpspeed.files.names import looks_like_path
from warpspeed.files.stored import package_file, package_files
from warpspeed.files.toml import read_toml
from warpspeed.hardware.caches import CacheLevel, check_hierarchy, checked_changes, parse_memory, with_instances
from warpspeed.hardware.memory_latency import MemoryLatencies, architecture_latencies
from warpspeed.hardware.model_tables import check_tables, table_schemas
from warpspeed.hardware.ranges import check_level, check_numbers, check_relations, plausible_lups_per_s
from warpspeed.units import KILO

#: Fields that are text, not numbers.
_TEXT_FIELDS = ("name", "vendor", "architecture", "source", "latencies_from", "launch_overhead_part")
#: Fields that are not scalars: the memory levels and the models' tables (checked here, by
#: :mod:`warpspeed.hardware.ranges` and :mod:`warpspeed.hardware.model_tables`).
_TABLE_FIELDS = ("memory", "tables")
#: Calibrated achievable-DRAM-bandwidth curve (:mod:`warpspeed.hardware.dram_curve`): all or none.
DRAM_CURVE_FIELDS = ("dram_curve_peak_gb_s", "dram_curve_latency_ns", "dram_curve_sharpness")
#: Pointer-chase latency of DRAM: optional, present where measured (the caches' are their levels').
LATENCY_FIELDS = ("dram_latency_ns", "latencies_from")
#: The sustained DRAM bandwidth of kernels with many concurrent streams and the stream count it
#: holds from, where a part's memory system sustains less for them (:mod:`warpspeed.memory.dram_bandwidth`).
MANY_STREAMS_FIELDS = ("dram_many_streams_gb_s", "dram_many_streams_count", "dram_few_streams_count")
#: The launch cost: a measured per-launch overhead, or the measured part whose overhead the device
#: takes (:mod:`warpspeed.measured.launch_cost`).
LAUNCH_FIELDS = ("launch_overhead_us", "launch_overhead_part")
#: The board: its power limit and the clock the power family's energies hold at
#: (:mod:`warpspeed.power`; a device with a ``[power]`` table needs both).
BOARD_FIELDS = ("power_limit_w", "reference_clock_mhz")
#: Keys a device file may leave out (then the DRAM limiter uses the flat sustained bandwidth, no
#: latency is reported, the launch cost is the median of the measured parts' and no power is predicted).
OPTIONAL_FIELDS = DRAM_CURVE_FIELDS + LATENCY_FIELDS + LAUNCH_FIELDS + MANY_STREAMS_FIELDS + BOARD_FIELDS


@dataclass(frozen=True)
class Device:
    """A GPU as the model sees it. Units are in the field names."""

    name: str
    vendor: str  # "nvidia" or "amd"
    architecture: str  # e.g. "ampere", "cdna2", "rdna2"
    sms: int  # streaming multiprocessors / compute units
    clock_ghz: float  # SM clock used for the L1 and FP limiters
    warp_size: int  # threads per warp / wavefront
    dram_bandwidth_gb_s: float  # sustained DRAM bandwidth at full occupancy, GB/s (1e9 B/s)
    # occupancy resources
    registers_per_sm: int  # 32-bit registers
    register_alloc_unit: int  # registers are allocated per warp in multiples of this
    register_partitions: int  # register file is split in this many SM sub-partitions
    max_registers_per_thread: int
    max_threads_per_block: int
    max_block_dim_x: int  # largest x extent of a block (threads)
    max_block_dim_y: int  # largest y extent of a block (threads)
    max_block_dim_z: int  # largest z extent of a block (threads)
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    shared_bytes_per_sm: int  # shared memory usable by blocks on one SM
    shared_bytes_per_block: int  # most shared memory one block may use
    shared_alloc_unit_bytes: int  # shared memory allocation granularity
    # arithmetic
    fp32_lanes_per_sm: int  # FP32 results per clock per SM (an FMA is one)
    fp64_lanes_per_sm: int  # FP64 results per clock per SM (an FMA is one)
    fp16_lanes_per_sm: int  # FP16 (non-tensor, non-matrix) results per clock per SM
    #: The memory levels from the SIMDs outwards (``[[memory]]``; :mod:`warpspeed.hardware.caches`):
    #: the first level (:attr:`l1`), the L2 (:attr:`l2`) and the levels a part adds.
    memory: tuple[CacheLevel, ...] = field(repr=False)
    source: str = ""  # file the device was loaded from
    #: The file's other top-level tables (``[interval]``, ``[power]``, ``[overlap]``): parameters
    #: of the models beyond the roofline, each checked against the schema its model declares
    #: (:mod:`warpspeed.hardware.model_tables`) and read by its model.
    tables: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
    # achievable DRAM bandwidth against bytes in flight (smooth Little's-law curve, fitted to
    # streaming measurements): peak B [GB/s], effective latency L [ns], smoothness p (>= 1)
    dram_curve_peak_gb_s: float | None = None
    dram_curve_latency_ns: float | None = None
    dram_curve_sharpness: float | None = None
    # idle pointer-chase load-to-use latency of DRAM [ns] (the caches' are their levels')
    dram_latency_ns: float | None = None
    #: the built-in part whose pointer-chase latencies this device takes where it has none of its
    #: own (same SM and L2; :attr:`latencies`)
    latencies_from: str | None = None
    #: per-launch overhead measured on this device [us] (``warpspeed calibrate``)
    launch_overhead_us: float | None = None
    #: the part of the stored launch fit whose per-launch overhead this device takes
    launch_overhead_part: str | None = None
    #: sustained DRAM bandwidth of kernels with ``dram_many_streams_count`` or more concurrent
    #: streams [GB/s], where the part sustains less for them than ``dram_bandwidth_gb_s`` (AMD:
    #: gpu-stream's triad; the H200: multi-array copies)
    dram_many_streams_gb_s: float | None = None
    #: the stream count at which ``dram_many_streams_gb_s`` was measured (default 3: a triad)
    dram_many_streams_count: float | None = None
    #: the stream count up to which the part sustains ``dram_bandwidth_gb_s`` (default 2: one load
    #: and one store stream)
    dram_few_streams_count: float | None = None
    #: the board's power limit [W] (its datasheet's maximum power, or the enforced limit that
    #: ``warpspeed calibrate`` reads), the limit :mod:`warpspeed.power` throttles the clock to
    power_limit_w: float | None = None
    #: the SM clock [MHz] at which the power family's energies hold (voltage scales relative to it)
    reference_clock_mhz: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", frozen_table(self.tables))  # read by the models, never changed
        numeric = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in OPTIONAL_FIELDS and value is None:
                continue
            if f.name in _TABLE_FIELDS:
                continue
            if f.name in _TEXT_FIELDS:
                if not isinstance(value, str):
                    raise DeviceError(f"device {self.name!r}: {f.name} must be a string, got {value!r}")
                continue
            # Annotations are strings under ``from __future__ import annotations``.
            if f.type in ("int", "int | None") and (isinstance(value, bool) or not isinstance(value, int)):
                raise DeviceError(f"device {self.name!r}: {f.name} must be an integer, got {value!r}")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise DeviceError(f"device {self.name!r}: {f.name} must be a number, got {value!r}")
            if not value > 0:  # NaN included
                raise DeviceError(f"device {self.name!r}: {f.name} must be positive, got {value!r}")
            numeric.append(f.name)
        curve = [getattr(self, k) is None for k in DRAM_CURVE_FIELDS]
        if any(curve) and not all(curve):
            raise DeviceError(f"device {self.name!r}: give all of {', '.join(DRAM_CURVE_FIELDS)} or none")
        if self.dram_many_streams_gb_s is not None and self.dram_many_streams_gb_s > self.dram_bandwidth_gb_s:
            raise DeviceError(f"device {self.name!r}: dram_many_streams_gb_s ({self.dram_many_streams_gb_s}) must not "
                              f"exceed dram_bandwidth_gb_s ({self.dram_bandwidth_gb_s})")
        if self.dram_many_streams_count is not None and (self.dram_many_streams_gb_s is None
                                                         or not self.dram_many_streams_count > 2):
            raise DeviceError(f"device {self.name!r}: dram_many_streams_count ({self.dram_many_streams_count}) needs "
                              f"dram_many_streams_gb_s and must exceed 2 (one load and one store stream)")
        few = self.dram_few_streams_count
        if few is not None and (self.dram_many_streams_gb_s is None or not 2 <= few < (self.dram_many_streams_count or 3)):
            raise DeviceError(f"device {self.name!r}: dram_few_streams_count ({few}) needs dram_many_streams_gb_s, at "
                              f"least 2 and below dram_many_streams_count ({self.dram_many_streams_count or 3})")
        if self.dram_curve_sharpness is not None and self.dram_curve_sharpness < 1:
            raise DeviceError(f"device {self.name!r}: dram_curve_sharpness must be >= 1, got {self.dram_curve_sharpness!r}")
        for axis in "xyz":
            extent = getattr(self, f"max_block_dim_{axis}")
            if extent > self.max_threads_per_block:
                raise DeviceError(
                    f"device {self.name!r}: max_block_dim_{axis} ({extent}) exceeds max_threads_per_block "
                    f"({self.max_threads_per_block})"
                )
        check_numbers(self, tuple(numeric))
        check_relations(self)
        if self.latencies_from is not None:  # a built-in part's name, never a file
            if looks_like_path(self.latencies_from):
                raise DeviceError(f"device {self.name!r}: latencies_from names a built-in device, not a file (got "
                                  f"{self.latencies_from!r}); allowed: a built-in device name such as 'H100-SXM5-80GB'")
            try:
                resolve_device_name(self.latencies_from)
            except DeviceError as exc:
                raise DeviceError(f"device {self.name!r}: latencies_from: {exc}") from None
        check_hierarchy(self.memory, self.name)
        for level in self.memory:
            check_level(level, self.name)
        check_tables(self)

    @cached_property
    def latencies(self) -> MemoryLatencies:
        """The idle load-to-use latencies of the first level, the L2 and DRAM, SM cycles, resolved
        once (:mod:`warpspeed.hardware.memory_latency`): the device's own pointer-chase latencies,
        else those of the part ``latencies_from`` names at this device's clock, else the
        architecture's latency file; a one-line :class:`DeviceError` where none has all three."""
        own = (self.l1.latency_ns, self.l2.latency_ns, self.dram_latency_ns)
        if all(v is not None for v in own):
            return MemoryLatencies.from_pointer_chase(*own, self.clock_ghz, f"{self.name}'s pointer chase")
        if self.latencies_from is not None:
            donor = load_builtin_device(self.latencies_from)
            chase = (donor.l1.latency_ns, donor.l2.latency_ns, donor.dram_latency_ns)
            if not all(v is not None for v in chase):
                raise DeviceError(f"device {self.name!r}: latencies_from names {donor.name!r}, which has no "
                                  "pointer-chase latencies (latency_ns of its L1 and L2, dram_latency_ns)")
            return MemoryLatencies.from_pointer_chase(*chase, self.clock_ghz,
                                                      f"{donor.name}'s pointer chase at {self.clock_ghz:g} GHz")
        table = architecture_latencies(self.architecture)
        if table is None:
            raise DeviceError(f"device {self.name!r}: no memory latencies; give latency_ns of the L1 and L2 "
                              "[[memory]] tables and [device] dram_latency_ns, or [device] latencies_from = "
                              "\"<a measured part of the same family>\"")
        return table

    @property
    def has_dram_curve(self) -> bool:
        """True when the file gives the calibrated achievable-DRAM-bandwidth curve."""
        return self.dram_curve_peak_gb_s is not None

    @property
    def l1(self) -> CacheLevel:
        """The first level, private to an SM / compute unit (the L0 on RDNA, the vector L1 on CDNA)."""
        return next(level for level in self.memory if level.scope == "cu")

    @property
    def l2(self) -> CacheLevel:
        """The device-wide L2."""
        return next(level for level in self.memory if level.scope == "device")

    @cached_property
    def levels(self) -> tuple[CacheLevel, ...]:
        """The memory levels from the SIMDs outwards, with their instances (one first level per
        SM / CU, one L2); built once per device."""
        return with_instances(self.memory, self.sms)

    def with_level(self, scope: str, /, **changes: Any) -> "Device":
        """This device with the keys ``changes`` of its level of ``scope`` replaced (a what-if device,
        checked as a loaded one), e.g. ``with_level("device", bandwidth_gb_s=5000.0)``."""
        known = sorted(f.name for f in fields(CacheLevel) if f.init and f.name not in ("name", "scope", "instances"))
        unknown = sorted(set(changes) - set(known))
        if unknown:
            raise DeviceError(f"device {self.name!r}: with_level got unknown key(s) {', '.join(unknown)}; allowed: "
                              f"{', '.join(known)}")
        if not any(level.scope == scope for level in self.memory):
            raise DeviceError(f"device {self.name!r}: no memory level with scope {scope!r}; it has "
                              f"{', '.join(level.scope for level in self.memory)}")
        return replace(self, memory=tuple(replace(level, **checked_changes(level, changes, self.name))
                                          if level.scope == scope else level for level in self.memory))

    @property
    def clock_mhz(self) -> float:
        """The SM clock in MHz (``clock_ghz`` x 1000)."""
        return self.clock_ghz * KILO

    @property
    def max_block_dims(self) -> tuple[int, int, int]:
        """Largest extent of a thread block along x, y and z (threads)."""
        return (self.max_block_dim_x, self.max_block_dim_y, self.max_block_dim_z)

    def fp_lanes_per_sm(self, dtype: str) -> int:
        """FP results per clock per SM for ``dtype`` (``float64``, ``float32``, ``float16``)."""
        lanes = {"float64": self.fp64_lanes_per_sm, "float32": self.fp32_lanes_per_sm,
                 "float16": self.fp16_lanes_per_sm}
        if dtype not in lanes:
            raise DeviceError(f"device {self.name!r}: no FP lanes for dtype {dtype!r}; allowed: {', '.join(lanes)}")
        return lanes[dtype]


class FrozenTable(dict):
    """A model table of a loaded device: a dict that cannot be changed (the checks of the device
    file ran on its values; a table changed afterwards would reach the models unchecked). Make a
    changed device with :func:`dataclasses.replace` (``tables=...``), which checks it again."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a device's tables cannot be changed after it is loaded; build a new device with "
                        "dataclasses.replace(device, tables={...}), which is checked as a loaded one")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore

    def __reduce__(self) -> Any:  # pickled (to pool workers) as a plain dict, frozen again on load
        return (FrozenTable, (dict(self),))


class FrozenList(list):
    """A list of a :class:`FrozenTable` that cannot be changed."""

    _refuse = FrozenTable._refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = \
        reverse = _refuse  # type: ignore

    def __reduce__(self) -> Any:
        return (FrozenList, (list(self),))


def frozen_table(value: Any) -> Any:
    """``value`` (a table's contents) with every dict and list made unchangeable, recursively."""
    if isinstance(value, Mapping):
        frozen = FrozenTable()
        for key, item in value.items():
            dict.__setitem__(frozen, key, frozen_table(item))
        return frozen
    if isinstance(value, (list, tuple)) and not isinstance(value, FrozenList):
        frozen_list = FrozenList()
        for item in value:
            list.append(frozen_list, frozen_table(item))
        return frozen_list if isinstance(value, list) else tuple(frozen_list)
    return value


_DEVICE_PACKAGE = "warpspeed.hardware.devices"
_KNOWN = {f.name for f in fields(Device)} - {"source", "tables", "memory"}


def _parse_device(data: dict, origin: str) -> Device:
    device = data.get("device", {k: v for k, v in data.items() if k != "memory"})
    if not isinstance(device, dict):
        raise DeviceError(f"{origin}: expected a [device] table")
    if "device" in data:
        loose = sorted(k for k, v in data.items() if k not in ("device", "memory") and not isinstance(v, dict))
        if loose:
            schemas = table_schemas()
            tables = [k for k in loose if k in schemas]
            what = (f"{', '.join(tables)} must be a table ([{tables[0]}] with its keys), not a value" if tables else
                    f"key(s) {', '.join(loose)} stand outside any table; put device keys under [device] and model "
                    f"constants under their model's table ({', '.join(f'[{t}]' for t in schemas)})")
            raise DeviceError(f"{origin}: {what}")
    for table, keys in data.items():  # a device fact in a model's table: the file's layout of an older release
        misplaced = sorted(set(keys) & _KNOWN) if table not in ("device", "memory") and isinstance(keys, dict) else []
        if misplaced:
            many = len(misplaced) > 1
            raise DeviceError(f"{origin}: [{table}] {', '.join(misplaced)}: {'device facts' if many else 'a device fact'}, "
                              f"read from [device] only; move {'them' if many else 'it'} to the [device] table")
    unknown = sorted(set(device) - _KNOWN)
    if unknown:
        moved = [k for k in unknown if k.startswith(("l1_", "l2_"))]
        hint = (f" ({', '.join(moved)}: the caches are [[memory]] tables, one per level; see "
                f"warpspeed.hardware.caches)" if moved else "")
        raise DeviceError(f"{origin}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KNOWN))}{hint}")
    required = _KNOWN - set(OPTIONAL_FIELDS)
    missing = sorted(required - set(device))
    if missing:
        raise DeviceError(f"{origin}: missing key(s) {', '.join(missing)}")
    name = device.get("name", origin)
    memory = parse_memory(data.get("memory"), name if isinstance(name, str) else origin)
    try:
        tables = {k: v for k, v in data.items() if k not in ("device", "memory")} if "device" in data else {}
        return Device(**device, memory=memory, source=origin, tables=tables)
    except TypeError as exc:  # pragma: no cover - guarded by the key checks above
        raise DeviceError(f"{origin}: {exc}") from None


def load_device_file(path: str | Path) -> Device:
    """Load a device from a TOML file path."""
    p = Path(path)
    return _parse_device(read_toml(p, "device file", DeviceError), str(p))


def device_from_text(text: str, origin: str) -> Device:
    """Load a device from the text of a device file (``origin``: where it will be, for messages)."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DeviceError(f"{origin}: not valid TOML ({exc})") from None
    return _parse_device(data, origin)


def device_names() -> list[str]:
    """Names of the built-in devices (file stems of ``warpspeed/hardware/devices/*.toml``)."""
    return [p.name[: -len(".toml")] for p in package_files(_DEVICE_PACKAGE, ".toml")]


def _compact(text: str) -> str:
    """``text`` lower-case without separators: ``"h100 sxm5"`` and ``"H100-SXM5"`` compare equal."""
    return "".join(c for c in text.lower() if c.isalnum())


def resolve_device_name(text: str) -> str:
    """The built-in device that ``text`` names: its name (case and separators ignored), else the
    one device whose name starts with ``text`` (``V100`` -> ``V100-PCIe-32GB``), else the one device
    of that architecture family (``volta``). Several matches raise :class:`DeviceError` listing
    them ("did you mean ..."), as does a name that matches none (with the closest names)."""
    names = device_names()
    key = _compact(text)
    exact = [n for n in names if _compact(n) == key]
    if exact:
        return exact[0]
    prefixed = [n for n in names if key and _compact(n).startswith(key)]
    if len(prefixed) == 1:
        return prefixed[0]
    family = [] if prefixed else [n for n in names if key and _compact(_architecture_of(n)) == key]
    if len(family) == 1:
        return family[0]
    candidates = prefixed or family
    if candidates:
        raise DeviceError(f"device {text!r} is ambiguous; did you mean {_one_of(candidates)}?")
    close = difflib.get_close_matches(text.upper(), names, n=3, cutoff=0.5)
    hint = f"; did you mean {_one_of(close)}?" if close else ";"
    raise DeviceError(f"unknown device {text!r}{hint} built-in devices: {', '.join(names)} "
                      "(a unique prefix or architecture works too, or give a .toml path)")


def _one_of(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _architecture_of(name: str) -> str:
    """The ``architecture`` of a built-in device file, read without checking the rest."""
    resource = package_file(_DEVICE_PACKAGE, f"{name}.toml")
    table = read_toml(resource, "built-in device file", DeviceError).get("device", {})
    return str(table.get("architecture", "")) if isinstance(table, dict) else ""


def _device_argument(name_or_path: object, what: str) -> str:
    """``name_or_path`` as text; :class:`TypeError` naming ``what`` for anything but a string or a path."""
    if isinstance(name_or_path, Device):
        raise TypeError(f"{what} must be a device name or a device-file path (str); got a Device object: pass it "
                        "where a Device is taken, or its name")
    if not isinstance(name_or_path, (str, os.PathLike)) or not isinstance(os.fspath(name_or_path), str):
        raise TypeError(f"{what} must be a device name or a device-file path (str), got "
                        f"{type(name_or_path).__name__} {name_or_path!r}")
    text = os.fspath(name_or_path)
    if not text.strip():
        raise DeviceError(f"{what} is empty; give a built-in device name (see `warpspeed devices`) or a .toml path")
    return text


def is_device_path(name_or_path: str | Path) -> bool:
    """Whether ``name_or_path`` is read as a device-file path rather than a built-in device's name
    (:func:`warpspeed.files.names.looks_like_path`: a separator or a ``.toml`` suffix; a file of
    that name in the working directory makes no difference)."""
    return looks_like_path(name_or_path)


def load_device(name_or_path: str | Path, what: str = "device") -> Device:
    """A built-in device by name (case-insensitive; a unique prefix or architecture family works
    too, :func:`resolve_device_name`) or a user's device file by path. A path has a separator or
    a ``.toml`` suffix (:func:`is_device_path`); anything else is a name, never a file."""
    text = _device_argument(name_or_path, what)
    if is_device_path(name_or_path):
        return load_device_file(text)
    return load_builtin_device(text)


def load_builtin_device(name: str) -> Device:
    """The built-in device ``name`` names (:func:`resolve_device_name`), never a file."""
    resolved = resolve_device_name(name)
    resource = package_file(_DEVICE_PACKAGE, f"{resolved}.toml")
    return _parse_device(read_toml(resource, "built-in device file", DeviceError), f"{resolved}.toml")


def device_identity(name_or_path: str | Path) -> str:
    """What two device arguments share when they mean one device: the built-in device's name
    (``V100``, ``volta`` and ``V100-PCIe-32GB`` give one), or the device file's real path."""
    text = _device_argument(name_or_path, "device")
    if is_device_path(name_or_path):
        return os.path.realpath(text)
    return resolve_device_name(text)


def device_text(name_or_path: str | Path) -> str:
    """The text of a built-in device file (by name, prefix or family, as :func:`load_device`) or of
    a user's device file (by path), comments included."""
    from warpspeed.files.text import read_text

    text = _device_argument(name_or_path, "device")
    if is_device_path(name_or_path):
        return read_text(Path(text), "device file", DeviceError)
    name = resolve_device_name(text)
    return read_text(package_file(_DEVICE_PACKAGE, f"{name}.toml"), "built-in device file", DeviceError)


def all_devices() -> list[Device]:
    """Every built-in device."""
    return [load_device(n) for n in device_names()]


def builtin_plausible_lups_per_s(name: object) -> tuple[float, float] | None:
    """:func:`warpspeed.hardware.ranges.plausible_lups_per_s` of the built-in device ``name`` (as a
    data file names it), or None when it names none: a name read from data is never used as a path."""
    if not isinstance(name, str) or name.lower() not in {n.lower() for n in device_names()}:
        return None
    return plausible_lups_per_s(load_device(name))
