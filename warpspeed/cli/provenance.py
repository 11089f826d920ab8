"""``warpspeed devices --provenance``: where every constant of the built-in devices comes from.

The table is :func:`warpspeed.calibration.constant_sources.provenance_markdown`; this module only
selects the devices and prints or writes it.
"""

from __future__ import annotations

import click

from warpspeed.files.atomic import write_text_atomic
from warpspeed.files.jsonsafe import json_text
from warpspeed.hardware.device import Device


def show_provenance(devs: list[Device], as_json: bool, write_docs: bool) -> None:
    """Print the provenance of ``devs`` (Markdown, or JSON with ``as_json``); with ``write_docs``
    write the page of every device to ``docs/provenance.md`` instead (relative to the current directory)."""
    from dataclasses import asdict

    from warpspeed.calibration.constant_sources import (
        PROVENANCE_DOC,
        device_checks,
        device_constants,
        provenance_markdown,
        provenance_page,
    )

    if write_docs:
        write_text_atomic(PROVENANCE_DOC, provenance_page(devs))
        click.echo(f"wrote {PROVENANCE_DOC}", err=True)
        return
    if as_json:
        click.echo(json_text([{"device": d.name, "checked_against": list(device_checks(d)),
                               "constants": [asdict(c) for c in device_constants(d)]} for d in devs], indent=2))
        return
    click.echo(provenance_markdown(devs).rstrip("\n"))
