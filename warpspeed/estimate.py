"""What a time model is: the :class:`TimeModel` protocol, the options it declares, and its estimate.

Every time model reads one :class:`~warpspeed.prediction.Prediction` (and, where it says so, the
configuration's trace, :mod:`warpspeed.trace`) and returns a :class:`ModelEstimate`. A model
declares the command-line options it takes (:class:`ModelOption`); ``warpspeed predict`` adds
them and refuses them unless that model is chosen. The registry of the models is
:mod:`warpspeed.models`; this module imports none of them, so every model can depend on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Protocol

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace

#: Hertz per gigahertz.
GHZ = 1e9


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


@dataclass(frozen=True)
class ModelOption:
    """A command-line option of one model.

    ``flag`` and ``dest``: the option's name and its parameter; ``choices`` and ``default``: the
    values it takes (a choice option) or, with ``output`` set, the option names a file the model
    writes (``output`` says what it is, ``plot``: its format comes from the suffix).
    """

    flag: str
    dest: str
    help: str
    choices: tuple[str, ...] = ()
    default: Any = None
    output: str = ""
    plot: bool = False

    def given(self, value: Any) -> bool:
        """Whether ``value`` asks for something (an output file, a choice other than the default)."""
        return value is not None if self.output else value != self.default


class TimeModel(Protocol):
    """A time model: its ``name`` (``--model``), whether ranking rows take its own four limits
    (``own_limits``), whether it reads the configuration's trace (``reads_trace``), its
    command-line ``options`` and the one-line error when they are given without the model
    (``options_error``)."""

    name: str
    own_limits: bool
    reads_trace: bool
    options: tuple[ModelOption, ...]
    options_error: str
    #: marker and matplotlib color of the model in comparison figures
    style: tuple[str, str]
    #: with ``own_limits``: what its four limits in a ranking table mean
    limits_note: str

    def estimate(self, prediction: "Prediction", trace: "Trace | None" = None, **options: Any) -> ModelEstimate:
        """The model's estimate of ``prediction``'s configuration (``trace``: the configuration's
        trace when the caller built it already; ``options``: the model's own)."""
        ...

    def estimate_options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword options of :meth:`estimate` that the command-line values of :attr:`options`
        (by ``dest``) ask for."""
        ...

    def write_outputs(self, prediction: "Prediction", estimate: ModelEstimate, values: Mapping[str, Any]) -> None:
        """Write the files the output options among ``values`` name."""
        ...

    def require_parameters(self, device: "Device") -> None:
        """Raise a one-line :class:`~warpspeed.errors.WarpspeedError` when ``device`` lacks the
        parameters the model needs beyond the device's documented figures."""
        ...


class TimeModelBase:
    """Defaults of :class:`TimeModel`: no options, no trace, nothing to write."""

    name: ClassVar[str] = ""
    own_limits: ClassVar[bool] = False
    reads_trace: ClassVar[bool] = False
    options: ClassVar[tuple[ModelOption, ...]] = ()
    options_error: ClassVar[str] = ""
    style: ClassVar[tuple[str, str]] = ("x", "gray")
    limits_note: ClassVar[str] = ""

    def estimate_options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def write_outputs(self, prediction: "Prediction", estimate: ModelEstimate, values: Mapping[str, Any]) -> None:
        return None

    def require_parameters(self, device: "Device") -> None:
        return None

    def __repr__(self) -> str:
        return f"<time model {self.name!r}>"
