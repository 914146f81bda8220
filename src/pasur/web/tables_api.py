"""The HTTP and WebSocket endpoints of the tables for two people (``docs/web.md``, "Tables for
two people"): each change goes through the hub, so both players hear of it at once."""

from __future__ import annotations

from typing import Annotated

from fastapi import Body, FastAPI, Path, Query, Request, WebSocket
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from pasur.game.match import MatchRules
from pasur.web.limits import TOO_MANY, FailureLimiter
from pasur.web.live import Hub
from pasur.web.models import JoinIn, LeaveIn, MoveIn, NewPlayer, NewTable, SeatAiIn, Token
from pasur.web.players import create_player, ladder_players, player_by_token
from pasur.web.service import BadInput, NotFound


def _answer(update, player: int) -> dict:
    """The HTTP answer of a change: the player's view and steps (what their socket got too)."""
    payload = update.payloads[player]
    return {**payload["view"], "steps": payload["steps"]}


def _client(request: Request) -> str:
    """The client's address, the key of its failure limit (behind a proxy: what the proxy forwards)."""
    return request.client.host if request.client else ""


def _too_many(seconds: int) -> JSONResponse:
    return JSONResponse({"error": TOO_MANY}, status_code=429, headers={"Retry-After": str(seconds)})


def add_table_routes(api: FastAPI, hub: Hub, *, allow_seeds: bool = False) -> None:
    tables = hub.tables
    guesses = FailureLimiter(clock=tables.clock)  # failed code lookups and joins, per client
    api.state.code_guesses = guesses

    async def limited(request: Request, work, *args):
        """``work(*args)`` unless the client is over its failure limit (429); a 404 counts as a failure."""
        client = _client(request)
        wait = guesses.retry_after(client)
        if wait is not None:
            return _too_many(wait)
        try:
            return await work(*args)
        except NotFound:
            guesses.failed(client)
            raise

    @api.post("/api/tables", status_code=201)
    async def new_table(body: NewTable) -> dict:
        try:
            rules = MatchRules(body.rules.target, body.rules.sur_cancellation, body.rules.fifty_point_rule)
        except ValueError as e:
            raise BadInput(str(e)) from None
        if body.seed is not None and not allow_seeds:
            raise BadInput("seeded deals are off on this server (whoever knows the seed knows every card)")
        seat = 0 if body.seat == "alex" else 1
        update, token, invite = await run_in_threadpool(
            tables.create, rules, seat, body.clock_s, body.ai_level, body.seed, body.rated, body.player_token
        )
        return {**_answer(update, seat), "token": token, "invite": invite}

    @api.get("/api/tables/by-code/{code}")
    async def by_code(request: Request, code: Annotated[str, Path(max_length=32)]):
        return await limited(request, run_in_threadpool, tables.by_code, code)

    @api.post("/api/tables/{table_id}/join")
    async def join(request: Request, table_id: str, body: JoinIn, token: Token = None):
        changed = await limited(
            request, hub.change, table_id, tables.join, table_id, body.invite, body.player_token, token
        )
        if isinstance(changed, JSONResponse):
            return changed
        update, token, player = changed
        return {**_answer(update, player), "token": token}

    @api.get("/api/tables/{table_id}")
    async def get_table(table_id: str, token: Token = None) -> dict:
        payload = await hub.look(table_id, token or "")
        return {**payload["view"], "steps": payload["steps"]}

    @api.post("/api/tables/{table_id}/moves")
    async def move(table_id: str, body: MoveIn, token: Token = None) -> dict:
        update = await hub.change(table_id, tables.move, table_id, token, body.card, body.captured, body.moves_played)
        return _answer(update, update.actor)

    @api.post("/api/tables/{table_id}/next")
    async def next_hand(table_id: str, token: Token = None) -> dict:
        update = await hub.change(table_id, tables.next_hand, table_id, token)
        return _answer(update, update.actor)

    @api.post("/api/tables/{table_id}/ai")
    async def seat_ai(table_id: str, body: SeatAiIn, token: Token = None) -> dict:
        update = await hub.change(table_id, tables.seat_ai, table_id, token, body.level)
        return _answer(update, update.actor)

    @api.post("/api/tables/{table_id}/leave")
    async def leave(table_id: str, token: Token = None, body: Annotated[LeaveIn | None, Body()] = None) -> dict:
        player = await run_in_threadpool(tables.player, table_id, token)
        await hub.change(table_id, tables.leave, table_id, token, body.level if body else None)
        return {"left": True, "player": player}

    @api.post("/api/tables/{table_id}/resign")
    async def resign(table_id: str, token: Token = None) -> dict:
        update = await hub.change(table_id, tables.resign, table_id, token)
        return _answer(update, update.actor)

    @api.post("/api/tables/{table_id}/rematch")
    async def rematch(table_id: str, token: Token = None) -> dict:
        update = await hub.change(table_id, tables.rematch, table_id, token)
        return _answer(update, update.actor)

    @api.get("/api/tables/{table_id}/hint")
    async def hint(table_id: str, token: Token = None) -> dict:
        return await run_in_threadpool(tables.hint, table_id, token)  # a search: not in the table's queue

    @api.get("/api/tables/{table_id}/replay")
    async def replay(
        table_id: str, token: Token = None, hand: Annotated[int | None, Query(ge=1, le=1000)] = None
    ) -> dict:
        return await run_in_threadpool(tables.replay, table_id, token, hand)  # a solve: not in the table's queue

    @api.websocket("/api/tables/{table_id}/live")
    async def live(ws: WebSocket, table_id: str) -> None:
        await hub.serve(ws, table_id)

    add_rating_routes(api, hub)


def add_rating_routes(api: FastAPI, hub: Hub) -> None:
    """The players and the ladder (``docs/web.md``, "Ratings and the ladder")."""
    tables = hub.tables

    @api.post("/api/players", status_code=201)
    async def new_player(body: NewPlayer) -> dict:
        player, token = await run_in_threadpool(create_player, tables.store, body.name)
        return {**player.json(), "token": token}

    @api.get("/api/players/me")
    async def me(token: Token = None) -> dict:
        return (await run_in_threadpool(player_by_token, tables.store, token)).json()

    @api.get("/api/ladder")
    async def ladder(limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> dict:
        players = await run_in_threadpool(ladder_players, tables.store, limit)
        board = await run_in_threadpool(tables.board.json)  # the fit runs once, on first use
        return {"players": [{"rank": i, **p.json()} for i, p in enumerate(players, start=1)], "ai": board}
