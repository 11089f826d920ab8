"""Ranking by energy: the power model's cost per configuration and for the paper's space.

star3d-r4 (pystencils, 640x512x512, double) on the A100, the 168 configurations, after
generation and with the SASS streams cached:

1. serial, one process: roofline alone, then trace + power per configuration;
2. the ranking as ``warpspeed rank`` runs it (:func:`warpspeed.rank.rank_per_fold`, a process
   pool over the machine's cores), by time and by energy.

Targets: power adds at most 1 ms per configuration; the ranking by energy takes at most 3 s.

Run: python benchmarks/bench_power.py
"""

from __future__ import annotations

import time

from pystencils_plugin.catalog import extract_for
from warpspeed.hardware.device import load_device
from warpspeed.launch.space import PAPER_FOLDINGS, block_sizes
from warpspeed.models import estimate_energy
from warpspeed.predict import Predictor
from warpspeed.rank import Scoring, rank_per_fold


def main() -> None:
    device = load_device("A100-SXM4-40GB")
    predictors = {f: Predictor(extract_for("star3d-r4", (640, 512, 512), fold=f, device=device).kernel, device)
                  for f in PAPER_FOLDINGS}
    configs = [(b, f) for f in PAPER_FOLDINGS for b in block_sizes(1024)]
    for f, predictor in predictors.items():  # compile / load the SASS of each folding once
        estimate_energy(predictor.predict(block_sizes(1024)[0], f))
    t = time.perf_counter()
    predictions = [predictors[f].predict(b, f) for b, f in configs]
    roof = time.perf_counter() - t
    t = time.perf_counter()
    energies = [estimate_energy(p) for p in predictions]
    power = time.perf_counter() - t
    n = len(configs)
    throttled = sum(1 for e in energies if e.details["throttled"])
    print(f"{n} configurations: roofline {roof:.2f} s; power incl. trace {power:.2f} s ({1e3 * power / n:.2f} ms each); "
          f"serial roofline + power {roof + power:.2f} s; {throttled} throttled to the 400 W limit")
    kernels = {f: p.kernel for f, p in predictors.items()}
    for objective in ("time", "energy"):
        t = time.perf_counter()
        ranking = rank_per_fold(kernels, device, lambda kernel: block_sizes(1024), scoring=Scoring(objective=objective))
        print(f"rank_per_fold by {objective}: {time.perf_counter() - t:.2f} s, {len(ranking.rows)} configurations")


if __name__ == "__main__":
    main()
