// Tables for two people: open a table, invite a friend by link, play each other live over a
// WebSocket. The table is drawn by app.js (render, playSteps, handOver); this file opens, joins,
// keeps the socket (reconnecting after a drop or a reload: the token stays in localStorage, the
// server resends the whole view on hello), and shows the invite, the clock and the banner.
"use strict";

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
    if (params.has("seed")) body.seed = Number(params.get("seed"));
    busy = true;
    try {
      const data = await api("POST", "/api/tables", body);
      const link = `${location.origin}${location.pathname}#table=${encodeURIComponent(data.id)}&invite=${encodeURIComponent(data.invite)}`;
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

  async function join(id, invite) {
    history.replaceState(null, "", location.pathname + location.search); // the invite works once
    say(t("table.joining"));
    try {
      const data = await api("POST", `/api/tables/${encodeURIComponent(id)}/join`, { invite });
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
    s.addEventListener("open", () => s.send(JSON.stringify({ type: "hello", token: table.token })));
    s.addEventListener("message", (event) => {
      const msg = JSON.parse(event.data);
      queue = queue.then(() => receive(msg)).catch((e) => say(serverText(e.message), true));
    });
    s.addEventListener("close", () => {
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
    $("leave-table").hidden = waiting || data.status === "over";
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
      if (data.result && data.result.timeout) say(t(data.result.timeout === "you" ? "table.timeout_you" : "table.timeout_them"));
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
    if (!view || view.opponent.kind !== "ai") {
      return t(form === "short" ? "table.friend_short" : form === "subject" ? "table.friend" : "table.friend_object");
    }
    return form === "short" ? t("table.ai_named", { level: levelName(view.opponent.level) }) : t(OPP_KEYS[form]);
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
    if (hash.has("table") && hash.has("invite")) return join(hash.get("table"), hash.get("invite"));
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
    setInterval(tick, 500);
  }

  return { active, path, move, next, leave, other, title, resume, setup, forget: forgetTable };
})();
