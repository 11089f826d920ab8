"""What a tuning run measured: each run predicted against measured, the best found, runs to a fraction of the best.

Times are Kernel Tuner's: milliseconds per launch. Rates are lattice updates per second: the
domain's cells per launch over the time. "Fraction of the best" is the best time over a run's
time (1.0: the best itself; 0.97: 3 % slower).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from warpspeed.launch.space import Config
from warpspeed.units import KILO

#: The fractions of the best that the reports and the benchmark count runs to.
FRACTIONS = (0.97, 0.99, 1.0)


@dataclass(frozen=True)
class TuneRun:
    """One measured configuration, in the order it was measured (``number`` from 1).

    ``predicted_lups_per_s``: the model's rate (NaN: not predicted); ``predicted_place``: its
    place in the model's order (1: predicted best; None: not predicted); ``time_ms``: measured
    ms per launch (None: it failed, ``error`` says how)."""

    number: int
    params: Mapping[str, Any]
    config: Config | None
    predicted_lups_per_s: float
    predicted_place: int | None
    time_ms: float | None
    error: str = ""


@dataclass(frozen=True)
class TuneResult:
    """A tuning run: the runs in order, what stopped it, what the model cost.

    ``lups``: lattice updates per launch; ``space``: configurations in the search space;
    ``known_best_ms``: the best time of the whole space where it is known (a replayed cache),
    else None; ``stopped``: ``budget``, ``patience`` or ``space`` (everything measured);
    ``model_seconds``: wall time of the predictions."""

    kernel: str
    device: str
    domain: tuple[int, ...]
    lups: int
    runs: tuple[TuneRun, ...]
    space: int
    stopped: str
    model_seconds: float
    known_best_ms: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def measured(self) -> tuple[TuneRun, ...]:
        return tuple(r for r in self.runs if r.time_ms is not None)

    def best(self) -> TuneRun | None:
        """The run with the shortest time (the first of equal ones)."""
        measured = self.measured
        return min(measured, key=lambda r: (r.time_ms, r.number)) if measured else None

    def first_choice(self) -> TuneRun | None:
        """The run of the model's predicted best among the measured configurations."""
        placed = [r for r in self.runs if r.predicted_place is not None]
        return min(placed, key=lambda r: r.predicted_place) if placed else None  # type: ignore[arg-type, return-value]

    def rate(self, run: TuneRun) -> float:
        """Measured lattice updates per second of ``run`` (NaN when it failed)."""
        return self.lups / (run.time_ms / KILO) if run.time_ms else math.nan

    def runs_to(self, fraction: float, best_ms: float | None = None) -> int | None:
        """Runs until one reached ``fraction`` of ``best_ms`` (default: the known best, else the
        best found); None when none did."""
        target = best_ms if best_ms is not None else self.known_best_ms
        if target is None:
            found = self.best()
            target = found.time_ms if found is not None else None
        return runs_to_fraction([r.time_ms for r in self.runs], target, fraction) if target else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: everything above, runs with their predicted and measured figures."""
        best, first = self.best(), self.first_choice()
        return {
            "kernel": self.kernel, "device": self.device, "domain": list(self.domain), "lups_per_launch": self.lups,
            "space": self.space, "stopped": self.stopped, "model_seconds": self.model_seconds,
            "runs": [{"run": r.number, "params": dict(r.params),
                      "block": list(r.config.block) if r.config else None,
                      "fold": list(r.config.fold) if r.config else None,
                      "predicted_lups_per_s": r.predicted_lups_per_s, "predicted_place": r.predicted_place,
                      "time_ms": r.time_ms, "measured_lups_per_s": self.rate(r), "error": r.error}
                     for r in self.runs],
            "best_run": best.number if best else None, "best_time_ms": best.time_ms if best else None,
            "first_choice_run": first.number if first else None,
            "first_choice_time_ms": first.time_ms if first else None,
            "known_best_ms": self.known_best_ms,
            "runs_to_fraction": {f"{f:g}": self.runs_to(f) for f in FRACTIONS},
            "notes": list(self.notes),
        }


def runs_to_fraction(times_ms: Sequence[float | None], best_ms: float, fraction: float) -> int | None:
    """The number of runs (from 1) until a time within ``fraction`` of ``best_ms`` (``best_ms /
    t >= fraction``, with a relative tolerance of 1e-12 for the best itself); None: never."""
    for n, t in enumerate(times_ms, 1):
        if t is not None and best_ms / t >= fraction * (1 - 1e-12):
            return n
    return None
