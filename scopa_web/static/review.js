/* The review on the replay page (before replay.js, which calls reviewStart once and
   reviewRender after each render): for the move just played, each legal move in words with
   a bar for its value, the played move and the reviewer's marked, what the move cost; a
   chart of the points each seat gave up over the match, beside the board on a wide screen.
   REVIEW: agents.evaluation.match_review.MatchReview.page_data (docs/review.md).
   The play page draws a hint with reviewDecision (no REVIEW there). Plain words only:
   cards and moves by name (cards.js), values as points more or fewer than the best move;
   the exact numbers in tooltips. */
"use strict";

const REVIEW_AT = {};  // "hand/move" -> the decision's review
if (typeof REVIEW !== "undefined")
  REVIEW.decisions.forEach((d, i) => { d.order = i; REVIEW_AT[d.hand + "/" + d.move] = d; });
const SEAT_COLORS = ["#1f6fb4", "#c0392b", "#2e8b3a", "#8e44ad"];
const CHART = { w: 560, h: 170, left: 36, right: 8, top: 8, bottom: 22 };
let reviewReady = false;

function decisionFrame(d) { return DATA.hands[d.hand].start + d.move + 1; }

function fmt(x, digits) { return (x >= 0 ? "+" : "") + x.toFixed(digits); }

/** Where the page opens: the first decision the review values (its values shown at once). */
function reviewStart() {
  const d = REVIEW.decisions.find((e) => e.moves.some((m) => m.value !== null)) ||
    REVIEW.decisions[0];
  return d ? decisionFrame(d) : 0;
}

function reviewSetup() {
  const layout = $("layout");
  layout.classList.add("reviewing");
  const panel = el("section", "panel review");
  panel.id = "review-panel";
  panel.appendChild(el("h2", "", "The move just played"));
  const box = el("div");
  box.id = "review";
  panel.appendChild(box);
  const chart = el("section", "panel review");
  chart.id = "review-chart-panel";
  chart.appendChild(el("h2", "", "Points given up over the match"));
  chart.appendChild(el("div", "review-how", "Each line adds up what a player's moves gave " +
    "up against the reviewer's choices. Click the chart to jump to a move."));
  chart.appendChild(reviewChart());
  chart.appendChild(reviewSeats());
  const who = el("div", "review-how", "Reviewer: " + REVIEW.reviewer);
  who.title = "the agent that reviewed the match, seed " + REVIEW.seed;
  chart.appendChild(who);
  layout.insertBefore(chart, $("panels"));
  layout.insertBefore(panel, $("panels"));
  reviewReady = true;
}

function svgEl(tag, attrs) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

function reviewChart() {
  const n = REVIEW.decisions.length;
  const P = DATA.rules.players;
  const total = new Array(P).fill(0);
  const paths = Array.from({ length: P }, () => [[0, 0]]);
  REVIEW.decisions.forEach((d, i) => {
    total[d.seat] += d.loss || 0;
    paths[d.seat].push([i + 1, total[d.seat]]);
  });
  const top = Math.max(0.5, ...total);
  const c = CHART;
  const x = (i) => c.left + (c.w - c.left - c.right) * i / Math.max(1, n);
  const y = (v) => c.h - c.bottom - (c.h - c.top - c.bottom) * v / top;
  const svg = svgEl("svg", { id: "review-chart", viewBox: "0 0 " + c.w + " " + c.h,
                             width: "100%", role: "img" });
  svg.appendChild(svgEl("line", { x1: c.left, y1: y(0), x2: c.w - c.right, y2: y(0),
                                  class: "axis" }));
  svg.appendChild(svgEl("line", { x1: c.left, y1: y(0), x2: c.left, y2: c.top, class: "axis" }));
  for (const v of [0, top / 2, top]) {
    const t = svgEl("text", { x: c.left - 4, y: y(v) + 4, class: "tick", "text-anchor": "end" });
    t.textContent = v.toFixed(1);
    svg.appendChild(t);
  }
  const label = svgEl("text", { x: c.w - c.right, y: c.h - 6, class: "tick",
                                "text-anchor": "end" });
  label.textContent = "moves with a choice, in the order played (" + n + ")";
  svg.appendChild(label);
  DATA.hands.forEach((h, k) => {  // where each hand starts
    const first = REVIEW.decisions.findIndex((d) => d.hand === k);
    if (k === 0 || first < 0) return;
    svg.appendChild(svgEl("line", { x1: x(first + 0.5), y1: c.top, x2: x(first + 0.5),
                                    y2: y(0), class: "hand-line" }));
  });
  for (let s = 0; s < P; s++) {
    // a step line: the seat's total loss after each of its decisions
    const pts = [];
    let last = 0;
    for (const [i, v] of paths[s]) {
      pts.push(x(i) + "," + y(last), x(i) + "," + y(v));
      last = v;
    }
    pts.push(x(n) + "," + y(last));
    const line = svgEl("polyline", { points: pts.join(" "), fill: "none",
                                     stroke: SEAT_COLORS[s % 4], "stroke-width": 2,
                                     class: "seat-line" });
    line.dataset.seat = String(s);
    line.dataset.total = total[s].toFixed(4);
    svg.appendChild(line);
  }
  const marker = svgEl("line", { id: "review-marker", x1: x(0), y1: c.top, x2: x(0), y2: y(0),
                                 class: "marker" });
  svg.appendChild(marker);
  svg.addEventListener("click", (e) => {  // jump to the nearest decision
    const box = svg.getBoundingClientRect();
    const at = (e.clientX - box.left) / box.width * c.w;
    const i = Math.round((at - c.left) / (c.w - c.left - c.right) * Math.max(1, n)) - 1;
    const d = REVIEW.decisions[Math.max(0, Math.min(n - 1, i))];
    if (d) go(decisionFrame(d));
  });
  svg.dataset.x0 = String(c.left);
  svg.dataset.step = String((c.w - c.left - c.right) / Math.max(1, n));
  return svg;
}

function reviewSeats() {
  const t = el("table", "breakdown");
  t.id = "review-seats";
  const head = el("tr");
  const heads = [["player", ""], ["choices", "moves with more than one choice"],
    ["as the reviewer", "moves where the player chose as the reviewer did"],
    ["lost per choice", "points given up per choice, on average"],
    ["lost in all", "points given up over the match"]];
  for (const [h, tip] of heads) {
    head.appendChild(el("th", "", h));
    if (tip) head.lastChild.title = tip;
  }
  t.appendChild(head);
  for (const s of REVIEW.seats) {
    const tr = el("tr");
    tr.dataset.seat = String(s.seat);
    const key = el("td");
    key.appendChild(el("span", "swatch"));
    key.lastChild.style.background = SEAT_COLORS[s.seat % 4];
    key.appendChild(document.createTextNode(" " + s.player));
    tr.appendChild(key);
    tr.appendChild(el("td", "", s.decisions));
    tr.appendChild(el("td", "", s.agreed));
    tr.appendChild(el("td", "", s.mean_loss === null ? "-" : s.mean_loss.toFixed(3)));
    tr.appendChild(el("td", "", s.total_loss.toFixed(2)));
    t.appendChild(tr);
  }
  return t;
}

/** A move of a review (its catalogue text, "7d x 3c+4b", "1s x all") in words; table:
    the cards on the table before it (what "all" takes). */
function reviewMoveWords(text, table) {
  const [card, taken] = text.split(" x ");
  if (taken === undefined) return moveWords(card, [], false);
  return moveWords(card, taken === "all" ? table : taken.split("+"), false);
}

function points(x) {
  const v = Math.abs(x);
  return "about " + v.toFixed(1) + (v.toFixed(1) === "1.0" ? " point" : " points");
}

const HOW_WORDS = {
  search: "The reviewer played the rest of the hand out many times, guessing the cards it " +
    "cannot see; each bar is what the move is worth this hand, in points over the other side.",
  pimc: "The reviewer played the rest of the hand out many times, guessing the cards it " +
    "cannot see; each bar is what the move is worth this hand, in points over the other side.",
  exact: "The reviewer worked the rest of the hand out exactly; each bar is what the move is " +
    "worth this hand, in points over the other side.",
  network: "The reviewer was sure of its choice at a glance; each bar is how strongly it " +
    "favours the move.",
};

/** A decision in box: d a decision line of the review (docs/review.md), or a hint (played
    and loss null: the person's turn now); name: the seat's player. Each move in words
    with a bar (its value, the best move's bar full, the worst's a fifth of it; or how
    strongly the reviewer favours it), the reviewer's choice and the move played marked,
    the best move's lead, what the move played cost, the side's prospects this hand. */
function reviewDecision(box, d, name) {
  const now = d.played === null;  // a hint
  const words = d.moves.map((m) => reviewMoveWords(m.text, d.table || []));
  if (d.moves.length === 1) {
    const only = el("div", "review-only", "Only one move " + (now ? "is" : "was") +
                    " possible: " + words[0] + ".");
    only.id = "review-only";
    box.appendChild(only);
    reviewPosition(box, d, now, name);
    return;
  }
  const byValue = d.moves.some((m) => m.value !== null);
  const key = byValue ? "value" : "prob";
  const vals = d.moves.map((m) => m[key]).filter((v) => v !== null);
  // values: the best move's bar full, the worst's a fifth of it (moves 0.5 point or
  // less apart drawn nearly alike); probabilities: from 0 to 1
  const hi = byValue ? Math.max(...vals) : 1;
  const lo = byValue ? hi - Math.max(1.25 * (hi - Math.min(...vals)), 0.5) : 0;
  const top = !byValue ? null : d.moves[d.best].value === null ? hi : d.moves[d.best].value;
  box.appendChild(el("div", "review-how", (now ? "You have " : name + " had ") +
    d.moves.length + " possible moves. " + (HOW_WORDS[d.how] || "") +
    (d.deep ? " The reviewer looked at this move more closely for the review." : "")));
  const list = el("div", "review-moves");
  list.id = "review-moves";
  d.moves.forEach((m, k) => {
    const row = el("div", "move-row");
    row.dataset.index = String(k);
    row.dataset.text = m.text;
    if (k === d.played) row.classList.add("played");
    if (k === d.best) row.classList.add("best");
    row.appendChild(el("span", "move-name", words[k]));
    const tags = [];
    if (k === d.best) tags.push("reviewer's choice");
    if (k === d.played) tags.push("played");
    row.appendChild(el("span", "tags", tags.join(" · ")));
    const track = el("span", "track");
    const v = m[key];
    const bar = el("span", "bar" + (v === null ? " none" : ""));
    if (v !== null) bar.style.width = Math.max(2, 100 * (v - lo) / (hi - lo)).toFixed(1) + "%";
    bar.style.background = v === null ? "" : SEAT_COLORS[d.seat % 4];
    track.appendChild(bar);
    row.appendChild(track);
    let note, tip;
    if (v === null) {
      note = "not worked out";
      tip = "the reviewer did not play this move out";
    } else if (!byValue) {
      note = (100 * v).toFixed(0) + "%";
      tip = "the reviewer favours this move " + note + " (its network's probability)";
    } else {
      const gap = top - v;
      note = k === d.best ? "best" : gap < 0.05 ? "as good" : "−" + gap.toFixed(1) + " points";
      tip = (k === d.best ? "the reviewer's choice" : gap < 0.05 ? "as good as the best move"
        : points(gap) + " fewer than the best move") + " (worth " + fmt(v, 2) +
        " points over the other side this hand)";
    }
    const num = el("span", "num", note);
    num.title = tip;
    row.title = tip;
    row.appendChild(num);
    list.appendChild(row);
  });
  box.appendChild(list);
  if (byValue) reviewLead(box, d, words);
  if (!now) reviewLoss(box, d, words, name);
  reviewPosition(box, d, now, name);
}

/** How far the best move is ahead of the next best. */
function reviewLead(box, d, words) {
  const top = d.moves[d.best].value;
  const rest = d.moves.filter((m, k) => k !== d.best && m.value !== null).map((m) => m.value);
  if (top === null || !rest.length) return;
  const gap = top - Math.max(...rest);
  box.appendChild(el("div", "review-lead", "Best: " + words[d.best] + " — " +
    (gap < 0.05 ? "about as good as the next best." :
      "this move keeps " + points(gap) + " more than the next best.")));
}

/** What the move played cost against the reviewer's choice. */
function reviewLoss(box, d, words, name) {
  const loss = el("div", "review-loss");
  loss.id = "review-loss";
  loss.dataset.loss = d.loss === null ? "" : String(d.loss);
  loss.textContent = d.loss === null ? "The reviewer could not value the move played." :
    d.played === d.best ? name + " played the reviewer's choice: nothing lost." :
    d.loss < 0.05 ? name + " played " + words[d.played] + ", about as good as the " +
      "reviewer's choice: nothing lost." :
    name + " played " + words[d.played] + ": " + points(d.loss) +
      " fewer than the best move.";
  loss.title = d.loss === null ? "" : "lost " + d.loss.toFixed(2) + " points";
  box.appendChild(loss);
}

/** The side's prospects this hand before the move (the reviewer's estimate). */
function reviewPosition(box, d, now, name) {
  const v = d.position_value;
  if (v === null || v === undefined) return;
  const who = now ? "Your side is" : "Before this move, " + name + "'s side was";
  const text = Math.abs(v) < 0.05 ? (now ? "Both sides are" : "Before this move, both " +
    "sides were") + " expected to score about the same this hand." :
    who + " expected to score " + points(v) + (v > 0 ? " more" : " fewer") +
    " than the other side this hand.";
  const line = el("div", "review-how", text);
  line.id = "review-position";
  line.title = "the reviewer's estimate: " + fmt(v, 2) + " points over the other side";
  box.appendChild(line);
}

function reviewRender(f) {
  if (!reviewReady) reviewSetup();
  const box = $("review");
  box.textContent = "";
  const mv = f.move;
  const d = mv ? REVIEW_AT[f.hand + "/" + f.index] : null;
  box.dataset.hand = d ? String(d.hand) : "";
  box.dataset.move = d ? String(d.move) : "";
  if (!mv) box.appendChild(el("div", "", "Hand " + (f.hand + 1) + " dealt: step forward " +
                              "(▶▶) to see the first move."));
  else if (!d) box.appendChild(el("div", "", DATA.players[mv.seat] + " played " +
    moveWords(mv.card, mv.capture, mv.scopa) + ": only one move was possible."));
  else reviewDecision(box, d, DATA.players[d.seat]);
  // the chart's marker: after the last decision played by this position
  let seen = 0;
  for (const e of REVIEW.decisions) if (decisionFrame(e) <= pos) seen = e.order + 1;
  const svg = $("review-chart");
  const at = parseFloat(svg.dataset.x0) + parseFloat(svg.dataset.step) * seen;
  const marker = $("review-marker");
  marker.setAttribute("x1", String(at));
  marker.setAttribute("x2", String(at));
}
