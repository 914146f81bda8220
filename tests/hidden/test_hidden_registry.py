"""Agents by name (``pasur.hidden.registry``): every kind builds the agent it names, options are
checked, and the help and the refusal list every kind."""

from __future__ import annotations

import pytest

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck
from pasur.hidden import registry
from pasur.hidden.agents import GreedyAgent, HiddenAgent, RandomAgent
from pasur.hidden.game import HiddenGame
from pasur.hidden.heuristic import HeuristicAgent
from pasur.hidden.optimal import OptimalAgent
from pasur.hidden.pimc import PIMCAgent
from pasur.hidden.registry import make_agent

SPECS = {
    "random": (RandomAgent, "random"),
    "greedy": (GreedyAgent, "greedy"),
    "heuristic": (HeuristicAgent, "heuristic"),
    "pimc:3": (PIMCAgent, "pimc:3"),
    "ispimc:3:infer": (PIMCAgent, "ispimc:3:infer"),
    "ispimc2:2": (PIMCAgent, "ispimc2:2"),
    "optimal": (OptimalAgent, "optimal"),
}


@pytest.mark.parametrize("spec", SPECS)
def test_each_kind_builds_its_agent_which_plays(spec):
    kind, name = SPECS[spec]
    agent = make_agent(spec, seed=1)
    assert type(agent) is kind and agent.name == name
    if not agent.omniscient:
        info = HiddenGame(Deck.from_seed(2)).observation(0)
        assert agent.choose(info) in info.legal_actions()


def test_the_pimc_kinds_differ_in_what_they_keep_consistent():
    modes = {spec: make_agent(spec).mode for spec in ("pimc:2", "ispimc:2", "ispimc2:2")}
    assert len(set(modes.values())) == 3
    assert make_agent("pimc:2:game").horizon == "game" and make_agent("pimc:2").horizon == "round"


def test_ismcts_is_built_with_openspiel():
    """OpenSpiel is a pinned dev dependency: the agent is built (no skip where it is missing)."""
    agent = make_agent("ismcts:5:game", seed=3)
    assert isinstance(agent, HiddenAgent) and agent.name == "ismcts:5:game"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("greedy:3", "agent 'greedy' takes no options, got 'greedy:3'"),
        ("optimal:x", "agent 'optimal' takes no options"),
        ("pimc:0", "the number of worlds must be an integer from 1 to 1,000"),
        ("pimc:10:fast", "unknown option 'fast'"),
        ("ispimc:10:game", "ispimc solves one round at a time"),
        ("ispimc2:10:game", "ispimc2 solves one round at a time"),
        ("pimc:10:game:exact", ":exact needs the round horizon"),
        ("ismcts:5:round", "ismcts takes the simulations and, optionally, :game"),
        ("ismcts:0", "the number of simulations must be an integer from 1 to 100,000"),
    ],
)
def test_bad_options_are_refused(spec, message):
    with pytest.raises(PasurInputError, match=message):
        make_agent(spec)


def test_an_unknown_agent_is_refused_listing_every_kind():
    with pytest.raises(PasurInputError, match="unknown agent 'wizard'") as e:
        make_agent("wizard")
    listed = str(e.value)
    for name in ("random", "greedy", "heuristic", "pimc:K", "ispimc:K", "ispimc2:K", "ismcts:N", "optimal"):
        assert name in listed
    assert make_agent(" PIMC:4 ").name == "pimc:4"  # kinds are read without case or blanks


def test_the_module_docstring_lists_every_kind():
    doc = registry.__doc__
    assert "{agents}" not in doc
    assert all(f"\n- {row.help}\n" in doc for row in registry.AGENTS)


def test_best_names_the_strongest_agent_and_the_page_plays_it():
    from pasur.hidden.registry import BEST
    from pasur.web.levels import LEVELS

    assert LEVELS["best"] == BEST
    agent, named = make_agent("best", seed=3), make_agent(BEST, seed=3)
    assert type(agent) is type(named) and vars(agent).keys() == vars(named).keys()
    with pytest.raises(PasurInputError, match="best takes no options"):
        make_agent("best:20")
