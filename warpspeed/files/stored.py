"""Files installed with warpspeed: the data of its packages and the stored measurements.

This is the one module of warpspeed that reads package resources (``importlib.resources``): the
device files, latency tables, power families and the trace schema live in their packages, the
fitted constants and the stored measurements in ``fits/`` of the source tree, installed as the
package ``warpspeed.fits`` (its ``data/`` folder holds the measurements). Every other module asks
here, by package and file name, never by a path of its own.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

#: The package of the fitted constants (``fits/*.toml``) and the stored measurements (``data/``).
FITS_PACKAGE = "warpspeed.fits"
#: The folder of :data:`FITS_PACKAGE` that holds the stored measurements.
DATA_FOLDER = "data"

__all__ = ["DATA_FOLDER", "FITS_PACKAGE", "Traversable", "as_file", "fits_directory", "fits_file", "package_file",
           "package_files", "stored_file", "subpackage_files"]


def package_file(package: str, *parts: str) -> Traversable:
    """The file ``parts`` of ``package``'s data (it may not exist)."""
    return resources.files(package).joinpath(*parts)


def package_files(package: str, suffix: str) -> tuple[Traversable, ...]:
    """The data files of ``package`` whose names end in ``suffix``, sorted by name."""
    return tuple(sorted((p for p in resources.files(package).iterdir() if p.name.endswith(suffix)),
                        key=lambda p: p.name))


def subpackage_files(package: str, name: str) -> tuple[tuple[str, Traversable], ...]:
    """``(subpackage folder name, file)`` for every direct subpackage folder of ``package`` that
    holds a data file called ``name``, sorted by folder name (the subpackages are not imported)."""
    folders = sorted((p for p in resources.files(package).iterdir() if p.is_dir()), key=lambda p: p.name)
    return tuple((p.name, p.joinpath(name)) for p in folders if p.joinpath(name).is_file())


def fits_file(*parts: str) -> Traversable:
    """The file ``fits/<parts...>`` (fitted constants; it may not exist): in the installed package,
    or in the repository's top-level ``fits/`` when warpspeed runs from a source tree that is not
    installed (``PYTHONPATH=.``)."""
    try:
        return package_file(FITS_PACKAGE, *parts)
    except ModuleNotFoundError:
        return fits_directory().joinpath(*parts)


def stored_file(*parts: str) -> Traversable:
    """The stored measurement ``fits/data/<parts...>`` (it may not exist)."""
    return fits_file(DATA_FOLDER, *parts)


def fits_directory() -> Path:
    """The directory of the fitted constants on the file system: the package ``warpspeed.fits``
    when installed, else the repository's top-level ``fits/`` next to the ``warpspeed`` package."""
    try:
        path = Path(str(resources.files(FITS_PACKAGE)))
        if path.is_dir():
            return path
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parents[2] / "fits"


def as_file(resource: Traversable) -> AbstractContextManager[Path]:
    """A file system path of ``resource`` for the time of a ``with`` block (readers that need one)."""
    return resources.as_file(resource)
