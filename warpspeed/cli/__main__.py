"""``python -m warpspeed.cli``: the ``warpspeed`` command without the installed console script."""

from warpspeed.cli import main

main(prog_name="warpspeed")
