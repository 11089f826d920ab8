"""Ranking objectives and model dispatch (:mod:`warpspeed.models`, :class:`warpspeed.rank.Scoring`):
orders worked out by hand on made-up rows."""

import math

import pytest

from warpspeed.errors import WarpspeedError
from warpspeed.launch.space import Config
from warpspeed.models import estimate_time, roofline_estimate
from warpspeed.predict import predict
from warpspeed.kernel.builtin import star_stencil
from warpspeed.rank import RankRow, Scoring, sort_rows


def _row(block, lups, lups_per_joule, model="roofline"):
    return RankRow(config=Config(block, (1, 1, 1)), lups_per_s=lups, limiter="dram",
                   limits={"fp": 9e12, "l1": 8e12, "l2": 7e12, "dram": lups}, l1_cycles_per_lup=1.0,
                   l2_load_bytes_per_lup=8.0, l2_store_bytes_per_lup=8.0, dram_load_bytes_per_lup=8.0,
                   dram_store_bytes_per_lup=8.0, blocks_per_sm=2, occupancy_limiter="threads", registers=32,
                   model=model, watts=100.0, lups_per_joule=lups_per_joule)


# Three rows: (lups/s, lups/J). Time order: b (30) > a (20) > c (10).
# Energy order: c (5) > a (4) > b (1). EDP order by lups/s x lups/J: a (80) > c (50) > b (30).
ROWS = [_row((32, 8, 4), 20e9, 4e9), _row((64, 4, 4), 30e9, 1e9), _row((128, 2, 4), 10e9, 5e9)]


@pytest.mark.parametrize("objective, order", [
    ("time", [(64, 4, 4), (32, 8, 4), (128, 2, 4)]),
    ("energy", [(128, 2, 4), (32, 8, 4), (64, 4, 4)]),
    ("edp", [(32, 8, 4), (128, 2, 4), (64, 4, 4)]),
])
def test_objectives_order_rows(objective, order):
    assert [r.config.block for r in sort_rows(ROWS, objective)] == order


def test_other_models_rank_by_their_own_rate():
    """An interval-model row's lups/s is the model's, not the roofline limits' minimum."""
    rows = [_row((32, 8, 4), 20e9, 1.0, "interval"), _row((64, 4, 4), 25e9, 1.0, "interval")]
    rows[0] = RankRow(**{**rows[0].__dict__, "limits": {"fp": 1e9, "l1": 1e9, "l2": 1e9, "dram": 1e9}})
    assert [r.config.block for r in sort_rows(rows)] == [(64, 4, 4), (32, 8, 4)]


def test_unknown_model_and_objective_are_one_line_errors():
    with pytest.raises(WarpspeedError, match="unknown model 'queue'; choose one of overlap, roofline, interval, pipeline"):
        Scoring(model="queue")
    with pytest.raises(WarpspeedError, match="unknown objective 'cost'"):
        Scoring(objective="cost")
    with pytest.raises(WarpspeedError, match="unknown objective"):
        sort_rows(ROWS, "cost")


def test_roofline_estimate_is_cells_over_rate(a100):
    """Seconds = cells / (lups/s); cycles = seconds x 1.41 GHz (the A100's clock)."""
    p = predict(star_stencil(3, 1, (256, 128, 64)), a100, (32, 8, 4))
    est = estimate_time("roofline", p)
    assert est == roofline_estimate(p)
    cells = 256 * 128 * 64
    assert est.seconds == pytest.approx(cells / p.roofline.lups_per_s, rel=1e-12)
    assert est.cycles == pytest.approx(est.seconds * 1.41e9, rel=1e-12)
    assert est.explanation == p.roofline.limiter
    assert math.isfinite(est.cycles)
