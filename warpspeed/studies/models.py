"""What a study computes for each configuration beyond the roofline, and what it ranks by.

A study's ``models`` (:data:`STUDY_MODELS`) choose its columns; every model reads the same
prediction (:mod:`warpspeed.predict`) and is evaluated by the functions ``warpspeed rank``
uses (:func:`warpspeed.models.estimate_time`, :func:`warpspeed.models.estimate_energy`), so a
study's figures are those of ``rank --model interval|pipeline`` and ``rank --objective energy``:

* ``roofline``: the ranking columns (:data:`warpspeed.rank.RANK_COLUMNS`), always written;
* ``overlap``: ``overlap_lups_per_s`` (lup/s) and ``overlap_explanation`` (its largest time
  component), the default model of ``warpspeed rank``;
* ``interval``: :data:`MODEL_COLUMNS` ``interval_lups_per_s`` (lup/s) and ``interval_explanation``
  (the largest CPI-stack entry);
* ``pipeline``: ``pipeline_lups_per_s`` (lup/s) and ``pipeline_explanation`` (what the critical
  path is busy with);
* ``energy``: the power model at the roofline's rate and the device's SM clock (what
  ``rank --model roofline --objective energy`` computes): ``energy_watts`` (board power,
  W), ``energy_joules_per_lup`` (J per lattice update), ``energy_lups_per_s`` (the rate the power
  holds at, lower than the roofline's when the board power limit throttles the clock) and
  ``energy_clock_mhz`` (that clock, MHz).

The ``objective`` names one of the requested models: a time model ranks by its rate (highest
first), ``energy`` by joules per lattice update (lowest first).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.records import csv_record, csv_types
from warpspeed.models import ENERGY, MODELS, STUDY_BASE_MODEL
from warpspeed.rank import RANK_COLUMNS

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.launch.space import Config
    from warpspeed.prediction import Prediction


@dataclass(frozen=True)
class TimeColumns:
    """A time model's study columns, prefixed with its name: its rate (lup/s) and what dominates
    its time."""

    lups_per_s: float
    explanation: str


@dataclass(frozen=True)
class EnergyColumns:
    """The power model's study columns, prefixed ``energy_``: board power (W), joules per lattice
    update, the rate the power holds at (lup/s) and that SM clock (MHz)."""

    watts: float
    joules_per_lup: float
    lups_per_s: float
    clock_mhz: float


def _prefixed(prefix: str, columns: type) -> dict[str, Any]:
    return {f"{prefix}_{column}": kind for column, kind in csv_types(columns).items()}


#: The time models beyond the roofline, in the registry's order (their columns follow the roofline's).
_TIME_MODELS = tuple(name for name in MODELS if name != STUDY_BASE_MODEL)
#: The models a study may compute, in column order: the roofline, the other time models, the power model.
STUDY_MODELS: tuple[str, ...] = (STUDY_BASE_MODEL, *_TIME_MODELS, ENERGY.name)
#: Today's study: the roofline columns only.
DEFAULT_MODELS: tuple[str, ...] = (STUDY_BASE_MODEL,)
_COLUMN_TYPES: Mapping[str, dict[str, Any]] = {STUDY_BASE_MODEL: {},
                                               **{m: _prefixed(m, TimeColumns) for m in _TIME_MODELS},
                                               ENERGY.name: _prefixed(ENERGY.name, EnergyColumns)}
#: The columns each model adds (the roofline's are :data:`warpspeed.rank.RANK_COLUMNS`).
MODEL_COLUMNS: Mapping[str, tuple[str, ...]] = {m: tuple(types) for m, types in _COLUMN_TYPES.items()}
#: Numeric (float) columns among :data:`MODEL_COLUMNS`.
MODEL_FLOAT_COLUMNS = frozenset(c for types in _COLUMN_TYPES.values() for c, kind in types.items() if kind is float)
#: The column each objective ranks by, and whether larger is better.
OBJECTIVE_COLUMNS: Mapping[str, tuple[str, bool]] = {
    STUDY_BASE_MODEL: ("lups_per_s", True),
    **{m: (f"{m}_lups_per_s", True) for m in _TIME_MODELS},
    ENERGY.name: (f"{ENERGY.name}_joules_per_lup", False),
}


def require_models(models: Any) -> tuple[str, ...]:
    """``models`` as a study stores them: known names in :data:`STUDY_MODELS` order, the roofline
    always included (every model reads its prediction); a one-line error otherwise."""
    if (not isinstance(models, (list, tuple)) or not models
            or not all(isinstance(m, str) for m in models)):
        raise WarpspeedError(f"study: 'models' must be a non-empty list of model names "
                             f"({', '.join(STUDY_MODELS)}), got {models!r}")
    unknown = [m for m in models if m not in STUDY_MODELS]
    if unknown:
        raise WarpspeedError(f"study: unknown model(s) {', '.join(map(repr, unknown))} in 'models'; "
                             f"allowed: {', '.join(STUDY_MODELS)}")
    return tuple(m for m in STUDY_MODELS if m in models or m == STUDY_BASE_MODEL)


def require_study_objective(objective: Any, models: Sequence[str]) -> str | None:
    """A study's ``objective`` (the model whose figure picks each group's best configuration; a
    ranking's objective is time, energy or edp instead, :func:`warpspeed.models.require_objective`)
    if it is ``None`` or one of ``models``; a one-line error otherwise."""
    if objective is None:
        return None
    if not isinstance(objective, str) or objective not in STUDY_MODELS:
        raise WarpspeedError(f"study: unknown objective {objective!r}; allowed: {', '.join(STUDY_MODELS)} "
                             "(rates for the time models, joules per lup for energy)")
    if objective not in models:
        raise WarpspeedError(f"study: objective {objective!r} is not among the study's models "
                             f"({', '.join(models)}); add it to 'models'")
    return objective


def study_columns(models: Sequence[str] = DEFAULT_MODELS) -> tuple[str, ...]:
    """A study's columns: the row key and what identifies it, the ranking row without ``error``,
    each model's columns (:data:`STUDY_MODELS` order), then ``error``."""
    extra = tuple(c for m in STUDY_MODELS if m in models for c in MODEL_COLUMNS[m])
    return ("key", "kernel", "device", "domain_x", "domain_y", "domain_z", "threads", *RANK_COLUMNS[:-1],
            *extra, RANK_COLUMNS[-1])


def known_headers() -> dict[tuple[str, ...], tuple[str, ...]]:
    """Every study header (columns -> the models that give them)."""
    extras = STUDY_MODELS[1:]
    out = {}
    for mask in range(1 << len(extras)):
        models = (STUDY_BASE_MODEL, *(m for i, m in enumerate(extras) if mask >> i & 1))
        out[study_columns(models)] = models
    return out


def model_record(prediction: "Prediction", models: Iterable[str], config: "Config") -> dict[str, Any]:
    """The study record of one prediction of ``config``: the roofline's ranking row
    (:data:`~warpspeed.rank.RANK_COLUMNS`), then the :data:`MODEL_COLUMNS` of ``models``."""
    from warpspeed.models import estimate_energy, estimate_time
    from warpspeed.rank import RankRow
    from warpspeed.trace.build import build_trace

    models = tuple(models)
    readers = [m for m in models if m in _TIME_MODELS and MODELS[m].about.reads_trace] + [m for m in models if m == ENERGY.name]
    trace = build_trace(prediction) if len(readers) > 1 else None  # one trace for the models that read it
    record = csv_record(RankRow.from_estimate(prediction, config, estimate_time(STUDY_BASE_MODEL, prediction)))
    for model in models:
        if model in _TIME_MODELS:
            time = MODELS[model].estimate(prediction, trace)
            record.update(_columns(model, TimeColumns(time.lups_per_s, time.explanation)))
        elif model == ENERGY.name:
            energy = estimate_energy(prediction, trace=trace)
            record.update(_columns(model, EnergyColumns(energy.watts, energy.energy_per_lup_j, energy.lups_per_s,
                                                        energy.clock_mhz)))
    return record


def _columns(prefix: str, values: Any) -> dict[str, Any]:
    return {f"{prefix}_{column}": value for column, value in csv_record(values).items()}


def require_parameters(device: "Device", models: Iterable[str]) -> None:
    """A one-line error when ``device`` lacks the parameters a requested model needs (the
    interval model's ``[interval]`` table, the power model's ``[power]`` table and family)."""
    for model in models:
        try:
            (ENERGY if model == ENERGY.name else MODELS[model]).require_parameters(device)
        except WarpspeedError as exc:
            raise WarpspeedError(f"study: model {model!r} cannot run on {device.name}: {exc}") from None


def _objective_value(row: Mapping[str, str], objective: str) -> float:
    column, larger_better = OBJECTIVE_COLUMNS[objective]
    try:
        value = float(row[column])
    except (KeyError, ValueError):
        return math.nan
    return -value if larger_better else value


def best_rows(rows: Iterable[Mapping[str, str]], objective: str) -> list[Mapping[str, str]]:
    """The best row by ``objective`` of every (kernel, device, domain), in first-seen order; rows
    with an error or without the objective's value are skipped, ties go to the earlier row."""
    best: dict[tuple[str, ...], tuple[float, Mapping[str, str]]] = {}
    for row in rows:
        if row.get("error"):
            continue
        value = _objective_value(row, objective)
        if math.isnan(value):
            continue
        group = (row["kernel"], row["device"], row["domain_x"], row["domain_y"], row["domain_z"])
        if group not in best or value < best[group][0]:
            best[group] = (value, row)
    return [row for _, row in best.values()]

