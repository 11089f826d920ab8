"""The register counts shipped with the package (pystencils_plugin.register_table): well formed,
complete for the built-in workloads this environment generates, equal to what ptxas counts where
nvcc exists, and used when it does not, so that a plain install ranks as a full one does."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pystencils_plugin import register_table
from pystencils_plugin.register_table import FORMAT, MAX_REGISTERS, parse_table, shipped_table, source_digest
from warpspeed.files.stored import package_file
from warpspeed.sass.toolchain import TOOLCHAIN_ENV, find_nvcc

pytest.importorskip("lbmpy")

#: The architectures of the NVIDIA devices in the database (A100/A40: ampere, H100/H200: hopper,
#: L40/L40S: ada, V100: volta), as nvcc names them.
NVIDIA_ARCHS = ("sm_70", "sm_80", "sm_89", "sm_90")
#: The `warpspeed` command in a subprocess (an environment of its own: no toolchain, its own cache).
CLI = "from warpspeed.cli import main; main()"


def _sources():
    """(workload, fold, standalone source) of every kernel the table must hold for this
    environment's pystencils: the built-in workloads at their default domains, the paper's
    foldings."""
    from pystencils_plugin.catalog import _generated
    from pystencils_plugin.registers import standalone_cuda_source
    from pystencils_plugin.workloads import WORKLOADS
    from warpspeed.errors import WarpspeedError
    from warpspeed.launch.space import PAPER_FOLDINGS

    out = []
    for name in WORKLOADS:
        for fold in PAPER_FOLDINGS:
            try:
                kernel, code = _generated(name, None, "double", fold, False)
            except WarpspeedError:  # a 2-D workload has no folding in z
                continue
            out.append((name, fold, standalone_cuda_source(kernel, code)))
    return out


def test_shipped_file_is_well_formed():
    table = shipped_table()
    assert table is not None
    doc = json.loads(package_file(*register_table.TABLE_RESOURCE).read_text())
    assert doc["format"] == FORMAT
    for entry in doc["kernels"]:
        assert len(entry["digest"]) == 64
        assert set(entry["registers"]) == set(NVIDIA_ARCHS)
        assert all(isinstance(n, int) and 0 < n <= MAX_REGISTERS for n in entry["registers"].values())
        # what parse_table keeps is what the file says
        assert dict(table.counts[entry["digest"]]) == entry["registers"]


def test_bad_entries_are_left_out_and_a_bad_file_is_no_table():
    text = json.dumps({"format": FORMAT, "compiler": "x", "kernels": [
        {"digest": "a" * 64, "registers": {"sm_80": 32, "sm_90": 0, "sm_89": 300, "sm_70": True}},
        {"digest": "b" * 64, "registers": "many"}, "junk"]})
    table = parse_table(text)
    assert table.counts == {"a" * 64: {"sm_80": 32}}
    assert parse_table("{not json") is None
    assert parse_table(json.dumps({"format": "other", "kernels": []})) is None


def test_lookup_is_by_the_exact_source():
    table = parse_table(json.dumps({"format": FORMAT, "compiler": "nvcc X", "kernels": [
        {"digest": source_digest("kernel A"), "registers": {"sm_80": 40, "sm_70": 48},
         "compiled_for": {"sm_70": "sm_75"}}]}))
    assert table.lookup("kernel A", "sm_80")[0] == 40
    registers, detail = table.lookup("kernel A", "sm_70")
    assert registers == 48 and "-arch=sm_75 for sm_70" in detail and "nvcc X" in detail
    assert table.lookup("kernel A ", "sm_80") is None  # one character more: another kernel
    assert table.lookup("kernel A", "sm_89") is None


@pytest.mark.slow
def test_table_holds_every_builtin_workload_of_this_pystencils():
    """Generated here, every default-domain kernel of every built-in workload is in the table for
    every NVIDIA architecture: a change of the generated code (another pystencils) that the
    table does not cover fails here, not silently as an estimate."""
    table = shipped_table()
    missing = [(name, fold) for name, fold, source in _sources()
               if set(table.counts.get(source_digest(source), {})) != set(NVIDIA_ARCHS)]
    assert not missing, f"regenerate with scripts/ship_register_counts.py: {missing}"


@pytest.mark.slow
@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc (pip install 'warpspeed[cuda]')")
def test_shipped_counts_equal_ptxas():
    """ptxas of the installed nvcc counts what the table says, for every shipped kernel that this
    environment generates. A different compiler release may allocate differently; then only the
    kernels' fit (the occupancy they allow) is compared."""
    from pystencils_plugin.registers import compile_register_counts
    from warpspeed.sass.compile import compiler_version

    table = shipped_table()
    same_compiler = compiler_version(find_nvcc()) == table.compiler
    sources = _sources()
    for arch in NVIDIA_ARCHS:
        counts = compile_register_counts([s for _, _, s in sources], arch)
        for (name, fold, source), (registers, why) in zip(sources, counts):
            assert registers is not None, why
            shipped = table.counts[source_digest(source)][arch]
            if same_compiler:
                assert registers == shipped, (name, fold, arch)
            else:  # the same number of 1024-thread blocks fits 64 Ki registers per SM
                assert 65536 // (1024 * registers) == 65536 // (1024 * shipped), (name, fold, arch)


def _ranked(env_off: bool, tmp_path, *args):
    env = {**os.environ, "WARPSPEED_CACHE_DIR": str(tmp_path / ("off" if env_off else "on"))}
    if env_off:
        env[TOOLCHAIN_ENV] = "off"
    else:
        env.pop(TOOLCHAIN_ENV, None)
    proc = subprocess.run([sys.executable, "-c", CLI, "rank", *args, "--json", "--top", "10"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    return doc, [(tuple(r["block"]), tuple(r["fold"]), r["lups_per_s"]) for r in doc["rows"]]


@pytest.mark.slow
@pytest.mark.skipif(find_nvcc() is None, reason="compares with ptxas: needs nvcc")
@pytest.mark.parametrize("args", [(), ("--device", "H200"), ("--kernel", "d3q19-srt")])
def test_ranking_without_toolchain_equals_the_full_install(tmp_path, args):
    """Every row, in the same order with the same rate (the done-check asks for the top 10)."""
    full_doc, full = _ranked(False, tmp_path, *args)
    plain_doc, plain = _ranked(True, tmp_path, *args)
    assert {r["source"] for r in full_doc["registers"]} == {"ptxas"}
    assert {r["source"] for r in plain_doc["registers"]} == {"shipped"}
    assert plain == full


def test_no_toolchain_switch_hides_nvcc(monkeypatch):
    monkeypatch.delenv(TOOLCHAIN_ENV, raising=False)
    found = find_nvcc()
    monkeypatch.setenv(TOOLCHAIN_ENV, "off")
    assert find_nvcc() is None
    monkeypatch.setenv(TOOLCHAIN_ENV, "on")
    assert find_nvcc() == found


def test_predict_without_toolchain_uses_shipped_counts(tmp_path):
    """The default `predict` (25-point stencil, 32x8x4 on an A100) runs without nvcc: the shipped
    count (32) lets 1024 threads per block fit, where the estimate (70) would not."""
    env = {**os.environ, TOOLCHAIN_ENV: "off", "WARPSPEED_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", CLI, "predict", "--json"], capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["registers_source"] == "shipped" and "shipped with it" in doc["registers_detail"]
    assert doc["instructions"]["source"] == "derived"


@pytest.mark.slow
@pytest.mark.skipif(find_nvcc() is None, reason="compares with ptxas: needs nvcc")
@pytest.mark.parametrize("device, arch", [("A100-SXM4-40GB", "sm_80"), ("H200", "sm_90")])
def test_new_domain_without_toolchain_ranks_as_ptxas(tmp_path, monkeypatch, device, arch):
    """A domain the table does not hold (star3d-r1 on 300x200x100): the plain install takes the
    counts of the same code on a shipped domain; the full install's cache holds ptxas' own counts
    of this domain's sources, compiled here. Same registers, same top 10 (in fact every row)."""
    from pystencils_plugin.catalog import _generated
    from pystencils_plugin.registers import compile_register_counts, standalone_cuda_source
    from warpspeed.launch.space import PAPER_FOLDINGS

    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path / "on"))
    sources = [standalone_cuda_source(*_generated("star3d-r1", (300, 200, 100), "double", fold, False))
               for fold in PAPER_FOLDINGS]
    ptxas = [n for n, _ in compile_register_counts(sources, arch)]
    args = ("--kernel", "star3d-r1", "--domain", "300,200,100", "--device", device)
    full_doc, full = _ranked(False, tmp_path, *args)
    plain_doc, plain = _ranked(True, tmp_path, *args)
    assert [r["registers"] for r in full_doc["registers"]] == ptxas
    assert {r["source"] for r in full_doc["registers"]} == {"ptxas"}
    assert [r["registers"] for r in plain_doc["registers"]] == ptxas
    assert {r["source"] for r in plain_doc["registers"]} == {"shipped"}
    assert plain[:10] == full[:10]
    assert plain == full
