"""Where a device's fitted constants come from: its own measurements or another part's.

Every model of warpspeed combines documented hardware numbers (the device file) with a few
constants fitted on public measurements of one GPU. A time model reports its own fitted
constants (:meth:`warpspeed.model_protocol.TimeModel.provenance`); this module names no model. A device nobody measured borrows those
constants from the part whose family it shares. :func:`calibration` says, per component, which
part the constants were fitted on, so ``predict`` and ``rank`` can print one line telling a user
how much to trust a prediction (``docs/accuracy.md``, "What transfers", gives the expected error
of each borrowed component on an unseen device of the same family).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from warpspeed.model_protocol import Component
from warpspeed.hardware.device import Device

if TYPE_CHECKING:
    from warpspeed.memory.capacity.curves import CapacityCurves

#: The part whose gpu-strides rows fitted NVIDIA's L1TEX tag stage (gpu-benches
#: ``gpu-strides/a100.txt``; :mod:`warpspeed.memory.l1`).
NVIDIA_L1_FITTED_ON = "A100-SXM4-40GB"
#: The part whose gpu-strides rows fitted the RDNA L0's tag stage (``gpu-strides/rdna2.txt``,
#: the first level's ``[[memory]]`` table of the RDNA device files).
RDNA_L1_FITTED_ON = "RX6900XT"
#: The part whose gpu-strides float rows gave the banked CDNA vector L1 its bank and column widths and
#: its cycles per 16 B chunk (``gpu-strides/mi210.txt``, ``fits/data/public/gpu-strides/mi210-float.csv``).
CDNA_L1_FITTED_ON = "MI210"
#: The part whose Nsight Compute profiles fitted the L2 layer capacity of its device file (the L2's
#: ``layer_bytes``, ``fits/data/H200/``).
L2_LAYERS_FITTED_ON = "H200"
#: The part whose board-power soaks a transferred power family's process factor may be fitted on
#: (``fits/data/H200/``; :mod:`warpspeed.power.transfer`).
POWER_SOAKS_ON = "H200"
#: Built-in devices that take another part's stored DRAM and L2 measurements unchanged (same
#: chip, memory system and clock; :data:`warpspeed.measured.device_figures.MEASURED_AS`).
MEASURED_ON_ANOTHER_PART = {"L40S": "L40", "A100-PCIe-40GB": "A100-SXM4-40GB"}


@dataclass(frozen=True)
class Calibration:
    """The components of one device's prediction and where each was fitted."""

    device: str
    components: tuple[Component, ...]

    @property
    def borrowed(self) -> tuple[Component, ...]:
        return tuple(c for c in self.components if not (c.own or c.documented))

    def line(self) -> str:
        """One line for the CLI: what the device borrows, and from which part and family."""
        own = [c.what for c in self.components if c.own]
        documented = [f"{c.what} ({c.source})" for c in self.components if c.documented]
        tail = f"; from documentation, no fit: {', '.join(documented)}" if documented else ""
        if not self.borrowed:
            return f"calibration: {self.device} is calibrated on its own measurements ({', '.join(own)}){tail}"
        text = f"calibration: {self.device} borrows {', '.join(c.text() for c in self.borrowed)}"
        return text + (f"; own measurements: {', '.join(own)}" if own else "; no measurements of its own") + tail

    def as_dict(self) -> dict:
        return {"device": self.device, "components": [
            {"what": c.what, "source": c.source, "family": c.family, "own": c.own, "documented": c.documented}
            for c in self.components]}


def _memory(device: Device) -> Component:
    from warpspeed.measured.device_figures import DRAM_RULE_REFERENCE, MEASURED_AS

    what = "DRAM and L2 figures"
    if device.name in MEASURED_ON_ANOTHER_PART:
        return Component(what, MEASURED_ON_ANOTHER_PART[device.name], "same chip and memory", False)
    if device.name in MEASURED_AS:
        return Component(what, device.name, "", True)
    if device.name in DRAM_RULE_REFERENCE:
        return Component(what, DRAM_RULE_REFERENCE[device.name], "scaled by vendor peak", False)
    return Component(what, "the device file", "not checked against measurements", False)


def _first_level(device: Device) -> Component:
    from warpspeed.memory.first_level import CdnaBankedL1, CdnaVectorL1, NvidiaL1Tex, first_level
    from warpspeed.memory.l1_stages import CDNA_BANKED_FAMILY, CDNA_FAMILY

    what = "L1 tag stage"
    first = first_level(device)
    if isinstance(first, CdnaBankedL1):
        own = device.name == CDNA_L1_FITTED_ON
        return Component("L1 banks", CDNA_L1_FITTED_ON, f"family {CDNA_BANKED_FAMILY}", own)
    if isinstance(first, CdnaVectorL1):
        return Component("L1 stages", "AMD's documented rates", f"family {CDNA_FAMILY}", False, documented=True)
    if isinstance(first, NvidiaL1Tex):
        source = NVIDIA_L1_FITTED_ON
        return Component(what, source, f"family {first.family}", device.name == source)
    if first.tag_stage is not None:
        family = device.l1.family or device.architecture
        return Component(what, RDNA_L1_FITTED_ON, f"family {family}", device.name == RDNA_L1_FITTED_ON)
    return Component("L1 data path", "the device file", "no tag stage modelled", False)


def _capacity(device: Device, curves: "CapacityCurves | None") -> Component:
    from warpspeed.memory.capacity import curves_for_device

    curves = curves or curves_for_device(device)
    source = curves.provenance.device
    return Component("capacity curves", source, curves.family, source == device.name)


def _power(device: Device) -> Component | None:
    from warpspeed.power.params import PowerParameterError, load_family

    table = device.tables.get("power")
    if not isinstance(table, dict) or "family" not in table:
        return None
    name = str(table["family"])
    try:
        prov = load_family(name).get("provenance", {})
    except PowerParameterError:  # the power model reports the unknown family when it is used
        return Component("power energies", "an unknown family", f"family {name}", False)
    source, status = str(prov.get("device", "")), str(prov.get("status", ""))
    own = status == "calibrated" and source == device.name
    if status == "calibrated":
        return Component("power energies", source, f"family {name}", own)
    if status == "transferred":  # warpspeed.power.transfer: published facts applied to a calibrated family
        soaks = POWER_SOAKS_ON in str(prov.get("method", ""))
        source = "a calibrated family by published facts" + (f" and {POWER_SOAKS_ON} soaks" if soaks else "")
        return Component("power energies", source, f"family {name}", False)
    return Component("power energies", f"{status} values of {source}", f"family {name}", False)


def _launch(device: Device) -> Component | None:
    from warpspeed.measured.launch_cost import launch_constants

    part = device.launch_overhead_part
    if part is None or device.launch_overhead_us is not None:
        return None
    source = launch_constants().device_of_part.get(part, part)
    return Component("launch cost", source, "gpu-small-kernels", source == device.name)


def _l2_layers(device: Device) -> Component | None:
    """The L2's layer capacity where the device file gives one (``layer_bytes``: fitted on the
    H200's Nsight Compute profiles of the 25-point star)."""
    if device.l2.layer_bytes is None:
        return None
    return Component("L2 layer capacity", L2_LAYERS_FITTED_ON, "three Nsight Compute profiles",
                     device.name == L2_LAYERS_FITTED_ON)


def calibration(device: Device, curves: "CapacityCurves | None" = None) -> Calibration:
    """Where each of ``device``'s fitted constants comes from (no model is evaluated): those of
    the prediction every time model reads, then each time model's own
    (:meth:`warpspeed.model_protocol.TimeModel.provenance`, in the registry's order), then the power
    model's and the launch cost's; ``curves``: capacity curves given instead of the family's
    (``--curves``)."""
    from warpspeed.models import MODELS

    models = [c for model in MODELS.values() for c in model.provenance(device)]
    parts = [_memory(device), _first_level(device), _capacity(device, curves), _l2_layers(device), *models,
             _power(device),
             _launch(device)]
    return Calibration(device.name, tuple(c for c in parts if c is not None))
