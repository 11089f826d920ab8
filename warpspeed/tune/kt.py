"""Kernel Tuner, imported where tuning needs it: one line saying how to install it when it is missing."""

from __future__ import annotations

from types import SimpleNamespace

from warpspeed.tune.cache import TuneError

#: How to install Kernel Tuner with warpspeed (the ``tune`` extra).
INSTALL_HINT = 'pip install "warpspeed[tune]" (Kernel Tuner 1.5)'


def kernel_tuner_modules() -> SimpleNamespace:
    """Kernel Tuner's ``interface``, ``util`` and ``strategies.wrapper`` modules; raises
    :class:`~warpspeed.tune.cache.TuneError` when Kernel Tuner is not installed."""
    try:
        from kernel_tuner import interface, util
        from kernel_tuner.strategies import wrapper
    except ImportError as exc:
        raise TuneError(f"tuning needs Kernel Tuner, which cannot be imported ({exc}); install it with "
                        f"{INSTALL_HINT}") from None
    return SimpleNamespace(interface=interface, util=util, wrapper=wrapper)
