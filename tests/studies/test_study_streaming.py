"""Studies stream: rows in study order whatever the executor, the output whole or absent, memory
independent of the number of configurations.

The expected rows are the same configurations predicted one at a time through the Python API
(:func:`warpspeed.kernel.catalog.resolve_kernel`, :class:`warpspeed.predict.Predictor`); the
memory bound compares tracemalloc peaks of two studies ten times apart in size.
"""

from __future__ import annotations

import csv
import gc
import random
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from itertools import product
from pathlib import Path

import pytest

import warpspeed.studies.study as study_module
from warpspeed.hardware.device import load_device
from warpspeed.kernel.catalog import resolve_kernel
from warpspeed.models import estimate_time
from warpspeed.predict import Predictor
from warpspeed.studies import index as index_module
from warpspeed.studies import storage
from warpspeed.studies.predictors import FoldingPredictors
from warpspeed.studies.spec import study_from_dict
from warpspeed.studies.study import run_study

KERNELS = ["copy", "star3d-r1"]
DEVICE = "A100-SXM4-40GB"
DOMAIN = (32, 32, 32)
FOLDS = [(1, 1, 1), (1, 2, 1)]
SMALL = {"kernels": KERNELS, "devices": [DEVICE], "domains": [list(DOMAIN)], "threads": [64],
         "foldings": [list(f) for f in FOLDS], "max_block_z": 2}


def _blocks() -> list[tuple[int, int, int]]:
    """Blocks of 64 threads with z <= 2 and no extent above 64 (twice the domain), by brute force."""
    return sorted((2**a, 2**b, 2**c) for a, b, c in product(range(7), repeat=3) if a + b + c == 6 and c <= 1)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def expected() -> dict[str, tuple[float, str, float]]:
    """key -> (lup/s, limiter, DRAM load bytes per lup), each configuration predicted on its own and
    rated by the roofline model (a study's ``lups_per_s`` column, as ``rank --model roofline``)."""
    device = load_device(DEVICE)
    out = {}
    for kernel in KERNELS:
        for block in _blocks():
            for fold in FOLDS:
                p = Predictor(resolve_kernel(kernel, DOMAIN, fold=fold, device=device), device).predict(block, fold)
                key = "|".join([kernel, DEVICE, "x".join(map(str, DOMAIN)), "x".join(map(str, block)),
                                "x".join(map(str, fold))])
                roofline = estimate_time("roofline", p)  # its explanation: the limiting level
                out[key] = (roofline.lups_per_s, roofline.explanation, p.dram.load_bytes_per_lup)
    return out


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> Path:
    spec = study_from_dict({**SMALL, "output": "serial.csv"}, tmp_path_factory.mktemp("serial"))
    run_study(spec)
    return spec.output


def test_streamed_rows_are_the_one_by_one_predictions(serial, expected):
    rows = _rows(serial)
    assert len(_blocks()) == 13 and len(rows) == len(KERNELS) * 13 * len(FOLDS)
    got = {r["key"]: (float(r["lups_per_s"]), r["limiter"], float(r["dram_load_bytes_per_lup"])) for r in rows}
    assert got == expected
    # study order: kernel, then block (block_sizes order), then folding
    assert [r["kernel"] for r in rows] == [k for k in KERNELS for _ in range(13 * len(FOLDS))]
    assert [r["fold_y"] for r in rows[:4]] == ["1", "2", "1", "2"]


def test_rows_finishing_out_of_order_are_written_in_study_order(tmp_path, serial, monkeypatch):
    """Chunks of 3 on 4 threads with random delays finish out of order; the output is the serial one."""
    original = study_module.predict_points
    delays = random.Random(45)

    def slow(points, models):
        time.sleep(delays.random() * 0.02)
        return original(points, models)

    monkeypatch.setattr(study_module, "predict_points", slow)
    spec = study_from_dict({**SMALL, "output": "pool.csv"}, tmp_path)
    with ThreadPoolExecutor(4) as pool:
        result = run_study(spec, executor=pool, chunk_size=3, max_in_flight=4)
    assert result.computed == result.rows == len(_rows(serial))
    assert spec.output.read_bytes() == serial.read_bytes()
    assert not spec.journal_path.exists()


def test_parquet_row_groups_hold_the_csv_rows(tmp_path, serial, monkeypatch):
    pd = pytest.importorskip("pandas")
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(storage, "PARQUET_BATCH_ROWS", 10)
    spec = study_from_dict({**SMALL, "output": "s.parquet"}, tmp_path)
    run_study(spec)
    assert pq.ParquetFile(spec.output).num_row_groups == -(-len(_rows(serial)) // 10)
    got = pd.read_parquet(spec.output)
    want = pd.read_csv(serial, keep_default_na=False, na_values={c: [""] for c in spec.columns if c != "error"})
    got["error"] = got["error"].fillna("")
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert storage.stored_rows(spec) == _rows(serial)  # read back in batches of 10 as well


@pytest.mark.parametrize("old_output", [False, True])
def test_a_failure_midway_leaves_no_output(tmp_path, serial, monkeypatch, old_output):
    """A bug (not a WarpspeedError) after 7 predictions: no output appears (an older one stays as it
    was), no temporary is left, the journal holds the 7 rows and resuming completes the study."""
    spec = study_from_dict({**SMALL, "output": "fail.csv"}, tmp_path)
    if old_output:
        spec.output.write_text("")  # an empty file: a study may replace it
    original = FoldingPredictors.predict
    calls = []

    def failing(self, config):
        calls.append(config)
        if len(calls) > 7:
            raise RuntimeError("bug")
        return original(self, config)

    monkeypatch.setattr(FoldingPredictors, "predict", failing)
    with pytest.raises(RuntimeError, match="bug"):
        run_study(spec)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [spec.journal_path.name] + (["fail.csv"] if old_output else []))
    if old_output:
        assert spec.output.read_text() == ""
    assert len(_rows(spec.journal_path)) == 7
    monkeypatch.setattr(FoldingPredictors, "predict", original)
    result = run_study(spec)
    assert result.resumed == 7 and result.computed == result.rows - 7
    assert spec.output.read_bytes() == serial.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fail.csv"]


# ------------------------------------------------------------------------- memory

#: Blocks of 256..1024 threads, z <= 64, on a 512^3 domain (no extent above twice the domain):
#: (a, b, c) with a + b + c = 8..10, c <= 6.
_BIG_BLOCKS = sum(1 for a, b, c in product(range(11), repeat=3) if 8 <= a + b + c <= 10 and c <= 6)
#: Foldings that fit a 512^3 domain (at most 64 cells per thread).
_FOLDINGS = [[1, 1, 1], [1, 2, 1], [1, 1, 2], [2, 1, 1], [1, 4, 1], [1, 1, 4], [4, 1, 1], [2, 2, 1], [2, 1, 2],
             [1, 2, 2]]


def _big(directory: Path, foldings: int, name: str):
    """One kernel, device and domain (one group: the same set-up cost) and ``foldings`` x 147 rows."""
    return study_from_dict({"kernels": ["copy"], "devices": [DEVICE], "domains": [[512, 512, 512]],
                            "threads": [256, 512, 1024], "max_block_z": 64,
                            "foldings": _FOLDINGS[:foldings], "output": name}, directory)


def _traced_peak(run) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def test_peak_memory_does_not_grow_with_the_number_of_rows(tmp_path, monkeypatch):
    """One real prediction reused for every configuration (the rows are still built, journaled and
    written one by one): 147 rows and 1470 rows of one kernel, device and domain peak within 64 KiB of
    each other, fresh and resumed after an interrupt (the stored rows read back through the index,
    inserted in batches of 50), where holding the 1323 extra rows would take megabytes (each row is
    30 strings in a dict)."""
    device = load_device(DEVICE)
    prediction = Predictor(resolve_kernel("copy", (1024, 1024, 1024), device=device), device).predict((256, 1, 1))
    monkeypatch.setattr(FoldingPredictors, "predict", lambda self, config: prediction)
    monkeypatch.setattr(index_module, "INSERT_BATCH", 50)  # its bounded batch fills in both studies
    assert _BIG_BLOCKS == 42 + 49 + 56  # 45 - 3, 55 - 6, 66 - 10 exponent triples with c <= 6
    run_study(_big(tmp_path, 1, "warm.csv"))  # imports and caches filled before measuring

    def stop_half(done: int, total: int) -> None:
        if done >= total // 2:
            raise KeyboardInterrupt

    def fresh_then_resumed(spec):
        def interrupted():
            with pytest.raises(KeyboardInterrupt):
                run_study(spec, resume=False, progress=stop_half)

        def resumed():
            assert run_study(spec).resumed == spec.count_points() // 2

        fresh = _traced_peak(lambda: run_study(spec))
        return fresh, max(_traced_peak(interrupted), _traced_peak(resumed))

    small = _big(tmp_path, 1, "small.csv")
    large = _big(tmp_path, 10, "large.csv")
    assert small.count_points() == 147 and large.count_points() == 1470
    small_fresh, small_resumed = fresh_then_resumed(small)
    large_fresh, large_resumed = fresh_then_resumed(large)
    row = _rows(small.output)[0]
    one_row = sum(len(v) + 49 for v in row.values()) + 40 * len(row)  # str objects (49 B + text) + dict slots
    assert (1470 - 147) * one_row > 2**20  # what holding the rows would cost: megabytes
    assert large_fresh - small_fresh < 64 * 1024, (small_fresh, large_fresh)
    assert large_resumed - small_resumed < 64 * 1024, (small_resumed, large_resumed)
