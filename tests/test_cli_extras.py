"""The web server is an extra (``pip install 'pasur[web]'``, issue 45): the base install runs every
other command, and a command that needs the extra says so in one line, exit 2, before any work.
A missing package is simulated in a fresh interpreter by ``sys.modules[name] = None``, which makes
both ``import name`` and ``importlib.util.find_spec(name)`` see it as absent."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pasur.cli.common import EXTRA_MODULES

ROOT = Path(__file__).resolve().parent.parent
WEB = EXTRA_MODULES["web"]


def _pasur_without(modules: tuple[str, ...], *args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """``pasur ARGS`` in a fresh interpreter that cannot import ``modules``."""
    code = (
        "import sys\n"
        f"for name in {list(modules)!r}: sys.modules[name] = None\n"
        "from pasur.cli import main\n"
        f"sys.argv = ['pasur', *{list(args)!r}]\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("command", "missing"),
    [(("serve", "--port", "8123"), ("fastapi", "uvicorn")), (("web-load", "--tables", "1"), ("websockets",))],
)
def test_a_command_that_needs_the_web_extra_says_so_in_one_line(command, missing, tmp_path):
    run = _pasur_without(missing, *command, tmp_path=tmp_path)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"error: pasur {command[0]} needs the 'web' extra")
    assert "pip install 'pasur[web]'" in lines[0]
    for name in missing:
        assert name in lines[0]
    assert not list(tmp_path.iterdir()), "nothing may be written before the refusal"


def test_the_base_install_runs_the_other_commands_without_the_web_extra(tmp_path):
    deal = _pasur_without(WEB, "deal", "--seed", "1", tmp_path=tmp_path)
    assert deal.returncode == 0, deal.stderr
    assert deal.stdout.strip()
    helped = _pasur_without(WEB, "play", "--help", tmp_path=tmp_path)  # the terminal game needs no server
    assert helped.returncode == 0, helped.stderr


def _dist_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def test_the_web_extra_declares_what_the_check_looks_for_and_the_base_does_not():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    web = {_dist_name(r) for r in project["optional-dependencies"]["web"]}
    base = {_dist_name(r) for r in project["dependencies"]}
    dev = {_dist_name(r) for r in project["optional-dependencies"]["dev"]}
    assert web == set(WEB)  # each of these distributions imports under its own name
    assert not web & base
    assert web <= dev  # the test suite serves the page
