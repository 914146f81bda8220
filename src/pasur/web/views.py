"""What a person is shown of a hand, built from their :class:`~pasur.hidden.infostate.InfoState`
alone: the page's JSON and the terminal's lines come from here, so neither can show a hidden card.

Cards are written ``"7C"`` (rank letter and suit letter; the page draws the suit symbols).
Players are told apart as ``you`` and ``ai``; ``seat`` says which of Alex and Bob you are.

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.game import HiddenGame
>>> v = hand_view(HiddenGame(Deck.from_seed(2)).observation(1))
>>> v["seat"], len(v["hand"]), v["cards_to_deal"], v["to_move"], v["players"]["ai"]["hand_size"]
('Bob', 4, 40, 'ai', 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pasur.game.cards import HAND_SIZE, N_ROUNDS, cards_of, format_card, format_cards, mask_of, parse_card
from pasur.game.rules import Action, is_sur
from pasur.game.state import FINAL_ROUND, PLAYER_NAMES
from pasur.hidden.infostate import InfoState, Move
from pasur.web.teach import move_why

if TYPE_CHECKING:
    from pasur.game.match import HandScore


def card_list(mask: int) -> list[str]:
    return [format_card(c) for c in cards_of(mask)]


def action_json(a: Action) -> dict:
    return {"card": format_card(a.card), "captured": card_list(a.captured), "text": a.describe(unicode=True)}


def legal_json(a: Action, info: InfoState) -> dict:
    """A legal move with ``why``: what it captures and why, from the pool and the round (public)."""
    return {**action_json(a), "why": move_why(a, info.pool, info.round, variant=info.variant)}


def parse_action(card: str, captured: list[str]) -> Action:
    """An action from the page's card texts; unknown or repeated cards raise ``PasurInputError``."""
    from pasur.common.errors import PasurInputError

    taken = [parse_card(c) for c in captured]
    if len(set(taken)) != len(taken):
        raise PasurInputError("a card is named twice in 'captured'")
    return Action(parse_card(card), mask_of(taken))


@dataclass(frozen=True)
class PublicMove:
    """A card played, as both players saw it: the pool before it, and whether it was a Sur."""

    move: Move
    pool_before: int
    sur: bool


def public_moves(info: InfoState) -> list[PublicMove]:
    """Every move so far with what the table showed: replayed from the initial pool (public)."""
    pool, out = info.initial_pool, []
    for mv in info.moves:
        sur = bool(mv.captured) and is_sur(mv.action, pool, mv.round, final_round=FINAL_ROUND)
        out.append(PublicMove(mv, pool, sur))
        pool = pool & ~mv.captured if mv.captured else pool | (1 << mv.card)
    return out


def cards_to_deal(info: InfoState) -> int:
    """Cards still in the dealer's hand: two hands of four for every round after this one."""
    return 2 * HAND_SIZE * (N_ROUNDS - 1 - info.round)


def _who(player: int, me: int) -> str:
    return "you" if player == me else "ai"


def hand_view(info: InfoState, score: HandScore | None = None) -> dict:
    """The hand as ``info.player`` sees it (JSON-ready). The final sweep shows as ``sweep``.
    ``score``: the hand so far under the match rules, players (you, the AI), which gives each
    player's ``points`` and ``surs_scored``; without it every Sur scores (a single hand)."""
    me, opp = info.player, 1 - info.player
    points, clubs = info.points, info.clubs
    if score is not None:
        points = (score.points[0], score.points[1]) if me == 0 else (score.points[1], score.points[0])
        scored = (
            (score.surs_scored[0], score.surs_scored[1]) if me == 0 else (score.surs_scored[1], score.surs_scored[0])
        )
    else:
        scored = info.surs
    moves = public_moves(info)
    players = {}
    for p in (me, opp):
        players[_who(p, me)] = {
            "seat": PLAYER_NAMES[p],
            "points": points[p],
            "surs": info.surs[p],
            "surs_scored": scored[p],
            "pile": card_list(info.piles[p]),
            "pile_count": info.piles[p].bit_count(),
            "clubs": clubs[p],
            "hand_size": info.hand.bit_count() if p == me else info.opponent_hand_size,
        }
    history = [
        {
            "by": _who(pm.move.player, me),
            "round": pm.move.round,
            "card": format_card(pm.move.card),
            "captured": card_list(pm.move.captured),
            "sur": pm.sur,
            "text": Action(pm.move.card, pm.move.captured).describe(unicode=True),
        }
        for pm in moves
    ]
    sweep = None
    if info.is_terminal and moves:
        last = moves[-1]
        m = last.move
        left = last.pool_before & ~m.captured if m.captured else last.pool_before | (1 << m.card)
        if left and info.last_capturer is not None:
            sweep = {"to": _who(info.last_capturer, me), "cards": card_list(left)}
    return {
        "seat": PLAYER_NAMES[me],
        "round": info.round,
        "turn": info.turn,
        "moves_played": len(info.moves),
        "stage": info.stage,
        "to_move": None if info.is_terminal else _who(info.mover, me),
        "hand": card_list(info.hand),
        "pool": card_list(info.pool),
        "players": players,
        "cards_to_deal": cards_to_deal(info),
        "last_capturer": None if info.last_capturer is None else _who(info.last_capturer, me),
        "legal": [legal_json(a, info) for a in info.legal_actions()] if info.to_move else [],
        "history": history,
        "sweep": sweep,
        "over": info.is_terminal,
    }


def describe_json(move: dict, *, unicode: bool = True) -> str:
    """An action given as the page's JSON (``card``, ``captured``), in words."""
    return Action(parse_card(move["card"]), mask_of(parse_card(c) for c in move["captured"])).describe(unicode=unicode)


def table_lines(info: InfoState, *, unicode: bool = True) -> list[str]:
    """The table as text for the terminal game: what ``info.player`` may see, nothing more."""
    v = hand_view(info)
    you, ai = v["players"]["you"], v["players"]["ai"]
    fmt = lambda m: format_cards(m, unicode=unicode) or "(empty)"  # noqa: E731
    return [
        f"[{info.stage}] round {info.round + 1} of {N_ROUNDS}, {v['cards_to_deal']} cards left to deal",
        f"  pool:       {fmt(info.pool)}",
        f"  your hand:  {fmt(info.hand)}",
        f"  the AI holds {ai['hand_size']} card{'s' if ai['hand_size'] != 1 else ''}",
        f"  you ({you['seat']}): {_score(you)}",
        f"  AI ({ai['seat']}):  {_score(ai)}",
    ]


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def _score(p: dict) -> str:
    return (
        f"{_n(p['points'], 'point')}, {_n(p['surs'], 'Sur')}, {_n(p['pile_count'], 'card')} captured "
        f"({_n(p['clubs'], 'club')})"
    )
