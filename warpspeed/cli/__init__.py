"""The ``warpspeed`` command line: it parses arguments and renders results, nothing more."""

from warpspeed.cli.main import main

__all__ = ["main"]
