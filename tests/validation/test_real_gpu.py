"""The time models against the H200 measurements of the 25-point stencil (fits/data/H200/).

Expected values come from the stored files read here with the csv module and by hand from the
raw Nsight Compute pages (the counter sums over 640 x 512 x 512 = 167,772,160 lattice updates),
and the statistics are recomputed here from the points.
"""

from __future__ import annotations

import csv
import math

import pytest

from warpspeed.models import DEFAULT_TIME_MODEL
from warpspeed.validation import real_gpu
from tests.paths import ROOT

#: Slow (tens of seconds on 2 cores): run by `pytest -m slow` and in CI.
pytestmark = pytest.mark.slow

H200 = ROOT / "fits" / "data" / "H200"
LUPS = 640 * 512 * 512


@pytest.fixture(scope="module")
def acc():
    pytest.importorskip("pystencils")
    return real_gpu.real_gpu_accuracy()


def test_stored_rates_and_counters_by_hand():
    rows = list(csv.DictReader((H200 / "star3d-r4.timing.csv").open()))
    assert len(rows) == 160 and {int(r["lups"]) for r in rows} == {LUPS}
    rates = real_gpu.measured_rates()
    for r in rows:
        config = (tuple(map(int, r["block"].split(","))), tuple(map(int, r["fold"].split(","))))
        assert rates[config] == pytest.approx(LUPS / float(r["time_batched_s"]), rel=1e-9)
    # the raw pages: l1tex__data_pipe_lsu_wavefronts.sum, lts__t_sectors_srcunit_tex_op_read.sum x 32 B,
    # dram__bytes_read.sum, as printed
    volumes = real_gpu.measured_volumes()
    assert volumes[((8, 4, 32), (1, 1, 2))] == pytest.approx(
        (381_069_271 / LUPS, 221_867_339 * 32 / LUPS, 1_553_976_320 / LUPS))
    assert volumes[((32, 32, 1), (1, 1, 1))] == pytest.approx(
        (338_450_165 / LUPS, 398_056_732 * 32 / LUPS, 1_880_976_640 / LUPS))
    assert volumes[((256, 4, 1), (1, 2, 1))] == pytest.approx(
        (280_870_771 / LUPS, 424_297_710 * 32 / LUPS, 1_937_205_504 / LUPS))
    soaks = {s.config: s for s in real_gpu.soaks()}
    assert soaks[((8, 4, 32), (1, 1, 2))].watts == 675 and soaks[((32, 32, 1), (1, 1, 1))].clock_mhz == 1905


def _ranks(values):
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):  # average ranks of ties
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2
        i = j + 1
    return ranks


def test_statistics_recomputed_from_the_points(acc):
    for m in acc.models:
        pred = [p for _, p, _ in m.points]
        meas = [x for _, _, x in m.points]
        assert m.mape_percent == pytest.approx(100 * sum(abs(p / x - 1) for p, x in zip(pred, meas)) / len(pred))
        rp, rm = _ranks(pred), _ranks(meas)
        mp, mm = sum(rp) / len(rp), sum(rm) / len(rm)
        cov = sum((a - mp) * (b - mm) for a, b in zip(rp, rm))
        rho = cov / math.sqrt(sum((a - mp) ** 2 for a in rp) * sum((b - mm) ** 2 for b in rm))
        assert m.spearman == pytest.approx(rho, abs=1e-12)
        top = max(pred)
        firsts = sorted((c for c, p, _ in m.points if p == top))  # ties: the smallest block, then fold
        assert m.best_predicted == firsts[0]
        assert m.best_share == pytest.approx(dict((c, x) for c, _, x in m.points)[firsts[0]] / max(meas))


def test_default_model_meets_the_criteria_on_the_real_gpu(acc):
    """MAPE <= 10 %, Spearman >= 0.95, the best predicted configuration within 3 % of the best
    measured; volumes and board power within 10 % (the constants fitted on these data say so in
    warpspeed/overlap/params.py, the H200 device file and the hopper-gh100 family)."""
    m = acc.model(DEFAULT_TIME_MODEL)
    assert m.mape_percent <= 10 and m.spearman >= 0.95 and m.best_share >= 0.97
    for v in acc.volumes:
        for predicted, measured in zip(v.overlap, v.measured):
            assert abs(predicted / measured - 1) <= 0.10, v.config
    for c in acc.power:
        assert abs(c.predicted_w / c.soak.watts - 1) <= 0.10, c.soak.config
    assert acc.within_criteria


def test_the_papers_roofline_is_far_off_and_unchanged(acc):
    """The roofline is 1.32x too fast at the median on this GPU (its volumes and limits are the
    paper's; 1.325, the H200's many-streams DRAM rate leaves stencils of up to four streams alone):
    the overlap model must do better on every statistic."""
    roof, overlap = acc.model("roofline"), acc.model(DEFAULT_TIME_MODEL)
    assert roof.median_ratio == pytest.approx(1.32, abs=0.01)
    assert overlap.mape_percent < roof.mape_percent and overlap.spearman > roof.spearman
    assert overlap.best_share >= roof.best_share
