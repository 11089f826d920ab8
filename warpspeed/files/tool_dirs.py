"""A directory another library needs before it can be imported, or a temporary one for this process.

pystencils (its joblib cache) and matplotlib (its configuration directory) make a directory under
the user's home when they are imported; where that cannot be done (a read-only home, a home that is
not a directory) pystencils fails to import and matplotlib prints two lines on every plot.
:func:`ensure_tool_dir` checks the directory first and, when it cannot be made or written, points
the library's environment variable at a temporary directory for this process and its workers
(removed when the process ends).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile


def ensure_tool_dir(env: str, default: str | None, prefix: str) -> None:
    """Leave ``$env`` (else ``default``, the library's own choice; ``None``: unknown) alone when it
    is a writable directory or can be made one; otherwise set ``$env`` to a fresh temporary
    directory named ``prefix...`` that is removed at exit."""
    target = os.environ.get(env) or default
    if target is None:
        return
    try:
        os.makedirs(target, exist_ok=True)
        if os.access(target, os.W_OK | os.X_OK):
            return
    except OSError:
        pass
    fallback = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, fallback, True)
    os.environ[env] = fallback
