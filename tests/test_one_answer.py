"""One answer: for the same configuration, ``warpspeed predict --json``'s top-level rate,
``warpspeed rank --json``'s row and the Python API's ``Prediction.lups_per_s`` are the same number
(the default time model's) on every built-in device, and the roofline's figures sit under
``roofline`` in ``predict --json`` as the roofline model's own rate."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from warpspeed.cli import main
from warpspeed.hardware.device import device_names, load_device
from warpspeed.kernel.catalog import resolve_kernel
from warpspeed.models import DEFAULT_TIME_MODEL, MODELS
from warpspeed.predict import Predictor

KERNEL, DOMAIN = "star3d-r1", (48, 40, 32)
#: Devices checked in the fast suite (one per kind of first level); the others run with ``-m slow``.
FAST = ("H200", "A100-SXM4-40GB", "MI210", "RX6900XT")
DEVICES = [d if d in FAST else pytest.param(d, marks=pytest.mark.slow) for d in device_names()]


@pytest.fixture(autouse=True)
def no_nvcc(monkeypatch):
    """Register counts from the shipped table or the estimate: the same on every machine."""
    monkeypatch.setattr("pystencils_plugin.registers.find_nvcc", lambda: None, raising=False)
    monkeypatch.setattr("pystencils_plugin.catalog.find_nvcc", lambda: None, raising=False)


def _json(args: list[str]) -> dict:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("device", DEVICES)
def test_predict_rank_and_the_api_give_one_rate(device):
    domain = ",".join(map(str, DOMAIN))
    ranking = _json(["rank", "--kernel", KERNEL, "--device", device, "--domain", domain, "--threads", "32",
                     "--jobs", "1", "--json"])
    rows = [r for r in ranking["rows"] if r["error"] is None]
    assert rows and ranking["model"] == DEFAULT_TIME_MODEL
    for row in rows[:1]:  # the best configuration
        block, fold = row["block"], row["fold"]
        predicted = _json(["predict", "--kernel", KERNEL, "--device", device, "--domain", domain,
                           "--block", ",".join(map(str, block)), "--fold", ",".join(map(str, fold)), "--json"])
        assert predicted["model"] == row["model"] == DEFAULT_TIME_MODEL
        assert predicted["lups_per_s"] == row["lups_per_s"]
        assert predicted["limiter"] == row["limiter"] and predicted["limiters"] == row["limiters"]
        loaded = load_device(device)
        kernel = resolve_kernel(KERNEL, DOMAIN, fold=tuple(fold), device=loaded)
        api = Predictor(kernel, loaded).predict(block, fold)
        assert api.lups_per_s == row["lups_per_s"]
        # the roofline's figures: its own model's rate, under "roofline"
        roofline = MODELS["roofline"].estimate(api)
        assert predicted["roofline"]["lups_per_s"] == roofline.lups_per_s == api.roofline.lups_per_s
        assert predicted["roofline"]["limiter"] == roofline.explanation


def test_the_predictor_reports_the_model_it_was_given(a100):
    from warpspeed.kernel.builtin import star_stencil

    kernel = star_stencil(3, 1, (64, 64, 64))
    for name, model in MODELS.items():
        p = Predictor(kernel, a100, model=name).predict((32, 4, 2))
        assert p.lups_per_s == model.estimate(p).lups_per_s
