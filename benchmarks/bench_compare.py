"""What ``warpspeed compare`` costs on the default space, next to ranking with each model alone.

The 168 configurations of the 3D 25-point stencil (640x512x512) on A100-SXM4-40GB, serial, after
all imports and one warm-up comparison (kernel generation and the caches it fills are not charged).
``compare`` predicts every configuration once and scores it with the three time models; the rank
rows time ``rank_per_fold`` with each model, which predicts again every time.

    python benchmarks/bench_compare.py
"""

from __future__ import annotations

import time

from warpspeed.cli.common import DEFAULT_DEVICE, DEFAULT_KERNEL, rank_space
from warpspeed.compare import compare_configs
from warpspeed.models import TIME_MODELS
from warpspeed.rank import Scoring, rank_per_fold


def main() -> None:
    space = rank_space(DEFAULT_KERNEL, None, DEFAULT_DEVICE, None, None)
    compare_configs(space.kernels, space.device, space.blocks)  # warm-up
    print(f"{'what':<34} {'configs':>7} {'s':>6} {'ms/config':>10}")
    for model in TIME_MODELS:
        start = time.perf_counter()
        ranking = rank_per_fold(space.kernels, space.device, space.blocks, executor=None, scoring=Scoring(model))
        seconds = time.perf_counter() - start
        print(f"{'rank --model ' + model:<34} {len(ranking.rows):>7} {seconds:6.2f} "
              f"{seconds / len(ranking.rows) * 1e3:10.1f}")
    start = time.perf_counter()
    comparison = compare_configs(space.kernels, space.device, space.blocks)
    seconds = time.perf_counter() - start
    print(f"{'compare (all three)':<34} {len(comparison.rows):>7} {seconds:6.2f} "
          f"{seconds / len(comparison.rows) * 1e3:10.1f}")


if __name__ == "__main__":
    main()
