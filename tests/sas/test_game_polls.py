"""Game information (0x51, 0x53, 0x55, 0x56, 0xA0, 0xB5), ROM signature (0x21) and receive date and
time (0x7F) through ``SasMachine`` on a real ledger: golden frames and their meaning. Reply CRCs in
the golden frames were computed with the independent calculator ``drivers.crc.crc16_kermit``."""

from __future__ import annotations

import datetime as dt

import pytest

from drivers.crc import crc16_kermit
from drivers.sas.codec import LongPoll
from drivers.sas.crc import sas_crc
from drivers.sas.messages import DateTime
from firmware.sas.clock import ClockPoll
from firmware.sas.games import Features, GameEntry, GamePolls, Validation
from firmware.sas.responder import SasMachine
from firmware.sas.rom import RomSignaturePoll
from firmware.sas.view import LedgerView
from tests.sas.helpers import ADDRESS, IDENTITY, NOW, ask


def entry(number, game_id, enabled=True, **kw):
    base = dict(paytable_id=f"{game_id}00AB", base_percent="9650", max_bet=500, name=f"game {number}",
                paytable_name="standard", wager_categories=3)
    return GameEntry(number=number, game_id=game_id, enabled=enabled, **{**base, **kw})


class Catalog:
    def __init__(self, games, selected=1):
        self._games, self._selected = games, selected

    def games(self):
        return self._games

    def selected(self):
        return self._selected


GAMES = [entry(1, "BW"), entry(2, "JW", enabled=False), entry(3, "TP", max_bet=40)]


DEFAULT_FEATURES = Features()


def machine(ledger, catalog=None, features=DEFAULT_FEATURES, clock=lambda: NOW) -> SasMachine:
    polls = GamePolls(IDENTITY, catalog or Catalog(GAMES), features)
    return SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=clock), polls=[polls])


def send(m: SasMachine, frame: str) -> str:
    return m.receive(bytes.fromhex(frame)).hex(" ")


def with_crc(frame: str) -> str:
    data = bytes.fromhex(frame)
    return (data + crc16_kermit(data).to_bytes(2, "little")).hex(" ")


def test_number_of_games_counts_every_implemented_game_enabled_or_not(ledger):
    assert send(machine(ledger), "01 51") == with_crc("01 51 00 03")


def test_selected_game_and_enabled_games(ledger):
    m = machine(ledger, Catalog(GAMES, selected=3))
    assert send(m, "01 55") == with_crc("01 55 00 03")
    send(m, "81")
    # length 5, two games enabled: 0001 and 0003 (game 2 is implemented but not enabled)
    assert send(m, "01 56") == with_crc("01 56 05 02 00 01 00 03")


def test_game_n_configuration_gives_the_game_its_number_and_pay_table(ledger):
    reply = send(machine(ledger), "01 53 00 03 " + crc("01 53 00 03"))
    # game 0003, "TP", additional ID "003", denomination code 02 (5 cents), max bet 40 (0x28),
    # progressive group 0, options 0000, pay table "TP00AB", base % "9650"
    assert reply == with_crc("01 53 00 03 " + b"TP003".hex(" ") + " 02 28 00 00 00 "
                             + b"TP00AB9650".hex(" "))


def test_game_0_configuration_is_the_machine_as_0x1f_gives_it(ledger):
    m = machine(ledger)
    reply = bytes.fromhex(send(m, "01 53 00 00 " + crc("01 53 00 00")))
    send(m, "81")
    info = bytes.fromhex(send(m, "01 1F"))
    assert reply[2:4] == b"\x00\x00" and reply[4:-2] == info[2:-2]


def test_a_game_number_beyond_the_last_gets_no_reply(ledger):
    assert send(machine(ledger), "01 53 00 04 " + crc("01 53 00 04")) == ""


def test_game_n_information_carries_names_max_bet_and_wager_categories(ledger):
    reply = send(machine(ledger), "01 B5 00 01 " + crc("01 B5 00 01"))
    name, paytable = b"game 1".hex(" "), b"standard".hex(" ")
    body = f"00 01 05 00 00 00 00 00 00 06 {name} 08 {paytable} 00 03"
    assert reply == with_crc(f"01 B5 {len(bytes.fromhex(body)):02x} {body}")


@pytest.mark.parametrize(("features", "bytes_"), [
    (Features(), "d0 0c 00 00"),                                  # secure-enhanced, redemption, extended meters
    (Features(Validation.SYSTEM, aft=True), "b0 4c 00 00"),
    (Features(Validation.NONE, ticket_redemption=False, extended_meters=False,
              tickets_to_drop_and_cancelled=False), "00 00 00 00"),
])
def test_enabled_features_follow_what_the_machine_supports(ledger, features, bytes_):
    reply = send(machine(ledger, features=features), "01 A0 00 00 6C 13")
    assert reply == with_crc(f"01 A0 00 00 {bytes_} 00 00")


def crc(frame: str) -> str:
    return crc16_kermit(bytes.fromhex(frame)).to_bytes(2, "little").hex(" ")


class Image:
    def __init__(self, data: bytes):
        self.data = data

    def crc(self):
        return sas_crc(self.data), len(self.data)


def test_rom_signature_is_the_crc_of_the_image_from_the_hosts_seed(ledger):
    image = Image(bytes(range(256)) * 50)
    m = SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=lambda: NOW), polls=[RomSignaturePoll(image)])
    seeds = {}
    for seed in (0x0000, 0x1234, 0xFFFF):
        signature = ask(m, LongPoll(ADDRESS, 0x21, seed.to_bytes(2, "little"))).signature
        assert signature == crc16_kermit_from(seed, image.data)
        seeds[seed] = signature
        m.receive(bytes.fromhex("81"))
    assert len(set(seeds.values())) == 3


def crc16_kermit_from(seed: int, data: bytes) -> int:
    """CRC-16/KERMIT from ``seed``, bit by bit (the definition, not the table)."""
    value = seed
    for byte in data:
        value ^= byte
        for _ in range(8):
            value = (value >> 1) ^ 0x8408 if value & 1 else value >> 1
    return value


def test_receive_date_and_time_is_acked_and_moves_0x7e_by_the_host_offset_across_a_power_cut(tmp_path):
    from firmware.ledger.ledger import Ledger

    host = dt.datetime(2026, 11, 27, 22, 15, 30)
    with Ledger.open(tmp_path / "state", denomination=5) as ledger:
        m = SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=lambda: NOW), polls=[ClockPoll(ledger, lambda: NOW)])
        assert send(m, "01 7F 11 27 20 26 22 15 30 EA 0F") == "01"
        send(m, "81")
        assert ask(m, LongPoll(ADDRESS, 0x7E)) == DateTime(host)
    later = NOW + dt.timedelta(seconds=90)
    with Ledger.open(tmp_path / "state", denomination=5) as ledger:     # after the power cut
        m = SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=lambda: later))
        assert ask(m, LongPoll(ADDRESS, 0x7E)) == DateTime(host + dt.timedelta(seconds=90))
        assert any(e["event"] == "sas.clock_set" for e in ledger.events(5))


def test_date_and_time_as_a_global_broadcast_is_applied_without_a_reply(ledger):
    m = SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=lambda: NOW), polls=[ClockPoll(ledger, lambda: NOW)])
    frame = "00 7F 11 27 20 26 22 15 30"
    assert send(m, f"{frame} {crc(frame)}") == ""
    assert ask(m, LongPoll(ADDRESS, 0x7E)) == DateTime(dt.datetime(2026, 11, 27, 22, 15, 30))
