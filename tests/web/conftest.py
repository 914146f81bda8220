"""Fixtures of the web tests: apps on a temporary database with fast AI levels."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from pasur.web.app import create_app

#: fast levels for the tests (the real ones search; the API does not care which agent plays)
FAST = {"random": "random", "greedy": "greedy", "heuristic": "heuristic"}


@pytest.fixture
def db(tmp_path):
    return tmp_path / "games.sqlite3"


@pytest.fixture
def make_client(db):
    """``make_client()``: a test client of a fresh app on the test's database (call it again to
    get a new app on the same file, as after a restart)."""
    clients = []

    def make(**kwargs) -> TestClient:
        kwargs.setdefault("levels", FAST)
        kwargs.setdefault("hint_level", "greedy")
        kwargs.setdefault("allow_seeds", True)
        kwargs.setdefault("allowed_hosts", ["testserver"])  # the Host header of FastAPI's TestClient
        c = TestClient(create_app(db, **kwargs), raise_server_exceptions=True)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()


@pytest.fixture
def client(make_client):
    return make_client()
