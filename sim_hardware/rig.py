"""The simulated cabinet: every configured device's simulated twin on its own pty, and the
controls a test (``egm simctl``) uses on them: a note, a voucher, a door, a key, a button, paper
out, a jam, the stacker removed, a shoe misread, a cable pulled and put back; and a door opened
while the cabinet was off (``doors_open``). The terminal may add controls of what it simulates
itself (:meth:`SimRig.add_control`: the entropy source's ``rng``).

Each twin is the production driver talking its wire protocol to the simulator over a pty
(``sim_hardware.twins``). Unplugging stops the simulator and closes its pty, then tells the
cabinet's hot-plug watcher (``hal.hotplug.Hotplug``) what udev would: ``remove``. Replugging
serves the *same* simulator (its paper, notes and doors as they were) on a new pty and sends
``add`` with the new device node, so the driver comes back exactly as after a real replug.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hal import registry
from hal.base import Device
from hal.errors import BackendError
from hal.events import Button, Door, KeySwitch
from hal.hotplug import Hotplug, PortMatch
from sim_hardware.pty_link import PtyLink, ServeThread
from sim_hardware.tcl_printer import MidTicket
from sim_hardware.twins import simulator_for

log = logging.getLogger(__name__)


#: The screen the simulated touch sensors are mounted on (their ``Sensor`` maps its pixels).
TOUCH_SCREEN = (1920, 1080)


class RigError(ValueError):
    """A simulator control that does not exist or does not apply (the message says which)."""


@dataclass
class _Twin:
    slot: str
    spec: registry.BackendSpec
    simulator: Any
    device: Device
    link: PtyLink | None = None
    runner: ServeThread | None = None

    @property
    def serial(self) -> str:
        return f"EGM-SIM-{self.slot}"


class SimRig:
    """The twins of ``specs`` (slot -> ``sim:`` spec). :meth:`close` stops everything."""

    def __init__(self, specs: Mapping[str, registry.BackendSpec],
                 settings: Mapping[str, Mapping[str, Any]] | None = None, *,
                 doors_open: Sequence[Door] = ()) -> None:
        """``doors_open``: doors of the I/O board open when it powers up, as if opened while the
        cabinet was off (``egm run --sim-door-open``); RigError without a simulated I/O board."""
        self.hotplug = Hotplug()
        self.twins: dict[str, _Twin] = {}
        self._extra: dict[str, Callable[[Sequence[str]], dict[str, Any] | None]] = {}
        if doors_open and "io_board" not in specs:
            raise RigError("a door open at power-up needs the simulated I/O board ([devices] io_board)")
        try:
            for slot, spec in specs.items():
                if not spec.simulated or spec.backend is None:
                    raise BackendError(f"{slot}: {spec.backend} is not a simulated twin")
                sim = simulator_for(spec.device_class, spec.backend)
                if slot == "io_board":
                    for door in doors_open:
                        sim.open_door_while_off(door)       # before it serves: its first SNAPSHOT
                link = PtyLink()
                device = registry.create(spec.device_class, spec.backend, slot,
                                         {**dict((settings or {}).get(slot, {})), "port": link.path})
                twin = _Twin(slot, spec, sim, device, link)
                twin.runner = ServeThread(sim.serve, link.port, name=f"sim-{slot}").start()
                self.twins[slot] = twin
                self.hotplug.watch(device, PortMatch(id_serial=twin.serial))
        except BaseException:
            self.close()
            raise

    def device(self, slot: str) -> Device:
        return self._twin(slot).device

    def simulator(self, slot: str) -> Any:
        return self._twin(slot).simulator

    def _twin(self, slot: str) -> _Twin:
        twin = self.twins.get(slot)
        if twin is None:
            raise RigError(f"no simulated {slot}; the simulated devices are {', '.join(self.twins) or 'none'}")
        return twin

    # --- the cable ----------------------------------------------------------------------------
    def unplug(self, slot: str) -> None:
        twin = self._twin(slot)
        if twin.link is None:
            raise RigError(f"{slot} is already unplugged")
        path = twin.link.path
        self._stop_serving(twin)
        self.hotplug.handle("remove", {"DEVNAME": path, "ID_SERIAL": twin.serial})

    def replug(self, slot: str) -> None:
        twin = self._twin(slot)
        if twin.link is not None:
            raise RigError(f"{slot} is plugged in")
        twin.link = PtyLink()
        twin.runner = ServeThread(twin.simulator.serve, twin.link.port, name=f"sim-{slot}").start()
        self.hotplug.handle("add", {"DEVNAME": twin.link.path, "ID_SERIAL": twin.serial})

    def plugged(self, slot: str) -> bool:
        return self._twin(slot).link is not None

    def _stop_serving(self, twin: _Twin) -> None:
        runner, link = twin.runner, twin.link
        twin.runner = twin.link = None
        if runner is not None:
            try:
                runner.stop()
            except RuntimeError:
                log.warning("%s: the simulator did not stop in time", twin.slot)
        if link is not None:
            link.close()

    def close(self) -> None:
        for twin in self.twins.values():
            try:
                twin.device.close()
            finally:
                self._stop_serving(twin)

    # --- the controls (``egm simctl``) ------------------------------------------------------------
    def add_control(self, verb: str, handler: Callable[[Sequence[str]], dict[str, Any] | None]) -> None:
        """A control of something else the simulated cabinet simulates (the terminal's entropy
        source: ``rng``, firmware/cabinet/sim_rng.py); ``handler`` gets the words after ``verb``."""
        if verb in CONTROLS or verb in self._extra:
            raise ValueError(f"the simulator control {verb!r} exists already")
        self._extra[verb] = handler

    def control(self, words: Sequence[str]) -> dict[str, Any]:
        """One control, as words: ``note 20``, ``door open main``, ``paper out``, ``unplug printer``..."""
        verbs = ", ".join(sorted([*CONTROLS, *self._extra]))
        if not words:
            raise RigError(f"say what to do: {verbs}")
        verb, *rest = words
        if verb in self._extra:
            result = self._extra[verb](rest)
        elif verb in CONTROLS:
            result = CONTROLS[verb](self, rest)
        else:
            raise RigError(f"unknown simulator control {verb!r}; controls are {verbs}")
        return {"control": " ".join(words), **(result or {})}


def _args(rest: Sequence[str], n: int, usage: str) -> Sequence[str]:
    if len(rest) != n:
        raise RigError(f"usage: {usage}")
    return rest


def _note(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    (value,) = _args(rest, 1, "note DOLLARS (e.g. note 20)")
    if not value.isdigit():
        raise RigError(f"a note is a whole number of dollars, not {value!r}")
    taken = rig.simulator("bill_validator").insert_note(int(value))
    return {"inserted": bool(taken)}


def _bad_note(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    _args(rest, 0, "bad-note")
    return {"inserted": bool(rig.simulator("bill_validator").insert_bad_note())}


def _ticket(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    (number,) = _args(rest, 1, "ticket VALIDATION (18 digits, dashes allowed)")
    digits = number.replace("-", "")
    if not (digits.isdigit() and digits.isascii()):
        raise RigError(f"a voucher's barcode is digits, not {number!r}")
    return {"inserted": bool(rig.simulator("bill_validator").insert_ticket(digits))}


def _validator(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    (what,) = _args(rest, 1, "validator jam|stacker-full|stacker-removed|cheat|clear")
    sim = rig.simulator("bill_validator")
    actions: dict[str, Callable[[], Any]] = {
        "jam": sim.jam, "stacker-full": sim.stacker_full, "clear": sim.clear_fault,
        "cheat": getattr(sim, "cheat", None) or sim.fraud,
        # ID-003: the stacker out (STACKER_OPEN); SSP: the cash box out (CASHBOX_REMOVED)
        "stacker-removed": getattr(sim, "remove_stacker", None) or sim.remove_cashbox,
    }
    if what not in actions:
        raise RigError(f"validator {what!r}? say one of {', '.join(actions)}")
    actions[what]()
    return {}


def _enum(kind: type, value: str, what: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise RigError(f"unknown {what} {value!r}; {what}s are {', '.join(m.value for m in kind)}") from None


def _door(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    action, door = _args(rest, 2, "door open|close main|cash_box|logic")
    sim = rig.simulator("io_board")
    which = _enum(Door, door, "door")
    if action not in ("open", "close"):
        raise RigError(f"door {action!r}? say open or close")
    changed = sim.open_door(which) if action == "open" else sim.close_door(which)
    return {"changed": bool(changed)}


def _key(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    key, position = _args(rest, 2, "key audit|jackpot_reset on|off")
    if position not in ("on", "off"):
        raise RigError(f"key {key} {position!r}? say on or off")
    return {"changed": bool(rig.simulator("io_board").turn_key(_enum(KeySwitch, key, "key"), position == "on"))}


def _button(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    (button,) = _args(rest, 1, "button deal|bet|repeat|cash_out|help|service")
    return {"pressed": bool(rig.simulator("io_board").press(_enum(Button, button, "button")))}


def _paper(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    (what,) = _args(rest, 1, "paper out|out-mid-ticket|low|ok|load")
    sim = rig.simulator("printer")
    actions: dict[str, Callable[[], Any]] = {
        "out": sim.paper_out, "low": sim.paper_low, "ok": lambda: sim.paper_low(False), "load": sim.load_paper,
        # the next ticket stops halfway, before its validation number, with the paper out
        "out-mid-ticket": lambda: sim.fail_mid_ticket(MidTicket.PAPER_OUT),
    }
    if what not in actions:
        raise RigError(f"paper {what!r}? say one of {', '.join(actions)}")
    actions[what]()
    return {"paper": sim.paper}


def _printer(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    (what,) = _args(rest, 1, "printer jam|clear-jam|open|close|last")
    sim = rig.simulator("printer")
    if what == "last":
        return _last_ticket(sim)
    actions = {"jam": sim.jam, "clear-jam": sim.clear_jam, "open": sim.open_chassis, "close": sim.close_chassis}
    if what not in actions:
        raise RigError(f"printer {what!r}? say one of {', '.join(actions)}")
    actions[what]()
    return {}


def _last_ticket(sim: Any) -> dict[str, Any]:
    """The voucher the printer printed last, as read back from its paper: barcode and amount, every
    field it shows, and the paper's text regions as printed (``paper``: region id -> text)."""
    if not sim.printed:
        raise RigError("the printer has printed no ticket yet")
    paper = sim.printed[-1]
    try:
        voucher = paper.voucher()
    except ValueError as exc:
        raise RigError(f"the last ticket is unreadable: {exc}") from None
    return {"validation": voucher.validation, "amount_cents": voucher.amount_cents,
            "fields": {"venue": voucher.venue, "address": list(voucher.address), "machine": voucher.machine,
                       "issued": voucher.issued.isoformat(), "validation_text": voucher.validation_text,
                       "ticket_number": voucher.sequence, "expiry_days": voucher.expiry_days,
                       "kind": voucher.kind.value},
            "paper": dict(sorted(paper.texts.items())), "incomplete_tickets": len(sim.partial)}


def _shoe(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    if not rest:
        raise RigError("usage: shoe misread | shoe shuffle SEED | shoe load CARDS... | shoe draw [N]")
    sim = rig.simulator("shoe")
    verb, *more = rest
    if verb == "misread":
        sim.misread_next()
        return {}
    if verb == "shuffle":
        (seed,) = _args(more, 1, "shoe shuffle SEED")
        if not seed.isdigit():
            raise RigError(f"a shuffle seed is a number, not {seed!r}")
        sim.shuffle(int(seed))
        return {"left": sim.left}
    if verb == "load":
        from firmware.cards.card import parse_cards

        try:
            cards = parse_cards(" ".join(more))
        except Exception as exc:
            raise RigError(str(exc)) from None
        sim.load(cards)
        return {"left": sim.left}
    if verb == "draw":
        count = int(more[0]) if more and more[0].isdigit() else 1
        drawn = [str(c) for c in (sim.draw() for _ in range(count)) if c is not None]
        return {"drawn": drawn, "left": sim.left}
    raise RigError(f"shoe {verb!r}? say misread, shuffle, load or draw")


def _touch(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    x, y = _args(rest, 2, "touch X Y (fractions of the screen, 0..1)")
    try:
        fx, fy = float(x), float(y)
    except ValueError:
        raise RigError(f"touch takes two numbers, not {x!r} {y!r}") from None
    if not (0 <= fx <= 1 and 0 <= fy <= 1):
        raise RigError("touch coordinates are fractions of the screen, 0..1")
    w, h = TOUCH_SCREEN
    x_px, y_px = round(fx * (w - 1)), round(fy * (h - 1))
    raw = rig.simulator("touch").tap(x_px, y_px)          # the simulators take screen pixels
    return {"pixel": [x_px, y_px], "raw": list(raw)}


def _power(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    action, slot = _args(rest, 2, "power off|on DEVICE")
    sim = rig.simulator(slot)
    if action not in ("off", "on") or not hasattr(sim, f"power_{action}"):
        raise RigError(f"power {action!r} is not a control of the {slot}")
    getattr(sim, f"power_{action}")()
    return {}


def _unplug(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    (slot,) = _args(rest, 1, "unplug DEVICE")
    rig.unplug(slot)
    return {}


def _replug(rig: SimRig, rest: Sequence[str]) -> dict[str, Any]:
    (slot,) = _args(rest, 1, "replug DEVICE")
    rig.replug(slot)
    return {}


CONTROLS: dict[str, Callable[[SimRig, Sequence[str]], dict[str, Any] | None]] = {
    "note": _note, "bad-note": _bad_note, "ticket": _ticket, "validator": _validator,
    "door": _door, "key": _key, "button": _button, "paper": _paper, "printer": _printer,
    "shoe": _shoe, "touch": _touch, "power": _power, "unplug": _unplug, "replug": _replug,
}
