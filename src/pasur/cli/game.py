"""``pasur deal``, ``show`` and ``play``: decks, deals and single games between agents."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pasur.cli import app
from pasur.cli.common import (
    DECK,
    VARIANT_DECK,
    AsciiOpt,
    DeckChoice,
    JsonOpt,
    SampleSeedOpt,
    VariantOpt,
    check_variant,
    command,
    err,
    given,
    note,
)
from pasur.common.errors import PasurInputError
from pasur.game.cards import JACK_MASK, clubs_in, format_cards, seed_decks
from pasur.game.state import GameState
from pasur.play.agents import ExactAgent, play_game
from pasur.web.level_card import margins_help
from pasur.web.levels import DEFAULT_LEVEL, LEVELS
from pasur.web.prompt import AGENT_NAMES, GameAborted, make_agent


@command(app, uses_torch=False)
def deal(
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="The deck seed (default: a random one).")] = None,
    decks: Annotated[int, typer.Option("--decks", min=1, max=10_000_000, help="How many decks: seeds S, S+1, ...")] = 1,
    unicode: Annotated[bool, typer.Option("--unicode", help="Cards as '10♦' instead of 'TD'.")] = False,
    variant: VariantOpt = "standard",
    as_json: JsonOpt = False,
) -> None:
    """Print a seeded (or random) valid deck as one line of 52 cards (a --variant's cards); a deck
    file with --decks N."""
    import secrets

    from pasur.game.variants import get_variant

    rules = get_variant(check_variant(variant))
    if seed is None:
        seed = secrets.randbelow(2**31)
        note(f"seed {seed}")
    dealt = seed_decks(decks, seed, rules)
    if as_json:
        typer.echo(json.dumps([{"id": nd.id, "deck": str(nd.deck)} for nd in dealt], indent=1))
    else:
        for nd in dealt:
            typer.echo(nd.deck.format(unicode=unicode))


@command(app, uses_torch=False)
def show(deck: DeckChoice = VARIANT_DECK, ascii_cards: AsciiOpt = False) -> None:
    """Render a deck's deal: the initial pool and both hands of every round."""
    nd = deck.one("show")
    d, u = nd.deck, not ascii_cards
    typer.echo(f"deck {nd.id}: {d}" if d.variant.name == "standard" else f"deck {nd.id} (variant {deck.variant}): {d}")
    typer.echo(f"pool     {format_cards(d.pool, unicode=u) or '-'}")
    for r in range(d.variant.deals):
        alex_hand, bob_hand = format_cards(d.hand(0, r), unicode=u), format_cards(d.hand(1, r), unicode=u)
        typer.echo(f"round {r}  Alex: {alex_hand:<16} Bob: {bob_hand}")
    for p, name in enumerate(("Alex", "Bob")):
        dealt = sum(d.hand_mask(p, r) for r in range(d.variant.deals))
        typer.echo(f"{name} is dealt {clubs_in(dealt)} clubs and {(dealt & JACK_MASK).bit_count()} Jacks")


@command(app)
def play(
    alex: Annotated[
        str, typer.Option("--alex", help=f"Alex's agent: {', '.join(AGENT_NAMES)}; with --hidden, a level or human.")
    ] = "greedy",
    bob: Annotated[
        str, typer.Option("--bob", help=f"Bob's agent: {', '.join(AGENT_NAMES)}; with --hidden, a level or human.")
    ] = "random",
    hidden: Annotated[
        bool,
        typer.Option(
            "--hidden",
            help=f"The real game: a human sees only their own hand. Levels: {', '.join(LEVELS)}; "
            "the seat not named is the human (default: --alex human --bob best); '?' asks for a hint; "
            "the replay with every card open follows the game. Each level's margin over the next weaker "
            f"one, measured in the arena: {margins_help() or 'not measured'}.",
        ),
    ] = False,
    deck: DeckChoice = DECK,
    sample_seed: SampleSeedOpt = 0,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the log as a Markdown table.")] = False,
    as_json: JsonOpt = False,
    ascii_cards: AsciiOpt = False,
) -> None:
    """Play one game between two agents (`human` plays at the terminal) and print the log, the
    Surs and the clubs bonus, and the score. With --hidden, play the hidden-hand game against an
    AI level, with hints and the open-hand replay at the end."""
    if hidden:
        _play_hidden(alex, bob, deck, sample_seed, markdown, as_json, ascii_cards)
        return
    a = make_agent(alex, seed=sample_seed)
    b = make_agent(bob, seed=sample_seed + 1)
    nd = deck.one("play")
    for agent in (a, b):
        if isinstance(agent, ExactAgent):  # solve up front, with a spinner, not silently mid-game
            with err.status(f"solving deck {nd.id} for the exact agent"):
                agent.solver(nd.deck).value(GameState.initial(nd.deck))
    show_moves = None
    if "human" in (alex, bob):
        names = {0: f"Alex ({alex})", 1: f"Bob ({bob})"}

        def show_moves(state: GameState, action) -> None:
            typer.echo(f"  -> {names[state.player]}: {action.describe(unicode=not ascii_cards)}")

    try:
        log = play_game(nd.deck, a, b, on_move=show_moves)
    except GameAborted as e:
        note(f"game aborted: {e}")
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(log.to_json())
    elif markdown:
        typer.echo(log.to_markdown(unicode=not ascii_cards))
    else:
        typer.echo(f"deck {nd.id}: {nd.deck}\nAlex: {alex}, Bob: {bob}\n")
        typer.echo(log.to_text(unicode=not ascii_cards))


def _hidden_seats(alex: str, bob: str) -> tuple[str, str]:
    """The two seats of a hidden game: levels or ``human``; a seat not named is the human's."""
    named = given("alex", "bob")
    if not named:
        alex, bob = "human", DEFAULT_LEVEL
    elif named == {"bob"}:
        alex = "human" if bob != "human" else DEFAULT_LEVEL
    elif named == {"alex"}:
        bob = "human" if alex != "human" else DEFAULT_LEVEL
    choices = ", ".join((*LEVELS, "human"))
    for who, name in (("--alex", alex), ("--bob", bob)):
        if name != "human" and name not in LEVELS:
            raise PasurInputError(f"{who} {name!r}: with --hidden, choose a level or human ({choices})")
    if alex == bob == "human":
        raise PasurInputError("with --hidden, at most one human plays (the other would see their hand)")
    return alex, bob


def _play_hidden(alex, bob, deck: DeckChoice, sample_seed, markdown, as_json, ascii_cards) -> None:
    """``play --hidden``: the hidden-hand game; a human sees only their information state."""
    import random
    import sys

    from pasur.game.cards import NamedDeck, random_deck
    from pasur.game.gamelog import GameLog
    from pasur.hidden.game import play_hidden
    from pasur.web.levels import HINT_LEVEL, make_level
    from pasur.web.replay import replay_hand
    from pasur.web.terminal import TerminalPlayer, announce, replay_lines

    alex, bob = _hidden_seats(alex, bob)
    # a random deal stays secret: no seed is printed that would tell the human the cards
    nd = deck.one("play") if deck.any else NamedDeck("random", random_deck(random.SystemRandom()))
    names = (alex, bob)
    human = names.index("human") if "human" in names else None
    u = not ascii_cards
    talk = sys.stderr if as_json else sys.stdout  # with --json, stdout holds the JSON alone
    agents = [
        TerminalPlayer(lambda: make_level(HINT_LEVEL, seed=sample_seed), stdout=talk, unicode=u)
        if name == "human"
        else make_level(name, seed=sample_seed + p)
        for p, name in enumerate(names)
    ]
    if human is not None:
        typer.echo(
            f"You are {('Alex', 'Bob')[human]}, against the {names[1 - human]} AI. Alex leads every round.",
            err=as_json,
        )
    try:
        result = play_hidden(nd.deck, agents, on_move=announce(human, names, talk, unicode=u))
    except GameAborted as e:
        note(f"game aborted: {e}")
        raise typer.Exit(1) from None
    log = GameLog(nd.deck, tuple(m.action for m in result.moves))
    replay = None
    if human is not None:
        with err.status("solving the deal with every card open for the replay"):
            replay = replay_hand(nd.deck, result.moves, human)
    if as_json:
        out = json.loads(log.to_json())
        if replay is not None:
            out["replay"] = replay
        typer.echo(json.dumps(out, ensure_ascii=False))
        return
    typer.echo(f"\ndeck {nd.id}: {nd.deck}\nAlex: {alex}, Bob: {bob}\n")
    typer.echo(log.to_markdown(unicode=u) if markdown else log.to_text(unicode=u))
    if replay is not None:
        typer.echo("\n" + "\n".join(replay_lines(replay, unicode=u)))
