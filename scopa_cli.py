"""The scopa command: record, replay, review, verify, play matches; eval, ladder, exploit, train.

The top layer: it imports the engine (``scopa_env``) and the command plumbing
(``agents.commands``), the rest of the agents and the trainer only when a subcommand
needs them (``scopa eval`` and ``scopa ladder`` live in ``agents``, ``scopa train`` in
``scopa_train``), so the engine never imports upward.
"""

from __future__ import annotations

import argparse
import select
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.commands import (
    Parser,
    add_rules_args,
    ignore_interrupts,
    non_negative_int,
    positive_int,
    quiet_idle_threads,
    rules_from_args,
    run,
    seed_arg,
    writable_file,
)
from scopa_env.cards import CODES, cards_of
from scopa_env.files import FileProblem, side_file
from scopa_env.moves import action_text, parse_action
from scopa_env.records import (
    RecordError,
    append_records,
    check_appendable,
    iter_records,
    load_and_verify,
    replay,
    verify_record,
)


def cmd_record(args: argparse.Namespace) -> int:
    from agents import make_agent
    from scopa_env.play import derive_seed, play_match

    rules = rules_from_args(args.rules, args.players, args.option)
    if len(args.agents) != rules.players:
        raise ValueError(f"--agents names {len(args.agents)} agents, the game has "
                         f"{rules.players} seats: give one agent spec per seat")
    for spec in dict.fromkeys(args.agents):  # every spec is checked before any match
        make_agent(spec, seed=0)
    check_appendable(args.out)
    progress = _progress(args.games, "matches")
    wins = [0, 0]
    done = 0
    failure: ValueError | None = None  # why the records file refused an append
    side: Path | None = None  # where the records it refused go instead
    try:
        for i in range(args.games):
            seed = derive_seed(args.seed, i)
            agents = [make_agent(spec, seed=derive_seed(seed, 1000 + s))
                      for s, spec in enumerate(args.agents)]
            rec = play_match(rules, seed, agents, args.agents)
            if side is None:
                try:
                    append_records(args.out, [rec])
                except (RecordError, FileProblem) as e:  # e.g. damage left by a dead writer
                    failure, side = e, side_file(args.out)
            if side is not None:
                try:
                    append_records(side, [rec])
                except (RecordError, FileProblem) as e:
                    raise FileProblem(f"{failure}; and the side file failed too: {e}") from None
            done += 1
            wins[rec["winner"]] += 1
            progress.update(1)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"interrupted: {_record_summary(args.out, done, side)}"
                                ) from None
    finally:
        progress.close()
    if side is not None:
        print(f"scopa record: error: {failure}; {_record_summary(args.out, done, side)}",
              file=sys.stderr)
        return 1
    print(f"appended {args.games} match record(s) to {args.out}; wins by team: "
          f"{wins[0]} (seats {', '.join(args.agents[0::2])}) - "
          f"{wins[1]} (seats {', '.join(args.agents[1::2])})")
    return 0


def _record_summary(out: str, done: int, side: Path | None) -> str:
    """Where the ``done`` whole records of ``scopa record`` went."""
    if side is None:
        return f"{done} whole match record(s) appended to {out}"
    kept = sum(1 for _ in iter_records(side))
    return (f"{done - kept} match record(s) appended to {out}, the other {kept} kept in "
            f"{side} (append them with: cat {side} >> {out})")


def _nth_record(path: str, k: int) -> tuple[int, dict[str, Any]]:
    """(line, record) of match ``k`` (1-based) of a records file, verified."""
    if k < 1:
        raise ValueError(f"--match {k}: matches are numbered from 1")
    n = 0
    for n, (line, rec) in enumerate(iter_records(path), 1):
        if n == k:
            return line, _verified(path, line, rec)
    raise ValueError(f"--match {k} is past the end: {path} holds {n} match(es)")


def _verified(path: str, line: int, rec: dict[str, Any]) -> dict[str, Any]:
    try:
        verify_record(rec)
    except RecordError as e:
        raise RecordError(f"{path}:{line}: {e}") from None
    return rec


def cmd_replay(args: argparse.Namespace) -> int:
    if args.html is not None:
        return _replay_html(args)
    if args.seat is not None:
        raise ValueError("--seat chooses the view of an --html page; use it with --html")
    if args.match is not None:
        chosen = [(args.match, _nth_record(args.file, args.match)[1])]
    else:
        chosen = ((k, _verified(args.file, line, rec))
                  for k, (line, rec) in enumerate(iter_records(args.file), 1))
    for k, rec in chosen:
        r = rec["rules"]
        print(f"=== match {k}: {r['name']}, {r['players']} players, seed {rec['seed']}, "
              f"players {', '.join(rec['players'])}")
        hand = -1
        for st in replay(rec):
            if st.hand != hand:
                hand = st.hand
                s = st.state_before
                print(f"--- hand {hand + 1}, dealer seat {s.dealer}; table "
                      f"{' '.join(CODES[c] for c in cards_of(s.table)) or '-'}")
            m = st.result.move
            table = " ".join(CODES[c] for c in cards_of(st.state_before.table)) or "-"
            flag = "  SCOPA!" if m.scopa else ""
            print(f"  seat {m.seat}: {action_text(m.action):<24} (table: {table}){flag}")
            if st.result.hand is not None:
                h = st.result.hand
                pts = [e["points"]["total"] for e in h.score]
                left = " ".join(CODES[c] for c in cards_of(h.leftover)) or "-"
                print(f"  hand over: leftover {left} to team {h.last_capture_team}; "
                      f"points {pts[0]}-{pts[1]}")
        print(f"match score {rec['match_score'][0]}-{rec['match_score'][1]}, "
              f"winner team {rec['winner']}")
    return 0


def _replay_html(args: argparse.Namespace) -> int:
    """``scopa replay FILE --html OUT``: one match as a self-contained web page."""
    from scopa_web.html import write_replay_page

    writable_file(args.html, "--html page")
    k = 1 if args.match is None else args.match
    _, rec = _nth_record(args.file, k)
    size = write_replay_page(args.html, rec, match=k, source=args.file, seat=args.seat)
    print(f"wrote {args.html} ({size // 1024} KiB): match {k} of {args.file}, "
          f"{len(rec['hands'])} hand(s)")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    """Review recorded matches: every decision valued by a reviewing agent
    (``agents.evaluation.match_review``); a table here, JSON lines or a web page in ``--out``."""
    from agents.evaluation.match_review import Reviewer, review_match, write_lines

    page = args.out is not None and args.out.lower().endswith((".html", ".htm"))
    if args.out is not None and not page and not args.out.lower().endswith(".jsonl"):
        raise ValueError(f"--out {args.out}: write the review as FILE.jsonl (JSON lines) or "
                         f"FILE.html (a web page)")
    if args.out is not None:
        writable_file(args.out, "--out file")
    reviewer = Reviewer(args.agent, seed=args.seed)
    if args.match is not None or page:
        k = 1 if args.match is None else args.match
        chosen = [(k, _nth_record(args.file, k)[1])]
    else:
        chosen = [(k, _verified(args.file, line, rec))
                  for k, (line, rec) in enumerate(iter_records(args.file), 1)]
    reviews = []
    for k, rec in chosen:
        progress = _progress(sum(len(h["moves"]) for h in rec["hands"]), "moves")
        try:
            review = review_match(rec, reviewer, match=k, source=args.file,
                                  progress=progress.update)
        finally:
            progress.close()
        print(review.table(), flush=True)
        reviews.append(review)
    if page:
        from scopa_web.html import write_replay_page

        size = write_replay_page(args.out, reviews[0].record, match=reviews[0].match,
                                 source=args.file, review=reviews[0].page_data())
        print(f"wrote {args.out} ({size // 1024} KiB): the review of match "
              f"{reviews[0].match} of {args.file}")
    elif args.out is not None:
        n = write_lines(args.out, reviews)
        print(f"wrote {args.out}: {n} JSON lines, the review of {len(reviews)} match(es)")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Play matches against an agent in the browser (a local web server)."""
    try:
        from scopa_web.server import serve
    except ModuleNotFoundError as e:  # starlette, uvicorn: the `web` extra
        raise ValueError(f"scopa serve needs the web extra ({e.name} is not installed): "
                         "pip install 'scopa-rl[web]'") from None

    rules = rules_from_args(args.rules, args.players, args.option)
    return serve(rules, args.opponent, host=args.host, port=args.port, seat=args.seat,
                 seed=args.seed, db=args.db, agents=args.agents,
                 hint_agent=None if args.hint_agent == "off" else args.hint_agent,
                 allowed_origins=args.allowed_origin, max_per_client=args.max_per_client)


def cmd_verify(args: argparse.Namespace) -> int:
    n = load_and_verify(args.file)
    print(f"{args.file}: {n} record(s) verified")
    return 0


def _ask(prompt: str) -> str:
    """``input(prompt)`` that Ctrl-C always interrupts: it waits for input in short
    ``select`` calls, because the signal may land on a helper thread (numpy's OpenBLAS
    starts one), which would leave a blocking read in the main thread waiting forever."""
    print(prompt, end="", flush=True)
    try:
        fd: int | None = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # no real stdin (e.g. replaced in tests)
        fd = None
    while fd is not None and not select.select([fd], [], [], 0.25)[0]:
        pass  # each wake-up lets Python raise a pending KeyboardInterrupt
    return input()


def cmd_play(args: argparse.Namespace) -> int:
    """Play a match in the terminal against agents."""
    from agents import make_agent
    from scopa_env.env import render_text
    from scopa_env.game import apply, new_match
    from scopa_env.observation import info_set
    from scopa_env.play import start_deal

    rules = rules_from_args(args.rules, args.players, args.option)
    seat_h = args.seat
    if not 0 <= seat_h < rules.players:
        raise ValueError(f"--seat {seat_h} is not a seat of a {rules.players}-player game: "
                         f"0..{rules.players - 1}")
    opponents = {s: make_agent(args.opponent, seed=args.seed + s)
                 for s in range(rules.players) if s != seat_h}
    state = new_match(rules, seed=args.seed)
    start_deal(opponents.values())
    while not state.done:
        seat = state.to_move
        if seat == seat_h:
            print("\n" + render_text(state, seat_h))
            legal = state.legal_actions()
            for i, a in enumerate(legal):
                print(f"  [{i}] {action_text(a)}")
            action = None
            while action is None:
                try:
                    raw = _ask("your move (number or text, q to quit): ").strip()
                except EOFError:
                    print("\nscopa play: input ended: match abandoned", file=sys.stderr)
                    return 1
                if raw == "q":
                    return 0
                if raw.isdigit() and int(raw) >= len(legal):
                    print(f"  there is no move [{int(raw)}]: the moves are numbered "
                          f"0 to {len(legal) - 1}")
                    continue
                try:
                    a = legal[int(raw)] if raw.isdigit() else parse_action(raw)
                except ValueError as e:
                    print(f"  {e}")
                    continue
                if a not in legal:
                    print(f"  {action_text(a)} is not legal here")
                    continue
                action = a
        else:
            action = opponents[seat].act(info_set(state, seat))
            print(f"seat {seat} plays {action_text(action)}")
        res = apply(state, action)
        if res.hand is not None:
            pts = [e["points"]["total"] for e in res.hand.score]
            print(f"\n*** hand over: team 0 {pts[0]} - team 1 {pts[1]}; match "
                  f"{state.match_score[0]}-{state.match_score[1]}")
            if not state.done:
                start_deal(opponents.values())
    print(f"match over: team {state.winner} wins")
    return 0


def _progress(total: int, unit: str):
    from tqdm import tqdm
    return tqdm(total=total, unit=unit, disable=total < 20 or not sys.stderr.isatty())


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="scopa", description=__doc__.splitlines()[0])
    from scopa_env import __version__
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record", help="play matches between agents and append their records")
    r.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                   help="one agent spec per seat, e.g. random greedy")
    r.add_argument("--games", type=positive_int, default=1, help="matches to play (default 1)")
    r.add_argument("--seed", type=seed_arg, default=0,
                   help="seed of the first match, the next ones derived from it (default 0; "
                        "'fresh': an unpredictable one)")
    r.add_argument("--out", required=True, help="JSON Lines file to append to")
    add_rules_args(r)
    r.set_defaults(func=cmd_record)
    rp = sub.add_parser("replay", help="print a recorded match move by move")
    rp.add_argument("file")
    rp.add_argument("--match", type=int, default=None, help="1-based match number")
    rp.add_argument("--html", metavar="OUT.html", default=None,
                    help="write the match (--match, default 1) as a self-contained web page")
    rp.add_argument("--seat", type=non_negative_int, default=None,
                    help="with --html: open the page in this seat's view (default: all hands)")
    rp.set_defaults(func=cmd_replay)
    rv = sub.add_parser("review", help="value every decision of recorded matches with a "
                                       "reviewing agent: what each move cost")
    rv.add_argument("file", metavar="RECORD")
    rv.add_argument("--match", type=int, default=None,
                    help="1-based match number (default: every match; the page: match 1)")
    rv.add_argument("--agent", default="pretrained:search=on", metavar="SPEC",
                    help="the reviewer: an agent that values moves in points (default: "
                         "pretrained:search=on; also pimc, ckpt:PATH,search=on)")
    rv.add_argument("--seed", type=seed_arg, default=0,
                    help="the reviewer's seed (default 0): each decision's review is a "
                         "function of it and the seat's information set")
    rv.add_argument("--out", default=None, metavar="FILE.jsonl|FILE.html",
                    help="also write the review: JSON lines (docs/review.md) or a "
                         "self-contained web page of the match")
    rv.set_defaults(func=cmd_review)
    v = sub.add_parser("verify", help="replay every record and check every field")
    v.add_argument("file")
    v.set_defaults(func=cmd_verify)
    pl = sub.add_parser("play", help="play a match in the terminal against an agent")
    pl.add_argument("--opponent", default="greedy", metavar="SPEC")
    pl.add_argument("--seat", type=non_negative_int, default=0)
    pl.add_argument("--seed", type=seed_arg, default=0)
    add_rules_args(pl)
    pl.set_defaults(func=cmd_play)
    sv = sub.add_parser("serve", help="play against an agent in the browser (local server)")
    sv.add_argument("--opponent", default="greedy", metavar="SPEC",
                    help="agent spec of every other seat (default: greedy)")
    sv.add_argument("--seat", type=non_negative_int, default=0,
                    help="the person's seat (default: 0)")
    sv.add_argument("--seed", type=int, default=None,
                    help="seed of the first match, the next ones derived from it, rooms "
                         "too (for tests and tournaments; views say \"seeded\"; default: "
                         "random)")
    sv.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default: 127.0.0.1, this machine only)")
    sv.add_argument("--port", type=non_negative_int, default=8765,
                    help="port (default: 8765; 0: any free)")
    sv.add_argument("--db", default=None, metavar="PATH",
                    help="SQLite file keeping every match (default: "
                         "$XDG_DATA_HOME/scopa/scopa.db or ~/.local/share/scopa/scopa.db)")
    sv.add_argument("--agents", nargs="+", default=None, metavar="SPEC",
                    help="agent specs a room may seat, besides --opponent "
                         "(default: greedy random expert)")
    sv.add_argument("--hint-agent", default="pretrained:search=on", metavar="SPEC|off",
                    help="the reviewer of the hints at a person's turn and of finished "
                         "matches, as scopa review --agent (default: pretrained:search=on; "
                         "off: no hints nor reviews)")
    sv.add_argument("--allowed-origin", action="append", default=None, metavar="URL",
                    help="a site whose pages may use this server besides its own address "
                         "and localhost, e.g. https://scopa.example.org (repeatable)")
    sv.add_argument("--max-per-client", type=int, default=None, metavar="N",
                    help="connections at once from one address (default: 256)")
    add_rules_args(sv)
    sv.set_defaults(func=cmd_serve)
    for name, help_ in (("eval", "evaluate one agent against another (duplicate deals)"),
                        ("ladder", "rate a set of agents in a round robin"),
                        ("exploit", "train a best response to an agent and measure its margin"),
                        ("train", "train from a YAML config: every stage of a recipe, resumable")):
        sp = sub.add_parser(name, help=help_, add_help=False)
        sp.set_defaults(func=None)
    return p


DELEGATED = ("eval", "ladder", "train", "exploit")


def main(argv: Sequence[str] | None = None) -> int:
    """``scopa COMMAND ...``; returns the exit status. A bad argument or input file is
    one line on stderr and status 2, Ctrl-C status 130: never a traceback."""
    quiet_idle_threads()
    top_level = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        try:
            return _delegate(argv[0], argv[1:])
        finally:
            if top_level:
                ignore_interrupts()
    known = argv[0] if argv and argv[0] in ("record", "replay", "review", "verify", "play",
                                            "serve") else None

    def command() -> int:
        args = build_parser().parse_args(argv)
        return args.func(args)

    return run(f"scopa {known}" if known else "scopa", command, top_level)


def _delegate(cmd: str, rest: list[str]) -> int:
    """``scopa eval|ladder|train|exploit``: the layer that implements it parses its own
    options."""
    if cmd == "eval":
        from agents.evaluation.evaluate import main as command
    elif cmd == "ladder":
        from agents.evaluation.ladder import main as command
    elif cmd == "exploit":
        from scopa_train.exploit import main as command
    else:
        from scopa_train.cli import main as train
        return train(rest, prog="scopa train")
    return command(rest)


if __name__ == "__main__":
    sys.exit(main())
