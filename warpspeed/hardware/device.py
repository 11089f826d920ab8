"""GPU description: the frozen :class:`Device` and its TOML loader.

One TOML file per GPU lives in ``warpspeed/hardware/devices/``; every number in it carries its source
in a comment. Users may pass the path of their own file anywhere a device name is accepted.

Terminology is NVIDIA's; on AMD GPUs an "SM" is a compute unit (CU; on RDNA a work-group
processor in WGP mode counts as two CUs), "warp" is a wavefront, and "L1" is the cache closest
to the SIMDs (the vector L1 on CDNA, the L0 on RDNA).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from warpspeed.errors import DeviceError
from warpspeed.files.stored import package_file, package_files
from warpspeed.files.toml import read_toml
from warpspeed.hardware.ranges import check_numbers, check_relations

#: Fields that are text, not numbers.
_TEXT_FIELDS = ("name", "vendor", "architecture", "source")
#: Megahertz per gigahertz.
MHZ_PER_GHZ = 1000.0
#: Fields that are not scalars and are checked by the code that reads them.
_TABLE_FIELDS = ("tables",)
#: Calibrated achievable-DRAM-bandwidth curve (:mod:`warpspeed.perf.bandwidth`): all or none.
DRAM_CURVE_FIELDS = ("dram_curve_peak_gb_s", "dram_curve_latency_ns", "dram_curve_sharpness")
#: Pointer-chase latencies: optional, present where measured.
LATENCY_FIELDS = ("l1_latency_ns", "l2_latency_ns", "dram_latency_ns")
#: Keys a device file may leave out (then the DRAM limiter uses the flat sustained bandwidth and
#: no latency is reported).
#: Optional first-level write granularity (the sector size where a file does not give it).
STORE_GRANULE_FIELDS = ("l1_store_granule_bytes",)
OPTIONAL_FIELDS = DRAM_CURVE_FIELDS + LATENCY_FIELDS + STORE_GRANULE_FIELDS


@dataclass(frozen=True)
class Device:
    """A GPU as the model sees it. Units are in the field names."""

    name: str
    vendor: str  # "nvidia" or "amd"
    architecture: str  # e.g. "ampere", "cdna2", "rdna2"
    sms: int  # streaming multiprocessors / compute units
    clock_ghz: float  # SM clock used for the L1 and FP limiters
    warp_size: int  # threads per warp / wavefront
    # L1 (the cache private to an SM)
    l1_bytes: int  # data-cache capacity available to global loads
    l1_banks: int  # banks of the L1 data array
    l1_bank_bytes: int  # width of one bank
    l1_line_bytes: int  # allocation granularity
    l1_sector_bytes: int  # transfer granularity to/from L2
    # L2
    l2_bytes: int  # nominal capacity
    l2_effective_bytes: int  # capacity usable for reuse (half the nominal on split-L2 parts)
    l2_line_bytes: int  # allocation granularity
    l2_sector_bytes: int  # L2 fetch granularity from DRAM
    l2_bandwidth_gb_s: float  # sustained L2 -> L1 bandwidth at full occupancy, GB/s (1e9 B/s)
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
    source: str = ""  # file the device was loaded from
    #: The file's other top-level tables and arrays of tables (``[interval]``, ``[[cache]]``, ...):
    #: parameters of the models beyond the roofline, each read and checked by its model.
    tables: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
    # achievable DRAM bandwidth against bytes in flight (smooth Little's-law curve, fitted to
    # streaming measurements): peak B [GB/s], effective latency L [ns], smoothness p (>= 1)
    dram_curve_peak_gb_s: float | None = None
    dram_curve_latency_ns: float | None = None
    dram_curve_sharpness: float | None = None
    # idle pointer-chase load-to-use latency per level [ns]
    l1_latency_ns: float | None = None
    l2_latency_ns: float | None = None
    dram_latency_ns: float | None = None
    # granularity [B] in which the first level writes stores to the L2 (byte-masked write requests);
    # None: the sector (l1_sector_bytes), as on NVIDIA's L1TEX
    l1_store_granule_bytes: int | None = None

    def __post_init__(self) -> None:
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
        if self.dram_curve_sharpness is not None and self.dram_curve_sharpness < 1:
            raise DeviceError(f"device {self.name!r}: dram_curve_sharpness must be >= 1, got {self.dram_curve_sharpness!r}")
        if self.l2_effective_bytes > self.l2_bytes:
            raise DeviceError(
                f"device {self.name!r}: l2_effective_bytes ({self.l2_effective_bytes}) exceeds l2_bytes ({self.l2_bytes})"
            )
        if self.l1_line_bytes % self.l1_sector_bytes:
            raise DeviceError(f"device {self.name!r}: l1_line_bytes must be a multiple of l1_sector_bytes")
        if self.l1_store_granule_bytes is not None and self.l1_line_bytes % self.l1_store_granule_bytes:
            raise DeviceError(f"device {self.name!r}: l1_line_bytes must be a multiple of l1_store_granule_bytes")
        for axis in "xyz":
            extent = getattr(self, f"max_block_dim_{axis}")
            if extent > self.max_threads_per_block:
                raise DeviceError(
                    f"device {self.name!r}: max_block_dim_{axis} ({extent}) exceeds max_threads_per_block "
                    f"({self.max_threads_per_block})"
                )
        check_numbers(self, tuple(numeric))
        check_relations(self)

    @property
    def has_dram_curve(self) -> bool:
        """True when the file gives the calibrated achievable-DRAM-bandwidth curve."""
        return self.dram_curve_peak_gb_s is not None

    @property
    def store_granule_bytes(self) -> int:
        """Bytes in which the first level writes stores to the L2: ``l1_store_granule_bytes``, else
        the sector."""
        return self.l1_store_granule_bytes if self.l1_store_granule_bytes is not None else self.l1_sector_bytes

    @property
    def clock_mhz(self) -> float:
        """The SM clock in MHz (``clock_ghz`` x 1000)."""
        return self.clock_ghz * MHZ_PER_GHZ

    @property
    def max_block_dims(self) -> tuple[int, int, int]:
        """Largest extent of a thread block along x, y and z (threads)."""
        return (self.max_block_dim_x, self.max_block_dim_y, self.max_block_dim_z)

    @property
    def l1_bytes_per_cycle(self) -> int:
        """Bytes the L1 delivers per cycle (banks x bank width)."""
        return self.l1_banks * self.l1_bank_bytes

    def fp_lanes_per_sm(self, dtype: str) -> int:
        """FP results per clock per SM for ``dtype`` (``float64``, ``float32``, ``float16``)."""
        lanes = {"float64": self.fp64_lanes_per_sm, "float32": self.fp32_lanes_per_sm,
                 "float16": self.fp16_lanes_per_sm}
        if dtype not in lanes:
            raise DeviceError(f"device {self.name!r}: no FP lanes for dtype {dtype!r}; allowed: {', '.join(lanes)}")
        return lanes[dtype]


_DEVICE_PACKAGE = "warpspeed.hardware.devices"
_KNOWN = {f.name for f in fields(Device)} - {"source", "tables"}


def _parse_device(data: dict, origin: str) -> Device:
    device = data.get("device", data)
    if not isinstance(device, dict):
        raise DeviceError(f"{origin}: expected a [device] table")
    unknown = sorted(set(device) - _KNOWN)
    if unknown:
        raise DeviceError(f"{origin}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KNOWN))}")
    required = _KNOWN - set(OPTIONAL_FIELDS)
    missing = sorted(required - set(device))
    if missing:
        raise DeviceError(f"{origin}: missing key(s) {', '.join(missing)}")
    try:
        tables = ({k: v for k, v in data.items() if k != "device" and isinstance(v, (dict, list))}
                  if "device" in data else {})
        return Device(**device, source=origin, tables=tables)
    except TypeError as exc:  # pragma: no cover - guarded by the key checks above
        raise DeviceError(f"{origin}: {exc}") from None


def load_device_file(path: str | Path) -> Device:
    """Load a device from a TOML file path."""
    p = Path(path)
    return _parse_device(read_toml(p, "device file", DeviceError), str(p))


def device_names() -> list[str]:
    """Names of the built-in devices (file stems of ``warpspeed/hardware/devices/*.toml``)."""
    return [p.name[: -len(".toml")] for p in package_files(_DEVICE_PACKAGE, ".toml")]


def load_device(name_or_path: str | Path) -> Device:
    """A built-in device by name (case-insensitive) or a user's device file by path."""
    text = str(name_or_path)
    if text.endswith(".toml") or Path(text).is_file():
        return load_device_file(text)
    names = device_names()
    matches = [n for n in names if n.lower() == text.lower()]
    if not matches:
        raise DeviceError(f"unknown device {text!r}; built-in devices: {', '.join(names)} (or give a .toml path)")
    resource = package_file(_DEVICE_PACKAGE, f"{matches[0]}.toml")
    return _parse_device(read_toml(resource, "built-in device file", DeviceError), f"{matches[0]}.toml")


def all_devices() -> list[Device]:
    """Every built-in device."""
    return [load_device(n) for n in device_names()]
