"""The wheel carries every package of the tree (a package missing from the list breaks a
non-editable install while editable checkouts keep working)."""

from __future__ import annotations

import runpy

import pytest
import setuptools

from tests.paths import ROOT


def _packages_from_setup(monkeypatch: pytest.MonkeyPatch) -> tuple[set[str], dict[str, str]]:
    captured: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: captured.update(kwargs))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"))
    return set(captured["packages"]), dict(captured.get("package_dir", {}))


def _python_directories(top: str) -> set[str]:
    """Every directory below ``top`` that holds Python modules, as a dotted package name."""
    return {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / top).rglob("*.py")
            if "__pycache__" not in p.parts}


def test_every_python_directory_is_a_listed_package(monkeypatch):
    packages, package_dir = _packages_from_setup(monkeypatch)
    on_disk = _python_directories("warpspeed") | _python_directories("pystencils_plugin")
    assert on_disk - packages == set()
    assert "warpspeed.memory.levels" in packages


def test_every_listed_package_is_a_regular_package(monkeypatch):
    """find_packages skips directories without __init__.py: every listed package has one."""
    packages, package_dir = _packages_from_setup(monkeypatch)
    for name in packages:
        directory = ROOT / package_dir.get(name, name.replace(".", "/"))
        assert (directory / "__init__.py").is_file(), name


def test_fitted_curves_install_as_warpspeed_fits(monkeypatch):
    packages, package_dir = _packages_from_setup(monkeypatch)
    assert package_dir == {"warpspeed.fits": "fits"}
    assert "warpspeed.fits" in packages and "fits" not in packages
