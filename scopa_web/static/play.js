/* The play page: one match per browser tab (its id kept in sessionStorage). */
"use strict";

const KEY = "scopa-game";
const PARAMS = new URLSearchParams(location.search);
const DELAY = PARAMS.has("delay") ? Math.max(0, parseInt(PARAMS.get("delay"), 10) || 0) : 900;
let V = null;      // the view shown now
let LAST = null;   // the move shown as the last one
let LOG = [];      // every move of the match so far
let busy = false;  // a request or the agents' moves are being shown

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

function seatLabel(s) {
  return s === V.seat ? "You (seat " + s + ")" : "Seat " + s + " (" + V.names[s] + ")";
}
function teamLabel(t) {
  if (V.players === 2) return t === V.seat ? "You" : "Seat " + t + " (" + V.names[t] + ")";
  return "Team " + t + (t === V.seat % 2 ? " (yours)" : "");
}

function renderSeats(v) {
  const board = $("board");
  board.classList.toggle("two", v.players === 2);
  for (const old of board.querySelectorAll(".seat")) old.remove();
  for (let s = 0; s < v.players; s++) {
    const box = el("div", "seat slot-" + slotOf(s, v.seat, v.players));
    box.id = "seat-" + s;
    if (v.to_move === s) box.classList.add("to-move");
    if (LAST && LAST.seat === s) box.classList.add("just-moved");
    const name = el("div", "seat-name", seatLabel(s));
    if (v.dealer === s) name.appendChild(el("span", "badge", "dealer"));
    box.appendChild(name);
    let row;
    if (s === v.seat) {
      row = cardRow(v.hand);
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
    const li = el("li", "mv", "seat " + mv.seat + ": " + mv.text + (mv.scopa ? " — scopa" : ""));
    li.value = ++n;
    li.dataset.seat = String(mv.seat);
    li.dataset.text = mv.text;
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
}

function render(v) {
  V = v;
  document.body.dataset.game = v.game;
  renderSeats(v);
  const marks = {};
  if (LAST && !LAST.capture.length) marks[LAST.card] = "played";
  const table = cardRow(v.table, "", marks);
  table.id = "table";
  $("table").replaceWith(table);
  $("info").textContent = v.rules.name + ", " + v.players + " players, to " +
    v.rules.target_score + " · seed " + v.seed + " · you are seat " + v.seat + " · agents: " + v.names
      .filter((n, s) => s !== v.seat).join(", ");
  const ms = $("match-score");
  ms.textContent = teamLabel(0) + " " + v.match_score[0] + " – " + v.match_score[1] + " " +
    teamLabel(1);
  ms.dataset.score = v.match_score.join("-");
  let status;
  if (v.done) status = "Match over";
  else if (v.to_move === null) status = "Hand over";
  else if (busy) status = v.to_move === v.seat ? "…" : seatLabel(v.to_move) + " is playing…";
  else if (v.your_turn) status = "Your turn: click a card in your hand";
  else status = seatLabel(v.to_move) + " to move";
  $("status").textContent = "Hand " + (v.hand_index + 1) + " · " + v.deck +
    " cards in the deck · " + status;
  document.body.dataset.state = v.done ? "over" : busy ? "busy" : v.your_turn ? "turn" : "wait";
  const banner = $("banner");
  banner.classList.toggle("hidden", !v.done);
  if (v.done) {
    const mine = v.winner === v.seat % 2;
    banner.textContent = "Match over: " + (mine ? "you win " : "you lose ") +
      v.match_score[v.seat % 2] + "–" + v.match_score[1 - v.seat % 2];
  }
  const dl = $("download");
  dl.classList.toggle("hidden", !v.done);
  dl.href = "/api/game/" + encodeURIComponent(v.game) + "/record";
  dl.setAttribute("download", "scopa-" + v.game + ".jsonl");
  renderMove();
  renderPiles(v);
  renderResults(v);
  renderLog();
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

function waitForContinue(ev) {
  const o = $("hand-over");
  const over = ev.hand_over;
  $("hand-over-title").textContent = over.match_over ? "Match over" : "Hand " + (ev.hand + 1) +
    " over";
  const body = $("hand-over-body");
  body.textContent = "";
  body.appendChild(breakdownTable(over.score, pointKeys(V.rules), [0, 1].map(teamLabel)));
  const left = over.leftover.length ? over.leftover.join(" ") : "none";
  body.appendChild(el("p", "", "Left on the table: " + left + (over.last_capture_team === null
    ? "." : ", to " + teamLabel(over.last_capture_team) + ".")));
  body.appendChild(el("p", "", "Match: " + over.match_score.join("–") + " (to " +
                      V.rules.target_score + ")"));
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
  $("choices").classList.add("hidden");
  busy = true;
  render(V);
  try {
    const r = await api("POST", "/api/game/" + encodeURIComponent(V.game) + "/move",
                        { action });
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
      if (wanted !== null && String(r.view.seed) !== wanted) throw new Error("another seed");
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

$("new-game").addEventListener("click", () => { if (!busy) start(true); });
start(false);
