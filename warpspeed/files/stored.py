"""Where warpspeed's stored measurements live: ``fits/data/`` of the source tree, installed as the
data of the package ``warpspeed.fits``."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

#: The package whose data folder ``data/`` holds the stored measurements.
FITS_PACKAGE = "warpspeed.fits"


def stored_file(*parts: str) -> Traversable:
    """The stored file ``fits/data/<parts...>`` (a package resource; it may not exist)."""
    return resources.files(FITS_PACKAGE).joinpath("data", *parts)
