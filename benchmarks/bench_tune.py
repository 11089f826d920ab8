"""Runs until the best: warpspeed's order against Kernel Tuner's strategies, on replayed caches.

For each Kernel Tuner cache of ``fits/data/H200/kerneltuner/`` (the H200 measurement tables,
converted by ``scripts/kt_caches_from_measurements.py``) it counts the measured configurations
until one is within 97 %, 99 % and 100 % of the cache's best time (best time / time >= fraction):

* **warpspeed**: :class:`warpspeed.tune.strategy.PredictedOrder` (overlap model) replayed through
  Kernel Tuner's simulation mode (``kernel_tuner.interface.tune_cache``), the whole space, no
  patience stop; one run (the order is deterministic); its model time is the wall time of the
  predictions (kernel generation per folding included, from a warm disk cache);
* **random_sample**, **genetic_algorithm**, **bayes_opt**: Kernel Tuner's strategies with their
  default options in the same simulation mode, ``max_fevals`` = the space (for Bayesian
  optimisation half the space, at most ``--bo-cap``, 30: its cost grows with every measurement and
  near an exhausted space Kernel Tuner's implementation slows down by orders of magnitude), 20 seeds (Python's and numpy's
  generators seeded with 0..19), the median over the seeds; a seed that never reaches the fraction
  within its budget counts as more than the budget (shown ``>N``). Distinct configurations are
  counted: a strategy returning to a configuration gets it from the cache. Their cost is the
  median wall time of one replay (strategy time included, no measurement). A replay that does not
  finish within 20 s counts as not reaching the fraction (:data:`REPLAY_TIMEOUT_S`); the table
  says how many seeds did so.

Also: with the default patience (5), where warpspeed's search stops and what fraction of the best
it has found there. Run from the repository root:

    python benchmarks/bench_tune.py [--seeds 20] [--bo-cap 30] [--out benchmarks/results/tune.json] [--resume]

and it prints the Markdown table of ``docs/tune.md``.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import time
from pathlib import Path

from warpspeed.tune.cache import read_cache
from warpspeed.tune.replay import replay_strategy, simulate
from warpspeed.tune.result import FRACTIONS, runs_to_fraction

ROOT = Path(__file__).resolve().parents[1]
CACHES = ROOT / "fits" / "data" / "H200" / "kerneltuner"
#: Cache file -> the catalog kernel it holds.
KERNELS = {"star3d-r4": "star3d-r4", "star3d-r4-float": "star3d-r4", "star3d-r1": "star3d-r1",
           "box3d-r1": "box3d-r1", "star2d-r1": "star2d-r1", "copy19-pull": "copy19-pull"}
STRATEGIES = ("random_sample", "genetic_algorithm", "bayes_opt")
#: Seconds one replay of a Kernel Tuner strategy may take. Kernel Tuner 1.5's genetic algorithm
#: loops without end on a small space once it cannot breed a new valid configuration (its
#: ``while len(population) < pop_size`` never ends); such a seed counts as not reaching the best.
REPLAY_TIMEOUT_S = 20


class _Stuck(BaseException):
    """A replay ran past :data:`REPLAY_TIMEOUT_S`."""


def _alarm(signum, frame):  # type: ignore[no-untyped-def]
    raise _Stuck()


def _replay(cache, strategy: str, cap: int, seed: int) -> list | None:
    """The strategy's times, or None when it did not finish in :data:`REPLAY_TIMEOUT_S`."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(REPLAY_TIMEOUT_S)
    try:
        return replay_strategy(cache, strategy, cap, seed)
    except _Stuck:
        return None
    finally:
        signal.alarm(0)


def _median_runs(values: list[float]) -> float:
    return statistics.median(values)


def _cell(value: float, cap: int) -> str:
    if value == float("inf") or value > cap:
        return f">{cap}"
    return f"{value:g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--bo-cap", type=int, default=30, help="measurements at most for bayes_opt")
    parser.add_argument("--only", nargs="*", default=None, help="cache names (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "tune.json")
    parser.add_argument("--resume", action="store_true", help="keep the caches already in --out")
    args = parser.parse_args(argv)
    done = {}
    if args.resume and args.out.exists():
        done = {r["cache"]: r for r in json.loads(args.out.read_text())["rows"]}
    rows = []
    for name, kernel in KERNELS.items():
        if args.only and name not in args.only:
            continue
        if name in done:
            rows.append(done[name])
            continue
        path = CACHES / f"{name}.json"
        cache = read_cache(path)
        best = cache.best_ms()
        simulate(path, kernel, "H200", budget=1)  # warm the disk caches of the generated kernels
        start = time.perf_counter()
        ws = simulate(path, kernel, "H200", use_patience=False)
        ws_wall = time.perf_counter() - start
        stop = simulate(path, kernel, "H200")
        row = {"cache": name, "space": len(cache.valid), "warpspeed": [ws.runs_to(f) for f in FRACTIONS],
               "model_s": ws.model_seconds, "replay_s": ws_wall,
               "patience_stop": len(stop.runs), "patience_fraction": best / stop.best().time_ms}
        for strategy in STRATEGIES:
            cap = min(len(cache.valid) // 2, args.bo_cap) if strategy == "bayes_opt" else len(cache.valid)
            counts: dict[float, list[float]] = {f: [] for f in FRACTIONS}
            walls, stuck = [], 0
            for seed in range(args.seeds):
                start = time.perf_counter()
                times = _replay(cache, strategy, cap, seed)
                stuck += times is None
                walls.append(time.perf_counter() - start)
                for f in FRACTIONS:
                    n = runs_to_fraction(times, best, f) if times is not None else None
                    counts[f].append(n if n is not None else float("inf"))
            row[f"{strategy}_stuck"] = stuck
            row[strategy] = [_median_runs(counts[f]) for f in FRACTIONS]
            row[f"{strategy}_cap"] = cap
            row[f"{strategy}_s"] = statistics.median(walls)
        rows.append(row)
        print(f"{name}: done", file=sys.stderr)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"seeds": args.seeds, "rows": rows}, indent=1, default=str) + "\n")
    print("| cache | configs | warpspeed 97/99/100 % | random sampling | genetic algorithm | Bayesian optimisation "
          "| warpspeed model time | KT strategy time (random / GA / BO) | patience stop: runs, of best |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        def triple(key: str, cap: int | None = None) -> str:
            return " / ".join(_cell(v, cap or r["space"]) if v is not None else "—" for v in r[key])
        print(f"| {r['cache']} | {r['space']} | {triple('warpspeed')} | {triple('random_sample')} | "
              f"{triple('genetic_algorithm')} | {triple('bayes_opt', r['bayes_opt_cap'])} | {r['model_s']:.2f} s | "
              f"{r['random_sample_s']:.2f} / {r['genetic_algorithm_s']:.2f} / {r['bayes_opt_s']:.2f} s | "
              f"{r['patience_stop']}, {r['patience_fraction'] * 100:.1f} % |")
    stuck = {r["cache"]: {s: r.get(f"{s}_stuck", 0) for s in STRATEGIES if r.get(f"{s}_stuck")} for r in rows}
    print("\nseeds whose replay did not finish in", REPLAY_TIMEOUT_S, "s:", {k: v for k, v in stuck.items() if v})
    ws99 = [r["warpspeed"][1] for r in rows]
    print(f"\nwarpspeed, runs to 99 % at the median of the caches: {statistics.median(ws99):g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
