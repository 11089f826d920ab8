"""The per-kernel trace: one JSON document per (kernel, device, configuration).

:func:`build_trace` (also ``Prediction.trace()``) makes it, :func:`validate_trace` checks it
against the shipped JSON Schema, :func:`write_jsonl` streams many to a JSON Lines file.
"""

from warpspeed.trace.build import TRACE_FORMAT, TRACE_VERSION, build_trace, instruction_stream
from warpspeed.trace.instructions import Instruction, InstructionStream, functional_unit
from warpspeed.trace.schema import load_schema, validate_trace

__all__ = ["TRACE_FORMAT", "TRACE_VERSION", "Instruction", "InstructionStream", "build_trace",
           "functional_unit", "instruction_stream", "load_schema", "validate_trace"]
