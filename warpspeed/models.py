"""Time models and ranking objectives: what a configuration is predicted and ranked by.

Every prediction starts with the roofline of :mod:`warpspeed.predict`. Two further time models
read the same prediction and explain the time differently:

- ``"interval"``: the AMALI interval model (:mod:`warpspeed.interval`), cycles as a CPI stack
  of Nsight Compute stall reasons;
- ``"pipeline"``: the pipeline model (:mod:`warpspeed.pipeline`), an instruction dependence
  graph simulated block by block on the SMs.

A ranking objective orders configurations by lattice updates per second (``"time"``), per
joule (``"energy"``, the power model of :mod:`warpspeed.power`) or by the energy-delay product
(``"edp"``: energy per lup times time per lup, smaller is better).

Each model lives in its own subpackage and exposes ``estimate(prediction, **options)``; this
module only dispatches, so the core does not import a model it is not asked for.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from warpspeed.errors import WarpspeedError

#: Hertz per gigahertz.
GHZ = 1e9

if TYPE_CHECKING:
    from warpspeed.predict import Prediction

#: The four-limiter roofline of every prediction (:mod:`warpspeed.perf.roofline`).
ROOFLINE_MODEL = "roofline"
#: The time models, in the order the CLI lists them.
TIME_MODELS: tuple[str, ...] = ("overlap", "roofline", "interval", "pipeline")
#: The time model of ``predict``, ``rank`` and ``compare`` when none is named, and of
#: :class:`warpspeed.rank.Scoring`: the one closest to the measurements of a real GPU
#: (``docs/accuracy.md``, "Real GPU").
DEFAULT_TIME_MODEL = "overlap"
#: Time models whose ranking rows carry their own four limits (lups/s per limiter, in the roofline's
#: names) and limiter; the others report a rate and what dominates their time.
OWN_LIMITS: tuple[str, ...] = ("overlap", "roofline")
#: The ranking objectives.
OBJECTIVES: tuple[str, ...] = ("time", "energy", "edp")

#: Where each model beyond the roofline lives: module and function ``estimate(prediction, **options)``.
_PROVIDERS: dict[str, tuple[str, str]] = {
    "overlap": ("warpspeed.overlap", "estimate"),
    "interval": ("warpspeed.interval", "estimate"),
    "pipeline": ("warpspeed.pipeline", "estimate"),
}
#: The power model: ``estimate(prediction, time, clock_mhz=None) -> EnergyEstimate``.
_POWER_PROVIDER: tuple[str, str] = ("warpspeed.power", "estimate")


@dataclass(frozen=True)
class ModelEstimate:
    """A time model's verdict on one configuration.

    ``lups_per_s``: lattice updates per second; ``seconds``: kernel time (s); ``cycles``: SM
    cycles at the clock the model used; ``explanation``: what dominates (the roofline's limiter,
    the largest CPI-stack entry, the head of the critical path); ``details``: JSON-ready, what
    ``predict --json`` shows under the model's name.
    """

    model: str
    lups_per_s: float
    seconds: float
    cycles: float
    explanation: str
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EnergyEstimate:
    """The power model's verdict: board power (W) at ``clock_mhz`` and lattice updates per joule.

    ``lups_per_s`` is the rate the power was computed at (lower than the time model's when the
    board power limit throttles the clock); ``details`` is JSON-ready (``predict --json``'s
    ``power``).
    """

    watts: float
    clock_mhz: float
    lups_per_s: float
    lups_per_joule: float
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def energy_per_lup_j(self) -> float:
        return 1.0 / self.lups_per_joule if self.lups_per_joule > 0 else math.inf


def require_model(model: str) -> str:
    """``model`` if it is one of :data:`TIME_MODELS`, else a one-line error."""
    if model not in TIME_MODELS:
        raise WarpspeedError(f"unknown model {model!r}; choose one of {', '.join(TIME_MODELS)}")
    return model


def require_objective(objective: str) -> str:
    """``objective`` if it is one of :data:`OBJECTIVES`, else a one-line error."""
    if objective not in OBJECTIVES:
        raise WarpspeedError(f"unknown objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")
    return objective


def _provider(module: str, name: str, what: str) -> Callable[..., Any]:
    function = getattr(importlib.import_module(module), name, None)
    if function is None:
        raise WarpspeedError(f"the {what} is not available in this installation")
    return function


def roofline_estimate(prediction: "Prediction") -> ModelEstimate:
    """The roofline as a :class:`ModelEstimate` (cycles at the device's SM clock)."""
    lups = prediction.lups_per_s
    domain = prediction.launch.launch.domain
    seconds = math.prod(domain) / lups if lups > 0 else math.inf
    return ModelEstimate("roofline", lups, seconds, seconds * prediction.clock_ghz * GHZ, prediction.limiter)


def estimate_time(model: str, prediction: "Prediction", **options: Any) -> ModelEstimate:
    """The ``model``'s estimate of ``prediction``'s configuration."""
    require_model(model)
    if model == "roofline":
        return roofline_estimate(prediction)
    module, name = _PROVIDERS[model]
    return _provider(module, name, f"{model} model")(prediction, **options)


def estimate_energy(prediction: "Prediction", time: ModelEstimate | None = None,
                    clock_mhz: float | None = None) -> EnergyEstimate:
    """The power model's estimate at the time ``time`` predicts (default: the roofline's) and the
    SM clock ``clock_mhz`` (default: the device's)."""
    module, name = _POWER_PROVIDER
    return _provider(module, name, "power model")(prediction, time or roofline_estimate(prediction),
                                                 clock_mhz=clock_mhz)
