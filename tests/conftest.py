"""Shared fixtures: the reference decks from shared/, and hypothesis profiles."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, settings

from pasur.game.cards import NamedDeck, parse_deck

# Byte-code caches on: where the environment sets PYTHONDONTWRITEBYTECODE, every test process
# (each xdist worker, each CLI subprocess, each Ray worker) compiled pasur again and pytest rewrote
# every test module again (collection 10.1 s of CPU per process without caches, 4.0 s with them).
# Set here, before xdist starts its workers, so they inherit it; __pycache__/ is git-ignored.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

settings.register_profile(
    "ci", derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# One thread: small tensor ops are fastest so, and timings do not depend on a busy second core.
torch.set_num_threads(1)

REPO = Path(__file__).resolve().parent.parent
_CANDIDATES = [
    REPO.parent / "shared" / "decks" / "reference-decks.json",  # the source of truth
    REPO / "tests" / "data" / "reference-decks.json",  # a copy, for a checkout without shared/
]


def load_reference_decks() -> list[NamedDeck]:
    for p in _CANDIDATES:
        if p.exists():
            return [NamedDeck(d["id"], parse_deck(d["deck"]), d["value"]) for d in json.loads(p.read_text())]
    raise FileNotFoundError("reference-decks.json not found in ../shared/decks or tests/data")


@pytest.fixture(scope="session")
def reference_decks() -> list[NamedDeck]:
    return load_reference_decks()


@pytest.fixture(scope="session")
def ray_here():
    """One local Ray instance with two CPUs per test process, started on first use (several
    seconds) and shared by every test that needs one (under ``pytest -n N``, once per worker that
    runs such a test)."""
    import ray

    from pasur.common import raytasks

    raytasks.start_ray(None, 2)
    yield ray
    ray.shutdown()


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "docs_recompute: reruns a cheap experiment behind a committed results/ file and compares "
        "(tests/test_docs_numbers.py; about a minute of CPU in all)",
    )
