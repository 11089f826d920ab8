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
  instructions of latency ``lambda`` (the facts' ``completion``); the ``W`` warps resident per SM
  overlap them, so an SM completes at most ``w W F`` updates per ``fp_chain lambda`` cycles
  (Little's law): ``fp_chain lambda / (w W F)``.

The in-core time is the largest term (the pipes and the issue overlap; the one that binds is the
``limiter``) plus the **load wait** ``L / (w W F)``: a thread first waits for its loads, the
load-to-use latency ``L`` of the farthest level that serves them (``load_latency``: the first
level, the L2 or DRAM, :attr:`~warpspeed.hardware.memory_latency.MemoryLatencies`), then runs its
share of the SM's work; the resident threads start and finish their iterations together, so the SM
waits with them and per ``w W F`` updates it spends ``L`` cycles beside its busy time (Little's law
over a thread's iteration, ``L`` + its share of the busy time). Measured on gpu-roofline
(``docs/incore.md``): the A100's FP-bound plateau is ``L_DRAM / 2048`` slower than its FP pipes.
Instruction fetch is not modelled (no published fetch bandwidth of the instruction caches);
``docs/incore.md`` says what that leaves out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from warpspeed.errors import WarpspeedError
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
    """SM cycles per lattice update of each in-core term (0 where it does not apply), the wait for
    the loads, ``load_wait``, and the in-core time ``cycles_per_lup`` (the largest term plus the
    wait), with the term that binds, ``limiter``; ``family`` names the instruction facts used."""

    terms: Mapping[str, float]
    family: str
    #: cycles per update the SM waits for the loads, ``L / (w W F)`` (module docstring)
    load_wait: float = 0.0

    @property
    def cycles_per_lup(self) -> float:
        return max(self.terms.values(), default=0.0) + self.load_wait

    @property
    def limiter(self) -> str:
        return max(self.terms, key=self.terms.__getitem__)


def _over(count: float, capacity: float | None) -> float:
    return count / capacity if capacity and count > 0 else 0.0


def core_cycles(mix: InstructionMix, device: "Device", facts: InstructionFacts, warps_per_sm: float,
                load_latency: float | None = None) -> CoreTime:
    """The in-core terms of ``mix`` on ``device`` with ``warps_per_sm`` resident warps and the
    load-to-use latency ``load_latency`` [SM cycles] of the level that serves the loads (``None``:
    the device's L1 latency; module docstring)."""
    if load_latency is not None and not (load_latency >= 0 and math.isfinite(load_latency)):
        raise WarpspeedError(f"load_latency must be a finite number of cycles >= 0, got {load_latency}")
    w = device.warp_size
    slots = device.register_partitions * w
    fp_unit = facts.units.get(FP_UNIT.get(mix.precision, "fp64"))
    int_unit, sfu_unit = facts.units.get("int"), facts.units.get("sfu")
    fp_lanes = device.fp_lanes_per_sm(mix.precision)
    fp32_lanes = device.fp_lanes_per_sm("float32")
    fp32 = mix.fp if mix.precision == "float32" else 0.0
    lambda_fp = fp_unit.completion if fp_unit else 0.0
    chain = mix.fp_chain * lambda_fp
    wait = device.latencies.l1 if load_latency is None else load_latency
    threads = w * warps_per_sm * mix.cells_per_thread
    terms = {
        "issue": _over(mix.total, slots * facts.issue_per_scheduler if facts.issue_per_scheduler else None),
        "fp": _over(mix.fp, fp_lanes),
        "int": _over(mix.integer, int_unit.lanes_per_sm if int_unit else None),
        "sfu": _over(mix.sfu, sfu_unit.lanes_per_sm if sfu_unit else None),
        "fp_int_shared": _over(fp32 + mix.integer, fp32_lanes) if facts.fp32_int_shared else 0.0,
        "lsu": _over(mix.memory, facts.lsu_lanes_per_sm),
        "register_reads": _over(mix.operand_reads,
                                slots * facts.register_reads_per_cycle if facts.register_reads_per_cycle else None),
        "latency": _over(chain, threads) if mix.fp_chain > 0 else 0.0,
    }
    return CoreTime(terms, facts.family, _over(wait, threads) if mix.loads > 0 else 0.0)


def core_time(mix: InstructionMix, device: "Device", warps_per_sm: float,
              load_latency: float | None = None) -> CoreTime | None:
    """:func:`core_cycles` with the device's instruction facts; ``None`` for a device whose SM family
    has none (AMD parts: no in-core component)."""
    family = family_of(device)
    if family is None:
        return None
    return core_cycles(mix, device, load_family(family), warps_per_sm, load_latency)
