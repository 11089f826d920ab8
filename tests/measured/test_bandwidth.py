"""Little's-law bandwidth model, its calibration on the public stream data, and the derived figures.

Reference numbers are worked out by hand (arithmetic shown) or read off the stored measurement
files row by row (D. Ernst's gpu-benches, fits/data/public/), or come from the published table of
Ernst, Holzer, Hager, Knorr, Wellein, JPDC 2023 (Table 1: A100 DRAM 1400 GB/s, V100 800 GB/s);
none is copied from the code's output.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from warpspeed.errors import FitError, WarpspeedError
from warpspeed.measured.stream_curve import fit_stream_kernel
from warpspeed.measured.public_data import (BENCHMARKS, SizeSweep, load_latency, load_size_sweep,
                                               load_stream, parse_public_csv, public_parts,
                                               read_public_csv)
from warpspeed.hardware.dram_curve import BandwidthParams, achievable_bandwidth, bytes_in_flight, littles_law_bandwidth
from warpspeed.measured.sustained import cache_step, measured_part, stream_summary

MiB = 2**20
KiB = 1024

ALL_FILES = [(b, p) for b in BENCHMARKS for p in public_parts(b)]


# ---------------------------------------------------------------------------------------------
# stored data files
# ---------------------------------------------------------------------------------------------

def test_every_benchmark_has_files():
    # stream: 11 parts (the MI300X since the four-buffer triad; A100 80 GB, H100 PCIe), L2: 7,
    # L1: 8 (A100 80 GB, H100 PCIe), latency: 7 (V100, A100 40 GB and 80 GB) (as transcribed)
    assert [len(public_parts(b)) for b in BENCHMARKS] == [11, 7, 8, 7]


@pytest.mark.parametrize("bench,part", ALL_FILES, ids=[f"{b}/{p}" for b, p in ALL_FILES])
def test_data_file_loads_with_source_line(bench, part):
    f = read_public_csv(bench, part)
    # te42kyfo/gpu-benches, continued as RRZE-HPC/gpu-benches (same history; the MI300X run is only there)
    assert re.search(r"github\.com/(te42kyfo|RRZE-HPC)/gpu-benches\b", f.source)
    assert re.search(r"commit [0-9a-f]{40}\b", f.source)
    assert f.source.split("file ")[1].startswith(bench + "/")
    assert f.value("units")
    assert len(f.rows) >= 24
    assert all(v > 0 for row in f.rows for v in row)


def test_stream_rows_match_the_published_h200_figures():
    # gpu-stream/h200.txt: scale 2263 GB/s at 50 % occupancy (512 threads/block), 3165 at 100 %
    s = load_stream("h200")
    sms, blocks = 132, 2
    for block, scale in ((512, 2263), (1024, 3165)):
        row = int(np.nonzero(s.resident_threads == sms * blocks * block)[0][0])
        assert s.bandwidth_gb_s["scale"][row] == scale


def test_size_sweeps_are_in_bytes():
    # gpu-l2-cache/h200.txt first row: 1536 kB, 13526.6 GB/s; nominal L2 = 50 MiB in the header
    s = load_size_sweep("gpu-l2-cache", "h200")
    assert s.data_set_bytes[0] == 1536 * KiB and s.bandwidth_gb_s[0] == 13526.6
    assert s.nominal_bytes["l2"] == 50 * MiB


def test_latency_converts_cycles_at_the_stated_clock():
    # gpu-latency/h100_pcie.txt: 265.5 cycles at 1755 MHz = 151.28 ns
    s = load_latency("h100-pcie")
    row = int(np.nonzero(s.data_set_bytes == 19946 * KiB)[0][0])
    assert s.latency_ns[row] == pytest.approx(265.5 / 1.755)


def test_bad_files_and_names_raise_one_line_errors():
    with pytest.raises(FitError, match="stored parts"):
        read_public_csv("gpu-stream", "h100-sxm")
    with pytest.raises(FitError, match="unknown benchmark"):
        public_parts("gpu-strides")
    with pytest.raises(FitError, match="source"):
        parse_public_csv("# part: x\n# units: y\na,b\n1,2\n", "gpu-stream", "x")
    with pytest.raises(FitError, match="non-numeric"):
        parse_public_csv("# source: s\n# part: x\n# units: y\na,b\n1,z\n", "gpu-stream", "x")
    with pytest.raises(FitError, match="2 values, the header has 3"):
        parse_public_csv("# source: s\n# part: x\n# units: y\na,b,c\n1,2\n", "gpu-stream", "x")


# ---------------------------------------------------------------------------------------------
# the model: hand-derived cases
# ---------------------------------------------------------------------------------------------

def test_littles_law_hand_case():
    # 132 SMs x 16 warps, 1 load of 32 x 8 B = 256 B in flight per warp, 500 ns latency:
    # 132 * 16 * 256 = 540672 B in flight; 540672 B / 500 ns = 1081.344 GB/s < 3000 GB/s peak
    q = bytes_in_flight(132 * 16, 1, 256)
    assert q == 540672
    assert littles_law_bandwidth(q, 500, 3000) == pytest.approx(1081.344)
    # 64 warps per SM: 2162688 B / 500 ns = 4325.4 GB/s, capped by the 3000 GB/s peak
    assert littles_law_bandwidth(bytes_in_flight(132 * 64, 1, 256), 500, 3000) == 3000


def test_smooth_form_hand_cases():
    q = 540672.0
    # p = 1 is the additive form 1/BW = 1/B + L/Q = 1/3000 + 500/540672  ->  794.844 GB/s
    assert achievable_bandwidth(q, BandwidthParams(3000, 500, 1)) == pytest.approx(794.844, rel=1e-5)
    # p = 2: x = 540672 / (500 * 3000) = 0.360448; 3000 x / sqrt(1 + x^2) = 1017.278 GB/s
    assert achievable_bandwidth(q, BandwidthParams(3000, 500, 2)) == pytest.approx(1017.278, rel=1e-5)
    # p -> inf approaches the hard minimum; a huge Q gives the peak; no bytes give nothing
    assert achievable_bandwidth(q, BandwidthParams(3000, 500, 1e4)) == pytest.approx(1081.344, rel=1e-3)
    assert achievable_bandwidth(1e15, BandwidthParams(3000, 500, 3)) == pytest.approx(3000)
    assert achievable_bandwidth(0.0, BandwidthParams(3000, 500, 3)) == 0.0


@pytest.mark.parametrize("p", [1.0, 1.5, 4.0, 64.0, math.inf])
def test_monotonic_in_bytes_in_flight_and_below_both_limits(p):
    params = BandwidthParams(2000, 600, p)
    q = np.geomspace(1e3, 1e9, 400)
    bw = achievable_bandwidth(q, params)
    assert np.all(np.diff(bw) >= 0) and np.all(bw <= 2000 * (1 + 1e-12))
    assert np.all(bw <= q / 600 * (1 + 1e-12))
    # strictly rising wherever it is visibly below the peak (at the peak it is flat in floats)
    below = bw[:-1] < 0.999 * 2000
    assert np.all(np.diff(bw)[below] > 0)


def test_bad_model_input_raises():
    with pytest.raises(FitError, match="latency_ns"):
        BandwidthParams(1000, 0)
    with pytest.raises(FitError, match="sharpness"):
        BandwidthParams(1000, 500, 0.5)
    with pytest.raises(FitError, match="resident_warps"):
        bytes_in_flight(-1, 1, 256)
    with pytest.raises(WarpspeedError):
        achievable_bandwidth(-5.0, BandwidthParams(1000, 500))


# ---------------------------------------------------------------------------------------------
# calibration on the stream rows
# ---------------------------------------------------------------------------------------------

STREAM_CURVES = [(p, k) for p in public_parts("gpu-stream") for k in load_stream(p).bandwidth_gb_s]

#: Bound on the mean absolute percentage error of every calibrated (device, kernel) curve.
MAPE_BOUND_PCT = 4.0


@pytest.mark.parametrize("part,kernel", STREAM_CURVES, ids=[f"{p}-{k}" for p, k in STREAM_CURVES])
def test_calibrated_curve_reproduces_the_stream_rows(part, kernel):
    sweep = load_stream(part)
    fit = fit_stream_kernel(sweep, kernel)
    measured = sweep.bandwidth_gb_s[kernel]
    predicted = achievable_bandwidth(sweep.bytes_in_flight(kernel), fit.params)
    mape = float(np.mean(np.abs(predicted / measured - 1))) * 100
    assert mape <= MAPE_BOUND_PCT
    assert fit.mape_pct == pytest.approx(mape)
    # monotonic in occupancy (strictly below the peak), no asymptote above the device's best kernel
    assert np.all(np.diff(predicted) >= 0)
    assert np.all(np.diff(predicted)[predicted[:-1] < 0.999 * fit.params.peak_gb_s] > 0)
    assert fit.params.peak_gb_s <= max(v.max() for v in sweep.bandwidth_gb_s.values()) * (1 + 1e-6)


def test_unknown_stream_kernel_is_an_error():
    with pytest.raises(FitError, match="measured: init"):
        fit_stream_kernel(load_stream("a100-40gb"), "stencil1d3pt")


# ---------------------------------------------------------------------------------------------
# derived sustained figures
# ---------------------------------------------------------------------------------------------

def test_dram_at_full_occupancy_matches_the_published_table():
    # JPDC 2023 Table 1 measured 1400 GB/s (A100) and 800 GB/s (V100); the stream rows at
    # 1024 threads/block give scale 1381 (A100, highest mixed kernel) and triad 814 (V100)
    a100, v100 = stream_summary("a100-40gb"), stream_summary("v100")
    assert (a100.mixed_kernel, a100.mixed_gb_s) == ("scale", 1381)
    assert (v100.mixed_kernel, v100.mixed_gb_s) == ("triad", 814)
    assert a100.mixed_gb_s == pytest.approx(1400, rel=0.02)
    assert v100.mixed_gb_s == pytest.approx(800, rel=0.02)


def test_hopper_effective_l2_is_not_half_the_nominal():
    # gpu-l2-cache/h200.txt: level rows 6.25-25 MiB lie at 9.7-10.3 TB/s (90 %: ~8.9 TB/s);
    # 44032 kB still gives 9105 GB/s, 48128 kB only 7542: the fall lies between them, far above
    # the 25 MiB (half of 50 MiB) assumed for a split L2 with duplicated lines
    step = measured_part("h200").l2
    assert 9700 <= step.level_gb_s <= 10300
    assert 44032 * KiB < step.onset_bytes < 48128 * KiB
    assert step.onset_bytes > 25 * MiB


def test_cache_step_on_a_constructed_sweep():
    # a level of 1000 GB/s up to 8 MiB, 100 GB/s from 16 MiB on, nominal 8 MiB; one row at
    # 11.3137 MiB (geometric middle of 8 and 16) with 550 GB/s. The 90 % threshold (900 GB/s)
    # is crossed (1000 - 900) / (1000 - 550) = 2/9 of the way (in log size) from 8 to
    # 11.3137 MiB = 8 * 2**0.5 MiB, i.e. at 8 * 2**(0.5 * 2/9) MiB;
    # the midpoint (550 GB/s) lies exactly on the middle row.
    sizes = np.array([0.5, 1, 2, 4, 8, 8 * 2**0.5, 16, 32, 64, 128]) * MiB
    bw = np.array([1000, 1000, 1000, 1000, 1000, 550, 100, 100, 100, 100], dtype=float)
    step = cache_step(SizeSweep("x", "constructed", sizes, bw, {"l2": 8 * MiB}), "l2")
    assert (step.level_gb_s, step.next_gb_s) == (1000, 100)
    assert step.onset_bytes == pytest.approx(8 * 2 ** (1 / 9) * MiB)
    assert step.midpoint_bytes == pytest.approx(8 * 2**0.5 * MiB)


def test_latency_levels_of_the_l40():
    # gpu-latency/l40.txt at 2490 MHz: 16-64 kB at 36.1-36.3 cycles, 12-48 MiB at 276.5-279.8,
    # beyond 768 MiB 631.9 cycles
    lat = measured_part("l40").latency
    assert lat.l1_ns == pytest.approx(36.2 / 2.49, rel=0.005)
    assert lat.l2_ns == pytest.approx(276.5 / 2.49, rel=0.005)
    assert lat.dram_ns == pytest.approx(631.9 / 2.49, rel=0.001)


def test_unmeasured_part_is_an_error():
    with pytest.raises(FitError, match="measured parts"):
        measured_part("mi250x")


@pytest.mark.parametrize("part, scale, triad4", [
    # the full-occupancy rows of gpu-stream/<part>.txt @ 6788278 (RRZE-HPC/gpu-benches), read by hand
    ("rx6900xt", 457, 433), ("mi210", 1362, 1225), ("mi100", 784, 718), ("mi300a", 2956, 3034),
    ("a100-80gb", 1737, 1794), ("a40", 653, 670), ("l40", 776, 830), ("v100", 809, 788),
])
def test_four_stream_triad_runs_are_stored_with_their_source(part, scale, triad4):
    from warpspeed.files.stored import stored_file
    from warpspeed.measured.public_data import parse_public_csv

    f = parse_public_csv(stored_file("public", "gpu-stream-triad4", f"{part}.csv").read_text(),
                         "gpu-stream-triad4", part)
    assert re.search(r"github\.com/RRZE-HPC/gpu-benches\b.*file gpu-stream/\S+\.txt, commit 6788278[0-9a-f]{33}\b",
                     f.source)
    last = int(np.argmax(f.column("resident_threads")))
    assert (f.column("scale")[last], f.column("triad4")[last]) == (scale, triad4)
