// The page's words for tables of two people, by key: one plain object per language. Every new
// user-visible string goes through t("key"); elements written in index.html carry data-t="key"
// and get their text from here when the page loads. (Persian is to be added as STRINGS.fa.)
"use strict";

const STRINGS = {
  en: {
    "friend.heading": "Play a friend",
    "friend.intro": "Open a table with the rules above, send the invite link to a friend, and play each other live.",
    "friend.clock": "Move clock",
    "friend.clock.none": "none",
    "friend.clock.seconds": "{n} seconds a move",
    "friend.open": "Open a table",
    "invite.heading": "Invite a friend",
    "invite.text": "Send this link to the person you want to play. It works once: whoever opens it first takes the seat.",
    "invite.copy": "Copy link",
    "invite.copied": "Copied.",
    "invite.copy_failed": "Select the link and copy it by hand.",
    "invite.waiting": "Waiting for your friend to join…",
    "invite.seat_ai": "Let the AI take the seat",
    "table.joined": "Your friend is here. The game starts.",
    "table.joining": "Joining the table…",
    "table.join_failed": "Could not join: {error}",
    "table.open_failed": "Could not open a table: {error}",
    "table.gone": "This table is no longer open to you.",
    "table.your_turn": "Your turn.",
    "table.their_turn": "Your friend is thinking…",
    "table.ai_turn": "The AI is playing your friend's seat.",
    "table.leave": "Leave the table to the AI",
    "table.left": "You left the table; the AI plays your seat.",
    "table.friend": "Your friend",
    "table.friend_short": "Friend",
    "table.ai_named": "AI: {level}",
    "table.you_win_hand": "You win the hand",
    "table.they_win_hand": "Your friend wins the hand",
    "table.ai_wins_hand": "The AI wins the hand",
    "table.you_win_match": "You win the match!",
    "table.they_win_match": "Your friend wins the match",
    "table.ai_wins_match": "The AI wins the match",
    "table.tie": "A tie",
    "table.hand_over": "Hand {n} is over",
    "table.timeout_you": "You ran out of time: the hand is lost.",
    "table.timeout_them": "Your friend ran out of time: the hand is yours.",
    "live.reconnecting": "Connection lost: reconnecting…",
    "live.back": "Connected again.",
    "clock.you": "Your clock: {s} s",
    "clock.them": "Their clock: {s} s",
  },
};

// the language of the page: English until another is added
const LANG = "en";

// the string of `key`, with {name} replaced by vars.name; an unknown key shows itself
function t(key, vars) {
  const s = (STRINGS[LANG] && STRINGS[LANG][key]) || STRINGS.en[key] || key;
  return vars ? s.replace(/\{(\w+)\}/g, (_, k) => String(vars[k])) : s;
}

function applyStrings(root) {
  for (const e of root.querySelectorAll("[data-t]")) e.textContent = t(e.getAttribute("data-t"));
}
