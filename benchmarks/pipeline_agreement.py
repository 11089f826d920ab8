"""The pipeline model next to the roofline: the default space, a small grid, low occupancy.

1. The default space of ``warpspeed rank``: the 3D 25-point range-4 star stencil, 640x512x512,
   double precision, on A100-SXM4-40GB, 1024-thread blocks x foldings none, 2 in y, 2 in z (168
   configurations, Ernst et al., J. Parallel Distrib. Comput. 2023, 5.2), each folding with its
   own kernel. Per configuration: the roofline's and the pipeline model's lups/s; reported: the
   ratio pipeline / roofline (min, median, max), the Spearman rank correlation of the two, both
   models' best configuration, how many of the roofline's top 10 the pipeline's top 10 holds, in
   how many configurations the bandwidth floor binds and the largest moves in rank.
2. A small grid: the 7-point stencil (star3d-r1) with 32x8x4 blocks on 64^3, 128^3 and 512^3.
3. Low occupancy: the 25-point stencil with 32x2x2 blocks (4 warps), its busiest SM simulated
   with 16, 8, 4, 2 and 1 resident blocks (the occupancy a larger register or shared-memory
   demand would allow); reported: each time relative to 16 resident blocks.

``--selection`` and ``--issue`` choose the simulator's rules (default: its defaults), so the
numbers of another rule can be set beside them.

Run: python benchmarks/pipeline_agreement.py [--selection fifo|oldest] [--issue event|cycle]
     [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics

from scipy.stats import spearmanr

from warpspeed.hardware.device import load_device
from warpspeed.kernel.catalog import resolve, resolve_kernel
from warpspeed.launch.space import PAPER_FOLDINGS, PAPER_STENCIL_THREADS, configuration_space
from warpspeed.pipeline import build_graph, estimate, groups_per_sm, simulate
from warpspeed.pipeline.launch_time import sub_partitions
from warpspeed.pipeline.simulate import SELECTIONS
from warpspeed.predict import Predictor

DEVICE = "A100-SXM4-40GB"
SMALL_GRID_DOMAINS = ((64, 64, 64), (128, 128, 128), (512, 512, 512))
SMALL_GRID_BLOCK = (32, 8, 4)
LOW_OCCUPANCY_BLOCK = (32, 2, 2)
RESIDENT_BLOCKS = (16, 8, 4, 2, 1)
TOP = 10
#: ``--issue``: the simulator's ``poll`` flag per choice.
ISSUES = {"event": False, "cycle": True}


def _x(triple) -> str:
    return "x".join(map(str, triple))


def default_space(device, options: dict) -> dict:
    rows = []
    for fold in PAPER_FOLDINGS:
        kernel = resolve("star3d-r4", fold=fold, device=device).kernel
        predictor = Predictor(kernel, device)
        for block in sorted({c.block for c in configuration_space(kernel, PAPER_STENCIL_THREADS)}):
            p = predictor.predict(block, fold)
            e = estimate(p, **options)
            rows.append((_x(block), _x(fold), p.roofline.lups_per_s, e.lups_per_s, e.details["bandwidth_floor_cycles"] > 0))
    ratios = [r[3] / r[2] for r in rows]
    by_roof = sorted(rows, key=lambda r: -r[2])
    by_pipe = sorted(rows, key=lambda r: -r[3])
    top = {r[:2] for r in by_roof[:TOP]}
    place = {r[:2]: k for k, r in enumerate(by_pipe, 1)}
    moves = sorted(((place[r[:2]] - k, k, r[:2]) for k, r in enumerate(by_roof, 1)), key=lambda m: -abs(m[0]))
    return {
        "configurations": len(rows),
        "ratio_to_roofline": {"min": min(ratios), "median": statistics.median(ratios), "max": max(ratios)},
        "spearman": float(spearmanr([r[2] for r in rows], [r[3] for r in rows]).statistic),
        "best_roofline": {"block": by_roof[0][0], "fold": by_roof[0][1], "glups": by_roof[0][2] / 1e9},
        "best_pipeline": {"block": by_pipe[0][0], "fold": by_pipe[0][1], "glups": by_pipe[0][3] / 1e9},
        "top10_shared": sum(1 for r in by_pipe[:TOP] if r[:2] in top),
        "top10_same_order": [r[:2] for r in by_pipe[:TOP]] == [r[:2] for r in by_roof[:TOP]],
        "bandwidth_floor_binds": sum(1 for r in rows if r[4]),
        "largest_rank_moves": [{"block": c[0], "fold": c[1], "roofline_place": k, "pipeline_place": k + d}
                               for d, k, c in moves[:3]],
    }


def small_grid(device, options: dict) -> list:
    out = []
    for domain in SMALL_GRID_DOMAINS:
        p = Predictor(resolve_kernel("star3d-r1", domain=domain, device=device), device).predict(SMALL_GRID_BLOCK,
                                                                                                  (1, 1, 1))
        out.append({"domain": _x(domain), "roofline_glups": p.roofline.lups_per_s / 1e9,
                     "pipeline_glups": estimate(p, **options).lups_per_s / 1e9})
    return out


def low_occupancy(device, options: dict) -> dict:
    p = Predictor(resolve_kernel("star3d-r4", device=device), device).predict(LOW_OCCUPANCY_BLOCK, (1, 1, 1))
    graph, _, _ = build_graph(p)
    warps = p.launch.occupancy.warps_per_block
    groups = groups_per_sm(p.launch.launch.total_blocks, device.sms)
    s = sub_partitions(warps, device.register_partitions, "split")
    times = {m: simulate(graph, warps, groups, m, sub_partitions=s, **options).cycles for m in RESIDENT_BLOCKS}
    return {"block": _x(LOW_OCCUPANCY_BLOCK), "groups_per_sm": groups,
            "time_relative_to_16_resident": {m: t / times[16] for m, t in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--selection", choices=SELECTIONS, default=None)
    parser.add_argument("--issue", choices=ISSUES, default=None,
                        help="event: issue the moment an instruction is ready; cycle: an idle pipeline retries "
                             "once per cycle (poll)")
    parser.add_argument("--out", default=None, help="write the results as JSON to this file")
    args = parser.parse_args()
    options = {k: v for k, v in (("selection", args.selection), ("poll", ISSUES.get(args.issue))) if v is not None}
    device = load_device(DEVICE)
    result = {"device": DEVICE, "options": options or "defaults", "default_space": default_space(device, options),
              "small_grid": small_grid(device, options), "low_occupancy": low_occupancy(device, options)}
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
