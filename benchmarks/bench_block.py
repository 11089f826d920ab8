"""Block-level metrics (L1 wavefronts + block footprints) of the 3D 25-point stencil.

Times one configuration at a time, after a first call that includes compilation of the
kernel's address evaluators. Goal: <= 20 ms per configuration after the first.

Run: python benchmarks/bench_block.py
"""

from __future__ import annotations

import statistics
import time

from warpspeed.memory.addresses import block_addresses, block_cells, compile_kernel
from warpspeed.hardware.device import load_device
from warpspeed.memory.footprint import block_footprint
from warpspeed.memory.l1 import l1_cycles
from warpspeed.launch.geometry import analyze_launch
from warpspeed.launch.space import paper_space
from warpspeed.kernel.builtin import star_stencil


def main() -> None:
    device = load_device("A100-SXM4-40GB")
    kernel = star_stencil(3, 4, (640, 512, 512))
    t0 = time.perf_counter()
    compiled = compile_kernel(kernel)
    compile_ms = (time.perf_counter() - t0) * 1e3
    times = []
    for config in paper_space():
        t = time.perf_counter()
        info = analyze_launch(kernel, device, config.block, config.fold)
        cells = block_cells(info.launch)
        addr = block_addresses(compiled, cells)
        l1_cycles(compiled, cells, device, addr)
        block_footprint(compiled, cells, device, addr)
        times.append((time.perf_counter() - t) * 1e3)
    print(f"compile kernel: {compile_ms:.1f} ms")
    print(f"block-level metrics, {len(times)} configurations of the 3D 25-point stencil on A100:")
    print(f"  first {times[0]:.1f} ms, median {statistics.median(times[1:]):.1f} ms, "
          f"worst {max(times[1:]):.1f} ms, total {sum(times):.0f} ms")


if __name__ == "__main__":
    main()
