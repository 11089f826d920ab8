"""The per-kernel trace: one JSON document per (kernel, device, configuration).

:func:`build_trace` (also ``Prediction.trace()``) makes it, :func:`validate_trace` checks it
against the shipped JSON Schema, :func:`write_jsonl` streams many to a JSON Lines file.

The names below are imported on first use, so that importing one module of the package (the
instruction categories the power and pipeline models read) does not load the JSON Schema
validator.
"""

from importlib import import_module

#: Where each public name is defined; imported on first use (PEP 562).
_EXPORTS = {
    "TRACE_FORMAT": "warpspeed.trace.build",
    "TRACE_VERSION": "warpspeed.trace.build",
    "build_trace": "warpspeed.trace.build",
    "instruction_stream": "warpspeed.trace.build",
    "Instruction": "warpspeed.trace.instructions",
    "InstructionStream": "warpspeed.trace.instructions",
    "functional_unit": "warpspeed.trace.instructions",
    "load_schema": "warpspeed.trace.schema",
    "validate_trace": "warpspeed.trace.schema",
}

__all__ = ["TRACE_FORMAT", "TRACE_VERSION", "Instruction", "InstructionStream", "build_trace",
           "functional_unit", "instruction_stream", "load_schema", "validate_trace"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
