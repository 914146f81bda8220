"""The experiment registry: experiments found by name, each declaring what it writes and the
options it takes, so that a command can look one up, refuse what it does not take, and run it.

The poker papers' experiments (:mod:`pasur.poker.experiments`) and the Pasur paper's
(:mod:`pasur.study.experiments`) each keep one :class:`Registry`. An experiment is a function
registered with :meth:`Registry.experiment`; it declares the entries it writes into its folder
(so a rerun resumes and another's files are refused), the Markdown tables a command prints when
it ends, and the options it takes beyond the common ones, each with a check that raises
:class:`PasurInputError` on a bad value (or None when the option parser's checks suffice).
:meth:`Experiment.check_options` refuses, in one message and before any folder is made, an
option the experiment does not take, naming the experiments that take it.

>>> demo = Registry("demo")
>>> @demo.experiment("small", "A small run.", tables=("small.md",), options={"size": None})
... def small(run):
...     return {}
>>> @demo.experiment("plain", "A plain run.")
... def plain(run):
...     return {}
>>> demo.names()
['plain', 'small']
>>> demo.get("small").outputs
('small.md',)
>>> demo.get("plain").check_options({"size": 3})
Traceback (most recent call last):
...
pasur.common.errors.PasurInputError: --size applies only to small, not to plain
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pasur.common.errors import PasurInputError

#: a declared option's check: raises PasurInputError on a bad value (None: nothing to check)
Check = Callable[[Any], object] | None


def option_name(key: str) -> str:
    """The command-line spelling of an option key: ``model_params`` -> ``--model-params``."""
    return "--" + key.replace("_", "-")


@dataclass(frozen=True)
class Experiment:
    """One registered experiment. ``run`` takes what the user asked for (the registry's own run
    record) and returns a JSON-able summary dict."""

    name: str
    run: Callable[[Any], dict]
    help: str
    #: the Markdown files it writes (printed by the CLI when it ends)
    tables: tuple[str, ...] = ()
    #: every entry it writes into its folder (so that a rerun resumes and another's files are refused)
    outputs: tuple[str, ...] = ()
    #: the options it takes beyond the common ones: name -> a check that raises
    #: :class:`PasurInputError` on a bad value (None: the option parser's checks suffice)
    options: dict[str, Check] = field(default_factory=dict)
    #: the registry it belongs to (to name the experiments that take an option it refuses)
    registry: Registry | None = field(default=None, repr=False, compare=False)

    def check_options(self, given: dict[str, Any]) -> None:
        """Refuse, before anything is written, an option this experiment does not take (all such
        options that the same experiments take, in one message) or a bad value of one it takes."""
        refused = [key for key in given if key not in self.options]
        if refused:
            takers = self._takers(refused[0])
            same = [key for key in refused if self._takers(key) == takers]
            verb = "applies" if len(same) == 1 else "apply"
            shown = ", ".join(option_name(key) for key in same)
            raise PasurInputError(f"{shown} {verb} only to {', '.join(takers) or 'no experiment'}, not to {self.name}")
        for key, value in given.items():
            check = self.options[key]
            if check is not None:
                check(value)

    def _takers(self, key: str) -> list[str]:
        return [] if self.registry is None else self.registry.takers(key)


class Registry:
    """Experiments by name. ``modules`` (under ``package``) define experiments and are imported on
    first use; ``record`` is the class of the registered entries (:class:`Experiment` or a subclass
    with fields of its own, given to :meth:`experiment` as keywords)."""

    def __init__(self, package: str, modules: Iterable[str] = (), record: type[Experiment] = Experiment) -> None:
        self.package = package
        self.modules = tuple(modules)
        self.record = record
        self._entries: dict[str, Experiment] = {}

    def experiment(
        self,
        name: str,
        help: str,
        *,
        tables: tuple[str, ...] = (),
        outputs: tuple[str, ...] = (),
        options: dict[str, Check] | None = None,
        **fields: Any,
    ) -> Callable[[Callable], Callable]:
        """Register the decorated function as the experiment ``name`` (``outputs`` defaults to
        ``tables``); the function is returned unchanged."""

        def register(fn: Callable) -> Callable:
            self._entries[name] = self.record(
                name=name,
                run=fn,
                help=help,
                tables=tuple(tables),
                outputs=tuple(outputs or tables),
                options=dict(options or {}),
                registry=self,
                **fields,
            )
            return fn

        return register

    def _load(self) -> None:
        for module in self.modules:
            importlib.import_module(f"{self.package}.{module}")

    def names(self) -> list[str]:
        """The experiments' names, sorted."""
        self._load()
        return sorted(self._entries)

    def get(self, name: str) -> Experiment:
        """The experiment ``name``; an unknown name is refused, listing the known ones."""
        self._load()
        if name not in self._entries:
            known = ", ".join(sorted(self._entries)) or "none yet"
            raise PasurInputError(f"unknown experiment {name!r} (choose from {known})")
        return self._entries[name]

    def takers(self, option: str) -> list[str]:
        """The experiments that take ``option``, sorted."""
        self._load()
        return sorted(n for n, e in self._entries.items() if option in e.options)
