"""The gpu-benches sets of the A100 80 GB, the H100 PCIe and the V100's and A100s' pointer chase.

te42kyfo/gpu-benches at commit a7dc559cc5a1d09e62b6b0fbb99ee165039acba4 (GPL-3.0): gpu-stream/a100_80.txt
and h100_pcie.txt, gpu-cache/a100_80.txt and h100_pcie.txt, gpu-latency/v100.txt, a100_40.txt and
a100_80.txt, stored under fits/data/public/. Every number below was read off those text files by hand
(the row, then the column) and every derived figure is worked out here from those rows, not taken from
the code's output.
"""

from __future__ import annotations

import math
import statistics

import pytest

from warpspeed.hardware.device import load_device
from warpspeed.measured.public_data import load_latency, load_size_sweep, load_stream, read_public_csv
from warpspeed.validation.public_latency import latency_datasets

KIB = 1024
COMMIT = "a7dc559cc5a1d09e62b6b0fbb99ee165039acba4"


@pytest.mark.parametrize("bench, part, txt", [
    ("gpu-stream", "a100-80gb", "gpu-stream/a100_80.txt"), ("gpu-stream", "h100-pcie", "gpu-stream/h100_pcie.txt"),
    ("gpu-cache", "a100-80gb", "gpu-cache/a100_80.txt"), ("gpu-cache", "h100-pcie", "gpu-cache/h100_pcie.txt"),
    ("gpu-latency", "v100", "gpu-latency/v100.txt"), ("gpu-latency", "a100-40gb", "gpu-latency/a100_40.txt"),
    ("gpu-latency", "a100-80gb", "gpu-latency/a100_80.txt"),
])
def test_source_line_names_file_and_commit(bench, part, txt):
    assert f"file {txt}, commit {COMMIT}" in read_public_csv(bench, part).source


@pytest.mark.parametrize("part, block, threads, row", [
    # gpu-stream/a100_80.txt: blockSize, threads (one block per SM: block x 108), init read scale triad 3pt 5pt
    ("a100-80gb", 32, 3456, (171, 85, 157, 221, 148, 144)),
    ("a100-80gb", 512, 55296, (1897, 1122, 1577, 1659, 1517, 1493)),
    ("a100-80gb", 1024, 110592, (1880, 1769, 1732, 1759, 1696, 1680)),
    # gpu-stream/h100_pcie.txt (114 SMs)
    ("h100-pcie", 32, 3648, (228, 96, 183, 254, 168, 164)),
    ("h100-pcie", 352, 40128, (2016, 908, 1295, 1615, 1269, 1250)),
    ("h100-pcie", 1024, 116736, (2016, 1942, 1704, 1832, 1686, 1683)),
])
def test_stream_rows_as_printed(part, block, threads, row):
    f = read_public_csv("gpu-stream", part)
    # the stored files count two resident blocks per SM, as every stored gpu-stream file of this version
    i = list(f.column("threads_per_block")).index(block)
    assert f.column("resident_threads")[i] == 2 * threads
    kernels = ("init", "read", "scale", "triad", "stencil1d3pt", "stencil1d5pt")
    assert tuple(f.column(k)[i] for k in kernels) == row
    assert len(f.rows) == 32  # block sizes 32 to 1024 in steps of 32


@pytest.mark.parametrize("part, first, last", [
    # gpu-cache/<part>.txt: data set kB and "Eff. bw" GB/s of the first and last rows
    ("a100-80gb", (2, 18806.9), (68320, 2574.3)),
    ("h100-pcie", (2, 24476.7), (68320, 3714.4)),
])
def test_cache_rows_as_printed(part, first, last):
    s = load_size_sweep("gpu-cache", part)
    assert (s.data_set_bytes[0], s.bandwidth_gb_s[0]) == (first[0] * KIB, first[1])
    assert (s.data_set_bytes[-1], s.bandwidth_gb_s[-1]) == (last[0] * KIB, last[1])
    assert len(s.data_set_bytes) == 73
    # gpu-cache/main.cu at the commit that added these numbers (266497d) reads doubles
    assert read_public_csv("gpu-cache", part).value("element_bytes") == "8"


@pytest.mark.parametrize("part, clock, first, last", [
    # gpu-latency/<part>.txt: "clock:" line, then (iterations, clock, data set kB, ns, cycles) per row
    ("v100", 1380, (1, 29.9), (1529075, 437.0)),
    ("a100-40gb", 1410, (1, 36.0), (1529075, 574.6)),
    ("a100-80gb", 1410, (1, 36.0), (340388, 571.8)),
])
def test_latency_rows_as_printed(part, clock, first, last):
    s = load_latency(part)
    assert s.clock_ghz == clock / 1000
    assert (s.data_set_bytes[0], s.latency_cycles[0]) == (first[0] * KIB, first[1])
    assert (s.data_set_bytes[-1], s.latency_cycles[-1]) == (last[0] * KIB, last[1])


def test_sustained_dram_and_the_h100_sxm5_rule():
    # the largest mixed kernel (scale, triad, stencil1d3pt) at 1024 threads per block:
    # A100 80 GB max(1732, 1759, 1696) = 1759; H100 PCIe max(1704, 1832, 1686) = 1832 GB/s
    assert load_device("A100-SXM4-80GB").dram_bandwidth_gb_s == 1759.0
    assert load_device("H100-PCIe-80GB").dram_bandwidth_gb_s == 1832.0
    # H100 SXM5: its 3350 GB/s datasheet peak x the H100 PCIe's sustained/peak 1832 / 2000 = 3068.6
    assert load_device("H100-SXM5-80GB").dram_bandwidth_gb_s == pytest.approx(3350 * 1832 / 2000, abs=0.05)
    # triad (three streams) is the largest kernel on both: no many-streams rate
    assert load_device("A100-SXM4-80GB").dram_many_streams_gb_s is None
    assert load_device("H100-PCIe-80GB").dram_many_streams_gb_s is None


def _log_crossing(x0: float, y0: float, x1: float, y1: float, level: float) -> float:
    return math.exp(math.log(x0) + (y0 - level) / (y0 - y1) * (math.log(x1) - math.log(x0)))


def test_l1_onset_by_hand():
    # gpu-cache/a100_80.txt, rows of 24 to 96 kB (1/8 to 1/2 of the nominal 192 KiB), GB/s:
    a100 = [18878.4, 18910.6, 19082.6, 18978.6, 19206.2, 19032.4, 19258.8, 18962.8, 18978.7, 18707.5, 19147.7,
            18995.8, 19104.5, 18850.4, 19185.8, 19176.9, 19219.2, 18991.7, 19052.6]
    level = 0.9 * statistics.median(a100)
    # the bandwidth falls through 90 % between 172 kB (17194.8) and 204 kB (13549.4)
    onset = _log_crossing(172, 17194.8, 204, 13549.4, level)
    assert onset == pytest.approx(172.53, abs=0.01)
    assert load_device("A100-SXM4-80GB").l1.bytes == round(onset * KIB)
    # gpu-cache/h100_pcie.txt, rows of 32 to 128 kB (1/8 to 1/2 of the nominal 256 KiB):
    h100 = [25167.8, 25230.8, 25229.5, 25244.1, 25223.6, 25184.0, 25189.4, 25216.2, 25204.7, 25224.5, 24929.4,
            25225.7, 25162.7, 25226.1, 25058.7, 25147.7, 25241.7, 25233.7, 25213.9, 25059.6, 25241.2, 25218.0,
            25248.4, 25122.6, 25130.6]
    level = 0.9 * statistics.median(h100)
    # between 204 kB (25266.1) and 236 kB (21689.3)
    onset = _log_crossing(204, 25266.1, 236, 21689.3, level)
    assert onset == pytest.approx(226.53, abs=0.01)
    assert load_device("H100-PCIe-80GB").l1.bytes == round(onset * KIB)


def test_v100_pointer_chase_by_hand():
    # gpu-latency/v100.txt at 1380 MHz. L1: rows of 16 to 64 kB (1/8 to 1/2 of 128 KiB): 18 kB 29.9,
    # 20-39 kB six rows of 30.0, 44-62 kB four of 30.1 -> median 30.0 cycles. L2: rows of 768 to 3072 kB
    # (1/8 to 1/2 of 6 MiB): eleven rows of 215.0, four of 215.1 -> 215.0. DRAM: rows from 48 MiB
    # (8 x the L2): 431.4 431.7 432.5 432.9 433.3 434.8 435.7 436.3 436.6 436.8 437.0 -> 434.8
    v100 = load_device("V100-PCIe-32GB")
    assert v100.l1.latency_ns == round(30.0 / 1.38, 1) == 21.7
    assert v100.l2.latency_ns == round(215.0 / 1.38, 1) == 155.8
    assert v100.dram_latency_ns == round(434.8 / 1.38, 1) == 315.1
    # every model reads these (not the Ampere file's 37, 224, 290 cycles) at the V100's clock
    lat = v100.latencies
    assert (lat.l1, lat.l1 + lat.l2, lat.dram_total) == pytest.approx((21.7 * 1.38, 155.8 * 1.38, 315.1 * 1.38))


def test_a100_parts_keep_the_ampere_latencies_and_validate_compares_them():
    # the launch cost was fitted with AMALI's A100 cycles (ISCA 2025, Table 2: 37, +224, +290)
    for name in ("A100-SXM4-40GB", "A100-PCIe-40GB", "A100-SXM4-80GB"):
        dev = load_device(name)
        assert (dev.l1.latency_ns, dev.l2.latency_ns, dev.dram_latency_ns) == (None, None, None)
        assert (dev.latencies.l1, dev.latencies.l2, dev.latencies.dram) == (37, 224, 290)
    # the pointer chase by hand at 1410 MHz: A100 80 GB L2 rows 5245-16482 kB thirteen of 211.0, 18132 kB
    # 211.3, 19946 kB 255.5 -> 211.0 cycles; DRAM one row from 320 MiB, 340388 kB: 571.8 cycles.
    # A100 40 GB L2: thirteen of 213.0, 213.3, 213.6 -> 213.0; DRAM 573.8 574.3 574.5 574.6 -> 574.4
    _, a100 = latency_datasets()
    points = {p.label: p for p in a100.points}
    assert points["A100-SXM4-80GB L2"].measured == pytest.approx(211.0 / 1.41)
    assert points["A100-SXM4-80GB L2"].predicted == pytest.approx((37 + 224) / 1.41)
    assert points["A100-SXM4-80GB L2"].error_percent == pytest.approx(100 * (261 / 211.0 - 1))  # +23.7 %
    assert points["A100-SXM4-80GB DRAM"].measured == pytest.approx(571.8 / 1.41)
    assert points["A100-SXM4-40GB L2"].measured == pytest.approx(213.0 / 1.41)
    assert points["A100-SXM4-40GB DRAM"].measured == pytest.approx(574.4 / 1.41)
    assert points["A100-SXM4-40GB DRAM"].error_percent == pytest.approx(100 * (551 / 574.4 - 1))  # -4.1 %
    assert a100.within_bounds


def test_devices_holding_the_pointer_chase_agree_with_it():
    own, _ = latency_datasets()
    labels = {p.label for p in own.points}
    assert {"V100-PCIe-32GB L1", "V100-PCIe-32GB DRAM", "H100-PCIe-80GB L2"} <= labels
    assert not any(label.startswith("A100") for label in labels)
    assert own.within_bounds and abs(own.worst.error_percent) < 0.3
