/* The play page. Solo (/): one match against agents per browser tab (its id kept in
   sessionStorage). Room (/room): create a room, take a seat by its link, play people and
   agents, or watch; moves arrive live (server-sent events) and a seat's token is kept in
   localStorage, so a refresh or a closed tab keeps the seat. With hints on (the server's
   --hint-agent), "Hint" at the person's turn draws the reviewer's value of each legal move
   (review.js's bars; the suggested card lit in the hand) and "Review the match" opens the
   finished match's review page. Players are named (you, the others by their names);
   cards and moves are shown as pictures or words, never as codes. */
"use strict";

const KEY = "scopa-game";
const SEED_KEY = "scopa-game-seed";  // the ?seed= the tab's match was started with
const PARAMS = new URLSearchParams(location.search);
const DELAY = PARAMS.has("delay") ? Math.max(0, parseInt(PARAMS.get("delay"), 10) || 0) : 900;
let V = null;      // the view shown now
let LAST = null;   // the move shown as the last one
let LOG = [];      // every move of the match so far
let busy = false;  // a request or the agents' moves are being shown
const MODE = document.body.dataset.mode;  // "solo" or "room"
let ROOM = null;   // room mode: the room's id
let TOKEN = null;  // room mode: this seat's token (null: watching)
let STREAM = null; // room mode: the live connection (EventSource)
const HINTS = document.body.dataset.hints === "on";  // the server gives hints and reviews
let HINT = null;   // the hint shown (of match HINT.id after HINT.moves_played moves)
let HINTING = false;  // a hint is being asked for

function $(id) { return document.getElementById(id); }
function sleep(ms) { return new Promise((ok) => setTimeout(ok, ms)); }

async function api(method, path, body) {
  const init = { method, headers: { "Content-Type": "application/json" } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(path, init);
  let data;
  try { data = await r.json(); } catch (e) { data = { error: "the server answered " + r.status }; }
  if (!r.ok) throw new Error(data.error || "HTTP " + r.status);
  return data;
}

function showError(msg) {
  const e = $("error");
  e.textContent = msg || "";
  e.classList.toggle("hidden", !msg);
}

function base(v) { return v.seat === null ? 0 : v.seat; }

/** Where seat s sits on the board as this page shows it. */
function placeWords(s) { return placeWordsOf(s, base(V), V.players); }

/** A seat by name: "You", else its player's name (with where it sits when two seats
    have the same name). */
function seatLabel(s) {
  return V.seat !== null && s === V.seat ? "You" : nameOf(V.names, s, placeWords);
}

/** A team by its players: "You", "Bob"; four seats: "You and Carla", "Bob and Dan". */
function teamLabel(t) {
  if (V.players === 2) return seatLabel(t);
  const [a, b] = teamSeats(t, V.players);
  if (V.seat !== null && b === V.seat) return seatLabel(b) + " and " + seatLabel(a);
  return seatLabel(a) + " and " + seatLabel(b);
}

/** What seat s is to the person: "your partner", "your opponent on the right"… */
function relation(s) {
  if (V.seat === null) return placeWords(s);
  if (s === V.seat) return "you";
  if (V.players === 2) return "your opponent";
  return s % 2 === V.seat % 2 ? "your partner" : "your opponent " + placeWords(s);
}

let NOTICE_TIMER = null;
/** A short notice on the table ("Bob joined"), gone after a few seconds. */
function notice(text) {
  const n = $("notice");
  n.textContent = text;
  n.classList.remove("hidden");
  clearTimeout(NOTICE_TIMER);
  NOTICE_TIMER = setTimeout(() => n.classList.add("hidden"), 6000);
}

/** The card of the hint's suggested move, while the hint of this position is shown. */
function suggestedCard(v) {
  if (!hintShown(v)) return null;
  const best = HINT.moves[HINT.best];
  const move = best && v.legal.find((m) => m.id === best.id);
  return move ? move.card : null;
}

function renderSeats(v) {
  const board = $("board");
  board.classList.toggle("two", v.players === 2);
  for (const old of board.querySelectorAll(".seat")) old.remove();
  for (let s = 0; s < v.players; s++) {
    const box = el("div", "seat slot-" + slotOf(s, base(v), v.players));
    box.id = "seat-" + s;
    if (v.to_move === s && v.started !== false) box.classList.add("to-move");
    if (LAST && LAST.seat === s) box.classList.add("just-moved");
    const name = el("div", "seat-name", seatLabel(s));
    if (v.dealer === s) name.appendChild(el("span", "badge", "dealer"));
    box.appendChild(name);
    let row;
    if (s === v.seat) {
      const lit = suggestedCard(v);
      row = cardRow(v.hand, "", lit ? { [lit]: "suggested" } : null);
      const live = v.your_turn && !busy;
      for (const c of row.children) {
        if (!live) continue;
        c.classList.add("playable");
        c.addEventListener("click", () => onCard(c.dataset.card));
      }
    } else {
      row = backRow(v.hand_sizes[s]);
    }
    row.id = "hand-" + s;
    row.dataset.count = String(s === v.seat ? v.hand.length : v.hand_sizes[s]);
    box.appendChild(row);
    board.appendChild(box);
  }
}

function renderMove() {
  const box = $("move");
  box.textContent = "";
  box.dataset.seat = LAST ? String(LAST.seat) : "";
  box.dataset.text = LAST ? LAST.text : "";
  if (!LAST) { box.textContent = "—"; return; }
  box.appendChild(moveLine(LAST, seatLabel(LAST.seat)));
  if (LAST.scopa) box.appendChild(el("div", "scopa-flag", "SCOPA!"));
}

function renderPiles(v) {
  pilesPanel($("piles"), v.piles, v.scope, LAST, teamLabel);
}

function renderResults(v) {
  const box = $("hands");
  box.textContent = "";
  const t = el("table", "breakdown");
  const head = el("tr");
  head.appendChild(el("th", "", "hand"));
  for (let k = 0; k < 2; k++) head.appendChild(el("th", "", teamLabel(k)));
  t.appendChild(head);
  v.results.forEach((h, i) => {
    const tr = el("tr");
    tr.appendChild(el("td", "", i + 1));
    h.points.forEach((p) => tr.appendChild(el("td", "", p)));
    t.appendChild(tr);
  });
  box.appendChild(t);
}

function renderLog() {
  const log = $("log");
  log.textContent = "";
  let hand = -1, n = 0;
  for (const mv of LOG) {
    if (mv.hand !== hand) {
      hand = mv.hand;
      n = 0;
      log.appendChild(el("li", "sep", "hand " + (hand + 1)));
    }
    const li = el("li", "mv", seatLabel(mv.seat) + ": " + moveWords(mv.card, mv.capture,
                                                                  mv.scopa));
    li.value = ++n;
    li.dataset.seat = String(mv.seat);
    li.dataset.text = mv.text;
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
}

function render(v) {
  if (MODE === "room" && V && V.room === v.room) announce(V, v);
  V = v;
  document.body.dataset.game = v.game || v.room;
  renderSeats(v);
  const marks = {};
  if (LAST && !LAST.capture.length) marks[LAST.card] = "played";
  const table = cardRow(v.table, "", marks);
  table.id = "table";
  $("table").replaceWith(table);
  // the seed comes only with the match's end: it fixes the deck order
  const open = MODE === "room" ? v.seats.filter((x) => x.open).length : 0;
  const who = MODE === "solo"
    ? " · you play against " + v.names.filter((n, s) => s !== v.seat).join(" and ")
    : (v.seat === null ? " · watching" : "") + (v.started ? "" : " · waiting for " + open +
      (open === 1 ? " person" : " people") + " to take a seat");
  $("info").textContent = v.rules.name + ", " + v.players + " players, to " +
    v.rules.target_score + (v.seed !== undefined ? " · seed " + v.seed : "") +
    (v.seeded ? " · preset deals" : "") + who;  // seeded: not drawn at random
  const ms = $("match-score");
  ms.textContent = teamLabel(0) + " " + v.match_score[0] + " – " + v.match_score[1] + " " +
    teamLabel(1);
  ms.dataset.score = v.match_score.join("-");
  let status;
  if (v.done) status = "Match over";
  else if (v.to_move === null) status = "Hand over";
  else if (!v.started) status = "waiting for every seat to be taken";
  else if (busy) status = v.to_move === v.seat ? "…" : seatLabel(v.to_move) + " is playing…";
  else if (v.your_turn) status = "Your turn: click a card in your hand";
  else status = seatLabel(v.to_move) + (v.to_move === v.seat ? " play" : " plays") + " next";
  $("status").textContent = "Hand " + (v.hand_index + 1) + " · " + v.deck +
    " cards in the deck · " + status;
  document.body.dataset.state = v.done ? "over" : busy ? "busy" : v.your_turn ? "turn" : "wait";
  const banner = $("banner");
  banner.classList.toggle("hidden", !v.done);
  if (v.done) {
    const w = v.winner;
    const score = v.match_score[w] + "–" + v.match_score[1 - w];
    if (v.seat === null) {
      banner.textContent = "Match over: " + teamLabel(w) + (v.players === 2 ? " wins " :
        " win ") + score;
    } else {
      const mine = w === v.seat % 2;
      banner.textContent = "Match over: " + (mine ? "you win " : "you lose ") +
        v.match_score[v.seat % 2] + "–" + v.match_score[1 - v.seat % 2];
    }
  }
  const dl = $("download");
  dl.classList.toggle("hidden", !v.done);
  const id = v.game || v.room;
  dl.href = (MODE === "solo" ? "/api/game/" : "/api/room/") + encodeURIComponent(id) + "/record";
  dl.setAttribute("download", "scopa-" + id + ".jsonl");
  if (MODE === "room") renderRoom(v);
  renderHint(v);
  renderMove();
  renderPiles(v);
  renderResults(v);
  renderLog();
}

/** The hint button at the person's turn, the hint of this position, the review button
    once the match is over. */
function hintable(v) {
  return HINTS && v.your_turn && !busy && !v.done && v.legal.length > 1;
}

function hintShown(v) {
  return hintable(v) && HINT !== null && HINT.id === (v.game || v.room) &&
    HINT.moves_played === v.moves;
}

function renderHint(v) {
  const turn = hintable(v);  // a hint only when there is a choice to make
  const button = $("hint-button");
  button.classList.toggle("hidden", !turn);
  button.disabled = HINTING;
  const panel = $("hint-panel");
  const box = $("hint");
  const shown = hintShown(v);
  panel.classList.toggle("hidden", !shown && !(turn && HINTING));
  box.textContent = "";
  box.dataset.moves = shown ? String(HINT.moves_played) : "";
  if (HINTING) box.appendChild(el("div", "review-how", "the reviewer is thinking…"));
  else if (shown) {
    reviewDecision(box, HINT, seatLabel(HINT.seat));
    box.appendChild(el("div", "review-how", "The suggested card is lit in your hand. " +
                       "The reviewer knows your cards and what you have seen only."));
  }
  const review = $("review-button");
  review.classList.toggle("hidden", !(HINTS && v.done));
  review.href = "/review/" + encodeURIComponent(v.game || v.room);
}

async function askHint() {
  if (!V || !V.your_turn || HINTING) return;
  HINTING = true;
  renderHint(V);
  const id = V.game || V.room;
  try {
    HINT = MODE === "solo"
      ? await api("POST", "/api/game/" + encodeURIComponent(V.game) + "/hint", {})
      : await api("POST", roomPath() + "/hint", { token: TOKEN });
    HINT.id = id;
    showError("");
  } catch (e) {
    HINT = null;
    showError(e.message);
  }
  HINTING = false;
  render(V);  // the hint's card lit in the hand
}

function onCard(code) {
  if (!V.your_turn || busy) return;
  const options = V.legal.filter((m) => m.card === code);
  if (options.length === 1) { play(options[0].id); return; }
  const box = $("choices");
  box.textContent = "";
  const head = el("div", "move-line");
  head.appendChild(el("span", "", "Play"));
  head.appendChild(cardEl(code, "played"));
  head.appendChild(el("span", "", "how? (" + options.length + " ways)"));
  box.appendChild(head);
  for (const m of options) {
    const b = el("button", "choice");
    b.dataset.action = String(m.id);
    b.dataset.text = m.text;
    if (m.capture.length) {
      b.appendChild(el("span", "", m.takes_all ? "take the whole table:" : "capture"));
      b.appendChild(cardRow(m.capture, "small"));
    } else {
      b.appendChild(el("span", "", "lay it on the table"));
    }
    b.addEventListener("click", () => play(m.id));
    const mark = (on) => {  // show on the table what this choice takes
      for (const c of document.querySelectorAll("#table .card")) {
        c.classList.toggle("captured", on && m.capture.includes(c.dataset.card));
      }
    };
    b.addEventListener("mouseenter", () => mark(true));
    b.addEventListener("mouseleave", () => mark(false));
    box.appendChild(b);
  }
  const cancel = el("button", "", "cancel");
  cancel.id = "cancel-choice";
  cancel.addEventListener("click", () => box.classList.add("hidden"));
  box.appendChild(cancel);
  box.classList.remove("hidden");
}

/** A hand's score into box: the points of each side, the cards left on the table (and
    who took them), the match so far. */
function handSummary(box, over) {
  box.textContent = "";
  box.appendChild(breakdownTable(over.score, pointKeys(V.rules), [0, 1].map(teamLabel)));
  const left = el("div", "move-line");
  if (over.leftover.length) {
    left.appendChild(el("span", "", "Left on the table" + (over.last_capture_team === null
      ? ":" : ", taken by " + teamLabel(over.last_capture_team) + " (the last to capture):")));
    left.appendChild(cardRow(over.leftover, "small"));
  } else {
    left.appendChild(el("span", "", "Nothing was left on the table."));
  }
  box.appendChild(left);
  box.appendChild(el("p", "", "Match: " + teamLabel(0) + " " + over.match_score[0] + " – " +
                      over.match_score[1] + " " + teamLabel(1) + " (to " +
                      V.rules.target_score + ")"));
}

/** The end of a hand: its score in the sidebar; a player also sees it in a dialog until
    "Next hand", a watcher only a notice (the match goes on without waiting for them). */
function waitForContinue(ev) {
  const over = ev.hand_over;
  const title = over.match_over ? "Match over" : "Hand " + (ev.hand + 1) + " over";
  $("last-hand-title").textContent = title;
  handSummary($("last-hand-body"), over);
  $("last-hand").classList.remove("hidden");
  if (V.seat === null) {
    notice(title + ": " + teamLabel(0) + " " + over.match_score[0] + " – " +
           over.match_score[1] + " " + teamLabel(1));
    return Promise.resolve();
  }
  const o = $("hand-over");
  $("hand-over-title").textContent = title;
  handSummary($("hand-over-body"), over);
  $("continue").textContent = over.match_over ? "See the table" : "Next hand";
  o.classList.remove("hidden");
  return new Promise((ok) => {
    $("continue").onclick = () => { o.classList.add("hidden"); ok(); };
  });
}

function pointKeys(rules) {
  const keys = ["carte", "denari", "settebello", "primiera", "scope"];
  if (rules.re_bello) keys.push("re_bello");
  if (rules.napola) keys.push("napola");
  return keys;
}

/** Show each move in turn (the agents' after a pause), then the hand's score if it ended. */
async function showEvents(events) {
  for (let i = 0; i < events.length; i++) {
    const ev = events[i];
    const { view, ...move } = ev;
    if (i > 0 || move.seat !== V.seat) await sleep(DELAY);
    LAST = move;
    LOG.push(move);
    render(view);
    if (move.hand_over) await waitForContinue(move);
  }
}

async function play(action) {
  if (MODE === "room") return playInRoom(action);
  $("choices").classList.add("hidden");
  busy = true;
  render(V);
  try {
    // n: the moves seen when choosing; a retry of this move is then not played twice
    const r = await api("POST", "/api/game/" + encodeURIComponent(V.game) + "/move",
                        { action, n: V.moves });
    showError("");
    await showEvents(r.events);
    busy = false;
    render(r.view);
  } catch (e) {
    showError(e.message);
    busy = false;
    render(V);
  }
}

async function start(fresh) {
  showError("");
  $("hand-over").classList.add("hidden");
  $("choices").classList.add("hidden");
  const id = fresh ? null : sessionStorage.getItem(KEY);
  const wanted = PARAMS.has("seed") ? PARAMS.get("seed").trim() : null;
  if (id) {
    try {
      const r = await api("GET", "/api/game/" + encodeURIComponent(id));
      // a link with ?seed= plays that deal: the tab's match of another seed is left
      if (wanted !== null && sessionStorage.getItem(SEED_KEY) !== wanted) {
        throw new Error("another seed");
      }
      LOG = r.log;
      LAST = LOG.length ? LOG[LOG.length - 1] : null;
      render(r.view);
      return;
    } catch (e) { /* dropped or the server restarted: start a new match */ }
  }
  // the seed as text: a JavaScript number would round one past 2**53
  const body = wanted !== null ? { seed: wanted } : {};
  try {
    const r = await api("POST", "/api/new", body);
    sessionStorage.setItem(KEY, r.game);
    if (wanted !== null) sessionStorage.setItem(SEED_KEY, wanted);
    else sessionStorage.removeItem(SEED_KEY);
    LOG = [];
    LAST = null;
    busy = true;
    render(r.view);
    await showEvents(r.events);
    busy = false;
    render(r.view);
  } catch (e) {
    busy = false;
    showError(e.message);
  }
}


// -- rooms: create, join, follow live, play, hand an idle seat to an agent ---------------------
const SEAT_KEY = (id) => "scopa-room:" + id;  // localStorage: {token, seat, invites}
let QUEUE = [];       // live messages waiting to be shown, in order
let IDLE_TIMER = null;  // when the seat to move may be given to an agent
let LOST = false;       // the live connection dropped: the browser reconnects by itself
let draining = false;

function saved(id) {
  try { return JSON.parse(localStorage.getItem(SEAT_KEY(id))); } catch (e) { return null; }
}
function roomPath() { return "/api/room/" + encodeURIComponent(ROOM); }
function roomLink(extra) {
  return location.origin + "/room?id=" + encodeURIComponent(ROOM) + (extra || "");
}

function renderRoom(v) {
  $("room-panel").classList.remove("hidden");
  $("new-game").textContent = "New room";
  const seats = $("room-seats");
  seats.textContent = "";
  v.seats.forEach((x, s) => {
    const who = x.open ? "an open seat" : s === v.seat ? x.name + " (you)"
      : x.name + (x.agent ? " (an agent)" : "");
    const line = el("div", "", who + (s === v.seat ? "" : " · " + relation(s)));
    line.dataset.seat = String(s);
    seats.appendChild(line);
  });
  const links = $("room-links");
  links.textContent = "";
  links.className = "links";
  const mine = saved(ROOM);
  const add = (label, url, id) => {
    links.appendChild(el("div", "", label));
    const input = el("input");
    input.readOnly = true;
    input.value = url;
    input.id = id;
    input.addEventListener("focus", () => input.select());
    links.appendChild(input);
  };
  for (const [s, code] of Object.entries((mine && mine.invites) || {})) {
    if (v.seats[s] && v.seats[s].open) {
      add("Link for " + (v.seat === null ? "the seat " + placeWords(+s) : relation(+s)) +
          " (send it to who will play there):", roomLink("&invite=" + encodeURIComponent(code)),
          "invite-" + s);
    }
  }
  add("Watch link:", roomLink("&watch=1"), "watch-link");
  const idle = $("idle");
  idle.textContent = "";
  clearTimeout(IDLE_TIMER);  // a person's turn waits: look again when it may be given away
  if (v.seat !== null && v.idle_in !== null && v.idle_in > 0 && v.to_move !== v.seat) {
    const moves = v.moves;
    IDLE_TIMER = setTimeout(async () => {
      if (!V || V.moves !== moves || draining) return;
      try { render((await api("GET", roomPath() + "?token=" + encodeURIComponent(TOKEN))).view); }
      catch (e) { showError(e.message); }
    }, 1000 * v.idle_in + 250);
  }
  for (const s of v.idle || []) {
    if (v.seat === null || s === v.seat) continue;
    const b = el("button", "", seatLabel(s) + " is idle: give the seat to an agent");
    b.id = "hand-over-" + s;
    b.addEventListener("click", async () => {
      try {
        await api("POST", roomPath() + "/hand-over", { token: TOKEN, seat: s });
        showError("");
      } catch (e) { showError(e.message); }
    });
    idle.appendChild(b);
  }
}

/** Say on the table what changed between two views of a room: who joined, the start. */
function announce(before, after) {
  const joined = after.seats.filter((x, s) => before.seats[s].open && !x.open && s !== after.seat)
    .map((x) => x.name);
  if (joined.length) {
    notice(joined.join(" and ") + " joined" +
           (after.started ? ": everyone is here, the match starts" : ""));
  } else if (!before.started && after.started) {
    notice("Everyone is here: the match starts");
  }
}

async function playInRoom(action) {
  $("choices").classList.add("hidden");
  busy = true;  // until the live channel shows this move
  render(V);
  try {
    await api("POST", roomPath() + "/move", { token: TOKEN, action, n: V.moves });
    showError("");
  } catch (e) {
    showError(e.message);
    busy = false;
    render(V);
  }
}

function enqueue(msg) {
  QUEUE.push(msg);
  if (!draining) drain();
}

/** Show the live messages in order: each move (others' after a pause), a hand's score
    until "Next hand", then the room as it is. */
async function drain() {
  draining = true;
  while (QUEUE.length) {
    const msg = QUEUE.shift();
    if (msg.kind === "move") {
      const ev = msg.event;
      if (ev.n < LOG.length) continue;  // shown already (the page was loaded after it)
      // others' moves one by one, at a person's pace; a page that is behind catches up
      if (ev.seat !== V.seat && DELAY && !QUEUE.some((m) => m.kind === "move")) {
        await sleep(DELAY);
      }
      if (ev.seat === V.seat) busy = false;
      LAST = ev;
      LOG.push(ev);
      render(msg.view || V);
      if (ev.hand_over) await waitForContinue(ev);
    } else if (msg.view.moves >= LOG.length) {
      render(msg.view);
      if (msg.view.done) stopFollowing();
    }
  }
  draining = false;
}

/** The match is over: the live connection is closed, and no "connection lost" is said. */
function stopFollowing() {
  if (STREAM) { STREAM.close(); STREAM = null; }
  if (LOST) { LOST = false; showError(""); }
}

function follow(since) {
  const q = "?since=" + since + (TOKEN ? "&token=" + encodeURIComponent(TOKEN) : "");
  const es = new EventSource(roomPath() + "/events" + q);
  STREAM = es;
  es.addEventListener("move", (e) => enqueue({ kind: "move", ...JSON.parse(e.data) }));
  es.addEventListener("room", (e) => {
    if (LOST) { LOST = false; showError(""); }  // reconnected
    enqueue({ kind: "room", view: JSON.parse(e.data) });
  });
  // the server ends a finished match's stream: closed here before the browser would
  // take the end of the stream for a lost connection and reconnect
  es.addEventListener("end", () => { if (STREAM === es) stopFollowing(); else es.close(); });
  es.addEventListener("revoked", () => {
    es.close();
    localStorage.removeItem(SEAT_KEY(ROOM));
    showError("Your seat was given to an agent while it was idle: you are watching now.");
    TOKEN = null;
    load();
  });
  es.onerror = () => {  // the browser reconnects by itself (Last-Event-ID: no move lost)
    if (STREAM === es && es.readyState !== EventSource.CLOSED) {
      LOST = true;
      showError("connection lost: reconnecting…");
    }
  };
}

async function load() {
  if (STREAM) { STREAM.close(); STREAM = null; }
  QUEUE = [];
  let r;
  try {
    r = await api("GET", roomPath() + (TOKEN ? "?token=" + encodeURIComponent(TOKEN) : ""));
  } catch (e) {
    showError(e.message);
    return;
  }
  LOG = r.log;
  LAST = LOG.length ? LOG[LOG.length - 1] : null;
  busy = false;
  render(r.view);
  if (!r.view.done) follow(LOG.length);
}

function showForm(id) {
  $("layout").classList.add("hidden");
  $(id).classList.remove("hidden");
}

function enterRoom(id, seat, extra) {
  ROOM = id;
  TOKEN = seat ? seat.token : null;
  history.replaceState(null, "", "/room?id=" + encodeURIComponent(id) + (extra || "") +
                       (PARAMS.has("delay") ? "&delay=" + DELAY : ""));
  $("create").classList.add("hidden");
  $("join").classList.add("hidden");
  $("layout").classList.remove("hidden");
  load();
}

const OPTION_WORDS = {
  hand_size: ["Cards in each hand", "how many cards each player is dealt at a time"],
  table_size: ["Cards on the table at the start", "laid face up before the first play"],
  capture_rule: ["Which sums may be taken", "any: any set of cards adding up to the card " +
    "played; fewest: only the sets with the fewest cards (a card of the same rank must " +
    "always be taken first)"],
  ace_takes_all: ["Asso piglia tutto", "an ace takes the whole table (never a scopa)"],
  last_play_scopa: ["Scopa on the last play", "sweeping the table with the hand's last " +
    "card counts as a scopa"],
  redeal_three_kings: ["Deal again on three kings", "if the opening table holds three or " +
    "more kings, the cards are shuffled and dealt again"],
  primiera_table: ["Primiera values", "standard: 7 = 21, 6 = 18, ace = 16, 5 = 15 … figures " +
    "= 10; alt: the other table sometimes printed"],
  primiera_requires_all_suits: ["Primiera needs every suit", "a side with no card of a " +
    "suit has no primiera"],
  re_bello: ["Re bello", "a point for the king of coins"],
  napola: ["Napola", "taking the ace, 2 and 3 of coins scores the length of the run of " +
    "coins from the ace"],
};

function option(name, value) {
  const [words, help] = OPTION_WORDS[name] || [name.replace(/_/g, " "), ""];
  const label = el("label", "", words + " ");
  if (help) label.title = help;
  let input;
  if (typeof value === "boolean") {
    input = el("input");
    input.type = "checkbox";
    input.checked = value;
  } else if (name === "capture_rule" || name === "primiera_table") {
    input = el("select");
    const opts = name === "capture_rule" ? ["any", "fewest"] : CONFIG.primiera_tables;
    for (const o of opts) input.appendChild(choice(o, o));
    input.value = value;
  } else {
    input = el("input");
    input.type = "number";
    input.min = "0";
    input.value = value;
  }
  input.dataset.option = name;
  input.id = "opt-" + name;
  label.appendChild(input);
  if (help) label.appendChild(el("span", "help", help));
  return label;
}

function choice(value, text) {
  const o = el("option", "", text);
  o.value = value;
  return o;
}

let CONFIG = null;
const SKIP = ["name", "players", "target_score"];  // their own fields

function ruleDefaults() {
  return { ...CONFIG.defaults, ...CONFIG.rules[$("rules").value] };
}

function fillOptions() {
  const d = ruleDefaults();
  const box = $("options");
  box.textContent = "";
  for (const [k, v] of Object.entries(d)) if (!SKIP.includes(k)) box.appendChild(option(k, v));
  const four = CONFIG.four_player_only.includes($("rules").value);
  $("players").value = String(d.players);
  $("players").disabled = four;
  fillSeats();
}

function fillSeats() {
  const box = $("seat-choices");
  box.textContent = "";
  const n = parseInt($("players").value, 10);
  for (let s = 0; s < n; s++) {
    const label = el("label", "", (s === 0 ? "First seat" : n === 2 ? "Opposite" : s === 2
      ? "Partner of the first seat" : "Opponent " + (s === 1 ? "on its right" : "on its left"))
      + " ");
    const sel = el("select");
    sel.id = "seat-" + s + "-choice";
    sel.appendChild(choice("me", "me"));
    sel.appendChild(choice("person", "a person (send a link)"));
    for (const a of CONFIG.agents) sel.appendChild(choice(a, "agent: " + a));
    sel.value = s === 0 ? "me" : (n === 2 ? "person" : CONFIG.agents[0]);
    label.appendChild(sel);
    box.appendChild(el("div")).appendChild(label);
  }
}

async function showCreate() {
  showForm("create");
  CONFIG = await api("GET", "/api/config");
  const rules = $("rules");
  for (const name of Object.keys(CONFIG.rules)) rules.appendChild(choice(name, name));
  rules.addEventListener("change", fillOptions);
  $("players").addEventListener("change", fillSeats);
  fillOptions();
  $("create").addEventListener("submit", async (e) => {
    e.preventDefault();
    const d = ruleDefaults();
    const options = {};
    for (const input of document.querySelectorAll("#options [data-option]")) {
      const k = input.dataset.option;
      const v = input.type === "checkbox" ? input.checked
        : input.type === "number" ? parseInt(input.value, 10) : input.value;
      if (v !== d[k]) options[k] = v;
    }
    const n = parseInt($("players").value, 10);
    const seats = [];
    let mine = null;
    for (let s = 0; s < n; s++) {
      const c = $("seat-" + s + "-choice").value;
      if (c === "me") {
        if (mine !== null) { showError("only one seat can be yours"); return; }
        mine = s;
      }
      seats.push(c === "me" || c === "person" ? null : c);
    }
    try {
      const r = await api("POST", "/api/rooms", {
        rules: $("rules").value, players: n, target_score: parseInt($("target").value, 10),
        options, seats, seat: mine, name: $("name").value || null });
      const keep = { token: r.token, seat: r.seat, invites: r.invites };
      localStorage.setItem(SEAT_KEY(r.room), JSON.stringify(keep));
      showError("");
      enterRoom(r.room, r.token ? keep : null);
    } catch (err) { showError(err.message); }
  });
}

function showJoin(invite) {
  showForm("join");
  $("watch-instead").href = "/room?id=" + encodeURIComponent(ROOM);
  $("join").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const r = await api("POST", roomPath() + "/join",
                          { invite, name: $("join-name").value || null });
      const keep = { token: r.token, seat: r.seat };
      localStorage.setItem(SEAT_KEY(ROOM), JSON.stringify(keep));
      showError("");
      enterRoom(ROOM, keep);
    } catch (err) { showError(err.message); }
  });
}

function roomStart() {
  const id = PARAMS.get("id");
  if (!id) { showCreate(); return; }
  ROOM = id;
  const seat = saved(id);
  const invite = PARAMS.get("invite");
  if (PARAMS.has("watch")) { enterRoom(id, null, "&watch=1"); return; }
  if ((!seat || !seat.token) && invite) { showJoin(invite); return; }
  enterRoom(id, seat && seat.token ? seat : null);
}

$("hint-button").addEventListener("click", askHint);
$("new-game").addEventListener("click", () => {
  if (MODE === "room") location.href = "/room";
  else if (!busy) start(true);
});
if (MODE === "room") roomStart(); else start(false);
