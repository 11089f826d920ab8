"""What each time model declares about itself (:class:`warpspeed.model_protocol.TimeModel`): its help,
its tables, the provenance of its fitted constants and its own figures, and the Python API's rate
(:func:`warpspeed.time_estimate`), the default time model's as on the command line."""

from __future__ import annotations

import pytest

from warpspeed.model_protocol import ModelTables, RowFigures
from warpspeed.models import DEFAULT_TIME_MODEL, MODELS, ROOFLINE_MODEL, estimate_time


@pytest.fixture(scope="module")
def prediction(a100):
    from warpspeed.kernel.builtin import builtin_kernel
    from warpspeed.predict import Predictor

    return Predictor(builtin_kernel("star3d-r1", (128, 128, 128)), a100).predict((32, 8, 4), (1, 1, 1))


def test_the_model_option_help_is_every_models_own():
    from click.testing import CliRunner

    from warpspeed.cli.common import models_help
    from warpspeed.cli.predict import predict

    assert all(m.about.help and not m.about.help.endswith(".") for m in MODELS.values())
    assert models_help().startswith(f"{next(iter(MODELS))}: ")
    out = " ".join(CliRunner().invoke(predict, ["--help"], terminal_width=10_000).output.split())
    assert all(m.about.help in out for m in MODELS.values())


def test_the_api_rate_is_the_default_time_models(prediction):
    import warpspeed as ws

    assert ws.DEFAULT_TIME_MODEL == DEFAULT_TIME_MODEL
    assert ws.time_estimate(prediction) == estimate_time(DEFAULT_TIME_MODEL, prediction)
    assert ws.time_estimate(prediction, ROOFLINE_MODEL).lups_per_s == prediction.roofline.lups_per_s
    # the prediction reports its predictor's model, by default the default model
    assert prediction.lups_per_s == ws.time_estimate(prediction).lups_per_s


def test_own_figures_are_typed_and_agree_with_the_details(prediction):
    """A model with its own figures gives them as RowFigures, the same numbers ``predict --json``
    shows; the others leave the roofline's."""
    for name, model in MODELS.items():
        if name == ROOFLINE_MODEL or not model.about.own_limits:
            continue
        estimate = model.estimate(prediction)
        assert isinstance(estimate.figures, RowFigures)
        d = estimate.details
        f = estimate.figures
        assert dict(f.limits) == dict(d["limits"]) and f.limiter == d["limiter"]
        assert (f.l1_cycles_per_lup, f.dram_load_bytes_per_lup) == (d["l1_cycles_per_lup"], d["dram_load_bytes_per_lup"])
    assert MODELS[ROOFLINE_MODEL].estimate(prediction).figures is None


def test_tables_are_plain_rows_of_text(prediction):
    for model in MODELS.values():
        tables = model.command_line.tables(model.estimate(prediction))
        assert isinstance(tables, ModelTables)
        for table in (*tables.before, *tables.after):
            assert all(len(row) == len(table.columns) and all(isinstance(c, str) for c in row) for row in table.rows)


def test_calibration_takes_each_models_provenance(a100):
    from warpspeed.calibration import calibration

    components = calibration(a100).components
    own = [c for m in MODELS.values() for c in m.provenance(a100)]
    assert own and all(c in components for c in own)


def test_the_protocol_a_newcomer_implements_has_at_most_six_members():
    """kerncraft's PerformanceModel has four members, pystencils' Platform three abstract ones: a time
    model is its name, what it declares, its command line, its estimate, its provenance and its
    device check; everything optional has a default in TimeModelBase."""
    from warpspeed.model_protocol import TimeModel, TimeModelBase

    members = set(TimeModel.__annotations__) | {n for n in vars(TimeModel) if not n.startswith("_")}
    assert members == {"name", "about", "command_line", "estimate", "provenance", "require_parameters"}

    class Smallest(TimeModelBase):
        name = "smallest"

        def estimate(self, prediction, trace=None, **options):
            return None

    model: TimeModel = Smallest()
    assert model.provenance(None) == () and model.require_parameters(None) is None
    assert model.command_line.options == () and model.about.reads_trace is False
