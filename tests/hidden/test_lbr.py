"""The best-response bound (LBR, issue 42 item 1): it never wins more than the exact best
response on the small variants, its posterior holds only hands that explain what the responder
saw, and ``pasur lbr`` refuses bad input in one line before any work."""

from __future__ import annotations

import csv
import json
from itertools import combinations
from math import comb

import pytest
from typer.testing import CliRunner

from pasur.cli import app
from pasur.game.cards import Deck, cards_of
from pasur.game.variants import get_variant
from pasur.hidden.exact_cfr import HiddenCFR, HiddenCFRConfig
from pasur.hidden.exact_exploit import agent_table
from pasur.hidden.game import HiddenGame
from pasur.hidden.history_tree import build_tree
from pasur.hidden.lbr import LBRResponder, _worlds, every_deck, exact_seats, expected_utility
from pasur.hidden.registry import make_agent


@pytest.fixture(scope="module")
def solvers() -> dict:
    return {name: HiddenCFR(build_tree(name), HiddenCFRConfig("dcfr")) for name in ("micro", "duo")}


BOUND_CASES = [("micro", "greedy"), ("micro", "heuristic"), ("micro", "random"), ("micro", "pimc:8")]
BOUND_CASES += [("duo", "greedy"), ("duo", "random")]


@pytest.mark.parametrize(("name", "spec"), BOUND_CASES)
def test_the_bound_never_exceeds_the_exact_best_response_in_either_seat(solvers, name, spec):
    """Over every deal (and every move of ``random``, a uniform policy), the responder as Alex
    wins at most what Alex's exact best response wins against the agent, and as Bob at most
    Bob's; so its gain is at most the exploitability."""
    solver, agent = solvers[name], make_agent(spec)
    table = agent_table(solver, agent, distribution=spec == "random")
    br_alex, br_bob = (solver.best_response(table, p)[0] for p in (0, 1))
    lbr_alex, lbr_bob = exact_seats(get_variant(name), agent, LBRResponder(agent))
    assert lbr_alex <= br_alex + 1e-9
    assert lbr_bob >= br_bob - 1e-9  # Alex minus Bob: Bob's best response makes it least
    assert (lbr_alex - lbr_bob) / 2 <= (br_alex - br_bob) / 2 + 1e-9
    if spec in ("greedy", "random"):  # and it does find their weaknesses
        assert (lbr_alex - lbr_bob) / 2 > 0


def test_a_reused_round_solve_is_the_solve_of_the_decision_it_serves():
    """The responder solves each distinct input once and reuses it in other decks: every value it
    played by, over 60 decks of ``tiny`` (every fifth: decisions repeat across them), is what a
    fresh solve of that decision gives, exactly. Fails with the clubs or the banked points left
    out of the reuse's key (the same hand, pool and posterior after other captures)."""
    agent = make_agent("heuristic")
    responder = LBRResponder(agent, model=make_agent("greedy"))
    played, solved = [], responder._solved

    def noted(info, post):
        values = solved(info, post)
        played.append((info, post, values))
        return values

    responder._solved = noted
    for deck in list(every_deck(get_variant("tiny")))[::5][:60]:
        for seat in (0, 1):
            expected_utility(HiddenGame(deck), agent, responder, seat, responder.tracker())
    assert len(responder._values) < len(played)  # reused
    assert [v for _, _, v in played] == [responder.search.posterior_values(i, _worlds(p)) for i, p, _ in played]


def test_every_deck_is_every_deal_once():
    v = get_variant("micro")
    keys = {(frozenset(d.pool), *(d.hand_mask(p, r) for r in range(v.deals) for p in (0, 1))) for d in every_deck(v)}
    assert len(keys) == sum(1 for _ in every_deck(v)) == v.deals_count()


def responder_decisions(game: HiddenGame, agent, responder: LBRResponder, seat: int, agent_infos: list, rounds=None):
    """Play ``game`` (its first ``rounds`` rounds, or to the end) with the responder in ``seat``:
    yield its information state and posterior after each of its moves, and append each of the
    agent's moves (its information state as the referee gave it, the action) to ``agent_infos``."""
    tracker = responder.tracker()
    while not game.is_terminal and (rounds is None or game.state.round < rounds):
        if game.mover != seat:
            info = game.observation(game.mover)
            action = agent.choose(info)
            agent_infos.append((info, action))
            tracker.agent_moved(game.observation(seat), action)
            game.apply(action)
            continue
        info = game.observation(seat)
        game.apply(responder.choose(info, tracker))
        yield info, responder.last_posterior


def _check_game(deck: Deck, agent, responder: LBRResponder, seat: int, rounds: int) -> tuple[int, int]:
    """Play one game's first ``rounds`` rounds, checking at each of the responder's decisions
    that every hand of its posterior is made of cards it has not seen, of the agent's hand size,
    and would have led the agent (asked on its own information states, as the referee gave them)
    to play as it did this round, and that an exact posterior of few hands holds every such hand.
    Returns the decisions checked, and how many of them had an exact posterior with the true hand."""
    game, agent_infos = HiddenGame(deck), []
    checked = exact_with_truth = 0
    for info, post in responder_decisions(game, agent, responder, seat, agent_infos, rounds):
        if len(info.legal_actions()) == 1:
            continue
        this_round = [(i, a) for i, a in agent_infos if i.round == info.round]
        played = info.played_this_round(1 - seat)
        for hand in post.hands.tolist():
            assert hand & ~info.unseen == 0 and hand.bit_count() == info.opponent_hand_size
            assert _explains(agent, this_round, hand | played, seat)
        unseen, n = cards_of(info.unseen), info.opponent_hand_size
        if post.exact and comb(len(unseen), n) <= 300:  # and it holds every hand that does
            every = [sum(1 << c for c in h) for h in combinations(unseen, n)]
            assert set(post.hands.tolist()) == {h for h in every if _explains(agent, this_round, h | played, seat)}
        checked += 1
        exact_with_truth += post.exact and game.state.hands[1 - seat] in post.hands.tolist()
    return checked, exact_with_truth


def _explains(agent, this_round: list, dealt: int, seat: int) -> bool:
    """Whether the agent, dealt ``dealt`` this round, would have played as it did at each of its
    turns of the round (asked on its information states as the referee gave them)."""
    for seen, action in this_round:
        before = seen.played_this_round(1 - seat)
        if agent.choose(type(seen)(**{**_fields(seen), "hand": dealt & ~before})) != action:
            return False
    return True


def _fields(info) -> dict:
    return {name: getattr(info, name) for name in info.__dataclass_fields__}


@pytest.mark.parametrize(("name", "rounds"), [("tiny", 2), ("mini", 2), ("standard", 2)])
def test_the_posterior_holds_only_hands_that_explain_what_the_responder_saw(name, rounds):
    """On the small variants every posterior is exact; on the standard game's first two deals
    the agent can hold thousands of hands early in a deal: those posteriors are rejection samples."""
    v, agent = get_variant(name), make_agent("heuristic")
    responder = LBRResponder(agent, hands=30)
    checked = exact = 0
    for seed, seat in ((1, 0), (2, 1), (3, 0), (4, 1))[: 2 if name == "standard" else 4]:
        c, e = _check_game(Deck.from_seed(seed, v), agent, responder, seat, rounds)
        checked, exact = checked + c, exact + e
    assert checked > 0 and responder.stats["exact"] == exact  # the true hand is in every exact posterior
    assert responder.stats["fallback"] == 0
    assert (responder.stats["sampled"] > 0) == (name == "standard") and exact > 0


def _run(*args: str):
    return CliRunner().invoke(app, ["lbr", *args])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "optimal"], "sees every card"),
        (["--agent", "nobody"], "unknown agent"),
        (["--agent", "policy", "--variant", "tiny"], "does not apply to the tiny variant"),
        (["--agent", "heuristic", "--variant", "huge"], "unknown variant"),
        (["--agent", "heuristic", "--every-deal"], "only to a small variant"),
        (["--agent", "heuristic", "--variant", "micro", "--every-deal", "--deals", "3"], "give no --deals"),
        (["--agent", "heuristic", "--deals", "0"], "--deals"),
        (["--agent", "heuristic", "--hands", "0"], "--hands"),
        (["--agent", "heuristic", "--model", "optimal"], "--model optimal sees every card"),
        (["--agent", "heuristic", "--model", "nobody"], "unknown agent"),
        (["--agent", "heuristic", "--model", "policy", "--variant", "tiny"], "--model 'policy' does not apply"),
        (["--agent", "heuristic", "--model", "greedy", "--model-eps", "1.5"], "--model-eps"),
        (["--agent", "heuristic", "--model", "greedy", "--model-eps", "-0.1"], "--model-eps"),
        (["--agent", "heuristic", "--model-eps", "0.2"], "applies to a --model"),
    ],
)
def test_pasur_lbr_refuses_bad_input_in_one_line(args, message):
    r = _run(*args)
    assert r.exit_code == 2
    assert r.output.startswith("error: ") and message in r.output and r.output.count("\n") == 1


def test_pasur_lbr_refuses_an_out_that_is_a_file(tmp_path):
    f = tmp_path / "x"
    f.write_text("")
    r = _run("--agent", "heuristic", "--out", str(f))
    assert r.exit_code == 2 and r.output.startswith("error: --out")


def test_pasur_lbr_reports_the_gain_over_duplicate_deals(tmp_path):
    r = _run("--agent", "greedy", "--variant", "tiny", "--deals", "3", "--seed", "5", "--json", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    rows = list(csv.DictReader((tmp_path / "deals.csv").open()))
    assert [int(x["seed"]) for x in rows] == [5, 6, 7]
    margins = [float(x["lbr_margin"]) for x in rows]
    assert all(float(x["lbr_margin"]) == (int(x["lbr_as_alex"]) - int(x["agent_as_alex"])) / 2 for x in rows)
    assert report["gain"] == pytest.approx(sum(margins) / 3, abs=1e-4)
    assert report["ci95"][0] <= report["gain"] <= report["ci95"][1] and report["games"] == 6
    assert json.loads((tmp_path / "lbr.json").read_text())["gain"] == report["gain"]


def test_pasur_lbr_names_the_model_and_its_eps(tmp_path):
    args = ["--agent", "heuristic", "--variant", "tiny", "--deals", "2", "--seed", "5"]
    r = _run(*args, "--model", "greedy", "--model-eps", "0.25", "--json", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert (report["model"], report["model_eps"], report["model_probs"]) == ("greedy", 0.25, "choice")
    assert report["posterior"]["model_asked"] > 0 and report["posterior"]["agent_asked"] == 0
    assert json.loads((tmp_path / "lbr.json").read_text())["model"] == "greedy"
    sentence = _run(*args, "--model", "greedy").stdout
    assert "by model greedy (eps 0.1," in sentence
    own = json.loads(_run(*args, "--json").stdout)
    assert (own["model"], own["model_eps"], own["posterior"]["model_asked"]) == ("heuristic", 0.0, 0)
