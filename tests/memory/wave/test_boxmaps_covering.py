"""Merged box maps (MapStack.covering) have the same union of images as the single maps, and
the exact-waves switches of the CLI (predict and rank: the classes by default, every wave with --exact-waves)."""

import json
from itertools import product

import numpy as np
import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main
from warpspeed.memory.wave.boxmaps import AxisMap, BoxMap, MapStack


def _star(radius: int) -> list[BoxMap]:
    """Loads of a 3-D star stencil of ``radius`` on doubles, 32 B lines: targets (z, y, x-line)."""
    offsets = [(0, 0, 0)] + [tuple(s * r if a == d else 0 for a in range(3))
                             for d in range(3) for r in range(1, radius + 1) for s in (1, -1)]
    return [BoxMap((AxisMap("shift", 2, oz), AxisMap("shift", 1, oy), AxisMap("line", 0, 8 * ox, 8, 32)))
            for ox, oy, oz in offsets]


def _points(stack: MapStack, boxes: np.ndarray) -> set:
    """Brute force: every line tuple the images of ``boxes`` contain."""
    out = set()
    for box in stack.image(boxes):
        out.update(product(*(range(lo, hi + 1) for lo, hi in box)))
    return out


def test_star_stencil_loads_merge_into_one_row_per_axis():
    maps = _star(4)
    assert len(maps) == 25
    merged = MapStack.covering(maps, 3)
    # by hand: z offsets -4..4 (one row), y offsets -4..4, x bytes -32..32 in steps of 8 <= 32
    rows = sorted(zip(map(tuple, merged.offset.tolist()), map(tuple, merged.offset_hi.tolist())))
    assert rows == [((-4, 0, 0), (4, 0, 0)), ((0, -4, 0), (0, 4, 0)), ((0, 0, -32), (0, 0, 32))]


def test_gaps_wider_than_a_line_are_not_merged():
    # y offsets -2, 0, 2: images of a one-row box are rows -2, 0, 2 - not one box
    maps = [BoxMap((AxisMap("shift", 1, c),)) for c in (-2, 0, 2)]
    assert MapStack.covering(maps, 1).offset.shape[0] == 3
    # bytes 0 and 40 on 32 B lines (a gap of 40 B > 32 B) may skip a line for a one-element box
    lines = [BoxMap((AxisMap("line", 0, b, 8, 32),)) for b in (0, 40)]
    assert MapStack.covering(lines, 1).offset.shape[0] == 2


@pytest.mark.parametrize("maps", [_star(2), [BoxMap((AxisMap("shift", 1, c), AxisMap("line", 0, 4 * c, 4, 32)))
                                            for c in (-1, 0, 1)] +
                                  [BoxMap((AxisMap("shift", 1, 0), AxisMap("line", 0, 4 * c, 4, 32)))
                                   for c in (-9, -3, 3, 9)]])
def test_covering_rows_cover_the_same_lines_as_every_map(maps):
    targets = len(maps[0].axes)
    single, merged = MapStack.of(maps, targets), MapStack.covering(maps, targets)
    assert merged.offset.shape[0] < single.offset.shape[0]
    rng = np.random.default_rng(7)
    for _ in range(30):
        lo = rng.integers(-20, 20, size=3)
        hi = lo + rng.integers(0, 6, size=3)
        boxes = np.stack((lo, hi), axis=-1)[None]
        assert _points(merged, boxes) == _points(single, boxes)


SMALL = ["--kernel", "star3d-r4", "--domain", "96,80,72", "--block", "8,8,4"]


def _json(args):
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _rank_row(*flags):
    rows = _json(["rank", "--kernel", "star3d-r4", "--domain", "96,80,72", "--threads", "256", "--jobs", "1",
                  *flags])["rows"]
    return next(r for r in rows if r["block"] == [8, 8, 4] and r["fold"] == [1, 1, 1])


def test_predict_and_rank_average_the_same_waves():
    exact = _json(["predict", *SMALL, "--exact-waves"])
    classes = _json(["predict", *SMALL])
    assert classes == _json(["predict", *SMALL, "--classes"])
    # the representative classes weight the waves' cut lines differently from the exact average
    assert exact["dram_load_bytes_per_lup"] != classes["dram_load_bytes_per_lup"]
    assert _rank_row("--exact-waves")["dram_load_bytes_per_lup"] == pytest.approx(
        exact["dram_load_bytes_per_lup"], rel=1e-12)
    assert _rank_row()["dram_load_bytes_per_lup"] == pytest.approx(classes["dram_load_bytes_per_lup"], rel=1e-12)
