"""Names that select something (a power family, a capacity-curve family, a device): the one rule.

A name is never used as a path. Where a name picks a file (``<family>.toml`` of a package
directory, ``<family>.toml`` written by ``warpspeed power-fit``), it must match
:data:`NAME_PATTERN`: a letter or digit, then letters, digits, ``-``, ``_`` or ``.``, at most
:data:`MAX_NAME_LENGTH` characters, and no ``..``. Every built-in name (``ampere-ga100``,
``nvidia-ampere``, ``A100-SXM4-40GB``, ``star3d-r4``) matches it; ``../x``, ``a/b``, ``a b`` and
the empty string do not.

Where an argument takes a name or a path (``--device``, ``--base``, a study's ``devices``), a
path is told from a name by its look alone, never by what happens to exist in the working
directory (:func:`looks_like_path`): a text holding a path separator (``/``, or the system's own)
or ending in ``.toml`` is a path (``./H200``, ``gpus/mine.toml``, ``mine.toml``); anything else
is a name (``H200``, ``V100``, ``volta``), even where a file of that name exists.
"""

from __future__ import annotations

import os
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


#: The suffix that makes a text a path (:func:`looks_like_path`): device and family files are TOML.
PATH_SUFFIX = ".toml"


def looks_like_path(text: object) -> bool:
    """Whether ``text`` (a name or a path) is a path: a :class:`os.PathLike`, or a string holding a
    path separator or ending in :data:`PATH_SUFFIX` (any case). See the module docstring."""
    if isinstance(text, os.PathLike):
        return True
    if not isinstance(text, str):
        return False
    separators = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return any(sep in text for sep in separators) or text.lower().endswith(PATH_SUFFIX)
