"""The power-up self-test (GLI-11): what the cabinet checks before it lets anyone play.

Each check returns None (passed) or the one-line reason it failed; a failure is a SELF_TEST tilt
condition named after the check, shown on the screen and logged. The checks:

* ``software_signature``: every installed file's SHA-256 against the manifest signed by the code
  signer (``firmware.cabinet.software``);
* ``critical_memory``: both copies verified when the ledger opened (a copy repaired from the other
  is logged, not a failure), and the accounting identity holds;
* ``rng_health``: the DRBG known-answer test and the SP 800-90B health tests on fresh entropy;
* ``devices``: every configured device has a backend, and answers. A device that is fitted but
  does not answer (nothing on its port) fails the line too, naming the device and the port, but is
  a *disconnection* tilt rather than a SELF_TEST one: it clears by itself when the device answers;
* ``doors_while_off``: a door the I/O board reports open at power-up (its SNAPSHOT) that critical
  memory last saw closed was opened while the power was off: its ``door_open`` event says
  ``while_power_off`` and the self-test lists it; it tilts as any open door, which clears when the
  door is closed. (A door opened *and closed again* while the power was off needs a battery-backed
  latch on the I/O board, which its protocol does not have yet: docs/protocols/io-board.md.)
  On the simulated cabinet ``egm run --sim --sim-door-open DOOR`` powers the I/O board up with the
  door open.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from firmware.ledger.ledger import accounting_difference


@dataclass
class SelfTestReport:
    """What the power-up self-test found, check by check (None: passed)."""

    results: dict[str, str | None] = field(default_factory=dict)
    #: Findings that are not failures (a door opened while off tilts as an open door instead).
    notes: list[str] = field(default_factory=list)
    #: Checks' findings that are tilts of their own, by check: shown as failed, not in ``failures``
    #: (a device not connected is a disconnection tilt, which clears when the device answers).
    tilted: dict[str, str] = field(default_factory=dict)

    @property
    def failures(self) -> dict[str, str]:
        return {k: v for k, v in self.results.items() if v is not None}

    def lines(self) -> list[tuple[str, str]]:
        lines = []
        for check, failure in self.results.items():
            found = "; ".join(f for f in (failure, self.tilted.get(check)) if f)
            lines.append((check, f"FAILED: {found}" if found else "ok"))
        return lines


def check_software(cfg: Any) -> str | None:
    """The ``software_signature`` check with the configuration's ``[software]`` settings."""
    from pathlib import Path

    from firmware.cabinet.software import SoftwareSettings, power_up_check

    sw = cfg.software
    settings = SoftwareSettings(manifest=Path(sw.manifest) if sw.manifest else None,
                                trusted_keys=tuple(Path(k) for k in sw.trusted_keys),
                                development=sw.development)
    result = power_up_check(settings)
    return None if result.ok else result.reason


def check_critical_memory(ledger: Any) -> str | None:
    difference = accounting_difference(ledger.meters)
    if difference:
        return f"the credit meter is {difference} cents away from the accounting identity"
    return None


def rng_personalization(cfg: Any) -> str:
    """The terminal's SP 800-90A personalization string: ``[rng] personalization`` + ":" + its id."""
    return str(cfg.rng.personalization) + ":" + str(cfg.terminal.id)


def rng_power_up_test(cfg: Any, source: Callable[[int], bytes] = os.urandom) -> list[tuple[str, str]]:
    """The RNG's power-up self-test for the configured mechanism (``firmware.rng.power_up``),
    instantiating from the raw entropy ``source`` (the cabinet's own)."""
    from firmware.rng.power_up import power_up_self_test

    return power_up_self_test(personalization=rng_personalization(cfg), source=source,
                              mechanism=cfg.rng.mechanism)


def terminal_rng(cfg: Any, source: Callable[[int], bytes] = os.urandom) -> Any:
    """The terminal's production RNG service as ``[rng]`` configures it: its ``mechanism``,
    ``reseed_interval`` and personalization (the terminal id appended), its entropy from ``source``
    through a new health-tested entropy source (SP 800-90B)."""
    from firmware.rng.health import HealthTestedEntropy
    from firmware.rng.service import RngService

    return RngService.production(rng_personalization(cfg).encode("utf-8"),
                                 reseed_interval=cfg.rng.reseed_interval, mechanism=cfg.rng.mechanism,
                                 entropy=HealthTestedEntropy(source))


def check_rng(results: Sequence[tuple[str, str]]) -> str | None:
    bad = [f"{name}: {verdict}" for name, verdict in results if verdict != "ok"]
    return "; ".join(bad) or None


def run_self_test(*, software: Callable[[], str | None], ledger: Any, rng_results: Sequence[tuple[str, str]],
                  device_problems: dict[str, str], doors_opened_while_off: Sequence[str] = (),
                  devices_not_connected: Mapping[str, str] | None = None) -> SelfTestReport:
    """Every check; ``device_problems`` (no backend) fail ``devices``, ``devices_not_connected``
    (device -> "not connected (PORT)") show on its line as the tilts they already are."""
    report = SelfTestReport()
    report.results["software_signature"] = software()
    report.results["critical_memory"] = check_critical_memory(ledger)
    report.results["rng_health"] = check_rng(rng_results)
    report.results["devices"] = "; ".join(f"{k}: {v}" for k, v in device_problems.items()) or None
    report.results["doors_while_off"] = None
    if devices_not_connected:
        report.tilted["devices"] = "; ".join(f"{k}: {v}" for k, v in devices_not_connected.items())
    report.notes = [f"{door} door opened while the power was off (logged; the open door tilts)"
                    for door in doors_opened_while_off]
    return report
