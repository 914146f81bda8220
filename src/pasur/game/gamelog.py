"""Game logs: a played game as a table in the spirit of the paper's Figure 1.

A :class:`GameLog` is a deck plus the actions played; every row is recomputed by
replaying them through the scalar engine, so a log can never disagree with the rules.

Columns: ``Stage`` (round.turn.player), both hands and the pool *before* the play,
the card laid, the cards captured (``SUR`` marks a Sur), then *after* the play:
clubs (``A♣ B♣``), card points (``Apt Bpt``), Surs (``As Bs``), the running
difference ``Δ`` (Alex minus Bob, clubs bonus included once clinched), the last
capturer ``L`` and who clinched the clubs ``CL``. A last ``sweep`` row shows the
final sweep of the pool to the last capturer.

>>> from pasur.game.cards import Deck
>>> from pasur.game.state import GameState
>>> deck = Deck.from_seed(4)
>>> s, actions = GameState.initial(deck), []
>>> while not s.is_terminal:
...     actions.append(s.legal_actions()[-1]); s = s.apply(actions[-1])
>>> log = GameLog.replay(deck, actions)
>>> log.final.utility() == log.rows()[-1].diff
True
>>> log.to_markdown().splitlines()[0].startswith("| Stage | Alex | Bob | Pool |")
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck, format_card, format_cards, parse_card, parse_cards
from pasur.game.rules import Action, is_sur
from pasur.game.state import GameState, IllegalActionError

_WHO = {None: "-", 0: "A", 1: "B"}
HEADERS = ("Stage", "Alex", "Bob", "Pool", "Lay", "Pick", "A♣", "B♣", "Apt", "Bpt", "As", "Bs", "Δ", "L", "CL")
#: what each column holds, printed under the tables
LEGEND = (
    "Stage: round.turn.player (player 0 Alex, 1 Bob); Alex, Bob, Pool: before the play; "
    "Lay: the card played; Pick: the cards it takes (SUR: a Sur). After the play: "
    "A♣ B♣ clubs taken; Apt Bpt card points; As Bs Surs; Δ Alex minus Bob so far (clubs bonus once clinched); "
    "L last to capture; CL who clinched the clubs bonus (A, B, - nobody yet)."
)


@dataclass(frozen=True, slots=True)
class LogRow:
    stage: str
    hands: tuple[int, int]
    pool: int
    card: int | None
    captured: int
    sur: bool
    clubs: tuple[int, int]
    card_points: tuple[int, int]
    surs: tuple[int, int]
    diff: int
    last_capturer: int | None
    clubs_winner: int | None

    def cells(self, *, unicode: bool = True) -> list[str]:
        fmt = lambda m: format_cards(m, unicode=unicode)  # noqa: E731
        pick = fmt(self.captured) + (" SUR" if self.sur else "")
        return [
            self.stage,
            fmt(self.hands[0]),
            fmt(self.hands[1]),
            fmt(self.pool),
            "" if self.card is None else format_card(self.card, unicode=unicode),
            pick.strip(),
            str(self.clubs[0]),
            str(self.clubs[1]),
            str(self.card_points[0]),
            str(self.card_points[1]),
            str(self.surs[0]),
            str(self.surs[1]),
            f"{self.diff:+d}" if self.diff else "0",
            _WHO[self.last_capturer],
            _WHO[self.clubs_winner],
        ]


def _row(stage: str, before: GameState, after: GameState, card: int | None, captured: int, sur: bool) -> LogRow:
    return LogRow(
        stage=stage,
        hands=before.hands,
        pool=before.pool,
        card=card,
        captured=captured,
        sur=sur,
        clubs=after.clubs,
        card_points=after.card_points,
        surs=after.surs,
        diff=after.score_diff,
        last_capturer=after.last_capturer,
        clubs_winner=after.clubs_winner,
    )


@dataclass(frozen=True)
class GameLog:
    """A deck and the actions played from its initial state (a whole or partial game)."""

    deck: Deck
    actions: tuple[Action, ...]
    start: GameState | None = None

    @classmethod
    def replay(cls, deck: Deck, actions: Sequence[Action], start: GameState | None = None) -> GameLog:
        """Check every action against the rules while building the log."""
        s = start or GameState.initial(deck)
        for i, a in enumerate(actions):
            try:
                s = s.apply(a)
            except IllegalActionError as e:
                raise PasurInputError(f"action {i}: {e}") from None
        return cls(deck, tuple(actions), start)

    def states(self) -> list[GameState]:
        """The state before each action, then the final state."""
        s = self.start or GameState.initial(self.deck)
        out = [s]
        for a in self.actions:
            s = s.apply(a, check=False)
            out.append(s)
        return out

    @property
    def final(self) -> GameState:
        return self.states()[-1]

    def rows(self) -> list[LogRow]:
        states = self.states()
        final_round = self.deck.variant.final_round
        rows = []
        for before, a, after in zip(states, self.actions, states[1:], strict=False):
            sur = is_sur(a, before.pool, before.round, final_round=final_round)
            if before.round == final_round and after.is_terminal:
                # Show the last play apart from the sweep that follows it.
                mid = before.play(a)
                rows.append(_row(before.stage, before, mid, a.card, a.captured, sur))
                if after.pool != mid.pool:
                    rows.append(_row("sweep", mid, after, None, mid.pool, False))
            else:
                rows.append(_row(before.stage, before, after, a.card, a.captured, sur))
        return rows

    # -- renderers ------------------------------------------------------------------
    def table(self, *, unicode: bool = True) -> list[list[str]]:
        return [r.cells(unicode=unicode) for r in self.rows()]

    def to_text(self, *, unicode: bool = True, legend: bool = True) -> str:
        """Aligned plain text for a terminal (with the column legend and the highlights)."""
        body = self.table(unicode=unicode)
        widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(HEADERS)]
        line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()  # noqa: E731
        out = [line(HEADERS), line(["-" * w for w in widths])]
        prev_round = None
        for cells in body:
            rnd = cells[0].split(".")[0]
            if prev_round is not None and rnd != prev_round and cells[0] != "sweep":
                out.append("")
            prev_round = rnd
            out.append(line(cells))
        if legend:
            out += ["", LEGEND, ""]
        out += self.highlights(unicode=unicode)
        out.append(self.summary())
        return "\n".join(out)

    def to_markdown(self, *, unicode: bool = True) -> str:
        esc = lambda c: c.replace("|", "\\|")  # noqa: E731
        out = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        out += ["| " + " | ".join(esc(c) for c in cells) + " |" for cells in self.table(unicode=unicode)]
        extra = "".join(f"- {h}\n" for h in self.highlights(unicode=unicode))
        return "\n".join(out) + "\n\n" + LEGEND + "\n\n" + extra + ("\n" if extra else "") + self.summary() + "\n"

    def highlights(self, *, unicode: bool = True) -> list[str]:
        """The plays that score beyond card points, in words: every Sur (with who made it and
        what it took), the clubs bonus (who took how many clubs, and when it was clinched), and
        the final sweep."""
        fmt = lambda m: format_cards(m, unicode=unicode)  # noqa: E731
        names = ("Alex", "Bob")
        out = []
        for row in self.rows():
            who = None if row.stage == "sweep" else int(row.stage.rsplit(".", 1)[1])
            if row.sur and who is not None:
                out.append(
                    f"Sur by {names[who]} at {row.stage}: {format_card(row.card, unicode=unicode)} takes "
                    f"{fmt(row.captured)}, clearing the pool (+{self.deck.variant.sur_points})"
                )
        rows = self.rows()
        clinched = next((r for r in rows if r.clubs_winner is not None), None)
        if clinched is not None:
            w = clinched.clubs_winner
            final = rows[-1].clubs
            out.append(
                f"Clubs bonus to {names[w]}: {final[w]} of the {self.deck.variant.n_clubs} clubs (clinched at "
                f"{clinched.stage} with {clinched.clubs[w]}) (+{self.deck.variant.clubs_bonus})"
            )
        if rows and rows[-1].stage == "sweep":
            s = rows[-1]
            out.append(
                f"Final sweep: {fmt(s.captured)} left in the pool go to {names[s.last_capturer]}, the last to capture"
            )
        return out

    def summary(self) -> str:
        f = self.final
        a, b = f.points
        if not f.is_terminal:
            return f"After {len(self.actions)} plays: Alex {a}, Bob {b} (Δ {f.score_diff:+d}), game not over."
        result = "Alex wins" if a > b else "Bob wins" if b > a else "tie"
        return f"Final score: Alex {a}, Bob {b}; utility (Alex - Bob) {a - b:+d}: {result}."

    def to_json(self) -> str:
        """Deck and actions (replayable), plus the final score, as JSON."""
        f = self.final
        return json.dumps(
            {
                "deck": str(self.deck),
                "actions": [
                    {"card": format_card(a.card), "captured": format_cards(a.captured).split()} for a in self.actions
                ],
                "points": list(f.points),
                "utility": f.score_diff if f.is_terminal else None,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> GameLog:
        try:
            data = json.loads(text)
            deck = Deck.parse(data["deck"])
            actions = [
                Action(parse_card(a["card"]), sum(1 << c for c in parse_cards(" ".join(a["captured"]))))
                for a in data["actions"]
            ]
        except (json.JSONDecodeError, KeyError, TypeError, PasurInputError) as e:
            raise PasurInputError(f"not a game log: {e}") from None
        return cls.replay(deck, actions)
