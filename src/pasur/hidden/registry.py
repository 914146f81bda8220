"""Agents by name, for the arena and the command line.

``random``, ``greedy``, ``heuristic``; ``pimc:K`` (K worlds, round horizon), ``pimc:K:game``
(textbook PIMC, to the end of the game), ``ispimc:K`` (information-set-consistent PIMC);
``:infer`` weighs the worlds by the opponent's moves; ``:exact`` takes every hand the opponent can
hold, when it holds few cards (at most 435 hands), instead of K samples; a ``:clubs`` suffix swaps
the learned boundary value for the closed form; ``ismcts:N`` (OpenSpiel's information-set MCTS
with N simulations, needs ``open_spiel``); ``optimal`` (the open-hand optimal player, who sees
everything: the upper bound).

>>> make_agent("pimc:30").name, make_agent("heuristic").name
('pimc:30', 'heuristic')
>>> make_agent("pimc:x")
Traceback (most recent call last):
...
pasur.common.errors.PasurInputError: agent 'pimc:x': the number of worlds must be an integer from 1 to 1,000
"""

from __future__ import annotations

from pasur.common.errors import PasurInputError

AGENT_HELP = (
    "random, greedy, heuristic, pimc:K (K worlds; :game to solve to the end of the game; :infer to weigh "
    "the worlds by the opponent's moves; :exact for every opponent hand when few), ispimc:K (:infer, :exact), "
    "ismcts:N (OpenSpiel's ISMCTS, N simulations; :game for rollouts to the end), "
    "optimal (open-hand, sees everything)"
)
#: ``:exact``: every hand the opponent can hold, when it can hold at most this many (in play: its
#: last card, at most 41 hands; two cards from round 2, at most 325; three in round 4, 165),
#: instead of the K sampled worlds
EXACT_WORLDS = 435
NAMES = ("random", "greedy", "heuristic", "pimc", "ispimc", "ispimc2", "ismcts", "optimal")


def _count(spec: str, text: str | None, what: str, default: int, most: int) -> int:
    """A positive count of at most ``most`` (one decision solves all its worlds in one tensor pass:
    more than that would need gigabytes for no measurable gain)."""
    if text is None:
        return default
    if not text.isdigit() or not 1 <= int(text) <= most:
        raise PasurInputError(f"agent {spec!r}: the number of {what} must be an integer from 1 to {most:,}")
    return int(text)


def make_agent(spec: str, *, seed: int = 0, device: str = "cpu"):
    """The agent named by ``spec`` (see the module docstring); ``seed`` seeds what it samples."""
    parts = spec.strip().split(":")
    kind, args = parts[0].lower(), parts[1:]
    if kind not in NAMES:
        raise PasurInputError(f"unknown agent {spec!r} (choose from {AGENT_HELP})")
    if kind in ("random", "greedy", "heuristic", "optimal") and args:
        raise PasurInputError(f"agent {kind!r} takes no options, got {spec!r}")
    if kind == "random":
        from pasur.hidden.agents import RandomAgent

        return RandomAgent(seed)
    if kind == "greedy":
        from pasur.hidden.agents import GreedyAgent

        return GreedyAgent()
    if kind == "heuristic":
        from pasur.hidden.heuristic import HeuristicAgent

        return HeuristicAgent()
    if kind == "optimal":
        from pasur.hidden.optimal import OptimalAgent

        return OptimalAgent(device)
    if kind == "ismcts":
        if len(args) > 2 or (len(args) == 2 and args[1] != "game"):
            raise PasurInputError(f"agent {spec!r}: ismcts takes the simulations and, optionally, :game")
        from pasur.hidden.openspiel import ISMCTSAgent

        n = _count(spec, args[0] if args else None, "simulations", 200, 100_000)
        return ISMCTSAgent(n, seed=seed, rollout="game" if len(args) == 2 else "round")
    k = _count(spec, args[0] if args else None, "worlds", 50, 1_000)
    flags = set(args[1:])
    unknown = flags - {"game", "clubs", "iid", "infer", "exact"}
    if unknown:
        raise PasurInputError(f"agent {spec!r}: unknown option {sorted(unknown)[0]!r} (game, clubs, iid, infer, exact)")
    if kind.startswith("ispimc") and "game" in flags:
        raise PasurInputError(f"agent {spec!r}: {kind} solves one round at a time (no :game)")
    if {"exact", "game"} <= flags:
        raise PasurInputError(f"agent {spec!r}: :exact needs the round horizon (no :game)")
    from pasur.hidden.pimc import PIMCAgent

    boundary = None
    if "clubs" in flags:
        from pasur.hidden.boundary import ClubsBoundary

        boundary = ClubsBoundary()
    return PIMCAgent(
        k,
        horizon="game" if "game" in flags else "round",
        mode={"pimc": "minimax", "ispimc": "consistent", "ispimc2": "both"}[kind],
        boundary=boundary,
        seed=seed,
        device=device,
        name=spec.strip().lower(),
        balanced="iid" not in flags,
        infer="infer" in flags,
        exhaustive=EXACT_WORLDS if "exact" in flags else 0,
    )
