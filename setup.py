"""Build configuration that pyproject.toml cannot state: the package list.

Every package under ``warpspeed/`` and ``pystencils_plugin/`` is found by
``setuptools.find_packages``, so a new subpackage reaches the wheel without being listed by hand.
The fitted capacity curves live in the top-level ``fits/`` directory (with their data and
provenance) and install as the subpackage ``warpspeed.fits``. Everything else (metadata,
dependencies, package data) is in pyproject.toml.
"""

from setuptools import find_packages, setup

#: Top-level packages of the distribution; their subpackages are found in the tree.
TOP_LEVEL = ("warpspeed", "pystencils_plugin")
#: Packages installed from a directory of another name: package -> directory.
PACKAGE_DIRS = {"warpspeed.fits": "fits"}

setup(
    packages=[*find_packages(include=[pattern for top in TOP_LEVEL for pattern in (top, f"{top}.*")]),
              *PACKAGE_DIRS],
    package_dir=PACKAGE_DIRS,
)
