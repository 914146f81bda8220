"""The ``pasur poker`` group mounted on a test root as on the real app, for the CLI tests."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from pasur.cli.common import PasurGroup
from pasur.cli.poker import poker_app

root = typer.Typer(cls=PasurGroup, add_completion=False, pretty_exceptions_enable=False)


@root.callback()
def _root() -> None:
    """Test root: the poker group mounted as on the real app."""


root.add_typer(poker_app, name="poker")


def invoke(*args: str):
    """``pasur poker ARGS`` through the test root (stdout and stderr apart)."""
    return CliRunner().invoke(root, ["poker", *args])
