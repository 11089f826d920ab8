"""CDNA first level: the banked vector L1 against the MI210 gpu-strides float rows.

``fits/data/public/gpu-strides/mi210-float.csv`` stores the cycles per load instruction of 32
threads that gpu-strides measured on an AMD Instinct MI210 (CDNA 2) for 4-byte elements: strided
loads (stride 0-64) and 2-D blocks 1-64 threads wide, the access patterns of
:mod:`warpspeed.validation.strides`. The model is the first-level cost of :mod:`warpspeed.memory.l1`
with the MI210 device file's banked vector L1
(:class:`~warpspeed.memory.l1_stages.BankedVectorL1`): its bank and column widths were read off
these rows and its cycles per uncoalesced 16-B chunk fitted to them, so the figures are in-sample.
The same rule, with 8-byte elements entering only through the lanes' addresses, predicts the
file's double rows, which are kept for an independent check and not stored.
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


def cdna_strides_datasets() -> tuple[DatasetAccuracy, ...]:
    """Cycles per load instruction of 32 threads on the MI210 float rows."""
    rows, source, cycles = stored_stride_cycles(CDNA_STRIDES_FILE, CDNA_STRIDES_DEVICE)
    note = (f"{len(rows)} rows: strided loads (stride 0-64 elements) and 2-D blocks 1-64 threads wide, float only, "
            f"one work-group of 1024 threads; model device {CDNA_STRIDES_DEVICE}, banked vector L1 (in-sample: "
            "the bank and column widths were read off these rows and the cycles per 16 B chunk fitted to them)")
    return (_dataset("L1", "MI210 (CDNA 2) cycles per load of 32 threads, float", "cycles", cycles, source, note,
                     (CDNA_CYCLES_MAPE_BOUND, CDNA_CYCLES_WORST_BOUND)),)
