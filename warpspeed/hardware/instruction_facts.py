"""Instruction facts of an SM family: one typed record per family, read from one TOML file each.

Every instruction latency and throughput that a model uses is written once, in
``warpspeed/hardware/instructions/<family>.toml`` (each number with its source there):

* ``[instructions]``: ``issue_per_scheduler`` (warp instructions per cycle and scheduler; a device
  has ``register_partitions`` schedulers), ``lsu_lanes_per_sm`` (threads per cycle the load/store
  units accept), ``fp32_int_shared`` (FP32 and INT32 instructions share the FP32 lanes: GA102,
  AD102), ``register_reads_per_cycle`` (register operands a scheduler reads per cycle) and
  ``pipelines`` (the pipeline model's split or paper pipes);
* ``[units.<unit>]``: per unit (``fp32``, ``fp64``, ``fp16``, ``int``, ``sfu``, ``shared_load``,
  ``shared_store``, ``other``, ...) its ``pipeline``, its throughput (``lanes_per_sm``, or
  ``issue`` in cycles per warp instruction, ``"device"`` for the device file's FP lanes) and
  ``completion`` (the dependent-issue latency, cycles).

A file whose ``[instructions]`` names ``based_on = "<family>"`` holds only what differs: its keys
and unit rows replace the base's. The family of a device is the first of its first level's
``family`` (the chip: ``ampere-ga102``) and its ``architecture`` (``ampere``) that has a file.
The interval model (:mod:`warpspeed.interval.params`), the pipeline model
(:mod:`warpspeed.pipeline.latency`) and the in-core time (:mod:`warpspeed.incore`) read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.errors import DeviceError
from warpspeed.files.stored import package_files
from warpspeed.files.toml import read_based_on

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: The package of the instruction-fact files.
INSTRUCTIONS_PACKAGE = "warpspeed.hardware.instructions"
#: Keys of ``[instructions]`` that are numbers (> 0) when given.
NUMBER_KEYS = ("issue_per_scheduler", "lsu_lanes_per_sm", "register_reads_per_cycle")
#: Value of ``issue`` that takes the device file's FP lanes of the instruction's precision.
DEVICE_LANES = "device"


class InstructionFactsError(DeviceError):
    """A missing or malformed instruction-facts file."""


@dataclass(frozen=True)
class UnitFacts:
    """One unit row: its pipeline; its throughput as ``lanes_per_sm`` (threads per cycle and SM)
    or ``issue`` (cycles per warp instruction; ``None`` with ``lanes_per_sm`` ``None``: the
    device's FP lanes of the precision) and its dependent-issue latency ``completion`` (cycles)."""

    pipeline: str
    issue: float | None
    completion: float
    lanes_per_sm: float | None = None

    def issue_cycles(self, device: "Device", precision: str | None) -> float:
        """SM cycles per warp instruction: warp size over the lanes (the row's, else the device's
        FP lanes of ``precision``), or the row's fixed issue latency."""
        if self.lanes_per_sm:
            return device.warp_size / self.lanes_per_sm
        if self.issue is None:
            return device.warp_size / device.fp_lanes_per_sm(precision or "float64")
        return self.issue


@dataclass(frozen=True)
class InstructionFacts:
    """The instruction facts of one SM family (see the module docstring); ``None`` for a key the
    family's files do not give."""

    family: str
    pipelines: str
    units: Mapping[str, UnitFacts]
    issue_per_scheduler: float | None = None
    lsu_lanes_per_sm: float | None = None
    fp32_int_shared: bool = False
    register_reads_per_cycle: float | None = None

    def unit(self, name: str) -> UnitFacts:
        """The row of ``name``; a one-line error naming the rows there are."""
        if name not in self.units:
            raise InstructionFactsError(f"no instruction facts for {name!r} instructions on {self.family}; "
                                        f"the table has: {', '.join(self.units)}")
        return self.units[name]


@lru_cache(maxsize=1)
def families() -> tuple[str, ...]:
    """SM families with an instruction-facts file (the package's files, listed once: every
    prediction asks for its device's family)."""
    return tuple(p.name[:-len(".toml")] for p in package_files(INSTRUCTIONS_PACKAGE, ".toml"))


def _merged(family: str, known: tuple[str, ...]) -> dict[str, Any]:
    return read_based_on(INSTRUCTIONS_PACKAGE, family, known, what="instruction-facts file", kind="family",
                         head="instructions", tables=("instructions", "units"), read_error=InstructionFactsError,
                         error=InstructionFactsError)


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise InstructionFactsError(f"{where} must be a number > 0, got {value!r}")
    return float(value)


def _unit(family: str, name: str, row: Mapping) -> UnitFacts:
    where = f"{family}.toml [units.{name}]"
    try:
        pipeline, completion = str(row["pipeline"]), row["completion"]
    except (KeyError, TypeError):
        raise InstructionFactsError(f"{where} needs pipeline and completion") from None
    issue, lanes = row.get("issue"), row.get("lanes_per_sm")
    if lanes is None and issue is None:
        raise InstructionFactsError(f"{where} needs issue (cycles or \"device\") or lanes_per_sm")
    if isinstance(completion, bool) or not isinstance(completion, (int, float)) or completion < 0:
        raise InstructionFactsError(f"{where} completion must be a number >= 0, got {completion!r}")
    return UnitFacts(pipeline, None if issue in (None, DEVICE_LANES) else _number(issue, f"{where} issue"),
                     float(completion),
                     None if lanes is None else _number(lanes, f"{where} lanes_per_sm"))


@lru_cache(maxsize=None)
def load_family(family: str) -> InstructionFacts:
    """The instruction facts of ``family`` (e.g. ``"ampere"``, ``"ampere-ga102"``), or a one-line
    error naming the families that have a file."""
    known = families()
    if family not in known:
        raise InstructionFactsError(f"no instruction facts for {family!r}; available: {', '.join(known)}")
    data = _merged(family, known)
    head = data.get("instructions", {})
    numbers = {k: _number(head[k], f"{family}.toml [instructions] {k}") for k in NUMBER_KEYS if k in head}
    shared = head.get("fp32_int_shared", False)
    if not isinstance(shared, bool):
        raise InstructionFactsError(f"{family}.toml [instructions] fp32_int_shared must be true or false")
    units = {name: _unit(family, name, row) for name, row in data.get("units", {}).items()}
    return InstructionFacts(family=family, pipelines=str(head.get("pipelines", "split")), units=units,
                            fp32_int_shared=shared, **numbers)


def family_of(device: "Device") -> str | None:
    """The instruction family of ``device``: its first level's ``family`` where a file has that
    name, else its ``architecture`` where one has; ``None`` without either."""
    known = families()
    for name in (device.l1.family, device.architecture):
        if name and name in known:
            return name
    return None


def instruction_facts(device: "Device") -> InstructionFacts:
    """The instruction facts of ``device``; a one-line error where its family has no file."""
    family = family_of(device)
    if family is None:
        raise InstructionFactsError(f"device {device.name!r}: no instruction facts for its first level's family "
                                    f"{device.l1.family!r} or architecture {device.architecture!r}; "
                                    f"available: {', '.join(families())}")
    return load_family(family)
