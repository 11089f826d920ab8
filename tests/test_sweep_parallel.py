"""Rankings are identical serially, on a local process pool and on Dask; impossible configurations
become error rows.

The reference is the serial ranking: parallel execution must not change a single row, its order
or any number. Row counts are derived by hand (power-of-two blocks of 256 threads with z <= 64).
"""

from __future__ import annotations

import math
from itertools import product

import pytest

from warpspeed.files.records import json_record
from warpspeed.hardware.device import load_device
from warpspeed.launch.space import Config, paper_space
from warpspeed.studies.spec import study_from_dict
from warpspeed.studies.study import run_study
import warpspeed.rank
from warpspeed.rank import SAFE_START_METHODS, process_pool, rank
from warpspeed.kernel.builtin import builtin_kernel, star_stencil

#: Slow (tens of seconds on 2 cores): run by `pytest -m slow` and in CI.
pytestmark = pytest.mark.slow

THREADS = 256
#: A subset of the paper's 256-thread space, to keep the test fast: blocks up to 4 deep in z and
#: the foldings none / 2 in y.
MAX_Z = 4
FOLDS = ((1, 1, 1), (1, 2, 1))
#: Blocks (2^a, 2^b, 2^c) with a + b + c = 8 and c <= 2: 9 + 8 + 7.
BLOCKS = 24
#: More threads than any NVIDIA GPU allows in one block (1024).
TOO_MANY_THREADS = Config((2048, 1, 1))


def _canonical(ranking) -> list[tuple]:
    """Rows as comparable tuples (NaN, which never equals itself, becomes a marker)."""
    out = []
    for row in ranking.rows:
        d = json_record(row)
        out.append(tuple((k, "nan" if isinstance(v, float) and math.isnan(v) else
                          (tuple(sorted(v.items())) if isinstance(v, dict) else
                           tuple(v) if isinstance(v, list) else v)) for k, v in d.items()))
    return out


@pytest.fixture(scope="module")
def setup():
    kernel = builtin_kernel("star3d-r1", (64, 64, 64))
    device = load_device("A100-SXM4-40GB")
    space = paper_space(THREADS, FOLDS, MAX_Z) + [TOO_MANY_THREADS]
    return kernel, device, space


@pytest.fixture(scope="module")
def serial(setup):
    kernel, device, space = setup
    return rank(kernel, device, space, executor=None)


def test_space_size_by_hand():
    count = sum(1 for a, b, c in product(range(9), repeat=3) if a + b + c == 8 and 2**c <= MAX_Z)
    assert count == BLOCKS
    assert len(paper_space(THREADS, FOLDS, MAX_Z)) == BLOCKS * len(FOLDS)


def test_serial_ranking_shape(serial):
    assert len(serial.rows) == BLOCKS * len(FOLDS) + 1
    ok = [r for r in serial.rows if r.ok]
    speeds = [r.lups_per_s for r in ok]
    assert speeds == sorted(speeds, reverse=True)
    assert serial.rows[-1].config == TOO_MANY_THREADS and not serial.rows[-1].ok


def test_process_pool_identical(setup, serial):
    kernel, device, space = setup
    with process_pool(2) as pool:
        parallel = rank(kernel, device, space, executor=pool)
    assert _canonical(parallel) == _canonical(serial)


def test_auto_executor_identical(setup, serial, monkeypatch):
    """``executor="auto"`` (the CLI's default) on a local pool gives the serial rows. The space
    here is below the size at which "auto" starts a pool, so the threshold is lowered and the
    pool recorded to prove it ran."""
    kernel, device, space = setup
    pools = []

    def recording_pool(max_workers=None):
        pool = process_pool(max_workers)
        pools.append(pool)
        return pool

    monkeypatch.setattr(warpspeed.rank, "AUTO_PARALLEL_MIN_CONFIGS", 8)
    monkeypatch.setattr(warpspeed.rank, "process_pool", recording_pool)
    monkeypatch.setattr(warpspeed.rank.os, "cpu_count", lambda: 2)
    auto = rank(kernel, device, space, executor="auto")
    assert len(pools) == 1
    assert pools[0]._mp_context.get_start_method() in SAFE_START_METHODS  # never fork
    assert _canonical(auto) == _canonical(serial)


def test_impossible_launch_is_an_error_row(setup):
    kernel, device, _ = setup
    ranking = rank(kernel, device, [TOO_MANY_THREADS, Config((32, 8, 1))], executor=None)
    assert [r.ok for r in ranking.rows] == [True, False]
    bad = ranking.rows[-1]
    assert bad.config == TOO_MANY_THREADS
    assert "2048" in bad.error and "1024" in bad.error
    assert math.isnan(bad.lups_per_s)


def test_registers_that_fit_no_block(setup):
    _, device, _ = setup
    # 255 registers x 1024 threads = 261,120 > the 65,536 registers of an A100 SM: no block fits.
    greedy = star_stencil(3, 1, (64, 64, 64), registers=255)
    ranking = rank(greedy, device, [Config((32, 8, 4)), Config((32, 2, 1))], executor=None)
    by_block = {r.config.block: r for r in ranking.rows}
    assert not by_block[(32, 8, 4)].ok and by_block[(32, 8, 4)].error
    assert by_block[(32, 2, 1)].ok  # 64 threads x 255 registers fit
    assert ranking.best().config.block == (32, 2, 1)


# ---- studies (warpspeed.studies.study) on every executor.

#: 128 threads, z <= 2: blocks (2^a, 2^b, 2^c) with a + b + c = 7 and c <= 1: 8 + 7 = 15 on the
#: 64^3 domain (no extent above 2 x 64). The 2-D 32 x 32 domain takes z = 1 blocks no wider than
#: 2 x 32: a + b = 7 with a, b <= 6: 6.
STUDY_BLOCKS = 15
STUDY_BLOCKS_2D = 6


def _small_study(directory, name):
    return study_from_dict({
        "kernels": ["star3d-r1", "d3q15-pull"], "devices": ["A100-SXM4-40GB"],  # d3q15-pull: error rows on 2-D
        "domains": [[64, 64, 64], [32, 32]], "threads": [128], "foldings": [[1, 1, 1]],
        "max_block_z": 2, "output": name,
    }, directory)


@pytest.fixture(scope="module")
def study_reference(tmp_path_factory):
    spec = _small_study(tmp_path_factory.mktemp("study"), "serial.csv")
    result = run_study(spec, executor=None)
    assert result.rows == 2 * (STUDY_BLOCKS + STUDY_BLOCKS_2D)
    text = spec.output.read_text()
    assert text.count("\n") == result.rows + 1
    return text


def test_study_process_pool_identical(tmp_path, study_reference):
    spec = _small_study(tmp_path, "pool.csv")
    with process_pool(2) as pool:
        run_study(spec, executor=pool, chunk_size=4)
    assert spec.output.read_text() == study_reference


@pytest.fixture(scope="module")
def dask_executor():
    """An executor on a local two-process Dask cluster (started once for this module)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client.get_executor()


def test_dask_identical(setup, serial, dask_executor):
    kernel, device, space = setup
    on_dask = rank(kernel, device, space, executor=dask_executor)
    assert _canonical(on_dask) == _canonical(serial)


def test_study_dask_identical(tmp_path, study_reference, dask_executor):
    spec = _small_study(tmp_path, "dask.csv")
    run_study(spec, executor=dask_executor, chunk_size=4)
    assert spec.output.read_text() == study_reference


def test_pool_pays_only_beyond_the_break_even():
    """N > S / (t (1 - 1/w)) with the documented break-even of two workers, scaled to w workers;
    never on one CPU."""
    from warpspeed.rank import AUTO_PARALLEL_MIN_CONFIGS, pool_pays

    two = AUTO_PARALLEL_MIN_CONFIGS
    assert not pool_pays(10**6, 1)
    assert not pool_pays(two - 1, 2) and pool_pays(two, 2)
    four, eight = -(-two * 2 // 3), -(-two * 4 // 7)  # x (1/2) / (3/4), x (1/2) / (7/8), rounded up
    assert not pool_pays(four - 1, 4) and pool_pays(four, 4)
    assert not pool_pays(eight - 1, 8) and pool_pays(eight, 8)
