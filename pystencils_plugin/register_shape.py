"""The shape of a kernel's code: its source with every numeric constant taken out.

pystencils bakes a kernel's domain into its source (the loop bounds and the fields' strides are
integer literals), so the same update rule on another domain is another source, and the register
count ptxas gave for one domain is not found for the next by the source's digest
(:mod:`pystencils_plugin.register_table`). The code differs only in constants, and ptxas
allocates registers for the code's structure: the loads, the arithmetic and the values live at
once, not the values of the offsets (an offset that does not fit an instruction's immediate field
could change that; ``benchmarks/register_domains.py`` checks a sample of domains against ptxas and
``docs/registers.md`` gives the result).

:func:`code_shape` replaces every numeric literal by ``#`` (an integer of 2^20 or more, a stride
beyond a load's immediate offset, by ``#L``) and renames pystencils' named constants
(``__c_1_0o2_0``: the constant 1/2) by order of first appearance, so two sources have the same
shape exactly when they differ only in the values of constants of the same size class;
:func:`shape_digest` is the SHA-256 of the shape, the key under which the shipped table also files
its counts.
"""

from __future__ import annotations

import hashlib
import re

#: A numeric literal of C/CUDA (decimal integer or floating point, with an optional exponent and
#: suffix) that is not part of an identifier.
_NUMBER = re.compile(r"(?<![\w.])(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?:[uU]?[lL]{0,2}|[fF])?(?![\w.])")
#: pystencils' names of constants (``__c_<value>``).
_CONSTANT_NAME = re.compile(r"\b__c_\w+")


#: An integer literal this large (elements) is a different constant for ptxas: as a stride of
#: 8-byte elements it spans 2^23 bytes, past the 24-bit signed immediate offset of a global load,
#: so a neighbour's address needs a register of its own. Observed with CUDA 13.0
#: (``benchmarks/register_domains.py``): the 7-point stencil has 22 registers on sm_80 up to
#: z-strides of 541 464 elements (4.3 MB) and 26 from 2 103 300 (16.8 MB).
LARGE_LITERAL = 2 ** 20
_INTEGER = re.compile(r"\d+")


def code_shape(source: str) -> str:
    """``source`` with each numeric literal replaced by ``#`` (``#L`` for an integer of at least
    :data:`LARGE_LITERAL`) and pystencils' constant names by ``__c0``, ``__c1``, ... in order of
    first appearance (whitespace runs collapsed)."""
    names: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        return names.setdefault(match.group(0), f"__c{len(names)}")

    def literal(match: re.Match) -> str:
        text = match.group(0)
        digits = _INTEGER.match(text)
        whole = digits is not None and digits.end() == len(text.rstrip("uUlL"))
        return "#L" if whole and int(digits.group(0)) >= LARGE_LITERAL else "#"

    text = _CONSTANT_NAME.sub(rename, source)
    text = _NUMBER.sub(literal, text)
    return " ".join(text.split())


def shape_digest(source: str) -> str:
    """SHA-256 (hex) of :func:`code_shape` of ``source``."""
    return hashlib.sha256(code_shape(source).encode()).hexdigest()
