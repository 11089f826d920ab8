"""Achievable DRAM bandwidth of a launch: the calibrated Little's-law curve at the launch's bytes in flight.

A kernel at low occupancy keeps too few bytes in flight to saturate DRAM (Little's law,
:mod:`warpspeed.hardware.dram_curve`). The DRAM limiter therefore uses::

    bytes per thread  q = min(DRAM bytes per lup x cells per thread, registers per thread x 4 B)
    bytes in flight   Q = resident threads x q                                       [B]
    achievable        BW = min(sustained DRAM bandwidth, curve(Q; B, L, p))          [GB/s]

* ``DRAM bytes per lup`` is the load plus store volume of the model (the volume the DRAM limiter
  divides by), ``cells per thread`` the fold: a thread's independent loads and stores of all its
  cells are assumed to be issued before the first result is needed (loads of a stencil or a
  lattice-Boltzmann update do not depend on each other). This is exactly how the curve's ``Q`` was
  counted for the streaming kernels it was fitted to (resident threads x bytes one thread moves).
* The cap: a load in flight holds its destination registers until the data arrive, so a thread
  cannot have more load data in flight than its registers hold (4 B per 32-bit register, CUDA C++
  Programming Guide, "Compute Capabilities": 32-bit registers; likewise AMD VGPRs); stores are
  counted against the same cap, a simplification.
* ``resident threads`` = blocks of one wave x threads per block (at most the whole grid).
* ``B``, ``L``, ``p`` are the device file's ``dram_curve_*`` keys, fitted to the stream kernel
  closest to stencil traffic (:mod:`warpspeed.measured.device_figures`). The sustained bandwidth (the
  device file's ``dram_bandwidth_gb_s``) caps the result, so the limiter never exceeds it.

Concurrent streams. A memory system sustains less when a kernel keeps many address streams in
flight at once. On AMD's the rate falls already from two to three: gpu-benches' stream kernels at
full occupancy give the RX 6900 XT 502 GB/s for one stream (read), 456 for two (scale) and 421 for
three (triad), the MI210 1358 and 1248 for two and three, the MI100 1042 and 1006; NVIDIA's parts
lose at most 1.5 % from two to three streams (A100 1381 and 1360; V100, A40, L40, H200 none;
``fits/data/public/gpu-stream/``). The hold beyond three streams is measured up to four on AMD:
gpu-stream's later four-buffer triad (``fits/data/public/gpu-stream-triad4/``) costs the RX 6900 XT
and the MI210 no more than the three-buffer one (433 and 1225 GB/s against scale 457 and 1362 in the
same runs), where a cost linear in ``S`` would give 391 and 1154; beyond four streams nothing public
is measured on an AMD part (``docs/amd.md``, "Beyond four streams"). The NVIDIA A100 80 GB, A40, L40
and V100 run the four-stream triad at 0.97-1.07 of their two-stream rate. With more streams the H200
loses too: its one-array copy (one load and one store stream, ``fits/data/H200/mech-stream.csv``)
reaches 3.6-3.8 TB/s at four and more resident blocks per SM, copies of 4-38 arrays
(``mech-segments.csv``) 2.5-3.3 TB/s (:mod:`warpspeed.calibration.many_streams_fit`).

A device file whose part loses bandwidth to streams gives ``dram_many_streams_gb_s``, the rate
from ``dram_many_streams_count`` streams on (default 3: the triad; the MI300X, measured only with
the four-stream triad, the four-stream rate; the H200: 8, its 4-array copies). A launch that moves
``S`` elements per lattice update to and from DRAM (each a concurrent address stream: a
lattice-Boltzmann pull kernel 2 x 19, a stencil 2 plus every plane it reloads) sustains
``dram_bandwidth_gb_s`` for ``S <= 2`` (up to ``dram_few_streams_count`` where a file gives it: the
H200 4, as the NVIDIA parts' four-stream triad shows, below), the many-streams rate from the count
on, and between them the harmonic interpolation (time per byte linear in ``S``) (:func:`stream_rate`). The same
interpolation, from the curve's peak ``B`` at two streams, caps the knee of resident blocks (a
launch with many resident blocks approaches ``B`` with two streams, the many-streams rate with
many). Where nothing is measured beyond the count the rate is held: for kernels with many more
streams it is an upper bound. An in-place kernel that stores to the addresses it loaded
(FluidX3D's esoteric pull) is not a case of this rule: the H200 runs it at 3.53 TB/s
(``fits/data/public/fluidx3d/``).

A device file without the curve keys gets the flat sustained bandwidth. The L2 limiter stays flat:
the stored L2 measurements were all taken at full occupancy, so no L2 curve can be calibrated.
"""

from __future__ import annotations

from dataclasses import dataclass

from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import Device
from warpspeed.hardware.dram_curve import BandwidthParams, achievable_bandwidth, resident_blocks_bandwidth

#: Bytes per 32-bit register (CUDA C++ Programming Guide: registers are 32 bits wide).
REGISTER_BYTES = 4


@dataclass(frozen=True)
class DramBandwidth:
    """The DRAM bandwidth the roofline uses for one launch.

    sustained_gb_s:     the device's sustained bandwidth at full occupancy [GB/s];
    achievable_gb_s:    min(sustained, curve at the bytes in flight) [GB/s] (= sustained without a curve);
    bytes_per_thread:   bytes one resident thread keeps in flight [B] (after the register cap);
    bytes_in_flight:    device-wide bytes in flight [B];
    resident_threads:   threads with work resident at once on the device (the idle threads of blocks at
                        the domain's edges left out, ``Launch.active_thread_share``);
    register_capped:    True when the register cap limited ``bytes_per_thread``;
    resident_blocks_gb_s: the bandwidth with the curve's knee sharpened by the launch's resident
                        blocks per SM and cells per thread [GB/s]
                        (:func:`~warpspeed.hardware.dram_curve.resident_blocks_bandwidth`; = achievable
                        at one or two blocks per SM of one cell per thread or without a curve), at most
                        the streams' rate: the overlap model's DRAM bandwidth; the roofline keeps
                        ``achievable_gb_s``.
    """

    sustained_gb_s: float
    achievable_gb_s: float
    bytes_per_thread: float
    bytes_in_flight: float
    resident_threads: float
    register_capped: bool
    resident_blocks_gb_s: float = 0.0


def bytes_per_thread_in_flight(dram_bytes_per_lup: float, cells_per_thread: int,
                               registers_per_thread: int) -> tuple[float, bool]:
    """Bytes one thread keeps in flight [B] and whether the register cap applied (module docstring)."""
    if dram_bytes_per_lup < 0 or cells_per_thread < 1 or registers_per_thread < 1:
        raise WarpspeedError(
            f"bytes in flight need DRAM bytes per lup >= 0, cells per thread >= 1 and registers >= 1; got "
            f"{dram_bytes_per_lup}, {cells_per_thread}, {registers_per_thread}")
    demand = dram_bytes_per_lup * cells_per_thread
    cap = registers_per_thread * REGISTER_BYTES
    return (min(demand, cap), demand > cap)


#: The stream count of the two-stream rate (gpu-stream's scale and stencil kernels: one load and one
#: store stream) and the default stream count of the many-streams rate (triad: two loads, one store).
TWO_STREAMS, THREE_STREAMS = 2.0, 3.0


def stream_rate(device: Device, streams: float | None, two_stream_gb_s: float) -> float:
    """The rate [GB/s] a kernel with ``streams`` concurrent DRAM streams sustains where two streams
    sustain ``two_stream_gb_s`` (module docstring): the device's ``dram_many_streams_gb_s`` from
    ``dram_many_streams_count`` streams on (default 3), ``two_stream_gb_s`` up to
    ``dram_few_streams_count`` streams (default 2) and without a many-streams rate or for
    ``streams`` None, the harmonic interpolation between (time per byte linear in the stream count)."""
    many = device.dram_many_streams_gb_s
    count = device.dram_many_streams_count or THREE_STREAMS
    few = device.dram_few_streams_count or TWO_STREAMS
    if many is None or streams is None or streams <= few:
        return two_stream_gb_s
    many = min(many, two_stream_gb_s)
    if streams >= count:
        return many
    share = (streams - few) / (count - few)
    return 1.0 / ((1.0 - share) / two_stream_gb_s + share / many)


def sustained_for_streams(device: Device, streams: float | None) -> float:
    """The sustained DRAM bandwidth [GB/s] of a kernel with ``streams`` concurrent DRAM streams:
    :func:`stream_rate` from ``dram_bandwidth_gb_s``."""
    return stream_rate(device, streams, device.dram_bandwidth_gb_s)


def launch_dram_bandwidth(device: Device, resident_threads: float, dram_bytes_per_lup: float,
                          cells_per_thread: int, registers_per_thread: int, blocks_per_sm: int = 1,
                          streams: float | None = None) -> DramBandwidth:
    """Achievable DRAM bandwidth [GB/s] of a launch with ``resident_threads`` threads with work resident at once
    (``blocks_per_sm`` of them per SM: the knee of :attr:`DramBandwidth.resident_blocks_gb_s`);
    ``streams``: the concurrent DRAM streams of the kernel (:func:`sustained_for_streams`)."""
    per_thread, capped = bytes_per_thread_in_flight(dram_bytes_per_lup, cells_per_thread, registers_per_thread)
    q = resident_threads * per_thread
    sustained = sustained_for_streams(device, streams)
    if not device.has_dram_curve or q == 0:
        bw = knee = sustained
    else:
        params = BandwidthParams(device.dram_curve_peak_gb_s, device.dram_curve_latency_ns, device.dram_curve_sharpness)
        bw = min(sustained, float(achievable_bandwidth(q, params)))
        # more resident blocks and more cells per thread sharpen the knee towards the curve's peak B;
        # the streams cap the peak as they cap the sustained rate
        knee = min(resident_blocks_bandwidth(q, params, blocks_per_sm, bw, cells_per_thread),
                   stream_rate(device, streams, params.peak_gb_s))
    return DramBandwidth(sustained, bw, per_thread, q, resident_threads, capped, knee)
