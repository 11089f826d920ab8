"""Speed of the pipeline model: per configuration and for the 168-configuration ranking.

The 3D 25-point range-4 star stencil, 640x512x512, the paper space of 1024 threads (168
configurations: blocks x foldings none, 2 in y, 2 in z) on A100-SXM4-40GB (Ernst et al., J.
Parallel Distrib. Comput. 2023, 5.2), each folding with its own kernel as ``warpspeed rank``
resolves it.

1. building the kernels (code generation) is timed once and reported apart;
2. serially, one process: every configuration's ``Predictor.predict`` and, separately, the
   pipeline model's ``estimate`` on that prediction (``time.perf_counter`` around each call);
3. the ranking as ``warpspeed rank`` runs it (:func:`warpspeed.rank.rank_per_fold`, a process
   pool over the machine's cores), once by the roofline and once by the pipeline model.

Targets: at most 20 ms per configuration for the pipeline model, at most 5 s for the ranking.

Run: python benchmarks/pipeline_speed.py [--out benchmarks/results/pipeline_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from warpspeed.hardware.device import load_device
from warpspeed.kernel.catalog import resolve
from warpspeed.launch.space import PAPER_FOLDINGS, PAPER_STENCIL_THREADS, configuration_space
from warpspeed.pipeline import estimate
from warpspeed.predict import Predictor
from warpspeed.rank import Scoring, rank_per_fold

DEVICE = "A100-SXM4-40GB"
KERNEL = "star3d-r4"
#: Targets of the pipeline model (seconds).
PER_CONFIG_TARGET_S = 0.020
RANKING_TARGET_S = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="write the results as JSON to this file")
    args = parser.parse_args()
    device = load_device(DEVICE)
    start = time.perf_counter()
    kernels = {f: resolve(KERNEL, fold=f, device=device).kernel for f in PAPER_FOLDINGS}
    build_s = time.perf_counter() - start

    def blocks(kernel):
        return sorted({c.block for c in configuration_space(kernel, PAPER_STENCIL_THREADS)})

    predict_s, pipeline_s = [], []
    for fold, kernel in kernels.items():
        predictor = Predictor(kernel, device)
        for block in blocks(kernel):
            t0 = time.perf_counter()
            prediction = predictor.predict(block, fold)
            t1 = time.perf_counter()
            estimate(prediction)
            t2 = time.perf_counter()
            predict_s.append(t1 - t0)
            pipeline_s.append(t2 - t1)

    rankings = {}
    for model in ("roofline", "pipeline"):
        t0 = time.perf_counter()
        ranking = rank_per_fold(kernels, device, blocks, scoring=Scoring(model=model))
        rankings[model] = {"seconds": time.perf_counter() - t0, "configurations": len(ranking.rows),
                           "failed": len(ranking.failed)}
    result = {
        "kernel": KERNEL, "device": DEVICE, "cpus": os.cpu_count(), "configurations": len(pipeline_s),
        "kernel_build_s": build_s,
        "predict_s": {"median": statistics.median(predict_s), "max": max(predict_s), "total": sum(predict_s)},
        "pipeline_s": {"median": statistics.median(pipeline_s), "max": max(pipeline_s), "total": sum(pipeline_s),
                       "target_per_config": PER_CONFIG_TARGET_S},
        "ranking_s": {**rankings, "target": RANKING_TARGET_S},
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
