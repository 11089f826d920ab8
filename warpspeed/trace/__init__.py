"""The per-kernel trace: one document per (kernel, device, configuration).

:func:`build_trace` makes it (a :class:`~warpspeed.trace.document.Trace`, typed data whose JSON
form, :meth:`~warpspeed.trace.document.Trace.as_json`, is the file format), :func:`validate_trace`
checks a JSON document against the shipped JSON Schema and :func:`trace_from_json` reads one
back. ``warpspeed trace`` writes one trace, ``warpspeed rank --traces`` one per line of a JSON
Lines file.

The names below are imported on first use (PEP 562), so that importing one module of the package
(the instruction categories the power and pipeline models read) does not load the JSON Schema
validator.
"""

from __future__ import annotations

_BUILD_NAMES = frozenset(("build_trace", "instruction_stream"))
_DOCUMENT_NAMES = frozenset(("TRACE_FORMAT", "TRACE_VERSION", "Trace", "trace_from_json"))
_INSTRUCTION_NAMES = frozenset(("Instruction", "InstructionStream", "functional_unit"))
_SCHEMA_NAMES = frozenset(("load_schema", "validate_trace"))

__all__ = sorted(_BUILD_NAMES | _DOCUMENT_NAMES | _INSTRUCTION_NAMES | _SCHEMA_NAMES)


def __getattr__(name: str):
    if name in _BUILD_NAMES:
        from warpspeed.trace import build as module
    elif name in _DOCUMENT_NAMES:
        from warpspeed.trace import document as module
    elif name in _INSTRUCTION_NAMES:
        from warpspeed.trace import instructions as module
    elif name in _SCHEMA_NAMES:
        from warpspeed.trace import schema as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
