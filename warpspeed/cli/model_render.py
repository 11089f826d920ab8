"""Tables of a time model's own results in ``warpspeed predict``: whatever tables the model
declares (:meth:`warpspeed.model_protocol.ModelCommandLine.tables`), before the line with its rate and after
it, printed alike for every model."""

from __future__ import annotations

from rich.console import Console

from warpspeed.cli.render import Column, fitted_table, print_fitted
from warpspeed.model_protocol import ModelEstimate, ModelTable
from warpspeed.models import time_model


def print_model_table(console: Console, model_table: ModelTable) -> None:
    """One of a model's tables, fitted to the console, with its title and notes."""
    columns = tuple(Column(c.header, justify=c.justify) for c in model_table.columns)
    table, _ = fitted_table(console, columns, model_table.rows)
    print_fitted(console, table, model_table.title, model_table.notes)


def render_before(console: Console, estimate: ModelEstimate) -> None:
    """The model's tables that precede its rate."""
    for model_table in time_model(estimate.model).command_line.tables(estimate).before:
        print_model_table(console, model_table)


def render_after(console: Console, estimate: ModelEstimate) -> None:
    """The model's tables that follow its rate."""
    for model_table in time_model(estimate.model).command_line.tables(estimate).after:
        print_model_table(console, model_table)
