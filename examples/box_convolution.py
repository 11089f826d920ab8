"""A 2-D 15x15 box convolution described through the Python API, predicted on an A100 for blocks
16-256 x 1-16 threads and 1, 2 or 4 outputs per thread (consecutive in y).

Per output: 225 float loads of the input (the 15x15 window) and 225 FMAs with weights that live in
constant memory (no loads in the description), one store. 4096^2 outputs; both fields carry a
7-cell halo. The columns show where the time goes: the rate of the first level (``l1``: data-pipe
and tag wavefronts), of the SM's in-core time (``sm``: issue, pipes, load/store units, register
reads; ``docs/incore.md``) and of DRAM, each alone, and the default model's rate and limiter.

Run: python examples/box_convolution.py
"""

from __future__ import annotations

import warpspeed as ws
from warpspeed.kernel.description import X, Y
from warpspeed.predict import Predictor

RADIUS = 7
OUTPUTS = 4096
SHAPE = (OUTPUTS + 2 * RADIUS, OUTPUTS + 2 * RADIUS)
DEVICE = "A100-SXM4-40GB"
BLOCK_X = (16, 32, 64, 128, 256)
BLOCK_Y = (1, 2, 4, 8, 16)
FOLDS_Y = (1, 2, 4)
#: Threads per block the configurations span (one warp to 1024, the CUDA limit).
MIN_THREADS, MAX_THREADS = 32, 1024


def box_convolution() -> ws.Kernel:
    """dst[x, y] = sum over the 15x15 window of w[i, j] src[x + i, y + j] (float)."""
    window = range(-RADIUS, RADIUS + 1)
    loads = tuple(ws.load("src", X + RADIUS + i, Y + RADIUS + j) for j in window for i in window)
    return ws.Kernel(
        name="box2d-r7",
        fields=(ws.Field("src", element_bytes=4, shape=SHAPE), ws.Field("dst", element_bytes=4, shape=SHAPE)),
        accesses=(*loads, ws.store("dst", X + RADIUS, Y + RADIUS)),
        domain=(OUTPUTS, OUTPUTS, 1),
        flops=ws.FlopCounts(fmas=len(loads)),
        dtype="float32",
    )


def main() -> None:
    predictor = Predictor(box_convolution(), DEVICE)
    print(f"{'block':>8} {'fold':>5} {'Glup/s':>7} {'limiter':>8} {'l1':>7} {'sm':>7} {'dram':>7}  (level limits, Glup/s)")
    for fy in FOLDS_Y:
        for bx in BLOCK_X:
            for by in BLOCK_Y:
                if not MIN_THREADS <= bx * by <= MAX_THREADS:
                    continue
                p = predictor.predict((bx, by, 1), (1, fy, 1))
                limits = {lv.key: lv.lups_per_s or 0.0 for lv in p.levels}
                print(f"{bx:>4}x{by:<3} {fy:>5} {p.lups_per_s / 1e9:7.2f} {p.limiter:>8} "
                      f"{limits['l1'] / 1e9:7.2f} {limits.get('sm', 0.0) / 1e9:7.2f} {limits['dram'] / 1e9:7.2f}")


if __name__ == "__main__":
    main()
