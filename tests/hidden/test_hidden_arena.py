"""The arena's duplicate pairing, its intervals, and its resumable folder, on toy cases."""

from __future__ import annotations

import json
import math
from typing import ClassVar

import pytest

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck
from pasur.hidden.agents import GreedyAgent, HiddenAgent, RandomAgent
from pasur.hidden.arena import ArenaSpec, pair_measures, play_pair, read_results, run_arena
from pasur.hidden.duplicate import play_duplicates
from pasur.hidden.game import play_hidden
from pasur.hidden.heuristic import HeuristicAgent
from pasur.hidden.optimal import OptimalAgent
from pasur.solve.reference import ReferenceSolver


def test_each_deck_is_played_twice_with_the_seats_swapped():
    decks = [Deck.from_seed(s) for s in (3, 4, 5)]
    a, b = HeuristicAgent(), GreedyAgent()
    records = play_duplicates(decks, a, b)
    for deck, rec in zip(decks, records, strict=True):  # one game at a time, by the scalar referee
        assert rec["a_as_alex"] == play_hidden(deck, (a, b)).utility
        assert rec["b_as_alex"] == play_hidden(deck, (b, a)).utility
        assert rec["margin"] == (rec["a_as_alex"] - rec["b_as_alex"]) / 2


def test_an_agent_against_itself_has_margin_zero_on_every_deal():
    records = play_duplicates([Deck.from_seed(s) for s in range(4)], GreedyAgent(), GreedyAgent())
    assert [r["margin"] for r in records] == [0, 0, 0, 0]


def test_measures_of_a_fixed_toy_case():
    records = [
        {"a_as_alex": 4, "b_as_alex": 2, "margin": 1.0},
        {"a_as_alex": 3, "b_as_alex": -1, "margin": 2.0},
        {"a_as_alex": 0, "b_as_alex": -6, "margin": 3.0},
        {"a_as_alex": 10, "b_as_alex": -2, "margin": 6.0},
    ]
    m = pair_measures("A", "B", records)
    sd = math.sqrt((4 + 1 + 0 + 9) / 3)
    assert m["margin"] == 3.0
    assert m["sd"] == pytest.approx(sd, abs=1e-4)
    assert m["half_width"] == pytest.approx(1.959964 * sd / 2, abs=1e-4)
    assert m["ci95"] == pytest.approx([3 - 1.959964 * sd / 2, 3 + 1.959964 * sd / 2], abs=1e-4)
    # per game, A's margins are 4, -2, 3, 1, 0, 6, 10, 2: six wins, one tie, one loss
    assert (m["games"], m["win_rate"], m["tie_rate"], m["loss_rate"]) == (8, 0.75, 0.125, 0.125)


def test_the_open_hand_optimal_player_follows_the_game_and_plays_optimally():
    """Against a greedy Bob, Alex's moves (found by following the game through the tree solved once
    from the deal) are checked against a tree solved afresh from the current position in rounds 1
    to 3, and against the reference solver from round 4 on (cheap that late)."""
    from pasur.game.state import GameState
    from pasur.hidden.game import HiddenGame
    from pasur.solve.exact import solve_exact
    from pasur.solve.tree import build_tree

    deck = Deck.from_seed(9)
    opt, bob = OptimalAgent(), GreedyAgent()
    g = HiddenGame(deck)
    checked = 0
    while not g.is_terminal:
        s = g.state
        if g.mover == 0:
            act = opt.choose_open(s, g.moves)
            vals = opt.action_values_open(s, g.moves)
            if s.round >= 4:
                ref = ReferenceSolver(deck)
                assert vals == ref.action_values(s)
                assert act == ref.best_action(s)
                checked += 1
            elif (s.round, s.turn) in ((1, 4), (2, 0), (3, 4)):
                sol = solve_exact(build_tree(s, "compact", infosets=False))
                best = max(v for _, v in vals)
                assert sol.game_value() == best == next(v for a, v in vals if a == act)
                checked += 1
        else:
            act = bob.choose(g.observation(1))
        g.apply(act)
    assert checked == 8 + 3
    assert isinstance(g.state, GameState)


def test_a_resumed_arena_plays_only_what_is_missing(tmp_path):
    spec = ArenaSpec.all_pairs(["greedy", "random"], deals=6, seed=5, chunk=2)
    first = run_arena(spec, tmp_path / "a", engine="inline")
    assert (first.ran, first.skipped) == (3, 0)
    chunk = tmp_path / "a" / "chunks" / "greedy__vs__random" / "00000002.json"
    chunk.unlink()
    again = run_arena(spec, tmp_path / "a", engine="inline")
    assert (again.ran, again.skipped) == (1, 2)
    assert again.results["pairs"][0]["records"] == first.results["pairs"][0]["records"]
    more = run_arena(
        ArenaSpec.all_pairs(["greedy", "random"], deals=8, seed=5, chunk=2), tmp_path / "a", engine="inline"
    )
    assert (more.ran, more.skipped) == (1, 3)
    res = read_results(tmp_path / "a")
    assert [r["seed"] for r in res["pairs"][0]["records"]] == list(range(5, 13))
    assert json.loads((tmp_path / "a" / "results.json").read_text())["pairs"][0]["deals"] == 8
    direct = play_pair("greedy", "random", deals=8, seed=5)
    assert direct["margin"] == res["pairs"][0]["margin"]


def test_an_arena_folder_refuses_other_seeds_and_foreign_files(tmp_path):
    run_arena(ArenaSpec.all_pairs(["greedy", "random"], deals=2, seed=0, chunk=2), tmp_path / "a", engine="inline")
    with pytest.raises(PasurInputError, match="seed"):
        run_arena(ArenaSpec.all_pairs(["greedy", "random"], deals=2, seed=1, chunk=2), tmp_path / "a", engine="inline")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "mine.txt").write_text("keep")
    with pytest.raises(PasurInputError, match="did not write"):
        run_arena(ArenaSpec.all_pairs(["greedy", "random"], deals=2), tmp_path / "b", engine="inline")
    assert (tmp_path / "b" / "mine.txt").read_text() == "keep"


def test_bad_agents_are_refused_before_any_work(tmp_path):
    with pytest.raises(PasurInputError, match="unknown agent"):
        run_arena(ArenaSpec.all_pairs(["greedy", "wizard"], deals=2), tmp_path / "c", engine="inline")
    assert not (tmp_path / "c").exists()
    with pytest.raises(PasurInputError):
        ArenaSpec.all_pairs(["greedy"], deals=2).check()
    assert RandomAgent(1).name == "random"


def test_the_ray_engine_plays_the_same_deals_as_inline(ray_here, tmp_path):
    """Three agents, so that chunks of several pairs are in flight at once on two workers; inside
    a running Ray (conftest's shared instance) the arena uses it and leaves it running."""
    spec = ArenaSpec.all_pairs(["greedy", "random", "heuristic"], deals=4, seed=2, chunk=2)
    inline = run_arena(spec, tmp_path / "inline", engine="inline")
    on_ray = run_arena(spec, tmp_path / "ray", engine="ray", workers=2)
    assert (on_ray.ran, on_ray.skipped) == (6, 0)
    untimed = [[{k: v for k, v in p.items() if k != "timing"} for p in r.results["pairs"]] for r in (inline, on_ray)]
    assert untimed[0] == untimed[1] and [(p["a"], p["b"]) for p in untimed[1]] == list(spec.pairs)
    assert ray_here.is_initialized()


class _Spy(HiddenAgent):
    """A stateful agent: it remembers the cards it held in each deal (told apart by the deal's
    first pool) and seat, and notes it when it has held the other seat's cards of the same deal."""

    name = "spy"
    made: ClassVar[list[_Spy]] = []

    def __init__(self) -> None:
        self.held: dict[tuple[int, int], int] = {}
        self.leaks = 0
        _Spy.made.append(self)

    def choose(self, info):
        if (info.initial_pool, 1 - info.player) in self.held:
            self.leaks += 1  # it knows the cards the other seat of this deal held
        key = (info.initial_pool, info.player)
        self.held[key] = self.held.get(key, 0) | info.hand
        return info.legal_actions()[0]


def _spy_or(make):
    return lambda name, **kw: _Spy() if name == "spy" else make(name, **kw)


def test_each_seat_of_a_deal_has_its_own_agent_instance(tmp_path, monkeypatch):
    """Issue 24: one instance played both seats of a duplicate deal, so a stateful agent could
    remember as Bob the cards it held as Alex. The arena gives each seat its own instance."""
    import pasur.hidden.arena as arena

    decks = [Deck.from_seed(s) for s in range(3)]
    _Spy.made.clear()
    play_duplicates(decks, _Spy(), GreedyAgent())  # the same instance in both seats: it remembers
    assert _Spy.made[0].leaks > 0

    monkeypatch.setattr(arena, "make_agent", _spy_or(arena.make_agent))
    for run in (
        lambda: play_pair("spy", "greedy", deals=3),
        lambda: run_arena(
            ArenaSpec.all_pairs(["spy", "greedy", "random"], deals=3, chunk=2), tmp_path / "a", engine="inline"
        ),
    ):
        _Spy.made.clear()
        run()
        played = [s for s in _Spy.made if s.held]
        assert played and all(s.leaks == 0 for s in played)
        assert all(len({seat for _, seat in s.held}) == 1 for s in played)  # one seat per instance
        assert {seat for s in played for _, seat in s.held} == {0, 1}


def test_the_arena_command_counts_in_words_and_refuses_empty_names(tmp_path):
    """Issue 24: ``--deals 5`` said "1 chunks of 25 deals"; ``--agents "pimc:5,,greedy"`` was
    accepted (the empty name dropped)."""
    from typer.testing import CliRunner

    import pasur.cli.hidden  # noqa: F401  (registers the command)
    from pasur.cli import app

    runner = CliRunner()
    base = ["arena", "--engine", "inline", "--deals", "5"]
    r = runner.invoke(app, [*base, "--agents", "greedy,random", "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    assert "1 chunk of 5 deals to play, 0 done before" in r.stderr, r.stderr
    assert "1 chunk played, 0 done before" in r.stdout
    r = runner.invoke(app, [*base, "--agents", "greedy,random", "--chunk", "2", "--out", str(tmp_path / "b")])
    assert "3 chunks of up to 2 deals to play" in r.stderr, r.stderr
    for agents, pairs in [
        ("pimc:5,,greedy", None),
        ("greedy,random,", None),
        (",greedy,random", None),
        ("greedy,random", "greedy/random,"),
    ]:
        extra = ["--pairs", pairs] if pairs else []
        r = runner.invoke(app, [*base, "--agents", agents, *extra, "--out", str(tmp_path / "c")])
        assert r.exit_code == 2 and r.stderr.startswith("error: ") and "empty name" in r.stderr, (agents, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "c").exists()
    with pytest.raises(PasurInputError, match="empty"):
        ArenaSpec.all_pairs(["greedy", " "], deals=2).check()
