"""Live-table snapshots for the screens' tests, built from real rounds of the round kernel.

A round is played by :func:`firmware.ui.demo.play_round` (the kernel and the game's own code) from
stacked cards with seven seats, and the snapshot is written as the table controller sends it
(docs/ui.md, "A live table"): each seat's wagers, its cards as dealt, the hand's label, its result,
the record once settled. This is the test's stand-in for the controller, not product code.
"""

from __future__ import annotations

from typing import Any

from firmware.config import Config
from firmware.ui.context import GameContext
from firmware.ui.demo import play_round

#: Baccarat War, seven seats, every wager: spots 2, 3 and 5 share the highest tied score (8) and
#: contest the pool (spot 5 is out on the first pool card, 2 and 3 tie again, spot 2 wins on the
#: third); spots 1 and 7 tie the dealer's 3 (a lower tied tier, out of the pool) and go to war with
#: the dealer; spot 6's single 9 is out of the pool too. Seat 4 has no station.
POOL_CARDS = ("3h 8h 4d 2s 9c Ad 3s "         # first card: spots 1, 2, 3, 5, 6, 7, the dealer
              "Kc Ks 4c 6s Jh 2h Td "         # second card
              "9d 5c 7h "                     # the war: spot 1, spot 7, the dealer
              "7c 7d 4h 6d 6h 2c 9s")         # the pool: spots 2, 3, 5; then 2, 3; then 2, 3
WAGERS = {"bac": 10, "war": 10, "tie": 5, "four_card": 5, "war_pool": 10}
STATIONS = (1, 2, 3, 5, 6, 7)                 #: seat 4 has no station


def table_ctx(game: str = "baccarat-war", options: dict[str, Any] | None = None) -> GameContext:
    opts = {"pool": {"enabled": True}} if options is None and game == "baccarat-war" else (options or {})
    cfg = Config.model_validate({"games": {"enabled": [game], "default": game, "seats": 1,
                                           "options": {game: opts} if opts else {}}})
    return GameContext.from_config(cfg, game)


def pool_record(ctx: GameContext) -> dict[str, Any]:
    wagers = {seat: dict(WAGERS) for seat in STATIONS}
    return play_round(ctx, POOL_CARDS, wagers, round_id="T1-000042")


def label(record: dict[str, Any], doc: dict[str, Any]) -> str:
    """The hand's label as the controller sends it (the war family: its baccarat points)."""
    score = doc.get("score")
    return "" if score is None else f"{score} points"


def snapshot(record: dict[str, Any] | None, *, phase: str, game: str = "baccarat-war",
             bets: dict[int, dict[str, int]] | None = None, dealt: int | None = None,
             deciding: tuple[int, ...] = (), prompt: str | None = None, messages: tuple[str, ...] = (),
             betting_left_s: float | None = None, source: str = "physical") -> dict[str, Any]:
    """The table as the controller shows it; ``dealt``: only the first cards of each hand (the
    first ``dealt`` of the initial two), before the round is settled."""
    docs = {int(s["seat"]): s for s in (record or {}).get("seats", ())}
    seats = []
    for n in range(1, 8):
        doc = docs.get(n)
        cards = [] if doc is None else [*doc["cards"], *doc.get("war_cards", ())]
        if dealt is not None:
            cards = cards[:dealt]
        settled = phase == "settled" and doc is not None
        bet = (bets or {}).get(n) if bets is not None else (dict(doc["wagers"]) if doc else None)
        seats.append({
            "seat": n, "station": f"station-{n}" if n in STATIONS else None, "online": n != 6,
            "bet": bet, "cards": cards,
            "hand": label(record, doc) if doc is not None and (dealt is None or dealt >= 2) else None,
            "result": {"net": sum(int(r["net"]) for r in doc["results"].values()),
                       "outcome": "win" if sum(int(r["net"]) for r in doc["results"].values()) > 0 else "lose"}
            if settled else None,
            "deciding": n in deciding})
    dealer = (record or {}).get("dealer") or {"cards": []}
    d_cards = [*dealer["cards"], *dealer.get("war_cards", ())]
    if dealt is not None:
        d_cards = d_cards[:dealt]
    return {
        "table_id": "TABLE-1", "game": game, "game_name": game, "source": source, "phase": phase,
        "round_id": "T1-000042" if phase != "closed" else None, "round_no": 42,
        "betting_left_s": betting_left_s, "decision_left_s": 12.0 if phase == "decisions" else None,
        "min_bet": 1, "max_bet": 500, "seats": seats,
        "dealer": {"cards": d_cards, "hand": label(record, dealer) if record and (dealt is None or dealt >= 2) else None},
        "record": record if phase == "settled" else None, "messages": list(messages), "dealer_prompt": prompt,
    }


def write_images(out_dir: str) -> list[str]:
    """The docs' images of both screens (docs/ui.md, "A live table"), from the settled pool round."""
    import os

    import pygame

    from firmware.ui.betting import BetSlip
    from firmware.ui.games import game_ui
    from firmware.ui.livetable.dealer import DealerConsole
    from firmware.ui.livetable.station import StationScreen, station_view

    ctx = table_ctx()
    record = pool_record(ctx)
    snap = snapshot(record, phase="settled", messages=("Round settled: SEAT 2 wins the war pool",))

    class Idle:
        def open_betting(self) -> None: ...
        def close_betting(self) -> None: ...
        def deal(self) -> None: ...
        def declare_misdeal(self, reason: str) -> None: ...

    console = DealerConsole(lambda: snap, Idle())
    console.step()
    gui = game_ui(ctx)
    surface = pygame.Surface((1920, 1080))
    status = {"state": "IDLE", "credits": 1500, "credits_cents": 1500,
              "table": {**snap, "own_seat": 3, "link": "up"}}
    StationScreen().render(surface, station_view(gui, status, BetSlip(ctx.limits, ctx.chips, link=gui.link),
                                                 betting=False))
    paths = [os.path.join(out_dir, "ui-table-dealer.png"), os.path.join(out_dir, "ui-table-station.png")]
    pygame.image.save(console.surface, paths[0])
    pygame.image.save(surface, paths[1])
    return paths


if __name__ == "__main__":
    import os
    import sys

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    print("\n".join(write_images(sys.argv[1])))
