"""Cost of the further cache levels: one prediction with the RDNA 2 hierarchy against the same
device with only its first level and L2.

The 25-point stencil (star3d-r4 built in, 640x512x512, double) on the W6800, the paper's 1024-thread
blocks without folding; each configuration predicted with the four levels (L0, graphics L1 per
shader array, L2, Infinity Cache) and with only its first level and L2 ``[[memory]]`` tables (two levels);
median and total over the configurations, best of 3. Target: three or more levels at most 1.5
times the two-level time.

Run: python benchmarks/bench_cache_levels.py
"""

from __future__ import annotations

import dataclasses
import statistics
import time

from warpspeed.hardware.device import load_device
from warpspeed.kernel.builtin import star_stencil
from warpspeed.launch.space import block_sizes
from warpspeed.predict import Predictor

REPEATS = 3


def timings(predictor: Predictor, blocks) -> list[float]:
    out = []
    for block in blocks:
        best = float("inf")
        for _ in range(REPEATS):
            t = time.perf_counter()
            predictor.predict(block)
            best = min(best, time.perf_counter() - t)
        out.append(best)
    return out


def main() -> None:
    device = load_device("W6800")
    two = dataclasses.replace(device, memory=(device.l1, device.l2))
    kernel = star_stencil(3, 4, (640, 512, 512), registers=32)
    blocks = [b for b in block_sizes(1024) if b[0] >= 4]
    full, base = Predictor(kernel, device), Predictor(kernel, two)
    full.predict(blocks[0]), base.predict(blocks[0])
    t_full, t_base = timings(full, blocks), timings(base, blocks)
    print(f"{len(blocks)} configurations on {device.name}: four levels median {1e3 * statistics.median(t_full):.1f} ms "
          f"(total {sum(t_full):.2f} s), two levels median {1e3 * statistics.median(t_base):.1f} ms "
          f"(total {sum(t_base):.2f} s); ratio of totals {sum(t_full) / sum(t_base):.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
