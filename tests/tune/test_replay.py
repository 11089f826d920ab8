"""Replays of Kernel Tuner caches through Kernel Tuner's own simulation mode, in warpspeed's order."""

import json
import statistics

import pytest

pytest.importorskip("kernel_tuner")

from click.testing import CliRunner  # noqa: E402

from tests.paths import ROOT  # noqa: E402
from warpspeed.cli.main import main  # noqa: E402
from warpspeed.tune.cache import TuneError  # noqa: E402
from warpspeed.tune.replay import simulate  # noqa: E402

CACHES = ROOT / "fits" / "data" / "H200" / "kerneltuner"
#: Each stored cache, the catalog kernel it holds (the float cache says its dtype in its provenance).
STORED = {"star2d-r1": "star2d-r1", "star3d-r4-float": "star3d-r4", "star3d-r1": "star3d-r1",
          "box3d-r1": "box3d-r1", "copy19-pull": "copy19-pull", "star3d-r4": "star3d-r4"}


def _times(name):
    """ms per configuration key, read from the cache file by hand."""
    doc = json.loads((CACHES / f"{name}.json").read_text())
    return {k: v["time"] for k, v in doc["cache"].items() if isinstance(v["time"], float)}


def _key(run):
    return ",".join(str(run.params[p]) for p in ("block_size_x", "block_size_y", "block_size_z",
                                                   "fold_x", "fold_y", "fold_z"))


def test_the_whole_space_is_replayed_in_the_predicted_order_with_the_cached_times():
    times = _times("star3d-r1")
    result = simulate(CACHES / "star3d-r1.json", "star3d-r1", "H200", use_patience=False)
    assert result.stopped == "space" and len(result.runs) == result.space == len(times) == 58
    assert sorted(r.predicted_place for r in result.runs) == list(range(1, 59))  # every place measured once
    # the predicted best first, then the best predicted of each other folding within 10 % of it, then the rest
    best = result.runs[0]
    assert best.predicted_place == 1
    near = {}
    for r in sorted(result.runs, key=lambda r: r.predicted_place):
        if r.predicted_lups_per_s >= 0.9 * best.predicted_lups_per_s and r.config.fold != best.config.fold:
            near.setdefault(r.config.fold, r)
    assert len(near) >= 1  # on this cache another folding is predicted within 10 % of the best
    explored = result.runs[1:1 + len(near)]
    assert [r.config for r in explored] == [r.config for r in near.values()]
    rest = result.runs[1 + len(near):]
    assert [r.predicted_place for r in rest] == sorted(r.predicted_place for r in rest)
    assert {_key(r): r.time_ms for r in result.runs} == times
    assert result.known_best_ms == min(times.values()) == result.best().time_ms


def test_budget_and_patience_stop_where_counting_by_hand_says():
    full = simulate(CACHES / "star2d-r1.json", "star2d-r1", "H200", use_patience=False)
    times = [r.time_ms for r in full.runs]
    assert len(simulate(CACHES / "star2d-r1.json", "star2d-r1", "H200", budget=3).runs) == 3
    for patience in (1, 3):
        best, since, stop = float("inf"), 0, len(times)
        for n, t in enumerate(times, 1):
            best, since = (t, 0) if t < best else (best, since + 1)
            if since >= patience:
                stop = n
                break
        result = simulate(CACHES / "star2d-r1.json", "star2d-r1", "H200", patience=patience)
        assert len(result.runs) == stop and result.stopped == "patience"
        assert [r.time_ms for r in result.runs] == times[:stop]


def test_the_float_cache_is_predicted_in_float():
    result = simulate(CACHES / "star3d-r4-float.json", "star3d-r4", "H200", budget=5)
    named = simulate(CACHES / "star3d-r4-float.json", "star3d-r4", "H200", budget=5, dtype="float")
    assert [(r.config, r.predicted_lups_per_s) for r in result.runs] == [
        (r.config, r.predicted_lups_per_s) for r in named.runs]
    assert result.runs_to(0.97) <= 5


def _variant(tmp_path, transform, params=None):
    doc = json.loads((CACHES / "star2d-r1.json").read_text())
    doc = transform(doc)
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(doc))
    return path


def test_params_as_text_and_an_extra_tune_parameter_in_kernel_tuners_order(tmp_path):
    def as_text(doc):
        doc["cache"] = {k: {p: (str(v) if p != "time" else v) for p, v in e.items()} for k, e in doc["cache"].items()}
        return doc

    def with_unroll(doc):
        doc["tune_params_keys"].append("unroll")
        doc["tune_params"]["unroll"] = [1, 2]
        cache = {}
        for key, entry in doc["cache"].items():
            for u, factor in ((1, 1.0), (2, 0.5)):  # unroll 2 twice as fast: the best of every pair
                e = dict(entry, unroll=u)
                if isinstance(e["time"], float):
                    e["time"] *= factor
                cache[f"{key},{u}"] = e
        doc["cache"] = cache
        return doc

    plain = simulate(CACHES / "star2d-r1.json", "star2d-r1", "H200", use_patience=False)
    text = simulate(_variant(tmp_path, as_text), "star2d-r1", "H200", use_patience=False)
    assert [(r.config, r.time_ms) for r in text.runs] == [(r.config, r.time_ms) for r in plain.runs]
    extra = simulate(_variant(tmp_path, with_unroll), "star2d-r1", "H200", use_patience=False)
    assert len(extra.runs) == 44
    # each configuration's two unroll values measured one after the other, in the model's order of the
    # configurations, and in one order (Kernel Tuner's search space order) within every pair
    assert [r.config for r in extra.runs[::2]] == [r.config for r in plain.runs]
    pairs = {(a.params["unroll"], b.params["unroll"]) for a, b in zip(extra.runs[::2], extra.runs[1::2])}
    assert len(pairs) == 1 and set(next(iter(pairs))) == {1, 2}


def test_wrong_kernel_unmapped_params_and_unreadable_caches_are_one_line_errors(tmp_path):
    with pytest.raises(TuneError, match="not 'star3d-r1'.*--kernel star2d-r1"):
        simulate(CACHES / "star2d-r1.json", "star3d-r1", "H200")

    def renamed(doc):
        doc["tune_params_keys"] = ["bx", "by", "bz", "fx", "fy", "fz"]
        doc["cache"] = {k: {**dict(zip(doc["tune_params_keys"], list(e.values())[:6])), "time": e["time"]}
                        for k, e in doc["cache"].items()}
        return doc

    with pytest.raises(TuneError, match="do not map to a thread block"):
        simulate(_variant(tmp_path, renamed), "star2d-r1", "H200")
    runner = CliRunner()
    for args in (["--simulate", str(tmp_path / "missing.json")],
                 ["--simulate", str(CACHES / "star2d-r1.json"), "--kernel", "box3d-r1"],
                 ["--simulate", str(CACHES / "star2d-r1.json"), "--kernel", "star2d-r1", "--budget", "0"],
                 ["--simulate", str(CACHES / "star3d-r1.json"), "--kernel", "star3d-r1", "--domain", "64,64"],
                 ["--kernel", "star3d-r1", "--cache", str(tmp_path / "cache.txt")]):
        out = runner.invoke(main, ["tune", "--device", "H200", *args])
        assert out.exit_code == 2 and out.output.startswith("error:") and out.output.count("\n") == 1, out.output


def test_cli_replay_prints_runs_and_json():
    runner = CliRunner()
    args = ["tune", "--simulate", str(CACHES / "star2d-r1.json"), "--kernel", "star2d-r1", "--device", "H200",
            "--domain", "16384,16384", "--budget", "4"]
    out = runner.invoke(main, args)
    assert out.exit_code == 0, out.output
    assert "best found: run" in out.output and "best in the cache" in out.output
    doc = json.loads(runner.invoke(main, [*args, "--json"]).output)
    assert len(doc["runs"]) == 4 and doc["stopped"] == "budget"
    times = _times("star2d-r1")
    assert doc["best_time_ms"] == min(times[_key_of(r)] for r in doc["runs"])
    assert doc["known_best_ms"] == min(times.values())


def _key_of(run):
    return ",".join(str(v) for v in run["params"].values())


def test_without_a_gpu_tune_says_what_it_needs_in_one_line():
    try:
        import cupy  # noqa: F401
        pytest.skip("cupy is installed here")
    except ImportError:
        pass
    out = CliRunner().invoke(main, ["tune", "--kernel", "star3d-r1"])
    assert out.exit_code == 2 and out.output.count("\n") == 1
    assert "cupy and an NVIDIA GPU" in out.output and "warpspeed rank" in out.output and "--simulate" in out.output


@pytest.mark.slow
def test_on_the_h200_caches_warpspeed_reaches_99_percent_within_5_runs_at_the_median():
    """The issue's done-when: at the median of the caches, 99 % of the best within 5 measurements."""
    runs = {name: simulate(CACHES / f"{name}.json", kernel, "H200", use_patience=False).runs_to(0.99)
            for name, kernel in STORED.items()}
    assert statistics.median(runs.values()) <= 5, runs
