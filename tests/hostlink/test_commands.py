"""Host commands are delivered at least once and applied exactly once, after any outage on either
side (campaign item 3): a command sent while the terminal's link, or the host, is away arrives
when they are back; a command sent again, or replayed, is applied once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from egmproto.identity import HostIdentity
from egmproto.mqtt import down_topic
from host.server import COMMAND_RETRY_S, HostServer

from .conftest import Floor, switchable


def _applied(floor: Floor, terminal: str, event: str = "host.disabled") -> int:
    return sum(1 for e in floor.ledgers[terminal].events(10_000) if e["event"] == event)


def _power_cut(floor: Floor, terminal: str) -> None:
    link = floor.links.pop(terminal)
    link.client.stop()
    link.outbox.close()
    floor.ledgers.pop(terminal).close()


def _poll_host_until(floor: Floor, done, rounds: int = 10) -> None:
    """The host's command poller until ``done()``, its clock a retry interval ahead (so every
    pending command is due at every poll)."""
    floor.host._wall = lambda: datetime.now(UTC) + timedelta(seconds=COMMAND_RETRY_S + 1)
    for _ in range(rounds):
        floor.host.poll_commands()
        floor.settle()
        if done():
            return


def test_a_disable_sent_while_the_terminals_link_is_down_arrives_when_it_is_back(floor: Floor) -> None:
    # the campaign's case, through `egm host disable` (the operator's queue), three times over
    cabinet = floor.terminal("T1", terminal=switchable()).terminal.cabinet
    floor.settle()
    for attempt in range(3):
        floor.link_down("T1")
        floor.store.queue_command("T1", *(("disable", {"reason": "audit"}) if attempt % 2 == 0 else ("enable", {})))
        floor.host.poll_commands()                      # sent into the void: T1 hears nothing
        floor.settle()
        assert cabinet.disabled is (attempt % 2 == 1)
        floor.link_down("T1", False)                    # back: its new session's hello
        _poll_host_until(floor, lambda a=attempt: cabinet.disabled is (a % 2 == 0))
        assert cabinet.disabled is (attempt % 2 == 0), f"attempt {attempt}: the command never arrived"
    assert floor.store.pending_commands() == []


def test_a_command_of_a_host_that_restarted_is_still_delivered(floor: Floor, tmp_path: Path) -> None:
    cabinet = floor.terminal("T1", terminal=switchable()).terminal.cabinet
    floor.settle()
    floor.bus.drop = lambda topic, payload: topic == down_topic("T1")     # the command is lost...
    floor.store.queue_command("T1", "disable", {"reason": "audit"})
    floor.host.poll_commands()
    floor.settle()
    floor.bus.drop = lambda topic, payload: False
    floor.host.client.stop()                                               # ...and the host dies
    host = HostServer(floor.store, HostIdentity(floor.pki), floor.bus.factory)
    host.client.on_message = host.handle
    host.client.start()
    floor.host = host
    _poll_host_until(floor, lambda: cabinet.disabled)
    assert cabinet.disabled and floor.store.pending_commands() == []


def test_a_command_sent_again_or_replayed_is_applied_once(floor: Floor) -> None:
    link = floor.terminal("T1", terminal=switchable())
    cabinet = link.terminal.cabinet
    floor.settle()
    # the confirmation is lost on the way (the terminal's reports do not reach the host)
    floor.bus.drop = lambda topic, payload: topic != down_topic("T1")
    floor.host.command("T1", "disable", {"reason": "audit"})
    floor.settle()
    assert cabinet.disabled and _applied(floor, "T1") == 1
    captured = [(t, p) for t, p in floor.bus.seen if t == down_topic("T1")][-1]
    for _ in range(3):                                                     # sent again and again
        floor.host.send_commands("T1", force=True)
        floor.settle()
    cabinet.disabled = False                                               # (to see a re-application)
    floor.bus.queue.append(captured)                                       # and replayed
    floor.settle()
    assert _applied(floor, "T1") == 1 and not cabinet.disabled
    assert link.stats["command_repeats"] == 3
    floor.bus.drop = lambda topic, payload: False
    link.poll()
    floor.now[0] += 10
    floor.settle()
    assert floor.store.pending_commands() == [] and floor.store.confirmed_command("T1") == 1


def test_a_power_cut_after_applying_does_not_apply_it_again(floor: Floor) -> None:
    floor.terminal("T1")
    floor.settle()
    floor.bus.drop = lambda topic, payload: topic != down_topic("T1")     # no confirmation gets out
    floor.host.command("T1", "send_meters", {})
    floor.settle()
    snapshots = _applied(floor, "T1", "host.command")
    assert snapshots == 1
    _power_cut(floor, "T1")
    floor.bus.drop = lambda topic, payload: False
    floor.terminal("T1")                                                   # same critical memory
    _poll_host_until(floor, lambda: not floor.store.pending_commands())
    assert _applied(floor, "T1", "host.command") == 1
    assert floor.store.pending_commands() == [] and floor.store.confirmed_command("T1") == 1


def test_commands_apply_in_order_and_a_later_one_waits_for_the_one_before(floor: Floor) -> None:
    link = floor.terminal("T1", terminal=switchable())
    cabinet = link.terminal.cabinet
    floor.settle()
    floor.bus.drop = lambda topic, payload: topic == down_topic("T1")
    floor.host.command("T1", "disable", {})          # lost
    floor.bus.pump()
    lost = []
    floor.bus.drop = lambda topic, payload: topic == down_topic("T1") and not lost and not lost.append(1)
    floor.host.command("T1", "enable", {})           # goes with the disable again, which is lost again
    floor.settle()
    floor.bus.drop = lambda topic, payload: False
    assert link.stats["command_early"] == 1 and not cabinet.disabled and link.commands_applied == 0
    _poll_host_until(floor, lambda: not floor.store.pending_commands())
    kinds = [e["type"] for e in reversed(floor.ledgers["T1"].events(100)) if e["event"] == "host.command"]
    assert kinds == ["disable", "enable"] and not cabinet.disabled


def test_a_terminal_that_applied_fewer_than_the_host_knows_takes_the_next_command(floor: Floor) -> None:
    # A terminal whose memory was cleared has applied nothing; the host says every command up to
    # 4 is applied (``confirmed``): number 5 is the next one, 7 waits for 6.
    link = floor.terminal("T1")
    floor.settle()
    floor.host.send("T1", "send_meters", {"cmd": 7, "confirmed": 4})
    floor.settle()
    assert link.commands_applied == 0 and link.stats["command_early"] == 1
    floor.host.send("T1", "send_meters", {"cmd": 5, "confirmed": 4})
    floor.host.send("T1", "send_meters", {"cmd": 3, "confirmed": 4})          # already applied, says the host
    floor.settle()
    assert link.commands_applied == 5 and link.stats["command_repeats"] == 1
    assert link.ledger.setting("hostlink.commands") == {"applied": 5}


def test_a_command_that_can_never_be_sent_is_refused_not_retried_forever(floor: Floor) -> None:
    import pytest

    from egmproto.errors import EnvelopeError

    cabinet = floor.terminal("T1", terminal=switchable()).terminal.cabinet
    floor.settle()
    with pytest.raises(EnvelopeError, match="reason"):
        floor.host.command("T1", "disable", {"reason": "x" * 5000})
    floor.store.queue_command("T1", "disable", {"reason": "x" * 5000})    # straight into the queue
    floor.store.queue_command("T1", "disable", {"reason": "audit"})
    assert floor.host.poll_commands() == 1
    floor.settle()
    assert cabinet.disabled and floor.store.pending_commands() == []
    assert [c["type"] for c in floor.store.commands("T1")] == ["disable"]


def test_a_terminal_disabled_by_the_host_starts_disabled_after_a_power_cut(floor: Floor) -> None:
    cabinet = floor.terminal("T1", terminal=switchable()).terminal.cabinet
    floor.settle()
    floor.host.command("T1", "disable", {"reason": "audit"})
    floor.settle()
    assert cabinet.disabled
    _power_cut(floor, "T1")
    again = floor.terminal("T1", terminal=switchable())       # same critical memory, a new cabinet
    assert again.terminal.cabinet.disabled                    # at start, before the host says anything
    floor.host.command("T1", "enable", {})
    floor.settle()
    assert not again.terminal.cabinet.disabled
