"""Cards, card text, decks and deck files: the spec's *Cards and notation* and *Deal* sections."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from pasur.common.errors import PasurInputError
from pasur.game import cards
from pasur.game.cards import (
    Deck,
    NamedDeck,
    card_points,
    cards_of,
    clubs_in,
    format_card,
    format_cards,
    is_numeric,
    mask_of,
    parse_card,
    parse_cards,
    parse_deck,
    points_in,
    random_deck,
    rank,
    read_deck_file,
    suit,
    validate_deck,
    value,
)

TESTS = Path(__file__).resolve().parent
#: the reference decks, committed beside the tests (a copy of ../shared/decks/reference-decks.json)
REFERENCE_FILE = TESTS / "data" / "reference-decks.json"

# A fixed valid deck (the reference deck "ref0" of the shared file).
REF0 = (
    "5S 9H TD QC 2D 3D 9C JC 4D 7S 8S KS 6S 8D TH TS 2C 8H JD KC AS 6C 6H 7H 3S 5D "
    "5H KH AH 5C 9S QD 3H 6D 7D KD AC AD 2S 4H 4C 4S JH QS 2H 8C TC JS 3C 7C 9D QH"
)


# ---------------------------------------------------------------------------
# Card indices, rank, suit, value, points


@pytest.mark.parametrize(
    ("text", "index"),
    [("AC", 0), ("AD", 1), ("AH", 2), ("AS", 3), ("2C", 4), ("TD", 37), ("JC", 40), ("QC", 44), ("KS", 51)],
)
def test_card_indices_match_spec(text: str, index: int) -> None:
    assert parse_card(text) == index
    assert format_card(index) == text


def test_index_is_four_rank_plus_suit_for_every_card() -> None:
    for r, rank_letter in enumerate("A23456789TJQK"):
        for s, suit_letter in enumerate("CDHS"):
            c = parse_card(rank_letter + suit_letter)
            assert c == 4 * r + s
            assert rank(c) == r
            assert suit(c) == s


@pytest.mark.parametrize(
    ("text", "expected_value"),
    [("AC", 1), ("2S", 2), ("5H", 5), ("9D", 9), ("TD", 10), ("TS", 10), ("JC", 0), ("QH", 0), ("KS", 0)],
)
def test_value_of_numeric_and_court_cards(text: str, expected_value: int) -> None:
    assert value(parse_card(text)) == expected_value


def test_numeric_cards_are_exactly_indices_0_to_39() -> None:
    assert [c for c in range(52) if is_numeric(c)] == list(range(40))
    assert all(value(c) == c // 4 + 1 for c in range(40))
    assert all(value(c) == 0 for c in range(40, 52))


def test_card_points_per_card() -> None:
    expected = {"AC": 1, "AD": 1, "AH": 1, "AS": 1, "JC": 1, "JD": 1, "JH": 1, "JS": 1, "2C": 2, "TD": 3}
    got = {format_card(c): card_points(c) for c in range(52) if card_points(c)}
    assert got == expected
    # 13 card points + 7 for the clubs bonus = the 20 points of a game without Surs.
    assert sum(card_points(c) for c in range(52)) == 13
    assert card_points(parse_card("TH")) == 0  # only the 10 of diamonds is worth 3
    assert card_points(parse_card("2D")) == 0  # only the 2 of clubs is worth 2


def test_points_in_and_clubs_in_masks() -> None:
    m = mask_of(parse_cards("AC 2C TD JH KC 5D"))
    assert points_in(m) == 1 + 2 + 3 + 1
    assert clubs_in(m) == 3  # AC 2C KC
    assert points_in(0) == 0
    assert clubs_in(cards.ALL_CARDS) == 13
    assert points_in(cards.ALL_CARDS) == 13


def test_masks_round_trip() -> None:
    cs = [51, 0, 37, 4]
    m = mask_of(cs)
    assert cards_of(m) == sorted(cs)
    assert list(cards.iter_cards(m)) == sorted(cs)
    assert cards.count(m) == 4
    assert mask_of([]) == 0
    assert cards_of(0) == []


# ---------------------------------------------------------------------------
# Text forms


@pytest.mark.parametrize(
    ("token", "index"),
    [
        ("TD", 37),
        ("10D", 37),
        ("10♦", 37),
        ("T♦", 37),
        ("td", 37),
        ("10d", 37),
        ("a♣", 0),
        ("A♣", 0),
        ("ac", 0),
        ("2♣", 4),
        ("j♣", 40),
        ("K♠", 51),
        ("ks", 51),
        ("Q♥", 46),
        ("9♦", 33),
        (" 7h ", 26),
        ("A♣\ufe0f", 0),  # emoji variation selector after the suit symbol is ignored
    ],
)
def test_parse_card_accepts_all_spellings(token: str, index: int) -> None:
    assert parse_card(token) == index


@pytest.mark.parametrize("token", ["XX", "1D", "11C", "AX", "A", "", "ZZ", "TDD", "0S", "C", "D10", "J"])
def test_parse_card_refuses_unknown_tokens_naming_them(token: str) -> None:
    with pytest.raises(PasurInputError, match=re.escape(repr(token))):
        parse_card(token)


@pytest.mark.parametrize("token", ["\u212aS", "A\u017f", "\u212a\u2660"])
def test_parse_card_case_folding_is_ascii_only(token: str) -> None:
    # U+212A KELVIN SIGN folds to 'k' and U+017F LONG S to 's' under Unicode case folding; neither is a card.
    # (Before the fix, the Kelvin sign crashed parse_card with a bare ValueError.)
    with pytest.raises(PasurInputError, match="unknown card"):
        parse_card(token)


def test_format_round_trip_all_cards_ascii_and_unicode() -> None:
    ascii_forms = set()
    unicode_forms = set()
    for c in range(52):
        a = format_card(c)
        u = format_card(c, unicode=True)
        assert parse_card(a) == c
        assert parse_card(u) == c
        assert parse_card(a.lower()) == c
        assert parse_card(u.lower()) == c
        ascii_forms.add(a)
        unicode_forms.add(u)
    assert len(ascii_forms) == len(unicode_forms) == 52


def test_format_examples() -> None:
    assert format_card(37) == "TD"
    assert format_card(37, unicode=True) == "10♦"
    assert format_card(0, unicode=True) == "A♣"
    assert format_card(51, unicode=True) == "K♠"
    assert format_cards(mask_of([51, 0, 40])) == "AC JC KS"  # a mask formats ascending
    assert format_cards([51, 0, 40]) == "KS AC JC"  # a sequence keeps its order
    assert format_cards([37, 4], unicode=True, sep=",") == "10♦,2♣"


@pytest.mark.parametrize("bad", [-1, 52, 100])
def test_format_card_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError, match=str(bad)):
        format_card(bad)


def test_parse_cards_keeps_order_and_accepts_commas() -> None:
    assert parse_cards("KS, AC 10♦\tjc") == [51, 0, 37, 40]
    assert parse_cards("  ") == []


# ---------------------------------------------------------------------------
# Decks


def test_deck_parse_format_round_trip() -> None:
    d = Deck.parse(REF0)
    assert str(d) == REF0
    assert Deck.parse(str(d)) == d
    assert Deck.parse(d.format(unicode=True)) == d
    assert parse_deck(d.format(unicode=True)) == d
    assert parse_deck(str(d).lower()) == d


def test_deck_layout_matches_spec_deal() -> None:
    d = Deck.parse(REF0)
    toks = REF0.split()
    assert [format_card(c) for c in d.pool] == toks[0:4]
    for k in range(6):
        assert [format_card(c) for c in d.hand(0, k)] == toks[4 + 8 * k : 8 + 8 * k]
        assert [format_card(c) for c in d.hand(1, k)] == toks[8 + 8 * k : 12 + 8 * k]
        assert d.hand_mask(0, k) == mask_of(d.hand(0, k))
    assert d.pool_mask == mask_of(parse_cards("5S 9H TD QC"))
    # Six rounds and the pool use every card exactly once.
    used = d.pool_mask
    for k in range(6):
        for p in (0, 1):
            assert used & d.hand_mask(p, k) == 0
            used |= d.hand_mask(p, k)
    assert used == cards.ALL_CARDS


@pytest.mark.parametrize(("player", "round_"), [(2, 0), (-1, 0), (0, 6), (1, -1)])
def test_deck_hand_out_of_range(player: int, round_: int) -> None:
    with pytest.raises(ValueError, match="no hand"):
        Deck.parse(REF0).hand(player, round_)


def _assert_valid(d: Deck) -> None:
    assert sorted(d.cards) == list(range(52))
    assert not any(rank(c) == cards.JACK for c in d.pool)


def test_random_decks_are_valid_and_never_have_a_jack_in_the_pool() -> None:
    for seed in range(1500):
        _assert_valid(Deck.from_seed(seed))


def test_random_decks_deterministic_per_seed_and_different_across_seeds() -> None:
    decks = [Deck.from_seed(s) for s in range(200)]
    assert decks == [Deck.from_seed(s) for s in range(200)]
    assert len({d.cards for d in decks}) == 200
    assert Deck.from_seed(7) == Deck.from_seed(7)
    assert Deck.from_seed(7) != Deck.from_seed(8)


def test_random_pool_is_roughly_uniform_over_non_jacks() -> None:
    n = 2400
    pool_counts: Counter[int] = Counter()
    for seed in range(n):
        pool_counts.update(Deck.from_seed(seed).pool)
    assert all(pool_counts[c] == 0 for c in range(40, 44))  # the Jacks
    expected = n * 4 / 48  # 200 per non-Jack card
    for c in [*range(40), *range(44, 52)]:
        assert 0.6 * expected < pool_counts[c] < 1.4 * expected, (format_card(c), pool_counts[c])


class _ScriptedRng:
    """Stands in for random.Random: the first shuffle puts a Jack in the pool, later ones do not."""

    def __init__(self) -> None:
        self.calls = 0

    def shuffle(self, x: list[int]) -> None:
        self.calls += 1
        if self.calls == 1:
            x[:] = [40, *[c for c in range(52) if c != 40]]  # JC first: a Jack in the pool
        else:
            x[:] = list(range(52))


def test_random_deck_reshuffles_while_a_jack_is_in_the_pool() -> None:
    rng = _ScriptedRng()
    d = random_deck(rng)  # type: ignore[arg-type]
    assert rng.calls == 2
    assert d.cards == tuple(range(52))


# ---------------------------------------------------------------------------
# Deck errors: each names the problem


def _tokens() -> list[str]:
    return REF0.split()


def test_unknown_token_names_token_and_position() -> None:
    toks = _tokens()
    toks[17] = "XX"
    with pytest.raises(PasurInputError, match=r"position 17: unknown card 'XX'"):
        parse_deck(" ".join(toks))


def test_unknown_token_in_deck_parse_names_token() -> None:
    toks = _tokens()
    toks[3] = "1Q"
    with pytest.raises(PasurInputError, match="'1Q'"):
        Deck.parse(" ".join(toks))


def test_duplicate_card_names_card_and_positions() -> None:
    toks = _tokens()
    toks[51] = toks[0]  # 5S twice, QH missing
    with pytest.raises(PasurInputError, match=r"duplicate card 5S at positions 0 and 51"):
        parse_deck(" ".join(toks))


def test_missing_card_is_named() -> None:
    toks = _tokens()
    del toks[20]  # AS
    with pytest.raises(PasurInputError, match=r"got 51; missing AS$"):
        parse_deck(" ".join(toks))


def test_many_missing_cards_are_named_up_to_eight() -> None:
    with pytest.raises(PasurInputError, match=r"got 2; missing AH AS 2C 2D 2H 2S 3C 3D and 42 more$"):
        parse_deck("AC AD")


def test_short_deck_with_duplicate_names_the_duplicate() -> None:
    toks = _tokens()[:51]
    toks[50] = toks[0]
    with pytest.raises(PasurInputError, match=r"duplicate card 5S at positions 0 and 50"):
        parse_deck(" ".join(toks))


def test_jack_in_initial_pool_is_refused_naming_jack_and_position() -> None:
    toks = _tokens()
    j = toks.index("JC")
    toks[2], toks[j] = toks[j], toks[2]
    with pytest.raises(PasurInputError, match=r"Jack JC in the initial pool \(position 2\)"):
        parse_deck(" ".join(toks))
    with pytest.raises(PasurInputError, match="JC"):
        Deck.parse(" ".join(toks))


def test_jack_right_after_the_pool_is_fine() -> None:
    toks = _tokens()
    j = toks.index("JC")
    toks[4], toks[j] = toks[j], toks[4]
    assert parse_deck(" ".join(toks)).cards[4] == 40


@pytest.mark.parametrize("n", [0, 1, 4, 51])
def test_wrong_length_names_the_count(n: int) -> None:
    with pytest.raises(PasurInputError, match=rf"a deck has 52 cards, got {n}"):
        validate_deck(list(range(n)))


def test_too_many_tokens_is_refused_naming_the_extra_card() -> None:
    # 53 cards always repeat one; the repeat is named, with the extra position.
    with pytest.raises(PasurInputError, match=r"duplicate card AC at positions 36 and 52"):
        parse_deck(REF0 + " AC")
    with pytest.raises(PasurInputError, match=r"invalid card 52 at position 52"):
        validate_deck([*range(52), 52])


def test_validate_deck_refuses_out_of_range_cards() -> None:
    seq = list(range(52))
    seq[10] = 52
    with pytest.raises(PasurInputError, match="invalid card 52 at position 10"):
        validate_deck(seq)


def test_pasur_input_error_is_a_value_error() -> None:
    assert issubclass(PasurInputError, ValueError)


# ---------------------------------------------------------------------------
# Deck files


def test_read_plain_text_file_with_comments_and_blank_lines(tmp_path: Path) -> None:
    d1, d2 = Deck.from_seed(1), Deck.from_seed(2)
    p = tmp_path / "my.txt"
    p.write_text(
        f"# two decks\n\n{d1}\n   \n{d2.format(unicode=True)}  # the second, in Unicode\n# end\n",
        encoding="utf-8",
    )
    got = read_deck_file(p)
    assert [nd.deck for nd in got] == [d1, d2]
    assert [nd.id for nd in got] == ["my-0", "my-1"]
    assert all(nd.value is None for nd in got)


def test_read_json_list_of_strings(tmp_path: Path) -> None:
    d1, d2 = Deck.from_seed(3), Deck.from_seed(4)
    p = tmp_path / "list.json"
    p.write_text(json.dumps([str(d1), d2.format(unicode=True)]), encoding="utf-8")
    got = read_deck_file(str(p))
    assert [nd.deck for nd in got] == [d1, d2]
    assert [nd.id for nd in got] == ["list-0", "list-1"]


def test_read_json_list_of_objects_like_the_reference_file() -> None:
    p = REFERENCE_FILE  # committed: a missing file fails here
    raw = json.loads(p.read_text(encoding="utf-8"))
    got = read_deck_file(p)
    assert len(got) == len(raw) >= 3
    for nd, item in zip(got, raw, strict=True):
        assert isinstance(nd, NamedDeck)
        assert nd.id == item["id"]
        assert nd.value == item["value"]
        assert str(nd.deck) == item["deck"]
    assert got[0].id == "ref0"
    assert got[0].value == -6
    assert str(got[0].deck) == REF0


def test_read_json_object_with_decks_key(tmp_path: Path) -> None:
    p = tmp_path / "obj.json"
    p.write_text(json.dumps({"decks": [{"id": "x", "deck": REF0, "value": 3}, {"deck": REF0}]}), encoding="utf-8")
    got = read_deck_file(p)
    assert [(nd.id, nd.value) for nd in got] == [("x", 3), ("obj-1", None)]


def test_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.txt"
    with pytest.raises(PasurInputError, match=r"deck file not found: .*nope\.txt"):
        read_deck_file(p)


def test_bad_line_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.txt"
    toks = _tokens()
    toks[9] = "ZZ"
    p.write_text(f"# header\n{REF0}\n\n{' '.join(toks)}\n", encoding="utf-8")
    with pytest.raises(PasurInputError, match=re.escape(f"{p}:4: position 9: unknown card 'ZZ'")):
        read_deck_file(p)


def test_bad_json_deck_names_file_and_deck(tmp_path: Path) -> None:
    p = tmp_path / "bad.json"
    toks = _tokens()
    toks[0], toks[7] = toks[7], toks[0]  # JC into the pool
    p.write_text(json.dumps([{"id": "good", "deck": REF0}, {"id": "evil", "deck": " ".join(toks)}]), encoding="utf-8")
    with pytest.raises(PasurInputError, match=re.escape(f"{p}: deck evil: Jack JC in the initial pool (position 0)")):
        read_deck_file(p)


def test_invalid_json(tmp_path: Path) -> None:
    p = tmp_path / "broken.json"
    p.write_text('[\n "AC",\n', encoding="utf-8")
    with pytest.raises(PasurInputError, match=r"broken\.json: invalid JSON"):
        read_deck_file(p)


def test_json_entry_of_wrong_type(tmp_path: Path) -> None:
    p = tmp_path / "weird.json"
    p.write_text(json.dumps([REF0, 42]), encoding="utf-8")
    with pytest.raises(PasurInputError, match="entry 1"):
        read_deck_file(p)


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.txt"
    p.write_text("# only a comment\n\n", encoding="utf-8")
    with pytest.raises(PasurInputError, match="no decks"):
        read_deck_file(p)


def _paper_ids(deck_text: str) -> list[int]:
    """A deck as the paper's repository stores it: ids ``4 * rank + suit``, ranks A 2 .. K,
    suits C D H S (written out here from the letters, independently of ``parse_card``)."""
    return ["A23456789TJQK".index(t[0]) * 4 + "CDHS".index(t[1]) for t in deck_text.split()]


def test_the_papers_deck_tensor_is_read_in_dealing_order(tmp_path, reference_decks) -> None:
    import torch

    rows = [_paper_ids(str(nd.deck)) for nd in reference_decks]
    path = tmp_path / "decks_10000.pt"
    torch.save(torch.tensor(rows, dtype=torch.int64), path)
    decks = read_deck_file(path)
    assert [nd.id for nd in decks] == [f"decks_10000-{i}" for i in range(len(rows))]
    assert [nd.deck for nd in decks] == [nd.deck for nd in reference_decks]
    # the pool is the first four cards, then Alex's and Bob's hands of each round in turn
    first = reference_decks[0].deck.cards
    assert decks[0].deck.pool == first[:4] and decks[0].deck.hand(1, 0) == first[8:12]
    assert [nd.id for nd in cards.select_decks(deck_file=path, count=2)] == ["decks_10000-0", "decks_10000-1"]
    with pytest.raises(PasurInputError, match="holds 3 decks"):
        cards.select_decks(deck_file=path, count=4)


def test_bad_deck_tensors_are_refused_in_one_line(tmp_path) -> None:
    import pickle

    import torch

    good = _paper_ids(str(Deck.from_seed(1)))
    cases = {
        "float.pt": torch.tensor([good], dtype=torch.float32),
        "shape.pt": torch.tensor(good),
        "dup.pt": torch.tensor([[*good[:-1], good[0]]]),
        "dict.pt": {"decks": torch.tensor([good])},
    }
    for name, obj in cases.items():
        torch.save(obj, tmp_path / name)
        with pytest.raises(PasurInputError) as e:
            read_deck_file(tmp_path / name)
        assert str(e.value).startswith(str(tmp_path / name)) and "\n" not in str(e.value), name

    class Payload:
        def __reduce__(self):
            return (print, ("ran",))

    (tmp_path / "evil.pt").write_bytes(pickle.dumps(Payload(), protocol=2))
    with pytest.raises(PasurInputError, match="not a readable deck tensor"):
        read_deck_file(tmp_path / "evil.pt")
    with pytest.raises(PasurInputError, match="deck file not found"):
        read_deck_file(tmp_path / "missing.pt")
