"""The cost of ranking a domain nobody ranked before: with nvcc, and without a CUDA toolchain.

``pystencils_plugin.rank`` of the 7-point stencil (star3d-r1, the 168-configuration space of 1024
threads x 3 foldings) on domains that are neither shipped nor in the disk cache: each run gets a
fresh, empty cache directory (``WARPSPEED_CACHE_DIR``), in one process, serial (``executor=None``),
after a warm-up ranking on another domain that loads pystencils and the predictor. Three ways:

* ``no toolchain``: ``WARPSPEED_CUDA_TOOLCHAIN=off`` (a plain wheel): the registers of the same
  code on a shipped domain (:mod:`pystencils_plugin.register_shape`);
* ``nvcc, same code shipped``: nvcc installed; the same count, since the installed compiler counted
  the table (no compile);
* ``nvcc, compiled``: nvcc installed and the shipped table hidden for the run
  (``pystencils_plugin.register_table.shipped_table`` returns nothing), so every folding is
  compiled once, as any code the table does not hold.

Prints ms per configuration per domain and way, and the register counts each way found.
Run: python benchmarks/bench_new_domain.py
"""

from __future__ import annotations

import os
import tempfile
import time
from contextlib import contextmanager

from pystencils_plugin import rank, register_table, registers
from warpspeed.sass.toolchain import TOOLCHAIN_ENV

DOMAINS = ((300, 200, 100), (352, 224, 96), (448, 320, 160))
WARMUP_DOMAIN = (96, 96, 96)
DEVICE = "A100-SXM4-40GB"
#: Each way ranks its own domain, this many cells wider per way (a new domain for every run).
X_STEP = 8


@contextmanager
def environment(toolchain: bool, table: bool):
    old = {k: os.environ.get(k) for k in (TOOLCHAIN_ENV, "WARPSPEED_CACHE_DIR")}
    with tempfile.TemporaryDirectory(prefix="warpspeed_bench_") as cache:
        os.environ["WARPSPEED_CACHE_DIR"] = cache
        if toolchain:
            os.environ.pop(TOOLCHAIN_ENV, None)
        else:
            os.environ[TOOLCHAIN_ENV] = "off"
        original = register_table.shipped_table
        if not table:
            register_table.shipped_table = registers.shipped_table = lambda: None  # type: ignore[assignment]
        try:
            yield
        finally:
            register_table.shipped_table = registers.shipped_table = original  # type: ignore[assignment]
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def timed(domain) -> tuple[float, int, str]:
    t = time.perf_counter()
    ranking = rank("star3d-r1", DEVICE, domain=domain, executor=None)
    seconds = time.perf_counter() - t
    regs = ", ".join(f"{k.kernel.registers} ({k.registers_source})" for k in ranking.kernels.values())
    return 1e3 * seconds / len(ranking.rows), len(ranking.rows), regs


def main() -> None:
    ways = (("no toolchain", False, True), ("nvcc, same code shipped", True, True), ("nvcc, compiled", True, False))
    with environment(True, True):
        timed(WARMUP_DOMAIN)
    print(f"{'domain':>12s}  {'way':24s} {'configs':>7s} {'ms/config':>9s}  registers (1x1x1, 1x2x1, 1x1x2)")
    for base in DOMAINS:
        for k, (name, toolchain, table) in enumerate(ways):
            # each way its own domain (x + 8 k): nothing ranked before in this process or cached on disk
            domain = (base[0] + X_STEP * k, *base[1:])
            with environment(toolchain, table):
                ms, n, regs = timed(domain)
            print(f"{'x'.join(map(str, domain)):>12s}  {name:24s} {n:7d} {ms:9.2f}  {regs}")


if __name__ == "__main__":
    main()
