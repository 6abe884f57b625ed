"""The terminal under SAS control: the control polls' :class:`~firmware.sas.control.Controls` over the
terminal's parts, and the poll sets of this slice built for one terminal (:func:`control_poll_sets`).

Everything here runs on the terminal's thread (the SAS port hands its bytes to the terminal's
loop). Each command is in critical memory before it takes effect, and comes back after a power cut
(:class:`TerminalControls` re-applies it when it is built):

- play locked out (0x01/0x02): setting :data:`PLAY`; the cabinet's own disable, held as ``sas``
  (:meth:`Cabinet.disable <firmware.cabinet.machine.Cabinet.disable>`), so it waits for the end
  of the round in progress and it and the FIG. 16 host's disable must both be lifted for play to
  come back; the player sees the cabinet's "closed" notice, and is told while the round ends;
- bill acceptor (0x06/0x07): setting :data:`BILL_ACCEPTOR`; :attr:`MoneyIn.acceptor_disabled
  <firmware.cabinet.money_in.MoneyIn.acceptor_disabled>` keeps the validator disabled;
- sound (0x03-0x05) and real-time event reporting (0x0E): settings :data:`SOUND` (the terminal
  has no sound output yet: the state is recorded for when it has) and :data:`REAL_TIME_EVENTS`,
  which the responder reads to answer general polls with events (``firmware/sas/rte.py``);
- handpay (0x1B/0x94): the cabinet's handpay lockup, paid through the attendant's handpay.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from firmware.cabinet.errors import TerminalError
from firmware.cabinet.sas_info import InstalledSoftware, TerminalGames
from firmware.cabinet.states import CabinetState
from firmware.sas import rte
from firmware.sas.clock import ClockPoll
from firmware.sas.control import ControlPolls, Handpay, Sound
from firmware.sas.games import Features, GamePolls
from firmware.sas.responder import PollSet
from firmware.sas.rom import RomSignaturePoll
from firmware.sas.view import Identity

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal

#: The settings that hold the host's commands in critical memory.
PLAY = "sas.play"
BILL_ACCEPTOR = "sas.bill_acceptor"
SOUND = "sas.sound"
REAL_TIME_EVENTS = rte.SETTING
#: Who the cabinet's disable is held for (``Cabinet.disabled_by``).
DISABLER = "sas"
#: What the player and the records are told.
ACCEPTOR_DISABLED = "the bill acceptor is disabled by the casino system"
PLAY_STOPS = "play stops at the end of this round: the casino system closed this machine"
#: Who pays a handpay reset by the host (0x94), in the handpay record.
HOST_ATTENDANT = "sas host"


class TerminalControls:
    """:class:`~firmware.sas.control.Controls` over ``terminal``; ``accounting_denom_cents`` is the
    unit of the handpay amount SAS reads."""

    def __init__(self, terminal: Terminal, accounting_denom_cents: int) -> None:
        self.t = terminal
        self.accounting_denom_cents = accounting_denom_cents
        if self._setting(BILL_ACCEPTOR).get("enabled") is False:
            terminal.money_in.acceptor_disabled = ACCEPTOR_DISABLED
        if terminal.cabinet.state is CabinetState.POWER_UP:
            # Built before the power-up: the lock-out is applied on the terminal's first step, once
            # the round the power interrupted has resumed, so that it completes first (a disable in
            # POWER_UP would take the cabinet straight to DISABLED and hold the round).
            terminal.register(sas_restore=self._restore_lock_out)
            terminal.submit("sas_restore")
        else:
            self._restore_lock_out()

    def _restore_lock_out(self) -> None:
        if self._setting(PLAY).get("locked"):
            self.t.cabinet.disable(DISABLER)

    def _setting(self, name: str) -> dict[str, Any]:
        return self.t.ledger.setting(name) or {}

    def _record(self, setting: str, value: dict[str, Any], event: str) -> bool:
        """Keep ``value`` as ``setting`` with ``event`` in one write; False if it was already so."""
        ledger = self.t.ledger
        if ledger.setting(setting) == value:
            return False
        with ledger.batch():
            ledger.store_setting(setting, value)
            ledger.event(event, **value)
        return True

    # --- Controls ----------------------------------------------------------------------------------
    def lock_out_play(self, locked: bool) -> None:
        self._record(PLAY, {"locked": locked}, "sas.play")
        cabinet = self.t.cabinet
        if locked:
            cabinet.disable(DISABLER)
            if cabinet.disable_pending:
                self.t.message = PLAY_STOPS
        else:
            cabinet.enable(DISABLER)
            if self.t.message == PLAY_STOPS:
                self.t.message = ""

    def bill_acceptor(self, enabled: bool) -> None:
        self._record(BILL_ACCEPTOR, {"enabled": enabled}, "sas.bill_acceptor")
        self.t.money_in.acceptor_disabled = None if enabled else ACCEPTOR_DISABLED
        self.t.money_in.update_validator()

    def sound(self, sound: Sound) -> None:
        self._record(SOUND, {"sound": sound.value}, "sas.sound")

    def real_time_events(self, enabled: bool) -> None:
        self._record(REAL_TIME_EVENTS, {"enabled": enabled}, "sas.real_time_events")

    @property
    def sound_setting(self) -> Sound:
        return Sound(self._setting(SOUND).get("sound", Sound.ON.value))

    @property
    def real_time_events_on(self) -> bool:
        return bool(self._setting(REAL_TIME_EVENTS).get("enabled", False))

    def handpay(self) -> Handpay | None:
        cabinet = self.t.cabinet
        pending = cabinet.handpay_pending
        if cabinet.state is not CabinetState.HANDPAY or pending is None:
            return None
        return Handpay(pending[0] * self.t.ledger.denom_cents // self.accounting_denom_cents)

    def reset_handpay(self) -> bool:
        try:
            self.t.attendant_handpay(HOST_ATTENDANT)
        except TerminalError:
            return False
        return True


def control_poll_sets(terminal: Terminal, identity: Identity, features: Features, *,
                      software_root: Path | None = None, par_cache: Path | None = None) -> list[PollSet]:
    """The poll sets of the control and information polls for ``terminal``: control (0x01-0x07,
    0x0E, 0x1B, 0x94), games (0x51-0x56, 0xA0, 0xB5), ROM signature (0x21) over the software
    installed under ``software_root`` (default: this firmware's) and the clock (0x7F).

    They may be built before or after ``terminal`` powers up: a lock-out of play kept from before a
    power cut is applied after the power-up either way, once the round the power interrupted has
    resumed, so that round completes first. ``par_cache``: the terminal's PAR sheet cache (``egm
    run``'s ``<state-dir>/par``)."""
    return [
        ControlPolls(TerminalControls(terminal, identity.accounting_denom_cents)),
        GamePolls(identity, TerminalGames(terminal, par_cache=par_cache), features),
        RomSignaturePoll(InstalledSoftware(software_root)),
        ClockPoll(terminal.ledger),
    ]
