// Games against the AI without the server: the page's API calls for the AI game (app.js's api())
// answered in the browser, in the server's JSON, by rules.js and agents.js. Used when the server
// cannot be reached, or when the player chooses it; its games are kept in localStorage ("kept on
// the device"). Also registers the service worker (/sw.js) that keeps the page's files for offline.
"use strict";

const Offline = (() => {
  const R = PasurRules;
  const A = PasurAgents;
  const KEY = "pasur-offline-games";
  const CHOICE_KEY = "pasur-offline";
  const LEVELS = ["heuristic", "network"];
  const MAX_GAMES = 50; // the oldest are dropped first: storage stays bounded
  const SEATS = ["Alex", "Bob"];
  let on = localStorage.getItem(CHOICE_KEY) === "1";
  let net = null;

  function fail(status, message) {
    const e = new Error(message);
    e.status = status;
    return e;
  }

  // -- the games on this device -------------------------------------------------------------------
  function games() {
    try {
      return JSON.parse(localStorage.getItem(KEY) || "{}");
    } catch (e) {
      return {};
    }
  }
  function save(g) {
    const all = games();
    g.updated = Date.now();
    all[g.id] = g;
    const ids = Object.keys(all).sort((a, b) => all[a].updated - all[b].updated);
    while (ids.length > MAX_GAMES) delete all[ids.shift()];
    localStorage.setItem(KEY, JSON.stringify(all));
  }
  function load(id) {
    const g = games()[id];
    if (!g) throw fail(404, "no such game");
    return g;
  }

  function randomSource(seed) {
    if (seed === undefined || seed === null) {
      const buf = new Uint32Array(1);
      return () => (crypto.getRandomValues(buf)[0] / 2 ** 32);
    }
    let a = Number(seed) >>> 0; // mulberry32: a seeded deal for practice and tests
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let x = Math.imul(a ^ (a >>> 15), 1 | a);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
    };
  }

  function replayHand(hand) {
    let s = R.initialState(hand.deck);
    for (const [card, captured] of hand.moves) s = R.applyAction(s, { card, captured: BigInt(captured) });
    return s;
  }

  // -- the server's JSON (views.py's hand_view, service.py's view) ---------------------------------
  const cards = (mask) => R.cardsOf(mask).map(R.formatCard);
  function describe(a) {
    const words = (c) => "A 2 3 4 5 6 7 8 9 10 J Q K".split(" ")[R.rank(c)] + "♣♦♥♠"[R.suit(c)];
    if (!a.captured) return `lay ${words(a.card)}`;
    return `${words(a.card)} takes ${R.cardsOf(a.captured).map(words).join(" ")}`;
  }
  const actionJson = (a) => ({ card: R.formatCard(a.card), captured: cards(a.captured), text: describe(a) });

  // the reasons of a legal move, for the guide (teach.py's move_why, from the card, the pool and the round)
  const COURT_RULES = { [R.JACK]: "jack", [R.QUEEN]: "queen", [R.KING]: "king" };
  function moveWhy(a, pool, round) {
    const why = { rule: "lay", options: R.capturesFor(a.card, pool).length || 1, taken: R.count(a.captured), cleared: false };
    Object.assign(why, { sur: false, sur_points: 0, no_sur: null, points: 0, clubs: 0 });
    if (!a.captured) return why;
    const r = R.rank(a.card);
    why.rule = COURT_RULES[r] || "sum";
    if (r < R.JACK) why.values = [R.value(a.card), ...R.cardsOf(a.captured).map(R.value)];
    const sur = R.isSur(a, pool, round);
    why.cleared = a.captured === pool;
    why.sur = sur;
    if (why.cleared && !sur) why.no_sur = r === R.JACK ? "jack" : "last_round";
    why.sur_points = sur ? R.SUR_POINTS : 0;
    why.points = R.immediatePoints(a, pool, round) - why.sur_points;
    why.clubs = R.clubsIn(a.captured | R.bit(a.card));
    return why;
  }

  function totalsBefore(g, upto) {
    const t = [0, 0];
    for (const h of g.hands.slice(0, upto)) if (h.result) for (const p of [0, 1]) t[p] += h.result.points[p];
    return t;
  }

  // the hand so far as the match scores it, players (you, the AI)
  function runningScore(g, s, seat) {
    const cp = R.cardPointsWithBonus(s.piles);
    return R.scoreHand(g.rules, [cp[seat], cp[1 - seat]], [s.surs[seat], s.surs[1 - seat]], totalsBefore(g, g.hands.length - 1));
  }

  function history(s, me) {
    let pool = R.maskOf(s.deck.slice(0, 4));
    return s.moves.map((m) => {
      const a = { card: m.card, captured: m.captured };
      const sur = Boolean(m.captured) && R.isSur(a, pool, m.round);
      const entry = { by: m.player === me ? "you" : "ai", round: m.round, card: R.formatCard(m.card), captured: cards(m.captured), sur, text: describe(a), pool };
      pool = m.captured ? pool & ~m.captured : pool | R.bit(m.card);
      entry.left = pool;
      return entry;
    });
  }

  function handView(g, s, me) {
    const info = R.observe(s, me);
    const score = runningScore(g, s, me);
    const hist = history(s, me);
    const players = {};
    const clubs = R.clubsOf(s.piles);
    for (const p of [me, 1 - me]) {
      const i = p === me ? 0 : 1;
      players[p === me ? "you" : "ai"] = {
        seat: SEATS[p], points: score.points[i], surs: s.surs[p], surs_scored: score.surs_scored[i], pile: cards(s.piles[p]),
        pile_count: R.count(s.piles[p]), clubs: clubs[p], hand_size: p === me ? R.count(s.hands[me]) : info.opponentHandSize,
      };
    }
    let sweep = null;
    const last = hist.at(-1);
    if (info.terminal && last && last.left && s.last !== null) sweep = { to: s.last === me ? "you" : "ai", cards: cards(last.left) };
    const who = (p) => (p === me ? "you" : "ai");
    return {
      seat: SEATS[me], round: s.round, turn: s.turn, moves_played: s.moves.length,
      stage: info.terminal ? "end" : `${s.round}.${s.turn >> 1}.${R.mover(s)}`,
      to_move: info.terminal ? null : who(R.mover(s)), hand: cards(s.hands[me]), pool: cards(s.pool), players,
      cards_to_deal: 2 * R.HAND_SIZE * (R.N_ROUNDS - 1 - s.round), last_capturer: s.last === null ? null : who(s.last),
      legal: info.toMove ? R.legalActions(info.hand, info.pool).map((a) => ({ ...actionJson(a), why: moveWhy(a, s.pool, s.round) })) : [],
      history: hist.map(({ pool, left, ...h }) => h), sweep, over: info.terminal,
    };
  }

  function view(g, s) {
    const hand = g.hands.at(-1);
    const done = g.hands.filter((h) => h.result).map((h) => h.result);
    const totals = totalsBefore(g, g.hands.length);
    const over = R.matchOver(g.rules.target, done.length, totals);
    const winner = over && totals[0] !== totals[1] ? (totals[0] > totals[1] ? "you" : "ai") : null;
    return {
      id: g.id, level: g.level, rules: g.rules, status: g.status, hand_number: g.hands.length, offline: true,
      match: { totals: { you: totals[0], ai: totals[1] }, target: g.rules.target, hands: done, over, winner },
      result: hand.result, hand: handView(g, s || replayHand(hand), hand.seat),
    };
  }

  // -- play ---------------------------------------------------------------------------------------
  async function network() {
    if (!net) {
      const res = await fetch("/static/offline/policy-weights.json");
      net = A.loadNetwork(await res.json());
    }
    return net;
  }

  async function choose(level, s) {
    const info = R.observe(s, R.mover(s));
    if (level === "network") {
      const legal = R.legalActions(info.hand, info.pool);
      return legal.length === 1 ? legal[0] : A.networkChoose(await network(), info);
    }
    return A.heuristicChoose(info);
  }

  function play(g, s, action, by) {
    const n = R.applyAction(s, action);
    g.hands.at(-1).moves.push([action.card, action.captured.toString()]);
    return [n, { by, move: actionJson(action), state: handView(g, n, g.hands.at(-1).seat) }];
  }

  // the AI's moves up to the person's turn or the end of the hand; the hand scored at its end
  async function advance(g, s) {
    const hand = g.hands.at(-1);
    const steps = [];
    while (!R.isTerminal(s) && R.mover(s) !== hand.seat) {
      let step;
      [s, step] = play(g, s, await choose(g.level, s), "ai");
      steps.push(step);
    }
    if (R.isTerminal(s)) finish(g, s);
    return [s, steps];
  }

  // the last hand's result under the match rules (players: you, the AI), and the game's status
  function finish(g, s) {
    const hand = g.hands.at(-1);
    const cp = R.cardPointsWithBonus(s.piles);
    const me = hand.seat;
    const before = totalsBefore(g, g.hands.length - 1);
    const score = R.scoreHand(g.rules, [cp[me], cp[1 - me]], [s.surs[me], s.surs[1 - me]], before);
    hand.result = { ...score, totals: [before[0] + score.points[0], before[1] + score.points[1]] };
    g.status = R.matchOver(g.rules.target, g.hands.filter((h) => h.result).length, hand.result.totals) ? "over" : "hand_over";
  }

  // a game given by its hands' decks, seats and moves, scored here and shown as the server shows
  // it (for the tests: the server's games replayed and compared)
  function viewOfPlayed(g) {
    const hands = g.hands;
    g.hands = [];
    for (const h of hands) {
      g.hands.push({ ...h, result: null });
      g.status = "playing";
      const s = replayHand(h);
      if (R.isTerminal(s)) finish(g, s);
    }
    return view(g);
  }

  function deal(g) {
    const n = g.hands.length;
    const seat = n % 2 === 0 ? g.first_seat : 1 - g.first_seat;
    g.hands.push({ deck: R.randomDeck(randomSource(g.seed === null ? null : g.seed + n)), seat, moves: [], result: null });
    g.status = "playing";
    return R.initialState(g.hands.at(-1).deck);
  }

  async function create(body) {
    if (!LEVELS.includes(body.level)) throw fail(422, `unknown level '${body.level}' (choose from ${LEVELS.join(", ")})`);
    const rules = body.rules || {};
    const g = {
      id: "offline-" + Date.now().toString(36) + Math.random().toString(36).slice(2, 8),
      level: body.level,
      rules: { target: rules.target ?? null, sur_cancellation: Boolean(rules.sur_cancellation), fifty_point_rule: Boolean(rules.fifty_point_rule) },
      first_seat: body.seat === "bob" ? 1 : 0,
      seed: body.seed === undefined ? null : Number(body.seed),
      hands: [],
    };
    const [s, steps] = await advance(g, deal(g));
    save(g);
    return { ...view(g, s), steps, token: "offline" };
  }

  async function move(g, body) {
    if (g.status !== "playing") throw fail(409, "the hand is over: start the next hand or a new game");
    let s = replayHand(g.hands.at(-1));
    if (body.moves_played !== undefined && body.moves_played !== s.moves.length) {
      throw fail(409, `this hand has ${s.moves.length} moves, not ${body.moves_played}: reload the game`);
    }
    const taken = (body.captured || []).map(R.parseCard);
    const action = { card: R.parseCard(body.card), captured: R.maskOf(taken) };
    if (!R.stateLegal(s).some((a) => a.card === action.card && a.captured === action.captured)) throw fail(409, "illegal move");
    let step;
    [s, step] = play(g, s, action, "you");
    let more;
    [s, more] = await advance(g, s);
    save(g);
    return { ...view(g, s), steps: [step, ...more] };
  }

  function hint(g) {
    const s = replayHand(g.hands.at(-1));
    if (g.status !== "playing" || R.mover(s) !== g.hands.at(-1).seat) throw fail(409, "a hint is given when it is your turn");
    const values = A.heuristicValues(R.observe(s, R.mover(s)));
    const best = Math.max(...values.map(([, v]) => v));
    const moves = values
      .map(([a, v]) => ({ ...actionJson(a), value: Math.round(v * 100) / 100, best: v === best }))
      .sort((x, y) => y.value - x.value);
    return { level: "heuristic", agent: "heuristic", moves };
  }

  async function next(g) {
    if (g.status !== "hand_over") throw fail(409, "the next hand is dealt when a hand of an unfinished match is over");
    const [s, steps] = await advance(g, deal(g));
    save(g);
    return { ...view(g, s), steps };
  }

  // -- the API, as app.js calls it ----------------------------------------------------------------
  const GAME = /^\/api\/games\/(offline-[a-z0-9]+)(?:\/(moves|hint|next|replay))?(?:\?.*)?$/;

  // whether this request is answered here rather than by the server
  function handles(method, path) {
    return GAME.test(path) || (on && (path === "/api/levels" || (method === "POST" && path === "/api/games")));
  }

  // a request the server could not be reached for: the AI game goes on here (true), or not
  function fallback(method, path) {
    if (path !== "/api/levels" && !(method === "POST" && path === "/api/games")) return false;
    set(true);
    const friends = document.getElementById("friend-setup"); // a table for two needs the server
    if (friends) friends.hidden = true;
    return true;
  }

  async function api(method, path, body) {
    if (path === "/api/levels") return { levels: LEVELS, default: "heuristic", hint: "heuristic", margins: {}, presets: {}, offline: true };
    if (method === "POST" && path === "/api/games") return create(body || {});
    const [, id, what] = GAME.exec(path);
    const g = load(id);
    if (!what && method === "GET") return view(g);
    if (what === "moves" && method === "POST") return move(g, body || {});
    if (what === "hint" && method === "GET") return hint(g);
    if (what === "next" && method === "POST") return next(g);
    if (what === "replay") throw fail(409, "the replay needs the server: it opens when you play online");
    throw fail(404, "no such game");
  }

  function set(value) {
    on = value;
    localStorage.setItem(CHOICE_KEY, on ? "1" : "0");
    const box = document.getElementById("offline-mode");
    if (box) box.checked = on;
    const note = document.getElementById("offline-note");
    if (note) note.hidden = !on;
  }

  function setup() {
    set(on);
    const box = document.getElementById("offline-mode");
    if (box) {
      box.addEventListener("change", async () => {
        set(box.checked);
        await loadLevels(); // app.js: the levels of the server, or of this device
      });
    }
    if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
  }

  return { handles, fallback, api, setup, active: () => on, games, viewOfPlayed };
})();

if (typeof window !== "undefined" && window.addEventListener) window.addEventListener("DOMContentLoaded", () => Offline.setup());
