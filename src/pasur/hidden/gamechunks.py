"""Played games kept in chunks on disk, for the networks trained on them (the belief and the
policy): ``kind-00000.npz``, ... in a folder, each written whole (a temporary file renamed), so
a rerun plays only the chunks not there yet, with the same seats and seeds."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pasur.game.cards import Deck
from pasur.game.rules import Action
from pasur.hidden.game import HiddenGame
from pasur.hidden.infostate import InfoState

#: games per chunk
CHUNK = 50


def draw_seats(n: int, rng: random.Random, mix: Sequence[tuple[str, float]]) -> list[tuple[str, str]]:
    """Both seats' agents of ``n`` games, each drawn from ``mix`` (agent, weight)."""
    names, weights = [m[0] for m in mix], [m[1] for m in mix]
    return [(rng.choices(names, weights)[0], rng.choices(names, weights)[0]) for _ in range(n)]


def play_lockstep(
    deck_seeds: list[int],
    seats: list[tuple[str, str]],
    decide: Callable[[str, list[int], list[InfoState]], list[Action]],
) -> dict[str, np.ndarray]:
    """Play one game per deck seed with the named seats, in lockstep: at each turn the games are
    grouped by the agent in the mover's seat, and ``decide(name, games, infos)`` chooses that
    agent's moves in those games (their indices, the mover's information states). Returns the
    decks ``[G, 52]``, the moves ``[G, 48, 2]`` (card, captured mask), the seats and the seeds."""
    games = [HiddenGame(Deck.from_seed(s)) for s in deck_seeds]
    while not games[0].is_terminal:
        mover = games[0].mover
        by_agent: dict[str, list[int]] = {}
        for i, s in enumerate(seats):
            by_agent.setdefault(s[mover], []).append(i)
        for name, idx in by_agent.items():
            actions = decide(name, idx, [games[i].observation(mover) for i in idx])
            for i, a in zip(idx, actions, strict=True):
                games[i].apply(a)
    moves = np.array([[(m.card, m.captured) for m in g.moves] for g in games], dtype=np.int64)
    decks = np.array([Deck.from_seed(s).cards for s in deck_seeds], dtype=np.int8)
    return {"decks": decks, "moves": moves, "seats": np.array(seats, dtype=str), "seeds": np.array(deck_seeds)}


def play_in_chunks(
    folder: Path,
    kind: str,
    games: int,
    first_seed: int,
    sample_seed: int,
    mix: Sequence[tuple[str, float]],
    play: Callable[[list[int], list[tuple[str, str]]], dict[str, np.ndarray]],
    on_chunk: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """The chunk files of ``games`` games on the decks of seeds ``first_seed`` on, seats drawn
    from ``mix``; ``play(deck_seeds, seats)`` plays a chunk not there yet."""
    folder.mkdir(parents=True, exist_ok=True)
    seats = draw_seats(games, random.Random(f"{kind}:{first_seed}:{sample_seed}"), mix)
    paths = []
    for lo in range(0, games, CHUNK):
        path = folder / f"{kind}-{lo // CHUNK:05d}.npz"
        hi = min(games, lo + CHUNK)
        if not path.exists():
            t0 = time.perf_counter()
            data = play(list(range(first_seed + lo, first_seed + hi)), seats[lo:hi])
            data["seconds"] = np.array(time.perf_counter() - t0)
            tmp = path.with_name(path.stem + ".tmp.npz")
            np.savez_compressed(tmp, **data)
            tmp.replace(path)
        paths.append(path)
        if on_chunk is not None:
            on_chunk(hi, games)
    return paths


def load_games(paths: list[Path]) -> dict[str, np.ndarray]:
    """The chunks' games, concatenated; ``seconds``: the time they took to play, summed."""
    parts = [dict(np.load(p)) for p in paths]
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0] if k != "seconds"}
    out["seconds"] = np.array(sum(float(p["seconds"]) for p in parts))
    return out
