"""benchmarks/gpu/: the scripts for a GPU machine, checked without one (their wheels are not in
the repository; ``run.sh --dry-run`` after ``prepare.sh`` checks the offline install)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from tests.paths import ROOT

GPU = ROOT / "benchmarks" / "gpu"


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


def _mechanisms():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mechanisms", GPU / "mechanisms.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mechanisms_script_refuses_bad_sweeps_and_needs_cupy():
    done = subprocess.run([sys.executable, str(GPU / "mechanisms.py"), "--out", "unused", "--only", "nope"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("error: unknown sweep 'nope'")
    assert done.stderr.count("\n") == 1


def test_mechanisms_copy_source_loads_before_it_stores():
    """The generated copy: 19 shifted loads (the D3Q19 offsets, x fastest), then 19 stores of the
    centre cell, each store depending on every load; extra live doubles add volatile loads."""
    m = _mechanisms()
    src = m._copy_source("k", "double", 19, True, live=2)
    loads = re.findall(r"double v(\d+) = src\[(\d+)LL \* stride \+ c \+ \((-?\d+)LL \+ \((-?\d+)LL\) \* px "
                       r"\+ \((-?\d+)LL\) \* pxy\)\];", src)
    assert [int(i) for i, *_ in loads] == list(range(19))
    assert [tuple(-int(v) for v in o[2:]) for o in loads] == list(m.D3Q19)
    assert src.count("dst[") == 19 + 1 and src.index("dst[") > src.index("v18 = src")
    assert src.count("volatile const double*") == 2


def test_mechanisms_sources_compile_for_sm_90():
    """Where nvcc is installed (the `cuda` extra), every kernel source compiles for Hopper."""
    import shutil

    import pytest

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc on PATH")
    m = _mechanisms()
    sources = [m._copy_source("a", "double", 19, True, 16), m._copy_source("b", "float", 38, False),
               m._STREAM_SRC, m._CHASE_SRC]
    for n, source in enumerate(sources):
        done = subprocess.run([nvcc, "-arch=sm_90", "--ptx", "-x", "cu", "-", "-o", "/dev/null"], input=source,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (n, done.stderr[-400:])
