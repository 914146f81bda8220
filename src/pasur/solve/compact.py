"""Compact-mode rounds built on *card states*: the fast path of :mod:`pasur.solve.tree`.

A compact node is (card state, score): the card state is both hands and the pool (and, in a
forest, the deal class); the score is the clubs as far as the bonus is concerned and the last
capturer, packed in 8 bits as ``clubs_a << 5 | clubs_b << 2 | last``. A layer has about ten
times fewer card states than nodes, so the work that needs sorting runs on card states: legal
actions per distinct (mover's hand, pool), and the children of every (card state, action)
pair, deduplicated by ``unique``. An edge's child is then (child card state, child score), a
dense integer below (card states x scores present): nodes are deduplicated by marking those
integers and a cumulative sum, without sorting the edges. Nodes come out sorted by (card
state, score), which is the order of the older node-by-node merge, so trees are unchanged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import torch

from pasur.game.variants import STANDARD, Variant
from pasur.solve.actions import card_points_of, unique_row_actions
from pasur.solve.card_codes import initial_cmp, update_cmp
from pasur.solve.gametree import GameTree, GTLayer, RoundTree, final_value
from pasur.solve.ops import first_occurrence, gather, inverse_unique, popcount

#: bit of the hands' local encoding in a card state's key (above the 52 card bits)
LOCAL_SHIFT = 52
#: clubs one action can take at most (13 clubs in all), for the score table
MAX_CLUBS = 14


@dataclass
class CardStates:
    """Distinct card states of a layer, sorted by (world, key); ``key`` = pool | local hands."""

    key: torch.Tensor  # int64 [C]
    hands: list[torch.Tensor]  # [2] x int64 [C] masks
    pool: torch.Tensor  # int64 [C]
    world: torch.Tensor | None  # int64 [C] deal class (forests), or None

    @property
    def n(self) -> int:
        return int(self.key.shape[0])


@dataclass
class Nodes:
    """Compact nodes of a layer: card state id and packed score; ``cmp``: t_cmp of one history."""

    cs: torch.Tensor  # int64 [N]
    score: torch.Tensor  # int64 [N]
    cmp: torch.Tensor | None = None

    @property
    def n(self) -> int:
        return int(self.cs.shape[0])


def pack_score(ca: torch.Tensor, cb: torch.Tensor, last: torch.Tensor) -> torch.Tensor:
    return (ca << 5) | (cb << 2) | last


def unpack_score(s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (s >> 5) & 7, (s >> 2) & 7, s & 3


@lru_cache(maxsize=16)
def _score_table(player: int, need: int) -> torch.Tensor:
    """[256, MAX_CLUBS, 2]: the packed score after ``player`` takes k clubs, with or without a
    capture (a capture makes the player the last capturer); clubs normalized once clinched
    (``need`` clubs: the variant's ``clubs_for_bonus``, at most 7 for the 3 bits of the packing)."""
    s = torch.arange(256).view(256, 1, 1)
    k = torch.arange(MAX_CLUBS).view(1, MAX_CLUBS, 1)
    cap = torch.arange(2).view(1, 1, 2)
    ca, cb, last = unpack_score(s)
    ca, cb = (ca + k, cb) if player == 0 else (ca, cb + k)
    a_won, b_won = ca >= need, cb >= need
    ca, cb = (
        torch.where(a_won, need, torch.where(b_won, 0, ca)),
        torch.where(b_won, need, torch.where(a_won, 0, cb)),
    )
    last = torch.where(cap == 1, player + 1, last)
    shape = (256, MAX_CLUBS, 2)
    return pack_score(ca.expand(shape), cb.expand(shape), last.expand(shape))


def card_states(hands, pool, world, local_pos) -> tuple[CardStates, torch.Tensor]:
    """Distinct card states of rows (hands, pool, world) and each row's card state id.
    ``local_pos(player, world)``: per card, its bit in the hands' local encoding."""
    key = pool | (_local(hands, world, local_pos) << LOCAL_SHIFT)
    ukey, inv = _unique_key(key, world)
    first = first_occurrence(inv, ukey.shape[0])
    return _take(key, hands, pool, world, first), inv


def _local(hands, world, local_pos) -> torch.Tensor:
    """Both hands as bits of the players' dealt lists (8 bits)."""
    out = torch.zeros_like(hands[0])
    for p in range(2):
        cards, pos = local_pos(p, world)  # the dealt cards, and each one's bit per row (or scalar)
        for c, b in zip(cards, pos, strict=True):
            out |= ((hands[p] >> c) & 1) << b
    return out


def _unique_key(key: torch.Tensor, world: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    if world is None:
        return torch.unique(key, return_inverse=True)
    _, kid = torch.unique(key, return_inverse=True)
    return torch.unique(world * (int(kid.max()) + 1 if kid.numel() else 1) + kid, return_inverse=True)


def _take(key, hands, pool, world, idx) -> CardStates:
    return CardStates(key[idx], [h[idx] for h in hands], pool[idx], None if world is None else world[idx])


@dataclass
class Layer:
    """What one compact layer leaves to the tree: edges and the next layer."""

    parent: torch.Tensor  # int32 [E]
    child: torch.Tensor  # int32 [E]
    action: torch.Tensor  # int32 [E]: the edge's (card state, action) pair
    table: tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # per pair: card int8, captured int64, reward int8
    cards: CardStates
    nodes: Nodes


def expand_layer(builder, r: int, t: int, deals, cards: CardStates, nodes: Nodes, inp_mask: int, cmp_info) -> Layer:
    """The edges out of one compact layer (turn ``t`` of round ``r``) and the merged next layer."""
    dev = cards.key.device
    p, variant = t & 1, builder.variant
    end = t + 1 == variant.turns_per_round
    dealt = deals.dealt[r]
    la, inv = unique_row_actions(cards.hands[p], cards.pool, dealt[p], r, inp_mask, variant=variant)
    # (card state, action) pairs, grouped by card state, actions in (card, captured) order
    brf_c = la.brf[inv]
    n_pairs = int(brf_c.sum())
    pair_act = inverse_unique(la.brf, inv)
    pair_cs = torch.arange(cards.n, device=dev).repeat_interleave(brf_c, output_size=n_pairs)
    card = la.card[pair_act]
    captured = la.captured[pair_act]
    is_cap = captured != 0
    bit = torch.ones_like(card) << card
    world = None if cards.world is None else cards.world[pair_cs]
    # the child's key: the played card leaves the hand (its local bit) and either joins the pool
    # or takes ``captured`` from it: both flips of bits that are set / clear in the parent
    if end:  # hands are empty: the key is the pool (and the next round's deal class)
        key = torch.where(is_cap, cards.pool[pair_cs] & ~captured, cards.pool[pair_cs] | bit)
        if world is not None:
            world = deals.nxt[r][world]
    else:
        local_bit = deals.local_bit_of(r, p, card, world) + LOCAL_SHIFT
        key = cards.key[pair_cs] ^ ((torch.ones_like(card) << local_bit) | torch.where(is_cap, captured, bit))
    ukey, pair_child = _unique_key(key, world)
    first = first_occurrence(pair_child, ukey.shape[0])
    src, fbit, fcap, fis = pair_cs[first], bit[first], captured[first], is_cap[first]
    hands = [h[src] for h in cards.hands]
    hands[p] &= ~fbit
    fpool = cards.pool[src]
    new_cards = CardStates(
        key[first],
        hands,
        torch.where(fis, fpool & ~fcap, fpool | fbit),
        None if world is None else world[first],
    )

    # edges: every node of a card state has that card state's pairs, in order
    deg = gather(brf_c, nodes.cs)
    n_edges = int(deg.sum())
    builder.guard.check(r, t + 1, n_edges, n_edges, "compact", len(cmp_info[0]) if cmp_info else 0, builder.history)
    parent = torch.arange(nodes.n, dtype=torch.int32, device=dev).repeat_interleave(deg, output_size=n_edges)
    base = torch.cumsum(brf_c, 0) - brf_c  # first pair of each card state
    node_base = (gather(base, nodes.cs) - (torch.cumsum(deg, 0) - deg)).to(torch.int32)
    pair = torch.arange(n_edges, dtype=torch.int32, device=dev).add_(gather(node_base, parent))

    # child scores: a small table over (parent score present, clubs taken and capture)
    pscores, prank = _small_unique(nodes.score, 256)
    kind = la.clubs[pair_act] * 2 + is_cap.long()  # per pair
    kinds, kind_id = _small_unique(kind, 2 * MAX_CLUBS)
    table = _score_table(p, variant.clubs_for_bonus).to(dev).view(256, -1)[pscores][:, kinds]  # [scores, kinds]
    cvals, crank = torch.unique(table.flatten(), return_inverse=True)
    n_s = int(cvals.shape[0])
    # child key = child card state x scores + child score rank, as (per pair) + (per node) + table
    child_key = gather(kind_id.to(torch.int32), pair).add_(gather((prank * kinds.shape[0]).to(torch.int32), parent))
    child_key = gather(crank.to(torch.int32), child_key).add_(gather((pair_child * n_s).to(torch.int32), pair))
    # nodes: the keys present, in order (a mark per key, no sort of the edges)
    mark = torch.zeros(new_cards.n * n_s, dtype=torch.bool, device=dev)
    mark.index_put_((child_key,), torch.ones((), dtype=torch.bool, device=dev))
    slots = torch.nonzero(mark).squeeze(1)
    del mark
    ids = torch.empty(new_cards.n * n_s, dtype=torch.int32, device=dev)
    ids.index_put_((slots,), torch.arange(slots.shape[0], dtype=torch.int32, device=dev))
    child = gather(ids, child_key)
    del ids, child_key
    new_nodes = Nodes(slots // n_s, cvals[slots % n_s])
    if cmp_info is not None:  # t_cmp of each new node: that of its first edge's history
        inp_t, pos = cmp_info
        rep = first_occurrence(child.long(), new_nodes.n)
        rp = pair[rep].long()
        cmp = nodes.cmp[parent[rep].long()]
        cap_rows = ((captured[rp].unsqueeze(1) >> inp_t) & 1).to(torch.int8)
        new_nodes.cmp = update_cmp(cmp, pos[card[rp]], cap_rows, is_cap[rp], p, t // 2)
    sign = 1 - 2 * p
    table = (card.to(torch.int8), captured, (sign * la.points[pair_act]).to(torch.int8))
    return Layer(parent, child, pair, table, new_cards, new_nodes)


def _small_unique(x: torch.Tensor, bound: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``torch.unique(x, return_inverse=True)`` for values below a small ``bound``, without sorting."""
    present = torch.bincount(x, minlength=bound) > 0
    rank = torch.cumsum(present, 0) - 1
    return torch.nonzero(present).squeeze(1), gather(rank, x)


def final_values(cards: CardStates, nodes: Nodes, variant: Variant = STANDARD) -> torch.Tensor:
    """Future value of the last round's terminal nodes: the sweep to the last capturer and the
    clubs bonus."""
    pool = cards.pool[nodes.cs]
    ca, cb, last = unpack_score(nodes.score)
    sweep_clubs, sweep_points = popcount(pool & variant.club_mask), card_points_of(pool, variant=variant)
    return final_value(ca, cb, last, sweep_clubs, sweep_points, variant=variant)


# -- rounds ------------------------------------------------------------------------------------


def build_compact(builder, starts, deals, frontier, t0: float):
    """The compact tree (or forest) of ``starts``, whose first layer is ``frontier`` (the starts'
    hands, pool, normalized clubs and last capturer, one node each: roots are never merged)."""
    first = starts[0]
    cards, cs = card_states(frontier.hands, frontier.pool, frontier.world, deals.local_pos_fn(first.round))
    nodes = Nodes(cs, pack_score(frontier.clubs[0], frontier.clubs[1], frontier.last))
    rounds = []
    turn = first.turn
    for r in range(first.round, builder.variant.deals):
        if r > first.round:  # deal: the card states keep their order (hands are all dealt cards)
            cards.hands = deals.hands_of(r, cards.pool, cards.world)
            cards.key = cards.pool | (_local(cards.hands, cards.world, deals.local_pos_fn(r)) << LOCAL_SHIFT)
        rt, cards, nodes = _round(builder, r, turn, deals, cards, nodes)
        rounds.append(rt)
        turn = 0
    tree = GameTree(builder.mode, builder.device, first, rounds, starts=starts)
    tree.seconds = time.perf_counter() - t0
    return tree


def _round(builder, r: int, start_turn: int, deals, cards: CardStates, nodes: Nodes):
    """One compact round from its roots: layers of edges, then the link or the terminal values."""
    t_start = time.perf_counter()
    dev = builder.device
    inp_mask = 0
    for x in torch.unique(cards.pool).tolist():
        inp_mask |= x
    for p in range(2):
        for c in deals.dealt[r][p]:
            inp_mask |= 1 << c
    inp = [c for c in range(52) if (inp_mask >> c) & 1]
    variant = builder.variant
    rt = RoundTree(round=r, start_turn=start_turn, mode="compact", inp=inp, end_turn=variant.turns_per_round)
    inp_t = torch.tensor(inp, dtype=torch.int64, device=dev)
    pos = torch.full((52,), -1, dtype=torch.int64, device=dev)
    pos[inp_t] = torch.arange(len(inp), device=dev)
    rt.root_pools = cards.pool[nodes.cs]
    rt.root_hands = [h[nodes.cs] if cards.world is not None else h[:1] for h in cards.hands]
    cmp_info = None
    if builder.history:
        nodes.cmp = initial_cmp([h[nodes.cs] for h in cards.hands], rt.root_pools, inp_t)
        cmp_info = (inp_t, pos)

    def layer_of(nodes: Nodes):
        layer = GTLayer(n=nodes.n)
        if builder.history:
            layer.cmp = nodes.cmp
            layer.node_scores = torch.stack(unpack_score(nodes.score), 1).to(torch.int8)
        return layer

    for t in rt.play_turns:
        layer = rt.gt[t] = layer_of(nodes)
        out = expand_layer(builder, r, t, deals, cards, nodes, inp_mask, cmp_info)
        layer.parent, layer.child, layer.action, layer.table = out.parent, out.child, out.action, out.table
        cards, nodes = out.cards, out.nodes
        if builder.progress is not None:
            builder.progress(r, t + 1, nodes.n)
    rt.gt[rt.end_turn] = layer_of(nodes)
    if r == variant.final_round:
        rt.terminal_value = final_values(cards, nodes, variant)
    else:
        rt.link = torch.arange(nodes.n, dtype=torch.int32, device=dev)
    rt.seconds = time.perf_counter() - t_start
    return rt, cards, nodes
