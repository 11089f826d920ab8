"""Representative wave classes against the exact all-waves average, on the paper space.

For every configuration of the paper space of the 3D 25-point range-4 star stencil on
640x512x512 (A100-SXM4-40GB; D. Ernst, M. Holzer, G. Hager, M. Knorr, G. Wellein, "Analytical
Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel and
Distributed Computing 173 (2023), section 5.1) this script predicts twice: with the DRAM volumes
averaged over the representative wave classes (``Predictor``, the default,
:mod:`warpspeed.memory.wave.classes`) and over every full wave (``Predictor(exact_waves=True)``,
:mod:`warpspeed.memory.wave.exact`). It reports the time of each pass (serial, one process,
``time.perf_counter`` around ``Predictor.predict``), the number of wave evaluations, the largest
relative differences of the compulsory DRAM load, the DRAM volume and the predicted lup/s, and
whether the ten best configurations (by predicted lup/s) change. Each pass is timed
``--repeat`` times (default 3, fresh ``Predictor`` each time); the best total is reported.

Run: python benchmarks/bench_exact_waves.py [--repeat 3] [--out benchmarks/results/exact_waves.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from warpspeed.hardware.device import load_device
from warpspeed.kernel.builtin import PAPER_STENCIL_DOMAIN, star_stencil
from warpspeed.launch.space import paper_space
from warpspeed.predict import Predictor

DEVICE = "A100-SXM4-40GB"
TOP = 10


def _pass(predictor: Predictor, configs: list) -> tuple[list, float]:
    out, total = [], 0.0
    for c in configs:
        start = time.perf_counter()
        p = predictor.predict(c.block, c.fold)
        total += time.perf_counter() - start
        out.append(p)
    return out, total


def _best(run, repeat: int) -> tuple[list, float]:
    """The predictions of ``run()`` and its shortest time over ``repeat`` runs."""
    results = [run() for _ in range(max(1, repeat))]
    return results[0][0], min(t for _, t in results)


def _top(configs: list, predictions: list) -> list[str]:
    order = sorted(range(len(configs)), key=lambda i: -predictions[i].roofline.lups_per_s)
    return [configs[i].label for i in order[:TOP]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/exact_waves.json"))
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per mode; the best is reported")
    args = parser.parse_args()
    device = load_device(DEVICE)
    kernel = star_stencil(3, 4, PAPER_STENCIL_DOMAIN)
    configs = list(paper_space())
    classes, t_classes = _best(lambda: _pass(Predictor(kernel, device), configs), args.repeat)
    exact, t_exact = _best(lambda: _pass(Predictor(kernel, device, exact_waves=True), configs), args.repeat)

    def worst(get):
        rel = [(abs(get(e) / get(c) - 1), cfg.label) for c, e, cfg in zip(classes, exact, configs) if get(c)]
        return max(rel)

    result = {
        "configurations": len(configs),
        "repeats": args.repeat,
        "classes_total_s": t_classes,
        "exact_total_s": t_exact,
        "class_evaluations": sum(len(p.wave.classes) for p in classes),
        "exact_evaluations": sum(len(p.wave.classes) for p in exact),
        "max_rel_compulsory_dram_load": worst(lambda p: p.dram.compulsory_load_bytes_per_lup),
        "max_rel_dram_volume": worst(lambda p: p.dram.total_bytes_per_lup),
        "max_rel_lups_per_s": worst(lambda p: p.roofline.lups_per_s),
        "top10_classes": _top(configs, classes),
        "top10_exact": _top(configs, exact),
    }
    result["top10_same_order"] = result["top10_classes"] == result["top10_exact"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for key, value in result.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
