/* The review on the replay page (before replay.js, which calls reviewRender after each
   render): for the move just played, the reviewer's value of every legal move as a bar, the
   played move and the reviewer's marked, the loss; a chart of each seat's points lost over
   the match. REVIEW: agents.evaluation.review.MatchReview.page_data (docs/review.md).
   The play page draws a hint with reviewDecision (no REVIEW there). */
"use strict";

const REVIEW_AT = {};  // "hand/move" -> the decision's review
if (typeof REVIEW !== "undefined")
  REVIEW.decisions.forEach((d, i) => { d.order = i; REVIEW_AT[d.hand + "/" + d.move] = d; });
const SEAT_COLORS = ["#1f6fb4", "#c0392b", "#2e8b3a", "#8e44ad"];
const CHART = { w: 560, h: 170, left: 36, right: 8, top: 8, bottom: 22 };
let reviewReady = false;

function decisionFrame(d) { return DATA.hands[d.hand].start + d.move + 1; }

function fmt(x, digits) { return (x >= 0 ? "+" : "") + x.toFixed(digits); }

function reviewSetup() {
  const aside = document.querySelector("aside");
  const panel = el("div", "panel review");
  panel.id = "review-panel";
  panel.appendChild(el("h2", "", "Review of the last move"));
  const box = el("div");
  box.id = "review";
  panel.appendChild(box);
  aside.insertBefore(panel, aside.firstChild);
  const below = el("div", "panel review");
  below.id = "review-chart-panel";
  below.appendChild(el("h2", "", "Points lost over the match · reviewer " + REVIEW.reviewer +
                       " (seed " + REVIEW.seed + ")"));
  below.appendChild(reviewChart());
  below.appendChild(reviewSeats());
  document.querySelector(".layout > div").appendChild(below);
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
  label.textContent = "decisions in the order played (" + n + ")";
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
  for (const h of ["seat", "player", "decisions", "agreed", "mean loss", "total loss"])
    head.appendChild(el("th", "", h));
  t.appendChild(head);
  for (const s of REVIEW.seats) {
    const tr = el("tr");
    tr.dataset.seat = String(s.seat);
    const key = el("td");
    key.appendChild(el("span", "swatch"));
    key.lastChild.style.background = SEAT_COLORS[s.seat % 4];
    key.appendChild(document.createTextNode(" " + s.seat));
    tr.appendChild(key);
    tr.appendChild(el("td", "", s.player));
    tr.appendChild(el("td", "", s.decisions));
    tr.appendChild(el("td", "", s.agreed));
    tr.appendChild(el("td", "", s.mean_loss === null ? "-" : s.mean_loss.toFixed(3)));
    tr.appendChild(el("td", "", s.total_loss.toFixed(2)));
    t.appendChild(tr);
  }
  return t;
}

/** A decision's bars in box: d a decision line of the review (docs/review.md), or a hint
    (played and loss null: no move played yet); name: the seat's player. */
function reviewDecision(box, d, name) {
  const byValue = d.moves.some((m) => m.value !== null);
  const key = byValue ? "value" : "prob";
  const vals = d.moves.map((m) => m[key]).filter((v) => v !== null);
  // values: the best move's bar full, the worst's a fifth of it (moves 0.5 point or
  // less apart drawn nearly alike); probabilities: from 0 to 1
  const hi = byValue ? Math.max(...vals) : 1;
  const lo = byValue ? hi - Math.max(1.25 * (hi - Math.min(...vals)), 0.5) : 0;
  const how = { search: "the search's mean hand margin", exact: "the exact hand margin",
                network: "the network's probability", forced: "" }[d.how] ||
              d.how + "'s value";
  box.appendChild(el("div", "review-how", "Seat " + d.seat + " (" + name + ") " +
    (d.played === null ? "has " : "had ") + d.moves.length + " moves; bars: " + how +
    (byValue ? " (points)" : "") + (d.deep ? ", searched for the review" : "")));
  const list = el("div", "review-moves");
  list.id = "review-moves";
  d.moves.forEach((m, k) => {
    const row = el("div", "move-row");
    row.dataset.index = String(k);
    if (k === d.played) row.classList.add("played");
    if (k === d.best) row.classList.add("best");
    row.appendChild(el("span", "move-name", m.text));
    const track = el("span", "track");
    const v = m[key];
    const bar = el("span", "bar" + (v === null ? " none" : ""));
    if (v !== null) bar.style.width = Math.max(2, 100 * (v - lo) / (hi - lo)).toFixed(1) + "%";
    bar.style.background = v === null ? "" : SEAT_COLORS[d.seat % 4];
    track.appendChild(bar);
    row.appendChild(track);
    row.appendChild(el("span", "num", v === null ? "–" : byValue ? fmt(v, 2) :
                       (100 * v).toFixed(0) + "%"));
    const tags = [];
    if (k === d.played) tags.push("played");
    if (k === d.best) tags.push("reviewer");
    row.appendChild(el("span", "tags", tags.join(" · ")));
    list.appendChild(row);
  });
  box.appendChild(list);
  if (d.played !== null) reviewLoss(box, d);
  if (d.position_value !== null)
    box.appendChild(el("div", "review-how", "The network's value of the position: " +
                       fmt(d.position_value, 2) + " points for seat " + d.seat + "'s team."));
}

function reviewLoss(box, d) {
  const loss = el("div", "review-loss");
  loss.id = "review-loss";
  loss.dataset.loss = d.loss === null ? "" : String(d.loss);
  loss.textContent = d.loss === null ? "The reviewer did not value the played move." :
    d.played === d.best ? "The reviewer's move: nothing lost." :
    "Lost " + d.loss.toFixed(2) + " points against the reviewer's move.";
  box.appendChild(loss);
}

function reviewRender(f) {
  if (!reviewReady) reviewSetup();
  const box = $("review");
  box.textContent = "";
  const mv = f.move;
  const d = mv ? REVIEW_AT[f.hand + "/" + f.index] : null;
  box.dataset.hand = d ? String(d.hand) : "";
  box.dataset.move = d ? String(d.move) : "";
  if (!mv) box.appendChild(el("div", "", "Hand " + (f.hand + 1) + " dealt."));
  else if (!d) box.appendChild(el("div", "", "Only one legal move: no decision."));
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
