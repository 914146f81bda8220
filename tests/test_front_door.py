"""The front door (issue 45): ``pasur`` and each subpackage export their entry points lazily, every
exported name resolves to the object its table names, importing them loads no torch until a
torch module is named, and library calls run torch on one thread unless told otherwise. The
docstring examples themselves run as doctests (``--doctest-modules`` over ``src/pasur``)."""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pasur

LAYERS = ("common", "game", "poker", "solve", "play", "learn", "study", "hidden", "rl", "web")
PACKAGES = ["pasur", *(f"pasur.{p}" for p in LAYERS)]


def fresh(code: str) -> list[str]:
    """The lines ``code`` prints in a fresh interpreter (nothing of this process's imports)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves_to_its_target(package):
    pkg = importlib.import_module(package)
    assert set(pkg.EXPORTS) <= set(pkg.__all__), "a front-door name missing from __all__"
    for name in pkg.__all__:
        value = getattr(pkg, name)
        if name in pkg.EXPORTS:
            module, _, attribute = pkg.EXPORTS[name].partition(":")
            assert value is getattr(importlib.import_module(module), attribute), name
    assert set(pkg.__all__) <= set(dir(pkg))


@pytest.mark.parametrize("package", PACKAGES[1:])
def test_no_exported_name_hides_a_submodule(package):
    """``pasur.solve.exact`` must stay the module: a front-door name equal to a submodule's would
    make the attribute depend on what was imported first."""
    pkg = importlib.import_module(package)
    submodules = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
    assert not submodules & set(pkg.EXPORTS)


def test_the_root_also_hides_no_subpackage():
    subpackages = {m.name for m in pkgutil.iter_modules(pasur.__path__)}
    assert not subpackages & set(pasur.EXPORTS)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'solve_everything'"):
        pasur.solve_everything  # noqa: B018
    with pytest.raises(ImportError, match="cannot import name 'solve_everything'"):
        from pasur.solve import solve_everything  # noqa: F401


def test_importing_the_front_door_loads_no_torch():
    """``import pasur`` and its torch-free names (decks, variants) and ``import pasur.cli`` start
    without torch; a solver's name loads it."""
    code = (
        "import sys, pasur, pasur.solve, pasur.hidden, pasur.poker\n"
        "pasur.Deck, pasur.get_variant, pasur.solve.__all__\n"
        "print('torch' in sys.modules)\n"
        "import pasur.cli\n"
        "print('torch' in sys.modules)\n"
        "pasur.solve_cfr\n"
        "print('torch' in sys.modules)\n"
    )
    assert fresh(code) == ["False", "False", "True"]


def test_library_calls_use_one_thread_unless_told():
    """A name from a front door sets torch to one thread, as the command line does, even over
    torch's own setting; ``pasur.set_threads`` first keeps its choice; a module imported
    directly leaves torch alone."""
    set_first = "import torch; torch.set_num_threads(3)\n"
    show = "print(torch.get_num_threads())\n"
    assert fresh(set_first + "import pasur; pasur.solve_cfr\n" + show) == ["1"]
    assert fresh(set_first + "from pasur.solve import solve_exact\n" + show) == ["1"]
    assert fresh(set_first + "from pasur.solve.rounds import solve_cfr\n" + show) == ["3"]
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    expect = str(min(2, cpus))
    assert fresh("import pasur, torch\nprint(pasur.set_threads(2)); pasur.solve_cfr\n" + show) == [expect, expect]


def test_set_threads_is_capped_at_the_cpus():
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    before = __import__("torch").get_num_threads()
    try:
        assert pasur.set_threads(4096) == cpus
        assert pasur.set_threads() == 1
    finally:
        __import__("torch").set_num_threads(before)


API = Path(__file__).resolve().parent.parent / "docs" / "api"


def _directives(page: Path) -> set[str]:
    return set(re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), re.MULTILINE))


@pytest.mark.parametrize("package", PACKAGES[1:])
def test_the_api_reference_documents_every_entry_point(package):
    """Each front-door name has its ``::: module.name`` on its layer's page of the reference."""
    pkg = importlib.import_module(package)
    documented = _directives(API / f"{package.split('.')[1]}.md")
    assert package in documented
    assert not [t for t in pkg.EXPORTS.values() if t.replace(":", ".") not in documented]


def test_the_api_reference_documents_the_root_names():
    documented = set().union(*(_directives(p) for p in API.glob("*.md")))
    assert {"pasur", "pasur.set_threads", "pasur.cli"} <= documented
    assert not [t for t in pasur.EXPORTS.values() if t.replace(":", ".") not in documented]
