"""The trace's JSON Schema (``schema.json``, draft 2020-12) and validation against it."""

from __future__ import annotations

import json
from functools import lru_cache

import jsonschema

from warpspeed.errors import WarpspeedError
from warpspeed.files.stored import package_file

#: Where the JSON Schema of the trace is installed: package and file.
SCHEMA_PACKAGE, SCHEMA_FILE = "warpspeed.trace", "schema.json"


class TraceError(WarpspeedError):
    """A trace that does not follow the schema."""


@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The JSON Schema of ``warpspeed-trace`` version 1."""
    return json.loads(package_file(SCHEMA_PACKAGE, SCHEMA_FILE).read_text())


def validate_trace(trace: dict) -> None:
    """Raise :class:`TraceError` naming the first offending key path when ``trace`` does not
    follow the schema."""
    validator = jsonschema.Draft202012Validator(load_schema())
    error = next(iter(sorted(validator.iter_errors(trace), key=lambda e: list(e.path))), None)
    if error is not None:
        where = "/".join(str(p) for p in error.path) or "(top level)"
        raise TraceError(f"trace does not follow warpspeed-trace/1 at {where}: {error.message}")
