"""The click that typer runs on: typer >= 0.20 carries its own copy (``typer._click``), older
typers use click itself. Exceptions and contexts must come from the one in use."""

from __future__ import annotations

try:
    from typer._click.core import ParameterSource
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
    from typer._click.globals import get_current_context
except ImportError:  # an older typer, on click itself
    from click.core import ParameterSource
    from click.exceptions import ClickException, NoArgsIsHelpError, UsageError
    from click.globals import get_current_context

from typer import Abort

__all__ = ["Abort", "ClickException", "NoArgsIsHelpError", "ParameterSource", "UsageError", "get_current_context"]
