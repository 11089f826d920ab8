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
    from pystencils_plugin.registers import compile_register_count, standalone_cuda_source

    compiled, detail = compile_register_count(standalone_cuda_source(star7), "sm_80")
    assert compiled == HAND_CHECKED_SM80[release], detail
    # register_count gives the same count: ptxas' own, or that of the same code on a shipped
    # domain (star3d-r1 at 256^3, 512^3, 640x512x512; only the constants differ)
    counted = register_count(star7, arch="ampere")
    assert counted.source in ("ptxas", "shipped") and counted.registers == compiled, counted.detail
    extracted = extract_kernel(star7)
    assert extracted.kernel.registers == counted.registers


def test_estimate_without_nvcc(star7, monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr("warpspeed.sass.toolchain.WHEEL_BIN_DIRS", ())
    extracted = extract_kernel(star7)
    # the 7-point stencil on 16x8x8 is the code the table ships for 256^3 with other constants:
    # its count there is ptxas' hand-checked 22 (HAND_CHECKED_SM80, CUDA 13.0)
    assert extracted.registers_source == "shipped"
    assert "another domain" in extracted.registers_detail
    assert extracted.kernel.registers == HAND_CHECKED_SM80["13.0"]


def test_learned_estimate_without_nvcc(monkeypatch):
    """A stencil whose code the table does not ship (9 loads, one store, double) is interpolated
    from the shipped stencils by load registers (2 per double loaded): nearest, the 2D 5-point
    folded 2 in y (8 loads: 16 load registers, 24 registers on sm_80) and the 7-point (7 loads: 14,
    22), so 24 + (22 - 24) / (14 - 16) x (18 - 16) = 26."""
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr("warpspeed.sass.toolchain.WHEEL_BIN_DIRS", ())
    src, dst = ps.fields("src, dst: double[34, 34, 34]")
    offsets = [(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1), (1, 1, 0), (-1, -1, 0)]
    update = [ps.Assignment(dst.center, sum(src[o] for o in offsets) / 9)]
    kernel = ps.create_kernel(update, ps.CreateKernelConfig(target=ps.Target.CUDA))
    counted = register_count(kernel, arch="ampere")
    assert counted.source == "estimate" and "interpolated" in counted.detail, counted.detail
    assert counted.registers == 26


def test_given_registers(star7):
    extracted = extract_kernel(star7, registers=40)
    assert extracted.registers_source == "given" and extracted.kernel.registers == 40


def test_compile_failure_falls_back(star7, monkeypatch):
    """A failing compile (here: an nvcc that exits 1 with a message) falls back to what is known
    without a compiler (here the count shipped for the same code) and says why."""
    calls = []

    def failing_run(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, stdout="", stderr="kernel.cu(3): error: made to fail")

    monkeypatch.setattr("pystencils_plugin.registers.find_nvcc", lambda: "/opt/fake/nvcc")
    monkeypatch.setattr("pystencils_plugin.registers.subprocess.run", failing_run)
    counted = register_count(star7, arch="ampere")
    compiles = [c for c in calls if "--list-gpu-arch" not in c]
    assert len(compiles) == 1 and compiles[0][0] == "/opt/fake/nvcc" and "-arch=sm_80" in compiles[0]
    # the fallback is the count shipped for the same code on another domain (the 7-point stencil
    # at 256^3: ptxas' hand-checked 22 on sm_80), with the compile's failure in the detail
    assert counted.source == "shipped"
    assert "failed (exit 1)" in counted.detail and "made to fail" in counted.detail
    assert counted.registers == HAND_CHECKED_SM80["13.0"]


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
    first = registers.compile_register_count(registers.standalone_cuda_source(star7), "sm_80")
    assert first[0] is not None
    # two entries: the source's and its shape's (the same code on any domain)
    assert len(list((tmp_path / registers.REGISTER_CACHE).glob("*.json"))) == 2
    assert registers.registers_cached(star7, "ampere")
    first = register_count(star7, arch="ampere")
    assert first.source == "ptxas"

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
    # the success leaves two entries (its source's and its shape's), the failure none
    assert len(list((tmp_path / registers.REGISTER_CACHE).glob("*.json"))) == 2
