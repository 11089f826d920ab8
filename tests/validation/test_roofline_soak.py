"""The power-fit benchmark measured on a GPU at hand (warpspeed.validation.roofline_soak): its
kernel compiles to the instruction mix the benchmark's description states, and its runs are
what ``warpspeed power-fit`` reads. Expected counts come from the description (2 its FMAs, 4
additions and 4 loads per loop trip) and hand arithmetic."""

from __future__ import annotations

import re
import subprocess

import pytest

from warpspeed.calibration.power import measured_lups_per_s, read_runs
from warpspeed.sass.toolchain import find_tool
from warpspeed.validation.plan import MeasurementError
from warpspeed.validation.power_sampling import PowerReading
from warpspeed.validation.roofline_soak import (
    cuda_source,
    function_name,
    grid_blocks,
    run_record,
    updates_per_launch,
    write_runs,
)


def test_runs_are_power_fit_input(tmp_path):
    """1056 blocks (132 SMs x 8) of 256 threads x 4000 rows: 540,672,000 updates (two element
    pairs each) per launch; 100 launches in 2 s at 600 W. power-fit reads the file, and its
    conversion of GFLOP/s gives back the updates per second."""
    blocks = grid_blocks(132, 8)
    assert blocks == 1056 and updates_per_launch(blocks) == 1056 * 256 * 4000 // 2 == 540_672_000
    reading = PowerReading(watts=600.0, sm_clock_mhz=1980.0, samples=20, window_s=2.0)
    rows = [run_record("NVIDIA H200", its, blocks, 100, 2.0, reading) for its in (0, 8, 64)]
    ups = 100 * 540_672_000 / 2.0
    assert rows[1]["gb_s"] == pytest.approx(ups * 16 / 1e9)  # 16 B loaded per update
    assert rows[1]["gflop_s"] == pytest.approx(ups * (4 + 2 * 2 * 8) / 1e9)  # 4 additions, 2 x 8 FMAs
    assert rows[2]["flop_per_byte"] == pytest.approx((4 + 4 * 64) / 16)
    path = write_runs(tmp_path / "runs.csv", rows, ["measured with warpspeed.validation.roofline_soak"])
    runs = read_runs(path)
    assert [(r.its, r.clock_mhz, r.watts) for r in runs] == [(0, 1980.0, 600.0), (8, 1980.0, 600.0), (64, 1980.0, 600.0)]
    assert [measured_lups_per_s(r) for r in runs] == pytest.approx([ups] * 3)


def test_bad_runs():
    with pytest.raises(MeasurementError):
        run_record("x", 0, 10, 0, 1.0, PowerReading(1.0, 1.0, 1, 0.0))
    with pytest.raises(MeasurementError):
        grid_blocks(0, 8)
    with pytest.raises(MeasurementError):
        cuda_source(-1)


@pytest.mark.skipif(find_tool("nvcc") is None or find_tool("cuobjdump") is None, reason="needs nvcc and cuobjdump")
@pytest.mark.parametrize("its", [0, 8])
def test_the_kernel_compiles_to_the_described_loop(tmp_path, its):
    """Per loop trip the compiled sm_90 loop has 4 global loads, 2 its fused multiply-adds and 4
    additions (2 subtractions, 2 to the sum); nothing is stored but the one guarded value per block."""
    cu = tmp_path / "k.cu"
    cu.write_text(cuda_source(its))
    cubin = tmp_path / "k.cubin"
    subprocess.run([find_tool("nvcc"), "-cubin", "-arch=sm_90", "-O3", "-o", str(cubin), str(cu)], check=True,
                   capture_output=True, timeout=300)
    sass = subprocess.run([find_tool("cuobjdump"), "-sass", str(cubin)], check=True, capture_output=True, text=True,
                          timeout=120).stdout
    assert function_name(its) in sass
    ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9]+)(?:\.[A-Z0-9.]+)?\s", sass)
    assert ops.count("LDG") == 4
    assert ops.count("STG") == 1
    assert (ops.count("FFMA"), ops.count("FADD")) == (2 * its, 4)
