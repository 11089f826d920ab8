"""The time models side by side: overlap, roofline, interval and pipeline rates per configuration.

Every configuration is predicted once (:class:`warpspeed.predict.Predictor`) and scored by each
time model along the code path of ``warpspeed rank --model``
(:func:`warpspeed.rank.predict_scored`), so a comparison row holds exactly the rates the three
rankings hold. The summary gives, per model, the range of its rate relative to the reference
model's (the default time model, :data:`warpspeed.models.DEFAULT_TIME_MODEL`, when compared),
the Spearman rank correlation of every pair of models over the configurations all of them
predict (``scipy.stats.spearmanr``), and each model's best configuration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Callable, Mapping, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import Device
from warpspeed.kernel.description import Kernel
from warpspeed.launch.space import Config
from warpspeed.memory.capacity import CapacityCurves
from warpspeed.models import DEFAULT_TIME_MODEL, TIME_MODELS, require_model
from warpspeed.predict import Predictor
from warpspeed.rank import RankRow, Scoring, predict_scored, sort_rows

#: The model the others are divided by and the rows are sorted by (when it is compared).
REFERENCE_MODEL = DEFAULT_TIME_MODEL


@dataclass(frozen=True)
class ModelRate:
    """One model's verdict on one configuration: lattice updates per second, what dominates its
    time (the roofline's limiter, the largest CPI-stack entry, the pipeline's bound) and the error
    message when the model could not estimate it (then ``lups_per_s`` is NaN)."""

    model: str
    lups_per_s: float
    explanation: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class CompareRow:
    """One configuration: its rate under every compared model (in the order compared)."""

    config: Config
    rates: tuple[ModelRate, ...]

    def rate(self, model: str) -> ModelRate:
        for r in self.rates:
            if r.model == model:
                return r
        raise WarpspeedError(f"model {model!r} was not compared; compared: {', '.join(r.model for r in self.rates)}")

    @property
    def ok(self) -> bool:
        """Whether every model predicted this configuration."""
        return all(r.ok for r in self.rates)

    def ratio(self, model: str, reference: str = REFERENCE_MODEL) -> float:
        """``model``'s rate divided by ``reference``'s (NaN where either failed)."""
        a, b = self.rate(model), self.rate(reference)
        return a.lups_per_s / b.lups_per_s if a.ok and b.ok and b.lups_per_s > 0 else math.nan

    def as_dict(self) -> dict:
        d: dict = {"block": list(self.config.block), "fold": list(self.config.fold)}
        for r in self.rates:
            d[r.model] = {"lups_per_s": r.lups_per_s, "explanation": r.explanation, "error": r.error}
            if r.model != REFERENCE_MODEL and REFERENCE_MODEL in (x.model for x in self.rates):
                d[r.model][f"ratio_to_{REFERENCE_MODEL}"] = self.ratio(r.model)
        return d


@dataclass(frozen=True)
class ModelSummary:
    """One model over the comparison: its rate relative to the roofline's (smallest and largest
    ratio) and its best configuration with that rate (lups/s)."""

    model: str
    ratio_min: float
    ratio_max: float
    best: Config
    best_lups_per_s: float
    best_explanation: str


@dataclass(frozen=True)
class Comparison:
    """Rows sorted by the reference model's rate, best first (rows any model failed on last);
    ``models`` in the order compared; ``spearman`` maps each pair of models to the Spearman rank
    correlation of their rates over the rows every model predicted (NaN with fewer than two).
    A model that predicts no configuration is left out of ``models`` and listed in ``dropped``."""

    kernel: str
    device: str
    models: tuple[str, ...]
    rows: tuple[CompareRow, ...]
    summaries: tuple[ModelSummary, ...] = field(default_factory=tuple)
    spearman: Mapping[tuple[str, str], float] = field(default_factory=dict)
    #: Models left out because they predicted no configuration, with the reason (e.g. no
    #: interval-model parameters for the device).
    dropped: Mapping[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> tuple[CompareRow, ...]:
        return tuple(r for r in self.rows if not r.ok)

    def summary(self, model: str) -> ModelSummary:
        for s in self.summaries:
            if s.model == model:
                return s
        raise WarpspeedError(f"no summary for model {model!r}")


def require_models(models: Sequence[str]) -> tuple[str, ...]:
    """``models`` without repeats, each one of :data:`warpspeed.models.TIME_MODELS`, and at least
    two of them; else a one-line error."""
    chosen = tuple(dict.fromkeys(require_model(m) for m in models))
    if len(chosen) < 2:
        raise WarpspeedError(f"compare needs at least two time models; choose from {', '.join(TIME_MODELS)}")
    return chosen


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman rank correlation of two equally long sequences (NaN with fewer than two values,
    or when one is constant)."""
    from scipy.stats import spearmanr

    if len(a) != len(b):
        raise WarpspeedError(f"spearman needs sequences of equal length, got {len(a)} and {len(b)}")
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan
    return float(spearmanr(a, b).statistic)


def _model_rate(row: RankRow, model: str) -> ModelRate:
    if not row.ok:
        return ModelRate(model, math.nan, "", row.error)
    return ModelRate(model, row.lups_per_s, row.explanation)


def compare_configs(kernels: Mapping[tuple[int, int, int], Kernel], device: Device,
                    blocks: Callable[[Kernel], Sequence[tuple[int, int, int]]],
                    models: Sequence[str] = TIME_MODELS, curves: CapacityCurves | None = None,
                    progress: Callable[[int], None] | None = None) -> Comparison:
    """Predict every (block, folding) once and score it with each of ``models``.

    ``kernels`` maps each folding to its kernel and ``blocks(kernel)`` gives its candidate blocks,
    as for :func:`warpspeed.rank.rank_per_fold`; ``curves``: capacity curves instead of the device
    family's; ``progress`` is called with the number of configurations done.
    """
    chosen = require_models(models)
    scorings = tuple(Scoring(model=m) for m in chosen)
    rows: list[CompareRow] = []
    ranked: dict[str, list[RankRow]] = {m: [] for m in chosen}
    for fold, kernel in kernels.items():
        predictor = Predictor(kernel, device, curves)
        for block in blocks(kernel):
            config = Config(tuple(block), tuple(fold))  # type: ignore[arg-type]
            scored = predict_scored(predictor, config, scorings)
            rows.append(CompareRow(config, tuple(_model_rate(r, m) for r, m in zip(scored, chosen))))
            for model, row in zip(chosen, scored):
                ranked[model].append(row)
            if progress:
                progress(len(rows))
    name = next(iter(kernels.values())).name
    dropped = {m: x[0].error or "" for m, x in ranked.items() if x and not any(r.ok for r in x)}
    kept = tuple(m for m in chosen if m not in dropped)
    if dropped and len(kept) < 2:
        raise WarpspeedError("; ".join(f"{m}: {e}" for m, e in dropped.items())
                             + f" (compare needs two models that predict {device.name})")
    if dropped:
        rows = [CompareRow(r.config, tuple(x for x in r.rates if x.model in kept)) for r in rows]
    orders = {m: [r.config for r in sort_rows(ranked[m]) if r.ok] for m in kept}
    comparison = summarize(name, device.name, kept, rows, orders)
    return replace(comparison, dropped=dropped)


def summarize(kernel: str, device: str, models: Sequence[str], rows: Sequence[CompareRow],
              orders: Mapping[str, Sequence[Config]]) -> Comparison:
    """Order ``rows`` and compute the per-model summaries and the pairwise Spearman correlations.

    ``orders``: per model, its predicted configurations as its ranking orders them
    (:func:`warpspeed.rank.sort_rows`: ties decided by the roofline's headroom); the rows follow
    the reference model's order and each model's best is the first of its order."""
    reference = REFERENCE_MODEL if REFERENCE_MODEL in models else models[0]
    position = {c: i for i, c in enumerate(orders.get(reference, ()))}
    ok = sorted((r for r in rows if r.ok), key=lambda r: position.get(r.config, len(position)))
    ordered = tuple(ok + [r for r in rows if not r.ok])
    best = {m: order[0] for m, order in orders.items() if order}
    summaries = []
    by_config = {r.config: r for r in rows}
    for model in models:
        if model not in best:
            continue
        top = by_config[best[model]].rate(model)
        ratios = [r.ratio(model, reference) for r in ok]
        ratios = [x for x in ratios if not math.isnan(x)]
        summaries.append(ModelSummary(model, min(ratios, default=math.nan), max(ratios, default=math.nan),
                                      best[model], top.lups_per_s, top.explanation))
    correlations = {(a, b): spearman([r.rate(a).lups_per_s for r in ok], [r.rate(b).lups_per_s for r in ok])
                    for a, b in combinations(models, 2)}
    return Comparison(kernel, device, tuple(models), ordered, tuple(summaries), correlations)


__all__ = ["CompareRow", "Comparison", "ModelRate", "ModelSummary", "REFERENCE_MODEL", "compare_configs",
           "require_models", "spearman", "summarize"]
