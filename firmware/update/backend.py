"""The two ways a terminal reaches its A/B slots, behind one face (``[update] backend``).

``directory``: the A/B pair of application trees in a directory (:mod:`.slots`, :mod:`.boot`,
:mod:`.install`), for evaluation and tests. ``rauc``: a cabinet's A/B partitions kept by RAUC and
its bootloader (:mod:`.rauc_flow`). Both record the same events and move along the same table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from firmware.update import boot as dir_flow
from firmware.update import rauc_flow
from firmware.update.errors import UpdateError
from firmware.update.install import DEFAULT_ATTEMPTS, Installed, install
from firmware.update.journal import flush
from firmware.update.rauc_state import RaucStateFile
from firmware.update.slots import SlotStore

BACKENDS: tuple[str, ...] = ("directory", "rauc")


class Backend(Protocol):
    name: str

    def power_up(self, *, self_test_passed: bool, at_attract: bool) -> str: ...
    def attract_reached(self) -> bool: ...
    def commit(self) -> str: ...
    def rollback(self) -> str: ...
    def install(self, bundle: Path, keyring: Path, *, crl: Path | None, attempts: int) -> Installed: ...
    def status(self) -> tuple[dict[str, Any], str]: ...
    def flush(self, event: Callable[..., Any]) -> int: ...


class DirectoryBackend:
    name = "directory"

    def __init__(self, directory: str | Path) -> None:
        self.store = SlotStore(directory)

    def power_up(self, *, self_test_passed: bool, at_attract: bool) -> str:
        return dir_flow.power_up_report(self.store, self_test_passed=self_test_passed, at_attract=at_attract)

    def attract_reached(self) -> bool:
        return dir_flow.attract_reached(self.store)

    def commit(self) -> str:
        return dir_flow.commit(self.store)

    def rollback(self) -> str:
        return dir_flow.rollback(self.store)

    def install(self, bundle: Path, keyring: Path, *, crl: Path | None, attempts: int = DEFAULT_ATTEMPTS) -> Installed:
        return install(self.store, bundle, keyring, attempts=attempts, crl=crl)

    def status(self) -> tuple[dict[str, Any], str]:
        state = self.store.load()
        doc = state.to_json()
        doc["inactive"] = state.inactive
        doc["backend"] = self.name
        lines = [f"slot {name}: {s.state:<10} {s.version or '-'}"
                 f"{'  (booted)' if state.booted == name else ''}{'  (next boot)' if state.primary == name else ''}"
                 for name, s in state.slots.items()]
        lines.append(f"boot attempts left: {state.attempts}; events not yet in critical memory: {len(state.pending)}")
        return doc, "\n".join(lines)

    def flush(self, event: Callable[..., Any]) -> int:
        return flush(self.store, event)


class RaucBackend:
    name = "rauc"

    def __init__(self, directory: str | Path) -> None:
        self.events = RaucStateFile(directory)

    def power_up(self, *, self_test_passed: bool, at_attract: bool) -> str:
        return rauc_flow.power_up_report(self.events, self_test_passed=self_test_passed, at_attract=at_attract)

    def attract_reached(self) -> bool:
        return rauc_flow.attract_reached(self.events)

    def commit(self) -> str:
        return rauc_flow.commit(self.events)

    def rollback(self) -> str:
        return rauc_flow.rollback(self.events)

    def install(self, bundle: Path, keyring: Path, *, crl: Path | None, attempts: int = DEFAULT_ATTEMPTS) -> Installed:
        return rauc_flow.install(self.events, bundle, keyring, crl=crl)   # GRUB's boot counter: attempts unused

    def status(self) -> tuple[dict[str, Any], str]:
        from firmware.update import rauc_system

        st = rauc_system.status()
        state = self.events.load()
        pending = len(state.pending)
        slots = {name: {"state": rauc_flow.state_of(state, st, s), "version": s.version, "rauc_slot": s.name,
                        "bootloader": "good" if s.good else "bad"} for name, s in st.slots.items()}
        doc = {"backend": self.name, "booted": st.booted, "primary": st.primary, "slots": slots,
               "inactive": st.other(st.booted).bootname, "committed": state.committed, "pending": pending}
        lines = [f"slot {name}: {s['state']:<10} {s['version'] or '-'}  ({s['rauc_slot']})"
                 f"{'  (booted)' if st.booted == name else ''}{'  (next boot)' if st.primary == name else ''}"
                 for name, s in slots.items()]
        lines.append(f"events not yet in critical memory: {pending}")
        return doc, "\n".join(lines)

    def flush(self, event: Callable[..., Any]) -> int:
        return flush(self.events, event)


def make_backend(kind: str, directory: str | Path) -> Backend:
    if kind == "directory":
        return DirectoryBackend(directory)
    if kind == "rauc":
        return RaucBackend(directory)
    raise UpdateError(f"unknown update backend {kind!r}; backends are {', '.join(BACKENDS)}")
