// Pasur against the AI: the page. Plain JavaScript, no build step, no outside resources.
// It shows only what the server sends, which is what this player may see; the AI's moves
// arrive as steps and are shown one at a time.
"use strict";

const STORE_KEY = "pasur-game";
const params = new URLSearchParams(location.search);
const DELAY = params.has("delay") ? Number(params.get("delay")) : 900;
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
// the words of suits, face cards, levels and seats, by the server's names
const SUIT_KEYS = { C: "suit.clubs", D: "suit.diamonds", H: "suit.hearts", S: "suit.spades" };
const RANK_KEYS = { J: "rank.jack", Q: "rank.queen", K: "rank.king", A: "rank.ace" };
const RANK_SHORT_KEYS = { J: "rank.jack_short", Q: "rank.queen_short", K: "rank.king_short", A: "rank.ace_short" };
const LEVEL_KEYS = { random: "level.random", greedy: "level.greedy", heuristic: "level.heuristic", network: "level.network", pimc: "level.pimc", best: "level.best" };
const SEAT_KEYS = { Alex: "seat.alex", Bob: "seat.bob" };
const OPP_KEYS = { short: "opp.ai_short", subject: "opp.ai_subject", object: "opp.ai_object" };

let game = null; // { id, token }
let view = null; // the last state from the server
let selected = null; // the hand card chosen
let chosen = new Set(); // pool cards chosen to take
let busy = false;

const $ = (id) => document.getElementById(id);

// a table for two people (tables.js) is on screen, rather than a game against the AI
function tableMode() {
  return typeof Tables !== "undefined" && Tables.active();
}

// the other player, in the forms the sentences need ("short": AI, "subject": The AI, "object":
// the AI): a friend at a table
function opp(form) {
  return tableMode() ? Tables.other(form) : t(OPP_KEYS[form]);
}

// a level's name in the page's language (a level the catalog does not know: its own name)
function levelName(name) {
  return LEVEL_KEYS[name] ? t(LEVEL_KEYS[name]) : name;
}

// a seat's name ("Alex", "Bob") in the page's language
function seatName(seat) {
  return SEAT_KEYS[seat] ? t(SEAT_KEYS[seat]) : seat;
}

function gamePath() {
  return tableMode() ? Tables.path() : `/api/games/${game.id}`;
}

// "1 card", "2 cards": the string `one` for 1, `other` for any other count
function plural(n, one, other) {
  return t(n === 1 ? one : other, { n });
}

// a player's Surs: those made, and those that score when the match rules cancel or void some
function sursText(p) {
  return p.surs_scored === undefined || p.surs_scored === p.surs ? num(p.surs) : t("surs.scored", { made: p.surs, scored: p.surs_scored });
}

// the end-of-hand summary: captures, the final sweep, the match
function summaryText(h, m) {
  const you = h.players.you;
  const ai = h.players.ai;
  let text = t("summary.captured", {
    you_cards: plural(you.pile_count, "count.card_one", "count.card_other"),
    you_clubs: plural(you.clubs, "count.club_one", "count.club_other"),
    opp: opp("object"),
    ai_cards: ai.pile_count,
    ai_clubs: plural(ai.clubs, "count.club_one", "count.club_other"),
  });
  if (h.sweep) {
    const n = h.sweep.cards.length;
    const who = h.sweep.to === "you" ? t("player.you_object") : opp("object");
    text += " " + (n === 1 ? t("summary.sweep_one", { who }) : t("summary.sweep_other", { n, who }));
  }
  if (m.target !== null) text += " " + t("summary.match", { you: m.totals.you, opp: opp("object"), ai: m.totals.ai, target: m.target });
  return text;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

// a card's rank as its face shows it: digits in the page's language, a letter for a face card
function rankText(card) {
  const r = card.slice(0, -1).toUpperCase();
  if (RANK_SHORT_KEYS[r]) return t(RANK_SHORT_KEYS[r]);
  return num(r === "T" ? "10" : r);
}

// a card in short ("10♦")
function cardText(card) {
  return rankText(card) + SUITS[card.slice(-1).toUpperCase()];
}

// a card by name ("10 of diamonds", "Jack of clubs"; in Persian "۱۰ خشت", "سرباز خاج")
function cardName(card) {
  const r = card.slice(0, -1).toUpperCase();
  const rank = RANK_KEYS[r] ? t(RANK_KEYS[r]) : num(r === "T" ? "10" : r);
  return t("card.name", { rank, suit: t(SUIT_KEYS[card.slice(-1).toUpperCase()]) });
}

// a move in words, from its card and the cards it takes ("lay 5♣", "5♣ takes 6♦ K♠")
function moveText(action) {
  if (!action.captured.length) return t("move.lay", { card: cardText(action.card) });
  return t("move.take", { card: cardText(action.card), cards: action.captured.map(cardText).join(t("list.sep")) });
}

// a move as the history and the messages say it, with a Sur marked
function movedText(move, sur) {
  return sur ? t("move.sur", { move: moveText(move) }) : moveText(move);
}

function cardEl(card, opts = {}) {
  const s = card.slice(-1).toUpperCase();
  const e = el("button", { type: "button", class: "card" + (s === "D" || s === "H" ? " red" : ""), "data-card": card });
  if (opts.small) e.classList.add("small");
  e.append(el("span", { class: "rank", text: rankText(card) }), el("span", { class: "suit", text: SUITS[s] }));
  e.title = cardName(card);
  if (opts.onclick) e.addEventListener("click", opts.onclick);
  else e.disabled = true;
  return e;
}

function cardRow(cards) {
  const span = el("span", { class: "cards" });
  for (const c of cards) span.append(cardEl(c, { small: true }));
  return span;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// -- the server -------------------------------------------------------------------------------
// `token`: the X-Pasur-Token to send (null: none); left out, the game's or table's
async function api(method, path, body, token) {
  const headers = { Accept: "application/json" };
  const tok = token === undefined ? game && game.token : token;
  if (tok) headers["X-Pasur-Token"] = tok;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  // a game against the AI on this device (offline/offline.js): answered in the browser
  if (typeof Offline !== "undefined" && Offline.handles(method, path)) return Offline.api(method, path, body);
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    // the server cannot be reached: the levels and a new AI game come from this device instead
    if (typeof Offline !== "undefined" && Offline.fallback(method, path)) return Offline.api(method, path, body);
    throw e;
  }
  let data = null;
  try {
    data = await res.json();
  } catch (e) {
    data = { error: res.statusText };
  }
  if (!res.ok) {
    const err = new Error(data.error || res.statusText);
    err.status = res.status;
    throw err;
  }
  return data;
}

function say(text, error = false) {
  const m = $("message");
  m.textContent = text;
  m.classList.toggle("error", error);
}

function show(section) {
  for (const id of ["setup", "table", "result", "replay"]) $(id).hidden = !section.includes(id);
  $("new-game").hidden = section.includes("setup");
}

// -- setup ------------------------------------------------------------------------------------
async function loadLevels() {
  const data = await api("GET", "/api/levels");
  const sel = $("level");
  sel.replaceChildren();
  for (const name of data.levels) sel.append(el("option", { value: name, text: levelName(name) }));
  sel.value = data.default;
  levelMargins = data.margins || {};
  showLevelMargin();
}

// what beating the chosen level means: its arena margin over the next weaker level (nothing for
// the weakest level, or one the arena has not measured)
let levelMargins = {};
function showLevelMargin() {
  const name = $("level").value;
  const m = levelMargins[name];
  const pts = (v) => signed((v > 0 ? "+" : v < 0 ? "−" : "") + dec(Math.abs(v), 2));
  $("level-margin").textContent = m
    ? t("setup.level_margin", { level: levelName(name), margin: pts(m.margin), over: levelName(m.over), lo: pts(m.ci95[0]), hi: pts(m.ci95[1]), deals: m.deals })
    : "";
}

async function startGame(event) {
  event.preventDefault();
  if (busy) return;
  const match = $("mode-match").checked;
  const rules = {
    target: match ? Number($("target").value) : null,
    sur_cancellation: $("sur-cancellation").checked,
    fifty_point_rule: match && $("fifty-rule").checked,
  };
  const body = { level: $("level").value, seat: $("seat").value, rules };
  if (params.has("seed")) body.seed = Number(params.get("seed"));
  busy = true;
  game = null;
  try {
    const data = await api("POST", "/api/games", body);
    game = { id: data.id, token: data.token };
    localStorage.setItem(STORE_KEY, JSON.stringify(game));
    rememberGame(data);
    show(["table"]);
    await playSteps(data);
  } catch (e) {
    alert(t("error.start", { error: serverText(e.message) }));
  } finally {
    busy = false;
    render();
  }
}

// -- the table --------------------------------------------------------------------------------
function playerEl(p, who) {
  const box = el("div");
  const seat = seatName(p.seat);
  const name =
    who === "you"
      ? t("player.you", { seat })
      : t("player.other", { name: tableMode() ? opp("short") : t("player.ai_level", { level: levelName(view.level) }), seat });
  box.append(el("span", { class: "name", text: name }));
  const stat = (label, value, cls) => {
    const s = el("span", { class: "stat " + cls });
    s.append(label + " ", el("b", { text: num(value) }));
    return s;
  };
  box.append(
    stat(t("stat.points"), p.points, "points"),
    stat(t("stat.surs"), sursText(p), "surs"),
    stat(t("stat.captured"), p.pile_count, "pile"),
    stat(t("stat.clubs"), p.clubs, "clubs"),
  );
  if (who === "ai") {
    const backs = el("span", { class: "cards ai-hand" });
    for (let i = 0; i < p.hand_size; i++) backs.append(el("span", { class: "card back" }));
    box.append(backs);
  }
  return box;
}

function render() {
  if (!view) return;
  const rects = cardRects(); // where the cards were, for the moves that take them away (feelAfter)
  const h = view.hand;
  const m = view.match;
  const sb = $("scoreboard");
  sb.replaceChildren();
  const item = (label, value, id) => {
    const s = el("span", id ? { id } : {});
    s.append(label + " ", el("b", { text: num(value) }));
    return s;
  };
  sb.append(
    item(t("board.round"), t("board.round_of", { round: h.round + 1, rounds: 6 }), "round"),
    item(t("board.to_deal"), h.cards_to_deal, "to-deal"),
  );
  if (!tableMode()) sb.append(item(t("board.level"), levelName(view.level)));
  else sb.append(item(t("board.hints"), t(view.hints ? "board.hints_on" : "board.hints_off"), "hints-shown")); // the same for both players
  if (m.target !== null) {
    const score = t("board.match_score", { you: m.totals.you, opp: opp("short"), ai: m.totals.ai, target: m.target });
    sb.append(item(t("board.hand"), view.hand_number), item(t("board.match"), score, "totals"));
  }
  const rules = [];
  if (view.rules.sur_cancellation) rules.push(t("board.sur_cancellation"));
  if (view.rules.fifty_point_rule) rules.push(t("board.fifty_rule"));
  if (rules.length) sb.append(el("span", { text: rules.join(t("board.rules_sep")) }));
  if (view.rated) sb.append(el("span", { id: "rated-mark", text: t("board.rated") }));

  $("ai-area").replaceChildren(playerEl(h.players.ai, "ai"));
  $("you-area").replaceChildren(playerEl(h.players.you, "you"));
  $("ai-area").classList.toggle("to-move", h.to_move === "ai");
  $("you-area").classList.toggle("to-move", h.to_move === "you");

  const myTurn = h.to_move === "you" && view.status === "playing" && !busy;
  const takeable = new Set();
  if (selected) for (const a of legalOf(selected)) for (const c of a.captured) takeable.add(c);
  const pool = $("pool");
  pool.replaceChildren();
  for (const c of h.pool) {
    const e = cardEl(c, myTurn && selected && takeable.has(c) ? { onclick: () => togglePool(c) } : {});
    if (takeable.has(c)) e.classList.add("takeable");
    if (chosen.has(c)) e.classList.add("chosen");
    pool.append(e);
  }
  if (!h.pool.length) pool.append(el("span", { class: "small", text: t("table.pool_empty") }));
  const hand = $("hand");
  hand.replaceChildren();
  for (const c of h.hand) {
    const e = cardEl(c, myTurn ? { onclick: () => selectCard(c) } : {});
    if (c === selected) e.classList.add("selected");
    hand.append(e);
  }
  renderChoices(myTurn);
  if (typeof Teach !== "undefined") Teach.render(h, myTurn, selected); // the guide (teach.js)
  $("controls").hidden = view.status !== "playing";
  $("hint").disabled = !myTurn;
  // what the server allows: at a table, only where no other person plays (view.hints); never at a rated one
  $("hint").hidden = tableMode() ? !view.hints : Boolean(view.rated);
  const hist = $("history");
  hist.replaceChildren();
  for (const mv of h.history) {
    hist.append(el("li", { text: t("table.said", { who: mv.by === "you" ? t("player.you_short") : opp("short"), move: movedText(mv, mv.sur) }) }));
  }
  showScoreChip();
  feelAfter(rects);
}

function legalOf(card) {
  return view.hand.legal.filter((a) => a.card === card);
}

function sameSet(list, set) {
  return list.length === set.size && list.every((c) => set.has(c));
}

function currentAction() {
  if (!selected) return null;
  return legalOf(selected).find((a) => sameSet(a.captured, chosen)) || null;
}

function renderChoices(myTurn) {
  const box = $("choices");
  box.replaceChildren();
  const action = myTurn ? currentAction() : null;
  $("play").disabled = !action;
  $("play").textContent = action ? t("table.play_move", { move: moveText(action) }) : selected ? t("table.choose_takes") : t("table.play");
  if (!myTurn || !selected) return;
  const options = legalOf(selected);
  if (options.length > 1) {
    for (const a of options) {
      const b = el("button", { type: "button", class: "choice", text: moveText(a) });
      b.addEventListener("click", () => sendMove(a));
      box.append(b);
    }
  }
}

function selectCard(card) {
  if (busy) return;
  if (selected === card) {
    selected = null;
    chosen = new Set();
  } else {
    selected = card;
    const options = legalOf(card);
    // a single way to play the card: its captured cards are chosen for you
    chosen = options.length === 1 ? new Set(options[0].captured) : new Set();
  }
  say("");
  render();
}

function togglePool(card) {
  if (busy || !selected) return;
  if (chosen.has(card)) chosen.delete(card);
  else chosen.add(card);
  render();
}

async function sendMove(action) {
  if (tableMode()) return Tables.move(action);
  if (busy || !action) return;
  busy = true;
  $("hint-box").hidden = true;
  try {
    const data = await api("POST", `/api/games/${game.id}/moves`, {
      card: action.card,
      captured: action.captured,
      moves_played: view.hand.moves_played,
    });
    selected = null;
    chosen = new Set();
    await playSteps(data);
  } catch (e) {
    say(serverText(e.message), true);
    if (e.status === 404) forget();
  } finally {
    busy = false;
    render();
  }
}

function markPlayed(card) {
  for (const e of document.querySelectorAll(`[data-card="${card}"]`)) e.classList.add("just-played");
}

// The steps of a response, one at a time: each move, then the table after it.
async function playSteps(data) {
  const steps = data.steps || [];
  for (const step of steps) {
    view = { ...data, hand: step.state, status: "playing" };
    selected = null;
    chosen = new Set();
    render();
    const who = step.by === "you" ? t("player.you_short") : opp("subject");
    say(t("table.said", { who, move: movedText(step.move, step.state.history.at(-1).sur) }));
    markPlayed(step.move.card);
    if (step.by === "ai" && DELAY > 0 && !tableMode()) await sleep(DELAY);
  }
  view = data;
  render();
  if (data.status !== "playing") await handOver();
  else if (!steps.length) say(view.hand.to_move === "you" ? t("table.your_turn") : "");
}

async function showHint() {
  if (busy) return;
  busy = true;
  $("hint").textContent = t("table.thinking");
  try {
    const data = await api("GET", `${gamePath()}/hint`);
    const box = $("hint-box");
    const table = el("table");
    const head = el("tr");
    head.append(el("th", { text: t("hint.move") }), el("th", { text: t("hint.margin", { level: levelName(data.level) }) }));
    table.append(head);
    for (const m of data.moves) {
      const tr = el("tr", { class: m.best ? "best" : "" });
      const go = el("button", { type: "button", class: "choice", text: moveText(m) });
      go.addEventListener("click", () => sendMove(m));
      const td = el("td");
      td.append(go);
      tr.append(td, el("td", { text: signed((m.value > 0 ? "+" : "") + dec(m.value, 2)) }));
      table.append(tr);
    }
    box.replaceChildren(el("div", { class: "small", text: t("hint.explain") }), table);
    box.hidden = false;
    box.scrollIntoView({ block: "nearest" }); // below the hand: on a phone, off the screen until scrolled to
  } catch (e) {
    say(serverText(e.message), true);
  } finally {
    $("hint").textContent = t("table.hint");
    busy = false;
    render();
  }
}

// -- the end of a hand ------------------------------------------------------------------------
function resultRows(r) {
  const rows = [
    [t("result.cards_clubs"), r.card_points[0], r.card_points[1]],
    [t("result.surs_made"), r.surs[0], r.surs[1]],
  ];
  if (r.surs_void[0] || r.surs_void[1]) rows.push([t("result.surs_void"), r.surs_void[0], r.surs_void[1]]);
  if (view.rules.sur_cancellation) rows.push([t("result.surs_cancelled"), r.surs_cancelled[0], r.surs_cancelled[1]]);
  rows.push([t("result.surs_scored"), r.surs_scored[0], r.surs_scored[1]]);
  return rows;
}

async function handOver() {
  const r = view.result;
  const h = view.hand;
  const m = view.match;
  show(["table", "result"]);
  let title;
  if (tableMode()) {
    title = Tables.title(r, m);
  } else if (m.target === null) {
    title = t(r.points[0] > r.points[1] ? "result.you_win_hand" : r.points[0] < r.points[1] ? "result.ai_wins_hand" : "result.tie");
  } else if (m.over) {
    title = t(m.winner === "you" ? "result.you_win_match" : "result.ai_wins_match");
  } else {
    title = t("result.hand_over", { n: view.hand_number });
  }
  $("result-title").textContent = title;
  const table = $("final-score");
  table.replaceChildren();
  const head = el("tr");
  head.append(
    el("th", { text: "" }),
    el("th", { text: t("player.you", { seat: seatName(h.players.you.seat) }) }),
    el("th", { text: t("player.other", { name: opp("short"), seat: seatName(h.players.ai.seat) }) }),
  );
  table.append(head);
  for (const [label, a, b] of resultRows(r)) {
    const tr = el("tr");
    tr.append(el("td", { text: label }), el("td", { text: num(a) }), el("td", { text: num(b) }));
    table.append(tr);
  }
  const total = el("tr", { class: "total", id: "hand-points" });
  total.setAttribute("data-you", r.points[0]);
  total.setAttribute("data-ai", r.points[1]);
  total.append(el("td", { text: t("result.points") }), el("td", { text: num(r.points[0]) }), el("td", { text: num(r.points[1]) }));
  table.append(total);
  $("match-summary").textContent = summaryText(h, m);
  $("next-hand").hidden = view.status !== "hand_over";
  say("");
  $("result").scrollIntoView({ block: "nearest" }); // it opens above the table: off a scrolled phone's screen
  loadReplay();
}

async function loadReplay() {
  const btn = $("show-replay");
  btn.disabled = true;
  btn.textContent = t("replay.solving");
  try {
    const data = await api("GET", `${gamePath()}/replay?hand=${view.hand_number}`);
    renderReplay(data);
    btn.disabled = false;
    btn.textContent = t("result.show_replay");
  } catch (e) {
    btn.textContent = t("replay.unavailable", { error: serverText(e.message) });
  }
}

function renderReplay(data) {
  const mine = data.moves.filter((m) => m.by === "you").length;
  $("replay-summary").textContent = t("replay.summary", {
    value: fmtSigned(data.open_value),
    mine,
    cost: dec(data.your_cost, 2),
    mistakes: data.your_mistakes,
    opp: opp("object"),
    ai_cost: dec(data.ai_cost, 2),
    deck: data.deal.deck.split(/\s+/).filter(Boolean).map(cardText).join(" "),
  });
  const table = $("replay-table");
  table.replaceChildren();
  const head = el("tr");
  const cols = [
    t("replay.col_n"),
    t("replay.col_stage"),
    t("replay.col_who"),
    t("replay.col_pool"),
    t("replay.col_your_hand"),
    t("replay.col_their_hand", { opp: opp("short") }),
    t("replay.col_move"),
    t("replay.col_best"),
    t("replay.col_cost"),
  ];
  for (const c of cols) head.append(el("th", { text: c }));
  table.append(head);
  for (const m of data.moves) {
    const tr = el("tr", { class: m.by === "you" ? "mine" : "" });
    const cell = (content) => {
      const td = el("td");
      td.append(content);
      return td;
    };
    const cost = el("td", { class: "cost " + (m.cost > 0 ? "bad" : "good"), text: m.cost > 0 ? signed("−" + dec(m.cost, 2)) : num(0) });
    tr.append(
      cell(num(m.n)),
      cell(num(m.stage)),
      cell(m.by === "you" ? t("player.you_object") : opp("short")),
      cell(cardRow(m.pool)),
      cell(cardRow(m.hands.you)),
      cell(cardRow(m.hands.ai)),
      cell(moveText(m.move)),
      cell(m.cost > 0 ? moveText(m.best) : t("replay.same")),
      cost,
    );
    table.append(tr);
  }
}

function fmtSigned(v) {
  return signed((v > 0 ? "+" : "") + num(v));
}

async function nextHand() {
  if (tableMode()) return Tables.next();
  if (busy) return;
  busy = true;
  try {
    const data = await api("POST", `/api/games/${game.id}/next`);
    show(["table"]);
    await playSteps(data);
  } catch (e) {
    say(serverText(e.message), true);
  } finally {
    busy = false;
    render();
  }
}

function forget() {
  if (tableMode()) return Tables.leave(); // a new game: the AI plays on for the friend
  localStorage.removeItem(STORE_KEY);
  game = null;
  view = null;
  selected = null;
  chosen = new Set();
  $("hint-box").hidden = true;
  show(["setup"]);
}

async function resume() {
  const saved = localStorage.getItem(STORE_KEY);
  if (!saved) return false;
  try {
    game = JSON.parse(saved);
    view = await api("GET", `/api/games/${game.id}`);
  } catch (e) {
    if (e instanceof TypeError && game && game.id) {
      game = null; // the server cannot be reached: its game stays saved for when it can
      return false;
    }
    forget();
    return false;
  }
  show(["table"]);
  render();
  if (view.status !== "playing") await handOver();
  else say(t("table.welcome_back"));
  return true;
}

// -- feel (issue 44, item 6): animations, sounds, the match score in view, this browser's games --
// One sound setting for the page, off until the player turns it on: the key the tables' turn tone
// (tables.js) reads too, so one switch governs every sound.
const SOUND_KEY = "pasur-turn-sound";
const GAMES_KEY = "pasur-games"; // [{id, token, at, kind}]: the server games and tables (kind "table") of this browser, newest first
const GAMES_MAX = 30;
const FLY_MS = 380; // a moving card's flight (style.css: keyframes "fly")
// tones: [frequency in Hz, seconds], played one after another
const TONES = {
  capture: [[523, 0.07], [784, 0.1]],
  sur: [[659, 0.08], [880, 0.08], [1319, 0.18]],
  sweep: [[392, 0.07], [523, 0.07], [659, 0.07], [784, 0.12]],
};
let tonesPlayed = 0; // how many sounds this page made (a test reads it: the headless browser has no speaker)
let feelShown = null; // the hand drawn last: { key, moves, swept }, to tell what the new drawing adds

function soundOn() {
  return localStorage.getItem(SOUND_KEY) === "1";
}

function reducedMotion() {
  return Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
}

// tones made by Web Audio (nothing loaded), only when the player turned sound on
function playTones(notes) {
  if (!soundOn() || !notes.length) return;
  try {
    const ctx = new AudioContext();
    let at = ctx.currentTime;
    for (const [freq, len] of notes) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.07, at);
      gain.gain.exponentialRampToValueAtTime(0.001, at + len);
      osc.connect(gain).connect(ctx.destination);
      osc.start(at);
      osc.stop(at + len);
      at += len;
    }
    setTimeout(() => ctx.close(), (at - ctx.currentTime) * 1000 + 200);
    tonesPlayed += 1;
  } catch (e) {
    // no audio in this browser: the page plays on silently
  }
}

function showSoundSetting() {
  const on = soundOn();
  $("sound-toggle").setAttribute("aria-pressed", String(on));
  $("sound-toggle").textContent = t(on ? "feel.sound_on" : "feel.sound_off");
  const turn = document.getElementById("turn-sound"); // the tables' checkbox: the same setting
  if (turn) turn.checked = on;
}

// where each card of the pool and the hand is drawn now, before the table is drawn again
function cardRects() {
  const rects = new Map();
  for (const e of document.querySelectorAll("#pool [data-card], #hand [data-card]")) rects.set(e.getAttribute("data-card"), e.getBoundingClientRect());
  return rects;
}

// copies of `cards` fly from where they were drawn to the pile of `to` ("you", "ai"), then go
function fly(cards, rects, to, cls) {
  if (reducedMotion()) return;
  const target = $(to === "you" ? "you-area" : "ai-area").getBoundingClientRect();
  const fallback = $("pool").getBoundingClientRect(); // a card never drawn face up here (the AI's)
  for (const card of cards) {
    const from = rects.get(card) || fallback;
    const ghost = el("span", { class: `card ghost ${cls}` + ("DH".includes(card.slice(-1)) ? " red" : "") });
    ghost.append(el("span", { class: "rank", text: rankText(card) }), el("span", { class: "suit", text: SUITS[card.slice(-1)] }));
    ghost.setAttribute("aria-hidden", "true");
    ghost.style.left = `${from.left}px`;
    ghost.style.top = `${from.top}px`;
    ghost.style.setProperty("--dx", `${target.left + target.width / 2 - from.left - from.width / 2}px`);
    ghost.style.setProperty("--dy", `${target.top + target.height / 2 - from.top - from.height / 2}px`);
    document.body.append(ghost);
    setTimeout(() => ghost.remove(), FLY_MS + 100);
  }
}

// a Sur: a mark over the player who made it, for a moment (still, when motion is not wanted)
function surMark(by) {
  const area = $(by === "you" ? "you-area" : "ai-area").getBoundingClientRect();
  const mark = el("div", { class: "sur-mark" + (reducedMotion() ? "" : " anim-sur"), text: t("feel.sur") });
  mark.setAttribute("role", "presentation");
  mark.style.top = `${Math.max(0, area.top + area.height / 2 - 24)}px`;
  document.body.append(mark);
  setTimeout(() => mark.remove(), 1200);
}

// what the new drawing adds to the last one of the same hand: a capture, a Sur, the final sweep
function feelAfter(rects) {
  const h = view.hand;
  const key = `${view.id}/${view.hand_number}`;
  const last = feelShown;
  feelShown = { key, moves: h.history.length, swept: Boolean(h.sweep) };
  if (!last || last.key !== key) return;
  const tones = [];
  if (h.history.length === last.moves + 1) {
    const mv = h.history.at(-1);
    if (mv.captured.length) {
      fly([mv.card, ...mv.captured], rects, mv.by, "anim-capture");
      tones.push(...(mv.sur ? TONES.sur : TONES.capture));
    }
    if (mv.sur) surMark(mv.by);
  }
  if (h.sweep && !last.swept) {
    fly(h.sweep.cards, rects, h.sweep.to, "anim-sweep");
    tones.push(...TONES.sweep);
  }
  playTones(tones);
}

// the match score, kept at the top of the screen while a hand of a match is played (style.css)
function showScoreChip() {
  const m = view.match;
  const chip = $("score-chip");
  chip.hidden = m.target === null;
  if (m.target === null) return;
  chip.replaceChildren(t("board.match") + " ", el("b", { text: t("board.match_score", { you: m.totals.you, opp: opp("short"), ai: m.totals.ai, target: m.target }) }));
}

function myGames() {
  try {
    const list = JSON.parse(localStorage.getItem(GAMES_KEY) || "[]");
    return Array.isArray(list) ? list : [];
  } catch (e) {
    return [];
  }
}

// a server game just started, or a table this browser sits at (kind "table", from tables.js), kept
// for the list of this browser's games (a game on this device has no replay: it is not listed)
function rememberGame(data, kind = "game") {
  if (String(data.id).startsWith("offline-")) return;
  const before = myGames().find((g) => g.id === data.id);
  const entry = { id: data.id, token: data.token, at: before ? before.at : Date.now(), kind };
  const list = [entry, ...myGames().filter((g) => g.id !== data.id)];
  localStorage.setItem(GAMES_KEY, JSON.stringify(list.slice(0, GAMES_MAX)));
}

// where the server answers about one of this browser's games or tables
function entryPath(g) {
  return `/api/${g.kind === "table" ? "tables" : "games"}/${encodeURIComponent(g.id)}`;
}

// who the game was against, as the list says it: the AI's level, or at a table the other person
// (their name, isolated, at a rated table)
function entryOpponent(g, v) {
  if (g.kind !== "table" || v.opponent.kind === "ai") return { level: levelName(v.level), opp: t("opp.ai_short") };
  return { level: tableOpponent(v, "object"), opp: tableOpponent(v, "short") };
}

// one game of the list: when, against whom, the score, a link to the replay of each finished hand
function gameEntry(g, v) {
  const table = g.kind === "table";
  const done = table ? v.match.hands.length : v.status === "playing" ? v.hand_number - 1 : v.hand_number;
  if (done < 1) return null;
  const match = v.match.target !== null;
  const pts = match ? v.match.totals : { you: v.result.points[0], ai: v.result.points[1] };
  const date = new Date(g.at).toLocaleString(LANG === "fa" ? "fa-IR" : "en-GB", { dateStyle: "medium", timeStyle: "short" });
  const vars = { date, ...entryOpponent(g, v), you: pts.you, ai: pts.ai, target: match ? v.match.target : 0 };
  const li = el("li", { class: "my-game", "data-game": g.id });
  const notes = (table ? " " + t("games.at_table") : "") + (v.status === "over" ? "" : " " + t("games.in_play"));
  li.append(el("span", { text: t(match ? "games.match" : "games.hand", vars) + notes }));
  for (let n = 1; n <= done; n++) {
    const text = match ? t("games.replay_hand", { n }) : t("games.replay");
    li.append(" ", el("a", { href: `#replay=${encodeURIComponent(g.id)}&hand=${n}`, class: "replay-link", text }));
  }
  return li;
}

// the list of this browser's games, each asked of the server with its own token (a game the
// server no longer knows is dropped from the list)
async function openGames() {
  $("my-games").hidden = false;
  const list = $("games-list");
  list.replaceChildren();
  const kept = [];
  for (const g of myGames()) {
    try {
      const v = await api("GET", entryPath(g), undefined, g.token);
      kept.push(g);
      const li = gameEntry(g, v);
      if (li) list.append(li);
    } catch (e) {
      if (e.status !== 404) kept.push(g); // the server away: the game stays for later
    }
  }
  localStorage.setItem(GAMES_KEY, JSON.stringify(kept));
  $("games-empty").hidden = list.children.length > 0;
  $("my-games").scrollIntoView({ block: "nearest" });
}

// "#replay=ID&hand=N": the replay of a hand of one of this browser's games, with its kept token
async function onReplayHash() {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (!hash.has("replay")) return;
  history.replaceState(null, "", location.pathname + location.search);
  const g = myGames().find((x) => x.id === hash.get("replay"));
  const error = $("games-error");
  error.hidden = true;
  if (!g) return;
  try {
    const hand = Number(hash.get("hand")) || 1;
    renderReplay(await api("GET", `${entryPath(g)}/replay?hand=${hand}`, undefined, g.token));
    $("replay").hidden = false;
    $("replay").scrollIntoView();
  } catch (e) {
    error.textContent = t("games.replay_failed", { error: serverText(e.message) });
    error.hidden = false;
  }
}

function feelSetup() {
  showSoundSetting();
  $("sound-toggle").addEventListener("click", () => {
    localStorage.setItem(SOUND_KEY, soundOn() ? "0" : "1");
    showSoundSetting();
  });
  const turn = document.getElementById("turn-sound");
  if (turn) turn.addEventListener("change", showSoundSetting);
  $("show-games").addEventListener("click", openGames);
  $("close-games").addEventListener("click", () => ($("my-games").hidden = true));
  window.addEventListener("hashchange", onReplayHash);
  onReplayHash();
}

window.addEventListener("DOMContentLoaded", async () => {
  applyStrings(document);
  $("lang-switch").setAttribute("aria-label", t("lang.switch"));
  for (const b of document.querySelectorAll("#lang-switch [data-lang]")) {
    b.setAttribute("aria-pressed", String(b.getAttribute("data-lang") === LANG));
    b.addEventListener("click", () => setLang(b.getAttribute("data-lang")));
  }
  $("setup-form").addEventListener("submit", startGame);
  $("level").addEventListener("change", showLevelMargin);
  $("play").addEventListener("click", () => sendMove(currentAction()));
  $("hint").addEventListener("click", showHint);
  $("next-hand").addEventListener("click", nextHand);
  $("show-replay").addEventListener("click", () => {
    $("replay").hidden = false;
    $("replay").scrollIntoView();
  });
  $("again").addEventListener("click", forget);
  $("new-game").addEventListener("click", forget);
  await loadLevels();
  const tables = typeof Tables !== "undefined";
  if (tables) Tables.setup();
  feelSetup(); // after the tables' setup: their sound checkbox follows the page's one setting
  if (!((tables && (await Tables.resume())) || (await resume()))) show(["setup"]);
  document.body.setAttribute("data-ready", "1");
});
