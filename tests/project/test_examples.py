"""The example scripts run as users would run them (the notebook runs through nbmake)."""

import subprocess
import sys

from tests.paths import ROOT

EXAMPLES = ROOT / "examples"


def test_custom_kernel_example_runs():
    result = subprocess.run([sys.executable, str(EXAMPLES / "custom_kernel.py")], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2 and all("Glup/s, limited by" in line for line in lines)


def test_box_convolution_example():
    """63 configurations (blocks 16-256 x 1-16 of 32-1024 threads, folds 1, 2, 4). By hand, on the
    A100 (108 SMs at 1.41 GHz = 152.28e9 SM cycles/s): unfolded, 225 loads + 1 store per update are
    226 warp instructions per 32 updates of one to 1.02 wavefronts each (a row inside one line or
    across two), so the first level allows 21.14-21.56 Glup/s; four outputs per thread are bound
    by the FP32 lanes, 152.28e9 x 64 / 225 FMAs = 43.3 Glup/s."""
    result = subprocess.run([sys.executable, str(EXAMPLES / "box_convolution.py")], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    rows = {tuple(line.split()[:2]): line.split() for line in result.stdout.strip().splitlines()[1:]}
    assert len(rows) == 63
    unfolded, folded = rows[("32x8", "1")], rows[("32x8", "4")]
    assert 21.1 <= float(unfolded[4]) <= 21.6
    assert 0.9 * 43.3 <= float(folded[2]) <= 43.3


def test_tensor_core_gemm_example():
    """The WMMA GEMM compiles to HMMA.16816.F32 on sm_80: one 16x16x16 WMMA operation is two
    16x8x16 MMAs, so the count is even; the interval model's stack sums to its cycles."""
    import json

    import pytest

    from warpspeed.sass.toolchain import find_tool

    if find_tool("nvcc") is None or find_tool("cuobjdump") is None:
        pytest.skip("nvcc/cuobjdump not installed (pip install 'warpspeed[cuda]')")
    result = subprocess.run([sys.executable, str(EXAMPLES / "tensor_core_gemm" / "run.py"), "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["hmma"] >= 2 and doc["hmma"] % 2 == 0
    assert doc["shapes"] == [[16, 8, 16]] and doc["modifiers"] == ["16816.F32"]
    assert sum(doc["cpi_stack"].values()) == pytest.approx(doc["cycles"], rel=1e-9)
    assert doc["cpi_stack"]["stall_math_pipe_throttle"] > 0
