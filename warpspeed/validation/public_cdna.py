"""CDNA first level: the banked vector L1 against the MI210 gpu-strides float rows.

``fits/data/public/gpu-strides/mi210-float.csv`` stores the cycles per load instruction of 32
threads that gpu-strides measured on an AMD Instinct MI210 (CDNA 2) for 4-byte elements: strided
loads (stride 0-64) and 2-D blocks 1-64 threads wide, the access patterns of
:mod:`warpspeed.validation.strides`. The model is the first-level cost of :mod:`warpspeed.memory.l1`
with the MI210 device file's banked vector L1
(:class:`~warpspeed.memory.l1_stages.BankedVectorL1`): its bank and column widths were read off
these rows and its cycles per uncoalesced 16-B chunk fitted to them, so the figures are in-sample.
The double rows of the same file (``mi210-double.csv``) test the rule's wide elements: the address
unit's documented 4 lanes per clock for multi-dword loads, whole 8-byte elements in the line's
banks (read off the contiguous rows and strides 2, 4 and 8) and 4 tag banks by 64 B line (read off
strides 10-34 and the 1- and 2-wide blocks), with no constant fitted to them; and the refill floor
of a block whose load lines exceed the 16 KiB vL1D (strides of 33 elements and more but the
multiples of 8: 264-288 lines against 256), whose one constant, the fraction of an instruction's
lines refilled, is a least-MAPE fit to both precisions' rows (only the double rows exceed the L1).
"""

from __future__ import annotations

from warpspeed.validation.datasets import DatasetAccuracy
from warpspeed.validation.datasets import dataset as _dataset
from warpspeed.validation.public_rdna import stored_stride_cycles

#: The stored rows and the device they were measured on.
CDNA_STRIDES_FILE = ("public", "gpu-strides", "mi210-float.csv")
CDNA_STRIDES_DEVICE = "MI210"
#: Stated bounds [%]: the mean over every row (the target of the rule), and the worst row (2-D
#: blocks 2 wide, whose 32 rows 16 KiB apart fall into a few vL1D sets and miss: a cache effect
#: the first-level cost does not model).
CDNA_CYCLES_MAPE_BOUND = 10.0
CDNA_CYCLES_WORST_BOUND = 70.0
#: The double rows (8-byte elements) and their bounds [%]: every row within 2 % but the loops just
#: past the L1 (stride 34, 272 lines: +22 %; 35: +8 %) and stride 49 (22.2 measured, 26.9: +21 %).
CDNA_DOUBLE_FILE = ("public", "gpu-strides", "mi210-double.csv")
CDNA_DOUBLE_MAPE_BOUND = 10.0
CDNA_DOUBLE_WORST_BOUND = 30.0


def cdna_strides_datasets() -> tuple[DatasetAccuracy, ...]:
    """Cycles per load instruction of 32 threads on the MI210 float rows."""
    rows, source, cycles = stored_stride_cycles(CDNA_STRIDES_FILE, CDNA_STRIDES_DEVICE)
    note = (f"{len(rows)} rows: strided loads (stride 0-64 elements) and 2-D blocks 1-64 threads wide, float only, "
            f"one work-group of 1024 threads; model device {CDNA_STRIDES_DEVICE}, banked vector L1 (in-sample: "
            "the bank and column widths were read off these rows and the cycles per 16 B chunk fitted to them)")
    return (_dataset("L1", "MI210 (CDNA 2) cycles per load of 32 threads, float", "cycles", cycles, source, note,
                     (CDNA_CYCLES_MAPE_BOUND, CDNA_CYCLES_WORST_BOUND)),)


def cdna_double_strides_datasets() -> tuple[DatasetAccuracy, ...]:
    """Cycles per load instruction of 32 threads on the MI210 double rows (one constant fitted, module docstring)."""
    rows, source, cycles = stored_stride_cycles(CDNA_DOUBLE_FILE, CDNA_STRIDES_DEVICE)
    note = (f"{len(rows)} rows: strided loads (stride 0-64 elements) and 2-D blocks 1-64 threads wide, double only; "
            f"model device {CDNA_STRIDES_DEVICE}, banked vector L1 with the address unit's 4 lanes per clock and "
            "8-byte banks and 4 tag banks by 64 B line for wide elements (read off the contiguous rows, strides 2-34 "
            "and the 1- and 2-wide blocks; nothing fitted); the refill floor beyond the 16 KiB vL1D (its refilled "
            "fraction 0.84 fitted to these rows and the float rows)")
    return (_dataset("L1", "MI210 (CDNA 2) cycles per load of 32 threads, double", "cycles", cycles, source, note,
                     (CDNA_DOUBLE_MAPE_BOUND, CDNA_DOUBLE_WORST_BOUND)),)
