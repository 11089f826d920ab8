"""GPU description: the frozen :class:`Device` and its TOML loader.

One TOML file per GPU lives in ``warpspeed/devices/``; every number in it carries its source
in a comment. Users may pass the path of their own file anywhere a device name is accepted.

Terminology is NVIDIA's; on AMD GPUs an "SM" is a compute unit (CU; on RDNA a work-group
processor in WGP mode counts as two CUs), "warp" is a wavefront, and "L1" is the cache closest
to the SIMDs (the vector L1 on CDNA, the L0 on RDNA).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path

from warpspeed.errors import DeviceError
from warpspeed.files.toml import read_toml

#: Fraction of the nominal L2 that is effective when the L2 is split into two partitions that
#: duplicate lines (A100, H100). Source: paper 001, section 3 ("effective L2 cache size is
#: therefore halved to 20MB").
SPLIT_L2_EFFECTIVE_FRACTION = 0.5


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
    dram_fetch_bytes: int  # minimal DRAM transfer
    l2_bandwidth_gb_s: float  # L2 -> L1 bandwidth, GB/s (1e9 B/s)
    dram_bandwidth_gb_s: float  # DRAM bandwidth, GB/s (1e9 B/s)
    # occupancy resources
    registers_per_sm: int  # 32-bit registers
    register_alloc_unit: int  # registers are allocated per warp in multiples of this
    register_partitions: int  # register file is split in this many SM sub-partitions
    max_registers_per_thread: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    shared_bytes_per_sm: int  # shared memory usable by blocks on one SM
    shared_bytes_per_block: int  # most shared memory one block may use
    shared_alloc_unit_bytes: int  # shared memory allocation granularity
    # arithmetic
    fp32_lanes_per_sm: int  # FP32 results per clock per SM (an FMA is one)
    fp64_lanes_per_sm: int  # FP64 results per clock per SM (an FMA is one)
    fp16_lanes_per_sm: int = 0  # FP16 (non-tensor) results per clock per SM; 0 if unknown
    source: str = ""  # file the device was loaded from

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("name", "vendor", "architecture", "source"):
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise DeviceError(f"device {self.name!r}: {f.name} must be a number, got {value!r}")
            if f.name != "fp16_lanes_per_sm" and value <= 0:
                raise DeviceError(f"device {self.name!r}: {f.name} must be positive, got {value!r}")
        if self.l2_effective_bytes > self.l2_bytes:
            raise DeviceError(
                f"device {self.name!r}: l2_effective_bytes ({self.l2_effective_bytes}) exceeds l2_bytes ({self.l2_bytes})"
            )
        if self.l1_line_bytes % self.l1_sector_bytes:
            raise DeviceError(f"device {self.name!r}: l1_line_bytes must be a multiple of l1_sector_bytes")

    @property
    def l1_bytes_per_cycle(self) -> int:
        """Bytes the L1 delivers per cycle (banks x bank width)."""
        return self.l1_banks * self.l1_bank_bytes

    def fp_lanes_per_sm(self, dtype: str) -> int:
        """FP results per clock per SM for ``dtype`` (``float64``, ``float32``, ``float16``)."""
        lanes = {"float64": self.fp64_lanes_per_sm, "float32": self.fp32_lanes_per_sm,
                 "float16": self.fp16_lanes_per_sm or 2 * self.fp32_lanes_per_sm}
        if dtype not in lanes:
            raise DeviceError(f"device {self.name!r}: no FP lanes for dtype {dtype!r}; allowed: {', '.join(lanes)}")
        return lanes[dtype]


_DEVICE_PACKAGE = "warpspeed.hardware.devices"
_KNOWN = {f.name for f in fields(Device)} - {"source"}


def _parse_device(data: dict, origin: str) -> Device:
    device = data.get("device", data)
    if not isinstance(device, dict):
        raise DeviceError(f"{origin}: expected a [device] table")
    unknown = sorted(set(device) - _KNOWN)
    if unknown:
        raise DeviceError(f"{origin}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KNOWN))}")
    required = {f.name for f in fields(Device) if f.name not in ("source", "fp16_lanes_per_sm")}
    missing = sorted(required - set(device))
    if missing:
        raise DeviceError(f"{origin}: missing key(s) {', '.join(missing)}")
    try:
        return Device(**device, source=origin)
    except TypeError as exc:  # pragma: no cover - guarded by the key checks above
        raise DeviceError(f"{origin}: {exc}") from None


def load_device_file(path: str | Path) -> Device:
    """Load a device from a TOML file path."""
    p = Path(path)
    return _parse_device(read_toml(p, "device file", DeviceError), str(p))


def device_names() -> list[str]:
    """Names of the built-in devices (file stems of ``warpspeed/devices/*.toml``)."""
    root = resources.files(_DEVICE_PACKAGE)
    return sorted(p.name[: -len(".toml")] for p in root.iterdir() if p.name.endswith(".toml"))


def load_device(name_or_path: str | Path) -> Device:
    """A built-in device by name (case-insensitive) or a user's device file by path."""
    text = str(name_or_path)
    if text.endswith(".toml") or Path(text).is_file():
        return load_device_file(text)
    names = device_names()
    matches = [n for n in names if n.lower() == text.lower()]
    if not matches:
        raise DeviceError(f"unknown device {text!r}; built-in devices: {', '.join(names)} (or give a .toml path)")
    resource = resources.files(_DEVICE_PACKAGE) / f"{matches[0]}.toml"
    return _parse_device(read_toml(resource, "built-in device file", DeviceError), f"{matches[0]}.toml")


def all_devices() -> list[Device]:
    """Every built-in device."""
    return [load_device(n) for n in device_names()]
