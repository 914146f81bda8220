// The AI levels `heuristic` and `network` in the browser, for offline play: the same computations
// as src/pasur/hidden/heuristic.py and the features and forward pass of src/pasur/hidden/policy.py,
// on an information state of rules.js's `observe`. The network's weights come from
// /static/offline/policy-weights.json (written by `python -m pasur.web.offline_export`).
// Checked against the Python agents by tests/web/test_web_offline_agents.py.
"use strict";

(function (root) {
  const R = root.PasurRules || (typeof require !== "undefined" ? require("./rules.js") : null);
  const { JACK, QUEEN, KING, N_CLUBS, CLUB_MASK, bit, cardsOf, count, clubsIn, pointsIn, rank, suit } = R;

  // n choose k, exact for the small numbers used here
  function comb(n, k) {
    if (k < 0 || k > n) return 0;
    let out = 1;
    for (let i = 1; i <= k; i++) out = (out * (n - k + i)) / i;
    return out;
  }

  const raceCache = new Map();
  // expected clubs bonus margin (mine minus theirs) when each of `left` clubs goes either way at 1/2
  function clubRace(mine, theirs, left) {
    const key = `${mine},${theirs},${left}`;
    if (raceCache.has(key)) return raceCache.get(key);
    let out;
    if (mine >= R.CLUBS_FOR_BONUS) out = R.CLUBS_BONUS;
    else if (theirs >= R.CLUBS_FOR_BONUS) out = -R.CLUBS_BONUS;
    else {
      const needMe = R.CLUBS_FOR_BONUS - mine;
      const needThem = R.CLUBS_FOR_BONUS - theirs;
      let me = 0;
      for (let x = needMe; x <= left; x++) me += comb(left, x);
      let them = 0;
      for (let x = 0; x <= left - needThem; x++) them += comb(left, x);
      out = R.CLUBS_BONUS * (me / 2 ** left - them / 2 ** left);
    }
    raceCache.set(key, out);
    return out;
  }

  // what taking `taken` clubs adds to its taker's expected clubs margin
  function clubWorth(taken, mine, theirs) {
    if (!taken) return 0;
    const left = N_CLUBS - mine - theirs;
    return clubRace(mine + taken, theirs, left - taken) - clubRace(mine, theirs, left);
  }

  // E[max over a uniform n-subset of `values`]
  function expectedMax(values, n) {
    if (n <= 0 || !values.length) return 0;
    const v = [...values].sort((a, b) => b - a);
    const norm = comb(v.length, n);
    let total = 0;
    for (let i = 0; i < v.length; i++) {
      if (v.length - i - 1 < n - 1) break;
      total += (v[i] * comb(v.length - i - 1, n - 1)) / norm;
    }
    return total;
  }

  const afterPool = (info, a) => (a.captured ? info.pool & ~a.captured : info.pool | bit(a.card));
  const takenBy = (a) => (a.captured ? a.captured | bit(a.card) : 0n);
  const clubsOfInfo = (info) => [clubsIn(info.piles[0]), clubsIn(info.piles[1])];
  const replyCount = (info) => (info.turn + 1 < R.TURNS_PER_ROUND ? info.opponentHandSize : 0);

  // -- heuristic.py -------------------------------------------------------------------------------
  function heuristicReply(info, pool, n, clubsOpp, clubsMe) {
    if (n === 0) return 0;
    const values = [];
    for (const c of cardsOf(info.unseen)) {
      let best = 0;
      for (const cap of R.capturesFor(c, pool)) {
        const gain = R.immediatePoints({ card: c, captured: cap }, pool, info.round);
        best = Math.max(best, gain + clubWorth(clubsIn(cap | bit(c)), clubsOpp, clubsMe));
      }
      values.push(best);
    }
    return expectedMax(values, n);
  }

  // each legal action with the heuristic player's value (the expected final margin it sees)
  function heuristicValues(info) {
    const me = info.player;
    const [mine, theirs] = me === 0 ? clubsOfInfo(info) : clubsOfInfo(info).reverse();
    const nReply = replyCount(info);
    const margin = R.infoMargin(info);
    return R.legalActions(info.hand, info.pool).map((a) => {
      const pool = afterPool(info, a);
      const got = clubsIn(takenBy(a));
      let v = margin + R.immediatePoints(a, info.pool, info.round) + clubWorth(got, mine, theirs);
      v -= heuristicReply(info, pool, nReply, theirs, mine + got);
      if (rank(a.card) === JACK && count(info.hand) > 1) v -= 1;
      return [a, v];
    });
  }

  // the best action by `values` (first on ties)
  function bestOf(values) {
    let best = 0;
    for (let i = 1; i < values.length; i++) if (values[i][1] > values[best][1]) best = i;
    return values[best][0];
  }

  // -- policy.py's features ---------------------------------------------------------------------
  const f32 = Math.fround;

  // what the opponent's `card` could bank on `pool` (policy.py's _reply_value)
  function replyValue(card, pool, round, clubsOpp, clubsMe) {
    let cap = false;
    let best = 0;
    let clubs = 0;
    for (const a of R.cardActions(card, pool)) {
      if (!a.captured) continue;
      cap = true;
      best = Math.max(best, R.immediatePoints(a, pool, round));
      clubs = Math.max(clubs, clubsIn(a.captured | bit(card)));
    }
    return cap ? best + clubWorth(clubs, clubsOpp, clubsMe) : 0;
  }

  // the network's input rows of masks and dense features: each mask's 52 bits and counts per rank / 4
  function inputRow(masks, dense) {
    const row = [];
    for (const m of masks) {
      const counts = new Array(13).fill(0);
      for (let c = 0; c < 52; c++) {
        const on = Number((m >> BigInt(c)) & 1n);
        row.push(on);
        counts[rank(c)] += on;
      }
      for (const k of counts) row.push(k / 4);
    }
    for (const x of dense) row.push(f32(x));
    return row;
  }

  function stateInput(info) {
    const me = info.player;
    const opp = 1 - me;
    let oppRound = 0n;
    for (const m of info.moves) if (m.round === info.round && m.player === opp) oppRound |= bit(m.card);
    const [cMe, cOpp] = [clubsIn(info.piles[me]), clubsIn(info.piles[opp])];
    const pts = R.points(info.piles, info.surs);
    const g = new Array(39).fill(0);
    g[Math.min(info.round, 5)] = 1;
    g[6 + Math.min(info.turn, 7)] = 1;
    g[14] = me;
    g[15 + Math.min(count(info.hand), 4)] = 1;
    g[20 + Math.min(info.opponentHandSize, 4)] = 1;
    const last = info.last;
    const tail = [cMe / 7, cOpp / 7, clubRace(cMe, cOpp, N_CLUBS - cMe - cOpp) / 7, pts[me] / 20, pts[opp] / 20,
      R.infoMargin(info) / 10, info.surs[me], info.surs[opp], +(last === me), +(last === opp), +(last === null),
      pointsIn(info.pool) / 10, count(info.pool) / 10, count(info.unseen) / 52];
    tail.forEach((x, i) => (g[25 + i] = x));
    return inputRow([info.hand, info.pool, info.piles[me], info.piles[opp], info.unseen, oppRound], g);
  }

  function actionInputs(info, actions) {
    const me = info.player;
    const [cMe, cOpp] = [clubsIn(info.piles[me]), clubsIn(info.piles[1 - me])];
    const nReply = replyCount(info);
    const reps = new Map(); // rank -> [a card of it, how many unseen]
    if (nReply) for (const c of cardsOf(info.unseen)) reps.has(rank(c)) ? reps.get(rank(c))[1]++ : reps.set(rank(c), [c, 1]);
    const more = count(info.hand) > 1;
    return actions.map((a) => {
      const taken = takenBy(a);
      const pool = afterPool(info, a);
      const got = clubsIn(taken);
      const d = new Array(29).fill(0);
      const r = rank(a.card);
      d[r] = 1;
      d[13 + suit(a.card)] = 1;
      const ptsNow = R.immediatePoints(a, info.pool, info.round);
      const worth = clubWorth(got, cMe, cOpp);
      let reply = 0;
      if (nReply) {
        const vals = [];
        for (const [c, k] of reps.values()) {
          const v = replyValue(c, pool, info.round, cOpp, cMe + got);
          for (let i = 0; i < k; i++) vals.push(v);
        }
        reply = expectedMax(vals, nReply);
      }
      const tail = [+(a.captured === 0n), ptsNow / 10, +R.isSur(a, info.pool, info.round), got / 4, count(taken) / 5,
        worth / 7, reply / 10, (ptsNow + worth - reply) / 10, +(r === JACK && more), +(r === QUEEN || r === KING),
        pointsIn(pool) / 10, count(pool) / 10];
      tail.forEach((x, i) => (d[17 + i] = x));
      return inputRow([bit(a.card), a.captured, pool], d);
    });
  }

  // -- the network ----------------------------------------------------------------------------------
  function decodeFloats(b64) {
    const bytes = typeof Buffer !== "undefined" ? Buffer.from(b64, "base64") : Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    const copy = new Uint8Array(bytes.length);
    copy.set(bytes);
    return new Float32Array(copy.buffer);
  }

  // the network of an exported weights file's JSON (offline_export.py's format)
  function loadNetwork(json) {
    const layer = (name) => {
      const w = json.tensors[`${name}.weight`];
      return { out: w.shape[0], in: w.shape[1], w: decodeFloats(w.data), b: decodeFloats(json.tensors[`${name}.bias`].data) };
    };
    return {
      sha256: json.sha256,
      state: [layer("state.0"), layer("state.2")],
      action: [layer("action.0"), layer("action.2"), layer("action.4")],
    };
  }

  function linear(l, x, relu) {
    const y = new Array(l.out);
    for (let o = 0; o < l.out; o++) {
      let s = l.b[o];
      const base = o * l.in;
      for (let i = 0; i < l.in; i++) s += l.w[base + i] * x[i];
      y[o] = relu && s < 0 ? 0 : s;
    }
    return y;
  }

  // each legal action with the network's logit and value (points of the final margin, as policy.py)
  function networkOutputs(net, info) {
    const actions = R.legalActions(info.hand, info.pool);
    const h = linear(net.state[1], linear(net.state[0], stateInput(info), true), true);
    const margin = R.infoMargin(info);
    return actionInputs(info, actions).map((a, j) => {
      const x = linear(net.action[1], linear(net.action[0], h.concat(a), true), true);
      const [logit, q] = linear(net.action[2], x, false);
      return { action: actions[j], logit, value: margin + q * 10 };
    });
  }

  // the network's move: the highest logit (first on ties)
  function networkChoose(net, info) {
    const outs = networkOutputs(net, info);
    let best = 0;
    for (let i = 1; i < outs.length; i++) if (outs[i].logit > outs[best].logit) best = i;
    return outs[best].action;
  }

  const api = {
    comb, clubRace, clubWorth, expectedMax, heuristicValues, bestOf, stateInput, actionInputs, loadNetwork,
    networkOutputs, networkChoose,
    heuristicChoose: (info) => bestOf(heuristicValues(info)),
  };
  root.PasurAgents = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof self !== "undefined" ? self : globalThis);
