"""NVIDIA first-level families: the A100's tag constants everywhere, 16 threads per cycle into the
tag stage on GA102 and AD102, and the FP bound of the gpu-strides loop. Expected cycles are
derived by hand in each case; the A100's numbers must not move."""

from __future__ import annotations

import csv
import dataclasses
import statistics

import pytest

from warpspeed import Field, Kernel, load_linear
from warpspeed.errors import DeviceError
from warpspeed.hardware.device import load_device
from warpspeed.launch.geometry import make_launch
from warpspeed.memory.addresses import block_cells, compile_kernel
from warpspeed.memory.first_level import NvidiaL1Tex, first_level
from warpspeed.memory.l1 import l1_cycles
from warpspeed.validation.public_l1 import l1_bandwidth_datasets, model_bytes_per_cycle
from warpspeed.validation.strides import StrideRow, predict_row, read_strides_csv, strides_accuracy
from tests.paths import ROOT

PUBLIC = ROOT / "fits" / "data" / "public"


def _row(precision: str, kind: str, arg: int, pitch: int = 0) -> StrideRow:
    return StrideRow(precision, kind, arg, pitch or arg, 1.0, 0.0, 0.0)


def _tag(lines: int) -> float:
    # the A100 fit: max(1, 0.46 + 0.28 L)
    return max(1.0, 0.46 + 0.28 * lines)


@pytest.mark.parametrize("name, family, lanes", [
    ("A100-SXM4-40GB", "ampere-ga100", 32), ("A100-PCIe-40GB", "ampere-ga100", 32),
    ("A100-SXM4-80GB", "ampere-ga100", 32),
    ("H100-PCIe-80GB", "hopper-gh100", 32), ("H100-SXM5-80GB", "hopper-gh100", 32), ("H200", "hopper-gh100", 32),
    ("V100-PCIe-32GB", "volta-gv100", 32),
    ("A40", "ampere-ga102", 16), ("L40", "ada-ad102", 16), ("L40S", "ada-ad102", 16),
])
def test_families_of_the_built_in_devices(name, family, lanes):
    # 8 LD/ST units per SM partition (V100, A100, H100 whitepapers) or 4 (GA102, Ada whitepapers), 4 partitions
    device = load_device(name)
    level = first_level(device)
    assert isinstance(level, NvidiaL1Tex) and level.family == family
    stage = level.tag_stage
    assert (stage.overhead_wavefronts, stage.wavefronts_per_line, stage.lanes_per_cycle) == (0.46, 0.28, lanes)


def test_family_default_and_unknown_family():
    a40 = load_device("A40")
    assert first_level(_with_family(a40, None)).family == "ampere-ga100"
    with pytest.raises(DeviceError, match="turing-tu102.*allowed: volta-gv100"):
        first_level(_with_family(a40, "turing-tu102")).tag_stage


def _with_family(device, family):
    """``device`` with its first level's ``family`` replaced."""
    return dataclasses.replace(device, memory=tuple(dataclasses.replace(level, family=family)
                                                    if level.scope == "cu" else level for level in device.memory))


@pytest.mark.parametrize("row, a100, ga102", [
    # all 32 lanes on one float: one word, one line -> 1 data wavefront, tag 1; GA102: 32 threads at
    # 16 per cycle -> 2
    (_row("float", "stride", 0), 1.0, 2.0),
    # 32 consecutive floats at byte offsets 16 k (k = 0..7): one line at k = 0, two at the others
    # -> tag 1 and 7 x 1.02, data 1; GA102: 2 per load
    (_row("float", "stride", 1), (1.0 + 7 * _tag(2)) / 8, 2.0),
    # float stride 3: 32 distinct banks (gcd(3, 32) = 1) -> 1 data wavefront; 3 lines at k = 0,
    # 4 at the other 7 offsets; GA102: the tag costs 1.30 and 1.58 < 2 -> 2
    (_row("float", "stride", 3), (_tag(3) + 7 * _tag(4)) / 8, 2.0),
    # 32 consecutive doubles: two half warps of 128 B -> 2 data wavefronts >= 2 on both
    (_row("double", "stride", 1), 2.0, 2.0),
    # double stride 53: 32 lanes in 32 distinct lines -> tag 9.42 on both (above 2)
    (_row("double", "stride", 53), _tag(32), _tag(32)),
])
def test_l1_cycles_on_ga102_by_hand(row, a100, ga102):
    assert predict_row(row, load_device("A100-SXM4-40GB")).l1_cycles == pytest.approx(a100)
    assert predict_row(row, load_device("A40")).l1_cycles == pytest.approx(ga102)
    assert predict_row(row, load_device("L40")).l1_cycles == pytest.approx(ga102)


def test_partial_warp_needs_one_tag_cycle_on_ga102():
    # 8 active lanes (domain of 8 cells, block of 32): 8 <= 16 threads enter in one cycle; 32 B in
    # one line and 8 banks -> 1 data wavefront, tag 1
    k = Kernel("eight", (Field("A", 4, (8,)),), (load_linear("A", "x"),), (8, 1, 1))
    launch = make_launch((32, 1, 1), (1, 1, 1), k.domain)
    result = l1_cycles(compile_kernel(k), block_cells(launch), load_device("A40"))
    assert result.cycles_per_lup * 8 == pytest.approx(1.0)


@pytest.mark.parametrize("name, fp64_lanes", [("A40", 2), ("L40", 2), ("A100-SXM4-40GB", 32)])
def test_fma_bound_of_the_strides_loop(name, fp64_lanes):
    # 4 FMAs per 8 loads: a warp's FMA takes 32 / lanes cycles of the SM's FP64 units
    # (CUDA C++ Programming Guide throughput table: 2 per clock and SM for 8.6 and 8.9, 32 for 8.0)
    expected = 4 * 32 / fp64_lanes / 8  # 8.0 on GA102 / AD102, 0.5 on the A100
    prediction = predict_row(_row("double", "stride", 1), load_device(name))
    assert prediction.fp_cycles == pytest.approx(expected)
    assert prediction.cycles == pytest.approx(max(expected, 2.0))  # L1: 2 data wavefronts
    # floats: 128 FP32 lanes on GA102 (4 x 32 / 128 / 8 = 0.125), 64 on the A100 (0.25): never binding
    assert predict_row(_row("float", "block", 64, 4098), load_device(name)).fp_cycles < 0.3


def test_a100_rows_unchanged():
    # every A100 row stays L1-bound (FP 0.5 cycles, the L1 at least 1), and the fit's MAPE is 5.41 %
    rows = read_strides_csv(PUBLIC / "gpu-strides" / "a100.csv")
    a100 = load_device("A100-SXM4-40GB")
    accuracy = strides_accuracy(rows, a100)
    assert all(p.cycles == p.l1_cycles for p in accuracy.predictions)
    assert accuracy.mape_percent == pytest.approx(5.41, abs=0.005)


def _plateau_bytes_per_cycle(part: str, sms: int, clock_ghz: float) -> float:
    # median bandwidth over the data sets of 1/8 to 1/2 of the nominal 128 KiB L1 (16-64 kB), per SM and cycle
    lines = [line for line in (PUBLIC / "gpu-cache" / f"{part}.csv").read_text().splitlines()
             if line and not line.startswith("#")]
    rows = [(float(r["data_set_kb"]), float(r["bandwidth_gb_s"])) for r in csv.DictReader(lines)]
    return statistics.median(bw for kb, bw in rows if 16 <= kb <= 64) / (sms * clock_ghz)


@pytest.mark.parametrize("part, device, sms, clock_ghz, element_bytes, model", [
    # 4-byte loads at 16 threads per cycle: 64 B per cycle and SM (A40: 84 SMs, 1.74 GHz; L40: 142, 2.49)
    ("a40", "A40", 84, 1.74, 4, 64.0),
    ("l40", "L40", 142, 2.49, 4, 64.0),
    # 8-byte loads on the V100 (80 SMs, 1.38 GHz): half a warp (128 B) per data wavefront
    ("v100", "V100-PCIe-32GB", 80, 1.38, 8, 128.0),
])
def test_l1_bandwidth_per_sm_and_cycle(part, device, sms, clock_ghz, element_bytes, model):
    assert model_bytes_per_cycle(device, element_bytes) == pytest.approx(model)
    assert _plateau_bytes_per_cycle(part, sms, clock_ghz) == pytest.approx(model, rel=0.02)
    dataset, = l1_bandwidth_datasets()
    point = next(p for p in dataset.points if p.label.startswith(f"{device},"))
    assert (point.predicted, point.measured) == pytest.approx((model, _plateau_bytes_per_cycle(part, sms, clock_ghz)))
