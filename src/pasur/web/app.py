"""The web app: the JSON API over :class:`~pasur.web.service.GameService` and the static page.

``create_app(db_path)`` builds it (``pasur serve`` runs it under uvicorn; tests use FastAPI's test
client). Endpoints are listed in ``docs/web.md``. A game is addressed by its id and opened by its
token, sent as the header ``X-Pasur-Token``; a wrong token and an unknown id get the same 404.
Errors are JSON ``{"error": message}``: 400/422 for malformed requests (400 too for a ``Host``
header the server is not served as), 404, 409 for a move the rules or the game's state refuse
and for a game whose stored record is damaged, 413 for a body over the limit; a 500 is a bug.
On shutdown the database is checkpointed (the file alone then holds every game).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from pasur import __version__
from pasur.common.malloc import fix_mmap_threshold
from pasur.game.match import PRESETS, MatchRules
from pasur.web.guard import LOOPBACK_HOSTS, MAX_BODY, Guard
from pasur.web.level_card import level_margins
from pasur.web.levels import DEFAULT_LEVEL, HINT_LEVEL
from pasur.web.live import TRIM_EVERY, Hub
from pasur.web.models import MoveIn, NewGame, Token
from pasur.web.service import BadInput, GameError, GameService
from pasur.web.store import Store
from pasur.web.tables import TableService
from pasur.web.tables_api import add_table_routes
from pasur.web.teach import add_teach_routes

STATIC = Path(__file__).with_name("static")
log = logging.getLogger("pasur.web")


def _error(status: int, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def create_app(
    db_path: str | Path,
    *,
    levels: dict[str, str] | None = None,
    hint_level: str = HINT_LEVEL,
    max_body: int = MAX_BODY,
    allow_seeds: bool = False,
    allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
    clock: Callable[[], float] = time.time,
    sweep_every: float = 1.0,
    trim_every: float = TRIM_EVERY,
) -> FastAPI:
    """The app on the SQLite file ``db_path`` (created if missing). ``levels``: level name ->
    agent spec (default :data:`pasur.web.levels.LEVELS`); ``hint_level``: the level hints come
    from; ``allow_seeds``: whether a new game may name its deal's seed (whoever knows the seed
    knows every card, so only for practice and tests); ``allowed_hosts``: the host names the
    server is served as, the only ``Host`` headers answered (default: this machine's loopback
    names); ``clock``: the tables' move clock (tests move it by hand), checked every
    ``sweep_every`` seconds; freed memory is given back to the system every ``trim_every``
    seconds (0: never); the service is ``app.state.service``, the tables'
    ``app.state.tables`` and their WebSocket hub ``app.state.hub``."""
    service = GameService(Store(db_path), levels, hint_level)
    tables = TableService(service, clock)
    hub = Hub(tables, sweep_every, trim_every=trim_every)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        fix_mmap_threshold()  # a server runs for weeks: large blocks mapped and unmapped, not kept
        hub.start()
        yield
        await hub.stop()
        service.store.close_all()  # checkpoint: the games are in the database file, not its -wal

    api = FastAPI(
        title="pasur",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
    )
    api.state.service = service
    api.state.tables = tables
    api.state.hub = hub
    api.add_middleware(Guard, max_body=max_body, allowed_hosts=allowed_hosts)
    add_error_handlers(api)
    add_page(api)
    add_game_routes(api, service, allow_seeds=allow_seeds)
    add_table_routes(api, hub, allow_seeds=allow_seeds)
    add_teach_routes(api)
    return api


def add_error_handlers(api: FastAPI) -> None:
    """Every error as JSON ``{"error": message}``; an exception nobody expected is logged with its
    traceback and answered a plain 500 (a bug: nothing of it is shown)."""

    @api.exception_handler(GameError)
    async def game_error(_: Request, e: GameError) -> JSONResponse:
        return _error(e.status, str(e))

    @api.exception_handler(RequestValidationError)
    async def invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        detail = [
            {"loc": [str(x) for x in err.get("loc", ())], "msg": str(err.get("msg", ""))[:200]} for err in e.errors()
        ]
        first = detail[0] if detail else {"loc": [], "msg": "invalid request"}
        return _error(422, f"{'.'.join(first['loc'])}: {first['msg']}", detail=detail[:10])

    @api.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, e: StarletteHTTPException) -> JSONResponse:
        return _error(e.status_code, str(e.detail))

    @api.exception_handler(Exception)
    async def crash(_: Request, e: Exception) -> JSONResponse:  # a bug: logged, never shown
        log.exception("internal error")
        return _error(500, "internal error")


def add_page(api: FastAPI) -> None:
    """The page and its static files."""

    @api.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    # the service worker and the manifest at the root: a worker's scope is its folder, and the page is "/"
    @api.get("/sw.js", include_in_schema=False)
    def service_worker() -> FileResponse:
        return FileResponse(STATIC / "sw.js", media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    @api.get("/manifest.webmanifest", include_in_schema=False)
    def manifest() -> FileResponse:
        return FileResponse(STATIC / "manifest.webmanifest", media_type="application/manifest+json")

    api.mount("/static", StaticFiles(directory=STATIC), name="static")


def add_game_routes(api: FastAPI, service: GameService, *, allow_seeds: bool = False) -> None:
    """The health check, the levels and the games against the AI."""
    default_level = DEFAULT_LEVEL if DEFAULT_LEVEL in service.levels else next(iter(service.levels))
    margins = level_margins(service.levels)  # each level's arena margin over the next weaker one

    @api.get("/api/health")
    def health() -> dict:
        return {"ok": True, "version": __version__}

    @api.get("/api/levels")
    def get_levels() -> dict:
        return {
            "levels": list(service.levels),
            "default": default_level,
            "hint": service.hint_level,
            "margins": margins,
            "presets": {k: v.to_dict() for k, v in PRESETS.items()},
        }

    @api.post("/api/games", status_code=201)
    def new_game(body: NewGame) -> dict:
        try:
            rules = MatchRules(body.rules.target, body.rules.sur_cancellation, body.rules.fifty_point_rule)
        except ValueError as e:
            raise BadInput(str(e)) from None
        if body.seed is not None and not allow_seeds:
            raise BadInput(
                "seeded deals are off on this server (whoever knows the seed knows every card): "
                "pasur serve --allow-seeds"
            )
        view, token = service.create(body.level, rules, 0 if body.seat == "alex" else 1, body.seed)
        return {**view, "token": token}

    @api.get("/api/games/{game_id}")
    def get_game(game_id: str, token: Token = None) -> dict:
        return service.view(game_id, token)

    @api.post("/api/games/{game_id}/moves")
    def post_move(game_id: str, body: MoveIn, token: Token = None) -> dict:
        return service.move(game_id, token, body.card, body.captured, body.moves_played)

    @api.get("/api/games/{game_id}/hint")
    def get_hint(game_id: str, token: Token = None) -> dict:
        return service.hint(game_id, token)

    @api.post("/api/games/{game_id}/next")
    def next_hand(game_id: str, token: Token = None) -> dict:
        return service.next_hand(game_id, token)

    @api.get("/api/games/{game_id}/replay")
    def get_replay(game_id: str, token: Token = None, hand: Annotated[int | None, Query(ge=1, le=1000)] = None) -> dict:
        return service.replay(game_id, token, hand)
