// Pasur against the AI: the page. Plain JavaScript, no build step, no outside resources.
// It shows only what the server sends, which is what this player may see; the AI's moves
// arrive as steps and are shown one at a time.
"use strict";

const STORE_KEY = "pasur-game";
const params = new URLSearchParams(location.search);
const DELAY = params.has("delay") ? Number(params.get("delay")) : 900;
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };

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

// the other player in the forms written below ("AI", "The AI", "the AI"): a friend at a table
function opp(form) {
  return tableMode() ? Tables.other(form) : form;
}

function gamePath() {
  return tableMode() ? Tables.path() : `/api/games/${game.id}`;
}

// "1 card", "2 cards"
function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

// a player's Surs: those made, and those that score when the match rules cancel or void some
function sursText(p) {
  return p.surs_scored === undefined || p.surs_scored === p.surs ? String(p.surs) : `${p.surs} (${p.surs_scored} scored)`;
}

// the end-of-hand summary: captures, the final sweep, the match
function summaryText(h, m) {
  const you = h.players.you;
  const ai = h.players.ai;
  let text = `Captured: you ${plural(you.pile_count, "card")} (${plural(you.clubs, "club")}), ${opp("the AI")} ${ai.pile_count} (${plural(ai.clubs, "club")}).`;
  if (h.sweep) {
    const n = h.sweep.cards.length;
    const what = n === 1 ? "The last card" : `The last ${n} cards`;
    text += ` ${what} of the pool went to ${h.sweep.to === "you" ? "you" : opp("the AI")}, the last to capture.`;
  }
  if (m.target !== null) text += ` Match: you ${m.totals.you}, ${opp("the AI")} ${m.totals.ai} (to ${m.target}).`;
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

function rankText(card) {
  const r = card.slice(0, -1).toUpperCase();
  return r === "T" ? "10" : r;
}

function cardText(card) {
  return rankText(card) + SUITS[card.slice(-1).toUpperCase()];
}

function cardEl(card, opts = {}) {
  const s = card.slice(-1).toUpperCase();
  const e = el("button", { type: "button", class: "card" + (s === "D" || s === "H" ? " red" : ""), "data-card": card });
  if (opts.small) e.classList.add("small");
  e.append(el("span", { class: "rank", text: rankText(card) }), el("span", { class: "suit", text: SUITS[s] }));
  e.title = cardText(card);
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
async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (game) headers["X-Pasur-Token"] = game.token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
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
  for (const name of data.levels) sel.append(el("option", { value: name, text: name }));
  sel.value = data.default;
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
    show(["table"]);
    await playSteps(data);
  } catch (e) {
    alert("Could not start: " + e.message);
  } finally {
    busy = false;
    render();
  }
}

// -- the table --------------------------------------------------------------------------------
function playerEl(p, who) {
  const box = el("div");
  const name = who === "you" ? `You (${p.seat})` : tableMode() ? `${opp("AI")} (${p.seat})` : `AI: ${view.level} (${p.seat})`;
  box.append(el("span", { class: "name", text: name }));
  const stat = (label, value, cls) => {
    const s = el("span", { class: "stat " + cls });
    s.append(label + " ", el("b", { text: String(value) }));
    return s;
  };
  box.append(
    stat("points", p.points, "points"),
    stat("Surs", sursText(p), "surs"),
    stat("captured", p.pile_count, "pile"),
    stat("clubs", p.clubs, "clubs"),
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
  const h = view.hand;
  const m = view.match;
  const sb = $("scoreboard");
  sb.replaceChildren();
  const item = (label, value, id) => {
    const s = el("span", id ? { id } : {});
    s.append(label + " ", el("b", { text: String(value) }));
    return s;
  };
  sb.append(
    item("Round", `${h.round + 1} of 6`, "round"),
    item("Cards left to deal", h.cards_to_deal, "to-deal"),
  );
  if (!tableMode()) sb.append(item("Level", view.level));
  if (m.target !== null) {
    sb.append(item("Hand", view.hand_number), item("Match", `you ${m.totals.you} – ${opp("AI")} ${m.totals.ai} (to ${m.target})`, "totals"));
  }
  const rules = [];
  if (view.rules.sur_cancellation) rules.push("Sur cancellation");
  if (view.rules.fifty_point_rule) rules.push("50-point rule");
  if (rules.length) sb.append(el("span", { text: rules.join(", ") }));

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
  if (!h.pool.length) pool.append(el("span", { class: "small", text: "(empty)" }));
  const hand = $("hand");
  hand.replaceChildren();
  for (const c of h.hand) {
    const e = cardEl(c, myTurn ? { onclick: () => selectCard(c) } : {});
    if (c === selected) e.classList.add("selected");
    hand.append(e);
  }
  renderChoices(myTurn);
  $("controls").hidden = view.status !== "playing";
  $("hint").disabled = !myTurn;
  $("hint").hidden = tableMode();
  const hist = $("history");
  hist.replaceChildren();
  for (const mv of h.history) {
    hist.append(el("li", { text: `${mv.by === "you" ? "You" : opp("AI")}: ${mv.text}${mv.sur ? " (Sur!)" : ""}` }));
  }
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
  $("play").textContent = action ? `Play: ${action.text}` : selected ? "Choose the cards to take" : "Play";
  if (!myTurn || !selected) return;
  const options = legalOf(selected);
  if (options.length > 1) {
    for (const a of options) {
      const b = el("button", { type: "button", class: "choice", text: a.text });
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
    say(e.message, true);
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
    say(`${step.by === "you" ? "You" : opp("The AI")}: ${step.move.text}${step.state.history.at(-1).sur ? " (Sur!)" : ""}`);
    markPlayed(step.move.card);
    if (step.by === "ai" && DELAY > 0 && !tableMode()) await sleep(DELAY);
  }
  view = data;
  render();
  if (data.status !== "playing") await handOver();
  else if (!steps.length) say(view.hand.to_move === "you" ? "Your turn." : "");
}

async function showHint() {
  if (busy) return;
  busy = true;
  $("hint").textContent = "Thinking…";
  try {
    const data = await api("GET", `/api/games/${game.id}/hint`);
    const box = $("hint-box");
    const table = el("table");
    const head = el("tr");
    head.append(el("th", { text: "move" }), el("th", { text: `expected final margin (${data.level})` }));
    table.append(head);
    for (const m of data.moves) {
      const tr = el("tr", { class: m.best ? "best" : "" });
      const go = el("button", { type: "button", class: "choice", text: m.text });
      go.addEventListener("click", () => sendMove(m));
      const td = el("td");
      td.append(go);
      tr.append(td, el("td", { text: (m.value > 0 ? "+" : "") + m.value.toFixed(2) }));
      table.append(tr);
    }
    box.replaceChildren(el("div", { class: "small", text: "Your points minus the AI's at the end, as the AI estimates it from what you can see:" }), table);
    box.hidden = false;
  } catch (e) {
    say(e.message, true);
  } finally {
    $("hint").textContent = "Hint";
    busy = false;
    render();
  }
}

// -- the end of a hand ------------------------------------------------------------------------
function resultRows(r) {
  const rows = [
    ["cards and clubs", r.card_points[0], r.card_points[1]],
    ["Surs made", r.surs[0], r.surs[1]],
  ];
  if (r.surs_void[0] || r.surs_void[1]) rows.push(["Surs void (50-point rule)", r.surs_void[0], r.surs_void[1]]);
  if (view.rules.sur_cancellation) rows.push(["Surs cancelled", r.surs_cancelled[0], r.surs_cancelled[1]]);
  rows.push(["Surs scored (5 each)", r.surs_scored[0], r.surs_scored[1]]);
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
    title = r.points[0] > r.points[1] ? "You win the hand" : r.points[0] < r.points[1] ? "The AI wins the hand" : "A tie";
  } else if (m.over) {
    title = m.winner === "you" ? "You win the match!" : "The AI wins the match";
  } else {
    title = `Hand ${view.hand_number} is over`;
  }
  $("result-title").textContent = title;
  const table = $("final-score");
  table.replaceChildren();
  const head = el("tr");
  head.append(el("th", { text: "" }), el("th", { text: `You (${h.players.you.seat})` }), el("th", { text: `${opp("AI")} (${h.players.ai.seat})` }));
  table.append(head);
  for (const [label, a, b] of resultRows(r)) {
    const tr = el("tr");
    tr.append(el("td", { text: label }), el("td", { text: String(a) }), el("td", { text: String(b) }));
    table.append(tr);
  }
  const total = el("tr", { class: "total", id: "hand-points" });
  total.setAttribute("data-you", r.points[0]);
  total.setAttribute("data-ai", r.points[1]);
  total.append(el("td", { text: "points" }), el("td", { text: String(r.points[0]) }), el("td", { text: String(r.points[1]) }));
  table.append(total);
  $("match-summary").textContent = summaryText(h, m);
  $("next-hand").hidden = view.status !== "hand_over";
  say("");
  loadReplay();
}

async function loadReplay() {
  const btn = $("show-replay");
  btn.disabled = true;
  btn.textContent = "Solving the deal with every card open…";
  try {
    const data = await api("GET", `${gamePath()}/replay?hand=${view.hand_number}`);
    renderReplay(data);
    btn.disabled = false;
    btn.textContent = "Replay with every card open";
  } catch (e) {
    btn.textContent = "Replay unavailable: " + e.message;
  }
}

function renderReplay(data) {
  const mine = data.moves.filter((m) => m.by === "you").length;
  $("replay-summary").textContent =
    `With every card open, optimal play by both from the deal gives you ${fmtSigned(data.open_value)}. ` +
    `Your ${mine} moves cost ${data.your_cost.toFixed(2)} points against open-hand optimal play ` +
    `(${data.your_mistakes} not optimal); ${opp("the AI")}'s cost ${data.ai_cost.toFixed(2)}. Deck: ${data.deal.deck}`;
  const table = $("replay-table");
  table.replaceChildren();
  const head = el("tr");
  for (const t of ["#", "stage", "who", "pool", "your hand", `${opp("AI")}'s hand`, "move played", "open-hand best", "cost"]) head.append(el("th", { text: t }));
  table.append(head);
  for (const m of data.moves) {
    const tr = el("tr", { class: m.by === "you" ? "mine" : "" });
    const cell = (content) => {
      const td = el("td");
      td.append(content);
      return td;
    };
    const cost = el("td", { class: "cost " + (m.cost > 0 ? "bad" : "good"), text: m.cost > 0 ? "−" + m.cost.toFixed(2) : "0" });
    tr.append(
      cell(String(m.n)),
      cell(m.stage),
      cell(m.by === "you" ? "you" : opp("AI")),
      cell(cardRow(m.pool)),
      cell(cardRow(m.hands.you)),
      cell(cardRow(m.hands.ai)),
      cell(m.move.text),
      cell(m.cost > 0 ? m.best.text : "same"),
      cost,
    );
    table.append(tr);
  }
}

function fmtSigned(v) {
  return (v > 0 ? "+" : "") + v;
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
    say(e.message, true);
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
    forget();
    return false;
  }
  show(["table"]);
  render();
  if (view.status !== "playing") await handOver();
  else say("Welcome back: your game goes on.");
  return true;
}

window.addEventListener("DOMContentLoaded", async () => {
  $("setup-form").addEventListener("submit", startGame);
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
  if (!((tables && (await Tables.resume())) || (await resume()))) show(["setup"]);
  document.body.setAttribute("data-ready", "1");
});
