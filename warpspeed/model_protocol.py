"""What a time model is: the :class:`TimeModel` protocol, what it declares, and its estimate.

Every time model reads one :class:`~warpspeed.prediction.Prediction` (and, where it says so, the
configuration's trace, :mod:`warpspeed.trace`) and returns a :class:`ModelEstimate`. A model
declares everything the rest of warpspeed says about it, so that no other module names a model:

- its one-line ``help`` and what it reads (:class:`ModelAbout`; ``--model``'s help lists them);
- the command-line options it takes (:class:`ModelOption`, in its :class:`ModelCommandLine`); ``warpspeed predict`` adds them and
  refuses them unless that model is chosen;
- the tables of its own results (:meth:`ModelCommandLine.tables`: :class:`ModelTable` as plain text
  cells, which ``warpspeed predict`` prints before and after the model's rate);
- where its fitted constants come from on a device (:meth:`TimeModel.provenance`: the
  :class:`Component` entries of the ``calibration:`` line);
- the figures it computes itself where they differ from the roofline's (:class:`RowFigures`, in
  :attr:`ModelEstimate.figures`: its four limits, limiter and volumes, which ranking rows take).

The registry of the models is :mod:`warpspeed.models`; this module imports none of them, so
every model can depend on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Protocol, Sequence

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace


def number_text(value: float | None, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals for a table cell; ``∞`` for None and non-finite values."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "∞"
    return f"{value:.{digits}f}"


@dataclass(frozen=True)
class RowFigures:
    """The figures of a ranking row that a time model computes itself (differently from the
    roofline every prediction carries): ``limits``, each component alone as a rate (lups/s, in
    the roofline's limiter names), the ``limiter`` among them, the first-level cycles per lattice
    update (``l1_cycles_per_lup``) and the L2 and DRAM volumes (bytes per lattice update)."""

    limits: Mapping[str, float]
    limiter: str
    l1_cycles_per_lup: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float


def prediction_figures(prediction: "Prediction") -> RowFigures:
    """The figures of a ranking row that every prediction carries: each level's limit alone
    (:attr:`Prediction.roofline <warpspeed.prediction.Prediction.roofline>`), the tightest of
    them, the first level's cycles when every access hits and the L2 and DRAM volumes; the rows
    of a model that computes none of its own (:attr:`ModelEstimate.figures` None) take them."""
    roof = prediction.roofline
    return RowFigures(roof.limits, roof.limiter, prediction.l1.cycles_per_lup, prediction.l2_load_bytes_per_lup,
                      prediction.l2_store_bytes_per_lup, prediction.dram.load_bytes_per_lup,
                      prediction.dram.store_bytes_per_lup)


@dataclass(frozen=True)
class ModelEstimate:
    """A time model's verdict on one configuration.

    ``lups_per_s``: lattice updates per second; ``seconds``: kernel time (s); ``cycles``: SM
    cycles at the clock the model used; ``explanation``: what dominates (the roofline's limiter,
    the largest CPI-stack entry, the head of the critical path); ``details``: JSON-ready, what
    ``predict --json`` shows under the model's name; ``figures``: the figures the model computes
    itself instead of taking the roofline's (None: it takes the roofline's).
    """

    model: str
    lups_per_s: float
    seconds: float
    cycles: float
    explanation: str
    details: Mapping[str, Any] = field(default_factory=dict)
    figures: RowFigures | None = None


@dataclass(frozen=True)
class TableColumn:
    """A column of a :class:`ModelTable`: its header (may hold a line break) and alignment
    (``"left"`` or ``"right"``)."""

    header: str
    justify: str = "right"


@dataclass(frozen=True)
class ModelTable:
    """One table of a model's own results, as text: ``title``, ``columns``, ``rows`` of cells
    (one text per column) and ``notes`` (sentences printed under the table). The command line
    prints any model's tables alike."""

    title: str
    columns: tuple[TableColumn, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelTables:
    """A model's tables in ``warpspeed predict``: those printed ``before`` the line with its rate
    and those printed ``after`` it."""

    before: tuple[ModelTable, ...] = ()
    after: tuple[ModelTable, ...] = ()


@dataclass(frozen=True)
class Component:
    """One group of fitted constants: ``what`` they set, the part they were fitted or measured
    on (``source``), the ``family`` through which the device takes them, and whether that part
    is the device itself (``own``); ``documented``: no constant is fitted, every number comes
    from vendor documentation (``source`` names it)."""

    what: str
    source: str
    family: str
    own: bool
    documented: bool = False

    def text(self) -> str:
        via = f" ({self.family})" if self.family else ""
        return f"{self.what} from {self.source}{via}"


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


@dataclass(frozen=True)
class ModelAbout:
    """What a time model declares about itself, as data (defaults: a model that reads the
    prediction only and computes no figures of its own).

    Attributes:
        help: what the model is and how accurate it is, one sentence for ``--model``'s help (lower
            case, no final full stop).
        own_limits: whether ranking rows take its own four limits (its estimate's ``figures``).
        reads_trace: whether it reads the configuration's trace (:mod:`warpspeed.trace`).
        reads_l1_misses: whether it reads the first level's costs with misses
            (``Prediction.l1_misses``); a predictor for models that do not read them skips them.
        style: marker and matplotlib color of the model in comparison figures (and, third, the
            marker's face color where it differs: "none" for a hollow marker).
        limits_note: with ``own_limits``: what its four limits in a ranking table mean.
    """

    help: str
    own_limits: bool = False
    reads_trace: bool = False
    reads_l1_misses: bool = False
    style: tuple[str, ...] = ("x", "gray")
    limits_note: str = ""


class ModelCommandLine:
    """What a time model adds to the command line: its ``options`` (``warpspeed predict`` adds them
    and refuses them unless that model is chosen, with ``options_error``), the keyword options of
    its estimate they ask for, the files they name, and the tables ``warpspeed predict`` prints
    before and after its rate. The defaults: no options, nothing to write, no tables."""

    options: tuple[ModelOption, ...] = ()
    options_error: str = ""

    def estimate_options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword options of the model's estimate that the values of :attr:`options` (by
        ``dest``) ask for."""
        return {}

    def write_outputs(self, prediction: "Prediction", estimate: ModelEstimate, values: Mapping[str, Any]) -> None:
        """Write the files the output options among ``values`` name."""
        return None

    def tables(self, estimate: ModelEstimate) -> ModelTables:
        """The tables of the model's own results in ``estimate`` that ``warpspeed predict`` prints
        before and after its rate."""
        return ModelTables()


class TimeModel(Protocol):
    """A time model, six members: its ``name`` (``--model``), what it declares (``about``), what
    it adds to the command line (``command_line``), its :meth:`estimate`, the provenance of its
    fitted constants (:meth:`provenance`) and the check of the device parameters it needs
    (:meth:`require_parameters`). :class:`TimeModelBase` gives every one but ``name``,
    ``about`` and :meth:`estimate` a default."""

    name: str
    about: ModelAbout
    command_line: ModelCommandLine

    def estimate(self, prediction: "Prediction", trace: "Trace | None" = None, **options: Any) -> ModelEstimate:
        """The model's estimate of ``prediction``'s configuration (``trace``: the configuration's
        trace when the caller built it already; ``options``: the model's own)."""
        ...

    def provenance(self, device: "Device") -> Sequence[Component]:
        """Where the model's fitted constants come from on ``device`` (none evaluated): the
        components it adds to :func:`warpspeed.calibration.calibration`, beyond those of the
        prediction every model reads."""
        ...

    def require_parameters(self, device: "Device") -> None:
        """Raise a one-line :class:`~warpspeed.errors.WarpspeedError` when ``device`` lacks the
        parameters the model needs beyond the device's documented figures."""
        ...


class TimeModelBase:
    """Defaults of :class:`TimeModel`: no options, no tables, no fitted constants of its own, no
    device parameters beyond the documented figures."""

    name: ClassVar[str] = ""
    about: ClassVar[ModelAbout] = ModelAbout("")
    command_line: ClassVar[ModelCommandLine] = ModelCommandLine()

    def require_parameters(self, device: "Device") -> None:
        return None

    def provenance(self, device: "Device") -> Sequence[Component]:
        return ()

    def __repr__(self) -> str:
        return f"<time model {self.name!r}>"
