"""Playing against the AI: the service behind the web page (``pasur serve``) and the terminal game
(``pasur play --hidden``): games and matches, the player's view built from their information state
only, AI moves, hints, and the open-hand replay (see ``docs/web.md``).

Front door (each name loaded when first named): :func:`create_app` (the FastAPI app on a SQLite
file), :data:`LEVELS` (AI level -> agent spec of :func:`pasur.hidden.make_agent`),
:func:`make_level`.

The app on a fresh database with one AI level, asked for its levels:

```pycon
>>> import tempfile
>>> from pathlib import Path
>>> from fastapi.testclient import TestClient
>>> from pasur.web import create_app, make_level
>>> app = create_app(Path(tempfile.mkdtemp()) / "pasur.db", levels={"greedy": "greedy"}, hint_level="greedy",
...     allowed_hosts=["testserver"])
>>> with TestClient(app) as client:
...     client.get("/api/levels").json()["levels"]
['greedy']
>>> make_level("heuristic").name
'heuristic'

```
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "create_app": "pasur.web.app:create_app",
    "LEVELS": "pasur.web.levels:LEVELS",
    "make_level": "pasur.web.levels:make_level",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
