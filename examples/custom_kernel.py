"""Describe a kernel by hand (any code generator can do this) and predict two configurations.

Run: python examples/custom_kernel.py
"""

import warpspeed as ws
from warpspeed.kernel.description import X, Y, Z
from warpspeed.predict import Predictor
from warpspeed.summary import prediction_record

GHOST = 1
DOMAIN = (512, 512, 512)
SHAPE = tuple(n + 2 * GHOST for n in DOMAIN)

src = ws.Field("src", element_bytes=8, shape=SHAPE)  # ghost layers included, x contiguous
dst = ws.Field("dst", element_bytes=8, shape=SHAPE)
c = (X + GHOST, Y + GHOST, Z + GHOST)
loads = [ws.load("src", *c)]
for axis in range(3):
    for offset in (-1, 1):
        idx = list(c)
        idx[axis] += offset
        loads.append(ws.load("src", *idx))
kernel = ws.Kernel(
    name="7pt-jacobi",
    fields=(src, dst),
    accesses=(*loads, ws.store("dst", *c)),
    domain=DOMAIN,
    flops=ws.FlopCounts(muls=1, fmas=6),
)

predictor = Predictor(kernel, "A100-SXM4-40GB")  # build once, reuse for many configurations
for block, fold in (((32, 8, 4), (1, 1, 1)), ((8, 8, 16), (1, 2, 1))):
    p = predictor.predict(block, fold)
    d = prediction_record(p)  # the summary `warpspeed predict --json` prints
    print(f"block {block} fold {fold}: {p.lups_per_s / 1e9:.1f} Glup/s, limited by {p.limiter}; "
          f"L2 load {d['l2_load_bytes_per_lup']:.1f} B/lup, DRAM {d['dram_load_bytes_per_lup']:.1f} + "
          f"{d['dram_store_bytes_per_lup']:.1f} B/lup")
