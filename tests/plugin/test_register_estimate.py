"""The register estimate without a compiler (pystencils_plugin.register_estimate) and the shape of
a kernel's code (pystencils_plugin.register_shape): by hand on small tables, and the
leave-one-kernel-out table of docs/registers.md regenerated from the shipped file."""

from __future__ import annotations

import re

import pytest

from pystencils_plugin.register_estimate import (CodeFeatures, Sample, code_features, estimate_from_table,
                                                 loko_markdown, resident_blocks)
from pystencils_plugin.register_shape import code_shape, shape_digest
from pystencils_plugin.register_table import shipped_table
from tests.paths import ROOT

STENCIL = CodeFeatures(loads=7, stores=1, temporaries=0, element_bytes=8)


def _sample(name, loads, stores, temporaries, regs, element_bytes=8):
    return Sample(name, CodeFeatures(loads, stores, temporaries, element_bytes), {"sm_80": regs})


def test_interpolation_by_hand():
    table = [_sample("a", 5, 1, 0, 17), _sample("b", 12, 2, 0, 32), _sample("c", 25, 1, 0, 32),
             _sample("lbm", 19, 19, 14, 68)]
    # 7 loads: 14 load registers; nearest a (10: 17) and b (24: 32): 17 + 15/14 x 4 = 21.29 -> 21
    assert estimate_from_table(STENCIL, "sm_80", table)[0] == 21
    # beyond the last: b (24) and c (50) have slope 0 -> 32
    assert estimate_from_table(CodeFeatures(40, 1, 0, 8), "sm_80", table)[0] == 32
    # an LBM update (a store per load, temporaries) is compared with LBM updates only: one -> its count
    assert estimate_from_table(CodeFeatures(27, 27, 14, 8), "sm_80", table)[0] == 68
    # float code has no sample of its kind here; another architecture has no count
    assert estimate_from_table(CodeFeatures(7, 1, 0, 4), "sm_80", table) is None
    assert estimate_from_table(STENCIL, "sm_90", table) is None


def test_a_negative_slope_is_not_extrapolated():
    table = [_sample("a", 10, 1, 0, 40), _sample("b", 12, 1, 0, 30)]
    # 20 load registers nearest, slope (30 - 40) / (24 - 20) < 0 -> 0: the nearest's count
    assert estimate_from_table(STENCIL, "sm_80", table)[0] == 40


def test_code_features_by_hand():
    source = ("__global__ void kernel (double * RESTRICT const _data_dst, const double * RESTRICT const _data_src)"
              "{ const double __c_1_0o2_0 = 1.0 / 2.0; const int64_t ctr_0 = 1LL + threadIdx.x;"
              " const double xi_1 = _data_src[ctr_0 + 1LL] + _data_src[ctr_0 - 1LL];"
              " _data_dst[ctr_0] = __c_1_0o2_0 * xi_1 + _data_src[ctr_0 + 1LL]; }")
    assert code_features(source) == CodeFeatures(loads=2, stores=1, temporaries=1, element_bytes=8)
    assert code_features(source.replace("double", "float")).element_bytes == 4


def test_shape_ignores_constants_but_not_code():
    a = "x[ctr_0 + ctr_1 * 258LL + ctr_2 * 66564LL] = __c_1_0o2_0 * 0.5;"
    b = "x[ctr_0 + ctr_1 * 302LL + ctr_2 * 61004LL] = __c_1_0o4_0 * 0.25;"
    assert shape_digest(a) == shape_digest(b)
    assert shape_digest(a) != shape_digest(a.replace("ctr_1 *", "ctr_0 *"))
    # a stride of 2^20 elements or more (8 MiB of doubles) is another class of constant
    assert shape_digest(a) != shape_digest(a.replace("66564LL", "2103300LL"))
    assert code_shape("y < 300LL && z == 1e-3f") == "y < # && z == #"
    # identifiers with digits are names, not constants
    assert "ctr_2" in code_shape(a) and "__c0" in code_shape(a)


def test_occupancy_by_hand():
    # A100: 64 Ki registers per SM, allocated per warp in units of 256: 32 registers x 1024 threads
    # -> 2 blocks; 40 -> 1 (40 x 32 = 1280 per warp, 32 warps = 40 Ki); at 256 threads: 8 and 6
    assert resident_blocks("sm_80", 32) == (8, 4, 2)
    assert resident_blocks("sm_80", 40) == (6, 3, 1)


def test_shipped_kernels_in_the_table():
    table = shipped_table()
    assert len(table.samples) == 26
    assert set(table.labels) == {s.shape for s in table.samples}


def test_docs_leave_one_out_table_is_current():
    table = shipped_table()
    labels = dict(sorted(table.labels.items(), key=lambda kv: kv[1]))
    expected = loko_markdown(table.samples, labels)
    page = (ROOT / "docs" / "registers.md").read_text()
    block = re.search(r"<!-- generated: register-loko -->\n(.*?)<!-- end generated -->", page, re.S).group(1)
    assert block == expected, "docs/registers.md is stale: run python benchmarks/register_estimate.py"


def test_loko_cells_agree_with_the_table():
    # every "ptxas / estimate" cell's ptxas figure is the shipped count (read from the file itself)
    import json

    doc = json.loads((ROOT / "pystencils_plugin" / "data" / "ptxas_registers.json").read_text())
    page = (ROOT / "docs" / "registers.md").read_text()
    for entry in doc["kernels"]:
        label = f"{entry['workload']} {entry['dtype']} fold {'x'.join(map(str, entry['fold']))}"
        row = next(line for line in page.splitlines() if line.startswith(f"| {label} |"))
        ptxas = [int(c.split("/")[0]) for c in row.strip("|").split("|")[1:]]
        assert ptxas == [entry["registers"][a] for a in sorted(entry["registers"])], label
