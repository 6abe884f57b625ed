"""``egm par GAME``: the PAR sheet (CONTRACTS.md), as JSON, text or a self-contained HTML report."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from firmware.commands._common import emit_json, positive_int
from firmware.commands.play import DEFAULT_UNIT, _game_arguments, _load, _progress


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "par",
        help="the PAR sheet of a game: return, house edge, hit frequency, variance, outcome tables",
        description=(
            "Exact wherever the game can be enumerated (Three Card Poker, Double Super 9, one-seat "
            "Baccarat War, Blackjack War and Hold'em War, Split 21 Stud with the house banking); Monte "
            "Carlo through the real kernel for the rest, with its sample size and 95% interval."
        ),
    )
    _game_arguments(p)
    p.add_argument("--method", choices=["auto", "exact", "monte-carlo"], default="auto",
                   help="auto (default): exact where possible, Monte Carlo for the rest")
    p.add_argument("--seats", type=positive_int, default=1, help="seats played (default 1)")
    p.add_argument("--unit", type=positive_int, default=DEFAULT_UNIT,
                   help=f"credits per wager, where pays round (commissions, pools; default {DEFAULT_UNIT})")
    p.add_argument("--rounds", type=positive_int, default=None,
                   help="Monte Carlo rounds (default 1,000,000)")
    p.add_argument("--seed", help="seed the Monte Carlo DRBGs (default: the production RNG)")
    p.add_argument("--processes", type=positive_int, help="Monte Carlo worker processes (default: every core)")
    p.add_argument("--html", metavar="FILE", help="also write the PAR sheet as a self-contained HTML report")
    p.add_argument("--convergence-rounds", type=positive_int, default=200_000,
                   help="with --html: rounds of the convergence run, counted as the sheet counts them (default 200,000)")
    p.add_argument("--verify", type=positive_int, metavar="ROUNDS",
                   help="also play ROUNDS rounds through the kernel and check every exact figure lies "
                        "in the simulated 95%% interval (exit 1 if one does not)")
    p.add_argument("--players", type=positive_int, metavar="N",
                   help="war games: also the war pool's figures for 1..N real players at a live table "
                        "(each player's return from the pool, commission included; N = 1 exact, "
                        "N >= 2 Monte Carlo through the kernel, --rounds per N, default 200,000)")
    p.add_argument("--json", action="store_true", help="print the PAR sheet as JSON")
    p.set_defaults(func=_par)


def _par(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from firmware.errors import UsageError
    from firmware.math.par import DEFAULT_ROUNDS, par_sheet

    start = time.perf_counter()
    game, options, _limits = _load(args)
    if args.html and not Path(args.html).resolve().parent.is_dir():
        raise UsageError(f"--html {args.html}: no such directory {Path(args.html).resolve().parent}")
    rounds = args.rounds or DEFAULT_ROUNDS
    if args.players:
        from firmware.math import war_pool

        war_pool.check(game.id, options, args.players, args.unit)
    from firmware.games.holdem_war import HoldemWarOptions

    if isinstance(options, HoldemWarOptions) and args.method != "monte-carlo":   # Hold'em War's
        _holdem_ties(options.decks)
    with _progress(rounds, f"par {game.id}") as advance:
        sheet = par_sheet(game.id, options, method=args.method, seats=args.seats, unit=args.unit,
                          rounds=rounds, seed=args.seed, processes=args.processes, progress=advance)
    elapsed = {"sheet": sheet.elapsed}
    players, failed = None, False
    if args.verify:
        from firmware.math.verify import verify

        phase = time.perf_counter()
        with _progress(args.verify, f"verify {game.id}") as advance:
            checks = verify(sheet, options, args.verify, seed=args.seed, processes=args.processes,
                            progress=advance)
        elapsed[f"verification ({args.verify:,} rounds)"] = time.perf_counter() - phase
        # An extra of the sheet, so the HTML report shows the Monte Carlo agreement too.
        sheet.extras["verification"] = [c.to_json() for c in checks]
        failed = not all(c.inside for c in checks)
    if args.players:
        phase = time.perf_counter()
        players_rounds = args.rounds or war_pool.DEFAULT_ROUNDS
        with _progress(players_rounds * (args.players - 1), f"war pool, 2-{args.players} players") as advance:
            figures = war_pool.player_figures(game.id, options, args.players, unit=args.unit,
                                              rounds=players_rounds, seed=args.seed,
                                              processes=args.processes, progress=advance)
        players = _players_json(figures, options)
        failed = failed or not players["monte_carlo_agrees"]
        elapsed[f"war pool, 1-{args.players} players"] = time.perf_counter() - phase
    if args.html:
        from firmware.math.report import convergence, write_html

        phase = time.perf_counter()
        with _progress(args.convergence_rounds, f"convergence {game.id}") as advance:
            curve = convergence(game.id, options, rounds=args.convergence_rounds,
                                seed=f"{args.seed}/convergence" if args.seed else "convergence",
                                seats=args.seats, unit=args.unit, progress=advance)
        elapsed[f"convergence run ({args.convergence_rounds:,} rounds)"] = time.perf_counter() - phase
        phase = time.perf_counter()
        try:
            write_html(sheet, args.html, convergence=curve, elapsed=elapsed)
        except OSError as exc:
            raise UsageError(f"cannot write {args.html}: {exc.strerror}") from None
        elapsed["HTML report"] = time.perf_counter() - phase
    doc = sheet.to_json()
    if players is not None:
        doc["players"] = players
    elapsed["whole command"] = time.perf_counter() - start
    doc["elapsed"] = {name: round(seconds, 3) for name, seconds in elapsed.items()}
    if args.json:
        emit_json(doc)
    else:
        _print(doc)
        if players is not None:
            _print_players(players)
        for c in doc.get("verification", []):
            sys.stdout.write(f"verify {c['wager']:<10s} exact {c['exact']:.6f}  simulated "
                             f"{c['simulated']:.6f}  [{c['ci95'][0]:.6f}, {c['ci95'][1]:.6f}]  "
                             f"{'inside' if c['inside'] else 'OUTSIDE'} ({c['rounds']:,} rounds)\n")
        if args.html:
            sys.stdout.write(f"HTML report: {args.html}\n")
        sys.stdout.write("elapsed: " + ", ".join(f"{k} {v:.2f} s" for k, v in elapsed.items()) + "\n")
    return 1 if failed else 0


def _holdem_ties(decks: int) -> None:
    """Hold'em War's exact tie count ships for the default shoe; another is computed here, with a
    progress bar (about a minute of CPU; ``make par-sheets`` ships more)."""
    from firmware.math import holdem_war_tie

    if holdem_war_tie.is_known(decks):
        return
    sys.stderr.write(f"holdem-war: exact ties for {decks} deck(s) are not shipped; computing them "
                     "(about a minute)\n")
    with _progress(holdem_war_tie.board_count(decks), f"ties holdem-war, {decks} deck(s)") as advance:
        holdem_war_tie.tie_count(decks, advance)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.4f}%"


def _print(doc: dict[str, Any]) -> None:
    out = sys.stdout
    out.write(f"PAR sheet: {doc['game']} ({doc['method']}), {doc['seats']} seat(s), unit {doc['unit']}\n")
    out.write(f"{'wager':<12s} {'method':<12s} {'return':>10s} {'house edge':>11s} {'hit freq':>9s} "
              f"{'std dev':>8s} {'EoR':>8s}  95% interval / precision\n")
    for name, w in doc["wagers"].items():
        extra = ""
        if w.get("ci95"):
            extra = f"[{_pct(w['ci95'][0])}, {_pct(w['ci95'][1])}] n={w['sample_size']:,}"
        elif w.get("precision"):
            extra = f"+-{w['precision']:.1e}"
        out.write(f"{name:<12s} {w['method']:<12s} {_pct(w['rtp']):>10s} {_pct(w['house_edge']):>11s} "
                  f"{w['hit_frequency']:>9.5f} {w['standard_deviation']:>8.4f} "
                  f"{_pct(w.get('element_of_risk')) if 'element_of_risk' in w else '-':>8s}  {extra}\n")
    war = doc.get("war")
    if war and war.get("average_steps") is not None:
        out.write(f"war: probability {war['probability']:.6f}, average {war['average_steps']:.4f} steps\n")
    strategy = doc.get("strategy")
    if strategy:
        out.write(f"strategy: {strategy}\n")


def _players_json(figures: list[Any], options: Any) -> dict[str, Any]:
    """The ``players`` section: the pool's figures for 1..N players (docs/math/README.md)."""
    z = [f.monte_carlo.symmetry_z for f in figures if f.monte_carlo and f.monte_carlo.symmetry_z is not None]
    return {
        "unit": figures[0].unit,
        "dealer_ante": options.pool.dealer_ante,
        "commission_percent": float(options.pool.commission),
        "figures": [f.to_json() for f in figures],
        "symmetry_max_z": max(z, default=None),
        "monte_carlo_agrees": all(f.agrees is not False for f in figures),
    }


def _print_players(doc: dict[str, Any]) -> None:
    out = sys.stdout
    out.write(f"war pool among real players: each places {doc['unit']} credits on WAR_POOL, dealer ante "
              f"{doc['dealer_ante']}, commission {doc['commission_percent']:g}%; each player's figures\n")
    out.write(f"{'players':>7s} {'pot':>5s} {'paid':>5s} {'return':>10s} {'dealer wins':>11s} "
              f"{'commission/round':>16s} {'contest':>9s} {'+-':>7s}  kernel: return +- std err, rounds\n")
    for f in doc["figures"]:
        mc = f.get("monte_carlo")
        contest_se = _pct(f["contest_standard_error"]) if f["contest_standard_error"] is not None else "exact"
        kernel = (f"{_pct(mc['rtp'])} +- {_pct(mc['rtp_standard_error'])}, {mc['rounds']:,}"
                  f"{'' if mc['agrees'] else '  DISAGREES'}" if mc else "-")
        out.write(f"{f['players']:>7d} {f['pot']:>5d} {f['paid_to_winner']:>5d} {_pct(f['rtp']):>10s} "
                  f"{_pct(f['dealer_wins_probability']):>11s} {f['commission_per_round']:>13.4f} cr "
                  f"{_pct(f['contest_probability']):>9s} {contest_se:>7s}  {kernel}\n")
    out.write("return, dealer wins, commission: exact (N >= 2: the dealer is one of N + 1 alike "
              "participants); contest: N >= 2 through the kernel\n")
    if doc["symmetry_max_z"] is not None:
        out.write(f"symmetry: every seat's own return lies within {doc['symmetry_max_z']:.2f} standard "
                  "errors of the other seats' mean\n")
