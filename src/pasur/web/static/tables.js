// Tables for two people: open a table, invite a friend by link, play each other live over a
// WebSocket. The table is drawn by app.js (render, playSteps, handOver); this file opens, joins,
// keeps the socket (reconnecting after a drop or a reload: the token stays in localStorage, the
// server resends the whole view on hello), and shows the invite, the clock and the banner.
"use strict";

// a player's name inside a sentence, isolated (U+2068 FIRST STRONG ISOLATE ... U+2069 POP
// DIRECTIONAL ISOLATE, invisible): a Persian name in English text (or a Latin one in Persian)
// keeps the numbers after it on their own side ("Captured: you 26 cards, <name> 26 ...")
function isolateName(name) {
  return "\u2068" + name + "\u2069";
}

// the other player in the forms app.js writes ("short", "subject", "object": see opp), at a
// table whose view is `view`: their name at a rated table, isolated
function tableOpponent(view, form) {
  if (view && view.names && view.names.ai && view.opponent.kind === "person") return isolateName(view.names.ai);
  if (!view || view.opponent.kind !== "ai") {
    return t(form === "short" ? "table.friend_short" : form === "subject" ? "table.friend" : "table.friend_object");
  }
  return form === "short" ? t("table.ai_named", { level: levelName(view.opponent.level) }) : t(OPP_KEYS[form]);
}

// the line that says who this browser plays as (the name isolated)
function playerLine(me) {
  return t("player.shown", { name: isolateName(me.name), rating: Math.round(me.rating), rd: Math.round(me.rd), games: me.games });
}

const Tables = (() => {
  const KEY = "pasur-table";
  let table = null; // { id, token }
  let socket = null;
  let retries = 0;
  let queue = Promise.resolve(); // messages are shown one after another, in order
  let clock = null; // { left, at, to }
  let shownOver = null; // the hand whose end is on screen
  let wasWaiting = false; // the last view had the other seat open

  const active = () => table !== null;
  const path = () => `/api/tables/${table.id}`;

  function remember(id, token, link) {
    table = { id, token, link };
    game = { id, token }; // app.js sends game.token with every request
    localStorage.setItem(KEY, JSON.stringify(table));
  }

  function forgetTable() {
    table = null;
    clock = null;
    shownOver = null;
    wasWaiting = false;
    localStorage.removeItem(KEY);
    if (socket) {
      const s = socket;
      socket = null;
      s.close();
    }
    $("invite-panel").hidden = true;
    $("live-banner").hidden = true;
    $("clock").hidden = true;
    $("leave-table").hidden = true;
  }

  function rules() {
    const match = $("mode-match").checked;
    return {
      target: match ? Number($("target").value) : null,
      sur_cancellation: $("sur-cancellation").checked,
      fifty_point_rule: match && $("fifty-rule").checked,
    };
  }

  async function open() {
    if (busy) return;
    const clockValue = $("table-clock").value;
    const body = { rules: rules(), seat: $("seat").value, clock_s: clockValue ? Number(clockValue) : null };
    const rated = $("table-rated").checked;
    if (rated) {
      if (!Players.token()) {
        alert(t("player.need_name"));
        $("player-name").focus();
        return;
      }
      body.rated = true;
      body.player_token = Players.token();
    } else if (params.has("seed")) body.seed = Number(params.get("seed")); // a rated table's deals are never seeded
    busy = true;
    try {
      const data = await api("POST", "/api/tables", body);
      // the link says the table is rated, so the friend's page asks for a name before joining
      const link = `${location.origin}${location.pathname}#table=${encodeURIComponent(data.id)}&invite=${encodeURIComponent(data.invite)}${rated ? "&rated=1" : ""}`;
      remember(data.id, data.token, link); // the link is kept to be shown again after a reload
      $("invite-link").value = link;
      $("invite-panel").hidden = false;
      connect();
    } catch (e) {
      alert(t("table.open_failed", { error: serverText(e.message) }));
    } finally {
      busy = false;
    }
  }

  async function join(id, invite, rated) {
    const body = { invite };
    if (rated) {
      body.player_token = await Players.ensure(); // asks for a name first when this browser has none
      if (!body.player_token) {
        alert(t("player.need_name"));
        return false; // the link stays in the address bar: a reload tries again
      }
    }
    history.replaceState(null, "", location.pathname + location.search); // the invite works once
    say(t("table.joining"));
    try {
      const data = await api("POST", `/api/tables/${encodeURIComponent(id)}/join`, body);
      remember(data.id, data.token);
      connect();
      return true;
    } catch (e) {
      alert(t("table.join_failed", { error: serverText(e.message) }));
      return false;
    }
  }

  function connect() {
    const s = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path()}/live`);
    socket = s;
    let pinger = null; // one ping a minute: the server closes a socket idle for five
    s.addEventListener("open", () => {
      s.send(JSON.stringify({ type: "hello", token: table.token }));
      pinger = setInterval(() => s.readyState === WebSocket.OPEN && s.send(JSON.stringify({ type: "ping" })), 60000);
    });
    s.addEventListener("message", (event) => {
      const msg = JSON.parse(event.data);
      queue = queue.then(() => receive(msg)).catch((e) => say(serverText(e.message), true));
    });
    s.addEventListener("close", () => {
      clearInterval(pinger);
      if (socket !== s || !table) return; // closed on purpose
      $("live-banner").hidden = false;
      $("live-banner").textContent = t("live.reconnecting");
      const wait = Math.min(5000, 300 * 2 ** retries);
      retries += 1;
      setTimeout(() => {
        if (socket === s && table) connect();
      }, wait);
    });
  }

  function send(message) {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      say(t("live.reconnecting"), true);
      return false;
    }
    socket.send(JSON.stringify(message));
    return true;
  }

  async function receive(msg) {
    if (msg.type === "pong") return;
    if (msg.type === "error") {
      say(serverText(msg.error), true);
      if (msg.status === 404) {
        forgetTable();
        forget();
        say(t("table.gone"), true);
      }
      return;
    }
    if (!$("live-banner").hidden && retries > 0) say(t("live.back"));
    $("live-banner").hidden = true;
    retries = 0;
    const data = { ...msg.view, steps: msg.steps };
    const waiting = data.status === "waiting";
    const joinedNow = wasWaiting && !waiting;
    wasWaiting = waiting;
    $("invite-panel").hidden = !waiting;
    $("leave-table").hidden = waiting || data.status === "over" || Boolean(data.rated); // a rated match is played out
    clock = data.clock.per_move_s ? { left: data.clock.left_s, at: Date.now(), to: data.clock.to_move } : null;
    tick();
    const overKey = `${data.hand_number}:${data.status}`;
    if (data.status !== "playing" && !waiting && shownOver === overKey && !data.steps.length) {
      view = data; // the same end of hand again (a sync or a reconnect): nothing new to show
      render();
      return;
    }
    if (!waiting && $("table").hidden) show(["table"]);
    if (data.status === "playing") {
      shownOver = null;
      if (!$("result").hidden) show(["table"]);
    }
    if (waiting) {
      view = data;
      show(["table"]);
      render();
      say(t("invite.waiting"));
      return;
    }
    await playSteps(data);
    if (data.status === "playing") say(joinedNow ? `${t("table.joined")} ${turnText()}` : turnText());
    else {
      shownOver = overKey;
      if (data.rated && data.status === "over") Players.refresh(); // the match is rated: the new rating
      if (data.result && data.result.timeout) say(t(data.result.timeout === "you" ? "table.timeout_you" : "table.timeout_them"));
      if (data.result && data.result.abandoned) say(t(data.result.abandoned === "you" ? "table.abandoned_you" : "table.abandoned_them"));
    }
  }

  function turnText() {
    if (view.hand.to_move === "you") return t("table.your_turn");
    return view.opponent.kind === "ai" ? t("table.ai_turn") : t("table.their_turn");
  }

  function tick() {
    const box = $("clock");
    if (!clock || clock.left === null || !clock.to) {
      box.hidden = true;
      return;
    }
    const s = Math.max(0, Math.ceil(clock.left - (Date.now() - clock.at) / 1000));
    box.hidden = false;
    box.textContent = t(clock.to === "you" ? "clock.you" : "clock.them", { s });
    box.classList.toggle("low", s <= 10);
  }

  // -- what app.js asks of a table ------------------------------------------------------------
  function move(action) {
    if (!action || busy) return;
    if (send({ type: "move", card: action.card, captured: action.captured, moves_played: view.hand.moves_played })) {
      selected = null;
      chosen = new Set();
      render();
    }
  }

  function next() {
    send({ type: "next" });
  }

  function leave() {
    send({ type: "leave" });
    forgetTable();
    forget();
    say(t("table.left"));
  }

  async function seatAi() {
    try {
      await api("POST", `${path()}/ai`, { level: $("level").value });
    } catch (e) {
      say(serverText(e.message), true);
    }
  }

  // the other player's name in the forms app.js writes ("short", "subject", "object": see opp)
  function other(form) {
    return tableOpponent(view, form);
  }

  function title(r, m) {
    const ai = view.opponent.kind === "ai";
    if (m.target === null) {
      if (r.points[0] === r.points[1]) return t("table.tie");
      return r.points[0] > r.points[1] ? t("table.you_win_hand") : t(ai ? "table.ai_wins_hand" : "table.they_win_hand");
    }
    if (m.over) return m.winner === "you" ? t("table.you_win_match") : t(ai ? "table.ai_wins_match" : "table.they_win_match");
    return t("table.hand_over", { n: view.hand_number });
  }

  // at load: join by an invite link, or reconnect to the table this browser sits at
  async function resume() {
    const hash = new URLSearchParams(location.hash.slice(1));
    if (hash.has("table") && hash.has("invite")) return join(hash.get("table"), hash.get("invite"), hash.get("rated") === "1");
    const saved = localStorage.getItem(KEY);
    if (!saved) return false;
    try {
      const s = JSON.parse(saved);
      remember(s.id, s.token, s.link);
      $("invite-link").value = s.link || "";
    } catch (e) {
      localStorage.removeItem(KEY);
      return false;
    }
    show(["table"]);
    connect();
    return true;
  }

  function setup() {
    applyStrings(document);
    const sel = $("table-clock");
    sel.replaceChildren(el("option", { value: "", text: t("friend.clock.none") }));
    for (const n of [30, 60, 120]) sel.append(el("option", { value: String(n), text: t("friend.clock.seconds", { n }) }));
    $("open-table").addEventListener("click", open);
    $("copy-invite").addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText($("invite-link").value);
        $("copy-note").textContent = t("invite.copied");
      } catch (e) {
        $("invite-link").select();
        $("copy-note").textContent = t("invite.copy_failed");
      }
    });
    $("seat-ai").addEventListener("click", seatAi);
    $("leave-table").addEventListener("click", leave);
    $("table-rated").addEventListener("change", () => {
      if ($("table-rated").checked) $("mode-match").checked = true; // a rated table plays a match
    });
    Players.setup();
    Ladder.setup();
    setInterval(tick, 500);
  }

  return { active, path, move, next, leave, other, title, resume, setup, forget: forgetTable };
})();

// The player's name for rated tables: registered once (POST /api/players), its secret token kept
// in localStorage; the name and rating shown from GET /api/players/me.
const Players = (() => {
  const KEY = "pasur-player";
  let me = null; // { name, rating, rd, games }

  const token = () => localStorage.getItem(KEY);

  function draw() {
    $("player-shown").hidden = !me;
    $("player-register").hidden = Boolean(me);
    if (me) $("player-shown").textContent = playerLine(me);
  }

  async function refresh() {
    if (!token()) me = null;
    else {
      try {
        me = await api("GET", "/api/players/me", undefined, token());
      } catch (e) {
        if (e.status === 404) {
          localStorage.removeItem(KEY); // a name this server does not know (a new database)
          me = null;
        }
      }
    }
    draw();
    return me;
  }

  async function register(name) {
    const data = await api("POST", "/api/players", { name }, null);
    localStorage.setItem(KEY, data.token);
    me = data;
    draw();
    return data.token;
  }

  // the token to sit at a rated table with, asking for a name first when there is none (null: none)
  async function ensure() {
    if (token()) return token();
    const name = (prompt(t("player.ask_name")) || "").trim();
    if (!name) return null;
    try {
      return await register(name);
    } catch (e) {
      alert(t("player.failed", { error: serverText(e.message) }));
      return null;
    }
  }

  function setup() {
    $("register").addEventListener("click", async () => {
      const name = $("player-name").value.trim();
      if (!name) return $("player-name").focus();
      try {
        await register(name);
      } catch (e) {
        alert(t("player.failed", { error: serverText(e.message) }));
      }
    });
    draw();
    refresh();
  }

  return { token, refresh, ensure, setup };
})();

// The ladder (GET /api/ladder): people by rating, and the AI levels at their fixed ratings with the
// arena results they were fitted from. A panel above the rest; #ladder in the address opens it.
const Ladder = (() => {
  function row(tag, cells) {
    const tr = el("tr");
    for (const c of cells) tr.append(el(tag, { text: c }));
    return tr;
  }

  function draw(data) {
    const people = $("ladder-players");
    people.replaceChildren(row("th", [t("ladder.col_rank"), t("ladder.col_name"), t("ladder.col_rating"), t("ladder.col_rd"), t("ladder.col_games")]));
    for (const p of data.players) {
      const tr = row("td", [num(p.rank), p.name, num(Math.round(p.rating)), num(Math.round(p.rd)), num(p.games)]);
      tr.setAttribute("data-name", p.name);
      tr.setAttribute("data-rating", String(p.rating));
      people.append(tr);
    }
    people.hidden = !data.players.length;
    $("ladder-empty").hidden = data.players.length > 0;
    const ai = $("ladder-ai");
    ai.replaceChildren(row("th", [t("ladder.col_level"), t("ladder.col_rating"), t("ladder.col_rd"), t("ladder.col_hands")]));
    for (const l of data.ai.levels) {
      const tr = row("td", [levelName(l.level), num(Math.round(l.rating)), num(Math.round(l.rd)), num(l.hands)]);
      tr.setAttribute("data-level", l.level);
      ai.append(tr);
    }
    ai.hidden = !data.ai.levels.length;
    const sep = t("list.comma");
    $("ladder-unrated").textContent = data.ai.unrated.length ? t("ladder.unrated", { levels: data.ai.unrated.map(levelName).join(sep) }) : "";
    const src = data.ai.source;
    $("ladder-source").textContent = t("ladder.source", { folders: src.folders.map(signed).join(sep), anchor: levelName(src.anchor), rating: Math.round(src.anchor_rating) });
  }

  async function open() {
    $("ladder").hidden = false;
    try {
      draw(await api("GET", "/api/ladder", undefined, null));
      $("ladder").setAttribute("data-loaded", String(Date.now()));
    } catch (e) {
      $("ladder-source").textContent = t("ladder.failed", { error: serverText(e.message) });
    }
    $("ladder").scrollIntoView();
  }

  function setup() {
    $("show-ladder").addEventListener("click", open);
    $("close-ladder").addEventListener("click", () => {
      $("ladder").hidden = true;
    });
    if (location.hash === "#ladder") open();
  }

  return { open, setup };
})();
