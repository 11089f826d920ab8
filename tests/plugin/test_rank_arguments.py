"""The notebook API's arguments (:func:`pystencils_plugin.rank.rank`, ``PystencilsRanking.plot``):
a wrong type is a TypeError, a value out of range a ValueError, each naming the argument, before
any work. The rankings are of a hand-written warpspeed kernel (no pystencils code generation)."""

from __future__ import annotations

import numpy as np
import pytest

import warpspeed as ws
from warpspeed.files.output import OutputError
from warpspeed.kernel.description import X, Y, Z

rank_module = pytest.importorskip("pystencils_plugin.rank")


def _kernel() -> ws.Kernel:
    shape = (66, 66, 66)
    return ws.Kernel(name="copy7", fields=(ws.Field("src", 8, shape), ws.Field("dst", 8, shape)),
                     accesses=(ws.load("src", X + 1, Y + 1, Z + 1), ws.store("dst", X + 1, Y + 1, Z + 1)),
                     domain=(64, 64, 64), flops=ws.FlopCounts(muls=1))


def _rank(**kwargs):
    args = {"device": "A100-SXM4-40GB", "blocks": [(32, 8, 1)], "foldings": [(1, 1, 1)], "executor": None}
    args.update(kwargs)
    return rank_module.rank(_kernel(), **args)


@pytest.mark.parametrize("kwargs, error, fragment", [
    ({"device": None}, TypeError, "device must be a Device"),
    ({"device": 3}, TypeError, "device must be a Device"),
    ({"executor": "x"}, TypeError, "executor must be None"),
    ({"foldings": []}, ValueError, "foldings is empty"),
    ({"blocks": []}, ValueError, "blocks is empty"),
    ({"blocks": None, "threads": 0}, ValueError, "threads must be a positive integer"),
    ({"blocks": None, "threads": 100}, ValueError, "threads must be a power of two"),
    ({"blocks": None, "threads": 2.5}, TypeError, "threads must be a positive integer"),
    ({"foldings": [(1, 2, 1, 1)]}, ValueError, "1 to 3 positive integers"),
    ({"foldings": [(0, 1, 1)]}, ValueError, "positive integer"),
    ({"progress": 5}, TypeError, "progress must be None"),
])
def test_a_wrong_argument_names_itself(kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        _rank(**kwargs)


def test_numpy_integers_are_accepted():
    plain = _rank()
    numpy = _rank(blocks=[np.array([32, 8, 1])], foldings=[(np.int64(1),) * 3])
    assert numpy.rows[0].lups_per_s == plain.rows[0].lups_per_s


@pytest.fixture(scope="module")
def ranking():
    return _rank(blocks=[(32, 8, 1), (64, 4, 1), (128, 2, 1)])


@pytest.mark.parametrize("top, error, fragment", [(-3, ValueError, "top"), (0, ValueError, "top"),
                                                  (2.5, TypeError, "top"), (True, TypeError, "top")])
def test_plot_top_is_a_positive_integer(ranking, top, error, fragment):
    with pytest.raises(error, match=fragment):
        ranking.plot(top=top)


def test_plot_checks_its_path_before_drawing(ranking, tmp_path):
    with pytest.raises(OutputError, match="format 'xyz'"):
        ranking.plot(path=tmp_path / "r.xyz")
    with pytest.raises(OutputError, match="does not exist"):
        ranking.plot(path=tmp_path / "missing" / "r.png")
    assert not list(tmp_path.iterdir())
    ranking.plot(top=2, path=tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
