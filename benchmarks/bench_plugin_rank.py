"""End-to-end ranking from pystencils: generation, extraction, ptxas registers, predictions.

For each workload, ``pystencils_plugin.rank`` folds and generates one kernel per folding
(none / 2 in y / 2 in z), extracts it (registers from ptxas when nvcc is on PATH), and predicts
the paper's block sizes for it; the figure is the wall time of the whole call, serial
(``executor=None``), after imports.

Run: python benchmarks/bench_plugin_rank.py
"""

from __future__ import annotations

import time

from pystencils_plugin import rank

CASES = (
    ("star3d-r4", (640, 512, 512), None),
    ("allen-cahn", (256, 256, 256), 512),
)


def main() -> None:
    print(f"{'workload':12s} {'domain':>13s} {'configs':>8s} {'total s':>8s}  best")
    for name, domain, threads in CASES:
        t = time.perf_counter()
        ranking = rank(name, "A100-SXM4-40GB", domain=domain, threads=threads, executor=None)
        total = time.perf_counter() - t
        best = ranking.best()
        regs = ", ".join(f"{'x'.join(map(str, f))}: {k.kernel.registers} ({k.registers_source})"
                         for f, k in ranking.kernels.items())
        print(f"{name:12s} {'x'.join(map(str, domain)):>13s} {len(ranking.rows):8d} {total:8.2f}  "
              f"{best.block_size} fold {best.fold}, {best.row.lups_per_s / 1e9:.1f} Glup/s ({best.row.limiter}); "
              f"registers {regs}")


if __name__ == "__main__":
    main()
