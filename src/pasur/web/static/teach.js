// The game taught on the page (issue 44, item 3): the "How to play" panel with its worked
// examples, and the optional guide that shows, on the player's turn, what each legal move would
// capture and why. Nothing here knows the rules: the examples are positions the server's rules
// engine found (GET /api/teach/examples), and each legal move of the game view carries the
// engine's reasons (`why`); this file only turns reason codes into the catalog's words.
// Its elements are made here (index.html loads this file with one line), its style is teach.css.
"use strict";

const GUIDE_KEY = "pasur-guide";
// the words of a capture by a court card, by the server's rule name
const COURT_WHY_KEYS = { jack: "teach.why.jack", queen: "teach.why.queen", king: "teach.why.king" };
// each example's title, by the server's example rule
const EXAMPLE_KEYS = {
  sum_one: "teach.ex.sum_one",
  sum_many: "teach.ex.sum_many",
  sum_choice: "teach.ex.sum_choice",
  lay: "teach.ex.lay",
  jack: "teach.ex.jack",
  jack_no_sur: "teach.ex.jack_no_sur",
  queen: "teach.ex.queen",
  king: "teach.ex.king",
  sur: "teach.ex.sur",
  last_round: "teach.ex.last_round",
  points: "teach.ex.points",
  clubs: "teach.ex.clubs",
};
// the panel's sections in order, and the examples each one shows
const SECTIONS = [
  { title: "teach.deal.title", body: "teach.deal.text", examples: [] },
  { title: "teach.sum.title", body: "teach.sum.text", examples: ["sum_one", "sum_many", "sum_choice", "lay"] },
  { title: "teach.court.title", body: "teach.court.text", examples: ["jack", "jack_no_sur", "queen", "king"] },
  { title: "teach.sur.title", body: "teach.sur.text", examples: ["sur", "last_round"] },
  { title: "teach.last.title", body: "teach.last.text", examples: [] },
  { title: "teach.score.title", body: "teach.score.text", examples: ["points", "clubs"] },
  { title: "teach.match.title", body: "teach.match.text", examples: [] },
];

// the reasons of a legal move (its `why` from the server) as short phrases, in the page's language
function whyParts(action, why) {
  const parts = [];
  if (why.rule === "lay") parts.push(t("teach.why.lay", { card: cardText(action.card) }));
  else if (why.rule === "sum") parts.push(t("teach.why.sum", { sum: signed(why.values.map(num).join(" + ") + " = " + num(11)) }));
  else parts.push(t(COURT_WHY_KEYS[why.rule]));
  if (why.options > 1) parts.push(t("teach.why.choice", { n: why.options }));
  if (why.sur) parts.push(t("teach.why.sur", { points: why.sur_points }));
  if (why.no_sur === "jack") parts.push(t("teach.why.no_sur_jack"));
  if (why.no_sur === "last_round") parts.push(t("teach.why.no_sur_last"));
  if (why.points) parts.push(plural(why.points, "teach.why.points_one", "teach.why.points_other"));
  if (why.clubs) parts.push(plural(why.clubs, "teach.why.clubs_one", "teach.why.clubs_other"));
  return parts;
}

// a legal move and its reasons in one line: "7♣ takes 4♦: 7 + 4 = 11; +1 club" (a move without
// reasons, as the offline game's, in words alone)
function whyText(action, why) {
  return why ? moveText(action) + ": " + whyParts(action, why).join(t("teach.why.sep")) : moveText(action);
}

const Teach = (() => {
  let numbers = { sur_points: 5, clubs_for_bonus: 7, clubs_bonus: 7, rounds: 6 };
  let loaded = false;

  function guideOn() {
    try {
      return localStorage.getItem(GUIDE_KEY) === "1";
    } catch (e) {
      return false;
    }
  }

  function exampleEl(ex) {
    const box = el("div", { class: "teach-example", "data-rule": ex.rule });
    box.append(el("h4", { text: t(EXAMPLE_KEYS[ex.rule]) }));
    const line = el("div", { class: "teach-position" });
    line.append(el("span", { text: t("teach.ex.table") + " " }), cardRow(ex.pool));
    line.append(el("span", { text: " " + t("teach.ex.played") + " " }), cardRow([ex.card]));
    if (ex.rule === "sur" || ex.rule === "last_round") {
      line.append(el("span", { class: "small", text: " (" + t("teach.ex.round", { round: ex.round + 1, rounds: numbers.rounds }) + ")" }));
    }
    const list = el("ul");
    for (const a of ex.actions) list.append(el("li", { text: whyText(a, a.why) }));
    box.append(line, list);
    return box;
  }

  function fillPanel(examples) {
    const panel = $("teach");
    const vars = { points: numbers.sur_points, clubs: numbers.clubs_for_bonus, bonus: numbers.clubs_bonus };
    const body = el("div", { id: "teach-body" });
    body.append(el("p", { text: t("teach.intro") }));
    const byRule = Object.fromEntries((examples || []).map((ex) => [ex.rule, ex]));
    for (const s of SECTIONS) {
      const sec = el("section", { class: "teach-section" });
      sec.append(el("h3", { text: t(s.title) }), el("p", { text: t(s.body, vars) }));
      const shown = s.examples.filter((r) => byRule[r]);
      if (shown.length) {
        const ex = el("div", { class: "teach-examples" });
        ex.append(el("div", { class: "small", text: t("teach.examples") }));
        for (const r of shown) ex.append(exampleEl(byRule[r]));
        sec.append(ex);
      }
      body.append(sec);
    }
    panel.querySelector("#teach-body").replaceWith(body);
  }

  async function open() {
    const panel = $("teach");
    panel.hidden = false;
    if (!loaded) {
      panel.querySelector("#teach-body").replaceChildren(el("p", { class: "small", text: t("teach.loading") }));
      try {
        const data = await api("GET", "/api/teach/examples", undefined, null);
        numbers = data.numbers;
        fillPanel(data.examples);
        loaded = true;
      } catch (e) {
        fillPanel([]);
        panel.querySelector("#teach-body").append(el("p", { class: "small error", text: t("teach.unavailable", { error: serverText(e.message) }) }));
      }
    }
    panel.scrollIntoView({ block: "start" });
  }

  // the panel (hidden until opened), its button and the guide's checkbox in the setup
  function setup() {
    const link = el("link", { rel: "stylesheet", href: "/static/teach.css" });
    document.head.append(link);
    const panel = el("section", { id: "teach", class: "panel" });
    panel.hidden = true;
    const close = el("button", { type: "button", id: "close-teach", class: "secondary", text: t("teach.close") });
    close.addEventListener("click", () => {
      panel.hidden = true;
    });
    panel.append(el("h2", { text: t("teach.heading") }), el("div", { id: "teach-body" }), close);
    document.querySelector("main").prepend(panel);

    const openBtn = el("button", { type: "button", id: "open-teach", class: "secondary", text: t("teach.open") });
    openBtn.addEventListener("click", open);
    const check = el("input", { type: "checkbox", id: "guide" });
    check.checked = guideOn();
    check.addEventListener("change", () => {
      localStorage.setItem(GUIDE_KEY, check.checked ? "1" : "0");
      if (typeof render === "function") render();
    });
    const label = el("label", { id: "guide-label" });
    label.append(check, " ", el("span", { text: t("teach.guide.label") }));
    const row = el("div", { id: "teach-row" });
    row.append(openBtn, label);
    $("setup").append(row);

    const guide = el("div", { id: "guide-box", class: "panel" });
    guide.hidden = true;
    $("dock").after(guide);
  }

  // called by app.js's render(): on the player's turn with the guide on, each legal move (of the
  // chosen card, once one is chosen) with what it captures and why
  function render(hand, myTurn, selected) {
    const box = $("guide-box");
    if (!box) return;
    box.hidden = !(guideOn() && myTurn && hand && hand.legal.length);
    if (box.hidden) return;
    const moves = hand.legal.filter((a) => !selected || a.card === selected);
    const list = el("ul");
    for (const a of moves) list.append(el("li", { "data-card": a.card, text: whyText(a, a.why) }));
    box.replaceChildren(el("div", { class: "label", text: t("teach.guide.heading") }), list);
  }

  return { setup, render, open, guideOn };
})();

if (typeof window !== "undefined" && typeof document !== "undefined") {
  window.addEventListener("DOMContentLoaded", () => Teach.setup());
}
