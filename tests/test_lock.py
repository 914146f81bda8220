"""The lock of exact versions (requirements/lock-cpu.txt, issue 45): every distribution the project
asks for, in the base install and in every extra, pinned to one version, so that a checkout's setup
(scripts/bootstrap.sh installs with it as constraints) gets the environment the results were made
in; torch is left out of it (pinned apart, and a user's CUDA build must be kept)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "lock-cpu.txt"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _locked() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep and version.strip() and " " not in line, f"not a pin: {line!r}"
        assert _canonical(name) not in pins, f"pinned twice: {name}"
        pins[_canonical(name)] = version
    return pins


def _asked_for() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"], *(r for rs in project["optional-dependencies"].values() for r in rs)]
    return {_canonical(re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0]) for r in requirements}


def test_the_lock_pins_every_distribution_the_project_asks_for_but_torch():
    pins = _locked()
    missing = _asked_for() - {"torch"} - set(pins)
    assert not missing, f"asked for in pyproject.toml, not in the lock (run `make lock`): {sorted(missing)}"
    assert "torch" not in pins and "pasur" not in pins


def test_the_setup_installs_with_the_lock_as_constraints():
    bootstrap = (ROOT / "scripts" / "bootstrap.sh").read_text()
    assert "-c requirements/lock-cpu.txt" in bootstrap
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^\$\(VENV\)/\.installed:.*requirements/lock-cpu\.txt", makefile, re.M)


def test_every_results_readme_names_the_versions_it_was_made_with():
    """Each committed result says which versions made it: the lock, or that it came before it."""
    unnamed = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "results").glob("*/README.md"))]
    unnamed = [p for p in unnamed if "requirements/lock-cpu.txt" not in (ROOT / p).read_text()]
    assert not unnamed, f"results READMEs that do not name requirements/lock-cpu.txt: {unnamed}"
