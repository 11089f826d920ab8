"""Cycles per lattice update and SM that the instruction mix needs inside the SM.

With ``S`` schedulers (the device's ``register_partitions``), ``w`` = 32 threads per warp, the
instruction facts of the device's SM family (:mod:`warpspeed.hardware.instruction_facts`) and the
thread instructions per update ``n`` of :class:`~warpspeed.incore.mix.InstructionMix`, each term is
SM cycles per lattice update (the SM's work per update; the whole device does ``SMs x clock`` cycles
per second):

* ``issue``: every instruction takes an issue slot, ``n_total / (w S issue_per_scheduler)``;
* ``fp``, ``int``, ``sfu``: a pipe's instructions over its lanes per SM (the FP lanes of the device
  file, the integer and special-function lanes of the facts);
* ``fp_int_shared``: where FP32 and INT32 share the FP32 lanes (GA102, AD102),
  ``(n_fp32 + n_int) / FP32 lanes``;
* ``lsu``: the load/store units accept ``lsu_lanes_per_sm`` threads per cycle:
  ``(loads + stores) / lsu_lanes_per_sm``, a limit beside the first level's data pipe (a warp load
  that the data pipe serves in one wavefront still needs two cycles of 16 load/store units);
* ``register_reads``: ``operand reads / (w S register_reads_per_cycle)``;
* ``latency``: a thread's F cells are F independent chains of ``fp_chain`` dependent FP
  instructions of latency ``lambda`` (the facts' ``completion``) behind a first-level hit
  (the device's L1 latency); the ``W`` warps resident per SM overlap them, so an SM completes at
  most ``w W F`` updates per ``fp_chain lambda + L1`` cycles (Little's law):
  ``(fp_chain lambda + L1) / (w W F)``.

The in-core time is the largest term (the pipes and the issue overlap; the one that binds is the
``limiter``). Instruction fetch is not modelled (no published fetch bandwidth of the instruction
caches); ``docs/incore.md`` says what that leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from warpspeed.hardware.instruction_facts import InstructionFacts, family_of, load_family
from warpspeed.incore.mix import InstructionMix

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: The instruction-facts unit of each floating-point dtype.
FP_UNIT = {"float64": "fp64", "float32": "fp32", "float16": "fp16"}
#: Terms of :class:`CoreTime`, in report order.
TERMS = ("issue", "fp", "int", "sfu", "fp_int_shared", "lsu", "register_reads", "latency")


@dataclass(frozen=True)
class CoreTime:
    """SM cycles per lattice update of each in-core term (0 where it does not apply) and the
    largest, ``cycles_per_lup``, with the term that binds, ``limiter``; ``family`` names the
    instruction facts used."""

    terms: Mapping[str, float]
    family: str

    @property
    def cycles_per_lup(self) -> float:
        return max(self.terms.values(), default=0.0)

    @property
    def limiter(self) -> str:
        return max(self.terms, key=self.terms.__getitem__)


def _over(count: float, capacity: float | None) -> float:
    return count / capacity if capacity and count > 0 else 0.0


def core_cycles(mix: InstructionMix, device: "Device", facts: InstructionFacts, warps_per_sm: float) -> CoreTime:
    """The in-core terms of ``mix`` on ``device`` with ``warps_per_sm`` resident warps (module docstring)."""
    w = device.warp_size
    slots = device.register_partitions * w
    fp_unit = facts.units.get(FP_UNIT.get(mix.precision, "fp64"))
    int_unit, sfu_unit = facts.units.get("int"), facts.units.get("sfu")
    fp_lanes = device.fp_lanes_per_sm(mix.precision)
    fp32_lanes = device.fp_lanes_per_sm("float32")
    fp32 = mix.fp if mix.precision == "float32" else 0.0
    lambda_fp = fp_unit.completion if fp_unit else 0.0
    chain = mix.fp_chain * lambda_fp + device.latencies.l1
    terms = {
        "issue": _over(mix.total, slots * facts.issue_per_scheduler if facts.issue_per_scheduler else None),
        "fp": _over(mix.fp, fp_lanes),
        "int": _over(mix.integer, int_unit.lanes_per_sm if int_unit else None),
        "sfu": _over(mix.sfu, sfu_unit.lanes_per_sm if sfu_unit else None),
        "fp_int_shared": _over(fp32 + mix.integer, fp32_lanes) if facts.fp32_int_shared else 0.0,
        "lsu": _over(mix.memory, facts.lsu_lanes_per_sm),
        "register_reads": _over(mix.operand_reads,
                                slots * facts.register_reads_per_cycle if facts.register_reads_per_cycle else None),
        "latency": _over(chain, w * warps_per_sm * mix.cells_per_thread) if mix.fp_chain > 0 else 0.0,
    }
    return CoreTime(terms, facts.family)


def core_time(mix: InstructionMix, device: "Device", warps_per_sm: float) -> CoreTime | None:
    """:func:`core_cycles` with the device's instruction facts; ``None`` for a device whose SM family
    has none (AMD parts: no in-core component)."""
    family = family_of(device)
    if family is None:
        return None
    return core_cycles(mix, device, load_family(family), warps_per_sm)
