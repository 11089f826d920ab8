"""The registry of time models and ranking objectives: what a configuration is predicted and ranked by.

Every prediction carries the four-limiter roofline of :mod:`warpspeed.predict`. The time models
(:class:`~warpspeed.model_protocol.TimeModel` objects) read the same prediction and explain the time
differently:

- ``overlap`` (:mod:`warpspeed.overlap`, the default): the roofline's volumes with the L1 miss
  stage, the wave-end latency and imperfect overlap of L1 and DRAM;
- ``roofline`` (:mod:`warpspeed.roofline.time_model`): the paper's four-limiter roofline;
- ``interval`` (:mod:`warpspeed.interval`): the AMALI interval model, cycles as a CPI stack of
  Nsight Compute stall reasons;
- ``pipeline`` (:mod:`warpspeed.pipeline`): an instruction dependence graph simulated block by
  block on the SMs.

A ranking objective orders configurations by lattice updates per second (``time``), per joule
(``energy``, the power model :data:`~warpspeed.power.energy_model.ENERGY`) or by the energy-delay
product (``edp``: energy per lup times time per lup, smaller is better).

The rate of a configuration, as warpspeed reports it (``warpspeed predict``, ``rank`` and
``compare`` without ``--model``, and the Python API's :func:`time_estimate`), is the default time
model's (:data:`DEFAULT_TIME_MODEL`), and so is :attr:`Prediction.lups_per_s
<warpspeed.prediction.Prediction.lups_per_s>` of a predictor made without a model.

This module is the one place that lists the models: a new model is one module with a
:class:`~warpspeed.model_protocol.TimeModel` object, added to :data:`MODELS`; the model declares its
help, tables, provenance and own figures itself, so no other module names it. The model modules load
their numerical code when they estimate, so the registry (and the command line's ``--help``)
loads without numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.model_protocol import EnergyEstimate, ModelEstimate, TimeModel
from warpspeed.interval.time_model import INTERVAL
from warpspeed.overlap.time_model import OVERLAP
from warpspeed.roofline.time_model import ROOFLINE, roofline_estimate
from warpspeed.pipeline.time_model import PIPELINE
from warpspeed.power.energy_model import ENERGY

if TYPE_CHECKING:
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace

#: The time models by name, in the order the command line lists them.
MODELS: Mapping[str, TimeModel] = {m.name: m for m in (OVERLAP, ROOFLINE, INTERVAL, PIPELINE)}
#: Their names.
TIME_MODELS: tuple[str, ...] = tuple(MODELS)
#: The time model of ``predict``, ``rank`` and ``compare`` when none is named, and of
#: :class:`warpspeed.rank.Scoring`: the one closest to the measurements of a real GPU
#: (``docs/accuracy.md``, "Real GPU").
DEFAULT_TIME_MODEL = OVERLAP.name
#: The roofline every prediction carries (:attr:`Prediction.roofline <warpspeed.prediction.Prediction.roofline>`).
ROOFLINE_MODEL = ROOFLINE.name
#: The time model whose ranking row is every study's base columns (:mod:`warpspeed.studies.models`):
#: the paper's roofline, which a study always writes.
STUDY_BASE_MODEL = ROOFLINE_MODEL
#: The model the documentation compares the default with (the paper's roofline) and whose rate a
#: prediction record's ``pred_*`` columns hold (:mod:`warpspeed.validation.measure`).
BASELINE_MODEL = ROOFLINE_MODEL
#: Time models whose ranking rows carry their own four limits (lups/s per limiter, in the roofline's
#: names) and limiter; the others report a rate and what dominates their time.
OWN_LIMITS: tuple[str, ...] = tuple(name for name, m in MODELS.items() if m.about.own_limits)
#: The power model's objective.
ENERGY_OBJECTIVE = ENERGY.name
#: The ranking objectives: time, the power model's energy, and the energy-delay product.
OBJECTIVES: tuple[str, ...] = ("time", ENERGY_OBJECTIVE, "edp")

__all__ = ["BASELINE_MODEL", "DEFAULT_TIME_MODEL", "ENERGY", "ENERGY_OBJECTIVE", "EnergyEstimate", "MODELS",
           "ModelEstimate", "OBJECTIVES", "OWN_LIMITS", "ROOFLINE_MODEL", "STUDY_BASE_MODEL", "TIME_MODELS",
           "TimeModel", "estimate_energy", "estimate_time", "require_model", "require_objective", "roofline_estimate",
           "shared_trace", "time_estimate", "time_model"]


def time_model(name: str) -> TimeModel:
    """The time model called ``name``, else a one-line error naming the models."""
    if name not in MODELS:
        raise WarpspeedError(f"unknown model {name!r}; choose one of {', '.join(TIME_MODELS)}")
    return MODELS[name]


def require_model(model: str) -> str:
    """``model`` if it names a time model (:func:`time_model`), else a one-line error."""
    return time_model(model).name


def require_objective(objective: str) -> str:
    """``objective`` if it is one of :data:`OBJECTIVES`, else a one-line error."""
    if objective not in OBJECTIVES:
        raise WarpspeedError(f"unknown objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")
    return objective


def shared_trace(prediction: "Prediction", model: str, objective: str = "time") -> "Trace | None":
    """The configuration's trace when both the time ``model`` and the ``objective`` read it (built
    once for the two; :func:`warpspeed.trace.build.build_trace`), else None: a model that reads
    the trace builds it when it is not given."""
    if not (time_model(model).about.reads_trace and objective != "time"):
        return None
    from warpspeed.trace.build import build_trace

    return build_trace(prediction)


def estimate_time(model: str, prediction: "Prediction", trace: "Trace | None" = None, **options: Any) -> ModelEstimate:
    """The ``model``'s estimate of ``prediction``'s configuration (``trace``: the configuration's
    trace when already built; ``options``: the model's own)."""
    return time_model(model).estimate(prediction, trace, **options)


def time_estimate(prediction: "Prediction", model: str = DEFAULT_TIME_MODEL, trace: "Trace | None" = None,
                  **options: Any) -> ModelEstimate:
    """The rate of ``prediction``'s configuration as warpspeed reports it: the estimate of the time
    ``model`` (default: :data:`DEFAULT_TIME_MODEL`, the command line's default) with its rate
    (``lups_per_s``, lattice updates per second), time (s), cycles and what dominates it.
    ``prediction.lups_per_s`` is its predictor's model's (by default the same rate)."""
    return estimate_time(model, prediction, trace, **options)


def estimate_energy(prediction: "Prediction", time: ModelEstimate | None = None, clock_mhz: float | None = None,
                    trace: "Trace | None" = None) -> EnergyEstimate:
    """The power model's estimate at the time ``time`` predicts (default: the roofline's) and the
    SM clock ``clock_mhz`` (default: the device's)."""
    return ENERGY.estimate(prediction, time or roofline_estimate(prediction), clock_mhz=clock_mhz, trace=trace)
