"""RDNA first level: the L0 model against the RX 6900 XT gpu-strides rows.

``fits/data/public/gpu-strides/rdna2.csv`` stores the cycles per load instruction of 32 threads
that gpu-strides measured on an RX 6900 XT (RDNA 2), for the same strided and 2-D block access
patterns as the A100 rows (:mod:`warpspeed.validation.strides`); AMD has no counterpart of the
L1TEX counters, so only the cycles are compared. The model is the first-level cost of
:mod:`warpspeed.memory.l1` with the RX6900XT device file's first-level (``[[memory]]``) parameters: the
tag stage's wavefronts per line are a least-MAPE fit to these rows (in-sample), the 64-bit data
rate is derived by hand from them.
"""

from __future__ import annotations


from warpspeed.files.stored import as_file, stored_file
from warpspeed.hardware.device import load_device
from warpspeed.validation.datasets import DatasetAccuracy, PointError, source_of
from warpspeed.validation.datasets import dataset as _dataset, row_label as _row_label
from warpspeed.validation.strides import predict_row, read_strides_csv

#: The stored rows and the device they were measured on.
RDNA_STRIDES_FILE = ("public", "gpu-strides", "rdna2.csv")
RDNA_STRIDES_DEVICE = "RX6900XT"
#: Stated bounds [%]: the mean over every row, and the worst row (2-D blocks whose rows, 16 KiB
#: apart, fall into one L0 set and miss: a cache effect the first-level cost does not model).
RDNA_CYCLES_MAPE_BOUND = 10.0
RDNA_CYCLES_WORST_BOUND = 70.0


def stored_stride_cycles(parts: tuple[str, ...], device_name: str):
    """(rows, source, points) of a stored gpu-strides file (``fits/<parts>``): its rows, the source
    named in its header, and per row the first-level cycles of ``device_name`` against the measured."""
    stored = stored_file(*parts)
    source = [source_of(" ".join(line.lstrip("# ") for line in stored.read_text().splitlines()
                                  if line.startswith("#")))]
    with as_file(stored) as path:
        rows = read_strides_csv(path)
    device = load_device(device_name)
    return rows, source, [PointError(_row_label(row), predict_row(row, device).cycles, row.cycles) for row in rows]


def rdna_strides_datasets() -> tuple[DatasetAccuracy, ...]:
    """Cycles per load instruction of 32 threads on the RX 6900 XT rows."""
    rows, source, cycles = stored_stride_cycles(RDNA_STRIDES_FILE, RDNA_STRIDES_DEVICE)
    note = (f"{len(rows)} rows: strided loads (stride 0-64 elements) and 2-D blocks 1-64 threads wide, float and "
            f"double, one work-group of 1024 threads; model device {RDNA_STRIDES_DEVICE} (in-sample: the tag stage's "
            "cost per line is fitted to these rows)")
    return (_dataset("L1", "RX 6900 XT (RDNA 2) cycles per load of 32 threads", "cycles", cycles, source, note,
                     (RDNA_CYCLES_MAPE_BOUND, RDNA_CYCLES_WORST_BOUND)),)
