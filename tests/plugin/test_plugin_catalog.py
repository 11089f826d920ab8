"""One catalog: kernel names resolve through entry-point providers to one kernel per name.

The pystencils plugin registers its workloads under ``warpspeed.kernels``; ``rank`` (the
plugin's and the CLI's), ``predict``, studies and measurements resolve a name to the same
kernel, so their predictions of one configuration are identical.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest
from click.testing import CliRunner

from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import load_device
from warpspeed.kernel import catalog
from warpspeed.models import DEFAULT_TIME_MODEL, estimate_time
from warpspeed.predict import Predictor

DEVICE = "A100-SXM4-40GB"


class _FailingEntryPoint:
    """Stands in for an importlib.metadata.EntryPoint whose load() raises ``exc``."""

    def __init__(self, exc: BaseException) -> None:
        self.name, self.value, self.group = "broken", "broken_plugin.catalog:PROVIDER", catalog.ENTRY_POINT_GROUP
        self._exc = exc

    def load(self):
        raise self._exc


def test_pystencils_plugin_is_registered_as_entry_point():
    pytest.importorskip("pystencils")
    eps = {ep.name: ep.value for ep in entry_points(group=catalog.ENTRY_POINT_GROUP)}
    assert eps.get("pystencils") == "pystencils_plugin.catalog:PROVIDER"
    names = catalog.kernel_names()
    for workload in ("d3q19-srt", "d3q27-srt", "allen-cahn"):
        assert workload in names


def test_core_does_not_import_the_plugin():
    code = ("import sys, warpspeed, warpspeed.kernel.catalog, warpspeed.cli.main, warpspeed.rank; "
            "print(sorted(m for m in sys.modules if m.startswith(('pystencils', 'lbmpy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_broken_plugin_reports_its_real_error(monkeypatch):
    monkeypatch.setattr(catalog, "_entry_points", lambda: (_FailingEntryPoint(RuntimeError("boom in plugin")),))
    with pytest.raises(WarpspeedError) as info:
        catalog.resolve_kernel("d3q19-srt")
    message = str(info.value)
    assert "RuntimeError: boom in plugin" in message and "'broken'" in message
    assert "install warpspeed[pystencils]" not in message
    # a missing module other than pystencils/lbmpy is a bug of the plugin, not a missing extra
    monkeypatch.setattr(catalog, "_entry_points",
                        lambda: (_FailingEntryPoint(ModuleNotFoundError("No module named 'numpyy'", name="numpyy")),))
    with pytest.raises(WarpspeedError, match="numpyy") as info:
        catalog.resolve_kernel("d3q19-srt")
    assert "install warpspeed[pystencils]" not in str(info.value)
    # a broken plugin might provide any name, built-in ones included: no silent fallback
    with pytest.raises(WarpspeedError, match="numpyy"):
        catalog.resolve_kernel("copy", (8, 8, 8))


def test_missing_pystencils_gives_the_install_hint(monkeypatch):
    missing = ModuleNotFoundError("No module named 'pystencils'", name="pystencils")
    monkeypatch.setattr(catalog, "_entry_points", lambda: (_FailingEntryPoint(missing),))
    with pytest.raises(WarpspeedError, match=r"install warpspeed\[pystencils\]"):
        catalog.resolve_kernel("d3q19-srt")
    # without pystencils the built-in kernels remain, with the 32-register assumption
    resolved = catalog.resolve("star3d-r4", (8, 8, 8))
    assert resolved.kernel.name == "star3d_r4_25pt" and resolved.registers_source == "assumed"


def test_unknown_name_lists_the_catalog():
    with pytest.raises(WarpspeedError, match="unknown kernel 'nope'; available: star3d-r4"):
        catalog.resolve_kernel("nope")


def test_cli_unknown_kernel_is_one_line():
    from warpspeed.cli import main

    result = CliRunner().invoke(main, ["rank", "--kernel", "nope"])
    assert result.exit_code == 2 and result.output.startswith("error: unknown kernel 'nope'")
    assert "Traceback" not in result.output


@pytest.fixture
def no_nvcc(monkeypatch):
    """Register counts from the estimate (fast, and the same on every machine)."""
    monkeypatch.setattr("pystencils_plugin.registers.find_nvcc", lambda: None)
    monkeypatch.setattr("pystencils_plugin.catalog.find_nvcc", lambda: None)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["d3q19-srt", "star3d-r4"])
def test_rank_resolve_and_study_predict_the_same_kernel(name, no_nvcc):
    """The plugin's rank row, resolve_kernel + Predictor, the study runner's call and the CLI's
    predict give identical numbers for one configuration (the folded kernel, its registers)."""
    pytest.importorskip("pystencils")
    from pystencils_plugin import rank
    from warpspeed.cli import main

    domain, block, fold = (16, 16, 16), (16, 4, 2), (1, 2, 1)
    # generated, not the built-in: without nvcc, the count of the same code shipped for another
    # domain (star3d-r4) or the estimate from the table (d3q19-srt: 16^3 strides are another class)
    assert catalog.resolve(name, domain).registers_source in ("shipped", "estimate")
    device = load_device(DEVICE)
    ranked = rank(name, device, domain=domain, blocks=[block], foldings=[fold]).rows[0]
    assert ranked.ok and ranked.config.fold == fold
    kernel = catalog.resolve_kernel(name, domain, fold=fold, device=device)
    direct = Predictor(kernel, device).predict(block, fold)
    # the study runner resolves with the device's name
    study = Predictor(catalog.resolve_kernel(name, domain, fold=fold, device=DEVICE), load_device(DEVICE)).predict(block, fold)
    cli = CliRunner().invoke(main, ["predict", "--kernel", name, "--domain", "16,16,16", "--block", "16,4,2",
                                    "--fold", "1,2,1", "--json"])
    assert cli.exit_code == 0, cli.output
    from_cli = json.loads(cli.output)
    assert ranked.registers == kernel.registers == from_cli["registers"]
    # the roofline's figures agree, and the default model's rate (the ranked row's) too
    assert direct.lups_per_s == study.lups_per_s == from_cli["lups_per_s"]
    own = estimate_time(DEFAULT_TIME_MODEL, direct)
    assert ranked.model == DEFAULT_TIME_MODEL
    assert ranked.lups_per_s == own.lups_per_s == from_cli[DEFAULT_TIME_MODEL]["lups_per_s"]
    assert ranked.dram_load_bytes_per_lup == own.details["dram_load_bytes_per_lup"]
    # the folded kernel is not the unfolded one: it has its own register count
    unfolded = catalog.resolve(name, domain, device=device)
    folded = catalog.resolve(name, domain, fold=fold, device=device)
    assert folded.registers_source == unfolded.registers_source in ("shipped", "estimate")
    assert folded.kernel.accesses == unfolded.kernel.accesses


def test_workloads_on_amd_are_hip_with_estimated_registers(no_nvcc):
    pytest.importorskip("pystencils")
    amd = catalog.resolve("d3q19-srt", (8, 8, 8), device="MI210")
    nvidia = catalog.resolve("d3q19-srt", (8, 8, 8), device=DEVICE)
    assert amd.registers_source == nvidia.registers_source == "estimate"
    assert "HIP kernel" in amd.registers_detail and "nvcc not found" in nvidia.registers_detail
    assert amd.kernel.accesses == nvidia.kernel.accesses


def test_generator_versions_come_from_the_distribution_or_the_source_tree(tmp_path, monkeypatch):
    """An installed generator's version is its distribution's, read without importing it; one
    imported from a source tree (no distribution) gives its module's ``__version__``; a module
    that is not there is not importable."""
    from importlib.metadata import version

    assert catalog.generator_version("sympy") == version("sympy")
    (tmp_path / "warpspeed_test_generator").mkdir()
    (tmp_path / "warpspeed_test_generator" / "__init__.py").write_text('__version__ = "0.7.dev3"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert catalog.importable("warpspeed_test_generator")
    assert "warpspeed_test_generator" not in sys.modules  # found, not imported
    assert catalog.generator_version("warpspeed_test_generator") == "0.7.dev3"
    sys.modules.pop("warpspeed_test_generator")
    assert not catalog.importable("warpspeed_no_such_generator")
