/* The database's pages: every finished match (/history: the winner by name, each record
   downloadable, each match's review linked where the server reviews; ?player=NAME: that
   player's matches) and each player's and agent's record (/players: each name links to
   their matches). el() is cards.js's. */
"use strict";

const PAGE = document.body.dataset.page;
const PLAYER = new URLSearchParams(location.search).get("player");  // history: one player's
const HINTS = document.body.dataset.hints === "on";  // the server reviews finished matches
let offset = 0;

function $(id) { return document.getElementById(id); }

function row(cells, head) {
  const tr = el("tr");
  for (const c of cells) {
    const td = el(head ? "th" : "td");
    if (c instanceof Node) td.appendChild(c); else td.textContent = String(c);
    tr.appendChild(td);
  }
  return tr;
}

async function get(path) {
  const r = await fetch(path);
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || "HTTP " + r.status);
  return data;
}

/** The winning side by name: "ann" (2 players), "the team of ann and cy" (4). */
function winnerName(m) {
  if (m.winner === null || m.winner === undefined) return "—";
  const side = m.players.filter((_, s) => s % 2 === m.winner);
  return side.length === 1 ? side[0] : "the team of " + side.join(" and ");
}

function link(text, href) {
  const a = el("a", "", text);
  a.href = href;
  return a;
}

/** A match by its sides: "ann vs greedy", "ann and cy vs bo and di" (a side: a team). */
function sidesName(players) {
  return [0, 1].map((t) => players.filter((_, s) => s % 2 === t).join(" and ")).join(" vs ");
}

async function history() {
  const t = $("records");
  if (!offset) {
    t.appendChild(row(["finished (UTC)", "match", "score", "winner", "record"], true));
    if (PLAYER !== null) {
      $("title").textContent = "Matches of " + PLAYER;
      $("title").classList.remove("hidden");
    }
  }
  const data = await get("/api/history?offset=" + offset +
                         (PLAYER !== null ? "&player=" + encodeURIComponent(PLAYER) : ""));
  for (const m of data.matches) {
    const id = encodeURIComponent(m.room);
    const what = el("div");
    what.appendChild(el("div", "", sidesName(m.players)));
    what.appendChild(el("div", "sub", m.rules + (m.kind === "solo" ? ", one person" : "") +
                        ", " + m.hands + (m.hands === 1 ? " hand" : " hands")));
    const links = el("div", "links-cell");
    if (HINTS) links.appendChild(link("review", "/review/" + id));
    const download = link("download", "/api/match/" + id + "/record");
    download.setAttribute("download", "scopa-" + m.room + ".jsonl");
    links.appendChild(download);
    const when = new Date(m.finished * 1000).toISOString().slice(0, 16).replace("T", " ");
    const tr = row([when, what, m.match_score.join("–"), winnerName(m), links]);
    tr.dataset.room = m.room;
    t.appendChild(tr);
  }
  offset += data.matches.length;
  $("more").classList.toggle("hidden", data.matches.length < 100);
}

async function players() {
  const t = $("records");
  t.appendChild(row(["name", "kind", "matches", "wins", "hands", "points per hand"], true));
  const data = await get("/api/players");
  for (const p of data.players) {
    const tr = row([link(p.name, "/history?player=" + encodeURIComponent(p.name)),
                    p.agent ? "agent" : "person", p.matches, p.wins, p.hands,
                    p.points_per_hand === null ? "—" : p.points_per_hand.toFixed(2)]);
    tr.dataset.name = p.name;
    t.appendChild(tr);
  }
}

function fail(e) {
  $("error").textContent = e.message;
  $("error").classList.remove("hidden");
}

$("more").addEventListener("click", () => history().catch(fail));
(PAGE === "history" ? history() : players()).catch(fail);
