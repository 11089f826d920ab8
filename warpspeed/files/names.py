"""Names that select something (a power family, a capacity-curve family, a device): the one rule.

A name is never used as a path. Where a name picks a file (``<family>.toml`` of a package
directory, ``<family>.toml`` written by ``warpspeed power-fit``), it must match
:data:`NAME_PATTERN`: a letter or digit, then letters, digits, ``-``, ``_`` or ``.``, at most
:data:`MAX_NAME_LENGTH` characters, and no ``..``. Every built-in name (``ampere-ga100``,
``nvidia-ampere``, ``A100-SXM4-40GB``, ``star3d-r4``) matches it; ``../x``, ``a/b``, ``a b`` and
the empty string do not.
"""

from __future__ import annotations

import re

from warpspeed.errors import WarpspeedError

#: The longest name: longer than every built-in name (the longest, "V100-PCIe-32GB", has 14
#: characters) and short enough to stay one readable token in a file name and a message.
MAX_NAME_LENGTH = 64
#: What a name may be: ASCII letters and digits, then also ``-``, ``_`` and ``.`` (no path
#: separator, no whitespace, no leading dot or dash).
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: The rule in words, for error messages.
NAME_RULE = (f"1 to {MAX_NAME_LENGTH} characters, an ASCII letter or digit, then letters, digits, '-', '_' "
             "or '.' (no path separators, spaces or '..')")


def is_name(text: object) -> bool:
    """Whether ``text`` is a name by the rule of this module."""
    return (isinstance(text, str) and len(text) <= MAX_NAME_LENGTH and NAME_PATTERN.fullmatch(text) is not None
            and ".." not in text)


def check_name(text: object, what: str, error: type[WarpspeedError] = WarpspeedError) -> str:
    """``text`` if it is a name (:func:`is_name`), else ``error`` naming ``what``, the value and the rule."""
    if not is_name(text):
        shown = repr(text) if not isinstance(text, str) or len(text) <= 2 * MAX_NAME_LENGTH else \
            repr(text[:2 * MAX_NAME_LENGTH]) + "..."
        raise error(f"{what} is not a name (got {shown}); allowed: {NAME_RULE}")
    return text  # type: ignore[return-value]
