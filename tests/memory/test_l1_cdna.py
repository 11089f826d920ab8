"""The documented-rates CDNA vector L1 (``family = "cdna-vl1d"``) by brute-force enumeration.

The built-in CDNA parts use the banked rule (``cdna-vl1d-banked``, tests/memory/test_l1_cdna_banked.py);
the documented-rates strategy stays available to device files that name its family, and is tested
here on the CDNA parts with that family.

The expected cycles are derived here, independently of ``warpspeed.memory.l1``, from the rates
AMD documents (cited in the module and in docs/amd.md):

* address unit (TA): 16 lanes per clock for 32-bit loads, 4 lanes per clock for wider ones
  (AMD GPUOpen, "Understanding Memory Coalescing on GCN", 2016: a wave64 in 4 clocks for
  single-channel loads, 16 clocks for multi-channel ones);
* tag: one vL1D cache-line access per clock (ROCm Compute Profiler: the vL1D bandwidth peak is
  one 64 B line per clock and CU on MI200, one 128 B line on MI300), counted per clock group
  of lanes (the lanes the TA processes in one clock);
* data: 64 B per clock and CU on MI100/MI200, 128 B on MI300.

Every address of every gpu-strides row (1024 threads, 8 loads ``base + 4 k``) is enumerated in
plain Python; the benchmark reports cycles per load of 32 threads, half a wave64 instruction.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import statistics

import pytest

from warpspeed.errors import DeviceError
from warpspeed.hardware.device import load_device
from warpspeed.memory.first_level import CdnaVectorL1, first_level
from warpspeed.validation.public_l1 import cdna_l1_bandwidth_datasets, model_bytes_per_cycle
from warpspeed.validation.strides import StrideRow, predict_row
from tests.paths import ROOT

PUBLIC = ROOT / "fits" / "data" / "public"

# documented rates (see the module docstring)
TA_LANES_PER_CLOCK = {4: 16, 8: 4, 16: 4}
LINE_AND_DATA_BYTES = {"MI100": (64, 64), "MI210": (64, 64), "MI300X": (128, 128)}
WAVE = 64
THREADS, LOADS, OFFSET, PITCH = 1024, 8, 4, 4098
ELEMENT = {"float": 4, "double": 8}


def _documented(name: str):
    """The built-in device ``name`` with the documented-rates first level (``family = "cdna-vl1d"``)."""
    device = load_device(name)
    return dataclasses.replace(device, memory=tuple(dataclasses.replace(level, family="cdna-vl1d")
                                                    if level.scope == "cu" else level for level in device.memory))


def _row(precision: str, kind: str, arg: int) -> StrideRow:
    return StrideRow(precision, kind, arg, PITCH if kind == "block" else 0, 1.0, 0.0, 0.0)


def _base(kind: str, arg: int, t: int) -> int:
    """Element index of thread t's first load (gpu-strides/main.cu address expressions)."""
    if kind == "stride":
        return (t % 64) * arg
    tx, ty = t % arg, t // arg
    return (tx % 64) + ((ty % 32) + 1) * PITCH


def _expected_cycles_per_32_threads(device: str, precision: str, kind: str, arg: int) -> float:
    line, data_bytes = LINE_AND_DATA_BYTES[device]
    elem = ELEMENT[precision]
    group = TA_LANES_PER_CLOCK[elem]
    total = 0
    for wave in range(THREADS // WAVE):
        threads = range(wave * WAVE, (wave + 1) * WAVE)
        for k in range(LOADS):
            address = tag = data = 0
            for g in range(0, WAVE, group):
                addrs = [(_base(kind, arg, t) + OFFSET * k) * elem for t in list(threads)[g:g + group]]
                address += 1
                tag += len({a // line for a in addrs} | {(a + elem - 1) // line for a in addrs})
                data += math.ceil(len(addrs) * elem / data_bytes)
            total += max(address, tag, data)
    return total / (THREADS * LOADS / 32)


ROWS = ([(p, "stride", s) for p in ELEMENT for s in range(65)]
        + [(p, "block", w) for p in ELEMENT for w in (1, 2, 4, 8, 16, 32, 64)])


@pytest.mark.parametrize("device", ["MI210", "MI300X"])
def test_every_stride_and_block_width_by_enumeration(device):
    dev = _documented(device)
    for precision, kind, arg in ROWS:
        expected = _expected_cycles_per_32_threads(device, precision, kind, arg)
        assert predict_row(_row(precision, kind, arg), dev).cycles == pytest.approx(expected), (precision, kind, arg)


@pytest.mark.parametrize("precision, kind, arg, expected", [
    # stride 0: every lane one address -> 1 line per quarter-wave; 4 address clocks per wave64 -> 4 / 2
    ("float", "stride", 0, 2.0),
    # stride 1: quarter-waves of 64 B at offsets 16 k B: aligned (k = 0, 4) 1 line, else 2 -> 4 or 8
    # tag clocks per wave, mean 7 -> 3.5 per 32 threads
    ("float", "stride", 1, 3.5),
    # stride 2: 128 B per quarter-wave, 2 lines aligned (k = 0, 4), 3 otherwise -> (2 x 8 + 6 x 12) / 8 = 11
    ("float", "stride", 2, 5.5),
    # stride 16 (64 B): every lane its own line -> 64 per wave
    ("float", "stride", 16, 32.0),
    # doubles: 4 lanes per clock -> 16 clocks per wave whatever the lines (stride 0 and 1)
    ("double", "stride", 0, 8.0),
    ("double", "stride", 1, 8.0),
    # 1-wide columns: 64 rows 16392 B apart, every lane its own line -> 64 per wave
    ("float", "block", 1, 32.0),
])
def test_mi210_by_hand(precision, kind, arg, expected):
    assert predict_row(_row(precision, kind, arg), _documented("MI210")).cycles == pytest.approx(expected)


def test_cdna_devices_select_the_vector_l1_and_bad_family_is_an_error():
    for name, (line, data_bytes) in LINE_AND_DATA_BYTES.items():
        level = first_level(_documented(name))
        assert isinstance(level, CdnaVectorL1)
        stages = level.stages
        assert (stages.line_bytes, stages.data_bytes_per_cycle) == (line, data_bytes)
        assert (stages.lanes_per_cycle(4), stages.lanes_per_cycle(8)) == (16, 4)
    assert not isinstance(first_level(load_device("RX6900XT")), CdnaVectorL1)
    assert not isinstance(first_level(load_device("A100-SXM4-40GB")), CdnaVectorL1)
    mi210 = load_device("MI210")
    bad = dataclasses.replace(mi210, memory=tuple(dataclasses.replace(level, family="cdna-l0")
                                                  if level.scope == "cu" else level for level in mi210.memory))
    with pytest.raises(DeviceError, match="cdna-vl1d"):
        first_level(bad)


def _plateau(part: str, cus: int, clock_ghz: float, nominal_kib: int = 16) -> float:
    lines = [line for line in (PUBLIC / "gpu-cache" / f"{part}.csv").read_text().splitlines()
             if line and not line.startswith("#")]
    rows = [(float(r["data_set_kb"]), float(r["bandwidth_gb_s"])) for r in csv.DictReader(lines)]
    return statistics.median(bw for kb, bw in rows if nominal_kib / 8 <= kb <= nominal_kib / 2) / (cus * clock_ghz)


def test_cdna_gpu_cache_plateau_against_the_documented_rates():
    # float4 loads: 4 lanes x 16 B per clock = 64 B, one 64 B line per clock, 64 B data per clock;
    # the banked rule: a quarter-wave of 16 contiguous float4 is one coalesced run of 256 B = 4 clocks of 64 B
    for name in ("MI100", "MI210"):
        assert model_bytes_per_cycle(name, 16) == pytest.approx(64.0)
    mi100, mi210 = _plateau("mi100", 120, 1.502), _plateau("mi210", 104, 1.7)
    assert mi210 == pytest.approx(59.8, abs=0.1) and mi100 == pytest.approx(50.4, abs=0.1)
    dataset, = cdna_l1_bandwidth_datasets()
    assert [p.label for p in dataset.points] == ["MI100, 16 B loads", "MI210, 16 B loads"]
    assert [p.measured for p in dataset.points] == pytest.approx([mi100, mi210])
    mape = 100 * (abs(64 - mi100) / mi100 + abs(64 - mi210) / mi210) / 2
    assert dataset.mape_percent == pytest.approx(mape)


def test_rdna_first_level_unchanged_against_its_gpu_cache_plateau():
    # RDNA 2 L0, 16 B loads at 64 B per cycle (wide_bytes_per_cycle, derived from gpu-strides doubles):
    # the independent gpu-cache plateau of the RX 6900 XT (80 CUs, 2.25 GHz) is 68.2 B per cycle
    assert model_bytes_per_cycle("RX6900XT", 16) == pytest.approx(64.0)
    assert _plateau("rx6900xt", 80, 2.25) == pytest.approx(64.0, rel=0.08)
