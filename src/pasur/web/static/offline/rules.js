// The rules engine of Pasur in the browser, for offline play: the same rules as
// src/pasur/game/rules.py, state.py and match.py (card sets are BigInt masks, card i = 4 * rank + suit),
// checked against the Python engine move for move by tests/web/test_web_offline_agents.py.
"use strict";

(function (root) {
  const N_CARDS = 52;
  const JACK = 10;
  const QUEEN = 11;
  const KING = 12;
  const HAND_SIZE = 4;
  const POOL_SIZE = 4;
  const N_ROUNDS = 6;
  const FINAL_ROUND = N_ROUNDS - 1;
  const TURNS_PER_ROUND = 2 * HAND_SIZE;
  const CAPTURE_SUM = 11;
  const SUR_POINTS = 5;
  const CLUBS_FOR_BONUS = 7;
  const CLUBS_BONUS = 7;
  const N_CLUBS = 13;
  const FIFTY = 50;
  const RANK_LETTERS = "A23456789TJQK";
  const SUIT_LETTERS = "CDHS";

  const rank = (c) => c >> 2;
  const suit = (c) => c & 3;
  const value = (c) => (rank(c) < JACK ? rank(c) + 1 : 0);
  const bit = (c) => 1n << BigInt(c);

  function maskWhere(pred) {
    let m = 0n;
    for (let c = 0; c < N_CARDS; c++) if (pred(c)) m |= bit(c);
    return m;
  }
  const NUMERIC_MASK = (1n << 40n) - 1n;
  const JACK_MASK = maskWhere((c) => rank(c) === JACK);
  const QUEEN_MASK = maskWhere((c) => rank(c) === QUEEN);
  const KING_MASK = maskWhere((c) => rank(c) === KING);
  const CLUB_MASK = maskWhere((c) => suit(c) === 0);
  const DECK_MASK = (1n << 52n) - 1n;

  // the cards of a mask, ascending
  function cardsOf(mask) {
    const out = [];
    for (let c = 0; c < N_CARDS && mask >> BigInt(c); c++) if ((mask >> BigInt(c)) & 1n) out.push(c);
    return out;
  }
  const count = (mask) => cardsOf(mask).length;
  const maskOf = (cards) => cards.reduce((m, c) => m | bit(c), 0n);

  // a card's points: 2 of clubs 2, 10 of diamonds 3, Aces and Jacks 1
  function cardPoints(c) {
    if (c === 4) return 2;
    if (c === 37) return 3;
    return rank(c) === 0 || rank(c) === JACK ? 1 : 0;
  }
  const pointsIn = (mask) => cardsOf(mask).reduce((s, c) => s + cardPoints(c), 0);
  const clubsIn = (mask) => count(mask & CLUB_MASK);

  const formatCard = (c) => RANK_LETTERS[rank(c)] + SUIT_LETTERS[suit(c)];
  function parseCard(text) {
    const m = /^(10|[A2-9TJQK])([CDHS])$/i.exec(String(text));
    if (!m) throw new Error(`not a card: ${text}`);
    const r = m[1] === "10" ? 9 : RANK_LETTERS.indexOf(m[1].toUpperCase());
    return 4 * r + SUIT_LETTERS.indexOf(m[2].toUpperCase());
  }

  // every subset (mask) of the numeric pool cards whose values sum to `target`, ascending by mask
  function numericCaptures(pool, target) {
    const cards = cardsOf(pool & NUMERIC_MASK);
    const out = [];
    const extend = (i, remaining, chosen) => {
      if (remaining === 0) {
        out.push(chosen);
        return;
      }
      for (let j = i; j < cards.length; j++) {
        const v = value(cards[j]);
        if (v <= remaining) extend(j + 1, remaining - v, chosen | bit(cards[j]));
      }
    };
    if (target > 0) extend(0, target, 0n);
    return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  // every set `card` can capture from `pool` (empty when it has no capture)
  function capturesFor(card, pool) {
    const r = rank(card);
    if (r < JACK) return numericCaptures(pool & NUMERIC_MASK, CAPTURE_SUM - value(card));
    if (r === JACK) {
      const taken = pool & (NUMERIC_MASK | JACK_MASK);
      return taken ? [taken] : [];
    }
    return cardsOf(pool & (r === QUEEN ? QUEEN_MASK : KING_MASK)).map(bit);
  }

  // the actions of one card: its captures if it has any (must capture), else laying it
  function cardActions(card, pool) {
    const caps = capturesFor(card, pool);
    return caps.length ? caps.map((s) => ({ card, captured: s })) : [{ card, captured: 0n }];
  }

  // all actions of a hand against a pool, by (card, captured)
  function legalActions(hand, pool) {
    return cardsOf(hand).flatMap((c) => cardActions(c, pool));
  }

  function isSur(action, pool, round, finalRound = FINAL_ROUND) {
    return action.captured !== 0n && action.captured === pool && rank(action.card) !== JACK && round < finalRound;
  }

  // the points an action wins at once: its cards' points and a Sur's (no clubs bonus, no sweep)
  function immediatePoints(action, pool, round, finalRound = FINAL_ROUND) {
    if (!action.captured) return 0;
    return pointsIn(action.captured | bit(action.card)) + (isSur(action, pool, round, finalRound) ? SUR_POINTS : 0);
  }

  // -- a hand: the referee's full state ----------------------------------------------------------
  function handMask(deck, player, round) {
    const start = POOL_SIZE + 2 * HAND_SIZE * round + HAND_SIZE * player;
    return maskOf(deck.slice(start, start + HAND_SIZE));
  }

  // a uniform valid deck (no Jack in the pool), from `random` (a function giving [0, 1))
  function randomDeck(random) {
    const cards = [...Array(N_CARDS).keys()];
    for (;;) {
      for (let i = cards.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [cards[i], cards[j]] = [cards[j], cards[i]];
      }
      if (!cards.slice(0, POOL_SIZE).some((c) => rank(c) === JACK)) return cards;
    }
  }

  function initialState(deck) {
    return {
      deck,
      round: 0,
      turn: 0,
      hands: [handMask(deck, 0, 0), handMask(deck, 1, 0)],
      pool: maskOf(deck.slice(0, POOL_SIZE)),
      piles: [0n, 0n],
      surs: [0, 0],
      last: null,
      moves: [], // {player, round, card, captured}
    };
  }

  const mover = (s) => s.turn & 1;
  const isTerminal = (s) => s.round === FINAL_ROUND && s.turn === TURNS_PER_ROUND;
  const stateLegal = (s) => (isTerminal(s) ? [] : legalActions(s.hands[mover(s)], s.pool));

  // the state after `action` (checked), with the next deal or the final sweep after a round's last card
  function applyAction(s, action) {
    if (!stateLegal(s).some((a) => a.card === action.card && a.captured === action.captured)) throw new Error("illegal move");
    const p = mover(s);
    const n = { ...s, hands: [...s.hands], piles: [...s.piles], surs: [...s.surs], moves: [...s.moves] };
    n.hands[p] &= ~bit(action.card);
    n.moves.push({ player: p, round: s.round, card: action.card, captured: action.captured });
    if (action.captured) {
      n.pool = s.pool & ~action.captured;
      n.piles[p] |= action.captured | bit(action.card);
      if (isSur(action, s.pool, s.round)) n.surs[p] += 1;
      n.last = p;
    } else {
      n.pool = s.pool | bit(action.card);
    }
    n.turn = s.turn + 1;
    if (n.turn < TURNS_PER_ROUND) return n;
    if (n.round < FINAL_ROUND) {
      n.round += 1;
      n.turn = 0;
      n.hands = [handMask(s.deck, 0, n.round), handMask(s.deck, 1, n.round)];
    } else if (n.last !== null && n.pool) {
      n.piles[n.last] |= n.pool;
      n.pool = 0n;
    }
    return n;
  }

  const clubsOf = (piles) => [clubsIn(piles[0]), clubsIn(piles[1])];
  function clubsWinner(piles) {
    const [a, b] = clubsOf(piles);
    return a >= CLUBS_FOR_BONUS ? 0 : b >= CLUBS_FOR_BONUS ? 1 : null;
  }
  // card points with the clubs bonus once clinched, per player
  function cardPointsWithBonus(piles) {
    const w = clubsWinner(piles);
    return [0, 1].map((p) => pointsIn(piles[p]) + (w === p ? CLUBS_BONUS : 0));
  }
  // points so far: card points, 5 per Sur, the clubs bonus once clinched
  function points(piles, surs) {
    const cp = cardPointsWithBonus(piles);
    return [0, 1].map((p) => cp[p] + SUR_POINTS * surs[p]);
  }

  // -- what a player sees: the information state the agents read ---------------------------------
  function observe(s, player) {
    const terminal = isTerminal(s);
    const opp = 1 - player;
    const seen = s.hands[player] | s.pool | s.piles[0] | s.piles[1];
    return {
      player,
      round: s.round,
      turn: s.turn,
      hand: s.hands[player],
      pool: s.pool,
      piles: s.piles,
      surs: s.surs,
      last: s.last,
      moves: s.moves,
      unseen: DECK_MASK & ~seen,
      opponentHandSize: terminal ? 0 : HAND_SIZE - Math.floor((s.turn + 1 - opp) / 2),
      toMove: !terminal && mover(s) === player,
      terminal,
    };
  }
  function infoMargin(info) {
    const [a, b] = points(info.piles, info.surs);
    return info.player === 0 ? a - b : b - a;
  }

  // -- a match's scoring (match.py's score_hand): players 0 and 1 as the caller numbers them -------
  function scoreHand(rules, cardPoints, surs, totals) {
    const pair = (f) => [f(0), f(1)];
    const barred = pair((p) => Boolean(rules.fifty_point_rule) && totals[p] >= FIFTY);
    const voided = pair((p) => (barred[p] ? surs[p] : 0));
    const live = pair((p) => surs[p] - voided[p]);
    const m = Math.min(...live);
    const cancelled = rules.sur_cancellation ? [m, m] : [0, 0];
    const scored = pair((p) => live[p] - cancelled[p]);
    return {
      card_points: [...cardPoints],
      surs: [...surs],
      surs_void: voided,
      surs_cancelled: cancelled,
      surs_scored: scored,
      points: pair((p) => cardPoints[p] + SUR_POINTS * scored[p]),
      spec_points: pair((p) => cardPoints[p] + SUR_POINTS * surs[p]),
    };
  }
  function matchOver(target, handsDone, totals) {
    if (!handsDone) return false;
    if (target === null) return true;
    return Math.max(...totals) >= target && totals[0] !== totals[1];
  }

  const api = {
    N_CARDS, JACK, QUEEN, KING, HAND_SIZE, N_ROUNDS, FINAL_ROUND, TURNS_PER_ROUND, N_CLUBS, CLUBS_FOR_BONUS,
    CLUBS_BONUS, SUR_POINTS, CLUB_MASK, DECK_MASK,
    rank, suit, value, bit, cardsOf, count, maskOf, cardPoints, pointsIn, clubsIn, formatCard, parseCard,
    numericCaptures, capturesFor, cardActions, legalActions, isSur, immediatePoints, randomDeck, initialState,
    mover, isTerminal, stateLegal, applyAction, clubsOf, clubsWinner, cardPointsWithBonus, points, observe,
    infoMargin, scoreHand, matchOver,
  };
  root.PasurRules = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof self !== "undefined" ? self : globalThis);
