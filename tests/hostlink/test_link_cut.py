"""The link cut for real: a TCP proxy on loopback between each terminal and the broker, killed and
restored, at every step of a voucher redemption and of a host command; then every message seen
on the wire, replayed byte for byte. No voucher is paid twice, no command is lost or applied
twice, no replay is acted on (campaign items 2, 3 and 4; docs/protocols/host-session.md).

Everything but the proxy is the product: the embedded broker, ``MqttClient``, ``HostLink`` and
``HostServer`` with its ingest worker and command poller. The terminals' loops are this test's
thread (``Site.drive`` polls them), as the cabinet's loop would.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from egmproto.envelope import open_
from egmproto.identity import HostIdentity, TerminalIdentity
from egmproto.messages import PROTOCOL_VERSION, SCHEMA, TO_HOST, TO_TERMINAL
from egmproto.mqtt import BrokerAddress, MqttClient, terminal_of
from egmproto.pki import ensure_development_pki, issue
from firmware.cashless.errors import VoucherError
from firmware.cashless.vouchers import VoucherBook
from firmware.hostlink.broker import EmbeddedBroker
from firmware.hostlink.link import HostLink
from firmware.ledger.ledger import Ledger
from host.server import HostServer
from host.store import HostStore

from .conftest import switchable
from .mqtt_support import Inbox, free_port, wait_for

FAST = {"min_backoff": 0.05, "max_backoff": 0.2}


class Proxy:
    """TCP on loopback, ``port`` -> ``target``: :meth:`kill` aborts every connection and stops
    listening (the cable is cut); :meth:`restore` listens again on the same port."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="test-proxy", daemon=True)
        self._thread.start()
        self._server: asyncio.Server | None = None
        self._transports: set[asyncio.Transport] = set()
        self.cut = False
        self.restore()

    def _run(self, coro) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(5)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.transport.abort()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.transport.abort()
            return
        self._transports |= {writer.transport, up_writer.transport}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, reuse_address=True)

    async def _kill(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for transport in self._transports:
            transport.abort()
        self._transports.clear()

    def kill(self) -> None:
        self.cut = True
        self._run(self._kill())

    def restore(self) -> None:
        self.cut = False
        self._run(self._listen())

    def close(self) -> None:
        self._run(self._kill())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


class Site:
    """The broker, the host and terminals, each terminal behind its own proxy."""

    def __init__(self, tmp: Path, pki: Path) -> None:
        self.tmp, self.pki = tmp, pki
        self.broker = EmbeddedBroker()
        self.broker.start()
        self.address = BrokerAddress.parse(self.broker.url)
        self.store = HostStore.open(str(tmp / "host.db"))
        self.host = HostServer(self.store, HostIdentity(pki),
                               functools.partial(MqttClient, address=self.address, **FAST))
        self.host.start()
        assert self.host.client.wait_connected(10)
        self.proxies: dict[str, Proxy] = {}
        self.links: dict[str, HostLink] = {}
        self.cabinets: dict[str, SimpleNamespace] = {}
        self.wire = Inbox()                          # everything published, as the broker saw it
        self.sniffer = MqttClient("test-sniffer", self.address, subscriptions=["egm/v1/#"],
                                  on_message=self.wire.on_message, **FAST)
        self.sniffer.start()
        assert self.sniffer.wait_connected(10)

    def terminal(self, terminal_id: str) -> HostLink:
        if not (self.pki / "issued" / f"{terminal_id}.cert.pem").exists():
            issue(self.pki, "terminal", terminal_id)
        proxy = self.proxies[terminal_id] = Proxy(self.broker.port)
        address = BrokerAddress.parse(f"mqtt://127.0.0.1:{proxy.port}")
        terminal = switchable()
        self.cabinets[terminal_id] = terminal.cabinet
        link = HostLink(Ledger.open(self.tmp / terminal_id), TerminalIdentity.load(self.pki, terminal_id),
                        functools.partial(MqttClient, address=address, **FAST), terminal=terminal,
                        ack_timeout_s=0.5, redeem_timeout_s=1.0)
        link.start()
        self.links[terminal_id] = link
        return link

    def drive(self, until: Callable[[], object], timeout: float = 15.0, what: str = "the floor") -> None:
        """Run the terminals' loops until ``until()`` holds."""
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            for link in self.links.values():
                link.poll()
            time.sleep(0.01)

    def quiet(self) -> None:
        """Every link up, every report acknowledged, every command confirmed."""
        for proxy in self.proxies.values():
            if proxy.cut:
                proxy.restore()
        self.drive(lambda: all(link.connected and link.session_open and not len(link.outbox)
                               for link in self.links.values())
                   and not self.store.pending_commands(), what="everything delivered")

    def close(self) -> None:
        for link in self.links.values():
            link.stop()
            link.ledger.close()
        self.sniffer.stop()
        self.host.stop()
        for proxy in self.proxies.values():
            proxy.close()
        self.store.close()
        self.broker.stop()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_development_pki(tmp_path_factory.mktemp("pki"), "T1")["dir"]


@pytest.fixture
def site(tmp_path: Path, pki: Path) -> Iterator[Site]:
    s = Site(tmp_path, pki)
    yield s
    s.close()


# --- vouchers -----------------------------------------------------------------------------------

def _redeem(site: Site, terminal: str, validation: str, offline: bool) -> bool:
    """The voucher inserted at ``terminal`` (asked of the host if its link is up, else offline)
    and stacked; True if it was paid."""
    link = site.links[terminal]
    book = VoucherBook(link.ledger, terminal_id=terminal, offline_redemption=offline)
    try:
        book.begin_redeem(validation, host=link if link.connected else None)
    except VoucherError:
        return False
    if site.cut_point == "before_commit":
        site.proxies[terminal].kill()
    book.commit_redeem(validation)
    return True


def _paid(site: Site) -> list[str]:
    return [t for t, link in sorted(site.links.items()) if link.ledger.meters_report()["meters"]["ticket_in"]]


VOUCHER_CUTS = {               # where the link is cut -> whose link
    "before_cash_out": "T1",   # the issuer's reports of the voucher wait
    "before_request": "T2",    # the redeemer has no host: refused (not its voucher)
    "host_decided": "T2",      # the host authorised T2, the reply is lost: T2 gives up
    "before_commit": "T2",     # approved, cut before the money is recorded
    "after_commit": "T2",      # paid, the host has not heard yet
    "before_issuer": "T1",     # the issuer is cut off when the voucher comes to it
}


@pytest.mark.parametrize("offline", [False, True], ids=["offline_off", "offline_on"])
@pytest.mark.parametrize("cut", list(VOUCHER_CUTS))
def test_a_voucher_is_paid_once_with_the_link_cut_at_any_step(site: Site, cut: str, offline: bool) -> None:
    site.cut_point = cut
    victim = VOUCHER_CUTS[cut]
    for t in ("T1", "T2"):
        site.terminal(t)
    site.quiet()
    if cut == "before_cash_out":
        site.proxies["T1"].kill()
    site.links["T1"].ledger.bill_in(2000)
    book = VoucherBook(site.links["T1"].ledger, terminal_id="T1", offline_redemption=offline)
    validation = book.issue(2000).validation
    book.printed(validation)
    if cut != "before_cash_out":
        site.drive(lambda: not len(site.links["T1"].outbox), what="the cash-out reported")
    if cut == "before_request":
        site.proxies["T2"].kill()
        site.drive(lambda: not site.links["T2"].connected, what="T2 to see its link cut")
    if cut == "host_decided":
        decide = site.store.authorize_redemption

        def decide_then_cut(*args, **kwargs):
            answer = decide(*args, **kwargs)
            site.proxies["T2"].kill()                    # before the reply is sent
            return answer
        site.store.authorize_redemption = decide_then_cut
    paid = [t for t in ("T2",) if _redeem(site, t, validation, offline)]
    site.store.__dict__.pop("authorize_redemption", None)
    if cut == "after_commit":
        site.proxies["T2"].kill()
    if site.proxies[victim].cut and victim == "T2":
        site.proxies["T2"].restore()
    if cut == "before_issuer":
        site.proxies["T1"].kill()
        site.drive(lambda: not site.links["T1"].connected, what="T1 to see its link cut")
    paid += [t for t in ("T1",) if _redeem(site, t, validation, offline)]
    site.quiet()                                          # every link back, everything delivered
    paid += [t for t in ("T2", "T1") if _redeem(site, t, validation, offline)]     # all try again
    site.quiet()
    assert len(paid) == 1, f"{cut}: paid at {paid}"
    assert _paid(site) == paid
    if offline:
        assert paid == ["T1"]                             # approved nowhere but at its issuer
    [voucher] = [v for v in site.store.vouchers() if v["validation"] == validation]
    assert (voucher["state"], voucher["redeemed_by"]) == ("redeemed", paid[0])


# --- commands -----------------------------------------------------------------------------------

COMMAND_CUTS = ("terminal_away", "in_flight", "applied_unconfirmed")


@pytest.mark.parametrize("cut", COMMAND_CUTS)
def test_a_command_arrives_once_with_the_link_cut_at_any_step(site: Site, cut: str) -> None:
    link = site.terminal("T1")
    site.quiet()
    proxy = site.proxies["T1"]
    if cut == "terminal_away":
        proxy.kill()
        site.drive(lambda: not link.connected, what="T1 to see its link cut")
    if cut == "in_flight":
        send = site.host.send

        def send_then_cut(terminal, type_, body):
            sent = send(terminal, type_, body)
            if type_ == "disable":
                proxy.kill()
            return sent
        site.host.send = send_then_cut
    if cut == "applied_unconfirmed":
        apply = link._apply

        def apply_then_cut(*args):
            apply(*args)
            proxy.kill()                                  # the confirmation is still in the outbox
        link._apply = apply_then_cut
    site.host.command("T1", "disable", {"reason": "audit"})
    site.drive(lambda: proxy.cut, timeout=5, what="the cut")
    time.sleep(0.3)
    for link_ in site.links.values():
        link_.poll()
    site.host.__dict__.pop("send", None)
    link.__dict__.pop("_apply", None)
    site.quiet()                                          # back: a new session, the resend
    site.drive(lambda: site.cabinets["T1"].disabled, what="the disable")
    applied = [e for e in link.ledger.events(1000) if e["event"] == "host.disabled"]
    assert len(applied) == 1 and site.store.pending_commands() == []
    site.host.command("T1", "enable", {})
    site.drive(lambda: not site.cabinets["T1"].disabled, what="the enable")
    site.quiet()
    assert [e["cmd"] for e in reversed(link.ledger.events(1000)) if e["event"] == "host.command"] == [1, 2]


# --- replays ------------------------------------------------------------------------------------

def test_every_message_replayed_byte_for_byte_is_acted_on_by_nobody(site: Site) -> None:
    for t in ("T1", "T2"):
        site.terminal(t)
    site.quiet()
    t1, t2 = site.links["T1"], site.links["T2"]
    t1.ledger.bill_in(3000)
    book = VoucherBook(t1.ledger, terminal_id="T1")
    validation = book.issue(3000).validation
    book.printed(validation)
    site.quiet()
    site.host.command("T1", "disable", {"reason": "audit"})
    site.host.command("T1", "send_meters", {})
    site.drive(lambda: site.cabinets["T1"].disabled)
    site.host.command("T1", "enable", {})
    site.host.command("T1", "set_time", {"iso": datetime.now(UTC).isoformat()})
    site.host.command("T1", "package_offer", {"name": "war", "version": "9.9.9", "sha256": "ab" * 32,
                                              "url": "https://packages.invalid/war"})
    site.drive(lambda: not site.cabinets["T1"].disabled)
    # T2 gives the voucher back once (abandoned), then redeems it
    t2.ledger.voucher_record(validation, "host_request")
    t2.ledger.voucher_record(validation, "redeem_abandoned")
    site.quiet()
    assert _redeem_via_host(site, "T2", validation)
    site.quiet()
    before = _state(site)
    wire = list(site.wire.messages)
    # every message type but a round (no game is played here; a round is stored like any report)
    assert {_type(site, t, p) for t, p in wire} == set(SCHEMA[PROTOCOL_VERSION]) - {"round"}
    ups = [(t, p) for t, p in wire if t.endswith("/up")]
    downs = [(t, p) for t, p in wire if t.endswith("/down")]
    duplicates = site.host.stats["duplicate"]
    for topic, payload in wire:
        assert site.sniffer.publish(topic, payload)
    site.drive(lambda: site.host.stats["duplicate"] == duplicates + len(ups)
               and sum(link.stats["rejected"] for link in site.links.values()) == len(downs),
               what="every replay refused")
    site.quiet()
    assert _state(site) == before
    assert not site.cabinets["T1"].disabled
    refused = [e for link in site.links.values() for e in link.ledger.events(1000) if e["event"] == "host.rejected"]
    assert {e["reason"] for e in refused} == {"replay"}


def _type(site: Site, topic: str, payload: bytes) -> str:
    """The type of a message seen on the wire (opened with its recipient's key)."""
    terminal = terminal_of(topic)
    if topic.endswith("/up"):
        key, verify, direction = site.host.identity.kem_key, site.host.identity.terminal_key, TO_HOST
    else:
        key, direction = site.links[terminal].kem_key, TO_TERMINAL
        verify = site.links[terminal]._host_key
    return open_(payload, recipient_private_key=key, verify_key_for=verify, last_seq_for=lambda s: None,
                 now=datetime.now(UTC), direction=direction).type


def _redeem_via_host(site: Site, terminal: str, validation: str) -> bool:
    site.cut_point = None
    return _redeem(site, terminal, validation, offline=False)


def _state(site: Site) -> tuple:
    links = site.links.values()
    return (site.store.vouchers(), site.store.pending_commands(), site.store.confirmed_command("T1"),
            site.store.terminals()[0]["disabled"], [link.ledger.meters_report()["meters"] for link in links],
            [sum(1 for e in link.ledger.events(1000) if e["event"].startswith(("host.command", "host.disabled",
                                                                               "host.enabled")))
             for link in links])


def test_the_proxy_really_cuts(site: Site) -> None:
    link = site.terminal("T1")
    site.quiet()
    site.proxies["T1"].kill()
    site.drive(lambda: not link.connected, what="the cut seen")
    wait_for(lambda: not link.connected)
    site.proxies["T1"].restore()
    site.drive(lambda: link.connected, what="the reconnection")
