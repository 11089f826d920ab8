"""Every workload generates and ranks in single and double precision."""

from __future__ import annotations

import pytest

ps = pytest.importorskip("pystencils")

from pystencils_plugin import WORKLOADS, lbm_srt_pull_assignments, rank  # noqa: E402

DOMAIN = (8, 8, 8)
BYTES = {"float": 4, "double": 8}


@pytest.fixture(autouse=True)
def no_nvcc(monkeypatch):
    monkeypatch.setattr("pystencils_plugin.registers.find_nvcc", lambda: None)
    monkeypatch.setattr("pystencils_plugin.catalog.find_nvcc", lambda: None)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float", "double"])
@pytest.mark.parametrize("name", list(WORKLOADS))
def test_workload_ranks_in_both_precisions(name, dtype):
    domain = DOMAIN[:2] if name.startswith("star2d") else DOMAIN
    ranking = rank(name, "A100-SXM4-40GB", domain=domain, blocks=[(32, 2, 1)], foldings=[(1, 1, 1)], dtype=dtype)
    row = ranking.rows[0]
    assert row.ok, row.error
    kernel = ranking.kernels[(1, 1, 1)].kernel
    assert kernel.dtype == {"float": "float32", "double": "float64"}[dtype]
    assert {f.element_bytes for f in kernel.fields} == {BYTES[dtype]}


def test_single_precision_assignments_rank():
    """lbmpy's relaxation rate omega is an untyped symbol: it takes the fields' precision."""
    ranking = rank(lbm_srt_pull_assignments("D3Q19", DOMAIN, "float"), "A100-SXM4-40GB",
                   blocks=[(32, 2, 1)], foldings=[(1, 1, 1)])
    assert ranking.rows[0].ok
    assert "double" not in ranking.kernels[(1, 1, 1)].source
