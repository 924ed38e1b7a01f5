/* Shared by the replay page and the play page: cards, seats and score tables. */
"use strict";

const SUIT_NAMES = { d: "denari", c: "coppe", s: "spade", b: "bastoni" };
const FACE_NAMES = { 1: "Asso", 8: "Fante", 9: "Cavallo", 10: "Re" };
const SUIT_SVG = {
  d: '<circle cx="12" cy="12" r="10" fill="#f2c230" stroke="#9a6d00" stroke-width="1.5"/>' +
     '<circle cx="12" cy="12" r="5" fill="none" stroke="#9a6d00" stroke-width="1.5"/>' +
     '<circle cx="12" cy="12" r="1.6" fill="#9a6d00"/>',
  c: '<path d="M4 3h16c0 6-3 10-8 10S4 9 4 3z" fill="#d9483b" stroke="#7a160d"/>' +
     '<rect x="10.5" y="13" width="3" height="5" fill="#b0281a"/>' +
     '<path d="M6 22c1-3 4-4 6-4s5 1 6 4z" fill="#d9483b" stroke="#7a160d"/>',
  s: '<path d="M12 1l3 4v11h-6V5z" fill="#9fb8e0" stroke="#1f4e99"/>' +
     '<rect x="5" y="16" width="14" height="2.5" rx="1" fill="#1f4e99"/>' +
     '<rect x="10.5" y="18.5" width="3" height="4.5" rx="1" fill="#6b4a1f"/>',
  b: '<path d="M9 22l-2-1 7-19 3 1z" fill="#8b5a2b" stroke="#3e2a12"/>' +
     '<circle cx="14.5" cy="4" r="2.6" fill="#4d8f2e"/><circle cx="11" cy="11" r="2.2" ' +
     'fill="#4d8f2e"/><circle cx="13.5" cy="15" r="1.8" fill="#4d8f2e"/>',
};

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function cardRank(code) { return parseInt(code, 10); }
function cardSuit(code) { return code.slice(-1); }

/** "7 di denari", "Re di bastoni". */
function cardName(code) {
  const r = cardRank(code);
  return (FACE_NAMES[r] || String(r)) + " di " + SUIT_NAMES[cardSuit(code)];
}

const SUIT_WORDS = { d: "coins", c: "cups", s: "swords", b: "clubs" };
const RANK_WORDS = { 1: "ace", 8: "jack", 9: "knight", 10: "king" };

/** A card in plain words: "7 of coins", "king of clubs". */
function cardWords(code) {
  const r = cardRank(code);
  return (RANK_WORDS[r] || String(r)) + " of " + SUIT_WORDS[cardSuit(code)];
}

/** A move in plain words: "7 of coins takes 1 of cups + 6 of clubs", "7 of coins on the
    table"; scopa: "… (scopa!)". */
function moveWords(card, capture, scopa) {
  const what = capture && capture.length
    ? cardWords(card) + " takes " + capture.map(cardWords).join(" + ")
    : cardWords(card) + " on the table";
  return what + (scopa ? " (scopa!)" : "");
}

/** A list of cards in plain words: "6 of coins, 7 of coins and 9 of cups". */
function cardsWords(codes) {
  const w = codes.map(cardWords);
  return w.length < 2 ? (w[0] || "none") : w.slice(0, -1).join(", ") + " and " + w[w.length - 1];
}

/** A face-up card: rank, suit symbol, suit name (and the figure's name). */
function cardEl(code, extra) {
  const s = cardSuit(code), r = cardRank(code);
  const c = el("div", "card suit-" + s + (extra ? " " + extra : ""));
  c.dataset.card = code;
  c.title = cardWords(code) + " (" + cardName(code) + ")";
  c.appendChild(el("span", "rank", r));
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "pip");
  svg.innerHTML = SUIT_SVG[s];
  c.appendChild(svg);
  if (FACE_NAMES[r] && r !== 1) c.appendChild(el("span", "face", FACE_NAMES[r]));
  c.appendChild(el("span", "suit", SUIT_NAMES[s]));
  return c;
}

// "<seat> played <card> capturing <cards>" / "onto the table": the move just played
function moveLine(mv, label) {
  const line = el("div", "move-line");
  line.appendChild(el("span", "", label + " played"));
  line.appendChild(cardEl(mv.card, "played"));
  if (mv.capture.length) {
    line.appendChild(el("span", "", mv.takes_all ? "taking the whole table:" : "capturing"));
    for (const c of mv.capture) line.appendChild(cardEl(c, "captured"));
  } else {
    line.appendChild(el("span", "", "onto the table"));
  }
  return line;
}

// "Captures this hand" into box: each team's pile and scope count, the last capture
// (move mv) marked; afterTeam(t), if given, adds more below team t's pile
function pilesPanel(box, piles, scope, mv, teamLabel, afterTeam) {
  box.textContent = "";
  box.appendChild(el("h2", "", "Captures this hand"));
  const marks = {};
  if (mv && mv.capture.length) {
    marks[mv.card] = "played";
    for (const c of mv.capture) marks[c] = "captured";
  }
  for (let t = 0; t < 2; t++) {
    const head = el("div", "", teamLabel(t) + ": " + piles[t].length + " cards");
    if (scope[t]) head.appendChild(el("span", "badge scopa", scope[t] + " scop" +
                                      (scope[t] === 1 ? "a" : "e")));
    box.appendChild(head);
    const mine = mv && mv.capture.length && mv.seat % 2 === t;
    const row = cardRow(piles[t], "small", mine ? marks : null);
    row.id = "pile-" + t;
    box.appendChild(row);
    if (afterTeam) afterTeam(t);
  }
}

function backEl() {
  const c = el("div", "card back");
  c.title = "a hidden card";
  return c;
}

/** A row of face-up cards; marks maps a code to an extra class (played, captured). */
function cardRow(codes, cls, marks) {
  const row = el("div", "cards" + (cls ? " " + cls : ""));
  for (const code of codes) row.appendChild(cardEl(code, (marks && marks[code]) || ""));
  return row;
}

function backRow(n) {
  const row = el("div", "cards backs");
  for (let i = 0; i < n; i++) row.appendChild(backEl());
  row.dataset.count = String(n);
  return row;
}

/** Where a seat sits on the board, seen from seat base: 0 bottom, then round the table. */
function slotOf(seat, base, players) {
  const k = (seat - base + players) % players;
  return players === 2 ? (k === 0 ? 0 : 1) : k;
}

/** Where seat s sits on the board seen from seat base, in words. */
function placeWordsOf(s, base, players) {
  const k = slotOf(s, base, players);
  return players === 2 ? ["at the bottom", "at the top"][k]
    : ["at the bottom", "on the right", "at the top", "on the left"][k];
}

/** A player by name; two seats of the same name also by where they sit (place(s)). */
function nameOf(names, s, place) {
  return names.filter((n) => n === names[s]).length > 1 ? names[s] + " (" + place(s) + ")"
    : names[s];
}

function teamSeats(team, players) {
  const out = [];
  for (let s = team; s < players; s += 2) out.push(s);
  return out;
}

const POINT_LABELS = { carte: ["carte", "most cards"], denari: ["denari", "most coins"],
  settebello: ["settebello", "the 7 of coins"], primiera: ["primiera", "best primiera sum"],
  scope: ["scope", "one per sweep of the table"], re_bello: ["re bello", "the king of coins"],
  napola: ["napola", "the run of coins from the ace"] };

/** The per-hand score breakdown: counts, then each point and the hand's total. */
function breakdownTable(score, pointKeys, teamLabels) {
  const t = el("table", "breakdown");
  const head = el("tr");
  head.appendChild(el("th", "", "this hand"));
  for (const lab of teamLabels) head.appendChild(el("th", "", lab));
  t.appendChild(head);
  const row = (label, values, cls, key) => {
    const tr = el("tr", cls || "");
    if (key) tr.dataset.key = key;
    const [name, hint] = POINT_LABELS[key] || [label, ""];
    const td = el("td", "", name);
    if (hint) td.title = hint;
    tr.appendChild(td);
    values.forEach((v) => tr.appendChild(el("td", "", v === null ? "none" : v)));
    t.appendChild(tr);
  };
  row("cards taken", score.map((e) => e.cards), "sub");
  row("coins taken", score.map((e) => e.coins), "sub");
  row("primiera sum", score.map((e) => e.primiera), "sub");
  for (const k of pointKeys) row(k, score.map((e) => e.points[k]), "", k);
  row("points", score.map((e) => e.points.total), "total", "total");
  return t;
}
