"""End-to-end predictions against hand calculations."""

import math

import pytest

from warpspeed.models import DEFAULT_TIME_MODEL, time_estimate
from warpspeed.predict import Predictor, predict
from warpspeed.summary import prediction_record
from warpspeed.kernel.builtin import copy_kernel, star_stencil


def test_streaming_copy_by_hand(a100):
    # dst[c] = src[c], 256^3 doubles, no ghost layers, base 256 B aligned. Block (32, 8, 4):
    # every warp reads and writes one aligned row of 32 doubles = 8 sectors -> 8 B/lup each way
    # at every level; no reuse, so no capacity terms. L1: 2 instructions x 2 half warps x
    # 1 wavefront per 32 lups = 0.125 cycles/lup.
    p = predict(copy_kernel((256, 256, 256)), a100, (32, 8, 4))
    assert p.l1.cycles_per_lup == pytest.approx(0.125)
    assert p.l2_load_bytes_per_lup == pytest.approx(8.0)
    assert p.l2_store_bytes_per_lup == pytest.approx(8.0)
    assert p.dram.load_bytes_per_lup == pytest.approx(8.0)
    assert p.dram.store_bytes_per_lup == pytest.approx(8.0)
    # limits: DRAM 1381 GB/s / 16 B (gpu-stream/a100_40.txt: scale, 16 B per thread, at 2 x 1024
    # threads per SM -- exactly this kernel's 16 B x 2048 threads per SM in flight);
    # L2 5402.9 GB/s / 16 B (A100 80 GB L2 sweep); L1 108 x 1.41 GHz / 0.125; no FP work
    assert p.roofline.limits["dram"] == pytest.approx(1381e9 / 16)
    assert p.roofline.limits["l2"] == pytest.approx(5402.9e9 / 16)
    assert p.roofline.limits["l1"] == pytest.approx(108 * 1.41e9 / 0.125)
    assert math.isinf(p.roofline.limits["fp"])
    assert p.roofline.limiter == "dram" and p.roofline.lups_per_s == pytest.approx(1381e9 / 16)
    assert p.two_limiter.lups_per_s == pytest.approx(1381e9 / 16)


def test_json_per_field_adds_up(a100):
    p = Predictor(star_stencil(3, 4, (256, 256, 256)), a100).predict((32, 4, 4), (1, 2, 1))
    d = prediction_record(p)
    for key in ("l1_cycles_per_lup", "l2_load_bytes_per_lup", "l2_store_bytes_per_lup",
                "dram_load_bytes_per_lup", "dram_store_bytes_per_lup"):
        assert d[key] == pytest.approx(sum(f[key] for f in d["fields"].values()))
    for dim in "xyz":
        assert d["layer_conditions"][dim]["hit_bytes_per_lup"] == pytest.approx(
            sum(f["layer_conditions"][dim]["hit_bytes_per_lup"] for f in d["fields"].values()))
    # the 25-point stencil cannot stream below one load and one store of 8 B per lup
    assert d["dram_load_bytes_per_lup"] >= 8 - 1e-9 and d["dram_store_bytes_per_lup"] >= 8 - 1e-9
    roof = d["roofline"]
    assert roof["lups_per_s"] == pytest.approx(min(v for v in roof["limiters"].values() if v is not None))
    # the top-level rate is the default model's, the rank row's for the same configuration
    assert d["model"] == DEFAULT_TIME_MODEL and d["lups_per_s"] == p.lups_per_s == time_estimate(p).lups_per_s


def test_predictor_reuse_gives_the_same_answer(a100):
    kernel = star_stencil(3, 1, (128, 128, 128))
    shared = Predictor(kernel, a100)
    first = [prediction_record(shared.predict(b)) for b in ((32, 4, 2), (64, 2, 2), (32, 4, 2))]
    assert first[0] == first[2]
    assert first[1] == prediction_record(predict(kernel, a100, (64, 2, 2)))


# ------------------------------------------------------------------------------------------
# custom capacity curves (--curves) are used and named in the output

SMALL = ["--kernel", "star3d-r1", "--domain", "64,64,64"]


def _custom_curves_file(tmp_path):
    from warpspeed.calibration.capacity import write_fit_toml
    from warpspeed.memory.capacity import CURVE_NAMES, GompertzCurve, load_curves

    base = load_curves("nvidia-ampere")
    curves = {n: base.curve(n) for n in CURVE_NAMES}
    curves["l1_load"] = GompertzCurve(0.9, 1.0, 0.5)  # misses far more than the reference curve
    return write_fit_toml(tmp_path / "mine.toml", "nvidia-ampere", curves, base.provenance)


def _invoke(args):
    from click.testing import CliRunner

    from warpspeed.cli.main import main

    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_predict_with_custom_curves_uses_and_names_them(tmp_path):
    import json

    path = _custom_curves_file(tmp_path)
    args = ["predict", *SMALL, "--block", "32,4,2"]
    default = json.loads(_invoke([*args, "--json"]))
    custom = json.loads(_invoke([*args, "--json", "--curves", str(path)]))
    assert default["capacity_curves"] == "nvidia-ampere"
    assert custom["capacity_curves"] == str(path)
    # L2 load = compulsory + m(o_L1) * (L1 load - compulsory), m = 0.9 exp(-1.0 exp(-0.5 o_L1))
    o = custom["l1_oversubscription"]
    for name, f in custom["fields"].items():
        redundant = max(0.0, f["l1_load_bytes_per_lup"] - f["l2_load_compulsory_bytes_per_lup"])
        expected = f["l2_load_compulsory_bytes_per_lup"] + 0.9 * math.exp(-1.0 * math.exp(-0.5 * o)) * redundant
        assert f["l2_load_bytes_per_lup"] == pytest.approx(expected, rel=1e-12), name
    assert custom["l2_load_bytes_per_lup"] > default["l2_load_bytes_per_lup"]
    text = _invoke([*args, "--curves", str(path)])
    assert f"capacity curves: {path}" in text
    assert "capacity curves:" not in _invoke(args)


def test_rank_with_custom_curves_uses_and_names_them(tmp_path):
    import json

    path = _custom_curves_file(tmp_path)
    args = ["rank", *SMALL, "--threads", "64", "--jobs", "1"]
    default = json.loads(_invoke([*args, "--json"]))
    custom = json.loads(_invoke([*args, "--json", "--curves", str(path)]))
    assert "capacity_curves" not in default
    assert custom["capacity_curves"] == str(path)
    row = custom["rows"][0]
    single = json.loads(_invoke(["predict", *SMALL, "--block", ",".join(map(str, row["block"])),
                                 "--fold", ",".join(map(str, row["fold"])), "--json", "--curves", str(path)]))
    assert row["l2_load_bytes_per_lup"] == pytest.approx(single["l2_load_bytes_per_lup"], rel=1e-12)
    assert sum(r["l2_load_bytes_per_lup"] for r in custom["rows"]) > sum(r["l2_load_bytes_per_lup"] for r in default["rows"])
    assert f"capacity curves: {path}" in _invoke([*args, "--curves", str(path)])
