"""Values ready for JSON: JSON has no infinity and no NaN, so they become ``null``."""

from __future__ import annotations

import math
from typing import Any


def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float (inf, -inf, NaN) replaced by None, recursively
    through dicts, lists and tuples (tuples become lists, as JSON has no tuples)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def json_text(value: Any, indent: int | None = 2) -> str:
    """``value`` as JSON text (:func:`json_safe` first, so the text never holds ``NaN`` or
    ``Infinity``, which JSON does not have)."""
    import json

    return json.dumps(json_safe(value), indent=indent, allow_nan=False)
