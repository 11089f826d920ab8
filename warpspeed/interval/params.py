"""The interval model's device parameters: the ``[interval]`` table of a device file.

Pipeline latencies and lanes, issue rate, MSHRs and tensor-core throughput come from the table
(every number there carries its source). The launch cost (the per-launch overhead ``kll_k`` and
the block dispatch time per SM) comes from the fit to gpu-benches' small-kernel launches stored
in ``fits/kernel-launch.toml`` (:mod:`warpspeed.calibration.launch`), for the measured GPU the
table names as ``launch_overhead_part``. The L1, L2 and DRAM
latencies are the device's (:attr:`warpspeed.hardware.device.Device.latencies`: its pointer-chase
latencies, a named part's or its architecture's latency file, in SM cycles as increments, L2
beyond L1 and DRAM beyond L2), as AMALI's additive average memory access time uses them. The NoC
bandwidth is the device's sustained L2 bandwidth and the sub-cores its register partitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.files.stored import fits_file
from warpspeed.files.toml import read_toml, table_number
from warpspeed.units import GIGA, MICRO, NANO

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: Keys the ``[interval]`` table must give (numbers >= 0).
REQUIRED_KEYS = ("issue_rate", "int_lanes_per_sm", "sfu_lanes_per_sm", "int_latency", "fp32_latency",
                 "fp64_latency", "sfu_latency", "shared_load_latency", "shared_store_latency", "mshrs")
#: Tensor-core keys: ``tensor_cores_per_sm`` and ``tensor_fma_per_clock_<dtype>``.
TENSOR_PREFIX = "tensor_fma_per_clock_"
#: The fitted launch-cost constants, in ``fits/`` (:mod:`warpspeed.calibration.launch` writes it).
LAUNCH_FIT_FILE = "kernel-launch.toml"


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


def _number(table: Mapping, key: str, device: str) -> float:
    return table_number(table, key, f"device {device!r} [interval]", IntervalParameterError)


def _launch_cost(table: Mapping, device: "Device") -> tuple[float, float]:
    """``(kll_k, block dispatch)`` in cycles at ``device``'s clock: the stored launch fit's overhead
    of the measured part ``launch_overhead_part`` (or ``kll_k`` cycles given in the table) and its
    block dispatch time per SM."""
    constants = launch_constants()
    dispatch = constants.block_dispatch_s * device.clock_ghz * GIGA
    if "kll_k" in table:
        return _number(table, "kll_k", device.name), dispatch
    part = table.get("launch_overhead_part")
    if part not in constants.overhead_s:
        raise IntervalParameterError(f"device {device.name!r}: [interval] needs kll_k (cycles) or "
                                     f"launch_overhead_part, one of {', '.join(constants.overhead_s)}; got {part!r}")
    return constants.overhead_s[part] * device.clock_ghz * GIGA, dispatch


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
    try:
        latencies = device.latencies
    except WarpspeedError as exc:
        raise IntervalParameterError(str(exc)) from None
    l1, l2, dram = latencies.l1, latencies.l2, latencies.dram
    kll_k, dispatch = _launch_cost(table, device)
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
        noc_bandwidth_gb_s=device.l2.bandwidth_gb_s, kll_k=kll_k, block_dispatch_cycles=dispatch,
        tensor_cores_per_sm=int(table.get("tensor_cores_per_sm", 0)), tensor_fma_per_clock=tensor)


@dataclass(frozen=True)
class LaunchConstants:
    """The stored fit: ``block_dispatch_s`` per block and SM, ``overhead_s`` per measured part,
    ``device_of_part``: the built-in device each part was measured on."""

    block_dispatch_s: float
    overhead_s: dict[str, float]
    device_of_part: dict[str, str] = field(default_factory=dict)


@lru_cache(maxsize=1)
def launch_constants() -> LaunchConstants:
    """The constants of the stored ``fits/kernel-launch.toml`` (written by
    :func:`warpspeed.calibration.launch.fit_file_text`)."""
    data = read_toml(fits_file(LAUNCH_FIT_FILE), "kernel launch fit", IntervalParameterError)
    return LaunchConstants(data["block_dispatch_ns"] * NANO,
                           {p: v["overhead_us"] * MICRO for p, v in data["parts"].items()},
                           {p: v["device"] for p, v in data["parts"].items()})
