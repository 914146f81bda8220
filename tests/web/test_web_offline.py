"""The installable page and its offline play (issue 44, item 2), without a browser: the service
worker and the manifest served at the root with their content types, the worker's list of files
is everything the page loads (so none is missing offline), and each of them is served."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import pasur.web

STATIC = Path(pasur.web.__file__).with_name("static")


def worker_files() -> list[str]:
    src = (STATIC / "sw.js").read_text(encoding="utf-8")
    block = src[src.index("const FILES = [") : src.index("];", src.index("const FILES = ["))]
    return re.findall(r'"([^"]+)"', block)


def page_files() -> set[str]:
    """What index.html loads (scripts, stylesheet, icon, manifest), every path its scripts name (the
    network's weights, the stylesheet teach.js links) and style.css's font."""
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    found = set(re.findall(r'(?:src|href)="(/[^"]+)"', html))
    for f in STATIC.rglob("*.js"):  # a path the scripts fetch or link (the worker's own list aside)
        if f.name != "sw.js":
            found |= set(re.findall(r'"(/static/[^"]+)"', f.read_text(encoding="utf-8")))
    css = (STATIC / "style.css").read_text(encoding="utf-8")
    found |= {"/static/" + u for u in re.findall(r'url\("([^"/][^"]*)"\)', css)}
    return found


def test_the_worker_keeps_every_file_the_page_loads():
    files = worker_files()
    assert "/" in files and len(files) == len(set(files))
    assert page_files() - set(files) == set(), "files the page loads that the service worker does not keep"


def test_the_worker_and_the_manifest_are_served_at_the_root(client):
    c = client
    sw = c.get("/sw.js")
    assert sw.status_code == 200 and sw.headers["content-type"].startswith("text/javascript")
    assert sw.headers["cache-control"] == "no-cache" and 'addEventListener("fetch"' in sw.text
    m = c.get("/manifest.webmanifest")
    assert m.status_code == 200 and m.headers["content-type"].startswith("application/manifest+json")
    doc = json.loads(m.text)
    assert doc["start_url"] == "/" and doc["scope"] == "/" and doc["display"] == "standalone"
    assert "Pasur" in doc["name"] and "پاسور" in doc["name"] and doc["translations"]["fa"]["name"] == "پاسور"
    assert [i["src"] for i in doc["icons"]] == ["/static/favicon.svg"]
    for path in worker_files():
        assert c.get(path).status_code == 200, path


@pytest.mark.parametrize("path", ["/sw.js/x", "/static/sw.js/../../app.py"])
def test_no_other_file_is_served_beside_them(client, path):
    assert client.get(path).status_code == 404


def test_every_file_the_worker_keeps_is_package_data():
    """An installed wheel holds what the page needs offline: each of the worker's static files
    matches a ``package-data`` pattern of ``pasur.web`` in pyproject.toml (setuptools' globs do not
    cross folders)."""
    import fnmatch
    import tomllib

    root = Path(pasur.web.__file__).parents[3]
    patterns = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"
    ]["pasur.web"]
    for path in worker_files():
        if path.startswith("/static/"):
            rel = "static/" + path.removeprefix("/static/")
            assert any(fnmatch.fnmatch(rel, p) and rel.count("/") == p.count("/") for p in patterns), rel
