"""Configuration spaces and ranking: predict every (block, fold) and sort by predicted speed.

A failing configuration (impossible launch, unsupported kernel) becomes a row with its error
instead of aborting the sweep. Predictions run serially, on any
``concurrent.futures.Executor`` (a process pool, or Dask's ``Client.get_executor()``), or on a
local process pool chosen automatically for large spaces; the result is identical and in the
same order either way.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from warpspeed.hardware.device import Device
from warpspeed.errors import WarpspeedError
from warpspeed.kernel.description import Kernel
from warpspeed.predict import Predictor
from warpspeed.launch.space import Config, paper_space

#: Below this many configurations a process pool costs more than it saves. Measured on the
#: 2-core reference machine: one prediction takes 5-50 ms (median 15 ms), starting a pool and
#: rebuilding the Predictor in each worker about 0.3 s; `warpspeed rank` over 168
#: configurations took 2.4 s serially and 2.0 s with the pool (benchmarks/README.md).
AUTO_PARALLEL_MIN_CONFIGS = 64

@dataclass(frozen=True)
class RankRow:
    """One ranked configuration. Volumes are bytes per lup; rates lups/s.

    ``error`` is set (and the numbers are NaN) when the configuration cannot be predicted.
    """

    config: Config
    lups_per_s: float
    limiter: str
    limits: dict[str, float]
    l1_cycles_per_lup: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    blocks_per_sm: int
    occupancy_limiter: str
    registers: int
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict:
        d = {
            "block": list(self.config.block), "fold": list(self.config.fold),
            "lups_per_s": self.lups_per_s, "limiter": self.limiter, "limiters": dict(self.limits),
            "l1_cycles_per_lup": self.l1_cycles_per_lup,
            "l2_load_bytes_per_lup": self.l2_load_bytes_per_lup,
            "l2_store_bytes_per_lup": self.l2_store_bytes_per_lup,
            "dram_load_bytes_per_lup": self.dram_load_bytes_per_lup,
            "dram_store_bytes_per_lup": self.dram_store_bytes_per_lup,
            "blocks_per_sm": self.blocks_per_sm, "occupancy_limiter": self.occupancy_limiter,
            "registers": self.registers, "error": self.error,
        }
        return d


def _error_row(config: Config, message: str) -> RankRow:
    nan = math.nan
    return RankRow(config, nan, "", {}, nan, nan, nan, nan, nan, 0, "", 0, error=message)


@dataclass(frozen=True)
class Ranking:
    """Rows sorted best first (highest predicted lups/s); failed rows last, in input order."""

    kernel: str
    device: str
    rows: tuple[RankRow, ...] = field(default_factory=tuple)

    def best(self) -> RankRow:
        for row in self.rows:
            if row.ok:
                return row
        raise WarpspeedError(f"no configuration of {self.kernel} could be predicted on {self.device}")

    @property
    def failed(self) -> tuple[RankRow, ...]:
        return tuple(r for r in self.rows if not r.ok)


def _predict_one(predictor: "Predictor", config: Config) -> RankRow:
    try:
        return predictor.predict(config.block, config.fold).rank_row(config)
    except WarpspeedError as exc:
        return _error_row(config, str(exc))


def _predict_rows(kernel: Kernel, device: Device, configs: Sequence[Config]) -> list[RankRow]:
    """Predict a chunk of configurations with one shared Predictor (runs in workers too)."""
    predictor = Predictor(kernel, device)
    return [_predict_one(predictor, c) for c in configs]


def _chunks(items: Sequence[Config], parts: int) -> list[list[Config]]:
    size = max(1, math.ceil(len(items) / parts))
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def predict_configs(kernel: Kernel, device: Device, configs: Sequence[Config],
                    executor: Executor | None | str = "auto",
                    progress: Callable[[int], None] | None = None) -> list[RankRow]:
    """Predict ``configs`` in input order.

    ``executor``: ``None`` runs serially in this process; an Executor runs chunks on it;
    ``"auto"`` uses a local process pool when there are at least
    :data:`AUTO_PARALLEL_MIN_CONFIGS` configurations and more than one CPU.
    ``progress`` is called with the number of configurations finished so far.
    """
    configs = list(configs)
    workers = os.cpu_count() or 1
    if executor == "auto":
        executor = None
        if len(configs) >= AUTO_PARALLEL_MIN_CONFIGS and workers > 1:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                return predict_configs(kernel, device, configs, pool, progress)
    if executor is None:
        predictor = Predictor(kernel, device)
        rows: list[RankRow] = []
        for config in configs:
            rows.append(_predict_one(predictor, config))
            if progress:
                progress(len(rows))
        return rows
    chunks = _chunks(configs, 4 * workers)
    futures = [executor.submit(_predict_rows, kernel, device, chunk) for chunk in chunks]
    rows = []
    for fut in futures:
        rows.extend(fut.result())
        if progress:
            progress(len(rows))
    return rows


def rank(kernel: Kernel, device: Device, configs: Iterable[Config] | None = None,
         executor: Executor | None | str = "auto",
         progress: Callable[[int], None] | None = None) -> Ranking:
    """Predict and sort ``configs`` (default: the paper's 1024-thread space) best first."""
    space = list(configs) if configs is not None else paper_space()
    rows = predict_configs(kernel, device, space, executor, progress)
    return Ranking(kernel=kernel.name, device=device.name, rows=sort_rows(rows))


def _headroom_key(row: RankRow) -> tuple:
    """Sort key: the four limits in ascending order, larger first. The first entry is the
    prediction; equal predictions (e.g. all FP-bound) are decided by the headroom of the next
    tightest limiter, then by block and fold so the order is total."""
    limits = sorted(row.limits.values()) if row.limits else [row.lups_per_s]
    return (tuple(-v for v in limits), row.config.block, row.config.fold)


def sort_rows(rows: Iterable[RankRow]) -> tuple[RankRow, ...]:
    """Best first (highest lups/s; ties by the next limiters' headroom, then block and fold);
    failed rows last in input order."""
    rows = list(rows)
    ok = sorted((r for r in rows if r.ok), key=_headroom_key)
    return tuple(ok + [r for r in rows if not r.ok])


def rank_per_fold(kernels: Mapping[tuple[int, int, int], Kernel], device: Device,
                  blocks: Callable[[Kernel], Sequence[tuple[int, int, int]]],
                  executor: Executor | None | str = "auto",
                  progress: Callable[[int], None] | None = None) -> Ranking:
    """Rank every folding with its own kernel (code generators compile one kernel per folding).

    ``kernels`` maps each folding to its kernel; ``blocks(kernel)`` gives the candidate blocks
    of that kernel. Foldings whose kernels are equal are predicted in one batch, so a kernel
    that does not change with the folding is ranked exactly as :func:`rank` ranks it.
    """
    groups: list[tuple[Kernel, list[Config]]] = []
    for fold, kernel in kernels.items():
        configs = [Config(tuple(b), tuple(fold)) for b in blocks(kernel)]  # type: ignore[arg-type]
        for known, known_configs in groups:
            if known == kernel:
                known_configs.extend(configs)
                break
        else:
            groups.append((kernel, configs))
    rows: list[RankRow] = []
    for kernel, configs in groups:
        done = len(rows)
        rows.extend(predict_configs(kernel, device, configs, executor,
                                    (lambda n, base=done: progress(base + n)) if progress else None))
    name = next(iter(kernels.values())).name
    return Ranking(kernel=name, device=device.name, rows=sort_rows(rows))
