"""The hidden-hand game as an OpenSpiel Python game (``python_pasur``), and OpenSpiel's
information-set MCTS as an agent of the arena.

Importing this module registers the game with OpenSpiel when ``open_spiel`` (a test/optional
dependency) is installed, so ``pyspiel.load_game("python_pasur")`` works after
``import pasur.hidden.openspiel``; without it the module still imports, and
:func:`require_pyspiel` turns its absence into a one-line error where OpenSpiel is needed. The game
deals card by card (chance nodes: the pool cards, uniform over the non-Jacks left; then each
round's hand cards, uniform over the cards left), then plays with the scalar rules. A player's
information state string holds exactly our :class:`~pasur.hidden.infostate.InfoState`; its
``information_state_tensor`` and ``observation_tensor`` are both :func:`pasur.hidden.encoding.encode`
of that information state (the RL environments' observation; a summary of the moves, not their
order, so two information sets can share a tensor). Actions are the global ids of
:mod:`pasur.hidden.encoding`: ``0..51`` lay a card; then every numeric capture (played card, subset
of the 2764), a Jack's capture, a Queen's or King's capture of one card.

The game parameter ``variant`` names a row of :data:`pasur.game.variants.VARIANTS` (default
``standard``): ``pyspiel.load_game("python_pasur", {"variant": "tiny"})`` deals that variant's deck,
hands and deals, and scores by its constants.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from pasur.common.errors import PasurInputError
from pasur.game.cards import ALL_CARDS, JACK_MASK, Deck, cards_of, format_card
from pasur.game.rules import Action
from pasur.game.state import FINAL_ROUND, TURNS_PER_ROUND, GameState
from pasur.game.variants import STANDARD, Variant, get_variant
from pasur.hidden.agents import HiddenAgent
from pasur.hidden.encoding import OBS_SIZE, _action_table, action_id, action_of, encode, n_actions
from pasur.hidden.game import observe
from pasur.hidden.infostate import InfoState, Move

GAME_NAME = "python_pasur"


def require_pyspiel():
    """``pyspiel``, or a one-line error saying how to get it."""
    try:
        import pyspiel
    except ImportError:
        raise PasurInputError(
            "OpenSpiel is not installed: pip install open-spiel==2.0.2 (the test extra) for OpenSpiel agents"
        ) from None
    return pyspiel


# ---------------------------------------------------------------- action ids
# (the encoding lives in :mod:`pasur.hidden.encoding`, shared with the RL environments; the names
# stay importable from here)

# ---------------------------------------------------------------- the game


def _info_string(info: InfoState) -> str:
    moves = " ".join(f"{m.player}{format_card(m.card)}/{m.captured:x}" for m in info.moves)
    return (
        f"p{info.player} r{info.round} t{info.turn} pool0 {info.initial_pool:x} hand {info.hand:x} "
        f"pool {info.pool:x} moves {moves}"
    )


def _game_type(pyspiel):
    """What OpenSpiel is told about the game: sequential, dealt by explicit chance, hidden hands,
    zero-sum, paid at the end; information state and observation strings and tensors."""
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Pasur (hidden hands)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"variant": "standard"},
    )


def _game_info(pyspiel, variant: Variant = STANDARD):
    """The game's sizes: the action ids, the deck's cards to deal, points in [-200, 200] (the
    standard game's bound, which holds every smaller variant's)."""
    return pyspiel.GameInfo(
        num_distinct_actions=n_actions(),
        max_chance_outcomes=52,
        num_players=2,
        min_utility=-200.0,
        max_utility=200.0,
        utility_sum=0.0,
        max_game_length=variant.n_cards + 2 * variant.hand_size * variant.deals,
    )


class _StateRules:
    """The rules of an OpenSpiel state of the game, mixed into the class that subclasses
    ``pyspiel.State`` (built once OpenSpiel is imported, :func:`_register`, which sets
    ``player_ids`` to ``pyspiel.PlayerId``). It holds the dealt cards so far (deck order), the
    open-hand state once a round is dealt, and the moves."""

    player_ids = None

    def __deepcopy__(self, memo):  # OpenSpiel clones by deepcopy; the parts are immutable
        return type(self)(self.get_game(), self.dealt, self.gs, self.moves)

    @property
    def variant(self) -> Variant:
        return self.get_game().variant

    def _dealing(self) -> bool:
        if self.gs is None:
            return True
        v = self.variant
        return self.gs.turn == v.turns_per_round and self.gs.round < v.final_round

    def current_player(self):
        if self.gs is not None and self.gs.is_terminal:
            return self.player_ids.TERMINAL
        if self._dealing():
            return self.player_ids.CHANCE
        return self.gs.player

    def _legal_actions(self, player):
        return sorted(action_id(a) for a in self.gs.legal_actions())

    def chance_outcomes(self):
        v = self.variant
        left = v.deck_mask
        for c in self.dealt:
            left &= ~(1 << c)
        if len(self.dealt) < v.pool_size:
            left &= ~JACK_MASK
        cards = cards_of(left)
        return [(c, 1.0 / len(cards)) for c in cards]

    def _apply_action(self, action):
        if self._dealing():
            self.dealt.append(int(action))
            v = self.variant
            per_deal = 2 * v.hand_size
            if len(self.dealt) > v.pool_size and (len(self.dealt) - v.pool_size) % per_deal == 0:
                self._start_round()
            return
        gs = self.gs
        act = action_of(int(action), gs.pool)
        self.moves.append(Move(gs.player, gs.round, act.card, act.captured))
        gs = gs.play(act)
        if gs.turn == gs.variant.turns_per_round and gs.round == gs.variant.final_round:
            gs = gs.end_round()
        self.gs = gs

    def _start_round(self):
        """All 8 cards of a round are dealt: the open-hand state of its first turn."""
        v = self.variant
        rest = [c for c in v.cards if c not in set(self.dealt)]
        deck = Deck(tuple(self.dealt + rest), v)  # the undealt order is a placeholder, never read
        rnd = (len(self.dealt) - v.pool_size) // (2 * v.hand_size) - 1
        hands = (deck.hand_mask(0, rnd), deck.hand_mask(1, rnd))
        if self.gs is None:
            self.gs = GameState.initial(deck)
        else:
            g = self.gs
            self.gs = GameState(deck, rnd, 0, hands, g.pool, g.piles, g.surs, g.last_capturer, v)

    def _action_to_string(self, player, action):
        if player == self.player_ids.CHANCE:
            return f"deal {format_card(int(action))}"
        card, cap = _action_table()[1][int(action)]
        if cap == 0:
            return f"lay {format_card(card)}"
        return f"{format_card(card)} takes " + (
            "all it can" if cap == -1 else " ".join(format_card(c) for c in cards_of(cap))
        )

    def is_terminal(self):
        return self.gs is not None and self.gs.is_terminal

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        u = float(self.gs.utility())
        return [u, -u]

    def info(self, player: int) -> InfoState:
        return observe(self.gs, self.moves, player)

    def resample_from_infostate(self, player_id, probability_sampler):
        seed = int(probability_sampler() * 2**32)
        return state_from_info(self.get_game(), self.info(player_id), np.random.default_rng(seed))

    def __str__(self):
        return "dealing" if self.gs is None else str(self.gs)


class _Observer:
    """A player's information state as a string and as a tensor (with or without perfect recall:
    the same): :func:`pasur.hidden.encoding.encode` of its ``InfoState``, zeros while the first
    deal is still being dealt (no player has anything to see yet)."""

    def __init__(self):
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state, player):
        if state.gs is None:
            self.tensor.fill(0.0)
        else:
            encode(state.info(player), out=self.tensor)

    def string_from(self, state, player):
        if state.gs is None:
            return f"p{player} dealing {len(state.dealt)}"
        return _info_string(state.info(player))


def _register():
    """Register the game with OpenSpiel (once): its game and state classes subclass pyspiel's."""
    pyspiel = require_pyspiel()
    if GAME_NAME in pyspiel.registered_names():
        return pyspiel
    game_type, game_info = _game_type(pyspiel), _game_info(pyspiel)

    class PasurState(_StateRules, pyspiel.State):
        player_ids = pyspiel.PlayerId

        def __init__(self, game, dealt=(), gs=None, moves=()):
            super().__init__(game)
            self.dealt = list(dealt)
            self.gs: GameState | None = gs
            self.moves = list(moves)

    class PasurGame(pyspiel.Game):
        def __init__(self, params=None):
            params = {"variant": "standard", **(params or {})}
            self.variant = get_variant(str(params["variant"]))
            info = game_info if self.variant.is_standard else _game_info(pyspiel, self.variant)
            super().__init__(game_type, info, params)

        def new_initial_state(self):
            return PasurState(self)

        def make_py_observer(self, iig_obs_type=None, params=None):
            return _Observer()

    pyspiel.register_game(game_type, PasurGame)
    _register.state_class = PasurState  # type: ignore[attr-defined]
    return pyspiel


if importlib.util.find_spec("pyspiel") is not None:  # registered on import, where OpenSpiel is installed
    _register()


def load_game(variant: str = "standard"):
    """The registered OpenSpiel game of ``variant`` (registering it on first use)."""
    if variant == "standard":
        return _register().load_game(GAME_NAME)
    return _register().load_game(GAME_NAME, {"variant": get_variant(variant).name})


def state_from_info(game, info: InfoState, rng: np.random.Generator):
    """An OpenSpiel state at ``info``'s position in a world drawn uniformly among those consistent
    with it: the deals so far of that world, the moves; later deals are left to chance."""
    from pasur.hidden.worlds import sample_worlds, world_deck

    w = sample_worlds(info, 1, rng=rng)
    deck = world_deck(info, int(w.opp_hand[0]), [int(c) for c in w.undealt[0]])
    v = info.variant
    n_dealt = v.pool_size + 2 * v.hand_size * (info.round + 1)
    state = _register.state_class(game, deck.cards[:n_dealt])  # type: ignore[attr-defined]
    hands = [0, 0]
    hands[info.player], hands[1 - info.player] = info.hand, int(w.opp_hand[0])
    state.gs = GameState(
        deck, info.round, info.turn, (hands[0], hands[1]), info.pool, info.piles, info.surs, info.last_capturer, v
    )
    state.moves = list(info.moves)
    return state


class RoundRolloutEvaluator:
    """An OpenSpiel MCTS evaluator: a random rollout to the end of the current round, valued there
    by the boundary value (:mod:`pasur.hidden.boundary`; exact at the end of the game). Rollouts to
    the end of the game through OpenSpiel's Python layers cost tens of milliseconds each."""

    def __init__(self, random_state: np.random.RandomState, boundary=None) -> None:
        from pasur.hidden.boundary import default_boundary

        self.rs = random_state
        self.boundary = boundary if boundary is not None else default_boundary("cpu")

    def evaluate(self, state):
        import torch

        from pasur.solve.reference import banked_diff, club_key

        if state.is_terminal():
            return np.array(state.returns())
        if state.gs is None or state.is_chance_node():  # between rounds: nothing played yet
            gs = state.gs
        else:
            gs = state.gs
            while gs.turn < TURNS_PER_ROUND:
                acts = gs.legal_actions()
                gs = gs.play(acts[self.rs.randint(len(acts))])
        if gs.round == FINAL_ROUND:
            v = float(gs.end_round().utility())
        else:
            ca, cb = club_key(gs.clubs)
            last = 0 if gs.last_capturer is None else gs.last_capturer + 1
            remaining = ALL_CARDS & ~(gs.pool | gs.piles[0] | gs.piles[1])

            def one(x):
                return torch.tensor([x], dtype=torch.int64)

            future = float(self.boundary(gs.round, one(gs.pool), one(ca), one(cb), one(last), one(remaining))[0])
            v = banked_diff(gs) + future
        return np.array([v, -v])

    def prior(self, state):
        legal = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(legal)) for a in legal]


class ISMCTSAgent(HiddenAgent):
    """OpenSpiel's information-set MCTS (``ISMCTSBot``) with ``simulations`` per move, started from
    a world sampled from the information state (it never sees the true hidden cards; it resamples
    worlds itself, with our sampler, at every simulation). Leaves are valued by a random rollout to
    the end of the round and the boundary value (``rollout="round"``) or, OpenSpiel's default, a
    random rollout to the end of the game (``rollout="game"``)."""

    def __init__(self, simulations: int = 200, *, seed: int = 0, uct_c: float = 10.0, rollout: str = "round") -> None:
        require_pyspiel()
        if rollout not in ("round", "game"):
            raise ValueError(f"unknown rollout {rollout!r} (round or game)")
        self.simulations, self.seed, self.uct_c, self.rollout = simulations, seed, uct_c, rollout
        self.name = f"ismcts:{simulations}" + (":game" if rollout == "game" else "")
        self._rs = np.random.RandomState(seed)
        self._rng = np.random.default_rng(seed)
        self._use(STANDARD)

    def _use(self, variant: Variant) -> None:
        """The game and the bot of ``variant`` (the standard game's at first; another variant's
        when an information state of it comes: with ``rollout="game"`` only, since the round
        rollout's boundary value is the standard game's)."""
        from open_spiel.python.algorithms import ismcts, mcts

        if not variant.is_standard and self.rollout != "game":
            raise PasurInputError(f"{self.name} values rounds with the standard game's boundary value: use :game")
        self.variant = variant
        self.game = load_game(variant.name)
        if self.rollout == "game":
            evaluator = mcts.RandomRolloutEvaluator(1, self._rs)
        else:
            evaluator = RoundRolloutEvaluator(self._rs)
        self.bot = ismcts.ISMCTSBot(
            self.game,
            evaluator,
            self.uct_c,
            self.simulations,
            random_state=self._rs,
            final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
        )
        # worlds resampled at every simulation by our sampler, seeded per decision (reproducible)
        self.bot.set_resampler(lambda state, player: state_from_info(self.game, state.info(player), self._rng))

    def _search(self, info: InfoState):
        from pasur.hidden.worlds import info_seed

        if info.variant != self.variant:
            self._use(info.variant)
        self._rng = info_seed(info, self.seed)
        self._rs.seed(int(self._rng.integers(2**31)))
        state = state_from_info(self.game, info, self._rng)
        policy = self.bot.run_search(state)
        return state, policy

    def action_values(self, info: InfoState) -> list[tuple[Action, float]]:
        actions = info.legal_actions()
        if len(actions) == 1:
            return [(actions[0], float(info.margin))]
        _, _ = self._search(info)
        node = self.bot._root_node
        vals = []
        for a in actions:
            child = node.child_info.get(action_id(a))
            vals.append((a, float(child.value()) if child is not None and child.visits > 0 else float("-inf")))
        return vals

    def choose(self, info: InfoState) -> Action:
        actions = info.legal_actions()
        if len(actions) == 1:
            return actions[0]
        _, policy = self._search(info)
        best = max(policy, key=lambda ap: ap[1])[0]
        return action_of(int(best), info.pool)
