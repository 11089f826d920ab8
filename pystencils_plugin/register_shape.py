"""The shape of a kernel's code: its source with every numeric constant taken out.

pystencils bakes a kernel's domain into its source (the loop bounds and the fields' strides are
integer literals), so the same update rule on another domain is another source, and the register
count ptxas gave for one domain is not found for the next by the source's digest
(:mod:`pystencils_plugin.register_table`). The code differs only in constants, and ptxas
allocates registers for the code's structure: the loads, the arithmetic and the values live at
once, not the values of the offsets (an offset that does not fit an instruction's immediate field
could change that; ``benchmarks/register_domains.py`` checks a sample of domains against ptxas and
``docs/registers.md`` gives the result).

:func:`code_shape` replaces every numeric literal by ``#`` and renames pystencils' named
constants (``__c_1_0o2_0``: the constant 1/2) by order of first appearance, so two sources have the
same shape exactly when they differ only in the values of constants; :func:`shape_digest` is the
SHA-256 of the shape, the key under which the shipped table also files its counts.
"""

from __future__ import annotations

import hashlib
import re

#: A numeric literal of C/CUDA (decimal integer or floating point, with an optional exponent and
#: suffix) that is not part of an identifier.
_NUMBER = re.compile(r"(?<![\w.])(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?:[uU]?[lL]{0,2}|[fF])?(?![\w.])")
#: pystencils' names of constants (``__c_<value>``).
_CONSTANT_NAME = re.compile(r"\b__c_\w+")


def code_shape(source: str) -> str:
    """``source`` with each numeric literal replaced by ``#`` and pystencils' constant names by
    ``__c0``, ``__c1``, ... in order of first appearance (whitespace runs collapsed)."""
    names: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        return names.setdefault(match.group(0), f"__c{len(names)}")

    text = _CONSTANT_NAME.sub(rename, source)
    text = _NUMBER.sub("#", text)
    return " ".join(text.split())


def shape_digest(source: str) -> str:
    """SHA-256 (hex) of :func:`code_shape` of ``source``."""
    return hashlib.sha256(code_shape(source).encode()).hexdigest()
