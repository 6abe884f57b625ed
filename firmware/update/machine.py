"""The slot states and the only moves between them, as a table (docs/update.md, "The flow").

A slot is ``empty`` (never written), ``installing`` (being written: a power cut leaves it so, and it
is never booted), ``trial`` (written, to be booted on trial), ``good`` (committed) or ``bad``
(refused by its trial, or rolled back). ``active``/``inactive`` are not states: the active slot is
the one booted now (:attr:`firmware.update.slots.UpdateState.booted`).
"""

from __future__ import annotations

from firmware.update.errors import UpdateError

STATES: tuple[str, ...] = ("empty", "installing", "trial", "good", "bad")

#: (state, event) -> next state. Anything else is refused.
TRANSITIONS: dict[tuple[str, str], str] = {
    ("empty", "install_begin"): "installing",
    ("good", "install_begin"): "installing",       # only ever the inactive slot (checked by install)
    ("bad", "install_begin"): "installing",
    ("trial", "install_begin"): "installing",      # a newer bundle replaces an untried one
    ("installing", "install_done"): "trial",
    ("installing", "install_failed"): "bad",
    ("trial", "boot_trial"): "trial",              # one boot attempt used
    ("trial", "attempts_exhausted"): "bad",        # never reached attract: the old slot boots
    ("trial", "selftest_failed"): "bad",
    ("trial", "commit"): "good",                   # attract reached with the self-tests passed
    ("trial", "rollback"): "bad",                  # the technician's rollback of an untried update
    ("good", "boot"): "good",
}


def next_state(state: str, event: str) -> str:
    """The state a slot in ``state`` moves to on ``event``; :class:`UpdateError` if not allowed."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise UpdateError(f"a slot that is {state} cannot take {event.replace('_', ' ')}") from None
