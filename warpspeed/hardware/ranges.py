"""The values a device file may hold: a range for every number, and the relations between them.

:class:`warpspeed.hardware.device.Device` checks these when it is built, so a user's device file
with ``clock_ghz = inf``, an L1 smaller than one cache line or 10^11 SMs is a one-line error
naming the key, the value and what is allowed, instead of an ``IndexError`` in a clock sweep or
a prediction of 13 GW. The rules:

* every number is finite and inside its range (:data:`FLOAT_RANGES` for the measured and
  clocked quantities; :data:`MAX_COUNT` for counts; :data:`MAX_BYTES` for sizes in bytes). The
  ranges are wide: each holds every built-in device with at least a factor of three to spare
  (the curve sharpness's lower bound, 1, is its definition) and only excludes values no GPU has
  and the model's arithmetic cannot take (a clock of 10^-300 GHz divides by zero);
* cache lines, sectors, banks, allocation units and store granules are powers of two (addresses
  are split into them by their low bits); a wavefront has 32 or 64 threads (NVIDIA warps and AMD
  RDNA wavefronts: 32; AMD CDNA wavefronts: 64), and an NVIDIA warp 32;
* a cache level (``[[memory]]``, :func:`check_level`) holds at least one line; a line is a whole
  number of sectors and store granules; the effective L2 is at most the nominal one; a block
  fits an SM (threads, shared memory) and its largest extent along x, y, z is at most its
  thread limit;
* the vendor is ``nvidia`` or ``amd`` (the model's families), the name is a name
  (:mod:`warpspeed.files.names`: it names output files, never a path).
"""

from __future__ import annotations

import math
from typing import Any

from warpspeed.errors import DeviceError
from warpspeed.files.names import check_name
from warpspeed.units import GIGA, WARP_LANES

#: Ranges of the non-integer quantities (inclusive, in the unit of the key). Built-in devices:
#: clocks 1.38-2.52 GHz, bandwidths 199-18 090 GB/s, curve latencies 288-920 ns, idle latencies
#: 14.5-762 ns, curve sharpness 1.47-6.27 (at least 1 by the curve's definition,
#: :mod:`warpspeed.hardware.dram_curve`), power limits 250-700 W, reference clocks 1410-2520 MHz.
FLOAT_RANGES: dict[str, tuple[float, float]] = {
    "clock_ghz": (0.1, 10.0),
    "dram_bandwidth_gb_s": (1.0, 1e6),
    "dram_curve_peak_gb_s": (1.0, 1e6),
    "dram_curve_latency_ns": (1.0, 1e5),
    "dram_curve_sharpness": (1.0, 100.0),
    "dram_latency_ns": (0.1, 1e5),
    "launch_overhead_us": (0.01, 1e4),
    "power_limit_w": (1.0, 1e4),
    "reference_clock_mhz": (100.0, 1e4),
}
#: Ranges of the non-integer keys of a memory level (``[[memory]]``, :mod:`warpspeed.hardware.caches`),
#: as :data:`FLOAT_RANGES`: bandwidths and idle latencies like DRAM's; the tag stage's wavefronts
#: (built-in: 0 to 0.46) at most one wavefront per line and a few of overhead.
LEVEL_FLOAT_RANGES: dict[str, tuple[float, float]] = {
    "bandwidth_gb_s": (1.0, 1e6),
    "latency_ns": (0.1, 1e5),
    "tag_overhead_wavefronts": (0.0, 4.0),
    "tag_wavefronts_per_line": (0.01, 1.0),
    "request_cycles": (0.01, 4.0),
    "capacity_miss_fraction": (0.01, 1.0),
}
#: Keys in bytes; at most :data:`MAX_BYTES` each.
BYTE_FIELDS = ("shared_bytes_per_sm", "shared_bytes_per_block", "shared_alloc_unit_bytes")
#: Keys of a memory level in bytes; at most :data:`MAX_BYTES` each.
LEVEL_BYTE_FIELDS = ("bytes", "line_bytes", "sector_bytes", "effective_bytes", "layer_bytes", "bank_bytes", "store_granule_bytes",
                     "wide_bytes_per_cycle", "column_bytes", "unified_bytes", "reserved_shared_bytes")
#: Largest size in bytes (1 TiB; the largest built-in cache is 96 MiB).
MAX_BYTES = 2**40
#: Largest count (SMs, threads, warps, blocks, registers, lanes, banks; the largest built-in count
#: is 131 072 registers per SM).
MAX_COUNT = 2**24
#: Keys that are powers of two (module docstring).
POWER_OF_TWO_FIELDS = ("register_alloc_unit", "shared_alloc_unit_bytes")
#: Keys of a memory level that are powers of two.
LEVEL_POWER_OF_TWO_FIELDS = ("banks", "bank_bytes", "line_bytes", "sector_bytes", "store_granule_bytes",
                             "wide_bytes_per_cycle", "column_bytes", "tag_banks")
#: Threads per warp or wavefront (module docstring).
WARP_SIZES = (32, 64)
#: Threads per warp on NVIDIA GPUs: 32 on every architecture (NVIDIA, "CUDA C++ Programming
#: Guide", section "Hardware Implementation: SIMT Architecture", 2024).
NVIDIA_WARP_SIZE = WARP_LANES
#: Vendors the model has families for.
VENDORS = ("nvidia", "amd")


def _fail(device: Any, key: str, value: object, allowed: str) -> DeviceError:
    return DeviceError(f"device {device.name!r}: {key} is out of range (got {value!r}); allowed: {allowed}")


def check_numbers(device: Any, numeric: tuple[str, ...]) -> None:
    """Every key of ``numeric`` of ``device`` (the :class:`~warpspeed.hardware.device.Device`
    being built; numbers already known to be numbers > 0, or None where optional) inside its
    range, and the powers of two (module docstring)."""
    for key in numeric:
        value = getattr(device, key)
        if value is None:
            continue
        if not math.isfinite(value):
            raise _fail(device, key, value, "a finite number")
        if key in FLOAT_RANGES:
            low, high = FLOAT_RANGES[key]
            if not low <= value <= high:
                raise _fail(device, key, value, f"{low:g} to {high:g}")
        elif key in BYTE_FIELDS:
            if value > MAX_BYTES:
                raise _fail(device, key, value, f"1 to {MAX_BYTES} bytes")
        elif value > MAX_COUNT:
            raise _fail(device, key, value, f"1 to {MAX_COUNT}")
        if key in POWER_OF_TWO_FIELDS and value & (value - 1):
            raise _fail(device, key, value, "a power of two")


def check_relations(device: Any) -> None:
    """The text keys of ``device`` (the :class:`~warpspeed.hardware.device.Device` being built)
    and the relations between its numbers (module docstring)."""
    check_name(device.name, "device name", DeviceError)
    for key in ("latencies_from", "launch_overhead_part"):
        if getattr(device, key) is not None:
            check_name(getattr(device, key), f"device {device.name!r}: {key}", DeviceError)
    if device.vendor.lower() not in VENDORS:
        raise DeviceError(f"device {device.name!r}: vendor is unknown (got {device.vendor!r}); allowed: "
                          f"{', '.join(VENDORS)}")
    if not device.architecture.strip():
        raise DeviceError(f"device {device.name!r}: architecture is empty; give the architecture, e.g. 'ampere'")
    if device.warp_size not in WARP_SIZES:
        raise _fail(device, "warp_size", device.warp_size, " or ".join(map(str, WARP_SIZES)))
    if device.vendor.lower() == "nvidia" and device.warp_size != NVIDIA_WARP_SIZE:
        raise _fail(device, "warp_size", device.warp_size, f"{NVIDIA_WARP_SIZE} on an NVIDIA GPU (64 is AMD CDNA's "
                    "wavefront)")
    relations = (
        ("max_threads_per_sm", "max_threads_per_block", "at least one block's threads (max_threads_per_block)"),
        ("max_warps_per_sm", None, "at least one block's warps (max_threads_per_block / warp_size)"),
        ("shared_bytes_per_sm", "shared_bytes_per_block", "at least one block's shared memory "
                                                         "(shared_bytes_per_block)"),
        ("registers_per_sm", "register_alloc_unit", "at least one allocation unit (register_alloc_unit)"),
    )
    for key, other, allowed in relations:
        value = getattr(device, key)
        least = -(-device.max_threads_per_block // device.warp_size) if other is None else getattr(device, other)
        if value < least:
            raise _fail(device, key, value, allowed)


def check_level(level: Any, device_name: str) -> None:
    """One memory level (a :class:`~warpspeed.hardware.caches.CacheLevel` of the device
    ``device_name``): every number finite and in its range, the powers of two, and the relations
    (at least one line, a line a whole number of sectors and store granules, the effective size
    at most the nominal one)."""
    where = f"device {device_name!r} [[memory]] {level.name}"

    def fail(key: str, value: object, allowed: str) -> DeviceError:
        return DeviceError(f"{where}: {key} is out of range (got {value!r}); allowed: {allowed}")

    for key in ("bytes", "line_bytes", "sector_bytes", "instances", "bandwidth_gb_s", "latency_ns",
                "effective_bytes", "layer_bytes", "banks", "bank_bytes", "store_granule_bytes", "tag_overhead_wavefronts",
                "tag_wavefronts_per_line", "wide_bytes_per_cycle", "column_bytes", "request_cycles", "unified_bytes",
                "reserved_shared_bytes", "tag_banks", "capacity_miss_fraction"):
        value = getattr(level, key)
        if value is None:
            continue
        if not math.isfinite(value):
            raise fail(key, value, "a finite number")
        if key in LEVEL_FLOAT_RANGES:
            low, high = LEVEL_FLOAT_RANGES[key]
            if not low <= value <= high:
                raise fail(key, value, f"{low:g} to {high:g}")
        elif key in LEVEL_BYTE_FIELDS:
            if value > MAX_BYTES:
                raise fail(key, value, f"1 to {MAX_BYTES} bytes")
        elif value > MAX_COUNT:
            raise fail(key, value, f"1 to {MAX_COUNT}")
        if key in LEVEL_POWER_OF_TWO_FIELDS and value & (value - 1):
            raise fail(key, value, "a power of two")
    if level.unified_bytes is not None:
        if level.shared_carveouts_kib is None:
            raise fail("unified_bytes", level.unified_bytes, "only with shared_carveouts_kib")
        if level.shared_carveouts_kib[-1] * 1024 >= level.unified_bytes:
            raise fail("shared_carveouts_kib", list(level.shared_carveouts_kib),
                       f"carveouts below unified_bytes ({level.unified_bytes})")
    elif level.shared_carveouts_kib is not None or level.reserved_shared_bytes is not None:
        raise fail("shared_carveouts_kib", level.shared_carveouts_kib, "only with unified_bytes")
    line = f"at least one {level.name} line"
    if level.bytes < level.line_bytes:
        raise fail("bytes", level.bytes, line)
    if level.effective_bytes is not None:
        if level.effective_bytes < level.line_bytes:
            raise fail("effective_bytes", level.effective_bytes, line)
        if level.effective_bytes > level.bytes:
            raise fail("effective_bytes", level.effective_bytes, f"at most bytes ({level.bytes})")
    if level.layer_bytes is not None and not level.line_bytes <= level.layer_bytes <= level.bytes:
        raise fail("layer_bytes", level.layer_bytes, f"at least one {level.name} line, at most bytes ({level.bytes})")
    if level.line_bytes < level.sector_bytes:
        raise fail("line_bytes", level.line_bytes, f"at least one {level.name} sector")
    if level.line_bytes % level.sector_bytes:
        raise fail("line_bytes", level.line_bytes, "a multiple of sector_bytes")
    column = level.column_bytes
    if column is not None and (level.line_bytes % column or column % (level.bank_bytes or column)):
        raise fail("column_bytes", column, "a divisor of line_bytes and a multiple of bank_bytes")
    if level.store_granule_bytes is not None and level.line_bytes % level.store_granule_bytes:
        raise fail("store_granule_bytes", level.store_granule_bytes, "a divisor of line_bytes")


# --------------------------------------------------------------------------- measured and stored rates

#: Most lattice updates one lane of an SM completes per cycle: an update stores at least one
#: element, a warp issues at most one store instruction per cycle and SM sub-partition, and one
#: lane's widest store (16 bytes, PTX ``st.v4``/``st.v2.b64``) holds at most four 4-byte cells.
MAX_LUPS_PER_LANE_CYCLE = 4
#: Most SM cycles a whole GPU may spend per lattice update in a plausible run: 10^5 cycles is one
#: thread on one SM paying a DRAM latency (300-900 ns, about 10^3 cycles) a hundred times per update.
MAX_CYCLES_PER_LUP = 1e5


def plausible_lups_per_s(device: Any) -> tuple[float, float]:
    """(lowest, highest) lattice-update rate, lup/s, that a measurement or a stored prediction on
    ``device`` can have: from the device's own figures (SMs, sub-partitions, warp size, clock) and
    the two bounds above. A rate outside is a unit error, a corrupted cell or not a run of this device."""
    hz = device.clock_ghz * GIGA
    lanes = device.sms * device.register_partitions * device.warp_size
    return hz / MAX_CYCLES_PER_LUP, lanes * hz * MAX_LUPS_PER_LANE_CYCLE
