"""One WIN convention on every screen (docs/ui.md, "WIN"): WIN is what a round paid to the credit
meter. Each wager's tag shows what that wager paid (its stake back and its winnings), the WIN meter
is the sum of the tags on the table at every beat of a round, the settlement's message names the
same amount, and the help says so. Checked on the demonstration round of every game."""

from __future__ import annotations

import pytest

from firmware.games.base import Outcome
from firmware.ui.builders import table_view
from firmware.ui.demo import START_CREDITS, demo, demo_config, demo_games
from firmware.ui.games.base import coin_out, round_stake
from firmware.ui.par import sheet_for_config
from firmware.ui.playback import Playback
from firmware.ui.view import ResultView


def tags(view) -> list[ResultView]:
    """Every result tag in a (felt) view."""
    out: list[ResultView] = []

    def walk(v):
        if isinstance(v, ResultView):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            for x in v:
                walk(x)
        elif hasattr(v, "__dataclass_fields__"):
            for name in v.__dataclass_fields__:
                walk(getattr(v, name))

    walk(view)
    return out


def meters(view) -> dict[str, int]:
    """The meters in credits, as drawn ("1,960 credits" -> 1960)."""
    return {m.name: int(m.detail.split()[0].replace(",", "")) for m in view.chrome.meters}


@pytest.mark.parametrize("game", demo_games())
def test_the_win_meter_is_the_sum_of_the_tags_shown_at_every_beat(game):
    d = demo("war", game)
    record = d.record
    paid, staked = coin_out(record), round_stake(record)
    assert paid == staked + int(record["net"])
    credits_after = START_CREDITS - staked + paid
    status = dict(d.status, credits=credits_after, credits_cents=credits_after)
    playback = Playback(d.gui.beats(record))
    seen_paid = []
    for index in range(len(playback.beats)):
        playback.index, playback.elapsed = index, playback.beats[index].duration
        view = table_view(d.gui, status, d.slip, record=record, playback=playback)
        shown = tags(view.felt)
        # The number on each tag is what it paid; a tag with no number paid nothing.
        for tag in shown:
            words = f"{tag.label} {tag.amount}".split()
            assert (int(words[-1].replace(",", "")) if tag.amount else 0) == tag.paid, tag
            if tag.outcome in (Outcome.LOSE, Outcome.FOLD):
                assert tag.paid == 0 and tag.amount == "", tag
        m = meters(view)
        assert m["meter.win"] == sum(t.paid for t in shown), (game, index)
        # The credit meter holds back only what is not shown yet.
        assert m["meter.credit"] == credits_after - paid + m["meter.win"], (game, index)
        seen_paid.append(m["meter.win"])
    assert seen_paid == sorted(seen_paid)                 # the meter only counts up
    assert seen_paid[-1] == paid > 0
    caption = playback.beats[-1].caption
    assert caption == f"You win ${paid // 100}.{paid % 100:02d}", caption   # the demos play at 1 cent a credit


@pytest.mark.parametrize("game", demo_games())
def test_the_help_says_what_win_means(game):
    gui = demo("help", game).gui
    doc = gui.help(sheet_for_config(demo_config(game), game, gui.ctx.options))
    paragraphs = [p for page in doc.pages for section in page for p in section.paragraphs]
    assert any(p.startswith("WIN is what a round pays to your credits") and "WIN meter is the sum" in p
               for p in paragraphs)
