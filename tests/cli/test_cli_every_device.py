"""Every device x every kernel of the catalog through the CLI: a result or a one-line error,
never a traceback (AMD devices get HIP kernels with estimated registers)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from warpspeed.cli import main
from warpspeed.hardware.device import device_names
from warpspeed.kernel.catalog import kernel_names


@pytest.fixture(autouse=True)
def no_nvcc(monkeypatch):
    """Estimated registers: fast, and what a machine without the CUDA toolkit gets."""
    monkeypatch.setattr("pystencils_plugin.registers.find_nvcc", lambda: None, raising=False)
    monkeypatch.setattr("pystencils_plugin.catalog.find_nvcc", lambda: None, raising=False)


def _domain(kernel: str) -> str:
    return "16,16" if kernel.startswith("star2d") else "8,8,8"


def _check(result) -> None:
    if result.exit_code == 0:
        return
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


@pytest.mark.slow
@pytest.mark.parametrize("device", device_names())
def test_predict_every_kernel(device):
    runner = CliRunner()
    for kernel in kernel_names():
        result = runner.invoke(main, ["predict", "--kernel", kernel, "--device", device,
                                      "--domain", _domain(kernel), "--block", "32,2,1", "--json"])
        _check(result)


@pytest.mark.parametrize("device", ["MI210", "A100-SXM4-40GB", "A100-PCIe-40GB"])
def test_rank_workload(device):
    """The defect this guards against: rank --kernel d3q19-srt --device MI210 ended in a traceback."""
    pytest.importorskip("pystencils")
    result = CliRunner().invoke(main, ["rank", "--kernel", "d3q19-srt", "--device", device, "--domain", "8,8,8",
                                       "--threads", "64", "--top", "2"])
    assert result.exit_code == 0, result.output
    assert "registers" in result.output


@pytest.mark.parametrize("kernel, domain, block", [
    # the LBM kernel's estimated registers (68 or more x 1024 > 65536) fit 512 threads: 32 x 8 x 2
    ("d3q19-srt", "16,16,16", [32, 8, 2]),
    # a 2-D domain: 1024 threads as 32 x 32 x 1, not the 3-D default 32 x 8 x 4 with 3/4 of it idle
    ("star2d-r1", "64,64", [32, 32, 1]),
])
def test_predict_default_block_fits_the_kernel(kernel, domain, block):
    """Without --block, predict takes a block the kernel's registers and domain allow."""
    pytest.importorskip("pystencils")
    import json

    result = CliRunner().invoke(main, ["predict", "--kernel", kernel, "--device", "A100-SXM4-40GB",
                                       "--domain", domain, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["block"] == block
