"""Speed of the wave-level volumes (warpspeed.memory.wave) versus domain size.

The 3D 25-point range-4 star stencil on the A100, block (32, 8, 4), folding (1, 2, 1), on cubic
domains. "first" is the first call on a fresh WaveModel (building the maps included);
"repeat" is the best of the repeated calls of one wave on the same model; "grid" the best of
the repeated averages over all full waves (one wave evaluation per class of waves, at most
three), as the predictor uses them; times are process CPU time. Target: flat in the domain
size (the counts are box unions or implicit ISL sets; nothing is enumerated per thread, and the
classes of waves are counted over one period of their offsets).

Run: ``python benchmarks/bench_wave.py [--repeats N] [--sizes 256 512 ...]``
"""

from __future__ import annotations

import argparse
import time

from warpspeed.memory.addresses import compile_kernel
from warpspeed.hardware.device import load_device
from warpspeed.launch.geometry import analyze_launch
from warpspeed.memory.wave import WaveModel
from warpspeed.kernel.builtin import star_stencil

BLOCK = (32, 8, 4)
FOLD = (1, 2, 1)
DEFAULT_SIZES = (256, 512, 1024, 2048)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="repeated calls per size")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="cube edge lengths")
    parser.add_argument("--device", default="A100-SXM4-40GB")
    args = parser.parse_args()
    device = load_device(args.device)
    header = (f"{'domain':>16} {'wave blocks':>11} {'waves':>6} {'first ms':>9} {'repeat ms':>10} "
              f"{'classes':>7} {'grid ms':>8} {'load B/lup':>10} {'o_z':>7}")
    print(f"star3d r4, block {BLOCK}, fold {FOLD}, {device.name}, N-D address space")
    print(header)
    for n in args.sizes:
        kernel = star_stencil(3, 4, (n, n, n))
        info = analyze_launch(kernel, device, BLOCK, FOLD)
        compiled = compile_kernel(kernel)
        start = time.process_time()
        model = WaveModel(compiled)
        model.volumes(info, device)
        first = time.process_time() - start
        repeats, grids = [], []
        for _ in range(args.repeats):
            start = time.process_time()
            model.volumes(info, device)
            repeats.append(time.process_time() - start)
            start = time.process_time()
            grid = model.grid_volumes(info, device)
            grids.append(time.process_time() - start)
        print(f"{f'{n}x{n}x{n}':>16} {info.wave.blocks:>11} {info.wave.count:>6} {first * 1e3:>9.1f} "
              f"{min(repeats) * 1e3:>10.1f} {len(grid.classes):>7} {min(grids) * 1e3:>8.1f} "
              f"{grid.compulsory_load_bytes_per_lup:>10.2f} {grid.oversubscription.z:>7.2f}")


if __name__ == "__main__":
    main()
