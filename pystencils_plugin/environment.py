"""pystencils' own disk cache: a directory it needs before it can be imported.

pystencils creates its joblib cache directory when it is imported (``$PYSTENCILS_CACHE_DIR``, else
the user's cache directory, ``~/.cache/pystencils`` on Linux); where that directory cannot be made
(a read-only home, a home that is not a directory) the import fails, and with it every kernel of
the plugin. :func:`prepare_pystencils_cache` checks the directory first and, when it cannot be
made, points pystencils at a temporary directory for this process and its workers (removed when
the process ends), so that warpspeed runs instead of failing. warpspeed itself does not use
pystencils' cache, so this says nothing; warpspeed's own cache warns once when it cannot be used
(:func:`warpspeed.sass.compile.writable_cache_dir`).
"""

from __future__ import annotations

from warpspeed.files.tool_dirs import ensure_tool_dir

#: The environment variable pystencils reads its cache directory from.
PYSTENCILS_CACHE_ENV = "PYSTENCILS_CACHE_DIR"


def _default_cache_dir() -> str | None:
    """The directory pystencils uses without :data:`PYSTENCILS_CACHE_ENV` (None: unknown)."""
    try:
        from appdirs import user_cache_dir
    except ImportError:  # pragma: no cover - a dependency of pystencils
        return None
    return user_cache_dir("pystencils")


def prepare_pystencils_cache() -> None:
    """Make sure pystencils can be imported (see the module docstring); call before importing it."""
    ensure_tool_dir(PYSTENCILS_CACHE_ENV, _default_cache_dir(), "warpspeed-pystencils-cache-")
