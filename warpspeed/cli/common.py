"""Helpers shared by the command modules (:mod:`warpspeed.cli.main`, :mod:`warpspeed.cli.validate`)."""

from __future__ import annotations

import click

DEFAULT_DEVICE = "A100-SXM4-40GB"
DEFAULT_KERNEL = "star3d-r4"


def parse_triple(text: str, what: str) -> tuple[int, ...]:
    """``"32,8,4"`` or ``"32x8x4"`` -> (32, 8, 4); 1 to 3 integers (the model checks their values)."""
    try:
        values = tuple(int(v) for v in text.replace("x", ",").split(",") if v.strip())
    except ValueError:
        raise click.BadParameter(f"{what} must be integers like 32,8,4 (got {text!r})") from None
    if not 1 <= len(values) <= 3:
        raise click.BadParameter(f"{what} takes 1 to 3 integers like 32,8,4 (got {text!r})")
    return values
