"""The first-level (L0) cost of RDNA devices: hand-derived cases and the calibration rows."""

from __future__ import annotations

import pytest

from warpspeed.hardware.device import load_device
from warpspeed.memory.first_level import CdnaBankedL1, RdnaL0, first_level
from warpspeed.validation.strides import StrideRow, predict_row, read_strides_csv, strides_accuracy
from tests.paths import ROOT

RDNA2 = ROOT / "fits" / "data" / "public" / "gpu-strides" / "rdna2.csv"


def _row(precision: str, kind: str, arg: int, pitch: int = 0) -> StrideRow:
    return StrideRow(precision, kind, arg, pitch, 1.0, 0.0, 0.0)


@pytest.mark.parametrize("precision, stride, expected", [
    ("float", 0, 1.0),   # one word for every lane: one bank, one line
    ("float", 1, 1.0),   # 32 lanes x 4 B in 32 banks, one 128 B line (tag 0.28)
    ("float", 2, 2.0),   # dwords 2i: 16 banks twice each -> 2 data wavefronts; 2 lines (tag 0.56)
    ("float", 8, 8.0),   # dwords 8i: 4 banks, 8 lanes each -> 8; 8 lines (tag 2.24)
    ("float", 31, 31 * 0.28),  # 31 is odd: 32 banks once each (1); 31 lines: tag 0.28 x 31 = 8.68
    ("double", 1, 4.0),  # 64 B per cycle for 8 B lanes: groups of 8 lanes, 8 x 2 dwords in 16 banks -> 4 groups
    ("double", 4, 8.0),  # dwords 8i, 8i+1 for 8 lanes: banks 0, 8, 16, 24 (+1) twice each -> 2 per group, 8
    ("double", 16, 32.0),  # dwords 32i: one bank, 8 words per group -> 8 per group, 32
])
def test_rdna_first_level_by_hand(precision, stride, expected):
    """Cycles per load of 32 threads on the RX 6900 XT's L0 model: the larger of the data
    wavefronts (32 banks of 4 B; 128 B per cycle for 4 B lanes, 64 B for 8 B lanes) and the tag
    stage's 0.28 per distinct 128 B line (at least 1)."""
    device = load_device("RX6900XT")
    assert predict_row(_row(precision, "stride", stride), device).cycles == pytest.approx(expected)


def test_rdna_pipeline_parameters_and_cdna_unchanged():
    rx = first_level(load_device("RX6900XT"))
    assert isinstance(rx, RdnaL0)
    assert rx.data_bytes_per_cycle(4) == 128 and rx.data_bytes_per_cycle(8) == 64
    assert rx.tag_stage.wavefronts_per_line == pytest.approx(0.28)
    mi210 = first_level(load_device("MI210"))  # CDNA: the banked vL1D, no calibrated RDNA-style tag stage
    assert isinstance(mi210, CdnaBankedL1) and mi210.tag_stage is None


def test_rdna2_calibration_rows():
    """All 144 RX 6900 XT rows within 10 % MAPE (in-sample: the tag cost per line is fitted to
    them); the strided rows alone within 8 %; the worst rows are 2-D blocks whose rows fall into
    one L0 set and miss, which the first-level cost does not model."""
    rows = read_strides_csv(RDNA2)
    device = load_device("RX6900XT")
    assert len(rows) == 144
    assert strides_accuracy(rows, device).mape_percent <= 10.0
    assert strides_accuracy(tuple(r for r in rows if r.kind == "stride"), device).mape_percent <= 8.0
    worst = strides_accuracy(rows, device).worst.row
    assert worst.kind == "block" and worst.pitch == 4098
