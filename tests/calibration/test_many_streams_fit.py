"""The H200's many-streams DRAM rate is the fit on its own multi-array copies, and the fit helps."""

from __future__ import annotations

import csv
import io
import statistics

import pytest

from warpspeed.calibration.many_streams_fit import copies, fit_rate
from warpspeed.files.stored import stored_file
from warpspeed.hardware.device import load_device


def test_the_fit_takes_every_copy_of_four_or_more_arrays():
    # counted in fits/data/H200/mech-segments.csv: tall and cube families, shifts none and d3q19,
    # 4 or more arrays
    text = stored_file("H200", "mech-segments.csv").read_text()
    rows = list(csv.DictReader(ln for ln in io.StringIO(text) if not ln.startswith("#")))
    kept = [r for r in rows if r["family"] in ("tall", "cube") and int(r["arrays"]) >= 4]
    assert len(copies()) == len(kept) > 0
    # the rate lies between the copies' median measured bandwidth of the bytes they copy and the
    # sustained two-stream rate (the DRAM moves partly covered sectors on top of those bytes)
    h200 = load_device("H200")
    assert statistics.median(float(r["gb_s"]) for r in kept) < h200.dram_many_streams_gb_s < h200.dram_bandwidth_gb_s


@pytest.mark.slow
def test_the_device_file_holds_the_fitted_rate_and_it_halves_the_error():
    fit = fit_rate()
    h200 = load_device("H200")
    assert h200.dram_many_streams_gb_s == pytest.approx(fit.rate_gb_s, abs=0.051)
    assert h200.dram_many_streams_count == fit.streams == 8.0
    assert statistics.median(fit.ratios) == pytest.approx(1.0, abs=1e-3)
    mape = lambda rs: statistics.mean(abs(r - 1) for r in rs)  # noqa: E731
    assert mape(fit.ratios) < 0.6 * mape(fit.ratios_without)
