"""What loads what: the command line's help needs neither sympy nor numpy, and predictions do not
need scipy (it is imported by the fits that use it)."""

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    """The modules loaded after running ``code`` in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint('MODULES', *sorted(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split("MODULES", 1)[1].split())


def test_help_imports_no_sympy_or_numpy():
    loaded = _modules_after("import sys\nfrom warpspeed.cli import main\nsys.argv = ['warpspeed', '--help']\n"
                            "try:\n    main()\nexcept SystemExit:\n    pass")
    assert "warpspeed.cli.rank" in loaded  # the commands are registered
    assert not {"sympy", "numpy", "scipy", "islpy", "pystencils"} & loaded


def test_predictions_import_no_scipy():
    loaded = _modules_after("import warpspeed.rank, warpspeed.predict, warpspeed.calibration, warpspeed.models")
    assert "warpspeed.predict" in loaded and "numpy" in loaded
    assert not any(m == "scipy" or m.startswith("scipy.") for m in loaded)


def test_public_names_still_resolve():
    import warpspeed as ws
    from warpspeed.kernel import Field, load

    assert ws.Field is Field and ws.load is load and "load_device" in dir(ws)
