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

from warpspeed.lazy import lazy_exports


def _build():
    from warpspeed.trace import build

    return build


def _document():
    from warpspeed.trace import document

    return document


def _instructions():
    from warpspeed.sass import instructions

    return instructions


def _schema():
    from warpspeed.trace import schema

    return schema


__getattr__, __dir__, __all__ = lazy_exports(globals(), {
    _build: ("build_trace", "instruction_stream"),
    _document: ("TRACE_FORMAT", "TRACE_VERSION", "Trace", "trace_from_json"),
    _instructions: ("Instruction", "InstructionStream", "functional_unit"),
    _schema: ("TraceError", "load_schema", "parse_trace", "validate_trace"),
})
