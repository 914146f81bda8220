"""Agents by name, for the arena, the command line and the web page's levels.

A name is a kind and options after colons (``pimc:30:infer``). Every kind is one row of
:data:`AGENTS`: its name, its help (the command line's ``--agents`` help and this list are made
from the rows) and the function that builds it, so a new agent is its module and one row here.

{agents}

The PIMC kinds also take ``:clubs`` (the closed-form clubs value at a round's boundary instead
of the learned one) and ``:iid`` (worlds drawn independently instead of balanced).
With the policy-value network (:mod:`pasur.hidden.combined`): ``:pvL`` (add L times the network's
action value to the search's, then divide by 1 + L), ``:plL`` (add L times the log of its
probability), ``:topN`` (choose among its N most probable actions only), ``:popp`` or ``:poppT``
(weigh the worlds by the opponent's moves of this round under the network, log-likelihood times T;
not with ``:infer`` or ``:belief``). ``SPEC@FILE`` gives ``policy`` or such a search another
policy network's weights file (a self-play generation: ``policy@runs/selfplay/policy-weights.pt``).

A user's own agent is ``module:Class`` (``--agents mypkg.agents:MyAgent,greedy``): when the part
before the first colon is no kind above, it is imported as a module (from ``sys.path``: the working
directory under ``python -m``, or an installed package) and its class ``Class`` is made with
``seed=`` if its constructor takes it, else with no arguments. The class implements the interface of
:class:`pasur.hidden.agents.HiddenAgent` (``choose(info) -> Action``, and ``choose_batch`` if it
has one; subclassing it is simplest). The built-in kinds win: ``pimc:8`` is always the search.

>>> make_agent("pimc:30").name, make_agent("heuristic").name
('pimc:30', 'heuristic')
>>> make_agent("pimc:x")
Traceback (most recent call last):
...
pasur.common.errors.PasurInputError: agent 'pimc:x': the number of worlds must be an integer from 1 to 1,000
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from pasur.common.errors import PasurInputError

if TYPE_CHECKING:  # the agents load numpy and torch: only when one is built
    from pasur.hidden.agents import HiddenAgent

#: ``:exact``: every hand the opponent can hold, when it can hold at most this many (in play: its
#: last card, at most 41 hands; two cards from round 2, at most 325; three in round 4, 165),
#: instead of the K sampled worlds
EXACT_WORLDS = 435


@dataclass(frozen=True)
class AgentRow:
    """One kind of agent: ``name`` (the part of a spec before the first colon), ``help`` (the
    spec's forms and options, as the command line lists them) and ``build(spec, options, seed,
    device)``, where ``options`` are the spec's parts after the name."""

    name: str
    help: str
    build: Callable[[str, list[str], int, str], HiddenAgent]


def _count(spec: str, text: str | None, what: str, default: int, most: int) -> int:
    """A positive count of at most ``most`` (one decision solves all its worlds in one tensor pass:
    more than that would need gigabytes for no measurable gain)."""
    if text is None:
        return default
    if not text.isdigit() or not 1 <= int(text) <= most:
        raise PasurInputError(f"agent {spec!r}: the number of {what} must be an integer from 1 to {most:,}")
    return int(text)


def _kind(spec: str) -> str:
    return spec.strip().split(":")[0].lower()


def _plain(make: Callable[[int, str], HiddenAgent]) -> Callable[[str, list[str], int, str], HiddenAgent]:
    """The builder of an agent that takes no options: ``make(seed, device)``."""

    def build(spec: str, options: list[str], seed: int, device: str) -> HiddenAgent:
        if options:
            raise PasurInputError(f"agent {_kind(spec)!r} takes no options, got {spec!r}")
        return make(seed, device)

    return build


def _random(seed: int, device: str) -> HiddenAgent:
    from pasur.hidden.agents import RandomAgent

    return RandomAgent(seed)


def _greedy(seed: int, device: str) -> HiddenAgent:
    from pasur.hidden.agents import GreedyAgent

    return GreedyAgent()


def _heuristic(seed: int, device: str) -> HiddenAgent:
    from pasur.hidden.heuristic import HeuristicAgent

    return HeuristicAgent()


def _optimal(seed: int, device: str) -> HiddenAgent:
    from pasur.hidden.optimal import OptimalAgent

    return OptimalAgent(device)


def _policy(spec: str, options: list[str], seed: int, device: str) -> HiddenAgent:
    if options not in ([], ["sample"]):
        raise PasurInputError(f"agent {spec!r}: policy takes no option but :sample")
    from pasur.hidden.policy import PolicyAgent, default_policy

    return PolicyAgent(default_policy(device), sample=bool(options), seed=seed)


def _ismcts(spec: str, options: list[str], seed: int, device: str) -> HiddenAgent:
    if len(options) > 2 or (len(options) == 2 and options[1] != "game"):
        raise PasurInputError(f"agent {spec!r}: ismcts takes the simulations and, optionally, :game")
    from pasur.hidden.openspiel import ISMCTSAgent

    n = _count(spec, options[0] if options else None, "simulations", 200, 100_000)
    return ISMCTSAgent(n, seed=seed, rollout="game" if len(options) == 2 else "round")


#: the policy network's options on the PIMC kinds (:mod:`pasur.hidden.combined`): prefix -> keyword
POLICY_OPTIONS = {"pv": "value_weight", "pl": "logp_weight", "top": "top", "popp": "temperature"}


def _policy_options(spec: str, flags: set[str]) -> dict:
    """The keywords of :class:`~pasur.hidden.combined.CombinedAgent` named by ``flags`` (``:pvL``,
    ``:plL``, ``:topN``, ``:popp`` or ``:poppT``), with ``_given``: the flags they came from."""
    out: dict = {"_given": []}
    for flag in sorted(flags):
        prefix = next((p for p in ("popp", "top", "pv", "pl") if flag.startswith(p)), None)
        if prefix is None:
            continue
        text = flag[len(prefix) :]
        key = POLICY_OPTIONS[prefix]
        if key in out:
            raise PasurInputError(f"agent {spec!r}: :{prefix} given twice")
        if prefix == "top":
            if not text.isdigit() or not 1 <= int(text) <= 20:
                raise PasurInputError(f"agent {spec!r}: :topN needs N an integer from 1 to 20, got {flag!r}")
            value: float = int(text)
        elif prefix == "popp" and not text:
            value = 1.0
        else:
            try:
                value = float(text)
            except ValueError:
                value = -1.0
            if not (0 < value <= 100) or not all(ch.isdigit() or ch == "." for ch in text):
                raise PasurInputError(
                    f"agent {spec!r}: :{prefix} needs a number above 0 and at most 100 "
                    f"(like :{prefix}0.5), got {flag!r}"
                )
        out[key] = value
        if prefix == "popp":
            out["opponent"] = True
        out["_given"].append(flag)
    return out if len(out) > 1 else {"_given": []}


def _pimc(mode: str) -> Callable[[str, list[str], int, str], HiddenAgent]:
    """The builder of a PIMC kind: ``K`` worlds, then flags; ``mode`` as :class:`PIMCAgent` takes it."""

    def build(spec: str, options: list[str], seed: int, device: str) -> HiddenAgent:
        k = _count(spec, options[0] if options else None, "worlds", 50, 1_000)
        flags = set(options[1:])
        combo = _policy_options(spec, flags)
        flags -= set(combo.pop("_given"))
        unknown = flags - {"game", "clubs", "iid", "infer", "exact", "belief"}
        if unknown:
            raise PasurInputError(
                f"agent {spec!r}: unknown option {sorted(unknown)[0]!r} (game, clubs, iid, infer, exact, belief)"
            )
        if {"infer", "belief"} <= flags:
            raise PasurInputError(f"agent {spec!r}: :belief replaces :infer's weights (not both)")
        if mode != "minimax" and "game" in flags:
            raise PasurInputError(f"agent {spec!r}: {_kind(spec)} solves one round at a time (no :game)")
        if {"exact", "game"} <= flags:
            raise PasurInputError(f"agent {spec!r}: :exact needs the round horizon (no :game)")
        if combo.get("opponent") and flags & {"infer", "belief"}:
            raise PasurInputError(f"agent {spec!r}: :popp replaces :infer's and :belief's weights (not with them)")
        from pasur.hidden.pimc import PIMCAgent

        boundary = None
        if "clubs" in flags:
            from pasur.hidden.boundary import ClubsBoundary

            boundary = ClubsBoundary()
        cls = PIMCAgent
        if combo:
            from pasur.hidden.combined import CombinedAgent

            cls = partial(CombinedAgent, **combo)
        return cls(
            k,
            horizon="game" if "game" in flags else "round",
            mode=mode,
            boundary=boundary,
            seed=seed,
            device=device,
            name=spec.strip().lower(),
            balanced="iid" not in flags,
            infer="infer" in flags,
            exhaustive=EXACT_WORLDS if "exact" in flags else 0,
            belief="default" if "belief" in flags else None,
        )

    return build


def _cfr(spec: str, options: list[str], seed: int, device: str) -> HiddenAgent:
    """``cfr[:K][:mM][:itN][:fixed]``: K opponent hands (default 16), M hands of its own range
    (default 4), N CFR iterations per solve (default 32; at least half of them for a standard-game
    solve over ``WORK_NODES`` nodes), ``:fixed`` to play the round start's solve without re-solving."""
    k = _count(spec, options[0] if options and options[0].isdigit() else None, "opponent hands", 16, 64)
    flags = options[1:] if options and options[0].isdigit() else options
    iterations, own, given = 32, 4, set()
    for flag in flags:
        name = "it" if flag.startswith("it") else "m" if flag.startswith("m") else flag
        if name == "it" and name not in given:
            iterations = _count(spec, flag[2:], "iterations (:itN)", 32, 10_000)
        elif name == "m" and name not in given:
            own = _count(spec, flag[1:], "own hands (:mM)", 4, 64)
        elif name != "fixed" or name in given:
            raise PasurInputError(f"agent {spec!r}: unknown or repeated option {flag!r} (cfr:K, :mM, :itN, :fixed)")
        given.add(name)
    from pasur.hidden.cfr_agent import CFRAgent

    return CFRAgent(
        k, iterations, own=own, resolve="fixed" not in given, seed=seed, device=device, name=spec.strip().lower()
    )


#: every kind of agent, in the order the help lists them
#: the strongest agent within the web page's budget of 0.3 s per move (docs/hidden.md): the spec
#: ``best`` names it, and the page's top level plays it. IS-PIMC with 20 worlds and soft-greedy
#: inference, its choice tilted by 0.5 x the policy network's log-probability; pre-registered
#: against ``ispimc:20:infer`` (+0.396, results/arena-prereg-combined) and ``pimc:20`` (+0.456,
#: results/arena-prereg-best). Its action values (the hints) are the search's margins alone.
BEST = "ispimc:20:infer:pl0.5"


def _best(spec: str, options: list[str], seed: int, device: str) -> HiddenAgent:
    if options:
        raise PasurInputError(f"agent {spec!r}: best takes no options (it is {BEST})")
    return make_agent(BEST, seed=seed, device=device)


AGENTS: tuple[AgentRow, ...] = (
    AgentRow("random", "random", _plain(_random)),
    AgentRow("greedy", "greedy", _plain(_greedy)),
    AgentRow("heuristic", "heuristic", _plain(_heuristic)),
    AgentRow(
        "pimc",
        "pimc:K (K worlds; :game to solve to the end of the game; :infer to weigh the worlds by the opponent's "
        "moves; :belief to draw them from the learned belief; :exact for every opponent hand when few)",
        _pimc("minimax"),
    ),
    AgentRow(
        "ispimc",
        "ispimc:K (:infer, :belief, :exact; with the policy network :pvL, :plL, :topN, :popp)",
        _pimc("consistent"),
    ),
    AgentRow("ispimc2", "ispimc2:K (ispimc with the opponent's choices consistent too)", _pimc("both")),
    AgentRow("ismcts", "ismcts:N (OpenSpiel's ISMCTS, N simulations; :game for rollouts to the end)", _ismcts),
    AgentRow(
        "policy",
        "policy (the learned policy-value network, no search: its most probable action; :sample to draw from it)",
        _policy,
    ),
    AgentRow(
        "cfr",
        "cfr:K (CFR over both players' ranges each round, K opponent hands; :mM hands of its own range; :itN "
        "iterations a solve; :fixed plays the round start's solve, no re-solving)",
        _cfr,
    ),
    AgentRow("optimal", "optimal (open-hand, sees everything)", _plain(_optimal)),
    AgentRow("best", f"best (the strongest agent within 0.3 s per move, today {BEST})", _best),
)
NAMES = tuple(row.name for row in AGENTS)
AGENT_HELP = ", ".join(row.help for row in AGENTS)
_BY_NAME = {row.name: row for row in AGENTS}

__doc__ = (__doc__ or "").replace("{agents}", "\n".join(f"- {row.help}" for row in AGENTS))


def make_agent(spec: str, *, seed: int = 0, device: str = "cpu") -> HiddenAgent:
    """The agent named by ``spec`` (see the module docstring); ``seed`` seeds what it samples.
    ``SPEC@FILE``: the policy network of ``policy`` or of a search with its options (``:pl``,
    ``:pv``, ``:top``, ``:popp``) is the weights file ``FILE`` (with its card) instead of the
    shipped one, so that two generations of the network can meet in the arena."""
    base, at, weights = spec.partition("@")
    row = _BY_NAME.get(_kind(base))
    if row is None and ":" in base and not at:
        return _user_agent(base.strip(), seed)
    if row is None:
        raise PasurInputError(f"unknown agent {spec!r} (choose from {AGENT_HELP})")
    agent = row.build(base, base.strip().split(":")[1:], seed, device)
    if not at:
        return agent
    return _with_weights(agent, spec, weights.strip(), device)


def _user_agent(spec: str, seed: int) -> HiddenAgent:
    """A user's own agent, ``module:Class`` (no built-in kind is named so): the class of an
    importable module, made with ``seed=`` when its constructor takes it, else with no arguments;
    it must have the interface of :class:`pasur.hidden.agents.HiddenAgent` (``choose``)."""
    import importlib
    import inspect

    module_name, _, class_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is not None and module_name.startswith(e.name):  # the module itself, not one it imports
            raise PasurInputError(f"unknown agent {spec!r} (choose from {AGENT_HELP}, or module:Class)") from None
        raise PasurInputError(f"agent {spec!r}: importing {module_name} failed ({e})") from None
    cls = getattr(module, class_name, None)
    if not inspect.isclass(cls):
        raise PasurInputError(f"agent {spec!r}: module {module_name} has no class {class_name!r}")
    try:
        takes_seed = "seed" in inspect.signature(cls).parameters
    except (TypeError, ValueError):
        takes_seed = False
    try:
        agent = cls(seed=seed) if takes_seed else cls()
    except TypeError as e:
        raise PasurInputError(f"agent {spec!r}: cannot be made with no arguments or seed= ({e})") from None
    if not callable(getattr(agent, "choose", None)):
        raise PasurInputError(f"agent {spec!r}: {class_name} has no choose(info) (the HiddenAgent interface)")
    if not callable(getattr(agent, "choose_batch", None)):
        agent.choose_batch = lambda infos: [agent.choose(i) for i in infos]
    agent.name = spec
    return agent


def _with_weights(agent: HiddenAgent, spec: str, weights: str, device: str) -> HiddenAgent:
    """``agent`` with the policy network of the file ``weights``, named ``spec``."""
    from pathlib import Path

    from pasur.hidden.policy import PolicyAgent, PolicyModel

    slot = "model" if isinstance(agent, PolicyAgent) else "policy" if hasattr(agent, "policy") else None
    if slot is None:
        raise PasurInputError(f"agent {spec!r}: @FILE names the policy network's weights: only for policy "
                              "and a search with :pl, :pv, :top or :popp")  # fmt: skip
    if not weights or not Path(weights).is_file():
        raise PasurInputError(f"agent {spec!r}: no weights file {weights!r}")
    model = PolicyModel.load(weights, device)  # refuses, in one line, a file its card does not match
    setattr(agent, slot, model)
    agent.name = spec.strip()
    return agent
