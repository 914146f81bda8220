"""The ``pasur`` command line. One module per command group; each registers its commands on
:data:`app` through :func:`pasur.cli.common.command`, which gives every command the same
behaviour: user errors as one line ``error: ...`` with exit code 2, ``--threads``, and the
shared option groups. Results go to stdout, progress and notes to stderr.

Front door: :data:`app` (the typer app: call it with a list of arguments, or run it under
typer's ``CliRunner``) and :func:`main` (the ``pasur`` console script). Importing this package
loads no torch: ``--help``, ``deal``, ``show`` and argument errors start at once.

```pycon
>>> from typer.testing import CliRunner
>>> from pasur.cli import app
>>> CliRunner().invoke(app, ["deal", "--seed", "7"]).output.split()[:4]
['5D', 'TS', '8S', '3H']
>>> bad = CliRunner().invoke(app, ["deal", "--seed", "x"])
>>> bad.exit_code, bad.output.startswith("error: invalid value for '--seed'")
(2, True)

```
"""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from pasur import __version__
from pasur.cli.common import PasurGroup, ThreadsOpt

__all__ = ["app", "main"]

app = typer.Typer(
    name="pasur",
    cls=PasurGroup,
    help="Solve and play the card game Pasur, and solve poker benchmark games.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pasur {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    threads: ThreadsOpt = None,
) -> None:
    """Options here apply to every command (``--threads`` may also follow the command)."""


# the command modules register their commands on import, in the order --help lists them
for _module in ("game", "solve", "play", "learn", "study", "hidden", "general", "lbr", "web"):
    importlib.import_module(f"pasur.cli.{_module}")
# command groups: ``pasur poker ...``
app.add_typer(importlib.import_module("pasur.cli.poker").poker_app, name="poker")


def main() -> None:
    app()
