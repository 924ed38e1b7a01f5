"""A game record as one self-contained HTML page: a card table to step through.

``match_data(rec)`` replays the record with ``scopa_env.records.replay`` and lists
one frame per position (each hand's deal, then the position after every move, the
last one of a hand scored but not yet redealt), everything the page shows. The
page (``replay_page``) embeds that data, its CSS and its JavaScript inline: no
network access and no external files.
"""

from __future__ import annotations

import html
import json
import os
import time
from typing import Any

from scopa_env.cards import CODES, cards_of
from scopa_env.files import file_errors
from scopa_env.game import GameState, apply
from scopa_env.moves import ACE_ALL_BASE, action_text
from scopa_env.records import replay
from scopa_env.rules import make_rules

from . import asset, fill


def _codes(mask: int) -> list[str]:
    return [CODES[c] for c in cards_of(mask)]


def _frame(state: GameState, hand: int, index: int, scopa_cards: list[list[str]],
           move: dict[str, Any] | None = None,
           hand_over: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the page shows in one position (all hands; the page hides what a seat's view
    may not see)."""
    live = hand_over is None
    return {"hand": hand, "index": index, "hands": [_codes(h) for h in state.hands],
            "table": _codes(state.table), "piles": [_codes(p) for p in state.piles],
            "scope": list(state.scope), "scopa_cards": [list(s) for s in scopa_cards],
            "score": list(state.match_score), "deck": state.deck_count,
            "dealer": state.dealer, "to_move": state.to_move if live else None,
            "move": move, "hand_over": hand_over}


def move_dict(seat: int, action: int, card: int, capture: int, scopa: bool) -> dict[str, Any]:
    """A played move for the pages: seat, card and captured codes, scopa, text."""
    return {"seat": seat, "card": CODES[card], "capture": _codes(capture), "scopa": scopa,
            "takes_all": action >= ACE_ALL_BASE, "text": action_text(action)}


def match_data(rec: dict[str, Any], *, match: int = 1, source: str = "") -> dict[str, Any]:
    """Every frame of a recorded match and its per-hand scores (JSON-able).

    Raises ``scopa_env.records.RecordError`` when the record does not replay."""
    rules = make_rules(**rec["rules"])
    frames: list[dict[str, Any]] = []
    hands: list[dict[str, Any]] = []
    scopa_cards: list[list[str]] = [[], []]
    for st in replay(rec):
        before = st.state_before
        if st.index == 0:
            scopa_cards = [[], []]
            hands.append({"dealer": before.dealer, "start": len(frames)})
            frames.append(_frame(before, st.hand, -1, scopa_cards))
        m = st.result.move
        if m.scopa:
            scopa_cards[m.seat % 2].append(CODES[m.card])
        after = before.copy()
        apply(after, st.action, check=False, deal_next=False)  # the end of a hand, unredealt
        h = st.result.hand
        over = None
        if h is not None:
            over = {"leftover": _codes(h.leftover), "last_capture_team": h.last_capture_team,
                    "score": h.score, "match_over": st.result.match_over}
            hands[-1].update(end=len(frames), score=h.score,
                             points=[e["points"]["total"] for e in h.score],
                             match_score=list(after.match_score))
        frames.append(_frame(after, st.hand, st.index, scopa_cards,
                             move_dict(m.seat, st.action, m.card, m.capture, m.scopa), over))
    extra = [k for k in ("re_bello", "napola") if getattr(rules, k)]
    return {"format": "scopa-replay/1", "source": source, "match": match,
            "rules": rules.to_dict(), "players": list(rec["players"]),
            "seed": str(rec["seed"]),  # as text: JavaScript numbers round past 2**53
            "match_score": list(rec["match_score"]), "winner": rec.get("winner"),
            "point_keys": ["carte", "denari", "settebello", "primiera", "scope", *extra],
            "hands": hands, "frames": frames}


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    return (json.dumps(data, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


SITE_NAV = ('<nav><a href="/">Play an agent</a> <a href="/room">Play with others</a> '
            '<a href="/history">History</a> <a href="/players">Players</a></nav>')


def match_name(players: list[str], when: float | None = None) -> str:
    """A match named by its sides and date: "ann vs greedy", "ann and bo vs cy and di"
    (a side: the seats of a team), then ", 2026-12-07 17:24 UTC" when ``when`` (Unix
    seconds) is given."""
    sides = [" and ".join(players[t::2]) for t in (0, 1)]
    name = " vs ".join(sides)
    return name if when is None else name + time.strftime(", %Y-%m-%d %H:%M UTC",
                                                          time.gmtime(when))


def replay_page(rec: dict[str, Any], *, match: int = 1, source: str = "",
                seat: int | None = None, review: dict[str, Any] | None = None,
                site: bool = False, when: float | None = None) -> str:
    """The whole HTML page of a recorded match; ``seat`` opens it in that seat's view
    (``None``: every hand shown); ``review``: the match's review
    (``agents.evaluation.match_review.MatchReview.page_data``), shown beside each move
    (``static/review.js``). The page is named by the players and ``when`` (Unix seconds:
    the match's start), the file ``source`` added unless ``site``: a page of ``scopa
    serve``, with the site's navigation."""
    players = rec["rules"]["players"]
    if seat is not None and not 0 <= seat < players:
        raise ValueError(f"--seat {seat} is not a seat of this match (0..{players - 1})")
    data = match_data(rec, match=match, source=source)
    data["view"] = "all" if seat is None else seat
    name = match_name(list(rec["players"]), when)
    if source and not site:
        name += f" (match {match} of {os.path.basename(source)})"
    kind = "review" if review else "replay"
    extra = {"review_style": "", "review_script": ""}
    if review is not None:
        extra = {"review_style": asset("review.css"),
                 "review_script": f"const REVIEW = {_script_json(review)};\n{asset('review.js')}"}
    return fill(asset("replay.html"), title=html.escape(f"Scopa {kind}: {name}"),
                heading=html.escape(name), kind=kind, nav=SITE_NAV if site else "",
                style=asset("cards.css") + asset("replay.css"), common=asset("cards.js"),
                script=asset("replay.js"), data=_script_json(data), **extra)


def write_replay_page(path: str | os.PathLike, rec: dict[str, Any], *, match: int = 1,
                      source: str = "", seat: int | None = None,
                      review: dict[str, Any] | None = None) -> int:
    """Write the page to ``path``; returns its size in bytes. A missing folder raises
    ``OSError`` naming it."""
    folder = os.path.dirname(os.fspath(path)) or "."
    if not os.path.isdir(folder):
        raise OSError(f"cannot write {os.fspath(path)}: folder {folder} does not exist")
    text = replay_page(rec, match=match, source=source, seat=seat, review=review)
    data = text.encode("utf-8")
    with file_errors(path, "write the replay page to"), open(path, "wb") as f:
        f.write(data)
    return len(data)


def waiting_page(title: str, text: str, every_s: int = 1) -> str:
    """A page of the site (its navigation) that says what is being computed and loads
    itself again every ``every_s`` seconds (the server's review of a match while it is
    computed)."""
    t = html.escape(title)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="refresh" content="{every_s}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{t}</title><style>{asset('cards.css')}</style></head>\n"
            f"<body><header><h1>Scopa</h1>{SITE_NAV}</header><h2>{t}</h2>"
            f'<p class="panel" id="reviewing">{html.escape(text)}</p></body></html>\n')
