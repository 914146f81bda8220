"""The WebSocket hub of the tables: each player's open sockets, and every change pushed at once to
each player as what that player may see.

A socket of ``/api/tables/{id}/live`` opens with ``{"type": "hello", "token": ...}`` (a browser
cannot set headers on a WebSocket, and a token in the URL would land in logs); the server answers
with the player's whole view, so a page that reconnects (after a dropped connection or a reload)
is up to date at once. Then the client sends ``move`` (``card``, ``captured``, ``moves_played``),
``next``, ``leave`` (``level``), ``resign``, ``rematch`` or ``sync`` (resend my view); every
change reaches both players as ``{"type": "update", "view", "steps"}``, and a refused message is
answered to its sender only, as ``{"type": "error", "status", "error"}``. ``ping`` is answered
``pong`` (the page sends one a minute, so that its socket is not idle).

A player keeps at most :data:`SOCKETS_PER_SEAT` sockets open at a table (a new one closes their
oldest), a socket that does not say hello in :data:`HELLO_TIMEOUT` seconds is closed, and so is
one that sends nothing for :data:`IDLE_TIMEOUT` seconds after its hello (the page reconnects and
gets its whole view): one token cannot hold the server's files (issue 46).

Changes to one table are serialized here (an ``asyncio.Lock`` per table around the service call,
which runs in a worker thread, and the sends), so each player receives the table's changes in the
order they were made, each once. A background task sweeps the move clocks every ``sweep_every``
seconds, each table on its own: an exception on one is logged and the others are swept. The same
task has glibc give freed memory back every ``trim_every`` seconds
(:func:`pasur.common.memory.return_free_heap`): worker threads come and go, and their arenas' freed
pages otherwise stay resident, a slow creep over weeks (issue 46).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocket, WebSocketDisconnect

from pasur.common.malloc import return_free_heap
from pasur.web.guard import MAX_BODY
from pasur.web.models import LeaveIn, MoveIn
from pasur.web.service import GameError
from pasur.web.tables import ChangedThenRefused, TableService, TableUpdate

log = logging.getLogger("pasur.web")

#: seconds a new socket has to say hello
HELLO_TIMEOUT = 30.0
#: seconds one send may take before the socket is dropped (a stuck client cannot hold the table)
SEND_TIMEOUT = 10.0
#: seconds a socket may send nothing after its hello before it is closed (the page pings every 60)
IDLE_TIMEOUT = 300.0
#: sockets one player may hold open at one table (tabs, a reconnect racing the old socket)
SOCKETS_PER_SEAT = 4
#: seconds between two returns of freed memory to the system (0: never)
TRIM_EVERY = 60.0


class Hub:
    """The open sockets of every table, by player, and the per-table order of changes."""

    def __init__(
        self,
        tables: TableService,
        sweep_every: float = 1.0,
        hello_timeout: float = HELLO_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
        trim_every: float = TRIM_EVERY,
    ) -> None:
        self.tables = tables
        self.sweep_every = sweep_every
        self.trim_every = trim_every
        self.trims = 0  # how many times freed memory was given back
        self.hello_timeout = hello_timeout
        self.idle_timeout = idle_timeout
        #: each table's sockets by player, oldest first (a dict keeps the order they came in)
        self._sockets: dict[str, list[dict[WebSocket, None]]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}  # requests and sockets using each table's lock
        self._sweeper: asyncio.Task | None = None

    @contextlib.asynccontextmanager
    async def _turn(self, table_id: str):
        """This table's turn: one change at a time, in order; the lock is dropped when unused."""
        lock = self._locks.get(table_id)
        if lock is None:
            lock = self._locks[table_id] = asyncio.Lock()
        self._users[table_id] = self._users.get(table_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[table_id] -= 1
            if not self._users[table_id]:
                del self._users[table_id]
                self._locks.pop(table_id, None)

    def connected(self, table_id: str, player: int) -> int:
        """How many sockets ``player`` of the table has open."""
        return len(self._sockets.get(table_id, [{}, {}])[player])

    async def _add_socket(self, table_id: str, player: int, ws: WebSocket) -> None:
        """Count ``ws`` among the player's sockets; the oldest beyond the cap is closed."""
        mine = self._sockets.setdefault(table_id, [{}, {}])[player]
        mine.pop(ws, None)
        mine[ws] = None
        while len(mine) > SOCKETS_PER_SEAT:
            oldest = next(iter(mine))
            del mine[oldest]
            await _close(oldest, 1008)

    # -- changes --------------------------------------------------------------------------------
    async def change(self, table_id: str, call: Callable[..., Any], *args: Any) -> Any:
        """Run ``call(*args)`` (a :class:`TableService` method) in a worker thread, in this
        table's order, and push the :class:`TableUpdate` it returns (the first item of a tuple)
        to every socket of the table. A refusal that came after a forfeit still pushes the
        forfeit, then raises."""
        async with self._turn(table_id):
            try:
                out = await run_in_threadpool(call, *args)
            except ChangedThenRefused as e:
                await self.publish(e.update)
                raise
            update = out[0] if isinstance(out, tuple) else out
            if isinstance(update, TableUpdate):
                await self.publish(update)
            return out

    async def look(self, table_id: str, token: str, ws: WebSocket | None = None) -> dict:
        """The whole view of ``token``'s player, sent to ``ws`` if given; a forfeit that fell due
        is pushed to everyone. Returns the player's payload."""
        async with self._turn(table_id):
            update, player, changed = await run_in_threadpool(self.tables.view, table_id, token)
            if ws is not None:
                await self._add_socket(table_id, player, ws)
            if changed:
                await self.publish(update)
            elif ws is not None:
                await self._send(table_id, player, ws, update.payloads[player])
            return {**update.payloads[player], "player": player}

    async def publish(self, update: TableUpdate) -> None:
        sockets = self._sockets.get(update.table_id)
        if not sockets:
            return
        for player in update.persons:
            for ws in list(sockets[player]):
                await self._send(update.table_id, player, ws, update.payloads[player])

    async def _send(self, table_id: str, player: int, ws: WebSocket, payload: dict) -> None:
        try:
            await asyncio.wait_for(ws.send_json(payload), SEND_TIMEOUT)
        except Exception:  # gone or stuck: forget it (the page reconnects and gets its whole view)
            self._forget(table_id, player, ws)
            with contextlib.suppress(Exception):
                await ws.close()

    def _forget(self, table_id: str, player: int, ws: WebSocket) -> None:
        sockets = self._sockets.get(table_id)
        if sockets is not None:
            sockets[player].pop(ws, None)
            if not sockets[0] and not sockets[1]:
                self._sockets.pop(table_id, None)

    # -- the clock ------------------------------------------------------------------------------
    def start(self) -> None:
        if self._sweeper is None and self.sweep_every > 0:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None

    async def sweep(self) -> int:
        """Apply every forfeit (and every expiry) that is due and push it; returns how many. Each
        table is swept on its own: an exception on one is logged and the rest are swept."""
        done = 0
        for table_id in await run_in_threadpool(self.tables.expire_due):
            try:
                if await self.change(table_id, self.tables.expire, table_id) is not None:
                    done += 1
            except Exception:  # a bug: logged with its traceback; the other tables go on
                log.exception("clock sweep failed on table %s", table_id)
        return done

    async def _sweep_forever(self) -> None:
        loop = asyncio.get_running_loop()
        trimmed = loop.time()
        while True:
            await asyncio.sleep(self.sweep_every)
            try:
                await self.sweep()
            except Exception:  # a bug: logged, the sweep goes on
                log.exception("clock sweep failed")
            if self.trim_every > 0 and loop.time() - trimmed >= self.trim_every:
                await run_in_threadpool(return_free_heap)  # ctypes drops the GIL: the loop goes on
                trimmed, self.trims = loop.time(), self.trims + 1

    # -- one socket -----------------------------------------------------------------------------
    async def serve(self, ws: WebSocket, table_id: str) -> None:
        """A player's socket, from hello to disconnect."""
        await ws.accept()
        try:
            hello = await asyncio.wait_for(_receive(ws), self.hello_timeout)
        except (TimeoutError, WebSocketDisconnect):
            await _close(ws, 1008)
            return
        token = hello.get("token") if isinstance(hello, dict) and hello.get("type") == "hello" else None
        if not isinstance(token, str) or len(token) > 256:
            await ws.send_json({"type": "error", "status": 404, "error": "say hello with the table's token"})
            await _close(ws, 1008)
            return
        try:
            player = (await self.look(table_id, token, ws))["player"]
        except GameError as e:
            await ws.send_json({"type": "error", "status": e.status, "error": str(e)})
            await _close(ws, 1008)
            return
        try:
            while True:
                message = await asyncio.wait_for(_receive(ws), self.idle_timeout)
                await self._handle(ws, table_id, player, token, message)
        except TimeoutError:  # idle: closed (the page reconnects and gets its whole view)
            await _close(ws, 1000)
        except WebSocketDisconnect:
            pass
        finally:
            self._forget(table_id, player, ws)

    async def _handle(self, ws: WebSocket, table_id: str, player: int, token: str, message: Any) -> None:
        kind = message.get("type") if isinstance(message, dict) else None
        body = {k: v for k, v in message.items() if k != "type"} if isinstance(message, dict) else {}
        try:
            if kind == "move":
                m = MoveIn.model_validate(body)
                await self.change(table_id, self.tables.move, table_id, token, m.card, m.captured, m.moves_played)
            elif kind == "next" and not body:
                await self.change(table_id, self.tables.next_hand, table_id, token)
            elif kind == "resign" and not body:
                await self.change(table_id, self.tables.resign, table_id, token)
            elif kind == "rematch" and not body:
                await self.change(table_id, self.tables.rematch, table_id, token)
            elif kind == "leave":
                leave = LeaveIn.model_validate(body)
                await self.change(table_id, self.tables.leave, table_id, token, leave.level)
            elif kind == "sync" and not body:
                await self.look(table_id, token, ws)
            elif kind == "ping" and not body:
                await ws.send_json({"type": "pong"})
            elif kind == "bad":
                await ws.send_json({"type": "error", "status": 400, "error": str(message.get("why"))})
            else:
                await ws.send_json({"type": "error", "status": 400, "error": "unknown message"})
        except ValidationError as e:
            first = e.errors()[0] if e.errors() else {"loc": (), "msg": "invalid"}
            where = ".".join(str(x) for x in first.get("loc", ()))
            await ws.send_json({"type": "error", "status": 422, "error": f"{where}: {first.get('msg', '')}"[:300]})
        except GameError as e:
            await ws.send_json({"type": "error", "status": e.status, "error": str(e)})


async def _receive(ws: WebSocket) -> Any:
    """One message as JSON; a message too long or not JSON becomes ``{"type": "bad"}``."""
    message = await ws.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    text = message.get("text")
    if text is None:
        data = message.get("bytes") or b""
        text = data.decode("utf-8", "replace") if len(data) <= MAX_BODY else None
    if text is None or len(text) > MAX_BODY:
        return {"type": "bad", "why": f"a message is at most {MAX_BODY} bytes"}
    try:
        return json.loads(text)
    except ValueError:
        return {"type": "bad", "why": "a message is JSON"}


async def _close(ws: WebSocket, code: int) -> None:
    """Close ``ws``, however it fails (gone, or stuck: given :data:`SEND_TIMEOUT` seconds)."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ws.close(code), SEND_TIMEOUT)
