"""Families of chips without power measurements, from a calibrated family by public facts.

A chip whose board power has not been measured gets its family from a calibrated one
(``source``) by rules that use only published facts of both chips (:class:`ChipFacts`):

- core, L1 and L2 energies scale with the process's energy at iso-performance
  (``process_energy``, relative to the source chip's process);
- the DRAM sector energy scales with the memory technology's energy per bit (``dram_energy``,
  relative to the source chip's memory);
- static power per SM and idle power per SM scale with the transistors per SM (full die);
- the constant power is the source's share of its board limit times the target's board limit;
- the voltage floor is assumed (:data:`~warpspeed.power.params.PLAUSIBLE_V_MIN`): no
  measurement of the target fixes it.

``hopper-gh100.toml`` holds these rules applied to ``ampere-ga100``; the validation applies them
to a chip with measurements (:mod:`warpspeed.validation.public_power`) to estimate the error to
expect on one without.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from warpspeed.power.params import PLAUSIBLE_V_MIN, assumed_floor


@dataclass(frozen=True)
class ChipFacts:
    """Published facts of a chip and its board: transistors (billions) and SMs of the full die,
    SMs and board power limit (W) of the board, and the energy ratios to the source chip's process
    and memory technology."""

    name: str
    transistors_g: float
    full_die_sms: int
    sms: int
    board_limit_w: float
    process_energy: float = 1.0
    dram_energy: float = 1.0

    @property
    def transistors_per_sm(self) -> float:
        return self.transistors_g / self.full_die_sms


def transfer_family(source: Mapping, source_facts: ChipFacts, target: ChipFacts) -> dict:
    """The family document (TOML-ready) of ``target`` from the calibrated family ``source`` of the
    chip ``source_facts`` by the rules of the module docstring."""
    dyn, st = source["dynamic"], source["static"]
    process, dram = target.process_energy / source_facts.process_energy, target.dram_energy / source_facts.dram_energy
    per_sm = target.transistors_per_sm / source_facts.transistors_per_sm
    chip = per_sm * target.sms / st["reference_sms"]  # chip-wide static of the target's SMs
    return {
        "dynamic": {"fp32_lane_j": dyn["fp32_lane_j"] * process, "dram_sector_j": dyn["dram_sector_j"] * dram,
                    "l2_sector_j": dyn["l2_sector_j"] * process, "l1_sector_j": dyn["l1_sector_j"] * process},
        "static": {"model": st.get("model", "linear"), "first_lane_w": st["first_lane_w"] * chip,
                   "add_lane_w": st["add_lane_w"] * chip, "idle_sm_w": st["idle_sm_w"] * per_sm,
                   "constant_w": st["constant_w"] / source_facts.board_limit_w * target.board_limit_w,
                   "reference_sms": target.sms},
        "clock": {"v_min_rel": assumed_floor(), "v_min_status": "assumed", "v_min_range": list(PLAUSIBLE_V_MIN)},
        "provenance": {"status": "transferred", "device": target.name,
                       "method": f"public-facts rules from {source_facts.name} (warpspeed.power.transfer)"},
    }
