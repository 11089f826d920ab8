"""The example scripts run as users would run them (the notebook runs through nbmake)."""

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_custom_kernel_example_runs():
    result = subprocess.run([sys.executable, str(EXAMPLES / "custom_kernel.py")], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2 and all("Glup/s, limited by" in line for line in lines)
