// The page's words, by key: STRINGS.en and STRINGS.fa hold the same keys (a test checks it).
// Every user-visible string goes through t("key"); elements written in index.html carry
// data-t="key" and get their text from here when the page loads. Numbers go through num(), which
// writes Persian digits (۰-۹) when the page is in Persian. The language follows the browser
// (navigator.languages: fa* is Persian, anything else English) unless the switch in the header
// chose one, kept in localStorage under "pasur-lang".
"use strict";

const STRINGS = {
  en: {
    "page.title": "Pasur: play against the AI",
    "page.name": "Pasur",
    "page.tagline": "the Iranian fishing game: make 11, clear the pool, take the clubs",
    "lang.switch": "Language",
    "game.new": "New game",
    "setup.heading": "New game",
    "setup.opponent": "Opponent",
    "setup.seat": "Your seat",
    "setup.seat_alex": "Alex (leads every round)",
    "setup.seat_bob": "Bob (plays second)",
    "setup.play": "Play",
    "setup.one_hand": "one hand",
    "setup.match_to": "a match to",
    "setup.points": "points",
    "setup.rules": "Match rules",
    "setup.sur_cancellation": "Sur cancellation (a Sur cancels one of the opponent's)",
    "setup.fifty_rule": "50-point rule (no Surs for a player at 50 or more; matches only)",
    "setup.deal": "Deal",
    "rules.summary":
      "Rules: a numeric card takes cards that make 11 with it; a Jack takes every numeric card and Jack; " +
      "a Queen or King takes one of its kind. Clearing the pool (not with a Jack, not in the last round) " +
      "is a Sur: 5 points. Aces and Jacks 1, 2♣ 2, 10♦ 3, 7 clubs or more 7.",
    "level.random": "random",
    "level.greedy": "greedy",
    "level.heuristic": "heuristic",
    "level.pimc": "pimc",
    "level.best": "best",
    "seat.alex": "Alex",
    "seat.bob": "Bob",
    "suit.clubs": "clubs",
    "suit.diamonds": "diamonds",
    "suit.hearts": "hearts",
    "suit.spades": "spades",
    "rank.jack": "Jack",
    "rank.queen": "Queen",
    "rank.king": "King",
    "rank.ace": "Ace",
    "rank.jack_short": "J",
    "rank.queen_short": "Q",
    "rank.king_short": "K",
    "rank.ace_short": "A",
    "card.name": "{rank} of {suit}",
    "move.lay": "lay {card}",
    "move.take": "{card} takes {cards}",
    "move.sur": "{move} (Sur!)",
    "list.sep": " ",
    "opp.ai_short": "AI",
    "opp.ai_subject": "The AI",
    "opp.ai_object": "the AI",
    "player.you": "You ({seat})",
    "player.other": "{name} ({seat})",
    "player.ai_level": "AI: {level}",
    "player.you_short": "You",
    "player.you_object": "you",
    "stat.points": "points",
    "stat.surs": "Surs",
    "stat.captured": "captured",
    "stat.clubs": "clubs",
    "surs.scored": "{made} ({scored} scored)",
    "board.round": "Round",
    "board.round_of": "{round} of {rounds}",
    "board.to_deal": "Cards left to deal",
    "board.level": "Level",
    "board.hand": "Hand",
    "board.match": "Match",
    "board.match_score": "you {you} – {opp} {ai} (to {target})",
    "board.sur_cancellation": "Sur cancellation",
    "board.fifty_rule": "50-point rule",
    "board.rules_sep": ", ",
    "table.pool": "Pool",
    "table.pool_empty": "(empty)",
    "table.your_hand": "Your hand",
    "table.play": "Play",
    "table.play_move": "Play: {move}",
    "table.choose_takes": "Choose the cards to take",
    "table.hint": "Hint",
    "table.thinking": "Thinking…",
    "table.history": "Moves so far",
    "table.said": "{who}: {move}",
    "table.welcome_back": "Welcome back: your game goes on.",
    "count.card_one": "{n} card",
    "count.card_other": "{n} cards",
    "count.club_one": "{n} club",
    "count.club_other": "{n} clubs",
    "summary.captured": "Captured: you {you_cards} ({you_clubs}), {opp} {ai_cards} ({ai_clubs}).",
    "summary.sweep_one": "The last card of the pool went to {who}, the last to capture.",
    "summary.sweep_other": "The last {n} cards of the pool went to {who}, the last to capture.",
    "summary.match": "Match: you {you}, {opp} {ai} (to {target}).",
    "hint.move": "move",
    "hint.margin": "expected final margin ({level})",
    "hint.explain": "Your points minus the AI's at the end, as the AI estimates it from what you can see:",
    "result.you_win_hand": "You win the hand",
    "result.ai_wins_hand": "The AI wins the hand",
    "result.tie": "A tie",
    "result.you_win_match": "You win the match!",
    "result.ai_wins_match": "The AI wins the match",
    "result.hand_over": "Hand {n} is over",
    "result.cards_clubs": "cards and clubs",
    "result.surs_made": "Surs made",
    "result.surs_void": "Surs void (50-point rule)",
    "result.surs_cancelled": "Surs cancelled",
    "result.surs_scored": "Surs scored (5 each)",
    "result.points": "points",
    "result.next_hand": "Next hand",
    "result.show_replay": "Replay with every card open",
    "replay.solving": "Solving the deal with every card open…",
    "replay.unavailable": "Replay unavailable: {error}",
    "replay.heading": "Replay: every card open",
    "replay.summary":
      "With every card open, optimal play by both from the deal gives you {value}. " +
      "Your {mine} moves cost {cost} points against open-hand optimal play ({mistakes} not optimal); " +
      "{opp}'s cost {ai_cost}. Deck: {deck}",
    "replay.col_n": "#",
    "replay.col_stage": "stage",
    "replay.col_who": "who",
    "replay.col_pool": "pool",
    "replay.col_your_hand": "your hand",
    "replay.col_their_hand": "{opp}'s hand",
    "replay.col_move": "move played",
    "replay.col_best": "open-hand best",
    "replay.col_cost": "cost",
    "replay.same": "same",
    "error.start": "Could not start: {error}",
    "error.server": "{error}",
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
    "table.friend_object": "your friend",
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
    "server.no_game": "no such game",
    "server.no_table": "no such table",
    "server.not_your_turn": "it is not your turn",
    "server.damaged": "this game's record is damaged",
    "server.internal": "internal error",
    "server.game_changed": "the game changed meanwhile (another tab?); reload it",
    "server.table_changed": "the table changed meanwhile; reload it",
    "server.hand_over_game": "the hand is over: start the next hand or a new game",
    "server.hand_over_table": "the hand is over: deal the next hand or open a new table",
    "server.stale_game": "this hand has {played} moves, not {expected}: reload the game",
    "server.stale_table": "this hand has {played} moves, not {expected}: reload the table",
    "server.hint_turn": "a hint is given when it is your turn",
    "server.next_when": "the next hand is dealt when a hand of an unfinished match is over",
    "server.replay_when": "the replay opens when the hand is over",
    "server.seat_empty": "the other seat is still empty: wait for your friend or give it to the AI",
    "server.seats_taken": "both seats are taken",
    "server.hello": "say hello with the table's token",
    "server.unknown_message": "unknown message",
    "server.not_in_hand": "illegal move: {card} is not in your hand",
    "server.rated_self": "a player cannot play a rated match against themselves",
    "server.rated_hints": "hints are off at rated tables",
    "server.rated_leave": "a rated match is played to its end: it cannot be left to the AI",
    "server.other": "{error}",
  },
  fa: {
    "page.title": "پاسور: بازی با هوش مصنوعی",
    "page.name": "پاسور",
    "page.tagline": "بازی ورق ایرانی: یازده بساز، زمین را پاک کن، خاج‌ها را ببر",
    "lang.switch": "زبان",
    "game.new": "بازی تازه",
    "setup.heading": "بازی تازه",
    "setup.opponent": "حریف",
    "setup.seat": "جای شما",
    "setup.seat_alex": "الکس (هر دور را شروع می‌کند)",
    "setup.seat_bob": "باب (دوم بازی می‌کند)",
    "setup.play": "بازی",
    "setup.one_hand": "یک دست",
    "setup.match_to": "یک مسابقه تا",
    "setup.points": "امتیاز",
    "setup.rules": "قواعد مسابقه",
    "setup.sur_cancellation": "خنثی شدن سور (هر سور یکی از سورهای حریف را خنثی می‌کند)",
    "setup.fifty_rule": "قاعدهٔ ۵۰ امتیاز (بازیکنی که ۵۰ امتیاز یا بیشتر دارد سور نمی‌گیرد؛ فقط در مسابقه)",
    "setup.deal": "پخش کن",
    "rules.summary":
      "قواعد: کارت عددی کارت‌هایی را می‌برد که با آن ۱۱ شوند؛ سرباز همهٔ کارت‌های عددی و سربازها را می‌برد؛ " +
      "بی‌بی یک بی‌بی و شاه یک شاه را می‌برد. پاک کردن زمین (نه با سرباز، نه در دور آخر) سور است: ۵ امتیاز. " +
      "هر آس و هر سرباز ۱، دوی خاج ۲، دهِ خشت ۳، هفت خاج یا بیشتر ۷ امتیاز.",
    "level.random": "تصادفی",
    "level.greedy": "حریص",
    "level.heuristic": "قاعده‌مند",
    "level.pimc": "جست‌وجوگر",
    "level.best": "بهترین",
    "seat.alex": "الکس",
    "seat.bob": "باب",
    "suit.clubs": "خاج",
    "suit.diamonds": "خشت",
    "suit.hearts": "دل",
    "suit.spades": "پیک",
    "rank.jack": "سرباز",
    "rank.queen": "بی‌بی",
    "rank.king": "شاه",
    "rank.ace": "آس",
    "rank.jack_short": "س",
    "rank.queen_short": "ب",
    "rank.king_short": "ش",
    "rank.ace_short": "آ",
    "card.name": "{rank} {suit}",
    "move.lay": "{card} به زمین",
    "move.take": "{card} می‌برد: {cards}",
    "move.sur": "{move} (سور!)",
    "list.sep": "، ",
    "opp.ai_short": "هوش مصنوعی",
    "opp.ai_subject": "هوش مصنوعی",
    "opp.ai_object": "هوش مصنوعی",
    "player.you": "شما ({seat})",
    "player.other": "{name} ({seat})",
    "player.ai_level": "هوش مصنوعی: {level}",
    "player.you_short": "شما",
    "player.you_object": "شما",
    "stat.points": "امتیاز",
    "stat.surs": "سور",
    "stat.captured": "برداشته",
    "stat.clubs": "خاج",
    "surs.scored": "{made} ({scored} حساب شد)",
    "board.round": "دور",
    "board.round_of": "{round} از {rounds}",
    "board.to_deal": "کارت‌های مانده برای پخش",
    "board.level": "سطح",
    "board.hand": "دست",
    "board.match": "مسابقه",
    "board.match_score": "شما {you} – {opp} {ai} (تا {target})",
    "board.sur_cancellation": "خنثی شدن سور",
    "board.fifty_rule": "قاعدهٔ ۵۰ امتیاز",
    "board.rules_sep": "، ",
    "table.pool": "زمین",
    "table.pool_empty": "(خالی)",
    "table.your_hand": "دست شما",
    "table.play": "بازی کن",
    "table.play_move": "بازی کن: {move}",
    "table.choose_takes": "کارت‌هایی را که می‌برید انتخاب کنید",
    "table.hint": "راهنمایی",
    "table.thinking": "در حال فکر…",
    "table.history": "حرکت‌های تا اینجا",
    "table.said": "{who}: {move}",
    "table.welcome_back": "خوش برگشتید: بازی‌تان ادامه دارد.",
    "count.card_one": "{n} کارت",
    "count.card_other": "{n} کارت",
    "count.club_one": "{n} خاج",
    "count.club_other": "{n} خاج",
    "summary.captured": "برداشته‌ها: شما {you_cards} ({you_clubs})، {opp} {ai_cards} ({ai_clubs}).",
    "summary.sweep_one": "آخرین کارت زمین به {who} رسید که آخرین برداشت را کرده بود.",
    "summary.sweep_other": "{n} کارت آخر زمین به {who} رسید که آخرین برداشت را کرده بود.",
    "summary.match": "مسابقه: شما {you}، {opp} {ai} (تا {target}).",
    "hint.move": "حرکت",
    "hint.margin": "اختلاف پایانی پیش‌بینی‌شده ({level})",
    "hint.explain": "امتیاز شما منهای امتیاز هوش مصنوعی در پایان، آن‌طور که هوش مصنوعی از آنچه شما می‌بینید برآورد می‌کند:",
    "result.you_win_hand": "این دست را بردید",
    "result.ai_wins_hand": "هوش مصنوعی این دست را برد",
    "result.tie": "مساوی",
    "result.you_win_match": "مسابقه را بردید!",
    "result.ai_wins_match": "هوش مصنوعی مسابقه را برد",
    "result.hand_over": "دست {n} تمام شد",
    "result.cards_clubs": "کارت‌ها و خاج",
    "result.surs_made": "سورهای گرفته‌شده",
    "result.surs_void": "سورهای باطل (قاعدهٔ ۵۰ امتیاز)",
    "result.surs_cancelled": "سورهای خنثی‌شده",
    "result.surs_scored": "سورهای حساب‌شده (هر کدام ۵)",
    "result.points": "امتیاز",
    "result.next_hand": "دست بعد",
    "result.show_replay": "بازبینی با همهٔ کارت‌های رو",
    "replay.solving": "حل کردن بازی با همهٔ کارت‌های رو…",
    "replay.unavailable": "بازبینی در دسترس نیست: {error}",
    "replay.heading": "بازبینی: همهٔ کارت‌ها رو",
    "replay.summary":
      "با همهٔ کارت‌های رو، بازی بهینهٔ هر دو از پخش به بعد برای شما {value} می‌دهد. " +
      "{mine} حرکت شما در برابر بازی بهینه با دست‌های باز {cost} امتیاز هزینه داشت ({mistakes} حرکت غیربهینه)؛ " +
      "هزینهٔ {opp} {ai_cost}. دسته: {deck}",
    "replay.col_n": "#",
    "replay.col_stage": "مرحله",
    "replay.col_who": "بازیکن",
    "replay.col_pool": "زمین",
    "replay.col_your_hand": "دست شما",
    "replay.col_their_hand": "دست {opp}",
    "replay.col_move": "حرکت انجام‌شده",
    "replay.col_best": "بهترین با دست باز",
    "replay.col_cost": "هزینه",
    "replay.same": "همان",
    "error.start": "شروع نشد: {error}",
    "error.server": "{error}",
    "friend.heading": "بازی با یک دوست",
    "friend.intro": "با قواعد بالا یک میز باز کنید، پیوند دعوت را برای دوستتان بفرستید و زنده با هم بازی کنید.",
    "friend.clock": "ساعت هر حرکت",
    "friend.clock.none": "بدون ساعت",
    "friend.clock.seconds": "{n} ثانیه برای هر حرکت",
    "friend.open": "باز کردن میز",
    "invite.heading": "دعوت از یک دوست",
    "invite.text": "این پیوند را برای کسی که می‌خواهید با او بازی کنید بفرستید. فقط یک بار کار می‌کند: هر کس اول بازش کند جای خالی را می‌گیرد.",
    "invite.copy": "رونوشت پیوند",
    "invite.copied": "رونوشت شد.",
    "invite.copy_failed": "پیوند را انتخاب کنید و خودتان رونوشت بگیرید.",
    "invite.waiting": "در انتظار آمدن دوستتان…",
    "invite.seat_ai": "جای خالی را به هوش مصنوعی بده",
    "table.joined": "دوستتان آمد. بازی شروع می‌شود.",
    "table.joining": "پیوستن به میز…",
    "table.join_failed": "پیوستن ممکن نشد: {error}",
    "table.open_failed": "باز کردن میز ممکن نشد: {error}",
    "table.gone": "این میز دیگر برای شما باز نیست.",
    "table.your_turn": "نوبت شماست.",
    "table.their_turn": "دوستتان در حال فکر است…",
    "table.ai_turn": "هوش مصنوعی به جای دوستتان بازی می‌کند.",
    "table.leave": "میز را به هوش مصنوعی بسپار",
    "table.left": "میز را ترک کردید؛ هوش مصنوعی به جای شما بازی می‌کند.",
    "table.friend": "دوستتان",
    "table.friend_object": "دوستتان",
    "table.friend_short": "دوست",
    "table.ai_named": "هوش مصنوعی: {level}",
    "table.you_win_hand": "این دست را بردید",
    "table.they_win_hand": "دوستتان این دست را برد",
    "table.ai_wins_hand": "هوش مصنوعی این دست را برد",
    "table.you_win_match": "مسابقه را بردید!",
    "table.they_win_match": "دوستتان مسابقه را برد",
    "table.ai_wins_match": "هوش مصنوعی مسابقه را برد",
    "table.tie": "مساوی",
    "table.hand_over": "دست {n} تمام شد",
    "table.timeout_you": "وقتتان تمام شد: این دست را باختید.",
    "table.timeout_them": "وقت دوستتان تمام شد: این دست مال شماست.",
    "live.reconnecting": "اتصال قطع شد: در حال وصل شدن دوباره…",
    "live.back": "دوباره وصل شدیم.",
    "clock.you": "ساعت شما: {s} ثانیه",
    "clock.them": "ساعت حریف: {s} ثانیه",
    "server.no_game": "چنین بازی‌ای نیست",
    "server.no_table": "چنین میزی نیست",
    "server.not_your_turn": "نوبت شما نیست",
    "server.damaged": "پروندهٔ این بازی آسیب دیده است",
    "server.internal": "خطای داخلی سرور",
    "server.game_changed": "بازی در این میان تغییر کرد (زبانهٔ دیگری؟)؛ صفحه را دوباره بار کنید",
    "server.table_changed": "میز در این میان تغییر کرد؛ صفحه را دوباره بار کنید",
    "server.hand_over_game": "این دست تمام شده است: دست بعد یا بازی تازه‌ای را شروع کنید",
    "server.hand_over_table": "این دست تمام شده است: دست بعد را پخش کنید یا میز تازه‌ای باز کنید",
    "server.stale_game": "این دست {played} حرکت دارد، نه {expected}: بازی را دوباره بار کنید",
    "server.stale_table": "این دست {played} حرکت دارد، نه {expected}: میز را دوباره بار کنید",
    "server.hint_turn": "راهنمایی فقط در نوبت شما داده می‌شود",
    "server.next_when": "دست بعد وقتی پخش می‌شود که دستی از مسابقهٔ ناتمام تمام شده باشد",
    "server.replay_when": "بازبینی وقتی باز می‌شود که دست تمام شده باشد",
    "server.seat_empty": "جای دیگر هنوز خالی است: منتظر دوستتان بمانید یا آن را به هوش مصنوعی بدهید",
    "server.seats_taken": "هر دو جا گرفته شده‌اند",
    "server.hello": "با نشانهٔ میز سلام کنید",
    "server.unknown_message": "پیام ناشناخته",
    "server.not_in_hand": "حرکت نادرست: {card} در دست شما نیست",
    "server.rated_self": "بازیکن نمی‌تواند در مسابقهٔ رتبه‌دار با خودش بازی کند",
    "server.rated_hints": "در میزهای رتبه‌دار راهنمایی خاموش است",
    "server.rated_leave": "مسابقهٔ رتبه‌دار تا پایان بازی می‌شود: نمی‌توان آن را به هوش مصنوعی سپرد",
    "server.other": "پیام سرور (به انگلیسی): {error}",
  },
};

const LANG_KEY = "pasur-lang";

// the language of the page: the switch's choice, else the browser's (fa* is Persian), else English
function pickLang() {
  try {
    const saved = localStorage.getItem(LANG_KEY);
    if (saved === "en" || saved === "fa") return saved;
  } catch (e) {
    // no storage (a private window, or a script run outside a browser): the browser decides
  }
  const langs = typeof navigator === "undefined" ? [] : navigator.languages || [navigator.language];
  return /^fa\b/i.test((langs && langs[0]) || "") ? "fa" : "en";
}

let LANG = pickLang();

// use `lang` without keeping it (the tests under Node)
function useLang(lang) {
  LANG = lang === "fa" ? "fa" : "en";
  return LANG;
}

// the switch: keep the choice and draw the page again in it (the game is the server's: it resumes)
function setLang(lang) {
  localStorage.setItem(LANG_KEY, lang === "fa" ? "fa" : "en");
  location.reload();
}

const FA_DIGITS = "۰۱۲۳۴۵۶۷۸۹";

// a number (or a text of digits) in the page's language: Persian digits in Persian
function num(x) {
  const s = String(x);
  return LANG === "fa" ? s.replace(/[0-9]/g, (d) => FA_DIGITS[Number(d)]) : s;
}

// a number with `places` decimals (a sign for a negative one): the Persian decimal separator in Persian
function dec(x, places) {
  const s = x.toFixed(places);
  return LANG === "fa" ? num(s).replace(".", "٫") : s;
}

// a signed number ("+3.08", "−0.50") kept left to right inside Persian text, its sign before it
// (an isolate: U+2066 ... U+2069, invisible)
function signed(text) {
  return LANG === "fa" ? "\u2066" + text + "\u2069" : text;
}

// the string of `key`, with {name} replaced by vars.name (numbers written by num); an unknown key
// shows itself
function t(key, vars) {
  const s = (STRINGS[LANG] && STRINGS[LANG][key]) || STRINGS.en[key] || key;
  return vars ? s.replace(/\{(\w+)\}/g, (_, k) => (typeof vars[k] === "number" ? num(vars[k]) : String(vars[k]))) : s;
}

// the server's error messages: the known ones (matched on their English text) translated, others
// shown as they came with a note that they are the server's English
const SERVER_ERRORS = {
  "no such game": "server.no_game",
  "no such table": "server.no_table",
  "it is not your turn": "server.not_your_turn",
  "this game's record is damaged": "server.damaged",
  "internal error": "server.internal",
  "the game changed meanwhile (another tab?); reload it": "server.game_changed",
  "the table changed meanwhile; reload it": "server.table_changed",
  "the hand is over: start the next hand or a new game": "server.hand_over_game",
  "the hand is over: deal the next hand or open a new table": "server.hand_over_table",
  "a hint is given when it is your turn": "server.hint_turn",
  "the next hand is dealt when a hand of an unfinished match is over": "server.next_when",
  "the replay opens when the hand is over": "server.replay_when",
  "the other seat is still empty: wait for your friend or give it to the AI": "server.seat_empty",
  "both seats are taken": "server.seats_taken",
  "say hello with the table's token": "server.hello",
  "unknown message": "server.unknown_message",
  "a player cannot play a rated match against themselves": "server.rated_self",
  "hints are off at rated tables": "server.rated_hints",
  "a rated match is played to its end: it cannot be left to the AI": "server.rated_leave",
};

function serverText(message) {
  const msg = String(message || "");
  if (SERVER_ERRORS[msg]) return t(SERVER_ERRORS[msg]);
  const stale = /^this hand has (\d+) moves, not (\d+): reload the (game|table)$/.exec(msg);
  if (stale) return t(stale[3] === "game" ? "server.stale_game" : "server.stale_table", { played: Number(stale[1]), expected: Number(stale[2]) });
  const gone = /^illegal move: (\S+) is not in your hand$/.exec(msg);
  if (gone) return t("server.not_in_hand", { card: num(gone[1]) });
  return LANG === "en" ? t("error.server", { error: msg }) : t("server.other", { error: msg });
}

// the words of index.html (elements with data-t), the page's language and direction
function applyStrings(root) {
  for (const e of root.querySelectorAll("[data-t]")) e.textContent = t(e.getAttribute("data-t"));
  const html = root.documentElement;
  if (html) {
    html.lang = LANG;
    html.dir = LANG === "fa" ? "rtl" : "ltr";
  }
}
