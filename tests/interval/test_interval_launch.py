"""The launch cost (KLL) of the interval model against gpu-benches' gpu-small-kernels measurements.

The measured rows (fits/data/public/gpu-small-kernels/<part>.csv) are back-to-back launches of a
scale kernel, 16 B per element, 1-D blocks of the sizes in each file's ``block_threads`` line,
``elements / block + 1`` blocks. Expected numbers here come from those rows directly (a slope, a
plateau, the smallest launch), not from the fitted model.
"""

import math
import tomllib

import pytest
from scipy.stats import linregress

from warpspeed.calibration.launch import (MAX_FIT_BYTES, PART_DEVICES, fit_file_text, fit_launch, launch_seconds,
                                          measured_rows, part_device)
from warpspeed.hardware.device import load_device
from warpspeed.interval import interval_params
from warpspeed.interval.cpi_stack import launch_latency
from warpspeed.measured.launch_cost import launch_constants
from warpspeed.trace.build import build_trace
from tests.paths import ROOT

FIT_FILE = ROOT / "fits" / "kernel-launch.toml"
#: Blocks a column must be slower than the 128-thread column by to count as dispatch-bound.
DISPATCH_BOUND = 1.5


def _dispatch_bound(part: str, sms: int, max_bytes: int) -> list[tuple[int, float, float]]:
    """``(blocks per SM, seconds, GB/s)`` of the smallest-block column's rows that are dispatch-bound:
    at least 1.5x slower than 128-thread blocks on the same data, in the L2."""
    rows = measured_rows(part)
    by = {(r.elements, r.block_threads): r for r in rows}
    smallest = min(r.block_threads for r in rows)
    out = []
    for r in rows:
        other = by.get((r.elements, 128))
        if r.block_threads == smallest and other and r.seconds > DISPATCH_BOUND * other.seconds \
                and r.volume <= max_bytes:
            out.append((math.ceil(r.blocks / sms), r.seconds, r.volume / r.seconds / 1e9))
    return out


def test_stored_fit_is_what_the_fit_gives():
    assert FIT_FILE.read_text() == fit_file_text()


@pytest.mark.parametrize("part", list(PART_DEVICES))
def test_dispatch_time_is_the_slope_of_the_dispatch_bound_rows(part):
    """Where small blocks are dispatch-bound, each further block on an SM adds the dispatch time:
    the slope of time per launch over blocks per SM (a linear regression of the rows alone: A100
    80.1 ns for 4-thread blocks, H200 79.4 ns and L40 75.3 ns for 32-thread blocks, r > 0.999)
    is the fitted per-block time within 10 %."""
    sms = load_device(PART_DEVICES[part]).sms
    points = _dispatch_bound(part, sms, 8 * 2**20)
    line = linregress([p[0] for p in points], [p[1] for p in points])
    assert len(points) >= 20 and line.rvalue > 0.999
    assert fit_launch().block_dispatch_s == pytest.approx(line.slope, rel=0.10)


def test_dispatch_time_transfers_to_a_gpu_it_was_not_fitted_on():
    """A40 (84 SMs, GA102, not fitted): 32-thread blocks level off at 586 GB/s (their best
    dispatch-bound row), i.e. 84 SMs x 32 x 16 B per block / 586 GB/s = 73 ns per block and SM;
    the fitted time gives 84 x 512 B / 81.7 ns = 526 GB/s: within 15 %."""
    sms = load_device("A40").sms
    plateau = max(p[2] for p in _dispatch_bound("a40", sms, 8 * 2**20))
    predicted = sms * 32 * 16 / fit_launch().block_dispatch_s / 1e9
    assert plateau == pytest.approx(586, abs=1)
    assert predicted == pytest.approx(plateau, rel=0.15)


def test_dispatch_overlaps_the_memory_traffic():
    """A100 80 GB, 64-thread blocks at 24.5 M elements (392 MB, from DRAM): 1363 GB/s. Dispatch
    alone allows 108 SMs x 64 x 16 B / 81.7 ns = 1354 GB/s; DRAM alone the 1707 GB/s the
    128-thread blocks reach. The measured rate is the dispatch's (within 2 %), not the 754 GB/s
    of the two times added."""
    rows = {(r.elements, r.block_threads): r for r in measured_rows("a100-80")}
    n = max(e for e, b in rows if b == 64)
    measured = rows[(n, 64)].volume / rows[(n, 64)].seconds / 1e9
    dram = rows[(n, 128)].volume / rows[(n, 128)].seconds / 1e9
    dispatch = 108 * 64 * 16 / fit_launch().block_dispatch_s / 1e9
    assert measured == pytest.approx(1363, abs=1) and dram == pytest.approx(1713, abs=1)
    assert measured == pytest.approx(dispatch, rel=0.02)
    assert measured > 1.5 / (1 / dispatch + 1 / dram)


@pytest.mark.parametrize("part", list(PART_DEVICES))
def test_smallest_launches_are_the_overhead(part):
    """At 4096 elements (64 KiB) the launches of at most 2 blocks per SM (32 threads and more per
    block) take about the same time whatever the block size (A100 2.62-2.73 us, H200 2.43-2.52,
    L40 1.64-1.77): the launch overhead. The fitted time reproduces each of them within 15 % (the
    largest miss, 13 %, is the A100's 5 blocks of 1024 threads: one block's data at one SM's share
    of the L2 bandwidth is slower than a lone SM gets), and every fitted row (up to 4 MiB) on
    average within 4 % (rms)."""
    fit = fit_launch()
    dev = part_device(part)
    smallest = [r for r in measured_rows(part) if r.elements == 4096 and math.ceil(r.blocks / dev.sms) <= 2]
    assert len(smallest) == 6
    for r in smallest:
        assert launch_seconds(r, dev, fit.block_dispatch_s, fit.parts[part].overhead_s) == \
            pytest.approx(r.seconds, rel=0.15)
    assert fit.parts[part].rms_rel_error < 0.04
    assert fit.parts[part].rows == sum(1 for r in measured_rows(part) if r.volume <= MAX_FIT_BYTES)


def test_device_parameters_take_the_stored_fit():
    """kll_k = the measured part's overhead x the device clock, the dispatch time likewise:
    A100 40 GB borrows the A100 80 GB's overhead (same GA100, 1.41 GHz), the H100 PCIe the H200's
    at its 1.755 GHz, the L40S the L40's at 2.52 GHz."""
    stored = tomllib.loads(FIT_FILE.read_text())
    d_ns = stored["block_dispatch_ns"]
    for device, part, ghz in (("A100-SXM4-40GB", "a100-80", 1.41), ("H100-PCIe-80GB", "h200", 1.755),
                              ("L40S", "l40", 2.52)):
        p = interval_params(load_device(device))
        assert p.kll_k == pytest.approx(stored["parts"][part]["overhead_us"] * 1e3 * ghz)
        assert p.block_dispatch_cycles == pytest.approx(d_ns * ghz)
    assert launch_constants().block_dispatch_s == pytest.approx(d_ns * 1e-9)


def test_launch_latency_by_hand(a100):
    """A100 40 GB: k = 2.2651 us x 1.41 GHz = 3193.8 cycles, d = 81.68 ns x 1.41 GHz = 115.2 cycles.
    An SM receiving 1000 blocks whose work takes 50,000 cycles waits for their dispatch: 1000 d
    + 900 (the last block's warp) = 116,060 cycles, 66,060 beyond its work; one receiving 10
    blocks (2052 cycles of dispatch) is covered by its work: KLL = k."""
    p = interval_params(a100)
    k, d = 2.2651e-6 * 1.41e9, 81.6765e-9 * 1.41e9
    assert (p.kll_k, p.block_dispatch_cycles) == pytest.approx((k, d), rel=1e-4)
    kll = launch_latency([1000, 10], [50_000.0, 50_000.0], 900.0, p)
    assert kll.tolist() == pytest.approx([k + 1000 * d + 900 - 50_000, k], rel=1e-4)


@pytest.mark.parametrize("threads, tolerance", [(4, 0.03), (8, 0.03), (16, 0.03), (32, 0.03), (64, 0.03),
                                                (128, 0.10), (1024, 0.10)])
def test_interval_model_reproduces_the_largest_launches(threads, tolerance):
    """The interval model on the built-in copy kernel (one 8 B load and store per element, as the
    benchmark's scale kernel) over 24,470,157 elements (392 MB, far outside the fitted 4 MiB) on
    the A100 80 GB, against the measured GB/s of that row: blocks of 4 to 64 threads are
    dispatch-bound (86, 173, 344, 686, 1363 GB/s: within 3 %), 128 and 1024 threads DRAM-bound
    (1713 and 1707 GB/s: within 10 %)."""
    from warpspeed.interval import interval_model
    from warpspeed.kernel.builtin import builtin_kernel
    from warpspeed.predict import predict

    n = 24_470_157
    row = next(r for r in measured_rows("a100-80") if r.elements == n and r.block_threads == threads)
    device = load_device("A100-SXM4-80GB")
    trace = build_trace(predict(builtin_kernel("copy", domain=(n, 1, 1)), device, (threads, 1, 1), (1, 1, 1)))
    result = interval_model(trace, interval_params(device))
    assert result.lups_per_s * 16 == pytest.approx(row.volume / row.seconds, rel=tolerance)
