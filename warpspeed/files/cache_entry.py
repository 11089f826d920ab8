"""Cache entries that hold data, never code, and are verified before they are used.

An entry is one JSON object (UTF-8, ``NaN``/``Infinity`` refused)::

    {"format": "<what>-<version>", "key": "<the key it was stored under>",
     "sha256": "<SHA-256 of the payload's canonical JSON>", "payload": <plain JSON data>}

:func:`read_entry` returns the payload only when the file is such an object, its format is the
reader's, its key is the one asked for and the checksum matches the payload; anything else (a
missing, truncated, corrupted, foreign or planted file, an entry of an older format) is a miss,
``None``, and the caller recomputes and replaces the entry. JSON is parsed, never executed, so
an entry cannot run code. :func:`write_entry` writes atomically (:mod:`warpspeed.files.atomic`);
a cache that cannot be written costs a recomputation next time, nothing else.

Entries and the folders that hold them inside the cache directory are the cache's own: an entry
or a folder (``kernels/``, ``sass/``, ``registers/``) that is a symbolic link is never followed,
so nothing is read from or written into the place a link points to (the entry is a miss and is
not stored). The cache directory itself may be a link (a cache moved to another disk).

The checksum detects damage (a truncated write, a flipped byte, an edited number); the cache
directory is the user's own, like Python's ``__pycache__``, and is not defended against its owner.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from warpspeed.files.atomic import write_text_atomic
from warpspeed.units import MIB

#: Largest entry read, in bytes: a kernel with its source and operation list is well under 1 MiB;
#: a bigger file is not an entry warpspeed wrote.
MAX_ENTRY_BYTES = 64 * MIB


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON data")


def canonical_json(payload: Any) -> str:
    """The payload as canonical JSON (sorted keys, no spaces, no NaN): what the checksum covers."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)


def checksum(payload: Any) -> str:
    """SHA-256 (hex) of :func:`canonical_json` of ``payload``."""
    return hashlib.sha256(canonical_json(payload).encode("ascii")).hexdigest()


def entry_text(fmt: str, key: str, payload: Any) -> str:
    """The text of an entry (see the module docstring)."""
    return json.dumps({"format": fmt, "key": key, "sha256": checksum(payload), "payload": payload},
                      sort_keys=True, allow_nan=False) + "\n"


def read_entry(path: Path, fmt: str, key: str) -> Any | None:
    """The verified payload of the entry at ``path``, or ``None`` (a miss: see the module docstring)."""
    try:
        if path.parent.is_symlink():
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))  # a
        # planted FIFO never blocks, a planted link is not followed
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # a FIFO, a device, a directory
                return None
            data = handle.read(MAX_ENTRY_BYTES + 1)
        if len(data) > MAX_ENTRY_BYTES:
            return None
        entry = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    if not isinstance(entry, dict) or entry.get("format") != fmt or entry.get("key") != key or "payload" not in entry:
        return None
    payload = entry["payload"]
    try:
        if entry.get("sha256") != checksum(payload):
            return None
    except (ValueError, RecursionError):
        return None
    return payload


def write_entry(path: Path, fmt: str, key: str, payload: Any) -> bool:
    """Store ``payload`` as the entry ``key`` at ``path`` (atomically, creating the directory);
    False when it cannot be written (the cache is then skipped)."""
    try:
        text = entry_text(fmt, key, payload)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.parent.is_symlink():
            return False  # a folder of the cache that is a link: never written through
        if path.is_symlink() or (path.exists() and not path.is_file()):
            path.unlink()  # an entry is a regular file of its own: a planted link, FIFO or device is removed
        write_text_atomic(path, text)
    except (OSError, ValueError, TypeError):
        return False
    return True
