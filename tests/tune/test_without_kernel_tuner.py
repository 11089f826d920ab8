"""Without Kernel Tuner, tuning says in one line how to install it."""

import sys

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main
from warpspeed.tune.cache import TuneError
from warpspeed.tune.kt import kernel_tuner_modules


def test_a_missing_kernel_tuner_is_one_line_naming_the_extra(monkeypatch, tmp_path):
    for name in [m for m in sys.modules if m == "kernel_tuner" or m.startswith("kernel_tuner.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "kernel_tuner", None)  # import kernel_tuner raises ImportError
    monkeypatch.delitem(sys.modules, "warpspeed.tune.strategy", raising=False)
    with pytest.raises(TuneError, match=r'pip install "warpspeed\[tune\]"'):
        kernel_tuner_modules()
    cache = tmp_path / "c.json"
    cache.write_text('{"tune_params_keys": ["block_size_x"], "cache": {"32": {"block_size_x": 32, "time": 1.0}}}')
    out = CliRunner().invoke(main, ["tune", "--simulate", str(cache), "--kernel", "star3d-r1"])
    assert out.exit_code == 2 and out.output.count("\n") == 1 and "warpspeed[tune]" in out.output, out.output
