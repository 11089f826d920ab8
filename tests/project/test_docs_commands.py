"""Every shell command and Python example in README.md and docs/*.md runs as written.

The commands are read from the fenced ``bash``/``sh`` blocks and the examples from the ``python``
blocks, so a changed option, a renamed file or a missing example file fails here. Each command
runs in a fresh directory holding a copy of ``examples/`` and links to ``fits/`` and
``benchmarks/`` (what the documentation's paths name), so the files it writes never land in the
checkout. A few fast commands run by default; all of them run with ``pytest -m slow`` (and in CI).

What is not run, and why (checked by :func:`classify`):

- ``pip install ...`` and ``pytest``: CI runs the install and the tests themselves, word for word;
  here the extras a ``pip install`` names are checked to exist.
- steps that need an NVIDIA GPU (``warpspeed measure``, ``warpspeed tune`` without ``--simulate``,
  ``warpspeed calibrate`` without
  ``--fit-only``, ``benchmarks/gpu/*.py``, Python blocks that import cupy): without cupy they must fail with a one-line ``error:`` saying so (the
  documentation says what they print); with cupy they are not started (a campaign takes hours).
- steps that read what such a GPU step writes, and ``dask`` cluster commands and code (a scheduler
  host).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.paths import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: The `warpspeed` command, run by this interpreter from the checkout.
CLI = "from warpspeed.cli import main; main()"
#: Commands of the fast default run (seconds each).
FAST = ("warpspeed devices", "warpspeed fit examples/points.csv", "warpspeed predict --block 32,8,4 --fold 1,2,1")
#: Seconds one command may take (validate and scan-domain take about a minute on 2 busy cores).
TIMEOUT_S = 900
_BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
HAS_CUPY = importlib.util.find_spec("cupy") is not None


def _blocks(language: set[str]) -> list[tuple[str, str]]:
    """(document, block text) of every fenced block in ``language``."""
    return [(doc.relative_to(ROOT).as_posix(), m.group(2)) for doc in DOCS
            for m in _BLOCK.finditer(doc.read_text()) if m.group(1) in language]


def shell_commands() -> list[tuple[str, str]]:
    """(document, command line) of every shell command; comments and blank lines left out."""
    out = []
    for doc, text in _blocks({"bash", "sh"}):
        for line in text.splitlines():
            if shlex.split(line, comments=True):
                out.append((doc, line.strip()))
    return out


def _needs_gpu(words: list[str]) -> bool:
    calibrate = words[:2] == ["warpspeed", "calibrate"] and "--fit-only" not in words
    tune = words[:2] == ["warpspeed", "tune"] and "--simulate" not in words
    return (words[:2] == ["warpspeed", "measure"] or calibrate or tune
            or any(w.startswith("benchmarks/gpu/") for w in words))


def classify(commands: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(document, command, how): ``run``, ``gpu`` (must fail cleanly without cupy) or
    ``skip: why``."""
    out, from_gpu = [], set()
    for doc, line in commands:
        words = shlex.split(line, comments=True)
        if words[0] == "pip":
            out.append((doc, line, "extras"))
        elif words[0] == "pytest":
            out.append((doc, line, "skip: CI runs the test suite itself"))
        elif words[0] == "dask" or "--dask" in words:
            out.append((doc, line, "skip: needs a Dask cluster (a scheduler host)"))
        elif _needs_gpu(words):
            if "--out" in words:
                from_gpu.add(words[words.index("--out") + 1])
            out.append((doc, line, "gpu"))
        elif any(w in from_gpu for w in words):
            out.append((doc, line, "skip: reads the file a GPU step before it writes"))
        else:
            out.append((doc, line, "run"))
    return out


CASES = classify(shell_commands())


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(ROOT / "examples", work / "examples")
    for name in ("fits", "benchmarks"):
        (work / name).symlink_to(ROOT / name)
    return work


def _argv(words: list[str]) -> list[str]:
    if words[0] == "warpspeed":
        return [sys.executable, "-c", CLI, *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    return words


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}


def _run(line: str, how: str, tmp_path: Path) -> None:
    words = shlex.split(line, comments=True)
    if how == "extras":
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
        for word in words:
            for named in re.findall(r"\[([\w,-]+)\]", word):
                assert set(named.split(",")) <= set(extras), line
        return
    if how.startswith("skip"):
        pytest.skip(how[len("skip: "):])
    if how == "gpu" and HAS_CUPY:
        pytest.skip("a GPU campaign; not started from the tests")
    proc = subprocess.run(_argv(words), cwd=_workdir(tmp_path), capture_output=True, text=True, env=_env(),
                          timeout=TIMEOUT_S)
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output[-3000:]
    if how == "gpu":  # without cupy: one clear line, nonzero exit
        assert proc.returncode != 0 and "error:" in output.lower() and "cupy" in output, output[-3000:]
    else:
        assert proc.returncode == 0, f"{line}\n{output[-3000:]}"


def _id(case: tuple[str, str, str]) -> str:
    return f"{case[0]}: {case[1][:60]}"


@pytest.mark.parametrize("case", [c for c in CASES if c[1].startswith(FAST) or c[2] == "extras"], ids=_id)
def test_fast_documented_commands(case, tmp_path):
    _run(case[1], case[2], tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if not (c[1].startswith(FAST) or c[2] == "extras")], ids=_id)
def test_documented_commands(case, tmp_path):
    _run(case[1], case[2], tmp_path)


def test_every_command_is_classified_and_most_run():
    kinds = [how for _, _, how in CASES]
    assert kinds.count("run") >= 30 and kinds.count("gpu") >= 8
    assert all(how in ("run", "gpu", "extras") or how.startswith("skip: ") for how in kinds)


PYTHON_BLOCKS = _blocks({"python"})


@pytest.mark.slow
@pytest.mark.parametrize("doc, code", PYTHON_BLOCKS, ids=[f"{d}: {c.splitlines()[0][:50]}" for d, c in PYTHON_BLOCKS])
def test_documented_python(doc, code, tmp_path):
    if "import cupy" in code:
        pytest.skip("needs an NVIDIA GPU and cupy")
    if "tcp://host" in code:
        pytest.skip("needs a Dask cluster (a scheduler host)")
    work = _workdir(tmp_path)
    if "study-results.csv" in code:  # reads what the study command above it in the page writes
        subprocess.run(_argv(["warpspeed", "study", "examples/study.toml"]), cwd=work, check=True,
                       capture_output=True, env=_env(), timeout=TIMEOUT_S)
    script = tmp_path / "example.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], cwd=work, capture_output=True, text=True,
                          env=_env(), timeout=TIMEOUT_S)
    assert proc.returncode == 0, f"{doc}\n{code}\n{proc.stderr[-3000:]}"
