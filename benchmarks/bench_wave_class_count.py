"""What the classes of waves cost a ranking across domains, and what they change in it.

The grid average of the DRAM volumes evaluates one wave per class of waves
(``warpspeed.memory.wave.classes``): at most three per grid, and more of them on large domains (a
2048^3 grid of the paper space has 2.4 classes on the H200, a 128^3 grid 1.2). This script ranks
the 25-point range-4 star stencil (``star3d-r4``, double; the paper space of Ernst, Holzer, Hager,
Knorr, Wellein, "Analytical Performance Estimation during Code Generation on Modern GPUs", JPDC
173 (2023), section 5.1, restricted to what each domain can use: 150 configurations at 128^3, 168
at 2048^3) with the default (overlap) model at two cubic domains, twice:

- ``all``: the shipped model, every class evaluated;
- ``heaviest``: an alternative that is not shipped, only the class with the most waves of each
  grid evaluated, carrying the weight of the others (the grid's average becomes that one wave's
  volumes).

It prints, per device, the least CPU time (``time.process_time``) of ``--repeat`` warm rankings of
each domain, the ratio of the larger domain's to the smaller's, and how far ``heaviest`` moves each
configuration's predicted rate from ``all`` (largest and median relative change, and how many move
by more than 0.1 %). The variants alternate ``--rounds`` times in fresh interpreters, so that
another job on a shared machine weighs on both alike.

Run: python benchmarks/bench_wave_class_count.py [--rounds 3] [--repeat 11] [--domains 128 2048]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Devices measured.
DEVICES = ("H200", "A100-SXM4-40GB")
#: A predicted rate that moves by more than this (relative) counts as changed.
CHANGED = 1e-3

SNIPPET = r"""
import json, sys, time
from dataclasses import replace
from unittest import mock
from warpspeed.kernel.catalog import resolve
from warpspeed.hardware.device import load_device
from warpspeed.launch.space import PAPER_FOLDINGS, configuration_space, default_threads, MAX_BLOCK_Z
import warpspeed.rank as wr
import warpspeed.memory.wave.wave_model as wave_model

device_name, variant, repeat, edges = sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(e) for e in sys.argv[4:]]
shipped = wave_model.wave_classes

def heaviest(grid, blocks):
    classes = shipped(grid, blocks)
    top = max(classes, key=lambda c: c.waves)
    return (replace(top, waves=sum(c.waves for c in classes)),)

device = load_device(device_name)
out = {}
with mock.patch.object(wave_model, "wave_classes", heaviest if variant == "heaviest" else shipped):
    for edge in edges:
        kernels = {f: resolve("star3d-r4", (edge,) * 3, fold=f, device=device).kernel for f in PAPER_FOLDINGS}
        def blocks(kernel):
            return [c.block for c in configuration_space(kernel, default_threads(kernel, device), [(1, 1, 1)],
                                                         MAX_BLOCK_Z)]
        ranking = wr.rank_per_fold(kernels, device, blocks, executor=None)
        times = []
        for _ in range(repeat):
            t = time.process_time()
            wr.rank_per_fold(kernels, device, blocks, executor=None)
            times.append(time.process_time() - t)
        out[edge] = {"seconds": min(times),
                     "rates": {f"{r.config.block}{r.config.fold}": r.lups_per_s for r in ranking.rows if r.ok}}
print(json.dumps(out))
"""


def run(device: str, variant: str, repeat: int, edges: list[int]) -> dict:
    done = subprocess.run([sys.executable, "-c", SNIPPET, device, variant, str(repeat), *map(str, edges)],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    return {int(k): v for k, v in json.loads(done.stdout.splitlines()[-1]).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="fresh interpreters per variant, alternating")
    parser.add_argument("--repeat", type=int, default=11, help="timed rankings per interpreter (least CPU time)")
    parser.add_argument("--domains", type=int, nargs=2, default=[128, 2048], metavar="EDGE",
                        help="the smaller and the larger cubic domain edge")
    args = parser.parse_args()
    small, large = args.domains
    for device in DEVICES:
        ratios: dict[str, list[float]] = {"all": [], "heaviest": []}
        rates: dict[str, dict] = {}
        for _ in range(args.rounds):
            for variant in ratios:
                got = run(device, variant, args.repeat, [small, large])
                ratios[variant].append(got[large]["seconds"] / got[small]["seconds"])
                rates[variant] = got
        for variant, values in ratios.items():
            print(f"{device:16s} {variant:9s} ratio {large}^3 / {small}^3 per ranking: "
                  + ", ".join(f"{v:.3f}" for v in values))
        for edge in (small, large):
            base, alt = rates["all"][edge]["rates"], rates["heaviest"][edge]["rates"]
            moves = sorted(abs(alt[k] / base[k] - 1) for k in base)
            print(f"{device:16s} heaviest at {edge}^3: rates move by at most {100 * moves[-1]:.2f} %, median "
                  f"{100 * statistics.median(moves):.3f} %, {sum(m > CHANGED for m in moves)} of {len(moves)} "
                  f"by more than {100 * CHANGED:.1f} %")


if __name__ == "__main__":
    main()
