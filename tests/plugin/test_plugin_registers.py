"""pystencils plugin: registers per thread from ptxas, or estimated without nvcc."""

from __future__ import annotations

import re
import subprocess

import pytest

ps = pytest.importorskip("pystencils")

from pystencils_plugin import cuda_arch, extract_kernel, register_count, workload_kernel  # noqa: E402
from pystencils_plugin.registers import find_nvcc  # noqa: E402


@pytest.fixture(scope="module")
def star7():
    return workload_kernel("star3d-r1", domain=(16, 8, 8))


#: Registers of the 7-point stencil (star7 below) for sm_80, counted by hand per CUDA release:
#: ``nvcc -ptx`` of its standalone source, then ``ptxas -v -arch=sm_80`` ("Used 22 registers"
#: with CUDA 13.0, V13.0.88). Register allocation changes between releases.
HAND_CHECKED_SM80 = {"13.0": 22}


def _nvcc_release() -> str | None:
    nvcc = find_nvcc()
    if nvcc is None:
        return None
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"release (\d+\.\d+)", out)
    return match.group(1) if match else None


@pytest.mark.skipif(find_nvcc() is None, reason="no nvcc on PATH or from the nvidia-cuda-nvcc wheel")
def test_ptxas_register_count(star7):
    release = _nvcc_release()
    if release not in HAND_CHECKED_SM80:
        pytest.skip(f"no hand-checked count for CUDA {release}")
    counted = register_count(star7, arch="ampere")
    assert counted.source == "ptxas", counted.detail
    assert counted.registers == HAND_CHECKED_SM80[release]
    extracted = extract_kernel(star7)
    assert extracted.registers_source == "ptxas"
    assert extracted.kernel.registers == counted.registers


def test_estimate_without_nvcc(star7, monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr("warpspeed.sass.toolchain.WHEEL_BIN_DIRS", ())
    extracted = extract_kernel(star7)
    assert extracted.registers_source == "estimate"
    assert "nvcc not found" in extracted.registers_detail
    # by hand: 16 base + 2 per pointer (src, dst) + 2 per distinct double loaded (7 points)
    assert extracted.kernel.registers == 16 + 2 * 2 + 2 * 7


def test_given_registers(star7):
    extracted = extract_kernel(star7, registers=40)
    assert extracted.registers_source == "given" and extracted.kernel.registers == 40


def test_compile_failure_falls_back(star7, monkeypatch):
    """A failing compile (here: an nvcc that exits 1 with a message) falls back to the estimate
    and says why."""
    calls = []

    def failing_run(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, stdout="", stderr="kernel.cu(3): error: made to fail")

    monkeypatch.setattr("pystencils_plugin.registers.find_nvcc", lambda: "/opt/fake/nvcc")
    monkeypatch.setattr("pystencils_plugin.registers.subprocess.run", failing_run)
    counted = register_count(star7, arch="ampere")
    compiles = [c for c in calls if "--list-gpu-arch" not in c]
    assert len(compiles) == 1 and compiles[0][0] == "/opt/fake/nvcc" and "-arch=sm_80" in compiles[0]
    assert counted.source == "estimate"
    assert "failed (exit 1)" in counted.detail and "made to fail" in counted.detail
    # the fallback is the estimate: 16 base + 2 per pointer (src, dst) + 2 per distinct double (7)
    assert counted.registers == 16 + 2 * 2 + 2 * 7


@pytest.mark.parametrize("name, arch", [("volta", "sm_70"), ("A100-SXM4-40GB", "sm_80"), ("ada", "sm_89"),
                                        ("hopper", "sm_90"), ("H100", "sm_90"), ("sm_86", "sm_86")])
def test_cuda_arch(name, arch):
    assert cuda_arch(name) == arch


def test_unknown_arch():
    with pytest.raises(ValueError, match="unknown GPU architecture"):
        cuda_arch("voodoo")


@pytest.mark.skipif(find_nvcc() is None, reason="no nvcc on PATH or from the nvidia-cuda-nvcc wheel")
def test_counts_are_cached_on_disk(star7, tmp_path, monkeypatch):
    """A count compiled once is read from the cache directory afterwards: no nvcc run, the same
    count and the same detail."""
    from pystencils_plugin import registers

    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path))
    first = register_count(star7, arch="ampere")
    assert first.source == "ptxas"
    assert len(list((tmp_path / registers.REGISTER_CACHE).glob("*.json"))) == 1
    assert registers.registers_cached(star7, "ampere")

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(registers, "_compile", no_compile)
    assert register_count(star7, arch="ampere") == first


def test_failures_are_not_cached_and_misses_compile_concurrently(star7, tmp_path, monkeypatch):
    """Several sources missing from the cache are compiled on more than one thread; a failed
    compile leaves no entry (the next call tries again)."""
    import threading

    from pystencils_plugin import registers

    threads, sources = set(), []
    barrier = threading.Barrier(2, timeout=10)

    def fake(nvcc, source, arch, include, timeout_s):
        threads.add(threading.get_ident())
        sources.append(source)
        barrier.wait()  # returns only when two compiles run at the same time
        return (None, "made to fail") if "fail" in source else (40, "")

    fake_nvcc = tmp_path / "nvcc"
    fake_nvcc.write_text("#!/bin/sh\necho 'Build cuda_test'\n")
    fake_nvcc.chmod(0o755)
    monkeypatch.setattr(registers, "_compile", fake)
    monkeypatch.setattr(registers, "compile_target", lambda nvcc, arch: (arch, ""))
    monkeypatch.setattr(registers.os, "cpu_count", lambda: 2)
    got = registers.compile_register_counts(["// ok\n", "// fail\n"], "sm_80", nvcc=str(fake_nvcc), cache=tmp_path)
    assert got[0][0] == 40 and got[1] == (None, "made to fail")
    assert len(threads) == 2 and sorted(sources) == ["// fail\n", "// ok\n"]
    assert len(list((tmp_path / registers.REGISTER_CACHE).glob("*.json"))) == 1
