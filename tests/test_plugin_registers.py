"""pystencils plugin: registers per thread from ptxas, or estimated without nvcc."""

from __future__ import annotations

import pytest

ps = pytest.importorskip("pystencils")

from pystencils_plugin import cuda_arch, extract_kernel, register_count, workload_kernel  # noqa: E402
from pystencils_plugin.registers import MAX_REGISTERS_PER_THREAD, find_nvcc  # noqa: E402


@pytest.fixture(scope="module")
def star7():
    return workload_kernel("star3d-r1", domain=(16, 8, 8))


@pytest.mark.skipif(find_nvcc() is None, reason="no nvcc on PATH or from the nvidia-cuda-nvcc wheel")
def test_ptxas_register_count(star7):
    counted = register_count(star7, arch="ampere")
    assert counted.source == "ptxas", counted.detail
    assert isinstance(counted.registers, int) and 1 <= counted.registers <= MAX_REGISTERS_PER_THREAD
    extracted = extract_kernel(star7)
    assert extracted.registers_source == "ptxas"
    assert extracted.kernel.registers == counted.registers


def test_estimate_without_nvcc(star7, monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr("pystencils_plugin.registers.WHEEL_NVCC_PATHS", ())
    extracted = extract_kernel(star7)
    assert extracted.registers_source == "estimate"
    assert "nvcc not found" in extracted.registers_detail
    # by hand: 16 base + 2 per pointer (src, dst) + 2 per distinct double loaded (7 points)
    assert extracted.kernel.registers == 16 + 2 * 2 + 2 * 7


def test_given_registers(star7):
    extracted = extract_kernel(star7, registers=40)
    assert extracted.registers_source == "given" and extracted.kernel.registers == 40


def test_compile_failure_falls_back(star7):
    counted = register_count(star7, arch="sm_1")  # no such architecture
    assert counted.source == "estimate"
    assert "nvcc" in counted.detail


@pytest.mark.parametrize("name, arch", [("volta", "sm_70"), ("A100-SXM4-40GB", "sm_80"), ("ada", "sm_89"),
                                        ("hopper", "sm_90"), ("H100", "sm_90"), ("sm_86", "sm_86")])
def test_cuda_arch(name, arch):
    assert cuda_arch(name) == arch


def test_unknown_arch():
    with pytest.raises(ValueError, match="unknown GPU architecture"):
        cuda_arch("voodoo")
