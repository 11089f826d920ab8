"""benchmarks/gpu/: the scripts for a GPU machine, checked without one (their wheels are not in
the repository; ``run.sh --dry-run`` after ``prepare.sh`` checks the offline install)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

GPU = Path(__file__).resolve().parent.parent / "benchmarks" / "gpu"
ROOT = GPU.parent.parent


def _names(requirements) -> dict[str, str]:
    out = {}
    for req in requirements:
        m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(.*)", req)
        out[m.group(1).lower().replace("_", "-")] = m.group(2).replace(" ", "")
    return out


def test_carried_requirements_are_the_packages_dependencies_the_gpu_machine_lacks():
    """requirements.txt = [project.dependencies] without numpy (on the GPU machine) and matplotlib
    (plots only), plus the pystencils extra, with the same version bounds."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = _names(project["dependencies"]) | _names(project["optional-dependencies"]["pystencils"])
    del wanted["numpy"], wanted["matplotlib"]
    lines = [line for line in (GPU / "requirements.txt").read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert _names(lines) == wanted


def test_scripts_parse_and_refuse_unknown_options():
    for script in ("run.sh", "prepare.sh"):
        subprocess.run(["bash", "-n", str(GPU / script)], check=True)
        done = subprocess.run(["bash", str(GPU / script), "--no-such-option"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2
        assert done.stderr.startswith("error: unknown option --no-such-option")


def test_roofline_script_starts_without_cupy():
    done = subprocess.run([sys.executable, str(GPU / "roofline_power.py"), "--help"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "--its" in done.stdout


def test_wheels_and_results_stay_out_of_git():
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert {"benchmarks/gpu/wheels/", "benchmarks/gpu/out/", "benchmarks/gpu/.venv/"} <= set(ignored)
