"""The disk cache of extracted workload kernels (pystencils_plugin.kernel_cache): a second
process-level lookup reads the entry instead of generating, the entry is the kernel that was
generated, the key separates what would generate something else, and a broken or unwritable
entry is a miss, never an error."""

from __future__ import annotations

import pytest

pytest.importorskip("pystencils")

from pystencils_plugin import catalog, kernel_cache  # noqa: E402
from warpspeed.errors import CacheWarning  # noqa: E402

DOMAIN = (24, 20, 16)  # a domain no other test generates, so the first lookup is a miss


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty cache directory, estimated registers, and no memo in the process."""
    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("pystencils_plugin.registers.find_nvcc", lambda: None)
    monkeypatch.setattr("pystencils_plugin.catalog.find_nvcc", lambda: None)
    catalog._extract.cache_clear()
    yield tmp_path
    catalog._extract.cache_clear()


def _entries(root):
    return sorted((root / kernel_cache.SUBDIR).glob("*.json"))


def test_second_lookup_reads_the_entry_without_generating(fresh, monkeypatch):
    first = catalog.extract_for("star3d-r1", DOMAIN, fold=(1, 2, 1))
    assert len(_entries(fresh)) == 1
    catalog._extract.cache_clear()

    def fail(*args, **kwargs):
        raise AssertionError("generated although the kernel was on disk")

    monkeypatch.setattr(catalog, "_generated", fail)
    second = catalog.extract_for("star3d-r1", DOMAIN, fold=(1, 2, 1))
    assert second == first and second is not first
    # star3d-r1 on 24x20x16 is the code the table ships for 256^3 with other constants
    assert second.registers_source == "shipped"


def test_key_separates_domain_fold_precision_and_toolchain():
    base = ("star3d-r1", DOMAIN, "double", (1, 1, 1), False, "ampere", "estimate")
    keys = {kernel_cache.entry_key(*base)}
    for i, other in [(1, (24, 20, 17)), (2, "float"), (3, (1, 2, 1)), (4, True), (5, "hopper"),
                     (6, "nvcc Build cuda_13.0")]:
        args = list(base)
        args[i] = other
        keys.add(kernel_cache.entry_key(*args))
    assert len(keys) == 7


def test_unreadable_entry_is_a_miss(fresh):
    first = catalog.extract_for("star2d-r1", (64, 32), fold=(1, 1, 1))
    (entry,) = _entries(fresh)
    entry.write_bytes(b"not an entry")
    catalog._extract.cache_clear()
    again = catalog.extract_for("star2d-r1", (64, 32), fold=(1, 1, 1))
    assert again == first
    assert kernel_cache.load(entry.stem) == first  # rewritten


def test_failed_register_compile_is_not_kept(fresh, monkeypatch):
    """With nvcc found but its compile failing, the count falls back to what is known without a
    compiler (here the count shipped for the same code on another domain): that kernel is not
    stored, so the next process compiles again."""
    monkeypatch.setattr("pystencils_plugin.catalog.find_nvcc", lambda: "/opt/fake/nvcc")
    monkeypatch.setattr(catalog, "compiler_version", lambda nvcc: "fake 1.0")
    extracted = catalog.extract_for("star2d-r1", (48, 32), fold=(1, 1, 1))
    assert extracted.registers_source == "shipped"
    assert _entries(fresh) == []


def test_unwritable_cache_is_skipped(fresh, monkeypatch):
    blocker = fresh / "file"
    blocker.write_text("")
    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(blocker))  # a file, not a directory
    with pytest.warns(CacheWarning, match="not a directory.*running without the cache"):
        extracted = catalog.extract_for("star2d-r1", (40, 32), fold=(1, 1, 1))
    assert extracted.kernel.name == "star2d-r1"


def test_lbmpy_version_keys_only_the_lbm_workloads():
    from importlib.metadata import version

    from pystencils_plugin.workloads import WORKLOADS

    for name in WORKLOADS:
        named = any(v.startswith("lbmpy=") for v in kernel_cache.generator_versions(name))
        assert named == name.startswith(("d3q", "allen")), name
    assert f"lbmpy={version('lbmpy')}" in kernel_cache.generator_versions("d3q19-srt")


READ_BACK = """
import json, sys
from warpspeed.kernel.catalog import resolve
resolved = resolve(sys.argv[1], (24, 20, 12), fold=(1, 2, 1), device="A100-SXM4-40GB", dtype="float")
print(json.dumps({"kernel": repr(resolved.kernel), "registers": resolved.registers_source,
                  "imported": sorted(m for m in ("pystencils", "lbmpy") if m in sys.modules)}))
"""


@pytest.mark.parametrize("name", ["star3d-r1", "d3q19-srt"])
def test_a_kernel_read_back_imports_no_code_generator(tmp_path, name):
    """The first process generates the kernel (pystencils, and lbmpy for an LBM workload) and keeps
    it; a second process reads it back with neither imported, and gets the same kernel."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, WARPSPEED_CACHE_DIR=str(tmp_path), WARPSPEED_CUDA_TOOLCHAIN="off")
    runs = [json.loads(subprocess.run([sys.executable, "-c", READ_BACK, name], capture_output=True, text=True,
                                      env=env, check=True, timeout=600).stdout) for _ in range(2)]
    generated, read_back = runs
    assert "pystencils" in generated["imported"]
    assert ("lbmpy" in generated["imported"]) == (name == "d3q19-srt")
    assert read_back["imported"] == []
    assert read_back["kernel"] == generated["kernel"] and read_back["registers"] == generated["registers"]
