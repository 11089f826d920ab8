"""Replay a Kernel Tuner cache instead of measuring: Kernel Tuner's own simulation mode.

:func:`simulate` reads and verifies a cache (:func:`~warpspeed.tune.cache.read_cache`), writes
the verified entries to a temporary cache in Kernel Tuner's layout and hands it to Kernel
Tuner's ``tune_cache`` (``kernel_tuner.interface.tune_cache``: the search space is the cache's
valid configurations, every "measurement" is looked up in the cache by Kernel Tuner's
``SimulationRunner``), with :class:`~warpspeed.tune.strategy.PredictedOrder` as the strategy.
:func:`replay_strategy` replays the same cache with one of Kernel Tuner's own strategies
(``random_sample``, ``genetic_algorithm``, ``bayes_opt``, ...) for comparison.
"""

from __future__ import annotations

import contextlib
import io
import math
import random
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.rank import DEFAULT_SCORING, Scoring
from warpspeed.tune.cache import KernelTunerCache, TuneError, read_cache, write_cache
from warpspeed.tune.kt import kernel_tuner_modules
from warpspeed.tune.mapping import DEFAULT_MAPPING, ParamMapping
from warpspeed.tune.result import TuneResult, TuneRun


def _stem(name: str) -> str:
    """A kernel name compared loosely: lower case, separators as ``_``, without the ``ws_`` prefix and
    the ``_b<block>_f<fold>`` suffix of warpspeed's CUDA function names."""
    stem = re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")
    stem = re.sub(r"^ws_", "", stem)
    return re.sub(r"_b[0-9x]+_f[0-9x]+$", "", stem)


def check_kernel(cache: KernelTunerCache, kernel: str, where: str) -> None:
    """Refuse a cache whose ``kernel_name`` names another kernel of the catalog than ``kernel``
    (a name the catalog does not know, such as a hand-written CUDA function's, is accepted)."""
    from warpspeed.kernel.catalog import kernel_names

    if not cache.kernel_name:
        return
    cached, wanted = _stem(cache.kernel_name), _stem(kernel)
    matches = [k for k in kernel_names() if cached == _stem(k) or cached.startswith(_stem(k) + "_")]
    if not matches:
        return
    named = max(matches, key=lambda k: len(_stem(k)))
    if _stem(named) != wanted:
        raise TuneError(f"{where} holds measurements of kernel {cache.kernel_name!r}, not {kernel!r}; "
                        f"allowed: --kernel {named} for this cache, or a cache of {kernel}")


def _domain(cache: KernelTunerCache, domain: Sequence[int] | None) -> tuple[int, ...] | None:
    """The domain to predict on: the given one, else the cache's ``problem_size`` when it is one
    (1 to 3 positive sizes; a trailing size 1 of a third axis dropped, as a 2-D domain padded to
    Kernel Tuner's three sizes), else None (the kernel's default)."""
    if domain is not None:
        return tuple(domain)
    size = cache.problem_size
    while size is not None and len(size) > 2 and size[-1] == 1:  # a 2-D domain padded to three sizes
        size = size[:-1]
    return size


def run_kernel_tuner_cache(cache: KernelTunerCache, strategy: Any, max_fevals: int | None = None,
                           seed: int | None = None) -> list[dict]:
    """Kernel Tuner's ``tune_cache`` on the verified ``cache`` with ``strategy`` (a strategy name
    of Kernel Tuner or an ``OptAlgWrapper``); ``max_fevals``: measurements at most; ``seed``:
    seeds Python's and numpy's random generators, which Kernel Tuner's strategies draw from.
    Returns Kernel Tuner's results, in the order the configurations were evaluated."""
    kt = kernel_tuner_modules()
    options = {"max_fevals": int(max_fevals)} if max_fevals is not None else {}
    if seed is not None:
        import numpy as np

        random.seed(seed)
        np.random.seed(seed)
    with tempfile.TemporaryDirectory(prefix="warpspeed-tune-") as tmp:
        path = Path(tmp) / "cache.json"
        write_cache(cache, path)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results, _ = kt.interface.tune_cache(str(path), strategy=strategy, strategy_options=options,
                                                     quiet=True, verbose=False)
        except WarpspeedError:
            raise
        except (ValueError, KeyError, TypeError, RuntimeError) as exc:
            raise TuneError(f"Kernel Tuner cannot replay the cache: {' '.join(str(exc).split())}") from None
    return list(results)


def _runs(results: Sequence[dict], names: Sequence[str], mapping: ParamMapping, order: Any) -> tuple[TuneRun, ...]:
    from warpspeed.tune.strategy import config_of

    predicted = {}
    if order is not None and order.ranking is not None:
        predicted = {row.config: (place, row.lups_per_s)
                     for place, row in enumerate((r for r in order.ranking.rows if r.ok), 1)}
    runs = []
    for number, result in enumerate(results, 1):
        config = config_of(result, names, mapping)
        place, rate = predicted.get(config, (None, math.nan)) if config is not None else (None, math.nan)
        error = result.get("__error__")
        time_ms = result.get("time") if error is None else None
        if isinstance(time_ms, bool) or not isinstance(time_ms, (int, float)) or not math.isfinite(time_ms):
            time_ms = None
        runs.append(TuneRun(number, {n: result.get(n) for n in names}, config, rate, place,
                            float(time_ms) if time_ms is not None else None, str(error) if error is not None else ""))
    return tuple(runs)


def simulate(cache_path: str | Path, kernel: str, device: Any, domain: Sequence[int] | None = None, *,
             budget: int | None = None, patience: int | None = None, dtype: str | None = None,
             mapping: ParamMapping = DEFAULT_MAPPING, scoring: Scoring = DEFAULT_SCORING,
             use_patience: bool = True) -> TuneResult:
    """Replay ``cache_path`` through Kernel Tuner's simulation mode in warpspeed's order.

    ``kernel``: the catalog's name of the cached kernel (its code is generated per folding to
    predict it); ``domain``: cells (default: the cache's ``problem_size``, else the kernel's);
    ``budget``: measurements at most; ``patience``: stop after this many without a better time
    (default :data:`~warpspeed.tune.strategy.DEFAULT_PATIENCE` when ``use_patience``; without a
    budget and without patience the whole space is replayed)."""
    from warpspeed.hardware.device import load_device
    from warpspeed.kernel.catalog import require_kernel
    from warpspeed.tune.strategy import DEFAULT_PATIENCE, PredictedOrder

    if budget is not None and budget < 1:
        raise TuneError(f"the budget must be at least 1 measurement, got {budget}")
    require_kernel(kernel)
    dev = load_device(device) if isinstance(device, str) else device
    where = f"Kernel Tuner cache {str(cache_path)!r}"
    cache = read_cache(cache_path)
    check_kernel(cache, kernel, where)
    if dtype is None:
        meta = cache.extra.get("warpspeed", {})
        dtype = meta.get("dtype") if meta.get("dtype") in ("double", "float") else None
    mapped = mapping.restricted_to(cache.params)
    if not any(mapped.config(dict(zip(cache.params, e.values))) is not None for e in cache.valid):
        raise TuneError(f"{where}: no measured configuration maps to a block and folding (parameters "
                        f"{', '.join(cache.params)}); allowed: whole numbers from 1 to 1024 in "
                        f"{', '.join(mapped.mapped())}")
    dom = _domain(cache, domain)
    order = PredictedOrder(kernel, dev, mapping, patience if patience is not None else
                           (DEFAULT_PATIENCE if use_patience else None), scoring, dom, dtype)
    wrapper = kernel_tuner_modules().wrapper.OptAlgWrapper(order)
    results = run_kernel_tuner_cache(cache, wrapper, budget)
    lups_domain = dom if dom is not None else _kernel_domain(kernel, dev, dtype)
    notes = [f"{cache.dropped} cache entr{'y' if cache.dropped == 1 else 'ies'} could not be read and were left out"] \
        if cache.dropped else []
    if domain is not None and cache.problem_size is not None and tuple(domain) != cache.problem_size:
        notes.append(f"the cache's problem size is {'x'.join(map(str, cache.problem_size))}; predicted on the domain "
                     f"{'x'.join(map(str, domain))} (--domain)")
    return TuneResult(kernel=kernel, device=dev.name, domain=tuple(lups_domain), lups=math.prod(lups_domain),
                      runs=_runs(results, cache.params, mapping, order), space=len(cache.valid),
                      stopped="space" if len(results) >= len(cache.valid) else order.stopped,
                      model_seconds=order.model_seconds, known_best_ms=cache.best_ms(), notes=tuple(notes))


def _kernel_domain(kernel: str, device: Any, dtype: str | None) -> tuple[int, ...]:
    from warpspeed.kernel.catalog import resolve

    return tuple(resolve(kernel, None, device=device, dtype=dtype).kernel.domain)


def replay_strategy(cache: KernelTunerCache, strategy: str, max_fevals: int | None, seed: int) -> list[float | None]:
    """The times (ms; None: failed) of the distinct configurations in the order Kernel Tuner's
    ``strategy`` first measured them on ``cache`` in simulation mode, with ``seed`` (a strategy
    that returns to a configuration gets it from Kernel Tuner's cache: not a new measurement)."""
    results = run_kernel_tuner_cache(cache, strategy, max_fevals, seed)
    times: list[float | None] = []
    seen: set[tuple] = set()
    for result in results:
        key = tuple(str(result.get(n)) for n in cache.params)
        if key in seen:
            continue
        seen.add(key)
        t = result.get("time")
        ok = "__error__" not in result and isinstance(t, (int, float)) and not isinstance(t, bool)
        times.append(float(t) if ok else None)
    return times
