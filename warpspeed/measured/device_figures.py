"""Sustained figures of each built-in device, from the stored measurements or by a stated rule.

The device files (``warpspeed/hardware/devices/*.toml``) hold what the hardware sustains rather
than vendor peaks. This module says where each of those numbers comes from, so that a test can
check every file against the stored measurements of D. Ernst's GPU microbenchmarks
(https://github.com/te42kyfo/gpu-benches, derived in :mod:`warpspeed.measured.sustained`):

* a device with its own measurement (or one of a part with the same chip, memory system and
  clock, named in :data:`MEASURED_AS`) takes the measured figure;
* a device without one takes the figure of the nearest measured part scaled by a stated rule
  (:func:`device_figures` documents each rule where it is applied).

Rules, per figure:

DRAM bandwidth [GB/s]
    measured: the mixed read/write stream kernels at full occupancy
    (:func:`~warpspeed.measured.sustained.stream_summary`). Parts with no measurement: the vendor
    peak x the sustained/peak ratio of the nearest measured part.
L2 bandwidth [GB/s]
    the level bandwidth of ``gpu-l2-cache`` (:func:`~warpspeed.measured.sustained.cache_step`);
    unmeasured parts scale the nearest measured part by SMs x clock, or by clock and L2 slices
    where the L2 is the same design. No measurement and no rule: the file keeps its value.
Effective L2 capacity [B]
    the measured onset (the data set where the L2 bandwidth falls below 90 % of its plateau),
    at most the nominal capacity stated in the data file: on the AMD parts the sweep's fall lies beyond the nominal size
    (the replacement keeps serving part of an overflowing data set), where the nominal is kept.
    NVIDIA Ampere keeps half the nominal (see :data:`KEEP_HALF_L2`).
L1 capacity [B]
    the onset of ``gpu-cache``, at most the nominal capacity, where measured.
Achievable-DRAM-bandwidth curve (:mod:`warpspeed.hardware.dram_curve`)
    ``B``, ``L``, ``p`` fitted to the stream kernel closest to stencil traffic: ``stencil1d3pt``
    (one read stream with neighbours, one write stream) where measured, else ``scale`` (the same
    16 B per thread, one read and one write stream). Unmeasured parts take ``L`` and ``p`` of the
    nearest measured part and ``B`` = their own sustained DRAM bandwidth x that part's ``B`` /
    sustained ratio.
Latencies [ns]
    the pointer-chase levels of ``gpu-latency`` (:func:`~warpspeed.measured.sustained.latency_levels`),
    except on the devices of :data:`ARCHITECTURE_LATENCIES`, which keep their architecture file's.
Many-streams DRAM bandwidth [GB/s] (``dram_many_streams_gb_s``)
    the stream triad (three concurrent streams; on the MI300X, measured only with gpu-stream's
    four-buffer triad, four streams) at full occupancy, where it lies more than
    :data:`STREAM_FALL_FRACTION` below the sustained DRAM bandwidth (the part's memory system
    sustains less for more concurrent streams: MI100, MI210, MI300X, RX 6900 XT; no NVIDIA part); parts
    without a measurement under the DRAM rule take their vendor peak x the reference part's
    triad/peak ratio (:mod:`warpspeed.memory.dram_bandwidth`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from warpspeed.measured.stream_curve import fit_stream_kernel
from warpspeed.measured.public_data import load_stream, public_parts
from warpspeed.measured.sustained import CacheStep, MeasuredPart, measured_part
from warpspeed.errors import FitError
from warpspeed.hardware.device import Device, load_device
from warpspeed.hardware.dram_curve import BandwidthParams
from warpspeed.units import MIB

#: Built-in device -> the stored part whose measurements it takes unchanged: the same part, or
#: one with the same chip, memory system and clock (L40S: AD102 with 142 SMs and 864 GB/s GDDR6,
#: as the L40; A100 PCIe 40 GB: GA100 with 108 SMs at 1.41 GHz and five HBM2 stacks at 1555 GB/s, as
#: the A100 SXM4 40 GB, NVIDIA A100 PCIe product brief PB-10137-001; the stored A100 40 GB and V100
#: variants are not stated, SXM and PCIe share the memory system; nor is the stored A100 80 GB's, whose
#: runs the built-in A100-SXM4-80GB takes, the one built-in A100 80 GB: its 108 SMs at 1.41 GHz, as
#: gpu-latency/a100_80.txt states, are those of both form factors).
MEASURED_AS = {
    "A100-SXM4-40GB": "a100-40gb", "A100-PCIe-40GB": "a100-40gb", "A100-SXM4-80GB": "a100-80gb", "H100-PCIe-80GB": "h100-pcie",
    "H200": "h200", "L40": "l40", "L40S": "l40", "A40": "a40", "V100-PCIe-32GB": "v100",
    "MI100": "mi100", "MI210": "mi210", "MI300X": "mi300x", "RX6900XT": "rx6900xt",
}

#: Vendor peak DRAM bandwidths [GB/s] used by the rules: NVIDIA H100 Tensor Core GPU datasheet
#: (H100 SXM 3.35 TB/s, H100 PCIe 2 TB/s); AMD Instinct MI210 datasheet (1638.4 GB/s), MI300X
#: datasheet (5.3 TB/s); AMD Radeon RX 6900 XT, Radeon PRO W6800 and RX 5500 XT specifications
#: (512, 512 and 224 GB/s).
VENDOR_DRAM_GB_S = {
    "H100-PCIe-80GB": 2000.0, "H100-SXM5-80GB": 3350.0, "MI210": 1638.4, "MI300X": 5300.0,
    "RX6900XT": 512.0, "W6800": 512.0, "RX5500XT": 224.0,
}

#: Devices without a DRAM measurement -> the measured device whose sustained/peak ratio their
#: vendor peak is scaled by (same memory technology and controller generation).
DRAM_RULE_REFERENCE = {"H100-SXM5-80GB": "H100-PCIe-80GB", "W6800": "RX6900XT", "RX5500XT": "RX6900XT"}

#: Devices whose effective L2 stays at half the nominal capacity although the A100 80 GB sweep
#: falls only at 28.1 MiB: the nvidia-ampere capacity curves (fits/nvidia-ampere.toml, from the
#: reference implementation of Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance
#: Estimation during Code Generation on Modern GPUs", Journal of Parallel and Distributed
#: Computing, 2023) were fitted with oversubscription = volume / 20 MiB on the A100.
KEEP_HALF_L2 = ("A100-SXM4-40GB", "A100-PCIe-40GB", "A100-SXM4-80GB")

#: Devices whose memory latencies stay those of their architecture file
#: (``warpspeed/hardware/latencies/ampere.toml``: S. Cao et al., "AMALI: An Analytical Model for Accurately
#: Modeling LLM Inference on Modern GPUs", ISCA 2025, Table 2, measured on an A100) although gpu-latency
#: measured the A100 40 GB and 80 GB: the launch cost of ``fits/kernel-launch.toml`` (part a100-80, and the block
#: dispatch time every part shares) was fitted with them (:mod:`warpspeed.calibration.launch`). ``warpspeed
#: validate`` compares them with the pointer chase (:mod:`warpspeed.validation.public_latency`).
ARCHITECTURE_LATENCIES = ("A100-SXM4-40GB", "A100-PCIe-40GB", "A100-SXM4-80GB")

#: A part sustains less for many concurrent streams when its triad (three streams) lies more than this
#: fraction below its sustained (two-stream) bandwidth: the AMD parts lose 3.5-8.1 %, NVIDIA's at most
#: 1.5 % (A100 40 GB: 1360 against 1381 GB/s; gpu-stream at full occupancy, fits/data/public/gpu-stream/).
STREAM_FALL_FRACTION = 0.03

#: Stream kernels of more than two concurrent streams, in order of preference: the three-stream triad,
#: else the four-buffer triad (four streams) of the gpu-stream version since 2024-12-17, the only one
#: measured on the MI300X.
MANY_STREAM_KERNELS = ("triad", "triad4")

#: Stream kernels for the achievable-DRAM curve, in order of preference (closest to a stencil).
CURVE_KERNELS = ("stencil1d3pt", "scale")

#: RX 5500 XT (Navi 14, 128-bit bus) has 8 L2 slices against the RX 6900 XT's 16 (Navi 21,
#: 256-bit bus): four slices per 64-bit memory controller (AMD RDNA whitepaper, 2019).
RX5500XT_L2_SLICE_RATIO = 8 / 16


@dataclass(frozen=True)
class Figure:
    """One number of a device file with the rule that gives it."""

    value: float
    source: str


@dataclass(frozen=True)
class DeviceFigures:
    """The figures the stored data give one device (None: the data say nothing, the file decides).

    dram_bandwidth_gb_s, l2_bandwidth_gb_s [GB/s]; l2_effective_bytes, l1_bytes [B];
    dram_curve: peak [GB/s], effective latency [ns] and smoothness of the achievable-DRAM curve;
    latency_ns: pointer-chase latency per level ("l1", "l2", "dram") [ns].
    """

    device: str
    dram_bandwidth_gb_s: Figure
    l2_bandwidth_gb_s: Figure | None
    l2_effective_bytes: Figure | None
    l1_bytes: Figure | None
    dram_curve: BandwidthParams
    dram_curve_source: str
    latency_ns: dict[str, Figure]
    dram_many_streams_gb_s: Figure | None = None


@lru_cache(maxsize=None)
def _part(part: str) -> MeasuredPart:
    return measured_part(part)


@lru_cache(maxsize=None)
def _spec(name: str) -> Device:
    return load_device(name)


def _stream_dram(part: str) -> Figure:
    s = _part(part).stream
    if s is None:
        raise FitError(f"{part}: no stream measurement stored")
    return Figure(s.mixed_gb_s, f"{part} stream {s.mixed_kernel} at {s.resident_threads} resident threads ({s.source})")


def _dram(name: str) -> Figure:
    part = MEASURED_AS.get(name)
    if part and _part(part).stream:
        return _stream_dram(part)
    if name in DRAM_RULE_REFERENCE:
        ref = DRAM_RULE_REFERENCE[name]
        ratio = _dram(ref).value / VENDOR_DRAM_GB_S[ref]
        return Figure(VENDOR_DRAM_GB_S[name] * ratio,
                      f"rule: vendor peak {VENDOR_DRAM_GB_S[name]:g} GB/s x {ref} sustained/peak "
                      f"{_dram(ref).value:.1f}/{VENDOR_DRAM_GB_S[ref]:g} = {ratio:.4f}")
    raise FitError(f"no DRAM measurement or rule for device {name!r}")


def _l2_bandwidth(name: str) -> Figure | None:
    same_l2 = {"A100-SXM4-40GB": "a100-80gb", "A100-PCIe-40GB": "a100-80gb",  # same chip, L2 and clock
               "H100-SXM5-80GB": "h200"}
    part = same_l2.get(name, MEASURED_AS.get(name))
    if part and _part(part).l2:
        step = _part(part).l2
        return Figure(step.level_gb_s, f"{part} gpu-l2-cache level bandwidth ({step.source})")
    dev = _spec(name)
    if name == "W6800":  # same Navi 21 L2 (16 slices) as the RX 6900 XT: scale by clock
        ref, why = "RX6900XT", "clock"
        factor = dev.clock_ghz / _spec(ref).clock_ghz
    elif name == "RX5500XT":  # RDNA L2 with half the slices: scale by clock and slices
        ref, why = "RX6900XT", "clock x L2 slices 8/16"
        factor = dev.clock_ghz / _spec(ref).clock_ghz * RX5500XT_L2_SLICE_RATIO
    elif name == "MI300X":  # CDNA L2 per CU and clock as the MI210
        ref, why = "MI210", "CUs x clock"
        r = _spec(ref)
        factor = dev.sms * dev.clock_ghz / (r.sms * r.clock_ghz)
    else:
        return None
    base = _l2_bandwidth(ref)
    if base is None:
        raise FitError(f"{ref}: no L2 bandwidth measurement for the rule of {name}")
    return Figure(base.value * factor, f"rule: {ref} {base.value:.1f} GB/s x {why} = x {factor:.4f}")


def capped_onset(step: CacheStep, unit_bytes: int, unit: str, digits: int) -> Figure:
    """A cache capacity: the measured onset of the bandwidth fall, at most the nominal size [B]."""
    nominal = step.nominal_bytes
    return Figure(float(min(round(step.onset_bytes), nominal)),
                  f"min(measured onset {step.onset_bytes / unit_bytes:.{digits}f} {unit}, "
                  f"nominal {nominal / unit_bytes:g} {unit}) ({step.source})")


def _l2_effective(name: str) -> Figure | None:
    if name in KEEP_HALF_L2:
        return None
    same_l2 = {"H100-SXM5-80GB": "h200", "W6800": "rx6900xt"}
    part = same_l2.get(name, MEASURED_AS.get(name))
    if not part or not _part(part).l2:
        return None
    return capped_onset(_part(part).l2, MIB, "MiB", 2)


def _l1_bytes(name: str) -> Figure | None:
    part = MEASURED_AS.get(name)
    if not part or not _part(part).l1:
        return None
    return capped_onset(_part(part).l1, 1024, "KiB", 1)


@lru_cache(maxsize=None)
def _curve_of_part(part: str) -> tuple[BandwidthParams, str]:
    sweep = load_stream(part)
    kernel = next(k for k in CURVE_KERNELS if k in sweep.bandwidth_gb_s)
    fit = fit_stream_kernel(sweep, kernel)
    return fit.params, f"{part} stream {kernel} fit, mean error {fit.mape_pct:.1f} % ({sweep.source})"


def _dram_curve(name: str) -> tuple[BandwidthParams, str]:
    part = MEASURED_AS.get(name)
    if part and part in public_parts("gpu-stream"):
        return _curve_of_part(part)
    nearest = {"H100-SXM5-80GB": "H200",
               "W6800": "RX6900XT", "RX5500XT": "RX6900XT"}
    if name not in nearest:
        raise FitError(f"no stream measurement or rule for the DRAM curve of {name!r}")
    ref = nearest[name]
    ref_params, _ = _dram_curve(ref)
    ratio = ref_params.peak_gb_s / _dram(ref).value
    params = BandwidthParams(_dram(name).value * ratio, ref_params.latency_ns, ref_params.sharpness)
    return params, (f"rule: latency and sharpness of {ref}; peak = sustained {_dram(name).value:.1f} GB/s x "
                    f"{ref} curve peak/sustained {ratio:.4f}")


def _latencies(name: str) -> dict[str, Figure]:
    part = MEASURED_AS.get(name)
    if not part or not _part(part).latency or name in ARCHITECTURE_LATENCIES:
        return {}
    lat = _part(part).latency
    src = f"{part} gpu-latency ({lat.source})"
    return {"l1": Figure(lat.l1_ns, src), "l2": Figure(lat.l2_ns, src), "dram": Figure(lat.dram_ns, src)}


def _many_streams(name: str) -> Figure | None:
    part = MEASURED_AS.get(name)
    if part and part in public_parts("gpu-stream"):
        sweep = load_stream(part)
        kernel = next((k for k in MANY_STREAM_KERNELS if k in sweep.bandwidth_gb_s), None)
        if kernel is None:
            return None
        last = max(range(len(sweep.resident_threads)), key=lambda i: sweep.resident_threads[i])
        triad, sustained = float(sweep.bandwidth_gb_s[kernel][last]), _dram(name).value
        if triad >= (1.0 - STREAM_FALL_FRACTION) * sustained:
            return None
        return Figure(triad, f"{part} stream {kernel} at {int(sweep.resident_threads[last])} resident threads "
                             f"({sweep.source}), {100 * (1 - triad / sustained):.1f} % below the two-stream {sustained:.1f} GB/s")
    ref = DRAM_RULE_REFERENCE.get(name)
    base = _many_streams(ref) if ref else None
    if base is None:
        return None
    ratio = base.value / VENDOR_DRAM_GB_S[ref]
    return Figure(VENDOR_DRAM_GB_S[name] * ratio,
                  f"rule: vendor peak {VENDOR_DRAM_GB_S[name]:g} GB/s x {ref} triad/peak "
                  f"{base.value:.1f}/{VENDOR_DRAM_GB_S[ref]:g} = {ratio:.4f}")


def device_figures(name: str) -> DeviceFigures:
    """Every figure the stored measurements (or the stated rules) give built-in device ``name``."""
    curve, curve_source = _dram_curve(name)
    return DeviceFigures(device=name, dram_bandwidth_gb_s=_dram(name), l2_bandwidth_gb_s=_l2_bandwidth(name),
                         l2_effective_bytes=_l2_effective(name), l1_bytes=_l1_bytes(name), dram_curve=curve,
                         dram_curve_source=curve_source, latency_ns=_latencies(name),
                         dram_many_streams_gb_s=_many_streams(name))

