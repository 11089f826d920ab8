"""The launch's DRAM bandwidth with the curve's knee sharpened by its resident blocks
(:func:`warpspeed.hardware.dram_curve.resident_blocks_bandwidth`)."""

import pytest

from warpspeed.hardware.dram_curve import CURVE_BLOCKS_PER_SM, BandwidthParams, resident_blocks_bandwidth


def _curve(q: float, peak: float, latency: float, p: float) -> float:
    x = q / latency / peak  # the smooth form B x / (1 + x^p)^(1/p), written out by hand
    return peak * x / (1 + x ** p) ** (1 / p)


def test_one_or_two_blocks_keep_the_fitted_curve():
    params = BandwidthParams(4000.0, 2000.0, 2.0)
    for k in (1, CURVE_BLOCKS_PER_SM):
        assert resident_blocks_bandwidth(3e6, params, k, 1234.0) == 1234.0


def test_more_blocks_sharpen_the_knee():
    params = BandwidthParams(4000.0, 2000.0, 2.0)
    q = 8e6  # x = 1: at the knee, where the exponent matters most
    four = resident_blocks_bandwidth(q, params, 4, 0.0)
    assert four == pytest.approx(_curve(q, 4000.0, 2000.0, 4.0), rel=1e-12)
    assert four == pytest.approx(4000.0 / 2 ** 0.25, rel=1e-12)
    assert _curve(q, 4000.0, 2000.0, 2.0) < four < resident_blocks_bandwidth(q, params, 8, 0.0) < 4000.0


def test_nothing_in_flight_keeps_the_curve():
    assert resident_blocks_bandwidth(0.0, BandwidthParams(4000.0, 2000.0, 2.0), 8, 0.0) == 0.0


def test_cells_per_thread_sharpen_the_knee_as_resident_blocks_do():
    params = BandwidthParams(4000.0, 2000.0, 2.0)
    q = 8e6  # x = 1
    # two blocks of two cells per thread: exponent 2 x (2 x 2 / 2) = 4, as four blocks of one cell
    two_by_two = resident_blocks_bandwidth(q, params, 2, 0.0, cells_per_thread=2)
    assert two_by_two == pytest.approx(4000.0 / 2 ** 0.25, rel=1e-12)
    assert two_by_two == resident_blocks_bandwidth(q, params, 4, 0.0)
    # one block of two cells: k F / 2 = 1, the fitted curve is kept
    assert resident_blocks_bandwidth(q, params, 1, 1234.0, cells_per_thread=2) == 1234.0
