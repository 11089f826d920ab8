"""Capacity-miss curves: values by hand, refits, bad data, family files."""

from __future__ import annotations

import dataclasses
import math
import tomllib
from importlib import resources

import numpy as np
import pytest

from warpspeed.memory.capacity import (
    CURVE_NAMES,
    FAMILIES,
    FitResult,
    GompertzCurve,
    Provenance,
    curves_for_device,
    family_for_device,
    fit_curve,
    fits_directory,
    load_curves,
    read_points_csv,
    write_fit_toml,
)
from warpspeed.hardware.device import load_device
from warpspeed.errors import FitError

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

PUBLISHED = {  # DESIGN.md, "Capacity misses" (paper 001, 4.5)
    "l1_load": (0.66, 6.77, 1.45),
    "y_layer": (1.0, 37.1, 3.2),
    "z_layer": (1.0, 37.1, 3.2),
    "l2_load": (0.2, 7.56, 0.67),
    "l2_store": (0.38, 3.79, 0.55),
}


def test_a100_loads_the_published_defaults():
    curves = curves_for_device(A100)
    assert curves.family == "nvidia-ampere"
    for name, params in PUBLISHED.items():
        assert curves.curve(name).parameters == params
    assert curves.x_layer.parameters == PUBLISHED["y_layer"]
    assert curves.provenance.device == "A100-SXM4-40GB"
    assert curves.points["z_layer"] == ()


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_file_loads_with_provenance(family):
    curves = load_curves(family)
    assert curves.family == family
    for field in ("source", "date", "device", "method"):
        assert getattr(curves.provenance, field)
    for name, params in PUBLISHED.items():
        assert curves.curve(name).parameters == params
    if family != "nvidia-ampere":
        assert "not refit" in curves.provenance.note and "A100" in curves.provenance.note


def test_fits_directory_holds_the_family_files():
    names = {p.name for p in fits_directory().iterdir()}
    assert {f"{f}.toml" for f in FAMILIES} <= names
    assert "__init__.py" in names


def test_fits_are_reachable_as_package_resources_when_mapped():
    try:
        root = resources.files("warpspeed.fits")
    except ModuleNotFoundError:
        pytest.skip("warpspeed.fits is not mapped in pyproject.toml yet")
    data = tomllib.loads((root / "nvidia-ampere.toml").read_text())
    assert data["curves"]["z_layer"]["b"] == 37.1


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
    assert again.l1_load.parameters == PUBLISHED["l1_load"]
    assert again.provenance == provenance
    assert again.notes["z_layer"] == "refit on synthetic points"
    assert load_curves("nvidia-ampere", path=tmp_path).z_layer == again.z_layer


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
