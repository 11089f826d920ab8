"""The interval model's device parameters: the ``[interval]`` table of a device file.

The issue rate, the integer and SFU lanes and the pipeline latencies are the device's instruction
facts (:func:`warpspeed.hardware.instruction_facts.instruction_facts`: one table per SM family,
which the pipeline model and the in-core time read too, every number with its source); a device
file's ``[interval]`` table (its keys and their ranges: ``device_table.toml`` beside this module,
checked when the device is loaded) may override any of them with its own measurement
(:data:`FACT_KEYS`). MSHRs and tensor-core throughput come from the table (every number there
carries its source). The launch cost (the per-launch overhead ``kll_k`` and
the block dispatch time per SM) is the device's (:func:`warpspeed.measured.launch_cost.launch_cost`:
its measured overhead, the overhead of the measured part it names, from the stored fit to
gpu-benches' small-kernel launches), in cycles at its clock. The L1, L2 and DRAM
latencies are the device's (:attr:`warpspeed.hardware.device.Device.latencies`: its pointer-chase
latencies, a named part's or its architecture's latency file, in SM cycles as increments, L2
beyond L1 and DRAM beyond L2), as AMALI's additive average memory access time uses them. The NoC
bandwidth is the device's sustained L2 bandwidth and the sub-cores its register partitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.hardware.instruction_facts import InstructionFacts, instruction_facts
from warpspeed.measured.launch_cost import launch_cost
from warpspeed.units import GIGA

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: Keys the ``[interval]`` table must give (numbers >= 0).
REQUIRED_KEYS = ("mshrs",)
#: Keys the ``[interval]`` table may give to replace the instruction facts (a device's own
#: measurement), each with the facts' (unit row, field) it replaces: ``issue_rate`` is
#: ``[instructions] issue_per_scheduler``, a ``*_latency`` the row's ``completion``.
FACT_KEYS = {"issue_rate": (None, "issue_per_scheduler"), "int_lanes_per_sm": ("int", "lanes_per_sm"),
             "sfu_lanes_per_sm": ("sfu", "lanes_per_sm"), "int_latency": ("int", "completion"),
             "fp32_latency": ("fp32", "completion"), "fp64_latency": ("fp64", "completion"),
             "sfu_latency": ("sfu", "completion"), "shared_load_latency": ("shared_load", "completion"),
             "shared_store_latency": ("shared_store", "completion")}
#: Tensor-core keys: ``tensor_cores_per_sm`` and ``tensor_fma_per_clock_<dtype>``.
TENSOR_PREFIX = "tensor_fma_per_clock_"


class IntervalParameterError(WarpspeedError):
    """A device without (valid) interval-model parameters."""


@dataclass(frozen=True)
class IntervalParams:
    """Everything the interval model needs of a device. Latencies in SM cycles; ``mshrs`` 0 means
    unlimited; bandwidths in GB/s; ``tensor_fma_per_clock`` per tensor core by input type
    (``f16``, ``tf32``, ``f64``, ``i8``, ``i4``, ``fp8``, ``b1``: :mod:`warpspeed.interval.latency`)."""

    device: str
    clock_ghz: float
    sms: int
    sub_cores: int
    warp_size: int
    issue_rate: float
    lanes_per_sm: Mapping[str, float]  # fu -> lanes per SM (int, fp32, fp64, sfu)
    latency: Mapping[str, float]  # fu -> cycles (int, fp32, fp64, sfu)
    l1_latency: float
    l2_latency: float
    dram_latency: float
    shared_load_latency: float
    shared_store_latency: float
    mshrs: float
    noc_bandwidth_gb_s: float
    kll_k: float  # per-launch overhead, cycles
    block_dispatch_cycles: float  # block dispatch time per block and SM, cycles
    tensor_cores_per_sm: int = 0
    tensor_fma_per_clock: Mapping[str, float] = field(default_factory=dict)

    @property
    def unlimited_mshrs(self) -> bool:
        return self.mshrs <= 0


def _launch_cost(device: "Device") -> tuple[float, float]:
    """``(kll_k, block dispatch)`` in cycles at ``device``'s clock: its measured per-launch overhead
    or that of the measured part it names (a device that names none has no interval launch cost:
    the interval model was fitted with named parts), and the block dispatch time per SM."""
    try:
        cost = launch_cost(device)
    except WarpspeedError as exc:
        raise IntervalParameterError(str(exc)) from None
    if cost.borrowed_median:
        raise IntervalParameterError(f"device {device.name!r}: the interval model needs [device] launch_overhead_us "
                                     "(measured) or launch_overhead_part (a part of fits/kernel-launch.toml)")
    hz = device.clock_ghz * GIGA
    return cost.overhead_s * hz, cost.block_dispatch_s * hz


def _fact(facts: InstructionFacts, key: str, device: str) -> float:
    """The instruction fact that ``[interval]``'s ``key`` would replace; a one-line error where
    the family's file lacks it."""
    row, field_name = FACT_KEYS[key]
    value = getattr(facts, field_name) if row is None else getattr(facts.units.get(row), field_name, None)
    if value is None:
        raise IntervalParameterError(f"device {device!r}: the instruction facts of {facts.family} give no "
                                     f"{field_name} for {row or 'the scheduler'} (needed for {key})")
    return float(value)


def interval_params(device: "Device") -> IntervalParams:
    """The interval parameters of ``device``; a one-line error when it has none."""
    table = device.tables.get("interval")
    if not table:
        raise IntervalParameterError(
            f"no interval-model parameters for {device.name} (its device file has no [interval] table); "
            "devices with them: A100, H100, H200, L40, L40S")
    missing = [k for k in REQUIRED_KEYS if k not in table]
    if missing:
        raise IntervalParameterError(f"device {device.name!r}: [interval] lacks {', '.join(missing)}")
    try:
        facts = instruction_facts(device)
    except WarpspeedError as exc:
        raise IntervalParameterError(str(exc)) from None
    # the table's keys and ranges were checked when the device was loaded (device_table.toml beside this module)
    n = {k: float(table[k]) for k in REQUIRED_KEYS}
    n.update({k: float(table[k]) if k in table else _fact(facts, k, device.name) for k in FACT_KEYS})
    try:
        latencies = device.latencies
    except WarpspeedError as exc:
        raise IntervalParameterError(str(exc)) from None
    l1, l2, dram = latencies.l1, latencies.l2, latencies.dram
    kll_k, dispatch = _launch_cost(device)
    tensor = {k[len(TENSOR_PREFIX):]: float(table[k]) for k in table if k.startswith(TENSOR_PREFIX)}
    return IntervalParams(
        device=device.name, clock_ghz=device.clock_ghz, sms=device.sms, sub_cores=device.register_partitions,
        warp_size=device.warp_size, issue_rate=n["issue_rate"],
        lanes_per_sm={"int": n["int_lanes_per_sm"], "fp32": float(device.fp32_lanes_per_sm),
                      "fp64": float(device.fp64_lanes_per_sm), "sfu": n["sfu_lanes_per_sm"]},
        latency={"int": n["int_latency"], "fp32": n["fp32_latency"], "fp64": n["fp64_latency"],
                 "sfu": n["sfu_latency"]},
        l1_latency=l1, l2_latency=l2, dram_latency=dram, shared_load_latency=n["shared_load_latency"],
        shared_store_latency=n["shared_store_latency"], mshrs=n["mshrs"],
        noc_bandwidth_gb_s=device.l2.bandwidth_gb_s, kll_k=kll_k, block_dispatch_cycles=dispatch,
        tensor_cores_per_sm=int(table.get("tensor_cores_per_sm", 0)), tensor_fma_per_clock=tensor)
