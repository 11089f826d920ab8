"""Traces and the interval model over the paper's space: speed, and interval vs roofline.

For star3d-r4 (pystencils, 640x512x512, double) on the A100: the 168 configurations of the
paper's space (56 blocks x 3 foldings), each folding with its generated kernel. Timed, serial,
after imports and generation:

- "SASS cold": compiling and disassembling the three foldings' kernels (nvcc + cuobjdump) into an
  empty cache directory; "SASS warm": the same from the disk cache in a fresh in-memory state;
- "roofline": ``Predictor.predict`` for every configuration;
- "trace": ``build_trace(prediction)`` on top (the SASS stream cached in memory);
- "interval": ``warpspeed.interval.estimate`` on top (trace included).

Then the comparison of the two rankings (Spearman's rank correlation, the range of the interval
model's rate over the roofline's, the configurations whose rank moves most, and how many the
interval model puts at the bandwidth bound).

Run: python benchmarks/bench_interval.py
"""

from __future__ import annotations

import os
import tempfile
import time

from scipy.stats import spearmanr

from pystencils_plugin.catalog import extract_for
from warpspeed.hardware.device import load_device
from warpspeed.interval import INTERVAL
from warpspeed.trace.build import build_trace
from warpspeed.launch.space import PAPER_FOLDINGS, block_sizes
from warpspeed.predict import Predictor
from warpspeed.sass import compile as sass_compile
from warpspeed.sass import stream as sass_stream

DOMAIN = (640, 512, 512)
DEVICE = "A100-SXM4-40GB"


def main() -> None:
    device = load_device(DEVICE)
    kernels = {f: extract_for("star3d-r4", DOMAIN, fold=f, device=device).kernel for f in PAPER_FOLDINGS}
    predictors = {f: Predictor(k, device) for f, k in kernels.items()}
    with tempfile.TemporaryDirectory() as cache:
        os.environ[sass_compile.CACHE_ENV] = cache
        for state in ("cold", "warm"):
            sass_compile._cached_sass.cache_clear()
            sass_stream._parsed_stream.cache_clear()
            t = time.perf_counter()
            for f, k in kernels.items():
                sass_stream.sass_stream(k, device, f)
            print(f"SASS {state}: {time.perf_counter() - t:.2f} s for {len(kernels)} kernels")
    configs = [(b, f) for f in PAPER_FOLDINGS for b in block_sizes(1024)]
    t = time.perf_counter()
    predictions = [predictors[f].predict(b, f) for b, f in configs]
    roof = time.perf_counter() - t
    t = time.perf_counter()
    for p in predictions:
        build_trace(p)
    trace = time.perf_counter() - t
    t = time.perf_counter()
    estimates = [INTERVAL.estimate(p) for p in predictions]
    interval = time.perf_counter() - t
    n = len(configs)
    print(f"{n} configurations: roofline {roof:.2f} s; traces {trace:.2f} s ({1e3 * trace / n:.2f} ms each); "
          f"interval incl. trace {interval:.2f} s ({1e3 * interval / n:.2f} ms each); "
          f"roofline + interval {roof + interval:.2f} s")
    r_roof = [p.roofline.lups_per_s for p in predictions]
    r_int = [e.lups_per_s for e in estimates]
    rho = spearmanr(r_roof, r_int).statistic
    floored = sum(1 for e in estimates if e.details["bandwidth_floor_cycles"] > 0)
    ratios = sorted(i / r for i, r in zip(r_int, r_roof))
    guarded = sum(1 for p in predictions if build_trace(p).launch.guard_warps > 0)
    print(f"Spearman (roofline vs interval): {rho:.3f}; interval / roofline {ratios[0]:.3f} to {ratios[-1]:.3f} "
          f"(median {ratios[n // 2]:.3f}); at the bandwidth bound: {floored} of {n}; with guard-only warps: "
          f"{guarded} of {n}")
    order_roof = sorted(range(n), key=lambda i: -r_roof[i])
    order_int = sorted(range(n), key=lambda i: -r_int[i])
    pos_roof = {i: k for k, i in enumerate(order_roof)}
    pos_int = {i: k for k, i in enumerate(order_int)}
    print("best 5 by interval:")
    for i in order_int[:5]:
        e = estimates[i]
        print(f"  {configs[i][0]} fold {configs[i][1]}: {r_int[i] / 1e9:6.2f} Glup/s (roofline #{pos_roof[i] + 1}, "
              f"{r_roof[i] / 1e9:.2f}), {e.explanation}")
    moves = sorted(range(n), key=lambda i: -abs(pos_roof[i] - pos_int[i]))[:5]
    print("largest moves:")
    for i in moves:
        e = estimates[i]
        stack = e.details["cpi_stack"]
        top = sorted(stack, key=stack.get, reverse=True)[:2]
        print(f"  {configs[i][0]} fold {configs[i][1]}: roofline #{pos_roof[i] + 1} ({r_roof[i] / 1e9:.1f}, "
              f"{predictions[i].limiter}), interval #{pos_int[i] + 1} ({r_int[i] / 1e9:.1f}; "
              f"{top[0]} {100 * stack[top[0]] / e.cycles:.0f} %, {top[1]} {100 * stack[top[1]] / e.cycles:.0f} %); "
              f"{predictions[i].launch.occupancy.warps_per_sm} warps/SM")


if __name__ == "__main__":
    main()
