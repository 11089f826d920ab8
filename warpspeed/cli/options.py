"""Typed option groups of the commands, checked when they are built, before any work.

As pystencils' configuration classes (``CreateKernelConfig`` and its option categories) gather
the options of kernel creation, a command gathers its options in frozen groups whose
``__post_init__`` checks them: a combination that cannot work is a one-line usage error before a
kernel is generated or a configuration predicted. The time models' own options
(:class:`~warpspeed.model_protocol.ModelOption`) become click options here (:func:`model_options`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import click

from warpspeed.cli.paths import OutputFile
from warpspeed.model_protocol import ModelOption, TimeModel
from warpspeed.models import MODELS, time_model


def click_option(option: ModelOption) -> Callable:
    """The click option of a model's :class:`~warpspeed.model_protocol.ModelOption`."""
    if option.output:
        return click.option(option.flag, option.dest, type=OutputFile(option.output, plot=option.plot), default=None,
                             help=option.help)
    return click.option(option.flag, option.dest, type=click.Choice(list(option.choices)), default=option.default,
                        show_default=True, help=option.help)


def model_options(f: Callable) -> Callable:
    """Every time model's own options (:data:`warpspeed.models.MODELS` order)."""
    for model in reversed(tuple(MODELS.values())):
        for option in reversed(model.command_line.options):
            f = click_option(option)(f)
    return f


def model_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values of the models' own options among a command's ``values`` (by ``dest``)."""
    return {o.dest: values[o.dest] for m in MODELS.values() for o in m.command_line.options if o.dest in values}


@dataclass(frozen=True)
class ModelChoice:
    """The time model and the values of the models' own options (by ``dest``). Options of a model
    other than the chosen one are refused with that model's one-line error (the models are
    checked from the last of the registry to the first)."""

    model: str
    values: Mapping[str, Any]

    def __post_init__(self) -> None:
        for other in reversed(tuple(MODELS.values())):
            line = other.command_line
            if other.name != self.model and any(o.given(self.values.get(o.dest, o.default)) for o in line.options):
                raise click.UsageError(line.options_error)

    @property
    def time_model(self) -> TimeModel:
        return time_model(self.model)

    @property
    def estimate_options(self) -> dict[str, Any]:
        """The keyword options of the chosen model's estimate."""
        return self.time_model.command_line.estimate_options(self.values)


@dataclass(frozen=True)
class WaveAveraging:
    """How ``warpspeed predict`` averages the DRAM volumes over the waves of the grid: over the
    representative wave classes as ``rank`` does (the default, also ``--classes``), so that
    ``predict`` and ``rank`` give one answer for a configuration, or over every full wave
    (``--exact-waves``, as ``rank --exact-waves``)."""

    classes: bool = False
    exact_waves: bool = False

    def __post_init__(self) -> None:
        if self.classes and self.exact_waves:
            raise click.UsageError("--classes and --exact-waves exclude each other")

    @property
    def exact(self) -> bool:
        """Whether the average is taken over every full wave (not the classes)."""
        return self.exact_waves
