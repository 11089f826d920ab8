"""Ranking of the 1024-thread space: complete, sorted by the bottleneck, and the ordering that Ernst,
Holzer, Hager, Knorr, Wellein report in "Analytical Performance Estimation during Code Generation
on Modern GPUs", Journal of Parallel and Distributed Computing, 2023, sections 5.4 and 5.8."""

import statistics

import pytest

from warpspeed.launch.space import block_sizes, paper_space
from warpspeed.rank import Scoring, rank
from warpspeed.kernel.builtin import star_stencil

#: The roofline ranked by lattice updates per second (the paper's ranking).
ROOFLINE_TIME = Scoring("roofline")


@pytest.fixture(scope="module")
def ranking(a100):
    """The paper's ranking: the four-limiter roofline (the tests below check its ordering)."""
    return rank(star_stencil(3, 4, (640, 512, 512)), a100, paper_space(1024), executor=None, scoring=ROOFLINE_TIME)


def test_space_size():
    # exponents (ex, ey, ez) with ex + ey + ez = 10: C(12, 2) = 66; minus ez >= 7 (z > 64):
    # 4 + 3 + 2 + 1 = 10 -> 56 blocks, times 3 foldings = 168 (Ernst et al. 2023, section 5.1)
    assert len(block_sizes(1024)) == 56
    assert len(paper_space(1024)) == 168


def test_ranking_is_the_space_sorted_by_its_bottleneck(ranking):
    """Every configuration of the space appears once; each row's rate is the tightest of its
    four limits (the roofline), and rates never increase down the ranking."""
    blocks = [(2**a, 2**b, 2**c) for a in range(11) for b in range(11) for c in range(7) if a + b + c == 10]
    folds = [(1, 1, 1), (1, 2, 1), (1, 1, 2)]
    assert sorted((r.config.block, r.config.fold) for r in ranking.rows) == sorted(
        (b, f) for b in blocks for f in folds)
    ok = [r for r in ranking.rows if r.ok]
    assert len(ok) == len(ranking.rows)
    for r in ok:
        assert r.lups_per_s == min(r.limits.values()) == r.limits[r.limiter]
    rates = [r.lups_per_s for r in ok]
    assert rates == sorted(rates, reverse=True)


def test_narrow_blocks_rank_low(ranking):
    """Short x extents split a warp over several rows: more L1 wavefronts (bank conflicts and
    tag-stage lines) and partial sectors (Ernst et al. 2023, section 5.4), so they rank below wide blocks (5.8)."""
    positions = {i: row.config.block[0] for i, row in enumerate(ranking.rows)}
    narrow = [i for i, x in positions.items() if x < 16]
    wide = [i for i, x in positions.items() if x >= 32]
    very_narrow = [i for i, x in positions.items() if x <= 4]
    assert min(very_narrow) > min(wide)  # the best wide block beats every block of x <= 4
    assert statistics.median(narrow) > statistics.median(wide)
    # per folding, L1 cycles per lup never grow with the block's x extent, and every block with
    # x <= 4 needs more than every block with x >= 16
    for fold in {row.config.fold for row in ranking.rows}:
        by_x: dict[int, set[float]] = {}
        for row in ranking.rows:
            if row.config.fold == fold:
                by_x.setdefault(row.config.block[0], set()).add(round(row.l1_cycles_per_lup, 9))
        xs = sorted(by_x)
        for a, b in zip(xs, xs[1:]):
            assert min(by_x[a]) >= max(by_x[b])
        assert min(c for x in xs if x <= 4 for c in by_x[x]) > max(c for x in xs if x >= 16 for c in by_x[x])


def test_best_is_deep_and_not_narrow(ranking):
    """The best block is deep (z >= 8: layer conditions along z, Ernst et al. 2023, 5.7-5.8) and
    not narrow: x <= 4 blocks are L1-bound (5.8), x = 8 rows of doubles are two full sectors."""
    best = ranking.best()
    assert best.config.block[0] >= 8 and best.config.block[2] >= 8


def test_ties_are_broken_by_the_next_limiter():
    from warpspeed.launch.space import Config
    from warpspeed.rank import RankRow, sort_rows

    def row(block, l1):
        limits = {"fp": 10.0, "l1": l1, "l2": 50.0, "dram": 40.0}
        return RankRow(Config(block), 10.0, "fp", limits, 0, 0, 0, 0, 0, 1, "warps", 32)

    narrow, wide = row((4, 4, 64), l1=12.0), row((64, 4, 4), l1=45.0)
    # both FP-bound at 10; the wide block has more headroom before its next limiter (40 vs 12)
    assert sort_rows([narrow, wide])[0] is wide
