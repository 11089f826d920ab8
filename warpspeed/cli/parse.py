"""Reading the command line's numbers, triples and names: the one place their syntax is defined.

Every option is read while the arguments are parsed, before any work; a value that is not
allowed raises a :class:`~warpspeed.errors.WarpspeedError` whose message names the option, the
value and what is allowed, and the command group prints it as one ``error:`` line (exit status 2).

* **Triples** (``--block``, ``--fold``, ``--domain``): 1 to 3 positive integers of ASCII digits,
  separated by ``,`` or by ``x`` (one of the two), with optional spaces around them:
  ``32,8,4``, ``32x8x4``, ``64``. Empty entries (``64,,64``), a trailing separator
  (``64x64x64x``), signs, underscores, decimal points and non-ASCII digits are refused.
* **Domains** are triples within :func:`warpspeed.kernel.limits.check_domain`, **foldings**
  triples within :func:`warpspeed.kernel.limits.check_fold`.
* **Numbers** (``--clock-mhz``): a finite decimal number > 0 (``nan``, ``inf`` refused); the
  device's clock range is checked once the device is known, still before the kernel is built
  (:func:`warpspeed.hardware.clock.check_clock_mhz`).
* **Worker processes** (``--jobs``): 1 to :func:`max_jobs` (four per CPU).
* **Names** (``power-fit --family``, ``fit --family``, ``refit --family``): the rule of
  :mod:`warpspeed.files.names`; a name is never a path.
"""

from __future__ import annotations

import math
import os
import re
from typing import Callable

import click

from warpspeed.errors import WarpspeedError
from warpspeed.files.names import check_name
from warpspeed.kernel.limits import check_domain, check_fold

#: A triple: ASCII digits separated by one kind of separator, spaces allowed around entries.
_TRIPLE = re.compile(r"\s*[0-9]+\s*(?:(?P<sep>[,x])\s*[0-9]+\s*(?:(?P=sep)\s*[0-9]+\s*)?)?")
#: Longest text read as a triple or a number (a value this long is a mistake, not a size).
MAX_OPTION_TEXT = 100
#: A decimal number: optional sign, digits with an optional fraction, optional exponent.
_NUMBER = re.compile(r"\s*[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*")


class InputError(WarpspeedError):
    """A command-line value that is not allowed."""


def _shown(text: str) -> str:
    return repr(text) if len(text) <= MAX_OPTION_TEXT else repr(text[:MAX_OPTION_TEXT]) + "..."


def parse_triple(text: str, what: str) -> tuple[int, ...]:
    """``"32,8,4"`` or ``"32x8x4"`` -> (32, 8, 4): 1 to 3 positive integers (module docstring)."""
    if not isinstance(text, str) or len(text) > MAX_OPTION_TEXT or _TRIPLE.fullmatch(text) is None:
        raise InputError(f"{what} must be integers like 32,8,4 (got {_shown(str(text))}); allowed: 1 to 3 "
                         "positive integers separated by ',' or by 'x'")
    values = tuple(int(v) for v in re.split(r"[,x]", text))
    if any(v <= 0 for v in values):
        raise InputError(f"{what} entries must be positive (got {_shown(text)}); allowed: 1 to 3 positive integers")
    return values


def parse_domain(text: str, what: str = "--domain") -> tuple[int, ...]:
    """A domain in cells: a triple within :func:`warpspeed.kernel.limits.check_domain`."""
    return check_domain(parse_triple(text, what), what, InputError)


def parse_fold(text: str, what: str = "--fold") -> tuple[int, ...]:
    """A thread folding: a triple within :func:`warpspeed.kernel.limits.check_fold`."""
    return check_fold(parse_triple(text, what), what, InputError)


def parse_positive_number(text: str, what: str, unit: str = "") -> float:
    """A finite decimal number > 0 (``nan``, ``inf``, ``0``, negatives and words refused)."""
    if not isinstance(text, str) or len(text) > MAX_OPTION_TEXT or _NUMBER.fullmatch(text) is None:
        raise InputError(f"{what} is not a number (got {_shown(str(text))}); allowed: a finite number > 0"
                         f"{' in ' + unit if unit else ''}")
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{what} is not a finite number > 0 (got {_shown(text)}); allowed: a finite number > 0"
                         f"{' in ' + unit if unit else ''}")
    return value


#: Local worker processes per CPU at most (``--jobs``): one per CPU keeps them busy; a few more
#: cover workers waiting on I/O; thousands only spawn processes.
JOBS_PER_CPU = 4


def max_jobs() -> int:
    """The most local worker processes ``--jobs`` allows on this machine (:data:`JOBS_PER_CPU` per
    CPU this process may run on)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return JOBS_PER_CPU * max(1, cpus)


class ParsedOption(click.ParamType):
    """A click type that reads its value with one of the functions of this module; the option's
    own name (``--domain``) names it in messages."""

    def __init__(self, parse: Callable[[str, str], object], name: str) -> None:
        self.parse = parse
        self.name = name

    def convert(self, value: object, param: click.Parameter | None,  # type: ignore[override]
                ctx: click.Context | None) -> object:
        if value is None or not isinstance(value, str):
            return value  # a default given as a value, or already converted
        what = param.opts[0] if param is not None and param.opts else self.name
        return self.parse(value, what)


#: ``--block``: threads per block (the device checks the limits).
BLOCK = ParsedOption(parse_triple, "triple")
#: ``--fold``: cells per thread.
FOLD = ParsedOption(parse_fold, "triple")
#: ``--domain``: cells of the iteration domain.
DOMAIN = ParsedOption(parse_domain, "triple")
#: ``--clock-mhz``: an SM clock in MHz (the device's range is checked with the device).
CLOCK_MHZ = ParsedOption(lambda text, what: parse_positive_number(text, what, "MHz"), "number")
#: ``--jobs``: local worker processes, 1 to :func:`max_jobs`.
JOBS = click.IntRange(min=1, max=max_jobs())
#: A name (``--family``).
NAME = ParsedOption(lambda text, what: check_name(text, what, InputError), "name")
