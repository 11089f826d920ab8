"""The interval model's device parameters: the ``[interval]`` table of a device file.

Pipeline latencies and lanes, issue rate, MSHRs, launch-latency constants and tensor-core
throughput come from the table (every number there carries its source). The L1, L2 and DRAM
latencies come from the table when it gives them in cycles (the A100's, from AMALI's Table 2),
else from the device's measured pointer-chase latencies (``l1_latency_ns`` etc. of the
``[device]`` table), converted to cycles at the SM clock and to increments (L2 beyond L1, DRAM
beyond L2), as AMALI's additive average memory access time uses them. The NoC bandwidth is the
device's sustained L2 bandwidth and the sub-cores its register partitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.files.toml import table_number
from warpspeed.interval.launch_fit import PARTS, fit_launch

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: Keys the ``[interval]`` table must give (numbers >= 0).
REQUIRED_KEYS = ("issue_rate", "int_lanes_per_sm", "sfu_lanes_per_sm", "int_latency", "fp32_latency",
                 "fp64_latency", "sfu_latency", "shared_load_latency", "shared_store_latency", "mshrs",
                 "kll_alpha", "kll_beta", "kll_gamma")
#: Latency keys in cycles that may instead come from the device's pointer-chase latencies.
LATENCY_KEYS = ("l1_latency", "l2_latency", "dram_latency")
#: Tensor-core keys: ``tensor_cores_per_sm`` and ``tensor_fma_per_clock_<dtype>``.
TENSOR_PREFIX = "tensor_fma_per_clock_"


class IntervalParameterError(WarpspeedError):
    """A device without (valid) interval-model parameters."""


@dataclass(frozen=True)
class IntervalParams:
    """Everything the interval model needs of a device. Latencies in SM cycles; ``mshrs`` 0 means
    unlimited; bandwidths in GB/s; ``tensor_fma_per_clock`` per tensor core by input type."""

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
    kll_alpha: float
    kll_beta: float
    kll_gamma: float
    kll_k: float
    tensor_cores_per_sm: int = 0
    tensor_fma_per_clock: Mapping[str, float] = field(default_factory=dict)

    @property
    def unlimited_mshrs(self) -> bool:
        return self.mshrs <= 0


def _number(table: Mapping, key: str, device: str) -> float:
    return table_number(table, key, f"device {device!r} [interval]", IntervalParameterError)


def _latencies_ns(device: "Device", table: Mapping) -> tuple:
    """Pointer-chase L1, L2, DRAM latencies (ns): the device's, or those of the device named by
    ``latencies_from`` (a part measured with the same SM and L2)."""
    source = device
    if table.get("latencies_from"):
        from warpspeed.hardware.device import load_device

        source = load_device(table["latencies_from"])
    return source.l1_latency_ns, source.l2_latency_ns, source.dram_latency_ns


def _launch_constant(table: Mapping, device: "Device") -> float:
    """``kll_k`` in cycles: given, or the launch overhead fitted to the stored small-kernel
    measurements of ``launch_overhead_part`` (:mod:`warpspeed.interval.launch_fit`) x the clock."""
    if "kll_k" in table:
        return _number(table, "kll_k", device.name)
    part = table.get("launch_overhead_part")
    if part not in PARTS:
        raise IntervalParameterError(f"device {device.name!r}: [interval] needs kll_k (cycles) or "
                                     f"launch_overhead_part, one of {', '.join(PARTS)}; got {part!r}")
    return fit_launch(part).overhead_cycles(device.clock_ghz)


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
    n = {k: _number(table, k, device.name) for k in REQUIRED_KEYS}
    if all(k in table for k in LATENCY_KEYS):
        l1, l2, dram = (_number(table, k, device.name) for k in LATENCY_KEYS)
    elif None not in _latencies_ns(device, table):
        f = device.clock_ghz
        l1_ns, l2_ns, dram_ns = _latencies_ns(device, table)
        l1 = l1_ns * f
        l2 = (l2_ns - l1_ns) * f
        dram = (dram_ns - l2_ns) * f
    else:
        raise IntervalParameterError(
            f"device {device.name!r}: no L1/L2/DRAM latencies ([interval] l1_latency.. in cycles or "
            "[device] l1_latency_ns..)")
    kll_k = _launch_constant(table, device)
    tensor = {k[len(TENSOR_PREFIX):]: _number(table, k, device.name) for k in table if k.startswith(TENSOR_PREFIX)}
    return IntervalParams(
        device=device.name, clock_ghz=device.clock_ghz, sms=device.sms, sub_cores=device.register_partitions,
        warp_size=device.warp_size, issue_rate=n["issue_rate"],
        lanes_per_sm={"int": n["int_lanes_per_sm"], "fp32": float(device.fp32_lanes_per_sm),
                      "fp64": float(device.fp64_lanes_per_sm), "sfu": n["sfu_lanes_per_sm"]},
        latency={"int": n["int_latency"], "fp32": n["fp32_latency"], "fp64": n["fp64_latency"],
                 "sfu": n["sfu_latency"]},
        l1_latency=l1, l2_latency=l2, dram_latency=dram, shared_load_latency=n["shared_load_latency"],
        shared_store_latency=n["shared_store_latency"], mshrs=n["mshrs"],
        noc_bandwidth_gb_s=device.l2_bandwidth_gb_s, kll_alpha=n["kll_alpha"], kll_beta=n["kll_beta"],
        kll_gamma=n["kll_gamma"], kll_k=kll_k,
        tensor_cores_per_sm=int(table.get("tensor_cores_per_sm", 0)), tensor_fma_per_clock=tensor)
