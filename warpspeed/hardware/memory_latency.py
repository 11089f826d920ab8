"""Memory latencies of a device: one typed record, resolved once per device, read by every model.

The idle load-to-use latency of the first level, the L2 and DRAM, in SM cycles, comes from the
first source that has all three:

1. the device's own pointer-chase latencies: ``latency_ns`` of its first-level and L2 ``[[memory]]``
   tables and ``dram_latency_ns`` of its ``[device]`` table (gpu-benches gpu-latency and the like),
   at its clock;
2. those of the measured part that ``[device] latencies_from`` names (a part of the same family:
   the same SM and L2), at this device's clock;
3. the ``[memory]`` table of the architecture's latency file (``warpspeed/hardware/latencies/``:
   ``l1_latency_cycles``, ``l2_latency_cycles`` and ``dram_latency_cycles``, each with its source
   there, e.g. the A100's of AMALI, ISCA 2025, Table 2).

:meth:`warpspeed.hardware.device.Device.latencies` resolves them (this module reads the files and
holds the record; it does not know the device class).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from warpspeed.errors import DeviceError
from warpspeed.files.stored import package_files
from warpspeed.files.toml import read_based_on

#: The package of the architecture latency files.
LATENCY_PACKAGE = "warpspeed.hardware.latencies"
#: Keys of an architecture file's ``[memory]`` table: L1 latency and the L2 and DRAM increments, cycles.
ARCHITECTURE_KEYS = ("l1_latency_cycles", "l2_latency_cycles", "dram_latency_cycles")


@dataclass(frozen=True)
class MemoryLatencies:
    """Idle load-to-use latencies of a device's memory levels, SM cycles.

    Attributes:
        l1: the first level's latency.
        l2: the L2's latency beyond the first level's (an increment).
        dram: DRAM's latency beyond the L2's (an increment).
        source: where they come from (the device's pointer chase, a named part's, an architecture file).
    """

    l1: float
    l2: float
    dram: float
    source: str

    @property
    def dram_total(self) -> float:
        """The DRAM load-to-use latency, cycles: ``l1 + l2 + dram``."""
        return self.l1 + self.l2 + self.dram

    @classmethod
    def from_pointer_chase(cls, l1_ns: float, l2_ns: float, dram_ns: float, clock_ghz: float,
                           source: str) -> "MemoryLatencies":
        """Absolute pointer-chase latencies (ns) at ``clock_ghz`` as cycles (ns x GHz) and increments."""
        f = clock_ghz
        return cls(l1_ns * f, (l2_ns - l1_ns) * f, (dram_ns - l2_ns) * f, source)


class LatencyFileError(DeviceError):
    """A missing or malformed architecture latency file."""


def architectures() -> list[str]:
    """Architectures with a latency file."""
    return [p.name[:-len(".toml")] for p in package_files(LATENCY_PACKAGE, ".toml")]


def architecture_data(architecture: str, error: Callable[[str], Exception] = LatencyFileError) -> dict:
    """The tables of ``architecture``'s latency file. A file whose ``[latencies]`` names
    ``based_on = "<architecture>"`` holds only what differs: its ``units`` and ``memory`` keys
    replace those of the base file, everything else is the base's. ``error`` builds the exception
    of a missing file or a broken ``based_on`` chain."""
    known = architectures()
    if architecture not in known:
        raise error(f"no latency file for architecture {architecture!r}; available: {', '.join(known)}")
    return read_based_on(LATENCY_PACKAGE, architecture, known, what="latency file", kind="architecture",
                         head="latencies", tables=("latencies", "units", "memory"), read_error=LatencyFileError,
                         error=error)


def architecture_latencies(architecture: str) -> MemoryLatencies | None:
    """The ``[memory]`` latencies of ``architecture``'s latency file, or None where it has no file
    or the file lacks them."""
    if architecture not in architectures():
        return None
    memory: Mapping = architecture_data(architecture).get("memory", {})
    if not all(k in memory for k in ARCHITECTURE_KEYS):
        return None
    l1, l2, dram = (float(memory[k]) for k in ARCHITECTURE_KEYS)
    return MemoryLatencies(l1, l2, dram, f"the {architecture} latency file")
