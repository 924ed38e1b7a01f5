/* The replay page: one frame per position, stepped, jumped to or autoplayed; cards and
   moves in words (cards.js), never as codes. With a review (review.js) it opens on the
   first decision the review values. */
"use strict";

const DATA = JSON.parse(document.getElementById("match-data").textContent);
const FRAMES = DATA.frames;
const P = DATA.rules.players;
let pos = 0;
let view = DATA.view;  // "all" or a seat number
let timer = null;

function $(id) { return document.getElementById(id); }

/** A seat by its player's name (and where it sits, when two have the same name). */
function seatLabel(s) {
  return nameOf(DATA.players, s, (x) => placeWordsOf(x, view === "all" ? 0 : view, P));
}
function sideName(t) { return teamSeats(t, P).map((s) => DATA.players[s]).join(" and "); }
function teamLabel(t) { return P === 2 ? seatLabel(t) : "Team of " + sideName(t); }

function showsHand(seat) { return view === "all" || view === seat; }

function renderSeats(f) {
  const board = $("board");
  board.classList.toggle("two", P === 2);
  for (const old of board.querySelectorAll(".seat")) old.remove();
  const base = view === "all" ? 0 : view;
  const mv = f.move;
  for (let s = 0; s < P; s++) {
    const box = el("div", "seat slot-" + slotOf(s, base, P));
    box.id = "seat-" + s;
    if (f.to_move === s) box.classList.add("to-move");
    if (mv && mv.seat === s) box.classList.add("just-moved");
    const name = el("div", "seat-name", seatLabel(s));
    if (f.dealer === s) name.appendChild(el("span", "badge", "dealer"));
    if (view === s) name.appendChild(el("span", "badge", "view"));
    box.appendChild(name);
    const cards = f.hands[s];
    const row = showsHand(s) ? cardRow(cards) : backRow(cards.length);
    row.id = "hand-" + s;
    row.dataset.count = String(cards.length);
    box.appendChild(row);
    board.appendChild(box);
  }
}

function renderMove(f) {
  const box = $("move");
  box.textContent = "";
  const mv = f.move;
  box.dataset.seat = mv ? String(mv.seat) : "";
  box.dataset.text = mv ? mv.text : "";
  if (!mv) {
    box.appendChild(el("div", "", "Hand " + (f.hand + 1) + " dealt; dealer " +
                       seatLabel(f.dealer) + "."));
    return;
  }
  box.appendChild(moveLine(mv, seatLabel(mv.seat)));
  const text = el("div", "", moveWords(mv.card, mv.capture, mv.scopa));
  text.id = "move-text";
  box.appendChild(text);
  if (mv.scopa) box.appendChild(el("div", "scopa-flag", "SCOPA!"));
}

function renderPiles(f) {
  const box = $("piles");
  pilesPanel(box, f.piles, f.scope, f.move, teamLabel, (t) => {
    const sc = cardRow(f.scopa_cards[t], "small");
    sc.id = "scope-" + t;
    for (const c of sc.children) c.classList.add("scopa-card");
    if (f.scopa_cards[t].length) {
      box.appendChild(el("div", "", "scope (the cards that swept the table):"));
      box.appendChild(sc);
    }
  });
}

function renderBreakdown(f) {
  const box = $("breakdown");
  box.textContent = "";
  const over = f.hand_over;
  $("breakdown-title").textContent = "Hand " + (f.hand + 1) + " score";
  if (!over) {
    box.appendChild(el("div", "", "Shown when the hand ends. So far: " +
      [0, 1].map((t) => teamLabel(t) + " " + f.piles[t].length + " cards, " +
                 f.scope[t] + " scope").join("; ") + "."));
    return;
  }
  box.appendChild(breakdownTable(over.score, DATA.point_keys, [0, 1].map(teamLabel)));
  const left = cardsWords(over.leftover);
  const who = over.last_capture_team === null ? "nobody (no capture)" :
    teamLabel(over.last_capture_team) + ", the last to capture";
  box.appendChild(el("div", "", "Left on the table: " + left + ", to " + who + "."));
}

function renderHands(f) {
  const box = $("hands");
  box.textContent = "";
  const t = el("table", "breakdown");
  const head = el("tr");
  head.appendChild(el("th", "", "hand"));
  for (let k = 0; k < 2; k++) head.appendChild(el("th", "", sideName(k)));
  head.appendChild(el("th", "", "match"));
  t.appendChild(head);
  DATA.hands.forEach((h, i) => {
    if (h.end > pos) return;  // not played yet at this position: no spoilers
    const tr = el("tr");
    tr.dataset.hand = String(i);
    tr.style.cursor = "pointer";
    tr.title = "jump to hand " + (i + 1);
    tr.appendChild(el("td", "", i + 1));
    h.points.forEach((p) => tr.appendChild(el("td", "", p)));
    tr.appendChild(el("td", "", h.match_score.join("–")));
    tr.addEventListener("click", () => go(h.start));
    t.appendChild(tr);
  });
  box.appendChild(t);
}

function renderLog(f) {
  const log = $("log");
  log.textContent = "";
  const start = DATA.hands[f.hand].start;
  for (let i = start + 1; i <= pos; i++) {
    const mv = FRAMES[i].move;
    const li = el("li", i === pos ? "current" : "",
                  DATA.players[mv.seat] + ": " + moveWords(mv.card, mv.capture, mv.scopa));
    li.dataset.text = mv.text;
    li.addEventListener("click", () => go(i));
    log.appendChild(li);
  }
  const cur = log.querySelector(".current");
  if (cur) log.scrollTop = cur.offsetTop - log.clientHeight + cur.offsetHeight + 4;
}

function render() {
  const f = FRAMES[pos];
  renderSeats(f);
  const marks = {};
  if (f.move && !f.move.capture.length) marks[f.move.card] = "played";
  const table = cardRow(f.table, "", marks);
  table.id = "table";
  $("table").replaceWith(table);
  $("status").textContent = "Hand " + (f.hand + 1) + " · " + f.deck + " cards in the deck" +
    (f.to_move === null ? "" : " · " + seatLabel(f.to_move) + " to move");
  $("match-score").textContent = sideName(0) + " " + f.score[0] + " – " + f.score[1] + " " +
    sideName(1);
  $("match-score").dataset.score = f.score.join("-");
  const banner = $("banner");
  const end = f.hand_over && f.hand_over.match_over;
  banner.classList.toggle("hidden", !f.hand_over);
  banner.textContent = !f.hand_over ? "" : end
    ? "Match over: " + teamLabel(DATA.winner) + " wins " + f.score.join("–")
    : "Hand " + (f.hand + 1) + " over: " + f.hand_over.score.map((e) => e.points.total)
        .join("–") + " this hand";
  renderMove(f);
  renderPiles(f);
  renderBreakdown(f);
  renderHands(f);
  renderLog(f);
  $("slider").value = String(pos);
  $("hand-select").value = String(f.hand);
  $("pos").textContent = "hand " + (f.hand + 1) + "/" + DATA.hands.length + ", move " +
    (f.index + 1) + " · position " + (pos + 1) + "/" + FRAMES.length;
  document.body.dataset.pos = String(pos);
  $("prev").disabled = pos === 0;
  $("next").disabled = pos === FRAMES.length - 1;
  if (typeof reviewRender === "function") reviewRender(f);  // a review page (review.js)
}

function go(k) {
  pos = Math.max(0, Math.min(FRAMES.length - 1, k));
  if (pos === FRAMES.length - 1) stop();
  render();
}

function stop() {
  if (timer !== null) clearInterval(timer);
  timer = null;
  $("play").textContent = "▶ play";
  document.body.dataset.playing = "false";
}

function play() {
  if (timer !== null) { stop(); return; }
  if (pos === FRAMES.length - 1) go(0);
  $("play").textContent = "❚❚ pause";
  document.body.dataset.playing = "true";
  timer = setInterval(() => go(pos + 1), parseInt($("speed").value, 10));
}

function setup() {
  $("info").textContent = DATA.rules.name + ", " + P + " players, to " +
    DATA.rules.target_score + " · seed " + DATA.seed + " · " +
    (P === 2 ? DATA.players.join(" against ") : sideName(0) + " against " + sideName(1));
  const slider = $("slider");
  slider.max = String(FRAMES.length - 1);
  slider.addEventListener("input", () => go(parseInt(slider.value, 10)));
  const hs = $("hand-select");
  DATA.hands.forEach((h, i) => {
    const o = el("option", "", "hand " + (i + 1));
    o.value = String(i);
    hs.appendChild(o);
  });
  hs.addEventListener("change", () => go(DATA.hands[parseInt(hs.value, 10)].start));
  const vs = $("view-select");
  const all = el("option", "", "all hands");
  all.value = "all";
  vs.appendChild(all);
  for (let s = 0; s < P; s++) {
    const o = el("option", "", seatLabel(s) + "'s view");
    o.value = String(s);
    vs.appendChild(o);
  }
  vs.value = String(view);
  vs.addEventListener("change", () => {
    view = vs.value === "all" ? "all" : parseInt(vs.value, 10);
    render();
  });
  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(pos - 1));
  $("next").addEventListener("click", () => go(pos + 1));
  $("last").addEventListener("click", () => go(FRAMES.length - 1));
  $("play").addEventListener("click", play);
  $("speed").addEventListener("change", () => { if (timer !== null) { stop(); play(); } });
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT" || e.target.tagName === "INPUT") return;
    const keys = { ArrowLeft: () => go(pos - 1), ArrowRight: () => go(pos + 1),
                   Home: () => go(0), End: () => go(FRAMES.length - 1), " ": play };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  if (typeof reviewStart === "function") pos = reviewStart();  // a review page (review.js)
  render();
}

setup();
