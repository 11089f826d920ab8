"""The ``warpspeed`` command line: it parses arguments and renders results, nothing more.

A command runs once and the process ends: Python's shutdown would then run a last cyclic garbage
collection over every object the process holds (sympy's caches, the generated kernels), about
0.3 s with sympy and pystencils loaded, to free memory that the operating system reclaims anyway.
The objects are frozen (``gc.freeze``) at exit instead, so the collection skips them; ``atexit``
handlers, open files and ``weakref.finalize`` callbacks run as before.
"""

import atexit
import gc

from warpspeed.cli.main import main

atexit.register(gc.freeze)

__all__ = ["main"]
