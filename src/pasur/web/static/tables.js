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
  const SOUND_KEY = "pasur-turn-sound"; // "1": a short tone when it becomes your turn in a background tab
  let table = null; // { id, token }
  let socket = null;
  let retries = 0;
  let queue = Promise.resolve(); // messages are shown one after another, in order
  let clock = null; // { left, at, to }
  let shownOver = null; // the hand whose end is on screen
  let wasWaiting = false; // the last view had the other seat open
  let baseTitle = ""; // the page's title, put back when the tab is seen again

  const active = () => table !== null;
  const path = () => `/api/tables/${table.id}`;

  function remember(id, token, link) {
    table = { id, token, link };
    game = { id, token }; // app.js sends game.token with every request
    localStorage.setItem(KEY, JSON.stringify(table));
    if (typeof rememberGame === "function") rememberGame({ id, token }, "table"); // listed in My games (app.js)
  }

  // the table this browser sits at, as kept in localStorage (shared by its tabs), or null
  function saved() {
    try {
      const s = JSON.parse(localStorage.getItem(KEY) || "null");
      return s && typeof s.id === "string" && typeof s.token === "string" ? s : null;
    } catch (e) {
      return null;
    }
  }

  function closeSocket() {
    if (socket) {
      const s = socket;
      socket = null; // closed on purpose: no reconnection
      s.close();
    }
  }

  function forgetTable() {
    table = null;
    clock = null;
    shownOver = null;
    wasWaiting = false;
    localStorage.removeItem(KEY);
    closeSocket();
    $("invite-panel").hidden = true;
    $("live-banner").hidden = true;
    $("clock").hidden = true;
    $("leave-table").hidden = true;
    $("resign").hidden = true;
    $("turn-sound-box").hidden = true;
    $("rematch").hidden = true;
    $("rating-change").hidden = true;
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
      const data = await api("POST", "/api/tables", body, null);
      // the link says the table is rated, so the friend's page asks for a name before joining
      const link = `${location.origin}${location.pathname}#table=${encodeURIComponent(data.id)}&invite=${encodeURIComponent(data.invite)}${rated ? "&rated=1" : ""}`;
      remember(data.id, data.token, link); // the link is kept to be shown again after a reload
      $("invite-link").value = link;
      showCode(data.join_code);
      $("invite-panel").hidden = false;
      connect();
    } catch (e) {
      alert(t("table.open_failed", { error: serverText(e.message) }));
    } finally {
      busy = false;
    }
  }

  function showCode(code) {
    const line = $("join-code");
    line.hidden = !code;
    line.setAttribute("data-code", code || "");
    line.textContent = code ? t("invite.code", { code: signed(code) }) : "";
  }

  // join by an invite (or a join code): the token this browser holds for that table goes along, so
  // that the server refuses (409) a person who would take the other seat of their own table
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
    const mine = table && table.id === id ? table : saved();
    say(t("table.joining"));
    try {
      const data = await api("POST", `/api/tables/${encodeURIComponent(id)}/join`, body, mine && mine.id === id ? mine.token : null);
      closeSocket();
      remember(data.id, data.token);
      connect();
      return true;
    } catch (e) {
      if (e.status === 409 && mine && mine.id === id) {
        say(t("table.own_invite"), true);
        if (!active()) reopen(mine);
        return true;
      }
      alert(t("table.join_failed", { error: serverText(e.message) }));
      return false;
    }
  }

  async function joinByCode() {
    const code = $("join-code-input").value.trim();
    if (!code) return $("join-code-input").focus();
    try {
      const found = await api("GET", `/api/tables/by-code/${encodeURIComponent(code)}`, undefined, null);
      if (table && table.id !== found.id && !(await leaveForNew())) return;
      await join(found.id, found.invite, found.rated);
    } catch (e) {
      alert(t("table.join_failed", { error: serverText(e.message) }));
    }
  }

  // an invite opened in a tab that already shows the page: only the part after # changed
  async function onHash() {
    if (location.hash === "#ladder") return Ladder.open();
    const hash = new URLSearchParams(location.hash.slice(1));
    if (!hash.has("table") || !hash.has("invite")) return;
    const id = hash.get("table");
    if (table && table.id !== id && !(await leaveForNew())) {
      history.replaceState(null, "", location.pathname + location.search);
      return;
    }
    await join(id, hash.get("invite"), hash.get("rated") === "1");
  }

  function banner(key) {
    $("live-banner").hidden = false;
    $("live-text").textContent = t(key);
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
      banner(navigator.onLine === false ? "live.offline" : "live.reconnecting");
      const wait = Math.min(5000, 300 * 2 ** retries);
      retries += 1;
      setTimeout(() => {
        if (socket === s && table) connect();
      }, wait);
    });
  }

  // the banner's button, and the browser back online: connect again at once
  function retryNow() {
    if (!table) return;
    retries = 0;
    closeSocket();
    banner("live.reconnecting");
    connect();
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
    if (data.rematch && data.rematch.id) return startRematch(data.rematch.id);
    const waiting = data.status === "waiting";
    const joinedNow = wasWaiting && !waiting;
    wasWaiting = waiting;
    $("invite-panel").hidden = !waiting;
    if (waiting) showCode(data.join_code);
    const inMatch = data.status === "playing" || data.status === "hand_over";
    $("leave-table").hidden = waiting || data.status === "over" || Boolean(data.rated); // a rated match is played out
    $("resign").hidden = !inMatch;
    $("turn-sound-box").hidden = false;
    clock = data.clock.per_move_s ? { left: data.clock.left_s, at: Date.now(), to: data.clock.to_move } : null;
    tick();
    const overKey = `${data.hand_number}:${data.status}`;
    if (data.status !== "playing" && !waiting && shownOver === overKey && !data.steps.length) {
      view = data; // the same end of hand again (a sync, a reconnect, a rematch asked): nothing new to show
      render();
      drawEnd(data);
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
    if (data.status === "playing") {
      say(joinedNow ? `${t("table.joined")} ${turnText()}` : turnText());
      if (view.hand.to_move === "you") notifyTurn();
    } else {
      shownOver = overKey;
      drawEnd(data);
      if (data.rated && data.status === "over") Players.refresh(); // the match is rated: the new rating
      if (data.result && data.result.timeout) say(t(data.result.timeout === "you" ? "table.timeout_you" : "table.timeout_them"));
      if (data.result && data.result.abandoned) say(t(data.result.abandoned === "you" ? "table.abandoned_you" : "table.abandoned_them"));
      if (data.result && data.result.resigned) say(t(data.result.resigned === "you" ? "table.resigned_you" : "table.resigned_them", { who: other("subject") }));
    }
  }

  // the end of a match: the rating change, and the rematch (asked, offered, or to ask)
  function drawEnd(data) {
    const over = data.status === "over";
    const change = over ? data.rating_change : null;
    const box = $("rating-change");
    box.hidden = !change;
    if (change) {
      const lines = [ratingLine(change.you, "table.rating_you", {})];
      if (change.ai) lines.push(ratingLine(change.ai, "table.rating_them", { who: other("subject") }));
      box.textContent = lines.join(" ");
      box.setAttribute("data-after", String(change.you.after));
    }
    const offer = data.rematch || { you: false, ai: false, id: null };
    const btn = $("rematch");
    btn.hidden = !over || data.opponent.kind === "open" || offer.you;
    btn.textContent = t(offer.ai ? "table.rematch_accept" : "table.rematch");
    if (over && offer.you) say(t("table.rematch_waiting", { who: other("object") }));
    else if (over && offer.ai) say(t("table.rematch_offered", { who: other("subject") }));
  }

  function ratingLine(c, key, vars) {
    const before = Math.round(c.before);
    const after = Math.round(c.after);
    const d = after - before;
    const delta = signed((d > 0 ? "+" : d < 0 ? "−" : "±") + num(Math.abs(d)));
    return t(key, { ...vars, before, after, delta });
  }

  // both asked: the new table (the same tokens open it, seats swapped); this page moves there
  function startRematch(id) {
    closeSocket();
    shownOver = null;
    wasWaiting = false;
    remember(id, table.token);
    $("rematch").hidden = true;
    $("rating-change").hidden = true;
    show(["table"]);
    say(t("table.rematch_start"));
    connect();
  }

  function turnText() {
    if (view.hand.to_move === "you") return t("table.your_turn");
    return view.opponent.kind === "ai" ? t("table.ai_turn") : t("table.their_turn");
  }

  // your turn while the tab is in the background: the title says so (and a tone, if chosen)
  function notifyTurn() {
    if (!document.hidden) return;
    document.title = t("turn.title");
    if (localStorage.getItem(SOUND_KEY) === "1") tone();
  }

  function tone() {
    try {
      const ctx = new AudioContext();
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = 660;
      gain.gain.value = 0.08;
      osc.connect(gain).connect(ctx.destination);
      osc.onended = () => ctx.close();
      osc.start();
      osc.stop(ctx.currentTime + 0.25);
    } catch (e) {
      // no audio here: the title alone says it
    }
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

  // leave this table for another game, asking first; the seat is given up only when the server
  // took it (the AI plays it on), never on this page alone: a rated match refuses, and stays
  async function leaveForNew() {
    if (!table) return true;
    if (view && view.kind === "table" && view.id === table.id && view.status === "over") {
      forgetTable();
      return true;
    }
    const waiting = view && view.kind === "table" && view.status === "waiting";
    if (!confirm(t(waiting ? "table.new_confirm_waiting" : "table.new_confirm"))) return false;
    try {
      await api("POST", `${path()}/leave`, {}, table.token);
    } catch (e) {
      if (e.status !== 404) {
        say(t("table.kept", { error: serverText(e.message) }), true);
        return false;
      }
    }
    forgetTable();
    return true;
  }

  // app.js's New game at a table
  async function leave() {
    const wasPlaying = view && view.kind === "table" && view.status !== "over";
    if (!(await leaveForNew())) return;
    forget();
    if (wasPlaying) say(t("table.left"));
  }

  // Leave the table to the AI (an unrated table in play): asked too, and through the server
  async function leaveToAi() {
    await leave();
  }

  function resign() {
    if (!confirm(t("table.resign_confirm"))) return;
    send({ type: "resign" });
  }

  function rematch() {
    send({ type: "rematch" });
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

  // the table this browser sits at, again (a reload, or after one's own invite was refused)
  function reopen(s) {
    remember(s.id, s.token, s.link);
    $("invite-link").value = s.link || "";
    show(["table"]);
    connect();
    return true;
  }

  // at load: join by an invite link, or reconnect to the table this browser sits at
  async function resume() {
    const hash = new URLSearchParams(location.hash.slice(1));
    if (hash.has("table") && hash.has("invite") && (await join(hash.get("table"), hash.get("invite"), hash.get("rated") === "1"))) return true;
    const s = saved();
    if (!s) {
      localStorage.removeItem(KEY);
      return false;
    }
    return reopen(s);
  }

  // the controls this file adds to the page (index.html is shared): each with its words from t
  function addControls() {
    const code = el("p", { id: "join-code", class: "code" });
    code.hidden = true;
    $("copy-note").after(code);
    const byCode = el("div", { id: "code-join" });
    const input = el("input", { id: "join-code-input", type: "text", maxLength: 12, autocomplete: "off", spellcheck: false });
    input.setAttribute("autocapitalize", "characters");
    const label = el("label", {}, el("span", { text: t("friend.code_label") }), " ", input);
    byCode.append(label, " ", el("button", { id: "join-code-go", type: "button", class: "secondary", text: t("friend.code_join") }));
    $("open-table").after(byCode);
    const resignBtn = el("button", { id: "resign", type: "button", class: "secondary", text: t("table.resign") });
    resignBtn.hidden = true;
    $("leave-table").after(resignBtn);
    const sound = el("input", { id: "turn-sound", type: "checkbox" });
    sound.checked = localStorage.getItem(SOUND_KEY) === "1";
    const soundBox = el("label", { id: "turn-sound-box", class: "small" }, sound, " ", el("span", { text: t("turn.sound") }));
    soundBox.hidden = true;
    resignBtn.after(soundBox);
    const change = el("p", { id: "rating-change" });
    change.hidden = true;
    $("match-summary").after(change);
    const again = el("button", { id: "rematch", type: "button", text: t("table.rematch") });
    again.hidden = true;
    $("again").before(again);
    $("live-banner").replaceChildren(el("span", { id: "live-text" }), " ", el("button", { id: "live-retry", type: "button", class: "secondary", text: t("live.retry") }));
  }

  function setup() {
    applyStrings(document);
    baseTitle = document.title;
    addControls();
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
    $("leave-table").addEventListener("click", leaveToAi);
    $("resign").addEventListener("click", resign);
    $("rematch").addEventListener("click", rematch);
    $("join-code-go").addEventListener("click", joinByCode);
    $("join-code-input").addEventListener("keydown", (e) => e.key === "Enter" && joinByCode());
    $("live-retry").addEventListener("click", retryNow);
    $("turn-sound").addEventListener("change", () => localStorage.setItem(SOUND_KEY, $("turn-sound").checked ? "1" : "0"));
    $("table-rated").addEventListener("change", () => {
      if ($("table-rated").checked) $("mode-match").checked = true; // a rated table plays a match
    });
    window.addEventListener("hashchange", onHash);
    window.addEventListener("online", retryNow);
    window.addEventListener("offline", () => table && banner("live.offline"));
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden) document.title = baseTitle;
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
