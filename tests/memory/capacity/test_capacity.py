"""Capacity-miss curves: values by hand, refits, bad data, family files."""

from __future__ import annotations

import dataclasses
import math
import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from warpspeed.calibration.capacity import FitResult, fit_curve, read_points_csv, write_fit_toml
from warpspeed.errors import FitError
from warpspeed.hardware.device import load_device
from warpspeed.memory.capacity import (
    CURVE_NAMES,
    FAMILIES,
    GompertzCurve,
    Provenance,
    curves_for_device,
    family_for_device,
    fits_directory,
    load_curves,
)
from tests.paths import ROOT

A100 = load_device("A100-SXM4-40GB")


# ------------------------------------------------------------------------------------------
# values


def test_miss_rate_at_zero_is_a_exp_minus_b():
    # L2 redundant loads (0.2, 7.56, 0.67): m(0) = 0.2 * e^-7.56 = 0.2 * 5.2088e-4 = 1.04176e-4
    curve = GompertzCurve(0.2, 7.56, 0.67)
    assert curve.miss_rate(0.0) == pytest.approx(1.04176e-4, rel=1e-4)
    assert curve.hit_rate(0.0) == pytest.approx(1 - 1.04176e-4, rel=1e-8)


def test_miss_rate_at_the_inflection_point_is_a_over_e():
    # L1 redundant loads (0.66, 6.77, 1.45): at o = ln(6.77) / 1.45 = 1.91250 / 1.45 = 1.31897,
    # b * exp(-c * o) = 1, so m = 0.66 / e = 0.242802.
    curve = GompertzCurve(0.66, 6.77, 1.45)
    assert curve.miss_rate(1.31897) == pytest.approx(0.242802, rel=1e-4)


def test_miss_rate_saturates_at_a():
    # Layer curve (1.0, 37.1, 3.2): at o = 5, b * exp(-16) = 37.1 * 1.125e-7 = 4.17e-6,
    # m = exp(-4.17e-6) = 0.9999958; at o = 0.5: 37.1 * e^-1.6 = 37.1 * 0.201897 = 7.4904,
    # m = e^-7.4904 = 5.584e-4 (the layer condition holds, h = 0.99944).
    curve = GompertzCurve(1.0, 37.1, 3.2)
    assert curve.miss_rate(5.0) == pytest.approx(0.9999958, abs=1e-7)
    assert curve.hit_rate(0.5) == pytest.approx(1 - 5.584e-4, abs=1e-6)
    values = curve.miss_rate(np.array([0.5, 5.0]))
    assert values.shape == (2,)


def test_hit_form_is_the_2022_y_curve():
    """The y hit rate of the article's reference code in 2022, h(o) = exp(-0.078 exp(1.03 (o -
    0.2))), by hand: at o = 2, 1.03 * 1.8 = 1.854, e^1.854 = 6.385310, x 0.078 = 0.498054,
    h = e^-0.498054 = 0.607712; at o = 0.5, e^0.309 = 1.362062, x 0.078 = 0.106241,
    h = 0.899208; at o = 0, e^-0.206 = 0.813833, x 0.078 = 0.063479, h = 0.938494. In the
    hit form a exp(-b exp(c o)) the shift is folded into b = 0.078 e^-0.206 = 0.063479."""
    curve = GompertzCurve(1.0, 0.078 * math.exp(-1.03 * 0.2), 1.03, "hit")
    assert curve.hit_rate(2.0) == pytest.approx(0.607712, abs=2e-6)
    assert curve.hit_rate(0.5) == pytest.approx(0.899208, abs=2e-6)
    assert curve.hit_rate(0.0) == pytest.approx(0.938494, abs=2e-6)
    assert curve.miss_rate(2.0) == pytest.approx(1 - 0.607712, abs=2e-6)
    # the loose y curve against the steep z curve (1, 37.1, 3.2) at o = 2: 1 - exp(-37.1 e^-6.4)
    # = 1 - exp(-37.1 x 0.0016616) = 1 - exp(-0.061645) = 0.059784
    assert GompertzCurve(1.0, 37.1, 3.2).hit_rate(2.0) == pytest.approx(0.059784, abs=2e-6)


def test_unknown_form_is_refused(tmp_path):
    with pytest.raises(FitError, match="form 'sigmoid' is unknown; allowed: miss, hit"):
        GompertzCurve(1.0, 1.0, 1.0, "sigmoid")
    text = (fits_directory() / "nvidia-ampere.toml").read_text().replace('form = "hit"', 'form = "loose"', 1)
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(FitError, match="curve 'x_layer': form 'loose' is unknown"):
        load_curves(path=path)


def test_parameters_outside_the_allowed_range_are_refused():
    with pytest.raises(FitError, match="outside the allowed range"):
        GompertzCurve(1.5, 1.0, 1.0)
    with pytest.raises(FitError, match="finite"):
        GompertzCurve(0.5, math.nan, 1.0)


# ------------------------------------------------------------------------------------------
# fitting


def synthetic_points(a, b, c, n=60, o_max=5.0, noise=0.005, seed=1):
    rng = np.random.default_rng(seed)
    o = np.linspace(0.0, o_max, n)
    h = 1.0 - a * np.exp(-b * np.exp(-c * o)) + rng.normal(0.0, noise, n)
    return [(float(x), float(min(1.0, max(0.0, y)))) for x, y in zip(o, h)]


@pytest.mark.parametrize("curve_name,true", [
    ("z_layer", (1.0, 20.0, 2.5)),
    ("l2_store", (0.5, 5.0, 1.2)),
])
def test_fit_recovers_known_parameters(curve_name, true):
    result = fit_curve(synthetic_points(*true), curve_name)
    assert isinstance(result, FitResult)
    a, b, c = result.curve.parameters
    assert a == pytest.approx(true[0], abs=0.03)
    assert b == pytest.approx(true[1], rel=0.15)
    assert c == pytest.approx(true[2], rel=0.1)
    assert result.rms_error < 0.01  # the noise is 0.005
    assert result.r_squared > 0.99
    assert result.curve_name == curve_name and len(result.points) == 60


def test_fit_of_a_hit_curve_recovers_known_parameters():
    """Points on h = 0.9 exp(-0.05 exp(1.2 o)) with noise 0.005, fitted in the hit form (the
    y_layer reference form)."""
    rng = np.random.default_rng(3)
    o = np.linspace(0.0, 4.0, 60)
    h = 0.9 * np.exp(-0.05 * np.exp(1.2 * o)) + rng.normal(0.0, 0.005, o.size)
    result = fit_curve([(float(x), float(min(1.0, max(0.0, y)))) for x, y in zip(o, h)], "y_layer")
    assert result.curve.form == "hit"
    a, b, c = result.curve.parameters
    assert a == pytest.approx(0.9, abs=0.02)
    assert b == pytest.approx(0.05, rel=0.15)
    assert c == pytest.approx(1.2, rel=0.1)
    assert result.rms_error < 0.01


def test_fit_refuses_bad_points():
    with pytest.raises(FitError, match="fewer than the 3 parameters"):
        fit_curve([(0.1, 0.9), (0.2, 0.8)], "y_layer")
    with pytest.raises(FitError, match="NaN"):
        fit_curve([(0.1, 0.9), (0.2, math.nan), (0.3, 0.5)], "y_layer")
    with pytest.raises(FitError, match="unknown curve"):
        fit_curve([(0.1, 0.9), (0.2, 0.8), (0.3, 0.5)], "l3_load")


# ------------------------------------------------------------------------------------------
# CSV data


def write_csv(tmp_path, text):
    path = tmp_path / "points.csv"
    path.write_text(text)
    return path


def test_read_points_csv(tmp_path):
    path = write_csv(tmp_path, "device,Oversubscription,hit_rate\nA100,0.5,0.99\nA100,1.0,0.7\n\nA100,2,0.1\n")
    assert read_points_csv(path) == ((0.5, 0.99), (1.0, 0.7), (2.0, 0.1))


@pytest.mark.parametrize("text,message", [
    ("oversubscription,hit_rate\n0.5,0.9\n1.0,nan\n2,0.1\n", "line 3: NaN or infinite"),
    ("oversubscription,hit_rate\n0.5,0.9\ninf,0.5\n2,0.1\n", "line 3: NaN or infinite"),
    ("oversubscription,hit_rate\n0.5,1.2\n1.0,0.5\n2,0.1\n", "line 2: hit rate 1.2 outside \\[0, 1\\]"),
    ("oversubscription,hit_rate\n0.5,0.9\n1.0,-0.1\n2,0.1\n", "line 3: hit rate -0.1 outside"),
    ("oversubscription,hit_rate\n-0.5,0.9\n1.0,0.5\n2,0.1\n", "line 2: negative oversubscription"),
    ("oversubscription,hit_rate\n0.5,0.9\n1.0,0.5\n", "2 point\\(s\\) are fewer than the 3 parameters"),
    ("oversubscription,hits\n0.5,0.9\n1.0,0.5\n2,0.1\n", "missing column\\(s\\) hit_rate"),
    ("oversubscription,hit_rate\n0.5,0.9\n1.0,abc\n2,0.1\n", "line 3: cannot parse hit_rate 'abc'"),
    ("oversubscription,hit_rate\n0.5,0.9\n1.0\n2,0.1\n", "line 3: cannot parse hit_rate ''"),
    ("", "empty file"),
])
def test_bad_csv_is_refused(tmp_path, text, message):
    with pytest.raises(FitError, match=message):
        read_points_csv(write_csv(tmp_path, text))


def test_missing_csv_file_is_refused(tmp_path):
    with pytest.raises(FitError, match="does not exist"):
        read_points_csv(tmp_path / "nope.csv")


# ------------------------------------------------------------------------------------------
# family files

#: The constants of the reference implementation of Ernst et al. (JPDC 2023): repository
#: te42kyfo/warpspeed (2025), warpspeed/predict_metrics.py, class DerivedMetrics (its z curve
#: popt_WaveOverlapRover1 and the L1 and L2 curves), and for x and y the separate y hit rate
#: of the same code in 2022, exp(-0.078 exp(1.03 (o - 0.2))) (predict_metrics.py, rover0,
#: commit c214074): in the "hit" form a exp(-b exp(c o)) with b = 0.078 exp(-0.206).
Y_2022 = (1.0, 0.078 * math.exp(-1.03 * 0.2), 1.03)
REFERENCE = {
    "l1_load": (0.66, 6.77, 1.45),
    "x_layer": Y_2022,
    "y_layer": Y_2022,
    "z_layer": (1.0, 37.1, 3.2),
    "l2_load": (0.2, 7.56, 0.67),
    "l2_store": (0.38, 3.79, 0.55),
}
FORMS = {name: "hit" if name in ("x_layer", "y_layer") else "miss" for name in REFERENCE}


def test_a100_loads_the_reference_constants():
    curves = curves_for_device(A100)
    assert curves.family == "nvidia-ampere"
    for name, params in REFERENCE.items():
        assert curves.curve(name).parameters == pytest.approx(params, rel=1e-12)
        assert curves.curve(name).form == FORMS[name]
    assert curves.provenance.device == "A100-SXM4-40GB"
    assert "te42kyfo/warpspeed" in curves.provenance.source
    assert "warpspeed/predict_metrics.py" in curves.provenance.source
    assert curves.points["z_layer"] == ()
    assert curves.packaged and curves.label == "nvidia-ampere"


def _raw_family_file(family):
    with (fits_directory() / f"{family}.toml").open("rb") as handle:
        return tomllib.load(handle)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_file_is_valid_and_states_its_own_values(family):
    """Each file loads; its provenance is complete; every curve's parameters are what the file
    says, lie in the Gompertz domain (0 <= a <= 1, b > 0, c > 0), and its points are hit rates at
    non-negative oversubscriptions; a stated RMS error or R² matches the points, recomputed here
    from the Gompertz formula."""
    raw = _raw_family_file(family)
    curves = load_curves(family)
    assert curves.family == raw["family"] == family
    assert_states_its_own_values(raw, curves)


def assert_states_its_own_values(raw, curves):
    """The checks of the test above, for any curve file (``raw``: the file read with tomllib)."""
    for key in ("source", "date", "device", "method"):
        assert isinstance(raw["provenance"][key], str) and raw["provenance"][key].strip()
        assert getattr(curves.provenance, key) == raw["provenance"][key]
    assert "paper 001" not in str(raw) and "shared/" not in str(raw)
    for name in CURVE_NAMES:
        entry = raw["curves"][name]
        a, b, c = entry["a"], entry["b"], entry["c"]
        assert curves.curve(name).parameters == (a, b, c)
        assert 0.0 <= a <= 1.0 and b > 0.0 and c > 0.0
        points = [tuple(p) for p in entry.get("points", [])]
        assert curves.points[name] == tuple(points)
        assert all(o >= 0.0 and 0.0 <= h <= 1.0 for o, h in points)
        residuals = [h - (1.0 - a * math.exp(-b * math.exp(-c * o))) for o, h in points]
        if "rms_error" in entry:
            assert points, f"{name}: an RMS error without the points it was computed on"
            assert entry["rms_error"] == pytest.approx(math.sqrt(sum(r * r for r in residuals) / len(points)))
        if "r_squared" in entry:
            mean = sum(h for _, h in points) / len(points)
            ss_tot = sum((h - mean) ** 2 for _, h in points)
            assert entry["r_squared"] == pytest.approx(1.0 - sum(r * r for r in residuals) / ss_tot)


def test_fits_directory_holds_the_family_files():
    names = {p.name for p in fits_directory().iterdir()}
    assert {f"{f}.toml" for f in FAMILIES} <= names
    assert "__init__.py" in names


def test_fits_are_package_resources():
    """pyproject.toml maps fits/ to the package warpspeed.fits; its files are resources and the
    directory load_curves reads by default."""
    root = resources.files("warpspeed.fits")
    for family in FAMILIES:
        data = tomllib.loads((root / f"{family}.toml").read_text(encoding="utf-8"))
        assert data["family"] == family
        assert load_curves(family).z_layer.parameters == (
            data["curves"]["z_layer"]["a"], data["curves"]["z_layer"]["b"], data["curves"]["z_layer"]["c"])
    assert fits_directory().resolve() == Path(str(root)).resolve()


@pytest.mark.parametrize("vendor,arch,family", [
    ("nvidia", "volta", "nvidia-volta"), ("nvidia", "ampere", "nvidia-ampere"),
    ("nvidia", "hopper", "nvidia-hopper"), ("nvidia", "ada", "nvidia-ada"),
    ("amd", "cdna2", "amd-cdna"), ("amd", "rdna3", "amd-rdna"),
])
def test_family_for_device(vendor, arch, family):
    assert family_for_device(dataclasses.replace(A100, vendor=vendor, architecture=arch)) == family


def test_unknown_architecture_is_refused():
    with pytest.raises(FitError, match="no capacity-curve family"):
        family_for_device(dataclasses.replace(A100, architecture="turing"))


def test_write_and_read_back(tmp_path):
    base = load_curves("nvidia-ampere")
    points = synthetic_points(1.0, 20.0, 2.5, n=12)
    fitted = fit_curve(points, "z_layer")
    curves = {name: base.curve(name) for name in CURVE_NAMES}
    curves["z_layer"] = fitted
    provenance = Provenance(source="synthetic test data", date="2026-01-01", device="A100-SXM4-40GB",
                            method="scipy curve_fit")
    path = write_fit_toml(tmp_path / "nvidia-ampere.toml", "nvidia-ampere", curves, provenance,
                          notes={"z_layer": "refit on synthetic points"})
    again = load_curves(path=path)
    assert again.z_layer.parameters == pytest.approx(fitted.curve.parameters)
    assert np.allclose(np.array(again.points["z_layer"]), np.array(points), rtol=1e-15, atol=0)
    assert again.l1_load.parameters == REFERENCE["l1_load"]
    assert again.y_layer.form == "hit"
    assert again.provenance == provenance
    assert again.notes["z_layer"] == "refit on synthetic points"
    assert load_curves("nvidia-ampere", path=tmp_path).z_layer == again.z_layer


def test_an_unwritable_curve_file_is_a_clear_error(tmp_path):
    base = load_curves("nvidia-ampere")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(FitError, match="cannot write the curve file"):
        write_fit_toml(blocker / "sub" / "x.toml", "nvidia-ampere", {n: base.curve(n) for n in CURVE_NAMES},
                       base.provenance)


def test_incomplete_or_broken_files_are_refused(tmp_path):
    provenance = Provenance(source="s", date="d", device="v", method="m")
    with pytest.raises(FitError, match="missing curve\\(s\\) l2_store"):
        write_fit_toml(tmp_path / "x.toml", "nvidia-ampere",
                       {n: GompertzCurve(1.0, 1.0, 1.0) for n in CURVE_NAMES if n != "l2_store"},
                       provenance)
    bad = tmp_path / "bad.toml"
    bad.write_text('family = "nvidia-ampere"\n')
    with pytest.raises(FitError, match="provenance"):
        load_curves(path=bad)
    with pytest.raises(FitError, match="no curve file for family"):
        load_curves("nvidia-kepler")


# ------------------------------------------------------------------------------------------
# the `warpspeed fit` command

EXAMPLE_POINTS = ROOT / "examples" / "points.csv"


def _gompertz_csv(path, params, oversubscriptions):
    a, b, c = params
    rows = [f"{o!r},{1.0 - a * math.exp(-b * math.exp(-c * o))!r}" for o in oversubscriptions]
    path.write_text("# generated from known parameters\noversubscription,hit_rate\n" + "\n".join(rows) + "\n")
    return path


def _fit_cli(args):
    from click.testing import CliRunner

    from warpspeed.cli.main import main

    return CliRunner().invoke(main, ["fit", *args])


def test_fit_command_writes_a_file_that_recovers_the_parameters(tmp_path):
    known = (0.8, 12.0, 2.0)  # not the reference constants the fit starts from
    data = _gompertz_csv(tmp_path / "measured.csv", known, [0.1 * i for i in range(31)])
    out = tmp_path / "out" / "my-gpu.toml"
    out.parent.mkdir()
    result = _fit_cli([str(data), "--curve", "z_layer", "--out", str(out), "--device", "Test GPU"])
    assert result.exit_code == 0, result.output
    assert "z_layer: a=0.8 b=12 c=2 " in result.output
    curves = load_curves(path=out)
    assert curves.z_layer.parameters == pytest.approx(known, rel=1e-6)
    assert not curves.packaged and curves.label == str(out)
    for name in CURVE_NAMES:
        if name != "z_layer":
            assert curves.curve(name).parameters == pytest.approx(REFERENCE[name], rel=1e-12)
            assert curves.curve(name).form == FORMS[name]
    assert len(curves.points["z_layer"]) == 31
    assert curves.provenance.device == "Test GPU"
    # the base file is named by its place in the package, never by an absolute path
    assert "other curves from fits/nvidia-ampere.toml" in curves.provenance.source
    assert str(fits_directory()) not in curves.provenance.source
    assert_states_its_own_values(tomllib.loads(out.read_text(encoding="utf-8")), curves)


def test_a_user_base_file_is_named_relative_to_the_written_file(tmp_path):
    from warpspeed.memory.capacity import base_reference

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    base = load_curves("nvidia-ampere")
    user = write_fit_toml(tmp_path / "a" / "base.toml", "nvidia-ampere", {n: base.curve(n) for n in CURVE_NAMES},
                          base.provenance)
    assert base_reference(load_curves(path=user), tmp_path / "b" / "out.toml") == "../a/base.toml"
    assert base_reference(load_curves(path=user), tmp_path / "a" / "out.toml") == "base.toml"
    assert base_reference(base, tmp_path / "b" / "out.toml") == "fits/nvidia-ampere.toml"


@pytest.mark.parametrize("rates", [[0.5] * 6, [1.0] * 4])
def test_fit_command_refuses_undetermined_fits(tmp_path, rates):
    data = tmp_path / "flat.csv"
    data.write_text("oversubscription,hit_rate\n" + "".join(f"{0.3 * i},{h}\n" for i, h in enumerate(rates)))
    out = tmp_path / "never.toml"
    result = _fit_cli([str(data), "--curve", "y_layer", "--out", str(out)])
    assert result.exit_code == 2
    assert f"all {len(rates)} hit rates are equal" in result.output and "R²" in result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert not out.exists()


@pytest.mark.parametrize("r_squared", [0.0, -0.3])
def test_a_fit_no_better_than_the_mean_is_refused(r_squared):
    from warpspeed.calibration.capacity import require_informative_fit

    result = FitResult("z_layer", GompertzCurve(0.5, 5.0, 1.0), 0.1, r_squared, ((0.0, 0.2), (1.0, 0.4), (2.0, 0.3)))
    with pytest.raises(FitError, match="explains nothing"):
        require_informative_fit(result)
    assert require_informative_fit(dataclasses.replace(result, r_squared=0.01)) is not None


def test_example_points_follow_the_stated_recipe():
    """examples/points.csv says how it was made: the z_layer curve (1.0, 37.1, 3.2) at
    o = 0.2 .. 2.5 plus 0.01 * (-1)^i, clipped to [0, 1], rounded to 6 decimals."""
    points = read_points_csv(EXAMPLE_POINTS)
    assert len(points) == 24
    for i, (o, h) in enumerate(points):
        assert o == pytest.approx(0.2 + 0.1 * i)
        expected = min(1.0, max(0.0, 1.0 - math.exp(-37.1 * math.exp(-3.2 * o)) + 0.01 * (-1) ** i))
        assert h == pytest.approx(expected, abs=5e-7)


def test_readme_fit_example_runs(tmp_path, monkeypatch):
    """``warpspeed fit points.csv --curve z_layer --out fits/my-gpu.toml`` from examples/."""
    import shutil

    shutil.copy(EXAMPLE_POINTS, tmp_path / "points.csv")  # fits/ does not exist yet: it is created
    monkeypatch.chdir(tmp_path)
    result = _fit_cli(["points.csv", "--curve", "z_layer", "--out", "fits/my-gpu.toml"])
    assert result.exit_code == 0, result.output
    fitted = load_curves(path=tmp_path / "fits" / "my-gpu.toml").z_layer
    # the perturbation is +-0.01 around the reference z_layer curve
    assert fitted.a == pytest.approx(1.0, abs=0.01)
    assert fitted.b == pytest.approx(37.1, rel=0.05)
    assert fitted.c == pytest.approx(3.2, rel=0.02)
