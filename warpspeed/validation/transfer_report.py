"""``docs/accuracy.md``, section "What transfers": per model, which constants are documented,
which were fitted and on what, and the error to expect on a device nobody fitted.

The expected errors quote the datasets of :func:`warpspeed.validation.public.public_accuracy`
that were *not* fitted (other parts of a family, other kernels, rule-built families), so the
section changes with the model and the data, and the test that compares the committed page with
a fresh one keeps it current. ``predict`` and ``rank`` print, per device, which part each fitted
component comes from (:mod:`warpspeed.calibration`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from warpspeed.validation.datasets import DatasetAccuracy
from warpspeed.validation.real_gpu import RealGpuAccuracy

Pick = Callable[[DatasetAccuracy], bool]


def _range(datasets: Sequence[DatasetAccuracy], pick: Pick) -> str:
    """``"a-b %"`` (or ``"a %"``), the range of the MAPEs of the picked datasets; ``""`` when none."""
    values = sorted(ds.mape_percent for ds in datasets if pick(ds))
    if not values:
        return ""
    lo, hi = values[0], values[-1]
    return f"{lo:.1f} %" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}-{hi:.1f} %"


def _worst(datasets: Sequence[DatasetAccuracy], pick: Pick) -> str:
    """The largest absolute worst-point error of the picked datasets, ``"w %"``."""
    values = [abs(ds.worst.error_percent) for ds in datasets if pick(ds)]
    return f"{max(values):.0f} %" if values else ""


def _in(group: str, *words: str) -> Pick:
    return lambda ds: ds.group == group and all(w in ds.name for w in words)


def _sentence(text: str, value: str) -> str:
    """``text`` with ``{}`` filled, or an empty string when the datasets are absent."""
    return text.format(value) if value else ""


def _section(title: str, documented: str, fitted: str, expected: Sequence[str]) -> list[str]:
    body = " ".join(s for s in expected if s)
    return [f"### {title}", "", f"*Documented (physical):* {documented}", "", f"*Fitted or measured per part:* {fitted}", "",
            f"*Expected error on an unseen device of the same family:* {body}", ""]


def _real(real: RealGpuAccuracy | None, model: str) -> str:
    """``"MAPE m %, Spearman r"`` of ``model`` on the real GPU's timings; ``""`` without them."""
    for m in real.models if real is not None else ():
        if m.model == model:
            return f"MAPE {m.mape_percent:.1f} %, Spearman {m.spearman:.3f}"
    return ""


def _volume_range(real: RealGpuAccuracy | None, which: str, index: int) -> str:
    """The range of the errors of one volume (``index`` into :data:`~warpspeed.validation.real_gpu.VOLUMES`)
    of model ``which`` (``roofline`` or ``overlap``) over the profiles, ``"a to b %"``."""
    if real is None or not real.volumes:
        return ""
    errors = sorted(100.0 * (getattr(v, which)[index] / v.measured[index] - 1.0) for v in real.volumes)
    return f"{errors[0]:+.0f} to {errors[-1]:+.0f} %"


def _power_range(real: RealGpuAccuracy | None) -> str:
    """The range of the power errors over the real GPU's soaks, ``"a to b %"``."""
    if real is None or not real.power:
        return ""
    errors = sorted(100.0 * (c.predicted_w / c.soak.watts - 1.0) for c in real.power)
    return f"{errors[0]:+.1f} to {errors[-1]:+.1f} %"


def transfer_markdown(datasets: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None = None) -> str:
    """The section (Markdown, ending in a blank line); ``real``: the real GPU's comparison, quoted
    where it exists."""
    lines = [
        "## What transfers",
        "",
        "A device nobody measured borrows the fitted constants of the part whose family it shares. "
        "`warpspeed predict` and `warpspeed rank` print one line per device naming, per component "
        "(DRAM and L2 figures, first level, capacity curves, power, launch cost), the part it was "
        "fitted on, or that it comes from documentation only (`calibration` in `--json`). This "
        "section says, per model, which constants are physical and which fitted, and what error to "
        "expect on a device of the same architecture family that no constant was fitted on. The "
        "numbers quote the rows above that were not fitted.",
        "",
    ]
    for section in SECTIONS:
        lines += section(datasets, real)
    lines.append("")
    return "\n".join(lines)


def _first_level(d: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None) -> list[str]:
    """The section "First level (L1 / vector L1)"."""
    return _section(
        "First level (L1 / vector L1)",
        "the data-pipe width (32 banks of 4 B on NVIDIA, the device files), 128 B lines and 32 B "
        "sectors, load/store threads per cycle per SM partition (8 on GV100, GA100 and GH100, 4 on "
        "GA102 and AD102: the architecture whitepapers); on CDNA the address unit's 16 and 4 lanes per "
        "clock, the 64 B line and the 64 B per clock of coalesced loads (`docs/amd.md`).",
        "NVIDIA's tag stage, `max(1, 0.46 + 0.28 L)` wavefronts for `L` distinct lines, on the A100's "
        "gpu-strides cycles, and used unchanged in every NVIDIA family; RDNA's 0.28 per line on the "
        "RX 6900 XT's; CDNA's 4 B banks in 16 B columns read off the MI210's float gpu-strides "
        "rows and its 0.44 cycles per uncoalesced 16 B chunk fitted to them, used unchanged on the MI100 "
        "and MI300X.",
        [_sentence("On the fitted A100 the cycles have a MAPE of {} (in-sample); the GV100, GA102 and AD102 "
                   "parts, not fitted, match the data pipe and load/store rate of a contiguous load",
                   _range(d, _in("L1", "A100 cycles"))),
         _sentence("with a MAPE of {}.", _range(d, _in("L1 bandwidth", "NVIDIA"))),
         "Strided and 2-D-block patterns on an unseen NVIDIA part share the A100's tag stage, so expect "
         "about the A100's error where the load/store units are the same design and more where they are "
         "not.",
         _sentence("On the MI210's float rows the banked CDNA rule has a MAPE of {} (in-sample);",
                   _range(d, _in("L1", "MI210 (CDNA 2) cycles per load of 32 threads, float"))),
         _sentence("on its double rows, with no constant fitted to them, {} (strides that fill the 16 KiB "
                   "vL1D and miss, which the first-level cost does not model, set most of it).",
                   _range(d, _in("L1", "MI210 (CDNA 2) cycles per load of 32 threads, double"))),
         _sentence("A contiguous load is at the 64 B per clock peak, which the MI100 and MI210 sustain less "
                   "of ({} on a contiguous 16 B load), the error to expect on another CDNA part.",
                   _range(d, _in("L1 bandwidth", "CDNA")))])


def _capacity_curves(d: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None) -> list[str]:
    """The section "Capacity curves (L2 and DRAM volumes of whole kernels)"."""
    return _section(
        "Capacity curves (L2 and DRAM volumes of whole kernels)",
        "the layer conditions, footprints and compulsory volumes are counted exactly from the "
        "kernel's addresses; the cache sizes come from the device files.",
        "the Gompertz hit-rate curves of Ernst, Holzer, Hager, Knorr, Wellein (J. Parallel Distrib. "
        "Comput., 2023), fitted on an A100 and used by every family (`fits/*.toml` say so).",
        [_sentence("On the three H200 profiles of the 25-point stencil the roofline's L2 -> L1 load is {}",
                   _volume_range(real, "roofline", 1)),
         _sentence("and its DRAM load {} off the counters;", _volume_range(real, "roofline", 2)),
         _sentence("the overlap model (the L1 curve at the L1's full capacity, the layer conditions at the "
                   "H200's fitted L2 capacity) {} and", _volume_range(real, "overlap", 1)),
         _sentence("{}.", _volume_range(real, "overlap", 2)),
         "On a family other than Ampere and Hopper the curves are the A100's and the error is unknown. "
         "`warpspeed accuracy` and `warpspeed refit` measure and refit them on a machine with a GPU."])


def _bandwidth(d: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None) -> list[str]:
    """The section "DRAM and L2 bandwidth"."""
    return _section(
        "DRAM and L2 bandwidth",
        "vendor peak bandwidths (datasheets), used only where no measurement exists.",
        "each measured part's Little's-law curve (peak, latency, sharpness) on one stream kernel; the "
        "L2 bandwidth and effective size are the measured plateau and onset. A device without "
        "measurements takes its vendor peak times the sustained/peak ratio of the nearest measured part "
        "(`warpspeed/measured/device_figures.py`).",
        [_sentence("On measured parts the kernels the curves were not fitted to have a MAPE of {} per part",
                   _range(d, _in("DRAM", "not fitted"))),
         _sentence("(worst point {}).", _worst(d, _in("DRAM", "not fitted"))),
         "Rule-built devices (H100 SXM5, W6800, RX 5500 XT) add the spread of the sustained/peak "
         "ratio between parts of one memory technology, which no stored measurement checks."])


def _overlap_model(d: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None) -> list[str]:
    """The section "Overlap model (the default)"."""
    return _section(
        "Overlap model (the default)",
        "the roofline's volumes; one data-stage wavefront per missing L1 line (the L1TEX stages of the "
        "Nsight Compute Kernel Profiling Guide, checked against the H200's data-pipe counter); the "
        "wave-end latency, the pointer-chase DRAM latency of each part (gpu-latency) or of a part with "
        "the same SM and L2, else the architecture's latency file (the A100s and A40: AMALI's Table 2; "
        "each device file says which); the L1 capacity curve at a share of the L1 "
        "a launch keeps after the driver's shared-memory carveout, the share the A100 it was fitted on gives; the DRAM cost of partly covered sectors (one transfer "
        "per loading block, a read-modify-write per storing block); the DRAM curve's knee by resident "
        "blocks; the block dispatch time and launch overhead of the stored launch fit.",
        "the exponent of the smooth maximum of the L1 and DRAM times (3) and the L1 miss stage's "
        "request rate (0.7 per cycle and SM), both on six kernels timed on the H200 (474 configurations; "
        "each kernel's error with the constants fitted on the other five is in the section \"Kernels the "
        "model was not fitted on\") and used for every device; the H200's L2 capacity of the layer "
        "conditions (35.5 MiB) on two of its profiles (`warpspeed/overlap/params.py` and the H200 file "
        "say so).",
        [_sentence("On the H200's stencil timings (in-sample) {};", _real(real, "overlap")),
         _sentence("the roofline there: {}.", _real(real, "roofline")),
         _sentence("On the public whole kernels it fits nothing: MAPE {} on streaming kernels by occupancy",
                   _range(d, _in("Time models", "overlap:", "gpu-stream"))),
         _sentence("(the wave-end latency adds to the DRAM curve's own latency at one block of 32 threads), "
                   "{} on the intensity sweep", _range(d, _in("Time models", "overlap:", "gpu-roofline"))),
         _sentence("{} on FluidX3D's D3Q19 rates", _range(d, _in("Time models", "overlap:", "FluidX3D"))),
         _sentence("and {} on small kernels (launch overhead and dispatch from the launch fit, whose A100, "
                   "H200 and L40 rows below 4 MiB it shares; arrays that stay in the L2 between launches are "
                   "not modelled);", _range(d, _in("Time models", "overlap:", "gpu-small-kernels"))),
         "a device of another family keeps the exponent and the request rate of an H200, which no "
         "measurement of it checks: expect the roofline's error there where L1 and DRAM are far apart, "
         "and the H200's where they are close."])


def _interval_model(d: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None) -> list[str]:
    """The section "Interval model (AMALI)"."""
    return _section(
        "Interval model (AMALI)",
        "issue rate, functional-unit lanes and tensor throughputs per SM (architecture whitepapers, "
        "CUDA programming guide), instruction latencies of the AMALI paper's Table 2 (measured on an "
        "A100, assumed elsewhere; each device file says so).",
        "the L1, L2 and DRAM latencies from each part's pointer chase (gpu-latency; parts without one "
        "take those of a part with the same SM and L2; the A100s and A40 the Ampere latency file's, AMALI's "
        "Table 2, with which the A100 80 GB's launch cost was fitted), and the launch cost: one block-dispatch time for "
        "every part and a per-launch overhead per measured part (`fits/kernel-launch.toml`), which "
        "unmeasured devices borrow.",
        [_sentence("Against measured whole kernels its MAPE is {} on streaming kernels by occupancy",
                   _range(d, _in("Time models", "interval:", "gpu-stream"))),
         _sentence("(low where the kernel waits on DRAM latency), {} on the arithmetic-intensity sweep,",
                   _range(d, _in("Time models", "interval:", "gpu-roofline"))),
         _sentence("{} on launch-bound small kernels (the launch cost was fitted there);",
                   _range(d, _in("Time models", "interval:", "gpu-small-kernels"))),
         "a device that borrows its latencies and launch overhead should expect the upper end."])


def _pipeline_model(d: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None) -> list[str]:
    """The section "Pipeline model"."""
    return _section(
        "Pipeline model",
        "the instruction graph from the kernel (or its SASS), instruction latencies of the "
        "architecture tables (`warpspeed/hardware/instructions/`, each with its source) and the device's "
        "FP lanes; Eq. 1 of its paper is reproduced exactly.",
        "nothing of its own: the memory latencies (pointer chase) and the roofline's bandwidths, which "
        "set its memory pipeline's occupancy.",
        [_sentence("MAPE {} on streaming kernels,", _range(d, _in("Time models", "pipeline:", "gpu-stream"))),
         _sentence("{} on the intensity sweep,", _range(d, _in("Time models", "pipeline:", "gpu-roofline"))),
         _sentence("{} on small kernels (it has no launch cost);",
                   _range(d, _in("Time models", "pipeline:", "gpu-small-kernels"))),
         "the same on unseen parts of a family, since nothing in it is fitted per part."])


def _roofline(d: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None) -> list[str]:
    """The section "Roofline (four limiters)"."""
    return _section(
        "Roofline (four limiters)",
        "FP peaks and lanes (datasheets), the L1 and capacity models above.",
        "the bandwidths above; nothing of its own.",
        [_sentence("MAPE {} on streaming kernels,", _range(d, _in("Time models", "roofline:", "gpu-stream"))),
         _sentence("{} on the intensity sweep,", _range(d, _in("Time models", "roofline:", "gpu-roofline"))),
         _sentence("{} on FluidX3D's D3Q19 rates;", _range(d, _in("Time models", "roofline:", "FluidX3D"))),
         _sentence("it has no launch cost, hence {} on small kernels.",
                   _range(d, _in("Time models", "roofline:", "gpu-small-kernels")))])


def _power_model(d: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None) -> list[str]:
    """The section "Power model (AccelWattch-style)"."""
    return _section(
        "Power model (AccelWattch-style)",
        "board power limits and idle figures (datasheets), transistors and SMs per chip "
        "(whitepapers) and the memory technology's supply voltages (JEDEC), which with a process factor "
        "build a family without measurements from a calibrated one (`warpspeed/power/transfer.py`).",
        "per family, the FP32 lane and DRAM sector energies and the static floor, on that family's "
        "gpu-roofline runs (A100, A40, L40); the voltage floor is fitted only where the runs span "
        "clocks (the L40), else assumed in a plausible range, so the energy-optimal clock is reported "
        "as a range (`warpspeed dvfs`). The Hopper family is built by the rules, with the 4N process "
        "factor at the products' clocks (0.95 of N7's energy) fitted on two H200 board-power soaks.",
        [_sentence("A device of a calibrated family (the L40S from the L40, the A100 80 GB from the 40 GB) "
                   "should expect about the in-sample error, {}, plus its board's difference.",
                   _range(d, lambda ds: ds.group == "Power" and "transfer" not in ds.name)),
         _sentence("A family built by the rules from another one, as the Hopper family is, should expect "
                   "the transfer row's error: {} when the rules build the L40 from the A100",
                   _range(d, _in("Power", "transfer"))),
         _sentence("(worst run {}), an under-prediction that grows with the FMA count.",
                   _worst(d, _in("Power", "transfer"))),
         _sentence("On the H200 itself the two soaks the factor was fitted on are within {}.",
                   _power_range(real))])


#: The subsections, in order: one per model or model part, each from the public datasets ``d``
#: and the real GPU's comparison ``real``.
SECTIONS: tuple[Callable[[Sequence[DatasetAccuracy], RealGpuAccuracy | None], list[str]], ...] = (
    _first_level, _capacity_curves, _bandwidth, _overlap_model, _interval_model, _pipeline_model, _roofline, _power_model,
)
