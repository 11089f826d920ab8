"""Unit conversion factors: one name per factor, imported by every module that converts units.

Multiply a value in the larger unit by the factor to get the smaller unit (GHz x ``GIGA`` = Hz,
GB/s x ``GIGA`` = B/s, seconds x ``MEGA`` = microseconds), divide to go the other way. Decimal
prefixes are SI (powers of ten), binary ones IEC (powers of 1024). No module defines its own copy:
``tests/project/test_architecture.py`` refuses a module-level constant of 1e9, 1e-9, 1e6 or 1e-6 elsewhere.
"""

#: SI giga, 1e9: Hz per GHz, B/s per GB/s, lup/s per Glup/s, ns per s, nJ per J.
GIGA = 1e9
#: SI mega, 1e6: Hz per MHz, lup/J per Mlup/J, microseconds per second.
MEGA = 1e6
#: SI kilo, 1e3: MHz per GHz, kHz per MHz, milliseconds per second.
KILO = 1e3
#: SI nano, 1e-9: seconds per nanosecond; a count times it is in billions (lup/s -> Glup/s).
NANO = 1e-9
#: SI micro, 1e-6: seconds per microsecond; a count times it is in millions (lup/J -> Mlup/J).
MICRO = 1e-6
#: IEC kibi, 1024: bytes per KiB.
KIB = 1024
#: IEC mebi, 2**20: bytes per MiB.
MIB = 2**20

#: Bytes per sector, the unit in which the L1TEX and the L2 of NVIDIA GPUs move data and Nsight
#: Compute counts it (Nsight Compute Kernel Profiling Guide, memory chart: 32-byte sectors).
SECTOR_BYTES = 32
#: Threads per warp on NVIDIA GPUs (CUDA C++ Programming Guide, "SIMT Architecture": warps of 32
#: threads), the lanes of one warp-wide instruction.
WARP_LANES = 32

__all__ = ["GIGA", "KIB", "KILO", "MEGA", "MIB", "MICRO", "NANO", "SECTOR_BYTES", "WARP_LANES"]
