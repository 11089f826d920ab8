"""Kernel names resolve per folding: studies and the measurement runner predict each
configuration with the kernel generated for its folding (its own register count), resolving each
(name, domain, fold, device) once.

A stand-in for :func:`warpspeed.kernel.catalog.resolve` returns a range-1 star stencil
whose register count depends on the folding, as a code generator's would. With 255 registers a
1024-thread block needs 261,120 registers, more than the 65,536 of an A100 SM (NVIDIA A100
Tensor Core GPU Architecture whitepaper, 2020), so every configuration of that folding must fail
while the other folding's configurations are predicted.
"""

from __future__ import annotations

import csv

import pytest

from warpspeed.errors import LaunchError
from warpspeed.kernel import catalog
from warpspeed.kernel.builtin import star_stencil
from warpspeed.launch.space import Config
from warpspeed.studies.predictors import FoldingPredictors
from warpspeed.studies.spec import study_from_dict
from warpspeed.studies.study import run_study
from warpspeed.validation.measure import measure
from warpspeed.validation.plan import LaunchPlan
from warpspeed.validation.schema import GpuInfo, Timing

DOMAIN = (32, 32, 32)
#: Registers per thread of the kernel generated for each folding.
REGISTERS = {(1, 1, 1): 32, (1, 2, 1): 255}
FOLDS = list(REGISTERS)


@pytest.fixture()
def resolved(monkeypatch):
    """Record every call of the catalog's resolve; return a kernel per folding."""
    calls = []

    def fake_resolve(name, domain=None, *, fold=(1, 1, 1), device=None, dtype=None):
        calls.append((name, tuple(domain), tuple(fold), getattr(device, "name", device)))
        return catalog.ResolvedKernel(star_stencil(3, 1, domain, registers=REGISTERS[tuple(fold)]), "estimate")

    monkeypatch.setattr(catalog, "resolve", fake_resolve)
    return calls


def test_each_folding_resolved_once_with_its_device(resolved, a100):
    predictors = FoldingPredictors("star3d-r1", DOMAIN, a100)
    for block in ((32, 4, 2), (64, 2, 1)):
        predictors.predict(Config(block, (1, 1, 1)))
    assert predictors.kernel((1, 1, 1)).registers == 32
    assert predictors.kernel((1, 2, 1)).registers == 255
    assert resolved == [("star3d-r1", DOMAIN, f, a100.name) for f in FOLDS]
    with pytest.raises(LaunchError):
        predictors.predict(Config((32, 32, 1), (1, 2, 1)))  # 1024 threads x 255 registers


def test_study_rows_use_the_kernel_of_their_folding(resolved, tmp_path):
    spec = study_from_dict({"kernels": ["star3d-r1"], "devices": ["A100-SXM4-40GB"], "domains": [list(DOMAIN)],
                            "threads": [1024], "foldings": [list(f) for f in FOLDS], "max_block_z": 1,
                            "output": "s.csv"}, tmp_path)
    run_study(spec)
    with spec.output.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    # 1024 threads with z = 1: blocks (2^a, 2^(10-a), 1); on a 32-cell domain no block extent may
    # exceed 2 x 32 = 64 (fits_domain), which leaves a = 4, 5, 6: 3 blocks per folding.
    assert len(rows) == 3 * 2
    by_fold = {f: [r for r in rows if (int(r["fold_x"]), int(r["fold_y"]), int(r["fold_z"])) == f] for f in FOLDS}
    assert all(r["error"] == "" and r["registers"] == "32" for r in by_fold[(1, 1, 1)])
    assert all("register" in r["error"] and r["lups_per_s"] == "" for r in by_fold[(1, 2, 1)])
    assert resolved == [("star3d-r1", DOMAIN, f, "A100-SXM4-40GB") for f in FOLDS]  # once per folding


class _Runner:
    def info(self):
        return GpuInfo(name="Fake GPU")

    def time(self, plan, gpu_kernel, warmup, repeats):
        return Timing((1e-3,) * repeats)


def _planner(kernel, config, domain, dtype="double"):
    grid = tuple(-(-n // (b * f)) for n, b, f in zip(domain, config.block, config.fold))
    return LaunchPlan(kernel, tuple(domain), config.block, config.fold, grid, "ws_k", 32**3), None


def test_measurement_rows_use_the_kernel_of_their_folding(resolved, a100):
    configs = [Config((32, 32, 1), f) for f in FOLDS] + [Config((32, 16, 2), f) for f in FOLDS]
    table = measure("star3d-r1", a100, configs, _Runner(), domain=DOMAIN, repeats=1, planner=_planner)
    errors = [row["error"] for row in table.rows]
    assert errors[0] == "" and errors[2] == ""
    assert errors[1].startswith("prediction:") and "register" in errors[1]
    assert errors[3].startswith("prediction:") and "register" in errors[3]
    assert resolved == [("star3d-r1", DOMAIN, f, "A100-SXM4-40GB") for f in FOLDS]  # once per folding
