"""Speed of the wave-level ISL volumes (warpspeed.memory.wave) versus domain size.

The 3D 25-point range-4 star stencil on the A100, block (32, 8, 4), folding (1, 2, 1), on cubic
domains. "first" is the first call on a fresh WaveModel (building the ISL maps included);
"repeat" is the best of the repeated calls on the same model. Target: repeated calls at most
100 ms and flat in the domain size (ISL sets are implicit; nothing is enumerated per thread).

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
              f"{'load B/lup':>10} {'o_z':>7}")
    print(f"star3d r4, block {BLOCK}, fold {FOLD}, {device.name}, N-D address space")
    print(header)
    for n in args.sizes:
        kernel = star_stencil(3, 4, (n, n, n))
        info = analyze_launch(kernel, device, BLOCK, FOLD)
        compiled = compile_kernel(kernel)
        start = time.perf_counter()
        model = WaveModel(compiled)
        volumes = model.volumes(info, device)
        first = time.perf_counter() - start
        repeats = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            model.volumes(info, device)
            repeats.append(time.perf_counter() - start)
        print(f"{f'{n}x{n}x{n}':>16} {info.wave.blocks:>11} {info.wave.count:>6} {first * 1e3:>9.1f} "
              f"{min(repeats) * 1e3:>10.1f} {volumes.compulsory_load_bytes_per_lup:>10.2f} "
              f"{volumes.oversubscription.z:>7.2f}")


if __name__ == "__main__":
    main()
