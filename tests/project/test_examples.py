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
