"""The SAS port on the running terminal: the machine built over the terminal, and its line.

:func:`build_sas` builds the terminal's :class:`~firmware.sas.responder.SasMachine`: the responder
over critical memory (``LedgerView``) with every poll set plugged in, one line each (control,
game information, ROM signature and clock; TITO; AFT).
:class:`SasService` puts it on a port (``drivers.sas.port.SasPort``: a serial device or a pty)
under the terminal's threading rule (firmware/cabinet/terminal.py): the ledger is not thread-safe,
so whatever reads or writes critical memory runs on the terminal's thread. The port's reader
thread submits the bytes it receives as the ``sas`` command; the terminal's thread answers them
(:class:`~firmware.sas.link.SasLink`: the responder, the link watch) and the reader thread writes
the reply. A ticker thread submits the same command with no bytes a few times a second, so the
link's clock (link down after 5 s, the chirp, keeping the exception queue) also runs on the
terminal's thread. A submit wakes the terminal's loop at once (``CommandQueue``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from drivers.sas.port import SasPort
from firmware.cabinet.sas_aft import TerminalAft
from firmware.cabinet.sas_control import control_poll_sets
from firmware.cabinet.sas_info import TerminalGames
from firmware.cabinet.sas_tito import SasTito, sas_tito
from firmware.errors import EgmError
from firmware.sas.aft import AftPolls, AftSettings
from firmware.sas.games import Features, GameEntry, Validation
from firmware.sas.link import SasLink
from firmware.sas.responder import PollSet, SasMachine
from firmware.sas.view import Identity, LedgerView

if TYPE_CHECKING:
    from firmware.cabinet.cashout import TicketNumbering
    from firmware.cabinet.money_in import TicketHost
    from firmware.cabinet.terminal import Terminal
    from firmware.config.schema import Config

log = logging.getLogger(__name__)

#: How often the ticker brings the link up to date (seconds): well under the chirp's 200 ms.
TICK_S: Final = 0.05
#: How long the port's threads wait for the terminal's answer before they drop it (seconds) ...
ANSWER_TIMEOUT_S: Final = 2.0
#: ... looking this often whether the terminal or the port is stopping.
WAIT_SLICE_S: Final = 0.05
#: The additional ID (0x1F) of this terminal's software.
ADDITIONAL_ID: Final = "001"


def accounting_denom(cfg: Config) -> int:
    """Cents per credit of the SAS meters: ``[sas] accounting_denom_cents``, else the terminal's."""
    return cfg.sas.accounting_denom_cents or cfg.terminal.denomination


def identity(cfg: Config, game: GameEntry) -> Identity:
    """Who the terminal is to a SAS host (0x1F, 0x54, 0x48): the selected ``game`` as the game
    information polls describe it (``firmware/cabinet/sas_info.py``), in accounting credits."""
    denom = accounting_denom(cfg)
    return Identity(game_id=game.game_id, additional_id=ADDITIONAL_ID, paytable_id=game.paytable_id,
                    base_percent=game.base_percent,
                    max_bet=min(0xFF, game.max_bet * cfg.terminal.denomination // denom),
                    serial=cfg.terminal.id[:40], accounting_denom_cents=denom)


def selected_game(games: TerminalGames) -> GameEntry:
    """The game the terminal plays now (the first one if it plays none the catalog knows)."""
    entries = games.games()
    number = games.selected()
    return next((e for e in entries if e.number == number), entries[0])


def build_sas(terminal: Terminal, cfg: Config, *, par_cache: Path | None = None,
              tito: SasTito | None = None, aft: TerminalAft | None = None) -> SasMachine:
    """The terminal's SAS machine: the responder over critical memory, every poll set plugged in
    (``tito``, ``aft``: the TITO set and AFT's cabinet side, built here if not given). Built once
    the terminal has powered up (TITO ends what a power cut left waiting)."""
    ident = identity(cfg, selected_game(TerminalGames(terminal, par_cache=par_cache)))
    sas = cfg.sas
    features = Features(validation=Validation(sas.validation), aft=sas.aft)
    polls: list[PollSet] = [
        *control_poll_sets(terminal, ident, features, par_cache=par_cache),   # control, games, ROM, clock
        (tito or sas_tito(terminal, validation=sas.validation, asset_number=sas.asset_number)).polls,
        AftPolls(terminal.ledger, aft or TerminalAft(terminal),
                 AftSettings(sas.asset_number, sas.aft_transfer_limit_cents, sas.aft), monotonic=terminal.clock),
    ]
    return SasMachine(sas.address, LedgerView(terminal.ledger, ident), polls=polls)


class SasService:
    """The SAS port of ``terminal``: opened by :meth:`open`, closed by :meth:`close`."""

    def __init__(self, terminal: Terminal, link: SasLink, port: str, *, tito: SasTito | None = None,
                 aft: TerminalAft | None = None, clock: Callable[[], float] = time.monotonic,
                 tick: float = TICK_S) -> None:
        self.terminal = terminal
        self._aft = aft
        #: what the TITO poll set takes over from the terminal (:class:`firmware.cabinet.ports.SasPart`)
        self.ticket_host: TicketHost | None = tito.ticket_host if tito is not None else None
        self.numbering: TicketNumbering | None = tito.numbering if tito is not None else None
        self.link = link
        self.where = port                  #: the configured port ("pty" or a device path)
        self.port: SasPort | None = None
        self._clock = clock
        self._tick = tick
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick_loop, name="sas-tick", daemon=True)
        self.chirps_sent = 0               #: chirps written to the port
        self.discards = 0                  #: times a full pty was emptied of what nobody read
        terminal.register(sas=self.answer)

    @property
    def path(self) -> str:
        """Where a host connects: the device, or the pty's slave once open."""
        return self.port.path if self.port is not None else self.where

    def open(self) -> SasService:
        self.port = SasPort(self.where, self._received, name="sas-read")
        self._ticker.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._ticker.ident is not None:
            self._ticker.join(timeout=1.0)
        if self.port is not None:
            self.port.close()

    # -- on the terminal's thread -------------------------------------------------------------
    def answer(self, data: bytes = b"") -> tuple[bytes, bytes]:
        """The ``sas`` command: what the host sent (nothing: only the clock moved); the reply to
        write back, and the chirp to send after it (each may be empty)."""
        now = self._clock()
        reply = self.link.receive(data, now) if data else b""
        return reply, self.link.tick(now)

    def status(self) -> dict[str, Any]:
        return {"port": self.path, **self.link.status()}

    def play_held(self) -> str | None:
        """Why the SAS host holds play (an AFT lock), or None."""
        return None if self._aft is None else self._aft.play_held()

    # -- on the port's threads ----------------------------------------------------------------
    def _received(self, data: bytes) -> None:
        self._exchange(data)

    def _tick_loop(self) -> None:
        while not self._stop.wait(self._tick):
            self._exchange(b"")

    def _exchange(self, data: bytes) -> None:
        future = self.terminal.submit("sas", data=data)
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        while True:
            try:
                reply, chirp = future.result(WAIT_SLICE_S)
                break
            except FutureTimeout:
                if self._stop.is_set() or self.terminal.stopping or time.monotonic() >= deadline:
                    future.cancel()             # not run if the terminal has not taken it yet
                    if not (self._stop.is_set() or self.terminal.stopping):
                        log.warning("sas: the terminal did not answer within %s s; %d byte(s) dropped",
                                    ANSWER_TIMEOUT_S, len(data))
                    return
            except Exception:                   # the terminal refused it (halted): nothing to send
                log.exception("sas: the terminal failed on %s", data.hex(" "))
                return
        port = self.port
        if port is None:
            return
        try:
            port.write(reply)
        except OSError as exc:
            log.warning("sas: cannot write the reply to %s: %s", port.path, exc)
        if not chirp:
            return
        try:
            try:
                port.write(chirp, wakeup=True, timeout=0)
            except TimeoutError:           # a pty nobody reads is full of old chirps: start afresh
                log.debug("sas: nobody reads %s; what it held is dropped", port.path)
                port.discard_unread()
                self.discards += 1
                port.write(chirp, wakeup=True, timeout=0)
        except OSError as exc:
            log.warning("sas: cannot chirp on %s: %s", port.path, exc)
        else:
            self.chirps_sent += 1


def open_sas(terminal: Terminal, cfg: Config, *, par_cache: Path | None = None) -> SasService:
    """Build the terminal's SAS machine and open its port (``[sas] port``): the terminal's ``sas``
    factory, called at the end of its power-up. A port that cannot be opened: :class:`EgmError`."""
    sas = cfg.sas
    tito = sas_tito(terminal, validation=sas.validation, asset_number=sas.asset_number)
    aft = TerminalAft(terminal)
    link = SasLink(build_sas(terminal, cfg, par_cache=par_cache, tito=tito, aft=aft), terminal.ledger)
    try:
        return SasService(terminal, link, sas.port, tito=tito, aft=aft).open()
    except OSError as exc:                           # no such device, not a serial port
        raise EgmError(f"sas: {exc.strerror or exc}") from None
